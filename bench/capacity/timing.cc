#include "timing.h"

#include <algorithm>
#include <chrono>

namespace quiver::capacity {
namespace {

double CalibrateNsPerTick() {
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
  return 1.0;
#endif
}

}  // namespace

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
  static const double ns_per_tick = CalibrateNsPerTick();
  ns_per_tick_ = ns_per_tick;
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
