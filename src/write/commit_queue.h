// CommitQueue: the bounded multi-producer queue between Graph::Write callers
// and the writer thread, and WriteRequest, one queued batch.
//
// Producers block while the queue is full (backpressure, bounded memory):
// while it holds WriterOptions::max_queued_batches requests, or while the
// request would take the queued bytes (WriteRequest::bytes) past
// max_queued_bytes. A request larger than that whole bound still enters an
// empty queue, so it waits for the queue to drain, never for ever.
// The writer takes the oldest request plus whatever queued behind it, up to
// the group bounds, so many producers share one version publication (and,
// with the WAL, one fsync).
//
// Waiting. The writer spins briefly (WriterOptions::spin_microseconds) for
// work before it sleeps. A producer spins only where that pays: when recent
// groups took no longer than that spin (volatile mode, fast devices), every
// producer spins for it, pausing on its core while it has one to itself
// and yielding it (sched_yield) between looks while more producers wait
// than there are spare cores; when groups take longer (a WAL sync), only a
// producer with a spare core to itself spins, through about twice the
// recent group time, so that it submits its next batch the moment its
// commit is done. Every other producer sleeps at once: on a small machine a
// spinner takes the core that the writer, or a producer about to submit,
// needs. For the same reason, once a spinner finds it lost its core (the
// machine is busy), nobody spins through long groups for the next few
// hundred commits. Spare cores are those the process may use
// (base::AvailableCpus: affinity mask and cgroup quota) less the writer's.
//
// Sleepers are woken once per group, not once per request: each producer
// sleeps on the futex word of the group it expects to join (the next one
// the writer will take when it pushes), and the writer bumps that word,
// waking all its sleepers with one system call, after completing the group
// (no system call while nobody sleeps).
//
// Caller commits. A producer that finds the queue empty and no group being
// committed takes the writer's role for its own request (TryLead): it
// commits that group of one on its own thread, as LevelDB's leader does,
// and so spares the two hand-offs between threads (the writer's wake-up on
// Push and the producer's on completion), which on a small machine cost
// about as much as the work itself. One writer at a time still holds: the
// role (`busy_`) is taken under the lock by TryLead, PopGroup or a leading
// Wait and given back by FinishGroup, and the writer thread waits while
// someone else holds it. Nobody leads alone after a group of several:
// producers woken together would race, and one leading a group of one
// would split what the writer thread commits with one sync.
//
// Producers lead queued groups. While groups are short (the spin condition
// above), a producer that queued its request with a GroupLeader (Push) does
// not wake the writer thread for it: while it waits, whenever nobody holds
// the writer's role and requests are queued, it takes the role with all of
// them (its own among them or not: LevelDB's writer queue, where the front
// writer commits everybody queued behind it), commits them through the
// leader on its own thread and finishes the group. So with more producers
// than cores, commits need no hand-off to the writer thread, and a group
// holds every producer that queued during the last one. A producer stops
// trying when its request is done or its spin runs out; the writer thread
// is woken only when queued work has no leader left (invariant 4). With
// long groups (WAL syncs) nobody leads queued groups: the writer thread
// groups them as before.
//
// Thread safety: Push, TryLead, Wait and Close from any thread; PopGroup
// from the writer thread only; FinishGroup from whoever holds the writer's
// role (the writer thread after PopGroup, a producer after TryLead, a
// producer leading inside Wait, which calls it itself).
//
// Invariants:
//  1. groups are numbered in the order PopGroup, TryLead or a leading Wait
//     hands them out; a request pushed while `groups_popped_` is g lands in
//     group g or a later one (later only when the group bounds cut it off);
//  2. the role holder completes every request of group g (WriteRequest::
//     Complete) before FinishGroup raises `groups_finished_` to g + 1, and
//     only then bumps and wakes `wake_[g % 2]`. Group g + 2 is taken only
//     after FinishGroup(g + 1), so the sleepers on one word belong to one
//     group (and the few cut off from the group before, which move on);
//  3. at most one thread holds the writer's role (`busy_`): from PopGroup,
//     a successful TryLead or TryLeadQueued to the next FinishGroup. Groups
//     are therefore taken and finished strictly one after the other,
//     whoever commits them;
//  4. queued work is never left without someone to commit it: `leaders_`
//     counts the producers that may still lead (from Push to the end of
//     their try, StopLeading); Push does not wake the writer thread for a
//     request whose producer counts there, FinishGroup wakes it when work
//     is queued and `leaders_` is 0, and the last leader to stop wakes it
//     when work is queued and nobody holds the role. FinishGroup reads
//     `leaders_` under the lock; StopLeading reads the queue's length
//     after its decrement, all of it sequentially consistent (Push and the
//     pops store `approx_size_` so), then checks under the lock: one of
//     the two sees the other.
#ifndef QUIVER_WRITE_COMMIT_QUEUE_H_
#define QUIVER_WRITE_COMMIT_QUEUE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/futex.h"
#include "base/mutex.h"
#include "quiver/graph.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"

namespace quiver {
namespace storage {
struct RepackProgress;
}  // namespace storage

// One batch on its way through the writer. A synchronous request is shared
// by its producer and the writer (two references); an asynchronous one is
// owned by the writer and completes a promise.
// The writer's answers that need no memory to give: copies of statuses
// built once (internal::ImmortalStatus), so copying them allocates nothing.
// Each is built on its first call; GraphImpl calls them while it starts.
const Status& OutOfMemoryStatus();        // ResourceExhausted: nothing of the group was applied
const Status& PoisonedStatus();           // Poisoned: an earlier failure stopped all writes
const Status& DurabilityUnknownStatus();  // DurabilityUnknown: the WAL write failed, no memory to say how

class WriteRequest;

// What a producer needs to commit the queued requests itself while it
// waits (Wait; "Producers lead queued groups" above): where the group
// goes, its bounds, and the commit. Only the writer's role holder touches
// the group's vector, so one GroupLeader serves every producer of a graph.
class GroupLeader {
 public:
  // Reserves room for the largest group now: leading never allocates.
  GroupLeader(std::size_t max_batches, std::size_t max_cost);
  // With the writer's role held: commits `group` and completes each of
  // its requests (WriteRequest::Complete). The caller then FinishGroups.
  virtual void Commit(std::span<WriteRequest* const> group) noexcept = 0;
  virtual ~GroupLeader() = default;

 private:
  friend class CommitQueue;
  std::vector<WriteRequest*> group_;
  std::size_t max_batches_;
  std::size_t max_cost_;
};

class WriteRequest {
 public:
  // `sync`: WriteOptions::sync (an empty batch with it is a Graph::Sync).
  WriteRequest(WriteBatch batch, bool async, bool sync = true)
      : batch_(std::move(batch)), async_(async), sync_(sync) {
    if (async) promise_.emplace();  // a synchronous request answers through result_: no shared state
  }

  const WriteBatch& batch() const { return batch_; }
  bool sync() const { return sync_; }
  // Set before Push: the writer's role holder (the writer thread, or a
  // producer leading the queued group) calls `f` on its thread once this
  // request's group succeeded with nothing held back (every published
  // group written and synced), before completing it. Checkpoints take their version and
  // WAL position there.
  void set_after_sync(std::function<void()> f) { after_sync_ = std::move(f); }
  const std::function<void()>& after_sync() const { return after_sync_; }
  // Set before Push, on an empty batch: a compaction step (Graph::Compact).
  // The writer repacks leaves of vertex ids [progress->next, end) in this
  // request's group and, once the group is published (or changed nothing),
  // advances *progress before completing the request; the caller owns
  // *progress and reads it after the request completed. `alone` (the
  // background compactor's steps): the step repacks only in a group of its
  // own and while the graph is idle (GraphImpl::IdleForCompaction), so
  // nothing queued beside it waits for it or shares its failure, and a
  // write committed just before it stops the pass; otherwise it leaves
  // *progress as it was.
  void set_compact(storage::RepackProgress* progress, std::uint64_t end, bool alone = false) {
    compact_ = progress;
    compact_end_ = end;
    compact_alone_ = alone;
  }
  storage::RepackProgress* compact() const { return compact_; }
  std::uint64_t compact_end() const { return compact_end_; }
  bool compact_alone() const { return compact_alone_; }
  std::size_t cost() const;  // operations counted for group bounds
  // Approximate memory the batch holds (WriteBatchInternal::
  // ApproximateBytes): what the queue's byte bound counts.
  std::size_t bytes() const;
  // Async requests only.
  std::future<Result<CommitInfo>> future() { return promise_->get_future(); }

  // Writer: delivers the outcome and drops the writer's reference. Wakes
  // nobody: CommitQueue::FinishGroup wakes the whole group at once.
  void Complete(Result<CommitInfo> result);
  // Writer: completes with ResourceExhausted without allocating (the
  // status is built with the request), so a writer out of memory can still
  // answer every request of its group.
  void CompleteOutOfMemory();

 private:
  friend class CommitQueue;

  bool done() const { return done_.load(std::memory_order_acquire) != 0; }
  void Unref();

  WriteBatch batch_;
  bool async_;
  bool sync_;
  std::function<void()> after_sync_;
  storage::RepackProgress* compact_ = nullptr;
  std::uint64_t compact_end_ = 0;
  bool compact_alone_ = false;
  std::uint64_t group_ = 0;  // the group expected at Push (invariant 1)
  std::size_t bytes_ = 0;    // bytes(), taken at Push (CommitQueue, under its lock)
  // Set by Push when this request's producer may lead (invariant 4).
  GroupLeader* leader_ = nullptr;
  WriteRequest* next_ = nullptr;  // the next queued request (CommitQueue, under its lock)
  std::atomic<int> refs_{2};
  std::atomic<std::uint32_t> done_{0};
  // Until completed: the answer CompleteOutOfMemory gives (a copy of an
  // immortal status: building a request allocates no message for it).
  Result<CommitInfo> result_{OutOfMemoryStatus()};
  std::optional<std::promise<Result<CommitInfo>>> promise_;  // async requests only
};

class CommitQueue {
 public:
  // `capacity`: most queued requests; `max_bytes`: most queued bytes
  // (WriteRequest::bytes), except that one request is always admitted to
  // an empty queue; `spin_microseconds`: WriterOptions::spin_microseconds;
  // `cpus`: the CPUs the process may use (base::AvailableCpus).
  CommitQueue(std::size_t capacity, std::uint32_t spin_microseconds,
              std::size_t max_bytes = std::numeric_limits<std::size_t>::max(), unsigned cpus = 0);

  // Queues `r`, waiting while the queue is full (its batches or its bytes).
  // FailedPrecondition once closed (r is then not queued). `will_lead`: the
  // With a `leader` (the caller then Waits for r), while groups are short,
  // the writer thread is not woken for r: the caller's Wait commits the
  // queued requests itself, or wakes the writer thread when it stops
  // trying ("Producers lead queued groups").
  Status Push(WriteRequest* r, GroupLeader* leader = nullptr);

  // Caller commits: if the queue is open and empty, nobody holds the
  // writer's role, the writer thread's last group held one request and at
  // most one other producer is still inside Wait, takes it for `r` alone
  // (a group of one) and returns true; the caller then commits the group, calls FinishGroup, and Wait
  // (which returns at once). Else returns false and changes nothing: the
  // caller Pushes.
  bool TryLead(WriteRequest* r);

  // Producer of a synchronous request that Push queued: waits until the
  // writer completed it, returns the outcome and drops the producer's
  // reference (r must not be used afterwards). If Push took a leader for
  // r, meanwhile commits whatever is queued whenever nobody holds the
  // writer's role (r among it, or not), through that leader's Commit.
  Result<CommitInfo> Wait(WriteRequest* r);

  // Writer: waits for work; moves a group of requests into `out` (at least
  // one, at most `max_batches`, stopping before the cost total would pass
  // `max_cost` unless empty). Returns false once closed and drained.
  bool PopGroup(std::vector<WriteRequest*>* out, std::size_t max_batches, std::size_t max_cost);

  // The writer's role holder: every request of the group PopGroup, TryLead
  // or a leading Wait last handed out has been completed; wakes their
  // producers and gives the role back (waking the writer thread if work is
  // waiting and no producer will lead it).
  void FinishGroup();

  // Refuses new requests; queued ones are still handed out.
  void Close();

  // For tests: bytes of the queued requests.
  std::size_t TEST_queued_bytes();

 private:
  // How long a producer entering Wait spins; `alone`: no more producers
  // are waiting than there are spare cores.
  std::uint32_t SpinBudget(bool alone);
  // Whether recent groups took no longer than a spin: producers lead then.
  bool ShortGroups() const;
  // Wait's part for a producer with a Leader while groups are short.
  void WaitLeading(WriteRequest* r, bool alone);
  // Takes the writer's role with the queued requests if nobody holds it;
  // false (and nothing changed) else.
  bool TryLeadQueued(GroupLeader* leader);
  // A producer stops trying to lead: the last one to stop wakes the writer
  // thread if work is queued and nobody holds the role.
  void StopLeading();
  // Moves the oldest queued requests into `out`, up to the bounds, and
  // takes the writer's role (invariant 3) for them.
  void PopLocked(std::vector<WriteRequest*>* out, std::size_t max_batches, std::size_t max_cost)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::size_t capacity_;
  const std::size_t max_bytes_;
  const std::uint32_t spin_microseconds_;
  const std::uint32_t spin_slots_;           // producers that may spin at once
  std::atomic<std::size_t> approx_size_{0};  // for spinning without the lock
  std::atomic<bool> approx_closed_{false};   // ends the writer's spin on Close
  std::atomic<bool> approx_busy_{false};     // busy_, for a leading Wait without the lock
  // Set under mu_ while nobody may lead (busy_, or last_group_size_ > 1):
  // TryLead reads it without the lock and, if set, gives up at once.
  std::atomic<bool> busy_hint_{false};
  std::atomic<std::uint32_t> waiting_{0};  // producers inside Wait
  // Producers inside Wait that may still lead queued requests (invariant
  // 4); the writer thread is woken only when there are none.
  std::atomic<std::uint32_t> leaders_{0};
  // Commits left without lone spinning since a spinner lost its core.
  std::atomic<std::uint32_t> lone_spin_holdoff_{0};
  // Moving average of PopGroup-to-FinishGroup time; written by the writer.
  std::atomic<std::uint32_t> group_microseconds_{0};
  std::chrono::steady_clock::time_point group_start_;  // the role holder only

  // Invariant 2; written by the role holder only.
  std::atomic<std::uint64_t> groups_finished_{0};
  base::Futex wake_[2];

  base::Mutex mu_;
  base::CondVar not_empty_{&mu_};  // the writer waits here
  base::CondVar not_full_{&mu_};   // producers wait here (backpressure)
  // Queued requests, oldest first, linked through WriteRequest::next_: Push
  // allocates nothing, so queuing a request never fails for memory.
  WriteRequest* head_ ABSL_GUARDED_BY(mu_) = nullptr;
  WriteRequest* tail_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::size_t size_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;  // the queued requests' WriteRequest::bytes
  std::uint64_t groups_popped_ ABSL_GUARDED_BY(mu_) = 0;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;  // invariant 3: someone holds the writer's role
  // Requests in the last group PopGroup or a leading Wait took (TryLead
  // leads only after groups of one: producers committing one at a time).
  std::size_t last_group_size_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace quiver

#endif  // QUIVER_WRITE_COMMIT_QUEUE_H_
