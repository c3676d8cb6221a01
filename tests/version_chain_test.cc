// VersionChain's acquisition paths driven directly (storage/version.h): the
// split count's exchange-then-fold window (version.7) replayed step by step
// through the chain's test hooks, and the reader slots past their limits (a
// slot word's pin count full, more threads than slots). Each test checks
// the chain's own count of live versions, which a unit lost or spent twice
// puts off by one for good.
#include <gtest/gtest.h>

#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/version.h"

namespace quiver {
namespace {

using storage::ReaderPin;
using storage::VersionChain;

// Publishes an unchanged copy of the head with the next sequence number, as
// the writer does for a group (on the calling thread: the writer here).
const storage::Version* PublishNext(VersionChain* chain) {
  storage::GroupBlocks blocks;
  static std::uint64_t epoch = 0;
  storage::MutationContext ctx{++epoch, nullptr, nullptr, &blocks};
  storage::Version* v = chain->NewVersion(&ctx);
  ++v->roots.sequence;
  chain->Publish(v);
  return v;
}

// A rendezvous of two threads on numbered steps.
class Steps {
 public:
  void Reach(int step) {
    std::lock_guard<std::mutex> lock(mu_);
    step_ = step;
    cv_.notify_all();
  }
  void Await(int step) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return step_ >= step; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int step_ = 0;
};

// version.7: a reader's Acquire counted in flight when Publish exchanges the
// head word sees the head moved, gives back its own unit and returns owning
// the unit the fold will grant; it releases that unit before the fold. The
// old head's count must stay above zero until the fold, and the fold must
// then find it exact: the old head dies once, and one version stays live.
// (Without the fold bias the reader's release marks the old head dead and
// frees it, and the fold then works on freed memory.)
TEST(VersionChainTest, ReaderSpendingItsUnitBeforeTheFoldLeavesTheCountExact) {
  auto* chain = new VersionChain;
  const storage::Version* old_head = chain->head();
  Steps steps;
  bool parked = false;
  chain->TEST_SetAcquireHook([&] {
    if (parked) return;
    parked = true;
    steps.Reach(1);  // the reader is in flight and holds its own unit
    steps.Await(2);  // until the writer has exchanged the head word
  });
  chain->TEST_SetFoldHook([&] {
    steps.Reach(2);
    steps.Await(3);  // until the reader has released what it got
  });
  const storage::Version* got = nullptr;
  std::thread reader([&] {
    got = chain->Acquire();
    chain->Release(got);
    steps.Reach(3);
  });
  steps.Await(1);
  const storage::Version* new_head = PublishNext(chain);
  reader.join();
  EXPECT_EQ(got, old_head);
  EXPECT_EQ(chain->Stats().live_versions, 1u);
  // The new head is whole: a direct reference and a pin come and go.
  chain->TEST_SetAcquireHook(nullptr);
  chain->TEST_SetFoldHook(nullptr);
  const storage::Version* again = chain->Acquire();
  EXPECT_EQ(again, new_head);
  chain->Release(again);
  ReaderPin pin = chain->AcquirePin();
  EXPECT_EQ(pin.version, new_head);
  chain->ReleasePin(pin);
  EXPECT_EQ(chain->Stats().live_versions, 1u);
  chain->Shutdown();  // LSan: every version and the chain are freed
}

// One thread holding more snapshots than a slot word can count: the pins
// past the limit take direct references (no slot), every claim is of the
// head, and after a publication and the release of all of them exactly the
// new head is live.
TEST(VersionChainTest, PinsPastASlotsCountTakeDirectReferences) {
  auto* chain = new VersionChain;
  PublishNext(chain);
  const storage::Version* head = chain->head();
  const std::uint64_t extra = 100;
  const std::uint64_t n = VersionChain::TEST_max_pins() + extra;
  std::vector<ReaderPin> pins;
  pins.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) pins.push_back(chain->AcquirePin());
  std::uint64_t direct = 0;
  for (const ReaderPin& p : pins) {
    ASSERT_EQ(p.version, head);
    if (p.slot == ReaderPin::kNoSlot) ++direct;
  }
  EXPECT_EQ(direct, extra);
  PublishNext(chain);
  EXPECT_EQ(chain->Stats().live_versions, 2u);
  // Released on another thread, direct references first.
  std::thread([&] {
    for (auto it = pins.rbegin(); it != pins.rend(); ++it) chain->ReleasePin(*it);
  }).join();
  EXPECT_EQ(chain->Stats().live_versions, 1u);
  chain->Shutdown();
}

// More threads than slots, so threads share slot words: each pins the head,
// the writer publishes while all hold their pins, each then pins the new
// head beside the old one, and the old pins are released by another thread
// than took them. The old head stays live exactly until the last release.
TEST(VersionChainTest, ThreadsSharingSlotsKeepEveryVersionExact) {
  auto* chain = new VersionChain;
  PublishNext(chain);
  const storage::Version* first = chain->head();
  const int threads = static_cast<int>(2 * chain->TEST_slot_count() + 1);
  std::vector<ReaderPin> old_pins(static_cast<std::size_t>(threads));
  std::vector<std::string> errors(static_cast<std::size_t>(threads));
  const storage::Version* second = nullptr;
  std::barrier pinned(threads + 1);
  std::barrier published(threads + 1);
  std::barrier repinned(threads + 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const auto i = static_cast<std::size_t>(t);
      for (int k = 0; k < 50; ++k) chain->ReleasePin(chain->AcquirePin());  // churn the shared slot
      old_pins[i] = chain->AcquirePin();
      if (old_pins[i].version != first) errors[i] = "first pin not of the head";
      pinned.arrive_and_wait();
      published.arrive_and_wait();
      ReaderPin fresh = chain->AcquirePin();
      if (fresh.version != second) errors[i] = "pin after publication not of the new head";
      for (int k = 0; k < 50; ++k) chain->ReleasePin(chain->AcquirePin());
      chain->ReleasePin(fresh);
      repinned.arrive_and_wait();
    });
  }
  pinned.arrive_and_wait();
  second = PublishNext(chain);
  published.arrive_and_wait();
  repinned.arrive_and_wait();
  for (std::thread& t : pool) t.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(errors[static_cast<std::size_t>(t)], "") << "thread " << t;
  EXPECT_EQ(chain->Stats().live_versions, 2u);  // the old pins hold the first
  std::thread([&] {
    for (std::size_t i = 0; i + 1 < old_pins.size(); ++i) chain->ReleasePin(old_pins[i]);
  }).join();
  EXPECT_EQ(chain->Stats().live_versions, 2u);  // one old pin left
  chain->ReleasePin(old_pins.back());
  EXPECT_EQ(chain->Stats().live_versions, 1u);
  chain->Shutdown();
}

}  // namespace
}  // namespace quiver

namespace quiver {
namespace {

// Review finding: a reader releasing a snapshot held across a long backlog
// detached every dead version in one hold of the chain's mutex, which
// Publish takes on every commit, so the writer waited for the whole walk.
// Now at most kDetachChunk versions are detached per hold, and everything
// is still reclaimed (failed before the fix: 10,000 in one hold).
TEST(VersionChainTest, ABacklogIsDetachedAChunkPerHoldOfTheMutex) {
  auto* chain = new VersionChain;
  ReaderPin held = chain->AcquirePin();
  for (int i = 0; i < 10'000; ++i) PublishNext(chain);
  EXPECT_EQ(chain->Stats().live_versions, 2u);  // the held version and the head
  chain->ReleasePin(held);
  EXPECT_LE(chain->TEST_max_detached(), VersionChain::kDetachChunk);
  EXPECT_EQ(chain->Stats().live_versions, 1u);
  EXPECT_EQ(chain->Stats().retired_bytes, 0u);
  chain->Shutdown();  // LSan: every version and the chain are freed
}

// While a reader sweeps a backlog, a version the writer's fold kills is only
// marked: the writer frees none of the reader's backlog (no sweep of its
// own starts), and the sweeper's next look frees the writer's version too,
// so nothing is left behind when the sweep ends.
TEST(VersionChainTest, AVersionDyingDuringASweepIsLeftToTheSweeper) {
  auto* chain = new VersionChain;
  ReaderPin held = chain->AcquirePin();
  for (int i = 0; i < 1'000; ++i) PublishNext(chain);
  int calls = 0;
  std::uint64_t sweeps_before = 0, sweeps_after = 0;
  chain->TEST_SetSweepHook([&] {
    if (++calls != 1) return;
    sweeps_before = chain->TEST_sweeps();
    PublishNext(chain);  // the fold kills the old head while the sweep is under way
    sweeps_after = chain->TEST_sweeps();
  });
  chain->ReleasePin(held);
  chain->TEST_SetSweepHook(nullptr);
  EXPECT_GT(calls, 1);  // the backlog took several chunks
  EXPECT_EQ(sweeps_before, 1u);
  EXPECT_EQ(sweeps_after, 1u) << "the writer's fold started a sweep of its own";
  EXPECT_EQ(chain->Stats().live_versions, 1u);
  EXPECT_EQ(chain->Stats().retired_bytes, 0u);
  chain->Shutdown();
}

// Shutdown while a reader sweeps: the head's death is left to the sweeper,
// which then destroys the graph and deletes the chain (LSan and ASan check
// both happen once).
TEST(VersionChainTest, ShutdownDuringASweepLeavesTheLastStepToTheSweeper) {
  auto* chain = new VersionChain;
  ReaderPin held = chain->AcquirePin();
  for (int i = 0; i < 1'000; ++i) PublishNext(chain);
  int calls = 0;
  chain->TEST_SetSweepHook([&] {
    if (++calls == 1) chain->Shutdown();
  });
  chain->ReleasePin(held);  // deletes the chain: touch nothing of it afterwards
  EXPECT_GT(calls, 1);
}

}  // namespace
}  // namespace quiver
