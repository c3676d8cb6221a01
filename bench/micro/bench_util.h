// Shared helpers for Quiver's micro-benchmarks (bench/micro/*_bench.cc): building deterministic
// fixture graphs through the public API, a per-operation latency recorder that publishes
// p50/p95/p99 counters, and the process's resident set size. Everything is inline, so a fixture
// a bench file keeps in a function-local static is built once per process however many
// benchmarks (and threads) use it. Only the public API, the standard library and Google
// Benchmark are used: the benches measure what an application would see.
#ifndef QUIVER_BENCH_MICRO_BENCH_UTIL_H_
#define QUIVER_BENCH_MICRO_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "quiver/quiver.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace quiver::bench {

// Operations per fixture batch: large enough to amortise a commit, small enough to stay far below
// Limits::max_batch_ops and to keep one batch in flight while the next one is built.
inline constexpr std::uint64_t kBuildBatchOps = 100'000;

// Fixed seed for every fixture, so every run measures the same graphs.
inline constexpr std::uint64_t kSeed = 0x5157'4552'0001ULL;

// ---------------------------------------------------------------------------------------------
// Errors. A benchmark has no recovery path: a failing fixture build aborts with the status.

[[noreturn]] inline void Die(std::string_view what, const Status& status) {
  std::fprintf(stderr, "quiver bench: %.*s failed: %s\n", static_cast<int>(what.size()), what.data(),
               status.ToString().c_str());
  std::abort();
}

inline void CheckOk(const Status& status, std::string_view what) {
  if (!status.ok()) Die(what, status);
}

template <typename T>
T ValueOrDie(Result<T> result, std::string_view what) {
  if (!result.ok()) Die(what, result.status());
  return std::move(result).value();
}

// A volatile graph with default options (OpenInMemory forces Durability::kVolatile).
inline std::unique_ptr<Graph> OpenVolatileGraph() {
  return ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
}

// ---------------------------------------------------------------------------------------------
// Consuming results.

// Makes the compiler materialise `value` in a register, so the loads that produce it happen inside
// the measurement. benchmark::DoNotOptimize (1.7) is not enough for a plain load under GCC: its
// "+m,r" operand may be satisfied with the memory the value was loaded from, and the load then
// disappears (seen in BM_RawArrayLookup's loop).
template <typename T>
requires std::is_integral_v<T>
inline void Consume(T value) { __asm__ __volatile__("" : : "r"(value)); }

// ---------------------------------------------------------------------------------------------
// Deterministic random numbers: SplitMix64, a few instructions per draw, identical on every
// platform (unlike std::uniform_int_distribution).
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

 private:
  std::uint64_t state_;
};

// ---------------------------------------------------------------------------------------------
// Fixture construction.

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
    return ValueOrDie(pending_.get(), "fixture batch");
  }

 private:
  Graph& graph_;
  std::future<Result<CommitInfo>> pending_;
};

// Adds `count` vertices labelled `label` and returns the first one's id. Aborts unless the ids
// are dense (first, first+1, ...), which ids.h promises for vertices added in commit order; the
// benches draw random vertices as `first + Uniform(count)` instead of indexing an id array,
// which would add a cache miss of its own to every measured operation.
inline VertexId AddVertices(Graph& graph, std::uint64_t count, std::string_view label) {
  std::optional<std::uint64_t> first;
  std::uint64_t next = 0;
  auto check_dense = [&](const std::optional<CommitInfo>& info) {
    if (!info) return;
    for (VertexId v : info->vertices) {
      if (!first) first = next = v.value();
      if (v.value() != next++) Die("AddVertices (ids not dense)", InternalError("vertex ids not dense"));
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
  if (!first) Die("AddVertices", InvalidArgumentError("count == 0"));
  return VertexId(*first);
}

// Adds `count` edges of `type`; edge i runs endpoints(i).first -> endpoints(i).second. `endpoints`
// is called once per edge, in index order, so it may draw from an Rng deterministically.
template <typename EndpointsFn>
void AddEdges(Graph& graph, std::uint64_t count, std::string_view type, EndpointsFn&& endpoints,
              std::uint64_t batch_ops = kBuildBatchOps) {
  PipelinedWriter writer(graph);
  for (std::uint64_t i = 0; i < count;) {
    const std::uint64_t end = std::min(count, i + batch_ops);
    WriteBatch batch;
    for (; i < end; ++i) {
      const std::pair<VertexId, VertexId> e = endpoints(i);
      batch.AddEdge(type, e.first, e.second);
    }
    writer.Submit(std::move(batch));
  }
  writer.Drain();
}

// ---------------------------------------------------------------------------------------------
// Per-operation latency.
//
// Method: each operation is bracketed by two reads of a tick counter. On x86-64 that is RDTSCP
// followed by LFENCE (RDTSCP waits for earlier instructions; LFENCE keeps later ones from
// starting early), converted to nanoseconds by a 20 ms calibration against
// std::chrono::steady_clock (the TSC is invariant on the machines we run on); elsewhere it is
// steady_clock itself. The median cost of an empty bracket, measured over 10,000 brackets when
// the recorder is made, is subtracted from every sample (clamped at 0). Percentiles are order
// statistics of the samples. Timing one operation at a time serialises it: the figures are
// latencies, without the overlap of independent operations that the benchmark's own mean
// (iterations / time) enjoys, so p50 may exceed the mean.

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

class LatencyRecorder {
 public:
  explicit LatencyRecorder(std::size_t capacity) : ns_per_tick_(NanosecondsPerTick()) {
    samples_.reserve(std::max<std::size_t>(capacity, 10'000));
    for (int i = 0; i < 10'000; ++i) Time([] {});
    overhead_ticks_ = Percentile(0.5);
    samples_.clear();
  }

  // Runs `op` once and records its duration.
  template <typename Op>
  void Time(Op&& op) {
    const std::uint64_t t0 = ReadTicks();
    benchmark::ClobberMemory();
    op();
    benchmark::ClobberMemory();
    const std::uint64_t t1 = ReadTicks();
    samples_.push_back(t1 - t0);
  }

  // Sets the counters p50_ns, p95_ns, p99_ns (overhead subtracted) and timer_overhead_ns.
  void Publish(benchmark::State& state) {
    for (double q : {0.50, 0.95, 0.99}) {
      const std::uint64_t ticks = Percentile(q);
      const double ns =
          ticks > overhead_ticks_ ? static_cast<double>(ticks - overhead_ticks_) * ns_per_tick_ : 0;
      state.counters["p" + std::to_string(static_cast<int>(q * 100 + 0.5)) + "_ns"] = ns;
    }
    state.counters["timer_overhead_ns"] = static_cast<double>(overhead_ticks_) * ns_per_tick_;
  }

 private:
  std::uint64_t Percentile(double q) {
    if (samples_.empty()) return 0;
    const auto k =
        std::min(samples_.size() - 1, static_cast<std::size_t>(q * static_cast<double>(samples_.size())));
    std::nth_element(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(k), samples_.end());
    return samples_[k];
  }

  double ns_per_tick_;
  std::uint64_t overhead_ticks_ = 0;
  std::vector<std::uint64_t> samples_;
};

// After a benchmark's timed loop (whose mean Google Benchmark reports), times individual
// operations and publishes their percentiles. The sample count follows the timed loop's
// iteration count (at least 1,000, at most 100,000), so the pass at most doubles a run.
// `next_input()` draws the operation's input outside the bracket; `op(input)` is timed.
template <typename NextInputFn, typename OpFn>
void MeasureLatency(benchmark::State& state, NextInputFn&& next_input, OpFn&& op) {
  const auto n =
      static_cast<std::size_t>(std::clamp<benchmark::IterationCount>(state.iterations(), 1'000, 100'000));
  LatencyRecorder recorder(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto input = next_input();
    recorder.Time([&] { op(input); });
  }
  recorder.Publish(state);
}

// ---------------------------------------------------------------------------------------------
// Process memory.

// Resident set size in bytes, from VmRSS in /proc/self/status (Linux); 0 where unavailable.
inline std::int64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

}  // namespace quiver::bench

#endif  // QUIVER_BENCH_MICRO_BENCH_UTIL_H_
