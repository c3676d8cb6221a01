// WalWriter: appends commit groups to the current WAL segment and syncs
// them; starts new segments. Used by the writer thread only.
//
// Durability order for a new segment: create the file, preallocate, write
// the header and its padding (to kWalPageBytes), fdatasync the file, fsync
// the directory — all before the first record in it can be acknowledged. A
// group is written with one append that ends with its padding record (up to
// the next kWalPageBytes boundary, wal_format.h: the page rule); the caller
// then calls Sync once per commit group. So no synced write touches a page
// holding bytes of an earlier, acknowledged group.
//
// Disk space is reserved ahead of the appends (fallocate, KEEP_SIZE), in
// steps: kFirstReservation at segment start (or at reopen, past the valid
// end, since truncating a torn tail frees the reservation), then each step
// doubles what the segment holds reserved, up to the segment's target size.
// So a small graph takes at most 2 MiB of WAL on disk, not the target size,
// and a large one reserves a handful of times per segment. Reserving is an
// optimisation (fewer metadata updates per fdatasync): when the file system
// has no room for a reservation (ResourceExhausted), the writer counts it,
// stops reserving in that segment and appends without one; the append
// itself then fails if the disk is really full. Any other error of a
// reservation is an error of the file.
//
// Zero-filled segments (version 3): a group's fdatasync should flush no
// metadata, so groups go into blocks already written and synced, inside the
// file's size. FillAhead writes zeros ahead of the write head, up to
// kFillStep at a time (within the reservation, never past the segment's
// target size), and syncs them: one metadata-carrying sync per step. The zeros
// start on a page boundary, past every acknowledged byte (the page rule
// holds), and after the header's page was synced (a segment longer than
// its header's page still had a durable header). The zeros are written
// with WritableFile::ZeroFill. GraphImpl calls FillAhead just before a
// group's append when WantsFill: in the latency of one single-page group in
// 128 or more, so that its failure is that group's, like any WAL failure.
// A group that finds no
// zeroed room left (a group larger than the step, a reservation refused)
// is written past them, as without the fill. The reader takes zeros after
// the last group for the segment's unused end (wal_reader.h, zeroed_bytes).
//
// After any error the writer is unusable (the caller poisons the graph;
// fsync is never retried).
#ifndef QUIVER_WAL_WAL_WRITER_H_
#define QUIVER_WAL_WAL_WRITER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "env/file_system.h"
#include "quiver/ids.h"
#include "quiver/status.h"
#include "wal/wal_format.h"

namespace quiver::wal {

class WalWriter {
 public:
  // The first disk reservation of a segment (less if the target is smaller).
  static constexpr std::uint64_t kFirstReservation = std::uint64_t{1} << 20;

  // `preallocation_failures`, if set, counts the reservations the file
  // system had no room for; it must outlive the writer.
  WalWriter(env::FileSystem* fs, std::string dir, Uuid uuid, std::uint64_t segment_bytes,
            std::atomic<std::uint64_t>* preallocation_failures = nullptr)
      : fs_(fs),
        dir_(std::move(dir)),
        uuid_(uuid),
        segment_bytes_(segment_bytes),
        preallocation_failures_(preallocation_failures) {}

  // Creates segment `segment_number` whose first record has `first_sequence`
  // and makes it durable (file and directory entry).
  Status StartSegment(std::uint64_t segment_number, SequenceNumber first_sequence);

  // Continues appending to existing segment `segment_number` at `size` (its
  // valid end, after recovery truncated any torn tail). The file may be
  // longer: its zeroed end, which recovery read as zeros only. The segment
  // must be of this build's format version and `size` a page boundary
  // (FailedPrecondition otherwise: recovery starts a new segment instead).
  Status ReopenSegment(std::uint64_t segment_number, std::uint64_t size);

  // True when a checkpoint whose log position is the current write head
  // should make the next group start a new segment (GraphImpl's
  // rotate_before_next_group_): the segment holds at least
  // kRotateAfterCheckpointBytes. Recovery reads and writes again the
  // segment its tail is in, so the segment the checkpoint ends in should not
  // also hold the tail; below the bound, copying it at open costs little
  // and a segment per checkpoint would be churn. (Not a fraction of the
  // target size: the tests that cover recovery from a position inside a
  // small segment, as every directory written before this rule holds, need
  // the log to continue in that segment.)
  static constexpr std::uint64_t kRotateAfterCheckpointBytes = std::uint64_t{1} << 20;
  bool RotateAfterCheckpoint() const {
    return file_ != nullptr && segment_size_ >= kRotateAfterCheckpointBytes;
  }

  // The zero-fill step (see the top of this file).
  static constexpr std::uint64_t kFillStep = std::uint64_t{1} << 20;
  // The step in use: kFillStep unless a test set another.
  static std::uint64_t FillStep();
  // For test binaries only (nothing in the engine or the public API calls
  // it): the step from now on, rounded up to whole pages; 0 restores
  // kFillStep. The gtest binaries use 64 KiB (tests/test_environment.cc): the
  // simulated file system copies a file whole at every clone, crash image
  // and rewrite, and a megabyte of zeros per segment made the durable
  // sweeps two to five times slower under ASan. Set while no graph is open.
  static void SetFillStepForTesting(std::uint64_t bytes);
  // The payload bytes per WAL record fragment the writer cuts: kMaxFragment
  // unless a test set fewer. Readers accept any fragment up to kMaxFragment,
  // so the bytes written are valid either way.
  static std::uint32_t MaxFragment();
  // For test binaries only, like SetFillStepForTesting: fragments of at most
  // `bytes` from now on (clamped to [kWalPageBytes, kMaxFragment]); 0
  // restores kMaxFragment. The gtest binaries use 64 KiB: the crash sweeps'
  // values "over one fragment" were a megabyte each, copied whole at every
  // clone and crash image of the simulated disk.
  static void SetMaxFragmentForTesting(std::uint32_t bytes);
  // True when FillAhead has work: the segment zero-fills ahead and less
  // than half a step of zeroed room is left past the write head.
  bool WantsFill() const;
  // Writes zeros from the file's end for up to FillStep() more (not past
  // the segment's target size rounded up to a page) and syncs them. No room
  // for them (a refused reservation, ENOSPC on ZeroFill) is no
  // error: the segment stops zero-filling and is counted as a failed
  // reservation. Any other error is an error of the file.
  Status FillAhead();
  // The file's size: [segment_size(), file_end()) is its zeroed end.
  std::uint64_t file_end() const { return file_end_; }

  // Encodes one commit group record of sequences first..last, whose payload
  // is `prefix` followed by `payload` (fragmented above MaxFragment()), into
  // the writer's buffer for AppendPrepared. Touches no file, so running out
  // of memory here (std::bad_alloc, which it may throw) leaves the segment
  // as it was and the writer usable: the caller can fail the group without
  // poisoning. A record's bytes do not depend on where it lands, so a
  // segment may be started between the two calls.
  void PrepareGroup(SequenceNumber first, SequenceNumber last, std::span<const std::byte> prefix,
                    std::span<const std::byte> payload);

  // Appends the record PrepareGroup encoded (once) to the current segment,
  // followed by its padding record up to the next page boundary. Not synced.
  // FailedPrecondition if nothing is prepared. Allocates nothing
  // (PrepareGroup reserved room for the padding).
  Status AppendPrepared();

  // PrepareGroup(first, last, {}, payload), then AppendPrepared.
  Status AppendGroup(SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload);

  // fdatasync of the current segment.
  Status Sync();

  // True when the current segment has reached its target size: the next
  // group should go to a new segment.
  bool ShouldRotate() const { return file_ == nullptr || segment_size_ >= segment_bytes_; }
  std::uint64_t segment_number() const { return segment_number_; }
  std::uint64_t segment_size() const { return segment_size_; }
  // Padding bytes (header and payload of the padding record) the last
  // AppendPrepared wrote after the group's records.
  std::uint64_t last_padding_bytes() const { return last_padding_bytes_; }

 private:
  // Reserves space so that bytes up to `end` are preallocated, growing the
  // reservation by doubling, never past segment_bytes_. No room for it is
  // not an error (see the top of this file).
  Status Reserve(std::uint64_t end);
  // Counts a reservation the file system had no room for.
  void CountNoRoom();

  env::FileSystem* fs_;
  std::string dir_;
  Uuid uuid_;
  std::uint64_t segment_bytes_;
  std::unique_ptr<env::WritableFile> file_;
  std::uint64_t segment_number_ = 0;
  std::uint64_t segment_size_ = 0;
  std::uint64_t reserved_ = 0;  // bytes of the current segment preallocated
  bool no_room_ = false;        // a reservation of this segment was refused
  // The file's size; [segment_size_, file_end_) holds zeros (FillAhead).
  std::uint64_t file_end_ = 0;
  bool fill_ = false;  // this segment zero-fills ahead (version 3, room left)
  std::atomic<std::uint64_t>* const preallocation_failures_;
  std::vector<std::byte> buffer_;  // the prepared record
  bool prepared_ = false;
  SequenceNumber first_ = 0, last_ = 0;  // of the prepared group
  // The format version of the current segment (kFormatVersion, or 2 under
  // the test-only DurabilityFaults::unpadded_wal).
  std::uint32_t version_ = kFormatVersion;
  std::uint64_t last_padding_bytes_ = 0;
};

}  // namespace quiver::wal

#endif  // QUIVER_WAL_WAL_WRITER_H_
