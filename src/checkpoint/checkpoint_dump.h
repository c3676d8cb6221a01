// DumpCheckpoint: one checkpoint file as text (quiver::DumpFile, include/
// quiver/dump.h, says what is printed). It reads through
// ScanCheckpointFile, with the framing and CRC checks of
// VerifyCheckpointFile in file order, and decodes each block's payload by
// the grammar of checkpoint_format.h (index definitions through
// ReadIndexDef, values through wal::DecodeValue). Like Verify it does not
// check that references resolve (LoadCheckpoint does): an id no names
// block defines prints as #<id>. docs/checkpoint_format.md shows its
// output on the worked example.
//
// Thread safety: a free function of its arguments.
#ifndef QUIVER_CHECKPOINT_CHECKPOINT_DUMP_H_
#define QUIVER_CHECKPOINT_CHECKPOINT_DUMP_H_

#include "env/file_system.h"
#include "quiver/dump.h"
#include "quiver/status.h"

namespace quiver::checkpoint {

// Prints `file`, a checkpoint, to `out`, each line indented by two spaces
// (the caller prints the file's name above). Returns OK, or what
// ScanCheckpointFile returned (Corruption, Unimplemented, an I/O error) or
// Corruption for a block whose CRC matched but whose payload does not
// decode, after printing the blocks before it and a line saying where and
// why reading stopped. Reads one block at a time.
Status DumpCheckpoint(const env::ReadableFile& file, const DumpOptions& options, const DumpLineFn& out);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_DUMP_H_
