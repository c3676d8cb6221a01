// OrderedWriter (src/import/ordered_writer.h), driven chunk by chunk from
// the test: text reaches the file in chunk order; a finished chunk waits in
// the ring only while the ring and the room of the waiting buffers allow,
// else its worker waits for the turn; a spill waits for its chunk's turn;
// Abort releases every waiting worker.
#include "import/ordered_writer.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "env/sim_file_system.h"
#include "gtest/gtest.h"
#include "import_test_util.h"

namespace quiver::import {
namespace {

using testing_import::GetFile;

class OrderedWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs_.CreateDir("/d").ok());
    w_ = CsvWriter::Create(&fs_, "/d/out", env::OpenMode::kCreateNew).value();
  }
  std::string Written() {
    EXPECT_TRUE(w_->Finish().ok());
    return GetFile(fs_, "/d/out");
  }
  // A buffer holding `text` with at least `room` bytes of capacity.
  static std::string Buffer(const std::string& text, std::size_t room) {
    std::string b;
    b.reserve(room);
    b = text;
    return b;
  }
  // True while `done` stays false for a while: a call that must wait has
  // not returned. (A wrong implementation returns at once and is caught;
  // a right one never returns before it is released.)
  static bool StillWaiting(const std::atomic<bool>& done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return !done.load();
  }

  env::SimFileSystem fs_;
  std::unique_ptr<CsvWriter> w_;
};

TEST_F(OrderedWriterTest, ChunksFinishedEarlyWaitInTheRingAndFollowTheTurnInOrder) {
  OrderedWriter order(w_.get(), 4, {.spill_bytes = 1 << 20, .pending_bytes = 1 << 20, .ring = 4});
  std::uint64_t c;
  for (std::uint64_t want = 0; want < 4; ++want) {
    ASSERT_TRUE(order.Claim(&c));
    EXPECT_EQ(c, want);
  }
  EXPECT_FALSE(order.Claim(&c));
  std::string t3 = Buffer("three;", 64), t1 = Buffer("one;", 64), t0 = "zero;", t2 = "two;";
  ASSERT_TRUE(order.Done(3, &t3).ok());  // waits in the ring
  ASSERT_TRUE(order.Done(1, &t1).ok());
  EXPECT_TRUE(t3.empty());
  EXPECT_GE(order.pending_bytes(), 128u);  // the room of both buffers
  ASSERT_TRUE(order.Done(0, &t0).ok());    // 0, then 1; 3 still waits for 2
  EXPECT_GE(order.pending_bytes(), 64u);
  ASSERT_TRUE(order.Done(2, &t2).ok());
  EXPECT_EQ(order.pending_bytes(), 0u);
  EXPECT_TRUE(order.status().ok());
  EXPECT_EQ(Written(), "zero;one;two;three;");
}

TEST_F(OrderedWriterTest, AFinishedChunkWaitsForItsTurnWhenTheWaitingRoomIsFull) {
  OrderedWriter order(w_.get(), 3, {.spill_bytes = 1 << 20, .pending_bytes = 5000, .ring = 8});
  std::uint64_t c;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(order.Claim(&c));
  std::string t1 = Buffer("one;", 3000), t2 = Buffer("two;", 3000), t0 = "zero;";
  ASSERT_TRUE(order.Done(1, &t1).ok());  // 3,000 of 5,000
  std::atomic<bool> done{false};
  std::thread second([&] {
    EXPECT_TRUE(order.Done(2, &t2).ok());  // 6,000 would not fit: waits for chunk 2's turn
    done = true;
  });
  EXPECT_TRUE(StillWaiting(done));
  EXPECT_LE(order.pending_bytes(), 5000u);
  ASSERT_TRUE(order.Done(0, &t0).ok());
  second.join();
  EXPECT_EQ(Written(), "zero;one;two;");
}

TEST_F(OrderedWriterTest, AFinishedChunkWaitsForItsTurnWhenTheRingIsFull) {
  OrderedWriter order(w_.get(), 4, {.spill_bytes = 1 << 20, .pending_bytes = 1 << 20, .ring = 2});
  std::uint64_t c;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(order.Claim(&c));
  std::string t0 = "0", t1 = "1", t2 = "2", t3 = "3";
  ASSERT_TRUE(order.Done(1, &t1).ok());  // slot 1 of 2
  std::atomic<bool> done{false};
  std::thread third([&] {
    EXPECT_TRUE(order.Done(2, &t2).ok());  // 2 - 0 >= 2 slots: waits
    done = true;
  });
  EXPECT_TRUE(StillWaiting(done));
  ASSERT_TRUE(order.Done(0, &t0).ok());
  third.join();
  ASSERT_TRUE(order.Done(3, &t3).ok());
  EXPECT_EQ(Written(), "0123");
}

TEST_F(OrderedWriterTest, ASpillWaitsForItsChunksTurnAndGoesOutInPlace) {
  OrderedWriter order(w_.get(), 2, {.spill_bytes = 4, .pending_bytes = 0, .ring = 1});
  std::uint64_t c;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(order.Claim(&c));
  std::string a = "b-first;", b = "b-rest;", t0 = "a;";
  std::atomic<bool> spilled{false};
  std::thread later([&] {
    EXPECT_TRUE(order.Spill(1, &a).ok());  // chunk 1 mid-way: waits for chunk 0
    spilled = true;
    EXPECT_TRUE(order.Done(1, &b).ok());
  });
  EXPECT_TRUE(StillWaiting(spilled));
  ASSERT_TRUE(order.Done(0, &t0).ok());
  later.join();
  EXPECT_EQ(Written(), "a;b-first;b-rest;");
}

TEST_F(OrderedWriterTest, AbortReleasesEveryWaitingWorkerAndStopsClaims) {
  OrderedWriter order(w_.get(), 5, {.spill_bytes = 1, .pending_bytes = 0, .ring = 1});
  std::uint64_t c;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(order.Claim(&c));
  std::string t1 = "1", t2 = "2";
  Status s1, s2;
  std::thread one([&] { s1 = order.Done(1, &t1); });
  std::thread two([&] { s2 = order.Spill(2, &t2); });
  order.Abort(IOError("disk full"));
  one.join();
  two.join();
  EXPECT_EQ(s1.code(), StatusCode::kCancelled);
  EXPECT_EQ(s2.code(), StatusCode::kCancelled);
  EXPECT_EQ(order.status().code(), StatusCode::kIOError);
  order.Abort(InternalError("later"));  // the first failure stays
  EXPECT_EQ(order.status().code(), StatusCode::kIOError);
  EXPECT_FALSE(order.Claim(&c));
  EXPECT_EQ(Written(), "");
}

}  // namespace
}  // namespace quiver::import
