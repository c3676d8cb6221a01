// Review of Options::background_nice through the Graph API: the
// threads that call Checkpoint, Backup and Close keep their priority, and
// the allocation faults a test arms on the calling thread reach the
// checkpoint's encoder only with background_nice = 0 (with it above 0 the
// encoder runs on threads of its own, which no test can arm).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "alloc_hook.h"
#include "base/memory.h"
#include "base/parallel.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

Options NiceOptions(std::uint32_t nice, std::uint32_t io_threads) {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = io_threads;
  o.background_nice = nice;
  return o;
}

// n vertices in batches of `per_batch`.
void Fill(Graph& g, int n, int per_batch = 1) {
  for (int k = 0; k < n;) {
    WriteBatch b;
    for (int end = std::min(n, k + per_batch); k < end; ++k)
      b.AddVertex("V", {{"k", k}, {"pad", std::string(200, 'p')}});
    ASSERT_TRUE(g.Write(std::move(b)).ok());
  }
}

TEST(CheckpointNiceTest, CallersOfCheckpointBackupAndCloseKeepTheirPriority) {
  const int before = base::ThisThreadNice();
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(NiceOptions(/*nice=*/19, /*io_threads=*/1), "/db", &fs).value();
  Fill(*g, 300);
  ASSERT_TRUE(g->Checkpoint().ok());
  EXPECT_EQ(base::ThisThreadNice(), before);
  std::uint64_t progress_calls = 0;
  std::thread::id progress_thread;
  ASSERT_TRUE(g->Backup("/copy", [&](std::uint64_t) {
                 ++progress_calls;
                 progress_thread = std::this_thread::get_id();
               }).ok());
  EXPECT_GT(progress_calls, 0u);
  EXPECT_EQ(progress_thread, std::this_thread::get_id());  // progress stays on the caller
  EXPECT_EQ(base::ThisThreadNice(), before);
  Fill(*g, 10);
  ASSERT_TRUE(g->Close().ok());
  EXPECT_EQ(base::ThisThreadNice(), before);
}

// Every allocation of the calling thread during Checkpoint() fails in turn
// (once): Checkpoint answers ok or ResourceExhausted and never throws (no
// exception crosses the API), and the graph still checkpoints afterwards.
// Returns how many allocations of the calling thread one checkpoint makes.
std::uint64_t EnumerateCallerAllocations(std::uint32_t nice) {
  std::uint64_t n = 1;
  std::uint64_t stopped = 0;
  std::string escaped;
  for (;; ++n) {
    env::SimFileSystem fs;
    auto g = GraphImpl::OpenDurable(NiceOptions(nice, /*io_threads=*/1), "/db", &fs).value();
    // The checkpoint's content is what matters, not how it was written: one
    // batch (200 commits per fault point took most of this test's time).
    Fill(*g, 200, /*per_batch=*/200);
    Status s;
    std::uint64_t counted = 0;
    bool threw = false;
    {
      test_util::ScopedOperatorNewFaults hook;
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      try {
        s = g->Checkpoint();
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      counted = base::DisarmAllocationFaults();
    }
    if (threw) {
      escaped += " " + std::to_string(n);
    } else if (counted < n) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      break;
    } else if (!s.ok()) {
      EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << "allocation " << n << ": " << s.ToString();
    }
    // Out of memory inside the directory fsync after the rename: whether it
    // ran is unknown, so it counts as failed and the graph stops
    // (RELIABILITY 2.7). Anywhere else the next checkpoint succeeds.
    if (g->GetDurabilityStats().poisoned) {
      EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << "allocation " << n;
      ++stopped;
      continue;
    }
    Status again = g->Checkpoint();
    EXPECT_TRUE(again.ok()) << "allocation " << n << ": " << s.ToString() << " then " << again.ToString();
  }
  std::cout << "[          ] background_nice " << nice << ": " << stopped
            << " faults fell in the directory fsync after the rename and stopped the graph\n";
  EXPECT_TRUE(escaped.empty()) << "background_nice " << nice
                               << ": std::bad_alloc crossed Checkpoint() at allocations" << escaped;
  return n - 1;
}

TEST(CheckpointNiceTest, CallerAllocationFaultsReachTheEncoderOnlyWithoutNice) {
  const std::uint64_t plain = EnumerateCallerAllocations(/*nice=*/0);
  const std::uint64_t niced = EnumerateCallerAllocations(/*nice=*/10);
  std::cout << "[          ] allocations on the calling thread per checkpoint: background_nice 0: " << plain
            << ", background_nice 10: " << niced << "\n";
  // With the encoders elsewhere, the calling thread allocates less: a fault
  // sweep armed on it no longer covers the encoder.
  EXPECT_LT(niced, plain);
}

}  // namespace
}  // namespace quiver
