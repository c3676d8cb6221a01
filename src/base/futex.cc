#include "base/futex.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#endif

namespace quiver::base {

#if defined(__linux__)

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

void Futex::Wait(std::uint32_t seen) {
  sleepers_.fetch_add(1);
  // The kernel compares the word with `seen` again under its own lock, so a
  // Bump between this load and the call makes the call return at once.
  if (word_.load() == seen) {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr,
              0);
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void Futex::Bump() {
  word_.fetch_add(1);
  if (sleepers_.load() != 0) {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
              nullptr, 0);
  }
}

#else

void Futex::Wait(std::uint32_t seen) { word_.wait(seen, std::memory_order_acquire); }

void Futex::Bump() {
  word_.fetch_add(1);
  word_.notify_all();
}

#endif

}  // namespace quiver::base
