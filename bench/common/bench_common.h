// What both benches share (bench/micro, Google Benchmark; bench/capacity, quiver-bench):
// deterministic random numbers, building graphs through the public API with one batch in flight,
// and the tick counter single operations are timed with. Header-only; the public API and the
// standard library only, so the benches measure what an application would see.
#ifndef QUIVER_BENCH_COMMON_BENCH_COMMON_H_
#define QUIVER_BENCH_COMMON_BENCH_COMMON_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <string_view>
#include <utility>

#include "quiver/quiver.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace quiver::bench {

// Operations per build batch: large enough to amortise a commit, far below
// Limits::max_batch_ops, small enough to keep one batch in flight while the next is built.
inline constexpr std::uint64_t kBuildBatchOps = 100'000;

// A bench has no recovery path: a failed build or measurement exits with the status.
[[noreturn]] inline void Die(std::string_view what, const Status& status) {
  std::fprintf(stderr, "quiver bench: %.*s failed: %s\n", static_cast<int>(what.size()), what.data(),
               status.ToString().c_str());
  std::exit(1);
}

template <typename T>
T ValueOrDie(Result<T> result, std::string_view what) {
  if (!result.ok()) Die(what, result.status());
  return std::move(result).value();
}

// SplitMix64: a few instructions per draw, identical on every platform (unlike the standard
// distributions), so a seeded graph is the same graph on every machine and every run.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) for n < 2^32, by multiply-shift (no division in timed loops).
  std::uint64_t Uniform(std::uint64_t n) { return ((Next() >> 32) * n) >> 32; }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

// Commits batches with WriteAsync, keeping one in flight, so building batch k+1 on this thread
// overlaps the writer applying batch k.
class PipelinedWriter {
 public:
  explicit PipelinedWriter(Graph& graph) : graph_(graph) {}
  PipelinedWriter(const PipelinedWriter&) = delete;
  PipelinedWriter& operator=(const PipelinedWriter&) = delete;
  ~PipelinedWriter() { Drain(); }

  // Queues `batch`; returns the result of the batch queued before it, if any.
  std::optional<CommitInfo> Submit(WriteBatch batch) {
    std::optional<CommitInfo> previous = Drain();
    pending_ = graph_.WriteAsync(std::move(batch));
    return previous;
  }

  // Waits for the batch in flight, if any, and returns its result.
  std::optional<CommitInfo> Drain() {
    if (!pending_.valid()) return std::nullopt;
    return ValueOrDie(pending_.get(), "graph build batch");
  }

 private:
  Graph& graph_;
  std::future<Result<CommitInfo>> pending_;
};

// Adds `count` vertices labelled `label` and returns the first one's id. Dies unless the ids are
// dense (first, first+1, ...), which ids.h promises for vertices added in commit order: benches
// draw random vertices as `first + Uniform(count)` rather than indexing an id array, which would
// add a cache miss of its own to every measured operation.
inline VertexId AddVertices(Graph& graph, std::uint64_t count, std::string_view label) {
  std::optional<std::uint64_t> first;
  std::uint64_t next = 0;
  auto check_dense = [&](const std::optional<CommitInfo>& info) {
    if (!info) return;
    for (VertexId v : info->vertices) {
      if (!first) first = next = v.value();
      if (v.value() != next++) Die("AddVertices", InternalError("vertex ids are not dense"));
    }
  };
  PipelinedWriter writer(graph);
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(kBuildBatchOps, count - done);
    WriteBatch batch;
    for (std::uint64_t i = 0; i < n; ++i) batch.AddVertex(label);
    done += n;
    check_dense(writer.Submit(std::move(batch)));
  }
  check_dense(writer.Drain());
  if (!first) Die("AddVertices", InvalidArgumentError("no vertices"));
  return VertexId(*first);
}

// Adds `count` edges of `type`; edge i runs endpoints(i).first -> endpoints(i).second (vertex
// ids, as VertexId or raw integers). `endpoints` is called once per edge, in index order, so it
// may draw from an Rng deterministically.
template <typename EndpointsFn>
void AddEdges(Graph& graph, std::uint64_t count, std::string_view type, EndpointsFn&& endpoints,
              std::uint64_t batch_ops = kBuildBatchOps) {
  PipelinedWriter writer(graph);
  for (std::uint64_t i = 0; i < count;) {
    const std::uint64_t end = std::min(count, i + batch_ops);
    WriteBatch batch;
    for (; i < end; ++i) {
      const auto [source, target] = endpoints(i);
      batch.AddEdge(type, VertexId(source), VertexId(target));
    }
    writer.Submit(std::move(batch));
  }
  writer.Drain();
}

// ---------------------------------------------------------------------------------------------
// Timing single operations.
//
// Each operation is bracketed by two reads of a tick counter. On x86-64 that is RDTSCP followed
// by LFENCE (RDTSCP waits for earlier instructions; LFENCE keeps later ones from starting early),
// converted to nanoseconds by a 20 ms calibration against std::chrono::steady_clock (the TSC is
// invariant on the machines we run on); elsewhere it is steady_clock itself.

inline std::uint64_t ReadTicks() {
#if defined(__x86_64__)
  unsigned int aux;
  const std::uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// Nanoseconds per tick, calibrated once per process.
inline double NanosecondsPerTick() {
  static const double ns_per_tick = [] {
#if defined(__x86_64__)
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t0 = Clock::now();
    const std::uint64_t c0 = ReadTicks();
    while (Clock::now() - t0 < std::chrono::milliseconds(20)) {
    }
    const std::uint64_t c1 = ReadTicks();
    const Clock::time_point t1 = Clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(c1 - c0);
#else
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::duration(1)).count();
#endif
  }();
  return ns_per_tick;
}

// Makes the compiler materialise `value` in a register, so the loads producing it happen inside
// the measurement. benchmark::DoNotOptimize (1.7) is not enough for a plain load under GCC: its
// "+m,r" operand may be satisfied by the memory the value was loaded from, and the load vanishes.
template <typename T>
inline void Consume(T value) {
  __asm__ __volatile__("" : : "r"(value));
}

// Makes the compiler forget what it knows of `value` (as if something had changed it), so calls
// that take it in a loop cannot be merged or hoisted out of the loop: each one runs.
template <typename T>
inline void Launder(T& value) {
  __asm__ __volatile__("" : "+r"(value));
}

// Keeps the compiler from moving memory accesses across this point.
inline void ClobberMemory() { __asm__ __volatile__("" : : : "memory"); }

}  // namespace quiver::bench

#endif  // QUIVER_BENCH_COMMON_BENCH_COMMON_H_
