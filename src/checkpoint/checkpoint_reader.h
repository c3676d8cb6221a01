// LoadCheckpoint: validates a checkpoint file and rebuilds the graph state it
// holds into `roots` (which must be empty, with empty intern tables born in
// ctx.epoch), on `threads` threads (the caller's included). Corruption if
// anything fails a check; `roots` is then left for the caller to destroy.
// The result does not depend on `threads`, nor does which error a damaged
// file gets.
#ifndef QUIVER_CHECKPOINT_CHECKPOINT_READER_H_
#define QUIVER_CHECKPOINT_CHECKPOINT_READER_H_

#include <span>

#include "checkpoint/checkpoint_format.h"
#include "env/file_system.h"
#include "quiver/status.h"
#include "storage/elements.h"
#include "storage/retire_list.h"

namespace quiver::checkpoint {

Status LoadCheckpoint(std::span<const std::byte> file, storage::GraphRoots& roots,
                      storage::MutationContext& ctx, Header* header, unsigned threads = 1);

// The same, reading `file` block by block (each worker reads the blocks it
// decodes into a buffer of its own), so the whole file is never held in
// memory. I/O errors are returned as they are, never as Corruption.
// `*index_build_microseconds` (if set) receives the time spent building the
// contents of the indexes the checkpoint lists (part of the load).
Status LoadCheckpointFile(const env::ReadableFile& file, storage::GraphRoots& roots,
                          storage::MutationContext& ctx, Header* header, unsigned threads = 1,
                          std::uint64_t* index_build_microseconds = nullptr);

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

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_READER_H_
