// Committing edges with random endpoints: what the writer costs per edge once batches are
// recorded. The capacity bench's `randomEdgeInserts` row in a form a profiler can be pointed at.
//
// BM_RandomEdgeInserts — a volatile graph of 1M vertices (one label), then 10M edges of one type
//   with uniform random source and target, in batches of 100,000 AddEdge, each a synchronous
//   Write. The batches are recorded before the timed loop, so only Write is timed; the graph is
//   opened and its vertices committed untimed in each iteration. items_per_second is edges
//   committed per second.
//
// Target: >= 5M edges/s (issue "Engine II", batch edge inserts with random targets).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

constexpr std::uint64_t kBatchEdges = 100'000;

struct Load {
  std::uint64_t vertices = 0;
  std::uint64_t edges = 0;
  std::vector<std::uint32_t> source;
  std::vector<std::uint32_t> target;
};

const Load& RandomLoad() {
  static const Load load = [] {
    Load l;
    l.vertices = Scaled(1'000'000);
    l.edges = Scaled(10'000'000);
    Rng rng(kSeed);
    for (std::uint64_t i = 0; i < l.edges; ++i) {
      l.source.push_back(static_cast<std::uint32_t>(rng.Uniform(l.vertices)));
      l.target.push_back(static_cast<std::uint32_t>(rng.Uniform(l.vertices)));
    }
    return l;
  }();
  return load;
}

void BM_RandomEdgeInserts(benchmark::State& state) {
  const Load& l = RandomLoad();
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Graph> graph = OpenVolatileGraph();
    const std::uint64_t base = AddVertices(*graph, l.vertices, "V").value();
    std::vector<WriteBatch> batches;
    for (std::uint64_t i = 0; i < l.edges;) {
      WriteBatch batch;
      const std::uint64_t end = std::min(l.edges, i + kBatchEdges);
      batch.reserve(end - i);
      for (; i < end; ++i) batch.AddEdge("E", VertexId(base + l.source[i]), VertexId(base + l.target[i]));
      batches.push_back(std::move(batch));
    }
    state.ResumeTiming();
    for (WriteBatch& batch : batches) ValueOrDie(graph->Write(std::move(batch)), "edge batch");
    state.PauseTiming();
    graph.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(l.edges));
}
BENCHMARK(BM_RandomEdgeInserts)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace quiver::bench
