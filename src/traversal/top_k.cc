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
#include <bit>
#include <span>
#include <string>

#include "base/prefetch.h"
#include "traversal/context.h"

namespace quiver {

using traversal::RankEntry;

namespace {

// How far ahead of the entry being ranked its edge's property slot, and its
// property block, start loading (kBlockAhead: a power of two, the size of
// the ring that keeps the blocks found early).
constexpr std::size_t kSlotAhead = 16;
constexpr std::size_t kBlockAhead = 8;
static_assert((kBlockAhead & (kBlockAhead - 1)) == 0);

// An entry's rank as one 128-bit unsigned number (hi, lo), larger is better:
// the higher score, then the smaller edge id. A score is (key, low): the
// number rounded to double and the exact remainder (GetNumber), so int64
// scores beyond 2^53 rank exactly, also against doubles; `low` is 0 for
// every other score. Both are negated when ranking ascending (negating is
// exact and round-to-nearest is symmetric). `hi` is the key's bits mapped so
// that unsigned order is numeric order (-0 first made +0: they tie); `lo` is
// the remainder, an integer in [-1024, 1024], biased to 12 bits, above the
// edge id subtracted from the largest id (48 bits). One comparison of two
// words orders entries exactly as comparing key, low, then edge id does,
// for a handful of instructions instead of three branches on doubles.
RankEntry RankOf(double sign, double score, double low, std::uint64_t vertex, std::uint64_t edge) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(sign * score + 0.0);
  const std::uint64_t hi = (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
  const auto biased = static_cast<std::uint64_t>(static_cast<std::int64_t>(sign * low) + 1024);
  return RankEntry{hi, (biased << 48) | (kMaxElementId - edge), vertex, score};
}
std::uint64_t EdgeOf(const RankEntry& r) { return kMaxElementId - (r.lo & kMaxElementId); }

// Orders entries best first.
struct Better {
  bool operator()(const RankEntry& a, const RankEntry& b) const {
    return a.hi != b.hi ? a.hi > b.hi : a.lo > b.lo;
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
  // Two cursors, one per distance ahead, so each walks its leaves in order.
  traversal::PropertyCursor slots_ahead(view), blocks_ahead(view);
  Status error;
  // Entry i's block is found and starts loading while entry i - kBlockAhead
  // is ranked, and the table slot holding its address while entry
  // i - kSlotAhead is: the property reads overlap instead of queueing. The
  // ring keeps the blocks found early, so each is looked up once.
  const storage::PropBlock* ring[kBlockAhead] = {};
  auto fetch = [&](const EdgeEntry& e) {
    const storage::PropBlock* b = blocks_ahead.Block(e.edge().value());
    if (b != nullptr) base::Prefetch(b);
    return b;
  };
  auto rank = [&](std::span<const EdgeEntry> entries) {
    const std::size_t n = entries.size();
    if (of_edge)
      for (std::size_t i = 0; i < n && i < kBlockAhead; ++i) ring[i] = fetch(entries[i]);
    for (std::size_t i = 0; i < n; ++i) {
      const EdgeEntry& e = entries[i];
      const storage::PropBlock* block = nullptr;
      if (of_edge) {
        if (i + kSlotAhead < n) slots_ahead.PrefetchSlot(entries[i + kSlotAhead].edge().value());
        block = ring[i & (kBlockAhead - 1)];
        if (i + kBlockAhead < n) ring[i & (kBlockAhead - 1)] = fetch(entries[i + kBlockAhead]);
      }
      if (!clock.Edge()) return false;
      if (!of_edge) block = view.Vertex(e.neighbor().value())->props;
      double score, low;
      ValueType type;
      const storage::NumberLookup found = storage::GetNumber(block, key_id, &score, &type, &low);
      if (found == storage::NumberLookup::kAbsent) continue;  // missing or null: skipped
      if (found == storage::NumberLookup::kOther) {
        error =
            NotNumeric(of_edge ? "edge" : "vertex", of_edge ? e.edge().value() : e.neighbor().value(), type);
        return false;
      }
      const RankEntry h = RankOf(sign, score, low, e.neighbor().value(), e.edge().value());
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
  for (const RankEntry& h : heap) out->push_back(Neighbor{VertexId(h.vertex), EdgeId(EdgeOf(h)), h.score});
  return clock.Finish();
}

}  // namespace quiver
