// FaultFileSystem: wraps any FileSystem and makes chosen operations fail,
// for SQLite-style I/O-error loops (RELIABILITY.md 3.4).
//
// A FaultSpec says which kinds of operation are counted (writes, syncs,
// renames, ...; optionally only on paths containing a substring), which of
// them fail (the N-th once, every one from the N-th on, or each with
// probability 1/K from a seed) and how (EIO, ENOSPC, or a short write that
// passes part of the data to the wrapped file and then reports an error).
//
// It also checks the fsync rule (never retry a failed fsync): it counts, per
// path, the Sync calls made after that path's first failed Sync; tests
// assert SyncsAfterFailedSync(path) == 0. With
// FaultSpec::fsync_failure_drops_unsynced and a SimFileSystem underneath, a
// failed Sync also drops the file's unsynced writes the way Linux does
// (still readable, never made durable by a later Sync, lost in a crash), so
// an engine that retries and trusts the second Sync loses acknowledged data
// in the crash test.
//
// Example (the loop of 3.4):
//   for (std::uint64_t n = 1;; ++n) {
//     SimFileSystem sim;  FaultFileSystem fs(&sim);
//     fs.SetFault({.ops = FaultOp::kWrite | FaultOp::kSync, .at = n});
//     RunWorkload(&fs);                   // must fail cleanly or finish
//     if (fs.faults_injected() == 0) break;  // the workload has fewer ops
//     EXPECT_EQ(fs.TotalSyncsAfterFailedSync(), 0u);
//   }
//
// Thread safety: all methods are thread-safe. The wrapped FileSystem must
// outlive this one, and this one every file it returned.
#ifndef QUIVER_ENV_FAULT_FILE_SYSTEM_H_
#define QUIVER_ENV_FAULT_FILE_SYSTEM_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "env/file_system.h"
#include "env/random.h"
#include "quiver/status.h"

namespace quiver::env {

// Kinds of operation a FaultSpec counts; a bit set (combine with |).
enum class FaultOp : std::uint32_t {
  kNone = 0,
  kWrite = 1u << 0,       // WritableFile::Append and WriteAt
  kSync = 1u << 1,        // WritableFile::Sync
  kSyncDir = 1u << 2,     // FileSystem::SyncDir
  kRename = 1u << 3,      // FileSystem::Rename (either path may match the filter)
  kTruncate = 1u << 4,    // WritableFile::Truncate
  kAllocate = 1u << 5,    // WritableFile::Allocate
  kRead = 1u << 6,        // ReadableFile::ReadAt (Size is never failed)
  kOpen = 1u << 7,        // FileSystem::OpenWritable and OpenReadable
  kRemove = 1u << 8,      // FileSystem::Remove
  kList = 1u << 9,        // FileSystem::ListDir and Exists
  kCreateDir = 1u << 10,  // FileSystem::CreateDir
  kWriteback = 1u << 11,  // WritableFile::StartWriteback and WaitWriteback
  kAll = (1u << 12) - 1,
};

constexpr FaultOp operator|(FaultOp a, FaultOp b) {
  return static_cast<FaultOp>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
// Whether the set `set` includes `op`.
constexpr bool Includes(FaultOp set, FaultOp op) {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(op)) != 0;
}

// How an injected fault fails the operation.
enum class FaultKind {
  kEio,         // IOError; nothing is done
  kEnospc,      // ResourceExhausted ("no space left on device"); nothing is done
  kShortWrite,  // writes: the first half of the data reaches the wrapped file,
                // then IOError; other operations: as kEio
};

// Which counted operations fail.
enum class FaultMode {
  kOnce,        // only the `at`-th
  kPersistent,  // the `at`-th and every later one
  kRandom,      // each with probability 1/`one_in`, drawn from `seed`
};

struct FaultSpec {
  // Which operations are counted (and may fail). Default: all.
  FaultOp ops = FaultOp::kAll;
  FaultMode mode = FaultMode::kOnce;
  FaultKind kind = FaultKind::kEio;
  // kOnce / kPersistent: the number (from 1) of the counted operation that
  // fails first. 0 never fails.
  std::uint64_t at = 1;
  // kRandom: the inverse probability; 0 never fails.
  std::uint64_t one_in = 0;
  // kRandom: the seed of the choices.
  std::uint64_t seed = 0;
  // If non-empty, only operations on a path containing this are counted
  // (e.g. "wal-" or ".qvc").
  std::string path_contains = {};
  // Linux fsync semantics: an injected Sync failure on a file of a wrapped
  // SimFileSystem drops that file's unsynced writes (SimFileSystem::
  // DropUnsynced). Ignored for other wrapped file systems.
  bool fsync_failure_drops_unsynced = false;
};

class FaultFileSystem final : public FileSystem {
 public:
  // `base` is not owned and must outlive this object. No fault is armed.
  explicit FaultFileSystem(FileSystem* base);

  // Arms `spec`, replacing any earlier one, and resets ops_seen() and
  // faults_injected() to 0.
  void SetFault(FaultSpec spec);
  // Disarms: every operation passes through (still counted in total_ops()).
  void ClearFault();
  // Sleeps `delay` before every Sync and SyncDir (a slow disk, for load
  // tests). Default zero.
  void SetSyncDelay(std::chrono::microseconds delay);

  // Operations of any kind that went through this file system.
  std::uint64_t total_ops() const;
  // Operations the armed spec counted since SetFault.
  std::uint64_t ops_seen() const;
  // Faults injected since SetFault.
  std::uint64_t faults_injected() const;
  // Sync calls on `path` after its first failed Sync (injected or reported
  // by the wrapped file system); 0 for a path whose Sync never failed.
  std::uint64_t SyncsAfterFailedSync(const std::string& path) const;
  // The sum of SyncsAfterFailedSync over every path.
  std::uint64_t TotalSyncsAfterFailedSync() const;
  // Forgets which paths had a failed Sync (e.g. for a simulated restart).
  void ResetSyncTracking();

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

 private:
  class Writable;
  class Readable;

  struct SyncRecord {
    bool failed = false;
    std::uint64_t syncs_after_failure = 0;
  };

  // Counts the operation and returns the fault to inject, if any.
  std::optional<FaultKind> Decide(FaultOp op, std::string_view path, std::string_view other_path = {});
  // The error an injected fault of `kind` reports for `what` on `path`.
  static Status InjectedError(FaultKind kind, std::string_view what, std::string_view path);
  void SleepBeforeSync() const;
  // Sync bookkeeping: counts a Sync on `path` that follows a failed one.
  void NoteSync(const std::string& path);
  // Records a failed Sync; drops the unsynced writes if asked to and able.
  void NoteFailedSync(const std::string& path, bool injected);

  FileSystem* const base_;
  mutable base::Mutex mu_;
  std::optional<FaultSpec> spec_ ABSL_GUARDED_BY(mu_);
  Rng rng_ ABSL_GUARDED_BY(mu_){0};
  std::chrono::microseconds sync_delay_ ABSL_GUARDED_BY(mu_){0};
  std::uint64_t total_ops_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t ops_seen_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t faults_injected_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, SyncRecord> syncs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace quiver::env

#endif  // QUIVER_ENV_FAULT_FILE_SYSTEM_H_
