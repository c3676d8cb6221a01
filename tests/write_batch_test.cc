// Tests for WriteBatch recording (include/quiver/write_batch.h): sizes,
// handles, Clear, copy and move. Committing copies and moved batches goes
// through an in-memory Graph.
#include "quiver/write_batch.h"

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "quiver/graph.h"
#include "test_util.h"

namespace quiver {
namespace {

using test_util::Dump;

std::unique_ptr<Graph> NewGraph() {
  Result<std::unique_ptr<Graph>> g = Graph::OpenInMemory();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(g).value();
}

TEST(WriteBatchTest, StartsEmpty) {
  WriteBatch b;
  EXPECT_EQ(b.size(), 0u);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.added_vertices(), 0u);
  EXPECT_EQ(b.added_edges(), 0u);
}

TEST(WriteBatchTest, EveryOperationCountsOne) {
  WriteBatch b;
  NewVertex a = b.AddVertex("A");
  EXPECT_EQ(b.size(), 1u);
  EXPECT_FALSE(b.empty());
  NewVertex z = b.AddVertex("A");
  EXPECT_EQ(b.size(), 2u);
  NewEdge e = b.AddEdge("T", a, z);
  EXPECT_EQ(b.size(), 3u);
  b.SetProperty(a, "k", 1);
  EXPECT_EQ(b.size(), 4u);
  b.SetProperty(e, "k", 2);
  EXPECT_EQ(b.size(), 5u);
  b.RemoveProperty(a, "k");
  EXPECT_EQ(b.size(), 6u);
  b.RemoveProperty(e, "k");
  EXPECT_EQ(b.size(), 7u);
  b.RemoveEdge(e);
  EXPECT_EQ(b.size(), 8u);
  b.RemoveVertex(z);
  EXPECT_EQ(b.size(), 9u);
  b.RemoveVertex(VertexId(100));  // recording checks nothing
  b.RemoveEdge(EdgeId(100));
  EXPECT_EQ(b.size(), 11u);
  EXPECT_EQ(b.added_vertices(), 2u);
  EXPECT_EQ(b.added_edges(), 1u);
}

TEST(WriteBatchTest, AddsWithPropertiesCountAtLeastOne) {
  WriteBatch b;
  b.AddVertex("A", {{"x", 1}, {"y", 2}});
  EXPECT_GE(b.size(), 1u);
  std::size_t before = b.size();
  std::vector<Property> props = {{"w", 1.5}};
  b.AddEdge("T", VertexId(0), VertexId(0), props);
  EXPECT_GT(b.size(), before);
  EXPECT_EQ(b.added_vertices(), 1u);
  EXPECT_EQ(b.added_edges(), 1u);
}

TEST(WriteBatchTest, HandlesAreSequentialAndShareTheBatchTag) {
  WriteBatch b;
  NewVertex v0 = b.AddVertex("A");
  NewVertex v1 = b.AddVertex("B", {{"k", "v"}});
  std::vector<Property> props = {{"k", 1}};
  NewVertex v2 = b.AddVertex("C", props);
  EXPECT_EQ(v0.index, 0u);
  EXPECT_EQ(v1.index, 1u);
  EXPECT_EQ(v2.index, 2u);
  EXPECT_EQ(v0.batch_tag, v1.batch_tag);
  EXPECT_EQ(v1.batch_tag, v2.batch_tag);

  NewEdge e0 = b.AddEdge("T", v0, v1);
  NewEdge e1 = b.AddEdge("T", v1, VertexId(5), {{"w", 2}});
  NewEdge e2 = b.AddEdge("U", VertexId(1), VertexId(2), props);
  EXPECT_EQ(e0.index, 0u);
  EXPECT_EQ(e1.index, 1u);
  EXPECT_EQ(e2.index, 2u);
  EXPECT_EQ(e0.batch_tag, v0.batch_tag);
  EXPECT_EQ(e2.batch_tag, v0.batch_tag);
}

TEST(WriteBatchTest, DistinctBatchesHaveDistinctTags) {
  WriteBatch a;
  WriteBatch b;
  WriteBatch c;
  std::uint64_t ta = a.AddVertex("X").batch_tag;
  std::uint64_t tb = b.AddVertex("X").batch_tag;
  std::uint64_t tc = c.AddVertex("X").batch_tag;
  EXPECT_NE(ta, tb);
  EXPECT_NE(tb, tc);
  EXPECT_NE(ta, tc);
}

TEST(WriteBatchTest, RefsRememberWhatTheyName) {
  VertexRef by_id{VertexId(42)};
  EXPECT_FALSE(by_id.is_new());
  EXPECT_EQ(by_id.raw(), 42u);
  VertexRef by_handle(NewVertex{7, 3});
  EXPECT_TRUE(by_handle.is_new());
  EXPECT_EQ(by_handle.raw(), 3u);
  EXPECT_EQ(by_handle.batch_tag(), 7u);
  EdgeRef edge_by_id{EdgeId(kMaxElementId)};
  EXPECT_FALSE(edge_by_id.is_new());
  EXPECT_EQ(edge_by_id.raw(), kMaxElementId);
  EdgeRef edge_by_handle(NewEdge{9, 1});
  EXPECT_TRUE(edge_by_handle.is_new());
  EXPECT_EQ(edge_by_handle.raw(), 1u);
  EXPECT_EQ(edge_by_handle.batch_tag(), 9u);
}

TEST(WriteBatchTest, ClearForgetsEverything) {
  WriteBatch b;
  NewVertex a = b.AddVertex("A", {{"k", 1}});
  b.AddEdge("T", a, a);
  b.SetProperty(a, "j", 2);
  b.Clear();
  EXPECT_EQ(b.size(), 0u);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.added_vertices(), 0u);
  EXPECT_EQ(b.added_edges(), 0u);
  NewVertex again = b.AddVertex("B");
  EXPECT_EQ(again.index, 0u);
  EXPECT_EQ(b.size(), 1u);

  // A cleared-and-refilled batch commits only what was recorded after Clear.
  auto graph = NewGraph();
  Result<CommitInfo> r = graph->Write(std::move(b));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vertices.size(), 1u);
  EXPECT_TRUE(r->edges.empty());
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.vertex_count(), 1u);
  EXPECT_EQ(s.edge_count(), 0u);
  ASSERT_TRUE(s.LabelOf(VertexId(0)).has_value());
  EXPECT_EQ(s.LabelName(*s.LabelOf(VertexId(0))), "B");
  EXPECT_FALSE(s.FindLabel("A").has_value());
  EXPECT_FALSE(s.FindPropertyKey("j").has_value());
}

// Records the same mutations into `b`, using handles only from `b` itself.
void Record(WriteBatch& b) {
  NewVertex a = b.AddVertex("Person", {{"name", "Ada"}, {"born", 1815}});
  NewVertex c = b.AddVertex("Person", {{"name", "Charles"}});
  NewEdge e = b.AddEdge("KNOWS", a, c, {{"since", 1833}});
  b.AddEdge("KNOWS", c, a);
  b.SetProperty(e, "note", "letters");
  b.SetProperty(c, "born", 1791);
}

TEST(WriteBatchTest, CopyCommitsTheSameMutations) {
  WriteBatch original;
  Record(original);
  WriteBatch copy(original);
  EXPECT_EQ(copy.size(), original.size());
  EXPECT_EQ(copy.added_vertices(), original.added_vertices());
  EXPECT_EQ(copy.added_edges(), original.added_edges());

  WriteBatch assigned;
  assigned.AddVertex("Junk");
  assigned = original;
  EXPECT_EQ(assigned.size(), original.size());
  EXPECT_EQ(assigned.added_vertices(), 2u);

  auto g1 = NewGraph();
  auto g2 = NewGraph();
  auto g3 = NewGraph();
  Result<CommitInfo> r1 = g1->Write(std::move(original));
  Result<CommitInfo> r2 = g2->Write(std::move(copy));
  Result<CommitInfo> r3 = g3->Write(std::move(assigned));
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  std::string d1 = Dump(g1->GetSnapshot());
  EXPECT_EQ(d1, Dump(g2->GetSnapshot()));
  EXPECT_EQ(d1, Dump(g3->GetSnapshot()));
  EXPECT_EQ(g1->GetSnapshot().vertex_count(), 2u);
  EXPECT_EQ(g1->GetSnapshot().edge_count(), 2u);
}

TEST(WriteBatchTest, CopyIsIndependentOfTheOriginal) {
  WriteBatch original;
  original.AddVertex("A");
  WriteBatch copy(original);
  original.AddVertex("B");
  original.AddVertex("C");
  EXPECT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy.added_vertices(), 1u);
  copy.Clear();
  EXPECT_EQ(original.size(), 3u);
}

// The rule of the copy constructor's comment: handles from before the copy
// are valid in both; handles either side returns later only in that side
// (and its own later copies).
TEST(WriteBatchTest, CopySharesTheHandlesFromBeforeTheCopyOnly) {
  auto graph = NewGraph();
  auto code = [&](const WriteBatch& b) { return graph->Write(b).status().code(); };
  WriteBatch original;
  const NewVertex before = original.AddVertex("A");
  const NewEdge before_edge = original.AddEdge("E", before, before);
  WriteBatch copy(original);
  const NewVertex copy_after = copy.AddVertex("C");
  const NewVertex original_after = original.AddVertex("O");
  EXPECT_EQ(copy_after.index, original_after.index);

  // Before the copy: valid in both.
  for (WriteBatch* b : {&original, &copy}) {
    WriteBatch w = *b;
    w.SetProperty(before, "k", 1);
    w.SetProperty(before_edge, "k", 1);
    EXPECT_EQ(code(w), StatusCode::kOk);
  }
  // After: valid only where returned.
  WriteBatch in_copy = copy;
  in_copy.AddEdge("E", copy_after, before);
  EXPECT_EQ(code(in_copy), StatusCode::kOk);
  WriteBatch in_original = original;
  in_original.AddEdge("E", original_after, before);
  EXPECT_EQ(code(in_original), StatusCode::kOk);
  WriteBatch crossed = copy;
  crossed.SetProperty(original_after, "k", 1);
  EXPECT_EQ(code(crossed), StatusCode::kInvalidArgument);
  crossed = original;
  crossed.SetProperty(copy_after, "k", 1);
  EXPECT_EQ(code(crossed), StatusCode::kInvalidArgument);
  // An edge returned after the copy likewise.
  const NewEdge original_edge = original.AddEdge("E", before, before);
  crossed = copy;
  crossed.RemoveEdge(original_edge);
  EXPECT_EQ(code(crossed), StatusCode::kInvalidArgument);

  // A copy of a copy inherits both: the first batch's handles up to the
  // first copy, the copy's up to the second.
  WriteBatch second(copy);
  second.SetProperty(before, "k", 2);
  second.SetProperty(copy_after, "k", 2);
  EXPECT_EQ(code(second), StatusCode::kOk);
  second.SetProperty(original_after, "k", 2);
  EXPECT_EQ(code(second), StatusCode::kInvalidArgument);

  // Assigned: the target takes the source's handles and loses its own.
  WriteBatch target;
  const NewVertex target_own = target.AddVertex("T");
  target = original;
  target.SetProperty(original_after, "k", 3);
  EXPECT_EQ(code(target), StatusCode::kOk);
  target.SetProperty(target_own, "k", 3);
  EXPECT_EQ(code(target), StatusCode::kInvalidArgument);

  // Cleared, a copy forgets what it inherited.
  copy.Clear();
  copy.AddVertex("X");
  copy.SetProperty(before, "k", 4);
  EXPECT_EQ(code(copy), StatusCode::kInvalidArgument);
}

TEST(WriteBatchTest, MoveCommitsTheSameMutations) {
  WriteBatch reference;
  Record(reference);
  WriteBatch source;
  Record(source);
  WriteBatch moved(std::move(source));
  EXPECT_EQ(moved.size(), reference.size());
  WriteBatch source2;
  Record(source2);
  WriteBatch move_assigned;
  move_assigned.AddVertex("Junk");
  move_assigned = std::move(source2);
  EXPECT_EQ(move_assigned.size(), reference.size());
  EXPECT_EQ(move_assigned.added_vertices(), reference.added_vertices());

  auto g1 = NewGraph();
  auto g2 = NewGraph();
  auto g3 = NewGraph();
  ASSERT_TRUE(g1->Write(std::move(reference)).ok());
  ASSERT_TRUE(g2->Write(std::move(moved)).ok());
  ASSERT_TRUE(g3->Write(std::move(move_assigned)).ok());
  std::string d1 = Dump(g1->GetSnapshot());
  EXPECT_EQ(d1, Dump(g2->GetSnapshot()));
  EXPECT_EQ(d1, Dump(g3->GetSnapshot()));
}

TEST(WriteBatchTest, MovedFromBatchIsReusableAfterClear) {
  WriteBatch source;
  source.AddVertex("A");
  WriteBatch target(std::move(source));
  source.Clear();  // NOLINT(bugprone-use-after-move): reset to a known state
  EXPECT_TRUE(source.empty());
  NewVertex v = source.AddVertex("B");
  EXPECT_EQ(v.index, 0u);
  auto graph = NewGraph();
  Result<CommitInfo> r = graph->Write(std::move(source));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vertices.size(), 1u);
}

TEST(WriteBatchTest, PropertySpanIsCopiedWhenRecorded) {
  WriteBatch b;
  {
    std::vector<Property> props = {{"name", std::string(100, 'x')}};
    b.AddVertex("A", props);
    props[0].value = PropertyValue("changed");
    props[0].key = "other";
  }
  auto graph = NewGraph();
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  Snapshot s = graph->GetSnapshot();
  std::optional<PropertyView> name = s.GetProperty(VertexId(0), "name");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->as_string(), std::string(100, 'x'));
  EXPECT_FALSE(s.FindPropertyKey("other").has_value());
}

TEST(WriteBatchTest, NamesAreCopiedWhenRecorded) {
  WriteBatch b;
  {
    std::string label = "Label";
    std::string type = "TYPE";
    std::string key = "key";
    NewVertex v = b.AddVertex(label);
    b.AddEdge(type, v, v);
    b.SetProperty(v, key, 1);
    label = "XXXXX";
    type = "YYYY";
    key = "zzz";
  }
  auto graph = NewGraph();
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  Snapshot s = graph->GetSnapshot();
  EXPECT_TRUE(s.FindLabel("Label").has_value());
  EXPECT_TRUE(s.FindEdgeType("TYPE").has_value());
  EXPECT_TRUE(s.FindPropertyKey("key").has_value());
}

}  // namespace
}  // namespace quiver
