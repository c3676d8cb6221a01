// FaultFileSystem: deciding which operation fails, the file wrappers that
// apply the decision, and the fsync-retry bookkeeping.
#include "env/fault_file_system.h"

#include <thread>
#include <utility>

#include "base/strings.h"
#include "env/sim_file_system.h"

namespace quiver::env {

class FaultFileSystem::Writable final : public WritableFile {
 public:
  Writable(FaultFileSystem* fs, std::unique_ptr<WritableFile> base, std::string path)
      : fs_(fs), base_(std::move(base)), path_(std::move(path)) {}

  Status Append(std::span<const std::byte> data) override {
    if (auto fault = fs_->Decide(FaultOp::kWrite, path_)) {
      if (*fault == FaultKind::kShortWrite)
        QUIVER_RETURN_IF_ERROR(base_->Append(data.first(data.size() / 2)));
      return InjectedError(*fault, "append", path_);
    }
    return base_->Append(data);
  }

  Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) override {
    if (auto fault = fs_->Decide(FaultOp::kWrite, path_)) {
      if (*fault == FaultKind::kShortWrite) {
        QUIVER_RETURN_IF_ERROR(base_->WriteAt(offset, data.first(data.size() / 2)));
      }
      return InjectedError(*fault, "write", path_);
    }
    return base_->WriteAt(offset, data);
  }

  Status Sync() override {
    fs_->NoteSync(path_);
    fs_->SleepBeforeSync();
    if (auto fault = fs_->Decide(FaultOp::kSync, path_)) {
      fs_->NoteFailedSync(path_, /*injected=*/true);
      return InjectedError(*fault, "sync", path_);
    }
    Status s = base_->Sync();
    if (!s.ok()) fs_->NoteFailedSync(path_, /*injected=*/false);
    return s;
  }

  Status Truncate(std::uint64_t size) override {
    if (auto fault = fs_->Decide(FaultOp::kTruncate, path_)) return InjectedError(*fault, "truncate", path_);
    return base_->Truncate(size);
  }

  Status Allocate(std::uint64_t offset, std::uint64_t length) override {
    if (auto fault = fs_->Decide(FaultOp::kAllocate, path_)) return InjectedError(*fault, "allocate", path_);
    return base_->Allocate(offset, length);
  }

  // A write (FaultOp::kWrite), of zeros.
  Status ZeroFill(std::uint64_t offset, std::uint64_t length) override {
    if (auto fault = fs_->Decide(FaultOp::kWrite, path_)) {
      if (*fault == FaultKind::kShortWrite) QUIVER_RETURN_IF_ERROR(base_->ZeroFill(offset, length / 2));
      return InjectedError(*fault, "zero-fill", path_);
    }
    return base_->ZeroFill(offset, length);
  }

  Status StartWriteback(std::uint64_t offset, std::uint64_t length) override {
    if (auto fault = fs_->Decide(FaultOp::kWriteback, path_))
      return InjectedError(*fault, "writeback", path_);
    return base_->StartWriteback(offset, length);
  }

  Status WaitWriteback(std::uint64_t offset, std::uint64_t length) override {
    if (auto fault = fs_->Decide(FaultOp::kWriteback, path_))
      return InjectedError(*fault, "writeback", path_);
    return base_->WaitWriteback(offset, length);
  }

  Status Close() override { return base_->Close(); }
  std::uint64_t Size() const override { return base_->Size(); }

 private:
  FaultFileSystem* const fs_;
  const std::unique_ptr<WritableFile> base_;
  const std::string path_;
};

class FaultFileSystem::Readable final : public ReadableFile {
 public:
  Readable(FaultFileSystem* fs, std::unique_ptr<ReadableFile> base, std::string path)
      : fs_(fs), base_(std::move(base)), path_(std::move(path)) {}

  Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> buf) const override {
    if (auto fault = fs_->Decide(FaultOp::kRead, path_)) return InjectedError(*fault, "read", path_);
    return base_->ReadAt(offset, buf);
  }
  Result<std::uint64_t> Size() const override { return base_->Size(); }

 private:
  FaultFileSystem* const fs_;
  const std::unique_ptr<ReadableFile> base_;
  const std::string path_;
};

FaultFileSystem::FaultFileSystem(FileSystem* base) : base_(base) {}

void FaultFileSystem::SetFault(FaultSpec spec) {
  base::MutexLock lock(&mu_);
  rng_ = Rng(spec.seed);
  spec_ = std::move(spec);
  ops_seen_ = 0;
  faults_injected_ = 0;
}

void FaultFileSystem::ClearFault() {
  base::MutexLock lock(&mu_);
  spec_.reset();
}

void FaultFileSystem::SetSyncDelay(std::chrono::microseconds delay) {
  base::MutexLock lock(&mu_);
  sync_delay_ = delay;
}

std::uint64_t FaultFileSystem::total_ops() const {
  base::MutexLock lock(&mu_);
  return total_ops_;
}

std::uint64_t FaultFileSystem::ops_seen() const {
  base::MutexLock lock(&mu_);
  return ops_seen_;
}

std::uint64_t FaultFileSystem::faults_injected() const {
  base::MutexLock lock(&mu_);
  return faults_injected_;
}

std::uint64_t FaultFileSystem::SyncsAfterFailedSync(const std::string& path) const {
  base::MutexLock lock(&mu_);
  auto it = syncs_.find(path);
  return it == syncs_.end() ? 0 : it->second.syncs_after_failure;
}

std::uint64_t FaultFileSystem::TotalSyncsAfterFailedSync() const {
  base::MutexLock lock(&mu_);
  std::uint64_t total = 0;
  for (const auto& [path, record] : syncs_) total += record.syncs_after_failure;
  return total;
}

void FaultFileSystem::ResetSyncTracking() {
  base::MutexLock lock(&mu_);
  syncs_.clear();
}

std::optional<FaultKind> FaultFileSystem::Decide(FaultOp op, std::string_view path,
                                                 std::string_view other_path) {
  base::MutexLock lock(&mu_);
  ++total_ops_;
  if (!spec_.has_value() || !Includes(spec_->ops, op)) return std::nullopt;
  const std::string& filter = spec_->path_contains;
  if (!filter.empty() && path.find(filter) == std::string_view::npos &&
      other_path.find(filter) == std::string_view::npos) {
    return std::nullopt;
  }
  ++ops_seen_;
  bool fail = false;
  switch (spec_->mode) {
    case FaultMode::kOnce: fail = spec_->at != 0 && ops_seen_ == spec_->at; break;
    case FaultMode::kPersistent: fail = spec_->at != 0 && ops_seen_ >= spec_->at; break;
    case FaultMode::kRandom: fail = rng_.OneIn(spec_->one_in); break;
  }
  if (!fail) return std::nullopt;
  ++faults_injected_;
  return spec_->kind;
}

Status FaultFileSystem::InjectedError(FaultKind kind, std::string_view what, std::string_view path) {
  switch (kind) {
    case FaultKind::kEnospc:
      return ResourceExhaustedError(
          base::StrCat("no space left on device: ", path, " (injected, ", what, ")"));
    case FaultKind::kShortWrite:
      if (what == "append" || what == "write") {
        return IOError(base::StrCat("injected short write: ", what, " ", path));
      }
      break;
    case FaultKind::kEio: break;
  }
  return IOError(base::StrCat("injected EIO: ", what, " ", path));
}

void FaultFileSystem::SleepBeforeSync() const {
  std::chrono::microseconds delay;
  {
    base::MutexLock lock(&mu_);
    delay = sync_delay_;
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
}

void FaultFileSystem::NoteSync(const std::string& path) {
  base::MutexLock lock(&mu_);
  auto it = syncs_.find(path);
  if (it != syncs_.end() && it->second.failed) ++it->second.syncs_after_failure;
}

void FaultFileSystem::NoteFailedSync(const std::string& path, bool injected) {
  bool drop = false;
  {
    base::MutexLock lock(&mu_);
    syncs_[path].failed = true;
    drop = injected && spec_.has_value() && spec_->fsync_failure_drops_unsynced;
  }
  // Outside mu_: the simulator takes its own lock.
  if (drop) {
    if (auto* sim = dynamic_cast<SimFileSystem*>(base_)) sim->DropUnsynced(path).IgnoreError();
  }
}

// ---- FileSystem: decide, then pass through ----

Result<std::unique_ptr<WritableFile>> FaultFileSystem::OpenWritable(const std::string& path, OpenMode mode) {
  if (auto fault = Decide(FaultOp::kOpen, path)) return InjectedError(*fault, "open", path);
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, base_->OpenWritable(path, mode));
  return std::unique_ptr<WritableFile>(std::make_unique<Writable>(this, std::move(file), path));
}

Result<std::unique_ptr<ReadableFile>> FaultFileSystem::OpenReadable(const std::string& path) {
  if (auto fault = Decide(FaultOp::kOpen, path)) return InjectedError(*fault, "open", path);
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, base_->OpenReadable(path));
  return std::unique_ptr<ReadableFile>(std::make_unique<Readable>(this, std::move(file), path));
}

Status FaultFileSystem::Rename(const std::string& from, const std::string& to) {
  if (auto fault = Decide(FaultOp::kRename, from, to)) return InjectedError(*fault, "rename", from);
  return base_->Rename(from, to);
}

Status FaultFileSystem::Remove(const std::string& path) {
  if (auto fault = Decide(FaultOp::kRemove, path)) return InjectedError(*fault, "remove", path);
  return base_->Remove(path);
}

Status FaultFileSystem::SyncDir(const std::string& dir) {
  SleepBeforeSync();
  if (auto fault = Decide(FaultOp::kSyncDir, dir)) return InjectedError(*fault, "sync directory", dir);
  return base_->SyncDir(dir);
}

Status FaultFileSystem::CreateDir(const std::string& dir) {
  if (auto fault = Decide(FaultOp::kCreateDir, dir)) return InjectedError(*fault, "create directory", dir);
  return base_->CreateDir(dir);
}

Result<std::vector<std::string>> FaultFileSystem::ListDir(const std::string& dir) {
  if (auto fault = Decide(FaultOp::kList, dir)) return InjectedError(*fault, "list", dir);
  return base_->ListDir(dir);
}

Result<bool> FaultFileSystem::Exists(const std::string& path) {
  if (auto fault = Decide(FaultOp::kList, path)) return InjectedError(*fault, "stat", path);
  return base_->Exists(path);
}

Result<std::unique_ptr<FileLock>> FaultFileSystem::LockFile(const std::string& path, LockMode mode) {
  Decide(FaultOp::kNone, path);  // counted in total_ops, never failed
  return base_->LockFile(path, mode);
}

Result<std::string> FaultFileSystem::RealPath(const std::string& path) {
  if (auto fault = Decide(FaultOp::kList, path)) return InjectedError(*fault, "realpath", path);
  return base_->RealPath(path);
}

Result<std::uint64_t> FaultFileSystem::FreeSpace(const std::string& dir) {
  Decide(FaultOp::kNone, dir);
  return base_->FreeSpace(dir);
}

}  // namespace quiver::env
