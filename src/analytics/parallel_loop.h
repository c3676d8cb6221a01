// The loop every analytics kernel runs on: a range of vertices cut into
// fixed blocks, handed to the workers dynamically, with cancellation checked
// between blocks and progress reported from the calling thread.
//
// Block boundaries never depend on the thread count, so a kernel that reduces
// per block and then combines the blocks in index order gets the same bits on
// every thread count.
//
// Thread safety: ParallelBlocks runs `fn` concurrently on several threads;
// `fn` must synchronise whatever it shares beyond its own block.
#ifndef QUIVER_ANALYTICS_PARALLEL_LOOP_H_
#define QUIVER_ANALYTICS_PARALLEL_LOOP_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "quiver/analytics.h"

namespace quiver::analytics {

// Vertices per block: large enough that handing a block out is noise, small
// enough that 2-8 threads balance on skewed degrees.
inline constexpr std::uint64_t kBlock = 4096;

// The threads a RunOptions asks for (0: hardware, at most 8).
unsigned ThreadsFor(const RunOptions& run);

// The status a kernel returns when the caller cancelled it: "<kernel>: cancelled".
Status KernelCancelled(const char* kernel);

// True if the caller asked to stop.
inline bool CancelRequested(const RunOptions& run) {
  return run.cancel != nullptr && run.cancel->load(std::memory_order_relaxed);
}

// Calls fn(worker, block, begin, end) for every block [begin, end) of [0, n) of
// kBlock elements (block = begin / kBlock) on `threads` threads; worker <
// threads indexes per-thread scratch. Returns
// false if cancelled before every block ran; blocks already started finish.
// Reports `phase` progress (blocks done) from the calling thread when
// run.progress is set.
bool ParallelBlocks(const RunOptions& run, unsigned threads, std::uint64_t n, std::string_view phase,
                    const std::function<void(unsigned worker, std::uint64_t block, std::uint64_t begin,
                                             std::uint64_t end)>& fn);

// Reports one step of an iterative kernel; false if cancelled.
bool Step(const RunOptions& run, std::string_view phase, std::uint64_t done, std::uint64_t total);

}  // namespace quiver::analytics

#endif  // QUIVER_ANALYTICS_PARALLEL_LOOP_H_
