// WriteBatch::UpsertVertex: found through a covering unique index or added,
// merge and replace, repeats within a batch, the handle in later operations
// and CommitInfo, the collisions and refusals, and that the log replays the
// resolved batch to the same state (reopen through the simulated file
// system).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

// Vertex 0 City {name "London", pop 8, old true}; vertex 1 Person {first
// "Ada", last "L"}; unique indexes City.name and Person(last, first), an
// exact index City.pop.
void Populate(Graph& g) {
  WriteBatch b;
  b.AddVertex("City", {{"name", "London"}, {"pop", 8}, {"old", true}});
  b.AddVertex("Person", {{"first", "Ada"}, {"last", "L"}});
  ASSERT_TRUE(g.Write(std::move(b)).ok());
  ASSERT_TRUE(
      g.CreateIndex({.name = "city", .label = "City", .keys = {"name"}, .kind = IndexKind::kUnique}).ok());
  ASSERT_TRUE(g.CreateIndex(
                   {.name = "full", .label = "Person", .keys = {"last", "first"}, .kind = IndexKind::kUnique})
                  .ok());
  ASSERT_TRUE(
      g.CreateIndex({.name = "pop", .label = "City", .keys = {"pop"}, .kind = IndexKind::kExact}).ok());
}

std::unique_ptr<Graph> Base() {
  auto g = Graph::OpenInMemory().value();
  Populate(*g);
  return g;
}

CommitInfo MustWrite(Graph& g, WriteBatch b) {
  Result<CommitInfo> r = g.Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : CommitInfo{};
}

// The vertex's property keys, sorted, comma-separated.
std::string Keys(const Snapshot& s, VertexId v) {
  std::string out;
  for (const auto& [key, value] : test_util::PropertyMap(s, v)) out += (out.empty() ? "" : ",") + key;
  return out;
}

void ExpectCode(Result<CommitInfo> r, StatusCode code, std::vector<std::string> message_has) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  for (const std::string& m : message_has)
    EXPECT_NE(r.status().message().find(m), std::string::npos) << r.status().message() << " lacks " << m;
}

TEST(UpsertTest, FindsTheVertexAndMergesProperties) {
  auto g = Base();
  WriteBatch b;
  NewVertex h = b.UpsertVertex("City", {{"name", "London"}}, {{"pop", 9}, {"river", "Thames"}});
  CommitInfo info = MustWrite(*g, std::move(b));
  ASSERT_EQ(info.vertices.size(), 1u);
  EXPECT_EQ(info.vertices[h.index], VertexId(0));
  EXPECT_EQ(info.vertex_found, (std::vector<bool>{true}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(*s.GetProperty(VertexId(0), "pop")->as_int64(), 9);
  EXPECT_EQ(*s.GetProperty(VertexId(0), "river")->as_string(), "Thames");
  EXPECT_EQ(*s.GetProperty(VertexId(0), "old")->as_bool(), true);  // merge keeps the rest
  EXPECT_EQ(s.CountVertices(*s.FindLabel("City")), 1u);
  EXPECT_EQ(s.FindVertices("City", "pop", 9).value(), (std::vector<VertexId>{VertexId(0)}));
}

TEST(UpsertTest, ReplaceLeavesExactlyTheKeysAndProperties) {
  auto g = Base();
  WriteBatch b;
  b.UpsertVertex("City", {{"name", "London"}}, {{"pop", 10}}, UpsertMode::kReplace);
  CommitInfo info = MustWrite(*g, std::move(b));
  EXPECT_EQ(info.vertices[0], VertexId(0));
  Snapshot s = g->GetSnapshot();
  EXPECT_FALSE(s.GetProperty(VertexId(0), "old").has_value());
  EXPECT_EQ(*s.GetProperty(VertexId(0), "pop")->as_int64(), 10);
  EXPECT_EQ(*s.GetProperty(VertexId(0), "name")->as_string(), "London");
  EXPECT_EQ(s.FindVertices("City", "pop", 8).value(), std::vector<VertexId>{});
}

TEST(UpsertTest, AddsWhenTheKeyIsFree) {
  auto g = Base();
  WriteBatch b;
  NewVertex a = b.AddVertex("Other");
  NewVertex h = b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 2}});
  NewVertex c = b.AddVertex("Other");
  CommitInfo info = MustWrite(*g, std::move(b));
  ASSERT_EQ(info.vertices.size(), 3u);
  EXPECT_EQ(info.vertices[a.index], VertexId(2));
  EXPECT_EQ(info.vertices[h.index], VertexId(3));
  EXPECT_EQ(info.vertices[c.index], VertexId(4));
  EXPECT_EQ(info.vertex_found, (std::vector<bool>{false, false, false}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.FindVertex("City", "name", "Paris").value(), VertexId(3));
  EXPECT_EQ(*s.GetProperty(VertexId(3), "pop")->as_int64(), 2);
}

TEST(UpsertTest, CompositeKeysInAnyOrder) {
  auto g = Base();
  WriteBatch b;
  b.UpsertVertex("Person", {{"first", "Ada"}, {"last", "L"}}, {{"born", 1815}});
  b.UpsertVertex("Person", {{"last", "L"}, {"first", "Bo"}});
  CommitInfo info = MustWrite(*g, std::move(b));
  EXPECT_EQ(info.vertices, (std::vector<VertexId>{VertexId(1), VertexId(2)}));
  EXPECT_EQ(info.vertex_found, (std::vector<bool>{true, false}));
  EXPECT_EQ(*g->GetSnapshot().GetProperty(VertexId(1), "born")->as_int64(), 1815);
}

TEST(UpsertTest, TheSameKeyTwiceInABatchIsOneVertex) {
  auto g = Base();
  WriteBatch b;
  NewVertex p1 = b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 2}, {"a", 1}});
  NewVertex p2 = b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 3}});
  NewVertex l1 = b.UpsertVertex("City", {{"name", "London"}}, {{"x", 1}});
  NewVertex l2 = b.UpsertVertex("City", {{"name", "London"}}, {{"y", 2}}, UpsertMode::kReplace);
  b.AddEdge("TWIN", p2, l1);
  CommitInfo info = MustWrite(*g, std::move(b));
  EXPECT_EQ(info.vertices[p1.index], VertexId(2));
  EXPECT_EQ(info.vertices[p2.index], VertexId(2));
  EXPECT_EQ(info.vertices[l1.index], VertexId(0));
  EXPECT_EQ(info.vertices[l2.index], VertexId(0));
  EXPECT_EQ(info.vertex_found, (std::vector<bool>{false, false, true, true}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.CountVertices(*s.FindLabel("City")), 2u);
  EXPECT_EQ(*s.GetProperty(VertexId(2), "pop")->as_int64(), 3);
  EXPECT_EQ(*s.GetProperty(VertexId(2), "a")->as_int64(), 1);
  // The replace removed what the first upsert (x) and the vertex (pop, old) had.
  EXPECT_EQ(Keys(s, VertexId(0)), "name,y");
  EXPECT_EQ(s.OutDegree(VertexId(2)), 1u);
}

TEST(UpsertTest, TheHandleNamesTheVertexInLaterOperations) {
  auto g = Base();
  WriteBatch b;
  NewVertex london = b.UpsertVertex("City", {{"name", "London"}});
  NewVertex rome = b.UpsertVertex("City", {{"name", "Rome"}});
  NewVertex p = b.AddVertex("Person", {{"first", "Cy"}, {"last", "M"}});
  b.AddEdge("LIVES_IN", p, london);
  b.AddEdge("VISITED", p, rome);
  b.SetProperty(london, "capital", true);
  b.SetProperty(rome, "capital", true);
  b.RemoveProperty(london, "old");
  CommitInfo info = MustWrite(*g, std::move(b));
  EXPECT_EQ(info.vertices, (std::vector<VertexId>{VertexId(0), VertexId(2), VertexId(3)}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(Keys(s, VertexId(0)), "capital,name,pop");
  EXPECT_EQ(*s.GetProperty(VertexId(2), "capital")->as_bool(), true);
  EXPECT_EQ(s.InDegree(VertexId(0)), 1u);
  EXPECT_EQ(s.InDegree(VertexId(2)), 1u);
}

// An upsert finds what the batch started from: a key the batch removed
// before is set again, one it changed is set back.
TEST(UpsertTest, AFoundVertexGetsItsKeysBackAfterEarlierOperations) {
  auto g = Base();
  WriteBatch b;
  b.RemoveProperty(VertexId(0), "name");
  b.UpsertVertex("City", {{"name", "London"}}, {{"pop", 1}});
  b.SetProperty(VertexId(1), "last", "X");
  b.UpsertVertex("Person", {{"first", "Ada"}, {"last", "L"}});
  CommitInfo info = MustWrite(*g, std::move(b));
  EXPECT_EQ(info.vertices, (std::vector<VertexId>{VertexId(0), VertexId(1)}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.FindVertex("City", "name", "London").value(), VertexId(0));
  EXPECT_EQ(*s.GetProperty(VertexId(1), "last")->as_string(), "L");
}

TEST(UpsertTest, WithoutACoveringUniqueIndexFailsNamingLabelAndKeys) {
  auto g = Base();
  auto upsert = [&](std::string label, std::vector<Property> keys) {
    WriteBatch b;
    b.AddVertex("Noise");
    b.UpsertVertex(label, keys);
    return g->Write(std::move(b));
  };
  ExpectCode(upsert("City", {{"pop", 8}}), StatusCode::kFailedPrecondition,
             {"operation 1", "'City'", "(pop)"});  // an exact index only
  ExpectCode(upsert("Person", {{"last", "L"}}), StatusCode::kFailedPrecondition,
             {"'Person'", "(last)"});  // covers more keys
  ExpectCode(upsert("Town", {{"name", "X"}}), StatusCode::kFailedPrecondition, {"'Town'", "(name)"});
  ExpectCode(upsert("City", {{"name", "London"}, {"pop", 8}}), StatusCode::kFailedPrecondition,
             {"(name, pop)"});
  EXPECT_EQ(g->GetSnapshot().sequence(), Base()->GetSnapshot().sequence());
}

TEST(UpsertTest, BadKeysAreInvalidArguments) {
  auto g = Base();
  auto run = [&](std::function<void(WriteBatch&)> f) {
    WriteBatch b;
    f(b);
    return g->Write(std::move(b));
  };
  ExpectCode(run([](WriteBatch& b) { b.UpsertVertex("City", {}); }), StatusCode::kInvalidArgument,
             {"at least one key"});
  ExpectCode(run([](WriteBatch& b) {
               b.UpsertVertex("City", {{"name", PropertyValue()}});
             }),
             StatusCode::kInvalidArgument, {});
  ExpectCode(run([](WriteBatch& b) {
               b.UpsertVertex("City", {{"name", "Oslo"}}, {{"name", "Bergen"}});
             }),
             StatusCode::kInvalidArgument, {"'name'", "also one of its keys"});
  ExpectCode(run([](WriteBatch& b) {
               b.UpsertVertex("City", {{"name", "a"}, {"name", "b"}});
             }),
             StatusCode::kInvalidArgument, {"duplicate"});
  ExpectCode(run([](WriteBatch& b) {
               b.UpsertVertex("City", {{"name", "Oslo"}}, {{"bad", 0.0 / 0.0}});
             }),
             StatusCode::kInvalidArgument, {"NaN"});
}

TEST(UpsertTest, AnAddAndAnUpsertOfOneKeyCollide) {
  for (const char* city : {"London", "Paris"}) {  // committed, and new in the batch
    for (bool add_first : {true, false}) {
      SCOPED_TRACE(std::string(city) + (add_first ? " add first" : " upsert first"));
      auto g = Base();
      WriteBatch b;
      if (add_first) b.AddVertex("City", {{"name", city}});
      b.UpsertVertex("City", {{"name", city}}, {{"pop", 1}});
      if (!add_first) b.AddVertex("City", {{"name", city}});
      const std::string before = test_util::Dump(g->GetSnapshot());
      ExpectCode(g->Write(std::move(b)), StatusCode::kAlreadyExists, {"'city'", city});
      EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);
    }
  }
}

TEST(UpsertTest, FindingAVertexTheBatchRemovedIsNotFound) {
  auto g = Base();
  WriteBatch b;
  b.RemoveVertex(VertexId(0));
  b.UpsertVertex("City", {{"name", "London"}});
  ExpectCode(g->Write(std::move(b)), StatusCode::kNotFound, {"operation 1", "vertex 0", "removed"});
  WriteBatch c;
  NewVertex p = c.UpsertVertex("City", {{"name", "Paris"}});
  c.RemoveVertex(p);
  c.UpsertVertex("City", {{"name", "Paris"}});
  ExpectCode(g->Write(std::move(c)), StatusCode::kNotFound, {"operation 2", "removed"});
}

TEST(UpsertTest, UpsertsAndExpectationsTogether) {
  auto g = Base();
  // Create-if-absent of a key that another writer may take: the expectation
  // makes "absent" the condition.
  WriteBatch b;
  b.ExpectKeyFree("City", {{"name", "London"}});
  b.UpsertVertex("City", {{"name", "London"}}, {{"pop", 1}});
  ExpectCode(g->Write(std::move(b)), StatusCode::kAborted, {"held by vertex 0"});
  EXPECT_EQ(*g->GetSnapshot().GetProperty(VertexId(0), "pop")->as_int64(), 8);
}

// The log holds the resolved batch: replaying it reaches the same state,
// whichever way each upsert went.
TEST(UpsertTest, ReplayReachesTheSameState) {
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  std::string expected;
  {
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
    Populate(*g);
    WriteBatch b;
    NewVertex l = b.UpsertVertex("City", {{"name", "London"}}, {{"pop", 9}}, UpsertMode::kReplace);
    NewVertex p = b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 2}});
    b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 3}});
    b.AddEdge("ROAD", l, p);
    b.ExpectExists(VertexId(1));
    MustWrite(*g, std::move(b));
    WriteBatch only_expect;
    only_expect.ExpectProperty(VertexId(0), "pop", 9);
    MustWrite(*g, std::move(only_expect));
    WriteBatch found_nothing_to_do;
    found_nothing_to_do.UpsertVertex("City", {{"name", "Paris"}});
    MustWrite(*g, std::move(found_nothing_to_do));
    expected = test_util::Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), expected);
  EXPECT_EQ(g->GetSnapshot().FindVertex("City", "name", "Paris").value(), VertexId(2));
}

}  // namespace
}  // namespace quiver
