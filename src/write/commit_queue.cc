#include "write/commit_queue.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "base/cpus.h"
#include "write/write_batch_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QUIVER_CPU_RELAX() _mm_pause()
#else
#define QUIVER_CPU_RELAX() ((void)0)
#endif

namespace quiver {
namespace {

// A gap this long between two looks of a spin means the spinner lost its
// core: the machine has no core to spare.
constexpr auto kPreempted = std::chrono::microseconds(50);

// Spins until pred() or `microseconds` have passed; true if pred() held.
// Sets *preempted (when given) if the spinner lost its core meanwhile.
// `yield`: gives the core to whoever else wants it between looks
// (sched_yield) instead of pausing on it, for a spinner without a core to
// itself: the thread it waits for may need that very core.
template <typename Pred>
bool Spin(std::uint32_t microseconds, Pred pred, bool* preempted = nullptr, bool yield = false) {
  if (microseconds == 0) return pred();
  auto last = std::chrono::steady_clock::now();
  auto deadline = last + std::chrono::microseconds(microseconds);
  while (true) {
    if (yield) {
      if (pred()) return true;
      sched_yield();
      if (std::chrono::steady_clock::now() >= deadline) return pred();
      continue;
    }
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      QUIVER_CPU_RELAX();
    }
    auto now = std::chrono::steady_clock::now();
    if (preempted != nullptr && now - last > kPreempted) {
      *preempted = true;
      return pred();
    }
    if (now >= deadline) return pred();
    last = now;
  }
}

// The longest a producer waiting alone spins through a group it expects to
// take longer than spin_microseconds (a WAL sync). Past this, sleeping and
// paying one wake-up costs less than the core spent spinning.
constexpr std::uint32_t kMaxLoneSpinMicroseconds = 1000;

// Commits for which nobody spins through long groups after such a spin
// lost its core: on a machine whose cores are all busy the spinner only
// delays the writer.
constexpr std::uint32_t kLoneSpinHoldoff = 256;

// Cores left once the writer has one, of `cpus` (0: those this process
// may use, base::AvailableCpus).
std::uint32_t SpareCores(unsigned cpus) {
  if (cpus == 0) cpus = base::AvailableCpus();
  return cpus == 0 ? 0 : cpus - 1;
}

}  // namespace

const Status& OutOfMemoryStatus() {
  static const Status* const s = new Status(
      internal::ImmortalStatus(StatusCode::kResourceExhausted,
                               "out of memory while applying the commit group; nothing of it was applied"));
  return *s;
}

const Status& PoisonedStatus() {
  static const Status* const s = new Status(
      internal::ImmortalStatus(StatusCode::kPoisoned, "an earlier failure stopped all writes to this graph"));
  return *s;
}

const Status& DurabilityUnknownStatus() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kDurabilityUnknown,
      "WAL write failed (no memory left to describe the failure); the group may or may not be on disk"));
  return *s;
}

std::size_t WriteRequest::cost() const { return internal::WriteBatchInternal::CountedOps(batch_); }

std::size_t WriteRequest::bytes() const { return internal::WriteBatchInternal::ApproximateBytes(batch_); }

GroupLeader::GroupLeader(std::size_t max_batches, std::size_t max_cost)
    : max_batches_(std::max<std::size_t>(max_batches, 1)), max_cost_(max_cost) {
  group_.reserve(max_batches_);
}

void WriteRequest::Complete(Result<CommitInfo> result) {
  if (async_) {
    promise_->set_value(std::move(result));
    delete this;
    return;
  }
  result_ = std::move(result);
  done_.store(1, std::memory_order_release);
  Unref();
}

void WriteRequest::CompleteOutOfMemory() {
  if (async_) {
    promise_->set_value(std::move(result_));
    delete this;
    return;
  }
  done_.store(1, std::memory_order_release);
  Unref();
}

void WriteRequest::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

CommitQueue::CommitQueue(std::size_t capacity, std::uint32_t spin_microseconds, std::size_t max_bytes,
                         unsigned cpus)
    : capacity_(capacity),
      max_bytes_(max_bytes),
      spin_microseconds_(spin_microseconds),
      spin_slots_(SpareCores(cpus)) {}

Status CommitQueue::Push(WriteRequest* r, GroupLeader* leader) {
  const std::size_t bytes = r->bytes();  // walks the batch: outside the lock
  base::MutexLock lock(&mu_);
  // Full: too many requests, or too many bytes for this one too. A request
  // larger than the whole bound still enters an empty queue (else it would
  // wait for ever).
  while (!closed_ &&
         (size_ >= capacity_ || (size_ != 0 && bytes > max_bytes_ - std::min(bytes_, max_bytes_))))
    not_full_.Wait();
  if (closed_) return FailedPreconditionError("the graph is closed");
  r->group_ = groups_popped_;  // invariant 1
  r->bytes_ = bytes;
  r->next_ = nullptr;
  (tail_ == nullptr ? head_ : tail_->next_) = r;
  tail_ = r;
  bytes_ += bytes;
  approx_size_.store(++size_);  // sequentially consistent: invariant 4
  // Invariant 4: a producer that will lead counts among the leaders from
  // here until its Wait stops trying.
  if (leader != nullptr && ShortGroups()) {
    r->leader_ = leader;
    leaders_.fetch_add(1);
  }
  // While someone holds the writer's role, the writer thread waits for it
  // whatever is queued: FinishGroup wakes it (invariant 3). A leading
  // producer commits r itself, or wakes the writer thread when it stops
  // trying (StopLeading).
  if (!busy_ && r->leader_ == nullptr) not_empty_.Signal();
  return Status::Ok();
}

bool CommitQueue::TryLead(WriteRequest* r) {
  // Most tries that fail, fail here, without the lock (many producers:
  // the lock is what they would contend on). Several producers still
  // inside Wait (woken by the last group, not yet gone) come back at once:
  // the writer thread groups them, where a leader that loses its core
  // among them would hold them all up (32 producers on 2 cores: a third
  // fewer commits). One may be: two producers taking turns still lead.
  if (approx_size_.load(std::memory_order_relaxed) != 0 || busy_hint_.load(std::memory_order_relaxed) ||
      waiting_.load(std::memory_order_relaxed) > 1)
    return false;
  base::MutexLock lock(&mu_);
  // Only a producer that commits alone leads: once groups hold several
  // requests, producers arrive together, and one leading a group of one
  // would split what the writer thread would commit with a single sync.
  if (closed_ || busy_ || size_ != 0 || last_group_size_ > 1) return false;
  busy_ = true;  // invariant 3
  approx_busy_.store(true, std::memory_order_relaxed);
  busy_hint_.store(true, std::memory_order_relaxed);
  r->group_ = groups_popped_++;
  group_start_ = std::chrono::steady_clock::now();
  return true;
}

Result<CommitInfo> CommitQueue::Wait(WriteRequest* r) {
  if (!r->done()) {  // else committed already (by this caller, after TryLead)
    bool alone = waiting_.fetch_add(1, std::memory_order_relaxed) < spin_slots_;
    if (r->leader_ != nullptr) {
      WaitLeading(r, alone);
      StopLeading();
    } else {
      bool preempted = false;
      std::uint32_t budget = SpinBudget(alone);
      // Short groups and no core to spare: between looks the core goes to
      // whoever needs it (the writer, or a producer about to submit).
      Spin(
          budget, [r] { return r->done(); }, &preempted,
          /*yield=*/!alone && budget != 0 && ShortGroups());
      if (preempted) lone_spin_holdoff_.store(kLoneSpinHoldoff, std::memory_order_relaxed);
    }
    // Invariant 2: once group g is finished and r is still not done, r was
    // cut off into a later group; sleep on that group's word instead.
    std::uint64_t g = r->group_;
    while (!r->done()) {
      base::Futex& word = wake_[g % 2];
      std::uint32_t seen = word.Load();
      if (r->done()) break;
      if (groups_finished_.load(std::memory_order_acquire) > g) {
        ++g;
        continue;
      }
      word.Wait(seen);
    }
    waiting_.fetch_sub(1, std::memory_order_relaxed);
  } else if (r->leader_ != nullptr) {
    StopLeading();  // committed before its producer came to wait
  }
  Result<CommitInfo> result = std::move(r->result_);
  r->Unref();
  return result;
}

bool CommitQueue::ShortGroups() const {
  return spin_microseconds_ != 0 && group_microseconds_.load(std::memory_order_relaxed) <= spin_microseconds_;
}

void CommitQueue::WaitLeading(WriteRequest* r, bool alone) {
  GroupLeader* leader = r->leader_;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_microseconds_);
  while (!r->done()) {
    // Whatever is queued, r or others, once nobody holds the role: the
    // producers' requests are committed without a hand-off to the writer
    // thread, and a group holds everyone who queued meanwhile.
    if (approx_size_.load(std::memory_order_relaxed) != 0 && !approx_busy_.load(std::memory_order_relaxed) &&
        TryLeadQueued(leader)) {
      leader->Commit(leader->group_);
      leader->group_.clear();  // before the role goes: the next holder fills it
      FinishGroup();
      continue;
    }
    if (std::chrono::steady_clock::now() >= deadline) return;
    if (alone) {
      for (int i = 0; i < 64 && !r->done(); ++i) QUIVER_CPU_RELAX();
    } else {
      sched_yield();  // the role holder, or a producer about to submit, may need this core
    }
  }
}

bool CommitQueue::TryLeadQueued(GroupLeader* leader) {
  base::MutexLock lock(&mu_);
  if (busy_ || size_ == 0 || closed_) return false;  // once closed, the writer thread drains
  PopLocked(&leader->group_, leader->max_batches_, leader->max_cost_);
  return true;
}

void CommitQueue::StopLeading() {
  // Invariant 4: the last leader to stop makes sure queued work is not
  // left with nobody to commit it. Push stores approx_size_ and FinishGroup
  // reads leaders_ under the lock, all sequentially consistent: either
  // FinishGroup saw this producer gone (and woke the writer thread), or
  // this producer sees the work queued.
  if (leaders_.fetch_sub(1) != 1 || approx_size_.load() == 0) return;
  base::MutexLock lock(&mu_);
  if (!busy_ && size_ != 0 && leaders_.load() == 0) not_empty_.Signal();
}

std::uint32_t CommitQueue::SpinBudget(bool alone) {
  if (spin_microseconds_ == 0) return 0;
  std::uint32_t group = group_microseconds_.load(std::memory_order_relaxed);
  // Short groups: the result comes back sooner than a sleep and wake-up
  // would take, whoever else is waiting.
  if (group <= spin_microseconds_) return spin_microseconds_;
  // Long groups (WAL syncs): only a producer with a spare core to itself
  // spins, so that it submits its next batch the moment this one completes.
  if (!alone || group > kMaxLoneSpinMicroseconds) return 0;
  if (std::uint32_t holdoff = lone_spin_holdoff_.load(std::memory_order_relaxed); holdoff != 0) {
    lone_spin_holdoff_.store(holdoff - 1, std::memory_order_relaxed);  // racy: only a hint
    return 0;
  }
  return std::min(kMaxLoneSpinMicroseconds, 2 * group + spin_microseconds_);
}

bool CommitQueue::PopGroup(std::vector<WriteRequest*>* out, std::size_t max_batches, std::size_t max_cost) {
  // Close ends the spin too: a graph being destroyed never waits it out.
  Spin(spin_microseconds_, [this] {
    return approx_size_.load(std::memory_order_acquire) != 0 ||
           approx_closed_.load(std::memory_order_acquire);
  });
  base::MutexLock lock(&mu_);
  // Invariant 3: a producer that took the writer's role (TryLead) finishes
  // its group first, Close or not.
  while (busy_ || (!closed_ && size_ == 0)) not_empty_.Wait();
  if (head_ == nullptr) return false;  // closed and drained
  PopLocked(out, max_batches, max_cost);
  return true;
}

void CommitQueue::PopLocked(std::vector<WriteRequest*>* out, std::size_t max_batches, std::size_t max_cost) {
  std::size_t cost = 0;
  while (head_ != nullptr && out->size() < max_batches) {
    std::size_t c = head_->cost();
    if (!out->empty() && cost + c > max_cost) break;
    cost += c;
    bytes_ -= head_->bytes_;
    out->push_back(head_);  // never allocates: room for max_batches was reserved
    head_ = head_->next_;
    if (head_ == nullptr) tail_ = nullptr;
    --size_;
  }
  approx_size_.store(size_);  // sequentially consistent: invariant 4
  busy_ = true;               // invariant 3
  approx_busy_.store(true, std::memory_order_relaxed);
  busy_hint_.store(true, std::memory_order_relaxed);
  last_group_size_ = out->size();
  ++groups_popped_;
  not_full_.SignalAll();
  group_start_ = std::chrono::steady_clock::now();
}

void CommitQueue::FinishGroup() {
  // Invariant 2: the results are stored before the word moves, and a
  // producer reads the word before checking its result, so it either sees
  // its result or sleeps on a value that has already changed.
  auto took =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - group_start_);
  std::uint32_t old = group_microseconds_.load(std::memory_order_relaxed);
  auto now = static_cast<std::uint32_t>(std::min<std::int64_t>(took.count(), 1'000'000));
  group_microseconds_.store(old - old / 8 + now / 8, std::memory_order_relaxed);  // moving average
  std::uint64_t g = groups_finished_.load(std::memory_order_relaxed);
  groups_finished_.store(g + 1, std::memory_order_release);
  wake_[g % 2].Bump();
  // Invariant 3: the role goes back. The writer thread waits for it only
  // when work is queued or the queue closed; it is woken only then.
  base::MutexLock lock(&mu_);
  busy_ = false;
  approx_busy_.store(false, std::memory_order_relaxed);
  busy_hint_.store(last_group_size_ > 1, std::memory_order_relaxed);
  // Invariant 4: a leading producer takes queued work; the writer thread
  // is woken only when none is left to.
  if ((size_ != 0 && leaders_.load() == 0) || closed_) not_empty_.Signal();
}

std::size_t CommitQueue::TEST_queued_bytes() {
  base::MutexLock lock(&mu_);
  return bytes_;
}

void CommitQueue::Close() {
  base::MutexLock lock(&mu_);
  closed_ = true;
  approx_closed_.store(true, std::memory_order_release);
  not_empty_.SignalAll();
  not_full_.SignalAll();
}

}  // namespace quiver
