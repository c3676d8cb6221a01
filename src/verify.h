// VerifyGraphDirectory: the scrub behind quiver::VerifyDirectory and
// Graph::Verify (include/quiver/verify.h states the checks). It reads through
// the same readers as recovery (wal::ScanSegment, checkpoint::
// VerifyCheckpointFile) and calls no mutating FileSystem method.
//
// Thread safety: a free function; safe beside a running graph (the caller
// keeps checkpoint cleanup from removing files meanwhile if it can).
#ifndef QUIVER_VERIFY_INTERNAL_H_
#define QUIVER_VERIFY_INTERNAL_H_

#include <string>

#include "env/file_system.h"
#include "quiver/verify.h"

namespace quiver {

Result<VerifyReport> VerifyGraphDirectory(env::FileSystem* fs, const std::string& dir,
                                          const VerifyOptions& options = {});

}  // namespace quiver

#endif  // QUIVER_VERIFY_INTERNAL_H_
