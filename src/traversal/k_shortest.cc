// Forward Dijkstra with exclusions, and the two multi-path searches built on
// it: KShortestPaths (Yen) and AllShortestPaths.
#include <algorithm>
#include <limits>

#include "traversal/paths.h"

namespace quiver::traversal {

Result<GraphView> Prepare(const Snapshot& snap, const PathSpec& spec, VertexId source, VertexId target,
                          TraversalContext::Impl& m, WeightRule* rule) {
  if (!snap.valid()) return InvalidArgumentError("path search on an invalid snapshot");
  QUIVER_RETURN_IF_ERROR(CheckBudget(spec.budget));
  GraphView view(snap);
  QUIVER_RETURN_IF_ERROR(CheckVertex(view, source, "source"));
  QUIVER_RETURN_IF_ERROR(CheckVertex(view, target, "target"));
  QUIVER_RETURN_IF_ERROR(ResolveWeight(snap, spec, rule));
  m.ResolveTypes(snap, spec.edge_types);
  return view;
}

bool ForwardDijkstra(const GraphView& view, const PathSpec& spec, const WeightRule& rule,
                     TraversalContext::Impl& m, BudgetClock& clock, std::uint64_t s, std::uint64_t t,
                     bool use_bans, bool settle_ties, Status* error, double start) {
  auto later = [](const HeapEntry& a, const HeapEntry& b) { return a.key > b.key; };
  m.Begin(view.vertex_limit(), 1, true);
  std::vector<HeapEntry>& h = m.heap[0];
  h.clear();
  if (!clock.Vertex()) return false;
  m.SetMark(0, s, 0, kNoEdge.value());
  m.sides[0].dist[s] = start;
  h.push_back(HeapEntry{start, s, kNoEdge.value()});
  bool reached = false;
  while (!h.empty()) {
    std::pop_heap(h.begin(), h.end(), later);
    const HeapEntry cur = h.back();
    h.pop_back();
    const std::uint64_t v = cur.vertex;
    Mark& mv = m.mark(0, v);
    if ((mv.depth & kSettled) != 0) continue;
    if (reached && !(settle_ties && cur.key <= m.sides[0].dist[t])) break;
    mv.depth |= kSettled;
    if (v == t) {
      reached = true;
      if (!settle_ties) break;
      continue;  // paths through t are not simple paths to t
    }
    if (!clock.Tick()) return false;
    const double dv = m.sides[0].dist[v];
    GraphView::ForEachEntry(view.Vertex(v), spec.direction, m.types, [&](const EdgeEntry& entry, bool) {
      if (!clock.Edge()) return false;
      const std::uint64_t n = entry.neighbor().value();
      const std::uint64_t e = entry.edge().value();
      if (use_bans) {
        if (m.Banned(n)) return true;
        if (std::find(m.banned_edges.begin(), m.banned_edges.end(), e) != m.banned_edges.end()) return true;
      }
      if (spec.edge_filter && !spec.edge_filter(EdgeId(e), VertexId(v), VertexId(n))) return true;
      double w;
      if (!WeightOf(view, rule, e, &w)) {
        *error = WeightError(view, rule, e);
        return false;
      }
      const double d = dv + w;
      if (!m.Marked(0, n)) {
        if (!clock.Vertex()) return false;
        m.SetMark(0, n, 0, e);
      } else if ((m.mark(0, n).depth & kSettled) != 0 || d >= m.sides[0].dist[n]) {
        return true;
      } else {
        m.mark(0, n).parent_edge = e;
      }
      m.sides[0].dist[n] = d;
      h.push_back(HeapEntry{d, n, e});
      std::push_heap(h.begin(), h.end(), later);
      return true;
    });
    if (!error->ok() || clock.stopped()) return false;
  }
  return reached;
}

namespace {

// Path `a` is preferred to `b`: cheaper, then fewer edges, then smaller edge ids.
bool Preferred(const Path& a, const Path& b) {
  if (a.cost != b.cost) return a.cost < b.cost;
  if (a.edges.size() != b.edges.size()) return a.edges.size() < b.edges.size();
  return a.edges < b.edges;
}

// Appends to `root` (the first i+1 vertices and i edges of `prev`) the spur
// path side 0 found to `t`.
void Splice(const GraphView& view, const TraversalContext::Impl& m, const Path& prev, std::size_t i,
            std::uint64_t t, Path* out) {
  BuildPath(view, m, t, out);  // spur..t (side 1 is stale: a new generation)
  out->vertices.insert(out->vertices.begin(), prev.vertices.begin(), prev.vertices.begin() + i);
  out->edges.insert(out->edges.begin(), prev.edges.begin(), prev.edges.begin() + i);
}

// One Yen iteration: every spur candidate deviating from `prev` into `m.candidates`.
Status SpurCandidates(const GraphView& view, const PathSpec& spec, const WeightRule& rule,
                      TraversalContext::Impl& m, BudgetClock& clock, const std::vector<Path>& found,
                      std::size_t prev_index, std::uint64_t t) {
  const Path prev = found[prev_index];
  double root_cost = 0;  // of prev's first i edges, summed as PathCost sums
  for (std::size_t i = 0; i < prev.edges.size(); ++i) {
    if (i > 0) {
      double w;
      if (!WeightOf(view, rule, prev.edges[i - 1].value(), &w))
        return WeightError(view, rule, prev.edges[i - 1].value());
      root_cost += w;
    }
    m.banned_edges.clear();
    for (const Path& p : found)
      if (p.edges.size() > i && std::equal(prev.edges.begin(), prev.edges.begin() + i, p.edges.begin()))
        m.banned_edges.push_back(p.edges[i].value());
    m.BeginBanned(view.vertex_limit());
    for (std::size_t j = 0; j < i; ++j) m.Ban(prev.vertices[j].value());
    Status error;
    bool reached = ForwardDijkstra(view, spec, rule, m, clock, prev.vertices[i].value(), t, true, false,
                                   &error, root_cost);
    QUIVER_RETURN_IF_ERROR(error);
    if (clock.stopped()) return Status::Ok();
    if (!reached) continue;
    Path cand;
    Splice(view, m, prev, i, t, &cand);
    QUIVER_RETURN_IF_ERROR(PathCost(view, rule, &cand));
    bool duplicate = false;
    for (const Path& c : m.candidates) duplicate |= (c.edges == cand.edges);
    if (!duplicate) m.candidates.push_back(std::move(cand));
  }
  return Status::Ok();
}

}  // namespace

}  // namespace quiver::traversal

namespace quiver {

using traversal::BudgetClock;

static Status KShortestPathsUnguarded(const Snapshot& snap, VertexId source, VertexId target, std::size_t k,
                                      const PathSpec& spec, TraversalContext& ctx, std::vector<Path>* paths,
                                      TraversalStats* stats) {
  paths->clear();
  TraversalStats local;
  if (stats == nullptr) stats = &local;
  BudgetClock clock(spec.budget, stats);
  TraversalContext::Impl& m = TraversalContext::Impl::Enter(ctx);
  if (k == 0) return InvalidArgumentError("k is 0");
  traversal::WeightRule rule;
  QUIVER_ASSIGN_OR_RETURN(traversal::GraphView view,
                          traversal::Prepare(snap, spec, source, target, m, &rule));
  if (!clock.Poll()) return clock.Finish();
  if (source == target) {
    // The one loopless path is the empty one; its vertex is visited, as
    // ShortestPath counts it.
    if (!clock.Vertex()) return clock.Finish();
    paths->push_back(Path{{source}, {}, 0});
    return Status::Ok();
  }
  Status error;
  bool reached = traversal::ForwardDijkstra(view, spec, rule, m, clock, source.value(), target.value(), false,
                                            false, &error);
  QUIVER_RETURN_IF_ERROR(error);
  if (!reached) return clock.Finish();
  Path first;
  traversal::BuildPath(view, m, target.value(), &first);
  QUIVER_RETURN_IF_ERROR(traversal::PathCost(view, rule, &first));
  paths->push_back(std::move(first));
  m.candidates.clear();
  while (paths->size() < k) {
    Status s =
        traversal::SpurCandidates(view, spec, rule, m, clock, *paths, paths->size() - 1, target.value());
    if (!s.ok()) {
      paths->clear();
      return s;
    }
    if (clock.stopped() || m.candidates.empty()) break;
    auto best = std::min_element(m.candidates.begin(), m.candidates.end(), traversal::Preferred);
    paths->push_back(std::move(*best));
    m.candidates.erase(best);
  }
  return clock.Finish();
}

namespace {

struct Frame {
  std::uint64_t vertex;
  std::uint64_t edge;            // joins this vertex to the previous frame's
  std::size_t begin, next, end;  // its predecessors in `preds`
};

// Appends to `preds` the (vertex, edge) pairs on shortest routes into `v`.
bool Predecessors(const traversal::GraphView& view, const PathSpec& spec, const traversal::WeightRule& rule,
                  TraversalContext::Impl& m, BudgetClock& clock, std::uint64_t v,
                  std::vector<std::pair<std::uint64_t, std::uint64_t>>* preds) {
  const double dv = m.sides[0].dist[v];
  return traversal::GraphView::ForEachEntry(
      view.Vertex(v), traversal::Reverse(spec.direction), m.types, [&](const EdgeEntry& entry, bool) {
        if (!clock.Edge()) return false;
        const std::uint64_t n = entry.neighbor().value();
        const std::uint64_t e = entry.edge().value();
        if (!m.Marked(0, n) || (m.mark(0, n).depth & traversal::kSettled) == 0) return true;
        if (spec.edge_filter && !spec.edge_filter(EdgeId(e), VertexId(n), VertexId(v))) return true;
        double w;
        if (!traversal::WeightOf(view, rule, e, &w)) return true;  // the search examined it: cannot happen
        if (m.sides[0].dist[n] + w == dv) preds->emplace_back(n, e);
        return true;
      });
}

}  // namespace

static Status AllShortestPathsUnguarded(const Snapshot& snap, VertexId source, VertexId target,
                                        std::size_t max_paths, const PathSpec& spec, TraversalContext& ctx,
                                        std::vector<Path>* paths, bool* truncated, TraversalStats* stats) {
  paths->clear();
  bool truncated_local;
  if (truncated == nullptr) truncated = &truncated_local;
  *truncated = false;
  TraversalStats local;
  if (stats == nullptr) stats = &local;
  BudgetClock clock(spec.budget, stats);
  TraversalContext::Impl& m = TraversalContext::Impl::Enter(ctx);
  if (max_paths == 0) return InvalidArgumentError("max_paths is 0");
  traversal::WeightRule rule;
  QUIVER_ASSIGN_OR_RETURN(traversal::GraphView view,
                          traversal::Prepare(snap, spec, source, target, m, &rule));
  if (!clock.Poll()) return clock.Finish();
  Status error;
  const std::uint64_t s = source.value(), t = target.value();
  bool reached = traversal::ForwardDijkstra(view, spec, rule, m, clock, s, t, false, true, &error);
  QUIVER_RETURN_IF_ERROR(error);
  if (!reached) return clock.Finish();
  const double cost = m.sides[0].dist[t];

  // Depth-first, backwards from t over predecessor edges; `banned` marks
  // the vertices on the current partial path so zero-weight cycles cannot
  // make a path revisit one.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> preds;
  std::vector<Frame> frames;
  m.BeginBanned(view.vertex_limit());
  m.Ban(t);
  if (!Predecessors(view, spec, rule, m, clock, t, &preds)) return clock.Finish();
  frames.push_back(Frame{t, kNoEdge.value(), 0, 0, preds.size()});
  while (!frames.empty()) {
    Frame& f = frames.back();
    if (f.vertex == s || f.next == f.end) {
      if (f.vertex == s) {
        if (paths->size() == max_paths) {
          *truncated = true;
          break;
        }
        Path p;
        p.cost = cost;
        for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
          p.vertices.push_back(VertexId(it->vertex));
          if (it->edge != kNoEdge.value()) p.edges.push_back(EdgeId(it->edge));
        }
        paths->push_back(std::move(p));
      }
      preds.resize(f.begin);
      m.Unban(f.vertex);
      frames.pop_back();
      continue;
    }
    auto [n, e] = preds[f.next++];
    if (m.Banned(n)) continue;
    m.Ban(n);
    const std::size_t begin = preds.size();
    if (n != s && !Predecessors(view, spec, rule, m, clock, n, &preds)) {
      paths->clear();
      return clock.Finish();
    }
    frames.push_back(Frame{n, e, begin, begin, preds.size()});
  }
  return clock.Finish();
}

Status KShortestPaths(const Snapshot& snap, VertexId source, VertexId target, std::size_t k,
                      const PathSpec& spec, TraversalContext& ctx, std::vector<Path>* paths,
                      TraversalStats* stats) {
  try {
    return KShortestPathsUnguarded(snap, source, target, k, spec, ctx, paths, stats);
  } catch (const std::bad_alloc&) {
    paths->clear();
    return traversal::TraversalOutOfMemory();
  }
}

Status AllShortestPaths(const Snapshot& snap, VertexId source, VertexId target, std::size_t max_paths,
                        const PathSpec& spec, TraversalContext& ctx, std::vector<Path>* paths,
                        bool* truncated, TraversalStats* stats) {
  try {
    return AllShortestPathsUnguarded(snap, source, target, max_paths, spec, ctx, paths, truncated, stats);
  } catch (const std::bad_alloc&) {
    paths->clear();
    if (truncated != nullptr) *truncated = false;
    return traversal::TraversalOutOfMemory();
  }
}

}  // namespace quiver
