// Weakly connected components by Afforest (Sutton, Ben-Nun and Barak,
// IPDPS 2018), in the shape of the GAP benchmark suite's kernel. A template
// over the graph and the parallel loop so that quiver::Wcc (on a Projection,
// over ParallelBlocks) and the capacity bench's raw CSR ceiling run the same
// code.
//
// The forest: comp[x] <= x always (invariant afforest.1), so a root is the
// smallest id of its tree. Link only ever writes a root, with a
// compare-and-swap from itself to a smaller id, and never compresses, so two
// workers contend only when they link the same root; Compress, which points a
// vertex at its root, runs in phases of its own, when no Link runs.
//
// The algorithm: link every vertex to its first kSampleRounds out-neighbours
// (compressing after each round), then take the root most frequent in a fixed
// sample of kSamples vertices as the giant component. Every vertex outside it
// links the rest of its edges; a vertex under the giant root skips its own,
// because each edge from it to a vertex outside is linked from the other end:
// from that vertex's in-edges in a directed graph, its out-edges in an
// undirected one. Without in adjacency no vertex can skip. The partition is
// the one linking every edge gives, and a final Compress points every vertex
// at its tree's smallest id: the labels do not depend on the order links ran
// in, nor on the thread count.
//
// Thread safety: runs on the loop's threads; the graph must not change.
#ifndef QUIVER_ANALYTICS_AFFOREST_H_
#define QUIVER_ANALYTICS_AFFOREST_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace quiver::analytics {

inline constexpr std::uint32_t kAfforestSampleRounds = 2;
inline constexpr std::uint32_t kAfforestSamples = 1024;

// Graph provides vertex_count(), OutNeighbors(v) and, when `in_edges` is
// true, InNeighbors(v) (spans of std::uint32_t). `undirected`: the out
// adjacency already holds every edge both ways (then the in-edges are not
// read). ForBlocks is callable as
//   bool for_blocks(std::string_view phase, std::uint64_t n,
//                   const std::function<void(std::uint64_t begin, std::uint64_t end)>& fn)
// running fn over a partition of [0, n) on any number of threads, false if
// it stopped early (cancelled). Fills *comp (resized to vertex_count()) with
// each vertex's smallest component member; false if cancelled. Throws
// std::bad_alloc only from resizing *comp.
template <class Graph, class ForBlocks>
bool Afforest(const Graph& g, bool in_edges, bool undirected, const ForBlocks& for_blocks,
              std::vector<std::uint32_t>* comp) {
  const std::uint32_t n = g.vertex_count();
  comp->resize(n);
  std::uint32_t* c = comp->data();
  auto load = [c](std::uint32_t x) {
    return std::atomic_ref<std::uint32_t>(c[x]).load(std::memory_order_relaxed);
  };
  // Joins the trees of a and b: the larger of two roots goes under the smaller.
  auto link = [&](std::uint32_t a, std::uint32_t b) {
    std::uint32_t p1 = load(a), p2 = load(b);
    while (p1 != p2) {
      const std::uint32_t high = std::max(p1, p2), low = std::min(p1, p2);
      std::uint32_t p_high = load(high);
      if (p_high == low) return;
      if (p_high == high && std::atomic_ref<std::uint32_t>(c[high]).compare_exchange_strong(
                                p_high, low, std::memory_order_relaxed))
        return;
      p1 = load(load(high));
      p2 = load(low);
    }
  };
  // Points every vertex of [b, e) at its root (no Link runs meanwhile).
  auto compress = [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t v = b; v < e; ++v) {
      std::atomic_ref<std::uint32_t> cv(c[v]);
      for (std::uint32_t p = cv.load(std::memory_order_relaxed), gp; p != (gp = load(p)); p = gp)
        cv.store(gp, std::memory_order_relaxed);
    }
  };
  if (!for_blocks("wcc init", n, [&](std::uint64_t b, std::uint64_t e) {
        for (std::uint64_t v = b; v < e; ++v) c[v] = static_cast<std::uint32_t>(v);
      }))
    return false;
  for (std::uint32_t r = 0; r < kAfforestSampleRounds; ++r) {
    const bool done = for_blocks("wcc sample", n,
                                 [&](std::uint64_t b, std::uint64_t e) {
                                   for (std::uint64_t v = b; v < e; ++v) {
                                     const auto nbrs = g.OutNeighbors(static_cast<std::uint32_t>(v));
                                     if (nbrs.size() > r) link(static_cast<std::uint32_t>(v), nbrs[r]);
                                   }
                                 }) &&
                      for_blocks("wcc compress", n, compress);
    if (!done) return false;
  }
  // The giant: the root most frequent among kSamples vertices drawn by a
  // fixed SplitMix64 sequence (the smallest such root on a tie).
  const bool can_skip = (in_edges || undirected) && n > 0;
  std::uint32_t giant = 0;
  if (can_skip) {
    std::uint32_t roots[kAfforestSamples];
    std::uint64_t state = 0;
    for (std::uint32_t& r : roots) {
      std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      r = c[(z ^ (z >> 31)) % n];
    }
    std::sort(std::begin(roots), std::end(roots));
    std::size_t best = 0;
    for (std::size_t i = 0, j; i < kAfforestSamples; i = j) {
      for (j = i; j < kAfforestSamples && roots[j] == roots[i];) ++j;
      if (j - i > best) best = j - i, giant = roots[i];
    }
  }
  const bool pull = in_edges && !undirected;
  return for_blocks("wcc link", n,
                    [&](std::uint64_t b, std::uint64_t e) {
                      for (std::uint64_t v = b; v < e; ++v) {
                        const auto u = static_cast<std::uint32_t>(v);
                        if (can_skip && load(u) == giant) continue;
                        const auto out = g.OutNeighbors(u);
                        for (std::size_t i = kAfforestSampleRounds; i < out.size(); ++i) link(u, out[i]);
                        if (pull)
                          for (std::uint32_t w : g.InNeighbors(u)) link(u, w);
                      }
                    }) &&
         for_blocks("wcc compress", n, compress);
}

}  // namespace quiver::analytics

#endif  // QUIVER_ANALYTICS_AFFOREST_H_
