// Helpers GraphImpl's parts share across their files (graph_impl.cc, the
// writer in write/writer.cc, the checkpoint scheduler in
// checkpoint/scheduler.cc): internal to the library.
#ifndef QUIVER_GRAPH_IMPL_UTIL_H_
#define QUIVER_GRAPH_IMPL_UTIL_H_

#include <chrono>
#include <cstdint>

#include "base/parallel.h"
#include "checkpoint/checkpoint_writer.h"
#include "quiver/options.h"
#include "storage/version.h"

namespace quiver {

class GraphImpl;

// The graph whose writer's role this thread holds: the writer thread's, or
// a producer's committing its own group (caller commits); else null. A
// logger called meanwhile runs on this thread, and a write it made would
// wait for the group this thread is committing: for ever. One variable for
// the whole library (inline, not file-local): the writer's role holders in
// write/writer.cc set it, the entry points in graph_impl.cc read it.
inline thread_local const GraphImpl* t_graph_committing_here = nullptr;

// Marks this thread as holding `g`'s writer's role for its lifetime.
class CommittingHere {
 public:
  explicit CommittingHere(const GraphImpl* g) : saved_(t_graph_committing_here) {
    t_graph_committing_here = g;
  }
  ~CommittingHere() { t_graph_committing_here = saved_; }
  CommittingHere(const CommittingHere&) = delete;
  CommittingHere& operator=(const CommittingHere&) = delete;

 private:
  const GraphImpl* saved_;
};

inline std::uint64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

// How checkpoints are written: DurableOptions::io_threads encoders, 0
// meaning one per hardware thread, at most 8; abandoned rather than leave
// less than one WAL segment of free space.
inline checkpoint::WriteOptions CheckpointWriteOptions(const Options& o) {
  checkpoint::WriteOptions w;
  w.threads = base::ResolveThreads(o.durable.io_threads);
  w.worker_nice = o.background_nice;
  // Never take the space of the WAL's next segment (docs/durability.md).
  w.keep_free_bytes = o.durable.wal_segment_bytes;
  return w;
}

// A reference on the current version for the length of a scope.
class PinnedVersion {
 public:
  explicit PinnedVersion(storage::VersionChain* chain) : chain_(chain), v_(chain->Acquire()) {}
  // Takes over the reference `v` (from chain->Acquire()).
  PinnedVersion(storage::VersionChain* chain, const storage::Version* v) : chain_(chain), v_(v) {}
  ~PinnedVersion() { chain_->Release(v_); }
  PinnedVersion(const PinnedVersion&) = delete;
  PinnedVersion& operator=(const PinnedVersion&) = delete;
  const storage::GraphRoots& roots() const { return v_->roots; }

 private:
  storage::VersionChain* chain_;
  const storage::Version* v_;
};

}  // namespace quiver

#endif  // QUIVER_GRAPH_IMPL_UTIL_H_
