// GraphImpl's write pipeline after a request is queued: whoever holds the
// writer's role (the writer thread's WriterLoop, a producer committing its
// own batch in LeadGroup, or one leading queued groups in
// QueueLeader::Commit) commits a group in CommitGroup: validate and apply
// each batch to a private version, record the change feed's effects, hold
// back or log the group's WAL entries (EncodeGroup, BuildHeldRecord,
// LogHeld, AppendAndSync), then publish and complete each request. The
// entry points (Write, WriteAsync, Sync) stay in graph_impl.cc.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "base/durability_faults.h"
#include "base/strings.h"
#include "graph_impl.h"
#include "graph_impl_util.h"
#include "storage/packed_adjacency.h"
#include "wal/batch_codec.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

// The most blocks a group's GroupBlocks is sized for up front (16K: a
// 128 KiB table, about what a batch of 5,000 vertices with two indexes
// allocates); a larger group grows its table as before.
constexpr std::size_t kGroupBlocksHintMax = 16384;

}  // namespace

// --- Producers holding the writer's role

void GraphImpl::LeadGroup(WriteRequest* r) noexcept {
  CommittingHere committing(this);
  caller_groups_.fetch_add(1, std::memory_order_relaxed);
  CommitGroup(std::span<WriteRequest* const>(&r, 1));
  queue_.FinishGroup();
}

void GraphImpl::QueueLeader::Commit(std::span<WriteRequest* const> group) noexcept {
  CommittingHere committing(graph_);
  graph_->led_groups_.fetch_add(1, std::memory_order_relaxed);
  graph_->CommitGroup(group);
}

// --- Writer thread

void GraphImpl::WriterLoop(std::vector<WriteRequest*> group) {
  CommittingHere committing(this);
  while (queue_.PopGroup(&group, options_.writer.max_group_batches, options_.writer.max_group_ops)) {
    CommitGroup(group);
    queue_.FinishGroup();
    group.clear();
  }
  // Closing: what unsynced writes held back goes to the WAL now. A failure
  // poisons, so Close reports it (Poisoned); those writes may be lost.
  if (held_batches_ == 0 || poisoned_.load()) return;
  Status error;
  bool written = false;
  try {
    BuildHeldRecord();
    written = LogHeld(&error);
  } catch (const std::bad_alloc&) {
  }
  if (!written) Poison("writing the log records unsynced writes held back failed at Close", error);
  StoreHeldStats();
}

void GraphImpl::CommitGroup(std::span<WriteRequest* const> group) {
  // A change feed subscription is open: compute each batch's effects.
  if (feed_->active()) [[unlikely]]
    CommitGroupAs<true>(group);
  else
    CommitGroupAs<false>(group);
}

template <bool kRecord>
void GraphImpl::CommitGroupAs(std::span<WriteRequest* const> group) {
  if (poisoned_.load(std::memory_order_relaxed)) {
    // A copy of an immortal status: right even with no memory left.
    for (WriteRequest* r : group) r->Complete(PoisonedStatus());
    return;
  }
  // Every block the group allocates is recorded here, so a failure frees
  // exactly those (and private ones are edited in place meanwhile).
  storage::GroupBlocks blocks;
  storage::MutationContext ctx{++epoch_, nullptr, nullptr, &blocks};
  storage::Version* v = nullptr;
  std::vector<Result<CommitInfo>> results;
  std::vector<std::uint64_t> first_vertex, first_edge;
  std::vector<std::optional<WriteBatch>> resolved;  // by group index, when needed
  bool changed = false;
  // A compaction step changed the layout alone (Graph::Compact): the
  // version is published with its predecessor's sequence number.
  bool layout = false;
  // Per compaction request of the group: its index and where it got to.
  std::vector<std::pair<std::size_t, storage::RepackProgress>> repacked;
  // Durable mode: whether the group is synced (one synced request makes it
  // so) and whether the held-back log, this group's entries included, goes
  // to the WAL now.
  bool sync = false;
  if (durable_)
    for (const WriteRequest* r : group) sync = sync || r->sync();
  bool write = false, trap = false;
  const std::size_t held_mark = held_.size(), held_batches_mark = held_batches_;
  const SequenceNumber held_first_mark = held_first_, held_last_mark = held_last_;
  constexpr bool record = kRecord;
  try {
    // Sized for what the last group held: grown from empty, the set is
    // rebuilt about a dozen times in a batch of 1,000 indexed vertices
    // (3,100 re-inserts, 0.38M instructions per batch; docs/impl.md "Index
    // maintenance on the commit path"). Out of memory, the group fails as
    // at any of its allocations.
    blocks.Reserve(group_blocks_hint_);
    v = chain_->NewVersion(&ctx);
    // Only the common instance reserves: called once, reserve stays inlined
    // there (GCC's called-once heuristic), as before the change feed; the
    // recording one lets emplace_back grow the vector.
    if constexpr (!record) results.reserve(group.size());
    first_vertex.resize(group.size());
    first_edge.resize(group.size());
    for (std::size_t i = 0; i < group.size(); ++i) {
      if (group[i]->batch().empty()) {  // commits nothing: no sequence number, no WAL record
        if (const storage::RepackProgress* p = group[i]->compact()) {
          repacked.emplace_back(i, *p);
          if (!group[i]->compact_alone() || (group.size() == 1 && IdleForCompaction()))
            layout |= storage::RepackLeaves(v->roots, group[i]->compact_end(), &repacked.back().second, ctx);
        }
        results.emplace_back(CommitInfo{v->roots.sequence, {}, {}, {}, {}});
        continue;
      }
      Status s = processor_.Validate(group[i]->batch(), v->roots);
      if (!s.ok()) {
        results.emplace_back(std::move(s));
        continue;
      }
      first_vertex[i] = v->roots.vertex_limit;
      first_edge[i] = v->roots.edge_limit;
      CommitInfo info;
      if constexpr (record) effects_.Before(processor_.Plain(group[i]->batch()), v->roots);
      processor_.Apply(group[i]->batch(), v->roots, ctx, &info);
      // Upserts and expectations: the log records the plain batch they
      // were resolved into (write/resolver.h).
      if (internal::WriteBatchInternal::NeedsResolving(group[i]->batch())) {
        if (resolved.empty()) resolved.resize(group.size());
        resolved[i] = processor_.TakeResolved();
        if (resolved[i]->empty()) {  // changes nothing: commits like an empty batch
          info.sequence = v->roots.sequence;
          results.emplace_back(std::move(info));
          continue;
        }
      }
      info.sequence = ++v->roots.sequence;
      if constexpr (record)
        RecordEffects(!resolved.empty() && resolved[i] ? *resolved[i] : group[i]->batch(), v->roots,
                      info.sequence, first_vertex[i], first_edge[i]);
      results.emplace_back(std::move(info));
      changed = true;
    }
    // Encoding allocates too; it writes nothing, so it is still undoable.
    if (changed && durable_) EncodeGroup(group, resolved, results, first_vertex, first_edge);
    // A held-back log that reached its bound is written like a synced group.
    write = held_batches_ > 0 && (sync || held_.size() >= options_.durable.max_unsynced_bytes);
    // Negative control only: an unsynced group appended unsynced, alone.
    trap = !write && held_batches_ > 0 &&
           base::DurabilityFaultOn(&base::DurabilityFaults::append_unsynced_groups);
    if (write || trap) BuildHeldRecord();
  } catch (const std::bad_alloc&) {
    // Nothing of the group is visible or logged: undo it whole (its private
    // blocks, never a published one) and go on; the graph stays writable.
    // What was held back before stays held back. Answering allocates nothing.
    held_.resize(held_mark);
    held_batches_ = held_batches_mark;
    held_first_ = held_first_mark;
    held_last_ = held_last_mark;
    StoreHeldStats();
    if (v != nullptr) chain_->RollBack(v, ctx);
    processor_.EndGroup(/*published=*/false);
    if constexpr (record) DropEffects();
    for (WriteRequest* r : group) r->CompleteOutOfMemory();
    return;
  }
  Status log_error;
  if ((write || trap) && !LogHeld(&log_error, /*sync=*/write)) {
    // Invariant 4: not on disk for sure, so never published. The bytes may
    // still be on disk and come back after a restart: DurabilityUnknown.
    // The held-back groups written with it stay published (they were
    // acknowledged) and share that fate; so does the promise of a Sync (an
    // empty synced request) in the group.
    Poison("a WAL write or sync failed", log_error);
    StoreHeldStats();
    if constexpr (record) DropEffects();
    chain_->RollBack(v, ctx);
    processor_.EndGroup(/*published=*/false);
    for (std::size_t i = 0; i < group.size(); ++i) {
      // A synced batch that committed nothing (empty: a Sync; or resolved
      // to nothing) still promised that the state it saw is durable, and
      // that state includes the held-back writes: it shares their fate.
      const bool synced_no_op = group[i]->sync() && results[i].ok();
      if (!Logs(group, resolved, results, i) &&
          !synced_no_op) {  // failed alone, or unsynced and logged nothing
        group[i]->Complete(std::move(results[i]));
        continue;
      }
      Status unknown;
      try {
        unknown = Status(
            StatusCode::kDurabilityUnknown,
            base::StrCat("WAL write failed: ", log_error.ok() ? "out of memory" : log_error.ToString()));
      } catch (const std::bad_alloc&) {
        unknown = DurabilityUnknownStatus();  // no memory for the message: the same answer, said shorter
      }
      group[i]->Complete(std::move(unknown));
    }
    return;
  }
  if (!changed && !layout) {
    chain_->RollBack(v, ctx);  // nothing was allocated; frees nothing
    processor_.EndGroup(/*published=*/false);
  } else {
    if (write) {
      // Where the next group's record starts (for a version of held-back
      // groups it stays that of the last written one; checkpoints take
      // their position from the writer, RunCheckpointLocked).
      v->roots.log_segment = durable_->wal->segment_number();
      v->roots.log_offset = durable_->wal->segment_size();
    }
    // Invariants 2 and 3: the whole group, in order. A group held back is
    // published unsynced (WriteOptions::sync = false; docs/durability.md).
    // A compaction step alone (thousands of leaf copies and blocks) says
    // nothing of what the next batches need (review, stop 42).
    if (changed) group_blocks_hint_ = std::min(blocks.size(), kGroupBlocksHintMax);
    chain_->Publish(v, /*same_contents=*/!changed);
    processor_.EndGroup(/*published=*/true);
    // A layout-only group has no effects: the feed's readers are not woken.
    if constexpr (record)
      if (changed) PublishEffects();
    // A compaction step alone commits no batch: not counted.
    if (changed) {
      commit_groups_.fetch_add(1, std::memory_order_relaxed);
      NoteChanges(group, results);
    }
  }
  // The compaction steps' leaves are in the head now (or needed nothing).
  for (const auto& [i, p] : repacked) *group[i]->compact() = p;
  StoreHeldStats();
  // Each batch is synced if it and every one before it are in a synced record.
  const SequenceNumber durable = durable_ ? durable_sequence_.load(std::memory_order_relaxed) : 0;
  for (Result<CommitInfo>& r : results)
    if (r.ok()) r->synced = durable_ != nullptr && durable >= r->sequence;
  // Barriers (a checkpoint's): every published group is in the WAL now.
  if (held_batches_ == 0)
    for (WriteRequest* r : group)
      if (r->after_sync()) r->after_sync()();
  for (std::size_t i = 0; i < group.size(); ++i) group[i]->Complete(std::move(results[i]));
}

void GraphImpl::RecordEffects(const WriteBatch& plain, const storage::GraphRoots& g, SequenceNumber sequence,
                              std::uint64_t first_vertex, std::uint64_t first_edge) {
  feed_batches_.push_back(effects_.Finish(plain, g, sequence, first_vertex, first_edge));
}

void GraphImpl::PublishEffects() {
  feed_->Append(feed_batches_);
  feed_batches_.clear();
}

void GraphImpl::DropEffects() { feed_batches_.clear(); }

void GraphImpl::StoreHeldStats() {
  unsynced_batches_.store(held_batches_, std::memory_order_relaxed);
  unsynced_bytes_.store(held_.size(), std::memory_order_relaxed);
}

bool GraphImpl::Logs(std::span<WriteRequest* const> group,
                     const std::vector<std::optional<WriteBatch>>& resolved,
                     const std::vector<Result<CommitInfo>>& results, std::size_t i) {
  if (!results[i].ok() || group[i]->batch().empty()) return false;
  return resolved.empty() || !resolved[i] || !resolved[i]->empty();
}

void GraphImpl::EncodeGroup(std::span<WriteRequest* const> group,
                            const std::vector<std::optional<WriteBatch>>& resolved,
                            const std::vector<Result<CommitInfo>>& results,
                            const std::vector<std::uint64_t>& first_vertex,
                            const std::vector<std::uint64_t>& first_edge) {
  // A group record's payload is a count and then one entry per batch
  // (wal/batch_codec.h), so the entries of consecutive groups concatenate
  // into one record's: only the count is written when the record is built.
  wal::GroupEncoder encoder(&held_);
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (!Logs(group, resolved, results, i)) continue;
    const SequenceNumber sequence = results[i]->sequence;
    encoder.Add(sequence, first_vertex[i], first_edge[i],
                !resolved.empty() && resolved[i] ? *resolved[i] : group[i]->batch());
    if (held_batches_++ == 0) held_first_ = sequence;
    held_last_ = sequence;
  }
}

void GraphImpl::BuildHeldRecord() {
  // The payload is the batch count, then the held-back entries: the WAL
  // writer copies both into the record's fragments, so held_ is not copied
  // twice. Every allocation of the record happens here, before any byte
  // goes to the file.
  held_prefix_.clear();
  wal::GroupEncoder(&held_prefix_).Begin(held_batches_);
  durable_->wal->PrepareGroup(held_first_, held_last_, held_prefix_, held_);
}

bool GraphImpl::LogHeld(Status* error, bool sync) {
  bool ok = false;
  try {
    *error = AppendAndSync(held_first_, sync);
    ok = error->ok();
    if (ok && sync) durable_sequence_.store(held_last_);
  } catch (const std::bad_alloc&) {
    // Inside the WAL writer: how much reached the file is unknown, so this
    // is a failed write like any other. *error stays OK: building a status
    // would allocate.
  }
  // Written or not, never again: a failed write is not retried.
  held_.clear();
  held_batches_ = 0;
  held_first_ = held_last_ = 0;
  return ok;
}

bool GraphImpl::RoomForAnOptionalSegment() const {
  Result<std::uint64_t> free = durable_->fs->FreeSpace(durable_->dir);
  return free.ok() && *free >= 2 * wal::WalWriter::kFirstReservation;
}

Status GraphImpl::AppendAndSync(SequenceNumber first, bool sync) {
  wal::WalWriter& wal = *durable_->wal;
  std::uint64_t header = 0;  // a new segment's header page, counted with this group
  // A rotation a checkpoint asked for is optional (it only makes the next
  // Open's rewrite smaller): taken once, whether or not the segment also
  // rotates by size, and skipped when the file system reports less room
  // than a new segment's first reservation, so that a nearly full disk
  // (a checkpoint abandoned on ENOSPC, say) keeps the log in the current
  // segment's room instead of failing this group for a file it did not need.
  const bool asked = std::exchange(rotate_before_next_group_, false);
  if (wal.ShouldRotate() || (asked && RoomForAnOptionalSegment())) {
    QUIVER_RETURN_IF_ERROR(wal.StartSegment(wal.segment_number() + 1, first));
    header = wal.segment_size();
    {
      base::MutexLock lock(&durable_->segments_mu);
      durable_->segment_first[wal.segment_number()] = first;
    }
    current_segment_.store(wal.segment_number());
    wal_segments_started_.fetch_add(1, std::memory_order_relaxed);
    // Before anything in the segment is acknowledged: Open can then tell
    // this segment deleted from never written.
    QUIVER_RETURN_IF_ERROR(graphdir::RecordNewestSegment(durable_->fs, durable_->dir, wal.segment_number()));
  }
  // Zeros ahead of the write head (wal/wal_writer.h), so that this group's
  // fdatasync and the next ones' flush no metadata: one write and sync of
  // up to 1 MiB when less than half of that is left, i.e. in the latency of
  // one single-page group in 128 or more. Done here rather than between
  // groups so that a failure is this group's, like any WAL failure.
  if (wal.WantsFill()) QUIVER_RETURN_IF_ERROR(wal.FillAhead());
  std::uint64_t before = wal.segment_size();
  QUIVER_RETURN_IF_ERROR(wal.AppendPrepared());
  const auto sync_start = std::chrono::steady_clock::now();
  if (sync) QUIVER_RETURN_IF_ERROR(wal.Sync());  // false only for DurabilityFaults::append_unsynced_groups
  const std::uint64_t written = wal.segment_size() - before;
  // checkpoint_wal_bytes and wal_bytes_since_checkpoint count what the log
  // takes on disk, the padding to the page boundary (the page rule,
  // wal/wal_format.h) and each segment's header page included (as recovery
  // counts a segment's valid end, so the figure is the same after a
  // reopen): a serial workload of tiny commits takes a page per commit, and
  // counting its records only let the WAL grow to dozens of times the
  // threshold between checkpoints.
  const std::uint64_t bytes = written + header;
  const std::uint64_t pending = RecordSync(sync, MicrosSince(sync_start), written, bytes);
  std::uint64_t threshold = options_.durable.checkpoint_wal_bytes;
  // Ask at every multiple of the threshold, so a failed checkpoint is
  // retried once another threshold's worth of log has accumulated.
  if (threshold != 0 && pending / threshold != (pending - bytes) / threshold) {
    base::MutexLock lock(&trigger_mu_);
    checkpoint_requested_ = true;
    trigger_cv_.Signal();
  }
  return Status::Ok();
}

std::uint64_t GraphImpl::RecordSync(bool synced, std::uint64_t micros, std::uint64_t written,
                                    std::uint64_t bytes) {
  const std::size_t bucket =
      micros < 2 ? 0 : std::min<std::size_t>(kSyncLatencyBuckets - 1, std::bit_width(micros) - 1);
  std::uint64_t pending;
  {
    base::MutexLock lock(&stats_mu_);
    if (synced) {
      ++sync_histogram_[bucket];
      ++wal_syncs_;
    }
    wal_bytes_ += written;
    pending = wal_bytes_since_checkpoint_ += bytes;
  }
  // Logged after the counters: a logger that reads the statistics (or
  // blocks) sees this sync counted whole.
  const std::uint32_t slow = options_.durable.slow_sync_microseconds;
  if (synced && slow != 0 && micros >= slow)
    LogEvent(LogLevel::kWarning, "slow_sync", [&] {
      return base::StrCat(durable_->dir, ": a WAL fdatasync took ", micros, " us (threshold ", slow,
                          " us): the device is slow or overloaded");
    });
  return pending;
}

}  // namespace quiver
