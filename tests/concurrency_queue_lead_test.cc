// CommitQueue (src/write/commit_queue.h; in the concurrency binary, so the
// tsan preset runs it): producers that lead queued groups while they wait
// (GroupLeader), the hand-back to the writer thread when they stop trying
// (invariant 4), and the bound on queued bytes (WriterOptions::
// max_queued_bytes). No assertion here depends on how long anything takes:
// a pause only gives a wrong outcome time to happen.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <limits>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "graph_impl.h"
#include "quiver/quiver.h"
#include "write/commit_queue.h"

namespace quiver {
namespace {

WriteRequest* QueueLeadRequest(int vertices = 0) {
  WriteBatch b;
  for (int i = 0; i < vertices; ++i) b.AddVertex("V");
  return new WriteRequest(std::move(b), /*async=*/false);
}

// Completes every request it is handed, and counts its groups.
class CountingLeader final : public GroupLeader {
 public:
  CountingLeader() : GroupLeader(64, 1'000'000) {}
  void Commit(std::span<WriteRequest* const> group) noexcept override {
    groups.fetch_add(1);
    requests.fetch_add(group.size());
    for (WriteRequest* r : group) r->Complete(CommitInfo{});
  }
  std::atomic<int> groups{0};
  std::atomic<std::size_t> requests{0};
};

// A producer queued behind a group another thread commits takes the queued
// requests itself once the role comes back: no writer thread is running
// here, so without the leader its Wait would never return.
TEST(CommitQueueLeadTest, WaitingProducerCommitsTheQueuedGroup) {
  // A spin far longer than the test: the producer keeps trying to lead.
  CommitQueue queue(8, std::numeric_limits<std::uint32_t>::max() / 2);
  CountingLeader leader;
  WriteRequest* first = QueueLeadRequest();
  ASSERT_TRUE(queue.TryLead(first));  // the role is held
  std::atomic<bool> pushed{false};
  Result<CommitInfo> result = InternalError("the producer never waited");
  std::thread producer([&] {
    WriteRequest* r = QueueLeadRequest();
    ASSERT_TRUE(queue.Push(r, &leader).ok());
    pushed = true;
    result = queue.Wait(r);
  });
  while (!pushed.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(leader.groups.load(), 0);  // the role is still held
  first->Complete(CommitInfo{});
  queue.FinishGroup();
  EXPECT_TRUE(queue.Wait(first).ok());
  producer.join();
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(leader.groups.load(), 1);
  EXPECT_EQ(leader.requests.load(), 1u);
}

// Invariant 4: a producer that stops trying to lead (a 1 us spin) while
// someone else holds the role leaves its request to the writer thread,
// which the role holder then wakes: with a lost wake-up this test hangs.
TEST(CommitQueueLeadTest, WriterThreadTakesOverFromProducersThatStopLeading) {
  for (int trial = 0; trial < 50; ++trial) {
    CommitQueue queue(8, 1);
    CountingLeader leader;
    std::atomic<int> writer_groups{0};
    std::thread writer([&] {
      std::vector<WriteRequest*> group;
      while (queue.PopGroup(&group, 64, 1'000'000)) {
        for (WriteRequest* r : group) r->Complete(CommitInfo{});
        writer_groups.fetch_add(1);
        queue.FinishGroup();
        group.clear();
      }
    });
    WriteRequest* first = QueueLeadRequest();
    const bool led = queue.TryLead(first);
    std::vector<std::thread> producers;
    for (int p = 0; p < 3; ++p)
      producers.emplace_back([&] {
        WriteRequest* r = QueueLeadRequest();
        ASSERT_TRUE(queue.Push(r, &leader).ok());
        EXPECT_TRUE(queue.Wait(r).ok());
      });
    if (led) {
      std::this_thread::sleep_for(std::chrono::microseconds(trial * 20));
      first->Complete(CommitInfo{});
      queue.FinishGroup();
      EXPECT_TRUE(queue.Wait(first).ok());
    } else {
      ASSERT_TRUE(queue.Push(first).ok());
      EXPECT_TRUE(queue.Wait(first).ok());
    }
    for (std::thread& t : producers) t.join();
    queue.Close();
    writer.join();
    EXPECT_GT(leader.groups.load() + writer_groups.load(), 0);
  }
}

// The byte bound: a batch larger than the whole bound enters the empty
// queue; a second waits until the first is taken. Without the bound the
// second Push returns at once and `second_queued` is seen set.
TEST(CommitQueueBytesTest, BigBatchWaitsUntilTheQueuedOneIsTaken) {
  WriteRequest* first = QueueLeadRequest(1000);
  const std::size_t bound = first->bytes() / 2;  // smaller than either batch
  ASSERT_GT(bound, 0u);
  CommitQueue queue(16, 0, bound);
  ASSERT_TRUE(queue.Push(first).ok());  // empty queue: admitted anyway
  EXPECT_EQ(queue.TEST_queued_bytes(), first->bytes());
  std::atomic<bool> second_queued{false};
  WriteRequest* second = QueueLeadRequest(1000);
  std::thread producer([&] {
    ASSERT_TRUE(queue.Push(second).ok());
    second_queued = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(second_queued.load());
  std::vector<WriteRequest*> group;
  ASSERT_TRUE(queue.PopGroup(&group, 1, 1'000'000));  // takes the first only
  ASSERT_EQ(group, std::vector<WriteRequest*>{first});
  producer.join();  // admitted once the first was taken
  EXPECT_TRUE(second_queued.load());
  EXPECT_EQ(queue.TEST_queued_bytes(), second->bytes());
  first->Complete(CommitInfo{});
  queue.FinishGroup();
  EXPECT_TRUE(queue.Wait(first).ok());
  group.clear();
  ASSERT_TRUE(queue.PopGroup(&group, 8, 1'000'000));
  EXPECT_EQ(queue.TEST_queued_bytes(), 0u);
  second->Complete(CommitInfo{});
  queue.FinishGroup();
  EXPECT_TRUE(queue.Wait(second).ok());
}

// Small batches under the bound queue side by side without waiting.
TEST(CommitQueueBytesTest, BatchesUnderTheBoundQueueTogether) {
  WriteRequest* a = QueueLeadRequest(1);
  WriteRequest* b = QueueLeadRequest(1);
  CommitQueue queue(16, 0, a->bytes() + b->bytes());
  ASSERT_TRUE(queue.Push(a).ok());
  ASSERT_TRUE(queue.Push(b).ok());  // would block for ever on this thread if refused
  EXPECT_EQ(queue.TEST_queued_bytes(), a->bytes() + b->bytes());
  std::vector<WriteRequest*> group;
  ASSERT_TRUE(queue.PopGroup(&group, 8, 1'000'000));
  ASSERT_EQ(group.size(), 2u);
  for (WriteRequest* r : group) r->Complete(CommitInfo{});
  queue.FinishGroup();
  EXPECT_TRUE(queue.Wait(a).ok());
  EXPECT_TRUE(queue.Wait(b).ok());
}

// The byte size counts what a batch holds: more vertices, long strings.
TEST(CommitQueueBytesTest, BytesGrowWithTheBatch) {
  WriteBatch small, large, strings;
  small.AddVertex("V");
  for (int i = 0; i < 100; ++i) large.AddVertex("V");
  strings.AddVertex("V", {{"s", std::string(10'000, 'x')}});
  WriteRequest rs(std::move(small), false), rl(std::move(large), false), rt(std::move(strings), false);
  EXPECT_LT(rs.bytes(), rl.bytes());
  EXPECT_GT(rt.bytes(), 10'000u);
}

// Through the graph: producers of big batches behind a small bound, the
// writer thread alone (caller_commits off), all commit; and many producers
// of one vertex each, leading one another's groups, commit whole groups in
// sequence order.
TEST(CommitQueueBytesTest, GraphWithASmallBoundCommitsEveryBatch) {
  Options o;
  o.writer.max_queued_bytes = 4096;
  o.writer.caller_commits = false;
  auto g = Graph::OpenInMemory(o).value();
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p)
    producers.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        WriteBatch b;
        for (int v = 0; v < 200; ++v) b.AddVertex("V");
        EXPECT_TRUE(g->Write(std::move(b)).ok());
      }
    });
  for (std::thread& t : producers) t.join();
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 4u * 20 * 200);
}

TEST(CommitQueueLeadTest, ManyVolatileProducersCommitWholeGroupsInOrder) {
  constexpr int kProducers = 8;
  constexpr int kPerProducer = 400;
  auto g = Graph::OpenInMemory().value();
  auto& impl = static_cast<GraphImpl&>(*g);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      Snapshot s = g->GetSnapshot();
      EXPECT_EQ(s.vertex_count(), s.sequence());  // one vertex per batch: whole groups only
    }
  });
  std::mutex mu;
  std::vector<SequenceNumber> sequences;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&] {
      std::vector<SequenceNumber> mine;
      for (int i = 0; i < kPerProducer; ++i) {
        WriteBatch b;
        b.AddVertex("V");
        Result<CommitInfo> r = g->Write(std::move(b));
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        EXPECT_EQ(r->vertices[0].value() + 1, r->sequence);
        mine.push_back(r->sequence);
      }
      std::lock_guard<std::mutex> lock(mu);
      sequences.insert(sequences.end(), mine.begin(), mine.end());
    });
  for (std::thread& t : producers) t.join();
  stop = true;
  reader.join();
  std::sort(sequences.begin(), sequences.end());
  ASSERT_EQ(sequences.size(), static_cast<std::size_t>(kProducers * kPerProducer));
  for (std::size_t i = 0; i < sequences.size(); ++i) ASSERT_EQ(sequences[i], i + 1);
  std::cout << "[          ] " << impl.TEST_led_groups() << " groups led by waiting producers, "
            << impl.TEST_caller_groups() << " by lone producers\n";
}

}  // namespace
}  // namespace quiver
