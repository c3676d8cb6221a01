// A hostile review of the change feed. Each test failed before its fix:
// starting from a snapshot had a gap, Next could throw, a closed read-only
// graph took subscriptions.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <new>
#include <string>
#include <thread>
#include <utility>

#include "alloc_hook.h"
#include "change_feed_model.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

using test_util::FeedModel;

void AddOneVertex(Graph& g, int i) {
  WriteBatch b;
  b.AddVertex("P", {{"i", i}});
  ASSERT_TRUE(g.Write(std::move(b)).ok());
}

// Finding: the documented start, GetSnapshot() then
// Subscribe(snap.sequence() + 1), answered OutOfRange (an in-memory graph)
// when a batch committed in between while no subscription was open: the
// feed records nothing then. SubscribeWithSnapshot takes both at once.
TEST(ChangeFeedReviewTest, SubscribeWithSnapshotHasNoGapUnderConcurrentWrites) {
  auto g = Graph::OpenInMemory().value();
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) AddOneVertex(*g, i);
  });
  for (int round = 0; round < 20; ++round) {
    auto start = g->SubscribeWithSnapshot();
    ASSERT_TRUE(start.ok()) << start.status().ToString();
    FeedModel mirror = FeedModel::Of(start->snapshot);
    SequenceNumber expected = start->snapshot.sequence() + 1;
    EXPECT_EQ(start->subscription->next_sequence(), expected);
    for (int n = 0; n < 5;) {
      auto next = start->subscription->Next(std::chrono::seconds(10));
      ASSERT_TRUE(next.ok()) << next.status().ToString();
      if (*next == nullptr) continue;
      ASSERT_EQ((*next)->sequence, expected) << "round " << round;
      ASSERT_EQ(mirror.Apply(**next), "");
      ++expected;
      ++n;
    }
  }
  stop = true;
  writer.join();
}

// The same start on a graph where the snapshot is at the newest batch and
// nothing else commits: the first batch delivered is the next one written.
TEST(ChangeFeedReviewTest, SubscribeWithSnapshotContinuesFromTheSnapshot) {
  auto g = Graph::OpenInMemory().value();
  AddOneVertex(*g, 0);
  auto start = g->SubscribeWithSnapshot().value();
  EXPECT_EQ(start.snapshot.sequence(), 1u);
  EXPECT_EQ(start.snapshot.vertex_count(), 1u);
  auto none = start.subscription->TryNext();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  AddOneVertex(*g, 1);
  auto first = start.subscription->TryNext();
  ASSERT_TRUE(first.ok() && *first != nullptr);
  EXPECT_EQ((*first)->sequence, 2u);
  EXPECT_EQ((*first)->created_vertices.size(), 1u);
  ASSERT_TRUE(g->Close().ok());
  EXPECT_EQ(g->SubscribeWithSnapshot().status().code(), StatusCode::kFailedPrecondition);
}

// Finding: Next built its closed / fell-behind / graph-closed answers with
// allocating messages and no try: out of memory it threw.
TEST(ChangeFeedReviewTest, NextOutOfMemoryAnswersAndNeverThrows) {
  Options o;
  o.change_feed.max_retained_batches = 1;
  auto g = Graph::OpenInMemory(o).value();
  auto behind = g->Subscribe().value();
  auto closed = g->Subscribe().value();
  closed->Close();
  for (int i = 0; i < 3; ++i) AddOneVertex(*g, i);  // `behind` falls out of a window of one
  auto shut = g->Subscribe().value();
  ASSERT_TRUE(g->Close().ok());
  struct NextCase {
    ChangeSubscription* sub;
    StatusCode code;
  };
  for (const NextCase& c : {NextCase{behind.get(), StatusCode::kResourceExhausted},
                            NextCase{closed.get(), StatusCode::kFailedPrecondition},
                            NextCase{shut.get(), StatusCode::kFailedPrecondition}}) {
    bool threw = false;
    StatusCode code = StatusCode::kOk;
    {
      test_util::ScopedOperatorNewFaults hook;
      base::ArmAllocationFaults(std::this_thread::get_id(), 1, base::AllocationFaultMode::kFromThenOn);
      try {
        code = c.sub->TryNext().status().code();
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      base::DisarmAllocationFaults();
    }
    EXPECT_FALSE(threw);
    EXPECT_EQ(code, c.code);
    // With memory, the same answer and a message that says why.
    auto again = c.sub->TryNext();
    EXPECT_EQ(again.status().code(), c.code) << again.status().ToString();
  }
}

// Finding: a read-only graph's Subscribe skips the barrier, the only thing
// that noticed a closed graph: after Close() it returned a subscription.
TEST(ChangeFeedReviewTest, ReadOnlyGraphRefusesSubscribeAfterClose) {
  const std::string dir = ::testing::TempDir() + "/change_feed_review_ro_close";
  std::filesystem::remove_all(dir);
  {
    auto w = Graph::Open(Options{}, dir).value();
    AddOneVertex(*w, 0);
    ASSERT_TRUE(w->Close().ok());
  }
  Options ro;
  ro.read_only = true;
  auto g = Graph::Open(ro, dir).value();
  ASSERT_TRUE(g->Subscribe().ok());  // open: fine
  ASSERT_TRUE(g->Close().ok());
  EXPECT_EQ(g->Subscribe().status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(g->Subscribe(1).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(g->SubscribeWithSnapshot().status().code(), StatusCode::kFailedPrecondition);
}

// The last subscription's window is freed outside the feed's lock (the
// writer's Append takes it); a new subscription after that starts clean.
TEST(ChangeFeedReviewTest, TheWindowGoesWithTheLastSubscriptionAndComesBack) {
  auto g = Graph::OpenInMemory().value();
  {
    auto sub = g->Subscribe().value();
    for (int i = 0; i < 10; ++i) AddOneVertex(*g, i);
  }
  for (int i = 0; i < 3; ++i) AddOneVertex(*g, 10 + i);  // recorded by nobody
  auto start = g->SubscribeWithSnapshot().value();
  EXPECT_EQ(start.snapshot.vertex_count(), 13u);
  EXPECT_EQ(g->Subscribe(5).status().code(), StatusCode::kOutOfRange);
  AddOneVertex(*g, 13);
  auto next = start.subscription->TryNext();
  ASSERT_TRUE(next.ok() && *next != nullptr);
  EXPECT_EQ((*next)->sequence, start.snapshot.sequence() + 1);
}

}  // namespace
}  // namespace quiver
