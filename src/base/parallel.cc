#include "base/parallel.h"

#include <algorithm>
#include <cerrno>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include "base/cpus.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace quiver::base {

unsigned ResolveThreads(std::uint32_t requested) {
  if (requested != 0) return requested;
  return std::clamp(AvailableCpus(), 1u, 8u);
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
  unsigned started = 1;
  try {
    for (; started < threads; ++started) pool.emplace_back(run, started);
  } catch (...) {
    // No thread to be had (std::system_error, or std::bad_alloc for its
    // state): the workers that did not start run here, after worker 0.
  }
  run(0);
  for (unsigned w = started; w < threads; ++w) run(w);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void LowerThisThreadPriority(std::uint32_t steps) {
#if defined(__linux__)
  if (steps == 0) return;
  // On Linux a thread's nice value is its own: PRIO_PROCESS with a thread id
  // changes that thread alone, and threads it starts inherit it.
  const id_t tid = static_cast<id_t>(gettid());
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, tid);
  if (nice == -1 && errno != 0) return;
  const int lowered = static_cast<int>(std::min<std::int64_t>(19, std::int64_t{nice} + steps));
  if (lowered > nice) (void)setpriority(PRIO_PROCESS, tid, lowered);
#else
  (void)steps;
#endif
}

int ThisThreadNice() {
#if defined(__linux__)
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  return nice == -1 && errno != 0 ? 0 : nice;
#else
  return 0;
#endif
}

void RunInBackground(std::uint32_t nice, const std::function<void()>& fn) {
  if (nice == 0) return fn();
  std::exception_ptr error;
  std::thread worker;
  try {
    worker = std::thread([&] {
      LowerThisThreadPriority(nice);
      try {
        fn();
      } catch (...) {
        error = std::current_exception();
      }
    });
  } catch (...) {
    // No thread to be had (std::system_error, or std::bad_alloc for the
    // thread's state, allocated here): the caller runs it.
    return fn();
  }
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace quiver::base
