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
//   BM_RawSweep              bench::RawSweep on 2 threads: the sum of the out neighbour ids
//   BM_Project/in:0|1        Project(snapshot, {.in = ?, .threads = 2}); items = entries built;
//                            counters vs_sweep (build edges/s / raw sweep edges/s), bytes_per_edge,
//                            vs_floor (memory_bytes / (4 B x entries + 8 B x (V + 1)) per direction)
//   BM_<Kernel>Raw / BM_<Kernel>Quiver   the kernel on the raw CSR (bench/common/raw_kernels.h,
//                            the capacity bench's ceiling: the same algorithm written directly on
//                            the arrays, 2 threads over chunks of 4,096 vertices) and through
//                            quiver::<Kernel> with RunOptions{.threads = 2}; the Quiver one reports
//                            vs_raw (its time / the raw time measured in the same process).
// Kernels: PageRank (10 iterations, pull), BFS (from vertex 0, direction-optimising), WCC
// (Afforest), CDLP (10 iterations), LCC. Wall-clock time per call; each result is checked against the raw one
// once.
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
#include "common/raw_kernels.h"
#include "quiver/analytics.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

using Clock = std::chrono::steady_clock;

const std::uint64_t kVertices = Scaled(1'000'000);
constexpr std::uint64_t kOutDegree = 10;
constexpr int kThreads = 2;

struct Fixture {
  std::unique_ptr<Graph> graph;
  Snapshot snapshot;
  std::uint32_t n = 0;
  RawGraph raw;  // out and in, no weights
};

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
  if (first != 0 || f->n != kVertices) Die("analytics fixture", InternalError("vertex ids are not 0..V-1"));
  f->raw = BuildRawGraph(f->snapshot, VertexId(first), f->n, std::nullopt);
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
      if (!std::ranges::equal(proj.OutNeighbors(v), F().raw.out.Neighbors(v)) ||
          !std::ranges::equal(proj.InNeighbors(v), F().raw.in.Neighbors(v)))
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
    const auto t0 = Clock::now();
    const std::uint64_t total = RawSweep(f.raw.out, kThreads);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    Consume(total);
  }
  g_sweep_rate = static_cast<double>(f.raw.out.targets.size()) / best;
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

void BM_PageRankRaw(benchmark::State& state) {
  TimeRaw(state, "pagerank", [] { Consume(RawPageRank(F().raw, 10, kThreads)[0]); });
}
void BM_PageRankQuiver(benchmark::State& state) {
  const Projection& p = P();
  const std::vector<double> want = RawPageRank(F().raw, 10, kThreads);
  const std::vector<double> got = PageRank(p, {.iterations = 10}, {.threads = kThreads}).value();
  for (std::uint32_t v = 0; v < F().n; ++v)
    if (std::abs(got[v] - want[v]) > 1e-12 * want[v]) Die("PageRank", InternalError("differs from raw CSR"));
  TimeQuiver(state, "pagerank",
             [&] { Consume(PageRank(p, {.iterations = 10}, {.threads = kThreads}).value()[0]); });
}
BENCHMARK(BM_PageRankRaw)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PageRankQuiver)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- BFS ----

void BM_BfsRaw(benchmark::State& state) {
  TimeRaw(state, "bfs", [] { Consume(RawBfs(F().raw, 0, kThreads)[1]); });
}
void BM_BfsQuiver(benchmark::State& state) {
  const Projection& p = P();
  if (Bfs(p, VertexId(0), {.threads = kThreads}).value() != RawBfs(F().raw, 0, kThreads))
    Die("Bfs", InternalError("differs"));
  TimeQuiver(state, "bfs", [&] { Consume(Bfs(p, VertexId(0), {.threads = kThreads}).value()[1]); });
}
BENCHMARK(BM_BfsRaw)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BfsQuiver)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- WCC ----

void BM_WccRaw(benchmark::State& state) {
  TimeRaw(state, "wcc", [] { Consume(RawWcc(F().raw, kThreads)[1]); });
}
void BM_WccQuiver(benchmark::State& state) {
  const Projection& p = P();
  const auto want = RawWcc(F().raw, kThreads);
  const auto got = Wcc(p, {.threads = kThreads}).value();
  for (std::uint32_t v = 0; v < F().n; ++v)
    if (got[v].value() != want[v]) Die("Wcc", InternalError("differs"));
  TimeQuiver(state, "wcc", [&] { Consume(Wcc(p, {.threads = kThreads}).value()[1].value()); });
}
BENCHMARK(BM_WccRaw)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WccQuiver)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- CDLP ----

void BM_CdlpRaw(benchmark::State& state) {
  TimeRaw(state, "cdlp", [] { Consume(RawCdlp(F().raw, 10, kThreads)[1]); });
}
void BM_CdlpQuiver(benchmark::State& state) {
  const Projection& p = P();
  const auto want = RawCdlp(F().raw, 10, kThreads);
  const auto got = Cdlp(p, 10, {.threads = kThreads}).value();
  for (std::uint32_t v = 0; v < F().n; ++v)
    if (got[v].value() != want[v]) Die("Cdlp", InternalError("differs"));
  TimeQuiver(state, "cdlp", [&] { Consume(Cdlp(p, 10, {.threads = kThreads}).value()[1].value()); });
}
BENCHMARK(BM_CdlpRaw)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CdlpQuiver)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- LCC ----

void BM_LccRaw(benchmark::State& state) {
  TimeRaw(state, "lcc", [] { Consume(RawLcc(F().raw, kThreads)[1]); });
}
void BM_LccQuiver(benchmark::State& state) {
  const Projection& p = P();
  if (Lcc(p, {.threads = kThreads}).value() != RawLcc(F().raw, kThreads))
    Die("Lcc", InternalError("differs"));
  TimeQuiver(state, "lcc", [&] { Consume(Lcc(p, {.threads = kThreads}).value()[1]); });
}
BENCHMARK(BM_LccRaw)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LccQuiver)->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace quiver::bench
