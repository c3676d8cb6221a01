// WriteCheckpoint: streams one pinned version to a checkpoint file.
//
// The version is immutable (it is pinned by the caller's snapshot), so this
// runs on any thread while the writer keeps committing. Order: write
// `<name>.tmp`, fdatasync, close, rename to `<name>`, fsync the directory.
// On any error the temporary file is removed (best effort) and the previous
// checkpoints are untouched.
#ifndef QUIVER_CHECKPOINT_CHECKPOINT_WRITER_H_
#define QUIVER_CHECKPOINT_CHECKPOINT_WRITER_H_

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_format.h"
#include "env/file_system.h"
#include "quiver/status.h"
#include "storage/elements.h"
#include "wal/wal_format.h"

namespace quiver::checkpoint {

struct WriteStats {
  std::uint64_t bytes = 0;
  std::uint64_t blocks = 0;
};

Status WriteCheckpoint(env::FileSystem* fs, const std::string& dir, const wal::Uuid& uuid,
                       const storage::GraphRoots& roots, WriteStats* stats);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_WRITER_H_
