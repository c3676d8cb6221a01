// Helpers for Quiver's micro-benchmarks (bench/micro/*_bench.cc): a per-operation latency
// recorder that publishes p50/p95/p99 counters and the process's resident set size, on top of
// bench/common/bench_common.h (random numbers, graph building, the tick counter), which the
// capacity bench shares. Everything is inline, so a fixture
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

#include "common/bench_common.h"
#include "quiver/quiver.h"

namespace quiver::bench {

// Fixed seed for every fixture, so every run measures the same graphs.
inline constexpr std::uint64_t kSeed = 0x5157'4552'0001ULL;

// Fixture sizes. A benchmark states its size as a full-size figure and passes it through
// Scaled(): with QUIVER_MICRO_SMOKE set (scripts/test.sh's one short pass, which only checks
// that every benchmark still runs), sizes shrink a hundredfold, to at least 1,000, so the pass
// does not spend its time building million-vertex fixtures whose figures nobody reads.
inline std::uint64_t Scaled(std::uint64_t full) {
  static const bool smoke = std::getenv("QUIVER_MICRO_SMOKE") != nullptr;
  return smoke ? std::max<std::uint64_t>(full / 100, 1'000) : full;
}

inline void CheckOk(const Status& status, std::string_view what) {
  if (!status.ok()) Die(what, status);
}

// A volatile graph with default options (OpenInMemory forces Durability::kVolatile).
inline std::unique_ptr<Graph> OpenVolatileGraph() {
  return ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
}

// ---------------------------------------------------------------------------------------------
// Per-operation latency.
//
// Method: each operation is bracketed by two reads of the tick counter (bench_common.h). The
// median cost of an empty bracket, measured over 10,000 brackets when the recorder is made, is
// subtracted from every sample (clamped at 0). Percentiles are order statistics of the samples.
// Timing one operation at a time serialises it: the figures are latencies, without the overlap of
// independent operations that the benchmark's own mean (iterations / time) enjoys, so p50 may
// exceed the mean.

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
