// Parallel out-edge sweep: every thread walks a contiguous vertex-id range of one snapshot and
// sums the neighbour ids over all its out-edge groups, the access pattern of whole-graph analytics
// (PageRank, BFS frontiers), compared with the same sweep over a plain CSR copy of the graph.
//
// Target: with 2 threads, the Quiver sweep reaches >= 60% of the CSR sweep's edges/s.
// How: one volatile graph of 1,000,000 vertices and 10,000,000 edges of one type "E", built once
// per process through the public API in batches of 100,000 (seed kSeed): vertex i has exactly 10
// out-edges, to uniformly random targets. From one snapshot of it the fixture also builds the CSR:
// std::vector<uint64_t> offsets (vertex id -> first entry) and std::vector<uint64_t> neighbours
// (8-byte neighbour ids, as wide as the ids Quiver returns). Thread t of n takes the vertex ids
// [limit * t / n, limit * (t + 1) / n).
//   BM_SweepCsr/threads:N     for v in range: for j in [offsets[v], offsets[v+1]): sum += nbr[j]
//   BM_SweepQuiver/threads:N  Snapshot::ScanEdges(begin, end, kOut): for each EdgeGroup handed
//                             out (leaf by leaf, arrays prefetched): for each entry: sum += neighbor()
//   BM_SweepQuiverPerVertex/threads:N  the same through the per-vertex API: for v in
//                             Snapshot::Vertices(begin, end): for each EdgeGroup of
//                             Snapshot::OutEdges(v): for each entry: sum += neighbor()
// One iteration is one sweep of the thread's range; wall-clock time; items_per_second is edges
// per second over all threads. Both Quiver sweeps also report csr_edges_per_s, the CSR rate for the
// same thread count measured once per process with std::threads before the Quiver sweep runs
// (median of 3 trials of >= 150 ms), and vs_csr = Quiver edges/s / that CSR rate (each thread
// contributes its own edges / its own sweep time, summed over the threads).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

using Clock = std::chrono::steady_clock;

const std::uint64_t kVertices = Scaled(1'000'000);
constexpr std::uint64_t kOutDegree = 10;
const std::uint64_t kEdges = kVertices * kOutDegree;

struct SweepFixture {
  std::unique_ptr<Graph> graph;
  Snapshot snapshot;
  std::uint64_t id_limit = 0;  // sweeps cover vertex ids [0, id_limit)
  // CSR: the out-neighbours of vertex id v are neighbors[offsets[v] .. offsets[v + 1]).
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint64_t> neighbors;
};

void BuildCsr(SweepFixture& f) {
  f.offsets.assign(f.id_limit + 1, 0);
  f.neighbors.reserve(f.snapshot.edge_count());
  for (std::uint64_t v = 0; v < f.id_limit; ++v) {
    f.offsets[v] = f.neighbors.size();
    for (EdgeGroup group : f.snapshot.OutEdges(VertexId(v))) {
      for (const EdgeEntry& e : group.entries) f.neighbors.push_back(e.neighbor().value());
    }
  }
  f.offsets[f.id_limit] = f.neighbors.size();
}

std::unique_ptr<SweepFixture> BuildSweep() {
  auto f = std::make_unique<SweepFixture>();
  f->graph = OpenVolatileGraph();
  const std::uint64_t first = AddVertices(*f->graph, kVertices, "Node").value();
  Rng rng(kSeed);
  std::uint64_t target_sum = 0;
  AddEdges(*f->graph, kEdges, "E", [&](std::uint64_t i) {
    const std::uint64_t target = first + rng.Uniform(kVertices);
    target_sum += target;
    return std::pair(VertexId(first + i / kOutDegree), VertexId(target));
  });
  f->snapshot = f->graph->GetSnapshot();
  f->id_limit = f->snapshot.vertex_id_limit();
  BuildCsr(*f);
  std::uint64_t csr_sum = 0;
  for (std::uint64_t n : f->neighbors) csr_sum += n;
  if (f->neighbors.size() != kEdges || csr_sum != target_sum) {
    Die("sweep fixture", InternalError("the snapshot's out-edges differ from the edges written"));
  }
  return f;
}

const SweepFixture& Sweep() {
  static const std::unique_ptr<SweepFixture> fixture = BuildSweep();
  return *fixture;
}

std::pair<std::uint64_t, std::uint64_t> ThreadRange(std::uint64_t limit, int thread, int threads) {
  const auto t = static_cast<std::uint64_t>(thread), n = static_cast<std::uint64_t>(threads);
  return {limit * t / n, limit * (t + 1) / n};
}

std::uint64_t SweepCsr(const SweepFixture& f, std::uint64_t begin, std::uint64_t end, std::uint64_t* edges) {
  std::uint64_t sum = 0;
  for (std::uint64_t v = begin; v < end; ++v) {
    for (std::uint64_t j = f.offsets[v]; j < f.offsets[v + 1]; ++j) sum += f.neighbors[j];
  }
  *edges += f.offsets[end] - f.offsets[begin];
  return sum;
}

std::uint64_t SweepQuiver(const Snapshot& snapshot, std::uint64_t begin, std::uint64_t end,
                          std::uint64_t* edges) {
  std::uint64_t sum = 0, n = 0;
  snapshot.ScanEdges(begin, end, Direction::kOut, [&](VertexId, const EdgeGroup& group) {
    n += group.entries.size();
    for (const EdgeEntry& e : group.entries) sum += e.neighbor().value();
  });
  *edges += n;
  return sum;
}

std::uint64_t SweepQuiverPerVertex(const Snapshot& snapshot, std::uint64_t begin, std::uint64_t end,
                                   std::uint64_t* edges) {
  std::uint64_t sum = 0, n = 0;
  for (VertexId v : snapshot.Vertices(begin, end)) {
    for (EdgeGroup group : snapshot.OutEdges(v)) {
      n += group.entries.size();
      for (const EdgeEntry& e : group.entries) sum += e.neighbor().value();
    }
  }
  *edges += n;
  return sum;
}

// CSR edges per second with `threads` std::threads and the benchmarks' split: the median of 3
// trials in which every thread sweeps its range repeatedly for at least 150 ms. Shorter trials
// understate the 2-thread rate: a new thread often starts on its parent's core and is moved to
// an idle one only milliseconds later.
constexpr std::chrono::milliseconds kCsrTrialTime(150);

double MeasureCsrRate(const SweepFixture& f, int threads) {
  std::vector<double> rates;
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<std::uint64_t> edges(static_cast<std::size_t>(threads), 0);
    const Clock::time_point t0 = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&f, &edges, t, threads, t0] {
        const auto [begin, end] = ThreadRange(f.id_limit, t, threads);
        do {
          Consume(SweepCsr(f, begin, end, &edges[static_cast<std::size_t>(t)]));
        } while (Clock::now() - t0 < kCsrTrialTime);
      });
    }
    for (std::thread& th : pool) th.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::uint64_t total = 0;
    for (std::uint64_t e : edges) total += e;
    rates.push_back(static_cast<double>(total) / seconds);
  }
  std::nth_element(rates.begin(), rates.begin() + 1, rates.end());
  return rates[1];
}

double CsrReferenceRate(int threads) {
  static std::mutex mu;
  static std::map<int, double> rates;
  std::lock_guard<std::mutex> lock(mu);
  auto it = rates.find(threads);
  if (it == rates.end()) it = rates.emplace(threads, MeasureCsrRate(Sweep(), threads)).first;
  return it->second;
}

void BM_SweepCsr(benchmark::State& state) {
  const SweepFixture& f = Sweep();
  const auto [begin, end] = ThreadRange(f.id_limit, state.thread_index(), state.threads());
  std::uint64_t edges = 0;
  for (auto _ : state) {
    std::uint64_t sum = SweepCsr(f, begin, end, &edges);
    Consume(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(edges));
}
BENCHMARK(BM_SweepCsr)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

using QuiverSweepFn = std::uint64_t (*)(const Snapshot&, std::uint64_t, std::uint64_t, std::uint64_t*);

void RunQuiverSweep(benchmark::State& state, QuiverSweepFn sweep) {
  const SweepFixture& f = Sweep();
  const double csr_rate = CsrReferenceRate(state.threads());
  const auto [begin, end] = ThreadRange(f.id_limit, state.thread_index(), state.threads());
  std::uint64_t edges = 0;
  Clock::duration busy{};
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    std::uint64_t sum = sweep(f.snapshot, begin, end, &edges);
    Consume(sum);
    busy += Clock::now() - t0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(edges));
  const double thread_rate = static_cast<double>(edges) / std::chrono::duration<double>(busy).count();
  state.counters["vs_csr"] = thread_rate / csr_rate;  // summed over threads
  state.counters["csr_edges_per_s"] = benchmark::Counter(csr_rate, benchmark::Counter::kAvgThreads);
}

void BM_SweepQuiver(benchmark::State& state) { RunQuiverSweep(state, &SweepQuiver); }
BENCHMARK(BM_SweepQuiver)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_SweepQuiverPerVertex(benchmark::State& state) { RunQuiverSweep(state, &SweepQuiverPerVertex); }
BENCHMARK(BM_SweepQuiverPerVertex)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace quiver::bench
