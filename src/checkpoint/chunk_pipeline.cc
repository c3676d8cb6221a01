// ChunkPipeline: the claim / encode / write-in-order loop and its workers.
#include "checkpoint/chunk_pipeline.h"

#include <new>
#include <system_error>
#include <thread>
#include <utility>

#include "base/parallel.h"

namespace quiver::checkpoint {
namespace {

// Runs `fn`, reporting memory exhaustion as a Status: an exception must not
// leave a worker thread (std::terminate) or unwind past a released lock.
template <typename Fn>
Status CatchBadAlloc(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return CheckpointOutOfMemory();
  }
}

}  // namespace

const Status& CheckpointOutOfMemory() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted, "out of memory while writing a checkpoint; the WAL keeps everything"));
  return *s;
}

ChunkPipeline::ChunkPipeline(std::size_t count, std::uint32_t threads, std::size_t window, EncodeFn encode,
                             WriteFn write, std::uint32_t worker_nice)
    : count_(count),
      threads_(threads == 0 ? 1 : threads),
      window_(window == 0 ? 1 : window),
      worker_nice_(worker_nice),
      encode_(std::move(encode)),
      write_(std::move(write)) {
  base::MutexLock lock(&mu_);
  ready_.resize(window_);
}

bool ChunkPipeline::CanClaim() const {
  return !stop_ && next_claim_ < count_ && next_claim_ < next_write_ + window_;  // invariant 1
}

void ChunkPipeline::EncodeNext() {
  const std::size_t index = next_claim_++;
  std::unique_ptr<EncodedChunk> chunk;
  if (!spare_.empty()) {
    chunk = std::move(spare_.back());
    spare_.pop_back();
  }
  mu_.Unlock();
  Status s = CatchBadAlloc([&] {
    if (chunk == nullptr) chunk = std::make_unique<EncodedChunk>();
    return encode_(index, chunk.get());
  });
  mu_.Lock();
  if (!s.ok()) {
    Fail(std::move(s));
  } else {
    ready_[index % window_] = std::move(chunk);  // invariant 2
  }
  changed_.SignalAll();
}

Status ChunkPipeline::WriteNext() {
  std::unique_ptr<EncodedChunk> chunk = std::move(ready_[next_write_ % window_]);
  mu_.Unlock();
  Status s = CatchBadAlloc([&] { return write_(*chunk); });
  mu_.Lock();
  if (!s.ok()) {
    Fail(s);
    return s;
  }
  spare_.push_back(std::move(chunk));
  ++next_write_;
  changed_.SignalAll();
  return Status::Ok();
}

void ChunkPipeline::Fail(Status s) {
  if (error_.ok()) error_ = std::move(s);
  stop_ = true;  // invariant 3
  changed_.SignalAll();
}

void ChunkPipeline::WorkerLoop() {
  base::MutexLock lock(&mu_);
  for (;;) {
    while (!CanClaim() && !stop_ && next_claim_ < count_) changed_.Wait();
    if (!CanClaim()) return;  // stopped, or every chunk is claimed
    EncodeNext();
  }
}

bool ChunkPipeline::Stopped() const {
  base::MutexLock lock(&mu_);
  return stop_;
}

Status ChunkPipeline::Run() {
  std::vector<std::thread> workers;
  // Stops and joins the workers however Run leaves (error or success).
  struct Joiner {
    ChunkPipeline* p;
    std::vector<std::thread>* workers;
    ~Joiner() {
      {
        base::MutexLock lock(&p->mu_);
        p->stop_ = true;
        p->changed_.SignalAll();
      }
      for (std::thread& t : *workers) t.join();
    }
  } joiner{this, &workers};
  const std::uint32_t first = worker_nice_ == 0 ? 1 : 0;  // the calling thread counts, or not
  try {
    for (std::uint32_t i = first; i < threads_; ++i)
      workers.emplace_back([this] {
        base::LowerThisThreadPriority(worker_nice_);
        WorkerLoop();
      });
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started (and this one) suffice.
  }
  const bool caller_encodes = worker_nice_ == 0 || workers.empty();

  base::MutexLock lock(&mu_);
  while (next_write_ < count_) {
    if (stop_) return error_;
    if (ready_[next_write_ % window_] != nullptr) {
      QUIVER_RETURN_IF_ERROR(WriteNext());
    } else if (caller_encodes && CanClaim()) {
      EncodeNext();
    } else {
      changed_.Wait();
    }
  }
  return Status::Ok();
}

}  // namespace quiver::checkpoint
