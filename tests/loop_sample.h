// Which points of a long exhaustive loop a run tries: an I/O fault at
// operation n, an allocation failure at allocation n, a flip of bit n, a
// thread count or a configuration.
//
// RELIABILITY.md section 4 keeps CI's sanitizer stage to minutes and puts the
// full loops in soak. A sampled loop tries every point below `dense` (the
// first operations and allocations of a run, where open and set-up differ
// most) and, past it, one point in `stride`: those whose n + variant leaves
// the run's residue modulo `stride`. The residue is drawn at random for each
// run, so successive runs cover different points. `variant` tells apart the
// variants of one loop (fault modes and kinds, thread counts): with as many
// variants as the stride, each point is tried by one of them in every run.
//
// Choose the stride against the loop's structure: a commit group is two
// operations (write, sync) and many allocations come in pairs, so an even
// stride would try one kind for long stretches; a stride that divides 8
// would flip one bit position of each byte. Hence the override below only
// turns sampling off.
//
//   QUIVER_EVERY_POINT=1    every loop tries every point (the `soak` ctest
//                           entries set it)
//   QUIVER_LOOP_OFFSET=<r>  the residue (taken modulo each stride): repeats a
//                           run; each loop prints its own on stderr
//
// A loop that RELIABILITY.md runs at every point in CI (the crash-point
// enumeration, the small I/O-fault loops) or a negative control (its loss may
// show at one point only) does not use this.
#ifndef QUIVER_TESTS_LOOP_SAMPLE_H_
#define QUIVER_TESTS_LOOP_SAMPLE_H_

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>

#include "test_util.h"

namespace quiver::test_util {

class LoopSample {
 public:
  LoopSample(std::string name, std::uint64_t stride, std::uint64_t dense = 16)
      : name_(std::move(name)), dense_(dense), stride_(stride == 0 ? 1 : stride) {
    if (EnvOr("QUIVER_EVERY_POINT", 0) != 0) stride_ = 1;
    offset_ = EnvOr("QUIVER_LOOP_OFFSET", std::random_device{}()) % stride_;
    // stderr, flushed: the line must survive a sanitizer abort or a watchdog.
    std::fprintf(stderr, "[ sample   ] %s\n", Describe().c_str());
    std::fflush(stderr);
  }

  bool Tries(std::uint64_t n, std::uint64_t variant = 0) const {
    return n < dense_ || (n + variant) % stride_ == offset_;
  }
  bool exhaustive() const { return stride_ == 1; }
  std::uint64_t stride() const { return stride_; }

  // What a failure message carries: the loop, and how to repeat the run.
  std::string Describe() const {
    if (exhaustive()) return name_ + ": every point";
    std::string s = name_ + ": ";
    if (dense_ > 0) s += "every point below " + std::to_string(dense_) + ", then ";
    return s + "one in " + std::to_string(stride_) + " (n + variant = " + std::to_string(offset_) +
           " modulo " + std::to_string(stride_) +
           "; repeat with QUIVER_LOOP_OFFSET=" + std::to_string(offset_) +
           ", every point with QUIVER_EVERY_POINT=1)";
  }

 private:
  std::string name_;
  std::uint64_t dense_;
  std::uint64_t stride_;
  std::uint64_t offset_ = 0;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_LOOP_SAMPLE_H_
