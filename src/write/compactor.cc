// Background compaction (Options::compaction): a thread of the graph that
// runs Graph::Compact's steps while no write is being committed.
//
// The committer of every group that changed the graph counts its batches'
// operations and restarts the idle clock (NoteChanges). The compactor
// thread sleeps until enough operations were committed (NoteChanges wakes
// it), then looks once per idle period; once none was committed for a
// whole idle period, it begins a pass over the vertex ids
// below the graph's limit, one CompactStep (one commit group, at most
// kBackgroundRepackEntries entries) after another, and stops between two steps
// as soon as a group changed the graph since the last idle check. The pass
// goes on from where it stopped at the next idle period. A step committed
// by this thread is an ordinary request: a producer that arrives meanwhile
// queues behind it (or shares its group) and waits for that step alone.
//
// Correctness rests on Compact's: a step changes the layout and nothing
// else, so when it runs never matters to what readers or the log see.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include "graph_impl.h"

namespace quiver {
namespace {

std::atomic<bool> g_default_compaction_off{false};

std::int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void GraphImpl::SetDefaultCompactionOffForTesting(bool off) { g_default_compaction_off.store(off); }

bool GraphImpl::CompactsInBackground() const {
  const std::uint64_t after = options_.compaction.after_changes;
  return after > 0 && !(g_default_compaction_off.load() && after == CompactionOptions{}.after_changes);
}

void GraphImpl::NoteChanges(std::span<WriteRequest* const> group,
                            const std::vector<Result<CommitInfo>>& results) {
  std::uint64_t ops = 0;
  for (std::size_t i = 0; i < group.size(); ++i)
    if (results[i].ok()) ops += group[i]->batch().size();
  // The clock is read only for a compactor (the commit path's one extra
  // call): IdleForCompaction is asked by the compactor's steps alone.
  if (compactor_started_) last_change_ns_.store(SteadyNowNs(), std::memory_order_relaxed);
  const std::uint64_t before = changes_since_compact_.fetch_add(ops, std::memory_order_relaxed);
  const std::uint64_t after = options_.compaction.after_changes;
  if (compactor_started_ && before < after && before + ops >= after) {
    // The compactor sleeps without a timeout below the threshold: wake it.
    // Taking the mutex orders this after its check of the count.
    base::MutexLock lock(&compactor_mu_);
    compactor_cv_.Signal();
  }
}

std::uint64_t GraphImpl::ConsumeChanges() {
  // One exchange: two callers at once (Compact beside a pass starting)
  // cannot both take the same operations off (review: the count wrapped).
  return changes_since_compact_.exchange(0, std::memory_order_relaxed);
}

bool GraphImpl::IdleForCompaction() const {
  const std::int64_t idle_ns = std::int64_t{options_.compaction.idle_milliseconds} * 1'000'000;
  return SteadyNowNs() - last_change_ns_.load(std::memory_order_relaxed) >= idle_ns;
}

void GraphImpl::CompactorLoop() {
  const std::uint64_t after = options_.compaction.after_changes;
  const std::chrono::milliseconds idle(options_.compaction.idle_milliseconds);
  auto idle_now = [&] { return IdleForCompaction(); };
  // Old versions pinned by snapshots keep what a pass replaces: a step
  // waits while more than a quarter of the graph's memory is retired, so
  // a long-lived snapshot (an analytics run, a checkpoint, an index
  // build) costs at most that much more until it is released.
  auto room = [&] {
    const MemoryStats m = GetMemoryStats();
    return m.retired_bytes <= m.allocated_bytes / 4;
  };
  storage::RepackProgress progress;
  std::uint64_t end = 0;  // the pass's vertex id limit; progress.next >= end: no pass under way
  while (true) {
    {
      base::MutexLock lock(&compactor_mu_);
      if (progress.next >= end) {
        // No pass under way: nothing to do below the threshold, whose
        // crossing NoteChanges signals.
        while (!compactor_stop_ && changes_since_compact_.load(std::memory_order_relaxed) < after)
          compactor_cv_.Wait();
      }
      if (!compactor_stop_) compactor_cv_.WaitFor(idle);
      if (compactor_stop_) return;
    }
    if (!idle_now() || !room()) continue;
    if (progress.next >= end) {
      // A pass visits every leaf: on a graph of many vertices it waits for
      // about one change per 16 vertex ids, so scanning costs a fraction of
      // a leaf visit per change.
      if (changes_since_compact_.load(std::memory_order_relaxed) <
          std::max(after, GetSnapshot().vertex_id_limit() / 16))
        continue;
      // Consumed first, then the limit read: vertices whose operations
      // were counted lie below it.
      ConsumeChanges();
      const std::uint64_t limit = GetSnapshot().vertex_id_limit();
      progress = storage::RepackProgress{};
      const std::uint64_t e = compact_step_entries_.load(), l = compact_step_leaves_.load();
      progress.step_entries = e != 0 ? e : storage::kBackgroundRepackEntries;
      progress.step_leaves = l != 0 ? l : storage::kBackgroundRepackLeaves;
      end = limit;
    }
    while (progress.next < end && idle_now() && room()) {
      {
        base::MutexLock lock(&compactor_mu_);
        if (compactor_stop_) return;
      }
      const storage::RepackProgress before = progress;
      const Status s = CompactStep(&progress, end, /*alone=*/true);
      // Out of memory (this step's or, in a shared group, a batch's): the
      // pass goes on after the next idle period. Poisoned or closing: it
      // ends here (the steps before stay); with writes refused no other
      // starts.
      if (s.code() == StatusCode::kResourceExhausted) break;
      if (!s.ok()) {
        progress.next = end;
        break;
      }
      // It shared its group, or a write committed just before it: it did
      // nothing. Wait for the next idle period rather than spin.
      if (progress.next == before.next) break;
      compacted_steps_.fetch_add(1, std::memory_order_relaxed);
      compacted_blocks_.fetch_add(progress.blocks - before.blocks, std::memory_order_relaxed);
      compacted_entries_.fetch_add(progress.entries - before.entries, std::memory_order_relaxed);
      if (progress.next >= end) compacted_passes_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void GraphImpl::StopCompactor() {
  {
    base::MutexLock lock(&compactor_mu_);
    compactor_stop_ = true;
    compactor_cv_.SignalAll();
  }
  if (compactor_.joinable()) compactor_.join();
}

CompactionStats GraphImpl::GetCompactionStats() const {
  CompactionStats s;
  s.passes = compacted_passes_.load(std::memory_order_relaxed);
  s.steps = compacted_steps_.load(std::memory_order_relaxed);
  s.blocks = compacted_blocks_.load(std::memory_order_relaxed);
  s.entries = compacted_entries_.load(std::memory_order_relaxed);
  s.pending_changes = changes_since_compact_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace quiver
