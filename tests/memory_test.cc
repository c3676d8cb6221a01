// Reclamation (Graph::GetMemoryStats): memory retired by newer versions is
// held exactly as long as some snapshot can reach it, and is then freed, so
// churn that leaves the logical graph unchanged leaves memory unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quiver/graph.h"
#include "test_util.h"

namespace quiver {
namespace {

using test_util::SettledMemoryStats;

std::unique_ptr<Graph> NewGraph() {
  Result<std::unique_ptr<Graph>> g = Graph::OpenInMemory();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : nullptr;
}

void MustWrite(Graph& g, WriteBatch b) {
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
  MustWrite(g, std::move(b));
}

std::string Describe(const MemoryStats& m) {
  return "allocated=" + std::to_string(m.allocated_bytes) + " retired=" + std::to_string(m.retired_bytes) +
         " live_versions=" + std::to_string(m.live_versions);
}

TEST(MemoryTest, ChurnIsReclaimedOnceSnapshotsAreReleased) {
  auto graph = NewGraph();
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
  std::optional<EdgeId> pending_edge;
  std::uint64_t consumed_edge_ids = 0;
  int odd = 0;
  for (int i = 0; i < kCommits; ++i) {
    WriteBatch b;
    if (i % 2 == 0) {
      int v = (i / 2) % kTouched;
      b.SetProperty(VertexId(v), "name", Name(v, i + 1));
      b.SetProperty(VertexId(v), "n", i);
    } else if (!pending_edge) {
      int from = odd % kTouched;
      int to = (odd * 5 + 3) % kTouched;
      ++odd;
      b.AddEdge(odd % 2 ? "A" : "B", VertexId(from), VertexId(to), {{"w", 2.0}});
    } else {
      b.RemoveEdge(*pending_edge);
    }
    Result<CommitInfo> r = graph->Write(std::move(b));
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    if (i % 2 == 1) {
      if (pending_edge) {
        pending_edge.reset();
      } else {
        ASSERT_EQ(r->edges.size(), 1u);
        pending_edge = r->edges[0];
        ++consumed_edge_ids;
      }
    }
    if (i % kSnapshotEvery == kSnapshotEvery / 2) held.push_back(graph->GetSnapshot());
  }
  ASSERT_FALSE(pending_edge.has_value());
  // Restore the original values so the logical graph is exactly as before.
  for (int v = 0; v < kTouched; ++v) {
    WriteBatch b;
    b.SetProperty(VertexId(v), "name", Name(v, 0));
    b.SetProperty(VertexId(v), "n", v);
    MustWrite(*graph, std::move(b));
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
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  const MemoryStats baseline = SettledMemoryStats(*graph);
  for (int i = 0; i < 2000; ++i) {
    WriteBatch b;
    b.SetProperty(VertexId(i % kTouched), "name", Name(i % kTouched, i + 1));
    MustWrite(*graph, std::move(b));
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
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  std::vector<Snapshot> held;
  for (int i = 0; i < 5; ++i) {
    held.push_back(graph->GetSnapshot());
    WriteBatch b;
    b.SetProperty(VertexId(i), "n", -i);
    MustWrite(*graph, std::move(b));
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
  auto graph = NewGraph();
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
  MustWrite(*graph, std::move(rm));
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
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  BuildGraph(*graph);
  WriteBatch set;
  set.SetProperty(VertexId(5), "blob", std::string(kBig, 'x'));
  MustWrite(*graph, std::move(set));
  const MemoryStats m1 = SettledMemoryStats(*graph);
  Snapshot pin = graph->GetSnapshot();
  WriteBatch shrink;
  shrink.SetProperty(VertexId(5), "blob", "small");
  MustWrite(*graph, std::move(shrink));
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
    auto graph = NewGraph();
    ASSERT_NE(graph, nullptr);
    BuildGraph(*graph);
    s = graph->GetSnapshot();
    WriteBatch b;
    b.RemoveVertex(VertexId(0));
    MustWrite(*graph, std::move(b));
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
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    NewVertex hub = b.AddVertex("Hub");
    for (int i = 0; i < kDegree; ++i) b.AddEdge("E", hub, b.AddVertex("Leaf"));
    MustWrite(*graph, std::move(b));
  }
  ASSERT_EQ(SettledMemoryStats(*graph).retired_bytes, 0u);
  Snapshot held = graph->GetSnapshot();
  // Every tenth neighbour (ids 1..kDegree are the leaves), spread over the
  // whole array so each removal lands in the middle of it.
  WriteBatch b;
  for (int i = 0; i < kRemoved; ++i) b.RemoveVertex(VertexId(1 + std::uint64_t{10} * i));
  MustWrite(*graph, std::move(b));
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
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  std::vector<Property> props;
  for (int k = 0; k < kKeys; ++k) props.push_back({"k" + std::to_string(k), Name(k, 0)});
  {
    WriteBatch b;
    NewVertex a = b.AddVertex("V", props);
    NewVertex c = b.AddVertex("V");
    b.AddEdge("E", a, c, props);
    MustWrite(*graph, std::move(b));
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
  MustWrite(*graph, std::move(b));
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

}  // namespace
}  // namespace quiver
