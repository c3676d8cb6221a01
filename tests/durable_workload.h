// The deterministic commit workload the durability tests share: group k
// (1-based) is one batch whose content depends only on k and the state it is
// applied to, and every few groups it removes or changes something, so replay
// exercises every operation kind.
#ifndef QUIVER_TESTS_DURABLE_WORKLOAD_H_
#define QUIVER_TESTS_DURABLE_WORKLOAD_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>

#include "quiver/quiver.h"

namespace quiver::test_util {

inline WriteBatch WorkloadBatch(int k, std::uint64_t vertex_limit, std::uint64_t edge_limit) {
  WriteBatch b;
  std::mt19937_64 rng(static_cast<std::uint64_t>(k));
  NewVertex v = b.AddVertex(k % 3 == 0 ? "City" : "Person", {{"k", k}, {"name", "n" + std::to_string(k)}});
  if (vertex_limit > 0) {
    VertexId other(rng() % vertex_limit);
    b.AddEdge(k % 2 ? "KNOWS" : "LIKES", v, other, {{"w", 0.5 * k}});
    b.AddEdge("KNOWS", other, v);
  }
  if (k % 7 == 0 && edge_limit > 0) b.RemoveEdge(EdgeId(rng() % edge_limit));
  if (k % 11 == 0 && vertex_limit > 1) b.RemoveVertex(VertexId(rng() % vertex_limit));
  if (k % 5 == 0 && vertex_limit > 0)
    b.SetProperty(VertexId(rng() % vertex_limit), "touched", std::string(40, 'x'));
  return b;
}

// Applies group k; a batch whose removals name already-removed elements fails
// validation and is replaced by a plain one (the same on every graph), so
// group k always commits as sequence k.
inline Result<CommitInfo> ApplyGroup(Graph& g, int k) {
  Snapshot s = g.GetSnapshot();
  WriteBatch b = WorkloadBatch(k, s.vertex_id_limit(), s.edge_id_limit());
  Result<CommitInfo> r = g.Write(b);
  if (r.ok() || r.status().code() != StatusCode::kNotFound) return r;
  WriteBatch plain;
  plain.AddVertex("Person", {{"k", k}});
  return g.Write(std::move(plain));
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_DURABLE_WORKLOAD_H_
