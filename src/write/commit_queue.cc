#include "write/commit_queue.h"

#include <chrono>

#include "write/write_batch_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QUIVER_CPU_RELAX() _mm_pause()
#else
#define QUIVER_CPU_RELAX() ((void)0)
#endif

namespace quiver {
namespace {

// Spins until pred() or `microseconds` have passed; true if pred() held.
template <typename Pred>
bool Spin(std::uint32_t microseconds, Pred pred) {
  if (microseconds == 0) return pred();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(microseconds);
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      QUIVER_CPU_RELAX();
    }
    if (std::chrono::steady_clock::now() >= deadline) return pred();
  }
}

}  // namespace

std::size_t WriteRequest::cost() const { return internal::WriteBatchInternal::CountedOps(batch_); }

void WriteRequest::Complete(Result<CommitInfo> result) {
  if (async_) {
    promise_.set_value(std::move(result));
    delete this;
    return;
  }
  result_ = std::move(result);
  // Keep our reference until after notify: the producer may wake on the
  // store and drop its own reference at once.
  done_.store(1, std::memory_order_release);
  done_.notify_one();
  Unref();
}

Result<CommitInfo> WriteRequest::Wait(std::uint32_t spin_microseconds) {
  if (!Spin(spin_microseconds, [this] { return done_.load(std::memory_order_acquire) != 0; })) {
    while (done_.load(std::memory_order_acquire) == 0) done_.wait(0, std::memory_order_acquire);
  }
  Result<CommitInfo> r = std::move(result_);
  Unref();
  return r;
}

void WriteRequest::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

Status CommitQueue::Push(WriteRequest* r) {
  base::MutexLock lock(&mu_);
  while (!closed_ && queue_.size() >= capacity_) not_full_.Wait();
  if (closed_) return FailedPreconditionError("the graph is closed");
  queue_.push_back(r);
  approx_size_.store(queue_.size(), std::memory_order_release);
  not_empty_.Signal();
  return Status::Ok();
}

bool CommitQueue::PopGroup(std::vector<WriteRequest*>* out, std::size_t max_batches, std::size_t max_cost) {
  Spin(spin_microseconds_, [this] { return approx_size_.load(std::memory_order_acquire) != 0; });
  base::MutexLock lock(&mu_);
  while (!closed_ && queue_.empty()) not_empty_.Wait();
  std::size_t cost = 0;
  while (!queue_.empty() && out->size() < max_batches) {
    std::size_t c = queue_.front()->cost();
    if (!out->empty() && cost + c > max_cost) break;
    cost += c;
    out->push_back(queue_.front());
    queue_.pop_front();
  }
  approx_size_.store(queue_.size(), std::memory_order_release);
  if (!out->empty()) not_full_.SignalAll();
  return !out->empty();
}

void CommitQueue::Close() {
  base::MutexLock lock(&mu_);
  closed_ = true;
  not_empty_.SignalAll();
  not_full_.SignalAll();
}

}  // namespace quiver
