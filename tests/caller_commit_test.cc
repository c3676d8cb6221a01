// Caller commits (WriterOptions::caller_commits, write/commit_queue.h): a
// Logger called while a group commits runs on the committing thread (the
// writer thread, or a producer leading its own group); a write it makes to
// the same graph is refused instead of waiting for itself for ever.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "env/fault_file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

WriteBatch OneVertex(std::int64_t i) {
  WriteBatch b;
  b.AddVertex("V", {{"i", i}});
  return b;
}

// On each slow_sync event, calls back into the graph as logger.h forbids,
// and records what each call returned.
class CallingBackLogger : public Logger {
 public:
  void Log(LogLevel, std::string_view event, std::string_view) override {
    Graph* g = graph.load();
    if (g == nullptr || event != "slow_sync" || calls.fetch_add(1) != 0) return;
    std::vector<StatusCode> got;
    got.push_back(g->Write(OneVertex(-1)).status().code());
    got.push_back(g->WriteAsync(OneVertex(-2)).get().status().code());
    got.push_back(g->Sync().code());
    got.push_back(g->Checkpoint().code());
    got.push_back(g->Close().code());
    std::lock_guard<std::mutex> lock(mu);
    codes = std::move(got);
  }

  std::atomic<Graph*> graph{nullptr};
  std::atomic<int> calls{0};
  std::mutex mu;
  std::vector<StatusCode> codes;
};

TEST(CallerCommitTest, ALoggerThatCallsBackIsRefusedNotDeadlocked) {
  for (bool caller : {true, false}) {
    SCOPED_TRACE(caller ? "committing on the caller's thread" : "committing on the writer thread");
    env::SimFileSystem sim;
    env::FaultFileSystem fs(&sim);
    auto logger = std::make_shared<CallingBackLogger>();
    Options o = test_util::SmallSegmentOptions();
    o.logger = logger;
    o.writer.caller_commits = caller;
    o.durable.slow_sync_microseconds = 1;
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    auto& impl = static_cast<GraphImpl&>(*g);
    logger->graph = g.get();
    fs.SetSyncDelay(std::chrono::microseconds(100));  // every sync is slow: the logger is called
    ASSERT_TRUE(g->Write(OneVertex(1)).ok());
    EXPECT_EQ(impl.TEST_caller_groups(), caller ? 1u : 0u);
    ASSERT_EQ(logger->calls.load(), 1);
    {
      std::lock_guard<std::mutex> lock(logger->mu);
      EXPECT_EQ(logger->codes, std::vector<StatusCode>(5, StatusCode::kFailedPrecondition));
    }
    // None of the refused calls did anything: the graph goes on.
    logger->graph = nullptr;
    ASSERT_TRUE(g->Write(OneVertex(2)).ok());
    EXPECT_EQ(g->GetSnapshot().vertex_count(), 2u);
    EXPECT_TRUE(g->Close().ok());
  }
}

// Out of memory for the request itself, on the caller's thread: Write says
// ResourceExhausted (no exception crosses the API) and queues nothing.
TEST(CallerCommitTest, NoMemoryForTheRequestIsResourceExhausted) {
  auto g = Graph::OpenInMemory().value();
  std::optional<Result<CommitInfo>> r;
  WriteBatch batch = OneVertex(1);
  {
    test_util::ScopedOperatorNewFaults hook;
    base::ArmAllocationFaults(std::this_thread::get_id(), 1, base::AllocationFaultMode::kFromThenOn);
    r = g->Write(std::move(batch));
    base::DisarmAllocationFaults();
  }
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status().code(), StatusCode::kResourceExhausted) << r->status().ToString();
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 0u);
  ASSERT_TRUE(g->Write(OneVertex(2)).ok());
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 1u);
}

// Queuing a request allocates nothing (CommitQueue links its requests, where
// a std::deque allocated a block every 64): with no memory left, a producer
// still reaches the writer thread, as CreateIndex's take-back of its
// declaration relies on. Before, the deque's allocation threw out of Push.
TEST(CallerCommitTest, QueuingARequestNeedsNoMemory) {
  CommitQueue queue(1000, /*spin_microseconds=*/0);
  std::vector<WriteRequest*> requests;
  for (int i = 0; i < 300; ++i) requests.push_back(new WriteRequest(WriteBatch(), /*async=*/false));
  {
    test_util::ScopedOperatorNewFaults hook;
    base::ArmAllocationFaults(std::this_thread::get_id(), 1, base::AllocationFaultMode::kFromThenOn);
    bool threw = false;
    try {
      for (WriteRequest* r : requests) ASSERT_TRUE(queue.Push(r).ok());
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    EXPECT_EQ(base::DisarmAllocationFaults(), 0u);  // allocations made
    ASSERT_FALSE(threw);
  }
  std::vector<WriteRequest*> group;
  group.reserve(requests.size());
  ASSERT_TRUE(queue.PopGroup(&group, requests.size(), SIZE_MAX));
  EXPECT_EQ(group, requests);  // in the order pushed
  for (WriteRequest* r : group) r->CompleteOutOfMemory();
  queue.FinishGroup();
  for (WriteRequest* r : requests) EXPECT_EQ(queue.Wait(r).status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace quiver
