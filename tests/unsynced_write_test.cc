// Per-write durability (WriteOptions::sync = false, Graph::Sync): an unsynced
// write is acknowledged once applied and published; its log record is held
// back in memory and written, with every other held-back record and the next
// synced group's, as one record (docs/durability.md, "Unsynced writes").
// These tests run on the power-loss simulator, so "durable" means "survives
// SimFileSystem::Crash under every policy".
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
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

using test_util::Dump;

constexpr WriteOptions kNoSync{.sync = false};

Options TestOptions() {
  Options o;
  o.durable.checkpoint_wal_bytes = 0;  // checkpoints only when the test asks
  o.durable.checkpoint_on_close = false;
  o.writer.spin_microseconds = 0;
  return o;
}

WriteBatch OneVertex(int k, std::size_t value_bytes = 0) {
  WriteBatch b;
  b.AddVertex("Item", {{"k", k}, {"pad", std::string(value_bytes, 'p')}});
  return b;
}

// The recovered sequence of a copy of `fs` crashed under `policy` (-1 if
// Open fails), with its dump in *dump.
std::int64_t RecoveredSequence(const env::SimFileSystem& fs, env::CrashPolicy policy,
                               std::string* dump = nullptr) {
  std::unique_ptr<env::SimFileSystem> disk = fs.Clone();
  disk->Crash(policy, 7);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", disk.get());
  if (!g.ok()) {
    ADD_FAILURE() << "open after a crash under policy " << static_cast<int>(policy) << ": "
                  << g.status().ToString();
    return -1;
  }
  if (dump != nullptr) *dump = Dump((*g)->GetSnapshot());
  return static_cast<std::int64_t>((*g)->GetSnapshot().sequence());
}

TEST(UnsyncedWriteTest, VisibleAtOnceAndHeldBackUntilSync) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1)).ok());
  const DurabilityStats before = g->GetDurabilityStats();
  for (int k = 2; k <= 4; ++k) {
    Result<CommitInfo> r = g->Write(OneVertex(k), kNoSync);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->sequence, static_cast<SequenceNumber>(k));
    // Read-your-writes: a snapshot taken after the call returns shows it.
    const Snapshot s = g->GetSnapshot();
    EXPECT_EQ(s.sequence(), static_cast<SequenceNumber>(k));
    EXPECT_TRUE(s.HasVertex(r->vertices[0]));
  }
  // Nothing written or synced for them yet: a power cut loses all three.
  EXPECT_EQ(g->GetDurabilityStats().wal_bytes, before.wal_bytes);
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, before.wal_syncs);
  for (env::CrashPolicy p : env::kAllCrashPolicies) EXPECT_EQ(RecoveredSequence(fs, p), 1);

  const std::string expected = Dump(g->GetSnapshot());
  ASSERT_TRUE(g->Sync().ok());
  // One record, one fdatasync for the three.
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, before.wal_syncs + 1);
  EXPECT_GT(g->GetDurabilityStats().wal_bytes, before.wal_bytes);
  for (env::CrashPolicy p : env::kAllCrashPolicies) {
    std::string dump;
    EXPECT_EQ(RecoveredSequence(fs, p, &dump), 4);
    EXPECT_EQ(dump, expected);
  }
  // Nothing held: Sync writes nothing more.
  ASSERT_TRUE(g->Sync().ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, before.wal_syncs + 1);
}

TEST(UnsyncedWriteTest, ASyncedWriteCarriesTheHeldBackOnesInOneRecord) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  for (int k = 1; k <= 3; ++k) ASSERT_TRUE(g->Write(OneVertex(k), kNoSync).ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 0u);
  ASSERT_TRUE(g->Write(OneVertex(4)).ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 1u);
  for (env::CrashPolicy p : env::kAllCrashPolicies) EXPECT_EQ(RecoveredSequence(fs, p), 4);
}

TEST(UnsyncedWriteTest, CloseWritesWhatIsHeldBack) {
  env::SimFileSystem fs;
  std::string expected;
  {
    auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
    for (int k = 1; k <= 5; ++k) ASSERT_TRUE(g->Write(OneVertex(k), kNoSync).ok());
    EXPECT_EQ(g->GetDurabilityStats().wal_bytes, 0u);
    expected = Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());  // no checkpoint on close: the WAL must hold them
    EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 1u);
    EXPECT_EQ(g->Sync().code(), StatusCode::kFailedPrecondition);
  }
  for (env::CrashPolicy p : env::kAllCrashPolicies) {
    std::string dump;
    EXPECT_EQ(RecoveredSequence(fs, p, &dump), 5);
    EXPECT_EQ(dump, expected);
  }
}

TEST(UnsyncedWriteTest, TheBoundWritesAndSyncsLikeASyncedWrite) {
  env::SimFileSystem fs;
  Options o = TestOptions();
  o.durable.max_unsynced_bytes = 4096;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  // About 1 KiB of record each: the first three stay held back.
  for (int k = 1; k <= 3; ++k) ASSERT_TRUE(g->Write(OneVertex(k, 1000), kNoSync).ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 0u);
  int k = 3;
  while (g->GetDurabilityStats().wal_syncs == 0 && k < 10)
    ASSERT_TRUE(g->Write(OneVertex(++k, 1000), kNoSync).ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 1u);
  EXPECT_LE(k, 5) << "the bound of 4096 bytes was passed long before the write";
  // Everything up to the write that reached the bound is durable.
  for (env::CrashPolicy p : env::kAllCrashPolicies) EXPECT_EQ(RecoveredSequence(fs, p), k);
}

TEST(UnsyncedWriteTest, ZeroBoundHoldsNothingBack) {
  env::SimFileSystem fs;
  Options o = TestOptions();
  o.durable.max_unsynced_bytes = 0;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1), kNoSync).ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 1u);
}

TEST(UnsyncedWriteTest, TheBoundIsValidatedAtOpen) {
  env::SimFileSystem fs;
  Options o = TestOptions();
  o.durable.max_unsynced_bytes = kMaxUnsyncedBytesCeiling + 1;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("max_unsynced_bytes"), std::string::npos) << g.status().ToString();
  EXPECT_FALSE(fs.Exists("/db").value()) << "a refused Open created the directory";
}

TEST(UnsyncedWriteTest, InMemoryAndReadOnlyGraphsIgnoreIt) {
  auto g = Graph::OpenInMemory().value();
  Result<CommitInfo> r = g->Write(OneVertex(1), kNoSync);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(g->GetSnapshot().HasVertex(r->vertices[0]));
  EXPECT_TRUE(g->Sync().ok());
  EXPECT_TRUE(g->WriteAsync(OneVertex(2), kNoSync).get().ok());
  EXPECT_EQ(g->GetSnapshot().sequence(), 2u);

  env::SimFileSystem fs;
  { ASSERT_TRUE(GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value()->Write(OneVertex(1)).ok()); }
  Options ro = TestOptions();
  ro.read_only = true;
  auto reader = GraphImpl::OpenDurable(ro, "/db", &fs).value();
  EXPECT_TRUE(reader->Sync().ok());
  EXPECT_EQ(reader->Write(OneVertex(2), kNoSync).status().code(), StatusCode::kFailedPrecondition);
}

// A checkpoint first writes what is held back, then records the WAL
// position after it: the checkpoint never covers a group that is not in
// the log, and the position it records is exactly the log's end.
TEST(UnsyncedWriteTest, CheckpointWritesHeldGroupsFirstAndRecordsTheExactPosition) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1)).ok());
  for (int k = 2; k <= 4; ++k) ASSERT_TRUE(g->Write(OneVertex(k), kNoSync).ok());
  ASSERT_TRUE(g->Checkpoint().ok());
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 2u) << "the held-back groups were not written first";
  EXPECT_EQ(g->GetDurabilityStats().last_checkpoint_sequence, 4u);
  const std::string segment = "/db/" + wal::SegmentFileName(1);
  const std::string log = fs.ReadFileForTest(segment).value();
  auto file = fs.OpenReadable("/db/" + checkpoint::CheckpointFileName(4)).value();
  checkpoint::Header header;
  ASSERT_TRUE(checkpoint::VerifyCheckpointFile(*file, &header).ok());
  EXPECT_EQ(header.wal_segment, 1u);
  // The log's end: its last group ends on a page boundary, and past it lies
  // the segment's zeroed end (format 3, docs/wal_format.md).
  const std::size_t last = log.find_last_not_of('\0');
  ASSERT_NE(last, std::string::npos);
  const std::size_t log_end = (last / wal::kWalPageBytes + 1) * wal::kWalPageBytes;
  EXPECT_EQ(header.wal_offset, log_end) << "the checkpoint's WAL position is not the log's end";

  // Recovery from it is exact: more writes after it, the log's damage
  // before its position skipped as covered, every write back.
  ASSERT_TRUE(g->Write(OneVertex(5), kNoSync).ok());
  ASSERT_TRUE(g->Write(OneVertex(6)).ok());
  const std::string expected = Dump(g->GetSnapshot());
  g.reset();
  ASSERT_TRUE(fs.FlipBit(segment, 8 * (header.wal_offset - 3)).ok());  // inside the record of 2..4
  auto again = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  EXPECT_EQ(Dump(again->GetSnapshot()), expected);
  EXPECT_GT(again->GetOpenStats().wal_covered_damage_bytes, 0u);
  EXPECT_EQ(again->GetOpenStats().wal_batches_replayed, 2u);
}

// A WAL failure while groups are held back: the graph is poisoned; the
// Sync that tried to write them says DurabilityUnknown (they may or may not
// be on disk), everything after says Poisoned; the writes stay visible in
// this process; after a restart they are there whole or not at all.
TEST(UnsyncedWriteTest, AWalErrorWhileGroupsAreHeldPoisonsAndReports) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1)).ok());
  fs.SetFault(
      {.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-", .fsync_failure_drops_unsynced = true});
  for (int k = 2; k <= 4; ++k) ASSERT_TRUE(g->Write(OneVertex(k), kNoSync).ok());
  const std::string visible = Dump(g->GetSnapshot());
  const Status sync = g->Sync();
  EXPECT_EQ(sync.code(), StatusCode::kDurabilityUnknown) << sync.ToString();
  EXPECT_EQ(fs.faults_injected(), 1u);
  const DurabilityStats d = g->GetDurabilityStats();
  EXPECT_TRUE(d.poisoned);
  EXPECT_EQ(d.health, HealthState::kPoisoned);
  EXPECT_EQ(Dump(g->GetSnapshot()), visible) << "acknowledged writes vanished from memory";
  EXPECT_EQ(g->Write(OneVertex(5), kNoSync).status().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->Write(OneVertex(5)).status().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->Sync().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->Checkpoint().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->Close().code(), StatusCode::kPoisoned);
  EXPECT_EQ(fs.TotalSyncsAfterFailedSync(), 0u) << "a failed fsync was retried";
  g.reset();
  for (env::CrashPolicy p : env::kAllCrashPolicies) {
    const std::int64_t s = RecoveredSequence(sim, p);
    EXPECT_TRUE(s == 1 || s == 4) << "policy " << static_cast<int>(p) << " recovered " << s;
  }
}

// The same when a synced write carries the held-back groups: it and they
// get DurabilityUnknown / stay visible, as above.
TEST(UnsyncedWriteTest, AFailedSyncedWriteCarryingHeldGroupsPoisons) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  for (int k = 1; k <= 2; ++k) ASSERT_TRUE(g->Write(OneVertex(k), kNoSync).ok());
  fs.SetFault(
      {.ops = env::FaultOp::kWrite, .kind = env::FaultKind::kShortWrite, .at = 1, .path_contains = "wal-"});
  EXPECT_EQ(g->Write(OneVertex(3)).status().code(), StatusCode::kDurabilityUnknown);
  EXPECT_EQ(g->GetSnapshot().sequence(), 2u) << "the failed synced write was published";
  EXPECT_TRUE(g->GetDurabilityStats().poisoned);
  EXPECT_EQ(g->Sync().code(), StatusCode::kPoisoned);
  g.reset();
  for (env::CrashPolicy p : env::kAllCrashPolicies) {
    const std::int64_t s = RecoveredSequence(sim, p);
    EXPECT_TRUE(s == 0 || s == 3) << "policy " << static_cast<int>(p) << " recovered " << s;
  }
}

// Regression (review F1): a synced batch that commits nothing (its
// expectation holds, so it takes no sequence number) still asserts, as
// synced, the state the held-back writes made. When writing them fails it
// must not be acknowledged OK: a restart may take that state back.
TEST(UnsyncedWriteTest, ASyncedNoOpBatchOverHeldWritesIsNotAckedWhenTheirWriteFails) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  const VertexId v = g->Write(OneVertex(1), kNoSync)->vertices[0];
  fs.SetFault(
      {.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-", .fsync_failure_drops_unsynced = true});
  WriteBatch b;
  b.ExpectProperty(v, "k", 1);
  const Result<CommitInfo> r = g->Write(std::move(b));
  EXPECT_EQ(r.status().code(), StatusCode::kDurabilityUnknown) << r.status().ToString();
  EXPECT_EQ(fs.faults_injected(), 1u);
  EXPECT_TRUE(g->GetDurabilityStats().poisoned);
  g.reset();
  for (env::CrashPolicy p : env::kAllCrashPolicies) EXPECT_EQ(RecoveredSequence(sim, p), 0);
}

// Regression (review F2): the final flush of Close fails. Whoever asks
// afterwards (Sync, a second Close) learns that held-back writes may be
// lost, instead of FailedPrecondition ("Close wrote what was held") or OK.
TEST(UnsyncedWriteTest, SyncAndSecondCloseReportAFailedFinalFlush) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1), kNoSync).ok());
  fs.SetFault({.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-"});
  EXPECT_EQ(g->Close().code(), StatusCode::kPoisoned);
  EXPECT_EQ(fs.faults_injected(), 1u);
  EXPECT_EQ(g->Sync().code(), StatusCode::kPoisoned);
  EXPECT_EQ(g->Close().code(), StatusCode::kPoisoned);
}

// The same when Sync and a second Close race the first Close while its
// final flush is in flight: they wait for it and report its outcome.
TEST(UnsyncedWriteTest, SyncRacingCloseWaitsForItsOutcome) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1), kNoSync).ok());
  fs.SetFault({.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-"});
  fs.SetSyncDelay(std::chrono::milliseconds(100));  // widens the race; asserts no timing
  Status closed;
  std::thread closer([&] { closed = g->Close(); });
  // An empty unsynced write commits nothing and writes nothing; it is
  // refused once Close has closed the queue.
  while (g->Write(WriteBatch(), kNoSync).ok()) std::this_thread::yield();
  const Status synced = g->Sync();
  const Status closed_again = g->Close();
  closer.join();
  EXPECT_EQ(closed.code(), StatusCode::kPoisoned) << closed.ToString();
  EXPECT_EQ(synced.code(), StatusCode::kPoisoned) << synced.ToString();
  EXPECT_EQ(closed_again.code(), StatusCode::kPoisoned) << closed_again.ToString();
}

class EventLog : public Logger {
 public:
  void Log(LogLevel level, std::string_view event, std::string_view) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (level == LogLevel::kError) errors_.emplace_back(event);
  }
  std::vector<std::string> errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> errors_;
};

// A graph destroyed without Close whose final flush fails: nobody can be
// told by a return value, so the destructor logs that Close failed.
TEST(UnsyncedWriteTest, TheDestructorLogsAFailedFinalFlush) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto log = std::make_shared<EventLog>();
  Options o = TestOptions();
  o.logger = log;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1), kNoSync).ok());
  fs.SetFault({.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-"});
  g.reset();
  const std::vector<std::string> errors = log->errors();
  EXPECT_NE(std::find(errors.begin(), errors.end(), "close_failed"), errors.end());
}

// Regression (review F6): a checkpoint whose barrier carried held-back
// writes and failed to write them says DurabilityUnknown (as every call
// that carried them does), and counts as a failed checkpoint.
TEST(UnsyncedWriteTest, ACheckpointWhoseFlushFailsSaysDurabilityUnknown) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1), kNoSync).ok());
  fs.SetFault({.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-"});
  const Status s = g->Checkpoint();
  EXPECT_EQ(s.code(), StatusCode::kDurabilityUnknown) << s.ToString();
  const DurabilityStats d = g->GetDurabilityStats();
  EXPECT_EQ(d.checkpoint_failures, 1u);
  EXPECT_EQ(d.last_checkpoint_error.code(), StatusCode::kDurabilityUnknown);
  EXPECT_EQ(d.health, HealthState::kPoisoned);
}

// Out of memory at a checkpoint's barrier: the checkpoint fails with
// ResourceExhausted, is counted, and the graph goes on (health degraded).
TEST(UnsyncedWriteTest, ACheckpointWhoseBarrierRunsOutOfMemoryIsCounted) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  auto& impl = static_cast<GraphImpl&>(*g);
  ASSERT_TRUE(g->Write(OneVertex(1)).ok());
  ASSERT_TRUE(g->Write(OneVertex(2), kNoSync).ok());
  Status s;
  {
    test_util::ScopedOperatorNewFaults hook;  // the barrier's version is a standard allocation
    base::ArmAllocationFaults(impl.TEST_writer_thread_id(), 1, base::AllocationFaultMode::kFromThenOn);
    s = g->Checkpoint();
    base::DisarmAllocationFaults();
  }
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  const DurabilityStats d = g->GetDurabilityStats();
  EXPECT_FALSE(d.poisoned);
  EXPECT_EQ(d.checkpoint_failures, 1u);
  EXPECT_EQ(d.last_checkpoint_error.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(d.health, HealthState::kDegraded);
  ASSERT_TRUE(g->Checkpoint().ok());  // and the next one works
  EXPECT_EQ(g->GetDurabilityStats().last_checkpoint_sequence, 2u);
}

// Review F4: what is held back, and how far the log is durable, can be
// seen: in DurabilityStats and in each write's CommitInfo::synced.
TEST(UnsyncedWriteTest, StatsShowWhatIsHeldBack) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  {
    auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
    const Result<CommitInfo> first = g->Write(OneVertex(1));
    ASSERT_TRUE(first.ok());
    EXPECT_TRUE(first->synced);
    for (int k = 2; k <= 4; ++k) {
      const Result<CommitInfo> r = g->Write(OneVertex(k), kNoSync);
      ASSERT_TRUE(r.ok());
      EXPECT_FALSE(r->synced);
    }
    DurabilityStats d = g->GetDurabilityStats();
    EXPECT_EQ(d.unsynced_batches, 3u);
    EXPECT_GT(d.unsynced_bytes, 0u);
    EXPECT_LT(d.unsynced_bytes, TestOptions().durable.max_unsynced_bytes);
    EXPECT_EQ(d.durable_sequence, 1u);
    ASSERT_TRUE(g->Sync().ok());
    d = g->GetDurabilityStats();
    EXPECT_EQ(d.unsynced_batches, 0u);
    EXPECT_EQ(d.unsynced_bytes, 0u);
    EXPECT_EQ(d.durable_sequence, 4u);
    // An empty synced write over nothing held: everything before it is durable.
    const Result<CommitInfo> empty = g->Write(WriteBatch());
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->synced);
    // A WAL failure drops what was held: durable_sequence stays behind.
    ASSERT_TRUE(g->Write(OneVertex(5), kNoSync).ok());
    fs.SetFault({.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-"});
    EXPECT_EQ(g->Sync().code(), StatusCode::kDurabilityUnknown);
    d = g->GetDurabilityStats();
    EXPECT_EQ(d.unsynced_batches, 0u);
    EXPECT_EQ(d.durable_sequence, 4u);
    EXPECT_EQ(g->GetSnapshot().sequence(), 5u);
  }
  fs.ClearFault();
  auto again = GraphImpl::OpenDurable(TestOptions(), "/db", &sim).value();
  EXPECT_EQ(again->GetDurabilityStats().durable_sequence, again->GetSnapshot().sequence());
  auto memory = Graph::OpenInMemory().value();
  const Result<CommitInfo> r = memory->Write(OneVertex(1));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->synced);
  EXPECT_EQ(memory->GetDurabilityStats().durable_sequence, 0u);
}

// Review F7: the bound counts log entry bytes (DurabilityStats::
// unsynced_bytes) and is exact: the write that takes the held bytes to it
// is written with them, so what stays held is below it.
TEST(UnsyncedWriteTest, TheBoundIsExact) {
  std::uint64_t entry = 0;
  {
    env::SimFileSystem fs;
    auto probe = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
    ASSERT_TRUE(probe->Write(OneVertex(1, 100), kNoSync).ok());
    entry = probe->GetDurabilityStats().unsynced_bytes;
    ASSERT_GT(entry, 0u);
  }
  env::SimFileSystem fs;
  Options o = TestOptions();
  o.durable.max_unsynced_bytes = 3 * entry;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  for (int k = 1; k <= 2; ++k) {
    const Result<CommitInfo> r = g->Write(OneVertex(1, 100), kNoSync);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->synced);
  }
  EXPECT_EQ(g->GetDurabilityStats().unsynced_bytes, 2 * entry);
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 0u);
  const Result<CommitInfo> third = g->Write(OneVertex(1, 100), kNoSync);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->synced) << "the write that reached the bound exactly was held back";
  EXPECT_EQ(g->GetDurabilityStats().wal_syncs, 1u);
  EXPECT_EQ(g->GetDurabilityStats().unsynced_bytes, 0u);
  for (env::CrashPolicy p : env::kAllCrashPolicies) EXPECT_EQ(RecoveredSequence(fs, p), 3);
}

// Review F9: a backup never holds a write the source could still lose. The
// pinned version's held-back writes are made durable (as Sync does) before
// the copy is written, so after a crash the source is never behind its
// backup; when that flush fails the backup fails and writes nothing.
TEST(UnsyncedWriteTest, BackupMakesTheHeldWritesItCopiesDurableFirst) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1)).ok());
  for (int k = 2; k <= 4; ++k) ASSERT_TRUE(g->Write(OneVertex(k), kNoSync).ok());
  const std::string expected = Dump(g->GetSnapshot());
  const Result<BackupInfo> b = g->Backup("/bk");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->sequence, 4u);
  EXPECT_EQ(g->GetDurabilityStats().unsynced_batches, 0u);
  EXPECT_EQ(g->GetDurabilityStats().durable_sequence, 4u);
  for (env::CrashPolicy p : env::kAllCrashPolicies) {
    std::string dump;
    EXPECT_EQ(RecoveredSequence(fs, p, &dump), 4) << "policy " << static_cast<int>(p);
    EXPECT_EQ(dump, expected);
  }
  auto copy = GraphImpl::OpenDurable(TestOptions(), "/bk", &fs).value();
  EXPECT_EQ(Dump(copy->GetSnapshot()), expected);
}

TEST(UnsyncedWriteTest, BackupFailsWhenTheHeldWritesCannotBeMadeDurable) {
  env::SimFileSystem sim;
  env::FaultFileSystem fs(&sim);
  auto g = GraphImpl::OpenDurable(TestOptions(), "/db", &fs).value();
  ASSERT_TRUE(g->Write(OneVertex(1)).ok());
  ASSERT_TRUE(g->Write(OneVertex(2), kNoSync).ok());
  fs.SetFault({.ops = env::FaultOp::kSync, .at = 1, .path_contains = "wal-"});
  const Result<BackupInfo> b = g->Backup("/bk");
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kDurabilityUnknown) << b.status().ToString();
  fs.ClearFault();
  const Result<bool> exists = sim.Exists("/bk/QUIVER");
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists) << "a backup holding writes the source may lose was written";
}

}  // namespace
}  // namespace quiver
