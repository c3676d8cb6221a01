// What an operator watches: DurabilityStats' sync latency histogram, WAL
// bytes since the last checkpoint, free space and health (HealthState's
// rule), and the events Options::logger receives (quiver/logger.h), each
// delivered once with its facts.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "env/fault_file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

const std::string kDir = "/db";

void WriteGroups(Graph& g, int from, int to) {
  for (int k = from; k < to; ++k) {
    WriteBatch b;
    b.AddVertex("Item", {{"k", k}, {"pad", std::string(40, 'p')}});
    ASSERT_TRUE(g.Write(std::move(b)).ok());
  }
}

struct Event {
  LogLevel level;
  std::string event;
  std::string message;
};

class RecordingLogger : public Logger {
 public:
  void Log(LogLevel level, std::string_view event, std::string_view message) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back({level, std::string(event), std::string(message)});
  }
  std::vector<Event> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  // The events named `name`.
  std::vector<Event> Named(const std::string& name) const {
    std::vector<Event> out;
    for (const Event& e : events())
      if (e.event == name) out.push_back(e);
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

std::string LastSegment(env::SimFileSystem& fs) {
  std::string last;
  const std::vector<std::string> listing = fs.ListDir(kDir).value();
  for (const std::string& name : listing)
    if (wal::ParseSegmentFileName(name)) last = name;
  return last;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// --- Statistics

TEST(OperatorStatsTest, SyncHistogramCountsEveryWalSync) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
  WriteGroups(*g, 0, 25);
  const DurabilityStats d = g->GetDurabilityStats();
  EXPECT_EQ(d.wal_syncs, 25u);
  EXPECT_EQ(std::accumulate(d.wal_sync_latency_histogram.begin(), d.wal_sync_latency_histogram.end(),
                            std::uint64_t{0}),
            d.wal_syncs);
}

TEST(OperatorStatsTest, SlowSyncsLandInTheirBucketAndAreLogged) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto logger = std::make_shared<RecordingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  o.durable.slow_sync_microseconds = 4000;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  EXPECT_TRUE(logger->Named("slow_sync").empty());
  fs.SetSyncDelay(std::chrono::microseconds(5000));  // at least 5 ms: bucket 12 ([4096, 8192) us) or above
  WriteGroups(*g, 0, 3);
  const DurabilityStats d = g->GetDurabilityStats();
  std::uint64_t slow = 0;
  for (std::size_t i = 12; i < kSyncLatencyBuckets; ++i) slow += d.wal_sync_latency_histogram[i];
  EXPECT_EQ(slow, 3u);
  const std::vector<Event> events = logger->Named("slow_sync");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].level, LogLevel::kWarning);
  EXPECT_TRUE(Contains(events[0].message, "threshold 4000 us")) << events[0].message;
}

// A logger that throws from Log, as a careless one might (quiver/logger.h
// says it must not): the event is lost, the graph is not.
template <class E>
class ThrowingLogger : public Logger {
 public:
  void Log(LogLevel, std::string_view, std::string_view) override {
    calls_.fetch_add(1);
    throw E("logger failed");
  }
  int calls() const { return calls_.load(); }

 private:
  std::atomic<int> calls_{0};
};

struct BadAllocWithMessage : std::bad_alloc {
  explicit BadAllocWithMessage(const char*) {}
};

template <class Thrower>
void ExpectAThrowingLoggerLeavesTheGraphHealthy() {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto logger = std::make_shared<Thrower>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  o.durable.slow_sync_microseconds = 1;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  fs.SetSyncDelay(std::chrono::microseconds(100));  // every sync is "slow": slow_sync is logged
  WriteGroups(*g, 0, 3);
  EXPECT_GE(logger->calls(), 3);
  const DurabilityStats d = g->GetDurabilityStats();
  EXPECT_FALSE(d.poisoned);
  EXPECT_EQ(d.health, HealthState::kOk) << d.health_reason;
  fs.SetSyncDelay(std::chrono::microseconds(0));
  // A failed checkpoint logs too (on the caller's thread here).
  fs.SetFault({.ops = env::FaultOp::kWrite, .kind = env::FaultKind::kEnospc, .path_contains = ".qck"});
  EXPECT_FALSE(g->Checkpoint().ok());
  fs.ClearFault();
  ASSERT_TRUE(g->Close().ok());
  auto reopened = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->GetOpenStats().recovered_sequence, 3u);
}

TEST(OperatorStatsTest, LoggerThrowingBadAllocNeitherPoisonsNorLosesWrites) {
  ExpectAThrowingLoggerLeavesTheGraphHealthy<ThrowingLogger<BadAllocWithMessage>>();
}

TEST(OperatorStatsTest, LoggerThrowingAnyExceptionDoesNotEscapeTheWriter) {
  ExpectAThrowingLoggerLeavesTheGraphHealthy<ThrowingLogger<std::runtime_error>>();
}

TEST(OperatorStatsTest, WalBytesSinceCheckpoint) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
  // A new graph's log is the header page of its first segment.
  EXPECT_EQ(g->GetDurabilityStats().wal_bytes_since_checkpoint, wal::kWalPageBytes);
  WriteGroups(*g, 0, 10);
  DurabilityStats d = g->GetDurabilityStats();
  EXPECT_GT(d.wal_bytes_since_checkpoint, 0u);
  // wal_bytes counts what the groups wrote, each group padded to its 4 KiB
  // page (docs/wal_format.md, the page rule); the bytes since the checkpoint
  // (what the log takes on disk) add each new segment's header page.
  EXPECT_EQ(d.wal_bytes, 10 * wal::kWalPageBytes);
  EXPECT_GT(d.wal_bytes_since_checkpoint, d.wal_bytes);
  EXPECT_EQ((d.wal_bytes_since_checkpoint - d.wal_bytes) % wal::kWalPageBytes, 0u);
  ASSERT_TRUE(g->Checkpoint().ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_bytes_since_checkpoint, 0u);
  WriteGroups(*g, 10, 13);
  d = g->GetDurabilityStats();
  EXPECT_GT(d.wal_bytes_since_checkpoint, 0u);
  EXPECT_LT(d.wal_bytes_since_checkpoint, d.wal_bytes);
}

// Review of walpage2 (LOW): wal_bytes_since_checkpoint is "what the log the
// next Open would read takes on disk", and Open adds the log it found to it.
// The writer counts each group with its padding but not a segment's header
// page; recovery counts every segment's valid end, its header page (4 KiB in
// format 3) included. So the same log counts one page more per segment after
// a reopen, and a reopen moves the checkpoint trigger. Seen to fail before the
// writer counted the header page of each segment it starts.
TEST(OperatorStatsTest, WalBytesSinceCheckpointIsTheSameAfterAReopen) {
  env::SimFileSystem fs;
  Options o = test_util::SmallSegmentOptions();
  o.durable.wal_segment_bytes = std::uint64_t{1} << 20;  // one segment
  std::uint64_t before = 0;
  {
    auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
    WriteGroups(*g, 0, 10);
    before = g->GetDurabilityStats().wal_bytes_since_checkpoint;
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  ASSERT_EQ(g->GetOpenStats().wal_segments_read, 1u);
  EXPECT_EQ(g->GetDurabilityStats().wal_bytes_since_checkpoint, before)
      << "the same log, counted by the writer and then by recovery";
}

// Review MEDIUM B: checkpoint_wal_bytes counts what the log takes on disk,
// the padding that ends each group on a 4 KiB page (docs/wal_format.md, the
// page rule) included. Counting the records only, a serial workload of
// single-element commits (a page each, 30 to 60 times its records) let the
// WAL grow that many times past the threshold before a checkpoint. Here 300
// commits take 18 times the threshold on disk: checkpoints must have run.
TEST(OperatorStatsTest, CheckpointTriggerCountsWhatTheLogTakesOnDisk) {
  env::SimFileSystem fs;
  Options o = test_util::SmallSegmentOptions();
  o.durable.wal_segment_bytes = std::uint64_t{1} << 20;
  o.durable.checkpoint_wal_bytes = 64 << 10;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  WriteGroups(*g, 0, 300);
  DurabilityStats d = g->GetDurabilityStats();
  EXPECT_EQ(d.wal_bytes, 300 * wal::kWalPageBytes);
  EXPECT_GT(d.wal_bytes, 18 * o.durable.checkpoint_wal_bytes);
  // The background checkpoints were asked for while the groups were
  // written; the first one may still be running. A bound on the wait only
  // so that a trigger that never fires fails instead of hanging.
  for (int i = 0; i < 60000 && d.checkpoints_written + d.checkpoint_failures == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    d = g->GetDurabilityStats();
  }
  EXPECT_GT(d.checkpoints_written, 0u) << "no checkpoint after " << d.wal_bytes << " WAL bytes on disk";
}

// Regression (review F5): a group the writer logs after a checkpoint's
// barrier (while the checkpointing thread wakes up and writes) lies after
// the checkpoint's WAL position, so the next Open replays it: it stays
// counted in wal_bytes_since_checkpoint.
TEST(OperatorStatsTest, WalBytesSinceCheckpointKeepWhatFollowsTheBarrier) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
  auto& impl = static_cast<GraphImpl&>(*g);
  WriteGroups(*g, 0, 10);
  std::uint64_t after_barrier = 0;
  impl.TEST_SetAfterCheckpointBarrier([&] {
    const std::uint64_t before = g->GetDurabilityStats().wal_bytes_since_checkpoint;
    WriteGroups(*g, 10, 12);
    after_barrier = g->GetDurabilityStats().wal_bytes_since_checkpoint - before;
  });
  ASSERT_TRUE(g->Checkpoint().ok());
  impl.TEST_SetAfterCheckpointBarrier(nullptr);
  ASSERT_GT(after_barrier, 0u);
  EXPECT_EQ(g->GetDurabilityStats().wal_bytes_since_checkpoint, after_barrier);
}

// A logger that holds the writer thread inside its slow_sync event until
// the test has taken a statistics snapshot: the snapshot must see the sync
// whole (counted in wal_syncs, wal_bytes and the histogram alike) or not at
// all, never half.
class BlockingLogger : public Logger {
 public:
  void Log(LogLevel, std::string_view event, std::string_view) override {
    if (event != "slow_sync") return;
    std::unique_lock<std::mutex> lock(mu_);
    inside_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
  }
  void WaitInside() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return inside_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool inside_ = false;
  bool released_ = false;
};

TEST(OperatorStatsTest, SnapshotSeesASyncWholeOrNotAtAll) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto logger = std::make_shared<BlockingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  o.durable.slow_sync_microseconds = 1;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  fs.SetSyncDelay(std::chrono::microseconds(100));  // the next sync is "slow"
  std::thread writer([&] { WriteGroups(*g, 0, 1); });
  logger->WaitInside();  // the writer thread is logging the slow sync
  const DurabilityStats d = g->GetDurabilityStats();
  logger->Release();
  writer.join();
  const std::uint64_t histogram = std::accumulate(d.wal_sync_latency_histogram.begin(),
                                                  d.wal_sync_latency_histogram.end(), std::uint64_t{0});
  EXPECT_EQ(histogram, d.wal_syncs);
  EXPECT_EQ(d.wal_syncs, 1u);
  EXPECT_EQ(d.wal_bytes, wal::kWalPageBytes);  // one group, padded to its page
  EXPECT_GT(d.wal_bytes_since_checkpoint, 0u);
  const DurabilityStats after = g->GetDurabilityStats();
  EXPECT_EQ(after.wal_syncs, 1u);
  EXPECT_EQ(after.wal_bytes, d.wal_bytes);
  EXPECT_EQ(after.wal_bytes_since_checkpoint, d.wal_bytes_since_checkpoint);
}

TEST(OperatorStatsTest, FreeSpaceComesFromTheFileSystemAndLowSpaceDegrades) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
  DurabilityStats d = g->GetDurabilityStats();
  EXPECT_EQ(d.free_space_bytes, std::uint64_t{1} << 40);
  EXPECT_EQ(d.health, HealthState::kOk) << d.health_reason;
  EXPECT_TRUE(d.health_reason.empty());
  fs.SetFreeSpace(300);  // less than one 512-byte segment
  d = g->GetDurabilityStats();
  EXPECT_EQ(d.free_space_bytes, 300u);
  EXPECT_EQ(d.health, HealthState::kDegraded);
  EXPECT_TRUE(Contains(d.health_reason, "free space 300")) << d.health_reason;
  fs.SetFreeSpace(4096);
  EXPECT_EQ(g->GetDurabilityStats().health, HealthState::kOk);
  auto mem = Graph::OpenInMemory().value();
  EXPECT_EQ(mem->GetDurabilityStats().health, HealthState::kOk);
  EXPECT_EQ(mem->GetDurabilityStats().free_space_bytes, 0u);
}

TEST(OperatorStatsTest, FailedCheckpointDegradesAndIsLoggedOnceUntilOneSucceeds) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto logger = std::make_shared<RecordingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  WriteGroups(*g, 0, 5);
  fs.SetFault({.ops = env::FaultOp::kWrite, .kind = env::FaultKind::kEnospc, .path_contains = ".qck"});
  Status s = g->Checkpoint();
  ASSERT_FALSE(s.ok());
  DurabilityStats d = g->GetDurabilityStats();
  EXPECT_EQ(d.health, HealthState::kDegraded);
  EXPECT_TRUE(Contains(d.health_reason, "checkpoint failed")) << d.health_reason;
  std::vector<Event> events = logger->Named("checkpoint_failed");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, LogLevel::kError);
  EXPECT_TRUE(Contains(events[0].message, std::string(s.message()))) << events[0].message;
  fs.ClearFault();
  WriteGroups(*g, 5, 6);
  ASSERT_TRUE(g->Checkpoint().ok());
  EXPECT_EQ(g->GetDurabilityStats().health, HealthState::kOk);
  EXPECT_EQ(logger->Named("checkpoint_failed").size(), 1u);
}

TEST(OperatorStatsTest, PoisoningIsHealthPoisonedAndLoggedOnce) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto logger = std::make_shared<RecordingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  WriteGroups(*g, 0, 3);
  fs.SetFault({.ops = env::FaultOp::kSync, .path_contains = "wal-"});
  for (int k = 0; k < 3; ++k) {
    WriteBatch b;
    b.AddVertex("Item");
    EXPECT_FALSE(g->Write(std::move(b)).ok());
  }
  const DurabilityStats d = g->GetDurabilityStats();
  EXPECT_TRUE(d.poisoned);
  EXPECT_EQ(d.health, HealthState::kPoisoned);
  const std::vector<Event> events = logger->Named("poisoned");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, LogLevel::kError);
  EXPECT_TRUE(Contains(events[0].message, "WAL write or sync failed")) << events[0].message;
  EXPECT_TRUE(Contains(events[0].message, "injected")) << events[0].message;
}

// --- Open's findings

TEST(OperatorEventsTest, CleanOpenLogsNothing) {
  env::SimFileSystem fs;
  auto logger = std::make_shared<RecordingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  {
    auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
    WriteGroups(*g, 0, 10);
    ASSERT_TRUE(g->Checkpoint().ok());
    WriteGroups(*g, 10, 15);
  }
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  EXPECT_TRUE(logger->events().empty()) << logger->events().front().event;
  EXPECT_EQ(g->GetDurabilityStats().health, HealthState::kOk);
}

TEST(OperatorEventsTest, TornTailIsLoggedOnceWithItsSize) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
    WriteGroups(*g, 0, 10);
  }
  const std::string path = kDir + "/" + LastSegment(fs);
  const std::string bytes = fs.ReadFileForTest(path).value();
  ASSERT_TRUE(fs.WriteFileForTest(path, bytes.substr(0, bytes.size() - 5)).ok());
  auto logger = std::make_shared<RecordingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  const std::uint64_t cut = g->GetOpenStats().tail_bytes_truncated;
  ASSERT_GT(cut, 0u);
  ASSERT_EQ(logger->events().size(), 1u);
  const Event e = logger->events()[0];
  EXPECT_EQ(e.event, "torn_tail");
  EXPECT_EQ(e.level, LogLevel::kWarning);
  EXPECT_TRUE(Contains(e.message, "cut " + std::to_string(cut) + " bytes")) << e.message;
  EXPECT_TRUE(Contains(e.message, "sequence 9")) << e.message;
}

TEST(OperatorEventsTest, CheckpointFallbackIsLoggedOnce) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
    WriteGroups(*g, 0, 5);
    ASSERT_TRUE(g->Checkpoint().ok());
    WriteGroups(*g, 5, 10);
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  const std::string newest = kDir + "/" + checkpoint::CheckpointFileName(10);
  ASSERT_TRUE(fs.FlipBit(newest, (checkpoint::kHeaderBytes + checkpoint::kBlockHeaderBytes + 2) * 8).ok());
  auto logger = std::make_shared<RecordingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  ASSERT_TRUE(g->GetOpenStats().used_previous_checkpoint);
  const std::vector<Event> events = logger->Named("checkpoint_fallback");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(Contains(events[0].message, "sequence 5")) << events[0].message;
  EXPECT_EQ(logger->events().size(), 1u);
  EXPECT_EQ(g->GetDurabilityStats().health, HealthState::kDegraded);
}

TEST(OperatorEventsTest, SalvageIsLoggedOnce) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
    WriteGroups(*g, 0, 30);
  }
  std::vector<std::string> segments;
  const std::vector<std::string> listing = fs.ListDir(kDir).value();
  for (const std::string& name : listing)
    if (wal::ParseSegmentFileName(name)) segments.push_back(name);
  ASSERT_GE(segments.size(), 3u);
  ASSERT_TRUE(fs.FlipBit(kDir + "/" + segments[1],
                         (wal::FirstRecordOffset(wal::kFormatVersion) + wal::kRecordHeaderBytes + 3) * 8)
                  .ok());
  auto logger = std::make_shared<RecordingLogger>();
  Options o = test_util::SmallSegmentOptions();
  o.logger = logger;
  o.durable.salvage_wal_prefix = true;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  ASSERT_TRUE(g->GetOpenStats().salvaged);
  const std::vector<Event> events = logger->Named("salvage");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, LogLevel::kError);
  EXPECT_TRUE(
      Contains(events[0].message, "up to sequence " + std::to_string(g->GetOpenStats().recovered_sequence)))
      << events[0].message;
  EXPECT_EQ(g->GetDurabilityStats().health, HealthState::kDegraded);
}

// Damage in a WAL record the loaded checkpoint already holds is skipped
// (docs/wal_format.md), and said once: the event names the directory, the
// bytes skipped (OpenStats::wal_covered_damage_bytes) and the checkpoint
// that holds them.
TEST(OperatorEventsTest, CoveredDamageIsLoggedOnceWithItsFacts) {
  env::SimFileSystem fs;
  Options setup = test_util::SmallSegmentOptions();
  setup.durable.wal_segment_bytes = std::uint64_t{64} << 10;  // one segment: the damage is read
  std::string expected;
  {
    auto g = GraphImpl::OpenDurable(setup, kDir, &fs).value();
    WriteGroups(*g, 0, 10);
    ASSERT_TRUE(g->Checkpoint().ok());
    WriteGroups(*g, 10, 15);
    expected = test_util::Dump(g->GetSnapshot());
  }
  // A bit of the last record the checkpoint holds (group 10), just before
  // the WAL position the checkpoint records.
  checkpoint::Header header;
  {
    auto file = fs.OpenReadable(kDir + "/" + checkpoint::CheckpointFileName(10)).value();
    ASSERT_TRUE(checkpoint::VerifyCheckpointFile(*file, &header).ok());
  }
  ASSERT_GT(header.wal_offset, wal::kSegmentHeaderBytes);
  ASSERT_TRUE(
      fs.FlipBit(kDir + "/" + wal::SegmentFileName(header.wal_segment), 8 * (header.wal_offset - 3)).ok());
  auto logger = std::make_shared<RecordingLogger>();
  Options o = setup;
  o.logger = logger;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  const OpenStats stats = g->GetOpenStats();
  ASSERT_GT(stats.wal_covered_damage_bytes, 0u);
  EXPECT_EQ(stats.checkpoint_sequence, 10u);
  EXPECT_EQ(stats.recovered_sequence, 15u);
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), expected);
  const std::vector<Event> events = logger->Named("covered_damage");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, LogLevel::kWarning);
  EXPECT_TRUE(Contains(events[0].message, kDir + ": ")) << events[0].message;
  EXPECT_TRUE(
      Contains(events[0].message, "skipped " + std::to_string(stats.wal_covered_damage_bytes) + " bytes"))
      << events[0].message;
  EXPECT_TRUE(Contains(events[0].message, "checkpoint at sequence 10")) << events[0].message;
  EXPECT_EQ(logger->events().size(), 1u) << "another event: " << logger->events().back().event;
  EXPECT_EQ(g->GetDurabilityStats().health, HealthState::kDegraded);
  // Once per Open, not per later event: writes and a checkpoint say nothing.
  WriteGroups(*g, 15, 20);
  ASSERT_TRUE(g->Checkpoint().ok());
  EXPECT_EQ(logger->events().size(), 1u) << "another event: " << logger->events().back().event;
}

}  // namespace
}  // namespace quiver
