// WalReader: reads one WAL segment for recovery, telling committed groups
// from a torn tail and from corruption.
//
// A segment is read front to back. Reading stops at the first record that is
// incomplete, fails its CRC or makes no sense. What follows decides what
// that stop means:
//  - a CRC-valid record further on whose sequence range reaches the
//    sequences not yet read: committed data lies beyond the damage, so the
//    damage is Corruption, never skipped;
//  - otherwise the bytes from the stop on are a torn tail (or unused
//    preallocated space): reported as `tail_bytes`, for the caller to
//    truncate; except, in version 3, a tail of zeros only after a valid end
//    on a page boundary (past the header's page), which is the segment's
//    zeroed end, reported as `zeroed_bytes` and kept.
// The documented limit: damage confined to the last record looks exactly
// like a torn write and is dropped as one (and reported).
//
// A header that is intact but of another format version is Unimplemented
// (wal::UnknownVersionError); a damaged header of a segment longer than a
// header is Corruption (records are only appended after the header's sync).
//
// A CRC-valid record out of sequence (gap, duplicate, reordered) is
// Corruption at once: it was written whole, so no crash explains it.
//
// Format version 3 (the page rule, wal_format.h): the header's padding
// record must come first, and a group whose records end off a page boundary
// counts only once its own padding record follows (else it is the torn
// tail: its append was never synced); valid_end is then a page boundary
// whenever a group or the header's padding was read. A padding record
// anywhere else, or in a version 1 or 2 segment, is Corruption.
#ifndef QUIVER_WAL_WAL_READER_H_
#define QUIVER_WAL_WAL_READER_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "env/file_system.h"
#include "quiver/ids.h"
#include "quiver/status.h"
#include "wal/wal_format.h"

namespace quiver::wal {

struct SegmentScan {
  bool header_valid = false;
  SegmentHeader header;
  std::uint64_t file_bytes = 0;
  std::uint64_t valid_end = 0;  // offset just past the last complete group
  // file_bytes - valid_end, unless those bytes are the zeroed end (below)
  std::uint64_t tail_bytes = 0;
  // Version 3: file_bytes - valid_end when every one of those bytes is zero
  // and valid_end is a page boundary past the header's page: the zeroed,
  // never written end the writer fills ahead of its appends (wal_writer.h).
  // Not damage and not a torn tail; appends may continue over it.
  std::uint64_t zeroed_bytes = 0;
  SequenceNumber last_sequence = 0;  // of the last complete group; 0 if none
  // The sequence the next group must start at: the last complete group's
  // last + 1, the header's first_sequence if none, or covered + 1 after
  // resuming at the checkpoint's boundary with nothing after it.
  SequenceNumber next_sequence = 0;
  std::uint64_t groups = 0;
  // Bytes of padding records read (format version 3), the header's padding
  // included: part of valid_end, not of the log's content.
  std::uint64_t padding_bytes = 0;
  // Bytes of damaged records skipped because every group in them is at or
  // below `covered` (see ScanSegment).
  std::uint64_t covered_damage_bytes = 0;
  // Reading skipped covered damage to the end of the segment (the group
  // after the checkpoint starts in a later segment): nothing may be
  // appended to this segment.
  bool skipped_to_end = false;
  // Where the damage ScanSegment returned Corruption for lies: the offset
  // of the record (or header, 0) that failed a check. 0 when OK.
  std::uint64_t bad_offset = 0;
};

// Called for each complete group in order; a non-OK status stops the scan
// and is returned. With `covered` 0 (nothing skipped), while it runs the
// scan's valid_end is the offset where the visited group starts (the end
// of the group or header before it): the dump prints it.
using GroupVisitor =
    std::function<Status(SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload)>;

// `covered_end` for a segment the loaded checkpoint covers whole (the group
// after the checkpoint starts in a later segment).
inline constexpr std::uint64_t kCoveredToTheEnd = ~std::uint64_t{0};

// Scans `bytes` (a whole segment file). Returns Corruption as described
// above. Groups with a last sequence at or below `covered` are held by the
// loaded checkpoint: damage confined to them is no reason to stop, and the
// skipped bytes are counted in covered_damage_bytes. Where reading resumes:
//  - `covered_end` != 0: the offset in this segment where the group after
//    `covered` starts, as the checkpoint recorded it (kCoveredToTheEnd: in a
//    later segment). A true record boundary: reading resumes exactly there
//    (or at the end), never at a record shape found inside a payload.
//    Damage after that offset is not covered.
//  - `covered_end` == 0 (a format 1 checkpoint records no boundary): at the
//    first CRC-valid group start past the damage whose groups are covered,
//    found by searching, which may be a payload that happens to hold a
//    well-formed record: such a resume only skips. A group above `covered`
//    read after it, or any valid record above it past a later stop, is
//    Corruption.
Status ScanSegment(std::span<const std::byte> bytes, const GroupVisitor& visit, SegmentScan* scan,
                   SequenceNumber covered = 0, std::uint64_t covered_end = 0);

// Reads a whole file into memory.
Result<std::vector<std::byte>> ReadWholeFile(env::FileSystem* fs, const std::string& path);

}  // namespace quiver::wal

#endif  // QUIVER_WAL_WAL_READER_H_
