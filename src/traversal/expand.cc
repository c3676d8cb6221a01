// Expand (k-hop neighbourhood, breadth-first) and PathTo.
//
// Deduplicating expansion is a level-synchronous BFS over one mark array: a
// vertex is marked when first discovered (depth and parent edge), so it is
// reported and expanded at most once, at its smallest depth. A vertex that a
// vertex filter refuses is marked kRejected so the filter runs once per
// vertex, not once per edge into it. Without deduplication the frontier holds
// walks instead of vertices and nothing is marked.
#include <algorithm>
#include <string>
#include <vector>

#include "base/prefetch.h"
#include "traversal/context.h"

namespace quiver {

using traversal::GraphView;
using traversal::Mark;

namespace {

// How far ahead in the queue Expand starts loading a vertex's adjacency
// array (its slot was prefetched when it was queued).
constexpr std::size_t kArrayAhead = 4;
// How far ahead the stamps of a queued vertex's neighbours start loading (its
// array started loading kArrayAhead - kNeighbourStampsAhead vertices
// earlier), and how many at most (a hub's thousands would only evict what
// the search reads).
constexpr std::size_t kNeighbourStampsAhead = 2;
constexpr std::size_t kMaxNeighbourStamps = 32;

// Everything one Expand call reads, resolved once.
struct Expansion {
  const GraphView& view;
  const ExpandSpec& spec;
  TraversalContext::Impl& m;
  traversal::BudgetClock& clock;
  const std::function<bool(const Visit&)>& sink;
  bool vertex_filtered;
  bool edge_filtered;

  // Whether the edge `e` from `from` to `to` (path orientation) may be followed.
  bool EdgePasses(std::uint64_t e, std::uint64_t from, std::uint64_t to) const {
    if (!edge_filtered) return true;
    if (!m.edge_predicates.empty() && !traversal::EvaluateAll(view.EdgeProps(e), m.edge_predicates))
      return false;
    return !spec.edge_filter || spec.edge_filter(EdgeId(e), VertexId(from), VertexId(to));
  }

  bool VertexPasses(std::uint64_t v) const {
    if (!vertex_filtered) return true;
    const storage::VertexSlot* s = view.Vertex(v);
    if (!m.any_label) {
      bool found = false;
      for (std::uint32_t l : m.labels) found |= (l == s->label);
      if (!found) return false;
    }
    if (!traversal::EvaluateAll(s->props, m.vertex_predicates)) return false;
    return !spec.vertex_filter || spec.vertex_filter(VertexId(v));
  }

  // False: stop (the sink asked to).
  bool Report(std::uint64_t v, std::uint32_t depth, std::uint64_t parent, std::uint64_t edge) {
    if (depth < spec.min_depth) return true;
    if (sink(Visit{VertexId(v), depth, VertexId(parent), EdgeId(edge)})) return true;
    return clock.Stop(StopReason::kCallback);
  }

  void RunDeduplicated();
  void RunWalks();
};

void Expansion::RunDeduplicated() {
  std::vector<std::uint64_t>& q = m.queue[0];
  q.clear();
  for (VertexId s : spec.seeds) {
    if (m.Marked(0, s.value())) continue;
    if (!clock.Vertex()) return;
    m.SetMark(0, s.value(), 0, kNoEdge.value());
    if (!Report(s.value(), 0, s.value(), kNoEdge.value())) return;
    q.push_back(s.value());
  }
  std::size_t prefetched = 0;      // q[0, prefetched) have had their arrays prefetched
  std::size_t stamps_loading = 0;  // q[0, stamps_loading) have had their neighbours' stamps prefetched
  const traversal::Stamp* stamps = m.sides[0].stamps.data();
  for (std::size_t head = 0; head < q.size(); ++head) {
    const std::uint64_t v = q[head];
    const std::uint32_t depth = m.mark(0, v).depth;
    if (depth >= spec.max_depth) break;  // the queue is in depth order
    if (!clock.Tick()) return;
    // A queued vertex's slot started loading when it was queued; its array
    // starts kArrayAhead vertices before its turn: the misses of several
    // hops overlap instead of queueing behind each other.
    for (const std::size_t ahead = std::min(q.size(), head + kArrayAhead + 1); prefetched < ahead;
         ++prefetched)
      view.PrefetchAdjacency(q[prefetched], spec.direction);
    // The stamp each examined edge tests is a random read too: start those
    // of a queued vertex's neighbours two vertices before its turn, so they
    // overlap instead of queueing behind the few edges the out-of-order
    // window holds.
    for (const std::size_t ahead = std::min(q.size(), head + kNeighbourStampsAhead + 1);
         stamps_loading < ahead; ++stamps_loading) {
      std::size_t budget = kMaxNeighbourStamps;
      GraphView::ForEachEntry(view.Vertex(q[stamps_loading]), spec.direction, m.types,
                              [&](const EdgeEntry& e, bool) {
                                base::Prefetch(&stamps[e.neighbor().value()]);
                                return --budget != 0;
                              });
    }
    // The hot loop, written out (no callback per entry): test the stamp,
    // mark, report, queue.
    const storage::VertexSlot* slot = view.Vertex(v);
    const bool expands = depth + 1 < spec.max_depth;
    for (const bool out : {true, false}) {
      if (out ? !traversal::ReadsOut(spec.direction) : !traversal::ReadsIn(spec.direction)) continue;
      const std::uintptr_t adjacency = out ? slot->out_head : slot->in_head;
      const std::uint32_t degree = out ? slot->out_degree : slot->in_degree;
      const std::size_t groups = storage::GroupCount(adjacency);
      for (std::size_t g = 0; g < groups; ++g) {
        const EdgeGroup group = storage::GroupAt(adjacency, degree, g);
        if (!m.types.Matches(group.type.value())) continue;
        for (const EdgeEntry& entry : group.entries) {
          if (!clock.Edge()) return;
          const std::uint64_t n = entry.neighbor().value();
          if (m.Marked(0, n)) continue;
          const std::uint64_t e = entry.edge().value();
          if (edge_filtered && !EdgePasses(e, v, n)) continue;
          if (vertex_filtered && !VertexPasses(n)) {
            m.SetMark(0, n, traversal::kRejected, kNoEdge.value());
            continue;
          }
          if (!clock.Vertex()) return;
          m.SetMark(0, n, depth + 1, e);
          if (!Report(n, depth + 1, v, e)) return;
          if (expands) {
            q.push_back(n);
            view.PrefetchSlot(n);
          }
        }
      }
    }
  }
}

void Expansion::RunWalks() {
  std::vector<traversal::QueueEntry>& q = m.walks;
  q.clear();
  for (VertexId s : spec.seeds) {
    if (!clock.Vertex()) return;
    if (!Report(s.value(), 0, s.value(), kNoEdge.value())) return;
    q.push_back({s.value(), s.value(), kNoEdge.value(), 0});
  }
  for (std::size_t head = 0; head < q.size(); ++head) {
    const traversal::QueueEntry w = q[head];
    if (w.depth >= spec.max_depth) break;
    if (!clock.Tick()) return;
    GraphView::ForEachEntry(view.Vertex(w.vertex), spec.direction, m.types,
                            [&](const EdgeEntry& entry, bool) {
                              if (!clock.Edge()) return false;
                              const std::uint64_t n = entry.neighbor().value();
                              const std::uint64_t e = entry.edge().value();
                              if (!EdgePasses(e, w.vertex, n) || !VertexPasses(n)) return true;
                              if (!clock.Vertex()) return false;
                              if (!Report(n, w.depth + 1, w.vertex, e)) return false;
                              if (w.depth + 1 < spec.max_depth) q.push_back({n, w.vertex, e, w.depth + 1});
                              return true;
                            });
    if (clock.stopped()) return;
  }
}

Status CheckSpec(const GraphView& view, const ExpandSpec& spec) {
  if (spec.min_depth > spec.max_depth) return InvalidArgumentError("min_depth is greater than max_depth");
  QUIVER_RETURN_IF_ERROR(traversal::CheckBudget(spec.budget));
  for (VertexId s : spec.seeds) QUIVER_RETURN_IF_ERROR(traversal::CheckVertex(view, s, "seed"));
  return Status::Ok();
}

}  // namespace

namespace {

Status ExpandUnguarded(const Snapshot& snap, const ExpandSpec& spec, TraversalContext& ctx,
                       const std::function<bool(const Visit&)>& sink, TraversalStats* stats) {
  TraversalStats local;
  if (stats == nullptr) stats = &local;
  traversal::BudgetClock clock(spec.budget, stats);
  TraversalContext::Impl& m = TraversalContext::Impl::Enter(ctx);  // ends PathTo's state
  if (!snap.valid()) return InvalidArgumentError("Expand on an invalid snapshot");
  GraphView view(snap);
  QUIVER_RETURN_IF_ERROR(CheckSpec(view, spec));

  m.ResolveTypes(snap, spec.edge_types);
  m.any_label = spec.vertex_labels.empty();
  m.labels.clear();
  for (const std::string& l : spec.vertex_labels)
    if (auto id = snap.FindLabel(l)) m.labels.push_back(id->value());
  TraversalContext::Impl::ResolvePredicates(snap, spec.vertex_predicates, &m.vertex_predicates);
  TraversalContext::Impl::ResolvePredicates(snap, spec.edge_predicates, &m.edge_predicates);

  Expansion x{view,
              spec,
              m,
              clock,
              sink,
              !m.any_label || !m.vertex_predicates.empty() || static_cast<bool>(spec.vertex_filter),
              !m.edge_predicates.empty() || static_cast<bool>(spec.edge_filter)};
  if (spec.deduplicate) {
    m.Begin(view.vertex_limit(), 1, false);
    m.expand_chain = SnapshotInternal::VersionOf(snap)->chain()->id();
    m.expand_sequence = snap.sequence();
    m.expand_generation = m.generation;
    if (!clock.Poll()) return clock.Finish();  // PathTo answers NotFound for every vertex
    x.RunDeduplicated();
  } else {
    if (!clock.Poll()) return clock.Finish();
    x.RunWalks();
  }
  return clock.Finish();
}

}  // namespace

Status Expand(const Snapshot& snap, const ExpandSpec& spec, TraversalContext& ctx,
              const std::function<bool(const Visit&)>& sink, TraversalStats* stats) {
  if (!sink) {
    TraversalContext::Impl::Enter(ctx);
    return InvalidArgumentError("Expand: the sink is an empty std::function");
  }
  try {
    return ExpandUnguarded(snap, spec, ctx, sink, stats);
  } catch (const std::bad_alloc&) {
    TraversalContext::Impl::Enter(ctx);  // PathTo reads nothing of a failed call
    return traversal::TraversalOutOfMemory();
  }
}

Status Expand(const Snapshot& snap, const ExpandSpec& spec, TraversalContext& ctx, std::vector<Visit>* out,
              TraversalStats* stats) {
  out->clear();
  try {
    // A function_ref would avoid the std::function; this one captures one
    // pointer, which fits the small-object buffer, so it does not allocate.
    Status s = ExpandUnguarded(
        snap, spec, ctx,
        [out](const Visit& v) {
          out->push_back(v);
          return true;
        },
        stats);
    if (!s.ok() && s.code() != StatusCode::kResourceExhausted) out->clear();
    return s;
  } catch (const std::bad_alloc&) {
    out->clear();
    TraversalContext::Impl::Enter(ctx);
    return traversal::TraversalOutOfMemory();
  }
}

namespace {

Status PathToUnguarded(const Snapshot& snap, const TraversalContext& ctx, VertexId v, Path* path) {
  path->vertices.clear();
  path->edges.clear();
  path->cost = 0;
  const TraversalContext::Impl& m = ctx.impl();
  if (!snap.valid() || m.expand_chain == 0 ||
      m.expand_chain != SnapshotInternal::VersionOf(snap)->chain()->id() ||
      m.expand_sequence != snap.sequence() || m.expand_generation != m.generation)
    return FailedPreconditionError(
        "PathTo needs a deduplicating Expand on this snapshot as the context's last call");
  GraphView view(snap);
  std::uint64_t cur = v.value();
  if (!m.MarkedAny(0, cur) || m.mark(0, cur).depth == traversal::kRejected)
    return NotFoundError("vertex " + std::to_string(cur) + " was not visited by the last Expand");
  while (true) {
    path->vertices.push_back(VertexId(cur));
    std::uint64_t e = m.mark(0, cur).parent_edge;
    if (e == kNoEdge.value()) break;
    path->edges.push_back(EdgeId(e));
    if (view.Edge(e) == nullptr) {  // cannot happen on the Expand's own contents
      path->vertices.clear();
      path->edges.clear();
      return InternalError("PathTo: edge " + std::to_string(e) +
                           " of the last Expand is not in this snapshot");
    }
    cur = traversal::OtherEnd(view, e, cur);
  }
  std::reverse(path->vertices.begin(), path->vertices.end());
  std::reverse(path->edges.begin(), path->edges.end());
  path->cost = static_cast<double>(path->edges.size());
  return Status::Ok();
}

}  // namespace

Status PathTo(const Snapshot& snap, const TraversalContext& ctx, VertexId v, Path* path) {
  try {
    return PathToUnguarded(snap, ctx, v, path);
  } catch (const std::bad_alloc&) {
    path->vertices.clear();
    path->edges.clear();
    path->cost = 0;
    return traversal::TraversalOutOfMemory();
  }
}

}  // namespace quiver
