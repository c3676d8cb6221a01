// CommitQueue (src/write/commit_queue.h; in the concurrency binary, so the
// tsan preset runs it): closing the queue ends the writer's spin for work
// at once, so destroying a graph never waits out a spin, however long the
// configured one; a producer that takes the writer's role (TryLead) holds
// it alone until FinishGroup, the writer thread included.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "write/commit_queue.h"

namespace quiver {
namespace {

// Before the fix PopGroup spun through its whole budget (here 71 minutes)
// after Close, and this test hung until ctest's timeout killed it.
TEST(CommitQueueTest, CloseEndsTheWritersSpinForWork) {
  CommitQueue queue(4, std::numeric_limits<std::uint32_t>::max());
  std::vector<WriteRequest*> group;
  bool popped = true;
  std::thread writer([&] { popped = queue.PopGroup(&group, 8, 100); });
  queue.Close();
  writer.join();
  EXPECT_FALSE(popped);
  EXPECT_TRUE(group.empty());
  // Closed before the writer looks: no spin either.
  EXPECT_FALSE(queue.PopGroup(&group, 8, 100));
}

WriteRequest* NewRequest() { return new WriteRequest(WriteBatch(), /*async=*/false); }

// The role holder's side of a group: completes each request, finishes the
// group, and collects each result (which drops the producers' references).
void CompleteAndCollect(CommitQueue& queue, const std::vector<WriteRequest*>& group) {
  for (WriteRequest* r : group) r->Complete(CommitInfo{});
  queue.FinishGroup();
  for (WriteRequest* r : group) EXPECT_TRUE(queue.Wait(r).ok());
}

TEST(CommitQueueTest, LeadsOnlyWhenNothingIsQueuedAndNobodyCommits) {
  CommitQueue queue(4, 0);
  WriteRequest* lead = NewRequest();
  ASSERT_TRUE(queue.TryLead(lead));
  // The role is taken: nobody else leads, and work queues instead.
  WriteRequest* second = NewRequest();
  EXPECT_FALSE(queue.TryLead(second));
  ASSERT_TRUE(queue.Push(second).ok());
  CompleteAndCollect(queue, {lead});
  // Free again, but something is queued: it goes first, through the writer.
  WriteRequest* third = NewRequest();
  EXPECT_FALSE(queue.TryLead(third));
  ASSERT_TRUE(queue.Push(third).ok());
  std::vector<WriteRequest*> group;
  ASSERT_TRUE(queue.PopGroup(&group, 8, 100));
  ASSERT_EQ(group.size(), 2u);
  // The writer holds the role until it finishes the group.
  WriteRequest* fourth = NewRequest();
  EXPECT_FALSE(queue.TryLead(fourth));
  CompleteAndCollect(queue, group);
  // After a group of several, producers arrive together: nobody leads
  // until the writer thread commits a group of one again.
  EXPECT_FALSE(queue.TryLead(fourth));
  ASSERT_TRUE(queue.Push(fourth).ok());
  group.clear();
  ASSERT_TRUE(queue.PopGroup(&group, 8, 100));
  CompleteAndCollect(queue, group);
  WriteRequest* fifth = NewRequest();
  ASSERT_TRUE(queue.TryLead(fifth));
  CompleteAndCollect(queue, {fifth});
  // Closed: nobody leads.
  queue.Close();
  WriteRequest* late = NewRequest();
  EXPECT_FALSE(queue.TryLead(late));
  EXPECT_FALSE(queue.Push(late).ok());
  delete late;
}

// Invariant 3: while a producer holds the writer's role, the writer thread
// takes no group, even with work queued or the queue closed. The pause
// before the leader finishes only gives a wrong PopGroup time to return;
// nothing here depends on how long it is.
TEST(CommitQueueTest, WriterThreadWaitsForTheLeader) {
  for (bool close : {false, true}) {
    CommitQueue queue(4, 0);
    WriteRequest* lead = NewRequest();
    ASSERT_TRUE(queue.TryLead(lead));
    std::atomic<bool> leader_finished{false};
    std::atomic<bool> popped_early{false};
    std::vector<WriteRequest*> group;
    bool popped = false;
    std::thread writer([&] {
      popped = queue.PopGroup(&group, 8, 100);
      popped_early = !leader_finished.load();
    });
    WriteRequest* queued = nullptr;
    if (close) {
      queue.Close();
    } else {
      queued = NewRequest();
      ASSERT_TRUE(queue.Push(queued).ok());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lead->Complete(CommitInfo{});
    leader_finished = true;
    queue.FinishGroup();
    EXPECT_TRUE(queue.Wait(lead).ok());
    writer.join();
    EXPECT_FALSE(popped_early) << (close ? "closed" : "work queued");
    EXPECT_EQ(popped, !close);
    if (!close) {
      ASSERT_EQ(group, std::vector<WriteRequest*>{queued});
      CompleteAndCollect(queue, group);
    }
  }
}

}  // namespace
}  // namespace quiver
