// DumpGraphDirectory, DumpGraphFile: the dump behind quiver::DumpDirectory
// and quiver::DumpFile (include/quiver/dump.h says what they print), on any
// FileSystem. They list the directory, print each file's name and size and
// hand the file to wal::DumpSegment or checkpoint::DumpCheckpoint. They
// call no mutating FileSystem method.
//
// Thread safety: free functions; safe beside a running graph.
#ifndef QUIVER_DUMP_INTERNAL_H_
#define QUIVER_DUMP_INTERNAL_H_

#include <string>

#include "env/file_system.h"
#include "quiver/dump.h"

namespace quiver {

Status DumpGraphDirectory(env::FileSystem* fs, const std::string& dir, const DumpOptions& options,
                          const DumpLineFn& out);
Status DumpGraphFile(env::FileSystem* fs, const std::string& path, const DumpOptions& options,
                     const DumpLineFn& out);

}  // namespace quiver

#endif  // QUIVER_DUMP_INTERNAL_H_
