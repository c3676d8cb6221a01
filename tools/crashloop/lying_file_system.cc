#include "lying_file_system.h"

#include <utility>

namespace quiver::crashloop {
namespace {

// Forwards everything but Sync.
class LyingFile final : public env::ForwardingWritableFile {
 public:
  using ForwardingWritableFile::ForwardingWritableFile;
  Status Sync() override { return Status::Ok(); }  // the lie
};

bool IsWalSegment(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, 4, "wal-") == 0;
}

}  // namespace

Result<std::unique_ptr<env::WritableFile>> LyingFileSystem::OpenWritable(const std::string& path,
                                                                         env::OpenMode mode) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::WritableFile> file, target()->OpenWritable(path, mode));
  if (!IsWalSegment(path)) return file;
  return std::unique_ptr<env::WritableFile>(std::make_unique<LyingFile>(std::move(file)));
}

}  // namespace quiver::crashloop
