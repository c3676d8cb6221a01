// TopKNeighbors: the k best adjacency entries of one vertex by a numeric
// property, without sorting the adjacency.
//
// A heap of at most k entries keeps the worst kept entry on top; each entry
// examined either loses to it (one comparison) or replaces it (log k). At
// degree 100 and k = 20 that is ~100 property reads and a few dozen heap
// steps; the property reads (a slot of the sparse edge-property table, then
// the block it points to) dominate, so they are found through a cached
// table leaf (a vertex's edges often have neighbouring ids) and prefetched
// a few entries ahead.
#include <algorithm>
#include <span>
#include <string>

#include "traversal/context.h"

namespace quiver {

using traversal::RankEntry;

namespace {

// How far ahead of the entry being ranked its edge's property slot, and its
// property block, start loading.
constexpr std::size_t kSlotAhead = 16;
constexpr std::size_t kBlockAhead = 8;

// Orders entries best first: the higher score, then the smaller edge id. A
// score is (key, low): the number rounded to double and the exact remainder
// (GetNumber), so int64 scores beyond 2^53 rank exactly, also against
// doubles; `low` is 0 for every other score and is compared only on a tie
// of keys. Both are negated when ranking ascending (negating is exact and
// round-to-nearest is symmetric), so one comparison serves both orders.
struct Better {
  bool operator()(const RankEntry& a, const RankEntry& b) const {
    if (a.key != b.key) return a.key > b.key;
    if (a.low != b.low) return a.low > b.low;
    return a.edge < b.edge;
  }
};

// Replaces the top of the heap `h` (its worst entry) with `x` and restores
// the heap: one sift down, where pop_heap + push_heap would sift twice.
void ReplaceTop(std::vector<RankEntry>& h, const RankEntry& x) {
  const Better better;
  const std::size_t n = h.size();
  std::size_t i = 0;
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    // The worse of the two children goes up (the heap keeps the worst on top).
    if (child + 1 < n && better(h[child], h[child + 1])) ++child;
    if (!better(x, h[child])) break;
    h[i] = h[child];
    i = child;
  }
  h[i] = x;
}

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

  std::vector<RankEntry>& heap = m.ranked;
  heap.clear();
  const Better better;
  const double sign = spec.descending ? 1.0 : -1.0;
  const bool of_edge = spec.of == TopKSpec::Of::kEdge;
  const std::uint32_t key_id = key->value();
  // One cursor per distance, so each walks its leaves in order.
  traversal::PropertyCursor props(view), slots_ahead(view), blocks_ahead(view);
  Status error;
  // Entry i's block is loaded while entry i - kBlockAhead is ranked, and
  // the slot holding its address while entry i - kSlotAhead is: the
  // property reads, which dominate, overlap instead of queueing.
  auto rank = [&](std::span<const EdgeEntry> entries) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (of_edge) {
        if (i + kSlotAhead < entries.size()) slots_ahead.PrefetchSlot(entries[i + kSlotAhead].edge().value());
        if (i + kBlockAhead < entries.size())
          blocks_ahead.PrefetchBlock(entries[i + kBlockAhead].edge().value());
      }
      const EdgeEntry& e = entries[i];
      if (!clock.Edge()) return false;
      const std::uint64_t id = of_edge ? e.edge().value() : e.neighbor().value();
      const storage::PropBlock* block = of_edge ? props.Block(id) : view.Vertex(id)->props;
      double score, low;
      ValueType type;
      const storage::NumberLookup found = storage::GetNumber(block, key_id, &score, &type, &low);
      if (found == storage::NumberLookup::kAbsent) continue;  // missing or null: skipped
      if (found == storage::NumberLookup::kOther) {
        error = NotNumeric(of_edge ? "edge" : "vertex", id, type);
        return false;
      }
      const RankEntry h{sign * score, sign * low, e.neighbor().value(), e.edge().value()};
      if (heap.size() < spec.k) {
        heap.push_back(h);
        std::push_heap(heap.begin(), heap.end(), better);  // the worst kept entry on top
      } else if (better(h, heap.front())) {
        ReplaceTop(heap, h);
      }
    }
    return true;
  };
  const storage::VertexSlot* slot = view.Vertex(v.value());
  for (const bool outgoing : {true, false}) {
    if (outgoing ? !traversal::ReadsOut(spec.direction) : !traversal::ReadsIn(spec.direction)) continue;
    const std::uintptr_t head = outgoing ? slot->out_head : slot->in_head;
    const std::uint32_t degree = outgoing ? slot->out_degree : slot->in_degree;
    bool go_on = true;
    for (std::size_t g = 0; g < storage::GroupCount(head) && go_on; ++g) {
      const EdgeGroup group = storage::GroupAt(head, degree, g);
      if (m.types.Matches(group.type.value())) go_on = rank(group.entries);
    }
    if (!go_on) break;
  }
  if (!error.ok()) return error;
  std::sort_heap(heap.begin(), heap.end(), better);
  for (const RankEntry& h : heap) out->push_back(Neighbor{VertexId(h.vertex), EdgeId(h.edge), sign * h.key});
  return clock.Finish();
}

}  // namespace quiver
