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
#include <vector>

#include "env/file_system.h"

namespace quiver::crashloop {

class LyingFileSystem final : public env::FileSystem {
 public:
  // `base` is not owned and must outlive this object.
  explicit LyingFileSystem(env::FileSystem* base) : base_(base) {}

  Result<std::unique_ptr<env::WritableFile>> OpenWritable(const std::string& path,
                                                          env::OpenMode mode) override;
  Result<std::unique_ptr<env::ReadableFile>> OpenReadable(const std::string& path) override {
    return base_->OpenReadable(path);
  }
  Status Rename(const std::string& from, const std::string& to) override { return base_->Rename(from, to); }
  Status Remove(const std::string& path) override { return base_->Remove(path); }
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }
  Status CreateDir(const std::string& dir) override { return base_->CreateDir(dir); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override { return base_->ListDir(dir); }
  Result<bool> Exists(const std::string& path) override { return base_->Exists(path); }
  Result<std::unique_ptr<env::FileLock>> LockFile(const std::string& path) override {
    return base_->LockFile(path);
  }
  Result<std::uint64_t> FreeSpace(const std::string& dir) override { return base_->FreeSpace(dir); }

 private:
  env::FileSystem* const base_;
};

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_LYING_FILE_SYSTEM_H_
