// ForwardingFileSystem and ForwardingWritableFile: wrappers that pass every
// call to another FileSystem (file), so a test double or a tool overrides
// only the calls it changes (e.g. a Sync that lies, or fails once).
//
// Ownership: ForwardingFileSystem does not own `base`, which must outlive
// it; ForwardingWritableFile owns its file. Thread safety: as the wrapped
// object.
#ifndef QUIVER_ENV_FORWARDING_FILE_SYSTEM_H_
#define QUIVER_ENV_FORWARDING_FILE_SYSTEM_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "env/file_system.h"

namespace quiver::env {

class ForwardingWritableFile : public WritableFile {
 public:
  explicit ForwardingWritableFile(std::unique_ptr<WritableFile> base) : base_(std::move(base)) {}

  Status Append(std::span<const std::byte> data) override { return base_->Append(data); }
  Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) override {
    return base_->WriteAt(offset, data);
  }
  Status Sync() override { return base_->Sync(); }
  Status Truncate(std::uint64_t size) override { return base_->Truncate(size); }
  Status Allocate(std::uint64_t offset, std::uint64_t length) override {
    return base_->Allocate(offset, length);
  }
  Status ZeroFill(std::uint64_t offset, std::uint64_t length) override {
    return base_->ZeroFill(offset, length);
  }
  Status StartWriteback(std::uint64_t offset, std::uint64_t length) override {
    return base_->StartWriteback(offset, length);
  }
  Status WaitWriteback(std::uint64_t offset, std::uint64_t length) override {
    return base_->WaitWriteback(offset, length);
  }
  Status Close() override { return base_->Close(); }
  std::uint64_t Size() const override { return base_->Size(); }

 protected:
  WritableFile* target() const { return base_.get(); }

 private:
  const std::unique_ptr<WritableFile> base_;
};

class ForwardingFileSystem : public FileSystem {
 public:
  explicit ForwardingFileSystem(FileSystem* base) : base_(base) {}

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, OpenMode mode) override {
    return base_->OpenWritable(path, mode);
  }
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override {
    return base_->OpenReadable(path);
  }
  Status Rename(const std::string& from, const std::string& to) override { return base_->Rename(from, to); }
  Status Remove(const std::string& path) override { return base_->Remove(path); }
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }
  Status CreateDir(const std::string& dir) override { return base_->CreateDir(dir); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override { return base_->ListDir(dir); }
  Result<bool> Exists(const std::string& path) override { return base_->Exists(path); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode) override {
    return base_->LockFile(path, mode);
  }
  Result<std::string> RealPath(const std::string& path) override { return base_->RealPath(path); }
  Result<std::uint64_t> FreeSpace(const std::string& dir) override { return base_->FreeSpace(dir); }

 protected:
  FileSystem* target() const { return base_; }

 private:
  FileSystem* const base_;
};

}  // namespace quiver::env

#endif  // QUIVER_ENV_FORWARDING_FILE_SYSTEM_H_
