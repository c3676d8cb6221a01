// Level-synchronous, direction-optimising breadth-first search (Beamer,
// Asanovic and Patterson, SC 2012), in the shape of the GAP benchmark
// suite's kernel. A template over the graph and the parallel loop so that
// quiver::Bfs (on a Projection, over ParallelBlocks) and the capacity bench's
// raw CSR ceiling run the same code.
//
// Top-down steps push from the frontier list: workers claim unvisited out-
// neighbours with a compare-and-swap on their depth, and the next frontier is
// the blocks' discoveries in block order. Bottom-up steps pull: every
// unvisited vertex scans its in-neighbours for one in the frontier bitmap and
// stops at the first, writing only its own depth and bit. Either way a vertex
// gets the level it was first reached at, whoever claims it, so depths are
// identical on every thread count and in either direction.
//
// The switches (the GAP suite's constants): bottom-up once the frontier's
// out-edges exceed the edges not yet examined / kBfsAlpha; back to top-down
// once the frontier stops growing and is under V / kBfsBeta.
//
// Thread safety: runs on the loop's threads; the graph must not change.
#ifndef QUIVER_ANALYTICS_BFS_H_
#define QUIVER_ANALYTICS_BFS_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>
#include <vector>

namespace quiver::analytics {

inline constexpr std::uint64_t kBfsAlpha = 15;
inline constexpr std::uint64_t kBfsBeta = 18;
// The parallel loop's block: a block of vertices owns kBfsBlock / 64 whole
// words of a bitmap, so it writes its own bits without atomics.
inline constexpr std::uint64_t kBfsBlock = 4096;
inline constexpr std::int64_t kBfsUnreached = std::numeric_limits<std::int64_t>::max();

// Graph provides vertex_count(), edge_count() (out entries), OutNeighbors(v)
// and, when `in_edges` is true, InNeighbors(v) (spans of std::uint32_t).
// ForBlocks is callable as
//   bool for_blocks(std::string_view phase, std::uint64_t n,
//                   const std::function<void(std::uint64_t block, std::uint64_t begin,
//                                            std::uint64_t end)>& fn)
// running fn over the blocks [k * kBfsBlock, ...) of [0, n) on any number of
// threads, false if it stopped early (cancelled). `level(l)` is called before
// each level; false stops. Fills *depth (vertex_count() entries,
// kBfsUnreached where unreachable) from `source` (< vertex_count()); false if
// stopped. Throws std::bad_alloc when out of memory.
template <class Graph, class ForBlocks>
bool DirectionOptimizingBfs(const Graph& g, std::uint32_t source, bool in_edges, const ForBlocks& for_blocks,
                            const std::function<bool(std::int64_t)>& level_start,
                            std::vector<std::int64_t>* depth_out) {
  const std::uint64_t n = g.vertex_count();
  std::vector<std::int64_t>& depth = *depth_out;
  depth.assign(n, kBfsUnreached);
  depth[source] = 0;
  std::vector<std::uint32_t> frontier{source};
  std::vector<std::vector<std::uint32_t>> found;
  std::vector<std::uint64_t> count;
  std::vector<std::uint64_t> front, next;  // bitmaps, made at the first bottom-up step
  const std::uint64_t blocks = (n + kBfsBlock - 1) / kBfsBlock;
  std::uint64_t unexamined = g.edge_count();
  std::uint64_t scout = g.OutNeighbors(source).size();  // out-edges of the frontier
  std::int64_t level = 0;
  auto gather = [&] {
    frontier.clear();
    for (const auto& f : found) frontier.insert(frontier.end(), f.begin(), f.end());
  };
  while (!frontier.empty()) {
    if (in_edges && scout > unexamined / kBfsAlpha) {
      front.assign((n + 63) / 64, 0);
      next.resize(front.size());
      if (!for_blocks("bfs to bitmap", frontier.size(), [&](std::uint64_t, std::uint64_t b, std::uint64_t e) {
            for (std::uint64_t i = b; i < e; ++i)
              std::atomic_ref<std::uint64_t>(front[frontier[i] >> 6])
                  .fetch_or(std::uint64_t{1} << (frontier[i] & 63), std::memory_order_relaxed);
          }))
        return false;
      std::uint64_t awake = frontier.size(), before = 0;
      count.assign(blocks, 0);
      do {
        if (!level_start(level)) return false;
        before = awake;
        if (!for_blocks("bfs bottom-up", n, [&](std::uint64_t blk, std::uint64_t b, std::uint64_t e) {
              std::uint64_t woke = 0;
              std::fill(next.begin() + static_cast<std::ptrdiff_t>(b / 64),
                        next.begin() + static_cast<std::ptrdiff_t>((e + 63) / 64), 0);
              for (std::uint64_t v = b; v < e; ++v) {
                if (depth[v] != kBfsUnreached) continue;
                for (std::uint32_t u : g.InNeighbors(static_cast<std::uint32_t>(v))) {
                  if ((front[u >> 6] >> (u & 63)) & 1) {
                    depth[v] = level + 1;
                    next[v >> 6] |= std::uint64_t{1} << (v & 63);
                    ++woke;
                    break;
                  }
                }
              }
              count[blk] = woke;
            }))
          return false;
        awake = 0;
        for (std::uint64_t c : count) awake += c;
        front.swap(next);
        ++level;
      } while (awake > 0 && (awake >= before || awake > n / kBfsBeta));
      found.assign(blocks, {});
      if (!for_blocks("bfs to list", n, [&](std::uint64_t blk, std::uint64_t b, std::uint64_t e) {
            for (std::uint64_t w = b / 64; w < (e + 63) / 64; ++w)
              for (std::uint64_t bits = front[w]; bits != 0; bits &= bits - 1)
                found[blk].push_back(static_cast<std::uint32_t>(w * 64 + std::countr_zero(bits)));
          }))
        return false;
      gather();
      scout = 1;
      continue;
    }
    if (!level_start(level)) return false;
    unexamined -= std::min(unexamined, scout);
    found.assign((frontier.size() + kBfsBlock - 1) / kBfsBlock, {});
    count.assign(found.size(), 0);
    if (!for_blocks("bfs frontier", frontier.size(),
                    [&](std::uint64_t blk, std::uint64_t b, std::uint64_t e) {
                      std::vector<std::uint32_t>& out = found[blk];
                      std::uint64_t edges = 0;
                      for (std::uint64_t i = b; i < e; ++i) {
                        for (std::uint32_t w : g.OutNeighbors(frontier[i])) {
                          std::atomic_ref<std::int64_t> d(depth[w]);
                          std::int64_t expected = kBfsUnreached;
                          if (d.load(std::memory_order_relaxed) == kBfsUnreached &&
                              d.compare_exchange_strong(expected, level + 1, std::memory_order_relaxed)) {
                            out.push_back(w);
                            edges += g.OutNeighbors(w).size();
                          }
                        }
                      }
                      count[blk] = edges;
                    }))
      return false;
    scout = 0;
    for (std::uint64_t c : count) scout += c;
    gather();
    ++level;
  }
  return true;
}

}  // namespace quiver::analytics

#endif  // QUIVER_ANALYTICS_BFS_H_
