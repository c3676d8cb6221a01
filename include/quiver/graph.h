// Graph: the handle an application holds on one property graph.
//
// Reads go through snapshots (GetSnapshot); writes go through batches
// (Write / WriteAsync), which one writer at a time validates and applies
// all-or-nothing, in arrival order, publishing the batches it drains
// together as one new version: the writer thread, or a Write on its own
// thread, when it finds nothing else to commit or, while commit groups are
// short, the batches queued with its own (WriterOptions::caller_commits).
// A failing batch fails alone.
//
// Example:
//   auto graph = quiver::Graph::OpenInMemory().value();
//   quiver::WriteBatch b;
//   auto a = b.AddVertex("City"), z = b.AddVertex("City");
//   b.AddEdge("ROAD", a, z, {{"km", 42}});
//   quiver::CommitInfo info = graph->Write(std::move(b)).value();
//   quiver::Snapshot s = graph->GetSnapshot();  // s.sequence() >= info.sequence
//
// Thread safety: every method may be called from any thread, concurrently.
#ifndef QUIVER_GRAPH_H_
#define QUIVER_GRAPH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/change_feed.h"
#include "quiver/ids.h"
#include "quiver/index.h"
#include "quiver/options.h"
#include "quiver/snapshot.h"
#include "quiver/status.h"
#include "quiver/verify.h"
#include "quiver/write_batch.h"

namespace quiver {

// What a committed batch produced.
struct CommitInfo {
  // The batch's sequence number; the first batch ever committed is 1. An
  // empty batch commits nothing and takes no number of its own: it gets the
  // sequence number of the newest batch committed before it (0 if none).
  SequenceNumber sequence = 0;
  // Ids of the batch's new vertices / edges, in AddVertex / AddEdge order.
  // An UpsertVertex takes its place in `vertices` like an AddVertex (at its
  // handle's index), with the id of the vertex it found or added; an
  // UpsertEdge likewise in `edges`.
  std::vector<VertexId> vertices;
  std::vector<EdgeId> edges;
  // Per entry of `vertices`: true if it is an upsert that found a vertex
  // that existed before the batch (false for adds and upserts that added).
  std::vector<bool> vertex_found;
  // Per entry of `edges`: true if it is an UpsertEdge that found an edge
  // that existed before the batch (false for adds and upserts that added).
  std::vector<bool> edge_found;
  // Durable mode: true if, when the call returned, this batch and every
  // batch committed before it were in an fdatasynced WAL record (always
  // for a synced write; for an unsynced one only if it was written with a
  // synced group, or reached DurableOptions::max_unsynced_bytes). False
  // for an in-memory graph.
  //
  // Example:
  //   auto r = graph->Write(std::move(batch), {.sync = false}).value();
  //   if (!r.synced) graph->Sync();
  bool synced = false;
};

// Memory the graph's structures hold, from the allocator's own block sizes.
struct MemoryStats {
  // Bytes in blocks reachable from some live version, or retired and not
  // yet reclaimable.
  std::uint64_t allocated_bytes = 0;
  // Of those, bytes retired by newer versions, waiting for old snapshots.
  std::uint64_t retired_bytes = 0;
  // Versions still pinned (by snapshots or as the current version).
  std::uint64_t live_versions = 0;
};

// What Open found and did (all zero for an in-memory graph).
struct OpenStats {
  // The checkpoint loaded, 0 if none.
  SequenceNumber checkpoint_sequence = 0;
  // True if the newest checkpoint was damaged and the previous one was used.
  bool used_previous_checkpoint = false;
  std::uint64_t wal_segments_read = 0;
  std::uint64_t wal_groups_replayed = 0;
  std::uint64_t wal_batches_replayed = 0;
  // Bytes of torn or unused tail cut from the last WAL segment.
  std::uint64_t tail_bytes_truncated = 0;
  // True if salvage_wal_prefix gave up committed data after damage (the
  // damaged segment and every later one are kept as *.salvaged files).
  bool salvaged = false;
  // Bytes of damaged WAL records skipped because the loaded checkpoint holds
  // every group in them (0 on a healthy disk; worth a look when not).
  std::uint64_t wal_covered_damage_bytes = 0;
  // The sequence number of the recovered state.
  SequenceNumber recovered_sequence = 0;
  // WAL segments that held replayed groups and were written again, synced,
  // before Open returned (see docs/durability.md: a log page read back after
  // a crash is not proof that it is on disk). Open writes no checkpoint.
  std::uint64_t wal_segments_rewritten = 0;
  // OK, or why Open did not finish removing what a kill between a
  // checkpoint and its cleanup left behind (checkpoints before the previous
  // one, WAL segments it covers): a failed removal, or a previous
  // checkpoint that does not verify (then nothing is removed, so an older
  // valid checkpoint stays as the fallback). The graph opened either way.
  Status prune_status;
  // True if an import cut short (a crash during an atomic Import into a
  // populated graph, include/quiver/import.h) was undone: on disk by a
  // writable Open, in this handle's view only by a read-only one.
  bool import_undone = false;
  std::uint64_t open_microseconds = 0;
  // Parts of open_microseconds: reading and loading the checkpoint (on
  // load_threads threads, DurableOptions::io_threads; 0 if no checkpoint was
  // loaded) and replaying the WAL.
  std::uint64_t checkpoint_load_microseconds = 0;
  std::uint64_t wal_replay_microseconds = 0;
  std::uint32_t load_threads = 0;
  // Indexes whose contents Open built: every ready index a loaded
  // checkpoint lists, and those the log declared and never finished (a
  // crash during CreateIndex), and the time those builds took: part of
  // open_microseconds; for a checkpoint's indexes, which are built as it
  // loads, also part of checkpoint_load_microseconds.
  std::uint64_t indexes_built = 0;
  std::uint64_t index_build_microseconds = 0;
  // Of indexes_built, those the checkpoint stored the entries of (format 5
  // on: copied into the tree, no sort); the others were collected from the
  // elements and sorted.
  std::uint64_t indexes_loaded = 0;
  // Indexes the log declared and never finished whose data violates them
  // (a unique index with a repeated key, or a value of the wrong type):
  // Open drops each (a logged drop commit) rather than fail, and says why
  // here, one "<name>: <reason>" each.
  std::vector<std::string> dropped_indexes;
};

// How a durable graph is doing (DurabilityStats::health), by this rule,
// first match wins:
//   kPoisoned  a WAL write or sync failed: writes are refused until the
//              graph is reopened (DurabilityStats::poisoned);
//   kDegraded  it still commits and loses nothing, but needs a look: the
//              most recent checkpoint attempt failed (the WAL grows until
//              one succeeds), the directory's file system has less free
//              space than one WAL segment (wal_segment_bytes) or could not
//              say, or Open salvaged, fell back to an older checkpoint or
//              skipped damaged WAL records (OpenStats);
//   kOk        none of the above.
// An in-memory graph is always kOk. DurabilityStats::health_reason names
// the first condition that matched.
enum class HealthState : std::uint8_t {
  kOk = 0,
  kDegraded = 1,
  kPoisoned = 2,
};

// Buckets of DurabilityStats::wal_sync_latency_histogram.
inline constexpr std::size_t kSyncLatencyBuckets = 24;

// Counters of the durable write path since Open.
struct DurabilityStats {
  std::uint64_t commit_groups = 0;
  std::uint64_t wal_syncs = 0;
  // Bytes appended to the WAL, including the padding that ends every group
  // on a 4 KiB page boundary (docs/wal_format.md, the page rule).
  std::uint64_t wal_bytes = 0;
  std::uint64_t wal_segments_started = 0;
  // Times the file system had no room to reserve WAL space ahead of the
  // appends (including the reservation Open makes). Not an error: the
  // writer appends without a reservation (a disk that is really full then
  // fails the append, which poisons); a sign the disk is nearly full.
  std::uint64_t wal_preallocation_failures = 0;
  std::uint64_t checkpoints_written = 0;
  std::uint64_t checkpoint_failures = 0;
  SequenceNumber last_checkpoint_sequence = 0;
  std::uint64_t last_checkpoint_bytes = 0;
  std::uint64_t last_checkpoint_microseconds = 0;
  // The last checkpoint failure's status, OK if none.
  Status last_checkpoint_error;
  // True once a WAL write or sync failed: writes are refused from then on.
  bool poisoned = false;
  // WAL fdatasync latencies of the commit groups, in powers of two of
  // microseconds: bucket 0 counts syncs under 2 us, bucket i (1 to 22)
  // those of [2^i, 2^(i+1)) us, bucket 23 those of 2^23 us (8.4 s) or more.
  // The buckets sum to wal_syncs.
  std::array<std::uint64_t, kSyncLatencyBuckets> wal_sync_latency_histogram{};
  // WAL bytes appended since the last checkpoint was written (since Open,
  // plus the log Open found, if none was): what the log the next Open would
  // read takes on disk, records, the padding that ends each commit group on
  // a 4 KiB page and each segment's header page alike (so a reopen counts
  // the same log the same), and what checkpoint_wal_bytes is compared with.
  std::uint64_t wal_bytes_since_checkpoint = 0;
  // Unsynced writes (WriteOptions::sync = false) acknowledged and held back
  // in memory, not yet in the WAL: how many batches and their log entries'
  // bytes (what DurableOptions::max_unsynced_bytes bounds). A crash loses
  // them; so does a WAL failure (they are then dropped from these counts
  // and durable_sequence stays below the graph's sequence).
  std::uint64_t unsynced_batches = 0;
  std::uint64_t unsynced_bytes = 0;
  // Durable mode: the newest sequence number in an fdatasynced WAL record
  // (or recovered at Open): every commit up to it survives a crash. Below
  // the current snapshot's sequence while unsynced writes are held back,
  // and for good after a WAL failure lost them. 0 for an in-memory graph.
  SequenceNumber durable_sequence = 0;
  // Bytes available to the process on the file system holding the graph
  // directory, asked when the stats are read (0 if it could not say, or
  // for an in-memory graph).
  std::uint64_t free_space_bytes = 0;
  // See HealthState for the rule; health_reason names what matched (empty
  // for kOk).
  HealthState health = HealthState::kOk;
  std::string health_reason;
};

// What Graph::Backup wrote.
struct BackupInfo {
  // The sequence number of the copied state: opening the copy gives
  // exactly the graph as of this commit.
  SequenceNumber sequence = 0;
  std::uint64_t bytes = 0;  // the checkpoint file's size
};

// Graph::Backup's progress: called on the calling thread as the checkpoint
// grows (after the names and after each chunk of elements), with the bytes
// written so far. Must not call into the graph.
using BackupProgress = std::function<void(std::uint64_t bytes_written)>;

// What Graph::Compact did.
struct CompactStats {
  // Packed blocks made: one per leaf (64 consecutive vertex ids) and
  // direction that was repacked.
  std::uint64_t blocks = 0;
  // Adjacency entries moved into them (an edge counts once per direction).
  std::uint64_t entries = 0;
  // Steps taken: each ran in one commit group of the writer.
  std::uint64_t steps = 0;
};

// Background compaction since Open (Options::compaction).
struct CompactionStats {
  // Passes finished: every vertex id below the graph's limit at the pass's
  // start was looked at.
  std::uint64_t passes = 0;
  // Steps committed (a pass interrupted by writes goes on later).
  std::uint64_t steps = 0;
  // Packed blocks made and adjacency entries moved into them, as
  // CompactStats counts them.
  std::uint64_t blocks = 0;
  std::uint64_t entries = 0;
  // Operations committed since the last pass began (what
  // CompactionOptions::after_changes is compared with).
  std::uint64_t pending_changes = 0;
};

class Graph {
 public:
  // Opens the graph in directory `dir`, creating it (directory, missing
  // parents and all) if absent and options.create_if_missing: loads the
  // newest valid checkpoint (the previous one if the newest is damaged),
  // replays the write-ahead log after it, truncates a torn tail, and
  // returns once that state is published. Corruption if committed data is
  // damaged; FailedPrecondition if the graph is open elsewhere (another
  // process, or another handle of this one not yet closed) or if `dir`
  // holds files Quiver did not write and no graph; NotFound if there is no
  // graph and create_if_missing is false; AlreadyExists if there is one
  // and options.error_if_exists; Unimplemented if a newer Quiver wrote it;
  // InvalidArgument for an empty path; ResourceExhausted if memory runs out
  // (loading the checkpoint, building its indexes, replaying the log),
  // never an exception. docs/directory.md has the details.
  // With options.durability == kVolatile, `dir` is ignored and the graph is
  // in memory only.
  static Result<std::unique_ptr<Graph>> Open(const Options& options, std::string_view dir);
  // Creates an empty volatile graph: no files, gone when closed.
  static Result<std::unique_ptr<Graph>> OpenInMemory(const Options& options = {});

  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  // Closes the graph if still open. Snapshots may outlive it.
  virtual ~Graph();

  // The newest committed version. O(1), lock-free. Works after Close().
  virtual Snapshot GetSnapshot() const = 0;

  // Commits `batch` and waits for it. On success the batch is in every
  // snapshot acquired afterwards and, in durable mode, on disk. Errors: the
  // validation codes of the batch (nothing applied), ResourceExhausted when
  // memory ran out (nothing applied), FailedPrecondition after Close() or
  // when called from a Logger on the thread committing to this graph (it
  // would wait for itself), DurabilityUnknown if the WAL write or sync of
  // its group failed (it may reappear after a restart), Poisoned for every
  // write after such a failure. An empty batch is ordered like any other (it
  // completes after every batch queued before it) but publishes no version
  // and consumes no sequence number; it writes no log record of its own,
  // but a synced one writes what unsynced writes hold back, as Sync() does
  // (and can fail as Sync does). So can a synced batch whose upserts and
  // expectations change nothing: it answers DurabilityUnknown, not OK, when
  // writing the held-back records it confirmed fails.
  //
  // A Write that finds nothing else to commit commits on the calling
  // thread, WAL append and sync included; while commit groups are short,
  // a Write queued behind others may commit theirs with its own there
  // (WriterOptions::caller_commits).
  //
  // With options.sync = false (durable mode), the batch is acknowledged once
  // applied and published, before it is on disk; see WriteOptions::sync
  // for what a crash may then lose and what makes it durable.
  //
  // Example:
  //   graph->Write(std::move(batch), quiver::WriteOptions{.sync = false}).value();
  virtual Result<CommitInfo> Write(WriteBatch batch, const WriteOptions& options) = 0;
  Result<CommitInfo> Write(WriteBatch batch) { return Write(std::move(batch), WriteOptions{}); }

  // Queues `batch` and returns at once (after waiting for queue space, and,
  // for a batch that is not empty, for an atomic Import that another thread
  // runs to end: include/quiver/import.h); the future completes like Write.
  virtual std::future<Result<CommitInfo>> WriteAsync(WriteBatch batch, const WriteOptions& options) = 0;
  std::future<Result<CommitInfo>> WriteAsync(WriteBatch batch) {
    return WriteAsync(std::move(batch), WriteOptions{});
  }

  // Makes every write acknowledged before the call durable: writes the
  // log records that unsynced writes (WriteOptions::sync = false) hold
  // back, in commit order, as one record, and fdatasyncs it; returns once
  // they are on disk. Ordered like a write: it goes through the commit
  // queue and completes after every batch queued before it (with nothing
  // held back it writes nothing, but still waits for those).
  // Errors, durable graphs: FailedPrecondition after a Close() that wrote
  // what was held; Poisoned after a Close() whose writing of it failed (a
  // Sync racing Close waits for Close and answers the same way);
  // DurabilityUnknown if writing or syncing the held-back records failed:
  // the graph is poisoned, the writes stay visible in this process and
  // may or may not be there after a restart; Poisoned once an earlier
  // failure stopped writes (held-back writes not written by then never
  // will be: a restart loses them). OK for an in-memory or read-only
  // graph (nothing to make durable).
  //
  // Example:
  //   for (auto& b : batches) graph->Write(std::move(b), {.sync = false}).value();
  //   quiver::Status s = graph->Sync();  // all of them on disk, or an error
  virtual Status Sync() = 0;

  // Finishes queued batches, writes and syncs what unsynced writes hold
  // back (as Sync), stops the writer, refuses later writes and, in
  // durable mode with checkpoint_on_close, writes a final checkpoint; then
  // releases the directory (its LOCK), so it may be opened again while this
  // object lives. Returns that checkpoint's status (the WAL keeps everything
  // either way), or Poisoned if a WAL failure stopped writes (earlier, or
  // writing the held-back records: those writes may then be lost).
  // Idempotent: every later call, and one that waited for a Close running
  // on another thread, returns the status of the Close that ran. A graph
  // destroyed without Close closes itself and reports a failure only to
  // Options::logger (event close_failed).
  virtual Status Close() = 0;

  // Writes a checkpoint now and waits for it. It first sends a barrier
  // through the commit queue, so it waits behind every batch queued before
  // it: the writer writes and syncs what unsynced writes hold back, then
  // hands over the version after everything queued before the call; the
  // writer keeps committing while the checkpoint is written.
  // Errors: FailedPrecondition for an in-memory graph and after Close();
  // Poisoned after a WAL failure (nothing is written then);
  // DurabilityUnknown if writing the held-back records failed (the graph
  // is poisoned, as for Sync); ResourceExhausted if the writer ran out of
  // memory at the barrier (nothing held back is lost); the I/O status if
  // writing the checkpoint failed (the WAL is kept either way). Every one
  // of these but Poisoned counts in DurabilityStats::checkpoint_failures.
  // A failed directory fsync after the checkpoint was renamed into place
  // poisons the graph, as a failed WAL fsync does.
  virtual Status Checkpoint() = 0;

  // Lays the adjacency out again as a loaded graph has it. Random inserts
  // leave each vertex's edge array wherever the allocator had room, so a
  // sweep of the graph jumps between pages (docs/impl.md, "The compactor").
  // Compact moves, for every 64 consecutive vertex ids and each direction,
  // the entries of the vertices with one edge type and at most 1,024 edges
  // in that direction into one block in id order, the layout a checkpoint
  // load gives. The graph's contents do not change: no sequence number is
  // consumed, nothing is logged, and snapshots taken before keep the
  // layout they had. A later write to a repacked vertex moves it out to an
  // array of its own again (O(its degree)).
  // Runs on the writer in steps of at most a quarter million entries (or
  // 4,096 leaves looked at; about 10 ms), each published as a version of its own in
  // the commit order, so other writes go on between the steps and wait for
  // one step at most. Returns once every vertex id below the graph's limit
  // at the call was looked at. Cost: O(vertex ids / 64 + entries moved);
  // the arrays it replaces are freed once no snapshot reaches them.
  // Errors: FailedPrecondition for a read-only graph, after Close(), or
  // from a Logger on the thread committing to this graph; ResourceExhausted
  // if memory ran out (that step changed nothing; the steps before stay; a
  // step shares its commit group with batches queued beside it, and running
  // out of memory fails the whole group, as it does for any batch);
  // Poisoned after a WAL failure.
  //
  // The graph also runs these steps itself while no write comes
  // (Options::compaction, on by default; GetCompactionStats); call Compact
  // to have the layout now, e.g. right before a sweep.
  //
  // Example:
  //   for (auto& b : batches) graph->Write(std::move(b)).value();  // random-order edges
  //   quiver::CompactStats c = graph->Compact().value();          // then sweep at load speed
  virtual Result<CompactStats> Compact() = 0;

  // What background compaction (Options::compaction) did since Open.
  virtual CompactionStats GetCompactionStats() const = 0;

  // Creates a property index and waits until it is complete. Two commits:
  // one declares the index (state kBuilding, ignored by queries), and once
  // its contents are built from a snapshot, on this thread and without
  // holding the writer up, another publishes it ready: every snapshot from
  // that one on answers through it. Both are logged (the contents never
  // are: replay and checkpoint loading rebuild them).
  // Errors: InvalidArgument for a bad spec (empty or non-UTF-8 name, label
  // or key; no keys, more than kMaxIndexKeys, a key listed twice; a declared
  // type of null or float vector), OutOfRange for a name longer than
  // Limits::max_string_bytes; AlreadyExists if an index of that name
  // exists. Then, with the declaration taken back by a drop commit (so
  // nothing changed for users): AlreadyExists naming the key and two ids if
  // a unique index's data violates it; InvalidArgument naming an element
  // whose value has another type than the spec declares; FailedPrecondition
  // if DropIndex dropped it meanwhile. The write errors of Write otherwise.
  //
  // Example:
  //   Status s = graph->CreateIndex({.name = "order_ts", .label = "Order", .keys = {"ts"},
  //                                  .kind = quiver::IndexKind::kOrdered, .type =
  //                                  quiver::ValueType::kInt64});
  virtual Status CreateIndex(const IndexSpec& spec) = 0;

  // Drops the index `name` in one commit (logged); snapshots taken before
  // keep answering through it. NotFound if there is none; dropping an index
  // still being built makes its CreateIndex fail with FailedPrecondition.
  //
  // Example:
  //   Status s = graph->DropIndex("order_ts");
  virtual Status DropIndex(std::string_view name) = 0;

  // VerifyDirectory (quiver/verify.h) on this graph's directory, while it
  // runs: the writer keeps committing meanwhile (the last segment's tail
  // may show a record being appended); checkpoints wait until it is done,
  // so no file is removed under it. Changes nothing. FailedPrecondition for
  // an in-memory graph and after Close(). options.progress runs under the
  // checkpoint lock: it must not call Checkpoint, Verify, Backup or Close
  // on this graph (a self-deadlock; see VerifyOptions::progress).
  //
  // Example:
  //   quiver::VerifyReport r = graph->Verify().value();
  //   if (!r.ok()) std::fprintf(stderr, "%s\n", r.status.ToString().c_str());
  virtual Result<VerifyReport> Verify(const VerifyOptions& options) const = 0;

  // Writes a consistent copy of the current version into directory `dir`
  // while writes continue: the version is pinned (as a snapshot is) and
  // written there as a checkpoint, then the identity file; every file is
  // synced, then `dir` and its ancestors. `Open` on `dir` then gives
  // exactly the graph as of BackupInfo::sequence (a new WAL starts there).
  // Writes of that version still held back (WriteOptions::sync = false) are
  // first made durable here, as Sync() does, so a copy never holds a write a
  // crash of this graph could still take back; if that fails, so does
  // Backup (with Sync's status), before anything is written to `dir`: a
  // graph poisoned while writes were held back cannot be backed up with
  // them (they may be lost on its restart). Like Checkpoint, Backup must
  // not be called from a Verify progress callback.
  // `dir` must be absent (it is created, with missing parents) or an empty
  // directory. The graph's own files are only read, never changed: a
  // failure anywhere in `dir` (its status is returned; what Backup wrote
  // there is removed, best effort) leaves the graph as it was, writable
  // and not poisoned. The copy is a new graph with a graph id (UUID) of
  // its own, so that its files and the original's are never taken for each
  // other's once both are written to. Errors: InvalidArgument for an empty
  // path, this graph's own directory or a path under it (also reached
  // through a symbolic link), FailedPrecondition if `dir` is not empty or
  // not a directory, the I/O status otherwise (ResourceExhausted when the
  // file system holding `dir` has less than one WAL segment free). Works
  // on read-only, in-memory and closed graphs.
  //
  // Example:
  //   quiver::BackupInfo b = graph->Backup("/backups/graph-2026-12-01").value();
  //   // later: quiver::Graph::Open(options, "/backups/graph-2026-12-01")
  virtual Result<BackupInfo> Backup(std::string_view dir, const BackupProgress& progress) = 0;
  Result<BackupInfo> Backup(std::string_view dir) { return Backup(dir, BackupProgress{}); }
  Result<VerifyReport> Verify() const { return Verify(VerifyOptions{}); }

  // Opens a change feed subscription (quiver/change_feed.h) whose first
  // batch is the one of sequence `from_sequence`: snapshot.sequence() + 1
  // continues from a snapshot; a consumer that fell behind resumes from a
  // sequence still retained (ChangeFeedOptions). While no subscription is
  // open nothing is retained in memory, so in an in-memory or read-only
  // graph an older sequence is only available while another subscription
  // kept it. A writable durable graph also resumes from its files: from any
  // sequence after the oldest checkpoint it keeps (or from 1 while its log
  // still starts there), after a reopen too. That rebuilds the state before
  // `from_sequence` in a private copy of the graph (the memory and time of
  // a reopen, paid by this call)
  // and replays the log one batch per Next until the subscription reaches
  // the in-memory window (docs/change_feed.md). The call waits behind the
  // batches queued before it (it sends an empty batch through the commit
  // queue; a synced one when it reads the log).
  // Errors (nothing changes, no subscription is opened): InvalidArgument for
  // 0; OutOfRange for a sequence past the next one to commit, and for one
  // neither the feed nor the files hold: the message names what they hold
  // and the next sequence; FailedPrecondition after Close(), or when
  // called from a Logger on the thread committing to this graph; from the
  // files, Corruption or the I/O error they give, ResourceExhausted out of
  // memory.
  //
  // Mind the gap: Subscribe(s.sequence() + 1) for a snapshot `s` taken
  // while no subscription was open finds that sequence only if no batch
  // committed in between (else OutOfRange, or, in a writable durable graph,
  // a replay from the files). To start from a snapshot, take both at once
  // with SubscribeWithSnapshot().
  //
  // Example (resuming a consumer that recorded the last sequence it applied):
  //   auto sub = graph->Subscribe(last_applied + 1).value();
  virtual Result<std::unique_ptr<ChangeSubscription>> Subscribe(SequenceNumber from_sequence) = 0;
  // A subscription from now: its first batch is the first one committed
  // after the batches queued before the call (sub->next_sequence() says
  // which sequence that is).
  virtual Result<std::unique_ptr<ChangeSubscription>> Subscribe() = 0;
  // A snapshot and a subscription that continues exactly from it (its first
  // batch is snapshot.sequence() + 1), taken together, so no batch falls
  // between them: how a consumer that loads its state from a snapshot
  // starts following the feed. Errors as Subscribe() (FailedPrecondition
  // after Close(); ResourceExhausted out of memory).
  //
  // Example:
  //   auto start = graph->SubscribeWithSnapshot().value();
  //   LoadBalances(start.snapshot);                  // the state at start.snapshot.sequence()
  //   auto next = start.subscription->Next(std::chrono::milliseconds(100));
  struct SnapshotAndSubscription {
    Snapshot snapshot;
    std::unique_ptr<ChangeSubscription> subscription;
  };
  virtual Result<SnapshotAndSubscription> SubscribeWithSnapshot() = 0;

  virtual MemoryStats GetMemoryStats() const = 0;
  virtual OpenStats GetOpenStats() const = 0;
  virtual DurabilityStats GetDurabilityStats() const = 0;
};

}  // namespace quiver

#endif  // QUIVER_GRAPH_H_
