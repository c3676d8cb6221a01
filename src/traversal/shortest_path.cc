// ShortestPath: bidirectional BFS (unweighted) and bidirectional Dijkstra
// (weighted) between two vertices.
//
// Side 0 searches forward from the source along `direction`; side 1 searches
// backward from the target along its reverse. Each side marks a vertex with
// its depth (or distance) and the edge it was reached by. The BFS keeps both
// sides' marks in one stamp array, told apart by generation (PairMarks):
// until the sides meet no vertex is marked by both, so the one stamp an
// examined edge's neighbour has says "mine", "the other side's" (a meeting)
// or "new", and a search touches one random stamp per edge, not two.
//
// BFS correctness: each step grows the side with the smaller frontier by one
// whole level, checking every newly marked vertex against the other side's
// marks, so until they meet the two marked sets are disjoint. With A-depth
// dA and B-depth dB complete, no path is shorter than dA + dB + 1 (its
// vertex at position dA would be marked by both sides); the first meeting
// while growing A to dA + 1 has length dA + 1 + (a B-depth <= dB), hence is
// shortest, and the search stops there.
//
// Dijkstra stops once a meeting was found and the two heaps' smallest keys
// sum to at least the best one (mu): any path through an unsettled vertex
// costs at least that much. Costs may overflow to +infinity (two edges of
// 1e308): a meeting of cost infinity still counts, and a key of infinity
// does not end the search before one is found, so a path is found whenever
// one exists, with cost infinity, as ForwardDijkstra (Yen, all shortest
// paths) finds it. Without a meeting the search ends when a side runs out:
// every vertex that side reaches is then settled, so none joins the sides.
#include <algorithm>
#include <limits>

#include "base/prefetch.h"
#include "traversal/context.h"
#include "traversal/paths.h"

namespace quiver::traversal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// How far ahead in a BFS level the search starts loading a vertex's slot,
// and its adjacency array (which needs the slot). Only vertices of a level
// being expanded are loaded: most vertices a search marks are in the last
// level of a side and are never expanded.
constexpr std::size_t kLevelSlotAhead = 8;
constexpr std::size_t kArrayAhead = 4;
// How far ahead the stamps of a vertex's neighbours start loading (its array
// started loading kArrayAhead - kStampAhead vertices earlier), and how many
// of them at most: a hub's thousands would only evict what the search reads.
constexpr std::size_t kStampAhead = 2;
constexpr std::size_t kMaxStampsAhead = 32;

// Where the bidirectional BFS met: edge `edge` joins `a`, marked by side 0,
// and `b`, marked by side 1 (in travel order: a, then b).
struct Meeting {
  std::uint64_t a;
  std::uint64_t edge;
  std::uint64_t b;
};

// Both sides' marks of one bidirectional BFS in side 0's arrays
// (TraversalContext::Impl::BeginPair): side s stamps with generation
// gen0 + s. Held in locals, so the hot loop keeps them in registers (a
// member of the context would be reloaded after every store the loop makes).
class PairMarks {
 public:
  explicit PairMarks(TraversalContext::Impl& m)
      : stamps_(m.sides[0].stamps.data()), log_(m.sides[0].log.data()), gen0_(m.generation - 1) {}

  // 0 or 1: the side that marked `v` in this query; any other value: none.
  std::uint32_t SideOf(std::uint64_t v) const { return stamps_[v].generation - gen0_; }
  // Marks `v` (unmarked) for `side`. The log covers every id, and a vertex
  // is marked once, so this never writes past it.
  void Set(int side, std::uint64_t v, std::uint32_t depth, std::uint64_t parent_edge) {
    stamps_[v] = Stamp{gen0_ + static_cast<std::uint32_t>(side), marked_};
    log_[marked_++] = Mark{depth, parent_edge};
  }
  // Starts loading the stamp of `v`.
  void Prefetch(std::uint64_t v) const { base::Prefetch(&stamps_[v]); }
  // The edge `v` (marked) was reached by; kNoEdge for the side's start.
  std::uint64_t ParentEdge(std::uint64_t v) const { return log_[stamps_[v].mark].parent_edge; }

 private:
  Stamp* stamps_;
  Mark* log_;
  std::uint32_t gen0_;
  std::uint32_t marked_ = 0;
};

}  // namespace

void BuildPath(const GraphView& view, const TraversalContext::Impl& m, std::uint64_t meet, Path* path) {
  path->vertices.clear();
  path->edges.clear();
  std::uint64_t cur = meet;
  while (true) {  // meet back to the source along side 0
    path->vertices.push_back(VertexId(cur));
    std::uint64_t e = m.mark(0, cur).parent_edge;
    if (e == kNoEdge.value()) break;
    path->edges.push_back(EdgeId(e));
    cur = OtherEnd(view, e, cur);
  }
  std::reverse(path->vertices.begin(), path->vertices.end());
  std::reverse(path->edges.begin(), path->edges.end());
  cur = meet;
  // Meet on to the target along side 1 (unsized or stale after a one-sided search).
  while (m.MarkedAny(1, cur)) {
    std::uint64_t e = m.mark(1, cur).parent_edge;
    if (e == kNoEdge.value()) break;
    path->edges.push_back(EdgeId(e));
    cur = OtherEnd(view, e, cur);
    path->vertices.push_back(VertexId(cur));
  }
}

Status PathCost(const GraphView& view, const WeightRule& rule, Path* path) {
  double cost = 0;
  for (EdgeId e : path->edges) {
    double w;
    if (!WeightOf(view, rule, e.value(), &w)) return WeightError(view, rule, e.value());
    cost += w;
  }
  path->cost = cost;
  return Status::Ok();
}

namespace {

// Bidirectional BFS; returns where the sides met, or nullopt.
std::optional<Meeting> BidirectionalBfs(const GraphView& view, const PathSpec& spec,
                                        TraversalContext::Impl& m, PairMarks& marks, BudgetClock& clock,
                                        std::uint64_t s, std::uint64_t t) {
  const TraversalDirection dirs[2] = {spec.direction, Reverse(spec.direction)};
  std::vector<std::uint64_t>* q = m.queue;
  std::size_t level_begin[2] = {0, 0};
  std::uint32_t level_depth[2] = {0, 0};  // the depth of the vertices of each side's next level
  for (int side = 0; side < 2; ++side) {
    q[side].clear();
    q[side].push_back(side == 0 ? s : t);
    marks.Set(side, side == 0 ? s : t, 0, kNoEdge.value());
  }
  while (true) {
    const std::size_t sizes[2] = {q[0].size() - level_begin[0], q[1].size() - level_begin[1]};
    if (sizes[0] == 0 || sizes[1] == 0) return std::nullopt;
    const int side = sizes[0] <= sizes[1] ? 0 : 1;
    const std::uint32_t other = 1 - side;
    const TraversalDirection dir = dirs[side];
    std::vector<std::uint64_t>& queue = q[side];
    const std::size_t end = queue.size();
    const std::uint32_t next_depth = ++level_depth[side];
    std::size_t slots_loading = level_begin[side], arrays_loading = level_begin[side];
    std::size_t stamps_loading = level_begin[side];
    for (std::size_t i = level_begin[side]; i < end; ++i) {
      const std::uint64_t v = queue[i];
      if (!clock.Tick()) return std::nullopt;
      for (const std::size_t ahead = std::min(end, i + kLevelSlotAhead + 1); slots_loading < ahead;
           ++slots_loading)
        view.PrefetchSlot(queue[slots_loading]);
      for (const std::size_t ahead = std::min(end, i + kArrayAhead + 1); arrays_loading < ahead;
           ++arrays_loading)
        view.PrefetchAdjacency(queue[arrays_loading], dir);
      // The stamps an examined edge tests are the search's other random
      // reads: start those of a vertex's neighbours while two vertices
      // before it are expanded, so they overlap with each other.
      for (const std::size_t ahead = std::min(end, i + kStampAhead + 1); stamps_loading < ahead;
           ++stamps_loading) {
        std::size_t budget = kMaxStampsAhead;
        GraphView::ForEachEntry(view.Vertex(queue[stamps_loading]), dir, m.types,
                                [&](const EdgeEntry& e, bool) {
                                  marks.Prefetch(e.neighbor().value());
                                  return --budget != 0;
                                });
      }
      // The hot loop, written out (no callback per entry).
      const storage::VertexSlot* slot = view.Vertex(v);
      for (const bool out : {true, false}) {
        if (out ? !ReadsOut(dir) : !ReadsIn(dir)) continue;
        const std::uintptr_t adjacency = out ? slot->out_head : slot->in_head;
        const std::uint32_t degree = out ? slot->out_degree : slot->in_degree;
        const std::size_t groups = storage::GroupCount(adjacency);
        for (std::size_t g = 0; g < groups; ++g) {
          const EdgeGroup group = storage::GroupAt(adjacency, degree, g);
          if (!m.types.Matches(group.type.value())) continue;
          for (const EdgeEntry& entry : group.entries) {
            if (!clock.Edge()) return std::nullopt;
            const std::uint64_t n = entry.neighbor().value();
            const std::uint32_t marked_by = marks.SideOf(n);
            if (marked_by == static_cast<std::uint32_t>(side)) continue;
            const std::uint64_t e = entry.edge().value();
            if (spec.edge_filter) {
              VertexId from(side == 0 ? v : n), to(side == 0 ? n : v);
              if (!spec.edge_filter(EdgeId(e), from, to)) continue;
            }
            // The first meeting is a shortest path. The vertex met was
            // counted when the other side marked it.
            if (marked_by == other) return side == 0 ? Meeting{v, e, n} : Meeting{n, e, v};
            if (!clock.Vertex()) return std::nullopt;
            marks.Set(side, n, next_depth, e);
            queue.push_back(n);
          }
        }
      }
    }
    level_begin[side] = end;
  }
}

// The path through a meeting: side 0's parents from m.a back to the source,
// the meeting edge, side 1's parents from m.b on to the target.
void BuildBfsPath(const GraphView& view, const PairMarks& marks, const Meeting& meeting, Path* path) {
  path->vertices.clear();
  path->edges.clear();
  std::uint64_t cur = meeting.a;
  while (true) {
    path->vertices.push_back(VertexId(cur));
    const std::uint64_t e = marks.ParentEdge(cur);
    if (e == kNoEdge.value()) break;
    path->edges.push_back(EdgeId(e));
    cur = OtherEnd(view, e, cur);
  }
  std::reverse(path->vertices.begin(), path->vertices.end());
  std::reverse(path->edges.begin(), path->edges.end());
  path->edges.push_back(EdgeId(meeting.edge));
  cur = meeting.b;
  path->vertices.push_back(VertexId(cur));
  while (true) {
    const std::uint64_t e = marks.ParentEdge(cur);
    if (e == kNoEdge.value()) break;
    path->edges.push_back(EdgeId(e));
    cur = OtherEnd(view, e, cur);
    path->vertices.push_back(VertexId(cur));
  }
}

// Bidirectional Dijkstra; returns the meeting vertex or nullopt (also on an
// invalid weight, reported in *error).
std::optional<std::uint64_t> BidirectionalDijkstra(const GraphView& view, const PathSpec& spec,
                                                   const WeightRule& rule, TraversalContext::Impl& m,
                                                   BudgetClock& clock, std::uint64_t s, std::uint64_t t,
                                                   Status* error) {
  const TraversalDirection dirs[2] = {spec.direction, Reverse(spec.direction)};
  auto later = [](const HeapEntry& a, const HeapEntry& b) { return a.key > b.key; };
  std::vector<HeapEntry>* heap = m.heap;
  for (int side = 0; side < 2; ++side) {
    const std::uint64_t start = side == 0 ? s : t;
    heap[side].clear();
    heap[side].push_back(HeapEntry{0, start, kNoEdge.value()});
    m.SetMark(side, start, 0, kNoEdge.value());
    m.sides[side].dist[start] = 0;
  }
  double mu = kInf;
  std::optional<std::uint64_t> meet;
  auto drop_settled = [&](int side) {  // false: the side ran out
    std::vector<HeapEntry>& h = heap[side];
    while (!h.empty() && (m.mark(side, h.front().vertex).depth & kSettled) != 0) {
      std::pop_heap(h.begin(), h.end(), later);
      h.pop_back();
    }
    return !h.empty();
  };
  while (true) {
    if (!drop_settled(0) || !drop_settled(1)) break;
    if (meet && heap[0].front().key + heap[1].front().key >= mu) break;
    const int side = heap[0].size() <= heap[1].size() ? 0 : 1;
    const int other = 1 - side;
    std::vector<HeapEntry>& h = heap[side];
    std::pop_heap(h.begin(), h.end(), later);
    const HeapEntry cur = h.back();
    h.pop_back();
    const std::uint64_t v = cur.vertex;
    m.mark(side, v).depth |= kSettled;
    if (!clock.Tick()) return std::nullopt;
    const double dv = m.sides[side].dist[v];
    GraphView::ForEachEntry(view.Vertex(v), dirs[side], m.types, [&](const EdgeEntry& entry, bool) {
      if (!clock.Edge()) return false;
      const std::uint64_t n = entry.neighbor().value();
      const std::uint64_t e = entry.edge().value();
      if (spec.edge_filter) {
        VertexId from(side == 0 ? v : n), to(side == 0 ? n : v);
        if (!spec.edge_filter(EdgeId(e), from, to)) return true;
      }
      double w;
      if (!WeightOf(view, rule, e, &w)) {
        *error = WeightError(view, rule, e);
        return false;
      }
      const double d = dv + w;
      if (!m.Marked(side, n)) {
        // A vertex both sides reach is one vertex visited: counted by the first.
        if (!m.Marked(other, n) && !clock.Vertex()) return false;
        m.SetMark(side, n, 0, e);
      } else if ((m.mark(side, n).depth & kSettled) != 0 || d >= m.sides[side].dist[n]) {
        return true;
      } else {
        m.mark(side, n).parent_edge = e;
      }
      m.sides[side].dist[n] = d;
      h.push_back(HeapEntry{d, n, e});
      std::push_heap(h.begin(), h.end(), later);
      if (m.Marked(other, n) && (!meet || d + m.sides[other].dist[n] < mu)) {
        mu = d + m.sides[other].dist[n];
        meet = n;
      }
      return true;
    });
    if (!error->ok() || clock.stopped()) return std::nullopt;
  }
  return meet;
}

}  // namespace

}  // namespace quiver::traversal

namespace quiver {

static Status ShortestPathUnguarded(const Snapshot& snap, VertexId source, VertexId target,
                                    const PathSpec& spec, TraversalContext& ctx, Path* path, bool* found,
                                    TraversalStats* stats) {
  path->vertices.clear();
  path->edges.clear();
  path->cost = 0;
  bool found_local;
  if (found == nullptr) found = &found_local;
  *found = false;
  TraversalStats local;
  if (stats == nullptr) stats = &local;
  traversal::BudgetClock clock(spec.budget, stats);
  traversal::WeightRule rule;
  TraversalContext::Impl& m = TraversalContext::Impl::Enter(ctx);
  QUIVER_ASSIGN_OR_RETURN(traversal::GraphView view,
                          traversal::Prepare(snap, spec, source, target, m, &rule));
  if (!clock.Poll() || !clock.Vertex()) return clock.Finish();
  if (source == target) {
    path->vertices.push_back(source);
    *found = true;
    return Status::Ok();
  }
  if (!clock.Vertex()) return clock.Finish();
  if (!rule.weighted) {
    m.BeginPair(view.vertex_limit());
    traversal::PairMarks marks(m);
    std::optional<traversal::Meeting> meeting =
        traversal::BidirectionalBfs(view, spec, m, marks, clock, source.value(), target.value());
    if (clock.stopped()) return clock.Finish();
    if (!meeting) return Status::Ok();
    traversal::BuildBfsPath(view, marks, *meeting, path);
    path->cost = static_cast<double>(path->edges.size());
    *found = true;
    return Status::Ok();
  }
  m.Begin(view.vertex_limit(), 2, true);
  Status error;
  std::optional<std::uint64_t> meet =
      traversal::BidirectionalDijkstra(view, spec, rule, m, clock, source.value(), target.value(), &error);
  QUIVER_RETURN_IF_ERROR(error);
  if (clock.stopped()) return clock.Finish();
  if (!meet) return Status::Ok();
  traversal::BuildPath(view, m, *meet, path);
  Status s = traversal::PathCost(view, rule, path);
  if (!s.ok()) {
    path->vertices.clear();
    path->edges.clear();
    return s;
  }
  *found = true;
  return Status::Ok();
}

Status ShortestPath(const Snapshot& snap, VertexId source, VertexId target, const PathSpec& spec,
                    TraversalContext& ctx, Path* path, bool* found, TraversalStats* stats) {
  try {
    return ShortestPathUnguarded(snap, source, target, spec, ctx, path, found, stats);
  } catch (const std::bad_alloc&) {
    path->vertices.clear();
    path->edges.clear();
    path->cost = 0;
    if (found != nullptr) *found = false;
    return traversal::TraversalOutOfMemory();
  }
}

}  // namespace quiver
