// TopKNeighbors: the k best adjacency entries of one vertex by a numeric
// property, without sorting the adjacency.
//
// The entries are gathered with their rank (Kept) and cut to the best k by
// a selection whose partitions do not branch on the scores, then the k are
// sorted. An entry that loses to the k-th best of an earlier selection costs
// one comparison, on its score word alone when the scores differ.
//
// The property reads (a slot of the sparse edge-property table, then the
// block it points to) are found through a cursor that keeps the last table
// leaf (a vertex's edges often have neighbouring ids), and each block starts
// loading a few entries ahead.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>

#include "base/prefetch.h"
#include "base/small_sort.h"
#include "traversal/context.h"

namespace quiver {

namespace traversal {

// A quickselect whose partitions are branch-free (each word is written to
// both sides and one count advances), so a partition costs no mispredictions
// whatever the words. A range that fails to shrink by a quarter five times
// (an adversarial order) is finished by std::nth_element; 32 words or fewer
// are sorted by a network.
std::uint64_t KthBestWord(std::uint64_t* h, std::size_t n, std::size_t k, std::uint64_t* tmp) {
  std::size_t want = k - 1;  // the place, counted from the best
  int slow_rounds = 0;
  while (n > base::kSortNetworkMaxKeys) {
    if (slow_rounds > 4) {
      std::nth_element(h, h + want, h + n, std::greater<>());
      return h[want];
    }
    const std::uint64_t x = h[0], y = h[n / 2], z = h[n - 1];
    const std::uint64_t p = std::max(std::min(x, y), std::min(std::max(x, y), z));
    std::uint64_t* worse = tmp + n;
    std::size_t nb = 0, nw = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t w = h[i];
      tmp[nb] = w;
      worse[nw] = w;
      nb += w > p;
      nw += w < p;
    }
    const std::size_t before = n;
    if (want < nb) {
      std::copy(tmp, tmp + nb, h);
      n = nb;
    } else if (want < n - nw) {
      return p;  // one of the words equal to the pivot
    } else {
      std::copy(worse, worse + nw, h);
      want -= before - nw;
      n = nw;
    }
    slow_rounds += n > before / 4 * 3;
  }
  base::SortU64(h, n);  // ascending: the best is last
  return h[n - 1 - want];
}

}  // namespace traversal

using traversal::RankEntry;

namespace {

// How far ahead of the entry being ranked its edge's property block starts
// loading (a power of two, the size of the ring that keeps the blocks found
// early). Its table slot is not prefetched apart: a vertex's slots are
// mostly consecutive in one leaf, and a second cursor running 16 ahead cost
// ~17 instructions an entry for no measurable time.
constexpr std::size_t kBlockAhead = 8;
static_assert((kBlockAhead & (kBlockAhead - 1)) == 0);

// Entries offered past the k kept ones before a selection cuts them back
// to k: at least kMinPending, and at least k, so a selection (O(k +
// pending)) is paid for by as many new entries (review: with 256 only, k =
// 200,000 made every 256 entries cost a selection of 200,000). A vertex of
// degree up to k + max(k, kMinPending) is ranked by one selection.
constexpr std::size_t kMinPending = 256;

// Up to this many kept entries the final sort is a network on score words
// that carry the entry's place in their low bits (kPlaceMask), then an
// insertion sort on whole ranks; above it std::sort.
constexpr std::size_t kNetworkSortMax = base::kSortNetworkMaxKeys;
constexpr std::uint64_t kPlaceMask = std::bit_ceil(kNetworkSortMax) - 1;
static_assert(kNetworkSortMax <= kPlaceMask + 1);

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
// scores). The final insertion sort and the ties' selection compare whole
// ranks; when an incremental sorted array made ~10 comparisons per kept
// entry, this ran ~2,900 instructions a call fewer than comparing the words
// one by one.
struct Better {
  bool operator()(const RankEntry& a, const RankEntry& b) const {
    __extension__ using Word = unsigned __int128;
    return ((Word{a.hi} << 64) | a.lo) > ((Word{b.hi} << 64) | b.lo);
  }
};

Status NotNumeric(const char* what, std::uint64_t id, ValueType t) {
  return InvalidArgumentError(std::string(what) + " " + std::to_string(id) + ": ranking property is a " +
                              std::string(ValueTypeName(t)) + ", not a number");
}

// The best k entries offered so far, in `v` (the context's scratch), and
// the score words they are cut by in `words`. Entries are appended as they
// come; once k + max(k, kMinPending) are held, a selection keeps the best k and raises
// the bar an entry's score word must reach to be offered at all. Finish
// selects once more and sorts the k best first.
//
// An earlier version kept the k best sorted at every offer (a heap above
// k = 32): with random scores about half the entries of a degree-100 vertex
// entered at k = 20, and each insertion ended at a place as unpredictable as
// the scores, so ranking cost two mispredicted branches an entry. Selecting
// once with branch-free partitions leaves one unpredictable branch per kept
// entry, in the final sort of k (docs/analytics.md, Measured).
class Kept {
 public:
  // `v` is storage only: it keeps its size between calls (growing it
  // value-initialises the new entries), and the entries held are the first
  // size() of it.
  Kept(std::vector<RankEntry>& v, std::vector<std::uint64_t>& words, std::size_t k)
      : v_(v), words_(words), k_(k), limit_(k > SIZE_MAX / 4 ? SIZE_MAX : k + std::max(k, kMinPending)) {
    Reset(0);
    if (end_ == check_) Grow();
  }

  // True if an entry whose score word is `hi` cannot be kept: k are held
  // after a selection and the worst of them has a larger score word.
  bool LosesOnScore(std::uint64_t hi) const { return hi < bar_; }

  // Inlined into each of RankAll's four loops (GCC stops inlining it at
  // four, and a call cost ~30 instructions an entry). There is always room
  // for one more entry; one test finds both a full buffer and a held count
  // that calls for a selection. The positions are pointers, which stores of
  // the entries' words cannot alias, so they can stay in registers.
  [[gnu::always_inline]] void Offer(const RankEntry& x) {
    *end_++ = x;
    if (end_ == check_) MakeRoom();
  }

  // The entries held: after Finish, the best k (or all, if fewer), best first.
  std::span<const RankEntry> best() const { return {data_, size()}; }

  void Finish() {
    Select();
    const std::size_t n = size();
    if (n > kNetworkSortMax) {
      std::sort(data_, data_ + n, Better());
      return;
    }
    // A network sorts the score words with their low bits replaced by the
    // entry's place (no branch on the scores), the entries are gathered in
    // that order, and an insertion sort on whole ranks finishes: it moves
    // only entries whose words differ in the replaced bits or tie, so its
    // branches are predicted (sorting by insertion alone cost one
    // mispredicted branch per entry, ~20 for k = 20).
    if (words_.size() < n) words_.resize(n);
    std::uint64_t* keys = words_.data();
    // Places are tagged in reverse, so that equal words come out in the
    // order held (ties arrive best first, by edge id, in adjacency order;
    // review: tagged forward, a tie of all 32 took 496 moves to undo).
    for (std::size_t i = 0; i < n; ++i) keys[i] = (data_[i].hi & ~kPlaceMask) | (kPlaceMask - i);
    base::SortU64(keys, n);  // ascending: the best is last
    RankEntry sorted[kNetworkSortMax];
    for (std::size_t i = 0; i < n; ++i) sorted[i] = data_[kPlaceMask - (keys[n - 1 - i] & kPlaceMask)];
    const Better better;
    for (std::size_t i = 0; i < n; ++i) {
      const RankEntry x = sorted[i];
      std::size_t j = i;
      for (; j > 0 && better(x, data_[j - 1]); --j) data_[j] = data_[j - 1];
      data_[j] = x;
    }
  }

 private:
  std::size_t size() const { return static_cast<std::size_t>(end_ - data_); }

  // Points at `v_` holding `n` entries, and sets where Offer must stop: the
  // end of `v_` or the count that calls for a selection, whichever is first.
  void Reset(std::size_t n) {
    data_ = v_.data();
    end_ = data_ + n;
    check_ = limit_ >= v_.size() ? data_ + v_.size() : data_ + limit_;
  }
  void Grow() {
    const std::size_t n = size();
    v_.resize(std::max<std::size_t>(64, 2 * v_.size()));
    Reset(n);
  }
  [[gnu::noinline]] void MakeRoom() {
    if (size() >= limit_) Select();
    if (end_ == check_) Grow();
  }

  // Cuts the entries held to the best k (in no order) and sets the bar.
  void Select() {
    const std::size_t n = size();
    if (n <= k_) return;
    if (words_.size() < 3 * n) words_.resize(3 * n);
    std::uint64_t* h = words_.data();
    for (std::size_t i = 0; i < n; ++i) h[i] = data_[i].hi;
    const std::uint64_t t = traversal::KthBestWord(h, n, k_, h + n);
    // Every entry above the bar's word is kept; those on it compete on the
    // rest of their rank (the exact remainder, then the edge id). The
    // places of the kept are listed without a branch, then the kept are
    // moved down (place i >= its new place, in order: nothing is
    // overwritten before it is read).
    std::uint64_t* places = h;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      places[kept] = i;
      kept += data_[i].hi >= t;
    }
    for (std::size_t i = 0; i < kept; ++i) data_[i] = data_[places[i]];
    if (kept > k_) {
      RankEntry* const tied =
          std::partition(data_, data_ + kept, [t](const RankEntry& x) { return x.hi > t; });
      std::nth_element(tied, data_ + k_, data_ + kept, Better());
    }
    Reset(k_);
    bar_ = t;
  }

  std::vector<RankEntry>& v_;
  std::vector<std::uint64_t>& words_;
  const std::size_t k_;
  const std::size_t limit_;
  RankEntry* data_;
  RankEntry* end_;         // past the last entry held
  RankEntry* check_;       // Offer calls MakeRoom when end_ reaches it
  std::uint64_t bar_ = 0;  // no entry loses before the first selection
};

// Gives back to `clock`, when it goes, the entries of a group of `n`
// counted whole (BudgetClock::Edges) that were not examined: `at` is the
// entry being examined when the loop ended, n when it ran to the end.
class GiveBackUnexamined {
 public:
  GiveBackUnexamined(traversal::BudgetClock& clock, const std::size_t& at, std::size_t n)
      : clock_(clock), at_(at), n_(n) {}
  ~GiveBackUnexamined() { clock_.Unexamined(n_ - std::min(at_ + 1, n_)); }
  GiveBackUnexamined(const GiveBackUnexamined&) = delete;
  GiveBackUnexamined& operator=(const GiveBackUnexamined&) = delete;

 private:
  traversal::BudgetClock& clock_;
  const std::size_t& at_;
  const std::size_t n_;
};
// The metered loop's stand-in: each entry was counted as it came.
struct NoGiveBack {
  NoGiveBack(traversal::BudgetClock&, const std::size_t&, std::size_t) {}
};

// Ranks every entry of `v` that `spec` selects into `kept`, then orders it;
// on a non-numeric score sets `error` instead.
void RankAll(const traversal::GraphView& view, const TopKSpec& spec, VertexId v, std::uint32_t key_id,
             TraversalContext::Impl& m, traversal::BudgetClock& clock, Kept& kept, Status& error) {
  const double sign = spec.descending ? 1.0 : -1.0;
  const bool of_edge = spec.of == TopKSpec::Of::kEdge;
  traversal::PropertyCursor blocks_ahead(view);
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
  // kOfEdge: the scores are the edges' (else the neighbours'); kMetered:
  // each entry is counted against the budget as it comes (else the group
  // was counted whole, BudgetClock::Edges). Both are template arguments, so
  // the loop of the common case, edge scores under a budget the group fits
  // in, tests neither per entry.
  auto rank = [&](auto of_edge_tag, auto metered_tag, std::span<const EdgeEntry> entries) {
    constexpr bool kOfEdge = decltype(of_edge_tag)::value;
    constexpr bool kMetered = decltype(metered_tag)::value;
    const std::size_t n = entries.size();
    if constexpr (kOfEdge)
      for (std::size_t i = 0; i < n && i < kBlockAhead; ++i) ring[i] = fetch(entries[i]);
    std::size_t i = 0;
    // A group counted whole gives back what it did not examine, however the
    // loop ends: at a score that is not a number, or by std::bad_alloc from
    // the kept entries (review: the stats then counted the whole group).
    std::conditional_t<kMetered, NoGiveBack, GiveBackUnexamined> give_back(clock, i, n);
    for (; i < n; ++i) {
      const EdgeEntry& e = entries[i];
      const storage::PropBlock* block;
      if constexpr (kOfEdge) {
        block = ring[i & (kBlockAhead - 1)];
        if (i + kBlockAhead < n) ring[i & (kBlockAhead - 1)] = fetch(entries[i + kBlockAhead]);
      }
      if constexpr (kMetered) {
        if (skip_self_loops && e.neighbor() == v) continue;
        if (!clock.Edge()) return false;
      }
      if constexpr (!kOfEdge) block = view.Vertex(e.neighbor().value())->props;
      double score, low;
      ValueType type;
      const storage::NumberLookup found = storage::GetNumber(block, key_id, &score, &type, &low);
      if (found == storage::NumberLookup::kAbsent) continue;  // missing or null: skipped
      if (found == storage::NumberLookup::kOther) {
        error =
            NotNumeric(kOfEdge ? "edge" : "vertex", kOfEdge ? e.edge().value() : e.neighbor().value(), type);
        return false;
      }
      const std::uint64_t hi = ScoreWord(sign, score);
      if (kept.LosesOnScore(hi)) continue;
      kept.Offer(RankOf(hi, sign, score, low, e.neighbor().value(), e.edge().value()));
    }
    return true;
  };
  auto rank_group = [&](std::span<const EdgeEntry> entries) {
    using Yes = std::true_type;
    using No = std::false_type;
    // A group with self-loops to skip is metered: a skipped entry is not counted.
    const bool whole = !skip_self_loops && clock.Edges(entries.size());
    if (of_edge) return whole ? rank(Yes(), No(), entries) : rank(Yes(), Yes(), entries);
    return whole ? rank(No(), No(), entries) : rank(No(), Yes(), entries);
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
      if (m.types.Matches(group.type.value())) go_on = rank_group(group.entries);
    }
    if (!go_on) break;
  }
  if (error.ok()) kept.Finish();
}

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

  const std::uint32_t key_id = key->value();
  Status error;
  Kept kept(m.ranked, m.rank_words, spec.k);
  RankAll(view, spec, v, key_id, m, clock, kept, error);
  if (!error.ok()) return error;
  for (const RankEntry& h : kept.best())
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
