// TopKNeighbors: the k best adjacency entries of one vertex by a numeric
// property, without sorting the adjacency.
//
// The best k entries seen so far are kept (Kept): for k up to kSortedMax in
// an array sorted best first, above it in a heap with the worst on top. An
// entry that loses to the worst kept one costs one comparison, on its score
// word alone when the scores differ. With random scores about half the
// entries of a degree-100 vertex are kept for a while at k = 20 (k + k ln(n/k)
// insertions), and each insertion's comparisons are as unpredictable as the
// scores: a heap pays a mispredicted branch or two per level for ~50 sifts
// and then sorts, while the sorted array pays about one per insertion (the
// end of its scan) and needs no final sort. That, not the instruction count,
// is what made the sorted array faster here (docs/analytics.md, Measured).
//
// The property reads (a slot of the sparse edge-property table, then the
// block it points to) are found through a cursor that keeps the last table
// leaf (a vertex's edges often have neighbouring ids), and each block starts
// loading a few entries ahead.
#include <algorithm>
#include <bit>
#include <span>
#include <string>

#include "base/prefetch.h"
#include "traversal/context.h"

namespace quiver {

using traversal::RankEntry;

namespace {

// How far ahead of the entry being ranked its edge's property block starts
// loading (a power of two, the size of the ring that keeps the blocks found
// early). Its table slot is not prefetched apart: a vertex's slots are
// mostly consecutive in one leaf, and a second cursor running 16 ahead cost
// ~17 instructions an entry for no measurable time.
constexpr std::size_t kBlockAhead = 8;
static_assert((kBlockAhead & (kBlockAhead - 1)) == 0);

// Up to this k the kept entries are a sorted array (O(k) moves per
// insertion, few mispredictions); above it a heap (O(log k)).
constexpr std::size_t kSortedMax = 32;

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
std::uint64_t ScoreWord(double sign, double score) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(sign * score + 0.0);
  return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}
RankEntry RankOf(std::uint64_t hi, double sign, double score, double low, std::uint64_t vertex,
                 std::uint64_t edge) {
  const auto biased = static_cast<std::uint64_t>(static_cast<std::int64_t>(sign * low) + 1024);
  return RankEntry{hi, (biased << 48) | (kMaxElementId - edge), vertex, score};
}
std::uint64_t EdgeOf(const RankEntry& r) { return kMaxElementId - (r.lo & kMaxElementId); }

// Orders entries best first: one comparison of the rank as a 128-bit number
// (GCC's and Clang's unsigned __int128: a compare and a subtract with borrow,
// no branch until the result is tested: its outcome is as random as the
// scores). The sorted array's insertions compare ~10 entries each: at the
// bench's query this ran ~2,900 instructions a call fewer than comparing
// the words one by one.
struct Better {
  bool operator()(const RankEntry& a, const RankEntry& b) const {
    __extension__ using Word = unsigned __int128;
    return ((Word{a.hi} << 64) | a.lo) > ((Word{b.hi} << 64) | b.lo);
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

// The best k entries offered so far, in `v` (the context's scratch).
class Kept {
 public:
  Kept(std::vector<RankEntry>& v, std::size_t k) : v_(v), k_(k), sorted_(k <= kSortedMax) { v_.clear(); }

  // True if an entry whose score word is `hi` cannot be kept: k are kept and
  // the worst of them has a larger score word.
  bool LosesOnScore(std::uint64_t hi) const { return v_.size() == k_ && hi < Worst().hi; }

  void Offer(const RankEntry& x) {
    if (sorted_) {
      InsertSorted(x);
    } else if (v_.size() < k_) {
      v_.push_back(x);
      std::push_heap(v_.begin(), v_.end(), Better());
    } else if (Better()(x, v_.front())) {
      ReplaceTop(v_, x);
    }
  }

  // Orders the kept entries best first.
  void Finish() {
    if (!sorted_) std::sort_heap(v_.begin(), v_.end(), Better());
  }

 private:
  const RankEntry& Worst() const { return sorted_ ? v_.back() : v_.front(); }

  // `x` goes in if there is room or it beats the last entry (which then
  // drops out); the entries it beats move one place down.
  void InsertSorted(const RankEntry& x) {
    const Better better;
    std::size_t i = v_.size();
    if (i < k_) {
      v_.push_back(x);
    } else if (better(x, v_.back())) {
      --i;
    } else {
      return;
    }
    for (; i > 0 && better(x, v_[i - 1]); --i) v_[i] = v_[i - 1];
    v_[i] = x;
  }

  std::vector<RankEntry>& v_;
  const std::size_t k_;
  const bool sorted_;
};

}  // namespace

static Status TopKNeighborsUnguarded(const Snapshot& snap, VertexId v, const TopKSpec& spec,
                                     TraversalContext& ctx, std::vector<Neighbor>* out,
                                     TraversalStats* stats) {
  out->clear();
  TraversalStats local;
  if (stats == nullptr) stats = &local;
  traversal::BudgetClock clock(spec.budget, stats);
  TraversalContext::Impl& m = TraversalContext::Impl::Enter(ctx);
  if (!snap.valid()) return InvalidArgumentError("TopKNeighbors on an invalid snapshot");
  if (spec.k == 0) return InvalidArgumentError("k is 0");
  QUIVER_RETURN_IF_ERROR(traversal::CheckBudget(spec.budget));
  traversal::GraphView view(snap);
  QUIVER_RETURN_IF_ERROR(traversal::CheckVertex(view, v, "source"));
  m.ResolveTypes(snap, spec.edge_types);
  std::optional<PropertyKeyId> key = snap.FindPropertyKey(spec.key);
  if (!key || !clock.Poll() || !clock.Vertex()) return clock.Finish();  // unknown key: nothing ranks

  Kept kept(m.ranked, spec.k);
  const double sign = spec.descending ? 1.0 : -1.0;
  const bool of_edge = spec.of == TopKSpec::Of::kEdge;
  const std::uint32_t key_id = key->value();
  traversal::PropertyCursor blocks_ahead(view);
  Status error;
  // Entry i's block is found and starts loading while entry i - kBlockAhead
  // is ranked: the property reads overlap instead of queueing. The ring
  // keeps the blocks found early, so each is looked up once.
  const storage::PropBlock* ring[kBlockAhead] = {};
  auto fetch = [&](const EdgeEntry& e) {
    const storage::PropBlock* b = blocks_ahead.Block(e.edge().value());
    if (b != nullptr) base::Prefetch(b);
    return b;
  };
  // In both directions a self-loop is in the in-list too: ranked once, on
  // the out side (an edge is one neighbour entry, however it is read).
  bool skip_self_loops = false;
  auto rank = [&](std::span<const EdgeEntry> entries) {
    const std::size_t n = entries.size();
    if (of_edge)
      for (std::size_t i = 0; i < n && i < kBlockAhead; ++i) ring[i] = fetch(entries[i]);
    for (std::size_t i = 0; i < n; ++i) {
      const EdgeEntry& e = entries[i];
      const storage::PropBlock* block = nullptr;
      if (of_edge) {
        block = ring[i & (kBlockAhead - 1)];
        if (i + kBlockAhead < n) ring[i & (kBlockAhead - 1)] = fetch(entries[i + kBlockAhead]);
      }
      if (skip_self_loops && e.neighbor() == v) continue;
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
      const std::uint64_t hi = ScoreWord(sign, score);
      if (kept.LosesOnScore(hi)) continue;
      kept.Offer(RankOf(hi, sign, score, low, e.neighbor().value(), e.edge().value()));
    }
    return true;
  };
  const storage::VertexSlot* slot = view.Vertex(v.value());
  for (const bool outgoing : {true, false}) {
    if (outgoing ? !traversal::ReadsOut(spec.direction) : !traversal::ReadsIn(spec.direction)) continue;
    const std::uintptr_t head = outgoing ? slot->out_head : slot->in_head;
    const std::uint32_t degree = outgoing ? slot->out_degree : slot->in_degree;
    skip_self_loops = !outgoing && traversal::ReadsOut(spec.direction);
    bool go_on = true;
    for (std::size_t g = 0; g < storage::GroupCount(head) && go_on; ++g) {
      const EdgeGroup group = storage::GroupAt(head, degree, g);
      if (m.types.Matches(group.type.value())) go_on = rank(group.entries);
    }
    if (!go_on) break;
  }
  if (!error.ok()) return error;
  kept.Finish();
  for (const RankEntry& h : m.ranked)
    out->push_back(Neighbor{VertexId(h.vertex), EdgeId(EdgeOf(h)), h.score});
  return clock.Finish();
}

Status TopKNeighbors(const Snapshot& snap, VertexId v, const TopKSpec& spec, TraversalContext& ctx,
                     std::vector<Neighbor>* out, TraversalStats* stats) {
  try {
    return TopKNeighborsUnguarded(snap, v, spec, ctx, out, stats);
  } catch (const std::bad_alloc&) {
    out->clear();
    return traversal::TraversalOutOfMemory();
  }
}

}  // namespace quiver
