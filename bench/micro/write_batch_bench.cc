// Recording a WriteBatch: what AddEdge costs an application before anything reaches the writer.
// No graph is opened; only recording is timed.
//
// Each iteration records one batch of 100,000 AddEdge("KNOWS", VertexId, VertexId) calls without
// properties, with endpoint ids drawn once (fixed seed) before the timed loop, so the loop holds
// nothing but the recording. items_per_second is edges recorded per second.
//
// BM_RecordEdgesFresh — a new WriteBatch each iteration, grown as it fills (no reserve), and
//   destroyed inside the loop: a batch built, moved into Graph::Write and dropped by the writer,
//   with the page faults of its fresh buffers.
// BM_RecordEdgesReserved — the same, with reserve(100'000) first: one allocation, no regrowth.
// BM_RecordEdgesReused — one batch, Clear()ed at the start of each iteration: its buffers stay
//   allocated and resident (docs/impl.md, "Recording a batch").
// BM_RecordEdgesReusedAndCopied — the reused batch, then copied as Graph::Write(batch) copies an
//   lvalue (the copy destroyed inside the loop): what reuse costs when the batch is written by copy.
//
// Target: >= 30M edges/s reused (docs/impl.md predicts it from the 32-byte op).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench_util.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

struct Endpoints {
  std::vector<VertexId> source;
  std::vector<VertexId> target;
};

const Endpoints& EdgeEndpoints() {
  static const Endpoints endpoints = [] {
    const std::uint64_t n = Scaled(100'000);
    Endpoints e;
    Rng rng(kSeed);
    for (std::uint64_t i = 0; i < n; ++i) {
      e.source.push_back(VertexId(rng.Uniform(1'000'000)));
      e.target.push_back(VertexId(rng.Uniform(1'000'000)));
    }
    return e;
  }();
  return endpoints;
}

void Record(const Endpoints& e, WriteBatch& batch) {
  for (std::size_t i = 0; i < e.source.size(); ++i) batch.AddEdge("KNOWS", e.source[i], e.target[i]);
}

void SetRate(benchmark::State& state, const Endpoints& e) {
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(e.source.size()));
}

void BM_RecordEdgesFresh(benchmark::State& state) {
  const Endpoints& e = EdgeEndpoints();
  for (auto _ : state) {
    WriteBatch batch;
    Record(e, batch);
    benchmark::DoNotOptimize(batch.size());
  }
  SetRate(state, e);
}
BENCHMARK(BM_RecordEdgesFresh);

void BM_RecordEdgesReused(benchmark::State& state) {
  const Endpoints& e = EdgeEndpoints();
  WriteBatch batch;
  for (auto _ : state) {
    batch.Clear();
    Record(e, batch);
    benchmark::DoNotOptimize(batch.size());
  }
  SetRate(state, e);
}
BENCHMARK(BM_RecordEdgesReused);

void BM_RecordEdgesReserved(benchmark::State& state) {
  const Endpoints& e = EdgeEndpoints();
  for (auto _ : state) {
    WriteBatch batch;
    batch.reserve(e.source.size());
    Record(e, batch);
    benchmark::DoNotOptimize(batch.size());
  }
  SetRate(state, e);
}
BENCHMARK(BM_RecordEdgesReserved);

void BM_RecordEdgesReusedAndCopied(benchmark::State& state) {
  const Endpoints& e = EdgeEndpoints();
  WriteBatch batch;
  for (auto _ : state) {
    batch.Clear();
    Record(e, batch);
    WriteBatch copy(batch);  // what Graph::Write(batch) makes of an lvalue
    benchmark::DoNotOptimize(copy.size());
  }
  SetRate(state, e);
}
BENCHMARK(BM_RecordEdgesReusedAndCopied);

}  // namespace
}  // namespace quiver::bench
