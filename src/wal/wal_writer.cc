#include "wal/wal_writer.h"

#include <algorithm>
#include <cstring>

#include "base/durability_faults.h"

namespace quiver::wal {

Status WalWriter::StartSegment(std::uint64_t segment_number, SequenceNumber first_sequence) {
  if (file_ != nullptr) {
    QUIVER_RETURN_IF_ERROR(file_->Close());
    file_.reset();
  }
  std::string path = env::JoinPath(dir_, SegmentFileName(segment_number));
  QUIVER_ASSIGN_OR_RETURN(file_, fs_->OpenWritable(path, env::OpenMode::kCreateNew));
  reserved_ = 0;
  QUIVER_RETURN_IF_ERROR(Reserve(kSegmentHeaderBytes));
  std::byte header[kSegmentHeaderBytes];
  EncodeSegmentHeader(SegmentHeader{uuid_, segment_number, first_sequence},
                      std::span<std::byte, kSegmentHeaderBytes>(header));
  QUIVER_RETURN_IF_ERROR(file_->Append(header));
  QUIVER_RETURN_IF_ERROR(file_->Sync());
  if (!base::DurabilityFaultOn(&base::DurabilityFaults::skip_segment_dir_sync))
    QUIVER_RETURN_IF_ERROR(fs_->SyncDir(dir_));
  segment_number_ = segment_number;
  segment_size_ = kSegmentHeaderBytes;
  return Status::Ok();
}

Status WalWriter::ReopenSegment(std::uint64_t segment_number, std::uint64_t size) {
  std::string path = env::JoinPath(dir_, SegmentFileName(segment_number));
  QUIVER_ASSIGN_OR_RETURN(file_, fs_->OpenWritable(path, env::OpenMode::kCreateOrOpen));
  if (file_->Size() != size) return InternalError("WAL segment size changed after recovery");
  segment_number_ = segment_number;
  segment_size_ = size;
  // Recovery may have cut a torn tail, which frees the reservation past it.
  reserved_ = size;
  return Reserve(size + 1);
}

Status WalWriter::Reserve(std::uint64_t end) {
  if (end <= reserved_ || reserved_ >= segment_bytes_) return Status::Ok();
  const std::uint64_t target =
      std::min(segment_bytes_, std::max({end, 2 * reserved_, std::min(segment_bytes_, kFirstReservation)}));
  Status s = file_->Allocate(reserved_, target - reserved_);
  if (s.code() == StatusCode::kResourceExhausted) {
    // No room to reserve: append without a reservation for the rest of this
    // segment (a full disk then shows up as ENOSPC on the append itself).
    if (preallocation_failures_ != nullptr) preallocation_failures_->fetch_add(1, std::memory_order_relaxed);
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
  std::size_t offset = 0;
  bool first_fragment = true;
  do {
    std::size_t n = std::min<std::size_t>(kMaxFragment, total - offset);
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
  prepared_ = true;
}

Status WalWriter::AppendPrepared() {
  if (!prepared_) return FailedPreconditionError("WalWriter::AppendPrepared without a prepared record");
  prepared_ = false;
  QUIVER_RETURN_IF_ERROR(Reserve(segment_size_ + buffer_.size()));
  QUIVER_RETURN_IF_ERROR(file_->Append(buffer_));
  segment_size_ += buffer_.size();
  return Status::Ok();
}

Status WalWriter::AppendGroup(SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload) {
  PrepareGroup(first, last, {}, payload);
  return AppendPrepared();
}

Status WalWriter::Sync() { return file_->Sync(); }

}  // namespace quiver::wal
