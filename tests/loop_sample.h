// Which points of a long exhaustive loop a run tries: an I/O fault at
// operation n, an allocation failure at allocation n, a crash at operation
// n, a flip of bit n.
//
// RELIABILITY.md section 4 keeps CI's sanitizer stage to minutes and puts the
// full loops over large workloads in soak. So by default a sampled loop tries
// every point below `dense` (the first operations and allocations of a run,
// where open and the first group's set-up differ most) and, past it, every
// `stride`-th point, starting from an offset drawn at random for each run.
// Successive CI runs therefore cover different points, and every point is
// covered by some residue: a failure prints the offset that repeats it.
//
//   QUIVER_LOOP_STRIDE=<k>  every loop tries every k-th point (1: every
//                           point; the `soak` ctest entries set 1)
//   QUIVER_LOOP_OFFSET=<r>  the offset (taken modulo the stride): repeats a run
//
// A loop that must try every point in CI (a negative control, whose finding
// may sit at one point only) does not use this.
#ifndef QUIVER_TESTS_LOOP_SAMPLE_H_
#define QUIVER_TESTS_LOOP_SAMPLE_H_

#include <cstdint>
#include <iostream>
#include <random>
#include <string>

#include "test_util.h"

namespace quiver::test_util {

class LoopSample {
 public:
  // `stride`: the loop's default (QUIVER_LOOP_STRIDE overrides it); points
  // n < `dense` are always tried.
  LoopSample(std::string name, std::uint64_t stride, std::uint64_t dense = 16)
      : name_(std::move(name)), dense_(dense) {
    stride_ = EnvOr("QUIVER_LOOP_STRIDE", stride);
    if (stride_ == 0) stride_ = 1;
    offset_ = EnvOr("QUIVER_LOOP_OFFSET", std::random_device{}()) % stride_;
    std::cout << "[ sample   ] " << Describe() << "\n";
  }

  bool Tries(std::uint64_t n) const { return n < dense_ || n % stride_ == offset_; }
  bool exhaustive() const { return stride_ == 1; }
  std::uint64_t stride() const { return stride_; }

  // What a failure message should carry: the loop and how to repeat the run.
  std::string Describe() const {
    if (exhaustive()) return name_ + ": every point (QUIVER_LOOP_STRIDE=1)";
    return name_ + ": every point below " + std::to_string(dense_) + ", then every " +
           std::to_string(stride_) + "th from residue " + std::to_string(offset_) +
           " (repeat: QUIVER_LOOP_STRIDE=" + std::to_string(stride_) +
           " QUIVER_LOOP_OFFSET=" + std::to_string(offset_) + "; every point: QUIVER_LOOP_STRIDE=1)";
  }

 private:
  std::string name_;
  std::uint64_t dense_;
  std::uint64_t stride_ = 1;
  std::uint64_t offset_ = 0;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_LOOP_SAMPLE_H_
