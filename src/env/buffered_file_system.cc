// BufferedFileSystem: file handles over BufferedState, the path -> state
// table, and the directory operations that pass straight through.
#include "env/buffered_file_system.h"

#include <utility>

#include "base/strings.h"

namespace quiver::env {

class BufferedFileSystem::Writable final : public WritableFile {
 public:
  Writable(BufferedFileSystem* fs, std::unique_ptr<WritableFile> real, std::shared_ptr<BufferedState> state,
           std::string path)
      : fs_(fs), real_(std::move(real)), state_(std::move(state)), path_(std::move(path)) {}

  Status Append(std::span<const std::byte> data) override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    state_->Append(data);
    return fs_->MaybeLeak(state_.get(), real_.get());
  }
  Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    state_->WriteAt(offset, data);
    return fs_->MaybeLeak(state_.get(), real_.get());
  }
  Status Sync() override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    return state_->Sync(real_.get());
  }
  Status Truncate(std::uint64_t size) override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    state_->Truncate(size);
    return Status::Ok();
  }
  // Reserving space changes no content: straight through.
  Status Allocate(std::uint64_t offset, std::uint64_t length) override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    return real_->Allocate(offset, length);
  }
  // The pending bytes model a page cache that a power cut empties, so they
  // stay in process memory until Sync: writing them back early would make
  // kill -9 keep what a power cut loses. A hint only, so a no-op.
  Status StartWriteback(std::uint64_t, std::uint64_t) override { return CheckOpen(); }
  Status WaitWriteback(std::uint64_t, std::uint64_t) override { return CheckOpen(); }
  // The unsynced bytes stay in the state (the page cache outlives the fd).
  Status Close() override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    closed_ = true;
    return real_->Close();
  }
  std::uint64_t Size() const override { return state_->logical_size(); }

 private:
  Status CheckOpen() const {
    if (closed_) return FailedPreconditionError(base::StrCat("file is closed: ", path_));
    return Status::Ok();
  }

  BufferedFileSystem* const fs_;
  const std::unique_ptr<WritableFile> real_;
  const std::shared_ptr<BufferedState> state_;
  const std::string path_;
  bool closed_ = false;
};

class BufferedFileSystem::Readable final : public ReadableFile {
 public:
  Readable(std::unique_ptr<ReadableFile> real, std::shared_ptr<BufferedState> state)
      : real_(std::move(real)), state_(std::move(state)) {}

  Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> buf) const override {
    return state_->Read(*real_, offset, buf);
  }
  Result<std::uint64_t> Size() const override { return state_->logical_size(); }

 private:
  const std::unique_ptr<ReadableFile> real_;
  const std::shared_ptr<BufferedState> state_;
};

BufferedFileSystem::BufferedFileSystem(FileSystem* base, Options options)
    : base_(base), options_(options), rng_(options.seed) {}

std::uint64_t BufferedFileSystem::BufferedBytes() const {
  base::MutexLock lock(&mu_);
  std::uint64_t total = 0;
  for (const auto& [path, state] : states_) total += state->pending_bytes();
  return total;
}

std::shared_ptr<BufferedState> BufferedFileSystem::StateFor(const std::string& path, std::uint64_t disk_size,
                                                            bool fresh) {
  base::MutexLock lock(&mu_);
  std::shared_ptr<BufferedState>& state = states_[path];
  if (state == nullptr || fresh) state = std::make_shared<BufferedState>(disk_size);
  return state;
}

Status BufferedFileSystem::MaybeLeak(BufferedState* state, WritableFile* out) {
  if (options_.leak_one_in == 0) return Status::Ok();
  bool garbage = false;
  std::uint64_t budget_draw = 0;
  Rng garbage_rng(0);
  {
    base::MutexLock lock(&mu_);
    if (!rng_.OneIn(options_.leak_one_in)) return Status::Ok();
    garbage = rng_.OneIn(2);
    budget_draw = rng_.Next();
    garbage_rng = Rng(rng_.Next());
  }
  if (garbage) QUIVER_RETURN_IF_ERROR(state->FillGrownRegionWithGarbage(out, garbage_rng));
  // pending_bytes() may change before WriteBack if another handle of the
  // same path writes meanwhile; the budget is only a bound.
  return state->WriteBack(out, budget_draw % (state->pending_bytes() + 1));
}

Result<std::unique_ptr<WritableFile>> BufferedFileSystem::OpenWritable(const std::string& path,
                                                                       OpenMode mode) {
  // Creating the file is a directory operation: it happens on disk now. A
  // truncation is a data change: it is buffered like a write.
  const OpenMode real_mode = mode == OpenMode::kCreateNew ? OpenMode::kCreateNew : OpenMode::kCreateOrOpen;
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> real, base_->OpenWritable(path, real_mode));
  std::shared_ptr<BufferedState> state = StateFor(path, real->Size(), /*fresh=*/mode == OpenMode::kCreateNew);
  if (mode == OpenMode::kTruncate) state->Truncate(0);
  return std::unique_ptr<WritableFile>(
      std::make_unique<Writable>(this, std::move(real), std::move(state), path));
}

Result<std::unique_ptr<ReadableFile>> BufferedFileSystem::OpenReadable(const std::string& path) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> real, base_->OpenReadable(path));
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t disk_size, real->Size());
  std::shared_ptr<BufferedState> state = StateFor(path, disk_size, /*fresh=*/false);
  return std::unique_ptr<ReadableFile>(std::make_unique<Readable>(std::move(real), std::move(state)));
}

Status BufferedFileSystem::Rename(const std::string& from, const std::string& to) {
  QUIVER_RETURN_IF_ERROR(base_->Rename(from, to));
  // The buffered bytes follow the file to its new name.
  base::MutexLock lock(&mu_);
  auto it = states_.find(from);
  std::shared_ptr<BufferedState> moved = it == states_.end() ? nullptr : std::move(it->second);
  if (it != states_.end()) states_.erase(it);
  if (moved != nullptr) {
    states_[to] = std::move(moved);
  } else {
    states_.erase(to);
  }
  return Status::Ok();
}

Status BufferedFileSystem::Remove(const std::string& path) {
  QUIVER_RETURN_IF_ERROR(base_->Remove(path));
  base::MutexLock lock(&mu_);
  states_.erase(path);
  return Status::Ok();
}

Status BufferedFileSystem::SyncDir(const std::string& dir) { return base_->SyncDir(dir); }
Status BufferedFileSystem::CreateDir(const std::string& dir) { return base_->CreateDir(dir); }
Result<std::vector<std::string>> BufferedFileSystem::ListDir(const std::string& dir) {
  return base_->ListDir(dir);
}
Result<bool> BufferedFileSystem::Exists(const std::string& path) { return base_->Exists(path); }
Result<std::unique_ptr<FileLock>> BufferedFileSystem::LockFile(const std::string& path, LockMode mode) {
  return base_->LockFile(path, mode);
}
Result<std::string> BufferedFileSystem::RealPath(const std::string& path) { return base_->RealPath(path); }
Result<std::uint64_t> BufferedFileSystem::FreeSpace(const std::string& dir) { return base_->FreeSpace(dir); }

}  // namespace quiver::env
