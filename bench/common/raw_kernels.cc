#include "common/raw_kernels.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <iterator>
#include <limits>
#include <thread>
#include <utility>

#include "analytics/afforest.h"
#include "analytics/bfs.h"
#include "analytics/delta_stepping.h"
#include "analytics/lcc.h"
#include "base/small_sort.h"
#include "common/bench_common.h"

namespace quiver::bench {
namespace {

constexpr std::uint64_t kChunk = 4096;

double WeightOf(const Snapshot& snapshot, EdgeId e, PropertyKeyId key) {
  const std::optional<PropertyView> v = snapshot.GetProperty(e, key);
  if (v && v->as_double()) return *v->as_double();
  if (v && v->as_int64()) return static_cast<double>(*v->as_int64());
  Die("analytics raw CSR", InternalError("an edge has no numeric weight"));
}

}  // namespace

void ForChunks(std::uint64_t n, int threads,
               const std::function<void(int worker, std::uint64_t, std::uint64_t)>& fn) {
  std::atomic<std::uint64_t> next{0};
  auto worker = [&](int w) {
    for (std::uint64_t b; (b = next.fetch_add(kChunk, std::memory_order_relaxed)) < n;)
      fn(w, b, std::min(n, b + kChunk));
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : pool) t.join();
}

RawGraph BuildRawGraph(const Snapshot& snapshot, VertexId first, std::uint64_t n,
                       std::optional<PropertyKeyId> weight_key) {
  RawGraph g;
  g.n = static_cast<std::uint32_t>(n);
  const std::uint64_t base = first.value();
  std::vector<std::pair<std::uint32_t, double>> row;
  g.out.offsets.assign(n + 1, 0);
  for (std::uint64_t v = 0; v < n; ++v) {
    g.out.offsets[v] = g.out.targets.size();
    row.clear();
    for (const EdgeGroup& group : snapshot.OutEdges(VertexId(base + v))) {
      for (const EdgeEntry& e : group.entries) {
        const std::uint64_t t = e.neighbor().value() - base;
        if (t >= n) Die("analytics raw CSR", InternalError("an edge leaves the vertex range"));
        row.emplace_back(static_cast<std::uint32_t>(t),
                         weight_key ? WeightOf(snapshot, e.edge(), *weight_key) : 0.0);
      }
    }
    std::sort(row.begin(), row.end());
    for (const auto& [t, w] : row) {
      g.out.targets.push_back(t);
      if (weight_key) g.out.weights.push_back(w);
    }
  }
  g.out.offsets[n] = g.out.targets.size();
  std::vector<std::uint64_t> at(n + 1, 0);
  for (std::uint32_t t : g.out.targets) ++at[t + 1];
  for (std::uint64_t v = 0; v < n; ++v) at[v + 1] += at[v];
  g.in.offsets = at;
  g.in.targets.resize(g.out.targets.size());
  for (std::uint32_t v = 0; v < g.n; ++v)
    for (std::uint32_t t : g.out.Neighbors(v)) g.in.targets[at[t]++] = v;  // ascending v: sorted
  return g;
}

std::uint64_t RawSweep(const RawCsr& csr, int threads) {
  std::atomic<std::uint64_t> total{0};
  const std::uint64_t* offsets = csr.offsets.data();
  const std::uint32_t* targets = csr.targets.data();
  ForChunks(csr.offsets.size() - 1, threads, [&](int, std::uint64_t b, std::uint64_t e) {
    std::uint64_t sum = 0;
    for (std::uint64_t k = offsets[b]; k < offsets[e]; ++k) sum += targets[k];
    total.fetch_add(sum, std::memory_order_relaxed);
  });
  return total.load();
}

std::vector<double> RawPageRank(const RawGraph& g, int iterations, int threads) {
  const std::uint32_t n = g.n;
  const double d = 0.85;
  std::vector<double> rank(n, 1.0 / n), next(n), contrib(n);
  std::vector<double> block_sink((n + kChunk - 1) / kChunk);
  for (int it = 0; it < iterations; ++it) {
    ForChunks(n, threads, [&](int, std::uint64_t b, std::uint64_t e) {
      double s = 0;
      for (std::uint64_t v = b; v < e; ++v) {
        const std::uint64_t deg = g.out.offsets[v + 1] - g.out.offsets[v];
        if (deg == 0) s += rank[v];
        contrib[v] = deg ? rank[v] / static_cast<double>(deg) : 0.0;
      }
      block_sink[b / kChunk] = s;
    });
    double sink = 0;
    for (double s : block_sink) sink += s;
    const double base = ((1 - d) + d * sink) / n;
    ForChunks(n, threads, [&](int, std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t v = b; v < e; ++v) {
        double sum = 0;
        for (std::uint32_t u : g.in.Neighbors(static_cast<std::uint32_t>(v))) sum += contrib[u];
        next[v] = base + d * sum;
      }
    });
    rank.swap(next);
  }
  return rank;
}

std::vector<std::int64_t> RawBfs(const RawGraph& g, std::uint32_t source, int threads) {
  // The library's own direction-optimising BFS, run on the raw arrays.
  struct View {
    const RawGraph& g;
    std::uint32_t vertex_count() const { return g.n; }
    std::uint64_t edge_count() const { return g.out.targets.size(); }
    std::span<const std::uint32_t> OutNeighbors(std::uint32_t v) const { return g.out.Neighbors(v); }
    std::span<const std::uint32_t> InNeighbors(std::uint32_t v) const { return g.in.Neighbors(v); }
  };
  static_assert(analytics::kBfsBlock == kChunk);
  std::vector<std::int64_t> depth;
  analytics::DirectionOptimizingBfs(
      View{g}, source, /*in_edges=*/true,
      [&](std::string_view, std::uint64_t n,
          const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& fn) {
        ForChunks(n, threads, [&](int, std::uint64_t b, std::uint64_t e) { fn(b / kChunk, b, e); });
        return true;
      },
      [](std::int64_t) { return true; }, &depth);
  return depth;
}

std::vector<std::uint32_t> RawWcc(const RawGraph& g, int threads) {
  // The library's own Afforest, run on the raw arrays.
  struct View {
    const RawGraph& g;
    std::uint32_t vertex_count() const { return g.n; }
    std::span<const std::uint32_t> OutNeighbors(std::uint32_t v) const { return g.out.Neighbors(v); }
    std::span<const std::uint32_t> InNeighbors(std::uint32_t v) const { return g.in.Neighbors(v); }
  };
  std::vector<std::uint32_t> comp;
  analytics::Afforest(
      View{g}, /*in_edges=*/true, /*undirected=*/false,
      [&](std::string_view, std::uint64_t n, const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
        ForChunks(n, threads, [&](int, std::uint64_t b, std::uint64_t e) { fn(b, e); });
        return true;
      },
      &comp);
  return comp;
}

std::vector<std::uint32_t> RawCdlp(const RawGraph& g, int iterations, int threads) {
  std::vector<std::uint32_t> label(g.n), next(g.n);
  for (std::uint32_t v = 0; v < g.n; ++v) label[v] = v;
  std::vector<std::vector<std::uint32_t>> scratch(static_cast<std::size_t>(threads));
  for (int it = 0; it < iterations; ++it) {
    ForChunks(g.n, threads, [&](int w, std::uint64_t b, std::uint64_t e) {
      std::vector<std::uint32_t>& seen = scratch[static_cast<std::size_t>(w)];
      const std::uint32_t* const labels = label.data();
      for (std::uint64_t i = b; i < e; ++i) {
        const auto v = static_cast<std::uint32_t>(i);
        const auto out = g.out.Neighbors(v), in = g.in.Neighbors(v);
        if (out.empty() && in.empty()) {
          next[v] = labels[v];
          continue;
        }
        seen.resize(out.size() + in.size());  // filled through a pointer, as the library's Cdlp
        std::uint32_t* at = seen.data();
        for (std::uint32_t u : out) *at++ = labels[u];
        for (std::uint32_t u : in) *at++ = labels[u];
        quiver::base::SortU32(seen.data(), seen.size());  // as the library's Cdlp
        std::uint32_t best = seen[0];
        std::size_t best_count = 0;
        for (std::size_t j = 0; j < seen.size();) {
          std::size_t k = j;
          while (k < seen.size() && seen[k] == seen[j]) ++k;
          if (k - j > best_count) best_count = k - j, best = seen[j];
          j = k;
        }
        next[v] = best;
      }
    });
    label.swap(next);
  }
  return label;
}

std::vector<double> RawLcc(const RawGraph& g, int threads) {
  // The library's own LocalClustering, run on the raw arrays.
  struct View {
    const RawGraph& g;
    std::uint32_t vertex_count() const { return g.n; }
    std::span<const std::uint32_t> OutNeighbors(std::uint32_t v) const { return g.out.Neighbors(v); }
    std::span<const std::uint32_t> InNeighbors(std::uint32_t v) const { return g.in.Neighbors(v); }
  };
  std::vector<double> lcc;
  analytics::LocalClustering(
      View{g}, /*undirected=*/false, static_cast<unsigned>(std::max(threads, 1)),
      [&](std::string_view, std::uint64_t n,
          const std::function<void(unsigned, std::uint64_t, std::uint64_t)>& fn) {
        ForChunks(n, threads,
                  [&](int w, std::uint64_t b, std::uint64_t e) { fn(static_cast<unsigned>(w), b, e); });
        return true;
      },
      &lcc);
  return lcc;
}

std::vector<double> RawSssp(const RawGraph& g, std::uint32_t source, int threads) {
  // The library's own delta-stepping, run on the raw arrays.
  struct View {
    const RawGraph& g;
    std::uint32_t vertex_count() const { return g.n; }
    std::uint64_t edge_count() const { return g.out.targets.size(); }
    std::span<const std::uint32_t> OutNeighbors(std::uint32_t v) const { return g.out.Neighbors(v); }
    std::span<const double> OutWeights(std::uint32_t v) const { return g.out.Weights(v); }
  };
  std::vector<double> dist;
  if (analytics::DeltaStepping(View{g}, source, static_cast<unsigned>(threads), {}, {}, &dist) !=
      analytics::DeltaSteppingEnd::kDone)
    Die("analytics raw CSR", ResourceExhaustedError("SSSP ran out of memory"));
  return dist;
}

}  // namespace quiver::bench
