// Out-edges of a vertex with 100 edges: Snapshot::OutEdges(v, type) on a random vertex, summing
// the 100 neighbour ids, the inner step of every traversal.
//
// Target: p95 <= 300 ns per vertex (100 entries).
// How: a volatile graph of 10,000 vertices, each with exactly 100 out-edges of type "LINK" to
// uniformly random targets among them (1,000,000 edges, seed kSeed), built once per process in
// batches of 100,000 edges; the out-entries alone are 12 MB, so a random vertex's entries are
// rarely in L1/L2. One snapshot is held for the run. Each operation draws a vertex with
// SplitMix64, looks up its group and sums neighbor() over the span, consuming the sum with
// Consume (bench_util.h). The reported time is the mean over back-to-back operations; p50_ns/p95_ns/p99_ns
// time each operation on its own (method in bench_util.h, LatencyRecorder).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

constexpr std::uint64_t kVertices = 10'000;
constexpr std::uint64_t kDegree = 100;

struct OutEdgesFixture {
  std::unique_ptr<Graph> graph;
  Snapshot snapshot;
  VertexId first;
  EdgeTypeId type;
};

const OutEdgesFixture& OutEdgesGraph() {
  static const OutEdgesFixture fixture = [] {
    OutEdgesFixture f;
    f.graph = OpenVolatileGraph();
    f.first = AddVertices(*f.graph, kVertices, "Node");
    const std::uint64_t first = f.first.value();
    Rng rng(kSeed);
    AddEdges(*f.graph, kVertices * kDegree, "LINK", [&](std::uint64_t i) {
      return std::pair(VertexId(first + i / kDegree), VertexId(first + rng.Uniform(kVertices)));
    });
    f.snapshot = f.graph->GetSnapshot();
    std::optional<EdgeTypeId> type = f.snapshot.FindEdgeType("LINK");
    if (!type) Die("FindEdgeType(LINK)", NotFoundError("edge type missing"));
    f.type = *type;
    return f;
  }();
  return fixture;
}

std::uint64_t SumNeighbors(const Snapshot& snapshot, VertexId v, EdgeTypeId type) {
  std::uint64_t sum = 0;
  for (const EdgeEntry& e : snapshot.OutEdges(v, type)) sum += e.neighbor().value();
  return sum;
}

bool DegreesAreCorrect(const OutEdgesFixture& f) {
  for (std::uint64_t i = 0; i < kVertices; i += 97) {
    if (f.snapshot.OutEdges(VertexId(f.first.value() + i), f.type).size() != kDegree) return false;
  }
  return true;
}

void BM_OutEdges100(benchmark::State& state) {
  const OutEdgesFixture& f = OutEdgesGraph();
  if (!DegreesAreCorrect(f)) {
    state.SkipWithError("OutEdges returned a wrong number of entries");
    return;
  }
  const std::uint64_t first = f.first.value();
  Rng rng(kSeed + 1);
  for (auto _ : state) {
    std::uint64_t sum = SumNeighbors(f.snapshot, VertexId(first + rng.Uniform(kVertices)), f.type);
    Consume(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kDegree));  // edges/s
  MeasureLatency(
      state, [&] { return VertexId(first + rng.Uniform(kVertices)); },
      [&](VertexId v) {
        std::uint64_t sum = SumNeighbors(f.snapshot, v, f.type);
        Consume(sum);
      });
}
BENCHMARK(BM_OutEdges100);

}  // namespace
}  // namespace quiver::bench
