// The out-of-memory enumeration the analytics tests share: a kernel run with
// the calling thread's allocations failing in turn must give
// ResourceExhausted or exactly the answer, and never throw.
#ifndef QUIVER_TESTS_ANALYTICS_OOM_UTIL_H_
#define QUIVER_TESTS_ANALYTICS_OOM_UTIL_H_

#include <cstdint>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "gtest/gtest.h"
#include "quiver/analytics.h"
#include "quiver/status.h"

namespace quiver::test_util {

struct OomEnumeration {
  std::vector<std::uint32_t> threads = {1, 2};
  // Every allocation, or (false) every one of the first 64, then every 13th:
  // kernels that make hundreds (a bin's list grows on its own).
  bool every_allocation = false;
  int min_failures = 3;                     // runs that must fail, per mode and thread count
  std::uint64_t max_allocations = 100'000;  // a run still failing past this is a test failure
};

// Runs `kernel(RunOptions)` with the calling thread's allocations failing in
// turn (once, or from then on; with several threads that includes starting
// the others, which the kernel then does without): each answer is
// ResourceExhausted or exactly `want`, and no exception escapes.
template <typename T, typename Kernel>
void ExpectOutOfMemoryIsAStatusOrTheAnswer(const T& want, const Kernel& kernel,
                                           const OomEnumeration& e = {}) {
  for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
    for (std::uint32_t threads : e.threads) {
      int failures = 0;
      for (std::uint64_t n = 1;; n += e.every_allocation || n < 64 ? 1 : 13) {
        SCOPED_TRACE(testing::Message() << "threads " << threads << " allocation " << n);
        Result<T> r = InvalidArgumentError("not run");
        std::uint64_t made = 0;
        {
          ScopedOperatorNewFaults hook;
          base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
          EXPECT_NO_THROW(r = kernel(RunOptions{.threads = threads}));
          made = base::DisarmAllocationFaults();
        }
        if (r.ok()) {
          EXPECT_TRUE(*r == want);
          if (made < n) break;  // the n-th allocation never came: every one has failed once
          continue;
        }
        ++failures;
        EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
        ASSERT_LT(n, e.max_allocations);
      }
      EXPECT_GE(failures, e.min_failures);
    }
  }
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_ANALYTICS_OOM_UTIL_H_
