// BufferedState: overlaying pending changes on reads, and writing them
// through (early, partly, or at Sync).
#include "env/buffered_state.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace quiver::env {
namespace {

constexpr std::size_t kZeroChunk = 64 * 1024;

}  // namespace

std::uint64_t BufferedState::logical_size() const {
  base::MutexLock lock(&mu_);
  return logical_size_;
}

std::uint64_t BufferedState::pending_bytes() const {
  base::MutexLock lock(&mu_);
  std::uint64_t total = 0;
  for (const PendingWrite& w : pending_) total += w.data.size();
  return total;
}

void BufferedState::Append(std::span<const std::byte> data) {
  base::MutexLock lock(&mu_);
  pending_.push_back(PendingWrite{false, logical_size_, {data.begin(), data.end()}});
  logical_size_ += data.size();
}

void BufferedState::WriteAt(std::uint64_t offset, std::span<const std::byte> data) {
  base::MutexLock lock(&mu_);
  pending_.push_back(PendingWrite{false, offset, {data.begin(), data.end()}});
  if (!data.empty()) logical_size_ = std::max(logical_size_, offset + data.size());
}

void BufferedState::Truncate(std::uint64_t size) {
  base::MutexLock lock(&mu_);
  pending_.push_back(PendingWrite{true, size, {}});
  logical_size_ = size;
}

Result<std::size_t> BufferedState::Read(const ReadableFile& real, std::uint64_t offset,
                                        std::span<std::byte> buf) {
  base::MutexLock lock(&mu_);
  if (offset >= logical_size_) return std::size_t{0};
  const std::size_t n = std::min<std::uint64_t>(buf.size(), logical_size_ - offset);
  const std::uint64_t end = offset + n;
  std::fill(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), std::byte{0});
  // Invariant 2: real bytes below valid_size_, zeros above, then the
  // pending changes in order.
  if (offset < valid_size_) {
    const std::size_t from_real = std::min<std::uint64_t>(end, valid_size_) - offset;
    QUIVER_ASSIGN_OR_RETURN(std::size_t got, real.ReadAt(offset, buf.first(from_real)));
    (void)got;  // a real file shorter than valid_size_ reads as zeros
  }
  for (const PendingWrite& w : pending_) {
    if (w.truncate) {
      if (w.offset < end) {
        const std::uint64_t from = std::max(w.offset, offset);
        std::fill(buf.begin() + static_cast<std::ptrdiff_t>(from - offset),
                  buf.begin() + static_cast<std::ptrdiff_t>(n), std::byte{0});
      }
      continue;
    }
    const std::uint64_t from = std::max(w.offset, offset);
    const std::uint64_t to = std::min<std::uint64_t>(w.offset + w.data.size(), end);
    if (from < to) std::memcpy(buf.data() + (from - offset), w.data.data() + (from - w.offset), to - from);
  }
  return n;
}

Status BufferedState::ZeroStale(WritableFile* out, std::uint64_t from, std::uint64_t to) {
  to = std::min(to, real_size_);
  static const std::vector<std::byte> kZeros(kZeroChunk);
  while (from < to) {
    const std::size_t len = std::min<std::uint64_t>(to - from, kZeroChunk);
    QUIVER_RETURN_IF_ERROR(out->WriteAt(from, std::span<const std::byte>(kZeros).first(len)));
    from += len;
  }
  return Status::Ok();
}

Status BufferedState::WriteBackLocked(WritableFile* out, std::uint64_t budget) {
  while (!pending_.empty()) {
    PendingWrite& w = pending_.front();
    if (w.truncate) {
      QUIVER_RETURN_IF_ERROR(out->Truncate(w.offset));
      real_size_ = w.offset;
      valid_size_ = std::min(valid_size_, w.offset);
      pending_.pop_front();
      continue;
    }
    if (budget == 0 && !w.data.empty()) break;
    const std::size_t len = std::min<std::uint64_t>(budget, w.data.size());
    if (len > 0) {
      if (w.offset > valid_size_) QUIVER_RETURN_IF_ERROR(ZeroStale(out, valid_size_, w.offset));
      QUIVER_RETURN_IF_ERROR(out->WriteAt(w.offset, std::span<const std::byte>(w.data).first(len)));
      valid_size_ = std::max(valid_size_, w.offset + len);
      real_size_ = std::max(real_size_, w.offset + len);
      budget -= len;
    }
    if (len < w.data.size()) {  // split: the tail stays pending
      w.data.erase(w.data.begin(), w.data.begin() + static_cast<std::ptrdiff_t>(len));
      w.offset += len;
      break;
    }
    pending_.pop_front();
  }
  return Status::Ok();
}

Status BufferedState::WriteBack(WritableFile* out, std::uint64_t budget) {
  base::MutexLock lock(&mu_);
  return WriteBackLocked(out, budget);
}

Status BufferedState::FillGrownRegionWithGarbage(WritableFile* out, Rng& rng) {
  base::MutexLock lock(&mu_);
  if (logical_size_ <= valid_size_) return Status::Ok();
  std::vector<std::byte> garbage(logical_size_ - valid_size_);
  for (std::byte& b : garbage) b = static_cast<std::byte>(rng.Next());
  QUIVER_RETURN_IF_ERROR(out->WriteAt(valid_size_, garbage));
  real_size_ = std::max(real_size_, logical_size_);
  return Status::Ok();
}

Status BufferedState::Sync(WritableFile* out) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(WriteBackLocked(out, UINT64_MAX));
  // A trailing zero-extending truncate leaves valid_size_ < logical_size_:
  // the bytes between must read as zeros on disk too.
  QUIVER_RETURN_IF_ERROR(ZeroStale(out, valid_size_, logical_size_));
  if (real_size_ != logical_size_) QUIVER_RETURN_IF_ERROR(out->Truncate(logical_size_));
  valid_size_ = real_size_ = logical_size_;
  return out->Sync();
}

}  // namespace quiver::env
