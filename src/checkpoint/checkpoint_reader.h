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
Status LoadCheckpointFile(const env::ReadableFile& file, storage::GraphRoots& roots,
                          storage::MutationContext& ctx, Header* header, unsigned threads = 1);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_READER_H_
