// The checkpoint file format (docs/checkpoint_format.md has a worked
// example). All integers little-endian; varints are LEB128.
//
//   Checkpoint := Header Block* EndBlock
//   Header (64 bytes) :=
//       magic:u64 = "QVRCKP01"  format_version:u32 = 2  header_bytes:u32 = 64
//       graph_uuid:u8[16]  sequence:u64  vertex_limit:u64  edge_limit:u64
//       reserved:u8[4] = 0  crc:u32 (CRC-32C of bytes 0..59)
//   Block := kind:u8 reserved:u8[3] = 0 length:u32 crc:u32 (CRC-32C of bytes
//            0..7 of the block header and the payload) reserved:u32 = 0
//            payload:u8[length]
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
//   Props := count:varint (key_id:varint Value){count}   (Value: wal/value_codec.h)
//
// A block holds whole elements: it passes kTargetBlockBytes by at most one
// element, and one element larger than 4 GiB encoded cannot be checkpointed.
// The writer also ends a block at every kChunkIds-th id (its unit of
// parallel encoding); readers rely only on first_id continuing the kind.
// Blocks come in kind order 1, 2, 3, 7, 4, 5, 6 (BlockRank: the index
// definitions follow the names they refer to); ids within a kind are contiguous from 0 and
// cover exactly [0, limit). A checkpoint is valid only if every CRC matches,
// every reference resolves and the end block's totals agree: a damaged
// checkpoint is rejected whole, never partly loaded. File names:
// checkpoint-<20-digit sequence>.qck (a .tmp suffix while being written).
#ifndef QUIVER_CHECKPOINT_CHECKPOINT_FORMAT_H_
#define QUIVER_CHECKPOINT_CHECKPOINT_FORMAT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "wal/wal_format.h"

namespace quiver::checkpoint {

inline constexpr std::uint64_t kMagic = 0x3130504B43525651ULL;  // "QVRCKP01" as little-endian bytes
// The version this build writes, and the oldest it reads. Version 2 added
// the index definitions block (kind 7); a version 1 file has none.
inline constexpr std::uint32_t kFormatVersion = 2;
inline constexpr std::uint32_t kOldestFormatVersion = 1;
inline constexpr std::size_t kHeaderBytes = 64;
inline constexpr std::size_t kBlockHeaderBytes = 16;
inline constexpr std::size_t kTargetBlockBytes = 1u << 20;
// Writer tunables (not part of the format). Ids per chunk of the vertex and
// edge tables: one unit of parallel encoding, and a block boundary; 64K ids
// are about 0.2-1 MiB encoded for elements without properties.
inline constexpr std::uint64_t kChunkIds = std::uint64_t{1} << 16;
// Bytes between write-back hints while a checkpoint is written.
inline constexpr std::uint64_t kWritebackBytes = std::uint64_t{4} << 20;

enum class BlockKind : std::uint8_t {
  kLabels = 1,
  kEdgeTypes = 2,
  kPropertyKeys = 3,
  kVertices = 4,
  kEdges = 5,
  kEnd = 6,
  kIndexDefinitions = 7,
};

// The position of `kind` in a file's block order (1, 2, 3, 7, 4, 5, 6); 0
// for a kind that `format_version` does not have.
inline int BlockRank(std::uint8_t kind, std::uint32_t format_version) {
  static constexpr int kRank[] = {0, 1, 2, 3, 5, 6, 7, 4};
  if (kind < 1 || kind > 7 || (kind == 7 && format_version < 2)) return 0;
  return kRank[kind];
}

struct Header {
  std::uint32_t format_version = kFormatVersion;
  wal::Uuid uuid{};
  std::uint64_t sequence = 0;
  std::uint64_t vertex_limit = 0;
  std::uint64_t edge_limit = 0;
};

// The format version of a header whose magic and CRC are intact, whatever
// the version; nullopt otherwise.
std::optional<std::uint32_t> IntactHeaderVersion(std::span<const std::byte> in);

std::string CheckpointFileName(std::uint64_t sequence);
// The sequence of a checkpoint file name (not .tmp), or nullopt.
std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view name);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_FORMAT_H_
