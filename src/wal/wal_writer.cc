#include "wal/wal_writer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>

#include "base/durability_faults.h"

namespace quiver::wal {
namespace {

// Writes a padding record of `length` zero payload bytes for sequences
// first..last at `record` (kRecordHeaderBytes + length bytes).
void EncodePadding(SequenceNumber first, SequenceNumber last, std::uint32_t length, std::byte* record) {
  std::memset(record + kRecordHeaderBytes, 0, length);
  EncodeRecordHeader(RecordHeader{0, 0, RecordType::kPadding, first, last},
                     std::span<const std::byte>(record + kRecordHeaderBytes, length),
                     std::span<std::byte, kRecordHeaderBytes>(record, kRecordHeaderBytes));
}

}  // namespace

Status WalWriter::StartSegment(std::uint64_t segment_number, SequenceNumber first_sequence) {
  if (file_ != nullptr) {
    QUIVER_RETURN_IF_ERROR(file_->Close());
    file_.reset();
  }
  std::string path = env::JoinPath(dir_, SegmentFileName(segment_number));
  QUIVER_ASSIGN_OR_RETURN(file_, fs_->OpenWritable(path, env::OpenMode::kCreateNew));
  reserved_ = 0;
  no_room_ = false;
  fill_ = false;
  // Negative control only: the version 2 layout, without the page rule.
  version_ = base::DurabilityFaultOn(&base::DurabilityFaults::unpadded_wal) ? 2 : kFormatVersion;
  const std::uint64_t first_record = FirstRecordOffset(version_);
  QUIVER_RETURN_IF_ERROR(Reserve(first_record));
  // The header and its padding in one append, synced together: the first
  // group starts on a page of its own. On the stack: nothing to allocate.
  std::array<std::byte, kWalPageBytes> page;
  EncodeSegmentHeader(SegmentHeader{uuid_, segment_number, first_sequence, version_},
                      std::span<std::byte, kSegmentHeaderBytes>(page.data(), kSegmentHeaderBytes));
  if (IsPaddedVersion(version_))
    EncodePadding(first_sequence, first_sequence, *PaddingPayloadFor(kSegmentHeaderBytes),
                  page.data() + kSegmentHeaderBytes);
  QUIVER_RETURN_IF_ERROR(file_->Append(std::span<const std::byte>(page.data(), first_record)));
  QUIVER_RETURN_IF_ERROR(file_->Sync());
  if (!base::DurabilityFaultOn(&base::DurabilityFaults::skip_segment_dir_sync))
    QUIVER_RETURN_IF_ERROR(fs_->SyncDir(dir_));
  segment_number_ = segment_number;
  segment_size_ = file_end_ = first_record;
  fill_ = IsPaddedVersion(version_) && !no_room_;
  return Status::Ok();
}

Status WalWriter::ReopenSegment(std::uint64_t segment_number, std::uint64_t size) {
  std::string path = env::JoinPath(dir_, SegmentFileName(segment_number));
  QUIVER_ASSIGN_OR_RETURN(file_, fs_->OpenWritable(path, env::OpenMode::kCreateOrOpen));
  // Longer only by the zeroed end recovery found.
  if (file_->Size() < size) return InternalError("WAL segment size changed after recovery");
  if (size % kWalPageBytes != 0)
    return FailedPreconditionError("a WAL segment is continued only at a page boundary (the page rule)");
  version_ = kFormatVersion;
  segment_number_ = segment_number;
  segment_size_ = size;
  file_end_ = file_->Size();
  // Recovery may have cut a torn tail, which frees the reservation past it.
  reserved_ = file_end_;
  no_room_ = false;
  QUIVER_RETURN_IF_ERROR(Reserve(file_end_ + 1));
  fill_ = !no_room_;
  return Status::Ok();
}

namespace {
std::atomic<std::uint64_t> wal_fill_step{WalWriter::kFillStep};
std::atomic<std::uint32_t> wal_max_fragment{kMaxFragment};

// n rounded up to a whole number of WAL pages.
std::uint64_t WalPageCeil(std::uint64_t n) { return (n + kWalPageBytes - 1) / kWalPageBytes * kWalPageBytes; }
}  // namespace

std::uint64_t WalWriter::FillStep() { return wal_fill_step.load(std::memory_order_relaxed); }

void WalWriter::SetFillStepForTesting(std::uint64_t bytes) {
  wal_fill_step.store(bytes == 0 ? kFillStep : WalPageCeil(bytes), std::memory_order_relaxed);
}

std::uint32_t WalWriter::MaxFragment() { return wal_max_fragment.load(std::memory_order_relaxed); }

void WalWriter::SetMaxFragmentForTesting(std::uint32_t bytes) {
  wal_max_fragment.store(
      bytes == 0 ? kMaxFragment
                 : std::clamp<std::uint32_t>(bytes, static_cast<std::uint32_t>(kWalPageBytes), kMaxFragment),
      std::memory_order_relaxed);
}

bool WalWriter::WantsFill() const {
  if (!fill_ || file_ == nullptr) return false;
  const std::uint64_t limit = WalPageCeil(segment_bytes_);
  return file_end_ < limit && file_end_ - segment_size_ < FillStep() / 2;
}

void WalWriter::CountNoRoom() {
  if (preallocation_failures_ != nullptr) preallocation_failures_->fetch_add(1, std::memory_order_relaxed);
  no_room_ = true;
  fill_ = false;
}

Status WalWriter::FillAhead() {
  if (!WantsFill()) return Status::Ok();
  const std::uint64_t limit = WalPageCeil(segment_bytes_);
  // file_end_ is a page boundary: the end of a group (with its padding), of
  // the header's page or of an earlier step.
  const std::uint64_t target = std::min(limit, file_end_ + FillStep());
  QUIVER_RETURN_IF_ERROR(Reserve(target));
  if (no_room_) return Status::Ok();
  Status s = file_->ZeroFill(file_end_, target - file_end_);
  if (s.code() == StatusCode::kResourceExhausted) {
    // Some zeros may have landed, unsynced: past the write head, read as
    // the zeroed end or cut as a torn tail, never damage.
    CountNoRoom();
    return Status::Ok();
  }
  QUIVER_RETURN_IF_ERROR(s);
  QUIVER_RETURN_IF_ERROR(file_->Sync());
  file_end_ = target;
  return Status::Ok();
}

Status WalWriter::Reserve(std::uint64_t end) {
  if (end <= reserved_ || reserved_ >= segment_bytes_) return Status::Ok();
  const std::uint64_t target =
      std::min(segment_bytes_, std::max({end, 2 * reserved_, std::min(segment_bytes_, kFirstReservation)}));
  Status s = file_->Allocate(reserved_, target - reserved_);
  if (s.code() == StatusCode::kResourceExhausted) {
    // No room to reserve: append without a reservation (and without
    // zero-filling) for the rest of this segment (a full disk then shows up
    // as ENOSPC on the append itself).
    CountNoRoom();
    reserved_ = segment_bytes_;
    return Status::Ok();
  }
  QUIVER_RETURN_IF_ERROR(s);
  reserved_ = target;
  return Status::Ok();
}

void WalWriter::PrepareGroup(SequenceNumber first, SequenceNumber last, std::span<const std::byte> prefix,
                             std::span<const std::byte> payload) {
  prepared_ = false;
  buffer_.clear();
  const std::size_t total = prefix.size() + payload.size();
  // Copies bytes [from, from + n) of prefix + payload to `out`.
  auto copy = [&](std::size_t from, std::size_t n, std::byte* out) {
    if (from < prefix.size()) {
      const std::size_t k = std::min(n, prefix.size() - from);
      std::memcpy(out, prefix.data() + from, k);
      from += k, out += k, n -= k;
    }
    if (n > 0) std::memcpy(out, payload.data() + (from - prefix.size()), n);
  };
  const std::size_t max_fragment = MaxFragment();
  std::size_t offset = 0;
  bool first_fragment = true;
  do {
    std::size_t n = std::min<std::size_t>(max_fragment, total - offset);
    bool last_fragment = offset + n == total;
    RecordType type = first_fragment && last_fragment ? RecordType::kFull
                      : first_fragment                ? RecordType::kFirst
                      : last_fragment                 ? RecordType::kLast
                                                      : RecordType::kMiddle;
    std::size_t at = buffer_.size();
    buffer_.resize(at + kRecordHeaderBytes + PaddedLength(static_cast<std::uint32_t>(n)), std::byte{0});
    std::byte* body = buffer_.data() + at + kRecordHeaderBytes;
    if (n > 0) copy(offset, n, body);
    EncodeRecordHeader(RecordHeader{0, 0, type, first, last}, std::span<const std::byte>(body, n),
                       std::span<std::byte, kRecordHeaderBytes>(buffer_.data() + at, kRecordHeaderBytes));
    offset += n;
    first_fragment = false;
  } while (offset < total);
  // Room for the padding AppendPrepared adds once it knows where the group
  // lands, so that it allocates nothing.
  buffer_.reserve(buffer_.size() + kWalPageBytes + kRecordHeaderBytes);
  first_ = first;
  last_ = last;
  prepared_ = true;
}

Status WalWriter::AppendPrepared() {
  if (!prepared_) return FailedPreconditionError("WalWriter::AppendPrepared without a prepared record");
  prepared_ = false;
  last_padding_bytes_ = 0;
  if (IsPaddedVersion(version_)) {
    if (std::optional<std::uint32_t> pad = PaddingPayloadFor(segment_size_ + buffer_.size())) {
      // Within the capacity PrepareGroup reserved: no allocation.
      const std::size_t at = buffer_.size();
      buffer_.resize(at + kRecordHeaderBytes + *pad);
      EncodePadding(first_, last_, *pad, buffer_.data() + at);
      last_padding_bytes_ = kRecordHeaderBytes + *pad;
    }
  }
  QUIVER_RETURN_IF_ERROR(Reserve(segment_size_ + buffer_.size()));
  // At the write head, over the zeroed end if there is one: whole pages
  // (a group starts and ends on a page boundary), inside the file's size
  // when the zeroed room holds the group.
  QUIVER_RETURN_IF_ERROR(file_->WriteAt(segment_size_, buffer_));
  segment_size_ += buffer_.size();
  file_end_ = std::max(file_end_, segment_size_);
  return Status::Ok();
}

Status WalWriter::AppendGroup(SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload) {
  PrepareGroup(first, last, {}, payload);
  return AppendPrepared();
}

Status WalWriter::Sync() { return file_->Sync(); }

}  // namespace quiver::wal
