// 2-hop expansion: from a random start vertex, visit its out-neighbours, then each of their
// out-neighbours, summing the neighbour ids of every entry touched (friends-of-friends).
//
// Target: p95 <= 10 us for an expansion touching 800 edges.
// How: two shapes, each a volatile graph built once per process (seed kSeed, batches of 100,000):
//   /8/99   2,048 start vertices, each with 8 out-edges to its own 8 middle vertices, each middle
//           with 99 out-edges to uniformly random vertices of a 100,000-vertex leaf pool:
//           8 + 8 * 99 = 800 edges touched, 9 adjacency lookups (the target's shape);
//   /28/28  the same with 28 middles of 28 edges each: 28 + 28 * 28 = 812 edges touched,
//           29 adjacency lookups (the same work spread over 3x more groups).
// One edge type "LINK"; starts and middles are distinct, so an expansion shares no group with
// another one and the middles' entries (~20 MB per shape) do not stay in cache. Each operation
// draws a start vertex with SplitMix64 from the pool; time is the mean of back-to-back
// expansions; p50_ns/p95_ns/p99_ns time each expansion on its own (bench_util.h).
// items_per_second counts edges touched.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

constexpr std::uint64_t kStarts = 2'048;
const std::uint64_t kLeaves = Scaled(100'000);

struct TwoHopFixture {
  std::unique_ptr<Graph> graph;
  Snapshot snapshot;
  VertexId first;  // starts are [first, first + kStarts)
  EdgeTypeId type;
};

// Vertex layout: starts, then the middles of start s at kStarts + s * fanout1 + j, then leaves.
std::unique_ptr<TwoHopFixture> BuildTwoHop(std::uint64_t fanout1, std::uint64_t fanout2) {
  auto f = std::make_unique<TwoHopFixture>();
  f->graph = OpenVolatileGraph();
  const std::uint64_t middles = kStarts * fanout1;
  const std::uint64_t first = AddVertices(*f->graph, kStarts + middles + kLeaves, "Node").value();
  f->first = VertexId(first);
  Rng rng(kSeed);
  AddEdges(*f->graph, middles + middles * fanout2, "LINK", [&](std::uint64_t i) {
    if (i < middles) return std::pair(VertexId(first + i / fanout1), VertexId(first + kStarts + i));
    const std::uint64_t middle = (i - middles) / fanout2;
    return std::pair(VertexId(first + kStarts + middle),
                     VertexId(first + kStarts + middles + rng.Uniform(kLeaves)));
  });
  f->snapshot = f->graph->GetSnapshot();
  std::optional<EdgeTypeId> type = f->snapshot.FindEdgeType("LINK");
  if (!type) Die("FindEdgeType(LINK)", NotFoundError("edge type missing"));
  f->type = *type;
  return f;
}

const TwoHopFixture& TwoHopGraph(std::uint64_t fanout1, std::uint64_t fanout2) {
  static std::mutex mu;
  static std::map<std::pair<std::uint64_t, std::uint64_t>, std::unique_ptr<TwoHopFixture>> fixtures;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<TwoHopFixture>& f = fixtures[{fanout1, fanout2}];
  if (!f) f = BuildTwoHop(fanout1, fanout2);
  return *f;
}

// Returns the sum of the neighbour ids of every entry touched; adds the entries to *edges.
std::uint64_t ExpandTwoHops(const Snapshot& snapshot, VertexId start, EdgeTypeId type, std::uint64_t* edges) {
  std::uint64_t sum = 0;
  std::span<const EdgeEntry> hop1 = snapshot.OutEdges(start, type);
  *edges += hop1.size();
  for (const EdgeEntry& e1 : hop1) {
    sum += e1.neighbor().value();
    std::span<const EdgeEntry> hop2 = snapshot.OutEdges(e1.neighbor(), type);
    *edges += hop2.size();
    for (const EdgeEntry& e2 : hop2) sum += e2.neighbor().value();
  }
  return sum;
}

void BM_TwoHop(benchmark::State& state) {
  const auto fanout1 = static_cast<std::uint64_t>(state.range(0));
  const auto fanout2 = static_cast<std::uint64_t>(state.range(1));
  const TwoHopFixture& f = TwoHopGraph(fanout1, fanout2);
  const std::uint64_t first = f.first.value();
  std::uint64_t edges = 0;
  ExpandTwoHops(f.snapshot, f.first, f.type, &edges);
  if (edges != fanout1 + fanout1 * fanout2) {
    state.SkipWithError("2-hop expansion touched a wrong number of edges");
    return;
  }
  Rng rng(kSeed + 1);
  edges = 0;
  for (auto _ : state) {
    std::uint64_t sum = ExpandTwoHops(f.snapshot, VertexId(first + rng.Uniform(kStarts)), f.type, &edges);
    Consume(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(edges));
  MeasureLatency(
      state, [&] { return VertexId(first + rng.Uniform(kStarts)); },
      [&](VertexId start) {
        std::uint64_t touched = 0;
        std::uint64_t sum = ExpandTwoHops(f.snapshot, start, f.type, &touched);
        Consume(sum);
        Consume(touched);
      });
}
BENCHMARK(BM_TwoHop)->ArgNames({"fanout1", "fanout2"})->Args({8, 99})->Args({28, 28});

}  // namespace
}  // namespace quiver::bench
