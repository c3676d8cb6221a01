#include "base/parallel.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace quiver::base {

unsigned ResolveThreads(std::uint32_t requested) {
  if (requested != 0) return requested;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

void RunOnThreads(unsigned threads, const std::function<void(unsigned worker)>& fn) {
  threads = std::max(threads, 1u);
  std::vector<std::exception_ptr> errors(threads);
  auto run = [&](unsigned w) {
    try {
      fn(w);
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned w = 1; w < threads; ++w) pool.emplace_back(run, w);
  run(0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace quiver::base
