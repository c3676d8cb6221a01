// Review of fd84c1d (reclaiming removed slots: RadixTable::ReclaimIfRemoved,
// ReclaimIfEmpty, BatchProcessor::ReclaimLeaves and the checkpoint loader's
// ReclaimRemovedLeaves). The tests named *Finding* fail at fd84c1d and show
// what breaks; the others pin down the riskiest behaviours the review
// checked and found to hold (a root that becomes a shared node, growth above
// it, the sparse edge-property table left with no root, the change feed's
// endpoints of edges whose leaf goes, live and from the log).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "removed_leaf_fixture.h"
#include "snapshot_internal.h"
#include "storage/elements.h"
#include "storage/intern_table.h"
#include "storage/retire_list.h"
#include "storage/version.h"
#include "test_util.h"
#include "wal/wal_reader.h"
#include "write/batch_processor.h"

namespace quiver::removed_leaf_review_test {
namespace {

using storage::EdgePropTable;
using storage::EdgeTable;
using storage::MutationContext;
using storage::TableRoot;
using storage::VertexSlot;
using storage::VertexTable;

constexpr std::uint64_t kLeaf = VertexTable::kLeafSize;
constexpr std::uint64_t kInnerSpan = kLeaf * VertexTable::kInnerSize;

Options ReviewOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = 1;
  return o;
}

using NoReclaiming = test_util::ScopedNoReclaiming;

const storage::GraphRoots& RootsOf(const Snapshot& s) { return SnapshotInternal::Roots(s); }

std::string OnlyCheckpointBytes(env::SimFileSystem& fs, const std::string& dir) {
  const std::vector<std::string> names = fs.ListDir(dir).value();  // not a temporary's value()
  for (const std::string& name : names) {
    if (checkpoint::ParseCheckpointFileName(name)) {
      std::vector<std::byte> b = wal::ReadWholeFile(&fs, dir + "/" + name).value();
      return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    }
  }
  ADD_FAILURE() << "no checkpoint in " << dir;
  return {};
}

std::atomic<std::int64_t> review_freed_bytes{0};
void ReviewCountFree(void* block) {
  review_freed_bytes.fetch_add(static_cast<std::int64_t>(base::UsableSize(block)), std::memory_order_relaxed);
}

// The chain's account minus the usable bytes of what its shutdown frees: 0
// when every block the account counts is still reachable and freed once.
std::int64_t ShutdownAndCountUnfreed(storage::VersionChain* chain) {
  const std::int64_t counted = chain->account()->allocated_bytes();
  review_freed_bytes.store(0);
  base::SetFreeObserver(&ReviewCountFree);
  chain->Shutdown();
  base::SetFreeObserver(nullptr);
  return counted - review_freed_bytes.load();
}

// --- Finding 1 (LOW): the loader leaks the leaves it already replaced when
// ReclaimRemovedLeaves runs out of memory.
//
// ReclaimRemovedLeaves retires each replaced leaf into a local RetireList
// (`gone`) and frees the list only at its end. RetireList::Add grows a
// std::vector: when a later Add (or any later allocation in the loop)
// throws std::bad_alloc, the leaves already unlinked from the table and
// recorded in `gone` are reachable from nothing: ~RetireList frees nothing,
// and DestroyGraph no longer finds them. The loader's own rule (header of
// checkpoint_reader.cc: a failed load leaves a graph that DestroyGraph
// frees completely, under std::bad_alloc from anywhere) is broken: the
// account keeps counting 2,560 B per vertex leaf and 1,024 B per edge leaf
// that are never freed. Seen as a non-zero "account minus bytes freed".
TEST(RemovedLeafReviewTest, FindingLoaderOutOfMemoryWhileReclaimingLeaksReplacedLeaves) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(ReviewOptions(), "/db", &fs).value();
    WriteBatch v;
    for (std::uint64_t i = 0; i < 12 * kLeaf; ++i) v.AddVertex("V");
    ASSERT_TRUE(g->Write(std::move(v)).ok());
    WriteBatch e;
    for (std::uint64_t i = 0; i < 12 * kLeaf; ++i)
      e.AddEdge("T", VertexId(10 * kLeaf + i % kLeaf), VertexId(10 * kLeaf + (i * 7) % (2 * kLeaf)));
    ASSERT_TRUE(g->Write(std::move(e)).ok());
    WriteBatch r;
    for (std::uint64_t i = 0; i < 10 * kLeaf; ++i) r.RemoveVertex(VertexId(i));
    for (std::uint64_t i = 0; i < 9 * kLeaf; ++i) r.RemoveEdge(EdgeId(i));
    ASSERT_TRUE(g->Write(std::move(r)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  const std::string bytes = OnlyCheckpointBytes(fs, "/db");
  std::vector<std::pair<std::uint64_t, std::int64_t>> leaks;  // (failing allocation, bytes never freed)
  std::uint64_t n = 1;
  for (;; ++n) {
    auto* chain = new storage::VersionChain();
    MutationContext ctx{1, nullptr, nullptr};
    storage::Version* v = chain->NewVersion(&ctx);
    storage::OwnInternTable(v->roots.labels, ctx);
    storage::OwnInternTable(v->roots.types, ctx);
    storage::OwnInternTable(v->roots.keys, ctx);
    checkpoint::Header h;
    bool threw = false;
    Status s;
    std::uint64_t counted = 0;
    {
      test_util::ScopedOperatorNewFaults hook;
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      try {
        s = checkpoint::LoadCheckpoint(format_test::AsBytes(bytes), v->roots, ctx, &h, 1);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      counted = base::DisarmAllocationFaults();
    }
    if (!threw && counted < n) {
      ASSERT_TRUE(s.ok()) << s.ToString();
      const storage::GraphRoots& g = v->roots;
      EXPECT_TRUE(VertexTable::IsSharedLeaf(VertexTable::FindLeaf(g.vertices, 0)))
          << "the loader reclaims the removed leaves";
      chain->Abandon(v);
      EXPECT_EQ(ShutdownAndCountUnfreed(chain), 0);
      break;
    }
    chain->Abandon(v);
    const std::int64_t unfreed = ShutdownAndCountUnfreed(chain);
    if (unfreed != 0) leaks.emplace_back(n, unfreed);
    if (n > 100000) break;
  }
  // At fd84c1d: allocations 89..93, the growth of ReclaimRemovedLeaves'
  // RetireList (1, 2, 4, 8 leaves already replaced, then the 10 vertex
  // leaves and 6 edge leaves: 31,744 B), and nowhere else.
  for (auto [at, unfreed] : leaks)
    ADD_FAILURE() << "allocation " << at << " failed: " << unfreed
                  << " bytes counted and never freed (vertex leaves are 2,560 B, edge leaves 1,024 B)";
  EXPECT_TRUE(leaks.empty()) << leaks.size() << " of " << n << " failing allocations leaked";
}

// --- Finding 2 (LOW): an edge-property leaf emptied by removing
// properties (not edges) is never unlinked.
//
// ReclaimLeaves only visits edge-property leaves that RemoveEdgeInternal
// noted (cleared_edge_prop_leaves_). kRemoveEdgeProperty (and an edge
// whose last property goes, WithoutProperty returning null) leaves the
// slot null but notes nothing, so a leaf of 64 null slots (512 B, plus its
// inner path) stays for good, contrary to the commit's "an emptied sparse
// edge-property leaf is unlinked". A later RemoveEdge of an edge with no
// properties in that leaf does not note it either (props == null).
TEST(RemovedLeafReviewTest, FindingEdgePropertyLeafEmptiedByRemovingPropertiesStays) {
  auto g = Graph::OpenInMemory().value();
  WriteBatch v;
  v.AddVertex("V");
  v.AddVertex("V");
  ASSERT_TRUE(g->Write(std::move(v)).ok());
  WriteBatch e;
  for (std::uint64_t i = 0; i < 2 * kLeaf; ++i)
    e.AddEdge("T", VertexId(0), VertexId(1), {{"w", static_cast<std::int64_t>(i)}});
  ASSERT_TRUE(g->Write(std::move(e)).ok());
  // Leaf 1 (edges 64..127): removed edges. Its property leaf goes.
  WriteBatch re;
  for (std::uint64_t i = kLeaf; i < 2 * kLeaf; ++i) re.RemoveEdge(EdgeId(i));
  ASSERT_TRUE(g->Write(std::move(re)).ok());
  EXPECT_EQ(EdgePropTable::FindLeaf(RootsOf(g->GetSnapshot()).edge_props, kLeaf), nullptr)
      << "control: emptied by RemoveEdge, the leaf is unlinked";
  // Leaf 0 (edges 0..63): every property removed, the edges stay.
  WriteBatch rp;
  for (std::uint64_t i = 0; i < kLeaf; ++i) rp.RemoveProperty(EdgeId(i), "w");
  ASSERT_TRUE(g->Write(std::move(rp)).ok());
  const Snapshot s = g->GetSnapshot();
  for (std::uint64_t i = 0; i < kLeaf; ++i) ASSERT_EQ(storage::EdgeProps(RootsOf(s), i), nullptr) << i;
  EXPECT_EQ(EdgePropTable::FindLeaf(RootsOf(s).edge_props, 0), nullptr)
      << "a leaf of 64 null property slots is kept for good";
  // Removing the (property-less) edges now does not reclaim it either.
  WriteBatch re0;
  for (std::uint64_t i = 0; i < kLeaf; ++i) re0.RemoveEdge(EdgeId(i));
  ASSERT_TRUE(g->Write(std::move(re0)).ok());
  EXPECT_EQ(EdgePropTable::FindLeaf(RootsOf(g->GetSnapshot()).edge_props, 0), nullptr)
      << "even with every edge of the leaf removed, the empty property leaf stays";
}

// --- Held: the table's root itself becomes a shared node, and the table
// grows above it.

using ReviewTable = test_util::VertexTableFixture;

TEST(RemovedLeafReviewTest, ARootLeafThatBecomesSharedGrowsAndIsNeverFreed) {
  ReviewTable t;
  t.Append(kLeaf);  // height 0: the root is the leaf
  t.NextEpoch();
  t.RemoveAndReclaim(0, kLeaf);
  EXPECT_EQ(t.root.birth, VertexTable::kSharedBirth);
  EXPECT_TRUE(VertexTable::IsSharedLeaf(VertexTable::FindLeaf(t.root, 0)));
  t.NextEpoch();
  EXPECT_EQ(t.account.allocated_bytes(), 0) << "only the shared leaf is left";
  t.Append(3);  // grows above the shared root
  EXPECT_EQ(t.root.height, 1u);
  t.ExpectReads(kLeaf, "after growth");
  t.NextEpoch();
  t.Append(kLeaf - 3);
  t.RemoveAndReclaim(kLeaf, 2 * kLeaf);
  t.ExpectReads(2 * kLeaf, "second leaf");
}

TEST(RemovedLeafReviewTest, AnInnerRootThatBecomesSharedGrowsAndIsNeverFreed) {
  ReviewTable t;
  t.Append(kInnerSpan);  // height 1, exactly full
  t.NextEpoch();
  t.RemoveAndReclaim(0, kInnerSpan);
  EXPECT_EQ(t.root.birth, VertexTable::kSharedBirth);
  t.NextEpoch();
  EXPECT_EQ(t.account.allocated_bytes(), 0) << "only shared nodes are left";
  t.Append(kLeaf + 1);
  EXPECT_EQ(t.root.height, 2u);
  t.ExpectReads(kInnerSpan, "after growth");
  t.NextEpoch();
  // Write into a removed slot under the shared root: copies, never retires
  // (a retired shared node would be UsableSize'd and freed).
  MutationContext ctx = t.Ctx();
  const std::size_t retired_before = t.retired.size();
  VertexTable::Mutable(t.root, 5, ctx)->label = storage::kDeadLabel;
  EXPECT_EQ(t.retired.size(), retired_before + 1) << "only the height-2 root is published";
  EXPECT_FALSE(VertexTable::IsSharedLeaf(VertexTable::FindLeaf(t.root, 0)));
  t.RemoveAndReclaim(0, kLeaf);
  EXPECT_TRUE(VertexTable::IsSharedLeaf(VertexTable::FindLeaf(t.root, 0)));
}

// --- Held: graphs whose whole tables empty, the edge-property table left
// without a root, then written again; a twin that never reclaims agrees,
// and so does the graph reopened from its checkpoint and from its log.

TEST(RemovedLeafReviewTest, WholeTablesEmptiedThenWrittenAgainMatchATwinAndReopen) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(ReviewOptions(), "/db", &fs).value();
  auto twin = Graph::OpenInMemory().value();
  auto both = [&](auto make) {
    ASSERT_TRUE(g->Write(make()).ok());
    NoReclaiming off;
    ASSERT_TRUE(twin->Write(make()).ok());
  };
  both([] {
    WriteBatch b;
    for (std::uint64_t i = 0; i < kInnerSpan; ++i) b.AddVertex(i % 2 ? "A" : "B", {{"n", std::int64_t(i)}});
    return b;
  });
  both([] {
    WriteBatch b;
    for (std::uint64_t i = 0; i < kInnerSpan; ++i) {
      if (i % 3 == 0) {
        b.AddEdge("T", VertexId(i), VertexId((i * 7) % kInnerSpan), {{"w", std::int64_t(i)}});
      } else {
        b.AddEdge("T", VertexId(i), VertexId((i * 7) % kInnerSpan));
      }
    }
    return b;
  });
  ASSERT_TRUE(g->Checkpoint().ok());  // a checkpoint of the full graph: the log replays the removals
  both([] {
    WriteBatch b;
    for (std::uint64_t i = 0; i < kInnerSpan; ++i) b.RemoveVertex(VertexId(i));
    return b;
  });
  {
    const Snapshot s = g->GetSnapshot();
    const storage::GraphRoots& r = RootsOf(s);
    EXPECT_EQ(r.vertices.birth, VertexTable::kSharedBirth) << "the whole vertex table is the shared node";
    EXPECT_EQ(r.edges.birth, EdgeTable::kSharedBirth) << "and the edge table";
    EXPECT_EQ(r.edge_props.node, nullptr) << "the edge-property table has no node left";
    EXPECT_EQ(test_util::Dump(s), test_util::Dump(twin->GetSnapshot()));
  }
  both([] {
    WriteBatch b;
    NewVertex a = b.AddVertex("A", {{"n", std::int64_t{-1}}});
    NewVertex c = b.AddVertex("C");
    b.AddEdge("T", a, c, {{"w", std::int64_t{-2}}});
    b.AddEdge("U", c, a);
    return b;
  });
  both([] {
    WriteBatch b;
    b.SetProperty(EdgeId(kInnerSpan + 1), "x", std::string("y"));
    b.SetProperty(VertexId(kInnerSpan + 1), "x", std::string("z"));
    b.AddEdge("T", VertexId(kInnerSpan), VertexId(kInnerSpan));
    return b;
  });
  const std::string dump = test_util::Dump(g->GetSnapshot());
  ASSERT_EQ(dump, test_util::Dump(twin->GetSnapshot()));
  ASSERT_TRUE(g->Close().ok());
  {  // From the checkpoint of the full graph and the log.
    auto r = GraphImpl::OpenDurable(ReviewOptions(), "/db", &fs).value();
    EXPECT_EQ(test_util::Dump(r->GetSnapshot()), dump);
    EXPECT_TRUE(VertexTable::IsSharedLeaf(VertexTable::FindLeaf(RootsOf(r->GetSnapshot()).vertices, 0)))
        << "the log's removals reclaim on replay";
    ASSERT_TRUE(r->Checkpoint().ok());
    ASSERT_TRUE(r->Close().ok());
  }
  {  // From a checkpoint of the emptied-and-rewritten graph.
    auto r = GraphImpl::OpenDurable(ReviewOptions(), "/db", &fs).value();
    EXPECT_EQ(test_util::Dump(r->GetSnapshot()), dump);
    WriteBatch b;
    b.AddVertex("D");
    b.RemoveVertex(VertexId(kInnerSpan));
    ASSERT_TRUE(r->Write(std::move(b)).ok());
    Result<VerifyReport> vr = r->Verify({});
    ASSERT_TRUE(vr.ok()) << vr.status().ToString();
    ASSERT_TRUE(r->Close().ok());
  }
}

// --- Held: the change feed reports a removed edge's endpoints and
// properties even when the batch reclaims its leaf (effects are taken
// from the version before), live and when rebuilt from the log.

std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::size_t>> RemovedEdges(
    const ChangeBatch& c) {
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::size_t>> out;
  for (const EdgeRecord& e : c.removed_edges)
    out.emplace(e.id.value(), e.source.value(), e.target.value(), e.properties.size());
  return out;
}

TEST(RemovedLeafReviewTest, ChangeFeedReportsEndpointsOfEdgesWhoseLeafGoesLiveAndFromTheLog) {
  env::SimFileSystem fs;
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::size_t>> expected;
  SequenceNumber removal = 0;
  {
    auto g = GraphImpl::OpenDurable(ReviewOptions(), "/db", &fs).value();
    auto sub = g->Subscribe().value();
    WriteBatch v;
    for (std::uint64_t i = 0; i < 3; ++i) v.AddVertex("V");
    ASSERT_TRUE(g->Write(std::move(v)).ok());
    WriteBatch e;
    for (std::uint64_t i = 0; i < 2 * kLeaf; ++i) {
      if (i % 2 == 0) {
        e.AddEdge("T", VertexId(1 + i % 2), VertexId(2 - i % 3 % 2), {{"w", std::int64_t(i)}});
      } else {
        e.AddEdge("T", VertexId(1 + i % 2), VertexId(2 - i % 3 % 2));
      }
      if (i < kLeaf) expected.emplace(i, 1 + i % 2, 2 - i % 3 % 2, i % 2 == 0 ? 1 : 0);
    }
    ASSERT_TRUE(g->Write(std::move(e)).ok());
    WriteBatch r;
    for (std::uint64_t i = 0; i < kLeaf; ++i) r.RemoveEdge(EdgeId(i));
    Result<CommitInfo> ri = g->Write(std::move(r));
    ASSERT_TRUE(ri.ok());
    removal = g->GetSnapshot().sequence();
    ASSERT_TRUE(EdgeTable::IsSharedLeaf(EdgeTable::FindLeaf(RootsOf(g->GetSnapshot()).edges, 0)));
    std::shared_ptr<const ChangeBatch> last;
    for (int k = 0; k < 3; ++k) {
      auto next = sub->Next(std::chrono::milliseconds(5000));
      ASSERT_TRUE(next.ok()) << next.status().ToString();
      last = *next;
    }
    ASSERT_EQ(last->sequence, removal);
    EXPECT_EQ(RemovedEdges(*last), expected) << "live";
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(ReviewOptions(), "/db", &fs).value();
  auto sub = g->Subscribe(removal).value();
  auto next = sub->Next(std::chrono::milliseconds(5000));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ((*next)->sequence, removal);
  EXPECT_EQ(RemovedEdges(**next), expected) << "from the log";
  ASSERT_TRUE(g->Close().ok());
}

// --- Held: several batches in one commit group (WriteAsync bursts), some
// failing validation on ids whose leaf an earlier batch of the group
// reclaimed, match a twin that applies them one by one and never reclaims,
// and replay from the log to the same graph.

TEST(RemovedLeafReviewTest, GroupedBatchesAroundReclaimedLeavesMatchATwinAndReplay) {
  env::SimFileSystem fs;
  Options o = ReviewOptions();
  o.writer.spin_microseconds = 2000;  // let the burst gather into groups
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  auto twin = Graph::OpenInMemory().value();
  auto setup = [] {
    WriteBatch b;
    for (std::uint64_t i = 0; i < 6 * kLeaf; ++i) b.AddVertex("V", {{"i", std::int64_t(i)}});
    return b;
  };
  ASSERT_TRUE(g->Write(setup()).ok());
  ASSERT_TRUE(twin->Write(setup()).ok());
  auto edges = [] {
    WriteBatch b;
    for (std::uint64_t i = 0; i < 6 * kLeaf; ++i)
      b.AddEdge("T", VertexId(i), VertexId((i * 5 + 1) % (6 * kLeaf)), {{"e", std::int64_t(i)}});
    return b;
  };
  ASSERT_TRUE(g->Write(edges()).ok());
  ASSERT_TRUE(twin->Write(edges()).ok());
  std::vector<std::function<WriteBatch()>> burst;
  for (std::uint64_t leaf = 1; leaf < 5; ++leaf) {
    burst.push_back([leaf] {  // empties vertex leaf `leaf` (and the edges on it)
      WriteBatch b;
      for (std::uint64_t i = leaf * kLeaf; i < (leaf + 1) * kLeaf; ++i) b.RemoveVertex(VertexId(i));
      return b;
    });
    burst.push_back([leaf] {  // fails: a vertex of the leaf just emptied
      WriteBatch b;
      b.AddVertex("W");
      b.SetProperty(VertexId(leaf * kLeaf + 3), "x", std::int64_t{1});
      return b;
    });
    burst.push_back([leaf] {  // fails: an edge of the leaf just emptied
      WriteBatch b;
      b.RemoveEdge(EdgeId(leaf * kLeaf + 5));
      return b;
    });
    burst.push_back([leaf] {  // writes beside it: the next leaf's vertices and edges
      WriteBatch b;
      b.SetProperty(VertexId((leaf + 1) * kLeaf), "y", std::int64_t(leaf));
      NewVertex v = b.AddVertex("N");
      b.AddEdge("U", v, VertexId((leaf + 1) * kLeaf + 1), {{"z", std::int64_t(leaf)}});
      b.AddEdge("U", VertexId(0), v);
      return b;
    });
  }
  std::vector<std::future<Result<CommitInfo>>> pending;
  for (auto& make : burst) pending.push_back(g->WriteAsync(make()));
  std::vector<bool> ok;
  for (auto& f : pending) ok.push_back(f.get().ok());
  for (std::size_t i = 0; i < burst.size(); ++i) {
    NoReclaiming off;
    EXPECT_EQ(twin->Write(burst[i]()).ok(), ok[i]) << i;
  }
  const std::string dump = test_util::Dump(g->GetSnapshot());
  EXPECT_EQ(dump, test_util::Dump(twin->GetSnapshot()));
  EXPECT_TRUE(VertexTable::IsSharedLeaf(VertexTable::FindLeaf(RootsOf(g->GetSnapshot()).vertices, kLeaf)));
  ASSERT_TRUE(g->Close().ok());
  auto r = GraphImpl::OpenDurable(ReviewOptions(), "/db", &fs).value();
  EXPECT_EQ(test_util::Dump(r->GetSnapshot()), dump) << "replayed from the log";
  const OpenStats stats = r->GetOpenStats();
  std::cout << "[          ] replayed " << stats.wal_batches_replayed << " batches in "
            << stats.wal_groups_replayed << " groups\n";
  EXPECT_LT(stats.wal_groups_replayed, stats.wal_batches_replayed) << "some batches shared a group";
  ASSERT_TRUE(r->Close().ok());
}

// --- Held: readers on other threads, each holding snapshots across the
// batches that reclaim, read exactly what they read when they took them.

TEST(RemovedLeafReviewTest, ReadersHoldingSnapshotsAcrossReclaimingReadTheSame) {
  auto g = Graph::OpenInMemory().value();
  std::atomic<bool> stop{false};
  std::atomic<int> mismatches{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const Snapshot s = g->GetSnapshot();
        const std::uint64_t first = test_util::Fingerprint(s);
        std::this_thread::yield();
        if (test_util::Fingerprint(s) != first) mismatches.fetch_add(1);
      }
    });
  }
  std::uint64_t next = 0;
  for (int round = 0; round < 60; ++round) {
    WriteBatch b;
    std::vector<NewVertex> fresh;
    for (std::uint64_t i = 0; i < kLeaf; ++i) {
      fresh.push_back(b.AddVertex("V", {{"r", std::int64_t(round)}}));
      if (i > 0) b.AddEdge("T", fresh[i], fresh[i / 2], {{"i", std::int64_t(i)}});
      if (round > 0) b.AddEdge("U", fresh[i], VertexId(next - 1 - i % 7));  // the previous round's, live
    }
    if (round >= 4)
      for (std::uint64_t i = 0; i < kLeaf; ++i) b.RemoveVertex(VertexId(next - 4 * kLeaf + i));
    next += kLeaf;
    Result<CommitInfo> r = g->Write(std::move(b));
    ASSERT_TRUE(r.ok()) << round << ": " << r.status().ToString();
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace quiver::removed_leaf_review_test
