// SimFileSystem: the crash point, Crash() (power loss), Clone(), damage to
// durable data and the test helpers.
//
// A crash is computed in two halves. Directories first: each directory's
// entries become its durable entries plus the logged changes the policy
// keeps (in issue order; a rename's two halves together), and a
// subdirectory whose own entry did not survive disappears with everything
// under it. Files second: every file still reachable by a name becomes its
// CrashImage under the policy. Randomness is drawn from streams derived from
// the seed (stream 0 for directories, the file id for each file), so the
// result depends only on the state and the seed.
#include <map>
#include <utility>

#include "base/strings.h"
#include "env/random.h"
#include "env/sim_file_system.h"
#include "env/sim_path.h"

namespace quiver::env {
namespace {

std::string ToString(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

std::uint64_t SimFileSystem::operation_count() const {
  base::MutexLock lock(&mu_);
  return op_count_;
}

void SimFileSystem::SetCrashAtOperation(std::uint64_t n) {
  base::MutexLock lock(&mu_);
  crash_at_ = n;
}

bool SimFileSystem::dead() const {
  base::MutexLock lock(&mu_);
  return dead_;
}

void SimFileSystem::Crash(CrashPolicy policy, std::uint64_t seed) {
  base::MutexLock lock(&mu_);
  CrashDirectories(policy, seed);
  CrashFiles(policy, seed);
  dir_log_.clear();
  locks_.clear();  // the process that held them is gone
  dead_ = false;
  crash_at_ = 0;
  ++generation_;
}

std::vector<bool> SimFileSystem::SurvivingDirChanges(CrashPolicy policy, std::uint64_t seed) const {
  std::vector<bool> keep(dir_log_.size(), false);
  Rng rng = Rng::Derive(seed, 0);
  switch (policy) {
    case CrashPolicy::kTornLastWrite:
    case CrashPolicy::kTearPartialPage: keep.assign(keep.size(), true); break;
    case CrashPolicy::kKeepRandomPrefix:
    case CrashPolicy::kReorderSectors: {
      // The halves of a rename are adjacent in the log and share a group.
      std::size_t groups = 0;
      for (std::size_t i = 0; i < dir_log_.size(); ++i) {
        if (i == 0 || dir_log_[i].group != dir_log_[i - 1].group) ++groups;
      }
      const bool prefix = policy == CrashPolicy::kKeepRandomPrefix;
      const std::uint64_t cut = prefix ? rng.Uniform(groups + 1) : 0;
      std::size_t ordinal = 0;
      bool kept = false;
      for (std::size_t i = 0; i < dir_log_.size(); ++i) {
        if (i == 0 || dir_log_[i].group != dir_log_[i - 1].group) {
          kept = prefix ? ordinal < cut : rng.OneIn(2);
          ++ordinal;
        }
        keep[i] = kept;
      }
      break;
    }
    case CrashPolicy::kKeepRemovalsLoseAdditions: {
      // A group (a rename's two halves) survives only if it adds no name.
      std::map<std::uint64_t, bool> adds;
      for (const DirChange& c : dir_log_) adds[c.group] = adds[c.group] || c.entry.has_value();
      for (std::size_t i = 0; i < dir_log_.size(); ++i) keep[i] = !adds[dir_log_[i].group];
      break;
    }
    case CrashPolicy::kDropUnsynced:
    case CrashPolicy::kExtendWithGarbage:
    case CrashPolicy::kExtendWithZeros:
    case CrashPolicy::kLoseUnsyncedDirEntries: break;
  }
  return keep;
}

void SimFileSystem::CrashDirectories(CrashPolicy policy, std::uint64_t seed) {
  const std::vector<bool> keep = SurvivingDirChanges(policy, seed);
  for (auto& [path, dir] : dirs_) dir.entries = dir.durable;
  for (std::size_t i = 0; i < dir_log_.size(); ++i) {
    if (!keep[i]) continue;
    const DirChange& c = dir_log_[i];
    std::map<std::string, Entry>& entries = dirs_.at(c.dir).entries;
    if (c.entry.has_value()) {
      entries[c.name] = *c.entry;
    } else {
      entries.erase(c.name);
    }
  }
  for (auto& [path, dir] : dirs_) dir.durable = dir.entries;
  PruneUnreachableDirs();
}

void SimFileSystem::PruneUnreachableDirs() {
  // std::map order visits a parent ("a") before its children ("a/b"), so a
  // child sees its parent's fate.
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    bool reachable = it->second.mount;
    if (!reachable) {
      const auto [parent, name] = SplitPath(it->first);
      auto p = dirs_.find(parent);
      if (p != dirs_.end()) {
        auto e = p->second.entries.find(name);
        reachable = e != p->second.entries.end() && e->second.file == nullptr;
      }
    }
    it = reachable ? std::next(it) : dirs_.erase(it);
  }
}

void SimFileSystem::CrashFiles(CrashPolicy policy, std::uint64_t seed) {
  std::map<std::uint64_t, SimFile*> files;  // by id: a deterministic order
  for (auto& [path, dir] : dirs_) {
    for (auto& [name, entry] : dir.entries) {
      if (entry.file != nullptr) files[entry.file->id()] = entry.file.get();
    }
  }
  for (auto& [id, file] : files) {
    Rng rng = Rng::Derive(seed, id);
    file->ResetTo(file->CrashImage(policy, rng));
  }
}

std::unique_ptr<SimFileSystem> SimFileSystem::Clone() const {
  auto copy = std::make_unique<SimFileSystem>();
  base::MutexLock lock(&mu_);
  base::MutexLock copy_lock(&copy->mu_);
  // One copy per file, however many entries (live, durable, logged) name it.
  std::map<const SimFile*, std::shared_ptr<SimFile>> copies;
  auto clone_entry = [&copies](const Entry& e) {
    if (e.file == nullptr) return e;
    std::shared_ptr<SimFile>& c = copies[e.file.get()];
    if (c == nullptr) c = std::make_shared<SimFile>(*e.file);
    return Entry{c};
  };
  for (const auto& [path, dir] : dirs_) {
    Dir& d = copy->dirs_[path];
    d.mount = dir.mount;
    for (const auto& [name, e] : dir.entries) d.entries[name] = clone_entry(e);
    for (const auto& [name, e] : dir.durable) d.durable[name] = clone_entry(e);
  }
  for (const DirChange& c : dir_log_) {
    std::optional<Entry> entry;
    if (c.entry.has_value()) entry = clone_entry(*c.entry);
    copy->dir_log_.push_back(DirChange{c.dir, c.name, std::move(entry), c.group});
  }
  copy->removed_ = removed_;
  copy->next_file_id_ = next_file_id_;
  copy->next_group_ = next_group_;
  copy->op_count_ = op_count_;
  copy->crash_at_ = crash_at_;
  copy->dead_ = dead_;
  copy->free_space_ = free_space_;
  return copy;
}

Status SimFileSystem::DropUnsynced(const std::string& path) {
  base::MutexLock lock(&mu_);
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(path));
  file->DropUnsynced();
  return Status::Ok();
}

Status SimFileSystem::ReplaceDurable(const std::string& path, std::uint64_t offset,
                                     std::span<const std::byte> bytes) {
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(path));
  std::vector<std::byte> durable = file->durable();
  if (offset > durable.size() || bytes.size() > durable.size() - offset) {
    return OutOfRangeError(base::StrCat("damage past the durable size ", durable.size(), " of ", path));
  }
  std::copy(bytes.begin(), bytes.end(), durable.begin() + static_cast<std::ptrdiff_t>(offset));
  file->SetDurable(std::move(durable));
  return Status::Ok();
}

Status SimFileSystem::FlipBit(const std::string& path, std::uint64_t bit_offset) {
  base::MutexLock lock(&mu_);
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(path));
  const std::uint64_t offset = bit_offset / 8;
  if (offset >= file->durable().size()) {
    return OutOfRangeError(base::StrCat("bit ", bit_offset, " is past the durable size of ", path));
  }
  const std::byte flipped = file->durable()[offset] ^ static_cast<std::byte>(1u << (bit_offset % 8));
  return ReplaceDurable(path, offset, std::span<const std::byte>(&flipped, 1));
}

Status SimFileSystem::MisdirectWrite(const std::string& path, std::uint64_t from_offset,
                                     std::uint64_t to_offset, std::uint64_t length) {
  base::MutexLock lock(&mu_);
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(path));
  const std::vector<std::byte>& durable = file->durable();
  if (from_offset > durable.size() || length > durable.size() - from_offset) {
    return OutOfRangeError(base::StrCat("misdirected source past the durable size of ", path));
  }
  const auto begin = durable.begin() + static_cast<std::ptrdiff_t>(from_offset);
  const std::vector<std::byte> block(begin, begin + static_cast<std::ptrdiff_t>(length));
  return ReplaceDurable(path, to_offset, block);
}

Status SimFileSystem::Corrupt(const std::string& path, std::uint64_t offset,
                              std::span<const std::byte> bytes) {
  base::MutexLock lock(&mu_);
  return ReplaceDurable(path, offset, bytes);
}

Status SimFileSystem::LandStaleBytes(const std::string& source, std::uint64_t source_offset,
                                     const std::string& path, std::uint64_t offset, std::uint64_t length) {
  base::MutexLock lock(&mu_);
  std::vector<std::byte> stale;
  if (Result<std::shared_ptr<SimFile>> live = FindFile(source); live.ok()) {
    stale = (*live)->durable();
  } else if (auto it = removed_.find(NormalizePath(source)); it != removed_.end()) {
    stale = it->second;
  } else {
    return NotFoundError(base::StrCat("no such file, live or removed: ", source));
  }
  if (source_offset > stale.size() || length > stale.size() - source_offset)
    return OutOfRangeError(base::StrCat("stale bytes past the durable size of ", source));
  const auto begin = stale.begin() + static_cast<std::ptrdiff_t>(source_offset);
  return ReplaceDurable(path, offset,
                        std::vector<std::byte>(begin, begin + static_cast<std::ptrdiff_t>(length)));
}

// ---- Test helpers ----

Result<std::string> SimFileSystem::ReadFileForTest(const std::string& path) const {
  base::MutexLock lock(&mu_);
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(path));
  return ToString(file->current());
}

Result<std::string> SimFileSystem::ReadDurableForTest(const std::string& path) const {
  base::MutexLock lock(&mu_);
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<SimFile> file, FindFile(path));
  return ToString(file->durable());
}

Status SimFileSystem::WriteFileForTest(const std::string& path, std::string_view bytes) {
  base::MutexLock lock(&mu_);
  const std::string p = NormalizePath(path);
  // Named copies: clang 14 cannot capture structured bindings in lambdas.
  const auto [dir_part, name_part] = SplitPath(p);
  const std::string dir = dir_part;
  const std::string name = name_part;
  Dir* d = FindDir(dir);
  if (d == nullptr) return NotFoundError(base::StrCat("no such directory: ", dir));
  if (FindDir(p) != nullptr) return IOError(base::StrCat("is a directory: ", p));
  std::shared_ptr<SimFile>& file = d->entries[name].file;
  if (file == nullptr) file = std::make_shared<SimFile>(next_file_id_++);
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
  file->ResetTo(std::vector<std::byte>(data, data + bytes.size()));
  d->durable[name] = d->entries[name];
  // Durable means no logged change to this name can undo it in a crash.
  std::erase_if(dir_log_, [&](const DirChange& c) { return c.dir == dir && c.name == name; });
  return Status::Ok();
}

void SimFileSystem::SetFreeSpace(std::uint64_t bytes) {
  base::MutexLock lock(&mu_);
  free_space_ = bytes;
}

}  // namespace quiver::env
