// Vertex lookup by id: Snapshot::LabelOf on uniformly random ids of a 1M-vertex graph, the
// per-vertex cost under every point read (a miss in the element table, then the label).
//
// Target: p95 <= 100 ns per lookup.
// How: a volatile graph of 1,000,000 vertices labelled "Node" (no properties, no edges), built
// once per process in batches of 100,000; one snapshot held for the whole run. Each operation
// draws an id with SplitMix64 (a few ns, not a memory access) and consumes the
// std::optional<LabelId> (its label id, or ~0 for nullopt) with Consume (bench_util.h). The reported time is
// the mean over back-to-back lookups (which the CPU may overlap); p50_ns/p95_ns/p99_ns come from a second
// pass that times each lookup on its own (method in bench_util.h, LatencyRecorder).
// BM_RawArrayLookup/slot_bytes:N is the machine's floor for the same pattern, measured the same
// way: one 8-byte load from a random slot of a plain array of 1M slots of N bytes. With N = 8
// (8 MB) the array fits this machine's last-level cache, the least any engine could touch; with
// N = 64 (64 MB) every lookup misses to DRAM and, with 4 KiB pages, usually the TLB as well,
// which is what a table of ~48-byte vertex slots costs at 1M vertices.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

const std::uint64_t kVertices = Scaled(1'000'000);
constexpr LabelId kNoLabel(~std::uint32_t{0});  // stands in for nullopt when consuming a result

struct LookupFixture {
  std::unique_ptr<Graph> graph;
  Snapshot snapshot;
  VertexId first;
  LabelId label;
};

const LookupFixture& Lookup() {
  static const LookupFixture fixture = [] {
    LookupFixture f;
    f.graph = OpenVolatileGraph();
    f.first = AddVertices(*f.graph, kVertices, "Node");
    f.snapshot = f.graph->GetSnapshot();
    std::optional<LabelId> label = f.snapshot.FindLabel("Node");
    if (!label) Die("FindLabel(Node)", NotFoundError("label missing"));
    f.label = *label;
    return f;
  }();
  return fixture;
}

// The engine must return the right answer before its speed means anything.
bool LookupsAreCorrect(const LookupFixture& f) {
  Rng rng(kSeed + 1);
  for (int i = 0; i < 1'000; ++i) {
    const VertexId v(f.first.value() + rng.Uniform(kVertices));
    if (f.snapshot.LabelOf(v) != f.label) return false;
  }
  return !f.snapshot.LabelOf(VertexId(f.first.value() + kVertices)).has_value();
}

void BM_VertexLookup(benchmark::State& state) {
  const LookupFixture& f = Lookup();
  if (!LookupsAreCorrect(f)) {
    state.SkipWithError("LabelOf returned a wrong answer");
    return;
  }
  const Snapshot& snapshot = f.snapshot;
  const std::uint64_t first = f.first.value();
  Rng rng(kSeed);
  for (auto _ : state) {
    std::optional<LabelId> label = snapshot.LabelOf(VertexId(first + rng.Uniform(kVertices)));
    Consume(label.value_or(kNoLabel).value());
  }
  state.SetItemsProcessed(state.iterations());
  MeasureLatency(
      state, [&] { return VertexId(first + rng.Uniform(kVertices)); },
      [&](VertexId v) {
        std::optional<LabelId> label = snapshot.LabelOf(v);
        Consume(label.value_or(kNoLabel).value());
      });
}
BENCHMARK(BM_VertexLookup);

void BM_RawArrayLookup(benchmark::State& state) {
  const auto stride = static_cast<std::uint64_t>(state.range(0)) / sizeof(std::uint64_t);
  const std::vector<std::uint64_t> slots(kVertices * stride, 1);
  Rng rng(kSeed);
  for (auto _ : state) {
    Consume(slots[rng.Uniform(kVertices) * stride]);
  }
  state.SetItemsProcessed(state.iterations());
  MeasureLatency(
      state, [&] { return rng.Uniform(kVertices) * stride; }, [&](std::uint64_t i) { Consume(slots[i]); });
}
BENCHMARK(BM_RawArrayLookup)->ArgName("slot_bytes")->Arg(8)->Arg(64);

}  // namespace
}  // namespace quiver::bench
