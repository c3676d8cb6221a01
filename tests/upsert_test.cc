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

// The resolver's and the index checks' bookkeeping within one batch (keys
// per vertex as views of the batch's names, final keys in shared lists):
// each case judged on the state after the whole batch.
TEST(UpsertTest, AKeyAddedRemovedAndTakenAgainInOneBatch) {
  auto g = Base();
  // An added vertex removed again frees its key for an upsert (which does
  // not see the batch's plain adds) and for another add.
  WriteBatch b;
  NewVertex first = b.AddVertex("City", {{"name", "Paris"}});
  b.RemoveVertex(first);
  NewVertex up = b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 2}});
  b.RemoveVertex(up);
  b.AddVertex("City", {{"name", "Paris"}, {"pop", 3}});
  MustWrite(*g, std::move(b));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.CountVertices(*s.FindLabel("City")), 2u);
  const VertexId paris = s.FindVertex("City", "name", "Paris").value().value();
  EXPECT_EQ(*s.GetProperty(paris, "pop")->as_int64(), 3);

  // The committed holder gives its key up (property removed), another
  // vertex takes it.
  WriteBatch c;
  c.RemoveProperty(VertexId(0), "name");
  NewVertex london = c.AddVertex("City", {{"name", "London"}});
  CommitInfo info = MustWrite(*g, std::move(c));
  EXPECT_EQ(g->GetSnapshot().FindVertex("City", "name", "London").value(), info.vertices[london.index]);

  // The holder moves away and back within the batch: it still holds the
  // key, so the add collides, and the message names both.
  const VertexId holder = info.vertices[london.index];
  WriteBatch d;
  d.SetProperty(holder, "name", "Lyon");
  d.SetProperty(holder, "name", "London");
  d.AddVertex("City", {{"name", "London"}});
  const std::string before = test_util::Dump(g->GetSnapshot());
  ExpectCode(g->Write(std::move(d)), StatusCode::kAlreadyExists,
             {"'city'", "London", "vertex " + std::to_string(holder.value())});
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);

  // Removed and set back on the holder alone: no collision with itself.
  WriteBatch e;
  e.RemoveProperty(holder, "name");
  e.SetProperty(holder, "name", "London");
  MustWrite(*g, std::move(e));
  EXPECT_EQ(g->GetSnapshot().FindVertex("City", "name", "London").value(), holder);

  // Two added vertices end with one key: the later set decides, and a set
  // that moves the first away again clears it.
  WriteBatch f;
  NewVertex x = f.AddVertex("City", {{"name", "X"}});
  NewVertex y = f.AddVertex("City", {{"name", "Y"}});
  f.SetProperty(y, "name", "X");
  ExpectCode(g->Write(std::move(f)), StatusCode::kAlreadyExists, {"'city'", "\"X\"", "added by this batch"});
  WriteBatch h;
  x = h.AddVertex("City", {{"name", "X"}});
  y = h.AddVertex("City", {{"name", "Y"}});
  h.SetProperty(y, "name", "X");
  h.SetProperty(x, "name", "Z");
  info = MustWrite(*g, std::move(h));
  EXPECT_EQ(g->GetSnapshot().FindVertex("City", "name", "X").value(), info.vertices[y.index]);
  EXPECT_EQ(g->GetSnapshot().FindVertex("City", "name", "Z").value(), info.vertices[x.index]);
}

TEST(UpsertTest, ARepeatedUpsertSetsItsKeyBackAndReplaceRemovesEveryKeyTheBatchSetOnce) {
  auto g = Base();
  // The first upsert adds Paris, the batch renames it, the repeat names the
  // same vertex and sets its key back.
  WriteBatch b;
  NewVertex p1 = b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 2}});
  b.SetProperty(p1, "name", "Rome");
  NewVertex p2 = b.UpsertVertex("City", {{"name", "Paris"}}, {{"pop", 3}});
  CommitInfo info = MustWrite(*g, std::move(b));
  EXPECT_EQ(info.vertices[p1.index], info.vertices[p2.index]);
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.CountVertices(*s.FindLabel("City")), 2u);
  EXPECT_EQ(s.FindVertex("City", "name", "Paris").value(), info.vertices[p1.index]);
  EXPECT_EQ(s.FindVertex("City", "name", "Rome").value(), std::nullopt);
  EXPECT_EQ(*s.GetProperty(info.vertices[p1.index], "pop")->as_int64(), 3);

  // Replace on a found vertex after the batch set keys on it, some twice
  // and one removed: each goes once, whatever the order it was touched in.
  WriteBatch c;
  c.SetProperty(VertexId(0), "b", 1);
  c.SetProperty(VertexId(0), "a", 1);
  c.SetProperty(VertexId(0), "b", 2);
  c.RemoveProperty(VertexId(0), "c");
  c.SetProperty(VertexId(0), "c", 3);
  c.SetProperty(VertexId(0), "name", "Leeds");
  c.UpsertVertex("City", {{"name", "London"}}, {{"pop", 5}, {"a", 7}}, UpsertMode::kReplace);
  MustWrite(*g, std::move(c));
  Snapshot t = g->GetSnapshot();
  EXPECT_EQ(Keys(t, VertexId(0)), "a,name,pop");
  EXPECT_EQ(*t.GetProperty(VertexId(0), "a")->as_int64(), 7);
  EXPECT_EQ(t.FindVertex("City", "name", "London").value(), VertexId(0));
  EXPECT_EQ(t.FindVertex("City", "name", "Leeds").value(), std::nullopt);
}

TEST(UpsertTest, KeyExpectationsEncodeTheKeysInTheIndexOrder) {
  auto g = Base();  // vertex 1: Person {first "Ada", last "L"}, index full (last, first)
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed);
    auto keys = [&](const char* first, const char* last) {
      std::vector<Property> k{{"first", first}, {"last", last}};
      if (reversed) std::swap(k[0], k[1]);
      return k;
    };
    WriteBatch held;
    held.ExpectKeyFree("Person", keys("Ada", "L"));
    held.AddVertex("Noise");
    Result<CommitInfo> r = g->Write(std::move(held));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kAborted) << r.status().ToString();
    EXPECT_NE(r.status().message().find("held by vertex 1"), std::string::npos) << r.status().message();
    // Judged before the batch: the batch removing the holder does not free it.
    WriteBatch removes;
    removes.RemoveVertex(VertexId(1));
    removes.ExpectKeyFree("Person", keys("Ada", "L"));
    EXPECT_EQ(g->Write(std::move(removes)).status().code(), StatusCode::kAborted);
    // Free (the values swapped are another key), and an upsert of it adds.
    WriteBatch free;
    free.ExpectKeyFree("Person", keys("L", "Ada"));
    free.ExpectKeyFree("Person", keys("Bo", "L"));
    NewVertex bo = free.UpsertVertex("Person", keys("Bo", "L"));
    CommitInfo info = MustWrite(*g, std::move(free));
    EXPECT_FALSE(info.vertex_found[bo.index]);
    WriteBatch undo;
    undo.RemoveVertex(info.vertices[bo.index]);
    MustWrite(*g, std::move(undo));
  }
  WriteBatch nan;
  nan.ExpectKeyFree("Person", {{"first", 0.0 / 0.0}, {"last", "L"}});
  ExpectCode(g->Write(std::move(nan)), StatusCode::kInvalidArgument, {"NaN"});
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
