// Memory per element: the bytes a bare vertex and an edge cost in a volatile graph.
//
// Targets: <= 48 B per bare vertex; <= 48 B per edge at average degree 10.
// How: each benchmark runs once (Iterations(1)) on a graph of its own, built in batches of
// 100,000 with one batch in flight; no snapshot is held when memory is read.
//   BM_MemoryPerVertex  1,000,000 vertices labelled "Node", no properties, no edges.
//                       bytes_per_vertex = delta of MemoryStats::allocated_bytes / 1M.
//   BM_MemoryPerEdge    200,000 vertices, then 2,000,000 edges of one type "E": vertex i has 10
//                       out-edges to uniformly random targets (seed kSeed).
//                       bytes_per_edge = delta of allocated_bytes across the edge load / 2M: both
//                       adjacency directions, the edge record and the arrays' spare capacity.
// allocated_bytes counts the allocator's block sizes (Graph::GetMemoryStats), including blocks
// retired by newer versions and not yet freed; live_bytes_per_* excludes those
// (allocated - retired). rss_bytes_per_* is the delta of the process's resident set (VmRSS, the
// resident field of /proc/self/statm, in bytes) over the same interval: a cross-check only, since
// the allocator may reuse memory freed by earlier benchmarks or keep freed pages resident.
// items_per_second is the bulk-load rate (elements per second, one batch in flight).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

struct MemoryReading {
  double allocated = 0;
  double live = 0;  // allocated - retired
  double resident = 0;
};

MemoryReading ReadMemory(const Graph& graph) {
  const MemoryStats stats = graph.GetMemoryStats();
  return {static_cast<double>(stats.allocated_bytes),
          static_cast<double>(stats.allocated_bytes) - static_cast<double>(stats.retired_bytes),
          static_cast<double>(ResidentBytes())};
}

// Sets <what>_per_<unit> counters for the growth from `before` to `after` over `count` elements.
void ReportPerElement(benchmark::State& state, const char* unit, const MemoryReading& before,
                      const MemoryReading& after, std::uint64_t count) {
  const auto n = static_cast<double>(count);
  state.counters[std::string("bytes_per_") + unit] = (after.allocated - before.allocated) / n;
  state.counters[std::string("live_bytes_per_") + unit] = (after.live - before.live) / n;
  state.counters[std::string("rss_bytes_per_") + unit] = (after.resident - before.resident) / n;
  state.counters["retired_bytes"] = after.allocated - after.live;
}

void BM_MemoryPerVertex(benchmark::State& state) {
  const std::uint64_t kVertices = Scaled(1'000'000);
  for (auto _ : state) {
    std::unique_ptr<Graph> graph = OpenVolatileGraph();
    const MemoryReading before = ReadMemory(*graph);
    AddVertices(*graph, kVertices, "Node");
    ReportPerElement(state, "vertex", before, ReadMemory(*graph), kVertices);
    state.SetItemsProcessed(kVertices);
    state.PauseTiming();  // closing and freeing the graph is not part of the load
    graph.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_MemoryPerVertex)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_MemoryPerEdge(benchmark::State& state) {
  const std::uint64_t kVertices = Scaled(200'000);
  constexpr std::uint64_t kOutDegree = 10;
  const std::uint64_t kEdges = kVertices * kOutDegree;
  for (auto _ : state) {
    std::unique_ptr<Graph> graph = OpenVolatileGraph();
    state.PauseTiming();  // the timed part is the edge load
    const std::uint64_t first = AddVertices(*graph, kVertices, "Node").value();
    state.ResumeTiming();
    const MemoryReading before = ReadMemory(*graph);
    Rng rng(kSeed);
    AddEdges(*graph, kEdges, "E", [&](std::uint64_t i) {
      return std::pair(VertexId(first + i / kOutDegree), VertexId(first + rng.Uniform(kVertices)));
    });
    ReportPerElement(state, "edge", before, ReadMemory(*graph), kEdges);
    state.SetItemsProcessed(kEdges);
    state.PauseTiming();
    graph.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_MemoryPerEdge)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace quiver::bench
