#include "graph_impl.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <memory>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "base/durability_faults.h"
#include "base/parallel.h"
#include "base/strings.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/checkpoint_writer.h"
#include "checkpoint/chunk_pipeline.h"
#include "env/path.h"
#include "feed/log_replay.h"
#include "graph_impl_util.h"
#include "index/index_build.h"
#include "index/index_keys.h"
#include "index/online_build.h"
#include "recovery.h"
#include "snapshot_internal.h"
#include "storage/packed_adjacency.h"
#include "verify.h"
#include "wal/wal_reader.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

// `name` must lie in [lo, hi]; the message names the field and its bounds.
Status CheckRange(std::string_view name, std::uint64_t value, std::uint64_t lo, std::uint64_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return InvalidArgumentError(base::StrCat("option ", name, " is ", value, "; it must be ", lo, " to ", hi));
}

// The bounds options.h states beside each field. Nothing is clamped: a
// value out of bounds is the caller's mistake, and saying so beats running
// with a value the caller did not choose.
Status CheckOptions(const Options& o) {
  if (o.durability != Durability::kDurable && o.durability != Durability::kVolatile)
    return InvalidArgumentError(
        base::StrCat("option durability is ", static_cast<int>(o.durability), ", not a Durability"));
  const Limits& l = o.limits;
  QUIVER_RETURN_IF_ERROR(CheckRange("max_string_bytes", l.max_string_bytes, 1, kMaxPropertyBytesCeiling));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_vector_dims", l.max_vector_dims, 0, kMaxPropertyBytesCeiling / 4));
  QUIVER_RETURN_IF_ERROR(
      CheckRange("max_list_elements", l.max_list_elements, 0, kMaxPropertyBytesCeiling / 4));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_batch_ops", l.max_batch_ops, 1, kMaxBatchOpsCeiling));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_properties_per_element", l.max_properties_per_element, 1,
                                    kMaxPropertyBytesCeiling / 16));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_property_bytes_per_element", l.max_property_bytes_per_element, 1,
                                    kMaxPropertyBytesCeiling));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_degree", l.max_degree, 1, kMaxDegreeCeiling));
  const WriterOptions& w = o.writer;
  constexpr std::uint64_t kAny = ~std::uint64_t{0};
  QUIVER_RETURN_IF_ERROR(CheckRange("max_queued_batches", w.max_queued_batches, 1, kMaxQueuedBatchesCeiling));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_queued_bytes", w.max_queued_bytes, 1, kAny));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_group_batches", w.max_group_batches, 1, kMaxQueuedBatchesCeiling));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_group_ops", w.max_group_ops, 1, kAny));
  QUIVER_RETURN_IF_ERROR(CheckRange("spin_microseconds", w.spin_microseconds, 0, kMaxSpinMicroseconds));
  QUIVER_RETURN_IF_ERROR(CheckRange("background_nice", o.background_nice, 0, kMaxBackgroundNice));
  QUIVER_RETURN_IF_ERROR(CheckRange("compaction.idle_milliseconds", o.compaction.idle_milliseconds, 1,
                                    kMaxCompactionIdleMilliseconds));
  QUIVER_RETURN_IF_ERROR(CheckRange("change_feed.max_retained_batches", o.change_feed.max_retained_batches, 1,
                                    kMaxRetainedBatchesCeiling));
  QUIVER_RETURN_IF_ERROR(
      CheckRange("change_feed.max_retained_bytes", o.change_feed.max_retained_bytes, 1, kAny));
  if (o.durability == Durability::kVolatile) return Status::Ok();
  const DurableOptions& d = o.durable;
  QUIVER_RETURN_IF_ERROR(
      CheckRange("wal_segment_bytes", d.wal_segment_bytes, kMinWalSegmentBytes, kMaxWalSegmentBytes));
  if (d.checkpoint_wal_bytes != 0)
    QUIVER_RETURN_IF_ERROR(
        CheckRange("checkpoint_wal_bytes", d.checkpoint_wal_bytes, kMinCheckpointWalBytes, kAny));
  QUIVER_RETURN_IF_ERROR(CheckRange("io_threads", d.io_threads, 0, kMaxIoThreads));
  QUIVER_RETURN_IF_ERROR(CheckRange("max_unsynced_bytes", d.max_unsynced_bytes, 0, kMaxUnsyncedBytesCeiling));
  // Permission bits only (no setuid, setgid or sticky bit on a graph's
  // files), and the owner must read and write them, or the graph could not
  // be opened again.
  if ((d.file_mode & ~std::uint32_t{0777}) != 0 || (d.file_mode & 0600) != 0600) {
    char octal[16];
    const auto end = std::to_chars(octal, octal + sizeof(octal), d.file_mode, 8).ptr;
    return InvalidArgumentError(
        base::StrCat("option file_mode is 0", std::string_view(octal, end - octal),
                     ": permission bits only (at most 0777), with owner read and write"));
  }
  return Status::Ok();
}

// Threads an online index build sorts on (CreateIndex): the caller's and one more.
constexpr unsigned kIndexBuildThreads = 2;

// Backup's answer when memory runs out; built with the graph, so that giving
// it allocates nothing.
const Status& BackupOutOfMemory() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted, "Backup: out of memory; what it wrote into the directory was removed"));
  return *s;
}

// Open's answer when the graph's threads cannot be started (the process is
// at its thread or memory limit): built before main, so that giving it
// allocates nothing.
const Status& OpenNoThreads() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted,
      "Open: cannot start the graph's threads; the graph was not opened (a new directory may have been "
      "created, and recovery's repairs stand)"));
  return *s;
}
[[maybe_unused]] const bool open_no_threads_built = (OpenNoThreads(), true);

// Subscribe's answer on a closed graph, made before main (it allocates
// nothing, on a path that must not throw).
const Status& SubscribeOnClosedGraph() {
  static const Status* const s =
      new Status(internal::ImmortalStatus(StatusCode::kFailedPrecondition, "Subscribe: the graph is closed"));
  return *s;
}
[[maybe_unused]] const bool subscribe_on_closed_graph_built = (SubscribeOnClosedGraph(), true);

// CreateIndex's answer when it runs out of memory or threads: built once,
// as the graph opens, so that giving it allocates nothing.
const Status& IndexBuildExhaustedStatus() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted, "CreateIndex: out of memory (or threads); the index was not created"));
  return *s;
}

// The kDropIndex that takes back the index CreateIndex declares, made
// before it declares: taking the declaration back then needs no memory on
// the caller's thread.
class DeclarationUndo {
 public:
  explicit DeclarationUndo(const std::string& name) : op_(std::make_shared<IndexOp>()) {
    op_->spec.name = name;
    WriteBatch drop;
    internal::WriteBatchInternal::AppendSharedIndexOp(drop, OpKind::kDropIndex, op_);
    request_ = std::make_unique<WriteRequest>(std::move(drop), /*async=*/false);
  }

  // Drops the index declared at `declared` and waits for it. Queued, never
  // led: the writer thread commits it, so this thread allocates nothing.
  // If the queue is closed, or the writer too is out of memory, the
  // declaration stays (a durable graph's next Open builds it).
  void Run(CommitQueue& queue, SequenceNumber declared) noexcept {
    op_->declared = declared;  // nobody else reads it before Push
    WriteRequest* r = request_.release();
    bool queued = false;
    try {
      queued = queue.Push(r).ok();
    } catch (...) {
      // Not queued (only the closed queue's message allocates).
    }
    if (!queued) {
      delete r;
      return;
    }
    // NotFound if DropIndex was first; a write failure is the graph's to report.
    Result<CommitInfo> done = queue.Wait(r);
    (void)done;
  }

 private:
  std::shared_ptr<IndexOp> op_;
  std::unique_ptr<WriteRequest> request_;
};

}  // namespace

Graph::~Graph() = default;

Result<std::unique_ptr<Graph>> Graph::Open(const Options& options, std::string_view dir) {
  if (options.durability == Durability::kVolatile) return OpenInMemory(options);
  try {
    if (options.durable.file_mode == env::kDefaultFileMode)
      return GraphImpl::OpenDurable(options, std::string(dir), env::PosixFileSystem());
    std::unique_ptr<env::FileSystem> fs = env::NewPosixFileSystem(options.durable.file_mode);
    env::FileSystem* raw = fs.get();
    return GraphImpl::OpenDurable(options, std::string(dir), raw, std::move(fs));
  } catch (const std::bad_alloc&) {  // the directory's name, the file system
    return OpenOutOfMemory();
  }
}

Result<VerifyReport> VerifyDirectory(std::string_view dir, const VerifyOptions& options) {
  return VerifyGraphDirectory(env::PosixFileSystem(), std::string(dir), options);
}

namespace {

// Shuts down a chain that no GraphImpl took: every return before the graph
// is made, and an exception on the way (OpenInMemory's new chain, a
// recovered one).
struct RecoveredChainGuard {
  storage::VersionChain* chain;
  ~RecoveredChainGuard() {
    if (chain != nullptr) chain->Shutdown();
  }
};

}  // namespace

Result<std::unique_ptr<Graph>> Graph::OpenInMemory(const Options& options) {
  Options o = options;  // copies a shared_ptr: allocates nothing
  o.durability = Durability::kVolatile;
  QUIVER_RETURN_IF_ERROR(CheckOptions(o));
  try {
    RecoveredChainGuard guard{new storage::VersionChain()};
    std::unique_ptr<Graph> graph(new GraphImpl(o, guard.chain, 0, nullptr));
    guard.chain = nullptr;  // the graph's now
    return graph;
  } catch (const std::bad_alloc&) {
    return OpenOutOfMemory();
  } catch (const std::system_error&) {  // no thread to be had
    return OpenNoThreads();
  }
}

namespace {

// "cannot open graph directory <dir>: <what went wrong>", same code.
Status InDirectory(const std::string& dir, const Status& s) {
  return Status(s.code(), base::StrCat("cannot open graph directory ", dir, ": ", s.message()));
}

// Why a writable Open could not take LOCK (`refused`, FailedPrecondition):
// another writable handle holds it, or read-only Opens recovering (they
// hold it shared, only while they recover): told apart by whether a shared
// lock can be had now (taken and dropped at once).
Status WriterLockRefusal(env::FileSystem* fs, const std::string& dir, const std::string& lock_path,
                         const Status& refused) {
  const bool readers = fs->LockFile(lock_path, env::LockMode::kShared).ok();
  return FailedPreconditionError(base::StrCat(
      "cannot open graph directory ", dir, ": ",
      readers ? "a read-only Open is reading it (it holds LOCK shared while it recovers); retry once it has "
                "opened"
              : "another writable handle has it open; close it first",
      " (", refused.message(), ")"));
}

}  // namespace

Status GraphImpl::CheckDirectory(const Options& options, const std::string& dir,
                                 const graphdir::DirState& state, env::FileSystem* fs) {
  using graphdir::DirKind;
  // The identity file first: a newer Quiver's directory may hold files this
  // build does not even recognise, and must not be taken for anything.
  if (state.identity) QUIVER_RETURN_IF_ERROR(graphdir::CheckIdentity(fs, dir));
  switch (state.kind) {
    case DirKind::kMissing:
    case DirKind::kEmpty:
      if (!options.create_if_missing)
        return NotFoundError(base::StrCat("no graph in ", dir,
                                          state.kind == DirKind::kMissing ? " (no such directory)" : "",
                                          " and create_if_missing is false"));
      return Status::Ok();
    case DirKind::kForeign:
      // Never lock, adopt or clean somebody else's directory.
      return FailedPreconditionError(base::StrCat(dir, " is not a Quiver graph directory: it holds \"",
                                                  state.foreign_name,
                                                  "\", which Quiver did not write, and no identity file "
                                                  "(QUIVER); open a new or empty directory instead"));
    case DirKind::kGraph:
    case DirKind::kLegacy:
      if (options.error_if_exists)
        return AlreadyExistsError(
            base::StrCat("a graph already exists in ", dir, " and error_if_exists is true"));
      break;
  }
  if (state.kind == DirKind::kGraph) QUIVER_RETURN_IF_ERROR(graphdir::CheckNewestSegment(fs, dir));
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  return graphdir::CheckFormatVersions(fs, dir, names);
}

Result<graphdir::DirKind> GraphImpl::PrepareDirectory(const Options& options, DurableState& d) {
  using graphdir::DirKind;
  const std::string& dir = d.dir;
  if (dir.empty()) return InvalidArgumentError("Graph::Open: the directory path is empty");
  // Everything that reading alone can refuse is refused before LOCK is
  // taken (or the directory created), so a refused Open creates nothing.
  Result<graphdir::DirState> state = graphdir::Inspect(d.fs, dir);
  if (!state.ok()) return InDirectory(dir, state.status());
  QUIVER_RETURN_IF_ERROR(CheckDirectory(options, dir, *state, d.fs));
  if (state->kind == DirKind::kMissing) {
    Status s = graphdir::CreateDirDurably(
        d.fs, dir, !base::DurabilityFaultOn(&base::DurabilityFaults::skip_parent_sync));
    if (!s.ok()) return InDirectory(dir, s);
  }
  const std::string lock_path = env::JoinPath(dir, graphdir::kLockFileName);
  Result<bool> lock_existed = d.fs->Exists(lock_path);
  if (!lock_existed.ok()) return InDirectory(dir, lock_existed.status());
  Result<std::unique_ptr<env::FileLock>> lock = d.fs->LockFile(lock_path, env::LockMode::kExclusive);
  if (!lock.ok() && lock.status().code() == StatusCode::kFailedPrecondition)
    return WriterLockRefusal(d.fs, dir, lock_path, lock.status());
  if (!lock.ok()) return InDirectory(dir, lock.status());
  d.lock = std::move(*lock);
  // Again under the lock: another process may have created or changed the
  // graph between the first look and the lock.
  state = graphdir::Inspect(d.fs, dir);
  Status s = state.ok() ? CheckDirectory(options, dir, *state, d.fs) : InDirectory(dir, state.status());
  if (!s.ok()) {
    // Refused after all: take back the LOCK file this Open created (while
    // still holding the lock, so nobody can be holding that file).
    if (!*lock_existed) d.fs->Remove(lock_path).IgnoreError();
    d.lock.reset();
    return s;
  }
  return state->kind;
}

Result<std::unique_ptr<Graph>> GraphImpl::OpenDurable(const Options& options, const std::string& dir,
                                                      env::FileSystem* fs,
                                                      std::unique_ptr<env::FileSystem> owned_fs) {
  try {
    return OpenDurableOrThrow(options, dir, fs, std::move(owned_fs));
  } catch (const std::bad_alloc&) {
    return OpenOutOfMemory();  // allocates nothing
  } catch (const std::system_error&) {
    // The graph's threads (GraphImpl's constructor, which stopped those it
    // had started); the lock and the recovered chain were let go on the way.
    return OpenNoThreads();
  }
}

Result<std::unique_ptr<Graph>> GraphImpl::OpenDurableOrThrow(const Options& options, const std::string& dir,
                                                             env::FileSystem* fs,
                                                             std::unique_ptr<env::FileSystem> owned_fs) {
  auto start = std::chrono::steady_clock::now();
  QUIVER_RETURN_IF_ERROR(CheckOptions(options));
  auto durable = std::make_unique<DurableState>();
  durable->owned_fs = std::move(owned_fs);
  durable->fs = fs;
  durable->dir = dir;
  if (options.read_only) return OpenReadOnly(options, std::move(durable), start);
  QUIVER_ASSIGN_OR_RETURN(graphdir::DirKind kind, PrepareDirectory(options, *durable));
  QUIVER_ASSIGN_OR_RETURN(RecoveredState rs, Recover(fs, dir, options));
  RecoveredChainGuard guard{rs.chain};
  durable->uuid = rs.uuid;
  durable->last_checkpoint = rs.last_checkpoint;
  durable->previous_checkpoint = rs.last_checkpoint;
  Status s;
  if (kind != graphdir::DirKind::kGraph) {
    // A new graph, or one made before the identity file (adopted): write
    // the identity file before the first segment, and make the directory's
    // own name, and every ancestor's, durable in its parent: an earlier
    // Open may have created some of them and died before syncing their
    // parents, and this one found them present (CreateDirDurably syncs only
    // what it creates).
    s = graphdir::WriteIdentity(fs, dir);
    if (s.ok() && !base::DurabilityFaultOn(&base::DurabilityFaults::skip_parent_sync))
      s = graphdir::SyncAncestors(fs, dir);
  }
  // Recovery already made the replayed groups durable (it wrote their
  // segments again, docs/durability.md), so Open costs O(WAL tail) and
  // writes no checkpoint.
  durable->wal = std::make_unique<wal::WalWriter>(fs, dir, rs.uuid, options.durable.wal_segment_bytes,
                                                  &durable->wal_preallocation_failures);
  if (s.ok()) {
    s = rs.last_segment != 0 ? durable->wal->ReopenSegment(rs.last_segment, rs.last_segment_size)
                             : durable->wal->StartSegment(rs.next_segment, rs.stats.recovered_sequence + 1);
  }
  if (s.ok()) {
    // SEGMENTS already names the segment when this Open appends to the one
    // the last process left: then there is nothing to write.
    Result<std::optional<std::uint64_t>> recorded = graphdir::ReadNewestSegment(fs, dir);
    s = recorded.status();
    if (s.ok() && *recorded != std::optional<std::uint64_t>(durable->wal->segment_number()))
      s = graphdir::RecordNewestSegment(fs, dir, durable->wal->segment_number());
  }
  if (!s.ok()) return s;
  durable->open_stats = rs.stats;
  durable->open_stats.open_microseconds = MicrosSince(start);
  {
    base::MutexLock lock(&durable->segments_mu);
    SequenceNumber current_first =
        rs.last_segment != 0 ? rs.segment_first[rs.last_segment] : rs.stats.recovered_sequence + 1;
    durable->segment_first = std::move(rs.segment_first);
    durable->segment_first[durable->wal->segment_number()] = current_first;
  }
  if (rs.last_checkpoint != 0 && !rs.stats.used_previous_checkpoint && !rs.stats.salvaged) {
    // A kill between a new checkpoint and the old one's removal leaves
    // three; keep the newest two.
    s = PruneAtOpen(*durable, rs.last_checkpoint);
  }
  if (!s.ok()) return s;
  // A segment this Open started holds its header page, which the next Open
  // counts too (as AppendAndSync counts the header of a segment it starts).
  const std::uint64_t started = rs.last_segment == 0 ? durable->wal->segment_size() : 0;
  auto* g = new GraphImpl(options, rs.chain, rs.epoch, std::move(durable));
  guard.chain = nullptr;  // the graph's now
  // Appending to a segment the newest checkpoint covers whole (a clean
  // Close, say): the next group starts a segment of its own, as after a
  // checkpoint this process wrote, so an Open after a crash rewrites the
  // tail, not the covered segment. Set before any Write can reach the
  // writer's role (the queue's lock orders it before the first group).
  if (rs.last_segment != 0 && rs.last_checkpoint != 0 && rs.last_checkpoint == rs.stats.recovered_sequence &&
      g->durable_->wal->RotateAfterCheckpoint())
    g->rotate_before_next_group_ = true;
  {
    base::MutexLock lock(&g->stats_mu_);
    g->wal_bytes_since_checkpoint_ += rs.wal_bytes_read + started;  // the log Open found, and started
  }
  std::unique_ptr<Graph> graph(g);
  g->LogOpenFindings();
  // Indexes the log declared and their data violates: dropped by a logged
  // commit, so a later open does not find them again (and Open never fails
  // for them; OpenStats::dropped_indexes says why). A failed write is the
  // graph's to report, as for any write.
  for (auto& [name, declared] : rs.indexes_to_drop) {
    IndexOp drop;
    drop.spec.name = name;
    drop.declared = declared;
    g->Write(internal::WriteBatchInternal::IndexBatch(OpKind::kDropIndex, std::move(drop)))
        .status()
        .IgnoreError();
  }
  // An import into this graph was cut short (a crash, or a failure it
  // could not undo): it is undone, durably, before anyone else writes.
  if (rs.import_journal) {
    Status undo = g->UndoImport(*rs.import_journal);
    if (undo.ok()) undo = graphdir::RemoveImportJournal(g->durable_->fs, g->durable_->dir);
    if (!undo.ok())
      return Status(undo.code(), base::StrCat("Open: undoing an import that was cut short: ", undo.message(),
                                              " (its rollback record stays; Open undoes it next time)"));
    g->durable_->open_stats.import_undone = true;
  }
  return graph;
}

Status GraphImpl::ReadOnlyError(std::string_view what) {
  return FailedPreconditionError(
      base::StrCat(what, ": the graph was opened read-only (Options::read_only); nothing is written"));
}

Result<std::unique_ptr<Graph>> GraphImpl::OpenReadOnly(const Options& options,
                                                       std::unique_ptr<DurableState> d,
                                                       std::chrono::steady_clock::time_point start) {
  const std::string& dir = d->dir;
  if (dir.empty()) return InvalidArgumentError("Graph::Open: the directory path is empty");
  const std::string lock_path = env::JoinPath(dir, graphdir::kLockFileName);
  // One reading of the directory: the recovered state, or nullopt if a
  // writer started while a directory without LOCK was read (whatever that
  // reading found, error or not, is void: files may have changed under it).
  auto attempt = [&]() -> Result<std::optional<RecoveredState>> {
    Result<graphdir::DirState> state = graphdir::Inspect(d->fs, dir);
    if (!state.ok()) return InDirectory(dir, state.status());
    // Nothing is created: a directory without a graph is NotFound whatever
    // create_if_missing says. A valid identity file alone (a graph whose
    // creation stopped before its first segment, or the backup of an empty
    // graph) is the empty graph: no commit was ever acknowledged there.
    Options check = options;
    check.create_if_missing = state->kind == graphdir::DirKind::kEmpty && state->identity;
    check.error_if_exists = false;
    QUIVER_RETURN_IF_ERROR(CheckDirectory(check, dir, *state, d->fs));
    // LOCK, if the file exists, shared for the length of the recovery: a
    // writable handle (which holds it exclusively) could remove or rename
    // files under the reader; other readers hold it shared too. A shared
    // lock opens LOCK read-only and never creates it, so a read-only file
    // system will do. A missing LOCK means no writer is running: every
    // writable Open creates LOCK before it changes anything and never
    // removes it afterwards; one that starts meanwhile is detected below.
    Result<bool> lock_existed = d->fs->Exists(lock_path);
    if (!lock_existed.ok()) return InDirectory(dir, lock_existed.status());
    std::unique_ptr<env::FileLock> lock;
    if (*lock_existed) {
      Result<std::unique_ptr<env::FileLock>> l = d->fs->LockFile(lock_path, env::LockMode::kShared);
      if (!l.ok() && l.status().code() == StatusCode::kFailedPrecondition)
        return FailedPreconditionError(base::StrCat(
            "cannot open graph directory ", dir, " read-only: a writable handle has it open (",
            l.status().message(),
            "); its checkpoints remove and rename files under a reader. Close it first, or use Verify"));
      // Gone since Exists: a writable Open refused at its second look took
      // back the LOCK it had created. Read as a directory without LOCK.
      if (!l.ok() && l.status().code() == StatusCode::kNotFound) {
        *lock_existed = false;
      } else if (!l.ok()) {
        return InDirectory(dir, l.status());
      } else {
        lock = std::move(*l);
      }
    }
    Result<RecoveredState> rs = Recover(d->fs, dir, options);
    if (!*lock_existed) {
      Result<bool> appeared = d->fs->Exists(lock_path);
      if (!appeared.ok() || *appeared) {
        if (rs.ok()) rs->chain->Shutdown();
        if (!appeared.ok()) return InDirectory(dir, appeared.status());
        return std::optional<RecoveredState>();
      }
    }
    QUIVER_RETURN_IF_ERROR(rs.status());
    return std::optional<RecoveredState>(std::move(*rs));
  };
  // A writer that started meanwhile left LOCK behind, so the next attempt
  // takes it shared: refused while that writer runs, a consistent reading
  // once it has closed. LOCK disappears again only when a writable Open is
  // refused at its second look, so a third attempt is needed only when
  // Opens keep racing this one.
  constexpr int kReadOnlyAttempts = 3;
  std::optional<RecoveredState> recovered;
  for (int i = 0; i < kReadOnlyAttempts && !recovered; ++i) {
    QUIVER_ASSIGN_OR_RETURN(recovered, attempt());
  }
  if (!recovered)
    return FailedPreconditionError(base::StrCat("cannot open graph directory ", dir,
                                                " read-only: writable Opens kept starting while it was "
                                                "being read; retry"));
  RecoveredState& rs = *recovered;
  RecoveredChainGuard guard{rs.chain};
  d->uuid = rs.uuid;
  d->last_checkpoint = rs.last_checkpoint;
  d->previous_checkpoint = rs.last_checkpoint;
  d->open_stats = rs.stats;
  d->open_stats.open_microseconds = MicrosSince(start);
  // Indexes the log declared whose data violates them stay declared and
  // unbuilt (queries ignore them): dropping them would be a write.
  auto* g = new GraphImpl(options, rs.chain, rs.epoch, std::move(d));
  guard.chain = nullptr;  // the graph's now
  {
    base::MutexLock lock(&g->stats_mu_);
    g->wal_bytes_since_checkpoint_ += rs.wal_bytes_read;  // the log Open found
  }
  std::unique_ptr<Graph> graph(g);
  g->LogOpenFindings();
  if (rs.import_journal) {
    QUIVER_RETURN_IF_ERROR(g->UndoImportInMemory(*rs.import_journal));
    g->durable_->open_stats.import_undone = true;
    g->import_record_left_.store(true);  // a Backup of this view would not match the directory
  }
  return graph;
}

GraphImpl::GraphImpl(const Options& options, storage::VersionChain* chain, std::uint64_t epoch,
                     std::unique_ptr<DurableState> durable)
    : options_(options),
      chain_(chain),
      durable_(std::move(durable)),
      read_only_(durable_ != nullptr && options.read_only),
      queue_(options.writer.max_queued_batches, options.writer.spin_microseconds,
             options.writer.max_queued_bytes),
      // Room for the largest group, as the writer thread's (below).
      leader_(this, std::min(options.writer.max_group_batches, options.writer.max_queued_batches),
              options.writer.max_group_ops),
      feed_(std::make_shared<feed::ChangeFeed>(options.change_feed)),
      processor_(options.limits),
      epoch_(epoch) {
  // Built now, so the writer can give these answers with no memory left.
  OutOfMemoryStatus().IgnoreError();
  IndexBuildExhaustedStatus().IgnoreError();
  PoisonedStatus().IgnoreError();
  DurabilityUnknownStatus().IgnoreError();
  checkpoint::CheckpointOutOfMemory().IgnoreError();
  BackupOutOfMemory().IgnoreError();
  if (durable_ != nullptr) {
    // What Open recovered is on disk (a writable Open syncs the tail it
    // replayed).
    const storage::Version* head = chain_->Acquire();
    durable_sequence_.store(head->roots.sequence);
    chain_->Release(head);
  }
  if (read_only_) {
    // Nothing to write: no writer thread, no checkpoint thread.
    base::MutexLock lock(&checkpoint_mu_);
    last_checkpoint_ = durable_->last_checkpoint;
    return;
  }
  if (durable_ != nullptr) {
    current_segment_.store(durable_->wal->segment_number());
    base::MutexLock lock(&checkpoint_mu_);
    last_checkpoint_ = durable_->last_checkpoint;
    previous_checkpoint_ = durable_->previous_checkpoint;
    base::MutexLock stats_lock(&stats_mu_);
    checkpoint_stats_.last_checkpoint_sequence = last_checkpoint_;
  }
  // Room for the largest group (it cannot hold more than the queue does),
  // reserved here, before the writer thread runs: PopGroup then never
  // allocates, so running out of memory there cannot take the writer thread
  // down, even when its first group comes long after Open (a producer alone
  // commits on its own thread, WriterOptions::caller_commits).
  std::vector<WriteRequest*> group;
  group.reserve(std::max<std::size_t>(
      1, std::min(options_.writer.max_group_batches, options_.writer.max_queued_batches)));
  // The compactor first: it commits nothing before batches of at least
  // after_changes operations were, so it waits for the writer; and if a
  // thread below cannot be had, it is stopped and joined with the others.
  if (CompactsInBackground()) {
    compactor_ = std::thread([this] { CompactorLoop(); });
    compactor_started_ = true;
  }
  try {
    writer_ = std::thread([this, group = std::move(group)]() mutable { WriterLoop(std::move(group)); });
  } catch (...) {
    StopCompactor();
    throw;
  }
  if (durable_ == nullptr) return;
  try {
    checkpointer_ = std::thread([this] { CheckpointLoop(); });
  } catch (...) {
    // No checkpoint thread to be had (its state's allocation, or the
    // thread itself): the compactor and the writer, which has nothing
    // queued, stop and are joined before the members go, or a running
    // thread's destructor would terminate the process. Open reports the
    // exception.
    StopCompactor();
    queue_.Close();
    writer_.join();
    throw;
  }
}

GraphImpl::~GraphImpl() {
  bool ran = false;
  Status closed = CloseOnce(&ran);
  // Nobody else can be told: a failed Close run by the destructor (its
  // final flush of held-back writes, or its checkpoint) is logged.
  if (ran && !closed.ok() && durable_ != nullptr)
    LogEvent(LogLevel::kError, "close_failed", [&] {
      return base::StrCat(durable_->dir, ": closing the graph (in its destructor) failed",
                          poisoned_.load() ? "; unsynced writes acknowledged before may be lost: " : ": ",
                          closed.ToString());
    });
  chain_->Shutdown();
}

Snapshot GraphImpl::GetSnapshot() const { return SnapshotInternal::Make(chain_->AcquirePin()); }

namespace {

Status CalledWhileCommitting(std::string_view call) {
  return FailedPreconditionError(base::StrCat(
      call,
      ": called on a thread that is committing to this graph (from a Logger callback?); it would "
      "wait for itself"));
}

}  // namespace

Result<CommitInfo> GraphImpl::Write(WriteBatch batch, const WriteOptions& options) {
  if (read_only_) return ReadOnlyError("Write");
  if (t_graph_committing_here == this) return CalledWhileCommitting("Write");
  ImportGate gate(this, !batch.empty());
  WriteRequest* r = nullptr;
  try {
    r = new WriteRequest(std::move(batch), /*async=*/false, options.sync);
  } catch (const std::bad_alloc&) {
    return OutOfMemoryStatus();  // no exception crosses the API; nothing was queued
  }
  return CommitAndWait(r);
}

Result<CommitInfo> GraphImpl::CommitAndWait(WriteRequest* r) {
  // Nobody else is committing: commit on this thread (CommitQueue, "Caller
  // commits"); Wait then returns at once.
  if (options_.writer.caller_commits && queue_.TryLead(r)) {
    LeadGroup(r);
    return queue_.Wait(r);
  }
  // Queued behind others: while it waits, this producer may commit what
  // is queued itself (CommitQueue, "Producers lead queued groups").
  Status s = queue_.Push(r, options_.writer.caller_commits ? &leader_ : nullptr);
  if (!s.ok()) {
    delete r;
    return s;
  }
  return queue_.Wait(r);
}

Status GraphImpl::Sync() {
  // Nothing is ever held back there: nothing to make durable.
  if (durable_ == nullptr || read_only_) return Status::Ok();
  if (t_graph_committing_here == this) return CalledWhileCommitting("Sync");
  // An empty synced request: its group writes and syncs what is held back.
  auto* r = new WriteRequest(WriteBatch(), /*async=*/false, /*sync=*/true);
  if (Status s = queue_.Push(r); !s.ok()) {
    delete r;
    // The queue refuses only once Close began: Close waits (call_once) for
    // the Close that runs, whose writer wrote what was held back, and says
    // how that went.
    Close().IgnoreError();
    if (poisoned_.load())
      return Status(StatusCode::kPoisoned,
                    "Sync: the graph is closed after a WAL failure; unsynced writes may be lost");
    return FailedPreconditionError("Sync: the graph is closed (Close wrote what was held back)");
  }
  return queue_.Wait(r).status();
}

Result<CompactStats> GraphImpl::Compact() {
  if (read_only_) return ReadOnlyError("Compact");
  if (t_graph_committing_here == this) return CalledWhileCommitting("Compact");
  // Vertices added meanwhile are left for a later call. The changes
  // committed so far are this call's: the compactor's next pass waits for
  // new ones.
  ConsumeChanges();
  const std::uint64_t end = GetSnapshot().vertex_id_limit();
  storage::RepackProgress progress;
  if (const std::uint64_t e = compact_step_entries_.load()) progress.step_entries = e;
  if (const std::uint64_t l = compact_step_leaves_.load()) progress.step_leaves = l;
  CompactStats stats;
  while (progress.next < end) {
    QUIVER_RETURN_IF_ERROR(CompactStep(&progress, end));
    ++stats.steps;
  }
  stats.blocks = progress.blocks;
  stats.entries = progress.entries;
  return stats;
}

Status GraphImpl::CompactStep(storage::RepackProgress* progress, std::uint64_t end, bool alone) {
  // One step per request, committed as a write is; the writer's role
  // holder advances `progress` before it completes the request
  // (WriteRequest::set_compact).
  WriteRequest* r = nullptr;
  try {
    r = new WriteRequest(WriteBatch(), /*async=*/false, /*sync=*/false);
  } catch (const std::bad_alloc&) {
    return OutOfMemoryStatus();
  }
  r->set_compact(progress, end, alone);
  return CommitAndWait(r).status();
}

std::future<Result<CommitInfo>> GraphImpl::WriteAsync(WriteBatch batch, const WriteOptions& options) {
  auto* r = new WriteRequest(std::move(batch), /*async=*/true, options.sync);
  std::future<Result<CommitInfo>> f = r->future();
  if (read_only_) {
    r->Complete(ReadOnlyError("WriteAsync"));
    return f;
  }
  if (t_graph_committing_here == this) {  // Push may wait for room the writer makes
    r->Complete(CalledWhileCommitting("WriteAsync"));
    return f;
  }
  Status s;
  {
    ImportGate gate(this, !r->batch().empty());
    s = queue_.Push(r);
  }
  if (!s.ok()) r->Complete(std::move(s));
  return f;
}

// --- Imports undone whole if they fail

namespace {

// The graph whose import this thread runs (GraphImpl::BeginImport).
thread_local const GraphImpl* t_import_thread = nullptr;

// Removals per batch of an undo: bounded memory, and few commits.
constexpr std::size_t kUndoBatchOps = 1 << 16;

}  // namespace

GraphImpl::ImportGate::ImportGate(GraphImpl* g, bool enter) : g_(nullptr) {
  if (!enter || t_import_thread == g) return;
  base::MutexLock lock(&g->gate_mu_);
  while (g->import_running_) g->gate_cv_.Wait();
  ++g->gate_inside_;
  g_ = g;
}

GraphImpl::ImportGate::~ImportGate() {
  if (g_ == nullptr) return;
  base::MutexLock lock(&g_->gate_mu_);
  if (--g_->gate_inside_ == 0) g_->gate_cv_.SignalAll();
}

Status GraphImpl::BeginImport(const std::vector<std::string>& indexes) {
  if (read_only_) return ReadOnlyError("Import");
  {
    base::MutexLock lock(&gate_mu_);
    while (import_running_ && !closing_) gate_cv_.Wait();
    if (closing_) return FailedPreconditionError("Import: the graph is closed");
    import_running_ = true;  // from now on nobody else enters
    while (gate_inside_ > 0) gate_cv_.Wait();
  }
  outer_import_thread_ = t_import_thread;  // an import into another graph this thread runs
  t_import_thread = this;
  Status s;
  try {
    s = BeginImportGated(indexes);
  } catch (const std::bad_alloc&) {
    // The record may be on disk already (the allocation failed after its
    // rename): it goes, or nobody else may write.
    s = OutOfMemoryStatus();
    bool gone = durable_ == nullptr;
    try {
      gone = gone || graphdir::RemoveImportJournal(durable_->fs, durable_->dir).ok();
    } catch (const std::bad_alloc&) {
    }
    if (!gone) {
      import_record_left_.store(true);
      Poison("an import's rollback record could not be removed", s);
    }
  }
  if (!s.ok()) ReleaseImportGate();
  return s;
}

Status GraphImpl::BeginImportGated(const std::vector<std::string>& indexes) {
  // Whatever was queued before the gate closed commits (and, durable, is
  // synced) before the limits are read: none of it is the import's.
  QUIVER_RETURN_IF_ERROR(Write(WriteBatch(), WriteOptions{.sync = true}).status());
  graphdir::ImportJournal journal;
  {
    PinnedVersion head(chain_);
    journal.vertex_limit = head.roots().vertex_limit;
    journal.edge_limit = head.roots().edge_limit;
    for (const std::string& name : indexes)
      if (head.roots().catalog->Find(name) == nullptr) journal.indexes.push_back(name);
  }
  if (graphdir::EncodeImportJournal(journal).size() > graphdir::kMaxImportJournalBytes)
    return InvalidArgumentError("import: the names of the id indexes it would create are too long to record");
  if (durable_ != nullptr) {
    if (Status s = graphdir::WriteImportJournal(durable_->fs, durable_->dir, journal); !s.ok()) {
      // The rename may have happened: a record must never stay once other
      // writers are let in (Open would take their writes for the import's).
      if (Status r = graphdir::RemoveImportJournal(durable_->fs, durable_->dir); !r.ok()) {
        import_record_left_.store(true);
        Poison("an import's rollback record could not be written or removed", r);
      }
      return Status(s.code(), base::StrCat("import: writing its rollback record: ", s.message()));
    }
  }
  import_journal_ = std::move(journal);
  return Status::Ok();
}

void GraphImpl::ReleaseImportGate() noexcept {
  t_import_thread = outer_import_thread_;
  outer_import_thread_ = nullptr;
  import_journal_.reset();
  base::MutexLock lock(&gate_mu_);
  import_running_ = false;
  gate_cv_.SignalAll();
}

Status GraphImpl::EndImport(bool commit) {
  if (t_import_thread != this || !import_journal_)
    return FailedPreconditionError("EndImport without BeginImport");
  Status s;
  bool record_stays = false;  // or may stay: then nobody else may write
  bool synced = false;        // the import is durable whole
  try {
    if (commit) {
      s = Write(WriteBatch(), WriteOptions{.sync = true}).status();
      synced = s.ok();
      if (s.ok() && durable_ != nullptr) {
        Status removed = graphdir::RemoveImportJournal(durable_->fs, durable_->dir);
        if (!removed.ok()) {
          record_stays = true;
          s = Status(StatusCode::kDurabilityUnknown,
                     base::StrCat("the import is durable, but removing its rollback record failed (",
                                  removed.ToString(),
                                  "): the graph refuses writes, and the next Open may undo the import"));
        }
      }
    }
    if (!commit || (!s.ok() && !record_stays)) {
      Status undo = UndoImport(*import_journal_);
      if (undo.ok() && durable_ != nullptr) undo = graphdir::RemoveImportJournal(durable_->fs, durable_->dir);
      if (!undo.ok()) {
        record_stays = true;
        undo =
            Status(undo.code(),
                   base::StrCat("undoing the import failed (", undo.message(), "); the graph refuses writes",
                                durable_ != nullptr ? ", and the next Open undoes the import" : ""));
      }
      if (s.ok() || !undo.ok()) s = std::move(undo);
    }
  } catch (const std::bad_alloc&) {
    record_stays = true;
    // Durable already: whether the record went is not known, so neither is
    // whether the next Open undoes the import (never "nothing applied").
    s = synced ? DurabilityUnknownStatus() : OutOfMemoryStatus();
  }
  if (record_stays) import_record_left_.store(true);
  // Fail-stop: everything at or above the record's limits must stay the
  // import's until an Open undoes it.
  if (record_stays) Poison("an import could not be undone or its rollback record removed", s);
  ReleaseImportGate();
  return s;
}

template <typename F>
Status GraphImpl::ForEachUndoBatch(const graphdir::ImportJournal& journal, F commit) const {
  const Snapshot snap = GetSnapshot();
  std::vector<std::string> indexes;  // those of the import's that exist
  {
    PinnedVersion head(chain_);
    for (const std::string& name : journal.indexes)
      if (head.roots().catalog->Find(name) != nullptr) indexes.push_back(name);
  }
  // Within the graph's own batch limit, or the undo could never commit.
  const std::size_t batch_ops =
      std::max<std::size_t>(1, std::min<std::size_t>(kUndoBatchOps, options_.limits.max_batch_ops));
  WriteBatch batch;
  std::size_t ops = 0;
  auto flush = [&]() -> Status {
    if (ops == 0) return Status::Ok();
    Status s = commit(std::move(batch));
    batch = WriteBatch();
    ops = 0;
    return s;
  };
  for (EdgeId e : snap.Edges(journal.edge_limit, UINT64_MAX)) {
    batch.RemoveEdge(e);
    if (++ops == batch_ops) QUIVER_RETURN_IF_ERROR(flush());
  }
  QUIVER_RETURN_IF_ERROR(flush());
  for (VertexId v : snap.Vertices(journal.vertex_limit, UINT64_MAX)) {
    batch.RemoveVertex(v);
    if (++ops == batch_ops) QUIVER_RETURN_IF_ERROR(flush());
  }
  QUIVER_RETURN_IF_ERROR(flush());
  for (const std::string& name : indexes) {
    IndexOp drop;
    drop.spec.name = name;
    batch = internal::WriteBatchInternal::IndexBatch(OpKind::kDropIndex, std::move(drop));
    ops = 1;
    QUIVER_RETURN_IF_ERROR(flush());
  }
  return Status::Ok();
}

Status GraphImpl::UndoImport(const graphdir::ImportJournal& journal) {
  // The import's batches still queued (an import cut short by an
  // exception) commit first, or the undo's snapshot would miss them.
  QUIVER_RETURN_IF_ERROR(Write(WriteBatch(), WriteOptions{.sync = false}).status());
  QUIVER_RETURN_IF_ERROR(ForEachUndoBatch(
      journal, [this](WriteBatch b) { return Write(std::move(b), WriteOptions{.sync = false}).status(); }));
  return Write(WriteBatch(), WriteOptions{.sync = true}).status();
}

Status GraphImpl::UndoImportInMemory(const graphdir::ImportJournal& journal) {
  return ForEachUndoBatch(journal, [this](WriteBatch b) -> Status {
    storage::GroupBlocks blocks;
    storage::MutationContext ctx{++epoch_, nullptr, nullptr, &blocks};
    storage::Version* v = nullptr;
    try {
      v = chain_->NewVersion(&ctx);
      Status s = processor_.Validate(b, v->roots);
      if (!s.ok()) {
        chain_->RollBack(v, ctx);
        processor_.EndGroup(/*published=*/false);
        return s;
      }
      CommitInfo info;
      processor_.Apply(b, v->roots, ctx, &info);
      // A version of its own, as every published one is (the chain's
      // invariant): the view's sequence passes the recovered one.
      ++v->roots.sequence;
    } catch (const std::bad_alloc&) {
      if (v != nullptr) chain_->RollBack(v, ctx);
      processor_.EndGroup(/*published=*/false);
      return OutOfMemoryStatus();
    }
    chain_->Publish(v);
    processor_.EndGroup(/*published=*/true);
    return Status::Ok();
  });
}

Status GraphImpl::Close() {
  // The writer thread cannot join itself, nor a producer's group end in it.
  if (t_graph_committing_here == this) return CalledWhileCommitting("Close");
  return CloseOnce(nullptr);
}

Status GraphImpl::CloseOnce(bool* ran) {
  // A running import ends first: its rollback record is written and removed
  // under this handle's LOCK, never after another handle took it.
  if (t_import_thread != this) {
    base::MutexLock lock(&gate_mu_);
    closing_ = true;  // no import begins from now on
    gate_cv_.SignalAll();
    while (import_running_) gate_cv_.Wait();
  }
  std::call_once(close_once_, [this, ran] {
    if (ran != nullptr) *ran = true;
    // The compactor ends first (after the step it is committing, if any):
    // it is a producer, and the queue refuses producers from here on.
    StopCompactor();
    queue_.Close();
    // The writer drains what was queued before Close and writes what
    // unsynced writes held back.
    if (writer_.joinable()) writer_.join();
    feed_->Shutdown();  // every group is published: the feed ends here
    if (durable_ == nullptr) return;
    if (read_only_) {
      base::MutexLock lock(&checkpoint_mu_);
      closed_ = true;
      return;
    }
    {
      base::MutexLock lock(&trigger_mu_);
      stopping_ = true;
      trigger_cv_.Signal();
    }
    checkpointer_.join();
    base::MutexLock lock(&checkpoint_mu_);
    if (poisoned_.load()) {
      close_status_ =
          Status(StatusCode::kPoisoned, "closed after a WAL failure; no final checkpoint was written");
    } else if (options_.durable.checkpoint_on_close) {
      close_status_ = RunCheckpointLocked(/*writer_stopped=*/true);
    }
    closed_ = true;
    // Release the directory now, not when the object is destroyed: another
    // handle (in this process or another) may open it next. Everything the
    // WAL holds was synced before it was acknowledged.
    durable_->wal.reset();
    durable_->lock.reset();
  });
  // Every call, also one that waited for another thread's Close, returns
  // the outcome of the Close that ran (call_once orders its write first).
  return close_status_;
}

Result<std::unique_ptr<ChangeSubscription>> GraphImpl::Subscribe(SequenceNumber from_sequence) {
  if (from_sequence == 0)
    return InvalidArgumentError("Subscribe: sequence 0 names no batch (the first committed batch is 1)");
  return SubscribeFrom(from_sequence);
}

Result<SequenceNumber> GraphImpl::RegisterWithFeed() {
  if (t_graph_committing_here == this) return CalledWhileCommitting("Subscribe");
  QUIVER_RETURN_IF_ERROR(feed_->Register());
  // The writer records every group that starts from now on. An empty batch
  // through the commit queue completes once every group that started
  // before is published, and says the newest sequence then: every batch
  // after it is recorded. A read-only graph commits nothing.
  SequenceNumber committed = 0;
  if (read_only_) {
    // No barrier to find the graph closed: ask.
    bool closed;
    {
      base::MutexLock lock(&checkpoint_mu_);
      closed = closed_;
    }
    if (closed) {
      feed_->Unregister();
      return SubscribeOnClosedGraph();
    }
    committed = GetSnapshot().sequence();
  } else {
    Result<CommitInfo> barrier = Write(WriteBatch(), WriteOptions{.sync = false});
    if (!barrier.ok()) {
      feed_->Unregister();
      if (barrier.status().code() == StatusCode::kFailedPrecondition) return SubscribeOnClosedGraph();
      return barrier.status();
    }
    committed = barrier->sequence;
  }
  return committed;
}

Result<Graph::SnapshotAndSubscription> GraphImpl::SubscribeWithSnapshot() {
  QUIVER_ASSIGN_OR_RETURN(SequenceNumber committed, RegisterWithFeed());
  // Every batch after `committed` is recorded, so the window holds every
  // batch after the snapshot's, taken now (at `committed` or later).
  Snapshot snap = GetSnapshot();
  (void)committed;
  Result<std::unique_ptr<ChangeSubscription>> sub = feed_->Open(snap.sequence() + 1, snap.sequence());
  if (!sub.ok()) {
    feed_->Unregister();
    return sub.status();
  }
  return SnapshotAndSubscription{std::move(snap), *std::move(sub)};
}

Result<std::unique_ptr<ChangeSubscription>> GraphImpl::SubscribeFrom(SequenceNumber from) {
  QUIVER_ASSIGN_OR_RETURN(SequenceNumber committed, RegisterWithFeed());
  Result<std::unique_ptr<ChangeSubscription>> sub = feed_->Open(from, committed);
  // Not in the window: a writable durable graph still has it in its files.
  if (!sub.ok() && sub.status().code() == StatusCode::kOutOfRange && from <= committed &&
      durable_ != nullptr && !read_only_)
    return SubscribeFromLog(from, committed);
  if (!sub.ok()) feed_->Unregister();
  return sub;
}

Result<std::unique_ptr<ChangeSubscription>> GraphImpl::SubscribeFromLog(SequenceNumber from,
                                                                        SequenceNumber committed) {
  // The window delivers from committed + 1 on (it owns the registration
  // from here: its destruction unregisters); the log up to committed.
  Result<std::unique_ptr<ChangeSubscription>> live = feed_->Open(committed + 1, committed);
  if (!live.ok()) {
    feed_->Unregister();
    return live.status();
  }
  // Batches held back by unsynced writes are in memory only: a synced
  // barrier writes every batch up to `committed` into the log.
  Result<CommitInfo> barrier = Write(WriteBatch(), WriteOptions{.sync = true});
  if (!barrier.ok()) {
    if (barrier.status().code() == StatusCode::kFailedPrecondition)
      return FailedPreconditionError("Subscribe: the graph is closed");
    return barrier.status();
  }
  Result<feed::LogFiles> files = [&]() -> Result<feed::LogFiles> {
    // Checkpoint cleanup removes files under this lock: every file is
    // opened before any can go (an open file reads to its end).
    base::MutexLock lock(&checkpoint_mu_);
    if (closed_) return FailedPreconditionError("Subscribe: the graph is closed");
    return feed::OpenLogFiles(durable_->fs, durable_->dir);
  }();
  if (!files.ok()) return files.status();
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<feed::LogReplay> replay,
                          feed::LogReplay::Start(*std::move(files), from, committed,
                                                 base::ResolveThreads(options_.durable.io_threads)));
  try {
    return feed::MakeCatchUpSubscription(std::move(replay), *std::move(live));
  } catch (const std::bad_alloc&) {
    return feed::FeedOutOfMemory("change feed: out of memory for a subscription");
  }
}

Status GraphImpl::Checkpoint() {
  if (durable_ == nullptr) return FailedPreconditionError("an in-memory graph has no checkpoints");
  if (read_only_) return ReadOnlyError("Checkpoint");
  if (t_graph_committing_here == this) return CalledWhileCommitting("Checkpoint");  // its barrier would wait
  base::MutexLock lock(&checkpoint_mu_);
  if (closed_) return FailedPreconditionError("Checkpoint: the graph is closed");
  return RunCheckpointLocked();
}

Status GraphImpl::CheckDataForNewNames(const IndexSpec& spec) {
  PinnedVersion head(chain_);
  const storage::GraphRoots& g = head.roots();
  const storage::InternTable* labels = spec.element == ElementKind::kVertex ? g.labels : g.types;
  std::optional<std::uint32_t> label = labels->Find(spec.label);
  index::IndexDef def;
  def.name = spec.name;
  def.element = spec.element;
  def.label = spec.label;
  def.keys = spec.keys;
  def.kind = spec.kind;
  def.type = spec.type;
  def.key_width = index::KeyWidthFor(spec);
  bool new_key = false;
  for (const std::string& k : spec.keys) {
    std::optional<std::uint32_t> id = g.keys->Find(k);
    new_key = new_key || !id;
    def.key_ids.push_back(id.value_or(UINT32_MAX));  // no element holds it
  }
  Status s;
  // A new label: no element to fail over. All keys known: nothing new to intern.
  if (label && new_key) {
    def.label_id = *label;
    index::EntryList entries(def.key_width);  // stays empty: every element misses a key
    base::RunInBackground(options_.background_nice,
                          [&] { s = index::CollectEntries(g, def, kIndexBuildThreads, &entries); });
  }
  return s;
}

Status GraphImpl::CreateIndex(const IndexSpec& spec) {
  if (read_only_) return ReadOnlyError("CreateIndex");
  // A failed CreateIndex leaves nothing behind: once declared, the index is
  // taken back however the build fails, or a declaration nobody builds
  // would stay, and the writer record changes to its label for ever.
  std::optional<DeclarationUndo> undo;
  SequenceNumber declared = 0;
  try {
    QUIVER_RETURN_IF_ERROR(index::CheckSpec(spec, options_.limits.max_string_bytes));
    // The declaration interns the names it uses; a failure found only by the
    // build would leave new ones behind. Found here, nothing is committed.
    QUIVER_RETURN_IF_ERROR(CheckDataForNewNames(spec));
    undo.emplace(spec.name);
    IndexOp define;
    define.spec = spec;
    QUIVER_ASSIGN_OR_RETURN(CommitInfo info, Write(internal::WriteBatchInternal::IndexBatch(
                                                 OpKind::kDefineIndex, std::move(define))));
    declared = info.sequence;
    Status s = BuildAndPublish(spec.name, declared);
    if (!s.ok()) undo->Run(queue_, declared);
    return s;
  } catch (const std::exception&) {
    // No exception crosses the API: out of memory, or of threads.
    if (declared != 0) undo->Run(queue_, declared);
    return IndexBuildExhaustedStatus();
  }
}

Status GraphImpl::BuildAndPublish(const std::string& name, SequenceNumber declared) {
  // A snapshot at or after the declaration: from it on, the writer records
  // what it changes (index/online_build.h).
  auto built = std::make_shared<index::BuiltIndex>(chain_);
  // However this returns, the pinned versions go on a thread of the build's:
  // they hold back what the writer retired meanwhile, which their release
  // frees (index/online_build.h, ReleaseVersions).
  struct ReleaseInBackground {
    std::uint32_t nice;
    index::BuiltIndex* built;
    ~ReleaseInBackground() {
      try {
        base::RunInBackground(nice, [this] {
          storage::ScopedPacedFrees paced;  // the backlog goes back to the writer a slice at a time
          built->ReleaseVersions();
        });
      } catch (...) {
        built->ReleaseVersions();  // a destructor never throws
      }
    }
  } release{options_.background_nice, built.get()};
  const index::PropertyIndex* p = built->roots().catalog->Find(name);
  if (p == nullptr || p->def->declared != declared)
    return FailedPreconditionError(
        base::StrCat("index '", name, "' was dropped while it was being built; nothing was published"));
  {
    storage::GroupBlocks blocks;  // every node, so a failure frees them
    storage::RetireList unused;
    storage::MutationContext ctx{0, chain_->account(), &unused, &blocks};
    try {
      // On threads of the build's own, below the caller's priority: the
      // caller (a user's thread) only waits, and keeps its priority.
      Status s;
      base::RunInBackground(options_.background_nice, [&] {
        s = index::BuildIndex(built->roots(), *p->def, kIndexBuildThreads, ctx, &built->root);
        if (!s.ok() || index::IsUniqueKind(p->def->kind)) return;
        // What was added meanwhile goes in here, not in the publishing group
        // (index/online_build.h, step 2b).
        const storage::GraphRoots& then = built->roots();
        const std::uint64_t split =
            p->def->element == ElementKind::kVertex ? then.vertex_limit : then.edge_limit;
        const storage::Version* later = chain_->Acquire();
        built->SetLater(later, split);
        s = index::AddLaterElements(later->roots, *p->def, split, ctx, &built->root);
      });
      if (!s.ok()) {
        built->root = index::IndexRoot{};
        blocks.FreeAll(chain_->account());
        return s;
      }
    } catch (const std::exception&) {  // out of memory, or of threads
      built->root = index::IndexRoot{};
      blocks.FreeAll(chain_->account());
      return IndexBuildExhaustedStatus();  // allocates nothing
    }
    blocks.Clear();  // the nodes are the tree's now
    unused.FreeAll(chain_->account());
  }
  IndexOp ready;
  ready.spec.name = name;
  ready.declared = declared;
  ready.built = built;
  return Write(internal::WriteBatchInternal::IndexBatch(OpKind::kIndexReady, std::move(ready))).status();
}

Status GraphImpl::DropIndex(std::string_view name) {
  if (read_only_) return ReadOnlyError("DropIndex");
  IndexOp drop;
  drop.spec.name = std::string(name);
  return Write(internal::WriteBatchInternal::IndexBatch(OpKind::kDropIndex, std::move(drop))).status();
}

Result<VerifyReport> GraphImpl::Verify(const VerifyOptions& options) const {
  if (durable_ == nullptr) return FailedPreconditionError("an in-memory graph has no files to verify");
  // Held throughout: no checkpoint cleanup removes a file while it is read.
  base::MutexLock lock(&checkpoint_mu_);
  if (closed_) return FailedPreconditionError("Verify: the graph is closed");
  return VerifyGraphDirectory(durable_->fs, durable_->dir, options);
}

namespace {

// `dir` folded by name (env::FoldPath), so that two spellings of one path
// compare equal. Symbolic links are not resolved here (ResolveTargetPath does).
std::string NormalizeDir(std::string_view dir) { return env::FoldPath(dir, /*keep_leading_dotdot=*/true); }

// `path` with its symbolic links resolved as far as it exists (fs's
// RealPath of its longest existing ancestor), the part that does not exist
// yet appended and normalized by name.
Result<std::string> ResolveTargetPath(env::FileSystem* fs, const std::string& path) {
  std::string existing = NormalizeDir(path);
  std::vector<std::string> missing;  // innermost first
  while (true) {
    Result<std::string> real = fs->RealPath(existing.empty() ? "." : existing);
    if (real.ok()) {
      std::string out = *real;
      for (auto it = missing.rbegin(); it != missing.rend(); ++it) out = env::JoinPath(out, *it);
      return NormalizeDir(out);
    }
    if (real.status().code() != StatusCode::kNotFound) return real.status();
    const std::string parent = graphdir::ParentDir(existing);
    if (parent.empty() || parent == existing) return real.status();
    const std::size_t slash = existing.rfind('/');
    missing.push_back(slash == std::string::npos ? existing : existing.substr(slash + 1));
    existing = parent;
  }
}

// Whether normalized path `inner` is `outer` or lies under it.
bool SameOrUnder(const std::string& inner, const std::string& outer) {
  if (inner == outer) return true;
  if (outer == "/") return !inner.empty() && inner.front() == '/';
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
         inner[outer.size()] == '/';
}

}  // namespace

Result<BackupInfo> GraphImpl::Backup(std::string_view dir, const BackupProgress& progress) {
  env::FileSystem* fs = durable_ != nullptr ? durable_->fs : env::PosixFileSystem();
  try {
    return BackupTo(fs, std::string(dir), progress);
  } catch (const std::bad_alloc&) {
    return BackupOutOfMemory();  // built at construction: memory may be exhausted for good
  }
}

Result<BackupInfo> GraphImpl::BackupTo(env::FileSystem* fs, const std::string& dir,
                                       const BackupProgress& progress) {
  if (dir.empty()) return InvalidArgumentError("Backup: the directory path is empty");
  // Not while an import that may be undone runs: the copy would keep its
  // elements without its rollback record.
  ImportGate gate(this, true);
  if (import_record_left_.load())
    return FailedPreconditionError(
        "Backup: an import's rollback record is still in the graph's directory; reopen the graph (Open "
        "undoes the import) and back it up then");
  // Not the graph's directory nor anything under it: a new subdirectory
  // among the graph's files could take the name of its next WAL segment
  // (the rotation would fail and poison the graph) or be listed by Open.
  auto failed = [&dir](const Status& s) {
    return Status(s.code(), base::StrCat("Backup into ", dir, ": ", s.message()));
  };
  if (durable_ != nullptr) {
    // By spelling, then by where the path leads (a symbolic link into the
    // graph's directory is that directory).
    bool inside = SameOrUnder(NormalizeDir(dir), NormalizeDir(durable_->dir));
    if (!inside) {
      Result<std::string> target = ResolveTargetPath(fs, dir);
      if (!target.ok()) return failed(target.status());
      Result<std::string> source = fs->RealPath(durable_->dir);
      if (!source.ok()) return failed(source.status());
      inside = SameOrUnder(*target, NormalizeDir(*source));
    }
    if (inside)
      return InvalidArgumentError(base::StrCat("Backup: ", dir,
                                               " is this graph's own directory or lies inside it (",
                                               durable_->dir, "), by name or through a symbolic link"));
  }
  // Only an empty or new directory: a backup never mixes with other files
  // (another graph's log would be replayed onto it).
  Result<bool> exists =
      graphdir::CheckEmptyOrMissing(fs, dir, "Backup", "a backup goes into a new or empty directory");
  if (!exists.ok()) {
    if (exists.status().code() == StatusCode::kFailedPrecondition) return exists.status();
    return failed(exists.status());
  }
  PinnedVersion pin(chain_);  // the writer goes on; this version stays as it is
  const storage::GraphRoots& roots = pin.roots();
  // Writes of this version still held back (WriteOptions::sync = false) are
  // made durable first: a copy must never hold a write that a crash of this
  // graph could still take back, or the two would disagree about history.
  // A Sync covers every write published before it, the pinned ones included.
  // A Sync refused because a Close began may still have been covered by
  // that Close's final flush: what counts is the durable sequence after it.
  if (durable_ != nullptr && roots.sequence > durable_sequence_.load()) {
    if (Status s = Sync(); !s.ok() && roots.sequence > durable_sequence_.load())
      return Status(s.code(),
                    base::StrCat("Backup: making this graph's unsynced writes durable first: ", s.message()));
  }
  if (!*exists) {
    if (Status s = graphdir::CreateDirDurably(fs, dir); !s.ok()) return failed(s);
  }
  // However this returns or throws before the end, the directory is left as
  // empty as it was found (best effort), so the backup can be retried.
  graphdir::RemoveUnlessDone remove_written(fs, dir, roots.sequence);
  checkpoint::WriteOptions w = CheckpointWriteOptions(options_);
  w.record_wal_position = false;  // the copy has none of this graph's log
  w.progress = progress;
  checkpoint::WriteStats ws;
  Status s;
  // An empty graph needs no checkpoint: the identity file alone opens as one.
  // The copy is a new graph with a UUID of its own: restored beside the
  // original and written to, its files must never pass for the original's
  // (Verify reports them, recovery refuses them) nor the original's for its.
  if (roots.sequence != 0) s = checkpoint::WriteCheckpoint(fs, dir, NewGraphUuid(), roots, &ws, w);
  // The identity file last: until it is there, a copy cut short is no graph.
  if (s.ok()) s = graphdir::WriteIdentity(fs, dir);
  if (s.ok()) s = graphdir::SyncAncestors(fs, dir);
  if (!s.ok()) return failed(s);
  remove_written.Done();
  return BackupInfo{roots.sequence, ws.bytes};
}

MemoryStats GraphImpl::GetMemoryStats() const {
  storage::ChainStats c = chain_->Stats();
  MemoryStats m;
  m.allocated_bytes = static_cast<std::uint64_t>(chain_->account()->allocated_bytes());
  m.retired_bytes = c.retired_bytes;
  m.live_versions = c.live_versions;
  return m;
}

OpenStats GraphImpl::GetOpenStats() const { return durable_ ? durable_->open_stats : OpenStats{}; }

DurabilityStats GraphImpl::GetDurabilityStats() const {
  DurabilityStats d;
  bool last_failed;
  {
    // One critical section: the counters below are one consistent snapshot.
    base::MutexLock lock(&stats_mu_);
    d = checkpoint_stats_;
    last_failed = last_checkpoint_failed_;
    d.wal_syncs = wal_syncs_;
    d.wal_bytes = wal_bytes_;
    d.wal_bytes_since_checkpoint = wal_bytes_since_checkpoint_;
    d.wal_sync_latency_histogram = sync_histogram_;
  }
  d.commit_groups = commit_groups_.load();
  d.wal_segments_started = wal_segments_started_.load();
  d.poisoned = poisoned_.load();
  if (durable_ == nullptr) return d;
  d.unsynced_batches = unsynced_batches_.load();
  d.unsynced_bytes = unsynced_bytes_.load();
  d.durable_sequence = durable_sequence_.load();
  d.wal_preallocation_failures = durable_->wal_preallocation_failures.load();
  Result<std::uint64_t> free_space = durable_->fs->FreeSpace(durable_->dir);
  d.free_space_bytes = free_space.ok() ? *free_space : 0;
  // The rule HealthState states, in its order.
  const OpenStats& o = durable_->open_stats;
  if (d.poisoned) {
    d.health = HealthState::kPoisoned;
    d.health_reason = "a WAL write or sync failed: writes are refused until the graph is reopened";
  } else if (last_failed) {
    d.health = HealthState::kDegraded;
    d.health_reason = base::StrCat("the most recent checkpoint failed: ", d.last_checkpoint_error.ToString());
  } else if (!read_only_ && !free_space.ok()) {
    d.health = HealthState::kDegraded;
    d.health_reason = base::StrCat("free space unknown: ", free_space.status().ToString());
  } else if (!read_only_ && d.free_space_bytes < options_.durable.wal_segment_bytes) {
    d.health = HealthState::kDegraded;
    d.health_reason = base::StrCat("free space ", d.free_space_bytes, " bytes is less than one WAL segment (",
                                   options_.durable.wal_segment_bytes, " bytes)");
  } else if (o.salvaged || o.used_previous_checkpoint || o.wal_covered_damage_bytes > 0) {
    d.health = HealthState::kDegraded;
    d.health_reason = o.salvaged                   ? "Open salvaged a damaged WAL"
                      : o.used_previous_checkpoint ? "Open fell back to an older checkpoint"
                                                   : "Open skipped damaged WAL records a checkpoint covers";
  }
  return d;
}

void GraphImpl::Poison(const char* what, const Status& why) {
  if (poisoned_.exchange(true)) return;
  LogEvent(
      LogLevel::kError, "poisoned",
      [&] {
        return base::StrCat(durable_ != nullptr ? durable_->dir : std::string("in-memory graph"), ": ", what,
                            ", so every later write is refused until reopened: ",
                            why.ok() ? std::string("out of memory in the WAL writer") : why.ToString());
      },
      what);
}

void GraphImpl::DeliverEvent(LogLevel level, std::string_view event,
                             std::string_view message) const noexcept {
  try {
    options_.logger->Log(level, event, message);
  } catch (...) {
    // Log must not throw (quiver/logger.h); if it does, the event is lost
    // and nothing else: the graph and the calling thread carry on.
  }
}

void GraphImpl::LogOpenFindings() const {
  if (options_.logger == nullptr || durable_ == nullptr) return;
  const OpenStats& o = durable_->open_stats;
  const std::string& dir = durable_->dir;
  if (o.used_previous_checkpoint)
    LogEvent(LogLevel::kWarning, "checkpoint_fallback", [&] {
      return base::StrCat(dir, ": the newest checkpoint is damaged; loaded the one at sequence ",
                          o.checkpoint_sequence, " and replayed the log after it");
    });
  if (o.wal_covered_damage_bytes > 0)
    LogEvent(LogLevel::kWarning, "covered_damage", [&] {
      return base::StrCat(dir, ": skipped ", o.wal_covered_damage_bytes,
                          " bytes of damaged WAL records that the checkpoint at sequence ",
                          o.checkpoint_sequence, " holds");
    });
  if (o.tail_bytes_truncated > 0)
    LogEvent(LogLevel::kWarning, "torn_tail", [&] {
      return base::StrCat(dir, ": ", read_only_ ? "ignored " : "cut ", o.tail_bytes_truncated,
                          " bytes of torn WAL tail (a write a crash interrupted; never acknowledged); "
                          "recovered to sequence ",
                          o.recovered_sequence);
    });
  if (o.salvaged)
    LogEvent(LogLevel::kError, "salvage", [&] {
      return base::StrCat(dir,
                          ": the WAL is damaged; salvage_wal_prefix kept its valid prefix, up to sequence ",
                          o.recovered_sequence, read_only_ ? ", in memory only" : "",
                          "; committed data after the damage is given up",
                          read_only_ ? "" : " (the damaged segments are kept as *.salvaged)");
    });
}

}  // namespace quiver
