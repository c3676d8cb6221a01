// GraphImpl: the one class that knows every subsystem. It owns the version
// chain (storage), the commit queue and the writer thread (write), and hands
// out snapshots.
//
// Invariant 2 (a batch is visible entirely or not at all) is kept here and
// in BatchProcessor: the writer validates a batch before changing anything,
// applies it to a version no reader can see, and publishes the version only
// after every batch of the group is applied.
//
// Thread safety: all public methods may be called from any thread. Fields
// are grouped below by who may touch them.
#ifndef QUIVER_GRAPH_IMPL_H_
#define QUIVER_GRAPH_IMPL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "quiver/graph.h"
#include "storage/version.h"
#include "write/batch_processor.h"
#include "write/commit_queue.h"

namespace quiver {

class GraphImpl final : public Graph {
 public:
  explicit GraphImpl(const Options& options);
  ~GraphImpl() override;

  Snapshot GetSnapshot() const override;
  Result<CommitInfo> Write(WriteBatch batch) override;
  std::future<Result<CommitInfo>> WriteAsync(WriteBatch batch) override;
  Status Close() override;
  MemoryStats GetMemoryStats() const override;

 private:
  void WriterLoop();
  void CommitGroup(const std::vector<WriteRequest*>& group);

  // Immutable after construction.
  const Options options_;
  storage::VersionChain* const chain_;  // deletes itself after Shutdown

  // Any thread.
  CommitQueue queue_;
  std::once_flag close_once_;

  // Writer thread only.
  BatchProcessor processor_;
  std::uint64_t epoch_ = 0;
  bool poisoned_ = false;

  std::thread writer_;  // last: starts after everything above exists
};

}  // namespace quiver

#endif  // QUIVER_GRAPH_IMPL_H_
