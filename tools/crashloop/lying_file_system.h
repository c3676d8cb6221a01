// LyingFileSystem: a FileSystem wrapper whose Sync of WAL segments reports
// success without syncing. The crash loop's negative control: over a
// BufferedFileSystem, commits are then acknowledged while their bytes are
// only in process memory, and a kill -9 must show up as acknowledged
// commits lost (or a failed recovery). If the loop stayed green with it,
// its oracle would be blind.
//
// Thread safety: as the wrapped file system.
#ifndef QUIVER_TOOLS_CRASHLOOP_LYING_FILE_SYSTEM_H_
#define QUIVER_TOOLS_CRASHLOOP_LYING_FILE_SYSTEM_H_

#include <memory>
#include <string>

#include "env/forwarding_file_system.h"

namespace quiver::crashloop {

class LyingFileSystem final : public env::ForwardingFileSystem {
 public:
  // `base` is not owned and must outlive this object.
  explicit LyingFileSystem(env::FileSystem* base) : ForwardingFileSystem(base) {}

  Result<std::unique_ptr<env::WritableFile>> OpenWritable(const std::string& path,
                                                          env::OpenMode mode) override;
};

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_LYING_FILE_SYSTEM_H_
