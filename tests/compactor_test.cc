// Background compaction (Options::compaction, src/write/compactor.cc): the
// graph runs Compact's steps itself once enough operations were committed
// and it has been idle for a while. The waits below are bounded by a
// minute and never measured: they wait for the compactor to get its turn,
// not for it to be fast.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "layout_util.h"
#include "quiver/quiver.h"
#include "snapshot_internal.h"
#include "storage/packed_adjacency.h"
#include "test_util.h"

namespace quiver::compactor_test {
namespace {

constexpr std::uint64_t kVertices = 640;  // ten leaves

Options Compacting(std::uint64_t after_changes, Durability d = Durability::kVolatile) {
  Options o;
  o.durability = d;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.compaction.after_changes = after_changes;
  o.compaction.idle_milliseconds = 1;
  return o;
}

// kVertices vertices, then 4,000 random edges in four batches: every
// vertex's entries in arrays of its own.
void Build(Graph& g) {
  WriteBatch v;
  for (std::uint64_t i = 0; i < kVertices; ++i) v.AddVertex("V");
  ASSERT_TRUE(g.Write(std::move(v)).ok());
  std::mt19937_64 rng(20261206);
  for (int b = 0; b < 4; ++b) {
    WriteBatch e;
    for (int i = 0; i < 1000; ++i) e.AddEdge("E", VertexId(rng() % kVertices), VertexId(rng() % kVertices));
    ASSERT_TRUE(g.Write(std::move(e)).ok());
  }
}

using test_util::PackedEntries;

// Waits (a minute at most) until the compactor finished `passes` passes.
bool WaitForPasses(const Graph& g, std::uint64_t passes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (g.GetCompactionStats().passes < passes) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// An idle graph past the threshold is compacted in the background exactly
// as Compact would: every entry packed, contents and sequence unchanged, a
// snapshot held across it unchanged; Compact then finds nothing left.
TEST(CompactorTest, AnIdleGraphPastTheThresholdIsCompactedInTheBackground) {
  // Build's 4,640 operations and one more: that one starts the only pass.
  auto g = Graph::OpenInMemory(Compacting(4641)).value();
  Build(*g);
  const Snapshot held = g->GetSnapshot();
  WriteBatch one;
  one.AddEdge("E", VertexId(1), VertexId(2));
  ASSERT_TRUE(g->Write(std::move(one)).ok());
  const Snapshot written = g->GetSnapshot();
  const std::string before = test_util::Dump(written);
  ASSERT_TRUE(WaitForPasses(*g, 1)) << "no background pass in a minute";
  const CompactionStats s = g->GetCompactionStats();
  const Snapshot now = g->GetSnapshot();
  EXPECT_EQ(test_util::Dump(now), before);
  EXPECT_EQ(now.sequence(), written.sequence());
  EXPECT_EQ(PackedEntries(held), 0u) << "the held snapshot keeps its arrays";
  EXPECT_EQ(PackedEntries(now), 8002u) << "every entry of every vertex, both directions";
  EXPECT_EQ(s.entries, 8002u);
  EXPECT_EQ(s.blocks, 20u) << "ten leaves, two directions";
  EXPECT_GE(s.steps, 1u);
  EXPECT_EQ(s.passes, 1u);
  EXPECT_EQ(s.pending_changes, 0u);
  Result<CompactStats> c = g->Compact();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->entries, 0u) << "nothing left to pack";
  EXPECT_EQ(g->GetDurabilityStats().commit_groups, 6u) << "compaction steps are not commit groups";
}

// Compact takes the changes committed before it: the compactor does not
// scan the graph again for them.
TEST(CompactorTest, CompactConsumesTheChangesCountedBeforeIt) {
  auto g = Graph::OpenInMemory(Compacting(4641)).value();
  Build(*g);
  EXPECT_EQ(g->GetCompactionStats().pending_changes, 4640u);
  ASSERT_TRUE(g->Compact().ok());
  EXPECT_EQ(g->GetCompactionStats().pending_changes, 0u);
  WriteBatch one;
  one.AddEdge("E", VertexId(1), VertexId(2));
  ASSERT_TRUE(g->Write(std::move(one)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // fifty idle periods
  EXPECT_EQ(g->GetCompactionStats().steps, 0u) << "one change is below the threshold";
}

// A snapshot pinned across a pass keeps every array the pass replaces: the
// pass waits once a quarter of the graph's memory is retired, and goes on
// when the snapshot is released.
TEST(CompactorTest, APinnedSnapshotPausesThePass) {
  auto g = Graph::OpenInMemory(Compacting(4641)).value();
  static_cast<GraphImpl&>(*g).TEST_set_compact_step(1'000'000, 1);  // a leaf a step
  Build(*g);
  Snapshot held = g->GetSnapshot();
  WriteBatch one;
  one.AddEdge("E", VertexId(1), VertexId(2));
  ASSERT_TRUE(g->Write(std::move(one)).ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (g->GetCompactionStats().steps == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GT(g->GetCompactionStats().steps, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // fifty idle periods
  const MemoryStats m = g->GetMemoryStats();
  EXPECT_EQ(g->GetCompactionStats().passes, 0u)
      << "retired " << m.retired_bytes << " of " << m.allocated_bytes;
  EXPECT_LT(PackedEntries(g->GetSnapshot()), 8002u);
  held = Snapshot();
  ASSERT_TRUE(WaitForPasses(*g, 1));
  EXPECT_EQ(PackedEntries(g->GetSnapshot()), 8002u);
}

// Below the threshold nothing moves; the next batch that passes it starts
// a pass. after_changes 0 starts no compactor at all.
TEST(CompactorTest, NothingMovesBelowTheThresholdOrWhenTurnedOff) {
  for (const std::uint64_t after : {std::uint64_t{0}, std::uint64_t{4641}}) {
    SCOPED_TRACE("after_changes " + std::to_string(after));
    auto g = Graph::OpenInMemory(Compacting(after)).value();
    Build(*g);                                                   // 4,640 operations
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // fifty idle periods
    EXPECT_EQ(g->GetCompactionStats().passes, 0u);
    EXPECT_EQ(g->GetCompactionStats().pending_changes, 4640u);
    EXPECT_EQ(PackedEntries(g->GetSnapshot()), 0u);
    WriteBatch one;
    one.AddEdge("E", VertexId(1), VertexId(2));
    ASSERT_TRUE(g->Write(std::move(one)).ok());
    if (after == 0) continue;
    ASSERT_TRUE(WaitForPasses(*g, 1));
    EXPECT_EQ(PackedEntries(g->GetSnapshot()), 8002u);
  }
}

// Small steps: a pass takes many, and writes interrupt it (the pass goes on
// where it stopped). Whatever interleaves, the graph equals a twin that
// never compacted, and once idle every packable entry is packed.
TEST(CompactorTest, WritesInterruptAPassThatGoesOnAfterwards) {
  auto g = Graph::OpenInMemory(Compacting(100)).value();
  static_cast<GraphImpl&>(*g).TEST_set_compact_step(50, 1);
  auto twin = Graph::OpenInMemory(Compacting(0)).value();
  Build(*g);
  Build(*twin);
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    WriteBatch b;
    for (int i = 0; i < 20; ++i) b.AddEdge("E", VertexId(rng() % kVertices), VertexId(rng() % kVertices));
    if (round % 10 == 9) b.RemoveEdge(EdgeId(static_cast<std::uint64_t>(round)));
    WriteBatch copy = b;
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ASSERT_TRUE(twin->Write(std::move(copy)).ok());
    if (round % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(test_util::Dump(g->GetSnapshot()), test_util::Dump(twin->GetSnapshot()));
  // One more batch past the threshold: the pass that starts after it (a
  // pass under way finishes first) leaves every entry packed (degrees stay
  // far below kMaxPackedDegree here).
  WriteBatch more;
  for (int i = 0; i < 100; ++i) more.AddEdge("E", VertexId(rng() % kVertices), VertexId(rng() % kVertices));
  WriteBatch copy = more;
  ASSERT_TRUE(g->Write(std::move(more)).ok());
  ASSERT_TRUE(twin->Write(std::move(copy)).ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  Snapshot snap = g->GetSnapshot();
  while (PackedEntries(snap) != 2 * snap.edge_count() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    snap = g->GetSnapshot();
  }
  EXPECT_EQ(PackedEntries(snap), 2 * snap.edge_count());
  EXPECT_EQ(test_util::Dump(snap), test_util::Dump(twin->GetSnapshot()));
  EXPECT_GE(g->GetCompactionStats().steps, 10u) << "one leaf a step";
}

// Durable: background steps log nothing, and the graph reopens the same.
TEST(CompactorTest, BackgroundCompactionLogsNothing) {
  env::SimFileSystem fs;
  const std::string dir = "/graph";
  std::string before;
  {
    auto g = GraphImpl::OpenDurable(Compacting(4640, Durability::kDurable), dir, &fs).value();
    Build(*g);
    const std::uint64_t wal = g->GetDurabilityStats().wal_bytes;
    const SequenceNumber sequence = g->GetSnapshot().sequence();
    ASSERT_TRUE(WaitForPasses(*g, 1));
    EXPECT_EQ(g->GetDurabilityStats().wal_bytes, wal) << "nothing logged";
    EXPECT_EQ(g->GetSnapshot().sequence(), sequence);
    EXPECT_EQ(PackedEntries(g->GetSnapshot()), 8000u);
    before = test_util::Dump(g->GetSnapshot());
    EXPECT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(Compacting(4640, Durability::kDurable), dir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), before);
  EXPECT_TRUE((*g)->Close().ok());
}

// Close stops a compactor in the middle of a pass (after its step) and
// returns; so does destroying the graph without Close.
TEST(CompactorTest, CloseStopsAPassUnderWay) {
  for (const bool close : {true, false}) {
    auto g = Graph::OpenInMemory(Compacting(100)).value();
    static_cast<GraphImpl&>(*g).TEST_set_compact_step(1, 1);  // one leaf a step: ten steps a pass
    Build(*g);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (g->GetCompactionStats().steps == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    ASSERT_GT(g->GetCompactionStats().steps, 0u);
    if (close) {
      EXPECT_TRUE(g->Close().ok());
      const std::uint64_t steps = g->GetCompactionStats().steps;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      EXPECT_EQ(g->GetCompactionStats().steps, steps) << "no step after Close";
    }
    g.reset();
  }
}

// The defaults compact: 65,536 operations, then 200 ms without a write.
// (Test binaries turn the default off for every other test:
// tests/test_environment.cc.)
TEST(CompactorTest, TheDefaultOptionsCompact) {
  GraphImpl::SetDefaultCompactionOffForTesting(false);
  Result<std::unique_ptr<Graph>> opened = Graph::OpenInMemory();
  GraphImpl::SetDefaultCompactionOffForTesting(true);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Graph> g = std::move(opened).value();
  {
    WriteBatch v;
    for (std::uint64_t i = 0; i < 6'400; ++i) v.AddVertex("V");
    ASSERT_TRUE(g->Write(std::move(v)).ok());
  }
  std::mt19937_64 rng(11);
  WriteBatch e;
  for (int i = 0; i < 60'000; ++i) e.AddEdge("E", VertexId(rng() % 6'400), VertexId(rng() % 6'400));
  ASSERT_TRUE(g->Write(std::move(e)).ok());
  ASSERT_TRUE(WaitForPasses(*g, 1));
  const Snapshot snap = g->GetSnapshot();
  EXPECT_EQ(PackedEntries(snap), 2 * snap.edge_count());
}

TEST(CompactorTest, OptionsOutOfBoundsAreRefused) {
  Options o;
  o.compaction.idle_milliseconds = 0;
  Result<std::unique_ptr<Graph>> g = Graph::OpenInMemory(o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("compaction.idle_milliseconds"), std::string::npos);
  o.compaction.idle_milliseconds = kMaxCompactionIdleMilliseconds + 1;
  EXPECT_EQ(Graph::OpenInMemory(o).status().code(), StatusCode::kInvalidArgument);
  o.compaction.idle_milliseconds = kMaxCompactionIdleMilliseconds;
  EXPECT_TRUE(Graph::OpenInMemory(o).ok());
}

// A read-only graph starts no compactor: nothing it could commit.
TEST(CompactorTest, AReadOnlyGraphCompactsNothing) {
  env::SimFileSystem fs;
  const std::string dir = "/graph";
  {
    auto g = GraphImpl::OpenDurable(Compacting(0, Durability::kDurable), dir, &fs).value();
    Build(*g);
    EXPECT_TRUE(g->Close().ok());
  }
  Options o = Compacting(1, Durability::kDurable);
  o.read_only = true;
  auto g = GraphImpl::OpenDurable(o, dir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ((*g)->GetCompactionStats().steps, 0u);
  EXPECT_TRUE((*g)->Close().ok());
}

}  // namespace
}  // namespace quiver::compactor_test
