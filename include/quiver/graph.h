// Graph: the handle an application holds on one property graph.
//
// Reads go through snapshots (GetSnapshot); writes go through batches
// (Write / WriteAsync), which one writer thread validates and applies
// all-or-nothing, in arrival order, publishing the batches it drains
// together as one new version. A failing batch fails alone.
//
// Example:
//   auto graph = quiver::Graph::OpenInMemory().value();
//   quiver::WriteBatch b;
//   auto a = b.AddVertex("City"), z = b.AddVertex("City");
//   b.AddEdge("ROAD", a, z, {{"km", 42}});
//   quiver::CommitInfo info = graph->Write(std::move(b)).value();
//   quiver::Snapshot s = graph->GetSnapshot();  // s.sequence() >= info.sequence
//
// Thread safety: every method may be called from any thread, concurrently.
#ifndef QUIVER_GRAPH_H_
#define QUIVER_GRAPH_H_

#include <cstdint>
#include <future>
#include <memory>
#include <string_view>
#include <vector>

#include "quiver/ids.h"
#include "quiver/options.h"
#include "quiver/snapshot.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"

namespace quiver {

// What a committed batch produced.
struct CommitInfo {
  // The batch's sequence number; the first batch ever committed is 1.
  SequenceNumber sequence = 0;
  // Ids of the batch's new vertices / edges, in AddVertex / AddEdge order.
  std::vector<VertexId> vertices;
  std::vector<EdgeId> edges;
};

// Memory the graph's structures hold, from the allocator's own block sizes.
struct MemoryStats {
  // Bytes in blocks reachable from some live version, or retired and not
  // yet reclaimable.
  std::uint64_t allocated_bytes = 0;
  // Of those, bytes retired by newer versions, waiting for old snapshots.
  std::uint64_t retired_bytes = 0;
  // Versions still pinned (by snapshots or as the current version).
  std::uint64_t live_versions = 0;
};

class Graph {
 public:
  // Opens (creating if absent) a durable graph in directory `dir`.
  static Result<std::unique_ptr<Graph>> Open(const Options& options, std::string_view dir);
  // Creates an empty volatile graph: no files, gone when closed.
  static Result<std::unique_ptr<Graph>> OpenInMemory(const Options& options = {});

  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  // Closes the graph if still open. Snapshots may outlive it.
  virtual ~Graph();

  // The newest committed version. O(1), lock-free. Works after Close().
  virtual Snapshot GetSnapshot() const = 0;

  // Commits `batch` and waits for it. On success the batch is in every
  // snapshot acquired afterwards. Errors: the validation codes of the batch
  // (nothing applied), FailedPrecondition after Close().
  virtual Result<CommitInfo> Write(WriteBatch batch) = 0;

  // Queues `batch` and returns at once (after waiting for queue space);
  // the future completes like Write.
  virtual std::future<Result<CommitInfo>> WriteAsync(WriteBatch batch) = 0;

  // Finishes queued batches, stops the writer, refuses later writes.
  // Idempotent.
  virtual Status Close() = 0;

  virtual MemoryStats GetMemoryStats() const = 0;
};

}  // namespace quiver

#endif  // QUIVER_GRAPH_H_
