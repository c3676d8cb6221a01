// ChunkPipeline: encodes a checkpoint's chunks on several threads and hands
// them, in chunk order, to the calling thread, which writes them.
//
// The calling thread is one of the encoders: whenever the next chunk to
// write is not ready, it encodes one itself (if the window allows), so one
// thread in all is the plain sequential writer. With a `worker_nice` above
// 0 it is not: `threads` workers, each `worker_nice` nice steps below the
// calling thread, do all the encoding and the calling thread only writes, so
// the CPU-heavy part of a checkpoint yields its cores to the process's other
// threads (a commit woken by its fdatasync) while the calling thread (a
// user's, which must keep its priority) does little. Should no worker start,
// the calling thread encodes after all. At most `window` chunks are
// claimed but not yet written, which bounds the memory held by encoded
// chunks to about `window` chunks' bytes; their buffers are reused.
//
// Failure: the first error (an encoder's Status, a write's Status, or
// std::bad_alloc, reported as ResourceExhausted) stops every thread: no new
// chunk is claimed, chunks in progress are finished and dropped, and Run
// returns that error. Every worker is joined before Run returns, on every
// path; no thread outlives the call.
//
// Thread safety: Run is called once, by one thread. `encode` runs on any of
// the threads, concurrently with itself (for different chunks) and with
// `write`; `write` runs on the calling thread only, in chunk order.
//
// Invariants (under mu_):
//   1. next_write_ <= next_claim_ <= count and next_claim_ < next_write_ + window
//      whenever a chunk is claimed: a claimed chunk's slot, index % window, is
//      free, because the chunk `window` before it was written.
//   2. ready_[i % window] holds chunk i for next_write_ <= i < next_claim_
//      once it is encoded, and nothing else.
//   3. once stop_ is set no chunk is claimed, and it is never cleared.
#ifndef QUIVER_CHECKPOINT_CHUNK_PIPELINE_H_
#define QUIVER_CHECKPOINT_CHUNK_PIPELINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "checkpoint/chunk_encoder.h"
#include "quiver/status.h"

namespace quiver::checkpoint {

// ResourceExhausted for a checkpoint or backup that ran out of memory.
// Returned without allocating: a handler of std::bad_alloc must not
// allocate (with memory exhausted for good its own exception would escape,
// and on a worker or the background checkpointer end the process).
const Status& CheckpointOutOfMemory();

class ChunkPipeline {
 public:
  // Encodes chunk `index` into the given buffer.
  using EncodeFn = std::function<Status(std::size_t index, EncodedChunk* out)>;
  // Writes one encoded chunk; called in index order.
  using WriteFn = std::function<Status(const EncodedChunk& chunk)>;

  // `threads` >= 1 counts the calling thread when `worker_nice` is 0, and
  // only the workers otherwise; `window` >= 1.
  ChunkPipeline(std::size_t count, std::uint32_t threads, std::size_t window, EncodeFn encode, WriteFn write,
                std::uint32_t worker_nice = 0);

  // Encodes and writes chunks [0, count); returns the first error, if any.
  Status Run();
  // Whether the pipeline has stopped claiming chunks (an error): an encoder
  // waiting on another chunk's progress checks it, since a chunk claimed
  // but never encoded (its buffer's allocation failed) makes none.
  bool Stopped() const;

 private:
  bool CanClaim() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Claims the next chunk, encodes it with mu_ released, files it under
  // ready_ (or records the failure).
  void EncodeNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the chunk at next_write_ with mu_ released.
  Status WriteNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Fail(Status s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WorkerLoop();

  const std::size_t count_;
  const std::uint32_t threads_;
  const std::size_t window_;
  const std::uint32_t worker_nice_;
  const EncodeFn encode_;
  const WriteFn write_;

  mutable base::Mutex mu_;
  base::CondVar changed_{&mu_};  // a chunk became ready or was written, or stop_ was set
  std::size_t next_claim_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t next_write_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<EncodedChunk>> ready_ ABSL_GUARDED_BY(mu_);  // `window_` slots
  std::vector<std::unique_ptr<EncodedChunk>> spare_ ABSL_GUARDED_BY(mu_);  // written chunks' buffers
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  Status error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHUNK_PIPELINE_H_
