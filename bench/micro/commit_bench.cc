// Volatile commits: what Graph::Write costs a producer when there is no fsync to amortise, so
// the figures are the writer's own overhead (queue hand-off, validation, apply, publication).
//
// BM_CommitSingleVertex/threads:1 and /threads:8 — each iteration builds a WriteBatch holding one
//   AddVertex("Node") (no properties) and waits for Graph::Write to commit it. Producers share one
//   graph that keeps growing across runs. Wall-clock time; items_per_second is commits per second
//   over all producers. Targets: >= 150K/s with 1 producer, >= 500K/s with 8 producers (the
//   writer groups the batches that queue up behind the one it is applying).
// BM_CommitBatch1000/int_props:0 and /int_props:1 — each iteration builds one batch of 1,000
//   AddVertex("Node") calls, without properties (0) or with one int64 property "rank" (1), and
//   commits it with Graph::Write into a graph made fresh for each run. Batch building is inside
//   the timed loop, as an application pays it; the counters build_ns_per_vertex and
//   write_ns_per_vertex split the time (steady_clock around each half of an iteration).
//   items_per_second is vertices per second. Target: >= 5M vertices/s.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

constexpr int kBatchVertices = 1'000;

Graph& SingleCommitGraph() {
  static const std::unique_ptr<Graph> graph = OpenVolatileGraph();
  return *graph;
}

void BM_CommitSingleVertex(benchmark::State& state) {
  Graph& graph = SingleCommitGraph();
  for (auto _ : state) {
    WriteBatch batch;
    batch.AddVertex("Node");
    Result<CommitInfo> info = graph.Write(std::move(batch));
    if (!info.ok()) {
      state.SkipWithError("Graph::Write failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CommitSingleVertex)->Threads(1)->Threads(8)->UseRealTime();

WriteBatch BatchOf1000(bool with_property, std::int64_t base) {
  WriteBatch batch;
  for (int i = 0; i < kBatchVertices; ++i) {
    if (with_property) {
      batch.AddVertex("Node", {{"rank", base + i}});
    } else {
      batch.AddVertex("Node");
    }
  }
  return batch;
}

void BM_CommitBatch1000(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const bool with_property = state.range(0) != 0;
  std::unique_ptr<Graph> graph = OpenVolatileGraph();  // closed after the loop, untimed
  Clock::duration build{}, write{};
  std::int64_t base = 0;
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    WriteBatch batch = BatchOf1000(with_property, base);
    const Clock::time_point t1 = Clock::now();
    Result<CommitInfo> info = graph->Write(std::move(batch));
    write += Clock::now() - t1;
    build += t1 - t0;
    if (!info.ok() || info->vertices.size() != kBatchVertices) {
      state.SkipWithError("Graph::Write failed");
      break;
    }
    base += kBatchVertices;
  }
  const double vertices = static_cast<double>(state.iterations()) * kBatchVertices;
  state.SetItemsProcessed(state.iterations() * kBatchVertices);
  state.counters["build_ns_per_vertex"] = std::chrono::duration<double, std::nano>(build).count() / vertices;
  state.counters["write_ns_per_vertex"] = std::chrono::duration<double, std::nano>(write).count() / vertices;
}
BENCHMARK(BM_CommitBatch1000)
    ->ArgName("int_props")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace quiver::bench
