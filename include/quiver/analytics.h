// Analytics: immutable CSR projections of a snapshot and the whole-graph
// kernels that run on them.
//
// A `Projection` is a compressed-sparse-row copy of part of one snapshot: the
// vertices of chosen labels, the edges of chosen types, out and/or in
// adjacency, optionally a double weight per edge read from a numeric edge
// property. Vertices get dense ids 0..vertex_count()-1 in ascending VertexId
// order; neighbour ids are 32-bit dense ids; each vertex's neighbours are
// sorted by dense id. A projection owns its memory: it outlives the snapshot
// it was built from and never changes.
//
// Kernels take a projection and return one value per dense vertex (index i
// belongs to projection.ToVertexId(i)). They follow the LDBC Graphalytics
// definitions (BFS, PageRank, WCC, CDLP, LCC, SSSP) and add personalised
// PageRank, triangle count and k-core decomposition. Every kernel runs on
// RunOptions::threads threads, reports progress, can be cancelled, and is
// deterministic: its output is bit-identical for every thread count.
// docs/analytics.md states every semantic choice and cost.
//
// Example:
//   quiver::Snapshot snap = graph->GetSnapshot();
//   auto proj = quiver::Project(snap, {.edge_types = {"KNOWS"}});
//   if (!proj.ok()) return proj.status();
//   auto rank = quiver::PageRank(*proj, {.iterations = 20});
//   quiver::Status s = quiver::WriteVertexProperty(*graph, *proj, "rank", *rank);
//
// Thread safety: a Projection is immutable; any number of threads may read it
// and run kernels on it at once. Each kernel call uses only its own threads.
#ifndef QUIVER_ANALYTICS_H_
#define QUIVER_ANALYTICS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quiver/ids.h"
#include "quiver/status.h"

namespace quiver {

class Graph;
class Snapshot;

// What to do with an edge whose source and target are the same vertex.
enum class SelfLoops : std::uint8_t {
  kKeep = 0,  // stored like any other edge (once, also in undirected projections)
  kDrop = 1,  // left out of the projection
};

// What to do with several edges between the same ordered pair of vertices
// (after edge-type filtering; in an undirected projection, the same unordered
// pair, counting both directions).
enum class ParallelEdges : std::uint8_t {
  kKeep = 0,   // every edge is its own entry (a multigraph)
  kDrop = 1,   // one entry; with weights, the smallest weight (shortest paths unchanged)
  kMerge = 2,  // one entry; with weights, the sum of the weights
};

// What a projection holds. Names are resolved against the snapshot; a name it
// has never seen is NotFound.
struct ProjectionSpec {
  // Labels of the vertices to include; empty: every live vertex.
  std::vector<std::string> vertex_labels = {};
  // Types of the edges to include; empty: every type. An edge is included
  // only if both its endpoints are.
  std::vector<std::string> edge_types = {};
  // Build the out adjacency (BFS, WCC, SSSP and LCC use it). Default on.
  bool out = true;
  // Build the in adjacency (PageRank, CDLP and LCC on a directed projection
  // need it). Default on; off saves 4 bytes per edge (12 with weights).
  bool in = true;
  // Treat every edge as undirected: each edge u-v is a neighbour entry of
  // both u and v, and in adjacency == out adjacency (stored once; `out` and
  // `in` are then ignored). Default off.
  bool undirected = false;
  // A numeric (int64 or double) edge property to read as the edge weight;
  // empty: no weights. An included edge whose value has another type is
  // InvalidArgument naming the edge.
  std::string weight_property = {};
  // The weight of an included edge that lacks `weight_property` or holds a
  // null there (a null is missing, as in traversal and Top-K); nullopt
  // (default): such an edge is InvalidArgument. Must not be NaN.
  std::optional<double> default_weight = {};
  SelfLoops self_loops = SelfLoops::kKeep;
  ParallelEdges parallel_edges = ParallelEdges::kKeep;
  // The most bytes the projection may hold (see Projection::memory_bytes);
  // above it: ResourceExhausted. Checked before the arrays it counts are
  // allocated: the id map and offsets once the vertices are counted (before
  // the build's 4-byte-per-id scratch map too), the neighbour and weight
  // arrays once the entries are counted (before parallel-edge removal, so
  // the check may refuse a projection that removal would have shrunk below
  // the limit). Build scratch is not counted. 0: no limit.
  std::uint64_t memory_limit_bytes = 0;
  // Threads to build with; 0: one per hardware thread, at most 8.
  std::uint32_t threads = 0;
};

// An immutable CSR projection. Move-only; owns its arrays. Dense ids are
// std::uint32_t (a projection holds fewer than 2^32 - 1 vertices); edge
// offsets are 64-bit.
class Projection {
 public:
  Projection() = default;
  Projection(Projection&&) noexcept = default;
  Projection& operator=(Projection&&) noexcept = default;
  Projection(const Projection&) = delete;
  Projection& operator=(const Projection&) = delete;
  ~Projection() = default;

  std::uint32_t vertex_count() const { return vertex_count_; }
  // Entries in the out adjacency (in an undirected projection, each edge
  // between two distinct vertices counts twice, a kept self-loop once).
  std::uint64_t edge_count() const { return out_.entries; }
  bool undirected() const { return undirected_; }
  bool has_out() const { return out_.offsets != nullptr; }
  bool has_in() const { return undirected_ || in_.offsets != nullptr; }
  bool weighted() const { return weighted_; }

  // Neighbours of dense vertex `v` in ascending dense id (a multigraph's
  // repeated neighbours adjacent, in ascending weight when weighted; never
  // in edge-id or storage order). Requires v <
  // vertex_count() and has_out() / has_in(). O(1).
  std::span<const std::uint32_t> OutNeighbors(std::uint32_t v) const { return out_.Neighbors(v); }
  std::span<const std::uint32_t> InNeighbors(std::uint32_t v) const { return In().Neighbors(v); }
  // Weights parallel to Out/InNeighbors(v). Requires weighted().
  std::span<const double> OutWeights(std::uint32_t v) const { return out_.Weights(v); }
  std::span<const double> InWeights(std::uint32_t v) const { return In().Weights(v); }
  std::uint64_t OutDegree(std::uint32_t v) const { return out_.Degree(v); }
  std::uint64_t InDegree(std::uint32_t v) const { return In().Degree(v); }

  // The graph vertex of dense id `v`. Requires v < vertex_count(). O(1).
  VertexId ToVertexId(std::uint32_t v) const { return ids_ ? VertexId(ids_[v]) : VertexId(v); }
  // The dense id of graph vertex `id`; nullopt if the projection does not
  // hold it. O(log vertex_count()).
  std::optional<std::uint32_t> ToDense(VertexId id) const;

  // The smallest weight the projection holds (after the parallel-edge rule:
  // a kMerge entry weighs its sum), +infinity if there is none. Requires
  // weighted().
  double min_weight() const { return min_weight_; }
  // An edge behind a negative weight the projection holds, if any: the
  // smallest such edge id, where a kDrop or kMerge entry stands for the
  // smallest edge id among the edges it replaced.
  std::optional<EdgeId> negative_weight_edge() const { return negative_edge_; }

  // Bytes held by the arrays: per direction (8 bytes x (V + 1) offsets + 4
  // bytes per entry + 8 per weight), plus 8 bytes per vertex for the id map
  // unless the projection holds exactly the vertices 0..V-1.
  std::uint64_t memory_bytes() const;

 private:
  friend class ProjectionBuilder;
  struct Csr {
    std::unique_ptr<std::uint64_t[]> offsets;  // vertex_count + 1
    std::unique_ptr<std::uint32_t[]> targets;
    std::unique_ptr<double[]> weights;  // null when not weighted
    std::uint64_t entries = 0;
    std::span<const std::uint32_t> Neighbors(std::uint32_t v) const {
      return {targets.get() + offsets[v], targets.get() + offsets[v + 1]};
    }
    std::span<const double> Weights(std::uint32_t v) const {
      return {weights.get() + offsets[v], weights.get() + offsets[v + 1]};
    }
    std::uint64_t Degree(std::uint32_t v) const { return offsets[v + 1] - offsets[v]; }
  };
  const Csr& In() const { return undirected_ ? out_ : in_; }

  std::uint32_t vertex_count_ = 0;
  bool undirected_ = false;
  bool weighted_ = false;
  double min_weight_ = std::numeric_limits<double>::infinity();
  std::optional<EdgeId> negative_edge_;
  std::unique_ptr<std::uint64_t[]> ids_;  // dense -> VertexId; null when the identity
  Csr out_;
  Csr in_;
};

// Builds a projection of `snapshot` as `spec` says, on spec.threads threads.
// Errors: NotFound for a label, edge type or weight key the snapshot has never
// seen; InvalidArgument for a non-numeric or missing weight (naming the edge),
// a NaN default_weight, or neither out nor in requested; ResourceExhausted
// when the projection would exceed spec.memory_limit_bytes or hold 2^32 - 1
// vertices or more. Nothing is returned on error.
// Cost: O(V_ids + E log d) time over the threads (V_ids = vertex_id_limit, d
// = degree, for the per-vertex sort), plus one property lookup per edge when
// weighted; memory: memory_bytes() plus, while building, 4 bytes per vertex
// id (when ids have holes or labels filter) and, for a weighted directed
// projection with both directions, 16 bytes per entry for the transpose
// that makes the in adjacency from the out one (unweighted, the in
// adjacency is read from storage and needs no scratch).
// `snapshot` is only read during the call. Thread-safe.
Result<Projection> Project(const Snapshot& snapshot, const ProjectionSpec& spec = {});

// ---- Kernels -------------------------------------------------------------

// Progress of a running kernel: `done` out of `total` units of `phase` (an
// iteration, a BFS level, a block of vertices).
struct Progress {
  std::string_view phase = {};
  std::uint64_t done = 0;
  std::uint64_t total = 0;
};

// How a kernel runs.
struct RunOptions {
  // Threads; 0: one per hardware thread, at most 8. Results do not depend on it.
  std::uint32_t threads = 0;
  // Called on the calling thread between iterations / levels / blocks; keep
  // it cheap. Empty: no reports.
  std::function<void(const Progress&)> progress = {};
  // When it becomes true the kernel stops at its next check (at least once
  // per iteration or level, and every few thousand vertices) and returns
  // Cancelled. Null: not cancellable. Must outlive the call.
  const std::atomic<bool>* cancel = nullptr;
};

// The BFS depth of an unreachable vertex (the Graphalytics value).
inline constexpr std::int64_t kUnreachableDepth = std::numeric_limits<std::int64_t>::max();

// Breadth-first search from `source` along out-edges: depth[i] is the number
// of hops from source to vertex i, kUnreachableDepth if none. Requires
// has_out(). Errors: NotFound if `source` is not in the projection;
// FailedPrecondition without out adjacency; Cancelled.
// Cost: O(V + E) work, level-synchronous over the threads. With in adjacency
// too (has_in()), a large frontier is expanded bottom-up (every unvisited
// vertex looks for a parent in the frontier), which examines a fraction of
// the edges on graphs of small diameter; 2 bits per vertex of scratch.
// Example: auto depth = Bfs(proj, VertexId(1));
Result<std::vector<std::int64_t>> Bfs(const Projection& p, VertexId source, const RunOptions& run = {});

struct PageRankOptions {
  // Fixed number of iterations (no convergence test, as Graphalytics).
  std::uint32_t iterations = 20;
  // Damping factor d in [0, 1].
  double damping = 0.85;
};

// Graphalytics PageRank: rank_0 = 1/V; rank_{k+1}(v) = (1-d)/V + d * sum over
// in-neighbours u of rank_k(u)/outdeg(u) + d/V * (sum of rank_k over vertices
// without out-edges). Each entry of a parallel edge counts. Requires has_in()
// (pull-based, for bit-identical sums). Errors: FailedPrecondition without in
// adjacency; InvalidArgument for damping outside [0, 1]; Cancelled.
// Cost: O(iterations x (V + E)), 16 bytes per vertex of scratch.
// Example: auto rank = PageRank(proj, {.iterations = 10, .damping = 0.85});
Result<std::vector<double>> PageRank(const Projection& p, const PageRankOptions& options = {},
                                     const RunOptions& run = {});

// Personalised PageRank: like PageRank, but the teleport and the sink mass go
// to the seeds in proportion to their weights (normalised to sum 1) instead
// of to every vertex, and rank_0 is that seed distribution. Errors: NotFound
// for a seed not in the projection; InvalidArgument for no seeds, a negative,
// NaN or infinite seed weight, or weights summing to 0; as PageRank otherwise.
// Example: auto ppr = PersonalizedPageRank(proj, {{VertexId(7), 1.0}});
Result<std::vector<double>> PersonalizedPageRank(const Projection& p,
                                                 std::span<const std::pair<VertexId, double>> seeds,
                                                 const PageRankOptions& options = {},
                                                 const RunOptions& run = {});

// Weakly connected components: component[i] is the smallest VertexId in
// vertex i's component (edge direction ignored). Requires has_out().
// Errors: FailedPrecondition without out adjacency; Cancelled.
// Cost: O(E alpha(V)) with a lock-free union-find. With in adjacency too
// (has_in()), the vertices of the largest component skip their edges after
// two sampling rounds (Afforest), about 2V links on a graph with one giant
// component.
Result<std::vector<VertexId>> Wcc(const Projection& p, const RunOptions& run = {});

// Graphalytics community detection by label propagation: every vertex starts
// with its own VertexId as label; each of `iterations` synchronous rounds
// sets a vertex's label to the most frequent label among its in- and
// out-neighbours (a neighbour that is both counts twice; each entry of a
// parallel edge counts), ties to the smallest label; a vertex without
// neighbours keeps its label. Undirected: the neighbours, once each.
// Requires has_in() and has_out(). Errors: FailedPrecondition; Cancelled.
// Cost: O(iterations x E log d).
Result<std::vector<VertexId>> Cdlp(const Projection& p, std::uint32_t iterations, const RunOptions& run = {});

// Graphalytics local clustering coefficient. N(v) = the distinct vertices
// other than v joined to v by an edge in either direction; lcc(v) = (number of
// ordered pairs (u, w) of distinct members of N(v) with an edge u -> w) /
// (|N(v)| (|N(v)| - 1)), 0 when |N(v)| < 2. In an undirected projection that
// is the usual undirected coefficient. Parallel edges count once. Requires
// has_out() and has_in(). Errors: FailedPrecondition; ResourceExhausted out
// of memory; Cancelled. Cost: counts each triangle of the simple undirected
// graph once, from its corner of lowest degree: O(E) to orient the graph,
// then O(E^1.5) in the worst case; 21 bytes per vertex, 5 per simple edge,
// and per thread (at most one per 4,096 vertices) 3 bits per vertex of
// scratch.
Result<std::vector<double>> Lcc(const Projection& p, const RunOptions& run = {});

// Graphalytics single-source shortest paths over out-edges with the
// projection's weights: distance[i], +infinity if unreachable. A distance is
// the least, over paths, of the path's weights added from the source in
// order: exactly what Dijkstra gives, to the bit, on every thread count.
// Requires a weighted projection with out adjacency. Errors: NotFound for a
// source not in the projection; FailedPrecondition without weights;
// InvalidArgument if any weight is negative (naming the edge);
// ResourceExhausted out of memory; Cancelled (checked every 4,096 vertices
// expanded by a worker). Cost: parallel delta-stepping (at most one worker
// per 1,024 vertices); O(V + E) work on graphs whose weights are spread
// evenly, more where distances drop many times; scratch of 16 bytes per
// vertex, 96 KiB per worker, and 4 bytes per waiting entry (16 past the
// window of 4,096 bins).
// Example: auto dist = Sssp(weighted_proj, VertexId(1), {.threads = 2});
Result<std::vector<double>> Sssp(const Projection& p, VertexId source, const RunOptions& run = {});

// The number of triangles of the simple undirected graph under the projection
// (directions, self-loops and parallel edges ignored). Requires has_out() and
// has_in(). Cost: O(E) to build a simple undirected copy (4 bytes per
// entry), then sorted-list intersections, O(E^1.5) in the worst case.
Result<std::uint64_t> TriangleCount(const Projection& p, const RunOptions& run = {});

// K-core decomposition of the same simple undirected graph: core[i] is the
// largest k such that vertex i belongs to a subgraph whose vertices all have
// degree >= k. Requires has_out() and has_in(). Cost: O(V + E) after the same
// copy (Batagelj-Zaversnik bucket peeling, on one thread).
Result<std::vector<std::uint32_t>> CoreNumbers(const Projection& p, const RunOptions& run = {});

// ---- Writing results back --------------------------------------------------

struct WriteBackOptions {
  // Vertices per WriteBatch; each batch commits on its own. Default 65,536.
  std::size_t batch_vertices = 65536;
};

// Sets property `key` of vertex p.ToVertexId(i) to values[i] for every i, in
// batches of options.batch_vertices committed one after another (so a
// concurrent reader may see some batches and not others). A value that is
// not finite (an unreachable SSSP distance) removes the property instead.
// Returns the number of vertices written. Errors: InvalidArgument if
// values.size() != p.vertex_count(); the failing batch's status (NotFound if a
// vertex was removed since the projection was built), with the batches
// before it committed. Cost: one Graph::Write per batch.
// Example: WriteVertexProperty(*graph, proj, "rank", *PageRank(proj));
Result<std::uint64_t> WriteVertexProperty(Graph& graph, const Projection& p, std::string_view key,
                                          std::span<const double> values,
                                          const WriteBackOptions& options = {});
Result<std::uint64_t> WriteVertexProperty(Graph& graph, const Projection& p, std::string_view key,
                                          std::span<const std::int64_t> values,
                                          const WriteBackOptions& options = {});

}  // namespace quiver

#endif  // QUIVER_ANALYTICS_H_
