#include "timing.h"

#include <algorithm>
#include <chrono>

namespace quiver::capacity {

std::uint64_t NowNs() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

double SecondsSince(std::uint64_t start_ns) { return static_cast<double>(NowNs() - start_ns) / 1e9; }

std::uint64_t Quantile(std::vector<std::uint64_t>& samples, double q) {
  const std::size_t k =
      std::min(samples.size() - 1, static_cast<std::size_t>(q * static_cast<double>(samples.size())));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
  return samples[k];
}

double QuantileD(std::vector<double>& samples, double q) {
  const std::size_t k =
      std::min(samples.size() - 1, static_cast<std::size_t>(q * static_cast<double>(samples.size())));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
  return samples[k];
}

TickTimer::TickTimer(std::size_t capacity) {
  ns_per_tick_ = bench::NanosecondsPerTick();
  samples_.reserve(std::max<std::size_t>(capacity, 10'000));
  for (int i = 0; i < 10'000; ++i) Time([] {});
  overhead_ticks_ = Quantile(samples_, 0.5);
  samples_.clear();
}

double TickTimer::QuantileNs(double q) {
  if (samples_.empty()) return 0;
  const std::uint64_t ticks = Quantile(samples_, q);
  return ticks > overhead_ticks_ ? static_cast<double>(ticks - overhead_ticks_) * ns_per_tick_ : 0.0;
}

double TickTimer::overhead_ns() const { return static_cast<double>(overhead_ticks_) * ns_per_tick_; }

}  // namespace quiver::capacity
