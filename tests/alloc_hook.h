// Lets a test extend base::ArmAllocationFaults to the standard library's
// allocations: while switched on, the test binary's operator new (defined
// once per binary; in quiver_tests it is in traversal_alloc_test.cc) asks
// base::ShouldFailAllocation and throws std::bad_alloc when told to. Off by
// default, so a test that arms faults for the engine's blocks alone
// (MemoryAccount::Allocate) counts only those.
#ifndef QUIVER_TESTS_ALLOC_HOOK_H_
#define QUIVER_TESTS_ALLOC_HOOK_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <thread>
#include <utility>

#include "base/memory.h"

#if defined(__SANITIZE_ADDRESS__) && __has_include(<sanitizer/lsan_interface.h>)
#include <sanitizer/lsan_interface.h>
#define QUIVER_TESTS_HAVE_LSAN 1
#endif

namespace quiver::test_util {

inline std::atomic<bool> g_operator_new_consults_faults{false};

// True if the calling thread's operator new must fail now.
inline bool OperatorNewShouldFail() {
  return g_operator_new_consults_faults.load(std::memory_order_relaxed) && base::ShouldFailAllocation();
}

// Called by the test binary's operator delete (quiver_tests) with each
// block it is about to free and the size it was asked for (0 where the
// unsized operator delete does not know it); null: nothing is called.
inline std::atomic<void (*)(void*, std::size_t)> g_operator_delete_observer{nullptr};

// Live-heap tracking, on every thread: while g_track_live is on, the test
// binary's operator new (quiver_tests) adds each block's usable size to
// g_live_bytes and raises g_peak_live_bytes to it, and operator delete
// subtracts the usable size of what it frees. Blocks allocated before and
// freed during tracking lower the count, so read the peak against the
// count at the start.
inline std::atomic<bool> g_track_live{false};
inline std::atomic<std::int64_t> g_live_bytes{0};
inline std::atomic<std::int64_t> g_peak_live_bytes{0};

// Tracks the live heap for a scope; PeakGrowth() is the most the heap held
// above what it held when the scope began.
class ScopedLiveHeapTracking {
 public:
  ScopedLiveHeapTracking() {
    g_live_bytes.store(0);
    g_peak_live_bytes.store(0);
    g_track_live.store(true);
  }
  ~ScopedLiveHeapTracking() { g_track_live.store(false); }
  ScopedLiveHeapTracking(const ScopedLiveHeapTracking&) = delete;
  ScopedLiveHeapTracking& operator=(const ScopedLiveHeapTracking&) = delete;
  std::int64_t PeakGrowth() const { return g_peak_live_bytes.load(); }
};

// Switches the hook on for a scope.
class ScopedOperatorNewFaults {
 public:
  ScopedOperatorNewFaults() { g_operator_new_consults_faults.store(true); }
  ~ScopedOperatorNewFaults() { g_operator_new_consults_faults.store(false); }
  ScopedOperatorNewFaults(const ScopedOperatorNewFaults&) = delete;
  ScopedOperatorNewFaults& operator=(const ScopedOperatorNewFaults&) = delete;
};

// Runs `call` with the calling thread's allocation `n` failing (once, or
// from then on), standard-library allocations included. Sets *threw to
// whether std::bad_alloc left `call`; returns the allocations counted (fewer
// than n: none failed).
template <typename F>
std::uint64_t WithAllocationFault(std::uint64_t n, base::AllocationFaultMode mode, bool* threw, F&& call) {
  *threw = false;
  ScopedOperatorNewFaults hook;
  base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
  try {
    call();
  } catch (const std::bad_alloc&) {
    *threw = true;
  } catch (...) {
    base::DisarmAllocationFaults();  // no later test of this thread runs armed
    throw;
  }
  return base::DisarmAllocationFaults();
}

// Runs `call` with the calling thread's allocation `n` failing (once),
// standard-library allocations included. True if it threw bad_alloc.
template <typename F>
bool ThrowsBadAllocAt(std::uint64_t n, F&& call) {
  bool threw = false;
  WithAllocationFault(n, base::AllocationFaultMode::kOnce, &threw, std::forward<F>(call));
  return threw;
}

// Turns LeakSanitizer off for the calling thread's allocations while it
// lives (nothing without ASan). LeakSanitizer then also counts what those
// allocations reach as live, whichever thread made it. For a sweep whose
// armed region is known to leak on some failure paths (stated where it is
// used); everything else the sweep checks still holds.
class ScopedLeakCheckDisabled {
 public:
#ifdef QUIVER_TESTS_HAVE_LSAN
  ScopedLeakCheckDisabled() { __lsan_disable(); }
  ~ScopedLeakCheckDisabled() { __lsan_enable(); }
#else
  // User-provided, so a guard that does nothing here is not an "unused
  // variable" under -Werror (the dev preset).
  ScopedLeakCheckDisabled() {}   // NOLINT(modernize-use-equals-default)
  ~ScopedLeakCheckDisabled() {}  // NOLINT(modernize-use-equals-default)
#endif
  ScopedLeakCheckDisabled(const ScopedLeakCheckDisabled&) = delete;
  ScopedLeakCheckDisabled& operator=(const ScopedLeakCheckDisabled&) = delete;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_ALLOC_HOOK_H_
