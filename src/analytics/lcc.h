// The local clustering coefficient of one vertex (the LDBC Graphalytics
// definition): with N(v) the distinct out- and in-neighbours of v other
// than v, the number of ordered pairs (u, w) of N(v) joined by an out-edge
// u -> w (parallel edges once, self-loops never), over |N(v)| (|N(v)| - 1);
// 0 when |N(v)| < 2. A template over the graph so that quiver::Lcc (on a
// Projection) and the capacity bench's raw CSR ceiling run the same code.
//
// N(v) is marked in an array over every vertex (mark[u] == v + 1; 4 bytes a
// vertex per worker, allocated on first use), and each out-neighbour w of
// each u in N(v) is looked up in it: one load and a compare, no branch on
// the answer, so the loads of several neighbours' lists overlap. Tried and
// dropped (quick profile, 200K x 10, interleaved runs): N(v) in a small
// open-addressing table, L1-resident, but its probe loop branches on the
// answer: 3-4 x slower; prefetching the list two places ahead in
// N(v): the raw arrays' run 16 % faster, the projection's not (0.099 s
// against 0.096 s, medians of seven), so it was not kept.
//
// Thread safety: a scratch per thread; the graph must not change.
#ifndef QUIVER_ANALYTICS_LCC_H_
#define QUIVER_ANALYTICS_LCC_H_

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

namespace quiver::analytics {

// One worker's scratch; reuse it across vertices.
struct LccScratch {
  std::vector<std::uint32_t> nbrs;  // N(v), sorted
  std::vector<std::uint32_t> mark;  // mark[u] == v + 1: u is in N(v)
};

// Graph provides vertex_count(), OutNeighbors(v) and InNeighbors(v) (sorted
// spans of std::uint32_t); `undirected`: N(v) is the out-neighbours alone.
// Throws std::bad_alloc when out of memory.
template <class Graph>
double LocalClustering(const Graph& g, bool undirected, std::uint32_t v, LccScratch& s) {
  s.nbrs.clear();
  const std::span<const std::uint32_t> out = g.OutNeighbors(v);
  const std::span<const std::uint32_t> in = undirected ? std::span<const std::uint32_t>() : g.InNeighbors(v);
  std::set_union(out.begin(), out.end(), in.begin(), in.end(), std::back_inserter(s.nbrs));
  s.nbrs.erase(std::unique(s.nbrs.begin(), s.nbrs.end()), s.nbrs.end());
  s.nbrs.erase(std::remove(s.nbrs.begin(), s.nbrs.end(), v), s.nbrs.end());
  const std::size_t deg = s.nbrs.size();
  if (deg < 2) return 0.0;
  if (s.mark.empty()) s.mark.assign(g.vertex_count(), 0);
  for (std::uint32_t u : s.nbrs) s.mark[u] = v + 1;
  std::uint64_t links = 0;
  for (const std::uint32_t u : s.nbrs) {
    const std::span<const std::uint32_t> un = g.OutNeighbors(u);
    for (std::size_t j = 0; j < un.size(); ++j) {
      if (j > 0 && un[j] == un[j - 1]) continue;  // a parallel edge counts once
      if (un[j] != u && s.mark[un[j]] == v + 1) ++links;
    }
  }
  return static_cast<double>(links) / static_cast<double>(deg * (deg - 1));
}

}  // namespace quiver::analytics

#endif  // QUIVER_ANALYTICS_LCC_H_
