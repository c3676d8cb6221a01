// ShortestPath: bidirectional BFS (unweighted) and bidirectional Dijkstra
// (weighted) between two vertices.
//
// Side 0 searches forward from the source along `direction`; side 1 searches
// backward from the target along its reverse. Each side marks a vertex with
// its depth (or distance) and the edge it was reached by.
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

#include "traversal/context.h"
#include "traversal/paths.h"

namespace quiver::traversal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// How far ahead in a BFS level the search starts loading a vertex's
// adjacency array; its slot started loading when it was queued (see
// GraphView::PrefetchSlot).
constexpr std::size_t kArrayAhead = 4;

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

// Bidirectional BFS; returns the meeting vertex or nullopt.
std::optional<std::uint64_t> BidirectionalBfs(const GraphView& view, const PathSpec& spec,
                                              TraversalContext::Impl& m, BudgetClock& clock, std::uint64_t s,
                                              std::uint64_t t) {
  const TraversalDirection dirs[2] = {spec.direction, Reverse(spec.direction)};
  std::vector<std::uint64_t>* q = m.queue;
  std::size_t level_begin[2] = {0, 0};
  for (int side = 0; side < 2; ++side) {
    q[side].clear();
    q[side].push_back(side == 0 ? s : t);
    m.SetMark(side, side == 0 ? s : t, 0, kNoEdge.value());
  }
  while (true) {
    std::size_t sizes[2] = {q[0].size() - level_begin[0], q[1].size() - level_begin[1]};
    if (sizes[0] == 0 || sizes[1] == 0) return std::nullopt;
    const int side = sizes[0] <= sizes[1] ? 0 : 1;
    const int other = 1 - side;
    const std::size_t end = q[side].size();
    std::size_t prefetched = level_begin[side];
    for (std::size_t i = level_begin[side]; i < end; ++i) {
      const std::uint64_t v = q[side][i];
      const std::uint32_t depth = m.mark(side, v).depth;
      if (!clock.Tick()) return std::nullopt;
      // The level's next vertices' arrays (their slots were prefetched when
      // they were queued).
      for (const std::size_t ahead = std::min(end, i + kArrayAhead + 1); prefetched < ahead; ++prefetched)
        view.PrefetchAdjacency(q[side][prefetched], dirs[side]);
      // The hot loop, written out (no callback per entry).
      const storage::VertexSlot* slot = view.Vertex(v);
      for (const bool out : {true, false}) {
        if (out ? !ReadsOut(dirs[side]) : !ReadsIn(dirs[side])) continue;
        const std::uintptr_t adjacency = out ? slot->out_head : slot->in_head;
        const std::uint32_t degree = out ? slot->out_degree : slot->in_degree;
        const std::size_t groups = storage::GroupCount(adjacency);
        for (std::size_t g = 0; g < groups; ++g) {
          const EdgeGroup group = storage::GroupAt(adjacency, degree, g);
          if (!m.types.Matches(group.type.value())) continue;
          for (const EdgeEntry& entry : group.entries) {
            if (!clock.Edge()) return std::nullopt;
            const std::uint64_t n = entry.neighbor().value();
            if (m.Marked(side, n)) continue;
            const std::uint64_t e = entry.edge().value();
            if (spec.edge_filter) {
              VertexId from(side == 0 ? v : n), to(side == 0 ? n : v);
              if (!spec.edge_filter(EdgeId(e), from, to)) continue;
            }
            if (!clock.Vertex()) return std::nullopt;
            m.SetMark(side, n, depth + 1, e);
            if (m.Marked(other, n)) return n;  // the first meeting is a shortest path
            q[side].push_back(n);
            view.PrefetchSlot(n);
          }
        }
      }
    }
    level_begin[side] = end;
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
        if (!clock.Vertex()) return false;
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

Status ShortestPath(const Snapshot& snap, VertexId source, VertexId target, const PathSpec& spec,
                    TraversalContext& ctx, Path* path, bool* found, TraversalStats* stats) {
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
  m.Begin(view.vertex_limit(), 2, rule.weighted);
  Status error;
  std::optional<std::uint64_t> meet =
      rule.weighted ? traversal::BidirectionalDijkstra(view, spec, rule, m, clock, source.value(),
                                                       target.value(), &error)
                    : traversal::BidirectionalBfs(view, spec, m, clock, source.value(), target.value());
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

}  // namespace quiver
