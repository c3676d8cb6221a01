// The write-ahead log's byte format (docs/wal_format.md has a worked
// example). All integers little-endian.
//
//   Segment   := SegmentHeader HeaderPadding? Group* (unused tail: zeros or garbage)
//   Group     := Record+ GroupPadding?                     (versions 3 to 5)
//              | Record+                                   (versions 1, 2)
//   SegmentHeader (64 bytes) :=
//       magic:u64 = "QVRWAL01"   format_version:u32 = 5   header_bytes:u32 = 64
//       graph_uuid:u8[16]   segment_number:u64   first_sequence:u64
//       reserved:u8[8] = 0   crc:u32 (CRC-32C of bytes 0..55)   reserved:u32 = 0
//   Record    := RecordHeader payload:u8[length] zero:u8[pad to 8]
//   RecordHeader (32 bytes) :=
//       crc:u32 (CRC-32C of bytes 4..31 of the header and the payload)
//       length:u32   type:u8   reserved:u8[7] = 0
//       first_sequence:u64   last_sequence:u64
//
// One commit group is one logical record: a kFull record, or, if its
// payload is larger than the writer's fragment size (kMaxFragment; less in
// test binaries), kFirst kMiddle* kLast fragments that all carry the group's
// sequence range and are only taken together. A fragment of any type may be
// of any length up to kMaxFragment. The
// payload of the logical record is a GroupPayload (wal/batch_codec.h).
// Records start 8-byte aligned. Segment file names: wal-<20-digit segment
// number>.log. Type numbers are persisted: never renumber.
//
// Version 3 on, the page rule: no synced write goes into a kWalPageBytes page
// of the file that holds acknowledged bytes (a torn write-back of such a
// page could destroy them). The header is followed by a kPadding record up
// to offset kWalPageBytes (HeaderPadding, written and synced with the
// header); every group is followed by a kPadding record (GroupPadding,
// written in the same append and synced with it) up to the next page
// boundary, none if the group ends on one. A padding record carries the
// sequence range of its group (the header's first_sequence twice after the
// header), its payload is zeros, and it ends on a page boundary; when less
// than a record header is left before the boundary it reaches to the one
// after. Anywhere else a padding record is Corruption, and so is one in a
// version 1 or 2 segment.
#ifndef QUIVER_WAL_WAL_FORMAT_H_
#define QUIVER_WAL_WAL_FORMAT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "quiver/status.h"

namespace quiver::wal {

inline constexpr std::uint64_t kSegmentMagic = 0x31304C4157525651ULL;  // "QVRWAL01" as little-endian bytes
// The version this build writes, and the oldest it reads. Version 2 added
// the index operations of the group payload (batch_codec.h); version 3 the
// page rule (padding records, above); version 4 the index kind 3 (the
// edge-endpoint constraint, IndexKind::kUniqueEndpoints) in DefineIndex,
// with no other change: a build that reads up to version 3 refuses a
// version 4 segment untouched instead of reading kind 3 as damage; version
// 5 the value type 7 (a string list, ValueType::kStringList), likewise. A
// segment of an older version is read as before and never appended to
// (recovery starts a new segment after it).
inline constexpr std::uint32_t kFormatVersion = 5;
inline constexpr std::uint32_t kOldestFormatVersion = 1;
inline bool IsReadableVersion(std::uint32_t v) { return v >= kOldestFormatVersion && v <= kFormatVersion; }
inline constexpr std::size_t kSegmentHeaderBytes = 64;
inline constexpr std::size_t kRecordHeaderBytes = 32;
inline constexpr std::uint32_t kMaxFragment = 1u << 20;  // 1 MiB payload per record
// The page of the page rule (version 3 on): what a write-back rewrites whole.
inline constexpr std::uint64_t kWalPageBytes = 4096;
// The first version with the page rule.
inline constexpr std::uint32_t kFirstPaddedVersion = 3;
inline bool IsPaddedVersion(std::uint32_t v) { return v >= kFirstPaddedVersion; }
// The first version whose DefineIndex may carry index kind 3, the
// edge-endpoint constraint (IndexKind::kUniqueEndpoints); in an older
// segment one is Corruption (no correct writer of that version wrote it).
inline constexpr std::uint32_t kFirstEndpointConstraintVersion = 4;
// The first version whose values may have type 7, a string list
// (ValueType::kStringList); in an older segment one is Corruption.
inline constexpr std::uint32_t kFirstStringListVersion = 5;
// Where the first group of a segment of version `v` starts.
inline std::uint64_t FirstRecordOffset(std::uint32_t v) {
  return IsPaddedVersion(v) ? kWalPageBytes : kSegmentHeaderBytes;
}

// kPadding: version 3 on (the page rule above).
enum class RecordType : std::uint8_t { kFull = 1, kFirst = 2, kMiddle = 3, kLast = 4, kPadding = 5 };

using Uuid = std::array<std::uint8_t, 16>;

struct SegmentHeader {
  Uuid uuid{};
  std::uint64_t segment_number = 0;
  std::uint64_t first_sequence = 0;
  std::uint32_t format_version = kFormatVersion;  // as read, or to write
};

struct RecordHeader {
  std::uint32_t crc = 0;
  std::uint32_t length = 0;
  RecordType type = RecordType::kFull;
  std::uint64_t first_sequence = 0;
  std::uint64_t last_sequence = 0;
};

void EncodeSegmentHeader(const SegmentHeader& h, std::span<std::byte, kSegmentHeaderBytes> out);
// Nullopt if magic, size or CRC do not match, or the version is not one
// this build reads.
std::optional<SegmentHeader> DecodeSegmentHeader(std::span<const std::byte> in);

// Format versions are small numbers; a version field above this is damage.
inline constexpr std::uint32_t kMaxFormatVersion = 0xFFFF;

// The version of a segment written by a newer format, read from the magic
// and the version field alone (bytes 0..11), before any other check of the
// header, so that a newer format is recognised whatever its header looks
// like after those fields (length, field order, where its CRC lies). Only
// the magic and the place of the version field are fixed for all formats:
// a newer Quiver never changes them. nullopt if the magic does not match,
// the version is one this build reads (or 0, or above kMaxFormatVersion:
// damage), or the header has this build's layout and its CRC matches once
// the version field is put back to a version this build reads (a flipped
// version bit in a header of a known format: damage, not a newer file).
std::optional<std::uint32_t> NewerFormatVersion(std::span<const std::byte> in);

// The status for a file of a format version this build does not read
// (Unimplemented, naming `what`, the version and the versions this build
// reads, oldest to newest). Such a file is never modified, removed,
// salvaged or skipped: Open fails with this status.
Status UnknownVersionError(std::string_view what, std::uint32_t version, std::uint32_t oldest,
                           std::uint32_t newest);

// Writes the header for `payload` (computing its CRC) into `out`.
void EncodeRecordHeader(RecordHeader h, std::span<const std::byte> payload,
                        std::span<std::byte, kRecordHeaderBytes> out);
// Parses a header without checking the CRC; nullopt if its fixed fields are
// impossible (unknown type, non-zero reserved bytes, sequence range reversed).
std::optional<RecordHeader> ParseRecordHeader(std::span<const std::byte> in);
// True if the CRC of header + payload matches.
bool RecordCrcMatches(std::span<const std::byte> header, std::span<const std::byte> payload);

inline std::size_t PaddedLength(std::uint32_t length) { return (std::size_t{length} + 7) & ~std::size_t{7}; }

// The payload length of the padding record that takes a segment whose
// records end at `end` (a multiple of 8) to a page boundary, or nullopt if
// `end` is on one (no padding).
std::optional<std::uint32_t> PaddingPayloadFor(std::uint64_t end);

// `uuid` in the 8-4-4-4-12 lowercase hex form of RFC 4122
// ("0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0").
std::string UuidText(const Uuid& uuid);

std::string SegmentFileName(std::uint64_t segment_number);
// The segment number of a file name, or nullopt if it is not a segment.
std::optional<std::uint64_t> ParseSegmentFileName(std::string_view name);

}  // namespace quiver::wal

#endif  // QUIVER_WAL_WAL_FORMAT_H_
