// CommitQueue: the bounded multi-producer queue between Graph::Write callers
// and the writer thread, and WriteRequest, one queued batch.
//
// Producers block while the queue is full (backpressure, bounded memory).
// The writer takes the oldest request plus whatever queued behind it, up to
// the group bounds, so many producers share one version publication (and,
// with the WAL, one fsync). Both sides spin briefly before sleeping: on a
// machine with a core to spare this removes most of the wake-up latency of a
// hand-off.
//
// Thread safety: Push and Close from any thread; PopGroup from the writer
// thread only.
#ifndef QUIVER_WRITE_COMMIT_QUEUE_H_
#define QUIVER_WRITE_COMMIT_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "quiver/graph.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"

namespace quiver {

// One batch on its way through the writer. A synchronous request is shared
// by its producer and the writer (two references); an asynchronous one is
// owned by the writer and completes a promise.
class WriteRequest {
 public:
  WriteRequest(WriteBatch batch, bool async) : batch_(std::move(batch)), async_(async) {}

  const WriteBatch& batch() const { return batch_; }
  std::size_t cost() const;  // operations counted for group bounds
  std::future<Result<CommitInfo>> future() { return promise_.get_future(); }

  // Writer: delivers the outcome and drops the writer's reference.
  void Complete(Result<CommitInfo> result);
  // Producer of a synchronous request: waits for Complete, returns the
  // outcome and drops the producer's reference.
  Result<CommitInfo> Wait(std::uint32_t spin_microseconds);

 private:
  void Unref();

  WriteBatch batch_;
  bool async_;
  std::atomic<int> refs_{2};
  std::atomic<std::uint32_t> done_{0};
  Result<CommitInfo> result_{Status(StatusCode::kInternal, "write not completed")};
  std::promise<Result<CommitInfo>> promise_;
};

class CommitQueue {
 public:
  CommitQueue(std::size_t capacity, std::uint32_t spin_microseconds)
      : capacity_(capacity), spin_microseconds_(spin_microseconds) {}

  // Queues `r`, waiting while the queue is full. FailedPrecondition once
  // closed (r is then not queued).
  Status Push(WriteRequest* r);

  // Writer: waits for work; moves a group of requests into `out` (at least
  // one, at most `max_batches`, stopping before the cost total would pass
  // `max_cost` unless empty). Returns false once closed and drained.
  bool PopGroup(std::vector<WriteRequest*>* out, std::size_t max_batches, std::size_t max_cost);

  // Refuses new requests; queued ones are still handed out.
  void Close();

 private:
  const std::size_t capacity_;
  const std::uint32_t spin_microseconds_;
  std::atomic<std::size_t> approx_size_{0};  // for spinning without the lock

  base::Mutex mu_;
  base::CondVar not_empty_{&mu_};  // the writer waits here
  base::CondVar not_full_{&mu_};   // producers wait here (backpressure)
  std::deque<WriteRequest*> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace quiver

#endif  // QUIVER_WRITE_COMMIT_QUEUE_H_
