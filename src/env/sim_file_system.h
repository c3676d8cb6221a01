// SimFileSystem: an in-memory, deterministic file system that can lose power.
//
// It keeps apart what a disk holds for sure from what only the page cache
// holds: per file the durable bytes and the unsynced writes (SimFile, in
// sim_file.h), per directory the durable entries and the entry changes
// (create, rename, remove, mkdir) not yet made durable by SyncDir. Crash()
// turns that state into one a disk could hold after a power cut, chosen by a
// CrashPolicy and a seed, so every crash state replays exactly.
//
// Crash-point enumeration (RELIABILITY.md 3.2):
//   SimFileSystem fs;                      // run the workload once ...
//   const std::uint64_t total = fs.operation_count();
//   for (std::uint64_t n = 1; n <= total; ++n) {
//     SimFileSystem run;  run.SetCrashAtOperation(n);
//     RunWorkload(&run);                   // fails with IOError from op n on
//     for (CrashPolicy p : kAllCrashPolicies) {
//       auto copy = run.Clone();  copy->Crash(p, seed);  CheckRecovery(copy.get());
//     }
//   }
//
// Paths: '/'-separated; repeated and trailing '/' are ignored. A file's
// parent directory must exist. A directory with no simulated directory
// anywhere above it (e.g. "/db" when "/" is not simulated) is a mount point:
// its creation is durable at once and it never disappears. Every other
// directory is an entry of its parent like a file, lost in a crash unless
// the parent was synced after its creation; creating one whose parent is
// missing fails with NotFound (mkdir, not mkdir -p). "/" and "." always
// exist; SyncDir of a directory outside the simulation is a no-op.
//
// Differences from posix, by design: LockFile creates no file (a shared
// lock, as on posix, needs one: NotFound without it); renaming or
// removing directories is not supported (IOError); a file may not grow past
// 1 GiB (ResourceExhausted); FreeSpace reports SetFreeSpace's value and
// writes never run out of space (FaultFileSystem injects ENOSPC).
//
// Thread safety: every method is thread-safe (one mutex guards all state).
// Files and locks must not outlive the SimFileSystem; files opened before a
// Crash() fail with IOError afterwards (the process that held them is gone).
#ifndef QUIVER_ENV_SIM_FILE_SYSTEM_H_
#define QUIVER_ENV_SIM_FILE_SYSTEM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "env/file_system.h"
#include "env/sim_file.h"
#include "quiver/status.h"

namespace quiver::env {

class SimFileSystem final : public FileSystem {
 public:
  SimFileSystem() = default;
  SimFileSystem(const SimFileSystem&) = delete;
  SimFileSystem& operator=(const SimFileSystem&) = delete;
  ~SimFileSystem() override = default;

  // FileSystem. Every call fails with IOError("simulated crash") while the
  // file system is dead (see SetCrashAtOperation).
  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, OpenMode mode) override;
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status Remove(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;
  Status CreateDir(const std::string& dir) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Result<bool> Exists(const std::string& path) override;
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode) override;
  Result<std::string> RealPath(const std::string& path) override;
  Result<std::uint64_t> FreeSpace(const std::string& dir) override;

  // ---- Power loss ----

  // Mutating operations started while alive, numbered from 1 and never
  // reset (Crash keeps counting): Append, WriteAt, Sync, Truncate, Allocate,
  // Rename, Remove, SyncDir, OpenWritable (every mode) and CreateDir (even
  // of an existing directory). Reads, opens for reading, listings, Close and
  // LockFile are not counted.
  std::uint64_t operation_count() const;
  // Arms the crash point: mutating operation number `n` is not performed and
  // fails with IOError("simulated crash"), and the file system is dead from
  // then on (every call fails) until Crash(). If `n` <= operation_count()
  // the next mutating operation is the crash point; 0 disarms.
  void SetCrashAtOperation(std::uint64_t n);
  // Whether the crash point was reached and Crash() not yet called.
  bool dead() const;
  // Power loss: every file and directory becomes what a disk could hold
  // after a power cut under `policy` (sim_file.h documents each), with every
  // random choice drawn from `seed`. Then the file system is alive again,
  // disarmed, with no locks held; earlier files fail with IOError.
  void Crash(CrashPolicy policy, std::uint64_t seed);
  // A deep copy of the whole state, durable and unsynced, with the same
  // counters, crash point and dead flag, but no open files and no locks.
  // Used to crash one state under many policies.
  std::unique_ptr<SimFileSystem> Clone() const;

  // ---- Linux fsync-failure semantics (used by FaultFileSystem) ----

  // Forgets the unsynced writes of `path` without making them durable: reads
  // still see them, a later Sync does not persist them, a crash loses them.
  // NotFound if there is no such file.
  Status DropUnsynced(const std::string& path);

  // ---- Damage to durable data (bit rot, misdirected writes) ----
  // Each changes the durable bytes of an existing file (NotFound otherwise)
  // inside its durable size (OutOfRange otherwise); reads see the damage.
  // They work while dead and are not counted as operations.

  // Inverts bit `bit_offset % 8` of byte `bit_offset / 8`.
  Status FlipBit(const std::string& path, std::uint64_t bit_offset);
  // Copies `length` bytes at `from_offset` over the bytes at `to_offset`,
  // as a write the disk sent to the wrong place would.
  Status MisdirectWrite(const std::string& path, std::uint64_t from_offset, std::uint64_t to_offset,
                        std::uint64_t length);
  // Overwrites the bytes at `offset` with `bytes`.
  Status Corrupt(const std::string& path, std::uint64_t offset, std::span<const std::byte> bytes);
  // A write the disk lost or sent elsewhere, leaving stale bytes: the
  // durable bytes of `path` at [offset, offset + length) become what
  // `source` holds at [source_offset, source_offset + length): the durable
  // bytes of a live file, or, for a file removed earlier (Remove), the
  // durable bytes it had when it was removed, as if the disk had reused its
  // space for `path`. Lands a block of an older file in a newer one.
  // NotFound if `source` is neither; OutOfRange outside either extent.
  Status LandStaleBytes(const std::string& source, std::uint64_t source_offset, const std::string& path,
                        std::uint64_t offset, std::uint64_t length);

  // ---- Test helpers (work while dead; not counted) ----

  // The bytes a read would see now (durable plus unsynced writes).
  Result<std::string> ReadFileForTest(const std::string& path) const;
  // The bytes every crash keeps.
  Result<std::string> ReadDurableForTest(const std::string& path) const;
  // Creates or replaces `path` with `bytes`, durably: content and name
  // survive any crash. The parent directory must exist.
  Status WriteFileForTest(const std::string& path, std::string_view bytes);
  // The value FreeSpace reports (default 1 TiB).
  void SetFreeSpace(std::uint64_t bytes);

 private:
  class WritableHandle;
  class ReadableHandle;
  class Lock;

  // A name in a directory: a file, or (file == nullptr) a subdirectory.
  struct Entry {
    std::shared_ptr<SimFile> file;
  };
  struct Dir {
    bool mount = false;                    // parent is not simulated: never lost
    std::map<std::string, Entry> entries;  // what lookups see (sorted: ListDir)
    std::map<std::string, Entry> durable;  // what every crash keeps
  };
  // One unsynced entry change. The two halves of a rename share a group and
  // survive or vanish together.
  struct DirChange {
    std::string dir;
    std::string name;
    std::optional<Entry> entry;  // nullopt: the name was removed
    std::uint64_t group;
  };

  // Fails while dead; for a mutating call, counts it and fires the crash
  // point.
  Status BeginOp(bool mutating) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // As BeginOp, and fails for a file opened before the last Crash().
  Status BeginFileOp(std::uint64_t generation, bool mutating) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Dir* FindDir(const std::string& dir) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether some directory above `path` is simulated: then `path` is inside
  // the simulation and must exist as a simulated directory to be used.
  bool HasSimulatedAncestor(const std::string& path) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Result<std::shared_ptr<SimFile>> FindFile(const std::string& path) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets or (entry == nullopt) removes `name` in `dir` and logs the change.
  void SetEntry(const std::string& dir, const std::string& name, std::optional<Entry> entry,
                std::uint64_t group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Overwrites durable bytes [offset, offset + bytes.size()) of `path`
  // (damage helpers); OutOfRange past the durable size.
  Status ReplaceDurable(const std::string& path, std::uint64_t offset, std::span<const std::byte> bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Crash steps (sim_crash.cc).
  std::vector<bool> SurvivingDirChanges(CrashPolicy policy, std::uint64_t seed) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CrashDirectories(CrashPolicy policy, std::uint64_t seed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PruneUnreachableDirs() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CrashFiles(CrashPolicy policy, std::uint64_t seed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable base::Mutex mu_;
  std::map<std::string, Dir> dirs_ ABSL_GUARDED_BY(mu_);  // by normalized path
  std::vector<DirChange> dir_log_ ABSL_GUARDED_BY(mu_);   // unsynced, issue order
  // path -> the exclusive holder's token, or kSharedHolders (top bit) plus
  // the number of shared holders (sim_file_system.cc).
  std::map<std::string, std::uint64_t> locks_ ABSL_GUARDED_BY(mu_);
  // Removed files' durable bytes at removal, by path (the latest removal of
  // a path): the stale space LandStaleBytes can draw from.
  std::map<std::string, std::vector<std::byte>> removed_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_file_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::uint64_t next_group_ ABSL_GUARDED_BY(mu_) = 1;
  std::uint64_t next_lock_token_ ABSL_GUARDED_BY(mu_) = 1;
  std::uint64_t op_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t crash_at_ ABSL_GUARDED_BY(mu_) = 0;  // 0: disarmed
  bool dead_ ABSL_GUARDED_BY(mu_) = false;
  std::uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // bumped by Crash()
  std::uint64_t free_space_ ABSL_GUARDED_BY(mu_) = std::uint64_t{1} << 40;
};

}  // namespace quiver::env

#endif  // QUIVER_ENV_SIM_FILE_SYSTEM_H_
