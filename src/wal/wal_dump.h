// DumpSegment: one WAL segment as text (quiver::DumpFile, include/quiver/
// dump.h, says what is printed). It reads through ScanSegment, the reader
// recovery and Verify use, with nothing covered (any damage stops it), and
// decodes each group with DecodeGroup; it prints, it never judges more
// than those two do. docs/wal_format.md shows its output on the worked
// example.
//
// Thread safety: a free function of its arguments.
#ifndef QUIVER_WAL_WAL_DUMP_H_
#define QUIVER_WAL_WAL_DUMP_H_

#include <cstddef>
#include <span>

#include "quiver/dump.h"
#include "quiver/status.h"

namespace quiver::wal {

// Prints `bytes`, a whole segment file, to `out`, each line indented by two
// spaces (the caller prints the file's name above). Returns OK, or what
// ScanSegment or DecodeGroup returned (Corruption, Unimplemented) after
// printing the groups before it and a line saying where and why reading
// stopped.
Status DumpSegment(std::span<const std::byte> bytes, const DumpOptions& options, const DumpLineFn& out);

}  // namespace quiver::wal

#endif  // QUIVER_WAL_WAL_DUMP_H_
