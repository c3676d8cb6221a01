// Futex: a 32-bit word that threads sleep on until it changes, and one call
// that wakes them all. Sits beside base/mutex.h as a leaf primitive.
//
// Why not std::atomic::wait: libstdc++'s wait spins and then calls
// sched_yield a dozen times before it sleeps, which on a small machine with
// many waiters burns the cores the other threads need. Wait here goes to
// sleep at once; callers spin first if they want to. Bump makes a system
// call only while somebody sleeps.
//
// Thread safety: every method from any thread. Synchronisation is through
// the atomic word (Bump releases, Load acquires), so ThreadSanitizer sees it
// even though it cannot see the system call.
#ifndef QUIVER_BASE_FUTEX_H_
#define QUIVER_BASE_FUTEX_H_

#include <atomic>
#include <cstdint>

namespace quiver::base {

class Futex {
 public:
  Futex() = default;
  Futex(const Futex&) = delete;
  Futex& operator=(const Futex&) = delete;

  // The word's current value.
  std::uint32_t Load() const { return word_.load(std::memory_order_acquire); }

  // Sleeps while the word still holds `seen`. May return early (a spurious
  // wake-up): callers re-check their condition in a loop.
  void Wait(std::uint32_t seen);

  // Changes the word and wakes every thread sleeping in Wait.
  void Bump();

 private:
  std::atomic<std::uint32_t> word_{0};
  // Threads inside Wait. Bump reads it after changing the word and Wait
  // reads the word after raising it (both sequentially consistent), so
  // either Bump sees the sleeper or the sleeper sees the new word.
  std::atomic<std::uint32_t> sleepers_{0};
};

}  // namespace quiver::base

#endif  // QUIVER_BASE_FUTEX_H_
