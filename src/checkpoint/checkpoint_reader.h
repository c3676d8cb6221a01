// LoadCheckpoint: validates a checkpoint file and rebuilds the graph state it
// holds into `roots` (which must be empty, with empty intern tables born in
// ctx.epoch), on `threads` threads (the caller's included). Corruption if
// anything fails a check; `roots` is then left for the caller to destroy.
// The result does not depend on `threads`, nor does which error a damaged
// file gets. VerifyCheckpointFile makes the checks that need no graph, and
// ScanCheckpointFile makes them block by block, handing each block to a
// visitor (the dump, checkpoint_dump.h).
#ifndef QUIVER_CHECKPOINT_CHECKPOINT_READER_H_
#define QUIVER_CHECKPOINT_CHECKPOINT_READER_H_

#include <cstdint>
#include <span>

#include "checkpoint/checkpoint_format.h"
#include "env/file_system.h"
#include "quiver/status.h"
#include "storage/elements.h"
#include "storage/retire_list.h"

namespace quiver::checkpoint {

// What a load did besides the graph: the time spent on the contents of the
// indexes the checkpoint lists (part of the load), and how many of them it
// copied from stored entries (format 5 on) instead of building them.
struct LoadStats {
  std::uint64_t index_build_microseconds = 0;
  std::uint64_t indexes_loaded = 0;
};

Status LoadCheckpoint(std::span<const std::byte> file, storage::GraphRoots& roots,
                      storage::MutationContext& ctx, Header* header, unsigned threads = 1,
                      LoadStats* stats = nullptr);

// The same, reading `file` block by block (each worker reads the blocks it
// decodes into a buffer of its own), so the whole file is never held in
// memory. I/O errors are returned as they are, never as Corruption.
// `*stats` (if set) says what the load did besides the graph.
Status LoadCheckpointFile(const env::ReadableFile& file, storage::GraphRoots& roots,
                          storage::MutationContext& ctx, Header* header, unsigned threads = 1,
                          LoadStats* stats = nullptr);

// Checks `file` without loading it: the header, the framing of every block,
// every block's CRC and the end block's counts of blocks. Reads the file
// block by block and builds nothing. Corruption if a check fails,
// Unimplemented for a newer format, I/O errors as they are. Passing does
// not prove every reference inside resolves (only LoadCheckpoint does), but
// a file that passed LoadCheckpoint once and passes this now is unchanged
// on disk. On failure `*bad_offset` (if set) is where the damage was found:
// 0 for the header, else the offset of the block (or trailer) that failed.
Status VerifyCheckpointFile(const env::ReadableFile& file, Header* header,
                            std::uint64_t* bad_offset = nullptr);

// One block of a checkpoint as ScanCheckpointFile hands it over: its
// framing and its CRC checked, its payload not decoded.
struct ScannedBlock {
  BlockKind kind = BlockKind::kEnd;
  std::uint64_t offset = 0;  // of the block header
  std::uint32_t length = 0;  // payload bytes
  std::uint32_t crc = 0;     // as stored (it matched)
  // Every kind but the end block: the payload's (first_id, count) prefix,
  // checked to continue the ids of the blocks of its kind before it.
  std::uint64_t first_id = 0;
  std::uint64_t count = 0;
  // The payload after that prefix (the end block: all of it), for the
  // grammar of its kind (checkpoint_format.h) to decode. Valid only during
  // the visitor's call.
  std::span<const std::byte> body;
};

// What ScanCheckpointFile calls, in file order.
class CheckpointVisitor {
 public:
  virtual ~CheckpointVisitor() = default;
  // The header, once it decoded, before any block.
  virtual Status VisitHeader(const Header& header) = 0;
  // Each block, once its framing and CRC passed, before the next block is
  // read. A non-OK status stops the scan and is returned.
  virtual Status VisitBlock(const ScannedBlock& block) = 0;
};

// Reads `file` front to back with the checks of VerifyCheckpointFile, in
// file order: a block's framing, then its CRC, then visitor.VisitBlock,
// then the next block; after the last block the trailer, then the end
// block's totals. So the visitor sees every block before the first damage
// (the dump prints what was readable), and a damaged block is reported at
// its own offset (VerifyCheckpointFile, which checks every block's framing
// and the trailer before any block's CRC, may name the trailer for a
// damaged block CRC field). Statuses and `*bad_offset` (if set) as
// VerifyCheckpointFile's. Holds one block in memory at a time; changes
// nothing.
Status ScanCheckpointFile(const env::ReadableFile& file, CheckpointVisitor& visitor,
                          std::uint64_t* bad_offset = nullptr);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_READER_H_
