// Reclaiming removed slots (issue 13 §1.6; RadixTable::ReclaimIfRemoved): a
// leaf whose 64 slots are all removed, wholly below the table's count, is
// replaced by one shared leaf of removed slots, and an inner node whose 64
// children are shared by the shared inner node of its height. Checked here:
// the table on its own (what is replaced and what is not, the shared nodes
// never written, retired or freed); a graph that keeps adding and removing
// holds the memory of what is live, not of every id ever assigned; reads,
// held snapshots, writes near reclaimed ids, a checkpoint and a WAL replay
// all see exactly what a graph that never reclaimed sees; and a group that
// reclaims rolls back at every allocation. Under ASan a shared node freed
// is a bad free, one written is caught by the twin comparisons.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "removed_leaf_fixture.h"
#include "snapshot_internal.h"
#include "storage/elements.h"
#include "storage/retire_list.h"
#include "test_util.h"

namespace quiver::removed_leaf_test {
namespace {  // a namespace of its own: the asan build compiles test files six to a unit

using storage::EdgeSlot;
using storage::EdgeTable;
using storage::MutationContext;
using storage::TableRoot;
using storage::VertexSlot;
using storage::VertexTable;

constexpr std::uint64_t kLeaf = VertexTable::kLeafSize;
constexpr std::uint64_t kInnerSpan = kLeaf * VertexTable::kInnerSize;  // ids under one height-1 node

// --- The table on its own.

using Table = test_util::VertexTableFixture;

TEST(RemovedLeafTest, OnlyAWhollyRemovedLeafBelowTheCountIsReplaced) {
  Table t;
  t.Append(3 * kLeaf + 10);  // three full leaves and a partial one
  t.NextEpoch();
  // Leaf 0: all but one slot removed.
  for (std::uint64_t id = 0; id < kLeaf - 1; ++id) t.Remove(id);
  EXPECT_FALSE(t.Reclaim(0));
  EXPECT_FALSE(VertexTable::IsSharedLeaf(t.LeafOf(0)));
  // Leaf 1: every slot.
  for (std::uint64_t id = kLeaf; id < 2 * kLeaf; ++id) t.Remove(id);
  const std::int64_t before = t.account.allocated_bytes();
  EXPECT_TRUE(t.Reclaim(kLeaf + 5));
  EXPECT_TRUE(VertexTable::IsSharedLeaf(t.LeafOf(kLeaf)));
  EXPECT_EQ(before - t.account.allocated_bytes(), static_cast<std::int64_t>(sizeof(VertexTable::Leaf)))
      << "the leaf was the group's own: freed at once";
  EXPECT_FALSE(t.Reclaim(kLeaf)) << "already shared";
  // The partial last leaf: every slot it has, but it does not reach the count.
  for (std::uint64_t id = 3 * kLeaf; id < t.count; ++id) t.Remove(id);
  EXPECT_FALSE(t.Reclaim(3 * kLeaf));
  EXPECT_FALSE(VertexTable::IsSharedLeaf(t.LeafOf(3 * kLeaf)));
  // Every removed id reads as removed, every other as it was.
  for (std::uint64_t id = 0; id < t.count; ++id) {
    const VertexSlot* s = VertexTable::Find(t.root, id);
    ASSERT_NE(s, nullptr) << id;
    const bool removed = id < 2 * kLeaf ? id != kLeaf - 1 : id >= 3 * kLeaf;
    if (removed) {
      EXPECT_EQ(s->label, storage::kDeadLabel) << id;
      EXPECT_EQ(s->out_head, 0u) << id;
      EXPECT_EQ(s->props, nullptr) << id;
    } else {
      EXPECT_EQ(s->label, id % 7) << id;
    }
  }
  // Once the last leaf is full and emptied, it goes too.
  t.NextEpoch();
  const std::uint64_t first_new = t.count;
  t.Append(4 * kLeaf - t.count);
  for (std::uint64_t id = first_new; id < t.count; ++id) t.Remove(id);
  EXPECT_TRUE(t.Reclaim(t.count - 1));
  EXPECT_TRUE(VertexTable::IsSharedLeaf(t.LeafOf(3 * kLeaf)));
}

TEST(RemovedLeafTest, AnInnerNodeOfSharedLeavesIsSharedInTurnAndAPublishedOneIsRetired) {
  Table t;
  t.Append(3 * kInnerSpan + 1);  // root of height 2 over four height-1 nodes
  t.NextEpoch();
  for (std::uint64_t id = kInnerSpan; id < 2 * kInnerSpan; ++id) t.Remove(id);
  const std::int64_t before = t.account.allocated_bytes();
  std::uint64_t replaced = 0;
  for (std::uint64_t id = kInnerSpan; id < 2 * kInnerSpan; id += kLeaf) replaced += t.Reclaim(id);
  EXPECT_EQ(replaced, VertexTable::kInnerSize);
  // 64 private leaves and the private height-1 node were freed.
  EXPECT_EQ(before - t.account.allocated_bytes(),
            static_cast<std::int64_t>(64 * sizeof(VertexTable::Leaf) + sizeof(VertexTable::Inner)));
  // The other subtrees are untouched, and the shared inner node reads as removed.
  for (std::uint64_t id = 0; id < t.count; id += 17) {
    const VertexSlot* s = VertexTable::Find(t.root, id);
    ASSERT_NE(s, nullptr) << id;
    EXPECT_EQ(s->label, id >= kInnerSpan && id < 2 * kInnerSpan ? storage::kDeadLabel : id % 7) << id;
  }
  // A published leaf that empties is retired, not freed: a snapshot of
  // the version before may still read it.
  t.NextEpoch();
  for (std::uint64_t id = 0; id < kLeaf; ++id) t.Remove(id);
  t.NextEpoch();  // leaf 0's copy, all removed, is now published
  const VertexTable::Leaf* published = t.LeafOf(0);
  const std::size_t retired_before = t.retired.size();
  EXPECT_TRUE(t.Reclaim(0));
  EXPECT_EQ(t.retired.size(), retired_before + 3) << "the root, the height-1 node and the leaf";
  EXPECT_TRUE(VertexTable::IsSharedLeaf(t.LeafOf(0)));
  EXPECT_EQ(published->slots[63].label, storage::kDeadLabel) << "still readable (ASan: not freed)";
}

TEST(RemovedLeafTest, WritingIntoASharedLeafCopiesItAndNeverRetiresIt) {
  Table t;
  t.Append(2 * kLeaf);
  t.NextEpoch();
  for (std::uint64_t id = 0; id < kLeaf; ++id) t.Remove(id);
  ASSERT_TRUE(t.Reclaim(0));
  t.NextEpoch();
  const VertexTable::Leaf* shared = t.LeafOf(0);
  ASSERT_TRUE(VertexTable::IsSharedLeaf(shared));
  const std::size_t retired_before = t.retired.size();
  MutationContext ctx = t.Ctx();
  VertexSlot* s = VertexTable::Mutable(t.root, 3, ctx);
  EXPECT_NE(reinterpret_cast<const void*>(s), static_cast<const void*>(&shared->slots[3]));
  EXPECT_EQ(t.retired.size(), retired_before + 1) << "the root only: the shared leaf belongs to no version";
  s->label = 5;  // the copy, not the shared leaf
  EXPECT_EQ(shared->slots[3].label, storage::kDeadLabel);
  EXPECT_FALSE(VertexTable::IsSharedLeaf(t.LeafOf(0)));
  // Removed again, the copy goes and the shared leaf is back.
  t.Remove(3);
  EXPECT_TRUE(t.Reclaim(3));
  EXPECT_EQ(t.LeafOf(0), shared);
}

// --- Graphs.

constexpr char kDir[] = "/db";

Options DurableOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = 2;
  return o;
}

// A sliding window of `window` vertices with edges among them: each round
// adds `step` vertices (each with `degree` out-edges into the window, one of
// them a self-loop now and then, some with properties) and removes the
// `step` oldest. Deterministic.
class Churn {
 public:
  Churn(std::uint64_t window, std::uint64_t step, int degree)
      : window_(window), step_(step), degree_(degree) {}

  WriteBatch Round() {
    WriteBatch b;
    const std::uint64_t first = next_;
    std::vector<NewVertex> fresh;
    for (std::uint64_t i = 0; i < step_; ++i) {
      std::vector<Property> props;
      if (i % 5 == 0) props.push_back(Property{"n", static_cast<std::int64_t>(next_ + i)});
      fresh.push_back(b.AddVertex(i % 3 == 0 ? "A" : "B", props));
    }
    auto ref = [&](std::uint64_t v) -> VertexRef {
      return v >= first ? VertexRef(fresh[v - first]) : VertexId(v);
    };
    const std::uint64_t lo = oldest_ + step_ <= first ? oldest_ + step_ : first;
    for (std::uint64_t i = 0; i < step_; ++i) {
      const std::uint64_t v = first + i;
      for (int k = 0; k < degree_; ++k) {
        std::uint64_t w = lo + rng_() % (first + step_ - lo);
        if (k == 0 && i % 11 == 0) w = v;
        std::vector<Property> props;
        if (k == 1) props.push_back(Property{"w", static_cast<std::int64_t>(v)});
        b.AddEdge(k % 2 == 0 ? "T" : "U", ref(v), ref(w), props);
      }
    }
    next_ += step_;
    if (next_ - oldest_ > window_) {
      for (std::uint64_t i = 0; i < step_; ++i) b.RemoveVertex(VertexId(oldest_ + i));
      oldest_ += step_;
    }
    return b;
  }

 private:
  std::uint64_t window_, step_;
  int degree_;
  std::uint64_t next_ = 0, oldest_ = 0;
  std::mt19937_64 rng_{7};
};

using test_util::ScopedNoReclaiming;

// How many full leaves of each table a snapshot reads through the shared
// leaf of removed slots: {vertices, edges}.
std::pair<std::uint64_t, std::uint64_t> SharedLeaves(const Snapshot& s) {
  const storage::GraphRoots& g = SnapshotInternal::Roots(s);
  std::pair<std::uint64_t, std::uint64_t> n{0, 0};
  for (std::uint64_t id = 0; id + kLeaf <= g.vertex_limit; id += kLeaf)
    n.first += VertexTable::IsSharedLeaf(VertexTable::FindLeaf(g.vertices, id));
  for (std::uint64_t id = 0; id + kLeaf <= g.edge_limit; id += kLeaf)
    n.second += EdgeTable::IsSharedLeaf(EdgeTable::FindLeaf(g.edges, id));
  return n;
}

std::int64_t Bytes(const Graph& g) {
  return static_cast<std::int64_t>(test_util::SettledMemoryStats(g).allocated_bytes);
}

TEST(RemovedLeafTest, AGraphThatKeepsAddingAndRemovingHoldsWhatIsLive) {
  auto g = Graph::OpenInMemory().value();
  Churn churn(/*window=*/8 * kLeaf, /*step=*/kLeaf, /*degree=*/4);
  std::int64_t settled = 0, most = 0;
  for (int round = 0; round < 200; ++round) {
    Result<CommitInfo> r = g->Write(churn.Round());
    ASSERT_TRUE(r.ok()) << round << ": " << r.status().ToString();
    if (round == 20) settled = Bytes(*g);
    if (round > 20) most = std::max(most, Bytes(*g));
  }
  const Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.vertex_count(), 8 * kLeaf);
  std::cout << "[          ] 200 rounds, " << s.vertex_id_limit() << " vertex ids and " << s.edge_id_limit()
            << " edge ids assigned: " << settled << " bytes at round 20, at most " << most << " after it\n";
  // Without reclaiming, every round left 64 removed vertex slots (2,560 B)
  // and 256 removed edge slots (4,096 B) behind: over 1.2 MB by round 200.
  EXPECT_LT(most, settled + 64 * 1024) << "removed slots are given back";
}

TEST(RemovedLeafTest, ReadsHeldSnapshotsCheckpointsAndReplayMatchAGraphThatNeverReclaimed) {
  // The twin applies the same batches and never reclaims a leaf.
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(DurableOptions(), kDir, &fs).value();
  auto twin = Graph::OpenInMemory().value();
  Churn churn(4 * kLeaf, kLeaf / 2, 3), twin_churn(4 * kLeaf, kLeaf / 2, 3);
  std::vector<std::pair<Snapshot, std::string>> held;
  for (int round = 0; round < 40; ++round) {
    WriteBatch b = churn.Round();
    ASSERT_TRUE(g->Write(std::move(b)).ok()) << round;
    {
      ScopedNoReclaiming off;
      ASSERT_TRUE(twin->Write(twin_churn.Round()).ok()) << round;
    }
    ASSERT_EQ(test_util::Dump(g->GetSnapshot()), test_util::Dump(twin->GetSnapshot())) << round;
    if (round % 9 == 0) held.emplace_back(g->GetSnapshot(), test_util::Dump(g->GetSnapshot()));
    if (round == 20) {
      ASSERT_TRUE(g->Checkpoint().ok());
    }
  }
  for (auto& [snapshot, dump] : held) EXPECT_EQ(test_util::Dump(snapshot), dump) << "held across reclaiming";
  held.clear();
  EXPECT_LT(Bytes(*g), Bytes(*twin)) << "the twin kept its removed leaves";
  // Ids in reclaimed leaves are gone for every kind of access, and new ids
  // continue after the last one assigned.
  const Snapshot now = g->GetSnapshot();
  EXPECT_FALSE(now.HasVertex(VertexId(3)));
  EXPECT_FALSE(now.HasEdge(EdgeId(5)));
  for (auto f : {+[](WriteBatch& b) { b.RemoveVertex(VertexId(3)); },
                 +[](WriteBatch& b) { b.SetProperty(VertexId(4), "n", std::int64_t{1}); },
                 +[](WriteBatch& b) { b.RemoveEdge(EdgeId(5)); },
                 +[](WriteBatch& b) { b.AddEdge("T", VertexId(6), VertexId(6)); }}) {
    WriteBatch b;
    f(b);
    Result<CommitInfo> r = g->Write(std::move(b));
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
  }
  const std::string dump = test_util::Dump(g->GetSnapshot());
  const auto shared = SharedLeaves(g->GetSnapshot());
  EXPECT_GT(shared.first, 10u);
  EXPECT_GT(shared.second, 40u);
  EXPECT_EQ(SharedLeaves(twin->GetSnapshot()), std::make_pair(std::uint64_t{0}, std::uint64_t{0}));
  ASSERT_TRUE(g->Close().ok());
  {  // From the checkpoint of round 20 and the log after it.
    auto reopened = GraphImpl::OpenDurable(DurableOptions(), kDir, &fs).value();
    EXPECT_EQ(test_util::Dump(reopened->GetSnapshot()), dump);
    EXPECT_EQ(SharedLeaves(reopened->GetSnapshot()), shared) << "the loader and replay reclaim alike";
    Result<VerifyReport> v = reopened->Verify({});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    WriteBatch b;
    b.AddVertex("A");
    Result<CommitInfo> r = reopened->Write(std::move(b));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->vertices[0].value(), now.vertex_id_limit());
    ASSERT_TRUE(reopened->Checkpoint().ok());
    ASSERT_TRUE(reopened->Close().ok());
  }
  {  // From a checkpoint of a graph with reclaimed leaves.
    auto reopened = GraphImpl::OpenDurable(DurableOptions(), kDir, &fs).value();
    EXPECT_EQ(reopened->GetSnapshot().vertex_id_limit(), now.vertex_id_limit() + 1);
    EXPECT_EQ(SharedLeaves(reopened->GetSnapshot()), shared);
    Result<VerifyReport> v = reopened->Verify({});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_TRUE(reopened->Close().ok());
  }
}

TEST(RemovedLeafTest, AGroupThatReclaimsRollsBackAtEveryAllocation) {
  // Three full leaves and the first of a fourth; the group empties leaf 1
  // (vertices and their edges) and adds and removes more.
  auto build = [](Graph& g) {
    WriteBatch vertices, edges;
    for (std::uint64_t v = 0; v < 3 * kLeaf + 1; ++v) vertices.AddVertex("P");
    for (std::uint64_t v = 0; v < 3 * kLeaf; ++v)
      edges.AddEdge("T", VertexId(v), VertexId((v * 7 + 3) % (3 * kLeaf)), {{"w", std::int64_t{1}}});
    return g.Write(std::move(vertices)).ok() && g.Write(std::move(edges)).ok();
  };
  auto group = [] {
    WriteBatch b;
    for (std::uint64_t v = kLeaf; v < 2 * kLeaf; ++v) b.RemoveVertex(VertexId(v));
    b.AddEdge("T", VertexId(0), VertexId(2 * kLeaf));
    return b;
  };
  std::string before, after;
  std::int64_t after_bytes = 0;
  {
    auto g = Graph::OpenInMemory().value();
    ASSERT_TRUE(build(*g));
    before = test_util::Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Write(group()).ok());
    after = test_util::Dump(g->GetSnapshot());
    after_bytes = Bytes(*g);
  }
  std::uint64_t n = 1, exhausted = 0;
  for (;; ++n) {
    SCOPED_TRACE("allocation " + std::to_string(n));
    auto g = Graph::OpenInMemory().value();
    ASSERT_TRUE(build(*g));
    Snapshot held = g->GetSnapshot();
    Result<CommitInfo> r = [&] {
      WriteBatch b = group();
      test_util::ScopedOperatorNewFaults hook;
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      Result<CommitInfo> result = g->Write(std::move(b));
      base::DisarmAllocationFaults();
      return result;
    }();
    if (r.ok()) {
      ASSERT_EQ(test_util::Dump(g->GetSnapshot()), after);
      break;
    }
    ASSERT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
    ASSERT_EQ(test_util::Dump(g->GetSnapshot()), before);
    ASSERT_EQ(test_util::Dump(held), before);
    ++exhausted;
    ASSERT_TRUE(g->Write(group()).ok());
    ASSERT_EQ(test_util::Dump(g->GetSnapshot()), after);
    held = Snapshot();
    ASSERT_EQ(Bytes(*g), after_bytes);
  }
  std::cout << "[          ] " << n - 1 << " failing allocations, each rolled back\n";
  EXPECT_GT(exhausted, 10u);
}

}  // namespace
}  // namespace quiver::removed_leaf_test
