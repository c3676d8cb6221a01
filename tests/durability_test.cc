// Durable mode end to end: open, write, close, reopen on the real file
// system; then crash-point enumeration on the simulated one (every mutating
// I/O operation of a workload with segment rotation and checkpoints, under
// every crash policy, checked against the states a volatile graph went
// through).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "durable_workload.h"
#include "env/file_system.h"
#include "env/sim_file_system.h"
#include "env_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

using env::test::TempDir;
using test_util::Dump;

Options DurableOptions() {
  Options o;
  o.durable.wal_segment_bytes = 4096;  // rotate often
  o.durable.checkpoint_wal_bytes = 0;  // checkpoints only when the test asks
  o.writer.spin_microseconds = 0;
  return o;
}

using test_util::ApplyGroup;

TEST(DurabilityTest, CloseAndReopenRestoresEverything) {
  TempDir dir;
  std::string expected;
  {
    auto g = Graph::Open(DurableOptions(), dir.path()).value();
    for (int k = 1; k <= 60; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
    expected = Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());
    DurabilityStats d = g->GetDurabilityStats();
    EXPECT_GE(d.wal_segments_started, 1u) << "groups " << d.commit_groups << ", WAL bytes " << d.wal_bytes;
  }
  auto g = Graph::Open(DurableOptions(), dir.path()).value();
  EXPECT_EQ(Dump(g->GetSnapshot()), expected);
  EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 60u);  // written by Close
  EXPECT_EQ(g->GetOpenStats().wal_groups_replayed, 0u);
}

TEST(DurabilityTest, ReopenReplaysTheLogWithoutACheckpoint) {
  TempDir dir;
  Options o = DurableOptions();
  o.durable.checkpoint_on_close = false;
  std::string expected;
  {
    auto g = Graph::Open(o, dir.path()).value();
    for (int k = 1; k <= 40; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
    expected = Dump(g->GetSnapshot());
  }
  auto g = Graph::Open(o, dir.path()).value();
  EXPECT_EQ(Dump(g->GetSnapshot()), expected);
  EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 0u);
  EXPECT_EQ(g->GetOpenStats().wal_batches_replayed, 40u);
  // And it keeps going from there.
  ASSERT_TRUE(ApplyGroup(*g, 41).ok());
  EXPECT_EQ(g->GetSnapshot().sequence(), 41u);
}

TEST(DurabilityTest, CheckpointsTruncateTheLogAndKeepAFallback) {
  TempDir dir;
  Options o = DurableOptions();
  auto g = Graph::Open(o, dir.path()).value();
  for (int round = 0; round < 4; ++round) {
    for (int k = 1; k <= 30; ++k) ASSERT_TRUE(ApplyGroup(*g, round * 30 + k).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  auto names = env::PosixFileSystem()->ListDir(dir.path()).value();
  int checkpoints = 0, segments = 0;
  for (const auto& n : names) {
    checkpoints += n.rfind("checkpoint-", 0) == 0;
    segments += n.rfind("wal-", 0) == 0;
  }
  EXPECT_EQ(checkpoints, 2);  // newest and previous
  EXPECT_LT(segments, 30);    // covered segments were removed
  EXPECT_EQ(g->GetDurabilityStats().checkpoints_written, 4u);
}

TEST(DurabilityTest, SecondOpenOfTheSameDirectoryIsRefused) {
  TempDir dir;
  auto g = Graph::Open(DurableOptions(), dir.path()).value();
  auto second = Graph::Open(DurableOptions(), dir.path());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
}

TEST(DurabilityTest, DamagedNewestCheckpointFallsBackToThePreviousOne) {
  env::SimFileSystem fs;
  Options o = DurableOptions();
  std::string expected;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    for (int k = 1; k <= 20; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
    for (int k = 21; k <= 40; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
    expected = Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());  // checkpoint at 40
  }
  ASSERT_TRUE(fs.FlipBit("/db/checkpoint-00000000000000000040.qck", 8 * 200).ok());
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  EXPECT_TRUE(g->GetOpenStats().used_previous_checkpoint);
  EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 20u);
  EXPECT_EQ(Dump(g->GetSnapshot()), expected);
}

// --- Crash-point enumeration

struct Workload {
  int groups = 0;
  std::vector<int> checkpoint_after;  // explicit checkpoints after these groups
};

// Runs the workload until the first failure; returns the highest
// acknowledged sequence number.
SequenceNumber RunWorkload(Graph& g, const Workload& w) {
  SequenceNumber acked = 0;
  std::size_t next_checkpoint = 0;
  for (int k = 1; k <= w.groups; ++k) {
    Result<CommitInfo> r = ApplyGroup(g, k);
    if (!r.ok()) break;
    acked = r->sequence;
    if (next_checkpoint < w.checkpoint_after.size() && w.checkpoint_after[next_checkpoint] == k) {
      ++next_checkpoint;
      g.Checkpoint().IgnoreError();  // a failed checkpoint loses nothing
    }
  }
  return acked;
}

std::uint64_t EnvOr(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(CrashEnumerationTest, EveryCrashPointUnderEveryPolicyRecoversAPrefix) {
  const Workload w{static_cast<int>(EnvOr("QUIVER_CRASH_GROUPS", 200)), {60, 130, 190}};
  const std::uint64_t stride = EnvOr("QUIVER_CRASH_STRIDE", 1);
  Options o = DurableOptions();

  // The states a volatile graph goes through: the oracle.
  std::vector<std::string> states;
  {
    auto g = Graph::OpenInMemory(o).value();
    states.push_back(Dump(g->GetSnapshot()));
    for (int k = 1; k <= w.groups; ++k) {
      ASSERT_TRUE(ApplyGroup(*g, k).ok());
      states.push_back(Dump(g->GetSnapshot()));
    }
  }
  // How many operations the whole workload takes.
  std::uint64_t total_ops;
  {
    env::SimFileSystem fs;
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    ASSERT_EQ(RunWorkload(*g, w), static_cast<SequenceNumber>(w.groups));
    ASSERT_TRUE(g->Close().ok());
    total_ops = fs.operation_count();
  }
  std::uint64_t cases = 0, lost = 0, mismatched = 0, second_crash_diffs = 0;
  for (std::uint64_t n = 1; n <= total_ops; n += stride) {
    env::SimFileSystem fs;
    fs.SetCrashAtOperation(n);
    SequenceNumber acked;
    {
      auto g = GraphImpl::OpenDurable(o, "/db", &fs);
      if (!g.ok()) {
        acked = 0;  // the crash came during the first open
      } else {
        acked = RunWorkload(**g, w);
      }
    }
    for (env::CrashPolicy policy : env::kAllCrashPolicies) {
      std::unique_ptr<env::SimFileSystem> disk = fs.Clone();
      disk->Crash(policy, n * 31 + static_cast<std::uint64_t>(policy));
      std::unique_ptr<env::SimFileSystem> before_recovery = disk->Clone();
      ++cases;
      SCOPED_TRACE("crash at op " + std::to_string(n) + " of " + std::to_string(total_ops) + ", policy " +
                   std::to_string(static_cast<int>(policy)));
      SequenceNumber m;
      std::uint64_t recovery_ops;
      {
        std::uint64_t ops_before = disk->operation_count();
        auto g = GraphImpl::OpenDurable(o, "/db", disk.get());
        ASSERT_TRUE(g.ok()) << g.status().ToString();
        recovery_ops = disk->operation_count() - ops_before;
        Snapshot s = (*g)->GetSnapshot();
        m = s.sequence();
        if (m < acked) ++lost;
        if (m >= states.size() || Dump(s) != states[m]) ++mismatched;
        EXPECT_GE(m, acked);
        ASSERT_LT(m, states.size());
        EXPECT_EQ(Dump(s), states[m]);
      }
      // A second crash during recovery recovers the same state.
      if (recovery_ops > 0) {
        before_recovery->SetCrashAtOperation(before_recovery->operation_count() + 1 + n % recovery_ops);
        { auto g = GraphImpl::OpenDurable(o, "/db", before_recovery.get()); }
        before_recovery->Crash(policy, n);
        auto g = GraphImpl::OpenDurable(o, "/db", before_recovery.get());
        ASSERT_TRUE(g.ok()) << g.status().ToString();
        if ((*g)->GetSnapshot().sequence() != m) ++second_crash_diffs;
        EXPECT_EQ((*g)->GetSnapshot().sequence(), m);
      }
    }
  }
  std::cout << "crash points: " << (total_ops + stride - 1) / stride << " of " << total_ops << " ops x "
            << std::size(env::kAllCrashPolicies) << " policies = " << cases
            << " recoveries, acknowledged commits lost: " << lost << ", states not a prefix: " << mismatched
            << ", second-crash differences: " << second_crash_diffs << "\n";
}

}  // namespace
}  // namespace quiver
