#include "analytics/parallel_loop.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "base/parallel.h"

namespace quiver::analytics {

unsigned ThreadsFor(const RunOptions& run) { return base::ResolveThreads(run.threads); }

Status KernelCancelled(const char* kernel) { return CancelledError(std::string(kernel) + ": cancelled"); }

bool ParallelBlocks(const RunOptions& run, unsigned threads, std::uint64_t n, std::string_view phase,
                    const std::function<void(unsigned, std::uint64_t, std::uint64_t, std::uint64_t)>& fn) {
  const std::uint64_t blocks = (n + kBlock - 1) / kBlock;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::atomic<bool> stopped{false};
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, std::max<std::uint64_t>(blocks, 1)));
  base::RunOnThreads(threads, [&](unsigned worker) {
    while (true) {
      if (CancelRequested(run)) {
        stopped.store(true, std::memory_order_relaxed);
        return;
      }
      const std::uint64_t b = next.fetch_add(1, std::memory_order_relaxed);
      if (b >= blocks) return;
      fn(worker, b, b * kBlock, std::min(n, (b + 1) * kBlock));
      const std::uint64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
      // Progress comes from the calling thread only (worker 0 runs there).
      if (worker == 0 && run.progress) run.progress(Progress{phase, d, blocks});
    }
  });
  return !stopped.load(std::memory_order_relaxed);
}

bool Step(const RunOptions& run, std::string_view phase, std::uint64_t done, std::uint64_t total) {
  if (run.progress) run.progress(Progress{phase, done, total});
  return !CancelRequested(run);
}

}  // namespace quiver::analytics
