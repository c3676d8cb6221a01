// TraversalContext::Impl and what every traversal call shares: the
// generation-stamped per-vertex marks, the budget clock, name resolution and
// edge weights.
//
// Marks: each search side owns an array of Mark indexed by vertex id. A mark
// is valid only when its stamp equals the context's current generation, so a
// new query "clears" every array by bumping one counter (the arrays are wiped
// for real only when the 32-bit counter wraps). Arrays grow to the
// snapshot's vertex_id_limit on first use and are then reused: after warm-up
// a query allocates nothing.
//
// Thread safety: a context is used by one thread at a time.
#ifndef QUIVER_TRAVERSAL_CONTEXT_H_
#define QUIVER_TRAVERSAL_CONTEXT_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "quiver/status.h"
#include "quiver/traversal.h"
#include "traversal/graph_view.h"

namespace quiver::traversal {

inline constexpr std::uint32_t kRejected = 0xFFFFFFFFu;  // Mark::depth of a vertex a filter refused
inline constexpr std::uint32_t kSettled = 1;             // Mark::flags: Dijkstra has settled it

struct Mark {
  std::uint32_t stamp;
  std::uint32_t depth;  // BFS depth, kRejected, or Dijkstra flags
  std::uint64_t parent_edge;
};
static_assert(sizeof(Mark) == 16);

// One search side: marks, and distances for Dijkstra (valid where marked).
struct Side {
  std::vector<Mark> marks;
  std::vector<double> dist;
};

struct QueueEntry {  // a non-deduplicating Expand's frontier entry
  std::uint64_t vertex;
  std::uint64_t parent;
  std::uint64_t parent_edge;
  std::uint32_t depth;
};

struct HeapEntry {  // Dijkstra and top-K
  double key;
  std::uint64_t vertex;
  std::uint64_t edge;
};

// Counts work against a Budget and remembers why it stopped.
class BudgetClock {
 public:
  BudgetClock(const Budget& b, TraversalStats* stats) : b_(b), stats_(stats) {
    stats_->stopped_by = StopReason::kCompleted;
    stats_->vertices_visited = 0;
    stats_->edges_examined = 0;
  }
  // Call before marking a vertex visited; false: stop.
  bool Vertex() {
    if (stats_->vertices_visited >= b_.max_vertices) return Stop(StopReason::kMaxVertices);
    ++stats_->vertices_visited;
    return true;
  }
  // Call before examining an adjacency entry; false: stop.
  bool Edge() {
    if (stats_->edges_examined >= b_.max_edges) return Stop(StopReason::kMaxEdges);
    if ((++stats_->edges_examined & 255) == 0) return Poll();
    return true;
  }
  // Checks the deadline and the cancellation token; false: stop.
  bool Poll() {
    if (b_.cancel != nullptr && b_.cancel->cancelled()) return Stop(StopReason::kCancelled);
    if (b_.deadline != std::chrono::steady_clock::time_point::max() &&
        std::chrono::steady_clock::now() >= b_.deadline)
      return Stop(StopReason::kDeadline);
    return true;
  }
  // Polls once every 64 calls (per vertex expanded).
  bool Tick() { return (++ticks_ & 63) != 0 || Poll(); }
  bool Stop(StopReason r) {
    stats_->stopped_by = r;
    return false;
  }
  bool stopped() const { return stats_->stopped_by != StopReason::kCompleted; }
  // OK when completed or stopped by a callback, else ResourceExhausted naming the budget.
  Status Finish() const;

 private:
  const Budget& b_;
  TraversalStats* stats_;
  std::uint32_t ticks_ = 0;
};

}  // namespace quiver::traversal

namespace quiver {

struct TraversalContext::Impl {
  std::uint32_t generation = 0;
  traversal::Side sides[2];
  // Banned vertices (Yen's root, paths being enumerated): own generation.
  std::vector<std::uint32_t> banned;
  std::uint32_t banned_generation = 0;

  traversal::TypeFilter types;
  std::vector<std::uint32_t> labels;  // resolved vertex_labels
  bool any_label = true;
  std::vector<traversal::ResolvedPredicate> vertex_predicates, edge_predicates;

  std::vector<std::uint64_t> queue[2];
  std::vector<traversal::QueueEntry> walks;
  std::vector<traversal::HeapEntry> heap[2];
  std::vector<std::uint64_t> banned_edges;
  std::vector<std::uint64_t> scratch_path;
  std::vector<Path> candidates;

  // What the last Expand left for PathTo.
  const void* expand_version = nullptr;
  std::uint32_t expand_generation = 0;

  // Every public call starts here: it ends what PathTo may read.
  static Impl& Enter(TraversalContext& ctx) {
    Impl& m = ctx.impl();
    m.expand_version = nullptr;
    return m;
  }

  // Starts a query over vertex ids below `limit` on `sides` sides: bumps the
  // generation and grows the mark arrays (and distances if `dist`).
  void Begin(std::uint64_t limit, int sides, bool dist);
  // Starts a new set of banned vertices.
  void BeginBanned(std::uint64_t limit);
  bool Banned(std::uint64_t v) const { return banned[v] == banned_generation; }
  void Ban(std::uint64_t v) { banned[v] = banned_generation; }
  void Unban(std::uint64_t v) { banned[v] = 0; }

  traversal::Mark& mark(int side, std::uint64_t v) { return sides[side].marks[v]; }
  bool Marked(int side, std::uint64_t v) const { return sides[side].marks[v].stamp == generation; }

  // Resolves edge_types into `types`.
  void ResolveTypes(const Snapshot& snap, const std::vector<std::string>& names);
  // Resolves predicates (their values stay owned by the spec).
  static void ResolvePredicates(const Snapshot& snap, const std::vector<PropertyPredicate>& in,
                                std::vector<traversal::ResolvedPredicate>* out);
};

}  // namespace quiver

namespace quiver::traversal {

// InvalidArgument if a limit of `b` is 0.
Status CheckBudget(const Budget& b);
// NotFound unless `v` is live in `view`.
Status CheckVertex(const GraphView& view, VertexId v, const char* what);

// Edge weights: resolved once per call.
struct WeightRule {
  bool weighted = false;
  std::optional<std::uint32_t> key;  // nullopt with weighted: every edge weighs default_weight
  double default_weight = 1.0;
};
// Resolves spec.weight_key; InvalidArgument if default_weight is not finite and >= 0.
Status ResolveWeight(const Snapshot& snap, const PathSpec& spec, WeightRule* rule);
// The weight of live edge `e` into *w; false if it is invalid (see WeightError).
bool WeightOf(const GraphView& view, const WeightRule& rule, std::uint64_t e, double* w);
// The InvalidArgument for an edge whose weight WeightOf refused.
Status WeightError(const GraphView& view, const WeightRule& rule, std::uint64_t e);

// The vertex at the other end of edge `e` from `v`.
inline std::uint64_t OtherEnd(const GraphView& view, std::uint64_t e, std::uint64_t v) {
  const storage::EdgeSlot* s = view.Edge(e);
  std::uint64_t src = s->src();
  return src == v ? s->dst() : src;
}

}  // namespace quiver::traversal

#endif  // QUIVER_TRAVERSAL_CONTEXT_H_
