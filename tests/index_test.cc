// Label and type sets, key counts and property indexes (include/quiver/
// index.h, src/index/): what each query answers on small graphs built to
// show one rule each, and that indexes survive reopening (WAL replay and a
// checkpoint) through the simulated file system.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/memory.h"
#include "base/parallel.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "index/index_build.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

std::vector<std::uint64_t> Raw(const std::vector<VertexId>& ids) {
  std::vector<std::uint64_t> out;
  for (VertexId v : ids) out.push_back(v.value());
  return out;
}
std::vector<std::uint64_t> Raw(const std::vector<EdgeId>& ids) {
  std::vector<std::uint64_t> out;
  for (EdgeId e : ids) out.push_back(e.value());
  return out;
}
template <typename R>
std::vector<std::uint64_t> Ids(const R& range) {
  std::vector<std::uint64_t> out;
  for (auto id : range) out.push_back(id.value());
  return out;
}
using V = std::vector<std::uint64_t>;

std::unique_ptr<Graph> NewGraph() { return Graph::OpenInMemory().value(); }

CommitInfo MustWrite(Graph& g, WriteBatch b) {
  Result<CommitInfo> r = g.Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : CommitInfo{};
}

IndexSpec Spec(std::string name, std::string label, std::vector<std::string> keys, IndexKind kind,
               std::optional<ValueType> type = std::nullopt) {
  return IndexSpec{.name = std::move(name),
                   .element = ElementKind::kVertex,
                   .label = std::move(label),
                   .keys = std::move(keys),
                   .kind = kind,
                   .type = type};
}

TEST(IndexTest, LabelSetsIterateAndCount) {
  auto g = NewGraph();
  WriteBatch b;
  for (int i = 0; i < 10; ++i) b.AddVertex(i % 3 == 0 ? "Three" : "Other", {{"i", i}});
  MustWrite(*g, std::move(b));
  WriteBatch r;
  r.RemoveVertex(VertexId(3));
  r.RemoveVertex(VertexId(4));
  r.AddEdge("E", VertexId(0), VertexId(1));
  r.AddEdge("E", VertexId(1), VertexId(2), {{"w", 1}});
  r.AddEdge("F", VertexId(2), VertexId(0));
  MustWrite(*g, std::move(r));
  Snapshot s = g->GetSnapshot();
  LabelId three = *s.FindLabel("Three"), other = *s.FindLabel("Other");
  EXPECT_EQ(Ids(s.Vertices(three)), (V{0, 6, 9}));
  EXPECT_EQ(Ids(s.Vertices(other)), (V{1, 2, 5, 7, 8}));
  EXPECT_EQ(s.CountVertices(three), 3u);
  EXPECT_EQ(s.CountVertices(other), 5u);
  EXPECT_EQ(s.CountVertices(LabelId(99)), 0u);
  EXPECT_EQ(s.CountEdges(*s.FindEdgeType("E")), 2u);
  EXPECT_EQ(Ids(s.Edges(*s.FindEdgeType("F"))), (V{2}));
  std::vector<LabelCount> labels = s.Labels();
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[0].name, "Three");
  EXPECT_EQ(labels[0].vertices, 3u);
  EXPECT_EQ(labels[1].vertices, 5u);
  std::vector<EdgeTypeCount> types = s.EdgeTypes();
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[1].name, "F");
  std::vector<PropertyKeyCount> keys = s.PropertyKeys();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].name, "i");
  EXPECT_EQ(keys[0].vertices, 8u);
  EXPECT_EQ(keys[0].edges, 0u);
  EXPECT_EQ(keys[1].name, "w");
  EXPECT_EQ(keys[1].edges, 1u);

  // Iterators copy their cursor: two walks over one range agree.
  VertexRange range = s.Vertices(other);
  auto it = range.begin();
  ++it;
  auto copy = it;
  ++it;
  EXPECT_EQ((*copy).value(), 2u);
  EXPECT_EQ((*it).value(), 5u);
  EXPECT_EQ(std::ranges::distance(range), 5);
}

// Label sets over many 680-id leaves: iteration (batches of 16 ids, each
// batch after the first a seek), the first id after the set's first leaf
// lost ids, and a label whose set emptied.
TEST(IndexTest, LargeLabelSetsIterateFromTheirFirstId) {
  auto g = NewGraph();
  WriteBatch b;
  for (int i = 0; i < 5000; ++i) b.AddVertex(i % 5 == 0 ? "Few" : "Many");
  b.AddVertex("Gone");
  MustWrite(*g, std::move(b));
  V many, few;
  for (std::uint64_t i = 0; i < 5000; ++i) (i % 5 == 0 ? few : many).push_back(i);
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(Ids(s.Vertices(*s.FindLabel("Many"))), many);
  EXPECT_EQ(Ids(s.Vertices(*s.FindLabel("Few"))), few);
  EXPECT_EQ((*s.Vertices(*s.FindLabel("Gone")).begin()).value(), 5000u);

  WriteBatch r;
  for (std::uint64_t i = 0; i < 700; ++i)
    if (i % 5 != 0) r.RemoveVertex(VertexId(i));  // the set's whole first leaf and more
  r.RemoveVertex(VertexId(5000));
  MustWrite(*g, std::move(r));
  many.erase(many.begin(), std::find(many.begin(), many.end(), 701u));
  s = g->GetSnapshot();
  const LabelId m = *s.FindLabel("Many"), gone = *s.FindLabel("Gone");
  EXPECT_EQ((*s.Vertices(m).begin()).value(), 701u);
  EXPECT_EQ(Ids(s.Vertices(m)), many);
  EXPECT_EQ(s.CountVertices(m), many.size());
  EXPECT_EQ(s.CountVertices(gone), 0u);
  EXPECT_TRUE(s.Vertices(gone).begin() == s.Vertices(gone).end());
  EXPECT_EQ(std::ranges::distance(s.Vertices(gone)), 0);
}

// Range scans over an int64 index of many leaves (145 entries each), every
// kind of range against a sorted copy: bounds inclusive and exclusive, at
// and between keys, open ends, descending, limits, a range inside one leaf,
// one covering leaves whole, empty ones. Three ids share each key.
TEST(IndexTest, OrderedRangeScansMatchASortedCopy) {
  auto g = NewGraph();
  ASSERT_TRUE(g->CreateIndex(Spec("n_ordered", "N", {"n"}, IndexKind::kOrdered, ValueType::kInt64)).ok());
  constexpr std::int64_t kKeys = 1500;  // keys 0, 2, ..., 2998; ids 3 per key, added in shuffled key order
  std::vector<std::pair<std::int64_t, std::uint64_t>> model;
  WriteBatch b;
  for (std::uint64_t id = 0; id < 3 * kKeys; ++id) {
    const std::int64_t key = 2 * static_cast<std::int64_t>((id * 7919) % kKeys);
    b.AddVertex("N", {{"n", key}});
    model.emplace_back(key, id);
  }
  MustWrite(*g, std::move(b));
  std::sort(model.begin(), model.end());
  Snapshot s = g->GetSnapshot();
  auto expect = [&](std::optional<RangeBound> lo, std::optional<RangeBound> hi, bool descending,
                    std::size_t limit) {
    V want;
    for (const auto& [key, id] : model) {
      if (lo && (lo->inclusive ? key < lo->value.as_int64().value() : key <= lo->value.as_int64().value()))
        continue;
      if (hi && (hi->inclusive ? key > hi->value.as_int64().value() : key >= hi->value.as_int64().value()))
        continue;
      want.push_back(id);
    }
    const std::size_t count = want.size();
    if (descending) std::reverse(want.begin(), want.end());
    if (want.size() > limit) want.resize(limit);
    const IndexRange r{.lo = lo, .hi = hi, .descending = descending, .limit = limit};
    SCOPED_TRACE(::testing::Message()
                 << "lo " << (lo ? lo->value.as_int64().value() : -1) << (lo && lo->inclusive ? "i" : "x")
                 << " hi " << (hi ? hi->value.as_int64().value() : -1) << (hi && hi->inclusive ? "i" : "x")
                 << " desc " << descending << " limit " << limit);
    EXPECT_EQ(Raw(s.VerticesInRange("N", "n", r).value()), want);
    EXPECT_EQ(s.CountVerticesInRange("N", "n", r).value(), count);
  };
  const std::int64_t points[] = {-5, 0, 1, 2, 96, 97, 98, 144, 290, 291, 580, 1000, 2997, 2998, 2999, 4000};
  const std::size_t limits[] = {0, 1, 144, 145, 146, 436, std::numeric_limits<std::size_t>::max()};
  for (const bool descending : {false, true}) {
    for (const std::size_t limit : limits) {
      expect(std::nullopt, std::nullopt, descending, limit);
      for (const std::int64_t p : points) {
        for (const bool inc : {true, false}) {
          expect(RangeBound{p, inc}, std::nullopt, descending, limit);
          expect(std::nullopt, RangeBound{p, inc}, descending, limit);
          if (limit != 146 && limit != std::numeric_limits<std::size_t>::max()) continue;
          for (const std::int64_t q : points)
            for (const bool inc2 : {true, false})
              expect(RangeBound{p, inc}, RangeBound{q, inc2}, descending, limit);
        }
      }
    }
  }
}

TEST(IndexTest, KeyCountsFollowSetsAndRemovals) {
  auto g = NewGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("P", {{"x", 1}, {"y", nullptr}});
  b.AddVertex("P", {{"x", 2}});
  MustWrite(*g, std::move(b));
  auto counts = [&g] {
    std::map<std::string, std::uint64_t> m;
    for (const PropertyKeyCount& k : g->GetSnapshot().PropertyKeys()) m[std::string(k.name)] = k.vertices;
    return m;
  };
  EXPECT_EQ(counts(), (std::map<std::string, std::uint64_t>{{"x", 2}, {"y", 1}}));
  (void)a;
  WriteBatch c;
  c.SetProperty(VertexId(0), "x", 5);  // value only: no count change
  c.RemoveProperty(VertexId(0), "y");
  c.SetProperty(VertexId(1), "z", "new");
  MustWrite(*g, std::move(c));
  EXPECT_EQ(counts(), (std::map<std::string, std::uint64_t>{{"x", 2}, {"z", 1}}));
  WriteBatch d;
  d.RemoveVertex(VertexId(1));
  MustWrite(*g, std::move(d));
  EXPECT_EQ(counts(), (std::map<std::string, std::uint64_t>{{"x", 1}}));
}

TEST(IndexTest, ExactIndexFindsAndFollowsChanges) {
  auto g = NewGraph();
  WriteBatch b;
  b.AddVertex("Person", {{"name", "Ada"}});
  b.AddVertex("Person", {{"name", "Bob"}});
  b.AddVertex("Person", {{"name", "Ada"}});
  b.AddVertex("Robot", {{"name", "Ada"}});
  b.AddVertex("Person", {{"name", nullptr}});
  b.AddVertex("Person");
  MustWrite(*g, std::move(b));
  ASSERT_TRUE(g->CreateIndex(Spec("person_name", "Person", {"name"}, IndexKind::kExact)).ok());
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(Raw(s.FindVertices("Person", "name", "Ada").value()), (V{0, 2}));
  EXPECT_EQ(Raw(s.FindVertices("Person", "name", "Zed").value()), V{});
  EXPECT_EQ(s.FindVertices("Robot", "name", "Ada").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.FindVertices("Person", "name", nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.FindVertex("Person", "name", "Ada").status().code(), StatusCode::kFailedPrecondition);

  WriteBatch c;
  c.SetProperty(VertexId(0), "name", "Cy");
  c.RemoveVertex(VertexId(2));
  c.SetProperty(VertexId(5), "name", "Ada");
  c.AddVertex("Person", {{"name", "Ada"}});
  MustWrite(*g, std::move(c));
  Snapshot t = g->GetSnapshot();
  EXPECT_EQ(Raw(t.FindVertices("Person", "name", "Ada").value()), (V{5, 6}));
  EXPECT_EQ(Raw(t.FindVertices("Person", "name", "Cy").value()), (V{0}));
  // The older snapshot still answers as it was.
  EXPECT_EQ(Raw(s.FindVertices("Person", "name", "Ada").value()), (V{0, 2}));

  std::vector<IndexInfo> infos = t.Indexes();
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_EQ(infos[0].spec.name, "person_name");
  EXPECT_EQ(infos[0].state, IndexState::kReady);
  EXPECT_EQ(infos[0].entries, 4u);  // Cy, Bob, Ada, Ada
  ASSERT_TRUE(g->DropIndex("person_name").ok());
  EXPECT_EQ(g->GetSnapshot().FindVertices("Person", "name", "Ada").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Raw(t.FindVertices("Person", "name", "Ada").value()), (V{5, 6}));
}

TEST(IndexTest, UniqueIndexFindsOneAndGuardsTheKey) {
  auto g = NewGraph();
  WriteBatch b;
  b.AddVertex("Person", {{"email", "a@x"}});
  b.AddVertex("Person", {{"email", "b@x"}});
  MustWrite(*g, std::move(b));
  ASSERT_TRUE(
      g->CreateIndex(Spec("email", "Person", {"email"}, IndexKind::kUnique, ValueType::kString)).ok());
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.FindVertex("Person", "email", "b@x").value(), VertexId(1));
  EXPECT_EQ(s.FindVertex("Person", "email", "c@x").value(), std::nullopt);

  WriteBatch dup;
  dup.AddVertex("Person", {{"email", "a@x"}});
  Result<CommitInfo> r = g->Write(std::move(dup));
  ASSERT_EQ(r.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(r.status().message().find("\"a@x\""), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("vertex 0"), std::string::npos) << r.status().ToString();

  // Moving a key away and taking it in one batch is fine; so is a remove
  // and re-add.
  WriteBatch swap;
  swap.SetProperty(VertexId(0), "email", "c@x");
  swap.SetProperty(VertexId(1), "email", "a@x");
  swap.RemoveVertex(VertexId(1));
  swap.AddVertex("Person", {{"email", "b@x"}});
  MustWrite(*g, std::move(swap));
  Snapshot t = g->GetSnapshot();
  EXPECT_EQ(t.FindVertex("Person", "email", "c@x").value(), VertexId(0));
  EXPECT_EQ(t.FindVertex("Person", "email", "b@x").value(), VertexId(2));
  EXPECT_EQ(t.FindVertex("Person", "email", "a@x").value(), std::nullopt);

  WriteBatch wrong;
  wrong.SetProperty(VertexId(0), "email", 42);
  EXPECT_EQ(g->Write(std::move(wrong)).status().code(), StatusCode::kInvalidArgument);
  WriteBatch null_ok;
  null_ok.SetProperty(VertexId(0), "email", nullptr);
  null_ok.AddVertex("Person", {{"email", nullptr}});
  MustWrite(*g, std::move(null_ok));
}

TEST(IndexTest, CompositeIndexThroughItsName) {
  auto g = NewGraph();
  WriteBatch b;
  b.AddVertex("Person", {{"first", "Ada"}, {"last", "Lovelace"}});
  b.AddVertex("Person", {{"first", "Ada"}, {"last", "Byron"}});
  b.AddVertex("Person", {{"first", "Ada"}});
  MustWrite(*g, std::move(b));
  ASSERT_TRUE(g->CreateIndex(Spec("full", "Person", {"first", "last"}, IndexKind::kUnique)).ok());
  Snapshot s = g->GetSnapshot();
  std::vector<PropertyValue> key = {"Ada", "Byron"};
  EXPECT_EQ(Raw(s.FindVerticesByIndex("full", key).value()), (V{1}));
  EXPECT_EQ(s.FindVertexByIndex("full", key).value(), VertexId(1));
  std::vector<PropertyValue> short_key = {"Ada"};
  EXPECT_EQ(s.FindVerticesByIndex("full", short_key).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.FindVerticesByIndex("nope", key).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(s.FindEdgesByIndex("full", key).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.Indexes()[0].entries, 2u);  // the third lacks "last"
  // Same first name, different last names: no conflict.
  WriteBatch c;
  c.SetProperty(VertexId(2), "last", "King");
  MustWrite(*g, std::move(c));
  WriteBatch d;
  d.SetProperty(VertexId(2), "last", "Byron");
  EXPECT_EQ(g->Write(std::move(d)).status().code(), StatusCode::kAlreadyExists);
}

TEST(IndexTest, OrderedRangesPrefixesAndCounts) {
  auto g = NewGraph();
  WriteBatch b;
  const std::vector<std::int64_t> ages = {30, 10, 20, 30, -5, 40, 20};
  for (std::int64_t a : ages) b.AddVertex("Person", {{"age", a}, {"name", "n" + std::to_string(a)}});
  b.AddVertex("Person", {{"name", "nameless"}});
  MustWrite(*g, std::move(b));
  ASSERT_TRUE(g->CreateIndex(Spec("age", "Person", {"age"}, IndexKind::kOrdered, ValueType::kInt64)).ok());
  ASSERT_TRUE(g->CreateIndex(Spec("name", "Person", {"name"}, IndexKind::kOrdered)).ok());
  Snapshot s = g->GetSnapshot();
  auto range = [&](IndexRange r) { return Raw(s.VerticesInRange("Person", "age", r).value()); };
  EXPECT_EQ(range({}), (V{4, 1, 2, 6, 0, 3, 5}));
  EXPECT_EQ(range({.lo = RangeBound{20}, .hi = RangeBound{30}}), (V{2, 6, 0, 3}));
  EXPECT_EQ(range({.lo = RangeBound{20, false}, .hi = RangeBound{40, false}}), (V{0, 3}));
  EXPECT_EQ(range({.hi = RangeBound{20}, .descending = true}), (V{6, 2, 1, 4}));
  EXPECT_EQ(range({.lo = RangeBound{10}, .limit = 2}), (V{1, 2}));
  EXPECT_EQ(range({.lo = RangeBound{41}}), V{});
  EXPECT_EQ(range({.lo = RangeBound{30}, .hi = RangeBound{20}}), V{});
  EXPECT_EQ(s.CountVerticesInRange("Person", "age", {.lo = RangeBound{20}, .hi = RangeBound{30}}).value(),
            4u);
  EXPECT_EQ(s.CountVerticesInRange("Person", "age", {}).value(), 7u);
  EXPECT_EQ(s.VerticesInRange("Person", "age", {.lo = RangeBound{1.5}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(s.VerticesInRange("Person", "age", {.prefix = "n"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(s.VerticesInRange("Person", "weight", {}).status().code(), StatusCode::kFailedPrecondition);

  auto names = [&](IndexRange r) { return Raw(s.VerticesInRange("Person", "name", r).value()); };
  EXPECT_EQ(names({.prefix = "n3"}), (V{0, 3}));
  EXPECT_EQ(names({.prefix = "n"}), (V{4, 1, 2, 6, 0, 3, 5, 7}));
  EXPECT_EQ(names({.prefix = "na"}), (V{7}));
  EXPECT_EQ(names({.prefix = "n", .descending = true, .limit = 1}), (V{7}));
  EXPECT_EQ(s.CountVerticesInRange("Person", "name", {.prefix = "n2"}).value(), 2u);
  EXPECT_EQ(s.VerticesInRange("Person", "name", {.lo = RangeBound{std::nan("")}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(IndexTest, DoubleIndexHandlesInfinityBoundsAndNegativeZero) {
  auto g = NewGraph();
  WriteBatch b;
  for (double d : {1.5, -0.0, 0.0, -2.5, 1e300}) b.AddVertex("M", {{"v", d}});
  MustWrite(*g, std::move(b));
  ASSERT_TRUE(g->CreateIndex(Spec("v", "M", {"v"}, IndexKind::kOrdered, ValueType::kDouble)).ok());
  Snapshot s = g->GetSnapshot();
  const double inf = std::numeric_limits<double>::infinity();
  auto range = [&](IndexRange r) { return Raw(s.VerticesInRange("M", "v", r).value()); };
  EXPECT_EQ(range({.lo = RangeBound{-inf}, .hi = RangeBound{inf}}), (V{3, 1, 2, 0, 4}));
  EXPECT_EQ(range({.lo = RangeBound{inf}}), V{});
  EXPECT_EQ(range({.hi = RangeBound{-inf}}), V{});
  EXPECT_EQ(Raw(s.FindVertices("M", "v", 0.0).value()), (V{1, 2}));
  EXPECT_EQ(Raw(s.FindVertices("M", "v", -0.0).value()), (V{1, 2}));
}

TEST(IndexTest, AnyTypeIndexOrdersAcrossTypesAndSkipsVectors) {
  auto g = NewGraph();
  WriteBatch b;
  b.AddVertex("T", {{"k", "s"}});
  b.AddVertex("T", {{"k", 5}});
  b.AddVertex("T", {{"k", 5.0}});
  b.AddVertex("T", {{"k", true}});
  b.AddVertex("T", {{"k", FloatVector{1.0f}}});
  b.AddVertex("T", {{"k", Bytes{std::byte{1}}}});
  MustWrite(*g, std::move(b));
  ASSERT_TRUE(g->CreateIndex(Spec("k", "T", {"k"}, IndexKind::kOrdered)).ok());
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(Raw(s.VerticesInRange("T", "k", {}).value()), (V{3, 1, 2, 0, 5}));
  EXPECT_EQ(Raw(s.FindVertices("T", "k", 5).value()), (V{1}));
  EXPECT_EQ(Raw(s.FindVertices("T", "k", 5.0).value()), (V{2}));
  EXPECT_EQ(s.FindVertices("T", "k", FloatVector{1.0f}).status().code(), StatusCode::kInvalidArgument);
}

// A string list is never indexed either: in an index of no declared type it
// keeps the element out (built from a snapshot and maintained by writes
// alike), a list value cannot be looked up, and no index declares the type
// (a list in a typed index: index_bad_input_test.cc).
TEST(IndexTest, StringListsAreNeverIndexed) {
  auto g = NewGraph();
  WriteBatch b;
  b.AddVertex("T", {{"k", "s"}});
  b.AddVertex("T", {{"k", StringList{"s"}}});
  MustWrite(*g, std::move(b));
  ASSERT_TRUE(g->CreateIndex(Spec("k", "T", {"k"}, IndexKind::kUnique)).ok());
  EXPECT_EQ(Raw(g->GetSnapshot().FindVertices("T", "k", "s").value()), (V{0}));
  WriteBatch more;
  more.AddVertex("T", {{"k", StringList{"s"}}});     // no collision: not in the index
  more.SetProperty(VertexId(0), "k", StringList{});  // leaves the index
  MustWrite(*g, std::move(more));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(Raw(s.FindVertices("T", "k", "s").value()), V{});
  EXPECT_EQ(s.FindVertices("T", "k", StringList{"s"}).status().code(), StatusCode::kInvalidArgument);
  WriteBatch back;
  back.SetProperty(VertexId(1), "k", "s");  // a string again: indexed
  MustWrite(*g, std::move(back));
  EXPECT_EQ(Raw(g->GetSnapshot().FindVertices("T", "k", "s").value()), (V{1}));
  EXPECT_EQ(g->CreateIndex(Spec("t", "T", {"k"}, IndexKind::kExact, ValueType::kStringList)).code(),
            StatusCode::kInvalidArgument);
}

TEST(IndexTest, EdgeIndexes) {
  auto g = NewGraph();
  WriteBatch b;
  NewVertex x = b.AddVertex("N"), y = b.AddVertex("N");
  b.AddEdge("PAID", x, y, {{"ts", 100}});
  b.AddEdge("PAID", y, x, {{"ts", 200}});
  b.AddEdge("PAID", x, x, {{"ts", 150}});
  b.AddEdge("OTHER", x, y, {{"ts", 150}});
  MustWrite(*g, std::move(b));
  IndexSpec spec = Spec("ts", "PAID", {"ts"}, IndexKind::kOrdered, ValueType::kInt64);
  spec.element = ElementKind::kEdge;
  ASSERT_TRUE(g->CreateIndex(spec).ok());
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(Raw(s.EdgesInRange("PAID", "ts", {.lo = RangeBound{120}}).value()), (V{2, 1}));
  EXPECT_EQ(Raw(s.FindEdges("PAID", "ts", 150).value()), (V{2}));
  EXPECT_EQ(s.CountEdgesInRange("PAID", "ts", {}).value(), 3u);
  EXPECT_EQ(s.FindVertices("PAID", "ts", 150).status().code(), StatusCode::kFailedPrecondition);
  // Removing an endpoint removes its edges from the index.
  WriteBatch r;
  r.RemoveVertex(VertexId(1));
  MustWrite(*g, std::move(r));
  EXPECT_EQ(Raw(g->GetSnapshot().EdgesInRange("PAID", "ts", {}).value()), (V{2}));
}

TEST(IndexTest, LifecycleErrors) {
  auto g = NewGraph();
  ASSERT_TRUE(g->CreateIndex(Spec("a", "L", {"k"}, IndexKind::kExact)).ok());
  EXPECT_EQ(g->CreateIndex(Spec("a", "L", {"j"}, IndexKind::kExact)).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(g->DropIndex("b").code(), StatusCode::kNotFound);
  EXPECT_EQ(g->CreateIndex(Spec("", "L", {"k"}, IndexKind::kExact)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(g->CreateIndex(Spec("c", "L", {}, IndexKind::kExact)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(g->CreateIndex(Spec("c", "L", {"k", "k"}, IndexKind::kExact)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(g->CreateIndex(Spec("c", "L", {"k"}, IndexKind::kExact, ValueType::kFloatVector)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(g->CreateIndex(Spec("c", "", {"k"}, IndexKind::kExact)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(g->GetSnapshot().Indexes().size(), 1u);
}

TEST(IndexTest, CreateOverViolatingDataFailsAndLeavesNothing) {
  auto g = NewGraph();
  WriteBatch b;
  b.AddVertex("P", {{"k", 1}});
  b.AddVertex("P", {{"k", 2}});
  b.AddVertex("P", {{"k", 1}});
  b.AddVertex("Q", {{"k", "x"}});
  MustWrite(*g, std::move(b));
  const SequenceNumber before = g->GetSnapshot().sequence();
  Status s = g->CreateIndex(Spec("u", "P", {"k"}, IndexKind::kUnique));
  ASSERT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(s.message().find("vertex 0"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("vertex 2"), std::string::npos) << s.ToString();
  Snapshot after = g->GetSnapshot();
  EXPECT_TRUE(after.Indexes().empty());
  EXPECT_EQ(after.sequence(), before + 2);  // the declaration and the drop that took it back
  // The same with a declared int64 type: the build's fixed-width path.
  Status typed = g->CreateIndex(Spec("u8", "P", {"k"}, IndexKind::kUnique, ValueType::kInt64));
  ASSERT_EQ(typed.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(typed.message().find("key 1 is held by both vertex 0 and vertex 2"), std::string::npos)
      << typed.ToString();
  Status t = g->CreateIndex(Spec("t", "Q", {"k"}, IndexKind::kExact, ValueType::kInt64));
  EXPECT_EQ(t.code(), StatusCode::kInvalidArgument) << t.ToString();
  EXPECT_NE(t.message().find("vertex 3 holds string \"x\" in 'k'"), std::string::npos) << t.ToString();
  EXPECT_TRUE(g->GetSnapshot().Indexes().empty());
}

// A CreateIndex that fails over the data leaves no name behind either
// (regression: its declaration interned the label and keys the graph had
// never seen, and the drop that took it back kept them).
TEST(IndexTest, FailedCreateLeavesNoNewNames) {
  auto g = NewGraph();
  WriteBatch b;
  b.AddVertex("Person", {{"age", "old"}});
  MustWrite(*g, std::move(b));
  Status s = g->CreateIndex(Spec("p", "Person", {"age", "never_seen"}, IndexKind::kExact, ValueType::kInt64));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  Snapshot after = g->GetSnapshot();
  EXPECT_FALSE(after.FindPropertyKey("never_seen").has_value());
  EXPECT_TRUE(after.Indexes().empty());
  // The same index over a label nobody holds yet is created, and holds what comes.
  ASSERT_TRUE(
      g->CreateIndex(Spec("q", "Nobody", {"age", "never_seen"}, IndexKind::kExact, ValueType::kInt64)).ok());
  WriteBatch c;
  c.AddVertex("Nobody", {{"age", 1}, {"never_seen", 2}});
  MustWrite(*g, std::move(c));
  std::vector<PropertyValue> key = {1, 2};
  EXPECT_EQ(Raw(g->GetSnapshot().FindVerticesByIndex("q", key).value()), V{1});
}

// CreateIndex builds on a thread of its own below the caller's priority
// (Options::background_nice), in a volatile graph too; the caller only
// waits and keeps its priority. With background_nice 0 it builds itself.
std::thread::id build_thread;
int build_nice = -100;
void RecordBuild() {
  build_thread = std::this_thread::get_id();
  build_nice = base::ThisThreadNice();
}

TEST(IndexTest, CreateIndexBuildsBelowTheCallersPriority) {
  index::SetBuildObserverForTesting(&RecordBuild);
  for (const std::uint32_t nice : {5u, 0u}) {
    SCOPED_TRACE(nice);
    Options o;
    o.background_nice = nice;
    auto g = Graph::OpenInMemory(o).value();
    WriteBatch b;
    for (int i = 0; i < 100; ++i) b.AddVertex("Person", {{"age", i}});
    MustWrite(*g, std::move(b));
    const int caller_nice = base::ThisThreadNice();
    build_thread = {};
    build_nice = -100;
    ASSERT_TRUE(g->CreateIndex(Spec("age", "Person", {"age"}, IndexKind::kExact)).ok());
    EXPECT_EQ(base::ThisThreadNice(), caller_nice);  // never left lowered
    EXPECT_EQ(g->GetSnapshot().Indexes().at(0).entries, 100u);
#if defined(__linux__)
    if (nice == 0) {
      EXPECT_EQ(build_thread, std::this_thread::get_id());
      EXPECT_EQ(build_nice, caller_nice);
    } else {
      EXPECT_NE(build_thread, std::this_thread::get_id());
      EXPECT_EQ(build_nice, std::min(19, caller_nice + static_cast<int>(nice)));
    }
#endif
  }
  index::SetBuildObserverForTesting(nullptr);
}

// Commits made while an index is built retire blocks that the build's
// pinned snapshot holds back; releasing it frees them all. CreateIndex
// releases it on a thread of the build's, below the caller's priority, not
// in the publishing commit on the caller's (or the writer's) thread.
Graph* graph_for_build = nullptr;
std::thread::id caller_thread;
std::atomic<bool> watching_frees{false};
std::atomic<std::uint64_t> caller_frees{0}, other_frees{0};
constexpr int kCommitsDuringBuild = 200;
void CommitDuringBuild() {
  for (int i = 0; i < kCommitsDuringBuild; ++i) {
    WriteBatch b;
    b.AddVertex("Person", {{"age", 1000 + i}});
    ASSERT_TRUE(graph_for_build->Write(std::move(b)).ok());
  }
  watching_frees = true;
}
void CountFreeByThread(void*) {
  if (!watching_frees.load(std::memory_order_relaxed)) return;
  (std::this_thread::get_id() == caller_thread ? caller_frees : other_frees)
      .fetch_add(1, std::memory_order_relaxed);
}

TEST(IndexTest, CreateIndexFreesWhatCommitsRetiredDuringTheBuildInTheBackground) {
  Options o;
  o.background_nice = 5;
  auto g = Graph::OpenInMemory(o).value();
  WriteBatch b;
  for (int i = 0; i < 1000; ++i) b.AddVertex("Person", {{"age", i}});
  MustWrite(*g, std::move(b));
  graph_for_build = g.get();
  caller_thread = std::this_thread::get_id();
  index::SetBuildObserverForTesting(&CommitDuringBuild);
  base::SetFreeObserver(&CountFreeByThread);
  const Status s = g->CreateIndex(Spec("age", "Person", {"age"}, IndexKind::kExact));
  base::SetFreeObserver(nullptr);
  index::SetBuildObserverForTesting(nullptr);
  watching_frees = false;
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g->GetSnapshot().Indexes().at(0).entries, 1000u + kCommitsDuringBuild);
  // Each commit retired at least one block (a copied table leaf).
  EXPECT_GE(other_frees.load(), static_cast<std::uint64_t>(kCommitsDuringBuild));
  EXPECT_LT(caller_frees.load(), static_cast<std::uint64_t>(kCommitsDuringBuild / 4));
}

// Reopening: indexes come back from the WAL (replay) and from a checkpoint
// (definitions only; contents rebuilt), and answer as before.
TEST(IndexTest, IndexesSurviveReopen) {
  env::SimFileSystem fs;
  Options o;
  for (bool checkpoint : {false, true}) {
    SCOPED_TRACE(checkpoint ? "from a checkpoint" : "from the WAL");
    const std::string dir = checkpoint ? "/ckpt" : "/wal";
    {
      auto g = GraphImpl::OpenDurable(o, dir, &fs).value();
      WriteBatch b;
      for (int i = 0; i < 50; ++i) b.AddVertex(i % 2 ? "A" : "B", {{"n", i % 7}, {"s", std::to_string(i)}});
      MustWrite(*g, std::move(b));
      ASSERT_TRUE(g->CreateIndex(Spec("n", "A", {"n"}, IndexKind::kOrdered, ValueType::kInt64)).ok());
      ASSERT_TRUE(g->CreateIndex(Spec("s", "B", {"s"}, IndexKind::kUnique)).ok());
      ASSERT_TRUE(g->CreateIndex(Spec("gone", "B", {"n"}, IndexKind::kExact)).ok());
      ASSERT_TRUE(g->DropIndex("gone").ok());
      WriteBatch c;
      c.SetProperty(VertexId(1), "n", 100);
      c.RemoveVertex(VertexId(2));
      MustWrite(*g, std::move(c));
      if (checkpoint) {
        ASSERT_TRUE(g->Checkpoint().ok());
      }
      if (!checkpoint) o.durable.checkpoint_on_close = false;
      ASSERT_TRUE(g->Close().ok());
      o.durable.checkpoint_on_close = true;
    }
    auto g = GraphImpl::OpenDurable(o, dir, &fs).value();
    Snapshot s = g->GetSnapshot();
    ASSERT_EQ(s.Indexes().size(), 2u);
    EXPECT_EQ(s.Indexes()[0].state, IndexState::kReady);
    EXPECT_EQ(Raw(s.VerticesInRange("A", "n", {.lo = RangeBound{6}}).value()), (V{13, 27, 41, 1}));
    EXPECT_EQ(s.FindVertex("B", "s", "4").value(), VertexId(4));
    EXPECT_EQ(s.FindVertex("B", "s", "2").value(), std::nullopt);
    EXPECT_EQ(s.CountVertices(*s.FindLabel("B")), 24u);
    EXPECT_GE(g->GetOpenStats().indexes_built, 2u);
    WriteBatch dup;
    dup.AddVertex("B", {{"s", "4"}});
    EXPECT_EQ(g->Write(std::move(dup)).status().code(), StatusCode::kAlreadyExists);
  }
}

// A checkpoint's indexes are built as it loads; OpenStats says so in
// index_build_microseconds as well as in checkpoint_load_microseconds
// (regression: only indexes the log left unfinished were counted). 100,000
// entries take milliseconds to build, far above the microsecond unit.
TEST(IndexTest, OpenStatsCountTheCheckpointsIndexBuilds) {
  env::SimFileSystem fs;
  Options o;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    WriteBatch b;
    for (int i = 0; i < 100'000; ++i) b.AddVertex("A", {{"n", (i * 7919) % 100'003}});
    MustWrite(*g, std::move(b));
    ASSERT_TRUE(g->CreateIndex(Spec("n", "A", {"n"}, IndexKind::kOrdered, ValueType::kInt64)).ok());
    ASSERT_TRUE(g->Close().ok());  // checkpoints on close
  }
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  const OpenStats& stats = g->GetOpenStats();
  EXPECT_NE(stats.checkpoint_sequence, 0u);
  EXPECT_EQ(stats.indexes_built, 1u);
  EXPECT_GT(stats.index_build_microseconds, 0u);
  EXPECT_LE(stats.index_build_microseconds, stats.checkpoint_load_microseconds);
}

}  // namespace
}  // namespace quiver
