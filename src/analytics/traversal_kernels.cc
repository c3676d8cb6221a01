// BFS, WCC and SSSP: the kernels that follow edges from vertex to vertex.
//
// BFS is level-synchronous and direction-optimising: it pushes from a small
// frontier and pulls into the unvisited vertices when the frontier is large.
//
// SSSP is delta-stepping (analytics/delta_stepping.h).
//
// WCC is Afforest over a lock-free union-find whose links always point from
// the larger dense id to the smaller, so a tree's root is its smallest
// member: the component label is canonical whatever order the unions ran in.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analytics/delta_stepping.h"
#include "analytics/parallel_loop.h"
#include "quiver/analytics.h"

namespace quiver {

using analytics::CancelRequested;
using analytics::kBlock;
using analytics::KernelCancelled;
using analytics::ParallelBlocks;
using analytics::Step;
using analytics::ThreadsFor;

namespace {

// Sssp's answer to running out of memory, built before main: making it must
// not allocate.
const Status& SsspOutOfMemory() {
  static const Status* const s =
      new Status(internal::ImmortalStatus(StatusCode::kResourceExhausted, "Sssp: out of memory"));
  return *s;
}
[[maybe_unused]] const bool sssp_out_of_memory_built = (SsspOutOfMemory(), true);

Status NotInProjection(const char* kernel, VertexId v) {
  return NotFoundError(std::string(kernel) + ": vertex " + std::to_string(v.value()) +
                       " is not in the projection (removed, or outside its labels)");
}

// Direction switches of the BFS (Beamer et al., SC'12; the GAP suite's
// defaults): go bottom-up once the frontier's out-edges exceed the edges
// not yet examined / kAlpha; come back once the frontier shrinks below
// V / kBeta and stops growing.
constexpr std::uint64_t kAlpha = 15;
constexpr std::uint64_t kBeta = 18;

// One bit per dense vertex. A block of ParallelBlocks (kBlock vertices) owns
// kBlock / 64 whole words, so a block writes its own bits without atomics.
static_assert(kBlock % 64 == 0);
struct Bitmap {
  std::vector<std::uint64_t> words;
  explicit Bitmap(std::uint32_t n) : words((std::uint64_t{n} + 63) / 64) {}
  bool Test(std::uint32_t v) const { return (words[v >> 6] >> (v & 63)) & 1; }
  void SetAtomic(std::uint32_t v) {
    std::atomic_ref<std::uint64_t>(words[v >> 6])
        .fetch_or(std::uint64_t{1} << (v & 63), std::memory_order_relaxed);
  }
};

}  // namespace

// Top-down steps push from the frontier list: workers claim unvisited out-
// neighbours with a compare-and-swap on their depth, and the next frontier is
// the blocks' discoveries in block order. Bottom-up steps pull: every
// unvisited vertex scans its in-neighbours for one in the frontier bitmap and
// stops at the first, writing only its own depth and bit. Either way a vertex
// gets the level it was first reached at, whoever claims it, so depths are
// identical on every thread count and in either direction.
Result<std::vector<std::int64_t>> Bfs(const Projection& p, VertexId source, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Bfs: the projection has no out adjacency");
  const std::optional<std::uint32_t> s = p.ToDense(source);
  if (!s) return NotInProjection("Bfs", source);
  const unsigned threads = ThreadsFor(run);
  const std::uint32_t n = p.vertex_count();
  std::vector<std::int64_t> depth(n, kUnreachableDepth);
  depth[*s] = 0;
  std::vector<std::uint32_t> frontier{*s};
  std::vector<std::vector<std::uint32_t>> found;
  std::vector<std::uint64_t> block_count;
  std::optional<Bitmap> front, next;
  std::uint64_t unexamined = p.edge_count();
  std::uint64_t scout = p.OutDegree(*s);  // out-edges of the frontier
  std::int64_t level = 0;
  // Concatenates the blocks' lists into `frontier`, in block order.
  auto gather = [&] {
    frontier.clear();
    for (const auto& f : found) frontier.insert(frontier.end(), f.begin(), f.end());
  };
  while (!frontier.empty()) {
    if (p.has_in() && scout > unexamined / kAlpha) {
      if (!front) front.emplace(n), next.emplace(n);
      std::fill(front->words.begin(), front->words.end(), 0);
      bool done = ParallelBlocks(run, threads, frontier.size(), "bfs to bitmap",
                                 [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                                   for (std::uint64_t i = b; i < e; ++i) front->SetAtomic(frontier[i]);
                                 });
      if (!done) return KernelCancelled("Bfs");
      std::uint64_t awake = frontier.size(), before = 0;
      block_count.assign((n + kBlock - 1) / kBlock, 0);
      do {
        if (!Step(run, "bfs level", static_cast<std::uint64_t>(level), 0)) return KernelCancelled("Bfs");
        before = awake;
        done =
            ParallelBlocks(run, threads, n, "bfs bottom-up",
                           [&](unsigned, std::uint64_t blk, std::uint64_t b, std::uint64_t e) {
                             std::uint64_t woke = 0;
                             std::fill(next->words.begin() + static_cast<std::ptrdiff_t>(b / 64),
                                       next->words.begin() + static_cast<std::ptrdiff_t>((e + 63) / 64), 0);
                             for (std::uint64_t v = b; v < e; ++v) {
                               if (depth[v] != kUnreachableDepth) continue;
                               for (std::uint32_t u : p.InNeighbors(static_cast<std::uint32_t>(v))) {
                                 if (front->Test(u)) {
                                   depth[v] = level + 1;
                                   next->words[v >> 6] |= std::uint64_t{1} << (v & 63);
                                   ++woke;
                                   break;
                                 }
                               }
                             }
                             block_count[blk] = woke;
                           });
        if (!done) return KernelCancelled("Bfs");
        awake = 0;
        for (std::uint64_t c : block_count) awake += c;
        std::swap(front, next);
        ++level;
      } while (awake > 0 && (awake >= before || awake > n / kBeta));
      found.assign(block_count.size(), {});
      done = ParallelBlocks(
          run, threads, n, "bfs to list", [&](unsigned, std::uint64_t blk, std::uint64_t b, std::uint64_t e) {
            for (std::uint64_t w = b / 64; w < (e + 63) / 64; ++w)
              for (std::uint64_t bits = front->words[w]; bits != 0; bits &= bits - 1)
                found[blk].push_back(static_cast<std::uint32_t>(w * 64 + std::countr_zero(bits)));
          });
      if (!done) return KernelCancelled("Bfs");
      gather();
      scout = 1;
      continue;
    }
    if (!Step(run, "bfs level", static_cast<std::uint64_t>(level), 0)) return KernelCancelled("Bfs");
    unexamined -= std::min(unexamined, scout);
    found.assign((frontier.size() + kBlock - 1) / kBlock, {});
    block_count.assign(found.size(), 0);
    const bool done =
        ParallelBlocks(run, threads, frontier.size(), "bfs frontier",
                       [&](unsigned, std::uint64_t blk, std::uint64_t b, std::uint64_t e) {
                         std::vector<std::uint32_t>& out = found[blk];
                         std::uint64_t edges = 0;
                         for (std::uint64_t i = b; i < e; ++i) {
                           for (std::uint32_t w : p.OutNeighbors(frontier[i])) {
                             std::atomic_ref<std::int64_t> d(depth[w]);
                             std::int64_t expected = kUnreachableDepth;
                             if (d.load(std::memory_order_relaxed) == kUnreachableDepth &&
                                 d.compare_exchange_strong(expected, level + 1, std::memory_order_relaxed)) {
                               out.push_back(w);
                               edges += p.OutDegree(w);
                             }
                           }
                         }
                         block_count[blk] = edges;
                       });
    if (!done) return KernelCancelled("Bfs");
    scout = 0;
    for (std::uint64_t c : block_count) scout += c;
    gather();
    ++level;
  }
  return depth;
}

namespace {

// Union-find over dense ids; parent[x] <= x always (invariant 1), so a root
// is the smallest id of its tree.
class UnionFind {
 public:
  explicit UnionFind(std::uint32_t n) : parent_(n) {
    for (std::uint32_t i = 0; i < n; ++i) parent_[i] = i;
  }
  std::uint32_t Find(std::uint32_t x) {
    while (true) {
      const std::uint32_t p = Ref(x).load(std::memory_order_acquire);
      if (p == x) return x;
      const std::uint32_t gp = Ref(p).load(std::memory_order_acquire);
      // Path halving: gp < p < x, so invariant 1 holds after the swap.
      if (gp != p) {
        std::uint32_t expected = p;
        Ref(x).compare_exchange_weak(expected, gp, std::memory_order_acq_rel);
      }
      x = p;
    }
  }
  void Union(std::uint32_t a, std::uint32_t b) {
    while (true) {
      a = Find(a);
      b = Find(b);
      if (a == b) return;
      if (a < b) std::swap(a, b);
      std::uint32_t expected = a;  // link the larger root under the smaller
      if (Ref(a).compare_exchange_strong(expected, b, std::memory_order_acq_rel)) return;
    }
  }
  // Points x straight at its root. Only while no Union runs: a root found
  // here stays a root until the store, so the store never undoes a link.
  void Compress(std::uint32_t x) { Ref(x).store(Find(x), std::memory_order_relaxed); }
  std::uint32_t Parent(std::uint32_t x) { return Ref(x).load(std::memory_order_relaxed); }

 private:
  std::atomic_ref<std::uint32_t> Ref(std::uint32_t x) { return std::atomic_ref<std::uint32_t>(parent_[x]); }
  std::vector<std::uint32_t> parent_;
};

// Afforest (Sutton, Ben-Nun, Barak, IPDPS'18): link each vertex to its first
// kSampleRounds out-neighbours, compress, and take the root most frequent in
// a fixed sample of vertices as the giant component. Every other vertex then
// links the rest of its edges; a vertex already under that root skips its
// own, because each edge from it to a vertex outside is linked from the other
// end (from that vertex's in-edges, or its out-edges when the projection is
// undirected). Without in adjacency no vertex can skip. The partition is the
// same as linking every edge, and a root is its tree's smallest id, so the
// labels are the same on every thread count.
constexpr std::uint32_t kSampleRounds = 2;
constexpr std::uint32_t kSamples = 1024;

// The root under which most of kSamples vertices (a fixed SplitMix64
// sequence) lie after compression; the smallest such root on a tie.
std::uint32_t FrequentRoot(UnionFind& uf, std::uint32_t n) {
  std::vector<std::uint32_t> roots(kSamples);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (std::uint32_t& r : roots) {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    r = uf.Parent(static_cast<std::uint32_t>((z ^ (z >> 31)) % n));
  }
  std::sort(roots.begin(), roots.end());
  std::uint32_t best = roots[0];
  std::size_t best_count = 0;
  for (std::size_t i = 0; i < roots.size();) {
    std::size_t j = i;
    while (j < roots.size() && roots[j] == roots[i]) ++j;
    if (j - i > best_count) best = roots[i], best_count = j - i;
    i = j;
  }
  return best;
}

}  // namespace

Result<std::vector<VertexId>> Wcc(const Projection& p, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Wcc: the projection has no out adjacency");
  const unsigned threads = ThreadsFor(run);
  const std::uint32_t n = p.vertex_count();
  UnionFind uf(n);
  bool done = true;
  for (std::uint32_t r = 0; r < kSampleRounds && done; ++r) {
    done = ParallelBlocks(run, threads, n, "wcc sample",
                          [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                            for (std::uint64_t v = b; v < e; ++v) {
                              const auto u = static_cast<std::uint32_t>(v);
                              const auto nbrs = p.OutNeighbors(u);
                              if (nbrs.size() > r) uf.Union(u, nbrs[r]);
                            }
                          }) &&
           ParallelBlocks(run, threads, n, "wcc compress",
                          [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                            for (std::uint64_t v = b; v < e; ++v) uf.Compress(static_cast<std::uint32_t>(v));
                          });
  }
  if (!done) return KernelCancelled("Wcc");
  const bool can_skip = p.has_in() && n > 0;
  const std::uint32_t giant = can_skip ? FrequentRoot(uf, n) : 0;
  const bool pull = p.has_in() && !p.undirected();
  done = ParallelBlocks(run, threads, n, "wcc union",
                        [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                          for (std::uint64_t v = b; v < e; ++v) {
                            const auto u = static_cast<std::uint32_t>(v);
                            if (can_skip && uf.Parent(u) == giant) continue;
                            const auto out = p.OutNeighbors(u);
                            for (std::size_t i = kSampleRounds; i < out.size(); ++i) uf.Union(u, out[i]);
                            if (pull)
                              for (std::uint32_t w : p.InNeighbors(u)) uf.Union(u, w);
                          }
                        });
  if (!done) return KernelCancelled("Wcc");
  std::vector<VertexId> component(n);
  done = ParallelBlocks(run, threads, n, "wcc label",
                        [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                          for (std::uint64_t v = b; v < e; ++v)
                            component[v] = p.ToVertexId(uf.Find(static_cast<std::uint32_t>(v)));
                        });
  if (!done) return KernelCancelled("Wcc");
  return component;
}

Result<std::vector<double>> Sssp(const Projection& p, VertexId source, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Sssp: the projection has no out adjacency");
  if (!p.weighted())
    return FailedPreconditionError("Sssp: the projection has no weights (ProjectionSpec::weight_property)");
  if (p.negative_weight_edge())
    return InvalidArgumentError("Sssp: edge " + std::to_string(p.negative_weight_edge()->value()) +
                                " has a negative weight");
  const std::optional<std::uint32_t> s = p.ToDense(source);
  if (!s) return NotInProjection("Sssp", source);
  std::vector<double> dist;
  const analytics::DeltaSteppingEnd end = analytics::DeltaStepping(
      p, *s, ThreadsFor(run), [&] { return CancelRequested(run); },
      [&](std::uint64_t rounds) { Step(run, "sssp rounds", rounds, 0); }, &dist);
  if (end == analytics::DeltaSteppingEnd::kCancelled) return KernelCancelled("Sssp");
  if (end == analytics::DeltaSteppingEnd::kOutOfMemory) return SsspOutOfMemory();
  return dist;
}

}  // namespace quiver
