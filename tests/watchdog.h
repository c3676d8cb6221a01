// Watchdog: aborts the process if a test has not finished within a time
// limit, so that a hang (a producer never woken, a Close() that never
// returns) fails loudly instead of running into CI's timeout. Never a
// timing assertion: the limit is minutes, far above any honest run.
#ifndef QUIVER_TESTS_WATCHDOG_H_
#define QUIVER_TESTS_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

namespace quiver::test_util {

class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::cerr << "watchdog: test did not finish within " << limit.count() << " s (hang)" << std::endl;
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_WATCHDOG_H_
