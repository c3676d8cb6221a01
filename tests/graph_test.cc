// Engine behaviour through the public API (include/quiver/graph.h,
// snapshot.h): ids, sequence numbers, adjacency, properties, iteration,
// removal cascades, snapshot isolation and lifetime, WriteAsync and Close.
#include "quiver/graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_util.h"

namespace quiver {
namespace {

using test_util::Dump;
using test_util::Render;
using test_util::SameValue;

using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

std::unique_ptr<Graph> NewGraph(const Options& options = {}) {
  Result<std::unique_ptr<Graph>> g = Graph::OpenInMemory(options);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : nullptr;
}

// Writes `b`, expecting success; returns an empty CommitInfo on failure.
CommitInfo Commit(Graph& g, WriteBatch b) {
  Result<CommitInfo> r = g.Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : CommitInfo{};
}

// (edge id, neighbour id) pairs of an adjacency list, in stored order.
Pairs Entries(std::span<const EdgeEntry> entries) {
  Pairs out;
  for (const EdgeEntry& e : entries) out.emplace_back(e.edge().value(), e.neighbor().value());
  return out;
}

std::vector<std::uint64_t> Ids(VertexRange r) {
  std::vector<std::uint64_t> out;
  for (VertexId v : r) out.push_back(v.value());
  return out;
}

std::vector<std::uint64_t> Ids(EdgeRange r) {
  std::vector<std::uint64_t> out;
  for (EdgeId e : r) out.push_back(e.value());
  return out;
}

// Type name -> entries, for a whole Adjacency (group order not asserted).
std::map<std::string, Pairs> Groups(const Snapshot& s, const Adjacency& adj) {
  std::map<std::string, Pairs> out;
  for (EdgeGroup g : adj) {
    std::string name(s.EdgeTypeName(g.type));
    EXPECT_EQ(out.count(name), 0u) << "two groups for type " << name;
    out[name] = Entries(g.entries);
  }
  return out;
}

TEST(GraphTest, EmptyGraph) {
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  Snapshot s = graph->GetSnapshot();
  ASSERT_TRUE(s.valid());
  EXPECT_EQ(s.sequence(), 0u);
  EXPECT_EQ(s.vertex_count(), 0u);
  EXPECT_EQ(s.edge_count(), 0u);
  EXPECT_EQ(s.vertex_id_limit(), 0u);
  EXPECT_EQ(s.edge_id_limit(), 0u);
  EXPECT_TRUE(Ids(s.Vertices()).empty());
  EXPECT_TRUE(Ids(s.Edges()).empty());
  EXPECT_TRUE(Ids(s.Vertices(0, 100)).empty());
  EXPECT_FALSE(s.HasVertex(VertexId(0)));
  EXPECT_FALSE(s.LabelOf(VertexId(0)).has_value());
  EXPECT_FALSE(s.HasEdge(EdgeId(0)));
  EXPECT_FALSE(s.GetEdge(EdgeId(0)).has_value());
  EXPECT_EQ(s.OutDegree(VertexId(0)), 0u);
  EXPECT_EQ(s.InDegree(VertexId(0)), 0u);
  EXPECT_EQ(s.OutEdges(VertexId(0)).degree(), 0u);
  EXPECT_EQ(s.OutEdges(VertexId(0)).group_count(), 0u);
  EXPECT_TRUE(s.Properties(VertexId(0)).empty());
  EXPECT_TRUE(s.Properties(EdgeId(0)).empty());
  EXPECT_FALSE(s.GetProperty(VertexId(0), "k").has_value());
  EXPECT_FALSE(s.FindLabel("Person").has_value());
  EXPECT_FALSE(s.FindEdgeType("KNOWS").has_value());
  EXPECT_FALSE(s.FindPropertyKey("name").has_value());
  MemoryStats m = graph->GetMemoryStats();
  EXPECT_EQ(m.live_versions, 1u);
  EXPECT_EQ(m.retired_bytes, 0u);
}

TEST(GraphTest, OpenInMemoryForcesVolatile) {
  Options options;
  options.durability = Durability::kDurable;
  auto graph = NewGraph(options);
  ASSERT_NE(graph, nullptr);
  WriteBatch b;
  b.AddVertex("A");
  EXPECT_EQ(Commit(*graph, std::move(b)).sequence, 1u);
}

TEST(GraphTest, IdsAreDenseInCommitOrder) {
  auto graph = NewGraph();
  WriteBatch b1;
  NewVertex a = b1.AddVertex("A");
  NewVertex b = b1.AddVertex("B");
  NewVertex c = b1.AddVertex("C");
  b1.AddEdge("T", a, b);
  b1.AddEdge("T", b, c);
  CommitInfo i1 = Commit(*graph, std::move(b1));
  EXPECT_EQ(i1.sequence, 1u);
  EXPECT_EQ(i1.vertices, (std::vector<VertexId>{VertexId(0), VertexId(1), VertexId(2)}));
  EXPECT_EQ(i1.edges, (std::vector<EdgeId>{EdgeId(0), EdgeId(1)}));

  // Edges recorded before vertices still get edge ids in AddEdge order and
  // vertex ids in AddVertex order, each in its own space.
  WriteBatch b2;
  NewVertex d = b2.AddVertex("D");
  b2.AddEdge("T", d, VertexId(0));
  NewVertex e = b2.AddVertex("E");
  b2.AddEdge("U", e, d);
  b2.AddEdge("U", VertexId(2), e);
  CommitInfo i2 = Commit(*graph, std::move(b2));
  EXPECT_EQ(i2.sequence, 2u);
  EXPECT_EQ(i2.vertices, (std::vector<VertexId>{VertexId(3), VertexId(4)}));
  EXPECT_EQ(i2.edges, (std::vector<EdgeId>{EdgeId(2), EdgeId(3), EdgeId(4)}));

  Snapshot s = graph->GetSnapshot();
  ASSERT_TRUE(s.GetEdge(EdgeId(2)).has_value());
  EXPECT_EQ(s.GetEdge(EdgeId(2))->source, VertexId(3));
  EXPECT_EQ(s.GetEdge(EdgeId(2))->target, VertexId(0));
  EXPECT_EQ(s.GetEdge(EdgeId(3))->source, VertexId(4));
  EXPECT_EQ(s.GetEdge(EdgeId(3))->target, VertexId(3));
  EXPECT_EQ(s.GetEdge(EdgeId(4))->source, VertexId(2));
  EXPECT_EQ(s.GetEdge(EdgeId(4))->target, VertexId(4));
  EXPECT_EQ(s.LabelName(*s.LabelOf(VertexId(3))), "D");
  EXPECT_EQ(s.LabelName(*s.LabelOf(VertexId(4))), "E");
  EXPECT_EQ(s.vertex_id_limit(), 5u);
  EXPECT_EQ(s.edge_id_limit(), 5u);
}

TEST(GraphTest, IdsAreNeverReused) {
  auto graph = NewGraph();
  WriteBatch b1;
  NewVertex a = b1.AddVertex("A");
  NewVertex z = b1.AddVertex("A");
  b1.AddEdge("T", a, z);
  Commit(*graph, std::move(b1));
  WriteBatch b2;
  b2.RemoveVertex(VertexId(1));  // also removes edge 0
  Commit(*graph, std::move(b2));
  WriteBatch b3;
  NewVertex c = b3.AddVertex("A");
  b3.AddEdge("T", VertexId(0), c);
  CommitInfo i3 = Commit(*graph, std::move(b3));
  EXPECT_EQ(i3.vertices, std::vector<VertexId>{VertexId(2)});
  EXPECT_EQ(i3.edges, std::vector<EdgeId>{EdgeId(1)});
  Snapshot s = graph->GetSnapshot();
  EXPECT_FALSE(s.HasVertex(VertexId(1)));
  EXPECT_FALSE(s.HasEdge(EdgeId(0)));
  EXPECT_EQ(s.vertex_count(), 2u);
  EXPECT_EQ(s.vertex_id_limit(), 3u);
  EXPECT_EQ(s.edge_id_limit(), 2u);
}

TEST(GraphTest, FailedBatchConsumesNoIdsAndNoSequence) {
  auto graph = NewGraph();
  WriteBatch b1;
  b1.AddVertex("A");
  EXPECT_EQ(Commit(*graph, std::move(b1)).sequence, 1u);

  WriteBatch bad;
  NewVertex x = bad.AddVertex("A");
  bad.AddVertex("A");
  bad.AddEdge("T", x, VertexId(0));
  bad.RemoveVertex(VertexId(99));
  Result<CommitInfo> r = graph->Write(std::move(bad));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(r.status().message().empty());
  EXPECT_EQ(graph->GetSnapshot().sequence(), 1u);

  WriteBatch b2;
  NewVertex y = b2.AddVertex("B");
  b2.AddEdge("T", y, VertexId(0));
  CommitInfo i2 = Commit(*graph, std::move(b2));
  EXPECT_EQ(i2.sequence, 2u);
  EXPECT_EQ(i2.vertices, std::vector<VertexId>{VertexId(1)});
  EXPECT_EQ(i2.edges, std::vector<EdgeId>{EdgeId(0)});
}

TEST(GraphTest, SequenceNumbersAreConsecutive) {
  auto graph = NewGraph();
  for (SequenceNumber i = 1; i <= 50; ++i) {
    WriteBatch b;
    b.AddVertex("V", {{"i", static_cast<std::int64_t>(i)}});
    CommitInfo info = Commit(*graph, std::move(b));
    EXPECT_EQ(info.sequence, i);
    EXPECT_EQ(graph->GetSnapshot().sequence(), i);
  }
  EXPECT_EQ(graph->GetSnapshot().vertex_count(), 50u);
}

// An empty batch commits nothing: it takes no sequence number and publishes
// no version; its CommitInfo names the newest batch committed before it.
TEST(GraphTest, EmptyBatchConsumesNoSequenceNumber) {
  auto graph = NewGraph();
  CommitInfo i0 = Commit(*graph, WriteBatch());
  EXPECT_EQ(i0.sequence, 0u);
  EXPECT_TRUE(i0.vertices.empty());
  EXPECT_TRUE(i0.edges.empty());
  EXPECT_EQ(graph->GetSnapshot().sequence(), 0u);
  EXPECT_EQ(graph->GetDurabilityStats().commit_groups, 0u);
  WriteBatch b;
  b.AddVertex("A");
  EXPECT_EQ(Commit(*graph, std::move(b)).sequence, 1u);
  EXPECT_EQ(Commit(*graph, WriteBatch()).sequence, 1u);
  EXPECT_EQ(graph->GetDurabilityStats().commit_groups, 1u);
  // Queued between two real batches, possibly in one group with them.
  WriteBatch c, d;
  c.AddVertex("C");
  d.AddVertex("D");
  auto fc = graph->WriteAsync(std::move(c));
  auto fe = graph->WriteAsync(WriteBatch());
  auto fd = graph->WriteAsync(std::move(d));
  EXPECT_EQ(fc.get().value().sequence, 2u);
  EXPECT_EQ(fe.get().value().sequence, 2u);
  EXPECT_EQ(fd.get().value().sequence, 3u);
  EXPECT_EQ(graph->GetSnapshot().sequence(), 3u);
  EXPECT_EQ(graph->GetSnapshot().vertex_count(), 3u);
}

// Engine II 1.5, the README's idiom tried as a new user would: value() on
// the failed Open of a path that cannot be a directory. A release build
// used to return a garbage pointer here and crash at the next call; now
// every build type stops with the status, and value_or gives the fallback.
TEST(GraphDeathTest, ValueOfAFailedOpenAbortsWithTheStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<std::unique_ptr<Graph>> r = Graph::Open(Options{}, "/proc/self/x");
  ASSERT_FALSE(r.ok());
  const std::string message = r.status().ToString();
  EXPECT_DEATH((void)Graph::Open(Options{}, "/proc/self/x").value(),
               "Result::value\\(\\) called on an error: .*" + std::string(StatusCodeName(r.status().code())));
  EXPECT_DEATH((void)(*r)->GetSnapshot(), "called on an error");
  EXPECT_EQ(std::move(r).value_or(nullptr), nullptr) << message;
}

TEST(GraphTest, AdjacencyPerTypeInInsertionOrder) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");  // 0
  NewVertex x = b.AddVertex("P");  // 1
  NewVertex y = b.AddVertex("P");  // 2
  b.AddEdge("KNOWS", a, y);        // e0
  b.AddEdge("LIKES", a, x);        // e1
  b.AddEdge("KNOWS", a, x);        // e2
  b.AddEdge("KNOWS", y, a);        // e3
  b.AddEdge("LIKES", x, a);        // e4
  Commit(*graph, std::move(b));
  WriteBatch b2;
  b2.AddEdge("KNOWS", VertexId(0), VertexId(2));  // e5 (parallel to e0)
  Commit(*graph, std::move(b2));

  Snapshot s = graph->GetSnapshot();
  auto knows = s.FindEdgeType("KNOWS");
  auto likes = s.FindEdgeType("LIKES");
  ASSERT_TRUE(knows && likes);
  EXPECT_NE(*knows, *likes);
  VertexId v0(0), v1(1), v2(2);
  EXPECT_EQ(Entries(s.OutEdges(v0, *knows)), (Pairs{{0, 2}, {2, 1}, {5, 2}}));
  EXPECT_EQ(Entries(s.OutEdges(v0, *likes)), (Pairs{{1, 1}}));
  EXPECT_EQ(Entries(s.InEdges(v0, *knows)), (Pairs{{3, 2}}));
  EXPECT_EQ(Entries(s.InEdges(v0, *likes)), (Pairs{{4, 1}}));
  EXPECT_EQ(Entries(s.InEdges(v2, *knows)), (Pairs{{0, 0}, {5, 0}}));
  EXPECT_EQ(Entries(s.InEdges(v1, *knows)), (Pairs{{2, 0}}));
  EXPECT_EQ(Entries(s.OutEdges(v1, *likes)), (Pairs{{4, 0}}));
  EXPECT_TRUE(s.OutEdges(v1, *knows).empty());
  EXPECT_EQ(Entries(s.Edges(v0, Direction::kOut, *knows)), Entries(s.OutEdges(v0, *knows)));
  EXPECT_EQ(Entries(s.Edges(v0, Direction::kIn, *likes)), Entries(s.InEdges(v0, *likes)));

  EXPECT_EQ(s.OutDegree(v0), 4u);
  EXPECT_EQ(s.InDegree(v0), 2u);
  EXPECT_EQ(s.OutDegree(v1), 1u);
  EXPECT_EQ(s.InDegree(v1), 2u);
  EXPECT_EQ(s.OutDegree(v2), 1u);
  EXPECT_EQ(s.InDegree(v2), 2u);

  // Across types: one group per type, membership and degree.
  Adjacency out0 = s.OutEdges(v0);
  EXPECT_EQ(out0.degree(), 4u);
  EXPECT_EQ(out0.group_count(), 2u);
  std::map<std::string, Pairs> groups = Groups(s, out0);
  EXPECT_EQ(groups, (std::map<std::string, Pairs>{{"KNOWS", {{0, 2}, {2, 1}, {5, 2}}}, {"LIKES", {{1, 1}}}}));
  std::size_t sum = 0;
  for (std::size_t i = 0; i < out0.group_count(); ++i) sum += out0.group(i).entries.size();
  EXPECT_EQ(sum, out0.degree());
  Adjacency in0 = s.InEdges(v0);
  EXPECT_EQ(in0.degree(), 2u);
  EXPECT_EQ(Groups(s, in0), (std::map<std::string, Pairs>{{"KNOWS", {{3, 2}}}, {"LIKES", {{4, 1}}}}));
  EXPECT_EQ(Groups(s, s.Edges(v0, Direction::kIn)), Groups(s, in0));
  Adjacency out1 = s.OutEdges(v1);
  EXPECT_EQ(out1.group_count(), 1u);
  EXPECT_EQ(Groups(s, out1), (std::map<std::string, Pairs>{{"LIKES", {{4, 0}}}}));
}

TEST(GraphTest, UnknownTypeOrVertexGivesEmptyAdjacency) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");
  b.AddEdge("T", a, a);
  b.AddVertex("P");
  Commit(*graph, std::move(b));
  WriteBatch b2;
  b2.AddEdge("OTHER", VertexId(1), VertexId(1));
  Commit(*graph, std::move(b2));
  Snapshot s = graph->GetSnapshot();
  EdgeTypeId t = *s.FindEdgeType("T");
  EdgeTypeId other = *s.FindEdgeType("OTHER");
  EXPECT_TRUE(s.OutEdges(VertexId(0), other).empty());
  EXPECT_TRUE(s.InEdges(VertexId(1), t).empty());
  EXPECT_TRUE(s.OutEdges(VertexId(77), t).empty());
  EXPECT_EQ(s.OutEdges(VertexId(77)).degree(), 0u);
  EXPECT_EQ(s.InEdges(VertexId(77)).group_count(), 0u);
  EXPECT_EQ(s.OutDegree(VertexId(77)), 0u);
  EXPECT_TRUE(s.OutEdges(VertexId(kMaxElementId), t).empty());
}

TEST(GraphTest, SelfLoopsAndParallelEdges) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");
  NewVertex z = b.AddVertex("P");
  b.AddEdge("T", a, a);  // e0 self-loop
  b.AddEdge("T", a, z);  // e1
  b.AddEdge("T", a, z);  // e2 parallel
  b.AddEdge("T", a, a);  // e3 second self-loop
  Commit(*graph, std::move(b));
  Snapshot s = graph->GetSnapshot();
  EdgeTypeId t = *s.FindEdgeType("T");
  EXPECT_EQ(Entries(s.OutEdges(VertexId(0), t)), (Pairs{{0, 0}, {1, 1}, {2, 1}, {3, 0}}));
  EXPECT_EQ(Entries(s.InEdges(VertexId(0), t)), (Pairs{{0, 0}, {3, 0}}));
  EXPECT_EQ(Entries(s.InEdges(VertexId(1), t)), (Pairs{{1, 0}, {2, 0}}));
  EXPECT_EQ(s.OutDegree(VertexId(0)), 4u);
  EXPECT_EQ(s.InDegree(VertexId(0)), 2u);
  EXPECT_EQ(s.edge_count(), 4u);
  EXPECT_EQ(s.GetEdge(EdgeId(0))->source, VertexId(0));
  EXPECT_EQ(s.GetEdge(EdgeId(0))->target, VertexId(0));
}

TEST(GraphTest, EdgeRemovalPreservesOrderOfTheRest) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");
  NewVertex z = b.AddVertex("P");
  for (int i = 0; i < 6; ++i) b.AddEdge("T", a, z);  // e0..e5
  b.AddEdge("U", a, z);                              // e6
  Commit(*graph, std::move(b));
  WriteBatch r;
  r.RemoveEdge(EdgeId(1));
  r.RemoveEdge(EdgeId(4));
  Commit(*graph, std::move(r));
  WriteBatch r2;
  r2.RemoveEdge(EdgeId(0));
  r2.AddEdge("T", VertexId(0), VertexId(1));  // e7 appended at the end
  Commit(*graph, std::move(r2));
  Snapshot s = graph->GetSnapshot();
  EdgeTypeId t = *s.FindEdgeType("T");
  EdgeTypeId u = *s.FindEdgeType("U");
  EXPECT_EQ(Entries(s.OutEdges(VertexId(0), t)), (Pairs{{2, 1}, {3, 1}, {5, 1}, {7, 1}}));
  EXPECT_EQ(Entries(s.InEdges(VertexId(1), t)), (Pairs{{2, 0}, {3, 0}, {5, 0}, {7, 0}}));
  EXPECT_EQ(Entries(s.OutEdges(VertexId(0), u)), (Pairs{{6, 1}}));
  EXPECT_EQ(s.edge_count(), 5u);
  EXPECT_EQ(s.edge_id_limit(), 8u);
  EXPECT_EQ(Ids(s.Edges()), (std::vector<std::uint64_t>{2, 3, 5, 6, 7}));
}

TEST(GraphTest, RemovingAllEdgesOfATypeEmptiesTheGroup) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");
  b.AddEdge("T", a, a);
  b.AddEdge("U", a, a);
  Commit(*graph, std::move(b));
  WriteBatch r;
  r.RemoveEdge(EdgeId(0));
  Commit(*graph, std::move(r));
  Snapshot s = graph->GetSnapshot();
  EXPECT_TRUE(s.OutEdges(VertexId(0), *s.FindEdgeType("T")).empty());
  EXPECT_EQ(s.OutDegree(VertexId(0)), 1u);
  std::map<std::string, Pairs> groups = Groups(s, s.OutEdges(VertexId(0)));
  // An empty group may or may not be listed; the U group must be.
  EXPECT_EQ(groups["U"], (Pairs{{1, 0}}));
  EXPECT_TRUE(groups["T"].empty());
}

TEST(GraphTest, RemoveVertexCascadesToIncidentEdges) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex hub = b.AddVertex("Hub", {{"name", "h"}});
  NewVertex x = b.AddVertex("P");
  NewVertex y = b.AddVertex("P");
  b.AddEdge("OUT", hub, x);              // e0
  b.AddEdge("IN", y, hub);               // e1
  b.AddEdge("SELF", hub, hub);           // e2
  b.AddEdge("OTHER", x, y);              // e3 not incident
  b.AddEdge("OUT", hub, y, {{"w", 1}});  // e4
  b.AddEdge("OUT", x, y);                // e5 not incident
  Commit(*graph, std::move(b));
  Snapshot before = graph->GetSnapshot();

  WriteBatch r;
  r.RemoveVertex(VertexId(0));
  Commit(*graph, std::move(r));
  Snapshot s = graph->GetSnapshot();
  EXPECT_FALSE(s.HasVertex(VertexId(0)));
  EXPECT_FALSE(s.LabelOf(VertexId(0)).has_value());
  EXPECT_TRUE(s.Properties(VertexId(0)).empty());
  EXPECT_FALSE(s.GetProperty(VertexId(0), "name").has_value());
  EXPECT_EQ(s.OutDegree(VertexId(0)), 0u);
  EXPECT_EQ(s.InDegree(VertexId(0)), 0u);
  for (int e : {0, 1, 2, 4}) {
    EXPECT_FALSE(s.HasEdge(EdgeId(e))) << e;
    EXPECT_FALSE(s.GetEdge(EdgeId(e)).has_value()) << e;
    EXPECT_TRUE(s.Properties(EdgeId(e)).empty()) << e;
  }
  EXPECT_FALSE(s.GetProperty(EdgeId(4), "w").has_value());
  EXPECT_TRUE(s.HasEdge(EdgeId(3)));
  EXPECT_TRUE(s.HasEdge(EdgeId(5)));
  EXPECT_EQ(s.vertex_count(), 2u);
  EXPECT_EQ(s.edge_count(), 2u);
  EXPECT_EQ(Ids(s.Edges()), (std::vector<std::uint64_t>{3, 5}));
  // Neighbours lost the entries in both directions.
  EXPECT_TRUE(s.InEdges(VertexId(1), *s.FindEdgeType("OUT")).empty());
  EXPECT_TRUE(s.OutEdges(VertexId(2), *s.FindEdgeType("IN")).empty());
  EXPECT_EQ(Entries(s.InEdges(VertexId(2), *s.FindEdgeType("OUT"))), (Pairs{{5, 1}}));
  EXPECT_EQ(s.OutDegree(VertexId(1)), 2u);
  EXPECT_EQ(s.InDegree(VertexId(2)), 2u);
  EXPECT_EQ(s.OutDegree(VertexId(2)), 0u);
  EXPECT_EQ(s.InDegree(VertexId(1)), 0u);
  EXPECT_EQ(s.vertex_id_limit(), 3u);
  EXPECT_EQ(s.edge_id_limit(), 6u);

  // The older snapshot still has everything.
  EXPECT_TRUE(before.HasVertex(VertexId(0)));
  EXPECT_EQ(before.edge_count(), 6u);
  EXPECT_EQ(before.OutDegree(VertexId(0)), 3u);
  EXPECT_EQ(before.GetProperty(EdgeId(4), "w")->as_int64(), 1);
}

TEST(GraphTest, RemoveVertexAndItsEdgesInTheSameBatch) {
  // Removing an edge, then its endpoint, in one batch is fine; so is adding
  // edges to a vertex and removing it in the same batch.
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");
  NewVertex z = b.AddVertex("P");
  b.AddEdge("T", a, z);
  Commit(*graph, std::move(b));
  WriteBatch r;
  r.RemoveEdge(EdgeId(0));
  r.RemoveVertex(VertexId(1));
  NewVertex c = r.AddVertex("P");
  r.AddEdge("T", c, VertexId(0));  // e1
  r.AddEdge("T", VertexId(0), c);  // e2
  r.RemoveVertex(c);
  CommitInfo info = Commit(*graph, std::move(r));
  EXPECT_EQ(info.vertices, std::vector<VertexId>{VertexId(2)});
  EXPECT_EQ(info.edges, (std::vector<EdgeId>{EdgeId(1), EdgeId(2)}));
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.vertex_count(), 1u);
  EXPECT_EQ(s.edge_count(), 0u);
  EXPECT_FALSE(s.HasVertex(VertexId(2)));
  EXPECT_FALSE(s.HasEdge(EdgeId(1)));
  EXPECT_EQ(s.OutDegree(VertexId(0)), 0u);
  EXPECT_EQ(s.InDegree(VertexId(0)), 0u);
  EXPECT_EQ(s.vertex_id_limit(), 3u);
  EXPECT_EQ(s.edge_id_limit(), 3u);
}

TEST(GraphTest, NewEdgeHandlesWithinABatch) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");
  NewEdge e0 = b.AddEdge("T", a, a);
  NewEdge e1 = b.AddEdge("T", a, a, {{"w", 1}});
  b.SetProperty(e0, "w", 5);
  b.SetProperty(e1, "w", 6);
  b.RemoveProperty(e1, "w");
  NewEdge e2 = b.AddEdge("T", a, a);
  b.RemoveEdge(e2);
  CommitInfo info = Commit(*graph, std::move(b));
  EXPECT_EQ(info.edges, (std::vector<EdgeId>{EdgeId(0), EdgeId(1), EdgeId(2)}));
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.GetProperty(EdgeId(0), "w")->as_int64(), 5);
  EXPECT_FALSE(s.GetProperty(EdgeId(1), "w").has_value());
  EXPECT_FALSE(s.HasEdge(EdgeId(2)));
  EXPECT_EQ(s.edge_count(), 2u);
  EXPECT_EQ(Entries(s.OutEdges(VertexId(0), *s.FindEdgeType("T"))), (Pairs{{0, 0}, {1, 0}}));
}

TEST(GraphTest, VertexProperties) {
  auto graph = NewGraph();
  WriteBatch b;
  b.AddVertex("P", {{"name", "Ada"}, {"born", 1815}, {"nil", nullptr}});
  Commit(*graph, std::move(b));
  Snapshot s1 = graph->GetSnapshot();
  VertexId v(0);
  ASSERT_TRUE(s1.GetProperty(v, "name").has_value());
  EXPECT_EQ(s1.GetProperty(v, "name")->as_string(), "Ada");
  EXPECT_EQ(s1.GetProperty(v, "born")->as_int64(), 1815);
  // A null value is stored: present, of type kNull; distinct from absent.
  ASSERT_TRUE(s1.GetProperty(v, "nil").has_value());
  EXPECT_EQ(s1.GetProperty(v, "nil")->type(), ValueType::kNull);
  EXPECT_FALSE(s1.GetProperty(v, "missing").has_value());
  EXPECT_EQ(s1.Properties(v).size(), 3u);
  PropertyKeyId name_key = *s1.FindPropertyKey("name");
  EXPECT_EQ(s1.GetProperty(v, name_key)->as_string(), "Ada");
  EXPECT_EQ(s1.PropertyKeyName(name_key), "name");

  WriteBatch b2;
  b2.SetProperty(v, "born", 1816);        // replace, same type
  b2.SetProperty(v, "name", 3.5);         // replace, different type
  b2.SetProperty(v, "extra", true);       // add
  b2.RemoveProperty(v, "nil");            // remove
  b2.RemoveProperty(v, "never-existed");  // absent: fine
  Commit(*graph, std::move(b2));
  Snapshot s2 = graph->GetSnapshot();
  EXPECT_EQ(s2.GetProperty(v, "born")->as_int64(), 1816);
  EXPECT_EQ(s2.GetProperty(v, "name")->type(), ValueType::kDouble);
  EXPECT_EQ(s2.GetProperty(v, "name")->as_double(), 3.5);
  EXPECT_EQ(s2.GetProperty(v, "extra")->as_bool(), true);
  EXPECT_FALSE(s2.GetProperty(v, "nil").has_value());
  EXPECT_EQ(s2.Properties(v).size(), 3u);
  // The older snapshot is unchanged.
  EXPECT_EQ(s1.GetProperty(v, "born")->as_int64(), 1815);
  EXPECT_EQ(s1.GetProperty(v, "name")->as_string(), "Ada");
  EXPECT_TRUE(s1.GetProperty(v, "nil").has_value());
  EXPECT_FALSE(s1.GetProperty(v, "extra").has_value());

  // Setting a property to null keeps it present.
  WriteBatch b3;
  b3.SetProperty(v, "born", PropertyValue());
  Commit(*graph, std::move(b3));
  Snapshot s3 = graph->GetSnapshot();
  ASSERT_TRUE(s3.GetProperty(v, "born").has_value());
  EXPECT_TRUE(s3.GetProperty(v, "born")->is_null());
  EXPECT_EQ(s3.Properties(v).size(), 3u);
}

TEST(GraphTest, SetThenRemoveInOneBatchAndLastWriteWins) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P", {{"k", 1}});
  b.SetProperty(a, "k", 2);
  b.SetProperty(a, "k", 3);
  b.SetProperty(a, "gone", 1);
  b.RemoveProperty(a, "gone");
  b.RemoveProperty(a, "gone");
  Commit(*graph, std::move(b));
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.GetProperty(VertexId(0), "k")->as_int64(), 3);
  EXPECT_FALSE(s.GetProperty(VertexId(0), "gone").has_value());
  EXPECT_EQ(s.Properties(VertexId(0)).size(), 1u);
}

TEST(GraphTest, EdgeProperties) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P");
  b.AddEdge("T", a, a, {{"w", 1.5}, {"label", "loop"}});
  Commit(*graph, std::move(b));
  Snapshot s1 = graph->GetSnapshot();
  EdgeId e(0);
  EXPECT_EQ(s1.GetProperty(e, "w")->as_double(), 1.5);
  EXPECT_EQ(s1.GetProperty(e, *s1.FindPropertyKey("label"))->as_string(), "loop");
  EXPECT_EQ(s1.Properties(e).size(), 2u);
  WriteBatch b2;
  b2.SetProperty(e, "w", 2.5);
  b2.RemoveProperty(e, "label");
  b2.SetProperty(e, "nil", nullptr);
  b2.RemoveProperty(e, "absent");
  Commit(*graph, std::move(b2));
  Snapshot s2 = graph->GetSnapshot();
  EXPECT_EQ(s2.GetProperty(e, "w")->as_double(), 2.5);
  EXPECT_FALSE(s2.GetProperty(e, "label").has_value());
  ASSERT_TRUE(s2.GetProperty(e, "nil").has_value());
  EXPECT_TRUE(s2.GetProperty(e, "nil")->is_null());
  EXPECT_EQ(s1.GetProperty(e, "w")->as_double(), 1.5);
  EXPECT_EQ(s1.GetProperty(e, "label")->as_string(), "loop");
  // Vertex and edge properties are separate.
  EXPECT_FALSE(s2.GetProperty(VertexId(0), "w").has_value());
}

TEST(GraphTest, PropertyRangeIsInAscendingKeyIdOrder) {
  auto graph = NewGraph();
  // Intern keys in one order...
  WriteBatch b;
  b.AddVertex("P", {{"k3", 3}, {"k1", 1}, {"k4", 4}, {"k2", 2}, {"k0", 0}});
  Commit(*graph, std::move(b));
  // ...and set them on another vertex in a different order.
  WriteBatch b2;
  NewVertex v = b2.AddVertex("P", {{"k2", 2}});
  b2.SetProperty(v, "k0", 0);
  b2.SetProperty(v, "k4", 4);
  b2.SetProperty(v, "k3", 3);
  b2.SetProperty(v, "k1", 1);
  NewEdge e = b2.AddEdge("T", v, v, {{"k4", 4}, {"k0", 0}});
  b2.SetProperty(e, "k2", 2);
  Commit(*graph, std::move(b2));
  Snapshot s = graph->GetSnapshot();
  for (VertexId vid : {VertexId(0), VertexId(1)}) {
    PropertyRange range = s.Properties(vid);
    ASSERT_EQ(range.size(), 5u);
    std::vector<std::uint32_t> keys;
    for (PropertyRange::Entry entry : range) {
      keys.push_back(entry.key.value());
      // Value matches the key's name.
      std::string name(s.PropertyKeyName(entry.key));
      EXPECT_EQ(entry.value.as_int64(), name[1] - '0');
    }
    EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
    EXPECT_EQ(std::set<std::uint32_t>(keys.begin(), keys.end()).size(), 5u);
    for (std::size_t i = 0; i < range.size(); ++i) EXPECT_EQ(range[i].key.value(), keys[i]);
  }
  std::vector<std::uint32_t> edge_keys;
  for (PropertyRange::Entry entry : s.Properties(EdgeId(0))) edge_keys.push_back(entry.key.value());
  EXPECT_EQ(edge_keys.size(), 3u);
  EXPECT_TRUE(std::is_sorted(edge_keys.begin(), edge_keys.end()));
}

TEST(GraphTest, AllValueTypesRoundTripExactly) {
  std::string with_nul("a\0b\0", 4);
  Bytes bytes = {std::byte{0xff}, std::byte{0x00}, std::byte{0xc0}, std::byte{0x80}};
  FloatVector fv = {0.0f,
                    -0.0f,
                    1.5f,
                    std::numeric_limits<float>::denorm_min(),
                    std::numeric_limits<float>::max(),
                    std::numeric_limits<float>::lowest()};
  const std::vector<Property> props = {
      {"null", nullptr},
      {"true", true},
      {"false", false},
      {"zero", 0},
      {"min", std::numeric_limits<std::int64_t>::min()},
      {"max", std::numeric_limits<std::int64_t>::max()},
      {"negzero", -0.0},
      {"subnormal", std::numeric_limits<double>::denorm_min()},
      {"dmax", std::numeric_limits<double>::max()},
      {"dlowest", std::numeric_limits<double>::lowest()},
      {"pi", 3.141592653589793},
      {"empty", ""},
      {"nul", with_nul},
      {"utf8", "κόσμε 名前 🎉"},
      {"bytes", bytes},
      {"nobytes", Bytes{}},
      {"vec", fv},
      {"novec", FloatVector{}},
  };
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex v = b.AddVertex("AllTypes", props);
  b.AddEdge("T", v, v, props);
  Commit(*graph, std::move(b));
  Snapshot s = graph->GetSnapshot();
  for (const Property& p : props) {
    std::optional<PropertyView> got = s.GetProperty(VertexId(0), p.key);
    ASSERT_TRUE(got.has_value()) << p.key;
    EXPECT_TRUE(SameValue(*got, p.value)) << p.key << ": " << Render(*got) << " vs " << Render(p.value);
    EXPECT_EQ(got->ToValue(), p.value) << p.key;
    std::optional<PropertyView> on_edge = s.GetProperty(EdgeId(0), p.key);
    ASSERT_TRUE(on_edge.has_value()) << p.key;
    EXPECT_TRUE(SameValue(*on_edge, p.value)) << p.key;
  }
  EXPECT_TRUE(std::signbit(*s.GetProperty(VertexId(0), "negzero")->as_double()));
  EXPECT_EQ(s.GetProperty(VertexId(0), "nul")->as_string()->size(), 4u);
  EXPECT_EQ(s.Properties(VertexId(0)).size(), props.size());
}

TEST(GraphTest, NameInterning) {
  auto graph = NewGraph();
  Snapshot s0 = graph->GetSnapshot();
  WriteBatch b;
  NewVertex a = b.AddVertex("Person", {{"name", "x"}});
  NewVertex c = b.AddVertex("City");
  b.AddEdge("LIVES_IN", a, c, {{"since", 1}});
  Commit(*graph, std::move(b));
  Snapshot s1 = graph->GetSnapshot();
  auto person = s1.FindLabel("Person");
  auto city = s1.FindLabel("City");
  auto lives = s1.FindEdgeType("LIVES_IN");
  auto name = s1.FindPropertyKey("name");
  auto since = s1.FindPropertyKey("since");
  ASSERT_TRUE(person && city && lives && name && since);
  EXPECT_NE(*person, *city);
  EXPECT_NE(*name, *since);
  EXPECT_EQ(s1.LabelName(*person), "Person");
  EXPECT_EQ(s1.LabelName(*city), "City");
  EXPECT_EQ(s1.EdgeTypeName(*lives), "LIVES_IN");
  EXPECT_EQ(s1.PropertyKeyName(*name), "name");
  EXPECT_EQ(s1.PropertyKeyName(*since), "since");
  EXPECT_EQ(*s1.LabelOf(VertexId(0)), *person);
  EXPECT_EQ(s1.GetEdge(EdgeId(0))->type, *lives);
  // Separate name spaces.
  EXPECT_FALSE(s1.FindEdgeType("Person").has_value());
  EXPECT_FALSE(s1.FindPropertyKey("Person").has_value());
  EXPECT_FALSE(s1.FindLabel("LIVES_IN").has_value());
  EXPECT_FALSE(s1.FindLabel("name").has_value());
  // Names are case- and byte-exact.
  EXPECT_FALSE(s1.FindLabel("person").has_value());
  EXPECT_FALSE(s1.FindLabel("Person ").has_value());
  // The empty graph's snapshot never saw them.
  EXPECT_FALSE(s0.FindLabel("Person").has_value());
  EXPECT_FALSE(s0.FindPropertyKey("name").has_value());

  // More names later: earlier ids are stable, reuse gives the same id.
  WriteBatch b2;
  for (int i = 0; i < 100; ++i) {
    NewVertex v = b2.AddVertex("L" + std::to_string(i), {{"k" + std::to_string(i), i}});
    b2.AddEdge("T" + std::to_string(i), v, v);
  }
  b2.AddVertex("Person", {{"name", "y"}});
  Commit(*graph, std::move(b2));
  Snapshot s2 = graph->GetSnapshot();
  EXPECT_EQ(s2.FindLabel("Person"), person);
  EXPECT_EQ(s2.FindLabel("City"), city);
  EXPECT_EQ(s2.FindEdgeType("LIVES_IN"), lives);
  EXPECT_EQ(s2.FindPropertyKey("name"), name);
  EXPECT_EQ(s2.LabelName(*person), "Person");
  EXPECT_EQ(*s2.LabelOf(VertexId(102)), *person);  // 2 + 100 vertices before it
  std::set<std::uint32_t> label_ids;
  for (int i = 0; i < 100; ++i) {
    auto l = s2.FindLabel("L" + std::to_string(i));
    auto t = s2.FindEdgeType("T" + std::to_string(i));
    auto k = s2.FindPropertyKey("k" + std::to_string(i));
    ASSERT_TRUE(l && t && k) << i;
    EXPECT_EQ(s2.LabelName(*l), "L" + std::to_string(i));
    EXPECT_EQ(s2.EdgeTypeName(*t), "T" + std::to_string(i));
    EXPECT_EQ(s2.PropertyKeyName(*k), "k" + std::to_string(i));
    label_ids.insert(l->value());
  }
  EXPECT_EQ(label_ids.size(), 100u);
  EXPECT_EQ(label_ids.count(person->value()), 0u);
  // The older snapshot still resolves its own ids.
  EXPECT_EQ(s1.LabelName(*person), "Person");
  EXPECT_EQ(s1.EdgeTypeName(*lives), "LIVES_IN");
}

TEST(GraphTest, UnicodeNames) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex v = b.AddVertex("Città", {{"名前", "東京"}});
  b.AddEdge("ΔΡΌΜΟΣ", v, v, {{"🎉", 1}});
  Commit(*graph, std::move(b));
  Snapshot s = graph->GetSnapshot();
  ASSERT_TRUE(s.FindLabel("Città").has_value());
  EXPECT_EQ(s.LabelName(*s.FindLabel("Città")), "Città");
  EXPECT_EQ(s.GetProperty(VertexId(0), "名前")->as_string(), "東京");
  EXPECT_EQ(s.EdgeTypeName(s.GetEdge(EdgeId(0))->type), "ΔΡΌΜΟΣ");
  EXPECT_EQ(s.GetProperty(EdgeId(0), "🎉")->as_int64(), 1);
}

TEST(GraphTest, Iteration) {
  auto graph = NewGraph();
  WriteBatch b;
  std::vector<NewVertex> v;
  for (int i = 0; i < 10; ++i) v.push_back(b.AddVertex(i % 3 == 0 ? "Three" : "Other"));  // 0..9
  for (int i = 0; i < 9; ++i) b.AddEdge(i % 2 == 0 ? "EVEN" : "ODD", v[i], v[i + 1]);     // e0..e8
  Commit(*graph, std::move(b));
  WriteBatch r;
  r.RemoveVertex(VertexId(3));  // removes e2 (3<-2, EVEN) and e3 (3->4, ODD)
  r.RemoveVertex(VertexId(4));  // removes e4
  r.RemoveEdge(EdgeId(7));
  Commit(*graph, std::move(r));
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(Ids(s.Vertices()), (std::vector<std::uint64_t>{0, 1, 2, 5, 6, 7, 8, 9}));
  EXPECT_EQ(Ids(s.Vertices(*s.FindLabel("Three"))), (std::vector<std::uint64_t>{0, 6, 9}));
  EXPECT_EQ(Ids(s.Vertices(*s.FindLabel("Other"))), (std::vector<std::uint64_t>{1, 2, 5, 7, 8}));
  EXPECT_EQ(Ids(s.Vertices(2, 7)), (std::vector<std::uint64_t>{2, 5, 6}));
  EXPECT_EQ(Ids(s.Vertices(3, 5)), (std::vector<std::uint64_t>{}));
  EXPECT_EQ(Ids(s.Vertices(0, 1000)), Ids(s.Vertices()));
  EXPECT_EQ(Ids(s.Vertices(9, 10)), (std::vector<std::uint64_t>{9}));
  EXPECT_EQ(Ids(s.Vertices(10, 20)), (std::vector<std::uint64_t>{}));
  EXPECT_EQ(Ids(s.Vertices(5, 5)), (std::vector<std::uint64_t>{}));
  EXPECT_EQ(Ids(s.Edges()), (std::vector<std::uint64_t>{0, 1, 5, 6, 8}));
  EXPECT_EQ(Ids(s.Edges(*s.FindEdgeType("EVEN"))), (std::vector<std::uint64_t>{0, 6, 8}));
  EXPECT_EQ(Ids(s.Edges(*s.FindEdgeType("ODD"))), (std::vector<std::uint64_t>{1, 5}));
  EXPECT_EQ(s.vertex_count(), 8u);
  EXPECT_EQ(s.edge_count(), 5u);
  EXPECT_EQ(s.vertex_id_limit(), 10u);
  EXPECT_EQ(s.edge_id_limit(), 9u);

  // Splitting a scan over ranges covers every vertex exactly once.
  std::vector<std::uint64_t> all;
  for (std::uint64_t lo = 0; lo < s.vertex_id_limit(); lo += 3) {
    for (std::uint64_t id : Ids(s.Vertices(lo, lo + 3))) all.push_back(id);
  }
  EXPECT_EQ(all, Ids(s.Vertices()));

  // Iterators are forward iterators: copies advance independently.
  VertexRange range = s.Vertices();
  auto it = range.begin();
  auto copy = it;
  ++it;
  EXPECT_EQ((*copy).value(), 0u);
  EXPECT_EQ((*it).value(), 1u);
  EXPECT_EQ(std::distance(range.begin(), range.end()), 8);
}

TEST(GraphTest, IterationOverLargeSparseGraph) {
  auto graph = NewGraph();
  WriteBatch b;
  for (int i = 0; i < 5000; ++i) b.AddVertex(i % 7 == 0 ? "Seven" : "V");
  Commit(*graph, std::move(b));
  WriteBatch r;
  for (int i = 0; i < 5000; ++i) {
    if (i % 5 != 0) r.RemoveVertex(VertexId(i));
  }
  Commit(*graph, std::move(r));
  Snapshot s = graph->GetSnapshot();
  std::vector<std::uint64_t> expected, expected_seven;
  for (std::uint64_t i = 0; i < 5000; i += 5) {
    expected.push_back(i);
    if (i % 7 == 0) expected_seven.push_back(i);
  }
  EXPECT_EQ(Ids(s.Vertices()), expected);
  EXPECT_EQ(Ids(s.Vertices(*s.FindLabel("Seven"))), expected_seven);
  EXPECT_EQ(s.vertex_count(), expected.size());
  std::vector<std::uint64_t> middle;
  for (std::uint64_t i : expected) {
    if (i >= 1234 && i < 3456) middle.push_back(i);
  }
  EXPECT_EQ(Ids(s.Vertices(1234, 3456)), middle);
}

TEST(GraphTest, LargeBatchAndManyCommits) {
  auto graph = NewGraph();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 20000; ++i) vs.push_back(b.AddVertex("V", {{"i", i}}));
  for (int i = 0; i + 1 < 20000; ++i) b.AddEdge("NEXT", vs[i], vs[i + 1]);
  CommitInfo info = Commit(*graph, std::move(b));
  ASSERT_EQ(info.vertices.size(), 20000u);
  ASSERT_EQ(info.edges.size(), 19999u);
  for (std::uint64_t i = 0; i < 20000; ++i) ASSERT_EQ(info.vertices[i], VertexId(i));
  for (int round = 0; round < 300; ++round) {
    WriteBatch w;
    w.SetProperty(VertexId(round * 61), "i", -round);
    w.AddEdge("JUMP", VertexId(round), VertexId(19999 - round));
    ASSERT_TRUE(graph->Write(std::move(w)).ok());
  }
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.sequence(), 301u);
  EXPECT_EQ(s.edge_count(), 19999u + 300u);
  EXPECT_EQ(s.GetProperty(VertexId(61 * 299), "i")->as_int64(), -299);
  EXPECT_EQ(s.GetProperty(VertexId(61 * 299 + 1), "i")->as_int64(), 61 * 299 + 1);
  EdgeTypeId next = *s.FindEdgeType("NEXT");
  EXPECT_EQ(Entries(s.OutEdges(VertexId(12345), next)), (Pairs{{12345, 12346}}));
  EXPECT_EQ(Entries(s.InEdges(VertexId(12345), next)), (Pairs{{12344, 12344}}));
}

TEST(GraphTest, HighDegreeVertexKeepsInsertionOrder) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex hub = b.AddVertex("Hub");
  b.AddVertex("Leaf");
  Commit(*graph, std::move(b));
  // Grow one adjacency list over many commits (exercises regrowth), with
  // snapshots along the way that must keep their own prefix.
  std::vector<Snapshot> snaps;
  std::vector<std::size_t> sizes;
  (void)hub;
  for (int i = 0; i < 1000; ++i) {
    WriteBatch w;
    w.AddEdge("T", VertexId(0), VertexId(1));
    ASSERT_TRUE(graph->Write(std::move(w)).ok());
    if (i % 97 == 0) {
      snaps.push_back(graph->GetSnapshot());
      sizes.push_back(i + 1);
    }
  }
  Snapshot s = graph->GetSnapshot();
  EdgeTypeId t = *s.FindEdgeType("T");
  std::span<const EdgeEntry> out = s.OutEdges(VertexId(0), t);
  ASSERT_EQ(out.size(), 1000u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i].edge(), EdgeId(i));
    ASSERT_EQ(out[i].neighbor(), VertexId(1));
  }
  for (std::size_t k = 0; k < snaps.size(); ++k) {
    std::span<const EdgeEntry> old = snaps[k].OutEdges(VertexId(0), t);
    ASSERT_EQ(old.size(), sizes[k]);
    for (std::size_t i = 0; i < old.size(); ++i) ASSERT_EQ(old[i].edge(), EdgeId(i));
    EXPECT_EQ(snaps[k].edge_count(), sizes[k]);
  }
  // Remove every other edge in one batch: order of the rest is kept.
  WriteBatch r;
  for (int i = 0; i < 1000; i += 2) r.RemoveEdge(EdgeId(i));
  Commit(*graph, std::move(r));
  Snapshot after = graph->GetSnapshot();
  std::span<const EdgeEntry> rest = after.OutEdges(VertexId(0), t);
  ASSERT_EQ(rest.size(), 500u);
  for (std::size_t i = 0; i < rest.size(); ++i) ASSERT_EQ(rest[i].edge(), EdgeId(2 * i + 1));
  std::span<const EdgeEntry> rest_in = after.InEdges(VertexId(1), t);
  ASSERT_EQ(rest_in.size(), 500u);
  for (std::size_t i = 0; i < rest_in.size(); ++i) ASSERT_EQ(rest_in[i].edge(), EdgeId(2 * i + 1));
  EXPECT_EQ(s.OutEdges(VertexId(0), t).size(), 1000u);  // still whole
}

TEST(GraphTest, OldSnapshotsAreUnaffectedByLaterWrites) {
  auto graph = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P", {{"name", "a"}});
  NewVertex z = b.AddVertex("P", {{"name", "z"}});
  b.AddEdge("T", a, z, {{"w", 1}});
  Commit(*graph, std::move(b));
  Snapshot s1 = graph->GetSnapshot();
  const std::string d1 = Dump(s1, {"P", "Q", "T", "U", "name", "new"});
  std::span<const EdgeEntry> span1 = s1.OutEdges(VertexId(0), *s1.FindEdgeType("T"));
  std::string_view name1 = *s1.GetProperty(VertexId(0), "name")->as_string();

  WriteBatch b2;
  b2.SetProperty(VertexId(0), "name", "A");
  b2.SetProperty(VertexId(0), "new", 1);
  b2.AddEdge("T", VertexId(0), VertexId(1));
  b2.AddEdge("U", VertexId(1), VertexId(0));
  b2.AddVertex("Q");
  Commit(*graph, std::move(b2));
  Snapshot s2 = graph->GetSnapshot();
  const std::string d2 = Dump(s2, {"P", "Q", "T", "U", "name", "new"});
  WriteBatch b3;
  b3.RemoveVertex(VertexId(1));
  b3.RemoveProperty(VertexId(0), "name");
  Commit(*graph, std::move(b3));
  for (int i = 0; i < 50; ++i) {
    WriteBatch w;
    w.SetProperty(VertexId(0), "new", i);
    Commit(*graph, std::move(w));
  }

  EXPECT_EQ(Dump(s1, {"P", "Q", "T", "U", "name", "new"}), d1);
  EXPECT_EQ(Dump(s2, {"P", "Q", "T", "U", "name", "new"}), d2);
  EXPECT_EQ(s1.sequence(), 1u);
  EXPECT_EQ(s2.sequence(), 2u);
  EXPECT_FALSE(s1.FindLabel("Q").has_value());
  EXPECT_FALSE(s1.FindEdgeType("U").has_value());
  // Views taken before the writes still read the old bytes.
  ASSERT_EQ(span1.size(), 1u);
  EXPECT_EQ(span1[0].edge(), EdgeId(0));
  EXPECT_EQ(name1, "a");
  Snapshot now = graph->GetSnapshot();
  EXPECT_EQ(now.sequence(), 53u);
  EXPECT_FALSE(now.HasVertex(VertexId(1)));
  EXPECT_EQ(now.GetProperty(VertexId(0), "new")->as_int64(), 49);
}

TEST(GraphTest, SnapshotMoveSemantics) {
  auto graph = NewGraph();
  WriteBatch b;
  b.AddVertex("A");
  Commit(*graph, std::move(b));
  Snapshot empty;
  EXPECT_FALSE(empty.valid());

  Snapshot s1 = graph->GetSnapshot();
  ASSERT_TRUE(s1.valid());
  Snapshot s2(std::move(s1));
  EXPECT_FALSE(s1.valid());  // NOLINT(bugprone-use-after-move): documented state
  ASSERT_TRUE(s2.valid());
  EXPECT_EQ(s2.sequence(), 1u);
  EXPECT_EQ(s2.vertex_count(), 1u);

  Snapshot s3;
  s3 = std::move(s2);
  EXPECT_FALSE(s2.valid());  // NOLINT(bugprone-use-after-move)
  ASSERT_TRUE(s3.valid());
  EXPECT_EQ(s3.sequence(), 1u);

  WriteBatch b2;
  b2.AddVertex("B");
  Commit(*graph, std::move(b2));
  // Move-assigning over a snapshot releases the version it held.
  Snapshot s4 = graph->GetSnapshot();
  EXPECT_EQ(s4.sequence(), 2u);
  EXPECT_EQ(graph->GetMemoryStats().live_versions, 2u);  // current (2) + s3 (1)
  s3 = std::move(s4);
  EXPECT_EQ(s3.sequence(), 2u);
  EXPECT_EQ(test_util::SettledMemoryStats(*graph).live_versions, 1u);

  // Moving into a default snapshot and back.
  Snapshot holder;
  holder = std::move(s3);
  s3 = std::move(holder);
  EXPECT_TRUE(s3.valid());
  EXPECT_FALSE(holder.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(s3.vertex_count(), 2u);

  // Snapshots live happily in containers.
  std::vector<Snapshot> many;
  for (int i = 0; i < 100; ++i) many.push_back(graph->GetSnapshot());
  for (const Snapshot& s : many) EXPECT_EQ(s.sequence(), 2u);
}

TEST(GraphTest, SnapshotOutlivesTheGraph) {
  Snapshot s;
  Snapshot old;
  {
    auto graph = NewGraph();
    WriteBatch b;
    NewVertex a = b.AddVertex("P", {{"name", std::string(5000, 'n')}});
    b.AddEdge("T", a, a, {{"w", FloatVector(100, 1.0f)}});
    Commit(*graph, std::move(b));
    old = graph->GetSnapshot();
    WriteBatch b2;
    b2.SetProperty(VertexId(0), "name", "short");
    Commit(*graph, std::move(b2));
    s = graph->GetSnapshot();
  }  // graph destroyed here
  ASSERT_TRUE(s.valid());
  EXPECT_EQ(s.sequence(), 2u);
  EXPECT_EQ(s.vertex_count(), 1u);
  EXPECT_EQ(s.GetProperty(VertexId(0), "name")->as_string(), "short");
  EXPECT_EQ(s.GetProperty(EdgeId(0), "w")->as_float_vector()->size(), 100u);
  EXPECT_EQ(s.LabelName(*s.LabelOf(VertexId(0))), "P");
  EXPECT_EQ(old.GetProperty(VertexId(0), "name")->as_string(), std::string(5000, 'n'));
  EXPECT_EQ(old.OutDegree(VertexId(0)), 1u);
  EXPECT_FALSE(Dump(old).empty());
  old = Snapshot();
  EXPECT_FALSE(Dump(s).empty());
}

TEST(GraphTest, SnapshotOutlivesAClosedGraph) {
  auto graph = NewGraph();
  WriteBatch b;
  b.AddVertex("P");
  Commit(*graph, std::move(b));
  Snapshot s = graph->GetSnapshot();
  ASSERT_TRUE(graph->Close().ok());
  graph.reset();
  EXPECT_EQ(s.vertex_count(), 1u);
}

TEST(GraphTest, WriteAsyncCompletesInOrder) {
  auto graph = NewGraph();
  std::vector<std::future<Result<CommitInfo>>> futures;
  for (int i = 0; i < 64; ++i) {
    WriteBatch b;
    NewVertex v = b.AddVertex("V", {{"i", i}});
    if (i > 0) b.AddEdge("PREV", v, VertexId(i - 1));
    futures.push_back(graph->WriteAsync(std::move(b)));
  }
  for (int i = 0; i < 64; ++i) {
    Result<CommitInfo> r = futures[i].get();
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_EQ(r->sequence, static_cast<SequenceNumber>(i + 1));
    EXPECT_EQ(r->vertices, std::vector<VertexId>{VertexId(i)});
    if (i > 0) {
      EXPECT_EQ(r->edges, std::vector<EdgeId>{EdgeId(i - 1)});
    }
  }
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.sequence(), 64u);
  EXPECT_EQ(s.vertex_count(), 64u);
  EXPECT_EQ(s.edge_count(), 63u);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(s.GetProperty(VertexId(i), "i")->as_int64(), i);
}

TEST(GraphTest, WriteAsyncFailingBatchFailsAlone) {
  auto graph = NewGraph();
  WriteBatch seed;
  seed.AddVertex("V");
  Commit(*graph, std::move(seed));
  std::vector<std::future<Result<CommitInfo>>> futures;
  for (int i = 0; i < 30; ++i) {
    WriteBatch b;
    b.AddVertex("V", {{"i", i}});
    if (i % 7 == 3) b.RemoveVertex(VertexId(999999));               // NotFound
    if (i % 7 == 5) b.SetProperty(VertexId(0), "x", std::nan(""));  // InvalidArgument
    futures.push_back(graph->WriteAsync(std::move(b)));
  }
  SequenceNumber expected_seq = 1;
  std::uint64_t expected_vertex = 1;
  for (int i = 0; i < 30; ++i) {
    Result<CommitInfo> r = futures[i].get();
    if (i % 7 == 3) {
      ASSERT_FALSE(r.ok()) << i;
      EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << i;
    } else if (i % 7 == 5) {
      ASSERT_FALSE(r.ok()) << i;
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << i;
    } else {
      ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
      EXPECT_EQ(r->sequence, ++expected_seq) << i;
      EXPECT_EQ(r->vertices, std::vector<VertexId>{VertexId(expected_vertex)}) << i;
      ++expected_vertex;
    }
  }
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.sequence(), expected_seq);
  EXPECT_EQ(s.vertex_count(), expected_vertex);
  EXPECT_FALSE(s.FindPropertyKey("x").has_value());
}

TEST(GraphTest, ConcurrentWritersGetDistinctSequences) {
  auto graph = NewGraph();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100;
  std::vector<std::vector<SequenceNumber>> seqs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        WriteBatch b;
        b.AddVertex("V", {{"t", t}, {"i", i}});
        Result<CommitInfo> r = graph->Write(std::move(b));
        if (r.ok()) seqs[t].push_back(r->sequence);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<SequenceNumber> all;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seqs[t].size(), static_cast<std::size_t>(kPerThread));
    EXPECT_TRUE(std::is_sorted(seqs[t].begin(), seqs[t].end()));
    all.insert(seqs[t].begin(), seqs[t].end());
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kPerThread));
  EXPECT_EQ(*all.begin(), 1u);
  EXPECT_EQ(*all.rbegin(), static_cast<SequenceNumber>(kThreads * kPerThread));
  EXPECT_EQ(graph->GetSnapshot().vertex_count(), static_cast<std::uint64_t>(kThreads * kPerThread));
}

TEST(GraphTest, CloseSemantics) {
  auto graph = NewGraph();
  WriteBatch b;
  b.AddVertex("A", {{"k", 1}});
  Commit(*graph, std::move(b));
  ASSERT_TRUE(graph->Close().ok());
  EXPECT_TRUE(graph->Close().ok());  // idempotent

  WriteBatch late;
  late.AddVertex("B");
  Result<CommitInfo> r = graph->Write(std::move(late));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(r.status().message().empty());
  Result<CommitInfo> empty = graph->Write(WriteBatch());
  EXPECT_EQ(empty.status().code(), StatusCode::kFailedPrecondition);

  WriteBatch late_async;
  late_async.AddVertex("C");
  std::future<Result<CommitInfo>> f = graph->WriteAsync(std::move(late_async));
  Result<CommitInfo> ra = f.get();
  ASSERT_FALSE(ra.ok());
  EXPECT_EQ(ra.status().code(), StatusCode::kFailedPrecondition);

  Snapshot s = graph->GetSnapshot();
  ASSERT_TRUE(s.valid());
  EXPECT_EQ(s.sequence(), 1u);
  EXPECT_EQ(s.vertex_count(), 1u);
  EXPECT_EQ(s.GetProperty(VertexId(0), "k")->as_int64(), 1);
  EXPECT_FALSE(s.FindLabel("B").has_value());
  EXPECT_EQ(graph->GetMemoryStats().live_versions, 1u);
  EXPECT_TRUE(graph->Close().ok());
}

TEST(GraphTest, CloseFinishesQueuedBatches) {
  auto graph = NewGraph();
  std::vector<std::future<Result<CommitInfo>>> futures;
  for (int i = 0; i < 200; ++i) {
    WriteBatch b;
    b.AddVertex("V", {{"i", i}});
    futures.push_back(graph->WriteAsync(std::move(b)));
  }
  ASSERT_TRUE(graph->Close().ok());
  for (int i = 0; i < 200; ++i) {
    Result<CommitInfo> r = futures[i].get();
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_EQ(r->sequence, static_cast<SequenceNumber>(i + 1));
  }
  EXPECT_EQ(graph->GetSnapshot().vertex_count(), 200u);
  EXPECT_EQ(graph->GetSnapshot().sequence(), 200u);
}

TEST(GraphTest, DestructorFinishesQueuedBatches) {
  std::vector<std::future<Result<CommitInfo>>> futures;
  {
    auto graph = NewGraph();
    for (int i = 0; i < 50; ++i) {
      WriteBatch b;
      b.AddVertex("V");
      futures.push_back(graph->WriteAsync(std::move(b)));
    }
  }
  for (auto& f : futures) {
    Result<CommitInfo> r = f.get();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  }
}

TEST(GraphTest, InMemoryGraphHasNoDurabilityState) {
  auto graph = NewGraph();
  WriteBatch b;
  b.AddVertex("A");
  Commit(*graph, std::move(b));
  Status checkpoint = graph->Checkpoint();
  EXPECT_EQ(checkpoint.code(), StatusCode::kFailedPrecondition) << checkpoint.ToString();
  OpenStats open = graph->GetOpenStats();
  EXPECT_EQ(open.checkpoint_sequence, 0u);
  EXPECT_FALSE(open.used_previous_checkpoint);
  EXPECT_EQ(open.wal_segments_read, 0u);
  EXPECT_EQ(open.wal_groups_replayed, 0u);
  EXPECT_EQ(open.wal_batches_replayed, 0u);
  EXPECT_EQ(open.tail_bytes_truncated, 0u);
  EXPECT_FALSE(open.salvaged);
  EXPECT_EQ(open.recovered_sequence, 0u);
  DurabilityStats d = graph->GetDurabilityStats();
  EXPECT_EQ(d.wal_syncs, 0u);
  EXPECT_EQ(d.wal_bytes, 0u);
  EXPECT_EQ(d.checkpoints_written, 0u);
  EXPECT_FALSE(d.poisoned);
  EXPECT_TRUE(d.last_checkpoint_error.ok());
}

TEST(GraphTest, OpenWithVolatileDurabilityIgnoresTheDirectory) {
  Options options;
  options.durability = Durability::kVolatile;
  // A relative directory that must not be created.
  const std::string dir = "quiver-volatile-open-test-dir";
  ASSERT_FALSE(std::filesystem::exists(dir));
  Result<std::unique_ptr<Graph>> g = Graph::Open(options, dir);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir));
  WriteBatch b;
  b.AddVertex("A");
  EXPECT_EQ(Commit(**g, std::move(b)).sequence, 1u);
  EXPECT_EQ((*g)->GetSnapshot().vertex_count(), 1u);
}

TEST(GraphTest, CloseWithoutWrites) {
  auto graph = NewGraph();
  EXPECT_TRUE(graph->Close().ok());
  EXPECT_EQ(graph->GetSnapshot().sequence(), 0u);
}

}  // namespace
}  // namespace quiver

namespace quiver {
namespace {

// ScanEdges must visit exactly what per-vertex reads show, in id order,
// including a vertex with more edge types than one scan batch holds.
TEST(GraphScanTest, ScanEdgesMatchesPerVertexReads) {
  auto g = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> v;
  for (int i = 0; i < 300; ++i) v.push_back(b.AddVertex(i % 7 == 0 ? "Hub" : "Node"));
  for (int t = 0; t < 40; ++t) b.AddEdge("T" + std::to_string(t), v[0], v[1 + t]);  // 40 groups on vertex 0
  for (int i = 0; i < 300; ++i)
    for (int k = 0; k < i % 5; ++k) b.AddEdge(k % 2 ? "A" : "B", v[i], v[(i * 31 + k * 17) % 300]);
  b.RemoveVertex(v[5]);
  ASSERT_TRUE(g->Write(std::move(b)).ok());
  Snapshot s = g->GetSnapshot();
  for (Direction d : {Direction::kOut, Direction::kIn}) {
    for (auto [begin, end] :
         {std::pair<std::uint64_t, std::uint64_t>{0, 1000}, {3, 170}, {64, 128}, {299, 300}}) {
      std::vector<std::string> expected, scanned;
      for (VertexId x : s.Vertices(begin, end))
        for (EdgeGroup grp : s.Edges(x, d))
          for (const EdgeEntry& e : grp.entries)
            expected.push_back(std::to_string(x.value()) + ":" + std::to_string(grp.type.value()) + ":" +
                               std::to_string(e.edge().value()) + ">" + std::to_string(e.neighbor().value()));
      s.ScanEdges(begin, end, d, [&](VertexId x, const EdgeGroup& grp) {
        EXPECT_FALSE(grp.entries.empty());
        for (const EdgeEntry& e : grp.entries)
          scanned.push_back(std::to_string(x.value()) + ":" + std::to_string(grp.type.value()) + ":" +
                            std::to_string(e.edge().value()) + ">" + std::to_string(e.neighbor().value()));
      });
      EXPECT_EQ(scanned, expected) << "direction " << static_cast<int>(d) << " [" << begin << ", " << end
                                   << ")";
    }
  }
}

}  // namespace
}  // namespace quiver
