// Bad input around indexes (issue 9 section 3; RELIABILITY.md 3.10),
// table-driven like bad_input_test.cc.
//
// Each write row builds one batch against a small base graph that holds a
// unique, a typed ordered and a composite unique index, and names the exact
// status the batch must fail with. Each row runs on a fresh graph, in three
// submission modes (Write; WriteAsync; WriteAsync between two valid batches
// so they may share a commit group), and checks: the code, a non-empty
// message naming what it must name, that the graph and its indexes are
// unchanged (data dump, index list and entry counts, index answers), and that
// the valid neighbours committed. Index lifecycle and query rows check their
// status and that nothing changed.
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

// The base graph: Person 0 {email a@x, age 30, first Ada, last L}, Person 1
// {email b@x, age 40}, City 2 {name c}; edge 0 KNOWS 0->1 {since 2001};
// edge 1 KNOWS 1->0 {since 1999} was removed; an edge-endpoint constraint
// on KNOWS.
std::unique_ptr<Graph> MakeBase() {
  auto g = Graph::OpenInMemory().value();
  WriteBatch b;
  NewVertex p0 = b.AddVertex("Person", {{"email", "a@x"}, {"age", 30}, {"first", "Ada"}, {"last", "L"}});
  NewVertex p1 = b.AddVertex("Person", {{"email", "b@x"}, {"age", 40}});
  b.AddVertex("City", {{"name", "c"}});
  b.AddEdge("KNOWS", p0, p1, {{"since", 2001}});
  b.AddEdge("KNOWS", p1, p0, {{"since", 1999}});  // edge 1, removed below
  EXPECT_TRUE(g->Write(std::move(b)).ok());
  WriteBatch rm;
  rm.RemoveEdge(EdgeId(1));
  EXPECT_TRUE(g->Write(std::move(rm)).ok());
  auto create = [&g](IndexSpec spec) {
    Status s = g->CreateIndex(spec);
    EXPECT_TRUE(s.ok()) << s.ToString();
  };
  create({.name = "email", .label = "Person", .keys = {"email"}, .kind = IndexKind::kUnique});
  create({.name = "age",
          .label = "Person",
          .keys = {"age"},
          .kind = IndexKind::kOrdered,
          .type = ValueType::kInt64});
  create({.name = "full", .label = "Person", .keys = {"first", "last"}, .kind = IndexKind::kUnique});
  create({.name = "since",
          .element = ElementKind::kEdge,
          .label = "KNOWS",
          .keys = {"since"},
          .kind = IndexKind::kUnique,
          .type = ValueType::kInt64});
  create({.name = "knows_once",
          .element = ElementKind::kEdge,
          .label = "KNOWS",
          .kind = IndexKind::kUniqueEndpoints});
  return g;
}

// Everything users can see: the data and every index with its answers.
std::string State(const Snapshot& s) {
  std::string out = test_util::Dump(s);
  for (const IndexInfo& i : s.Indexes())
    out += "index " + i.spec.name + " state=" + std::to_string(static_cast<int>(i.state)) +
           " entries=" + std::to_string(i.entries) + "\n";
  auto ids = [](const auto& r) {
    std::string t;
    if (!r.ok()) return r.status().ToString();
    for (auto id : *r) t += std::to_string(id.value()) + ",";
    return t;
  };
  out += "ages " + ids(s.VerticesInRange("Person", "age", {})) + "\n";
  for (const char* e : {"a@x", "b@x", "n@x"})
    out += std::string(e) + " " + ids(s.FindVertices("Person", "email", e)) + "\n";
  out += "since " + ids(s.EdgesInRange("KNOWS", "since", {})) + "\n";
  for (const LabelCount& l : s.Labels()) out += std::string(l.name) + "=" + std::to_string(l.vertices) + "\n";
  return out;
}

struct WriteCase {
  const char* name;
  StatusCode code;
  std::function<void(WriteBatch&)> build;
  std::vector<std::string> message_has;  // substrings the message must contain
};

std::vector<WriteCase> WriteCases() {
  const VertexId p0(0), p1(1), city(2);
  const EdgeId knows(0);
  return {
      // Unique against committed data.
      {"add a duplicate of a committed key",
       StatusCode::kAlreadyExists,
       [](WriteBatch& b) {
         b.AddVertex("Person", {{"email", "a@x"}});
       },
       {"'email'", "\"a@x\"", "vertex 0", "vertex 3"}},
      {"set a committed element to another's key",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) { b.SetProperty(p1, "email", "a@x"); },
       {"\"a@x\"", "vertex 0", "vertex 1"}},
      {"composite key taken",
       StatusCode::kAlreadyExists,
       [](WriteBatch& b) {
         b.AddVertex("Person", {{"first", "Ada"}, {"last", "L"}});
       },
       {"'full'", "vertex 0"}},
      {"edge unique key taken",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.AddEdge("KNOWS", p1, p0, {{"since", 2001}});
       },
       {"'since'", "edge 0", "edge 2"}},
      {"edge pair taken (edge-endpoint constraint)",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.AddEdge("KNOWS", p0, p1, {{"since", 5}});
       },
       {"'knows_once'", "pair (0 -> 1)", "held by edge 0", "edge 2 (added by this batch)"}},
      {"an upsert that finds an edge and an add of its pair",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.UpsertEdge("KNOWS", p0, p1, {{"w", 1}});
         b.AddEdge("KNOWS", p0, p1);
       },
       {"'knows_once'", "pair (0 -> 1)", "edge 0", "edge 2"}},
      {"two adds of one edge pair",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.AddEdge("KNOWS", p1, p0);
         b.AddEdge("KNOWS", p1, p0);
       },
       {"'knows_once'", "pair (1 -> 0)", "edge 2 (added by this batch)", "edge 3 (added by this batch)"}},
      {"an add and an upsert of one edge pair",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.AddEdge("KNOWS", p1, p0);
         b.UpsertEdge("KNOWS", p1, p0, {{"since", 7}});
       },
       {"'knows_once'", "pair (1 -> 0)", "edge 2", "edge 3"}},
      {"two edge upserts that collide on a unique property",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.UpsertEdge("KNOWS", p1, p0, {{"since", 7}});
         b.UpsertEdge("KNOWS", p1, city, {{"since", 7}});
       },
       {"'since'", "7", "edge 2", "edge 3"}},
      {"an edge upsert without an edge-endpoint constraint",
       StatusCode::kFailedPrecondition,
       [=](WriteBatch& b) { b.UpsertEdge("LIKES", p0, p1); },
       {"operation 0", "'LIKES'", "edge-endpoint constraint"}},
      {"an edge upsert that finds an edge the batch removed",
       StatusCode::kNotFound,
       [=](WriteBatch& b) {
         b.RemoveEdge(knows);
         b.UpsertEdge("KNOWS", p0, p1);
       },
       {"operation 1", "edge 0", "removed earlier"}},
      // Unique within one batch.
      {"two adds with one key",
       StatusCode::kAlreadyExists,
       [](WriteBatch& b) {
         b.AddVertex("Person", {{"email", "n@x"}});
         b.AddVertex("Person", {{"email", "n@x"}});
       },
       {"\"n@x\"", "vertex 3", "vertex 4"}},
      {"an add and a set that collide",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.AddVertex("Person", {{"email", "n@x"}});
         b.SetProperty(p1, "email", "n@x");
       },
       {"\"n@x\""}},
      {"two sets that collide",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.SetProperty(p0, "email", "n@x");
         b.SetProperty(p1, "email", "n@x");
       },
       {"vertex 0", "vertex 1"}},
      {"a key freed and taken twice",
       StatusCode::kAlreadyExists,
       [=](WriteBatch& b) {
         b.RemoveVertex(p0);
         b.AddVertex("Person", {{"email", "a@x"}});
         b.AddVertex("Person", {{"email", "a@x"}});
       },
       {"\"a@x\""}},
      // Declared types.
      {"string into an int64 index",
       StatusCode::kInvalidArgument,
       [=](WriteBatch& b) { b.SetProperty(p0, "age", "thirty"); },
       {"'age'", "string", "int64", "vertex 0"}},
      {"double into an int64 index on add",
       StatusCode::kInvalidArgument,
       [](WriteBatch& b) {
         b.AddVertex("Person", {{"age", 30.5}});
       },
       {"double", "int64"}},
      {"vector into an int64 index",
       StatusCode::kInvalidArgument,
       [=](WriteBatch& b) { b.SetProperty(p1, "age", FloatVector{1.0f}); },
       {"float_vector"}},
      {"string list into an int64 index",
       StatusCode::kInvalidArgument,
       [=](WriteBatch& b) { b.SetProperty(p1, "age", StringList{"30"}); },
       {"string_list"}},
      {"string into a typed edge index",
       StatusCode::kInvalidArgument,
       [=](WriteBatch& b) { b.SetProperty(knows, "since", "long ago"); },
       {"edge 0", "'since'"}},
      // Too long a key.
      {"key over kMaxKeyBytes",
       StatusCode::kInvalidArgument,
       [=](WriteBatch& b) { b.SetProperty(p1, "email", std::string(1100, 'x')); },
       {"'email'", "bytes"}},
      // The checks run after structural ones: a NotFound still wins.
      {"unique violation behind a dead id",
       StatusCode::kNotFound,
       [=](WriteBatch& b) {
         b.AddVertex("Person", {{"email", "a@x"}});
         b.RemoveVertex(VertexId(77));
       },
       {"77"}},
      // Upserts (docs/writes.md).
      {"upsert naming keys no unique index covers",
       StatusCode::kFailedPrecondition,
       [](WriteBatch& b) {
         b.UpsertVertex("Person", {{"age", 30}});
       },
       {"operation 0", "'Person'", "(age)"}},
      {"upsert naming part of a composite unique key",
       StatusCode::kFailedPrecondition,
       [](WriteBatch& b) {
         b.UpsertVertex("Person", {{"first", "Ada"}});
       },
       {"'Person'", "(first)"}},
      {"upsert of a label no index covers",
       StatusCode::kFailedPrecondition,
       [](WriteBatch& b) {
         b.UpsertVertex("City", {{"name", "c"}});
       },
       {"'City'", "(name)"}},
      {"an add and an upsert of one key",
       StatusCode::kAlreadyExists,
       [](WriteBatch& b) {
         b.AddVertex("Person", {{"email", "n@x"}});
         b.UpsertVertex("Person", {{"email", "n@x"}}, {{"age", 5}});
       },
       {"'email'", "\"n@x\"", "vertex 3", "vertex 4"}},
      {"an upsert and an add of a committed key",
       StatusCode::kAlreadyExists,
       [](WriteBatch& b) {
         b.UpsertVertex("Person", {{"email", "a@x"}}, {{"age", 5}});
         b.AddVertex("Person", {{"email", "a@x"}});
       },
       {"\"a@x\"", "vertex 0", "vertex 3"}},
      {"two upserts that collide",
       StatusCode::kAlreadyExists,
       [](WriteBatch& b) {
         b.UpsertVertex("Person", {{"first", "Zed"}, {"last", "Q"}}, {{"email", "n@x"}});
         b.UpsertVertex("Person", {{"email", "n@x"}});
       },
       {"'email'", "\"n@x\"", "vertex 3", "vertex 4"}},
      {"an upsert that collides with committed data",
       StatusCode::kAlreadyExists,
       [](WriteBatch& b) {
         b.UpsertVertex("Person", {{"first", "Zed"}, {"last", "Q"}}, {{"email", "a@x"}});
       },
       {"'email'", "\"a@x\"", "vertex 0", "vertex 3"}},
      {"an upsert key of the wrong type for a typed index",
       StatusCode::kInvalidArgument,
       [](WriteBatch& b) {
         b.UpsertVertex("Person", {{"email", "n@x"}}, {{"age", "old"}});
       },
       {"'age'", "int64"}},
      // Expectations.
      {"expect a property of a removed edge",
       StatusCode::kAborted,
       [](WriteBatch& b) {
         b.AddVertex("Person", {{"email", "n@x"}});
         b.ExpectProperty(EdgeId(1), "since", 1999);
       },
       {"expectation 0 (operation 1)", "edge 1 does not exist"}},
      {"expect a removed edge to exist",
       StatusCode::kAborted,
       [](WriteBatch& b) { b.ExpectExists(EdgeId(1)); },
       {"edge 1 does not exist"}},
      {"expect a taken key free",
       StatusCode::kAborted,
       [](WriteBatch& b) {
         b.ExpectKeyFree("Person", {{"last", "L"}, {"first", "Ada"}});
         b.AddVertex("Person", {{"first", "Ada"}, {"last", "M"}});
       },
       {"'full'", "held by vertex 0"}},
      {"expect a key free that no unique index covers",
       StatusCode::kFailedPrecondition,
       [](WriteBatch& b) {
         b.ExpectKeyFree("Person", {{"age", 30}});
       },
       {"'Person'", "(age)"}},
      {"type error on a vertex of another label is fine, but not on a Person",
       StatusCode::kInvalidArgument,
       [=](WriteBatch& b) {
         b.SetProperty(city, "age", "old");
         b.AddVertex("Person", {{"age", "young"}});
       },
       {"vertex 3"}},
  };
}

enum class Mode { kWrite, kAsync, kSandwiched };

TEST(IndexBadInputTest, EveryBadBatchFailsWholeWithItsCode) {
  for (const WriteCase& c : WriteCases()) {
    for (Mode mode : {Mode::kWrite, Mode::kAsync, Mode::kSandwiched}) {
      SCOPED_TRACE(std::string(c.name) + " mode " + std::to_string(static_cast<int>(mode)));
      auto g = MakeBase();
      const std::string before = State(g->GetSnapshot());
      WriteBatch bad;
      c.build(bad);
      Result<CommitInfo> r = Status(StatusCode::kInternal, "not run");
      if (mode == Mode::kWrite) {
        r = g->Write(std::move(bad));
      } else if (mode == Mode::kAsync) {
        r = g->WriteAsync(std::move(bad)).get();
      } else {
        // Valid neighbours: they touch nothing the bad batch reads, and
        // add no element (the messages name the ids new elements get).
        WriteBatch pre, post;
        pre.SetProperty(EdgeId(0), "visits", 1);
        post.SetProperty(EdgeId(0), "visits", 2);
        auto f1 = g->WriteAsync(std::move(pre));
        auto f2 = g->WriteAsync(std::move(bad));
        auto f3 = g->WriteAsync(std::move(post));
        ASSERT_TRUE(f1.get().ok());
        r = f2.get();
        ASSERT_TRUE(f3.get().ok());
      }
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
      EXPECT_FALSE(r.status().message().empty());
      for (const std::string& part : c.message_has)
        EXPECT_NE(r.status().message().find(part), std::string::npos)
            << "message lacks '" << part << "': " << r.status().ToString();
      if (mode != Mode::kSandwiched) {
        EXPECT_EQ(State(g->GetSnapshot()), before);
      } else {
        Snapshot s = g->GetSnapshot();
        EXPECT_EQ(s.GetProperty(EdgeId(0), "visits")->as_int64(), 2);
        EXPECT_EQ(s.CountVertices(*s.FindLabel("Person")), 2u);
        EXPECT_EQ(s.sequence(), g->GetSnapshot().sequence());
      }
      WriteBatch ok;
      ok.AddVertex("Person", {{"email", "fresh@x"}, {"age", 1}});
      EXPECT_TRUE(g->Write(std::move(ok)).ok());
    }
  }
}

// What is fine: a key moved away and taken in one batch, a remove and a
// re-add, null in a typed index (not indexed), many nulls in a unique one.
TEST(IndexBadInputTest, BoundaryWritesAreAccepted) {
  auto g = MakeBase();
  WriteBatch b;
  b.SetProperty(VertexId(0), "email", "z@x");
  b.SetProperty(VertexId(1), "email", "a@x");
  b.RemoveEdge(EdgeId(0));
  b.AddEdge("KNOWS", VertexId(1), VertexId(0), {{"since", 2001}});
  b.SetProperty(VertexId(0), "age", nullptr);
  b.AddVertex("Person", {{"email", nullptr}});
  b.AddVertex("Person", {{"email", nullptr}});
  b.AddVertex("Person", {{"email", std::string(900, 'x')}});
  b.SetProperty(VertexId(2), "age", "a City may hold anything");
  ASSERT_TRUE(g->Write(std::move(b)).ok());
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.FindVertex("Person", "email", "a@x").value(), VertexId(1));
  EXPECT_EQ(s.FindEdge("KNOWS", "since", 2001).value(), EdgeId(2));
  EXPECT_EQ(s.CountVerticesInRange("Person", "age", {}).value(), 1u);
}

TEST(IndexBadInputTest, LifecycleErrorsChangeNothing) {
  auto g = MakeBase();
  const std::string before = State(g->GetSnapshot());
  const SequenceNumber seq = g->GetSnapshot().sequence();
  struct Row {
    const char* name;
    IndexSpec spec;
    StatusCode code;
  };
  const std::vector<Row> rows = {
      {"duplicate name", {.name = "email", .label = "City", .keys = {"name"}}, StatusCode::kAlreadyExists},
      {"empty name", {.name = "", .label = "City", .keys = {"name"}}, StatusCode::kInvalidArgument},
      {"empty label", {.name = "x", .label = "", .keys = {"name"}}, StatusCode::kInvalidArgument},
      {"no keys", {.name = "x", .label = "City", .keys = {}}, StatusCode::kInvalidArgument},
      {"empty key", {.name = "x", .label = "City", .keys = {""}}, StatusCode::kInvalidArgument},
      {"a key twice", {.name = "x", .label = "City", .keys = {"a", "b", "a"}}, StatusCode::kInvalidArgument},
      {"too many keys",
       {.name = "x", .label = "City", .keys = std::vector<std::string>(kMaxIndexKeys + 1, "k")},
       StatusCode::kInvalidArgument},
      {"vector type",
       {.name = "x", .label = "City", .keys = {"name"}, .type = ValueType::kFloatVector},
       StatusCode::kInvalidArgument},
      {"string list type",
       {.name = "x", .label = "City", .keys = {"name"}, .type = ValueType::kStringList},
       StatusCode::kInvalidArgument},
      {"type beyond the known ones",
       {.name = "x", .label = "City", .keys = {"name"}, .type = static_cast<ValueType>(8)},
       StatusCode::kInvalidArgument},
      {"null type",
       {.name = "x", .label = "City", .keys = {"name"}, .type = ValueType::kNull},
       StatusCode::kInvalidArgument},
      {"bad UTF-8 name",
       {.name = "\xC0\x80", .label = "City", .keys = {"name"}},
       StatusCode::kInvalidArgument},
      {"edge-endpoint constraint on vertices",
       {.name = "x", .label = "City", .kind = IndexKind::kUniqueEndpoints},
       StatusCode::kInvalidArgument},
      {"edge-endpoint constraint with keys",
       {.name = "x",
        .element = ElementKind::kEdge,
        .label = "KNOWS",
        .keys = {"since"},
        .kind = IndexKind::kUniqueEndpoints},
       StatusCode::kInvalidArgument},
      {"edge-endpoint constraint with a type",
       {.name = "x",
        .element = ElementKind::kEdge,
        .label = "KNOWS",
        .kind = IndexKind::kUniqueEndpoints,
        .type = ValueType::kInt64},
       StatusCode::kInvalidArgument},
      {"unknown kind",
       {.name = "x", .label = "City", .keys = {"name"}, .kind = static_cast<IndexKind>(9)},
       StatusCode::kInvalidArgument},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    Status s = g->CreateIndex(row.spec);
    EXPECT_EQ(s.code(), row.code) << s.ToString();
    EXPECT_EQ(g->GetSnapshot().sequence(), seq) << "a refused spec commits nothing";
    EXPECT_EQ(State(g->GetSnapshot()), before);
  }
  EXPECT_EQ(g->DropIndex("nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(g->DropIndex("").code(), StatusCode::kNotFound);
  EXPECT_EQ(g->GetSnapshot().sequence(), seq);

  // Data that violates the spec: the declaration is taken back (two
  // commits, nothing else changed).
  struct DataRow {
    const char* name;
    IndexSpec spec;
    StatusCode code;
    std::vector<std::string> message_has;
  };
  WriteBatch dup;
  NewVertex c3 = dup.AddVertex("City", {{"name", "c"}, {"pop", 1.5}});
  dup.AddVertex("City", {{"name", 7}});
  dup.AddEdge("ROAD", VertexId(2), c3);  // edges 2 and 3: one pair twice
  dup.AddEdge("ROAD", VertexId(2), c3);
  ASSERT_TRUE(g->Write(std::move(dup)).ok());
  const std::string with_cities = State(g->GetSnapshot());
  const std::vector<DataRow> data_rows = {
      {"unique over repeated keys",
       {.name = "u", .label = "City", .keys = {"name"}, .kind = IndexKind::kUnique},
       StatusCode::kAlreadyExists,
       {"\"c\"", "vertex 2", "vertex 3"}},
      {"edge-endpoint constraint over a repeated pair",
       {.name = "r", .element = ElementKind::kEdge, .label = "ROAD", .kind = IndexKind::kUniqueEndpoints},
       StatusCode::kAlreadyExists,
       {"'r'", "pair (2 -> 3)", "edge 2", "edge 3"}},
      {"typed over mixed types",
       {.name = "t", .label = "City", .keys = {"name"}, .type = ValueType::kString},
       StatusCode::kInvalidArgument,
       {"vertex 4", "int64", "string"}},
  };
  for (const DataRow& row : data_rows) {
    SCOPED_TRACE(row.name);
    const SequenceNumber at = g->GetSnapshot().sequence();
    Status s = g->CreateIndex(row.spec);
    EXPECT_EQ(s.code(), row.code) << s.ToString();
    for (const std::string& part : row.message_has)
      EXPECT_NE(s.message().find(part), std::string::npos) << "lacks '" << part << "': " << s.ToString();
    Snapshot after = g->GetSnapshot();
    EXPECT_EQ(after.sequence(), at + 2);
    std::string state = State(after);
    state.replace(0, state.find(' '), "seq=" + std::to_string(at));
    std::string expected = with_cities;
    expected.replace(0, expected.find(' '), "seq=" + std::to_string(at));
    EXPECT_EQ(state, expected);
  }
}

TEST(IndexBadInputTest, BadQueriesGetPreciseStatuses) {
  auto g = MakeBase();
  Snapshot s = g->GetSnapshot();
  const double nan = std::nan("");
  struct Row {
    const char* name;
    Status status;
    StatusCode code;
  };
  std::vector<PropertyValue> one = {"Ada"};
  const std::vector<Row> rows = {
      {"wrong-type lo bound", s.VerticesInRange("Person", "age", {.lo = RangeBound{"x"}}).status(),
       StatusCode::kInvalidArgument},
      {"wrong-type hi bound", s.CountVerticesInRange("Person", "age", {.hi = RangeBound{1.5}}).status(),
       StatusCode::kInvalidArgument},
      {"NaN bound on a double-less index",
       s.VerticesInRange("Person", "age", {.lo = RangeBound{nan}}).status(), StatusCode::kInvalidArgument},
      {"null bound", s.VerticesInRange("Person", "age", {.hi = RangeBound{nullptr}}).status(),
       StatusCode::kInvalidArgument},
      {"prefix on an int64 index", s.VerticesInRange("Person", "age", {.prefix = "1"}).status(),
       StatusCode::kInvalidArgument},
      {"prefix and bounds", s.VerticesInRange("Person", "age", {.lo = RangeBound{1}, .prefix = "1"}).status(),
       StatusCode::kInvalidArgument},
      {"range without an ordered index", s.VerticesInRange("Person", "email", {}).status(),
       StatusCode::kFailedPrecondition},
      {"find without an index", s.FindVertices("City", "name", "c").status(),
       StatusCode::kFailedPrecondition},
      {"find one without a unique index", s.FindVertex("Person", "age", 30).status(),
       StatusCode::kFailedPrecondition},
      {"null lookup", s.FindVertices("Person", "email", nullptr).status(), StatusCode::kInvalidArgument},
      {"vector lookup", s.FindVertices("Person", "email", FloatVector{1.0f}).status(),
       StatusCode::kInvalidArgument},
      {"string list lookup", s.FindVertices("Person", "email", StringList{"a@b"}).status(),
       StatusCode::kInvalidArgument},
      {"wrong-type lookup", s.FindVertices("Person", "age", "30").status(), StatusCode::kInvalidArgument},
      {"NaN lookup", s.FindVertices("Person", "email", nan).status(), StatusCode::kInvalidArgument},
      {"composite with one value", s.FindVerticesByIndex("full", one).status(), StatusCode::kInvalidArgument},
      {"unknown index", s.FindVerticesByIndex("nope", one).status(), StatusCode::kNotFound},
      {"vertex query on an edge index", s.FindVerticesByIndex("since", one).status(),
       StatusCode::kInvalidArgument},
      {"unique lookup on a non-unique index", s.FindVertexByIndex("age", one).status(),
       StatusCode::kFailedPrecondition},
      {"property lookup on an edge-endpoint constraint", s.FindEdgesByIndex("knows_once", one).status(),
       StatusCode::kInvalidArgument},
      {"unique lookup on an edge-endpoint constraint", s.FindEdgeByIndex("knows_once", one).status(),
       StatusCode::kInvalidArgument},
      {"default snapshot", Snapshot().FindVertices("Person", "email", "a@x").status(),
       StatusCode::kFailedPrecondition},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.status.code(), row.code) << row.status.ToString();
    EXPECT_FALSE(row.status.message().empty());
  }
}

}  // namespace
}  // namespace quiver
