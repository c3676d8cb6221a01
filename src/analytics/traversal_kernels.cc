// BFS, WCC and SSSP: the kernels that follow edges from vertex to vertex.
//
// BFS is level-synchronous and direction-optimising: it pushes from a small
// frontier and pulls into the unvisited vertices when the frontier is large.
//
// SSSP is delta-stepping (analytics/delta_stepping.h).
//
// WCC is Afforest (analytics/afforest.h): its links always point from the
// larger dense id to the smaller, so a tree's root is its smallest member and
// the component label is canonical whatever order the links ran in.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analytics/afforest.h"
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

Result<std::vector<VertexId>> Wcc(const Projection& p, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Wcc: the projection has no out adjacency");
  const unsigned threads = ThreadsFor(run);
  std::vector<std::uint32_t> comp;
  auto for_blocks = [&](std::string_view phase, std::uint64_t n,
                        const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
    return ParallelBlocks(run, threads, n, phase,
                          [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) { fn(b, e); });
  };
  if (!analytics::Afforest(p, p.has_in(), p.undirected(), for_blocks, &comp)) return KernelCancelled("Wcc");
  std::vector<VertexId> component(comp.size());
  const bool done = ParallelBlocks(run, threads, comp.size(), "wcc label",
                                   [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                                     for (std::uint64_t v = b; v < e; ++v)
                                       component[v] = p.ToVertexId(comp[v]);
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
