// GraphImpl: the one class that knows every subsystem. It owns the version
// chain (storage), the commit queue and the writer thread (write), and in
// durable mode the WAL writer, the checkpoint thread and the directory lock.
//
// Invariants kept here (numbered as in DESIGN.md; 1 and 3 in storage/version.h):
//  2. a batch is visible entirely or not at all: the writer validates a
//     batch before changing anything, applies it to a version no reader can
//     see, and publishes the version only after every batch of the group;
//  4. in durable mode a version is published only after its WAL group is on
//     disk (append + fdatasync), so no reader sees state a crash could take
//     back. A failed append or sync poisons the graph: the group's batches get
//     DurabilityUnknown, its version is rolled back, fsync is never retried and
//     every later write gets Poisoned.
//
// Thread safety: all public methods may be called from any thread. Fields
// are grouped below by who may touch them.
#ifndef QUIVER_GRAPH_IMPL_H_
#define QUIVER_GRAPH_IMPL_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "env/file_system.h"
#include "feed/change_feed.h"
#include "feed/effects.h"
#include "graph_dir.h"
#include "quiver/graph.h"
#include "storage/packed_adjacency.h"
#include "storage/version.h"
#include "wal/wal_writer.h"
#include "write/batch_processor.h"
#include "write/commit_queue.h"

namespace quiver {

// What a durable graph needs besides the engine; absent for in-memory graphs.
struct DurableState {
  // Set when Open made the file system (a non-default file mode); declared
  // first so that it outlives the lock and the files below.
  std::unique_ptr<env::FileSystem> owned_fs;
  env::FileSystem* fs = nullptr;
  std::string dir;
  std::unique_ptr<env::FileLock> lock;
  wal::Uuid uuid{};
  std::unique_ptr<wal::WalWriter> wal;
  SequenceNumber last_checkpoint = 0;
  SequenceNumber previous_checkpoint = 0;
  OpenStats open_stats;
  // WAL reservations the file system had no room for (WalWriter).
  std::atomic<std::uint64_t> wal_preallocation_failures{0};
  // First sequence of each segment on disk, by number (see RemoveCoveredFiles).
  base::Mutex segments_mu;
  std::map<std::uint64_t, SequenceNumber> segment_first ABSL_GUARDED_BY(segments_mu);
};

class GraphImpl final : public Graph {
 public:
  // `chain` holds the initial version; `durable` is null for in-memory graphs.
  GraphImpl(const Options& options, storage::VersionChain* chain, std::uint64_t epoch,
            std::unique_ptr<DurableState> durable);
  ~GraphImpl() override;

  // Opens a durable graph on `fs` (tests pass a simulated or faulty one).
  // `owned_fs`, if set, is `fs` and lives as long as the graph.
  // Out of memory it answers ResourceExhausted (OpenOutOfMemory), never an
  // exception.
  static Result<std::unique_ptr<Graph>> OpenDurable(const Options& options, const std::string& dir,
                                                    env::FileSystem* fs,
                                                    std::unique_ptr<env::FileSystem> owned_fs = nullptr);

  Snapshot GetSnapshot() const override;
  using Graph::Write;
  using Graph::WriteAsync;
  Result<CommitInfo> Write(WriteBatch batch, const WriteOptions& options) override;
  std::future<Result<CommitInfo>> WriteAsync(WriteBatch batch, const WriteOptions& options) override;
  Status Sync() override;
  Status Close() override;
  Status Checkpoint() override;
  Result<CompactStats> Compact() override;
  CompactionStats GetCompactionStats() const override;
  Status CreateIndex(const IndexSpec& spec) override;
  Status DropIndex(std::string_view name) override;
  using Graph::Backup;
  using Graph::Verify;
  Result<BackupInfo> Backup(std::string_view dir, const BackupProgress& progress) override;
  // Backup on `fs` (tests inject faults in the target).
  Result<BackupInfo> BackupTo(env::FileSystem* fs, const std::string& dir, const BackupProgress& progress);
  Result<VerifyReport> Verify(const VerifyOptions& options) const override;
  Result<std::unique_ptr<ChangeSubscription>> Subscribe(SequenceNumber from_sequence) override;
  Result<std::unique_ptr<ChangeSubscription>> Subscribe() override { return SubscribeFrom(0); }
  Result<SnapshotAndSubscription> SubscribeWithSnapshot() override;
  MemoryStats GetMemoryStats() const override;
  OpenStats GetOpenStats() const override;
  DurabilityStats GetDurabilityStats() const override;

  // --- An import undone whole if it fails (ImportOptions::atomic,
  // import/importer.h). One at a time; the calls come from one thread.
  //
  // BeginImport holds back every other thread's writes that change data
  // (Write and WriteAsync of a non-empty batch, so CreateIndex and
  // DropIndex too) and Backups until EndImport, waits for those already
  // under way, commits what was queued before, and then records the id
  // limits and those of `indexes` that no index of the graph has (the
  // names the import may create) in the rollback record, durably on a
  // durable graph (graph_dir.h, IMPORT). This thread's writes go on.
  Status BeginImport(const std::vector<std::string>& indexes);
  // `commit`: makes the import durable (Sync), then removes the record.
  // Otherwise, or if that Sync fails: removes every element the import
  // added and drops the indexes it created (UndoImport), syncs, and removes
  // the record. If a step fails the record stays, and the next Open undoes
  // the import. A record that stays (or may) poisons the graph: no other
  // write may land above its limits before an Open undoes the import. Then
  // lets the other writers go. Never throws.
  Status EndImport(bool commit);

  // Test hook: the writer thread's id (for base::ArmAllocationFaults).
  std::thread::id TEST_writer_thread_id() const { return writer_.get_id(); }
  // For test binaries only (tests/test_environment.cc): graphs opened with
  // the default CompactionOptions::after_changes start no compactor, so an
  // idle gap (long under the sanitizers) never moves blocks in a test that
  // counts memory, frees or allocations. A test that asks for another
  // threshold gets its compactor.
  static void SetDefaultCompactionOffForTesting(bool off);
  // Tests: the bounds of each Compact step (storage::RepackProgress), so a
  // small graph takes several steps. Set before calling Compact.
  void TEST_set_compact_step(std::uint64_t entries, std::uint64_t leaves) {
    // For Compact's steps and the compactor's alike; 0 would never advance.
    compact_step_entries_.store(std::max<std::uint64_t>(entries, 1));
    compact_step_leaves_.store(std::max<std::uint64_t>(leaves, 1));
  }
  // Groups committed by a producer on its own thread (caller commits).
  std::uint64_t TEST_caller_groups() const { return caller_groups_.load(); }
  // Groups of queued requests a waiting producer committed (QueueLeader).
  std::uint64_t TEST_led_groups() const { return led_groups_.load(); }
  // Test hook: the version chain (its lock hooks, version.h).
  const storage::VersionChain* TEST_chain() const { return chain_; }
  // Test hook: `f` runs on the checkpointing thread after each checkpoint
  // barrier completed, before the checkpoint is written. Set it before any
  // checkpoint can run (not synchronised).
  void TEST_SetAfterCheckpointBarrier(std::function<void()> f) {
    after_checkpoint_barrier_for_test_ = std::move(f);
  }
  // Bytes the writer holds in its adjacency sort buffers between groups
  // (BatchProcessor::TEST_sort_buffer_bytes). Read it only while no write
  // is in flight.
  std::size_t TEST_sort_buffer_bytes() const { return processor_.TEST_sort_buffer_bytes(); }
  // The same for the list of a run of property changes.
  std::size_t TEST_prop_changes_bytes() const { return processor_.TEST_prop_changes_bytes(); }

  // The refusals reading can decide, for what Inspect found: a newer or
  // damaged identity file, NotFound / FailedPrecondition / AlreadyExists by
  // the options, a removed newest segment, a file of a newer format.
  // Changes nothing. (Also ImportNewGraph's, on a graph it may replace.)
  static Status CheckDirectory(const Options& options, const std::string& dir,
                               const graphdir::DirState& state, env::FileSystem* fs);

 private:
  // Waits, unless this thread runs the import, while an import runs
  // (BeginImport), then counts the caller in until Leave; `enter` false
  // does nothing.
  class ImportGate {
   public:
    ImportGate(GraphImpl* g, bool enter);
    ~ImportGate();
    ImportGate(const ImportGate&) = delete;
    ImportGate& operator=(const ImportGate&) = delete;

   private:
    GraphImpl* g_;  // null if it did not enter
  };
  // What an import that held the gate from `journal` on added: every live
  // edge and vertex at or above its limits, in batches of removals, each
  // handed to `commit` (edges first: a vertex removal takes its edges).
  template <typename F>
  Status ForEachUndoBatch(const graphdir::ImportJournal& journal, F commit) const;
  // BeginImport's steps once the gate is closed; and the gate's opening.
  Status BeginImportGated(const std::vector<std::string>& indexes);
  void ReleaseImportGate() noexcept;
  // Removes what the import of `journal` added and drops the indexes it
  // names that exist, through logged writes, then syncs.
  Status UndoImport(const graphdir::ImportJournal& journal);
  // A read-only graph's view of the same: applied to the recovered version
  // in memory (nothing is written; the next writable Open undoes it on disk).
  Status UndoImportInMemory(const graphdir::ImportJournal& journal);
  // CreateIndex after its declaration committed at `declared`: builds the
  // contents from a snapshot on this thread and commits them ready.
  Status BuildAndPublish(const std::string& name, SequenceNumber declared);
  // For a CreateIndex that would intern a key name the graph does not know,
  // over a label it knows: the type errors of the head's data, which the
  // build would find only after the declaration interned the name.
  Status CheckDataForNewNames(const IndexSpec& spec);
  // After Apply of a recorded batch: its effects, for feed_ (out of line:
  // CommitGroup's path without subscribers stays as it was).
  [[gnu::noinline]] void RecordEffects(const WriteBatch& plain, const storage::GraphRoots& g,
                                       SequenceNumber sequence, std::uint64_t first_vertex,
                                       std::uint64_t first_edge);
  // After the group's version was published: its batches' effects go to
  // feed_. After a roll-back: they are dropped.
  [[gnu::noinline]] void PublishEffects();
  [[gnu::noinline]] void DropEffects();
  // Subscribe; `from` 0 subscribes from now.
  Result<std::unique_ptr<ChangeSubscription>> SubscribeFrom(SequenceNumber from);
  // Registers with the feed, then finds the newest sequence whose group
  // started before the registration (every later one is recorded): the
  // first half of SubscribeFrom and SubscribeWithSnapshot. On an error the
  // registration is taken back.
  Result<SequenceNumber> RegisterWithFeed();
  // From a sequence the window does not hold (from <= committed): the log
  // up to `committed` (feed/log_replay.h), then the window. Takes over the
  // feed registration SubscribeFrom made.
  Result<std::unique_ptr<ChangeSubscription>> SubscribeFromLog(SequenceNumber from, SequenceNumber committed);
  // Close; sets *ran (if given) when this call is the one that closed.
  Status CloseOnce(bool* ran);
  // `group`: an empty vector with room for a usual group.
  void WriterLoop(std::vector<WriteRequest*> group);
  // Whoever holds the writer's role (CommitQueue invariant 3): the writer
  // thread, or a producer that took it (TryLead).
  void CommitGroup(std::span<WriteRequest* const> group);
  // CommitGroup's body, compiled twice: with kRecord false (no change feed
  // subscription) it is the commit path as it was without the feed.
  template <bool kRecord>
  void CommitGroupAs(std::span<WriteRequest* const> group);
  // Commits `r` (a new synchronous request) and waits for it: on this
  // thread when nobody else is committing, else queued. Takes `r`.
  Result<CommitInfo> CommitAndWait(WriteRequest* r);
  // Commits one compaction step (Compact; the compactor thread) from
  // `progress` up to vertex id `end` and waits for it.
  // `alone`: the compactor's steps (WriteRequest::set_compact).
  Status CompactStep(storage::RepackProgress* progress, std::uint64_t end, bool alone = false);
  // A producer that took the writer's role: commits `r` alone and gives the
  // role back. noexcept: an exception escaping the group terminates, as it
  // would on the writer thread, rather than leave the role taken.
  void LeadGroup(WriteRequest* r) noexcept;
  // Commits queued groups on a waiting producer's thread (CommitQueue,
  // "Producers lead queued groups"), as the writer thread would.
  class QueueLeader final : public GroupLeader {
   public:
    QueueLeader(GraphImpl* graph, std::size_t max_batches, std::size_t max_cost)
        : GroupLeader(max_batches, max_cost), graph_(graph) {}
    void Commit(std::span<WriteRequest* const> group) noexcept override;

   private:
    GraphImpl* const graph_;
  };
  // Publishes held_batches_ and held_.size() to the statistics.
  void StoreHeldStats();
  // Appends the entries of the group's applied batches to the held-back
  // log (held_), and extends held_first_ / held_last_ / held_batches_ over
  // them. Writes nothing; may throw std::bad_alloc (the caller restores
  // the held-back log to its mark).
  // True if the group's batch `i` committed something, so the log records it
  // (an empty batch, or one whose upserts and expectations changed nothing,
  // takes no sequence number and no record).
  static bool Logs(std::span<WriteRequest* const> group,
                   const std::vector<std::optional<WriteBatch>>& resolved,
                   const std::vector<Result<CommitInfo>>& results, std::size_t i);
  // `resolved` (empty, or one entry per batch) holds the plain batches of
  // those that had upserts or expectations: logged instead of the original.
  void EncodeGroup(std::span<WriteRequest* const> group,
                   const std::vector<std::optional<WriteBatch>>& resolved,
                   const std::vector<Result<CommitInfo>>& results,
                   const std::vector<std::uint64_t>& first_vertex,
                   const std::vector<std::uint64_t>& first_edge);
  // Prepares (WalWriter::PrepareGroup) one group record of
  // held_first_..held_last_ whose payload holds every held-back batch. May
  // throw std::bad_alloc; writes nothing, so the caller can undo the group
  // and keep what was held back.
  void BuildHeldRecord();
  // Appends and syncs the record BuildHeldRecord prepared, as one record of
  // held_first_..held_last_, then forgets the held-back log, written or
  // not (a failed write is never retried); false on failure (the caller
  // poisons), with the I/O error in *error, or *error OK if the WAL writer
  // ran out of memory (a failed write too). Never throws.
  // `sync` false only for the negative control append_unsynced_groups.
  bool LogHeld(Status* error, bool sync = true);
  // Appends the prepared record (starting a new segment whose first
  // sequence is `first` if the current one is full) and, if `sync`,
  // fdatasyncs it; counts the bytes and asks for a checkpoint at each
  // multiple of checkpoint_wal_bytes.
  Status AppendAndSync(SequenceNumber first, bool sync);
  // Checks and prepares the directory before recovery: refuses what is not
  // a graph (before taking LOCK, and again under it), creates it if
  // missing, takes LOCK. Returns what it found under the lock. A refused
  // Open leaves the directory as it found it.
  static Result<graphdir::DirKind> PrepareDirectory(const Options& options, DurableState& d);
  // Open with options.read_only: checks the directory, takes LOCK for the
  // length of the recovery if the file exists (refused if held), recovers
  // in memory; calls no FileSystem method that changes anything.
  // OpenDurable's work; may throw std::bad_alloc (OpenDurable turns it
  // into a status), having freed what it recovered.
  static Result<std::unique_ptr<Graph>> OpenDurableOrThrow(const Options& options, const std::string& dir,
                                                           env::FileSystem* fs,
                                                           std::unique_ptr<env::FileSystem> owned_fs);
  static Result<std::unique_ptr<Graph>> OpenReadOnly(const Options& options, std::unique_ptr<DurableState> d,
                                                     std::chrono::steady_clock::time_point start);
  // FailedPrecondition for a write to a read-only graph.
  static Status ReadOnlyError(std::string_view what);
  void CheckpointLoop();
  // Background compaction (Options::compaction, write/compactor.cc): the
  // compactor thread's body, and how it is stopped (Close, before the
  // commit queue closes).
  void CompactorLoop();
  void StopCompactor();
  // Whether Open starts the compactor (after_changes > 0, unless a test
  // binary turned the default off).
  bool CompactsInBackground() const;
  // The committer of a group that changed the graph: counts its batches'
  // operations for background compaction and restarts its idle clock.
  void NoteChanges(std::span<WriteRequest* const> group, const std::vector<Result<CommitInfo>>& results);
  // Takes the operations counted so far off the count (a pass or a Compact
  // call begins: they are its to pack); returns how many there were.
  std::uint64_t ConsumeChanges();
  // No group changed the graph for CompactionOptions::idle_milliseconds.
  // The compactor asks before each step, and the writer again as it
  // commits one (a write may have committed while the step was queued).
  bool IdleForCompaction() const;
  Status RunCheckpoint();
  // `writer_stopped`: called by Close after the writer thread ended (and
  // wrote what was held back); else the version and its WAL position are
  // taken by the writer with nothing held back (a barrier request).
  // Memory exhaustion anywhere in it is a failed checkpoint
  // (ResourceExhausted), never an exception: no exception crosses the API,
  // and one on the background checkpointer would end the process.
  Status RunCheckpointLocked(bool writer_stopped = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(checkpoint_mu_);
  Status RunCheckpointUnguarded(bool writer_stopped) ABSL_EXCLUSIVE_LOCKS_REQUIRED(checkpoint_mu_);
  // Records a checkpoint failure in the stats, logs it and returns it.
  // Never throws (out of memory, the stats hold CheckpointOutOfMemory()).
  Status CheckpointFailed(Status s);
  // checkpoint_stats_.last_checkpoint_error = s, without throwing.
  void SetLastCheckpointError(const Status& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(stats_mu_);
  // Sets poisoned_ and, the first time, logs `why` (built only then; no
  // memory for it: logged with `what` alone). Never throws.
  void Poison(const char* what, const Status& why);
  // Passes an event to options_.logger, if set (quiver/logger.h);
  // make_message() builds its text, only when there is a logger. Never
  // throws, whatever the message building or the logger's Log throws:
  // callers are the writer and checkpoint threads, where an exception would
  // end the process, and the WAL path, where a bad_alloc would be taken for
  // a failed write and poison a healthy graph. Out of memory building the
  // message, the event is logged with `fallback` instead; an exception from
  // Log loses the event.
  template <class MakeMessage>
  void LogEvent(LogLevel level, std::string_view event, MakeMessage&& make_message,
                std::string_view fallback = "(no memory to describe this event)") const noexcept {
    if (options_.logger == nullptr) return;
    std::string message;
    bool built = false;
    try {
      message = make_message();
      built = true;
    } catch (...) {
    }
    DeliverEvent(level, event, built ? std::string_view(message) : fallback);
  }
  void DeliverEvent(LogLevel level, std::string_view event, std::string_view message) const noexcept;
  // The events Open's findings call for (torn tail, fallback, salvage).
  void LogOpenFindings() const;
  // Counts `written` bytes appended to the WAL (wal_bytes), of which
  // `bytes` count toward wal_bytes_since_checkpoint (all of them: records
  // and padding alike), and, when `synced`, the fdatasync that took `micros`
  // (histogram, syncs) in one step under stats_mu_, then logs the sync if
  // slow; returns the WAL bytes since the last checkpoint. `synced` is
  // false only under DurabilityFaults::append_unsynced_groups.
  std::uint64_t RecordSync(bool synced, std::uint64_t micros, std::uint64_t written, std::uint64_t bytes);
  // What a checkpoint makes redundant: checkpoint files (names) and WAL
  // segments (numbers).
  struct CoveredFiles {
    std::vector<std::string> checkpoints;
    std::vector<std::uint64_t> segments;
    bool empty() const { return checkpoints.empty() && segments.empty(); }
  };
  // The checkpoints older than `previous_checkpoint` and the segments it
  // wholly covers. Reads no file: segment first sequences are kept in
  // `segment_first` (recovery found them, the writer adds what it starts).
  static Result<CoveredFiles> FindCoveredFiles(DurableState& d, SequenceNumber previous_checkpoint,
                                               std::uint64_t current_segment);
  // Removes `files` (checkpoints first), then fsyncs the directory; sets
  // `*dir_sync_failed` if that fsync failed.
  static Status RemoveFiles(DurableState& d, const CoveredFiles& files, bool* dir_sync_failed);
  // FindCoveredFiles, then RemoveFiles.
  static Status RemoveCoveredFiles(DurableState& d, SequenceNumber previous_checkpoint,
                                   std::uint64_t current_segment, bool* dir_sync_failed = nullptr);
  // At Open: removes what a kill between a checkpoint's publication and its
  // cleanup left (checkpoints before the previous one, segments it covers),
  // only if the previous checkpoint verifies, and after a directory fsync
  // that makes it and the loaded one durable. Other failures are recorded
  // in d.open_stats.prune_status; only a failed directory fsync is
  // returned.
  static Status PruneAtOpen(DurableState& d, SequenceNumber loaded_checkpoint);

  // Immutable after construction.
  const Options options_;
  storage::VersionChain* const chain_;  // deletes itself after Shutdown
  const std::unique_ptr<DurableState> durable_;
  const bool read_only_;  // options_.read_only for a durable graph: no writer, no WAL

  // Any thread.
  CommitQueue queue_;
  QueueLeader leader_;  // its group: the writer's role holder only
  std::once_flag close_once_;
  Status close_status_;  // written once, inside close_once_

  std::atomic<std::uint64_t> current_segment_{0};
  std::atomic<bool> poisoned_{false};
  std::atomic<std::uint64_t> commit_groups_{0};
  std::atomic<std::uint64_t> caller_groups_{0};  // for tests: LeadGroup's count
  // Compact's step bounds (TEST_set_compact_step; read by Compact's caller).
  // Atomic: the compactor thread reads them too.
  // 0: the defaults (storage::kRepackEntriesPerCall for Compact,
  // kBackgroundRepackEntries for the compactor; the same for leaves).
  std::atomic<std::uint64_t> compact_step_entries_{0};
  std::atomic<std::uint64_t> compact_step_leaves_{0};
  std::atomic<std::uint64_t> led_groups_{0};  // for tests: QueueLeader::Commit's count
  std::atomic<std::uint64_t> wal_segments_started_{0};
  // Written by the writer, read by GetDurabilityStats: what is held back
  // (held_batches_, held_.size()), and the newest sequence in a synced record.
  std::atomic<std::uint64_t> unsynced_batches_{0};
  std::atomic<std::uint64_t> unsynced_bytes_{0};
  std::atomic<SequenceNumber> durable_sequence_{0};

  // The change feed (Subscribe): subscriptions share it, so it outlives
  // the graph while they live.
  const std::shared_ptr<feed::ChangeFeed> feed_;

  // The writer's role holder only (CommitQueue invariant 3: the writer
  // thread, or a producer committing on its own thread).
  BatchProcessor processor_;
  // While a subscription is open: the effects of each batch of the group
  // being committed, appended to feed_ once the group is published.
  feed::EffectsRecorder effects_;
  std::vector<std::shared_ptr<const ChangeBatch>> feed_batches_;
  std::uint64_t epoch_;
  // The private blocks the last published group held (capped, writer.cc
  // kGroupBlocksHintMax): the next group's GroupBlocks starts with room for
  // that many (CommitGroupAs). The writer's role holder only.
  std::size_t group_blocks_hint_ = 0;
  std::vector<std::byte> held_prefix_;  // a held-back record's batch count (BuildHeldRecord)
  // The held-back log (durable mode): the encoded entries of batches that
  // are published and acknowledged but not yet in the WAL (unsynced
  // writes), sequences held_first_..held_last_, held_batches_ of them. They
  // are written as one record with the next group that is written (a
  // synced write, Sync, a checkpoint's barrier, the bound
  // max_unsynced_bytes, Close), so the WAL never holds more than one
  // record not yet synced: the reader's rule (damage followed by a valid
  // record is Corruption) stays sound.
  std::vector<std::byte> held_;
  std::size_t held_batches_ = 0;
  SequenceNumber held_first_ = 0;
  SequenceNumber held_last_ = 0;
  // Set by a checkpoint's barrier when the current segment is large enough
  // (wal::WalWriter::RotateAfterCheckpoint): the next group starts a new
  // segment, so the log after the checkpoint has a segment of its own and
  // the open-time rewrite of the replayed segment (recovery.cc) copies the
  // tail, not the whole segment the checkpoint ended in.
  bool rotate_before_next_group_ = false;
  // Whether the directory's file system reports room for a segment that
  // rotate_before_next_group_ asks for (twice its first reservation).
  bool RoomForAnOptionalSegment() const;
  // Whether a checkpoint of the version at `sequence` writes anything, the
  // newest checkpoint being at `last`: not for an empty graph, nor again.
  static bool HasNewSince(SequenceNumber sequence, SequenceNumber last) {
    return sequence != last && sequence != 0;
  }

  std::function<void()> after_checkpoint_barrier_for_test_;  // TEST_SetAfterCheckpointBarrier

  // Checkpoints: one at a time (the background thread, Checkpoint(), Close()).
  mutable base::Mutex checkpoint_mu_;
  SequenceNumber last_checkpoint_ ABSL_GUARDED_BY(checkpoint_mu_) = 0;
  SequenceNumber previous_checkpoint_ ABSL_GUARDED_BY(checkpoint_mu_) = 0;
  // Set by Close once its final checkpoint is done (or skipped); the WAL
  // file and LOCK are released then.
  bool closed_ ABSL_GUARDED_BY(checkpoint_mu_) = false;
  // Held only briefly, never across I/O or a logger call: stats readers
  // must not wait for a checkpoint to finish. Everything a DurabilityStats
  // snapshot reports together is written and read under it, so a snapshot
  // sees a WAL sync or a checkpoint whole or not at all: the histogram sums
  // to wal_syncs, wal_bytes_since_checkpoint <= wal_bytes + what Open
  // found, and last_checkpoint_error agrees with the health state.
  mutable base::Mutex stats_mu_;
  DurabilityStats checkpoint_stats_ ABSL_GUARDED_BY(stats_mu_);
  // The most recent checkpoint attempt failed (health: degraded).
  bool last_checkpoint_failed_ ABSL_GUARDED_BY(stats_mu_) = false;
  std::uint64_t wal_syncs_ ABSL_GUARDED_BY(stats_mu_) = 0;
  std::uint64_t wal_bytes_ ABSL_GUARDED_BY(stats_mu_) = 0;
  std::uint64_t wal_bytes_since_checkpoint_ ABSL_GUARDED_BY(stats_mu_) = 0;
  std::array<std::uint64_t, kSyncLatencyBuckets> sync_histogram_ ABSL_GUARDED_BY(stats_mu_){};

  // Wakes the checkpoint thread.
  mutable base::Mutex trigger_mu_;
  bool checkpoint_requested_ ABSL_GUARDED_BY(trigger_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(trigger_mu_) = false;
  base::CondVar trigger_cv_{&trigger_mu_};

  // The import gate (BeginImport, ImportGate).
  base::Mutex gate_mu_;
  bool import_running_ ABSL_GUARDED_BY(gate_mu_) = false;
  bool closing_ ABSL_GUARDED_BY(gate_mu_) = false;           // Close began: no import begins
  std::uint64_t gate_inside_ ABSL_GUARDED_BY(gate_mu_) = 0;  // writers past the gate
  base::CondVar gate_cv_{&gate_mu_};
  // The running import's record; its thread's alone.
  std::optional<graphdir::ImportJournal> import_journal_;
  // The import's thread's t_import_thread before it (an import into
  // another graph it runs, from a progress callback), restored at the end.
  const GraphImpl* outer_import_thread_ = nullptr;
  // An import's rollback record stayed (or may have) in the directory: the
  // graph is poisoned, and a Backup would copy the import's part.
  std::atomic<bool> import_record_left_{false};

  // Background compaction (write/compactor.cc). Operations committed since
  // the compactor's last pass began, and when a group last changed the
  // graph (steady clock, ns); written by the writer's role holder.
  std::atomic<std::uint64_t> changes_since_compact_{0};
  std::atomic<std::int64_t> last_change_ns_{0};
  std::atomic<std::uint64_t> compacted_passes_{0};
  std::atomic<std::uint64_t> compacted_steps_{0};
  std::atomic<std::uint64_t> compacted_blocks_{0};
  std::atomic<std::uint64_t> compacted_entries_{0};
  base::Mutex compactor_mu_;
  base::CondVar compactor_cv_{&compactor_mu_};
  bool compactor_stop_ ABSL_GUARDED_BY(compactor_mu_) = false;
  // Set before the writer thread starts, never after: whether compactor_
  // runs (NoteChanges reads it on the committing thread; compactor_ itself
  // changes when Close joins it).
  bool compactor_started_ = false;

  std::thread writer_;        // started last in the constructor
  std::thread checkpointer_;  // durable mode only
  std::thread compactor_;     // when Options::compaction.after_changes > 0
};

}  // namespace quiver

#endif  // QUIVER_GRAPH_IMPL_H_
