// TraversalContext::Impl and what every traversal call shares: the
// generation-stamped per-vertex marks, the budget clock, name resolution and
// edge weights.
//
// Marks: each search side owns an array of 8-byte stamps indexed by vertex
// id, and a log of the Marks (depth, parent edge) of the vertices it marked,
// in marking order. A vertex is marked only when its stamp's generation
// equals the context's current one, so a new query "clears" every array by
// bumping one counter (the arrays are wiped for real only when the 32-bit
// counter wraps); the stamp also holds the index of the vertex's Mark in the
// log. A search tests a stamp for every edge it examines and marks most of
// the vertices it meets, so test and mark touch one 8-byte stamp (the random
// access, in an array half the size a 16-byte mark per id would need) and
// one log entry written in order. A bidirectional BFS puts both sides in
// one side's arrays (BeginPair). Arrays grow to the snapshot's
// vertex_id_limit on first use (the log's capacity too) and are then reused:
// after warm-up a query allocates nothing.
//
// Thread safety: a context is used by one thread at a time.
#ifndef QUIVER_TRAVERSAL_CONTEXT_H_
#define QUIVER_TRAVERSAL_CONTEXT_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "quiver/status.h"
#include "quiver/traversal.h"
#include "traversal/graph_view.h"

namespace quiver::traversal {

inline constexpr std::uint32_t kRejected = 0xFFFFFFFFu;  // Mark::depth of a vertex a filter refused
inline constexpr std::uint32_t kSettled = 1;             // Mark::flags: Dijkstra has settled it

struct Mark {
  std::uint32_t depth;  // BFS depth, kRejected, or Dijkstra flags
  std::uint64_t parent_edge;
};
static_assert(sizeof(Mark) == 16);

struct Stamp {
  std::uint32_t generation;  // current: the vertex is marked in this query
  std::uint32_t mark;        // then its Mark's index in Side::log
};
static_assert(sizeof(Stamp) == 8);

// One search side: stamps, the marks of this query, and distances for
// Dijkstra (valid where marked).
struct Side {
  std::vector<Stamp> stamps;
  std::vector<Mark> log;     // sized to the id limit; [0, marked) hold this query's marks
  std::uint32_t marked = 0;  // marks made in this query
  std::vector<double> dist;
};

struct QueueEntry {  // a non-deduplicating Expand's frontier entry
  std::uint64_t vertex;
  std::uint64_t parent;
  std::uint64_t parent_edge;
  std::uint32_t depth;
};

struct HeapEntry {  // Dijkstra
  double key;
  std::uint64_t vertex;
  std::uint64_t edge;
};

// Top-K: an entry's rank as one 128-bit number, larger is better (top_k.cc,
// RankOf), and what it reports.
// The score word of rank k (1-based, largest first) among h[0, n), for
// 1 <= k <= n; h[0, n) and tmp[0, 2n) are scratch (h's words are lost). Top-K's
// selection (top_k.cc).
std::uint64_t KthBestWord(std::uint64_t* h, std::size_t n, std::size_t k, std::uint64_t* tmp);

struct RankEntry {
  std::uint64_t hi;  // the signed score rounded to double, in an order-preserving encoding
  std::uint64_t lo;  // the rounding remainder (12 bits), then the edge id inverted (48 bits)
  std::uint64_t vertex;
  double score;  // as reported
};

// Counts work against a Budget and remembers why it stopped. The counts live
// in the clock (a search's hot loop updates them per edge, and a count behind
// a pointer would be reloaded after every store the loop makes) and reach the
// caller's TraversalStats when the clock reports (Finish) or goes away.
class BudgetClock {
 public:
  BudgetClock(const Budget& b, TraversalStats* stats)
      : b_(b),
        stats_(stats),
        max_vertices_(b.max_vertices),
        max_edges_(b.max_edges),
        polls_(b.cancel != nullptr || b.deadline != std::chrono::steady_clock::time_point::max()) {
    Flush();
  }
  ~BudgetClock() { Flush(); }
  BudgetClock(const BudgetClock&) = delete;
  BudgetClock& operator=(const BudgetClock&) = delete;

  // Call before marking a vertex visited; false: stop.
  bool Vertex() {
    if (vertices_ >= max_vertices_) return Stop(StopReason::kMaxVertices);
    ++vertices_;
    return true;
  }
  // Call before examining an adjacency entry; false: stop.
  bool Edge() {
    if (edges_ >= max_edges_) return Stop(StopReason::kMaxEdges);
    if ((++edges_ & 255) == 0) return Poll();
    return true;
  }
  // Counts `n` adjacency entries at once, if none of them would stop the
  // walk or fall on a poll (no deadline or token is set and the edge budget
  // holds all n): then the caller examines them without Edge(), and gives
  // back with Unexamined any it did not examine. False: nothing counted;
  // call Edge() per entry.
  bool Edges(std::uint64_t n) {
    if (polls_ || n > max_edges_ - std::min(edges_, max_edges_)) return false;
    edges_ += n;
    return true;
  }
  void Unexamined(std::uint64_t n) { edges_ -= n; }
  // Checks the deadline and the cancellation token; false: stop.
  bool Poll() {
    if (b_.cancel != nullptr && b_.cancel->cancelled()) return Stop(StopReason::kCancelled);
    if (b_.deadline != std::chrono::steady_clock::time_point::max() &&
        std::chrono::steady_clock::now() >= b_.deadline)
      return Stop(StopReason::kDeadline);
    return true;
  }
  // Call per vertex expanded: polls when there is a deadline or a token, as
  // Budget promises (a steady_clock read per vertex only for callers that
  // set a deadline); free otherwise.
  bool Tick() { return !polls_ || Poll(); }
  bool Stop(StopReason r) {
    stopped_by_ = r;
    return false;
  }
  bool stopped() const { return stopped_by_ != StopReason::kCompleted; }
  // OK when completed or stopped by a callback, else ResourceExhausted naming
  // the budget. Fills the caller's stats.
  Status Finish() const;

 private:
  void Flush() const {
    stats_->stopped_by = stopped_by_;
    stats_->vertices_visited = vertices_;
    stats_->edges_examined = edges_;
  }

  const Budget& b_;
  TraversalStats* stats_;
  const std::uint64_t max_vertices_;
  const std::uint64_t max_edges_;
  const bool polls_;  // a deadline or a cancellation token is set
  std::uint64_t vertices_ = 0;
  std::uint64_t edges_ = 0;
  StopReason stopped_by_ = StopReason::kCompleted;
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
  std::vector<traversal::RankEntry> ranked;
  std::vector<std::uint64_t> rank_words;  // top-K's selection scratch
  std::vector<std::uint64_t> banned_edges;
  std::vector<std::uint64_t> scratch_path;
  std::vector<Path> candidates;

  // What the last Expand left for PathTo: the contents it read, named by
  // the graph's chain and the version's sequence number (a version's
  // address is no name: a later version can be allocated where a released
  // one was), and the marks' generation. Chain 0: none.
  std::uint64_t expand_chain = 0;
  SequenceNumber expand_sequence = 0;
  std::uint32_t expand_generation = 0;

  // Every public call starts here: it ends what PathTo may read.
  static Impl& Enter(TraversalContext& ctx) {
    Impl& m = ctx.impl();
    m.expand_chain = 0;
    return m;
  }

  // Starts a query over vertex ids below `limit` on `sides` sides: bumps the
  // generation and grows the mark arrays (and distances if `dist`).
  void Begin(std::uint64_t limit, int sides, bool dist);
  // Starts a bidirectional BFS over vertex ids below `limit`: both sides
  // mark in side 0's arrays, side s with generation `generation - 1 + s`
  // (PairMarks in shortest_path.cc), so this consumes two generations. A
  // vertex is marked by one side at most (the sides stop where they meet),
  // so one stamp says which side marked it: the search tests one stamp per
  // edge, not one per side.
  void BeginPair(std::uint64_t limit);
  // Starts a new set of banned vertices.
  void BeginBanned(std::uint64_t limit);
  bool Banned(std::uint64_t v) const { return banned[v] == banned_generation; }
  void Ban(std::uint64_t v) { banned[v] = banned_generation; }
  void Unban(std::uint64_t v) { banned[v] = 0; }

  // The mark of `v`, which must be Marked on `side`.
  traversal::Mark& mark(int side, std::uint64_t v) { return sides[side].log[sides[side].stamps[v].mark]; }
  const traversal::Mark& mark(int side, std::uint64_t v) const {
    return sides[side].log[sides[side].stamps[v].mark];
  }
  bool Marked(int side, std::uint64_t v) const { return sides[side].stamps[v].generation == generation; }
  // Marks `v` (not Marked yet) on `side` in this query's generation. The
  // log covers every id (Begin), so this never allocates.
  void SetMark(int side, std::uint64_t v, std::uint32_t depth, std::uint64_t parent_edge) {
    traversal::Side& s = sides[side];
    s.stamps[v] = traversal::Stamp{generation, s.marked};
    s.log[s.marked++] = traversal::Mark{depth, parent_edge};
  }
  // Marked(side, v) for any id, also one the arrays do not cover yet.
  bool MarkedAny(int side, std::uint64_t v) const {
    return v < sides[side].stamps.size() && sides[side].stamps[v].generation == generation;
  }

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

// Runs `call` (a public entry's body), answering ResourceExhausted where it
// runs out of memory (its scratch arrays, heaps and outputs grow with the
// graph): the API never throws. The status is made before main, so the
// answer itself allocates nothing. The caller clears its outputs.
const Status& TraversalOutOfMemory();
template <typename Fn>
Status GuardAllocation(Fn&& call) {
  try {
    return call();
  } catch (const std::bad_alloc&) {
    return TraversalOutOfMemory();
  }
}
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
