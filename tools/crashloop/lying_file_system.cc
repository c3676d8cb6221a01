#include "lying_file_system.h"

#include <utility>

namespace quiver::crashloop {
namespace {

// Forwards everything but Sync.
class LyingFile final : public env::WritableFile {
 public:
  explicit LyingFile(std::unique_ptr<env::WritableFile> base) : base_(std::move(base)) {}

  Status Append(std::span<const std::byte> data) override { return base_->Append(data); }
  Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) override {
    return base_->WriteAt(offset, data);
  }
  Status Sync() override { return Status::Ok(); }  // the lie
  Status Truncate(std::uint64_t size) override { return base_->Truncate(size); }
  Status Allocate(std::uint64_t offset, std::uint64_t length) override {
    return base_->Allocate(offset, length);
  }
  Status StartWriteback(std::uint64_t offset, std::uint64_t length) override {
    return base_->StartWriteback(offset, length);
  }
  Status WaitWriteback(std::uint64_t offset, std::uint64_t length) override {
    return base_->WaitWriteback(offset, length);
  }
  Status Close() override { return base_->Close(); }
  std::uint64_t Size() const override { return base_->Size(); }

 private:
  const std::unique_ptr<env::WritableFile> base_;
};

bool IsWalSegment(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, 4, "wal-") == 0;
}

}  // namespace

Result<std::unique_ptr<env::WritableFile>> LyingFileSystem::OpenWritable(const std::string& path,
                                                                         env::OpenMode mode) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::WritableFile> file, base_->OpenWritable(path, mode));
  if (!IsWalSegment(path)) return file;
  return std::unique_ptr<env::WritableFile>(std::make_unique<LyingFile>(std::move(file)));
}

}  // namespace quiver::crashloop
