// Reclamation (Graph::GetMemoryStats): memory retired by newer versions is
// held exactly as long as some snapshot can reach it, and is then freed, so
// churn that leaves the logical graph unchanged leaves memory unchanged.
#include "base/memory.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_hook.h"
#include "env/forwarding_file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "index/index_build.h"
#include "quiver/graph.h"
#include "storage/retire_list.h"
#include "test_util.h"

namespace quiver {
namespace {

using test_util::SettledMemoryStats;

std::unique_ptr<Graph> NewMemoryGraph() {
  Result<std::unique_ptr<Graph>> g = Graph::OpenInMemory();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : nullptr;
}

void WriteForMemory(Graph& g, WriteBatch b) {
  Result<CommitInfo> r = g.Write(std::move(b));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

// A 16-byte name that differs per (vertex, round) but never in length.
std::string Name(int vertex, int round) {
  auto padded = [](int value, std::size_t width) {
    std::string digits = std::to_string(value);
    return std::string(width - std::min(width, digits.size()), '0') + digits.substr(0, width);
  };
  return "v" + padded(vertex % 100000, 5) + "-r" + padded(round % 100000000, 8);  // 16 bytes
}

constexpr int kVertices = 2000;
constexpr int kTouched = 16;  // churn touches vertices [0, kTouched)

// Builds kVertices vertices (label, a 16-byte name, an int) on a ring of "A"
// edges plus "B" chords, and returns nothing: ids are 0..kVertices-1.
void BuildGraph(Graph& g) {
  WriteBatch b;
  std::vector<NewVertex> v;
  for (int i = 0; i < kVertices; ++i) v.push_back(b.AddVertex("V", {{"name", Name(i, 0)}, {"n", i}}));
  for (int i = 0; i < kVertices; ++i) b.AddEdge("A", v[i], v[(i + 1) % kVertices], {{"w", 1.0}});
  for (int i = 0; i < kVertices; i += 3) b.AddEdge("B", v[i], v[(i * 7 + 5) % kVertices]);
  WriteForMemory(g, std::move(b));
}

std::string Describe(const MemoryStats& m) {
  return "allocated=" + std::to_string(m.allocated_bytes) + " retired=" + std::to_string(m.retired_bytes) +
         " live_versions=" + std::to_string(m.live_versions);
}

TEST(MemoryTest, ChurnIsReclaimedOnceSnapshotsAreReleased) {
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  const std::string logical_before = test_util::Dump(graph->GetSnapshot());
  const MemoryStats baseline = SettledMemoryStats(*graph);
  ASSERT_EQ(baseline.retired_bytes, 0u) << Describe(baseline);
  ASSERT_EQ(baseline.live_versions, 1u) << Describe(baseline);
  ASSERT_GT(baseline.allocated_bytes, 0u);

  // Churn: even commits overwrite a touched vertex's properties with values
  // of the same size; odd commits alternately add an edge between touched
  // vertices and remove it again. Snapshots are taken along the way and held.
  constexpr int kCommits = 8000;
  constexpr int kSnapshotEvery = 1000;
  std::vector<Snapshot> held;
  // The edge an odd commit added, while it waits to be removed (a flag and
  // an id, not std::optional: GCC 12 at -O2 warns that the optional's value
  // may be used uninitialized through EdgeRef, a false positive).
  bool edge_pending = false;
  EdgeId pending_edge(0);
  std::uint64_t consumed_edge_ids = 0;
  int odd = 0;
  for (int i = 0; i < kCommits; ++i) {
    WriteBatch b;
    if (i % 2 == 0) {
      int v = (i / 2) % kTouched;
      b.SetProperty(VertexId(v), "name", Name(v, i + 1));
      b.SetProperty(VertexId(v), "n", i);
    } else if (!edge_pending) {
      int from = odd % kTouched;
      int to = (odd * 5 + 3) % kTouched;
      ++odd;
      b.AddEdge(odd % 2 ? "A" : "B", VertexId(from), VertexId(to), {{"w", 2.0}});
    } else {
      b.RemoveEdge(pending_edge);
    }
    Result<CommitInfo> r = graph->Write(std::move(b));
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    if (i % 2 == 1) {
      if (edge_pending) {
        edge_pending = false;
      } else {
        ASSERT_EQ(r->edges.size(), 1u);
        pending_edge = r->edges[0];
        edge_pending = true;
        ++consumed_edge_ids;
      }
    }
    if (i % kSnapshotEvery == kSnapshotEvery / 2) held.push_back(graph->GetSnapshot());
  }
  ASSERT_FALSE(edge_pending);
  // Restore the original values so the logical graph is exactly as before.
  for (int v = 0; v < kTouched; ++v) {
    WriteBatch b;
    b.SetProperty(VertexId(v), "name", Name(v, 0));
    b.SetProperty(VertexId(v), "n", v);
    WriteForMemory(*graph, std::move(b));
  }
  std::string logical_after = test_util::Dump(graph->GetSnapshot());
  // Only the sequence number and the edge id limit differ.
  const std::string head_before = logical_before.substr(logical_before.find('\n'));
  const std::string head_after = logical_after.substr(logical_after.find('\n'));
  ASSERT_EQ(head_before, head_after) << "churn changed the logical graph";

  const MemoryStats holding = graph->GetMemoryStats();
  EXPECT_EQ(held.size(), static_cast<std::size_t>(kCommits / kSnapshotEvery));
  EXPECT_GT(holding.retired_bytes, 0u) << Describe(holding);
  EXPECT_GT(holding.live_versions, 1u) << Describe(holding);
  EXPECT_GE(holding.live_versions, held.size()) << Describe(holding);
  EXPECT_GT(holding.allocated_bytes, baseline.allocated_bytes) << Describe(holding);
  EXPECT_LE(holding.retired_bytes, holding.allocated_bytes) << Describe(holding);

  // The held snapshots still show their own versions.
  for (const Snapshot& s : held) {
    EXPECT_EQ(s.vertex_count(), static_cast<std::uint64_t>(kVertices));
    EXPECT_TRUE(s.GetProperty(VertexId(0), "name").has_value());
  }

  const std::size_t held_count = held.size();
  held.clear();
  const MemoryStats after = SettledMemoryStats(*graph);
  EXPECT_EQ(after.retired_bytes, 0u) << Describe(after);
  EXPECT_EQ(after.live_versions, 1u) << Describe(after);

  // The bound. After release the graph holds the same logical content as at
  // the baseline, so every structure is the same size except for:
  //  - the edge id space: each add+remove pair consumed one edge id that is
  //    never reused, and an id table may keep a slot (or a share of a chunk
  //    spine) per id ever assigned. 64 bytes per consumed id is generous for
  //    a slot (two 48-bit endpoints, a type and a property pointer fit in 32).
  //  - touched leaves: the leaves of the vertex table, property blocks and
  //    adjacency arrays of the kTouched churned vertices were copied; a copy
  //    may differ from the original in spare capacity (adjacency arrays grow
  //    by x2 and shrink on removal). 4 KiB per touched vertex covers a table
  //    leaf and two adjacency arrays of a few dozen entries each.
  //  - a fixed 16 KiB for version roots and table spines that grew a level.
  // A leak of anything retired per commit (a version root, a copied leaf or
  // property block: tens to thousands of bytes each, times kCommits) exceeds
  // this by far: even 32 leaked bytes per commit is 256 KiB.
  const std::uint64_t slack = consumed_edge_ids * 64 + kTouched * 4096 + 16 * 1024;
  std::cout << "memory: baseline " << Describe(baseline) << "; holding " << held_count << " snapshots "
            << Describe(holding) << "; released " << Describe(after) << "; allowed growth " << slack
            << " bytes" << std::endl;
  EXPECT_LE(after.allocated_bytes, baseline.allocated_bytes + slack)
      << "baseline " << Describe(baseline) << ", after " << Describe(after) << ", slack " << slack
      << " (consumed edge ids " << consumed_edge_ids << ")";
  // And nothing that the baseline needed was freed.
  EXPECT_GE(after.allocated_bytes + 16 * 1024, baseline.allocated_bytes)
      << "baseline " << Describe(baseline) << ", after " << Describe(after);
}

TEST(MemoryTest, NoSnapshotsMeansNothingStaysRetired) {
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  const MemoryStats baseline = SettledMemoryStats(*graph);
  for (int i = 0; i < 2000; ++i) {
    WriteBatch b;
    b.SetProperty(VertexId(i % kTouched), "name", Name(i % kTouched, i + 1));
    WriteForMemory(*graph, std::move(b));
  }
  const MemoryStats after = SettledMemoryStats(*graph);
  EXPECT_EQ(after.retired_bytes, 0u) << Describe(after);
  EXPECT_EQ(after.live_versions, 1u) << Describe(after);
  // Only property values of the same size were replaced: see the bound in
  // ChurnIsReclaimedOnceSnapshotsAreReleased (no edge ids consumed here).
  EXPECT_LE(after.allocated_bytes, baseline.allocated_bytes + kTouched * 4096 + 16 * 1024)
      << "baseline " << Describe(baseline) << ", after " << Describe(after);
}

TEST(MemoryTest, SnapshotsPinExactlyTheirVersions) {
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  std::vector<Snapshot> held;
  for (int i = 0; i < 5; ++i) {
    held.push_back(graph->GetSnapshot());
    WriteBatch b;
    b.SetProperty(VertexId(i), "n", -i);
    WriteForMemory(*graph, std::move(b));
  }
  // Five pinned versions plus the current one.
  MemoryStats m = graph->GetMemoryStats();
  EXPECT_GE(m.live_versions, 6u) << Describe(m);
  EXPECT_GT(m.retired_bytes, 0u) << Describe(m);
  // Releasing the newest pinned version does not free what older ones need.
  held.pop_back();
  for (std::size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(held[i].GetProperty(VertexId(i), "n")->as_int64(), static_cast<std::int64_t>(i));
  }
  // Taking a second snapshot of an already pinned version pins nothing new.
  Snapshot again = graph->GetSnapshot();
  Snapshot again2 = graph->GetSnapshot();
  EXPECT_EQ(again.sequence(), again2.sequence());
  held.clear();
  again = Snapshot();
  MemoryStats one = SettledMemoryStats(*graph);
  EXPECT_EQ(one.live_versions, 1u) << Describe(one);
  EXPECT_EQ(one.retired_bytes, 0u) << Describe(one);
  EXPECT_EQ(again2.GetProperty(VertexId(4), "n")->as_int64(), -4);
}

TEST(MemoryTest, RemovedElementIsReleasedOnceNoSnapshotHoldsIt) {
  constexpr std::uint64_t kBig = 1 << 20;      // vertex property
  constexpr std::uint64_t kBigEdge = 1 << 18;  // edge property
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  const MemoryStats m0 = SettledMemoryStats(*graph);

  WriteBatch add;
  NewVertex big = add.AddVertex("Big", {{"blob", std::string(kBig, 'b')}});
  add.AddEdge("A", big, VertexId(0), {{"blob", Bytes(kBigEdge, std::byte{7})}});
  add.AddEdge("A", VertexId(1), big);
  Result<CommitInfo> added = graph->Write(std::move(add));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  const VertexId big_id = added->vertices[0];
  const MemoryStats m1 = SettledMemoryStats(*graph);
  EXPECT_GE(m1.allocated_bytes, m0.allocated_bytes + kBig + kBigEdge) << Describe(m1);

  Snapshot pin = graph->GetSnapshot();
  WriteBatch rm;
  rm.RemoveVertex(big_id);
  WriteForMemory(*graph, std::move(rm));
  const MemoryStats m2 = graph->GetMemoryStats();
  // The removed vertex and its edges are retired but still reachable from
  // `pin`, so still allocated.
  EXPECT_GE(m2.retired_bytes, kBig + kBigEdge) << Describe(m2);
  EXPECT_GE(m2.allocated_bytes, m0.allocated_bytes + kBig + kBigEdge) << Describe(m2);
  EXPECT_GE(m2.live_versions, 2u) << Describe(m2);
  EXPECT_EQ(pin.GetProperty(big_id, "blob")->as_string()->size(), kBig);
  EXPECT_FALSE(graph->GetSnapshot().HasVertex(big_id));

  pin = Snapshot();
  const MemoryStats m3 = SettledMemoryStats(*graph);
  EXPECT_EQ(m3.retired_bytes, 0u) << Describe(m3);
  EXPECT_EQ(m3.live_versions, 1u) << Describe(m3);
  EXPECT_LE(m3.allocated_bytes + kBig + kBigEdge, m1.allocated_bytes + 16 * 1024)
      << "m1 " << Describe(m1) << ", m3 " << Describe(m3);
  // Back to the baseline but for one dead vertex id, two dead edge ids and
  // the touched leaves (see the bound in ChurnIsReclaimedOnceSnapshotsAreReleased).
  EXPECT_LE(m3.allocated_bytes, m0.allocated_bytes + 3 * 64 + 3 * 4096 + 16 * 1024)
      << "m0 " << Describe(m0) << ", m3 " << Describe(m3);
}

TEST(MemoryTest, OverwrittenValueIsReleasedOnceNoSnapshotHoldsIt) {
  constexpr std::uint64_t kBig = 1 << 20;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  WriteBatch set;
  set.SetProperty(VertexId(5), "blob", std::string(kBig, 'x'));
  WriteForMemory(*graph, std::move(set));
  const MemoryStats m1 = SettledMemoryStats(*graph);
  Snapshot pin = graph->GetSnapshot();
  WriteBatch shrink;
  shrink.SetProperty(VertexId(5), "blob", "small");
  WriteForMemory(*graph, std::move(shrink));
  EXPECT_GE(graph->GetMemoryStats().retired_bytes, kBig);
  EXPECT_EQ(pin.GetProperty(VertexId(5), "blob")->as_string()->size(), kBig);
  pin = Snapshot();
  const MemoryStats m2 = SettledMemoryStats(*graph);
  EXPECT_EQ(m2.retired_bytes, 0u) << Describe(m2);
  EXPECT_LE(m2.allocated_bytes + kBig, m1.allocated_bytes + 4096) << Describe(m1) << " / " << Describe(m2);
}

TEST(MemoryTest, SnapshotOutlivingGraphFreesOnRelease) {
  // Run under ASan/LSan this also proves the version is freed (no leak) and
  // not freed early (no use-after-free) when the snapshot outlives the Graph.
  Snapshot s;
  {
    auto graph = NewMemoryGraph();
    ASSERT_NE(graph, nullptr);
    BuildGraph(*graph);
    s = graph->GetSnapshot();
    WriteBatch b;
    b.RemoveVertex(VertexId(0));
    WriteForMemory(*graph, std::move(b));
  }
  EXPECT_TRUE(s.HasVertex(VertexId(0)));
  EXPECT_EQ(s.vertex_count(), static_cast<std::uint64_t>(kVertices));
  s = Snapshot();
  EXPECT_FALSE(s.valid());
}

// Regression (rewrites within one group): removing k neighbours of a hub of
// degree d in one batch copied the hub's array once per removal and retired
// every copy, k * d * 12 bytes (12 GB here). Blocks the group allocated are
// now edited in place, so the bytes retired while a snapshot holds the old
// version are O(d + k): the hub's array once, plus the removed neighbours'
// own slots, arrays and the table leaves around them.
TEST(MemoryTest, HubRemovalsInOneBatchRetireLinearBytes) {
  constexpr int kDegree = 100'000;
  constexpr int kRemoved = 10'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    NewVertex hub = b.AddVertex("Hub");
    for (int i = 0; i < kDegree; ++i) b.AddEdge("E", hub, b.AddVertex("Leaf"));
    WriteForMemory(*graph, std::move(b));
  }
  ASSERT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
  Snapshot held = graph->GetSnapshot();
  // Every tenth neighbour (ids 1..kDegree are the leaves), spread over the
  // whole array so each removal lands in the middle of it.
  WriteBatch b;
  for (int i = 0; i < kRemoved; ++i) b.RemoveVertex(VertexId(1 + std::uint64_t{10} * i));
  WriteForMemory(*graph, std::move(b));
  const MemoryStats m = graph->GetMemoryStats();

  // The answer first: the survivors, in their original order.
  Snapshot now = graph->GetSnapshot();
  ASSERT_EQ(now.OutDegree(VertexId(0)), static_cast<std::size_t>(kDegree - kRemoved));
  std::uint64_t expected = 1, at = 0;
  for (EdgeGroup g : now.OutEdges(VertexId(0))) {
    for (const EdgeEntry& e : g.entries) {
      if (expected % 10 == 1) ++expected;  // removed: 1, 11, ..., 99,991
      ASSERT_EQ(e.neighbor().value(), expected) << "entry " << at;
      ++expected;
      ++at;
    }
  }
  EXPECT_EQ(held.OutDegree(VertexId(0)), static_cast<std::size_t>(kDegree));

  // The bound, all O(d + k): the hub's array (12 B per entry plus up to one
  // allocator bin of slack) twice over; every vertex leaf and edge leaf once
  // (every tenth id is removed, so each 64-slot leaf is copied: 2,560 B and
  // 1,024 B per 64 ids); 64 B per removed neighbour's one-entry array; and
  // 64 KiB for inner nodes; and every leaf of the label set of Leaf and of
  // the type set of E once (index/catalog.h: 6-byte ids in 4 KiB leaves, at
  // worst half full after splits, so 12 B per id per set). Copying per
  // removal would retire 10^4 times the hub's array (12 GB).
  const std::uint64_t bound = 2 * std::uint64_t{kDegree} * sizeof(EdgeEntry) +
                              (std::uint64_t{kDegree} / 64 + 1) * (2560 + 1024) +
                              64 * std::uint64_t{kRemoved} + 65536 + 2 * 12 * std::uint64_t{kDegree};
  std::cout << "[          ] hub " << kDegree << ", " << kRemoved << " removed in one batch: retired "
            << m.retired_bytes << " B (bound " << bound << " B)\n";
  EXPECT_GT(m.retired_bytes, std::uint64_t{kDegree} * sizeof(EdgeEntry));  // the published array, once
  EXPECT_LE(m.retired_bytes, bound) << Describe(m);
  held = Snapshot();
  now = Snapshot();
  EXPECT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
}

// The same for properties: k sets of one element's properties in one batch
// retired one block per set (O(k x block)). Now the published block is
// retired once and the group's own blocks are rewritten in place (a value
// that fits) or freed at once (one that does not).
TEST(MemoryTest, PropertySetsOnOneElementRetireOneBlock) {
  constexpr int kKeys = 64;
  constexpr int kSets = 5'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  std::vector<Property> props;
  for (int k = 0; k < kKeys; ++k) props.push_back({"k" + std::to_string(k), Name(k, 0)});
  {
    WriteBatch b;
    NewVertex a = b.AddVertex("V", props);
    NewVertex c = b.AddVertex("V");
    b.AddEdge("E", a, c, props);
    WriteForMemory(*graph, std::move(b));
  }
  ASSERT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
  Snapshot held = graph->GetSnapshot();
  WriteBatch b;
  std::vector<std::string> last(kKeys);
  for (int i = 0; i < kSets; ++i) {
    int k = (i * 7) % kKeys;
    // Mostly same-length strings (in place); every 16th a longer one, then
    // an int (rebuilt, the group's previous block freed).
    PropertyValue v = i % 16 == 5   ? PropertyValue(Name(k, i) + Name(k, i))
                      : i % 16 == 6 ? PropertyValue(std::int64_t{i})
                                    : PropertyValue(Name(k, i));
    last[k] = test_util::Render(v);
    b.SetProperty(VertexId(0), "k" + std::to_string(k), v);
    b.SetProperty(EdgeId(0), "k" + std::to_string(k), v);
  }
  WriteForMemory(*graph, std::move(b));
  const MemoryStats m = graph->GetMemoryStats();
  Snapshot now = graph->GetSnapshot();
  for (int k = 0; k < kKeys; ++k) {
    auto pv = now.GetProperty(VertexId(0), "k" + std::to_string(k));
    auto pe = now.GetProperty(EdgeId(0), "k" + std::to_string(k));
    ASSERT_TRUE(pv.has_value() && pe.has_value());
    EXPECT_EQ(test_util::Render(*pv), last[k]) << k;
    EXPECT_EQ(test_util::Render(*pe), last[k]) << k;
  }
  // A block here is ~64 x (16 B entry + 16 B payload) = 2 KiB, up to twice
  // that after long values: two blocks (vertex and edge) retired once, plus
  // the two leaves they hang from and their parents' copies.
  const std::uint64_t bound = 2 * 4096 + 16384;
  std::cout << "[          ] " << kSets << " property sets on one vertex and one edge: retired "
            << m.retired_bytes << " B (bound " << bound << " B)\n";
  EXPECT_LE(m.retired_bytes, bound) << Describe(m);
  held = Snapshot();
  now = Snapshot();
  EXPECT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
}

// The same with an ordered index on the key being set: each set moves a
// vertex's entry in the index tree. The tree nodes the group copied are its
// own and are edited in place by the later sets, so 5,000 sets in one batch
// retire the published leaves and inner nodes on the touched paths once,
// not a copy per set (5,000 x 4 KiB). Each set is on a vertex of its own:
// all the sets of one vertex in a batch are one change to the index
// (BatchProcessor::ApplyPropertyChanges).
TEST(MemoryTest, IndexedPropertySetsInOneBatchRetireEachTreeNodeOnce) {
  constexpr int kIndexed = 20'000;
  constexpr int kSets = 5'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  ASSERT_TRUE(graph->CreateIndex({.name = "by_n", .label = "V", .keys = {"n"}}).ok());
  {
    WriteBatch b;
    for (int i = 0; i < kIndexed; ++i) b.AddVertex("V", {{"n", std::int64_t{2} * i}});
    WriteForMemory(*graph, std::move(b));
  }
  ASSERT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
  Snapshot held = graph->GetSnapshot();
  WriteBatch b;
  // The values wander over the whole key range, so the entries visit many
  // leaves.
  auto value = [](int i) { return std::int64_t{2} * ((i * 7919) % kIndexed) + 1; };
  for (int i = 0; i < kSets; ++i) b.SetProperty(VertexId(i), "n", value(i));
  WriteForMemory(*graph, std::move(b));
  const MemoryStats m = graph->GetMemoryStats();
  Snapshot now = graph->GetSnapshot();
  for (int i : {0, 7, kSets - 1}) {
    EXPECT_EQ(now.GetProperty(VertexId(i), "n")->as_int64(), value(i));
    Result<std::vector<VertexId>> found = now.FindVertices("V", "n", PropertyValue(value(i)));
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    EXPECT_EQ(*found, std::vector<VertexId>{VertexId(i)});
  }
  // The index holds 20,000 entries (a few hundred KiB of leaves); each
  // distinct leaf the entries visit is retired at most once. Each vertex's
  // published block (one int64) is retired once too.
  const std::uint64_t tree_bound = 20 * std::uint64_t{kIndexed};
  const std::uint64_t bound = tree_bound + 64 * std::uint64_t{kSets} + 16384;
  std::cout << "[          ] " << kSets << " indexed sets: retired " << m.retired_bytes << " B (bound "
            << bound << " B)\n";
  EXPECT_LE(m.retired_bytes, bound) << Describe(m);
  held = Snapshot();
  now = Snapshot();
  EXPECT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
}

// Engine II 1.3, checked by structure rather than by time: the reader that
// drops the last reference to a version full of retired blocks frees them
// without holding the chain's mutex, which the writer's Publish takes; and
// GetMemoryStats and snapshot acquire/release take that mutex not at all.
// Every free through the engine's accounts is observed (base::
// SetFreeObserver) and counted when the freeing thread holds the mutex.
std::atomic<const storage::VersionChain*> g_watched_chain{nullptr};
std::atomic<std::uint64_t> g_frees{0};
std::atomic<std::uint64_t> g_frees_under_chain_lock{0};

void CountFree(void*) {
  g_frees.fetch_add(1, std::memory_order_relaxed);
  const storage::VersionChain* chain = g_watched_chain.load(std::memory_order_relaxed);
  if (chain != nullptr && chain->TEST_HeldByThisThread())
    g_frees_under_chain_lock.fetch_add(1, std::memory_order_relaxed);
}

TEST(MemoryTest, ReleasingAChurnedSnapshotFreesNothingUnderTheChainLock) {
  constexpr int kIndexed = 10'000;
  constexpr int kRounds = 20;  // 200,000 property blocks retired
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    for (int i = 0; i < kIndexed; ++i) b.AddVertex("V", {{"p", std::int64_t{0}}});
    WriteForMemory(*graph, std::move(b));
  }
  Snapshot held = graph->GetSnapshot();
  for (int round = 1; round <= kRounds; ++round) {
    WriteBatch b;
    for (int i = 0; i < kIndexed; ++i) b.SetProperty(VertexId(i), "p", std::int64_t{round});
    WriteForMemory(*graph, std::move(b));
  }
  const MemoryStats pinned = graph->GetMemoryStats();
  ASSERT_GT(pinned.retired_bytes, 0u);
  const auto* chain = static_cast<GraphImpl&>(*graph).TEST_chain();

  // Stats and acquiring/releasing snapshots of the head take no lock.
  const std::uint64_t locks_before = chain->TEST_lock_count();
  for (int i = 0; i < 10'000; ++i) {
    EXPECT_EQ(graph->GetMemoryStats().retired_bytes, pinned.retired_bytes);
    Snapshot s = graph->GetSnapshot();
    EXPECT_EQ(s.vertex_count(), static_cast<std::uint64_t>(kIndexed));
  }
  EXPECT_EQ(chain->TEST_lock_count(), locks_before);

  // Release on another thread while this one commits and a third polls.
  g_frees.store(0);
  g_frees_under_chain_lock.store(0);
  g_watched_chain.store(chain);
  base::SetFreeObserver(&CountFree);
  std::atomic<bool> released{false};
  std::thread releaser([&] {
    held = Snapshot();
    released.store(true, std::memory_order_release);
  });
  std::thread poller([&] {
    while (!released.load(std::memory_order_acquire)) (void)graph->GetMemoryStats();
  });
  std::int64_t commits = 0;
  while (!released.load(std::memory_order_acquire) || commits < 10) {
    WriteBatch b;
    b.SetProperty(VertexId(static_cast<std::uint64_t>(commits) % kIndexed), "q", commits);
    WriteForMemory(*graph, std::move(b));
    ++commits;
  }
  releaser.join();
  poller.join();
  const MemoryStats after = test_util::SettledMemoryStats(*graph);
  base::SetFreeObserver(nullptr);
  g_watched_chain.store(nullptr);
  std::cout << "[          ] " << g_frees.load() << " blocks freed during the release, "
            << g_frees_under_chain_lock.load() << " under the chain lock; " << commits
            << " commits meanwhile\n";
  EXPECT_GE(g_frees.load(), std::uint64_t{kIndexed} * kRounds);  // every retired property block
  EXPECT_EQ(g_frees_under_chain_lock.load(), 0u);
  EXPECT_EQ(after.retired_bytes, 0u);
  EXPECT_EQ(after.live_versions, 1u);
}

// Engine II 3: snapshots pin per-thread reader slots (storage/version.h).
// Repeated snapshots of an unchanged head, on one thread or two at once,
// take the slot's fast path: no direct reference (which writes the shared
// head word), no lock. Counted through the chain's slow-path hook.
TEST(MemoryTest, SnapshotsOfAnUnchangedHeadTakeTheReaderSlotFastPath) {
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  WriteForMemory(*graph, [] {
    WriteBatch b;
    b.AddVertex("V");
    return b;
  }());
  const auto* chain = static_cast<GraphImpl&>(*graph).TEST_chain();
  constexpr int kPairs = 10'000;
  auto churn = [&] {
    for (int i = 0; i < kPairs; ++i) {
      Snapshot s = graph->GetSnapshot();
      ASSERT_EQ(s.vertex_count(), 1u);
    }
  };
  const std::uint64_t slow_before = chain->TEST_slow_pins();
  const std::uint64_t locks_before = chain->TEST_lock_count();
  churn();
  std::thread other(churn);
  churn();
  other.join();
  // At most one slow path per thread: the first pin installs the head.
  EXPECT_LE(chain->TEST_slow_pins() - slow_before, 2u);
  EXPECT_EQ(chain->TEST_lock_count(), locks_before);
}

// The fields readers write on the fast path (the slots) share no cache
// line with the fields the writer writes, nor with each other, and the
// head pointer every acquire reads sits on no line that anyone else
// writes. Lines of 128 bytes: x86 fetches them in adjacent pairs.
TEST(MemoryTest, ReaderSlotsShareNoCacheLineWithWriterFields) {
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  const storage::VersionChain* chain = static_cast<GraphImpl&>(*graph).TEST_chain();
  using Span = storage::VersionChain::FieldSpan;
  auto lines = [](Span s) {
    const auto b = reinterpret_cast<std::uintptr_t>(s.begin);
    return std::pair<std::uintptr_t, std::uintptr_t>(b / 128, (b + s.bytes - 1) / 128);
  };
  auto overlap = [&](Span a, Span b) {
    auto [a0, a1] = lines(a);
    auto [b0, b1] = lines(b);
    return a0 <= b1 && b0 <= a1;
  };
  const std::vector<Span> readers = chain->TEST_ReaderWrittenFields();
  const std::vector<Span> writer = chain->TEST_WriterWrittenFields();
  const Span head = chain->TEST_HeadPointerField();
  ASSERT_EQ(readers.size(), chain->TEST_slot_count());
  ASSERT_GE(readers.size(), 8u);
  for (std::size_t i = 0; i < readers.size(); ++i) {
    EXPECT_FALSE(overlap(readers[i], head)) << "slot " << i;
    for (std::size_t j = 0; j < i; ++j)
      EXPECT_FALSE(overlap(readers[i], readers[j])) << "slots " << i << ", " << j;
    for (std::size_t w = 0; w < writer.size(); ++w)
      EXPECT_FALSE(overlap(readers[i], writer[w])) << "slot " << i << ", writer field " << w;
  }
  for (std::size_t w = 0; w < writer.size(); ++w)
    EXPECT_FALSE(overlap(head, writer[w])) << "writer field " << w;
  // Two threads started one after the other pin different slots.
  std::uint32_t mine = chain->TEST_ThisThreadSlot();
  std::uint32_t a = 0, b = 0;
  std::thread([&] { a = chain->TEST_ThisThreadSlot(); }).join();
  std::thread([&] { b = chain->TEST_ThisThreadSlot(); }).join();
  EXPECT_NE(a, b);
  EXPECT_EQ(mine, chain->TEST_ThisThreadSlot());  // a thread keeps its slot
}

// A reader slot delays no reclamation beyond the snapshots that pin it
// (version.6): a slot left holding an old version with no pins is emptied
// by the next publication, and a pinned one by its last release, on
// whichever thread that happens. Checked by retired bytes and live versions
// after each step, with the writer idle (nothing else would let go).
TEST(MemoryTest, ReaderSlotsDelayNoReclamation) {
  constexpr int kSlotVertices = 1'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  std::int64_t round = 0;
  auto churn = [&] {
    WriteBatch b;
    ++round;
    for (int i = 0; i < kSlotVertices; ++i)
      if (round == 1)
        b.AddVertex("V", {{"p", round}});
      else
        b.SetProperty(VertexId(static_cast<std::uint64_t>(i)), "p", round);
    WriteForMemory(*graph, std::move(b));
  };
  churn();
  // Idle slots on two threads hold the head when the next commits retire it.
  { Snapshot s = graph->GetSnapshot(); }
  std::thread([&] { Snapshot s = graph->GetSnapshot(); }).join();
  churn();
  churn();
  MemoryStats m = SettledMemoryStats(*graph);
  EXPECT_EQ(m.retired_bytes, 0u) << Describe(m);
  EXPECT_EQ(m.live_versions, 1u);

  // Pinned on this thread, released on another after the head moved on.
  Snapshot held = graph->GetSnapshot();
  Snapshot held2 = graph->GetSnapshot();  // two pins on one slot
  churn();
  churn();
  ASSERT_GT(graph->GetMemoryStats().retired_bytes, 0u);
  EXPECT_EQ(graph->GetMemoryStats().live_versions, 2u);
  // While pinned, this thread's new snapshots take direct references and
  // are still of the head.
  {
    Snapshot fresh = graph->GetSnapshot();
    EXPECT_EQ(*fresh.GetProperty(VertexId(0), "p")->as_int64(), round);
    EXPECT_EQ(*held.GetProperty(VertexId(0), "p")->as_int64(), round - 2);
  }
  held2 = Snapshot();
  EXPECT_GT(graph->GetMemoryStats().retired_bytes, 0u);  // one pin left
  std::thread([&] { held = Snapshot(); }).join();
  m = SettledMemoryStats(*graph);
  EXPECT_EQ(m.retired_bytes, 0u) << Describe(m);
  EXPECT_EQ(m.live_versions, 1u);

  // A snapshot that outlives its graph lets the chain go when released.
  held = graph->GetSnapshot();
  graph.reset();
  EXPECT_EQ(held.vertex_count(), static_cast<std::uint64_t>(kSlotVertices));
  held = Snapshot();  // LSan/ASan: the chain and every block are freed
}

// The edge-removal form of the hub case above, on a hub whose arrays sit
// under a group directory (two edge types): 10,000 RemoveEdge of its
// 100,000 "E" edges, spread over the array, in one batch while a snapshot
// holds the old version. Retired: the hub's array and directory once, the
// edge leaves (every one is touched), the targets' one-entry in-arrays and
// their vertex leaves, and the type set's leaves: all O(d + k).
TEST(MemoryTest, HubEdgeRemovalsInOneBatchRetireLinearBytes) {
  constexpr int kDegree = 100'000;
  constexpr int kRemoved = 10'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    NewVertex hub = b.AddVertex("Hub");
    for (int i = 0; i < kDegree; ++i) b.AddEdge("E", hub, b.AddVertex("Leaf"));
    b.AddEdge("F", hub, hub);  // a second type: the hub keeps a directory
    WriteForMemory(*graph, std::move(b));
  }
  ASSERT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
  Snapshot held = graph->GetSnapshot();
  WriteBatch b;
  for (int i = 0; i < kRemoved; ++i) b.RemoveEdge(EdgeId(std::uint64_t{10} * i + 3));
  WriteForMemory(*graph, std::move(b));
  const MemoryStats m = graph->GetMemoryStats();
  Snapshot now = graph->GetSnapshot();
  EXPECT_EQ(now.OutEdges(VertexId(0), *now.FindEdgeType("E")).size(),
            static_cast<std::size_t>(kDegree - kRemoved));
  const std::uint64_t array = std::uint64_t{kDegree} * sizeof(EdgeEntry);
  const std::uint64_t bound = 2 * array + (std::uint64_t{kDegree} / 64 + 1) * (2560 + 1024) +
                              64 * std::uint64_t{kRemoved} + 65536 + 12 * std::uint64_t{kDegree};
  std::cout << "[          ] hub " << kDegree << ", " << kRemoved << " edges removed in one batch: retired "
            << m.retired_bytes << " B (bound " << bound << " B; per-removal copies would be "
            << std::uint64_t{kRemoved} * array << " B)\n";
  EXPECT_GT(m.retired_bytes, array);
  EXPECT_LE(m.retired_bytes, bound) << Describe(m);
  held = Snapshot();
  now = Snapshot();
  EXPECT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
}

// Appends, the third form of the hub case: 100,000 new edges of a hub in one
// batch while a snapshot holds the old version. The batch's adjacency
// entries are sorted by vertex and the hub's array is built once at its
// final size (BatchProcessor::FlushAdds), where one append per edge grew it
// through ~90 allocator size classes, copying and freeing each. Observed
// through every free: no block the size of a grown hub array (64 KiB and up)
// is freed while the batch is applied. The snapshot still reads the old
// degree and entries; retired bytes are O(d): the hub's old array once and
// the vertex leaves (every leaf gains in-edges) and the type set's leaves.
std::atomic<std::uint64_t> g_large_frees{0};
// Blocks of at least this size are a batch's adjacency sort buffers
// (BatchProcessor::FlushAdds), not adjacency.
std::atomic<std::size_t> g_sort_buffer_bytes{~std::size_t{0}};

void CountLargeFree(void* block) {
  const std::size_t size = base::UsableSize(block);
  if (size >= 65536 && size < g_sort_buffer_bytes.load())
    g_large_frees.fetch_add(1, std::memory_order_relaxed);
}

// Writes `b` and returns how many blocks of 64 KiB or more (below the sort
// buffers' size) were freed while it was applied.
std::uint64_t LargeFreesWriting(Graph& graph, WriteBatch b) {
  g_large_frees.store(0);
  base::SetFreeObserver(&CountLargeFree);
  WriteForMemory(graph, std::move(b));
  base::SetFreeObserver(nullptr);
  return g_large_frees.load();
}

std::atomic<std::uint64_t> g_sort_buffer_frees{0};
std::atomic<std::size_t> g_largest_sort_buffer{0};

void CountSortBufferFree(void* block) {
  const std::size_t size = base::UsableSize(block);
  if (size < g_sort_buffer_bytes.load()) return;
  g_sort_buffer_frees.fetch_add(1);
  g_largest_sort_buffer.store(std::max(g_largest_sort_buffer.load(), size));
}

// The buffers a batch sorts its adjacency entries in (two entries of 32 B
// per edge, twice) are blocks of the graph's memory account, sized to the
// batch, not the standard library's, grown by doubling: they count in
// MemoryStats while the batch holds them, fail like every engine block when
// memory runs out, and are freed through the account when the batch ends.
TEST(MemoryTest, EdgeBatchSortBuffersCountInTheAccount) {
  constexpr int kEdges = 200'000;
  constexpr int kEnds = 1000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    for (int i = 0; i < kEnds; ++i) b.AddVertex("V");
    WriteForMemory(*graph, std::move(b));
  }
  WriteBatch b;
  for (int i = 0; i < kEdges; ++i)
    b.AddEdge(i % 3 == 0 ? "F" : "E", VertexId(std::uint64_t(i) * 7919 % kEnds),
              VertexId((std::uint64_t(i) * 104729 + 1) % kEnds));
  const std::size_t needed = 2 * std::size_t{kEdges} * sizeof(storage::EntryAdd);
  g_sort_buffer_bytes.store(needed);
  g_sort_buffer_frees.store(0);
  g_largest_sort_buffer.store(0);
  base::SetFreeObserver(&CountSortBufferFree);
  WriteForMemory(*graph, std::move(b));
  base::SetFreeObserver(nullptr);
  g_sort_buffer_bytes.store(~std::size_t{0});
  EXPECT_EQ(g_sort_buffer_frees.load(), 2u) << "the sort buffers did not come from the account";
  EXPECT_LT(g_largest_sort_buffer.load(), needed + needed / 8) << "a sort buffer was not sized to the batch";
  EXPECT_EQ(static_cast<GraphImpl&>(*graph).TEST_sort_buffer_bytes(), 0u) << "kept after the batch";
  std::size_t out = 0;
  Snapshot now = graph->GetSnapshot();
  for (int v = 0; v < kEnds; ++v) out += now.OutDegree(VertexId(v));
  EXPECT_EQ(out, std::size_t{kEdges});
}

TEST(MemoryTest, HubAppendsInOneBatchBuildItsArrayOnce) {
  constexpr int kLeaves = 100'000;
  constexpr int kOld = 10;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    NewVertex hub = b.AddVertex("Hub");
    std::vector<NewVertex> leaves;
    for (int i = 0; i < kLeaves; ++i) leaves.push_back(b.AddVertex("Leaf"));
    for (int i = 0; i < kOld; ++i) b.AddEdge("E", hub, leaves[i]);
    WriteForMemory(*graph, std::move(b));
  }
  ASSERT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
  Snapshot held = graph->GetSnapshot();
  WriteBatch b;
  for (int i = 0; i < kLeaves; ++i) b.AddEdge("E", VertexId(0), VertexId(1 + std::uint64_t(i)));
  g_sort_buffer_bytes.store(2 * std::size_t{kLeaves} * sizeof(storage::EntryAdd));
  const std::uint64_t large_frees = LargeFreesWriting(*graph, std::move(b));
  g_sort_buffer_bytes.store(~std::size_t{0});
  const MemoryStats m = graph->GetMemoryStats();
  EXPECT_EQ(large_frees, 0u) << "the hub's array was grown and freed on the way";

  Snapshot now = graph->GetSnapshot();
  ASSERT_EQ(now.OutDegree(VertexId(0)), static_cast<std::size_t>(kOld + kLeaves));
  std::uint64_t at = 0;
  for (EdgeGroup g : now.OutEdges(VertexId(0)))
    for (const EdgeEntry& e : g.entries) {
      // The old entries, then the new in the batch's order.
      const std::uint64_t expected = at < kOld ? 1 + at : 1 + (at - kOld);
      ASSERT_EQ(e.neighbor().value(), expected) << "entry " << at;
      ++at;
    }
  ASSERT_EQ(held.OutDegree(VertexId(0)), static_cast<std::size_t>(kOld));
  at = 0;
  for (EdgeGroup g : held.OutEdges(VertexId(0)))
    for (const EdgeEntry& e : g.entries) EXPECT_EQ(e.neighbor().value(), 1 + at++);
  EXPECT_EQ(held.InDegree(VertexId(kOld + 1)), 0u);
  EXPECT_EQ(now.InDegree(VertexId(kOld + 1)), 1u);

  const std::uint64_t bound =
      4096 + (std::uint64_t{kLeaves} / 64 + 1) * 2560 + 65536 + 12 * std::uint64_t{kLeaves};
  std::cout << "[          ] hub " << kOld << " + " << kLeaves << " edges in one batch: retired "
            << m.retired_bytes << " B (bound " << bound << " B)\n";
  EXPECT_LE(m.retired_bytes, bound) << Describe(m);
  held = Snapshot();
  now = Snapshot();
  EXPECT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
}

// Engine II 1.1 for new keys: a batch that gives one element k keys it did
// not have, one SetProperty each, built a block per change, each one entry
// larger than the last (O(k^2): 32,000 keys on one vertex took 29 s of the
// writer). Changes to one element that follow one another are applied as one
// block, so no block of 64 KiB or more (about 4,000 entries) is freed while
// the batch is applied; a run mixing removals (of keys present, set earlier
// in the run, or absent) ends as the same changes one by one would.
TEST(MemoryTest, NewKeysOnOneElementInOneBatchBuildItsBlockOnce) {
  constexpr int kKeys = 8'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    // Vertex 2 holds every key first, so the batch below adds no names
    // (the name table's runs are blocks too).
    WriteBatch b;
    NewVertex a = b.AddVertex("V", {{"old", std::int64_t{1}}, {"gone", "x"}});
    NewVertex c = b.AddVertex("V");
    NewVertex names = b.AddVertex("V");
    b.AddEdge("E", a, c, {{"old", std::int64_t{2}}});
    for (int k = 0; k < kKeys; ++k) b.SetProperty(names, "n" + std::to_string(k), std::int64_t{k});
    WriteForMemory(*graph, std::move(b));
  }
  Snapshot held = graph->GetSnapshot();
  std::map<std::string, std::int64_t> model_v{{"old", 1}}, model_e{{"old", 2}};
  WriteBatch b;
  b.RemoveProperty(VertexId(0), "gone");
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "n" + std::to_string(k);
    b.SetProperty(VertexId(0), key, std::int64_t{k});
    model_v[key] = k;
    if (k % 1000 == 7) {  // set twice, the second wins
      b.SetProperty(VertexId(0), key, std::int64_t{-k});
      model_v[key] = -k;
    }
    if (k % 1000 == 9) {  // set, then removed
      b.RemoveProperty(VertexId(0), key);
      model_v.erase(key);
    }
    b.RemoveProperty(VertexId(0), "absent");  // a key no element has
  }
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "n" + std::to_string(k);
    b.SetProperty(EdgeId(0), key, std::int64_t{3 * k});
    model_e[key] = 3 * k;
  }
  b.RemoveProperty(EdgeId(0), "old");
  b.RemoveProperty(EdgeId(0), "n5");  // present on vertex 2, removed from the edge's run
  model_e.erase("old");
  model_e.erase("n5");
  EXPECT_EQ(LargeFreesWriting(*graph, std::move(b)), 0u)
      << "a block of a growing property set was built and freed";

  Snapshot now = graph->GetSnapshot();
  auto read = [](const Snapshot& s, auto element) {
    std::map<std::string, std::int64_t> out;
    for (const PropertyRange::Entry& p : s.Properties(element))
      out[std::string(s.PropertyKeyName(p.key))] = p.value.as_int64().value_or(-1);
    return out;
  };
  EXPECT_EQ(read(now, VertexId(0)), model_v);
  EXPECT_EQ(read(now, EdgeId(0)), model_e);
  EXPECT_FALSE(now.GetProperty(VertexId(0), "gone").has_value());
  // The held snapshot reads the blocks as they were.
  EXPECT_EQ(std::ranges::distance(held.Properties(VertexId(0))), 2);
  EXPECT_EQ(held.GetProperty(EdgeId(0), "old")->as_int64(), 2);
  held = Snapshot();
  now = Snapshot();
  EXPECT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
}

// Review of the runs: changes that only set keys the group's own block
// holds stay in place, so many overwrites on one large block the group owns
// copy it at most once (a block per change, or per run of changes, would free
// ~1,000 blocks of 80 KB here); and the list of a long run is not kept after
// its batch (it is bounded only by the batch's length). The block is the
// batch's own: the vertex is added in it.
TEST(MemoryTest, OverwriteRunsOnAGroupBlockStayInPlace) {
  constexpr int kKeys = 5'000;  // 8 + 16 x 5,000 B: an 80 KB block
  constexpr int kRuns = 1'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    b.AddVertex("V", {{"x", std::int64_t{0}}});
    WriteForMemory(*graph, std::move(b));
  }
  std::vector<Property> props;
  for (int k = 0; k < kKeys; ++k) props.push_back({"k" + std::to_string(k), std::int64_t{k}});
  WriteBatch b;
  NewVertex big = b.AddVertex("V", props);  // vertex 1, a block the group owns
  for (int i = 0; i < kRuns; ++i) {
    b.SetProperty(big, "k1", std::int64_t{i});  // a run of two overwrites
    b.SetProperty(big, "k2", std::int64_t{-i});
    b.SetProperty(VertexId(0), "x", std::int64_t{i});  // ends the run
  }
  EXPECT_EQ(LargeFreesWriting(*graph, std::move(b)), 0u) << "the group's own block was rebuilt";
  Snapshot now = graph->GetSnapshot();
  EXPECT_EQ(now.GetProperty(VertexId(1), "k1")->as_int64(), kRuns - 1);
  EXPECT_EQ(now.GetProperty(VertexId(1), "k2")->as_int64(), -(kRuns - 1));
  EXPECT_EQ(now.GetProperty(VertexId(1), "k3")->as_int64(), 3);
  EXPECT_EQ(now.GetProperty(VertexId(0), "x")->as_int64(), kRuns - 1);

  WriteBatch run;
  for (int i = 0; i < 100'000; ++i) run.SetProperty(VertexId(0), "x", std::int64_t{i});
  WriteForMemory(*graph, std::move(run));
  EXPECT_EQ(graph->GetSnapshot().GetProperty(VertexId(0), "x")->as_int64(), 99'999);
  EXPECT_LT(static_cast<GraphImpl&>(*graph).TEST_prop_changes_bytes(), std::size_t{256} << 10);
}

// All the property changes of one element in a batch build its block once,
// however other operations interleave them: 1,000 new keys and 1,000
// removals on an 80 KB block, each followed by a change to another vertex
// and to an edge, once rebuilt the block per change (2,000 blocks of
// 80 KB built and freed: O(k x n) on the writer). The published block is
// retired (a snapshot holds it), so a rebuild per change shows as a free of
// the group's own intermediate blocks.
TEST(MemoryTest, InterleavedChangesToOneElementBuildItsBlockOnce) {
  constexpr int kKeys = 5'000;  // an 80 KB block
  constexpr int kChanges = 1'000;
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    std::vector<Property> props;
    for (int k = 0; k < kKeys; ++k) props.push_back({"k" + std::to_string(k), std::int64_t{k}});
    WriteBatch b;
    auto v0 = b.AddVertex("V", props);
    auto v1 = b.AddVertex("V", {{"x", std::int64_t{0}}});
    b.AddEdge("E", v0, v1, {{"w", 0.0}});
    WriteForMemory(*graph, std::move(b));
  }
  Snapshot held = graph->GetSnapshot();
  WriteBatch b;
  for (int i = 0; i < kChanges; ++i) {
    b.SetProperty(VertexId(0), "new" + std::to_string(i), std::int64_t{i});
    b.SetProperty(VertexId(1), "x", std::int64_t{i});
    b.RemoveProperty(VertexId(0), "k" + std::to_string(i));
    b.SetProperty(EdgeId(0), "w", 0.5 * i);
  }
  b.SetProperty(VertexId(0), "new0", std::int64_t{-1});  // a key set twice: the last value holds
  b.RemoveProperty(VertexId(0), "new1");                 // a key set, then removed
  EXPECT_EQ(LargeFreesWriting(*graph, std::move(b)), 0u) << "vertex 0's block was rebuilt per change";
  Snapshot now = graph->GetSnapshot();
  EXPECT_EQ(std::ranges::distance(now.Properties(VertexId(0))), kKeys - 1);
  EXPECT_EQ(now.GetProperty(VertexId(0), "new0")->as_int64(), -1);
  EXPECT_FALSE(now.GetProperty(VertexId(0), "new1").has_value());
  EXPECT_EQ(now.GetProperty(VertexId(0), "new999")->as_int64(), 999);
  EXPECT_FALSE(now.GetProperty(VertexId(0), "k999").has_value());
  EXPECT_EQ(now.GetProperty(VertexId(0), "k1000")->as_int64(), 1000);
  EXPECT_EQ(now.GetProperty(VertexId(1), "x")->as_int64(), kChanges - 1);
  EXPECT_EQ(now.GetProperty(EdgeId(0), "w")->as_double(), 0.5 * (kChanges - 1));
  EXPECT_EQ(held.GetProperty(VertexId(0), "k0")->as_int64(), 0);  // the snapshot reads the old block
  EXPECT_FALSE(held.GetProperty(VertexId(0), "new0").has_value());

  // New names get their ids in the operations' order (ids are stable for
  // the graph's life, whichever release replays its log), though vertex 0's
  // sets are applied at its last.
  WriteBatch order;
  order.SetProperty(VertexId(0), "order_a", std::int64_t{1});
  order.SetProperty(VertexId(1), "order_b", std::int64_t{2});
  order.SetProperty(VertexId(0), "order_c", std::int64_t{3});
  WriteForMemory(*graph, std::move(order));
  Snapshot named = graph->GetSnapshot();
  ASSERT_TRUE(named.FindPropertyKey("order_a") && named.FindPropertyKey("order_b") &&
              named.FindPropertyKey("order_c"));
  EXPECT_LT(named.FindPropertyKey("order_a")->value(), named.FindPropertyKey("order_b")->value());
  EXPECT_LT(named.FindPropertyKey("order_b")->value(), named.FindPropertyKey("order_c")->value());
  EXPECT_EQ(named.GetProperty(VertexId(0), "order_c")->as_int64(), 3);
}

// Review of the above: overwrites of keys a block the batch owns holds, some
// of which cannot go in place (a string where an int64 was has no payload
// room; an indexed key must be shown to the index), were each a rebuild of
// the whole block: O(k x n). Now the changes go in place up to the first
// that cannot, and the rest are built as one block.
TEST(MemoryTest, OverwritesOnABlockTheBatchOwnsBuildItOnce) {
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  ASSERT_TRUE(graph->CreateIndex({.name = "by_n", .label = "V", .keys = {"n"}}).ok());
  {
    WriteBatch a;
    a.AddVertex("V", {{"x", std::int64_t{0}}});
    WriteForMemory(*graph, std::move(a));
  }
  std::vector<Property> props;
  for (int k = 0; k < 5'000; ++k) props.push_back({"k" + std::to_string(k), std::int64_t{k}});  // 80 KB
  props.push_back({"s", std::int64_t{0}});
  props.push_back({"n", std::int64_t{0}});
  WriteBatch b;
  NewVertex v = b.AddVertex("V", props);  // vertex 1, a block the batch owns
  for (int i = 0; i < 1'000; ++i) {
    b.SetProperty(v, "s", std::int64_t{i});                                   // inline: in place
    b.SetProperty(v, "s", std::string(16, static_cast<char>('a' + i % 26)));  // no payload room
    b.SetProperty(v, "n", std::int64_t{i});                                   // indexed
    b.SetProperty(VertexId(0), "x", std::int64_t{i});
  }
  EXPECT_LE(LargeFreesWriting(*graph, std::move(b)), 1u) << "the batch's own block was rebuilt per change";
  Snapshot now = graph->GetSnapshot();
  EXPECT_EQ(now.GetProperty(VertexId(1), "n")->as_int64(), 999);
  EXPECT_EQ(now.GetProperty(VertexId(1), "s")->as_string(),
            std::string(16, static_cast<char>('a' + 999 % 26)));
  EXPECT_EQ(now.GetProperty(VertexId(1), "k4999")->as_int64(), 4999);
  Result<std::vector<VertexId>> found = now.FindVertices("V", "n", PropertyValue(std::int64_t{999}));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, std::vector<VertexId>{VertexId(1)});
  found = now.FindVertices("V", "n", PropertyValue(std::int64_t{0}));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_TRUE(found->empty());
}

// Review of the above: once a change cannot go in place, the later ones are
// built with it, in order, even those that would fit: set in place over a
// block the rest then rebuilds, a later value would be lost.
TEST(MemoryTest, InPlaceOverwritesStopAtTheFirstThatDoesNotFit) {
  auto graph = NewMemoryGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch a;
    a.AddVertex("V", {{"x", std::int64_t{0}}});
    WriteForMemory(*graph, std::move(a));
  }
  WriteBatch b;
  NewVertex v = b.AddVertex("V", {{"s", std::int64_t{0}}, {"t", std::int64_t{0}}});  // vertex 1
  b.SetProperty(v, "t", std::int64_t{5});                                            // fits: in place
  b.SetProperty(v, "s", std::string(16, 'a'));  // does not fit: the rest starts here
  b.SetProperty(VertexId(0), "x", std::int64_t{1});
  b.SetProperty(v, "s", std::int64_t{7});  // would fit in place
  b.SetProperty(v, "t", std::int64_t{6});
  WriteForMemory(*graph, std::move(b));
  Snapshot now = graph->GetSnapshot();
  EXPECT_EQ(now.GetProperty(VertexId(1), "s")->as_int64(), 7);
  EXPECT_EQ(now.GetProperty(VertexId(1), "t")->as_int64(), 6);
  EXPECT_EQ(now.GetProperty(VertexId(0), "x")->as_int64(), 1);
}

// A durable graph on the in-memory file system whose WAL syncs can be held,
// so a test queues batches behind a group stuck in its sync and knows they
// all form the next group (checked through DurabilityStats::commit_groups).
class SyncGate : public env::ForwardingFileSystem {
 public:
  explicit SyncGate(env::FileSystem* base) : ForwardingFileSystem(base) {}
  Result<std::unique_ptr<env::WritableFile>> OpenWritable(const std::string& path,
                                                          env::OpenMode mode) override {
    QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::WritableFile> f, target()->OpenWritable(path, mode));
    return std::unique_ptr<env::WritableFile>(std::make_unique<File>(std::move(f), this));
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  // Waits until a sync is held at the gate.
  void AwaitHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return held_ > 0; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = false;
    cv_.notify_all();
  }

 private:
  class File : public env::ForwardingWritableFile {
   public:
    File(std::unique_ptr<env::WritableFile> f, SyncGate* gate)
        : ForwardingWritableFile(std::move(f)), gate_(gate) {}
    Status Sync() override {
      gate_->Pass();
      return target()->Sync();
    }

   private:
    SyncGate* const gate_;
  };
  void Pass() {
    std::unique_lock<std::mutex> lock(mu_);
    ++held_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !closed_; });
    --held_;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int held_ = 0;
};

// Commits `batches` as one commit group of `graph` (whose file system is
// `gate`): a one-vertex batch is held in its WAL sync while they queue.
void CommitAsOneGroup(Graph& graph, SyncGate& gate, std::vector<WriteBatch> batches) {
  const std::uint64_t groups = graph.GetDurabilityStats().commit_groups;
  gate.Close();
  WriteBatch blocker;
  blocker.AddVertex("Blocker");
  std::future<Result<CommitInfo>> first = graph.WriteAsync(std::move(blocker));
  gate.AwaitHeld();
  std::vector<std::future<Result<CommitInfo>>> rest;
  for (WriteBatch& b : batches) rest.push_back(graph.WriteAsync(std::move(b)));
  gate.Open();
  ASSERT_TRUE(first.get().ok());
  for (auto& f : rest) {
    Result<CommitInfo> r = f.get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  ASSERT_EQ(graph.GetDurabilityStats().commit_groups, groups + 2) << "the batches did not form one group";
}

Options OneGroupOptions() {
  Options o;
  o.writer.max_queued_batches = 4096;
  o.writer.max_group_batches = 4096;
  o.writer.max_group_ops = std::size_t{1} << 30;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  return o;
}

// Engine II 1.1 across batches: 100 batches of one commit group, each
// removing 100 of the hub's neighbours (spread over its array) and setting
// one property of one vertex, while a snapshot holds the version before the
// group. The hub's array and the vertex's block created by the group's
// first batch are the group's own from then on and are edited in place by
// the later batches, so the group retires each published block once.
TEST(MemoryTest, ChangesAcrossTheBatchesOfOneGroupRetireLinearBytes) {
  constexpr int kDegree = 100'000;
  constexpr int kBatches = 100;
  constexpr int kPerBatch = 100;
  env::SimFileSystem sim;
  SyncGate gate(&sim);
  Result<std::unique_ptr<Graph>> opened = GraphImpl::OpenDurable(OneGroupOptions(), "/db", &gate);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Graph& graph = **opened;
  {
    WriteBatch b;
    NewVertex hub = b.AddVertex("Hub", {{"p", std::string(64, 'p')}});
    for (int i = 0; i < kDegree; ++i) b.AddEdge("E", hub, b.AddVertex("Leaf"));
    ASSERT_TRUE(graph.Write(std::move(b)).ok());
  }
  ASSERT_EQ(SettledMemoryStats(graph).retired_bytes, 0u);
  Snapshot held = graph.GetSnapshot();
  std::vector<WriteBatch> batches(kBatches);
  for (int j = 0; j < kBatches; ++j) {
    for (int i = 0; i < kPerBatch; ++i)
      batches[j].RemoveEdge(EdgeId(std::uint64_t{kBatches} * 10 * i + 10 * j + 7));
    batches[j].SetProperty(VertexId(0), "p", std::string(64, static_cast<char>('a' + j % 26)));
    batches[j].SetProperty(VertexId(0), "k" + std::to_string(j % 10), j);
  }
  CommitAsOneGroup(graph, gate, std::move(batches));
  const MemoryStats m = graph.GetMemoryStats();
  Snapshot now = graph.GetSnapshot();
  EXPECT_EQ(now.OutDegree(VertexId(0)), static_cast<std::size_t>(kDegree - kBatches * kPerBatch));
  EXPECT_EQ(now.GetProperty(VertexId(0), "k9")->as_int64(), 99);
  const std::uint64_t array = std::uint64_t{kDegree} * sizeof(EdgeEntry);
  // As in the one-batch case: the hub's array twice over, each edge and
  // vertex leaf once, 64 B per removed target's in-array, inner nodes, the
  // type set, and the hub's property block (under 1 KiB).
  const std::uint64_t removed = std::uint64_t{kBatches} * kPerBatch;
  const std::uint64_t bound = 2 * array + (std::uint64_t{kDegree} / 64 + 1) * (2560 + 1024) + 64 * removed +
                              65536 + 12 * std::uint64_t{kDegree} + 1024;
  std::cout << "[          ] " << kBatches << " batches in one group, " << removed
            << " hub edges removed: retired " << m.retired_bytes << " B (bound " << bound << " B)\n";
  EXPECT_GT(m.retired_bytes, array);
  EXPECT_LE(m.retired_bytes, bound) << Describe(m);
  held = Snapshot();
  now = Snapshot();
  EXPECT_EQ(SettledMemoryStats(graph).retired_bytes, 0u);
}

// --- Large blocks given back in steps (base::DiscardPagesInSteps)

// The 2 MiB-aligned steps inside [p, p + bytes).
std::pair<std::uintptr_t, std::uintptr_t> WholeSteps(const void* p, std::size_t bytes) {
  constexpr std::uintptr_t kStep = base::kDiscardStepBytes;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return {(at + kStep - 1) & ~(kStep - 1), (at + bytes) & ~(kStep - 1)};
}

TEST(DiscardPagesTest, WholeStepsReadZeroAndTheBytesAroundThemAreKept) {
  const std::size_t bytes = base::kStepDiscardMinBytes + 3 * base::kDiscardStepBytes + 12345;
  std::vector<unsigned char> block(bytes + 64, 0xAB);
  // An unaligned start, so that both ends fall inside a step.
  unsigned char* p = block.data() + 7;
  base::DiscardPagesInSteps(p, bytes);
  const auto [begin, end] = WholeSteps(p, bytes);
  ASSERT_LT(begin, end);
  std::size_t zero = 0, kept = 0, wrong = 0;
  for (std::size_t i = 0; i < block.size(); ++i) {
    const auto at = reinterpret_cast<std::uintptr_t>(block.data() + i);
    if (at >= begin && at < end) {
      zero += block[i] == 0;
      wrong += block[i] != 0;
    } else {
      kept += block[i] == 0xAB;
      wrong += block[i] != 0xAB;
    }
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(zero, end - begin);
  EXPECT_EQ(kept, block.size() - (end - begin));
  // The memory stays usable: written again, it holds what was written.
  std::fill(block.begin(), block.end(), 0x5C);
  EXPECT_EQ(std::count(block.begin(), block.end(), 0x5C), static_cast<std::ptrdiff_t>(block.size()));
}

TEST(DiscardPagesTest, BlocksBelowTheThresholdAreLeftAlone) {
  std::vector<unsigned char> block(base::kStepDiscardMinBytes - 1, 0xAB);
  base::DiscardPagesInSteps(block.data(), block.size());
  EXPECT_EQ(std::count(block.begin(), block.end(), 0xAB), static_cast<std::ptrdiff_t>(block.size()));
}

// Whether the system keeps hugetlb pages (base/memory.cc reads the same
// files): then Quiver leaves mimalloc's large pages off.
[[maybe_unused]] bool SystemKeepsHugetlbPages() {  // unused without mimalloc
  for (const char* path : {"/proc/sys/vm/nr_hugepages", "/proc/sys/vm/nr_overcommit_hugepages",
                           "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
                           "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_overcommit_hugepages"}) {
    std::ifstream in(path);
    unsigned long long n = 0;
    if (in >> n && n > 0) return true;
  }
  return false;
}

// A field of the mapping that holds `p` in /proc/self/smaps ("AnonHugePages",
// "VmFlags"): the text after its colon, or nullopt if no mapping holds p.
std::optional<std::string> SmapsFieldAt(const void* p, const std::string& field) {
  std::ifstream in("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    std::uintptr_t lo = 0, hi = 0;
    int end = 0;
    // A mapping's header: "lo-hi perms ..."; a field: "Name:   value".
    if (std::sscanf(line.c_str(), "%lx-%lx %n", &lo, &hi, &end) == 2 && end > 0) {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.compare(0, field.size() + 1, field + ":") == 0) return line.substr(field.size() + 1);
  }
  return std::nullopt;
}

TEST(HugePagesTest, SettingsFollowTheEnvironmentAndTheSystem) {
  using base::AllocatorInputs;
  // Nothing set, no hugetlb pool: Quiver turns large pages on; steps stay.
  base::AllocatorSettings s = base::ChooseAllocatorSettings(AllocatorInputs{});
  EXPECT_TRUE(s.enable_large_pages);
  EXPECT_TRUE(s.huge_pages);
  EXPECT_TRUE(s.step_discards);
  // The environment decides, either way.
  s = base::ChooseAllocatorSettings({.environment_sets_large_pages = true, .large_pages_enabled = false});
  EXPECT_FALSE(s.enable_large_pages);
  EXPECT_FALSE(s.huge_pages);
  EXPECT_TRUE(s.step_discards);
  s = base::ChooseAllocatorSettings({.environment_sets_large_pages = true, .large_pages_enabled = true});
  EXPECT_FALSE(s.enable_large_pages);
  EXPECT_TRUE(s.huge_pages);
  EXPECT_TRUE(s.step_discards);
  // A hugetlb pool: never turned on (MAP_HUGETLB would draw on it); turned
  // on by the environment, no steps (a step could split a hugetlb page).
  s = base::ChooseAllocatorSettings({.system_has_hugetlb_pages = true});
  EXPECT_FALSE(s.enable_large_pages);
  EXPECT_FALSE(s.huge_pages);
  EXPECT_TRUE(s.step_discards);
  s = base::ChooseAllocatorSettings(
      {.environment_sets_large_pages = true, .large_pages_enabled = true, .system_has_hugetlb_pages = true});
  EXPECT_TRUE(s.huge_pages);
  EXPECT_FALSE(s.step_discards);
  // mimalloc's reserved 1 GiB pages: neither.
  s = base::ChooseAllocatorSettings({.reserves_huge_pages = true});
  EXPECT_FALSE(s.enable_large_pages);
  EXPECT_FALSE(s.step_discards);
}

TEST(HugePagesTest, EngineMemoryIsAskedForOnHugePagesUnlessTheEnvironmentOrSystemSaysNot) {
#if QUIVER_USE_MIMALLOC
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) GTEST_SKIP() << "MIMALLOC_LARGE_OS_PAGES is set";
  EXPECT_EQ(base::EngineMemoryOnHugePages(), !SystemKeepsHugetlbPages());
#else
  EXPECT_FALSE(base::EngineMemoryOnHugePages()) << "this build allocates engine blocks with malloc";
#endif
}

// Where engine memory is asked for on huge pages, a large engine block's
// mapping is advised for them (VmFlags "hg"), and where the kernel serves
// transparent huge pages on advice it is backed by them: the point of the
// setting (a 4 KiB fault cost about 11 us on the reference VM, and a
// 100M-edge load took millions of them).
TEST(HugePagesTest, ALargeEngineBlockIsAdvisedForHugePages) {
  if (!base::EngineMemoryOnHugePages()) GTEST_SKIP() << "engine memory is not asked for on huge pages";
  base::MemoryAccount account;
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  void* block = account.Allocate(kBytes);
  const std::optional<std::string> before = SmapsFieldAt(block, "AnonHugePages");
  std::memset(block, 0x5a, kBytes);
  const std::optional<std::string> flags = SmapsFieldAt(block, "VmFlags");
  const std::optional<std::string> after = SmapsFieldAt(block, "AnonHugePages");
  account.Free(block);
  ASSERT_TRUE(flags.has_value()) << "no mapping in /proc/self/smaps holds the block";
  EXPECT_NE((" " + *flags + " ").find(" hg "), std::string::npos) << "VmFlags:" << *flags;
  // How much the kernel backed with huge pages depends on its mode and on
  // free 2 MiB pages at the time: reported, not asserted.
  std::cout << "[          ] AnonHugePages of the block's mapping before the write:" << before.value_or(" ?")
            << ", after:" << after.value_or(" ?") << "\n";
}

std::atomic<std::size_t> g_discarded_bytes{0};
void CountDiscard(void*, std::size_t bytes) { g_discarded_bytes += bytes; }

TEST(DiscardPagesTest, OnlyHugeAccountBlocksAndLargeScratchArraysAreDiscarded) {
  base::SetDiscardObserverForTesting(&CountDiscard);
  g_discarded_bytes = 0;
  base::MemoryAccount account;
  // A block mimalloc keeps in its segments, reused warm (as a batch's
  // edge-add buffers are, on the writer's thread): left alone.
  void* large = account.Allocate(base::kAccountDiscardMinBytes / 2);
  std::memset(large, 0x11, base::kAccountDiscardMinBytes / 2);
  account.Free(large);
  EXPECT_EQ(g_discarded_bytes.load(), 0u);
  // A huge one, which the allocator unmaps: discarded first (unless
  // mimalloc may hand out hugetlb pages, which a step could split).
  void* huge = account.Allocate(base::kAccountDiscardMinBytes + 4096);
  std::memset(huge, 0x11, base::kAccountDiscardMinBytes + 4096);
  account.Free(huge);
  if (base::StepDiscardsEngineBlocks()) {
    EXPECT_GE(g_discarded_bytes.load(), base::kAccountDiscardMinBytes + 4096);
  } else {
    EXPECT_EQ(g_discarded_bytes.load(), 0u);
  }
  EXPECT_EQ(account.allocated_bytes(), 0);

  // A scratch vector that regrows past the threshold: each old array is
  // discarded only after its values were moved.
  g_discarded_bytes = 0;
  {
    std::vector<std::uint64_t, base::SteppedReleaseAllocator<std::uint64_t>> v;
    const std::uint64_t n = 3 * base::kStepDiscardMinBytes / sizeof(std::uint64_t);
    for (std::uint64_t i = 0; i < n; ++i) v.push_back(i * 2654435761u);
    bool same = true;
    for (std::uint64_t i = 0; i < n; ++i) same = same && v[i] == i * 2654435761u;
    EXPECT_TRUE(same);
  }
  EXPECT_GE(g_discarded_bytes.load(), 3 * base::kStepDiscardMinBytes);
  base::SetDiscardObserverForTesting(nullptr);
}

// Counts blocks of at least the threshold that operator delete frees with
// pages still resident in the whole steps of the size they were asked for:
// blocks given back whole. The asked size, not the usable one: mimalloc
// gives 10 MiB for a 9.6 MB sort scratch, and DiscardPagesInSteps, given
// the asked size, rightly leaves the step that size ends in. (The unsized
// operator delete passes 0: then the usable size.)
std::atomic<int> g_resident_large_deletes{0};
void CountResidentLargeDelete(void* p, std::size_t asked) {
  if (p == nullptr) return;
  const std::size_t bytes = asked != 0 ? asked : malloc_usable_size(p);
  if (bytes < base::kStepDiscardMinBytes) return;
  const auto [begin, end] = WholeSteps(p, bytes);
  if (end <= begin) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((end - begin) / page);
  if (mincore(reinterpret_cast<void*>(begin), end - begin, resident.data()) != 0) return;
  if (std::any_of(resident.begin(), resident.end(), [](unsigned char r) { return (r & 1) != 0; }))
    ++g_resident_large_deletes;
}

TEST(DiscardPagesTest, IndexBuildScratchIsNeverFreedWhole) {
  {
    // The detector's control: a plain vector of the same size is seen.
    g_resident_large_deletes = 0;
    auto plain = std::make_unique<std::vector<std::uint64_t>>(
        2 * base::kStepDiscardMinBytes / sizeof(std::uint64_t), 1);
    test_util::g_operator_delete_observer.store(&CountResidentLargeDelete);
    plain.reset();
    test_util::g_operator_delete_observer.store(nullptr);
    EXPECT_EQ(g_resident_large_deletes.load(), 1);
  }
  for (const std::int32_t width : {8, -1}) {
    SCOPED_TRACE(width == 8 ? "fixed-width keys" : "variable-width keys");
    index::EntryList list(width);
    // Enough entries that each array (and a variable-width sort's merge
    // array) passes the threshold.
    const std::uint64_t n = 600'000;
    std::string key(width == 8 ? 8 : 12, 'k');
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t k = i * 0x9E3779B97F4A7C15ull;
      if (width == 8) {
        list.AddFixed(k, i);
      } else {
        std::memcpy(key.data(), &k, 8);
        list.Add(key, i);
      }
    }
    g_resident_large_deletes = 0;
    test_util::g_operator_delete_observer.store(&CountResidentLargeDelete);
    list.Sort(2);
    std::uint64_t seen = 0;
    bool ordered = true;
    std::string last;
    list.ForEach([&](std::string_view k, std::uint64_t) {
      ordered = ordered && (seen == 0 || last <= k);
      last.assign(k);
      ++seen;
    });
    list = index::EntryList(width);  // frees the arrays
    test_util::g_operator_delete_observer.store(nullptr);
    EXPECT_EQ(seen, n);
    EXPECT_TRUE(ordered);
    EXPECT_EQ(g_resident_large_deletes.load(), 0);
  }
}

// --- A backlog freed a slice at a time (storage::ScopedPacedFrees)

TEST(PacedFreesTest, SlicesRunAcrossListsEveryBlockIsFreedAndTheScopeRestores) {
  base::MemoryAccount account;
  std::vector<storage::RetireList> lists(3);
  const std::size_t sizes[3] = {300, 5, 600};
  for (std::size_t l = 0; l < 3; ++l)
    for (std::size_t i = 0; i < sizes[l]; ++i) lists[l].Add(account.Allocate(64));
  ASSERT_GT(account.allocated_bytes(), 0);
  storage::FreePacer& pacer = storage::this_thread_free_pacer;
  EXPECT_FALSE(pacer.on);
  {
    storage::ScopedPacedFrees paced;
    EXPECT_TRUE(pacer.on);
    {
      storage::ScopedPacedFrees nested;
      EXPECT_TRUE(pacer.on);
    }
    EXPECT_TRUE(pacer.on);  // the outer scope still paces
    for (storage::RetireList& list : lists) list.FreeAll(&account);
    // 905 frees: three whole slices rested after, 137 into the fourth, the
    // count carried from list to list (most lists of a backlog are short).
    EXPECT_EQ(pacer.in_slice, (300 + 5 + 600) % storage::kPacedFreeEntries);
  }
  EXPECT_FALSE(pacer.on);
  // A later scope on the same thread (background_nice = 0 runs a release on
  // the caller's thread) starts a fresh slice: it never rests for a slice
  // an earlier build left part-way.
  EXPECT_NE(pacer.in_slice, 0u);
  {
    storage::ScopedPacedFrees again;
    EXPECT_EQ(pacer.in_slice, 0u);
    EXPECT_EQ(pacer.busy.count(), 0);
  }
  EXPECT_EQ(account.allocated_bytes(), 0);
  for (const storage::RetireList& list : lists) EXPECT_TRUE(list.empty());

  // Without the scope nothing is counted.
  storage::RetireList plain;
  plain.Add(account.Allocate(64));
  const std::size_t before = pacer.in_slice;
  plain.FreeAll(&account);
  EXPECT_EQ(pacer.in_slice, before);
  EXPECT_EQ(account.allocated_bytes(), 0);
}

}  // namespace
}  // namespace quiver
