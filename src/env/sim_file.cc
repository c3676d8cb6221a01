// SimFile: applying writes, syncing, and the per-file effect of each crash
// policy (the directory half of a crash is in sim_crash.cc).
#include "env/sim_file.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/reserve.h"

namespace quiver::env {
namespace {

void WriteBytes(std::uint64_t offset, std::span<const std::byte> data, std::vector<std::byte>* bytes) {
  if (data.empty()) return;
  const std::uint64_t end = offset + data.size();
  if (bytes->size() < end) bytes->resize(end);  // a gap reads as zeros
  std::memcpy(bytes->data() + offset, data.data(), data.size());
}

void TruncateBytes(std::uint64_t size, std::vector<std::byte>* bytes) { bytes->resize(size); }

}  // namespace

std::string_view CrashPolicyName(CrashPolicy policy) {
  switch (policy) {
    case CrashPolicy::kDropUnsynced: return "DropUnsynced";
    case CrashPolicy::kKeepRandomPrefix: return "KeepRandomPrefix";
    case CrashPolicy::kReorderSectors: return "ReorderSectors";
    case CrashPolicy::kTornLastWrite: return "TornLastWrite";
    case CrashPolicy::kExtendWithGarbage: return "ExtendWithGarbage";
    case CrashPolicy::kExtendWithZeros: return "ExtendWithZeros";
    case CrashPolicy::kLoseUnsyncedDirEntries: return "LoseUnsyncedDirEntries";
    case CrashPolicy::kKeepRemovalsLoseAdditions: return "KeepRemovalsLoseAdditions";
    case CrashPolicy::kTearPartialPage: return "TearPartialPage";
  }
  return "Unknown";
}

void SimFile::Write(std::uint64_t offset, std::span<const std::byte> data) {
  WriteBytes(offset, data, &current_);
  pending_.push_back(PendingWrite{false, offset, std::vector<std::byte>(data.begin(), data.end())});
}

void SimFile::Truncate(std::uint64_t size) {
  TruncateBytes(size, &current_);
  pending_.push_back(PendingWrite{true, size, {}});
}

void SimFile::Sync() {
  // Built from durable + pending rather than copied from current_: after
  // DropUnsynced the current view holds bytes that must never become durable.
  // Applied in place: a copy of the whole file per sync made every durable
  // commit cost its segment's size (a megabyte once the WAL zero-fills).
  // The room is reserved first, so running out of memory changes nothing.
  std::uint64_t end = durable_.size();
  for (const PendingWrite& w : pending_) end = std::max<std::uint64_t>(end, w.offset + w.data.size());
  // Amortized: a file that grows a little at every sync (a WAL filled a
  // step at a time) would otherwise copy its whole image at each one.
  base::ReserveAmortized(durable_, end);
  ApplyPending(&durable_);
  pending_.clear();
}

void SimFile::ApplyPending(std::vector<std::byte>* bytes) const {
  for (const PendingWrite& w : pending_) {
    if (w.truncate) {
      TruncateBytes(w.offset, bytes);
    } else {
      WriteBytes(w.offset, w.data, bytes);
    }
  }
}

void SimFile::SetDurable(std::vector<std::byte> bytes) {
  durable_ = std::move(bytes);
  current_ = FullyApplied();
}

void SimFile::ResetTo(std::vector<std::byte> image) {
  durable_ = image;
  current_ = std::move(image);
  pending_.clear();
}

std::vector<std::byte> SimFile::FullyApplied() const {
  std::vector<std::byte> bytes = durable_;
  ApplyPending(&bytes);
  return bytes;
}

void SimFile::AppendPieces(std::size_t op, std::vector<Piece>* out) const {
  const PendingWrite& w = pending_[op];
  if (w.truncate || w.data.empty()) {
    out->push_back(Piece{op, 0, w.data.size()});
    return;
  }
  // Cut at absolute sector boundaries: a piece never spans two sectors.
  std::uint64_t pos = 0;
  while (pos < w.data.size()) {
    const std::uint64_t abs = w.offset + pos;
    const std::uint64_t to_boundary = kSectorSize - abs % kSectorSize;
    const std::uint64_t len = std::min<std::uint64_t>(to_boundary, w.data.size() - pos);
    out->push_back(Piece{op, pos, len});
    pos += len;
  }
}

std::vector<SimFile::Piece> SimFile::AllPieces() const {
  std::vector<Piece> pieces;
  for (std::size_t op = 0; op < pending_.size(); ++op) AppendPieces(op, &pieces);
  return pieces;
}

void SimFile::ApplyPiece(const Piece& piece, std::vector<std::byte>* bytes) const {
  const PendingWrite& w = pending_[piece.op];
  if (w.truncate) {
    TruncateBytes(w.offset, bytes);
    return;
  }
  WriteBytes(w.offset + piece.offset, std::span<const std::byte>(w.data).subspan(piece.offset, piece.length),
             bytes);
}

std::vector<std::byte> SimFile::Extended(bool garbage, Rng& rng) const {
  std::vector<std::byte> bytes = durable_;
  const std::uint64_t grown = FullyApplied().size();
  if (grown <= bytes.size()) return bytes;
  const std::size_t old_size = bytes.size();
  bytes.resize(grown);
  if (garbage) {
    for (std::size_t i = old_size; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(rng.Next());
  }
  return bytes;
}

std::vector<std::byte> SimFile::TornLast(Rng& rng) const {
  std::vector<std::byte> bytes = durable_;
  if (pending_.empty()) return bytes;
  const std::size_t last = pending_.size() - 1;
  std::vector<Piece> pieces;
  for (std::size_t op = 0; op < last; ++op) AppendPieces(op, &pieces);
  for (const Piece& p : pieces) ApplyPiece(p, &bytes);
  if (pending_[last].truncate) return bytes;  // a torn truncate is a lost one
  pieces.clear();
  AppendPieces(last, &pieces);
  const std::uint64_t keep = rng.Uniform(pieces.size());  // strictly fewer than all
  for (std::uint64_t i = 0; i < keep; ++i) ApplyPiece(pieces[i], &bytes);
  return bytes;
}

std::vector<std::byte> SimFile::RandomPrefix(Rng& rng) const {
  std::vector<std::byte> bytes = durable_;
  const std::vector<Piece> pieces = AllPieces();
  const std::uint64_t keep = rng.Uniform(pieces.size() + 1);
  for (std::uint64_t i = 0; i < keep; ++i) ApplyPiece(pieces[i], &bytes);
  return bytes;
}

void SimFile::TearPartialPage(Rng& rng, std::vector<std::byte>* bytes) const {
  const std::uint64_t durable_end = durable_.size();
  if (durable_end % kPageSize == 0) return;  // no partly filled page
  const std::uint64_t page = durable_end - durable_end % kPageSize;
  const bool touched = std::any_of(pending_.begin(), pending_.end(), [&](const PendingWrite& w) {
    return !w.truncate && !w.data.empty() && w.offset < page + kPageSize && w.offset + w.data.size() > page;
  });
  if (!touched) return;
  const std::vector<std::byte> applied = FullyApplied();
  // The page is written back whole, so the file reaches at least as far
  // into it as the durable bytes and the kept writes do.
  const std::uint64_t end = std::min(page + kPageSize, std::max<std::uint64_t>(bytes->size(), durable_end));
  if (bytes->size() < end) bytes->resize(end);
  auto at = [](const std::vector<std::byte>& v, std::uint64_t i) {
    return i < v.size() ? v[i] : std::byte{0};
  };
  for (std::uint64_t sector = page; sector < end; sector += kSectorSize) {
    const std::uint64_t choice = rng.Uniform(3);  // 0 old, 1 new, 2 garbage
    for (std::uint64_t i = sector; i < std::min(end, sector + kSectorSize); ++i) {
      (*bytes)[i] = choice == 0   ? at(durable_, i)
                    : choice == 1 ? at(applied, i)
                                  : static_cast<std::byte>(rng.Next());
    }
  }
}

std::vector<std::byte> SimFile::CrashImage(CrashPolicy policy, Rng& rng) const {
  switch (policy) {
    case CrashPolicy::kDropUnsynced: return durable_;
    case CrashPolicy::kLoseUnsyncedDirEntries:
    case CrashPolicy::kKeepRemovalsLoseAdditions: return FullyApplied();
    case CrashPolicy::kExtendWithGarbage: return Extended(/*garbage=*/true, rng);
    case CrashPolicy::kExtendWithZeros: return Extended(/*garbage=*/false, rng);
    case CrashPolicy::kTornLastWrite: return TornLast(rng);
    case CrashPolicy::kKeepRandomPrefix: return RandomPrefix(rng);
    case CrashPolicy::kTearPartialPage: {
      std::vector<std::byte> bytes = RandomPrefix(rng);
      TearPartialPage(rng, &bytes);
      return bytes;
    }
    case CrashPolicy::kReorderSectors: {
      std::vector<std::byte> bytes = durable_;
      std::vector<Piece> kept;
      for (const Piece& p : AllPieces()) {
        if (rng.OneIn(2)) kept.push_back(p);
      }
      // Fisher-Yates with our own generator (std::shuffle is not portable
      // across standard libraries for a given seed).
      for (std::size_t i = kept.size(); i > 1; --i) std::swap(kept[i - 1], kept[rng.Uniform(i)]);
      for (const Piece& p : kept) ApplyPiece(p, &bytes);
      return bytes;
    }
  }
  return durable_;
}

}  // namespace quiver::env
