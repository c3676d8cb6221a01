// The read API's edges (include/quiver/snapshot.h): a default snapshot reads
// as an empty graph, unknown ids give empty results, and the ranges model
// the std::ranges concepts so algorithms and views work on them.
#include "quiver/snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <ranges>
#include <string>
#include <utility>
#include <vector>

#include "quiver/graph.h"

namespace quiver {
namespace {

static_assert(std::forward_iterator<VertexRange::iterator>);
static_assert(std::ranges::forward_range<VertexRange>);
static_assert(std::ranges::forward_range<EdgeRange>);
static_assert(std::ranges::forward_range<const VertexRange>);
static_assert(std::ranges::forward_range<PropertyRange>);
static_assert(std::ranges::sized_range<PropertyRange>);
static_assert(std::ranges::forward_range<Adjacency>);
static_assert(std::ranges::contiguous_range<std::span<const EdgeEntry>>);
static_assert(std::ranges::viewable_range<VertexRange&>);

std::unique_ptr<Graph> SmallGraph() {
  std::unique_ptr<Graph> g = Graph::OpenInMemory().value();
  WriteBatch b;
  NewVertex a = b.AddVertex("Person", {{"name", "a"}, {"age", 3}});
  NewVertex c = b.AddVertex("City", {{"name", "c"}});
  NewVertex d = b.AddVertex("Person");
  b.AddEdge("LIVES_IN", a, c);
  b.AddEdge("KNOWS", a, d);
  b.AddEdge("KNOWS", d, a, {{"since", 2001}});
  EXPECT_TRUE(g->Write(std::move(b)).ok());
  return g;
}

TEST(SnapshotTest, RangesWorkWithStdRangesAlgorithmsAndViews) {
  auto g = SmallGraph();
  Snapshot s = g->GetSnapshot();
  LabelId person = s.FindLabel("Person").value();
  EXPECT_EQ(std::ranges::count_if(s.Vertices(), [&](VertexId v) { return s.LabelOf(v) == person; }), 2);
  EXPECT_EQ(std::ranges::distance(s.Vertices(person)), 2);
  EXPECT_EQ(std::ranges::distance(s.Edges()), 3);

  VertexRange vertices = s.Vertices();
  std::vector<std::uint64_t> ids;
  for (VertexId v : vertices | std::views::filter([&](VertexId x) { return s.OutDegree(x) > 0; }))
    ids.push_back(v.value());
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{0, 2}));

  VertexId a(0);
  PropertyRange props = s.Properties(a);
  EXPECT_EQ(std::ranges::size(props), 2u);
  EXPECT_EQ(
      std::ranges::count_if(props, [](const PropertyRange::Entry& e) { return e.value.as_int64() == 3; }), 1);
  auto keys = props | std::views::transform([&](const PropertyRange::Entry& e) {
                return std::string(s.PropertyKeyName(e.key));
              });
  std::vector<std::string> names(keys.begin(), keys.end());
  std::ranges::sort(names);
  EXPECT_EQ(names, (std::vector<std::string>{"age", "name"}));

  Adjacency out = s.OutEdges(a);
  EXPECT_EQ(std::ranges::distance(out), 2);
  std::size_t entries = 0;
  for (const EdgeGroup& group : out) entries += std::ranges::size(group.entries);
  EXPECT_EQ(entries, out.degree());
  auto it = out.begin();
  auto first = it++;
  EXPECT_EQ(first, out.begin());
  EXPECT_NE(it, first);
}

TEST(SnapshotTest, DefaultSnapshotReadsAsAnEmptyGraph) {
  const Snapshot s;
  EXPECT_FALSE(s.valid());
  EXPECT_EQ(s.sequence(), 0u);
  EXPECT_EQ(s.vertex_count(), 0u);
  EXPECT_EQ(s.edge_count(), 0u);
  EXPECT_EQ(s.vertex_id_limit(), 0u);
  EXPECT_EQ(s.edge_id_limit(), 0u);
  EXPECT_FALSE(s.HasVertex(VertexId(0)));
  EXPECT_FALSE(s.LabelOf(VertexId(0)).has_value());
  EXPECT_TRUE(s.OutEdges(VertexId(0), EdgeTypeId(0)).empty());
  EXPECT_EQ(s.InEdges(VertexId(0)).degree(), 0u);
  EXPECT_EQ(s.OutDegree(VertexId(0)), 0u);
  EXPECT_FALSE(s.HasEdge(EdgeId(0)));
  EXPECT_FALSE(s.GetEdge(EdgeId(0)).has_value());
  EXPECT_FALSE(s.GetProperty(VertexId(0), "name").has_value());
  EXPECT_FALSE(s.GetProperty(EdgeId(0), PropertyKeyId(0)).has_value());
  EXPECT_TRUE(s.Properties(VertexId(0)).empty());
  EXPECT_EQ(std::ranges::distance(s.Vertices()), 0);
  EXPECT_EQ(std::ranges::distance(s.Vertices(LabelId(0))), 0);
  EXPECT_EQ(std::ranges::distance(s.Vertices(0, 100)), 0);
  EXPECT_EQ(std::ranges::distance(s.Edges()), 0);
  EXPECT_EQ(std::ranges::distance(s.Edges(EdgeTypeId(0))), 0);
  std::size_t groups = 0;
  s.ScanEdges(0, 100, Direction::kOut, [&](VertexId, const EdgeGroup&) { ++groups; });
  EXPECT_EQ(groups, 0u);
  EXPECT_FALSE(s.FindLabel("Person").has_value());
  EXPECT_FALSE(s.FindEdgeType("KNOWS").has_value());
  EXPECT_FALSE(s.FindPropertyKey("name").has_value());
  EXPECT_EQ(s.LabelName(LabelId(0)), "");

  // A moved-from snapshot reads the same way.
  auto g = SmallGraph();
  Snapshot live = g->GetSnapshot();
  Snapshot taken = std::move(live);
  EXPECT_FALSE(live.valid());  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(live.vertex_count(), 0u);
  EXPECT_EQ(std::ranges::distance(live.Vertices()), 0);
  EXPECT_EQ(taken.vertex_count(), 3u);
}

// Engine II 1.5: every call of the read API on a default snapshot, the
// ones above included, answers as an empty graph would, instead of
// dereferencing a null version. Regression: the index queries by name
// answered FailedPrecondition ("pins no version") where an empty graph
// answers NotFound ("no index named").
TEST(SnapshotTest, DefaultSnapshotAnswersEveryCallAsAnEmptyGraph) {
  const Snapshot s;
  EXPECT_EQ(s.EdgeTypeName(EdgeTypeId(0)), "");
  EXPECT_EQ(s.PropertyKeyName(PropertyKeyId(0)), "");
  EXPECT_EQ(s.InDegree(VertexId(0)), 0u);
  EXPECT_TRUE(s.InEdges(VertexId(0), EdgeTypeId(0)).empty());
  EXPECT_TRUE(s.Edges(VertexId(0), Direction::kIn, EdgeTypeId(0)).empty());
  EXPECT_EQ(s.Edges(VertexId(0), Direction::kOut).degree(), 0u);
  EXPECT_EQ(s.OutEdges(VertexId(0)).group_count(), 0u);
  EXPECT_FALSE(s.GetProperty(VertexId(0), PropertyKeyId(0)).has_value());
  EXPECT_FALSE(s.GetProperty(EdgeId(0), "since").has_value());
  EXPECT_TRUE(s.Properties(EdgeId(0)).empty());
  EXPECT_EQ(s.CountVertices(LabelId(0)), 0u);
  EXPECT_EQ(s.CountEdges(EdgeTypeId(0)), 0u);
  EXPECT_TRUE(s.Labels().empty());
  EXPECT_TRUE(s.EdgeTypes().empty());
  EXPECT_TRUE(s.PropertyKeys().empty());
  EXPECT_TRUE(s.Indexes().empty());
  // The index queries answer with the codes a fresh, empty graph gives
  // (FailedPrecondition: no index on that label and key; NotFound: no
  // index of that name), never with an error of their own.
  auto fresh = Graph::OpenInMemory().value();
  const Snapshot e = fresh->GetSnapshot();
  const PropertyValue ada("Ada");
  const std::vector<PropertyValue> key = {ada};
  const IndexRange all;
  auto same = [](const auto& got, const auto& want, const char* call) {
    EXPECT_FALSE(got.ok()) << call;
    EXPECT_EQ(got.status().code(), want.status().code()) << call << ": " << got.status().ToString();
  };
#define QUIVER_SAME_AS_EMPTY(call) same(s.call, e.call, #call)
  QUIVER_SAME_AS_EMPTY(FindVertices("Person", "name", ada));
  QUIVER_SAME_AS_EMPTY(FindEdges("KNOWS", "since", ada));
  QUIVER_SAME_AS_EMPTY(FindVertex("Person", "name", ada));
  QUIVER_SAME_AS_EMPTY(FindEdge("KNOWS", "since", ada));
  QUIVER_SAME_AS_EMPTY(VerticesInRange("Person", "age", all));
  QUIVER_SAME_AS_EMPTY(EdgesInRange("KNOWS", "since", all));
  QUIVER_SAME_AS_EMPTY(CountVerticesInRange("Person", "age", all));
  QUIVER_SAME_AS_EMPTY(CountEdgesInRange("KNOWS", "since", all));
  QUIVER_SAME_AS_EMPTY(FindVerticesByIndex("i", key));
  QUIVER_SAME_AS_EMPTY(FindEdgesByIndex("i", key));
  QUIVER_SAME_AS_EMPTY(FindVertexByIndex("i", key));
  QUIVER_SAME_AS_EMPTY(FindEdgeByIndex("i", key));
  QUIVER_SAME_AS_EMPTY(VerticesInRangeByIndex("i", all));
  QUIVER_SAME_AS_EMPTY(EdgesInRangeByIndex("i", all));
  QUIVER_SAME_AS_EMPTY(CountVerticesInRangeByIndex("i", all));
  QUIVER_SAME_AS_EMPTY(CountEdgesInRangeByIndex("i", all));
#undef QUIVER_SAME_AS_EMPTY
}

// Engine II 1.5: std::ranges::count_if (and so every range algorithm) on
// each range the read API returns, checked against the known small graph.
TEST(SnapshotTest, CountIfWorksOnEveryRange) {
  auto g = SmallGraph();
  Snapshot s = g->GetSnapshot();
  const VertexId a(0);
  const EdgeTypeId knows = s.FindEdgeType("KNOWS").value();
  const LabelId person = s.FindLabel("Person").value();
  auto any = [](const auto&) { return true; };
  EXPECT_EQ(std::ranges::count_if(s.Vertices(), any), 3);
  EXPECT_EQ(std::ranges::count_if(s.Vertices(person), any), 2);
  EXPECT_EQ(std::ranges::count_if(s.Vertices(1, 3), [](VertexId v) { return v.value() >= 1; }), 2);
  EXPECT_EQ(std::ranges::count_if(s.Edges(), [&](EdgeId e) { return s.GetEdge(e)->type == knows; }), 2);
  EXPECT_EQ(std::ranges::count_if(s.Edges(knows), any), 2);
  EXPECT_EQ(
      std::ranges::count_if(s.Properties(a),
                            [](const PropertyRange::Entry& e) { return e.value.as_string().has_value(); }),
      1);
  EXPECT_EQ(std::ranges::count_if(s.Properties(EdgeId(2)), any), 1);
  EXPECT_EQ(std::ranges::count_if(s.OutEdges(a), [&](const EdgeGroup& grp) { return grp.type == knows; }), 1);
  EXPECT_EQ(std::ranges::count_if(s.InEdges(a), any), 1);
  EXPECT_EQ(std::ranges::count_if(s.OutEdges(a, knows),
                                  [](const EdgeEntry& e) { return e.neighbor().value() == 2; }),
            1);
}

TEST(SnapshotTest, UnknownIdsGiveEmptyResults) {
  auto g = SmallGraph();
  Snapshot s = g->GetSnapshot();
  for (std::uint32_t id : {3u, 1000u, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(s.LabelName(LabelId(id)), "");
    EXPECT_EQ(s.EdgeTypeName(EdgeTypeId(id)), "");
    EXPECT_EQ(s.PropertyKeyName(PropertyKeyId(id)), "");
    // 0xFFFFFFFF + 1 must not wrap into "no filter".
    EXPECT_EQ(std::ranges::distance(s.Vertices(LabelId(id))), 0);
    EXPECT_EQ(std::ranges::distance(s.Edges(EdgeTypeId(id))), 0);
    EXPECT_TRUE(s.OutEdges(VertexId(0), EdgeTypeId(id)).empty());
    EXPECT_FALSE(s.GetProperty(VertexId(0), PropertyKeyId(id)).has_value());
  }
  EXPECT_EQ(s.LabelName(*s.FindLabel("City")), "City");
  EXPECT_FALSE(s.HasVertex(VertexId(kMaxElementId)));
  EXPECT_FALSE(s.GetEdge(EdgeId(~std::uint64_t{0})).has_value());
  EXPECT_TRUE(s.Properties(VertexId(12345)).empty());
  EXPECT_EQ(s.OutEdges(VertexId(12345)).degree(), 0u);
}

}  // namespace
}  // namespace quiver
