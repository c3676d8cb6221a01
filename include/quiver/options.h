// Options: plain aggregates that configure a Graph. Every field has a default
// that suits most applications; each comment says the default and the
// trade-off.
//
// Example:
//   auto graph = quiver::Graph::OpenInMemory(
//       quiver::Options{.limits = {.max_string_bytes = 1 << 20}});
#ifndef QUIVER_OPTIONS_H_
#define QUIVER_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "quiver/logger.h"

namespace quiver {

// Where committed batches live.
enum class Durability : std::uint8_t {
  // Write-ahead log with one fdatasync per commit group; a commit is
  // acknowledged only once on disk. Requires Graph::Open with a directory.
  kDurable = 0,
  // No files at all: the graph lives only in memory and is gone on exit.
  kVolatile = 1,
};

// Ceilings of option values: Open refuses a value above one (or below a
// floor) with InvalidArgument naming the field, before it touches any file.
// They come from the widths of the engine's own fields, so no value the
// options admit can wrap one of them.
//
// An element's encoded properties and one string, bytes or vector value:
// 2 GiB (a property block addresses its payloads with 32-bit offsets, and a
// checkpoint block holding the element has a 32-bit length).
inline constexpr std::size_t kMaxPropertyBytesCeiling = std::size_t{1} << 31;
// Edges of one vertex in one direction: 2^31 (degrees are 32-bit, and an
// adjacency array grows by 1/8 past its count).
inline constexpr std::size_t kMaxDegreeCeiling = std::size_t{1} << 31;
// Operations in one batch: 2^32 - 1 (a batch indexes its operations,
// properties and added elements with 32-bit numbers).
inline constexpr std::size_t kMaxBatchOpsCeiling = 0xFFFFFFFFu;
// WriterOptions::spin_microseconds: 10 ms, far past any hand-off a spin can
// win (a sleep and wake-up costs tens of microseconds).
inline constexpr std::uint32_t kMaxSpinMicroseconds = 10'000;
// DurableOptions::wal_segment_bytes: at least 128 bytes (twice the 64-byte
// segment header; a group larger than a segment still fits, alone, in a
// segment of its own, so tiny segments only rotate often, which tests use),
// at most 1 GiB (space is reserved in steps up to it).
inline constexpr std::uint64_t kMinWalSegmentBytes = 128;
inline constexpr std::uint64_t kMaxWalSegmentBytes = std::uint64_t{1} << 30;
// DurableOptions::checkpoint_wal_bytes, when not 0: at least 1 KiB (less
// asks for a checkpoint after every commit group).
inline constexpr std::uint64_t kMinCheckpointWalBytes = 1024;
// DurableOptions::io_threads: at most 64.
inline constexpr std::uint32_t kMaxIoThreads = 64;
// Options::background_nice: at most 19 (the lowest nice value).
inline constexpr std::uint32_t kMaxBackgroundNice = 19;
// DurableOptions::max_unsynced_bytes: at most 1 GiB.
inline constexpr std::uint64_t kMaxUnsyncedBytesCeiling = std::uint64_t{1} << 30;

// WriterOptions::max_queued_batches and max_group_batches: at most 2^24 (a
// group's list of batches is reserved when the graph opens).
inline constexpr std::size_t kMaxQueuedBatchesCeiling = std::size_t{1} << 24;

// ChangeFeedOptions::max_retained_batches: at most 2^24.
inline constexpr std::size_t kMaxRetainedBatchesCeiling = std::size_t{1} << 24;

// CompactionOptions::idle_milliseconds: at most a day.
inline constexpr std::uint32_t kMaxCompactionIdleMilliseconds = 86'400'000;

// Background compaction: Graph::Compact, run by the graph itself while no
// write is being committed. Random inserts leave each vertex's edge array
// wherever the allocator had room; compaction lays the adjacency out again
// as a checkpoint load does, so sweeps and expansions read it in order
// (Graph::Compact says what moves and what it costs). A thread of the graph
// waits until at least `after_changes` operations (WriteBatch::size summed
// over committed batches) were committed since its last pass began and no
// batch was committed for `idle_milliseconds`; it then commits Compact's
// steps one after another (each one commit group of at most 32,768
// entries: about 1.2 ms of the writer) for as long as no batch is
// committed in between. A write that arrives meanwhile waits for at most
// the step being committed; the pass goes on from where it stopped once
// the graph is idle again. A pass visits every 64 vertex ids, so a graph
// of more than about a million ids also waits for one operation per 16
// ids; and a step waits while more than a quarter of the graph's memory is
// retired but still pinned by snapshots (a pass replaces what a long-lived
// snapshot keeps). Graph::GetCompactionStats counts the work. Not started
// for a read-only graph.
struct CompactionOptions {
  // 0: never compact in the background (call Graph::Compact instead).
  // Default 65,536.
  std::uint64_t after_changes = 65536;
  // How long no batch may be committed before a pass starts or goes on.
  // 1 to kMaxCompactionIdleMilliseconds. Default 200.
  std::uint32_t idle_milliseconds = 200;
};

// The change feed (Graph::Subscribe, quiver/change_feed.h). While at least
// one subscription is open the graph keeps the newest committed batches'
// effects in memory, for its consumers to read and to resume from; with
// none open it keeps nothing and computes nothing.
struct ChangeFeedOptions {
  // Most batches kept; a consumer more than this many batches behind the
  // newest commit has fallen behind. 1 to kMaxRetainedBatchesCeiling. The
  // window's index (16 bytes a batch) is allocated when the first
  // subscription opens. Default 16,384.
  std::size_t max_retained_batches = 16384;
  // Most bytes of batches kept (ChangeBatch::bytes summed); the newest
  // batch is kept even when it alone is larger. Batches a consumer holds
  // stay in memory until it releases them, kept or not. At least 1.
  // Default 64 MiB.
  std::uint64_t max_retained_bytes = std::uint64_t{64} << 20;
};

// Bounds on untrusted input. A batch that exceeds one is rejected whole with
// OutOfRange before anything is allocated for it in the graph.
struct Limits {
  // Longest string or bytes value, label, edge type or property key, in
  // bytes; 1 to kMaxPropertyBytesCeiling. Default 16 MiB.
  std::size_t max_string_bytes = std::size_t{16} << 20;
  // Longest float32 vector value, in elements; 0 (empty vectors only) to
  // kMaxPropertyBytesCeiling / 4. Default 65,536.
  std::size_t max_vector_dims = 65536;
  // Longest string list value, in elements; 0 (empty lists only) to
  // kMaxPropertyBytesCeiling / 4. Each element is a string value
  // (max_string_bytes applies to it); the list as a whole is bounded by
  // max_property_bytes_per_element. Default 65,536.
  std::size_t max_list_elements = 65536;
  // Most operations in one batch (each add, set, remove counts one; each
  // property of an add counts one more); 1 to kMaxBatchOpsCeiling. Default
  // 10,000,000.
  std::size_t max_batch_ops = 10'000'000;
  // Most properties on one element, counted after the batch; 1 to
  // kMaxPropertyBytesCeiling / 16. Default 65,535.
  std::size_t max_properties_per_element = 65535;
  // Most bytes one element's properties may encode to, counted after the
  // batch: 8, plus 16 per property, plus each string, bytes or vector
  // payload, or each string list's 4 + 4 per element + its text, rounded up
  // to a multiple of 8; 1 to kMaxPropertyBytesCeiling.
  // What an element holds in memory is about this much. Default (and
  // ceiling) 2 GiB.
  std::size_t max_property_bytes_per_element = kMaxPropertyBytesCeiling;
  // Most edges of one vertex in one direction (over all edge types): its
  // degree before the batch plus the edges the batch adds at it (removals
  // in the same batch are not credited); 1 to kMaxDegreeCeiling. Default
  // (and ceiling) 2^31.
  std::size_t max_degree = kMaxDegreeCeiling;
};

// Writer-thread tuning.
struct WriterOptions {
  // Most batches that may wait in the commit queue; producers block beyond
  // it (backpressure instead of unbounded memory). 1 to
  // kMaxQueuedBatchesCeiling. Default 4,096.
  std::size_t max_queued_batches = 4096;
  // Most bytes the batches waiting in the commit queue may hold (about the
  // memory each WriteBatch takes: its operations, names and values), so a
  // few huge batches cannot exhaust memory while they wait: a producer
  // blocks while its batch would pass it. A batch larger than the bound is
  // still queued once the queue is empty, so it waits, never for ever.
  // Batches committed on the calling thread (caller_commits) never queue.
  // At least 1. Default 256 MiB.
  std::size_t max_queued_bytes = std::size_t{256} << 20;
  // Most batches the writer drains into one commit group (one version, one
  // WAL record in durable mode). Larger groups amortise more per batch but
  // delay the first caller. 1 to kMaxQueuedBatchesCeiling. Default 1,024.
  std::size_t max_group_batches = 1024;
  // Most operations in one commit group; a batch larger than this forms a
  // group of its own. At least 1. Default 1,000,000.
  std::size_t max_group_ops = 1'000'000;
  // How long the writer spins for work before it sleeps, in microseconds;
  // 0 turns all spinning off. A producer waiting for its commit spins this
  // long while recent commit groups took no longer (pausing on its core
  // while it has a spare one to itself, else giving the core away between
  // looks with sched_yield); when they take longer (a WAL fdatasync), only
  // a producer with a spare core to itself spins, through about twice the
  // recent group time and at most 1 ms (not for a while after such a spin
  // lost its core), and the others sleep at once. Spare cores are the ones
  // the process may use (affinity mask and cgroup CPU quota) less the
  // writer's. Spinning cuts hand-off latency on an idle core and costs CPU
  // on a busy one. At most kMaxSpinMicroseconds. Default 50.
  std::uint32_t spin_microseconds = 50;
  // A Write that finds nothing queued, no group being committed and no
  // crowd of producers waiting (a producer committing alone, or two taking
  // turns) commits its batch on the calling thread, WAL append and
  // fdatasync included, instead of handing it to the writer thread and
  // waiting to be woken: that spares two thread hand-offs per commit.
  // A Write queued behind others, while commit groups are short (no
  // longer than spin_microseconds: volatile mode, fast devices), commits
  // everything queued on its own thread whenever nobody else is
  // committing, its own batch and those of the producers queued with it,
  // as one group. With longer groups (WAL syncs) groups of several
  // producers are formed by the writer thread.
  // False: every commit goes through the writer thread (a caller that must
  // not do I/O itself). Default true.
  bool caller_commits = true;
};

// Durable-mode tuning: the write-ahead log and checkpoints.
struct DurableOptions {
  // Target size of one WAL segment file; the next commit group after a
  // segment reaches it starts a new segment (so does the first group after
  // a checkpoint when the segment holds 1 MiB or more: the log replayed at
  // the next open then has a segment of its own, which Open writes again
  // at the cost of that log, not of the whole segment). Smaller segments let
  // checkpoints free WAL space sooner; each segment start costs a directory
  // fsync. Every commit group takes at least one 4 KiB page of the segment
  // (a segment's header takes the first), so a segment holds at most
  // wal_segment_bytes / 4 KiB groups. The segment is zero-filled ahead of
  // its appends, 1 MiB at a time, so that a commit's fdatasync writes no
  // file metadata. Disk space is reserved ahead of the appends, 1 MiB at first and
  // doubling up to this size, so a small graph takes about 1 MiB of WAL on
  // disk rather than the whole target. kMinWalSegmentBytes to
  // kMaxWalSegmentBytes. Default 64 MiB.
  std::uint64_t wal_segment_bytes = std::uint64_t{64} << 20;
  // Start a background checkpoint once this many WAL bytes were written
  // since the last one; 0 disables, else at least kMinCheckpointWalBytes.
  // Counts what the log takes on disk, the padding that ends each commit
  // group on a 4 KiB page included (DurabilityStats::
  // wal_bytes_since_checkpoint): a serial workload of tiny commits, a page
  // each, checkpoints after threshold / 4 KiB commits.
  // Default 256 MiB.
  std::uint64_t checkpoint_wal_bytes = std::uint64_t{256} << 20;
  // Start a background checkpoint this often, in milliseconds, if anything
  // was committed since the last; 0 disables. Default 0.
  std::uint32_t checkpoint_interval_ms = 0;
  // Write a checkpoint in Close(), so the next Open replays no WAL. Costs
  // one full write of the graph at close. Default true.
  bool checkpoint_on_close = true;
  // Open with the valid prefix of a WAL that is damaged before its end,
  // instead of failing with Corruption. The damaged segment and later ones
  // are renamed to *.salvaged (kept, never edited) and a copy of the
  // damaged segment's valid prefix takes its place: committed data after
  // the damage is given up. Damage that the loaded checkpoint covers needs
  // no salvage, and a file of an unknown format version is never salvaged.
  // Default false.
  bool salvage_wal_prefix = false;
  // Threads that encode a checkpoint and that load one at open; 0 means one
  // per hardware thread, at most 8. Loading counts the calling thread among
  // them; so does encoding with background_nice = 0 (above 0 the encoders are
  // threads of their own and the calling thread only writes).
  // More threads shorten checkpoints and reopening on an idle machine; a
  // checkpoint's threads compete with the writer and readers for cores.
  // At most kMaxIoThreads. Default 0.
  std::uint32_t io_threads = 0;
  // Permission bits of the files Quiver creates in the graph directory,
  // before the process umask; directories Open creates get these plus a
  // search bit for each read bit (0640 gives 0750). 0600 keeps the graph
  // private to its owner. Permission bits only (at most 0777) and at least
  // 0600 (the owner reads and writes its graph), else Open answers
  // InvalidArgument. Default 0644.
  std::uint32_t file_mode = 0644;
  // A WAL fdatasync that takes at least this long, in microseconds, is
  // reported to Options::logger as slow_sync (every one counts in
  // DurabilityStats::wal_sync_latency_histogram either way); 0 reports
  // none. Default 100,000 (100 ms: far beyond a healthy device's p99).
  std::uint32_t slow_sync_microseconds = 100'000;
  // Most bytes of log entries that writes with WriteOptions::sync = false
  // may hold back in memory (acknowledged, not yet written to the WAL):
  // the encoded batches only, without the record's count, fragment headers
  // and padding (DurabilityStats::unsynced_bytes). The group that takes the
  // held-back bytes to this bound or past it is written and synced with
  // them, as a synced write is, so what stays held is always below it. The
  // writer needs up to about three times the held bytes of memory while
  // writing them (the held-back log grows by doubling; the record is built
  // in a buffer of its own). A larger bound lets more
  // unsynced writes share one fdatasync and lets a crash lose more of them.
  // 0 holds nothing back (every write is synced). At most
  // kMaxUnsyncedBytesCeiling. Default 1 MiB.
  std::uint64_t max_unsynced_bytes = std::uint64_t{1} << 20;
};

// How one Graph::Write or WriteAsync is committed.
//
// Example:
//   quiver::WriteOptions fast{.sync = false};
//   graph->Write(std::move(batch), fast).value();  // visible now, durable later
//   graph->Sync();                                 // durable now
struct WriteOptions {
  // Durable mode: true (the default) acknowledges the batch only once its
  // WAL record is written and fdatasynced. False acknowledges it as soon as
  // it is applied and published (every snapshot taken afterwards shows it);
  // its log record is held back in memory and written, in commit order,
  // together with the next synced write's, by Graph::Sync(), by Close(),
  // before a checkpoint, or once DurableOptions::max_unsynced_bytes are
  // held. A crash may lose a suffix of the unsynced writes (in commit
  // order), never a prefix, never part of a batch, never a write
  // acknowledged as synced nor one a successful Sync() covered.
  // CommitInfo::synced tells whether an unsynced batch was in fact synced
  // before the call returned (drained into one commit group with a synced
  // batch, or it reached the bound). Held-back writes have no time bound:
  // with no synced write, Sync, checkpoint or Close they stay in memory.
  // Ignored by an in-memory graph (nothing is ever on disk there).
  bool sync = true;
};

// Graph::Open and OpenInMemory check every field against the bounds stated
// beside it and fail with InvalidArgument naming the first field out of
// bounds. DurableOptions are checked only for a durable graph.
struct Options {
  // Default kDurable. OpenInMemory forces kVolatile.
  Durability durability = Durability::kDurable;
  // Durable mode: create the graph if the directory holds none (the
  // directory, and any missing parent, are created too). False makes Open
  // fail with NotFound instead, so a mistyped path is not silently a new,
  // empty graph. Default true.
  bool create_if_missing = true;
  // Durable mode: fail with AlreadyExists if the directory already holds a
  // graph; for code that must start from an empty graph. Default false.
  bool error_if_exists = false;
  // Durable mode: open an existing graph to read only. Open changes nothing
  // in the directory: it creates, writes, truncates, renames and removes no
  // file (not even LOCK), syncs nothing, and starts no writer and no
  // checkpoint thread. It loads the newest valid checkpoint, replays the
  // WAL after it in memory (a torn tail is ignored, not cut; with
  // salvage_wal_prefix a damaged log is salvaged in memory only) and serves
  // that state. Write, WriteAsync, CreateIndex, DropIndex and Checkpoint
  // return FailedPrecondition ("opened read-only"); Verify works.
  // NotFound if `dir` holds no graph (create_if_missing is ignored; a
  // valid identity file alone, as in the backup of an empty graph, opens
  // as the empty graph), and
  // FailedPrecondition if a writable handle has the graph open (in this
  // process or another): its checkpoints remove and rename files while a
  // reader lists them, so reading beside it is refused rather than risk a
  // torn view. LOCK is taken shared (opened read-only, never created, so
  // neither write permission nor a writable file system is needed) and
  // only while Open reads: read-only Opens never refuse each other, a
  // writable Open meanwhile fails ("a read-only Open is reading it"), and
  // a writer may open the graph once Open has returned; the read-only
  // graph keeps serving what it loaded. Without LOCK no writer is running;
  // one that starts while Open reads makes it start over under the lock.
  // Default false.
  bool read_only = false;
  // Durable mode: receives the events quiver/logger.h lists. Shared, so the
  // application may keep using it; it must outlive nothing (the graph holds
  // a reference). Default none.
  std::shared_ptr<Logger> logger;
  // How many nice steps below the thread that asked for it the graph's CPU-
  // heavy background work runs: a checkpoint's encoders (started by the
  // background checkpointer or by Checkpoint, Backup or Close) and an
  // index build (CreateIndex, in volatile graphs too). Above 0 that work
  // runs on threads of its own (the calling thread only waits, or writes
  // what the encoders produce, and keeps its priority), and those give
  // their cores to the process's other threads: a commit woken by its
  // fdatasync takes a core at once instead of waiting behind them. The
  // kernel weighs nice values among the threads of one process (and, with
  // autogroup, of one session), not against other processes: the work gives
  // way to this process's readers and committers. The price: when those keep
  // every core busy the work takes longer (at 10 a thread sharing a core
  // with one busy nice-0 thread gets about a tenth of it; at 19 about a
  // seventieth, and a checkpoint that slow keeps its pinned version and the
  // WAL growing). Nice values stop at 19: a process already at nice 19 gains
  // nothing. Off Linux the threads keep their priority (the calling thread
  // still only writes). 0 runs that work at the caller's priority, on the
  // calling thread among others. At most kMaxBackgroundNice. Default 10.
  std::uint32_t background_nice = 10;
  Limits limits;
  WriterOptions writer;
  DurableOptions durable;
  ChangeFeedOptions change_feed;
  CompactionOptions compaction;
};

}  // namespace quiver

#endif  // QUIVER_OPTIONS_H_
