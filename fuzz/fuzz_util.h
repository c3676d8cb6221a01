// Helpers shared by the fuzz targets in fuzz/: a failed-check macro that
// aborts (libFuzzer and the replay driver both treat an abort as a crash),
// FuzzInput (a byte consumer in the spirit of libFuzzer's
// FuzzedDataProvider, but our own so that the targets build with gcc as well
// and read an input the same way in every build), and AllocMeter, which
// counts the bytes allocated while it is armed through the sanitizer
// allocator hooks (present under ASan with clang and gcc; absent in
// uninstrumented builds, where it counts nothing).
//
// Thread safety: FuzzInput is a plain value. AllocMeter counts allocations
// of every thread; only the single-threaded targets arm it.
#ifndef QUIVER_FUZZ_FUZZ_UTIL_H_
#define QUIVER_FUZZ_FUZZ_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// Prints where and why, then aborts. `detail` is a std::string (or
// convertible) evaluated only on failure.
#define QUIVER_FUZZ_CHECK(cond, detail)                                                       \
  do {                                                                                        \
    if (!(cond)) ::quiver::fuzz::CheckFailed(__FILE__, __LINE__, #cond, std::string(detail)); \
  } while (false)

namespace quiver::fuzz {

[[noreturn]] inline void CheckFailed(const char* file, int line, const char* cond,
                                     const std::string& detail) {
  std::fprintf(stderr, "\n*** fuzz check failed at %s:%d: %s\n*** %s\n", file, line, cond, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

// Whether QUIVER_FUZZ_VERBOSE is set: the targets then print one line per
// input saying what it exercised (for checking a corpus by hand).
inline bool Verbose() {
  static const bool verbose = std::getenv("QUIVER_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

// Reads an input front to back. Every getter returns a value even when the
// input is exhausted (zeros), so a short input is simply a small case.
class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  std::size_t remaining() const { return size_ - pos_; }

  std::uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool Bool() { return (Byte() & 1) != 0; }
  // A value in [lo, hi] from as many bytes as the width of the range needs.
  std::uint64_t Range(std::uint64_t lo, std::uint64_t hi) {
    const std::uint64_t span = hi - lo;
    std::uint64_t v = 0;
    for (std::uint64_t bits = 0; bits < 64 && (span >> bits) != 0; bits += 8) v = (v << 8) | Byte();
    return span == UINT64_MAX ? v : lo + v % (span + 1);
  }
  // A string of at most `max_len` bytes: a length byte, then the bytes.
  std::string Str(std::size_t max_len) {
    const std::size_t wanted = Byte() % (max_len + 1);
    const std::size_t n = std::min(wanted, remaining());
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// ---- AllocMeter ----

}  // namespace quiver::fuzz

extern "C" {
// From the sanitizer runtimes (sanitizer/allocator_interface.h). Weak: null
// in a build without a sanitizer.
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                              void (*free_hook)(const volatile void*)) __attribute__((weak));
std::size_t __sanitizer_get_allocated_size(const volatile void* p) __attribute__((weak));
}

namespace quiver::fuzz {

namespace alloc_meter_internal {

struct State {
  bool armed = false;
  std::size_t bytes = 0;
  std::size_t largest = 0;
  std::int64_t live = 0;  // allocated minus freed since arming (frees of older blocks count too)
  std::int64_t peak = 0;
};
inline State state;

inline void OnMalloc(const volatile void*, std::size_t size) {
  if (!state.armed) return;
  state.bytes += size;
  state.largest = std::max(state.largest, size);
  state.live += static_cast<std::int64_t>(size);
  state.peak = std::max(state.peak, state.live);
}
// Runs before the block is released, so its size can still be asked for.
inline void OnFree(const volatile void* p) {
  if (!state.armed || p == nullptr) return;
  state.live -= static_cast<std::int64_t>(__sanitizer_get_allocated_size(p));
}

inline bool Install() {
  static const bool installed = __sanitizer_install_malloc_and_free_hooks != nullptr &&
                                __sanitizer_get_allocated_size != nullptr &&
                                __sanitizer_install_malloc_and_free_hooks(&OnMalloc, &OnFree) != 0;
  return installed;
}

}  // namespace alloc_meter_internal

// Measures the allocations made while armed: their sum, the largest, and
// the peak of bytes held. Use through
// AllocMeter::Scope; scopes may nest (an inner Scope or a Pause saves and
// restores the outer counts).
class AllocMeter {
 public:
  // Whether allocations can be seen in this build.
  static bool Available() { return alloc_meter_internal::Install(); }

  struct Totals {
    std::size_t bytes = 0;    // every allocation while armed, summed (frees not subtracted)
    std::size_t largest = 0;  // the largest single allocation while armed
    std::size_t peak = 0;     // the most bytes held at once, over what was held when armed
  };

  // Counts from construction to Take(); stops at destruction.
  class Scope {
   public:
    Scope() : saved_(alloc_meter_internal::state) {
      alloc_meter_internal::Install();
      alloc_meter_internal::state = alloc_meter_internal::State{true, 0, 0, 0, 0};
    }
    ~Scope() { alloc_meter_internal::state = saved_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Totals Take() const {
      const alloc_meter_internal::State& s = alloc_meter_internal::state;
      return Totals{s.bytes, s.largest, static_cast<std::size_t>(std::max<std::int64_t>(s.peak, 0))};
    }

   private:
    alloc_meter_internal::State saved_;
  };

  // Stops counting for its lifetime (e.g. inside a visitor whose work is
  // measured separately).
  class Pause {
   public:
    Pause() : was_(alloc_meter_internal::state.armed) { alloc_meter_internal::state.armed = false; }
    ~Pause() { alloc_meter_internal::state.armed = was_; }
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    bool was_;
  };
};

}  // namespace quiver::fuzz

#endif  // QUIVER_FUZZ_FUZZ_UTIL_H_
