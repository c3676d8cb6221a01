// Projections and analytics kernels (include/quiver/analytics.h) against a raw CSR implementation
// of the same kernel on the same edges in the same process: the ceiling.
//
// Targets (issue "Traversal, path finding and graph analytics", 1M vertices x 10 out-edges, 2
// threads): projection build >= 0.5 x the raw CSR sweep rate (edges/s); PageRank 10 iterations
// <= 1.3 x the raw CSR kernel and <= 250 ms; BFS / WCC / CDLP (10 iterations) / LCC each <= 1.3 x
// the raw CSR kernel; projection memory vs the floor of 4 B per edge per direction + offsets.
// How: one volatile graph of 1,000,000 vertices, vertex i with 10 out-edges of type "E" to uniformly
// random targets (seed kSeed), built once per process through the public API. From one snapshot the
// fixture copies a raw CSR (64-bit offsets, 32-bit neighbour ids, out and in, each vertex's
// neighbours sorted) with plain loops, and checks that the projection holds the same arrays.
//   BM_RawSweep              2 std::threads, halves of the vertex range, sum of neighbour ids
//   BM_Project/in:0|1        Project(snapshot, {.in = ?, .threads = 2}); items = entries built;
//                            counters vs_sweep (build edges/s / raw sweep edges/s), bytes_per_edge,
//                            vs_floor (memory_bytes / (4 B x entries + 8 B x (V + 1)) per direction)
//   BM_<Kernel>Raw / BM_<Kernel>Quiver   the kernel on the raw CSR (the same algorithm written
//                            directly on the arrays, 2 std::threads, static halves) and through
//                            quiver::<Kernel> with RunOptions{.threads = 2}; the Quiver one reports
//                            vs_raw (its time / the raw time measured in the same process).
// Kernels: PageRank (10 iterations, pull), BFS (from vertex 0, top-down), WCC (union-find), CDLP
// (10 iterations), LCC. Wall-clock time per call; each result is checked against the raw one once.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "quiver/analytics.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

using Clock = std::chrono::steady_clock;

const std::uint64_t kVertices = Scaled(1'000'000);
constexpr std::uint64_t kOutDegree = 10;
constexpr unsigned kThreads = 2;

struct RawCsr {
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint32_t> targets;
  std::span<const std::uint32_t> Neighbors(std::uint32_t v) const {
    return {targets.data() + offsets[v], targets.data() + offsets[v + 1]};
  }
};

struct Fixture {
  std::unique_ptr<Graph> graph;
  Snapshot snapshot;
  std::uint32_t n = 0;
  RawCsr out, in;
};

// Runs fn(begin, end) on kThreads std::threads over static parts of [0, n).
void Split(std::uint64_t n, const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < kThreads; ++t) pool.emplace_back(fn, n * t / kThreads, n * (t + 1) / kThreads);
  fn(0, n / kThreads);
  for (std::thread& th : pool) th.join();
}

std::unique_ptr<Fixture> Build() {
  auto f = std::make_unique<Fixture>();
  f->graph = OpenVolatileGraph();
  const std::uint64_t first = AddVertices(*f->graph, kVertices, "Node").value();
  Rng rng(kSeed);
  AddEdges(*f->graph, kVertices * kOutDegree, "E", [&](std::uint64_t i) {
    return std::pair(VertexId(first + i / kOutDegree), VertexId(first + rng.Uniform(kVertices)));
  });
  f->snapshot = f->graph->GetSnapshot();
  f->n = static_cast<std::uint32_t>(f->snapshot.vertex_id_limit());
  std::vector<std::uint64_t> indeg(f->n + 1, 0);
  f->out.offsets.assign(f->n + 1, 0);
  for (std::uint32_t v = 0; v < f->n; ++v) {
    f->out.offsets[v] = f->out.targets.size();
    for (EdgeGroup g : f->snapshot.OutEdges(VertexId(v)))
      for (const EdgeEntry& e : g.entries)
        f->out.targets.push_back(static_cast<std::uint32_t>(e.neighbor().value()));
    std::sort(f->out.targets.begin() + static_cast<std::ptrdiff_t>(f->out.offsets[v]), f->out.targets.end());
  }
  f->out.offsets[f->n] = f->out.targets.size();
  for (std::uint32_t t : f->out.targets) ++indeg[t + 1];
  for (std::uint32_t v = 0; v < f->n; ++v) indeg[v + 1] += indeg[v];
  f->in.offsets = indeg;
  f->in.targets.resize(f->out.targets.size());
  for (std::uint32_t v = 0; v < f->n; ++v)
    for (std::uint32_t t : f->out.Neighbors(v)) f->in.targets[indeg[t]++] = v;  // ascending v: sorted
  return f;
}

const Fixture& F() {
  static const std::unique_ptr<Fixture> fixture = Build();
  return *fixture;
}

const Projection& P() {
  static const Projection p = [] {
    Projection proj = ValueOrDie(Project(F().snapshot, {.threads = kThreads}), "Project");
    for (std::uint32_t v = 0; v < F().n; v += 1013) {
      if (!std::ranges::equal(proj.OutNeighbors(v), F().out.Neighbors(v)) ||
          !std::ranges::equal(proj.InNeighbors(v), F().in.Neighbors(v)))
        Die("analytics fixture", InternalError("the projection differs from the raw CSR"));
    }
    return proj;
  }();
  return p;
}

// Raw times by kernel name, so each Quiver benchmark reports vs_raw.
std::map<std::string, double>& RawSeconds() {
  static std::map<std::string, double> m;
  return m;
}

template <typename Fn>
void TimeRaw(benchmark::State& state, const std::string& name, Fn&& fn) {
  double best = 1e300;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  RawSeconds()[name] = best;
}

template <typename Fn>
void TimeQuiver(benchmark::State& state, const std::string& name, Fn&& fn) {
  double best = 1e300;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  state.counters["best_ms"] = best * 1e3;
  auto it = RawSeconds().find(name);
  if (it != RawSeconds().end()) state.counters["vs_raw"] = best / it->second;
}

// ---- Projection build vs the raw sweep ----

double g_sweep_rate = 0;

void BM_RawSweep(benchmark::State& state) {
  const Fixture& f = F();
  double best = 1e300;
  for (auto _ : state) {
    std::atomic<std::uint64_t> total{0};
    const auto t0 = Clock::now();
    Split(f.n, [&](std::uint64_t b, std::uint64_t e) {
      std::uint64_t sum = 0;
      for (std::uint64_t v = b; v < e; ++v)
        for (std::uint32_t t : f.out.Neighbors(static_cast<std::uint32_t>(v))) sum += t;
      total += sum;
    });
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    Consume(total.load());
  }
  g_sweep_rate = static_cast<double>(f.out.targets.size()) / best;
  state.counters["edges_per_s"] = g_sweep_rate;
}
BENCHMARK(BM_RawSweep)->Iterations(10)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Project(benchmark::State& state) {
  const Fixture& f = F();
  const bool in = state.range(0) != 0;
  double best = 1e300;
  std::uint64_t bytes = 0, entries = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Projection p = ValueOrDie(Project(f.snapshot, {.in = in, .threads = kThreads}), "Project");
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    bytes = p.memory_bytes();
    entries = p.edge_count() * (in ? 2 : 1);
  }
  const double rate = static_cast<double>(entries) / best;
  state.counters["edges_per_s"] = rate;
  if (g_sweep_rate > 0) state.counters["vs_sweep"] = rate / g_sweep_rate;
  state.counters["bytes_per_edge"] = static_cast<double>(bytes) / static_cast<double>(entries);
  const double floor = 4.0 * static_cast<double>(entries) + 8.0 * (f.n + 1) * (in ? 2 : 1);
  state.counters["vs_floor"] = static_cast<double>(bytes) / floor;
}
BENCHMARK(BM_Project)->Arg(0)->Arg(1)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- PageRank ----

std::vector<double> RawPageRank(const Fixture& f, int iterations) {
  const std::uint32_t n = f.n;
  const double d = 0.85;
  std::vector<double> rank(n, 1.0 / n), next(n), contrib(n);
  std::vector<double> sinks(kThreads);
  for (int it = 0; it < iterations; ++it) {
    std::atomic<unsigned> slot{0};
    Split(n, [&](std::uint64_t b, std::uint64_t e) {
      double s = 0;
      for (std::uint64_t v = b; v < e; ++v) {
        const std::uint64_t deg = f.out.offsets[v + 1] - f.out.offsets[v];
        if (deg == 0) s += rank[v];
        contrib[v] = deg ? rank[v] / static_cast<double>(deg) : 0.0;
      }
      sinks[slot++] = s;
    });
    double sink = 0;
    for (double s : sinks) sink += s;
    const double base = ((1 - d) + d * sink) / n;
    Split(n, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t v = b; v < e; ++v) {
        double sum = 0;
        for (std::uint32_t u : f.in.Neighbors(static_cast<std::uint32_t>(v))) sum += contrib[u];
        next[v] = base + d * sum;
      }
    });
    rank.swap(next);
  }
  return rank;
}

void BM_PageRankRaw(benchmark::State& state) {
  TimeRaw(state, "pagerank", [] { Consume(RawPageRank(F(), 10)[0]); });
}
void BM_PageRankQuiver(benchmark::State& state) {
  const Projection& p = P();
  const std::vector<double> want = RawPageRank(F(), 10);
  const std::vector<double> got = PageRank(p, {.iterations = 10}, {.threads = kThreads}).value();
  for (std::uint32_t v = 0; v < F().n; ++v)
    if (std::abs(got[v] - want[v]) > 1e-12 * want[v]) Die("PageRank", InternalError("differs from raw CSR"));
  TimeQuiver(state, "pagerank",
             [&] { Consume(PageRank(p, {.iterations = 10}, {.threads = kThreads}).value()[0]); });
}
BENCHMARK(BM_PageRankRaw)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PageRankQuiver)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- BFS ----

std::vector<std::int64_t> RawBfs(const Fixture& f, std::uint32_t source) {
  std::vector<std::int64_t> depth(f.n, kUnreachableDepth);
  depth[source] = 0;
  std::vector<std::uint32_t> frontier{source};
  std::vector<std::vector<std::uint32_t>> next(kThreads);
  for (std::int64_t level = 0; !frontier.empty(); ++level) {
    std::atomic<unsigned> slot{0};
    Split(frontier.size(), [&](std::uint64_t b, std::uint64_t e) {
      std::vector<std::uint32_t>& out = next[slot++];
      out.clear();
      for (std::uint64_t i = b; i < e; ++i)
        for (std::uint32_t w : f.out.Neighbors(frontier[i])) {
          std::atomic_ref<std::int64_t> d(depth[w]);
          std::int64_t expected = kUnreachableDepth;
          if (d.load(std::memory_order_relaxed) == kUnreachableDepth &&
              d.compare_exchange_strong(expected, level + 1, std::memory_order_relaxed))
            out.push_back(w);
        }
    });
    frontier.clear();
    for (const auto& part : next) frontier.insert(frontier.end(), part.begin(), part.end());
  }
  return depth;
}

void BM_BfsRaw(benchmark::State& state) {
  TimeRaw(state, "bfs", [] { Consume(RawBfs(F(), 0)[1]); });
}
void BM_BfsQuiver(benchmark::State& state) {
  const Projection& p = P();
  if (Bfs(p, VertexId(0), {.threads = kThreads}).value() != RawBfs(F(), 0))
    Die("Bfs", InternalError("differs"));
  TimeQuiver(state, "bfs", [&] { Consume(Bfs(p, VertexId(0), {.threads = kThreads}).value()[1]); });
}
BENCHMARK(BM_BfsRaw)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BfsQuiver)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- WCC ----

std::vector<std::uint32_t> RawWcc(const Fixture& f) {
  std::vector<std::uint32_t> parent(f.n);
  for (std::uint32_t v = 0; v < f.n; ++v) parent[v] = v;
  auto ref = [&](std::uint32_t x) { return std::atomic_ref<std::uint32_t>(parent[x]); };
  auto find = [&](std::uint32_t x) {
    while (true) {
      const std::uint32_t p = ref(x).load(std::memory_order_acquire);
      if (p == x) return x;
      const std::uint32_t gp = ref(p).load(std::memory_order_acquire);
      if (gp != p) {
        std::uint32_t expected = p;
        ref(x).compare_exchange_weak(expected, gp, std::memory_order_acq_rel);
      }
      x = p;
    }
  };
  Split(f.n, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t v = b; v < e; ++v)
      for (std::uint32_t w : f.out.Neighbors(static_cast<std::uint32_t>(v))) {
        std::uint32_t x = static_cast<std::uint32_t>(v), y = w;
        while (true) {
          x = find(x);
          y = find(y);
          if (x == y) break;
          if (x < y) std::swap(x, y);
          std::uint32_t expected = x;
          if (ref(x).compare_exchange_strong(expected, y, std::memory_order_acq_rel)) break;
        }
      }
  });
  std::vector<std::uint32_t> comp(f.n);
  Split(f.n, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t v = b; v < e; ++v) comp[v] = find(static_cast<std::uint32_t>(v));
  });
  return comp;
}

void BM_WccRaw(benchmark::State& state) {
  TimeRaw(state, "wcc", [] { Consume(RawWcc(F())[1]); });
}
void BM_WccQuiver(benchmark::State& state) {
  const Projection& p = P();
  const auto want = RawWcc(F());
  const auto got = Wcc(p, {.threads = kThreads}).value();
  for (std::uint32_t v = 0; v < F().n; ++v)
    if (got[v].value() != want[v]) Die("Wcc", InternalError("differs"));
  TimeQuiver(state, "wcc", [&] { Consume(Wcc(p, {.threads = kThreads}).value()[1].value()); });
}
BENCHMARK(BM_WccRaw)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WccQuiver)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- CDLP ----

std::vector<std::uint32_t> RawCdlp(const Fixture& f, int iterations) {
  std::vector<std::uint32_t> label(f.n), next(f.n);
  for (std::uint32_t v = 0; v < f.n; ++v) label[v] = v;
  for (int it = 0; it < iterations; ++it) {
    Split(f.n, [&](std::uint64_t b, std::uint64_t e) {
      std::vector<std::uint32_t> seen;
      for (std::uint64_t i = b; i < e; ++i) {
        const auto v = static_cast<std::uint32_t>(i);
        seen.clear();
        for (std::uint32_t u : f.out.Neighbors(v)) seen.push_back(label[u]);
        for (std::uint32_t u : f.in.Neighbors(v)) seen.push_back(label[u]);
        if (seen.empty()) {
          next[v] = label[v];
          continue;
        }
        std::sort(seen.begin(), seen.end());
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

void BM_CdlpRaw(benchmark::State& state) {
  TimeRaw(state, "cdlp", [] { Consume(RawCdlp(F(), 10)[1]); });
}
void BM_CdlpQuiver(benchmark::State& state) {
  const Projection& p = P();
  const auto want = RawCdlp(F(), 10);
  const auto got = Cdlp(p, 10, {.threads = kThreads}).value();
  for (std::uint32_t v = 0; v < F().n; ++v)
    if (got[v].value() != want[v]) Die("Cdlp", InternalError("differs"));
  TimeQuiver(state, "cdlp", [&] { Consume(Cdlp(p, 10, {.threads = kThreads}).value()[1].value()); });
}
BENCHMARK(BM_CdlpRaw)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CdlpQuiver)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- LCC ----

std::vector<double> RawLcc(const Fixture& f) {
  std::vector<double> lcc(f.n, 0.0);
  Split(f.n, [&](std::uint64_t b, std::uint64_t e) {
    std::vector<std::uint32_t> mark(f.n, 0), nbrs;
    for (std::uint64_t i = b; i < e; ++i) {
      const auto v = static_cast<std::uint32_t>(i);
      nbrs.clear();
      auto out = f.out.Neighbors(v), in = f.in.Neighbors(v);
      std::set_union(out.begin(), out.end(), in.begin(), in.end(), std::back_inserter(nbrs));
      nbrs.erase(std::unique(nbrs.begin(), nbrs.end()), nbrs.end());
      nbrs.erase(std::remove(nbrs.begin(), nbrs.end(), v), nbrs.end());
      const std::uint64_t deg = nbrs.size();
      if (deg < 2) continue;
      for (std::uint32_t u : nbrs) mark[u] = v + 1;
      std::uint64_t links = 0;
      for (std::uint32_t u : nbrs) {
        auto un = f.out.Neighbors(u);
        for (std::size_t j = 0; j < un.size(); ++j)
          if ((j == 0 || un[j] != un[j - 1]) && un[j] != u && mark[un[j]] == v + 1) ++links;
      }
      lcc[v] = static_cast<double>(links) / static_cast<double>(deg * (deg - 1));
    }
  });
  return lcc;
}

void BM_LccRaw(benchmark::State& state) {
  TimeRaw(state, "lcc", [] { Consume(RawLcc(F())[1]); });
}
void BM_LccQuiver(benchmark::State& state) {
  const Projection& p = P();
  if (Lcc(p, {.threads = kThreads}).value() != RawLcc(F())) Die("Lcc", InternalError("differs"));
  TimeQuiver(state, "lcc", [&] { Consume(Lcc(p, {.threads = kThreads}).value()[1]); });
}
BENCHMARK(BM_LccRaw)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LccQuiver)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace quiver::bench
