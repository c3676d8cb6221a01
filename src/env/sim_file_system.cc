// SimFileSystem: files, handles, directory operations and test helpers.
// Crash, Clone and the damage helpers are in sim_crash.cc.
//
// Every entry change (create, rename, remove, mkdir) is applied to the
// directory's live entries at once and logged in dir_log_ until SyncDir of
// that directory makes it durable; the log is what Crash() replays a part of.
#include "env/sim_file_system.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "base/strings.h"
#include "env/path.h"
#include "env/sim_path.h"

namespace quiver::env {
namespace {

// A file may not grow past this: a stray huge offset would otherwise
// allocate gigabytes in a test.
constexpr std::uint64_t kMaxSimFileBytes = std::uint64_t{1} << 30;

Status CheckExtent(std::uint64_t offset, std::uint64_t length, const std::string& path) {
  if (offset > kMaxSimFileBytes || length > kMaxSimFileBytes - offset) {
    return ResourceExhaustedError(base::StrCat("simulated file would pass 1 GiB: ", path));
  }
  return Status::Ok();
}

}  // namespace

// A file open for writing. Holds the SimFile itself, so a rename or removal
// of its name does not affect it (as with an open fd).
class SimFileSystem::WritableHandle final : public WritableFile {
 public:
  WritableHandle(SimFileSystem* fs, std::shared_ptr<SimFile> file, std::string path, std::uint64_t generation)
      : fs_(fs), file_(std::move(file)), path_(std::move(path)), generation_(generation) {}

  Status Append(std::span<const std::byte> data) override {
    return Mutate([&](SimFile& f) { return WriteAtUnlocked(f, f.current().size(), data); });
  }
  Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) override {
    return Mutate([&](SimFile& f) { return WriteAtUnlocked(f, offset, data); });
  }
  Status Sync() override {
    return Mutate([](SimFile& f) {
      f.Sync();
      return Status::Ok();
    });
  }
  Status Truncate(std::uint64_t size) override {
    return Mutate([&](SimFile& f) {
      QUIVER_RETURN_IF_ERROR(CheckExtent(size, 0, path_));
      f.Truncate(size);
      return Status::Ok();
    });
  }
  // Space is never short in the simulation: counted, otherwise a no-op.
  Status Allocate(std::uint64_t, std::uint64_t) override {
    return Mutate([](SimFile&) { return Status::Ok(); });
  }
  // Write-back makes nothing durable (only Sync does), so the simulated disk
  // ignores it; not a crash point, since it changes no state.
  Status StartWriteback(std::uint64_t, std::uint64_t) override { return CheckHandle(); }
  Status WaitWriteback(std::uint64_t, std::uint64_t) override { return CheckHandle(); }
  Status Close() override {
    if (closed_) return FailedPreconditionError(base::StrCat("file is closed: ", path_));
    closed_ = true;
    base::MutexLock lock(&fs_->mu_);
    return fs_->BeginFileOp(generation_, /*mutating=*/false);
  }
  std::uint64_t Size() const override {
    base::MutexLock lock(&fs_->mu_);
    return file_->current().size();
  }

 private:
  Status WriteAtUnlocked(SimFile& f, std::uint64_t offset, std::span<const std::byte> data) {
    QUIVER_RETURN_IF_ERROR(CheckExtent(offset, data.size(), path_));
    f.Write(offset, data);
    return Status::Ok();
  }

  Status CheckHandle() {
    if (closed_) return FailedPreconditionError(base::StrCat("file is closed: ", path_));
    base::MutexLock lock(&fs_->mu_);
    return fs_->BeginFileOp(generation_, /*mutating=*/false);
  }

  template <typename Fn>
  Status Mutate(Fn fn) {
    if (closed_) return FailedPreconditionError(base::StrCat("file is closed: ", path_));
    base::MutexLock lock(&fs_->mu_);
    QUIVER_RETURN_IF_ERROR(fs_->BeginFileOp(generation_, /*mutating=*/true));
    return fn(*file_);
  }

  SimFileSystem* const fs_;
  const std::shared_ptr<SimFile> file_;
  const std::string path_;
  const std::uint64_t generation_;
  bool closed_ = false;
};

class SimFileSystem::ReadableHandle final : public ReadableFile {
 public:
  ReadableHandle(SimFileSystem* fs, std::shared_ptr<SimFile> file, std::uint64_t generation)
      : fs_(fs), file_(std::move(file)), generation_(generation) {}

  Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> buf) const override {
    base::MutexLock lock(&fs_->mu_);
    QUIVER_RETURN_IF_ERROR(fs_->BeginFileOp(generation_, /*mutating=*/false));
    const std::vector<std::byte>& bytes = file_->current();
    if (offset >= bytes.size()) return std::size_t{0};
    const std::size_t n = std::min<std::uint64_t>(buf.size(), bytes.size() - offset);
    std::memcpy(buf.data(), bytes.data() + offset, n);
    return n;
  }
  Result<std::uint64_t> Size() const override {
    base::MutexLock lock(&fs_->mu_);
    QUIVER_RETURN_IF_ERROR(fs_->BeginFileOp(generation_, /*mutating=*/false));
    return std::uint64_t{file_->current().size()};
  }

 private:
  SimFileSystem* const fs_;
  const std::shared_ptr<SimFile> file_;
  const std::uint64_t generation_;
};

// The lock table maps a path to its exclusive holder's token, or to
// kSharedHolders plus the number of shared holders.
constexpr std::uint64_t kSharedHolders = std::uint64_t{1} << 63;

// An entry in the lock table; releases it on destruction unless a Crash()
// already cleared the table (the token then no longer matches, or, for a
// shared holder, the generation has moved on).
class SimFileSystem::Lock final : public FileLock {
 public:
  Lock(SimFileSystem* fs, std::string path, std::uint64_t token, std::uint64_t generation)
      : fs_(fs), path_(std::move(path)), token_(token), generation_(generation) {}
  ~Lock() override {
    base::MutexLock lock(&fs_->mu_);
    auto it = fs_->locks_.find(path_);
    if (it == fs_->locks_.end()) return;
    if (token_ != kSharedHolders) {
      if (it->second == token_) fs_->locks_.erase(it);
    } else if (fs_->generation_ == generation_ && (it->second & kSharedHolders) != 0) {
      if (--it->second == kSharedHolders) fs_->locks_.erase(it);
    }
  }

 private:
  SimFileSystem* const fs_;
  const std::string path_;
  const std::uint64_t token_;  // kSharedHolders for a shared holder
  const std::uint64_t generation_;
};

Status SimFileSystem::BeginOp(bool mutating) {
  if (dead_) return IOError("simulated crash");
  if (!mutating) return Status::Ok();
  ++op_count_;
  if (crash_at_ != 0 && op_count_ >= crash_at_) {
    dead_ = true;
    return IOError("simulated crash");
  }
  return Status::Ok();
}

Status SimFileSystem::BeginFileOp(std::uint64_t generation, bool mutating) {
  if (generation != generation_) return IOError("file was opened before a simulated crash");
  return BeginOp(mutating);
}

SimFileSystem::Dir* SimFileSystem::FindDir(const std::string& dir) {
  auto it = dirs_.find(dir);
  return it == dirs_.end() ? nullptr : &it->second;
}

Result<std::shared_ptr<SimFile>> SimFileSystem::FindFile(const std::string& path) const {
  const std::string p = NormalizePath(path);
  const auto [dir, name] = SplitPath(p);
  auto d = dirs_.find(dir);
  if (d == dirs_.end()) return NotFoundError(base::StrCat("no such directory: ", dir));
  auto e = d->second.entries.find(name);
  if (e == d->second.entries.end() || e->second.file == nullptr) {
    return NotFoundError(base::StrCat("no such file: ", p));
  }
  return e->second.file;
}

void SimFileSystem::SetEntry(const std::string& dir, const std::string& name, std::optional<Entry> entry,
                             std::uint64_t group) {
  Dir& d = dirs_.at(dir);
  if (entry.has_value()) {
    d.entries[name] = *entry;
  } else {
    d.entries.erase(name);
  }
  dir_log_.push_back(DirChange{dir, name, std::move(entry), group});
}

Result<std::unique_ptr<WritableFile>> SimFileSystem::OpenWritable(const std::string& path, OpenMode mode) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/true));
  const std::string p = NormalizePath(path);
  const auto [dir, name] = SplitPath(p);
  Dir* d = FindDir(dir);
  if (d == nullptr) return NotFoundError(base::StrCat("no such directory: ", dir));
  std::shared_ptr<SimFile> file;
  if (auto it = d->entries.find(name); it != d->entries.end()) {
    if (it->second.file == nullptr) return IOError(base::StrCat("is a directory: ", p));
    if (mode == OpenMode::kCreateNew) return AlreadyExistsError(base::StrCat("file exists: ", p));
    file = it->second.file;
    if (mode == OpenMode::kTruncate) file->Truncate(0);  // unsynced, like any truncation
  } else {
    file = std::make_shared<SimFile>(next_file_id_++);
    SetEntry(dir, name, Entry{file}, next_group_++);
  }
  return std::unique_ptr<WritableFile>(std::make_unique<WritableHandle>(this, file, p, generation_));
}

Result<std::unique_ptr<ReadableFile>> SimFileSystem::OpenReadable(const std::string& path) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/false));
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(path));
  return std::unique_ptr<ReadableFile>(std::make_unique<ReadableHandle>(this, std::move(file), generation_));
}

Status SimFileSystem::Rename(const std::string& from, const std::string& to) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/true));
  const std::string f = NormalizePath(from);
  const std::string t = NormalizePath(to);
  const auto [from_dir, from_name] = SplitPath(f);
  const auto [to_dir, to_name] = SplitPath(t);
  if (FindDir(f) != nullptr) return IOError(base::StrCat("renaming directories is not simulated: ", f));
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(f));
  Dir* td = FindDir(to_dir);
  if (td == nullptr) return NotFoundError(base::StrCat("no such directory: ", to_dir));
  if (auto old = td->entries.find(to_name); old != td->entries.end() && old->second.file == nullptr) {
    return IOError(base::StrCat("is a directory: ", t));
  }
  if (f == t) return Status::Ok();
  const std::uint64_t group = next_group_++;
  SetEntry(from_dir, from_name, std::nullopt, group);
  SetEntry(to_dir, to_name, Entry{std::move(file)}, group);
  return Status::Ok();
}

Status SimFileSystem::Remove(const std::string& path) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/true));
  const std::string p = NormalizePath(path);
  if (FindDir(p) != nullptr) return IOError(base::StrCat("removing directories is not simulated: ", p));
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(p));
  removed_[p] = file->durable();  // the disk keeps them until the space is reused
  const auto [dir, name] = SplitPath(p);
  SetEntry(dir, name, std::nullopt, next_group_++);
  return Status::Ok();
}

Status SimFileSystem::SyncDir(const std::string& dir) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/true));
  const std::string p = NormalizePath(dir);
  Dir* d = FindDir(p);
  // A directory outside the simulation (the parent of a mount point, "/")
  // holds nothing that could be lost: syncing it is a no-op.
  if (d == nullptr && !HasSimulatedAncestor(p)) return Status::Ok();
  if (d == nullptr) return NotFoundError(base::StrCat("no such directory: ", p));
  // Copy, then swap: out of memory in the copy leaves the durable image
  // as it was (an fsync that did not happen), never empty.
  auto durable = d->entries;
  d->durable.swap(durable);
  std::erase_if(dir_log_, [&](const DirChange& c) { return c.dir == p; });
  return Status::Ok();
}

Status SimFileSystem::CreateDir(const std::string& dir) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/true));
  const std::string p = NormalizePath(dir);
  if (FindDir(p) != nullptr) return Status::Ok();
  const auto [parent, name] = SplitPath(p);
  Dir* pd = (name.empty() || parent == p) ? nullptr : FindDir(parent);
  if (pd == nullptr && HasSimulatedAncestor(p)) {
    return NotFoundError(base::StrCat("no such directory: ", parent));  // as mkdir without -p
  }
  if (pd == nullptr) {
    dirs_[p].mount = true;  // outside the simulation: durable at once
    return Status::Ok();
  }
  if (pd->entries.count(name) != 0) return AlreadyExistsError(base::StrCat("a file exists at: ", p));
  dirs_[p] = Dir{};
  SetEntry(parent, name, Entry{nullptr}, next_group_++);
  return Status::Ok();
}

bool SimFileSystem::HasSimulatedAncestor(const std::string& path) const {
  for (std::string p = path;;) {
    const auto [parent, name] = SplitPath(p);
    if (name.empty() || parent == p) return false;
    if (dirs_.count(parent) != 0) return true;
    p = parent;
  }
}

Result<std::vector<std::string>> SimFileSystem::ListDir(const std::string& dir) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/false));
  const std::string p = NormalizePath(dir);
  Dir* d = FindDir(p);
  if (d == nullptr) return NotFoundError(base::StrCat("no such directory: ", p));
  std::vector<std::string> names;
  for (const auto& [name, entry] : d->entries) names.push_back(name);  // std::map: sorted
  return names;
}

Result<bool> SimFileSystem::Exists(const std::string& path) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/false));
  const std::string p = NormalizePath(path);
  if (FindDir(p) != nullptr || p == "/" || p == ".") return true;  // the roots always exist
  const auto [dir, name] = SplitPath(p);
  Dir* d = FindDir(dir);
  return d != nullptr && d->entries.count(name) != 0;
}

Result<std::string> SimFileSystem::RealPath(const std::string& path) {
  // No links here: "." and ".." are folded by name; ".." of a root stays
  // at the root.
  std::string out = FoldPath(path, /*keep_leading_dotdot=*/false);
  // push_back, not = ".": GCC 12's -Wrestrict misreads the inlined assign.
  if (out.empty()) out.push_back('.');
  QUIVER_ASSIGN_OR_RETURN(bool exists, Exists(out));
  if (!exists) return NotFoundError(base::StrCat("realpath ", path, ": no such file or directory"));
  return out;
}

Result<std::unique_ptr<FileLock>> SimFileSystem::LockFile(const std::string& path, LockMode mode) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/false));
  const std::string p = NormalizePath(path);
  const bool shared = mode == LockMode::kShared;
  if (shared) {
    // As posix: a shared lock opens the file, and never creates it.
    const auto [dir, name] = SplitPath(p);
    Dir* d = FindDir(dir);
    if (d == nullptr || d->entries.count(name) == 0)
      return NotFoundError(base::StrCat("lock ", p, ": no such file"));
  }
  auto it = locks_.find(p);
  if (it != locks_.end()) {
    const bool holders_shared = (it->second & kSharedHolders) != 0;
    if (!shared || !holders_shared)
      return FailedPreconditionError(
          base::StrCat("lock is held by this process, ", holders_shared ? "shared" : "exclusively", ": ", p));
  }
  std::uint64_t token = kSharedHolders;
  if (it != locks_.end()) {
    ++it->second;
  } else if (shared) {
    it = locks_.emplace(p, kSharedHolders | 1).first;
  } else {
    token = next_lock_token_++;
    it = locks_.emplace(p, token).first;
  }
  // Out of memory making the handle (it copies the path), the table goes
  // back to what it was, or the lock would stay held for good. (No handle
  // was made, so no destructor takes mu_.)
  try {
    return std::unique_ptr<FileLock>(std::make_unique<Lock>(this, p, token, generation_));
  } catch (const std::bad_alloc&) {
    if (!shared || --it->second == kSharedHolders) locks_.erase(it);
    throw;
  }
}

Result<std::uint64_t> SimFileSystem::FreeSpace(const std::string& /*dir*/) {
  base::MutexLock lock(&mu_);
  QUIVER_RETURN_IF_ERROR(BeginOp(/*mutating=*/false));
  return free_space_;
}

}  // namespace quiver::env
