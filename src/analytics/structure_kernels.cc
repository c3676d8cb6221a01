// Triangle count and k-core decomposition. Both are defined on the simple
// undirected graph under a projection (directions, self-loops and parallel
// edges ignored), so both start from SimpleGraph: for every vertex, its
// distinct neighbours in either direction other than itself, sorted.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "analytics/parallel_loop.h"
#include "quiver/analytics.h"

namespace quiver {

using analytics::kBlock;
using analytics::KernelCancelled;
using analytics::ParallelBlocks;
using analytics::ThreadsFor;

namespace {

struct SimpleGraph {
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint32_t> targets;
  std::span<const std::uint32_t> Neighbors(std::uint32_t v) const {
    return {targets.data() + offsets[v], targets.data() + offsets[v + 1]};
  }
};

// Appends v's simple neighbours to *out.
void SimpleNeighbors(const Projection& p, std::uint32_t v, std::vector<std::uint32_t>* out) {
  out->clear();
  auto a = p.OutNeighbors(v);
  auto b = p.undirected() ? std::span<const std::uint32_t>() : p.InNeighbors(v);
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(*out));
  out->erase(std::unique(out->begin(), out->end()), out->end());
  out->erase(std::remove(out->begin(), out->end(), v), out->end());
}

// Two passes (count, then fill at the prefix-summed offsets), both parallel.
bool BuildSimpleGraph(const Projection& p, const RunOptions& run, unsigned threads, SimpleGraph* g) {
  const std::uint32_t n = p.vertex_count();
  g->offsets.assign(std::uint64_t{n} + 1, 0);
  std::vector<std::vector<std::uint32_t>> scratch(threads);
  bool ok = ParallelBlocks(run, threads, n, "simple graph count",
                           [&](unsigned w, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                             for (std::uint64_t v = b; v < e; ++v) {
                               SimpleNeighbors(p, static_cast<std::uint32_t>(v), &scratch[w]);
                               g->offsets[v + 1] = scratch[w].size();
                             }
                           });
  if (!ok) return false;
  for (std::uint32_t v = 0; v < n; ++v) g->offsets[v + 1] += g->offsets[v];
  g->targets.resize(g->offsets[n]);
  return ParallelBlocks(run, threads, n, "simple graph fill",
                        [&](unsigned w, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                          for (std::uint64_t v = b; v < e; ++v) {
                            SimpleNeighbors(p, static_cast<std::uint32_t>(v), &scratch[w]);
                            std::copy(scratch[w].begin(), scratch[w].end(),
                                      g->targets.begin() + static_cast<std::ptrdiff_t>(g->offsets[v]));
                          }
                        });
}

}  // namespace

Result<std::uint64_t> TriangleCount(const Projection& p, const RunOptions& run) {
  if (!p.has_out() || !p.has_in())
    return FailedPreconditionError("TriangleCount: the projection needs out and in adjacency");
  const unsigned threads = ThreadsFor(run);
  SimpleGraph g;
  if (!BuildSimpleGraph(p, run, threads, &g)) return KernelCancelled("TriangleCount");
  const std::uint32_t n = p.vertex_count();
  std::vector<std::uint64_t> block_count((n + kBlock - 1) / kBlock, 0);
  // Each triangle v < u < x is counted once: at v, from the neighbours above
  // v (a suffix of v's sorted list) intersected with those above u.
  const bool ok = ParallelBlocks(
      run, threads, n, "triangles", [&](unsigned, std::uint64_t blk, std::uint64_t b, std::uint64_t e) {
        std::uint64_t count = 0;
        for (std::uint64_t i = b; i < e; ++i) {
          const auto v = static_cast<std::uint32_t>(i);
          auto nv = g.Neighbors(v);
          auto hv =
              nv.subspan(static_cast<std::size_t>(std::upper_bound(nv.begin(), nv.end(), v) - nv.begin()));
          for (std::size_t j = 0; j < hv.size(); ++j) {
            const std::uint32_t u = hv[j];
            auto nu = g.Neighbors(u);
            auto x = std::upper_bound(nu.begin(), nu.end(), u);
            auto y = hv.begin() + static_cast<std::ptrdiff_t>(j) + 1;
            while (x != nu.end() && y != hv.end()) {
              if (*x < *y) {
                ++x;
              } else if (*y < *x) {
                ++y;
              } else {
                ++count;
                ++x;
                ++y;
              }
            }
          }
        }
        block_count[blk] = count;
      });
  if (!ok) return KernelCancelled("TriangleCount");
  std::uint64_t total = 0;
  for (std::uint64_t c : block_count) total += c;
  return total;
}

Result<std::vector<std::uint32_t>> CoreNumbers(const Projection& p, const RunOptions& run) {
  if (!p.has_out() || !p.has_in())
    return FailedPreconditionError("CoreNumbers: the projection needs out and in adjacency");
  const unsigned threads = ThreadsFor(run);
  SimpleGraph g;
  if (!BuildSimpleGraph(p, run, threads, &g)) return KernelCancelled("CoreNumbers");
  // Batagelj-Zaversnik: vertices bucketed by current degree, peeled in
  // ascending order; a vertex's core number is its degree when peeled.
  const std::uint32_t n = p.vertex_count();
  std::vector<std::uint32_t> deg(n), pos(n), order(n);
  std::uint32_t max_deg = 0;
  for (std::uint32_t v = 0; v < n; ++v) {
    deg[v] = static_cast<std::uint32_t>(g.offsets[v + 1] - g.offsets[v]);
    max_deg = std::max(max_deg, deg[v]);
  }
  std::vector<std::uint32_t> bin(std::uint64_t{max_deg} + 1, 0);
  for (std::uint32_t v = 0; v < n; ++v) ++bin[deg[v]];
  std::uint32_t start = 0;
  for (std::uint32_t& b : bin) start += std::exchange(b, start);
  for (std::uint32_t v = 0; v < n; ++v) {
    pos[v] = bin[deg[v]]++;
    order[pos[v]] = v;
  }
  for (std::uint32_t d = max_deg; d > 0; --d) bin[d] = bin[d - 1];
  if (!bin.empty()) bin[0] = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i % kBlock == 0 && !analytics::Step(run, "kcore peel", i, n)) return KernelCancelled("CoreNumbers");
    const std::uint32_t v = order[i];
    for (std::uint32_t u : g.Neighbors(v)) {
      if (deg[u] <= deg[v]) continue;
      // Move u to the front of its bucket, then shrink its degree.
      const std::uint32_t du = deg[u], pu = pos[u], pw = bin[du], w = order[pw];
      if (u != w) {
        order[pu] = w;
        pos[w] = pu;
        order[pw] = u;
        pos[u] = pw;
      }
      ++bin[du];
      --deg[u];
    }
  }
  return deg;
}

}  // namespace quiver
