// Online traversal on a Snapshot: k-hop expansion, top-K neighbours and
// shortest paths (unweighted, weighted, K shortest loopless, all shortest).
//
// Every call reads one snapshot's adjacency in place (no copy), runs under a
// Budget, and keeps its scratch state (visited stamps, queues, heaps) in a
// caller-owned TraversalContext, so repeated queries on one thread allocate
// nothing once the context and the caller's output vectors have grown.
//
// Names in a spec (labels, edge types, property keys) are resolved against
// the snapshot. A name the snapshot has never seen matches nothing: an
// unknown edge type selects no edges, an unknown label admits no vertex, a
// predicate on an unknown key is false, a weight key that is unknown leaves
// every edge at `default_weight`. This is deliberate: a type or key may
// simply not exist yet in an early snapshot, and the answer is then empty,
// not an error. An empty list means "any" (all types, all labels).
//
// How a call ends:
//   - OK: the call ran to completion (stats.stopped_by == kCompleted), or an
//     Expand callback asked to stop (kCallback).
//   - ResourceExhausted: a budget stopped it; stats.stopped_by says which
//     (kMaxVertices, kMaxEdges, kDeadline, kCancelled). The outputs hold
//     what was found so far, and each call says what that means.
//   - InvalidArgument / NotFound: bad input (see each call). The outputs are
//     cleared: nothing half-computed is returned.
//   - ResourceExhausted with stats.stopped_by == kCompleted (no budget
//     stopped it; the message says "out of memory"): the context's scratch
//     arrays (they grow with the graph's id space) or the outputs could not
//     grow. The outputs are cleared (what a sink was given stays given) and
//     the context stays usable.
// No call throws. An exception thrown by a caller's callable (a filter, an
// Expand sink) passes through the call, which then leaves its outputs and
// its context's PathTo state unspecified; but a std::bad_alloc from one is
// not told apart from the call's own, and is answered as above.
//
// Example:
//   quiver::TraversalContext ctx;
//   quiver::ExpandSpec spec{.seeds = {alice}, .edge_types = {"KNOWS"}, .max_depth = 2};
//   std::vector<quiver::Visit> friends;
//   quiver::Status s = quiver::Expand(snap, spec, ctx, &friends);
//   quiver::Path path;
//   s = quiver::ShortestPath(snap, alice, bob, {.edge_types = {"KNOWS"}}, ctx, &path);
//
// Thread safety: calls on different contexts may run on any number of
// threads at once over the same snapshot; a context is used by one thread at
// a time. A context may be reused across snapshots and graphs.
#ifndef QUIVER_TRAVERSAL_H_
#define QUIVER_TRAVERSAL_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "quiver/ids.h"
#include "quiver/snapshot.h"
#include "quiver/status.h"
#include "quiver/value.h"

namespace quiver {

// Which adjacency a traversal follows from a vertex. kBoth follows out- and
// in-edges and treats the graph as undirected (a self-loop is met twice).
enum class TraversalDirection : std::uint8_t { kOut = 0, kIn = 1, kBoth = 2 };

// Set by the caller (any thread) to stop calls that carry it in their
// Budget; they notice within a few hundred edges.
class CancellationToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  void Reset() { cancelled_.store(false, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

// Limits on one call. The defaults are unlimited. A limit of 0 is
// InvalidArgument (it would allow no work at all; leave it unset instead).
struct Budget {
  // Vertices visited: discovered and marked (seeds and sources included; a
  // vertex both sides of a bidirectional search reach counts once).
  std::uint64_t max_vertices = std::numeric_limits<std::uint64_t>::max();
  // Adjacency entries examined, before any filter.
  std::uint64_t max_edges = std::numeric_limits<std::uint64_t>::max();
  // Checked every 256 edges examined and at each vertex expanded.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Not owned; must outlive the call. Checked like the deadline.
  const CancellationToken* cancel = nullptr;
};

// Why a call stopped.
enum class StopReason : std::uint8_t {
  kCompleted = 0,    // ran to the end
  kCallback = 1,     // an Expand callback returned false (status OK)
  kMaxVertices = 2,  // Budget::max_vertices (ResourceExhausted)
  kMaxEdges = 3,     // Budget::max_edges (ResourceExhausted)
  kDeadline = 4,     // Budget::deadline (ResourceExhausted)
  kCancelled = 5,    // Budget::cancel (ResourceExhausted)
};

// The work one call did.
struct TraversalStats {
  StopReason stopped_by = StopReason::kCompleted;
  std::uint64_t vertices_visited = 0;
  std::uint64_t edges_examined = 0;
};

// A comparison of one property with a constant. Numbers compare as numbers
// across int64 and double; strings compare bytewise; bools with kEq/kNe
// only. A missing property, a null, or a value of another kind makes the
// predicate false (so kNe is false on a missing property too).
enum class CompareOp : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
struct PropertyPredicate {
  std::string key;
  CompareOp op = CompareOp::kEq;
  PropertyValue value;
};

// Scratch state reused across calls: per-vertex stamps indexed by vertex id
// and a log of the marks a query made (24 bytes per id below the snapshot's
// vertex_id_limit, per search side; Dijkstra adds 8), queues, heaps, resolved
// names, the parents of the last Expand. Move-only. Not thread-safe: one
// thread at a time.
class TraversalContext {
 public:
  TraversalContext();
  ~TraversalContext();
  // A moved-from context holds nothing: destroy it or assign to it, and
  // pass no call to it.
  TraversalContext(TraversalContext&&) noexcept;
  TraversalContext& operator=(TraversalContext&&) noexcept;

  // Bytes of scratch memory held.
  std::size_t memory_bytes() const;

  // The engine's scratch state (opaque to applications).
  struct Impl;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- Expand

// One vertex reached by Expand. `parent` / `parent_edge` are the vertex and
// edge it was reached through (for a seed: the seed itself and no edge,
// `parent_edge == kNoEdge`).
inline constexpr EdgeId kNoEdge = EdgeId(std::numeric_limits<std::uint64_t>::max());
struct Visit {
  VertexId vertex;
  std::uint32_t depth = 0;
  VertexId parent;
  EdgeId parent_edge = kNoEdge;
};

struct ExpandSpec {
  // Where to start, at depth 0. Each must be a live vertex (else NotFound);
  // duplicates are visited once when deduplicating.
  std::vector<VertexId> seeds;
  TraversalDirection direction = TraversalDirection::kOut;
  // Edge types to follow; empty: all.
  std::vector<std::string> edge_types;
  // Report vertices at depths [min_depth, max_depth]; expand no deeper than
  // max_depth. min_depth > max_depth is InvalidArgument.
  std::uint32_t min_depth = 1;
  std::uint32_t max_depth = 1;
  // Vertex filters (all must pass) for vertices reached over an edge; seeds
  // are exempt. A vertex that fails is neither reported nor expanded.
  std::vector<std::string> vertex_labels;  // empty: any label
  std::vector<PropertyPredicate> vertex_predicates;
  std::function<bool(VertexId)> vertex_filter;  // empty: none
  // Edge filters (all must pass, on top of edge_types). An edge that fails
  // is not followed.
  std::vector<PropertyPredicate> edge_predicates;
  std::function<bool(EdgeId edge, VertexId from, VertexId to)> edge_filter;  // empty: none
  // true: breadth-first, each vertex visited and reported at most once, at
  // its smallest depth (the first parent found wins). false: every walk is
  // followed (a vertex is reported once per walk that reaches it at a
  // reported depth; cost grows like degree^depth — set a budget).
  bool deduplicate = true;
  Budget budget;
};

// Streams each vertex at a depth in [min_depth, max_depth], in
// non-decreasing depth order, to `sink`; a sink returning false stops the
// call (OK, stopped_by == kCallback). Returns OK, ResourceExhausted (budget;
// everything streamed so far stands) or InvalidArgument (min_depth >
// max_depth, a zero budget) / NotFound (a seed that is not live) before
// anything is streamed. `stats` may be null.
// Cost: O(vertices visited + edges examined) plus the filters' lookups.
Status Expand(const Snapshot& snap, const ExpandSpec& spec, TraversalContext& ctx,
              const std::function<bool(const Visit&)>& sink, TraversalStats* stats = nullptr);
// The same, filling `out` (cleared first; on a budget stop it holds what
// was found; on bad input it is left empty).
Status Expand(const Snapshot& snap, const ExpandSpec& spec, TraversalContext& ctx, std::vector<Visit>* out,
              TraversalStats* stats = nullptr);

// After a deduplicating Expand on `ctx` (and before the next call on it):
// the path from a seed to `v` along the parents the expansion recorded,
// into `path` (vertices from seed to v, edges between them, cost = hops).
// NotFound if `v` was not visited; FailedPrecondition if the last call on
// `ctx` was not a deduplicating Expand on `snap`.
struct Path;
Status PathTo(const Snapshot& snap, const TraversalContext& ctx, VertexId v, Path* path);

// ---------------------------------------------------------------- Top-K

struct TopKSpec {
  TraversalDirection direction = TraversalDirection::kOut;
  std::vector<std::string> edge_types;  // empty: all
  // The numeric (int64 or double) property to rank by, of the edge or of the
  // neighbour. An entry whose property is missing or null is skipped; a
  // string, bool, bytes or vector value is InvalidArgument naming the
  // element.
  std::string key;
  enum class Of : std::uint8_t { kEdge, kNeighbor } of = Of::kEdge;
  bool descending = true;  // true: largest first
  std::size_t k = 20;      // 0 is InvalidArgument
  Budget budget;
};

struct Neighbor {
  VertexId vertex;
  EdgeId edge;
  // The score as a double: an int64 beyond 2^53 is rounded here, though it
  // was ranked by its exact value.
  double score = 0;
};

// The k best adjacency entries of `v` by score, best first; ties go to the
// smaller edge id. Entries are gathered and cut to the best k by a
// selection whenever k + max(k, 256) are held, then the k are sorted:
// O(degree + k log k) time, O(min(degree, 2k + 256)) scratch in the
// context, no sort of the adjacency. `out` is cleared first. NotFound if `v`
// is not live; InvalidArgument for k == 0, a zero budget or a non-numeric
// score; ResourceExhausted on a budget stop (out then holds the best of the
// entries examined so far). In kBoth a self-loop is one entry (its in-list
// copy is passed over).
Status TopKNeighbors(const Snapshot& snap, VertexId v, const TopKSpec& spec, TraversalContext& ctx,
                     std::vector<Neighbor>* out, TraversalStats* stats = nullptr);

// ---------------------------------------------------------------- Paths

// A path: vertices[0] is the source, vertices.back() the target, edges[i]
// joins vertices[i] and vertices[i+1] (edges.size() == vertices.size() - 1).
// `cost` is the number of edges (unweighted) or the sum of their weights.
struct Path {
  std::vector<VertexId> vertices;
  std::vector<EdgeId> edges;
  double cost = 0;
};

struct PathSpec {
  TraversalDirection direction = TraversalDirection::kOut;
  std::vector<std::string> edge_types;  // empty: all
  // Empty: unweighted (each edge costs 1). Else the numeric edge property
  // that is an edge's weight; an edge without it weighs `default_weight`.
  // A weight that is negative, NaN or not a number (string, bool, ...) is
  // InvalidArgument naming the edge, when the search examines that edge.
  std::string weight_key;
  double default_weight = 1.0;  // must be finite and >= 0
  // Optional edge filter: an edge that fails is not followed.
  std::function<bool(EdgeId edge, VertexId from, VertexId to)> edge_filter;
  Budget budget;
};

// One shortest path from `source` to `target` into `path`. Returns OK with
// *found = true and the path, or OK with *found = false if none exists.
// Unweighted: bidirectional BFS, O(edges of the two balls it grows).
// Weighted: bidirectional Dijkstra, O((V + E) log V) over the vertices it
// settles. source == target is the path of one vertex and cost 0.
// NotFound if either end is not live; InvalidArgument for a bad weight,
// default_weight or zero budget; ResourceExhausted on a budget stop (then
// *found = false: a path found before the search proved it shortest is not
// returned). `path` is cleared first.
Status ShortestPath(const Snapshot& snap, VertexId source, VertexId target, const PathSpec& spec,
                    TraversalContext& ctx, Path* path, bool* found = nullptr,
                    TraversalStats* stats = nullptr);

// Up to k shortest loopless paths from `source` to `target`, in
// non-decreasing cost (Yen's algorithm; equal costs in an unspecified but
// deterministic order). Fewer than k when fewer exist. `paths` is cleared
// first. InvalidArgument for k == 0; otherwise errors as ShortestPath. On a
// budget stop `paths` holds the paths already proven (a prefix of the
// answer). Cost: up to k × (path length) shortest-path searches.
Status KShortestPaths(const Snapshot& snap, VertexId source, VertexId target, std::size_t k,
                      const PathSpec& spec, TraversalContext& ctx, std::vector<Path>* paths,
                      TraversalStats* stats = nullptr);

// Every shortest path from `source` to `target`, at most `max_paths` of
// them (0 is InvalidArgument), in an unspecified but deterministic order.
// Paths differ in at least one edge (parallel edges give distinct paths).
// A search from `source` (BFS or Dijkstra) records distances, then the
// paths are enumerated backwards over edges on shortest routes. On a budget
// stop `paths` is empty. `*truncated` (if given) says whether more than
// max_paths exist.
Status AllShortestPaths(const Snapshot& snap, VertexId source, VertexId target, std::size_t max_paths,
                        const PathSpec& spec, TraversalContext& ctx, std::vector<Path>* paths,
                        bool* truncated = nullptr, TraversalStats* stats = nullptr);

}  // namespace quiver

#endif  // QUIVER_TRAVERSAL_H_
