// The checkpoint file format (docs/checkpoint_format.md has the grammar and
// a worked example). All integers little-endian; varints are LEB128.
//
// Format 5 (written; formats 1 to 4 are read too, below):
//   Checkpoint := Header Block* EndBlock Trailer
//   Header (80 bytes) :=
//       magic:u64 = "QVRCKP01"  format_version:u32 = 5  header_bytes:u32 = 80
//       graph_uuid:u8[16]  sequence:u64  vertex_limit:u64  edge_limit:u64
//       wal_segment:u64  wal_offset:u64  reserved:u8[4] = 0
//       crc:u32 (CRC-32C of bytes 0..75)
//   Block := kind:u8 reserved:u8[3] = 0 length:u32 crc:u32 reserved:u32 = 0
//            payload:u8[length]
//       crc = CRC-32C of the 80 header bytes, then bytes 0..7 of the block
//             header, then the payload. (The 80 bytes end with their own
//             CRC, so their CRC-32C is the same constant for every intact
//             header: this seed does not tie a block to its header. The
//             trailer does, as it covers every block's crc.)
//   Trailer := file_crc:u32 = CRC-32C of the 80 header bytes, then every
//              block's crc field (4 bytes, in file order, the end block's
//              included): a stale block of an earlier write of the same file
//              changes it
//   kinds (persisted, never renumber) and payloads:
//     1 labels, 2 edge types, 3 property keys:
//         first_id:varint count:varint Str{count}
//     4 vertices: first_id:varint count:varint
//         (0:u8 | 1:u8 label:varint Props){count}        0 = removed id
//     5 edges: first_id:varint count:varint
//         (0:u8 | 1:u8 type:varint source:varint target:varint Props){count}
//     6 end: live_vertices:varint live_edges:varint blocks_before:varint
//     7 index definitions (format version 2 on; checkpoint/index_block.h):
//         first_id:varint = 0 count:varint IndexDef{count}
//         (index kind 3, the edge-endpoint constraint: format version 3 on)
//     8 index entries (format version 5 on; checkpoint/index_entries.h):
//         first_id:varint count:varint index:varint Entries
//         first_id counts entries across every stored index (definition
//         order); `index` is the definition's position in block 7
//         fixed-width key (w = 8): key:u8[w]{count} id:u48{count}
//         variable-width key:      (key:Str id:u48){count}
//   Props := count:varint (key_id:varint Value){count}   (Value: wal/value_codec.h;
//            value type 7, a string list: format version 4 on)
//   wal_segment, wal_offset: where the WAL record of the first group after
//   `sequence` starts (segment number, byte offset; the offset may be the
//   segment's end, then that group starts the next segment); 0, 0 if not
//   known. Recovery resumes there after damage the checkpoint covers.
//
// Format 4 (read, never written): exactly format 5, except that there is
// no kind 8 (one is a bad block header): every ready index is rebuilt.
//
// Format 3 (read, never written): exactly format 4, except that no value has
// type 7 (one that does is Corruption).
//
// Format 2 (read, never written): exactly format 3, except that no index
// definition has kind 3 (one that does is Corruption).
//
// Format 1 (read, never written): a 64-byte header without wal_segment and
// wal_offset (reserved:u8[4] at 56, crc at 60 over bytes 0..59); each
// block's crc covers only its header bytes 0..7 and its payload; no trailer.
//
// A block holds whole elements: it passes kTargetBlockBytes by at most one
// element, and one element larger than 4 GiB encoded cannot be checkpointed.
// The writer also ends a block at every kChunkIds-th id (its unit of
// parallel encoding); readers rely only on first_id continuing the kind.
// Blocks come in kind order 1, 2, 3, 7, 4, 5, 8, 6 (BlockRank: the index
// definitions follow the names they refer to, the entries come after the
// elements); ids within a kind are contiguous from 0 and
// cover exactly [0, limit). A checkpoint is valid only if every CRC matches,
// every reference resolves and the end block's totals agree: a damaged
// checkpoint is rejected whole, never partly loaded. File names:
// checkpoint-<20-digit sequence>.qck (a .tmp suffix while being written).
#ifndef QUIVER_CHECKPOINT_CHECKPOINT_FORMAT_H_
#define QUIVER_CHECKPOINT_CHECKPOINT_FORMAT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "quiver/status.h"
#include "quiver/value.h"
#include "wal/wal_format.h"

namespace quiver::checkpoint {

inline constexpr std::uint64_t kMagic = 0x3130504B43525651ULL;  // "QVRCKP01" as little-endian bytes
// The format this build writes; it reads kOldestFormatVersion up to it.
// Version 2 tied every block to its file's header, recorded where the log
// continues, added a trailer and the index definitions block (kind 7).
// Version 3 added index kind 3 (the edge-endpoint constraint,
// IndexKind::kUniqueEndpoints) to that block, and nothing else: a build
// that reads up to version 2 refuses a version 3 file untouched instead of
// reading kind 3 as damage. Version 4 added the value type 7 (a string
// list, ValueType::kStringList) to the element blocks' properties, and
// nothing else, for the same reason. Version 5 added the index entries
// block (kind 8): the contents of ready indexes, sorted, so that a load
// copies them into leaves instead of sorting every entry again.
inline constexpr std::uint32_t kFormatVersion = 5;
inline constexpr std::uint32_t kOldestFormatVersion = 1;
// The first version whose index definitions may have kind 3.
inline constexpr std::uint32_t kFirstEndpointConstraintVersion = 3;
// The first version whose values may have type 7, a string list.
inline constexpr std::uint32_t kFirstStringListVersion = 4;
// The first version with index entries blocks (kind 8).
inline constexpr std::uint32_t kFirstIndexEntriesVersion = 5;
inline constexpr std::size_t kHeaderBytes = 80;    // formats 2 on
inline constexpr std::size_t kHeaderBytesV1 = 64;  // format 1
inline constexpr std::size_t kTrailerBytes = 4;    // formats 2 on
inline constexpr std::size_t kBlockHeaderBytes = 16;
inline constexpr std::size_t kTargetBlockBytes = 1u << 20;
// Writer tunable (not part of the format): entries per index entries block
// (at most; a block also closes past kTargetBlockBytes). 64K int64 entries
// are 896 KiB.
inline constexpr std::uint64_t kIndexEntriesPerBlock = std::uint64_t{1} << 16;
// Writer tunables (not part of the format). Ids per chunk of the vertex and
// edge tables: one unit of parallel encoding, and a block boundary; 64K ids
// are about 0.2-1 MiB encoded for elements without properties.
inline constexpr std::uint64_t kChunkIds = std::uint64_t{1} << 16;
// Bytes between write-back hints while a checkpoint is written: at most
// about two steps are dirty or in flight, so a WAL fdatasync queues behind
// about 1 MiB of checkpoint writes (docs/impl.md, "Write-back is paced").
inline constexpr std::uint64_t kWritebackBytes = std::uint64_t{512} << 10;

enum class BlockKind : std::uint8_t {
  kLabels = 1,
  kEdgeTypes = 2,
  kPropertyKeys = 3,
  kVertices = 4,
  kEdges = 5,
  kEnd = 6,
  kIndexDefinitions = 7,
  kIndexEntries = 8,
};
inline constexpr int kMaxBlockKind = 8;

// The position of `kind` in a file's block order (1, 2, 3, 7, 4, 5, 8, 6);
// 0 for a kind that `format_version` does not have.
inline int BlockRank(std::uint8_t kind, std::uint32_t format_version) {
  static constexpr int kRank[] = {0, 1, 2, 3, 5, 6, 8, 4, 7};
  if (kind < 1 || kind > kMaxBlockKind || (kind == 7 && format_version < 2) ||
      (kind == 8 && format_version < kFirstIndexEntriesVersion))
    return 0;
  return kRank[kind];
}

struct Header {
  wal::Uuid uuid{};
  std::uint64_t sequence = 0;
  std::uint64_t vertex_limit = 0;
  std::uint64_t edge_limit = 0;
  // Where the WAL record of the first group after `sequence` starts (see
  // the top of this file); 0, 0 if not known (always so in format 1).
  std::uint64_t wal_segment = 0;
  std::uint64_t wal_offset = 0;
  // Set by EncodeHeader and DecodeHeader:
  std::uint32_t version = kFormatVersion;
  std::size_t header_bytes = kHeaderBytes;  // where the first block starts
  std::size_t trailer_bytes = kTrailerBytes;
  // What every block CRC and the trailer continue from: the CRC-32C of the
  // header's bytes (format 2 on); 0 in format 1 (a block CRC covers the block
  // alone).
  std::uint32_t seed = 0;
};

// The bytes of `*h` as a header of kFormatVersion, its CRC included; sets the fields
// EncodeHeader and DecodeHeader set.
std::array<std::byte, kHeaderBytes> EncodeHeader(Header* h);

// Decodes the header at the start of `in` (its first kHeaderBytes, or the
// whole file if shorter): Unimplemented for a newer format
// (NewerFormatVersion), Corruption naming what failed if damaged, else OK
// with every field of *h set. Checks the header only, not the limits.
Status DecodeHeader(std::span<const std::byte> in, Header* h);

// The CRC a block stores: CRC-32C continuing `seed` over the block header's
// bytes 0..7 and then the payload.
std::uint32_t BlockCrc(std::uint32_t seed, const std::byte* block_header, std::span<const std::byte> payload);

// The version of a checkpoint written by a newer format, from the magic and
// the version field alone, as wal::NewerFormatVersion decides it for a
// segment (a header of a layout this build reads whose CRC matches once its
// version field is put back is damage, not a newer file).
std::optional<std::uint32_t> NewerFormatVersion(std::span<const std::byte> in);

// Whether `in` starts with a header of a version this build reads whose
// magic, length and CRC are intact (DecodeHeader; the rest of the file
// unchecked).
bool HeaderIsIntact(std::span<const std::byte> in);

// Corruption if a file of `format_version` cannot hold `value`'s type (a
// string list before kFirstStringListVersion: no correct writer of that
// version wrote one), naming the property `key` and both versions; else OK.
Status CheckValueVersion(const PropertyValue& value, std::string_view key, std::uint32_t format_version);

std::string CheckpointFileName(std::uint64_t sequence);
// The sequence of a checkpoint file name (not .tmp), or nullopt.
std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view name);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_FORMAT_H_
