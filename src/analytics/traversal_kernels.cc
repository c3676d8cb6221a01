// BFS, WCC and SSSP: the kernels that follow edges from vertex to vertex.
//
// BFS is level-synchronous: the frontier is cut into blocks, workers claim
// unvisited neighbours with a compare-and-swap on their depth, and the next
// frontier is the blocks' discoveries concatenated in block order. Depths do
// not depend on which worker claims a vertex first (every claimant writes the
// same level), so the output is identical on every thread count.
//
// WCC is a lock-free union-find whose links always point from the larger
// dense id to the smaller, so a tree's root is its smallest member: the
// component label is canonical whatever order the unions ran in.
#include <atomic>
#include <cmath>
#include <limits>
#include <queue>
#include <string>
#include <vector>

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

Status NotInProjection(const char* kernel, VertexId v) {
  return NotFoundError(std::string(kernel) + ": vertex " + std::to_string(v.value()) +
                       " is not in the projection (removed, or outside its labels)");
}

}  // namespace

Result<std::vector<std::int64_t>> Bfs(const Projection& p, VertexId source, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Bfs: the projection has no out adjacency");
  const std::optional<std::uint32_t> s = p.ToDense(source);
  if (!s) return NotInProjection("Bfs", source);
  const unsigned threads = ThreadsFor(run);
  std::vector<std::int64_t> depth(p.vertex_count(), kUnreachableDepth);
  depth[*s] = 0;
  std::vector<std::uint32_t> frontier{*s};
  std::vector<std::vector<std::uint32_t>> found;
  for (std::int64_t level = 0; !frontier.empty(); ++level) {
    if (!Step(run, "bfs level", static_cast<std::uint64_t>(level), 0)) return KernelCancelled("Bfs");
    found.assign((frontier.size() + kBlock - 1) / kBlock, {});
    const bool done =
        ParallelBlocks(run, threads, frontier.size(), "bfs frontier",
                       [&](unsigned, std::uint64_t b, std::uint64_t begin, std::uint64_t end) {
                         std::vector<std::uint32_t>& out = found[b];
                         for (std::uint64_t i = begin; i < end; ++i) {
                           for (std::uint32_t w : p.OutNeighbors(frontier[i])) {
                             std::atomic_ref<std::int64_t> d(depth[w]);
                             std::int64_t expected = kUnreachableDepth;
                             if (d.load(std::memory_order_relaxed) == kUnreachableDepth &&
                                 d.compare_exchange_strong(expected, level + 1, std::memory_order_relaxed))
                               out.push_back(w);
                           }
                         }
                       });
    if (!done) return KernelCancelled("Bfs");
    frontier.clear();
    for (const auto& f : found) frontier.insert(frontier.end(), f.begin(), f.end());
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

 private:
  std::atomic_ref<std::uint32_t> Ref(std::uint32_t x) { return std::atomic_ref<std::uint32_t>(parent_[x]); }
  std::vector<std::uint32_t> parent_;
};

}  // namespace

Result<std::vector<VertexId>> Wcc(const Projection& p, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Wcc: the projection has no out adjacency");
  const unsigned threads = ThreadsFor(run);
  const std::uint32_t n = p.vertex_count();
  UnionFind uf(n);
  bool done = ParallelBlocks(run, threads, n, "wcc union",
                             [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                               for (std::uint64_t v = b; v < e; ++v) {
                                 const auto u = static_cast<std::uint32_t>(v);
                                 for (std::uint32_t w : p.OutNeighbors(u)) uf.Union(u, w);
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
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> dist(p.vertex_count(), kInf);
  using Item = std::pair<double, std::uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  dist[*s] = 0;
  heap.push({0.0, *s});
  std::uint64_t settled = 0;
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d > dist[v]) continue;  // a stale entry
    if (++settled % kBlock == 0 && !Step(run, "sssp settled", settled, p.vertex_count()))
      return KernelCancelled("Sssp");
    const auto nbrs = p.OutNeighbors(v);
    const auto weights = p.OutWeights(v);
    for (std::size_t i = 0; i < nbrs.size(); ++i) {
      const double nd = d + weights[i];
      if (nd < dist[nbrs[i]]) {
        dist[nbrs[i]] = nd;
        heap.push({nd, nbrs[i]});
      }
    }
  }
  if (CancelRequested(run)) return KernelCancelled("Sssp");
  return dist;
}

}  // namespace quiver
