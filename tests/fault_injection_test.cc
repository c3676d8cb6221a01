// I/O-error injection (RELIABILITY.md 3.4) and checkpoints concurrent with
// writers and readers (3.8), all on the in-memory SimFileSystem.
//
// The loop (IoErrorLoopOverEveryOperation): for each workload (a commit
// stream that rotates WAL segments, explicit checkpoints between commits,
// recovery of an existing directory), each error kind (EIO, ENOSPC, short
// write) and each mode (the N-th counted operation fails once / every one
// from the N-th on), run the workload with the N-th file-system operation
// failing, for N = 1, 2, ... until a run finishes with no fault injected. A
// failed Sync also drops the file's unsynced bytes (Linux), so a retried
// fsync shows up as lost data. After every run the graph must have kept the
// contract of graph_impl.h: no Write acknowledged for a group whose WAL
// append or sync failed; such a failure poisons the graph (DurabilityUnknown,
// then Poisoned); published snapshots keep reading; a failed fsync is never
// retried; a failed Open returns the error; a failed checkpoint neither
// poisons nor loses anything; and the directory reopens (as it is, and after
// a power cut that drops every unsynced byte) to a state that holds every
// acknowledged sequence and equals the reference state at its own sequence.
// "crashes/UB" in the report counts runs that did not return; a crash or a
// sanitizer report aborts the binary, so the line is only printed when it is 0.
//
// The stack under test: GraphImpl -> AuditFileSystem -> FaultFileSystem ->
// SimFileSystem. AuditFileSystem (below) sees every status the engine sees:
// it records which thread saw each failure (the writer thread owns the WAL;
// the test thread runs Open, Checkpoint and Close, and the loops start no
// background checkpoints) and counts fsync retries per file handle.
//
// Then one test per named failure, regression tests for the background
// checkpoint trigger, and CheckpointConcurrentWithWritersAndReaders, which is
// meant to run under TSan as well.
//
// Environment: QUIVER_FAULT_MAX_N caps N in every loop (default: no cap);
// QUIVER_CONCURRENT_COMMITS sets the commits per producer of the concurrency
// test (default 150).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "checkpoint/checkpoint_format.h"
#include "durable_workload.h"
#include "env/fault_file_system.h"
#include "env/file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_environment.h"
#include "test_util.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

using env::FaultFileSystem;
using env::FaultKind;
using env::FaultMode;
using env::FaultOp;
using env::FaultSpec;
using env::SimFileSystem;
using test_util::Dump;
using test_util::EnvOr;

// A simulated path (SimFileSystem treats a directory with no simulated
// parent as a mount point).
constexpr char kDir[] = "db";

using test_util::ApplyGroup;
using test_util::WorkloadBatch;

constexpr int kReferenceGroups = 96;

// states[m]: Dump of a volatile graph after groups 1..m (the prefix oracle).
const std::vector<std::string>& ReferenceStates() {
  static const std::vector<std::string> states = [] {
    std::vector<std::string> out;
    auto g = Graph::OpenInMemory().value();
    out.push_back(Dump(g->GetSnapshot()));
    for (int k = 1; k <= kReferenceGroups; ++k) {
      Result<CommitInfo> r = ApplyGroup(*g, k);
      if (!r.ok() || r->sequence != static_cast<SequenceNumber>(k)) std::abort();
      out.push_back(Dump(g->GetSnapshot()));
    }
    return out;
  }();
  return states;
}

// Whether `s` is exactly the reference state at its own sequence.
bool MatchesReference(const Snapshot& s) {
  const auto& states = ReferenceStates();
  return s.sequence() < states.size() && Dump(s) == states[s.sequence()];
}

// ---------------------------------------------------------------------------
// AuditFileSystem: records failures and fsync retries as the engine sees them.

class AuditFileSystem final : public env::FileSystem {
 public:
  // `base` must outlive this object. The constructing thread is "the test
  // thread": failures seen on any other thread are background failures (the
  // writer thread's WAL operations, when no background checkpoint runs).
  explicit AuditFileSystem(env::FileSystem* base) : base_(base), test_thread_(std::this_thread::get_id()) {}

  // Failed operations of any kind seen by the engine.
  std::uint64_t failures() const {
    absl::MutexLock lock(&mu_);
    return failures_;
  }
  // Of those, the ones seen on a thread other than the test thread.
  std::uint64_t background_failures() const {
    absl::MutexLock lock(&mu_);
    return background_failures_;
  }
  // Sync calls on a file handle after a Sync of that handle failed, or on a
  // handle opened without truncation (kCreateOrOpen) for a path whose Sync
  // failed earlier in this process. A file recreated by kTruncate or
  // kCreateNew holds only new writes, so syncing it is not a retry.
  std::uint64_t sync_retries() const {
    absl::MutexLock lock(&mu_);
    return sync_retries_;
  }
  // Failed SyncDir calls.
  std::uint64_t dir_sync_failures() const {
    absl::MutexLock lock(&mu_);
    return failed_dir_syncs_;
  }
  // SyncDir calls on a directory whose SyncDir failed before (informational:
  // the contract forbids retrying a failed file fsync; a later directory
  // fsync for a new entry is a different question).
  std::uint64_t dir_syncs_after_failure() const {
    absl::MutexLock lock(&mu_);
    return dir_syncs_after_failure_;
  }
  // "op path: status" of every failure, one per line.
  std::string failure_log() const {
    absl::MutexLock lock(&mu_);
    return log_;
  }

  Result<std::unique_ptr<env::WritableFile>> OpenWritable(const std::string& path,
                                                          env::OpenMode mode) override {
    auto f = base_->OpenWritable(path, mode);
    Record(f.status(), "open-writable", path);
    if (!f.ok()) return f.status();
    bool inherited = false;
    {
      absl::MutexLock lock(&mu_);
      if (mode == env::OpenMode::kCreateOrOpen) {
        inherited =
            std::find(failed_sync_paths_.begin(), failed_sync_paths_.end(), path) != failed_sync_paths_.end();
      } else {
        std::erase(failed_sync_paths_, path);
      }
    }
    return std::unique_ptr<env::WritableFile>(
        std::make_unique<Writable>(this, std::move(*f), path, inherited));
  }
  Result<std::unique_ptr<env::ReadableFile>> OpenReadable(const std::string& path) override {
    auto f = base_->OpenReadable(path);
    Record(f.status(), "open-readable", path);
    if (!f.ok()) return f.status();
    return std::unique_ptr<env::ReadableFile>(std::make_unique<Readable>(this, std::move(*f), path));
  }
  // After a rename `to` is the file that was `from` (recovery rewrites a
  // segment as a synced copy renamed over it): it takes `from`'s sync record.
  Status Rename(const std::string& from, const std::string& to) override {
    Status s = base_->Rename(from, to);
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      const bool from_failed =
          std::find(failed_sync_paths_.begin(), failed_sync_paths_.end(), from) != failed_sync_paths_.end();
      std::erase(failed_sync_paths_, to);
      std::erase(failed_sync_paths_, from);
      if (from_failed) failed_sync_paths_.push_back(to);
    }
    return Note(std::move(s), "rename", from);
  }
  Status Remove(const std::string& path) override { return Note(base_->Remove(path), "remove", path); }
  Status SyncDir(const std::string& dir) override {
    {
      absl::MutexLock lock(&mu_);
      if (failed_dir_syncs_ > 0) ++dir_syncs_after_failure_;
    }
    Status s = base_->SyncDir(dir);
    if (!s.ok()) {
      absl::MutexLock lock(&mu_);
      ++failed_dir_syncs_;
    }
    return Note(std::move(s), "sync-dir", dir);
  }
  Status CreateDir(const std::string& dir) override { return Note(base_->CreateDir(dir), "create-dir", dir); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    auto r = base_->ListDir(dir);
    Record(r.status(), "list", dir);
    return r;
  }
  Result<bool> Exists(const std::string& path) override {
    auto r = base_->Exists(path);
    Record(r.status(), "exists", path);
    return r;
  }
  Result<std::unique_ptr<env::FileLock>> LockFile(const std::string& path, env::LockMode mode) override {
    auto r = base_->LockFile(path, mode);
    Record(r.status(), "lock", path);
    return r;
  }
  Result<std::string> RealPath(const std::string& path) override {
    auto r = base_->RealPath(path);
    Record(r.status(), "realpath", path);
    return r;
  }
  Result<std::uint64_t> FreeSpace(const std::string& dir) override {
    auto r = base_->FreeSpace(dir);
    Record(r.status(), "free-space", dir);
    return r;
  }

 private:
  class Writable final : public env::WritableFile {
   public:
    Writable(AuditFileSystem* fs, std::unique_ptr<env::WritableFile> base, std::string path, bool sync_failed)
        : fs_(fs), base_(std::move(base)), path_(std::move(path)), sync_failed_(sync_failed) {}
    Status Append(std::span<const std::byte> data) override {
      return fs_->Note(base_->Append(data), "append", path_);
    }
    Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) override {
      return fs_->Note(base_->WriteAt(offset, data), "write-at", path_);
    }
    Status Sync() override {
      if (sync_failed_) fs_->NoteSyncRetry();
      Status s = base_->Sync();
      if (!s.ok()) {
        sync_failed_ = true;
        fs_->NoteFailedSync(path_);
      }
      return fs_->Note(std::move(s), "sync", path_);
    }
    Status Truncate(std::uint64_t size) override {
      return fs_->Note(base_->Truncate(size), "truncate", path_);
    }
    // No room for a reservation is not a failure the engine must act on:
    // the WAL writer appends without one (wal_writer.h).
    Status Allocate(std::uint64_t offset, std::uint64_t length) override {
      Status s = base_->Allocate(offset, length);
      if (s.code() == StatusCode::kResourceExhausted) return s;
      return fs_->Note(std::move(s), "allocate", path_);
    }
    // Nor for the zeros the WAL writer reserves room with (wal_writer.h):
    // it stops zero-filling the segment and appends as without.
    Status ZeroFill(std::uint64_t offset, std::uint64_t length) override {
      Status s = base_->ZeroFill(offset, length);
      if (s.code() == StatusCode::kResourceExhausted) return s;
      return fs_->Note(std::move(s), "zero-fill", path_);
    }
    Status StartWriteback(std::uint64_t offset, std::uint64_t length) override {
      return fs_->Note(base_->StartWriteback(offset, length), "start-writeback", path_);
    }
    Status WaitWriteback(std::uint64_t offset, std::uint64_t length) override {
      return fs_->Note(base_->WaitWriteback(offset, length), "wait-writeback", path_);
    }
    Status Close() override { return fs_->Note(base_->Close(), "close", path_); }
    std::uint64_t Size() const override { return base_->Size(); }

   private:
    AuditFileSystem* const fs_;
    const std::unique_ptr<env::WritableFile> base_;
    const std::string path_;
    bool sync_failed_;
  };

  class Readable final : public env::ReadableFile {
   public:
    Readable(AuditFileSystem* fs, std::unique_ptr<env::ReadableFile> base, std::string path)
        : fs_(fs), base_(std::move(base)), path_(std::move(path)) {}
    Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> buf) const override {
      auto r = base_->ReadAt(offset, buf);
      fs_->Record(r.status(), "read", path_);
      return r;
    }
    Result<std::uint64_t> Size() const override {
      auto r = base_->Size();
      fs_->Record(r.status(), "size", path_);
      return r;
    }

   private:
    AuditFileSystem* const fs_;
    const std::unique_ptr<env::ReadableFile> base_;
    const std::string path_;
  };

  Status Note(Status s, std::string_view op, const std::string& path) {
    Record(s, op, path);
    return s;
  }
  void Record(const Status& s, std::string_view op, const std::string& path) {
    // NotFound is an answer, not a failure: Open lists a directory that
    // may not exist yet and probes optional files. Faults are never
    // injected as NotFound.
    if (s.ok() || s.code() == StatusCode::kNotFound) return;
    absl::MutexLock lock(&mu_);
    ++failures_;
    bool background = std::this_thread::get_id() != test_thread_;
    if (background) ++background_failures_;
    log_ += std::string(op) + " " + path + (background ? " [background]" : "") + ": " + s.ToString() + "\n";
  }
  void NoteSyncRetry() {
    absl::MutexLock lock(&mu_);
    ++sync_retries_;
  }
  void NoteFailedSync(const std::string& path) {
    absl::MutexLock lock(&mu_);
    failed_sync_paths_.push_back(path);
  }

  env::FileSystem* const base_;
  const std::thread::id test_thread_;
  mutable absl::Mutex mu_;
  std::uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t background_failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t sync_retries_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t failed_dir_syncs_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t dir_syncs_after_failure_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> failed_sync_paths_ ABSL_GUARDED_BY(mu_);
  std::string log_ ABSL_GUARDED_BY(mu_);
};

// ---------------------------------------------------------------------------
// Helpers for the named cases.

// `segment_bytes` is the size of a format version 2 segment, whose records
// of this file's workloads took about 128 bytes each: a version 3 segment
// (the header's page, then a 4 KiB page per group) of as many groups is
// used, so that rotations come after as many groups as they were written
// for.
Options SmallSegments(std::uint64_t segment_bytes = 4096) {
  Options o;
  o.durable.wal_segment_bytes = wal::kWalPageBytes * (1 + segment_bytes / 128);
  o.durable.checkpoint_wal_bytes = 0;  // checkpoints only when a test asks
  o.writer.spin_microseconds = 0;
  return o;
}

std::unique_ptr<Graph> OpenOrDie(const Options& o, env::FileSystem* fs) {
  auto g = GraphImpl::OpenDurable(o, kDir, fs);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : nullptr;
}

// Writes groups first..last; returns how many were acknowledged in a row.
int WriteGroups(Graph& g, int first, int last) {
  for (int k = first; k <= last; ++k) {
    Result<CommitInfo> r = ApplyGroup(g, k);
    EXPECT_TRUE(r.ok()) << "group " << k << ": " << r.status().ToString();
    if (!r.ok()) return k - first;
    EXPECT_EQ(r->sequence, static_cast<SequenceNumber>(k));
  }
  return last - first + 1;
}

// Writes groups after `last` (up to the reference's end) until `done()`,
// then waits up to two seconds more for it; every write must succeed.
// Returns the last sequence written.
SequenceNumber WriteUntil(Graph& g, SequenceNumber last, const std::function<bool()>& done) {
  while (!done() && last + 1 < kReferenceGroups) {
    Result<CommitInfo> r = ApplyGroup(g, static_cast<int>(last + 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return last;
    last = r->sequence;
  }
  // A background checkpoint runs on threads below the caller's priority
  // (Options::background_nice): on a loaded machine, such as CI running
  // sanitizer tests side by side, it may take seconds to get a core. The
  // wait ends as soon as `done` holds; the bound only stops a broken build.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return last;
}

std::vector<std::string> Names(SimFileSystem& fs, std::string_view prefix, std::string_view suffix = "") {
  std::vector<std::string> out;
  auto names = fs.ListDir(kDir);
  if (!names.ok()) return out;
  for (const std::string& n : *names) {
    if (n.rfind(prefix, 0) != 0) continue;
    if (!suffix.empty() &&
        (n.size() < suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix)))
      continue;
    out.push_back(n);
  }
  return out;
}

std::string LastSegmentPath(SimFileSystem& fs) {
  std::vector<std::string> wal = Names(fs, "wal-", ".log");
  return wal.empty() ? std::string() : env::JoinPath(kDir, wal.back());
}

// Every file of the directory with its current and durable bytes.
std::string DiskImage(SimFileSystem& fs) {
  std::string out;
  for (const std::string& n : Names(fs, "")) {
    std::string path = env::JoinPath(kDir, n);
    auto now = fs.ReadFileForTest(path);
    auto durable = fs.ReadDurableForTest(path);
    out += n + " " + std::to_string(now.ok() ? now->size() : 0) + " " + (now.ok() ? *now : "?") + " | " +
           (durable.ok() ? *durable : "?") + "\n";
  }
  return out;
}

// Reopens `fs` and checks the recovered state: at least `acked`, at most
// `attempted`, and equal to the reference at its sequence. Returns it.
SequenceNumber ReopenAndCheck(SimFileSystem& fs, const Options& o, SequenceNumber acked,
                              SequenceNumber attempted) {
  auto g = GraphImpl::OpenDurable(o, kDir, &fs);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return 0;
  Snapshot s = (*g)->GetSnapshot();
  EXPECT_GE(s.sequence(), acked);
  EXPECT_LE(s.sequence(), attempted);
  EXPECT_TRUE(MatchesReference(s)) << "recovered state differs from the reference at sequence "
                                   << s.sequence();
  return s.sequence();
}

// ---------------------------------------------------------------------------
// 1. The I/O-error loop.

struct FaultWorkload {
  std::string name;
  Options options;
  int first_group = 1;  // the first group the workload writes
  int last_group = 0;
  int checkpoint_every = 0;  // explicit Checkpoint() after every this many groups; 0: none
  std::function<std::unique_ptr<SimFileSystem>()> make_disk;  // the directory before the run
};

// What the loops count (the report line) and what they saw happen.
struct Tally {
  std::uint64_t clean_ops = 0;  // T: counted operations of a run without faults
  std::uint64_t runs = 0;
  std::uint64_t runs_finished = 0;
  std::uint64_t acks_after_failed_fsync = 0;
  std::uint64_t fsync_retries = 0;
  std::uint64_t inconsistent_reopen = 0;
  std::uint64_t contract_violations = 0;  // poison, snapshot, open and status rules
  std::uint64_t poisoned_runs = 0;
  std::uint64_t durability_unknown = 0;
  std::uint64_t open_failures = 0;
  std::uint64_t checkpoint_failures = 0;
  std::uint64_t dir_syncs_after_failure = 0;
  std::uint64_t recovered_unknown_group = 0;  // a DurabilityUnknown group came back (allowed)

  void Add(const Tally& o) {
    clean_ops += o.clean_ops;
    runs += o.runs;
    runs_finished += o.runs_finished;
    acks_after_failed_fsync += o.acks_after_failed_fsync;
    fsync_retries += o.fsync_retries;
    inconsistent_reopen += o.inconsistent_reopen;
    contract_violations += o.contract_violations;
    poisoned_runs += o.poisoned_runs;
    durability_unknown += o.durability_unknown;
    open_failures += o.open_failures;
    checkpoint_failures += o.checkpoint_failures;
    dir_syncs_after_failure += o.dir_syncs_after_failure;
    recovered_unknown_group += o.recovered_unknown_group;
  }
  std::string ReportLine() const {
    std::ostringstream s;
    s << "fault points: " << clean_ops << " ops x 2 modes x 3 kinds, crashes/UB: " << runs - runs_finished
      << ", acks after failed fsync: " << acks_after_failed_fsync
      << ", fsync retries after error: " << fsync_retries << ", inconsistent reopen: " << inconsistent_reopen;
    return s.str();
  }
  std::string DetailLine() const {
    std::ostringstream s;
    s << "runs: " << runs << ", contract violations: " << contract_violations
      << ", poisoned runs: " << poisoned_runs << ", DurabilityUnknown writes: " << durability_unknown
      << ", failed opens: " << open_failures << ", failed checkpoints: " << checkpoint_failures
      << ", unknown groups recovered: " << recovered_unknown_group
      << ", dir syncs after a failed dir sync (informational): " << dir_syncs_after_failure;
    return s.str();
  }
};

struct RunResult {
  SequenceNumber acked = 0;      // highest acknowledged sequence
  SequenceNumber attempted = 0;  // highest sequence that may be in the log (acked or DurabilityUnknown)
  std::uint64_t ops_seen = 0;
  std::uint64_t faults = 0;
};

// A contract violation: counted, and reported with the run's failure log.
#define QUIVER_VIOLATION(tally, audit, what)                                    \
  do {                                                                          \
    ++(tally)->contract_violations;                                             \
    ADD_FAILURE() << what << "\nfailed operations:\n" << (audit).failure_log(); \
  } while (0)

// After a Write failed on a WAL failure: the graph is poisoned, later writes
// get Poisoned, and snapshots (the one from before and new ones) read the
// last acknowledged state.
void CheckPoisoned(Graph& g, const Snapshot& before, SequenceNumber acked, const AuditFileSystem& audit,
                   Tally* t) {
  ++t->poisoned_runs;
  if (!g.GetDurabilityStats().poisoned) QUIVER_VIOLATION(t, audit, "WAL failure did not poison the graph");
  WriteBatch late;
  late.AddVertex("Late");
  Result<CommitInfo> r = g.Write(std::move(late));
  if (r.ok() || r.status().code() != StatusCode::kPoisoned)
    QUIVER_VIOLATION(t, audit, "write after poisoning: " << r.status().ToString());
  if (before.sequence() != acked || !MatchesReference(before))
    QUIVER_VIOLATION(t, audit, "snapshot taken before the failure changed");
  Snapshot now = g.GetSnapshot();
  if (now.sequence() != acked || !MatchesReference(now))
    QUIVER_VIOLATION(t, audit, "snapshot after the failure is not the last acknowledged state");
}

RunResult RunWorkload(const FaultWorkload& w, SimFileSystem* disk, const FaultSpec& spec, Tally* t) {
  FaultFileSystem fault(disk);
  AuditFileSystem audit(&fault);
  fault.SetFault(spec);
  RunResult out;
  out.acked = out.attempted = static_cast<SequenceNumber>(w.first_group - 1);
  ++t->runs;
  {
    // The audit tells the WAL's failures from the test thread's by thread:
    // every commit goes through the writer thread (no caller commits).
    Options options = w.options;
    options.writer.caller_commits = false;
    auto opened = GraphImpl::OpenDurable(options, kDir, &audit);
    if (!opened.ok()) {
      ++t->open_failures;
      StatusCode code = opened.status().code();
      if (audit.failures() == 0)
        QUIVER_VIOLATION(t, audit, "Open failed with no failed operation: " << opened.status().ToString());
      if (code == StatusCode::kCorruption || code == StatusCode::kInternal)
        QUIVER_VIOLATION(t, audit, "an I/O error during Open was reported as " << opened.status().ToString());
    } else {
      // Only pruning what a kill left behind may fail without failing the
      // Open, and then the failure is reported.
      if (audit.failures() != 0 && (*opened)->GetOpenStats().prune_status.ok())
        QUIVER_VIOLATION(t, audit, "Open succeeded although an operation failed, and reported nothing");
      Graph& g = **opened;
      bool checkpoint_poisoned = false;
      for (int k = w.first_group; k <= w.last_group; ++k) {
        Snapshot before = g.GetSnapshot();
        const std::uint64_t background_before = audit.background_failures();
        Result<CommitInfo> r = ApplyGroup(g, k);
        const bool wal_failed = audit.background_failures() > background_before;
        if (r.ok()) {
          if (wal_failed) {
            ++t->acks_after_failed_fsync;
            ADD_FAILURE() << "group " << k << " acknowledged after its WAL write failed:\n"
                          << audit.failure_log();
          }
          if (r->sequence != static_cast<SequenceNumber>(k))
            QUIVER_VIOLATION(t, audit, "group " << k << " committed as sequence " << r->sequence);
          out.acked = out.attempted = r->sequence;
        } else {
          if (r.status().code() == StatusCode::kDurabilityUnknown && wal_failed) {
            ++t->durability_unknown;
            out.attempted = static_cast<SequenceNumber>(k);
          } else {
            QUIVER_VIOLATION(t, audit,
                             "group " << k << " failed with " << r.status().ToString()
                                      << " (WAL failure seen: " << wal_failed << ")");
          }
          CheckPoisoned(g, before, out.acked, audit, t);
          break;
        }
        if (w.checkpoint_every != 0 && k % w.checkpoint_every == 0) {
          const std::uint64_t dir_sync_failures = audit.dir_sync_failures();
          Status c = g.Checkpoint();
          // RELIABILITY 2.7: a failed directory fsync while publishing a
          // checkpoint (or removing what it covers) poisons; nothing else a
          // checkpoint does may.
          const bool dir_sync_failed = audit.dir_sync_failures() > dir_sync_failures;
          if (dir_sync_failed) checkpoint_poisoned = true;
          DurabilityStats d = g.GetDurabilityStats();
          if (d.poisoned != checkpoint_poisoned)
            QUIVER_VIOLATION(t, audit,
                             "after a checkpoint (" << c.ToString() << "): poisoned=" << d.poisoned
                                                    << " but directory fsync failed=" << dir_sync_failed);
          if (dir_sync_failed && c.ok())
            QUIVER_VIOLATION(t, audit, "a checkpoint whose directory fsync failed returned OK");
          if (!c.ok()) {
            ++t->checkpoint_failures;
            if (d.checkpoint_failures == 0 || d.last_checkpoint_error.ok())
              QUIVER_VIOLATION(t, audit, "a failed checkpoint is missing from the stats");
          }
          if (checkpoint_poisoned) break;
        }
      }
      const bool poisoned = g.GetDurabilityStats().poisoned;
      if (poisoned != (audit.background_failures() > 0 || checkpoint_poisoned))
        QUIVER_VIOLATION(t, audit,
                         "poisoned=" << poisoned << " but WAL failures=" << audit.background_failures());
      g.Close().IgnoreError();  // may fail under a persistent fault; the WAL keeps everything
    }
  }
  t->fsync_retries += audit.sync_retries();
  if (audit.sync_retries() != 0) ADD_FAILURE() << "fsync retried after a failure:\n" << audit.failure_log();
  t->dir_syncs_after_failure += audit.dir_syncs_after_failure();
  out.ops_seen = fault.ops_seen();
  out.faults = fault.faults_injected();
  ++t->runs_finished;
  return out;
}

// Reopens after the run, first as a process restart (a copy of the disk as
// it is), then after a power cut that drops every unsynced byte. Both must
// hold every acknowledged sequence, nothing past the attempted one, equal the
// reference, and accept the next group.
void CheckAfterRun(const FaultWorkload& w, SimFileSystem* disk, const RunResult& r, Tally* t) {
  const auto& states = ReferenceStates();
  std::unique_ptr<SimFileSystem> restart = disk->Clone();
  disk->Crash(env::CrashPolicy::kDropUnsynced, r.attempted);
  for (SimFileSystem* fs : {restart.get(), disk}) {
    const char* how = fs == disk ? "after power loss" : "after restart";
    auto g = GraphImpl::OpenDurable(w.options, kDir, fs);
    if (!g.ok()) {
      ++t->inconsistent_reopen;
      ADD_FAILURE() << "reopen " << how << " failed: " << g.status().ToString();
      continue;
    }
    Snapshot s = (*g)->GetSnapshot();
    const SequenceNumber m = s.sequence();
    if (m < r.acked || m > r.attempted || !MatchesReference(s)) {
      ++t->inconsistent_reopen;
      ADD_FAILURE() << "reopen " << how << ": recovered sequence " << m << ", acknowledged " << r.acked
                    << ", attempted " << r.attempted << ", matches reference: " << MatchesReference(s);
      continue;
    }
    if (m > r.acked) ++t->recovered_unknown_group;
    Result<CommitInfo> next = ApplyGroup(**g, static_cast<int>(m + 1));
    if (!next.ok() || next->sequence != m + 1 || Dump((*g)->GetSnapshot()) != states[m + 1]) {
      ++t->inconsistent_reopen;
      ADD_FAILURE() << "reopen " << how
                    << ": the next write failed or diverged: " << next.status().ToString();
    }
  }
}

const char* KindName(FaultKind k) {
  switch (k) {
    case FaultKind::kEio: return "EIO";
    case FaultKind::kEnospc: return "ENOSPC";
    case FaultKind::kShortWrite: return "short write";
  }
  return "?";
}

Tally RunLoops(const FaultWorkload& w) {
  Tally t;
  const std::uint64_t max_n = EnvOr("QUIVER_FAULT_MAX_N", 0);
  {
    std::unique_ptr<SimFileSystem> disk = w.make_disk();
    Tally clean;
    RunResult r = RunWorkload(w, disk.get(), FaultSpec{.at = 0}, &clean);
    EXPECT_EQ(r.acked, static_cast<SequenceNumber>(w.last_group))
        << w.name << ": the clean run did not finish";
    EXPECT_EQ(clean.contract_violations, 0u);
    t.clean_ops = r.ops_seen;
  }
  for (FaultKind kind : {FaultKind::kEio, FaultKind::kEnospc, FaultKind::kShortWrite}) {
    for (FaultMode mode : {FaultMode::kOnce, FaultMode::kPersistent}) {
      std::uint64_t n = 1;
      for (; max_n == 0 || n <= max_n; ++n) {
        SCOPED_TRACE(w.name + ", " + KindName(kind) + ", " +
                     (mode == FaultMode::kOnce ? "once" : "persistent") + ", fault at op " +
                     std::to_string(n));
        std::unique_ptr<SimFileSystem> disk = w.make_disk();
        // Linux fsync semantics: a failed Sync also drops the file's unsynced
        // bytes, so a retried fsync that "succeeds" shows up as lost data.
        const FaultSpec spec{
            .ops = FaultOp::kAll, .mode = mode, .kind = kind, .at = n, .fsync_failure_drops_unsynced = true};
        RunResult r = RunWorkload(w, disk.get(), spec, &t);
        if (r.faults == 0) break;
        CheckAfterRun(w, disk.get(), r, &t);
      }
      // Determinism: every loop ends one past the clean run's operations.
      if (max_n == 0 || n <= max_n) {
        EXPECT_EQ(n, t.clean_ops + 1) << w.name << " " << KindName(kind);
      }
    }
  }
  if (max_n != 0 && t.clean_ops > max_n) t.clean_ops = max_n;
  return t;
}

// Recovery workload's starting directory: a checkpoint at 6, WAL to 14 over
// several segments, garbage after the last record (a torn tail recovery
// truncates) and a stale checkpoint .tmp file (recovery removes it).
std::unique_ptr<SimFileSystem> MakeRecoveryDisk(const Options& o) {
  auto fs = std::make_unique<SimFileSystem>();
  Options setup = o;
  setup.durable.checkpoint_on_close = false;
  {
    auto g = GraphImpl::OpenDurable(setup, kDir, fs.get()).value();
    for (int k = 1; k <= 14; ++k) {
      if (!ApplyGroup(*g, k).ok()) std::abort();
      if (k == 6 && !g->Checkpoint().ok()) std::abort();
    }
    g->Close().IgnoreError();
  }
  std::string last = LastSegmentPath(*fs);
  std::string bytes = fs->ReadFileForTest(last).value();
  bytes += std::string(100, '\xA5');
  if (!fs->WriteFileForTest(last, bytes).ok()) std::abort();
  if (!fs->WriteFileForTest(env::JoinPath(kDir, "checkpoint-00000000000000000013.qck.tmp"),
                            "half a checkpoint")
           .ok())
    std::abort();
  return fs;
}

TEST(FaultInjectionTest, IoErrorLoopOverEveryOperation) {
  ReferenceStates();  // built once, outside the timed loops

  auto empty_disk = [] { return std::make_unique<SimFileSystem>(); };
  FaultWorkload commits{.name = "commit stream with segment rotation",
                        .options = SmallSegments(768),
                        .first_group = 1,
                        .last_group = 24,
                        .checkpoint_every = 0,
                        .make_disk = empty_disk};
  commits.options.durable.checkpoint_on_close = false;

  FaultWorkload checkpoints{.name = "checkpoints between commits",
                            .options = SmallSegments(768),
                            .first_group = 1,
                            .last_group = 20,
                            .checkpoint_every = 5,
                            .make_disk = empty_disk};

  std::shared_ptr<SimFileSystem> recovery_disk = MakeRecoveryDisk(SmallSegments(768));
  FaultWorkload recovery{.name = "recovery of an existing directory",
                         .options = SmallSegments(768),
                         .first_group = 15,
                         .last_group = 18,
                         .checkpoint_every = 0,
                         .make_disk = [recovery_disk] { return recovery_disk->Clone(); }};
  {
    // The starting directory really has a torn tail and WAL to replay.
    auto probe = recovery_disk->Clone();
    auto g = GraphImpl::OpenDurable(recovery.options, kDir, probe.get()).value();
    EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 6u);
    EXPECT_EQ(g->GetOpenStats().wal_batches_replayed, 8u);
    EXPECT_GT(g->GetOpenStats().tail_bytes_truncated, 0u);
  }

  Tally total;
  for (const FaultWorkload* w : {&commits, &checkpoints, &recovery}) {
    auto start = std::chrono::steady_clock::now();
    Tally t = RunLoops(*w);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
                  .count();
    std::cout << "[" << w->name << "] " << t.ReportLine() << "\n  " << t.DetailLine() << " (" << ms
              << " ms)\n";
    total.Add(t);
  }
  std::cout << "[all workloads] " << total.ReportLine() << "\n  " << total.DetailLine() << "\n";
  EXPECT_EQ(total.runs, total.runs_finished);
  EXPECT_EQ(total.acks_after_failed_fsync, 0u);
  EXPECT_EQ(total.fsync_retries, 0u);
  EXPECT_EQ(total.inconsistent_reopen, 0u);
  EXPECT_EQ(total.contract_violations, 0u);
  EXPECT_GT(total.poisoned_runs, 0u);
  EXPECT_GT(total.checkpoint_failures, 0u);
  EXPECT_GT(total.open_failures, 0u);
}

// ---------------------------------------------------------------------------
// 2. Named cases.

FaultSpec WalFault(FaultOp ops, FaultMode mode, FaultKind kind) {
  return FaultSpec{.ops = ops, .mode = mode, .kind = kind, .at = 1, .path_contains = "wal-"};
}

TEST(FaultInjectionTest, FsyncEioPoisonsAndNeverRetries) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments();
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 5), 5);
  const std::string wal = LastSegmentPath(sim);
  const std::uint64_t syncs_before = g->GetDurabilityStats().wal_syncs;
  Snapshot before = g->GetSnapshot();

  // kOnce: the Sync after the failed one would succeed, so only the count
  // shows a retry.
  fault.SetFault(WalFault(FaultOp::kSync, FaultMode::kOnce, FaultKind::kEio));
  Result<CommitInfo> r = ApplyGroup(*g, 6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDurabilityUnknown) << r.status().ToString();
  EXPECT_EQ(fault.faults_injected(), 1u);
  EXPECT_TRUE(g->GetDurabilityStats().poisoned);
  for (int k = 6; k <= 10; ++k) {
    Result<CommitInfo> later = ApplyGroup(*g, k);
    EXPECT_EQ(later.status().code(), StatusCode::kPoisoned) << later.status().ToString();
  }
  EXPECT_EQ(g->WriteAsync(WorkloadBatch(11, 1, 1)).get().status().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, syncs_before);
  EXPECT_EQ(before.sequence(), 5u);
  EXPECT_TRUE(MatchesReference(before));
  EXPECT_EQ(g->GetSnapshot().sequence(), 5u);
  g->Close().IgnoreError();
  g.reset();
  EXPECT_EQ(fault.SyncsAfterFailedSync(wal), 0u) << wal;
  EXPECT_EQ(fault.TotalSyncsAfterFailedSync(), 0u);

  // Restart: the unsynced group may come back (DurabilityUnknown); power
  // loss: it is gone. Either way nothing acknowledged is missing.
  std::unique_ptr<SimFileSystem> restart = sim.Clone();
  ReopenAndCheck(*restart, o, 5, 6);
  sim.Crash(env::CrashPolicy::kDropUnsynced, 1);
  EXPECT_EQ(ReopenAndCheck(sim, o, 5, 5), 5u);
}

TEST(FaultInjectionTest, FsyncEioLinuxSemantics) {
  // The whole small segment zero-filled at the first group, so the fault
  // hits a group's fsync, never a fill's.
  test_util::ScopedEngineWalFillStep engine_step;
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments();
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 8), 8);
  const std::string wal = LastSegmentPath(sim);
  const std::string durable_before = sim.ReadDurableForTest(wal).value();

  FaultSpec spec = WalFault(FaultOp::kSync, FaultMode::kOnce, FaultKind::kEio);
  spec.fsync_failure_drops_unsynced = true;
  fault.SetFault(spec);
  // Several batches in flight: the failing group's get DurabilityUnknown,
  // everything after it Poisoned; none is acknowledged.
  std::vector<std::future<Result<CommitInfo>>> futures;
  for (int i = 0; i < 8; ++i) {
    WriteBatch b;
    b.AddVertex("Async", {{"i", i}});
    futures.push_back(g->WriteAsync(std::move(b)));
  }
  int unknown = 0, poisoned = 0;
  for (auto& f : futures) {
    Result<CommitInfo> r = f.get();
    EXPECT_FALSE(r.ok()) << "acknowledged sequence " << r->sequence << " after a failed fsync";
    if (r.status().code() == StatusCode::kDurabilityUnknown) {
      ++unknown;
    } else if (r.status().code() == StatusCode::kPoisoned) {
      ++poisoned;
    } else {
      ADD_FAILURE() << r.status().ToString();
    }
  }
  EXPECT_GE(unknown, 1);
  EXPECT_EQ(unknown + poisoned, 8);
  EXPECT_EQ(fault.faults_injected(), 1u);
  EXPECT_EQ(g->GetSnapshot().sequence(), 8u);
  // The failed fsync dropped the group's bytes: still readable, never durable.
  EXPECT_EQ(sim.ReadDurableForTest(wal).value(), durable_before);
  // (Written into the segment's zeroed end: the file's size need not grow.)
  EXPECT_NE(sim.ReadFileForTest(wal).value(), durable_before);
  g.reset();
  EXPECT_EQ(fault.TotalSyncsAfterFailedSync(), 0u);

  // The process dies and the power goes: exactly 1..8 come back, and the
  // reopened graph's own syncs work again.
  sim.Crash(env::CrashPolicy::kDropUnsynced, 2);
  fault.ClearFault();
  fault.ResetSyncTracking();
  {
    auto g2 = OpenOrDie(o, &fault);
    ASSERT_NE(g2, nullptr);
    Snapshot s = g2->GetSnapshot();
    EXPECT_EQ(s.sequence(), 8u);
    EXPECT_TRUE(MatchesReference(s));
    ASSERT_EQ(WriteGroups(*g2, 9, 12), 4);
  }
  sim.Crash(env::CrashPolicy::kDropUnsynced, 3);
  EXPECT_EQ(ReopenAndCheck(sim, o, 12, 12), 12u);
}

// After a failed fsync that dropped the group's bytes (Linux), a restart
// without power loss reads those bytes from the page cache and replays the
// DurabilityUnknown group (allowed), then acknowledges new groups on top of
// it. A later fsync cannot make the old bytes durable (Linux marked the
// pages clean), so Open writes the replayed segments again from what it read
// (a synced copy renamed over each): a power cut afterwards keeps the
// replayed group and everything acknowledged after it.
TEST(FaultInjectionTest, FsyncEioLinuxSemanticsRestartThenPowerLoss) {
  test_util::ScopedEngineWalFillStep engine_step;  // as in FsyncEioLinuxSemantics
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments();
  {
    auto g = OpenOrDie(o, &fault);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(WriteGroups(*g, 1, 8), 8);
    FaultSpec spec = WalFault(FaultOp::kSync, FaultMode::kOnce, FaultKind::kEio);
    spec.fsync_failure_drops_unsynced = true;
    fault.SetFault(spec);
    EXPECT_EQ(ApplyGroup(*g, 9).status().code(), StatusCode::kDurabilityUnknown);
  }
  fault.ClearFault();
  SequenceNumber acked = 0;
  {
    auto g = OpenOrDie(o, &fault);  // restart, no power loss: group 9 is back
    ASSERT_NE(g, nullptr);
    const SequenceNumber m = g->GetSnapshot().sequence();
    ASSERT_TRUE(m == 8 || m == 9) << m;
    ASSERT_EQ(WriteGroups(*g, static_cast<int>(m + 1), 12), static_cast<int>(12 - m));
    acked = 12;
    sim.SetCrashAtOperation(sim.operation_count() + 1);  // the process dies here
  }
  sim.Crash(env::CrashPolicy::kDropUnsynced, 12);
  EXPECT_EQ(ReopenAndCheck(sim, o, acked, acked), acked);
}

TEST(FaultInjectionTest, EnospcOnAppendPoisonsWritesReadsContinue) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments();
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 3), 3);
  Snapshot old = g->GetSnapshot();
  ASSERT_EQ(WriteGroups(*g, 4, 6), 3);
  Snapshot before = g->GetSnapshot();

  fault.SetFault(WalFault(FaultOp::kWrite, FaultMode::kPersistent, FaultKind::kEnospc));
  Result<CommitInfo> r = ApplyGroup(*g, 7);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDurabilityUnknown) << r.status().ToString();
  EXPECT_NE(r.status().message().find("no space"), std::string_view::npos) << r.status().ToString();
  for (int k = 7; k <= 9; ++k) EXPECT_EQ(ApplyGroup(*g, k).status().code(), StatusCode::kPoisoned);
  EXPECT_TRUE(g->GetDurabilityStats().poisoned);

  // Reads go on: snapshots from before, new ones, from other threads.
  EXPECT_EQ(old.sequence(), 3u);
  EXPECT_TRUE(MatchesReference(old));
  EXPECT_TRUE(MatchesReference(before));
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        Snapshot s = g->GetSnapshot();
        if (s.sequence() != 6 || !MatchesReference(s)) ++bad;
      }
    });
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  g->Close().IgnoreError();
  g.reset();
  EXPECT_TRUE(MatchesReference(before));  // a snapshot outlives its graph
  EXPECT_EQ(fault.TotalSyncsAfterFailedSync(), 0u);
  sim.Crash(env::CrashPolicy::kDropUnsynced, 4);
  EXPECT_EQ(ReopenAndCheck(sim, o, 6, 6), 6u);
}

TEST(FaultInjectionTest, EnospcOnCheckpointKeepsWalAndAcceptsWrites) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments(1024);
  const FaultSpec no_space{.ops = FaultOp::kWrite,
                           .mode = FaultMode::kPersistent,
                           .kind = FaultKind::kEnospc,
                           .at = 1,
                           .path_contains = "checkpoint-"};
  {
    auto g = OpenOrDie(o, &fault);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(WriteGroups(*g, 1, 10), 10);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(WriteGroups(*g, 11, 20), 10);
    const std::vector<std::string> wal_before = Names(sim, "wal-");
    const std::vector<std::string> checkpoints_before = Names(sim, "checkpoint-");
    ASSERT_EQ(checkpoints_before.size(), 1u);

    fault.SetFault(no_space);
    Status c = g->Checkpoint();
    EXPECT_EQ(c.code(), StatusCode::kResourceExhausted) << c.ToString();
    DurabilityStats d = g->GetDurabilityStats();
    EXPECT_EQ(d.checkpoint_failures, 1u);
    EXPECT_EQ(d.last_checkpoint_error.code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(d.last_checkpoint_sequence, 10u);
    EXPECT_EQ(d.checkpoints_written, 1u);
    EXPECT_FALSE(d.poisoned);
    EXPECT_EQ(Names(sim, "checkpoint-"), checkpoints_before);  // no new checkpoint, no .tmp left
    EXPECT_EQ(Names(sim, "wal-"), wal_before);                 // the WAL is kept

    // Writes go on while the disk stays full for checkpoints.
    EXPECT_EQ(WriteGroups(*g, 21, 30), 10);
    EXPECT_FALSE(g->Checkpoint().ok());
    EXPECT_EQ(g->GetDurabilityStats().checkpoint_failures, 2u);
    EXPECT_FALSE(g->GetDurabilityStats().poisoned);
    EXPECT_EQ(g->Close().code(), StatusCode::kResourceExhausted);  // the close checkpoint fails too
  }
  fault.ClearFault();
  sim.Crash(env::CrashPolicy::kDropUnsynced, 5);
  {
    auto g = OpenOrDie(o, &fault);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 10u);
    EXPECT_EQ(g->GetSnapshot().sequence(), 30u);
    EXPECT_TRUE(MatchesReference(g->GetSnapshot()));
  }

  // Background checkpoints fail the same way: counted, writes unaffected. (A
  // fresh directory: see BackgroundCheckpointsRunAfterReopenWithALongWal.)
  SimFileSystem sim2;
  FaultFileSystem fault2(&sim2);
  Options background = o;
  background.durable.checkpoint_wal_bytes = 2048;
  SequenceNumber last = 0;
  {
    auto g = OpenOrDie(background, &fault2);
    ASSERT_NE(g, nullptr);
    fault2.SetFault(no_space);
    last = WriteUntil(*g, 0, [&] { return g->GetDurabilityStats().checkpoint_failures > 0; });
    DurabilityStats d = g->GetDurabilityStats();
    EXPECT_GE(d.checkpoint_failures, 1u);
    EXPECT_EQ(d.last_checkpoint_error.code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(d.checkpoints_written, 0u);
    EXPECT_FALSE(d.poisoned);
    // No checkpoint was made. (A retry may be writing its .tmp right now,
    // to fail the same way: not a checkpoint.)
    for (const std::string& name : Names(sim2, "checkpoint-")) {
      EXPECT_TRUE(name.ends_with(".tmp")) << name;
    }
    fault2.ClearFault();
    EXPECT_TRUE(g->Checkpoint().ok());
    EXPECT_EQ(g->GetDurabilityStats().last_checkpoint_sequence, last);
  }
  sim2.Crash(env::CrashPolicy::kDropUnsynced, 6);
  EXPECT_EQ(ReopenAndCheck(sim2, background, last, last), last);
}

// Regression: the background trigger fires only when the WAL bytes since the
// last checkpoint cross checkpoint_wal_bytes, and a failed checkpoint does
// not reset that count, so after one failure the count stays above the
// threshold and background checkpoints never run again: the WAL grows
// without bound after a single transient ENOSPC.
TEST(FaultInjectionTest, BackgroundCheckpointsResumeAfterAFailure) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  Options o = SmallSegments(1024);
  o.durable.checkpoint_wal_bytes = 2048;
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  fault.SetFault(FaultSpec{.ops = FaultOp::kWrite,
                           .mode = FaultMode::kOnce,
                           .kind = FaultKind::kEnospc,
                           .at = 1,
                           .path_contains = "checkpoint-"});
  // Write only until the trigger fires, then wait for the failure: writing
  // on while the checkpointer has not yet run (commits on the caller's
  // thread are quick) used up all kReferenceGroups before the failure was
  // seen, and left none to write for the second crossing.
  // (The count starts at the first segment's header page.)
  const std::uint64_t at_open = g->GetDurabilityStats().wal_bytes_since_checkpoint;
  SequenceNumber last = WriteUntil(*g, 0, [&] {
    const DurabilityStats d = g->GetDurabilityStats();
    return d.checkpoint_failures > 0 ||
           d.wal_bytes_since_checkpoint >= at_open + o.durable.checkpoint_wal_bytes;
  });
  WriteUntil(*g, kReferenceGroups, [&] { return g->GetDurabilityStats().checkpoint_failures > 0; });
  ASSERT_EQ(g->GetDurabilityStats().checkpoint_failures, 1u);
  ASSERT_LT(last + 1, static_cast<SequenceNumber>(kReferenceGroups))
      << "no group left for the second crossing";
  // The disk has space again (kOnce): the next crossing of ~2 KiB must start one.
  const std::uint64_t wal_at_failure = g->GetDurabilityStats().wal_bytes;
  last = WriteUntil(*g, last, [&] { return g->GetDurabilityStats().checkpoints_written > 0; });
  DurabilityStats d = g->GetDurabilityStats();
  EXPECT_GE(d.checkpoints_written, 1u) << "no background checkpoint in " << d.wal_bytes - wal_at_failure
                                       << " WAL bytes after one failure (checkpoint_wal_bytes = 2048)";
}

// Regression: a graph reopened with more than checkpoint_wal_bytes of WAL
// since its last checkpoint starts its count above the threshold, so the
// crossing never happens and background checkpoints never run.
TEST(FaultInjectionTest, BackgroundCheckpointsRunAfterReopenWithALongWal) {
  SimFileSystem sim;
  Options o = SmallSegments(1024);
  o.durable.checkpoint_on_close = false;
  {
    auto g = OpenOrDie(o, &sim);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(WriteGroups(*g, 1, 30), 30);  // ~5 KiB of WAL, no checkpoint
  }
  o.durable.checkpoint_wal_bytes = 2048;
  auto g = OpenOrDie(o, &sim);
  ASSERT_NE(g, nullptr);
  WriteUntil(*g, 30, [&] { return g->GetDurabilityStats().checkpoints_written > 0; });
  DurabilityStats d = g->GetDurabilityStats();
  EXPECT_GE(d.checkpoints_written, 1u) << "no background checkpoint in " << d.wal_bytes
                                       << " WAL bytes after reopen (checkpoint_wal_bytes = 2048)";
}

// Regression: Open after a crash with a WAL tail wrote a full checkpoint of
// the replayed state and failed if it could not, so a nearly full disk made
// the graph unopenable. Open now writes the replayed log segments again
// instead (O(tail) time and space) and no checkpoint at all.
TEST(FaultInjectionTest, EnospcOnEveryCheckpointWriteDuringReopenWithATail) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  Options o = SmallSegments(1024);
  o.durable.checkpoint_on_close = false;
  {
    auto g = OpenOrDie(o, &fault);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(WriteGroups(*g, 1, 10), 10);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(WriteGroups(*g, 11, 20), 10);  // the tail: 11..20, in the WAL only
  }
  const std::vector<std::string> checkpoints = Names(sim, "checkpoint-");
  fault.SetFault(FaultSpec{.ops = FaultOp::kWrite | FaultOp::kAllocate,
                           .mode = FaultMode::kPersistent,
                           .kind = FaultKind::kEnospc,
                           .at = 1,
                           .path_contains = "checkpoint-"});
  {
    auto g = OpenOrDie(o, &fault);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 10u);
    EXPECT_EQ(g->GetOpenStats().wal_groups_replayed, 10u);
    EXPECT_GE(g->GetOpenStats().wal_segments_rewritten, 1u);
    EXPECT_EQ(g->GetSnapshot().sequence(), 20u);
    EXPECT_TRUE(MatchesReference(g->GetSnapshot()));
    EXPECT_EQ(WriteGroups(*g, 21, 25), 5);
    EXPECT_TRUE(MatchesReference(g->GetSnapshot()));
    EXPECT_EQ(Names(sim, "checkpoint-"), checkpoints);
  }
  fault.ClearFault();
  sim.Crash(env::CrashPolicy::kDropUnsynced, 7);
  EXPECT_EQ(ReopenAndCheck(sim, o, 25, 25), 25u);
}

// ENOSPC in the middle of a checkpoint, not only at its up-front room
// check: the N-th write (or allocation) of the checkpoint file fails, for
// every N in turn, and from then on every one does (the disk is full for
// checkpoints; the WAL's own writes still succeed). Each time Checkpoint()
// must return ResourceExhausted, leave no *.tmp and no new checkpoint, leave
// every WAL byte as it was, not poison, and the graph must go on: writes
// are acknowledged, the next checkpoint (with room again) succeeds, and a
// reopen after a power cut gives the full state.
TEST(FaultInjectionTest, EnospcAtEachCheckpointWriteAbandonsCleanly) {
  const Options o = SmallSegments(1024);
  std::uint64_t n = 1;
  for (;; ++n) {
    SCOPED_TRACE("ENOSPC from checkpoint write " + std::to_string(n));
    SimFileSystem sim;
    FaultFileSystem fault(&sim);
    {
      auto g = OpenOrDie(o, &fault);
      ASSERT_NE(g, nullptr);
      ASSERT_EQ(WriteGroups(*g, 1, 10), 10);
      ASSERT_TRUE(g->Checkpoint().ok());
      ASSERT_EQ(WriteGroups(*g, 11, 20), 10);
      const std::vector<std::string> checkpoints_before = Names(sim, "checkpoint-");
      const std::vector<std::string> wal_before = Names(sim, "wal-");
      std::vector<std::string> wal_bytes_before;
      for (const std::string& name : wal_before)
        wal_bytes_before.push_back(sim.ReadFileForTest(std::string(kDir) + "/" + name).value());

      fault.SetFault(FaultSpec{.ops = FaultOp::kWrite | FaultOp::kAllocate,
                               .mode = FaultMode::kPersistent,
                               .kind = FaultKind::kEnospc,
                               .at = n,
                               .path_contains = "checkpoint-"});
      const Status c = g->Checkpoint();
      if (fault.faults_injected() == 0) {
        // Past the checkpoint's last write: it succeeded, and the loop is done.
        EXPECT_TRUE(c.ok()) << c.ToString();
        break;
      }
      EXPECT_EQ(c.code(), StatusCode::kResourceExhausted) << c.ToString();
      EXPECT_TRUE(Names(sim, "checkpoint-", ".tmp").empty()) << "a .tmp was left";
      EXPECT_EQ(Names(sim, "checkpoint-"), checkpoints_before);
      ASSERT_EQ(Names(sim, "wal-"), wal_before);
      for (std::size_t i = 0; i < wal_before.size(); ++i)
        EXPECT_EQ(sim.ReadFileForTest(std::string(kDir) + "/" + wal_before[i]).value(), wal_bytes_before[i])
            << wal_before[i] << " changed";
      DurabilityStats d = g->GetDurabilityStats();
      EXPECT_FALSE(d.poisoned);
      EXPECT_EQ(d.last_checkpoint_error.code(), StatusCode::kResourceExhausted);
      EXPECT_EQ(d.last_checkpoint_sequence, 10u);

      // The graph stays writable while the disk is full for checkpoints...
      EXPECT_EQ(WriteGroups(*g, 21, 25), 5);
      EXPECT_TRUE(MatchesReference(g->GetSnapshot()));
      // ...and checkpoints again once there is room.
      fault.ClearFault();
      EXPECT_TRUE(g->Checkpoint().ok());
      EXPECT_EQ(g->GetDurabilityStats().last_checkpoint_sequence, 25u);
      EXPECT_EQ(WriteGroups(*g, 26, 30), 5);
    }
    sim.Crash(env::CrashPolicy::kDropUnsynced, n);
    EXPECT_EQ(ReopenAndCheck(sim, o, 30, 30), 30u);
    if (HasFailure()) break;
  }
  std::cout << "checkpoint ENOSPC at each of " << n - 1 << " writes: abandoned cleanly\n";
  EXPECT_GT(n, 3u) << "the checkpoint made too few writes to fail midway";
}

// A checkpoint never takes the space the WAL needs for its next segment: with
// less than one segment free it is abandoned with ResourceExhausted, and
// writes go on.
TEST(FaultInjectionTest, CheckpointLeavesRoomForTheNextWalSegment) {
  SimFileSystem sim;
  const Options o = SmallSegments(4096);
  auto g = OpenOrDie(o, &sim);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 5), 5);
  sim.SetFreeSpace(4095);
  Status c = g->Checkpoint();
  EXPECT_EQ(c.code(), StatusCode::kResourceExhausted) << c.ToString();
  EXPECT_TRUE(Names(sim, "checkpoint-").empty());
  EXPECT_EQ(g->GetDurabilityStats().checkpoint_failures, 1u);
  EXPECT_EQ(WriteGroups(*g, 6, 10), 5);
  EXPECT_FALSE(g->GetDurabilityStats().poisoned);
  sim.SetFreeSpace(std::uint64_t{1} << 30);
  EXPECT_TRUE(g->Checkpoint().ok());
  EXPECT_EQ(g->GetDurabilityStats().last_checkpoint_sequence, 10u);
}

TEST(FaultInjectionTest, ShortWriteThenCrashRecoversPrefix) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments(1024);
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 12), 12);
  const std::string wal = LastSegmentPath(sim);
  const std::size_t durable_size = sim.ReadDurableForTest(wal).value().size();

  fault.SetFault(WalFault(FaultOp::kWrite, FaultMode::kOnce, FaultKind::kShortWrite));
  Result<CommitInfo> r = ApplyGroup(*g, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDurabilityUnknown) << r.status().ToString();
  EXPECT_TRUE(g->GetDurabilityStats().poisoned);
  EXPECT_EQ(ApplyGroup(*g, 13).status().code(), StatusCode::kPoisoned);
  // Half of the group's append reached the file (written into the
  // segment's zeroed end, so the file's size need not grow).
  EXPECT_NE(sim.ReadFileForTest(wal).value().substr(0, durable_size), sim.ReadDurableForTest(wal).value());
  g.reset();
  fault.ClearFault();

  // The append is the group's page: its record, then its padding record up
  // to the page boundary. Half of it holds the record and the padding
  // record's header; the rest of the padding is zeros, as is the zeroed end
  // it was written over: group 13 is whole in the file. It was answered
  // DurabilityUnknown, which allows that: a plain restart recovers 1..13.
  std::unique_ptr<SimFileSystem> restart = sim.Clone();
  {
    auto g2 = OpenOrDie(o, restart.get());
    ASSERT_NE(g2, nullptr);
    EXPECT_EQ(g2->GetSnapshot().sequence(), 13u);
    EXPECT_TRUE(MatchesReference(g2->GetSnapshot()));
  }
  // A torn half of a record never passes its checks: after a crash, 1..12
  // or 1..13 (each whole), and the log goes on from there.
  for (env::CrashPolicy policy : env::kAllCrashPolicies) {
    SCOPED_TRACE(std::string(env::CrashPolicyName(policy)));
    std::unique_ptr<SimFileSystem> disk = sim.Clone();
    disk->Crash(policy, 7 + static_cast<std::uint64_t>(policy));
    {
      auto g2 = OpenOrDie(o, disk.get());
      ASSERT_NE(g2, nullptr);
      Snapshot s = g2->GetSnapshot();
      EXPECT_TRUE(s.sequence() == 12u || s.sequence() == 13u) << s.sequence();
      EXPECT_TRUE(MatchesReference(s));
      const int next = static_cast<int>(s.sequence()) + 1;
      ASSERT_EQ(WriteGroups(*g2, next, 14), 15 - next);
    }
    disk->Crash(env::CrashPolicy::kDropUnsynced, 8);
    EXPECT_EQ(ReopenAndCheck(*disk, o, 14, 14), 14u);
  }
}

TEST(FaultInjectionTest, DirFsyncFailureOnRotationPoisons) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments(768);
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  const std::size_t segments_before = Names(sim, "wal-").size();
  // No checkpoints run, so the first SyncDir after Open is a rotation's.
  fault.SetFault(
      FaultSpec{.ops = FaultOp::kSyncDir, .mode = FaultMode::kOnce, .kind = FaultKind::kEio, .at = 1});
  int acked = 0;
  Status failure;
  for (int k = 1; k < kReferenceGroups; ++k) {
    Result<CommitInfo> r = ApplyGroup(*g, k);
    if (!r.ok()) {
      failure = r.status();
      break;
    }
    acked = k;
  }
  ASSERT_FALSE(failure.ok()) << "no rotation happened";
  EXPECT_GT(acked, 1);
  EXPECT_EQ(failure.code(), StatusCode::kDurabilityUnknown) << failure.ToString();
  EXPECT_EQ(fault.faults_injected(), 1u);
  EXPECT_TRUE(g->GetDurabilityStats().poisoned);
  EXPECT_EQ(Names(sim, "wal-").size(), segments_before + 1);  // created, name not durable
  EXPECT_EQ(ApplyGroup(*g, acked + 1).status().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->GetSnapshot().sequence(), static_cast<SequenceNumber>(acked));
  g.reset();
  EXPECT_EQ(fault.TotalSyncsAfterFailedSync(), 0u);

  // The group never reached the log: every crash state and a restart
  // recover exactly the acknowledged groups, and the graph goes on.
  const auto seq = static_cast<SequenceNumber>(acked);
  std::unique_ptr<SimFileSystem> restart = sim.Clone();
  EXPECT_EQ(ReopenAndCheck(*restart, o, seq, seq), seq);
  for (env::CrashPolicy policy : env::kAllCrashPolicies) {
    SCOPED_TRACE(std::string(env::CrashPolicyName(policy)));
    std::unique_ptr<SimFileSystem> disk = sim.Clone();
    disk->Crash(policy, 9 + static_cast<std::uint64_t>(policy));
    EXPECT_EQ(ReopenAndCheck(*disk, o, seq, seq), seq);
  }
}

// A segment start that failed after its header was written (the directory
// fsync failed, or the header's fdatasync did) leaves a header-only segment
// whose name or header is not durable. The next Open must not append to it
// before making it durable: commits it acknowledges survive a power cut.
void ReopenedHeaderOnlySegmentCase(bool fail_header_sync) {
  Options o = SmallSegments(4096);
  o.durable.checkpoint_on_close = false;
  // A dry run finds the group whose write starts segment 2.
  int rotating = 0;
  {
    SimFileSystem dry;
    auto g = OpenOrDie(o, &dry);
    ASSERT_NE(g, nullptr);
    const std::uint64_t started = g->GetDurabilityStats().wal_segments_started;
    for (int k = 1; k < kReferenceGroups && rotating == 0; ++k) {
      ASSERT_TRUE(ApplyGroup(*g, k).ok());
      if (g->GetDurabilityStats().wal_segments_started > started) rotating = k;
    }
    ASSERT_GT(rotating, 1);
  }
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, rotating - 1), rotating - 1);
  // The checkpoint covers segment 1, so the reopen rewrites no earlier
  // segment (whose directory fsync would hide the case).
  ASSERT_TRUE(g->Checkpoint().ok());
  std::vector<std::string> wal = Names(sim, "wal-", ".log");
  ASSERT_FALSE(wal.empty());
  const std::uint64_t next = *wal::ParseSegmentFileName(wal.back()) + 1;
  if (fail_header_sync) {
    fault.SetFault(FaultSpec{.ops = FaultOp::kSync,
                             .path_contains = wal::SegmentFileName(next),
                             .fsync_failure_drops_unsynced = true});
  } else {
    fault.SetFault(FaultSpec{.ops = FaultOp::kSyncDir, .at = 1});
  }
  const int acked = rotating - 1;
  const Status failure = ApplyGroup(*g, rotating).status();
  ASSERT_EQ(failure.code(), StatusCode::kDurabilityUnknown) << failure.ToString();
  ASSERT_EQ(fault.faults_injected(), 1u);
  g.reset();
  fault.ClearFault();
  ASSERT_TRUE(sim.Exists(env::JoinPath(kDir, wal::SegmentFileName(next))).value());
  {
    g = OpenOrDie(o, &fault);  // the same boot: no crash
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(g->GetSnapshot().sequence(), static_cast<SequenceNumber>(acked));
    ASSERT_EQ(WriteGroups(*g, acked + 1, acked + 3), 3);
    ASSERT_EQ(g->GetDurabilityStats().wal_segments_started, 0u) << "a rotation would hide the case";
    g.reset();
  }
  sim.Crash(fail_header_sync ? env::CrashPolicy::kTornLastWrite : env::CrashPolicy::kLoseUnsyncedDirEntries,
            1);
  const auto seq = static_cast<SequenceNumber>(acked + 3);
  EXPECT_EQ(ReopenAndCheck(sim, o, seq, seq), seq);
}

TEST(FaultInjectionTest, ReopenedHeaderOnlySegmentSurvivesPowerLoss) { ReopenedHeaderOnlySegmentCase(false); }

TEST(FaultInjectionTest, ReopenedSegmentWithUnsyncedHeaderSurvivesPowerLoss) {
  ReopenedHeaderOnlySegmentCase(true);
}
TEST(FaultInjectionTest, RenameFailureLeavesOldCheckpoint) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments(1024);
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 10), 10);
  ASSERT_TRUE(g->Checkpoint().ok());
  ASSERT_EQ(WriteGroups(*g, 11, 20), 10);
  const std::vector<std::string> checkpoints_before = Names(sim, "checkpoint-");
  ASSERT_EQ(checkpoints_before, std::vector<std::string>{"checkpoint-00000000000000000010.qck"});

  fault.SetFault(
      FaultSpec{.ops = FaultOp::kRename, .mode = FaultMode::kOnce, .kind = FaultKind::kEio, .at = 1});
  Status c = g->Checkpoint();
  EXPECT_EQ(c.code(), StatusCode::kIOError) << c.ToString();
  EXPECT_EQ(fault.faults_injected(), 1u);
  EXPECT_EQ(Names(sim, "checkpoint-"), checkpoints_before);  // old one kept, no .tmp left
  DurabilityStats d = g->GetDurabilityStats();
  EXPECT_EQ(d.checkpoint_failures, 1u);
  EXPECT_EQ(d.last_checkpoint_sequence, 10u);
  EXPECT_FALSE(d.poisoned);
  ASSERT_EQ(WriteGroups(*g, 21, 25), 5);

  // The process dies before anything else is written, then the power goes.
  sim.SetCrashAtOperation(sim.operation_count() + 1);
  g.reset();
  sim.Crash(env::CrashPolicy::kDropUnsynced, 10);
  fault.ClearFault();
  auto g2 = OpenOrDie(o, &fault);
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(g2->GetOpenStats().checkpoint_sequence, 10u);
  EXPECT_FALSE(g2->GetOpenStats().used_previous_checkpoint);
  EXPECT_EQ(g2->GetOpenStats().wal_batches_replayed, 15u);
  EXPECT_EQ(g2->GetSnapshot().sequence(), 25u);
  EXPECT_TRUE(MatchesReference(g2->GetSnapshot()));
}

// RELIABILITY 2.7: once a WAL write failed, nothing else is written or
// removed: no checkpoint (from Checkpoint() or Close()) and no file deleted.
TEST(FaultInjectionTest, NoCheckpointAndNoRemovalAfterAWalFailure) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments(768);
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 10), 10);
  ASSERT_TRUE(g->Checkpoint().ok());
  ASSERT_EQ(WriteGroups(*g, 11, 30), 20);  // several segments a checkpoint would free
  fault.SetFault(
      FaultSpec{.ops = FaultOp::kSync, .mode = FaultMode::kOnce, .at = 1, .path_contains = "wal-"});
  EXPECT_EQ(ApplyGroup(*g, 31).status().code(), StatusCode::kDurabilityUnknown);
  ASSERT_TRUE(g->GetDurabilityStats().poisoned);
  const std::vector<std::string> names = sim.ListDir(kDir).value();
  const std::uint64_t ops = sim.operation_count();
  EXPECT_EQ(g->Checkpoint().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->Close().code(), StatusCode::kPoisoned);
  EXPECT_EQ(sim.ListDir(kDir).value(), names);
  EXPECT_EQ(sim.operation_count(), ops);  // not one write, sync or removal
}

// RELIABILITY 2.7: a failed directory fsync while publishing a checkpoint
// (after its rename) poisons the graph like a failed WAL fsync.
TEST(FaultInjectionTest, DirFsyncFailurePublishingACheckpointPoisons) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  const Options o = SmallSegments(1024);
  auto g = OpenOrDie(o, &fault);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(WriteGroups(*g, 1, 10), 10);
  fault.SetFault(FaultSpec{.ops = FaultOp::kSyncDir, .mode = FaultMode::kOnce, .at = 1});
  Status c = g->Checkpoint();
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(fault.faults_injected(), 1u);
  EXPECT_TRUE(g->GetDurabilityStats().poisoned);
  EXPECT_EQ(ApplyGroup(*g, 11).status().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->Checkpoint().code(), StatusCode::kPoisoned);
  g.reset();
  fault.ClearFault();
  EXPECT_EQ(ReopenAndCheck(sim, o, 10, 10), 10u);
}

// A kill between a new checkpoint and the removal of the one before the
// previous leaves three; the next Open prunes back to two.
TEST(FaultInjectionTest, OpenPrunesCheckpointsLeftByAKill) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  Options o = SmallSegments(1024);
  o.durable.checkpoint_on_close = false;
  {
    auto g = OpenOrDie(o, &fault);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(WriteGroups(*g, 1, 10), 10);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(WriteGroups(*g, 11, 20), 10);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(WriteGroups(*g, 21, 30), 10);
    // The kill: the checkpoint is published, its cleanup never happens.
    fault.SetFault(FaultSpec{.ops = FaultOp::kRemove, .mode = FaultMode::kPersistent, .at = 1});
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(Names(sim, "checkpoint-").size(), 3u);
  }
  fault.ClearFault();
  EXPECT_EQ(ReopenAndCheck(sim, o, 30, 30), 30u);
  EXPECT_EQ(Names(sim, "checkpoint-"), (std::vector<std::string>{"checkpoint-00000000000000000020.qck",
                                                                 "checkpoint-00000000000000000030.qck"}));
}

// Regression: a failed WAL preallocation (ENOSPC from fallocate) was fatal,
// so a disk too full to reserve the next step of a segment (or the whole
// segment the open-time rewrite reserved) stopped writes and made the graph
// unopenable, although the appends themselves still had room. Preallocation
// is an optimisation: its failure is counted and the writes go on.
TEST(FaultInjectionTest, EnospcOnWalPreallocationIsNotFatal) {
  SimFileSystem sim;
  FaultFileSystem fault(&sim);
  Options o = SmallSegments(1024);
  o.durable.checkpoint_on_close = false;
  fault.SetFault(FaultSpec{
      .ops = FaultOp::kAllocate, .mode = FaultMode::kPersistent, .kind = FaultKind::kEnospc, .at = 1});
  {
    auto g = OpenOrDie(o, &fault);  // a new graph starts its first segment
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(WriteGroups(*g, 1, 20), 20);  // several segment starts
    EXPECT_GT(g->GetDurabilityStats().wal_segments_started, 0u);
    EXPECT_FALSE(g->GetDurabilityStats().poisoned);
  }
  const std::uint64_t failed_before_reopen = fault.faults_injected();
  EXPECT_GT(failed_before_reopen, 0u);
  {
    auto g = OpenOrDie(o, &fault);  // replays the tail, rewrites and reopens the last segment
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->GetSnapshot().sequence(), 20u);
    EXPECT_TRUE(MatchesReference(g->GetSnapshot()));
    ASSERT_EQ(WriteGroups(*g, 21, 25), 5);
    EXPECT_GT(g->GetDurabilityStats().wal_preallocation_failures, 0u);
  }
  fault.ClearFault();
  sim.Crash(env::CrashPolicy::kDropUnsynced, 3);
  EXPECT_EQ(ReopenAndCheck(sim, o, 25, 25), 25u);
}

// Three checkpoints (10, 20, 30), as a kill between the publication of the
// newest and its cleanup leaves them, over a WAL from 11 on.
std::unique_ptr<SimFileSystem> ThreeCheckpoints(const Options& o) {
  auto sim = std::make_unique<SimFileSystem>();
  FaultFileSystem fault(sim.get());
  auto g = OpenOrDie(o, &fault);
  if (g == nullptr) return nullptr;
  if (WriteGroups(*g, 1, 10) != 10 || !g->Checkpoint().ok()) return nullptr;
  if (WriteGroups(*g, 11, 20) != 10 || !g->Checkpoint().ok()) return nullptr;
  if (WriteGroups(*g, 21, 30) != 10) return nullptr;
  fault.SetFault(FaultSpec{.ops = FaultOp::kRemove, .mode = FaultMode::kPersistent, .at = 1});
  if (!g->Checkpoint().ok()) return nullptr;
  g.reset();
  if (Names(*sim, "checkpoint-").size() != 3) return nullptr;
  return sim;
}

// Regression: Open's pruning removed the oldest of three checkpoints and the
// log it needs without checking that the one before the newest is valid, so
// with that one damaged the pruned checkpoint was the only fallback, and
// damage to the newest later left nothing to open. Pruning now removes a
// checkpoint only while a newer valid one is durable beside it.
TEST(FaultInjectionTest, OpenNeverPrunesTheOnlyValidFallback) {
  Options o = SmallSegments(1024);
  o.durable.checkpoint_on_close = false;
  std::unique_ptr<SimFileSystem> sim = ThreeCheckpoints(o);
  ASSERT_NE(sim, nullptr);
  const std::string c20 = env::JoinPath(kDir, checkpoint::CheckpointFileName(20));
  const std::string c30 = env::JoinPath(kDir, checkpoint::CheckpointFileName(30));
  auto flip_middle = [&](const std::string& path) {
    const std::uint64_t size = sim->ReadDurableForTest(path).value().size();
    ASSERT_TRUE(sim->FlipBit(path, 8 * (size / 2)).ok());
  };
  flip_middle(c20);
  {
    auto g = OpenOrDie(o, sim.get());
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->GetSnapshot().sequence(), 30u);
    EXPECT_EQ(g->GetOpenStats().prune_status.code(), StatusCode::kCorruption)
        << g->GetOpenStats().prune_status.ToString();
  }
  EXPECT_EQ(Names(*sim, "checkpoint-").size(), 3u) << "the only valid fallback was pruned";
  // The newest is damaged too: the oldest valid one and its log recover.
  flip_middle(c30);
  auto g = OpenOrDie(o, sim.get());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 10u);
  EXPECT_TRUE(g->GetOpenStats().used_previous_checkpoint);
  EXPECT_EQ(g->GetSnapshot().sequence(), 30u);
  EXPECT_TRUE(MatchesReference(g->GetSnapshot()));
}

// Regression: a failure while Open pruned what a kill left behind failed
// the Open, although nothing it needs was missing. The failure is reported
// and the graph opens; a later Open prunes.
TEST(FaultInjectionTest, PruneFailureAtOpenIsReportedNotFatal) {
  Options o = SmallSegments(1024);
  o.durable.checkpoint_on_close = false;
  std::unique_ptr<SimFileSystem> sim = ThreeCheckpoints(o);
  ASSERT_NE(sim, nullptr);
  FaultFileSystem fault(sim.get());
  fault.SetFault(FaultSpec{.ops = FaultOp::kRemove, .mode = FaultMode::kPersistent, .at = 1});
  {
    auto g = OpenOrDie(o, &fault);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->GetSnapshot().sequence(), 30u);
    EXPECT_GT(fault.faults_injected(), 0u);
    EXPECT_EQ(Names(*sim, "checkpoint-").size(), 3u);
    EXPECT_FALSE(g->GetOpenStats().prune_status.ok());
    ASSERT_EQ(WriteGroups(*g, 31, 32), 2);
  }
  fault.ClearFault();
  EXPECT_EQ(ReopenAndCheck(*sim, o, 32, 32), 32u);
  EXPECT_EQ(Names(*sim, "checkpoint-"), (std::vector<std::string>{"checkpoint-00000000000000000020.qck",
                                                                  "checkpoint-00000000000000000030.qck"}));
}

TEST(FaultInjectionTest, ReadErrorDuringRecoveryFailsOpenCleanly) {
  Options o = SmallSegments(1024);
  o.durable.checkpoint_on_close = false;
  SimFileSystem base;
  {
    // Two checkpoints (6 and 12), so a read error could be mistaken for
    // damage and fall back; WAL to 20 on top.
    auto g = OpenOrDie(o, &base);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(WriteGroups(*g, 1, 6), 6);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(WriteGroups(*g, 7, 12), 6);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(WriteGroups(*g, 13, 20), 8);
  }
  std::uint64_t reads = 0;
  {
    std::unique_ptr<SimFileSystem> disk = base.Clone();
    FaultFileSystem counting(disk.get());
    counting.SetFault(FaultSpec{.ops = FaultOp::kRead, .at = 0});
    auto g = OpenOrDie(o, &counting);
    ASSERT_NE(g, nullptr);
    reads = counting.ops_seen();
  }
  ASSERT_GT(reads, 1u);
  std::uint64_t cases = 0;
  for (FaultMode mode : {FaultMode::kOnce, FaultMode::kPersistent}) {
    for (std::uint64_t n = 1; n <= reads; ++n) {
      SCOPED_TRACE("read " + std::to_string(n) + " of " + std::to_string(reads) +
                   (mode == FaultMode::kOnce ? " (once)" : " (persistent)"));
      std::unique_ptr<SimFileSystem> disk = base.Clone();
      const std::string image = DiskImage(*disk);
      FaultFileSystem fault(disk.get());
      fault.SetFault(FaultSpec{.ops = FaultOp::kRead, .mode = mode, .kind = FaultKind::kEio, .at = n});
      {
        auto g = GraphImpl::OpenDurable(o, kDir, &fault);
        EXPECT_FALSE(g.ok()) << "Open succeeded although read " << n << " failed";
        if (!g.ok()) {
          EXPECT_EQ(g.status().code(), StatusCode::kIOError) << g.status().ToString();
        }
      }
      EXPECT_EQ(fault.faults_injected(), 1u);
      EXPECT_EQ(DiskImage(*disk), image) << "a failed Open changed the directory";
      fault.ClearFault();
      auto g = OpenOrDie(o, &fault);
      ASSERT_NE(g, nullptr);
      EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 12u);
      EXPECT_FALSE(g->GetOpenStats().used_previous_checkpoint);
      EXPECT_EQ(g->GetSnapshot().sequence(), 20u);
      EXPECT_TRUE(MatchesReference(g->GetSnapshot()));
      ++cases;
    }
  }
  std::cout << "read-error points during recovery: " << reads << " x 2 modes = " << cases
            << " failed opens\n";
}

}  // namespace
}  // namespace quiver
