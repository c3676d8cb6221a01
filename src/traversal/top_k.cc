// TopKNeighbors: the k best adjacency entries of one vertex by a numeric
// property, without sorting the adjacency.
//
// A heap of at most k entries keeps the worst kept entry on top; each entry
// examined either loses to it (one comparison) or replaces it (log k). At
// degree 100 and k = 20 that is ~100 property reads and a few dozen heap
// steps; the property reads (one block per edge) dominate.
#include <algorithm>
#include <string>

#include "traversal/context.h"

namespace quiver {

using traversal::HeapEntry;

namespace {

// Orders entries best first: higher (descending) or lower score, then the
// smaller edge id.
struct Better {
  bool descending;
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    if (a.key != b.key) return descending ? a.key > b.key : a.key < b.key;
    return a.edge < b.edge;
  }
};

Status NotNumeric(const char* what, std::uint64_t id, ValueType t) {
  return InvalidArgumentError(std::string(what) + " " + std::to_string(id) + ": ranking property is a " +
                              std::string(ValueTypeName(t)) + ", not a number");
}

}  // namespace

Status TopKNeighbors(const Snapshot& snap, VertexId v, const TopKSpec& spec, TraversalContext& ctx,
                     std::vector<Neighbor>* out, TraversalStats* stats) {
  out->clear();
  TraversalStats local;
  if (stats == nullptr) stats = &local;
  traversal::BudgetClock clock(spec.budget, stats);
  if (!snap.valid()) return InvalidArgumentError("TopKNeighbors on an invalid snapshot");
  TraversalContext::Impl& m = TraversalContext::Impl::Enter(ctx);
  if (spec.k == 0) return InvalidArgumentError("k is 0");
  QUIVER_RETURN_IF_ERROR(traversal::CheckBudget(spec.budget));
  traversal::GraphView view(snap);
  QUIVER_RETURN_IF_ERROR(traversal::CheckVertex(view, v, "source"));
  m.ResolveTypes(snap, spec.edge_types);
  std::optional<PropertyKeyId> key = snap.FindPropertyKey(spec.key);
  if (!key || !clock.Poll() || !clock.Vertex()) return clock.Finish();  // unknown key: nothing ranks

  std::vector<HeapEntry>& heap = m.heap[0];
  heap.clear();
  const Better better{spec.descending};
  const bool of_edge = spec.of == TopKSpec::Of::kEdge;
  Status error;
  traversal::GraphView::ForEachEntry(
      view.Vertex(v.value()), spec.direction, m.types, [&](const EdgeEntry& e, bool) {
        if (!clock.Edge()) return false;
        const std::uint64_t id = of_edge ? e.edge().value() : e.neighbor().value();
        const storage::PropBlock* block = of_edge ? view.EdgeProps(id) : view.Vertex(id)->props;
        std::optional<PropertyView> p = storage::GetProperty(block, key->value());
        if (!p || p->is_null()) return true;
        double score;
        if (p->type() == ValueType::kDouble) {
          score = *p->as_double();
        } else if (p->type() == ValueType::kInt64) {
          score = static_cast<double>(*p->as_int64());
        } else {
          error = NotNumeric(of_edge ? "edge" : "vertex", id, p->type());
          return false;
        }
        HeapEntry h{score, e.neighbor().value(), e.edge().value()};
        if (heap.size() < spec.k) {
          heap.push_back(h);
          std::push_heap(heap.begin(), heap.end(), better);  // the worst kept entry on top
        } else if (better(h, heap.front())) {
          std::pop_heap(heap.begin(), heap.end(), better);
          heap.back() = h;
          std::push_heap(heap.begin(), heap.end(), better);
        }
        return true;
      });
  if (!error.ok()) return error;
  std::sort_heap(heap.begin(), heap.end(), better);
  for (const HeapEntry& h : heap) out->push_back(Neighbor{VertexId(h.vertex), EdgeId(h.edge), h.key});
  return clock.Finish();
}

}  // namespace quiver
