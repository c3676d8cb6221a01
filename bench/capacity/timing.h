// Clocks and order statistics for the capacity bench.
//
// Two clocks: NowNs() (std::chrono::steady_clock, for anything of a microsecond or more: commits,
// passes, phases) and TickTimer (RDTSCP + LFENCE on x86-64, calibrated against steady_clock, for
// single operations of tens of nanoseconds). TickTimer subtracts the median cost of an empty
// bracket; a sample that comes out at or below zero is below the timer's resolution, which the
// families report as not measured rather than as 0.
#ifndef QUIVER_BENCH_CAPACITY_TIMING_H_
#define QUIVER_BENCH_CAPACITY_TIMING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/bench_common.h"

namespace quiver::capacity {

// Nanoseconds on the monotonic clock.
std::uint64_t NowNs();

// Seconds since `start_ns` (a NowNs() reading).
double SecondsSince(std::uint64_t start_ns);

// The q-quantile (0 <= q <= 1) of `samples` as an order statistic; reorders `samples`.
// Requires a non-empty vector.
std::uint64_t Quantile(std::vector<std::uint64_t>& samples, double q);
double QuantileD(std::vector<double>& samples, double q);

using bench::ClobberMemory;
using bench::Consume;
using bench::Launder;
using bench::ReadTicks;

// Times single operations; samples are kept in ticks and converted when read.
class TickTimer {
 public:
  explicit TickTimer(std::size_t capacity);

  template <typename Op>
  void Time(Op&& op) {
    const std::uint64_t t0 = ReadTicks();
    ClobberMemory();
    op();
    ClobberMemory();
    samples_.push_back(ReadTicks() - t0);
  }

  // The q-quantile in nanoseconds, empty-bracket overhead subtracted; 0 if at or below it.
  double QuantileNs(double q);
  std::size_t size() const { return samples_.size(); }
  double overhead_ns() const;
  // The duration of one tick in nanoseconds (the timer's resolution).
  double ns_per_tick() const { return ns_per_tick_; }

 private:
  double ns_per_tick_;
  std::uint64_t overhead_ticks_ = 0;
  std::vector<std::uint64_t> samples_;
};

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_TIMING_H_
