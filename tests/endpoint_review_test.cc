// Review regressions for the edge-endpoint constraint
// (IndexKind::kUniqueEndpoints) and WriteBatch::UpsertEdge: batches that
// mix upserts with new vertices, removals and cascades, self-loops,
// expectations and the change feed, checked against a scan of the edges
// (the constraint's tree must hold exactly one entry per live edge of its
// type, keyed by its pair), across a reopen from the log and from a
// checkpoint, and with commits made while CreateIndex builds it; and bad
// input to an upsert, which must fail with the same clear status whether
// the upsert finds an element or adds one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "index/index_build.h"
#include "index/index_keys.h"
#include "index/index_tree.h"
#include "index_oracle.h"
#include "quiver/quiver.h"
#include "storage/version.h"
#include "test_util.h"

// This binary's operator new carries the allocation-failure hook of
// alloc_hook.h (one definition per binary), so that the out-of-memory sweep
// below fails the standard library's allocations too.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (quiver::test_util::OperatorNewShouldFail()) throw std::bad_alloc();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return ::operator new(n, std::nothrow);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }

namespace quiver {
namespace {

const IndexSpec kKnowsOnce{.name = "knows_once",
                           .element = ElementKind::kEdge,
                           .label = "KNOWS",
                           .kind = IndexKind::kUniqueEndpoints};

CommitInfo MustWrite(Graph& g, WriteBatch b) {
  Result<CommitInfo> r = g.Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : CommitInfo{};
}

// The constraint's tree in the head version against a scan of the KNOWS
// edges: one entry per live edge, under its own pair, and no pair twice.
void ExpectTreeMatchesScan(Graph& g, const std::string& name = "knows_once") {
  const storage::GraphRoots& r = static_cast<GraphImpl&>(g).TEST_chain()->head()->roots;
  const index::PropertyIndex* p = r.catalog->Find(name);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->built);
  Snapshot s = g.GetSnapshot();
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> pairs;
  std::uint64_t edges = 0;
  if (std::optional<EdgeTypeId> type = s.FindEdgeType("KNOWS")) {
    for (EdgeId e : s.Edges(*type)) {
      ++edges;
      const EdgeInfo info = *s.GetEdge(e);
      auto [it, fresh] = pairs.try_emplace({info.source.value(), info.target.value()}, e.value());
      EXPECT_TRUE(fresh) << "pair (" << info.source.value() << " -> " << info.target.value()
                         << ") held by edges " << it->second << " and " << e.value();
      std::string key;
      index::EndpointKey(info.source.value(), info.target.value(), &key);
      EXPECT_TRUE(index::IndexTree::ContainsEntry(p->root, key, e.value())) << "edge " << e.value();
    }
  }
  EXPECT_EQ(p->root.count, edges);
}

std::unique_ptr<Graph> Constrained() {
  auto g = Graph::OpenInMemory().value();
  WriteBatch people;
  for (int i = 0; i < 4; ++i) people.AddVertex("Person", {{"n", i}});
  MustWrite(*g, std::move(people));
  WriteBatch b;
  b.AddEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 1}});  // edge 0
  b.AddEdge("KNOWS", VertexId(1), VertexId(1));              // edge 1: a self-loop
  b.AddEdge("KNOWS", VertexId(1), VertexId(2));              // edge 2
  MustWrite(*g, std::move(b));
  EXPECT_TRUE(g->CreateIndex(kKnowsOnce).ok());
  return g;
}

void ExpectCode(Result<CommitInfo> r, StatusCode code, const std::string& has = "") {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(has), std::string::npos) << r.status().ToString() << " lacks " << has;
}

TEST(EndpointReviewTest, UpsertsOfOnePairBetweenNewVerticesAreOneEdge) {
  auto g = Constrained();
  ASSERT_TRUE(
      g->CreateIndex({.name = "n", .label = "Person", .keys = {"n"}, .kind = IndexKind::kUnique}).ok());
  WriteBatch b;
  NewVertex v = b.AddVertex("Person", {{"n", 10}});
  NewVertex w = b.AddVertex("Person", {{"n", 11}});
  NewEdge e0 = b.UpsertEdge("KNOWS", v, w, {{"a", 1}});
  NewEdge e1 = b.UpsertEdge("KNOWS", v, w, {{"b", 2}});
  NewEdge e2 = b.UpsertEdge("KNOWS", w, v);
  NewEdge e3 = b.UpsertEdge("KNOWS", v, v);
  NewEdge e4 = b.UpsertEdge("KNOWS", v, v, {{"c", 3}});
  // Upserted vertices: two upserts of one key name one new vertex; an
  // upsert of vertex 0's key names vertex 0.
  NewVertex u1 = b.UpsertVertex("Person", {{"n", 12}});
  NewVertex u2 = b.UpsertVertex("Person", {{"n", 12}});
  NewVertex zero = b.UpsertVertex("Person", {{"n", 0}});
  NewEdge e5 = b.UpsertEdge("KNOWS", u1, VertexId(2));
  NewEdge e6 = b.UpsertEdge("KNOWS", u2, VertexId(2), {{"d", 4}});
  NewEdge e7 = b.UpsertEdge("KNOWS", zero, VertexId(1), {{"w", 9}});
  CommitInfo info = MustWrite(*g, std::move(b));
  ASSERT_EQ(info.edges.size(), 8u);
  EXPECT_EQ(info.edges[e0.index], info.edges[e1.index]);
  EXPECT_NE(info.edges[e0.index], info.edges[e2.index]);
  EXPECT_EQ(info.edges[e3.index], info.edges[e4.index]);
  EXPECT_EQ(info.edges[e5.index], info.edges[e6.index]);
  EXPECT_EQ(info.edges[e7.index], EdgeId(0));
  EXPECT_EQ(info.edge_found, (std::vector<bool>{false, false, false, false, false, false, false, true}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.CountEdges(*s.FindEdgeType("KNOWS")), 3u + 4u);
  EXPECT_EQ(*s.GetProperty(EdgeId(0), "w")->as_int64(), 9);
  EXPECT_TRUE(s.GetProperty(info.edges[e3.index], "c").has_value());
  ExpectTreeMatchesScan(*g);
}

TEST(EndpointReviewTest, UpsertsBesideRemovalsAndCascadesKeepTheTreeExact) {
  auto g = Constrained();
  {
    WriteBatch b;  // finds edge 0, then its source goes (and edge 0 with it)
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 5}});
    b.RemoveVertex(VertexId(0));
    MustWrite(*g, std::move(b));
    EXPECT_FALSE(g->GetSnapshot().HasEdge(EdgeId(0)));
    ExpectTreeMatchesScan(*g);
  }
  {
    WriteBatch b;  // an upsert adds an edge to a new vertex, which the batch removes again
    NewVertex v = b.AddVertex("Person");
    b.UpsertEdge("KNOWS", v, VertexId(2), {{"x", 1}});
    b.UpsertEdge("KNOWS", VertexId(2), v);
    b.RemoveVertex(v);
    MustWrite(*g, std::move(b));
    ExpectTreeMatchesScan(*g);
  }
  {
    WriteBatch b;  // an upserted edge removed and its pair added again
    NewEdge h = b.UpsertEdge("KNOWS", VertexId(2), VertexId(3));
    b.RemoveEdge(h);
    b.AddEdge("KNOWS", VertexId(2), VertexId(3), {{"y", 1}});
    MustWrite(*g, std::move(b));
    ExpectTreeMatchesScan(*g);
  }
  {
    WriteBatch b;  // the self-loop's vertex goes: every pair of vertex 1 is freed
    b.UpsertEdge("KNOWS", VertexId(1), VertexId(1), {{"z", 1}});
    b.RemoveVertex(VertexId(1));
    MustWrite(*g, std::move(b));
    ExpectTreeMatchesScan(*g);
  }
  {
    WriteBatch b;  // the removed edge's pair, added back in another batch
    NewVertex v = b.AddVertex("Person");
    b.AddEdge("KNOWS", v, v);
    b.AddEdge("KNOWS", v, VertexId(2));
    b.UpsertEdge("KNOWS", VertexId(2), VertexId(3), {{"y", 2}});
    MustWrite(*g, std::move(b));
    ExpectTreeMatchesScan(*g);
  }
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.Indexes()[0].entries, s.CountEdges(*s.FindEdgeType("KNOWS")));
}

TEST(EndpointReviewTest, ExpectationsWithUpsertEdgeHoldOrFailTheWholeBatch) {
  auto g = Constrained();
  {
    WriteBatch b;
    b.ExpectProperty(EdgeId(0), "w", 1);
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 2}});
    b.ExpectExists(EdgeId(2));
    MustWrite(*g, std::move(b));
  }
  const std::string before = test_util::Dump(g->GetSnapshot());
  {
    WriteBatch b;  // the expectation is judged before the batch: w is 2 now
    b.ExpectProperty(EdgeId(0), "w", 1);
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 3}});
    b.UpsertEdge("KNOWS", VertexId(3), VertexId(0));
    ExpectCode(g->Write(std::move(b)), StatusCode::kAborted, "edge 0");
  }
  {
    WriteBatch b;
    b.UpsertEdge("KNOWS", VertexId(3), VertexId(0));
    b.ExpectMissing(EdgeId(1));
    ExpectCode(g->Write(std::move(b)), StatusCode::kAborted, "edge 1");
  }
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);
  ExpectTreeMatchesScan(*g);
}

TEST(EndpointReviewTest, TheChangeFeedShowsWhatAnUpsertDid) {
  auto g = Constrained();
  auto sub = g->Subscribe().value();
  WriteBatch merge;
  merge.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 7}, {"k", "v"}});
  MustWrite(*g, std::move(merge));
  WriteBatch replace;
  replace.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"k", "v"}}, UpsertMode::kReplace);
  replace.UpsertEdge("KNOWS", VertexId(2), VertexId(0), {{"q", 1}});
  MustWrite(*g, std::move(replace));
  auto first = sub->Next(std::chrono::seconds(5)).value();
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->created_edges.empty());
  ASSERT_EQ(first->edge_property_changes.size(), 2u);
  auto second = sub->Next(std::chrono::seconds(5)).value();
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(second->created_edges.size(), 1u);
  EXPECT_EQ(second->created_edges[0].source, VertexId(2));
  ASSERT_EQ(second->edge_property_changes.size(), 1u);
  EXPECT_EQ(second->edge_property_changes[0].key, "w");
  EXPECT_FALSE(second->edge_property_changes[0].new_value.has_value());
}

TEST(EndpointReviewTest, TheTreeIsExactAfterReplayAndCheckpointReload) {
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  std::string expected;
  auto reopen = [&](const char* what) {
    SCOPED_TRACE(what);
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
    EXPECT_EQ(test_util::Dump(g->GetSnapshot()), expected);
    ExpectTreeMatchesScan(*g);
    WriteBatch dup;
    dup.AddEdge("KNOWS", VertexId(2), VertexId(3));
    EXPECT_EQ(g->Write(std::move(dup)).status().code(), StatusCode::kAlreadyExists);
    return g;
  };
  {
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
    WriteBatch people;
    for (int i = 0; i < 5; ++i) people.AddVertex("Person");
    MustWrite(*g, std::move(people));
    WriteBatch b;
    b.AddEdge("KNOWS", VertexId(0), VertexId(1));
    b.AddEdge("KNOWS", VertexId(1), VertexId(1));
    MustWrite(*g, std::move(b));
    ASSERT_TRUE(g->CreateIndex(kKnowsOnce).ok());
    WriteBatch u;
    NewVertex v = u.AddVertex("Person");
    u.UpsertEdge("KNOWS", v, v);
    u.UpsertEdge("KNOWS", VertexId(2), VertexId(3), {{"a", 1}});
    u.UpsertEdge("KNOWS", VertexId(1), VertexId(1), {{"b", 1}});
    u.RemoveVertex(VertexId(0));
    MustWrite(*g, std::move(u));
    WriteBatch r;
    r.RemoveVertex(VertexId(1));
    r.AddEdge("KNOWS", VertexId(3), VertexId(2));
    MustWrite(*g, std::move(r));
    expected = test_util::Dump(g->GetSnapshot());
    ExpectTreeMatchesScan(*g);
    ASSERT_TRUE(g->Close().ok());
  }
  {
    auto g = reopen("from the log");
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  reopen("from the checkpoint");
}

// Commits while CreateIndex builds the constraint from its snapshot (the
// build observer runs on the build's thread): the publication's catch-up.
Graph* graph_during_build = nullptr;
bool repeat_a_pair_during_build = false;
void WriteDuringBuild() {
  WriteBatch b;
  b.RemoveEdge(EdgeId(0));                       // (0 -> 1)
  b.AddEdge("KNOWS", VertexId(0), VertexId(1));  // its pair again: fine
  b.AddEdge("KNOWS", VertexId(2), VertexId(2));
  b.RemoveVertex(VertexId(3));  // with its self-loop and (1 -> 3)
  b.AddEdge("KNOWS", VertexId(4), VertexId(1));
  if (repeat_a_pair_during_build) b.AddEdge("KNOWS", VertexId(1), VertexId(2));  // edge 2's pair
  ASSERT_TRUE(graph_during_build->Write(std::move(b)).ok());
}

TEST(EndpointReviewTest, ThePublicationCatchesUpCommitsMadeDuringTheBuild) {
  for (bool repeat : {false, true}) {
    SCOPED_TRACE(repeat ? "a pair repeated during the build" : "no pair repeated");
    env::SimFileSystem fs;
    Options o;
    o.durable.checkpoint_on_close = false;
    std::string expected;
    {
      auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
      WriteBatch people;
      for (int i = 0; i < 5; ++i) people.AddVertex("Person");
      MustWrite(*g, std::move(people));
      WriteBatch b;
      b.AddEdge("KNOWS", VertexId(0), VertexId(1));
      b.AddEdge("KNOWS", VertexId(1), VertexId(1));
      b.AddEdge("KNOWS", VertexId(1), VertexId(2));
      b.AddEdge("KNOWS", VertexId(3), VertexId(3));
      b.AddEdge("KNOWS", VertexId(1), VertexId(3));
      MustWrite(*g, std::move(b));
      graph_during_build = g.get();
      repeat_a_pair_during_build = repeat;
      index::SetBuildObserverForTesting(&WriteDuringBuild);
      const Status s = g->CreateIndex(kKnowsOnce);
      index::SetBuildObserverForTesting(nullptr);
      if (repeat) {
        EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.ToString();
        EXPECT_TRUE(g->GetSnapshot().Indexes().empty());
      } else {
        ASSERT_TRUE(s.ok()) << s.ToString();
        ExpectTreeMatchesScan(*g);
      }
      expected = test_util::Dump(g->GetSnapshot());
      ASSERT_TRUE(g->Close().ok());
    }
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
    EXPECT_EQ(test_util::Dump(g->GetSnapshot()), expected);
    EXPECT_EQ(g->GetSnapshot().Indexes().size(), repeat ? 0u : 1u);
    if (!repeat) ExpectTreeMatchesScan(*g);
  }
}

TEST(EndpointReviewTest, UpsertEdgeRefusesBadInputWhetherItFindsOrAdds) {
  auto g = Constrained();
  const std::string before = test_util::Dump(g->GetSnapshot());
  // (0 -> 1) finds edge 0; (3 -> 0) adds: the same bad input, the same answer.
  for (auto [source, target] : {std::pair{0, 1}, std::pair{3, 0}}) {
    SCOPED_TRACE(std::to_string(source) + " -> " + std::to_string(target));
    {
      WriteBatch b;
      b.UpsertEdge("KNOWS", VertexId(source), VertexId(target), {{"w", 1}, {"w", 2}});
      ExpectCode(g->Write(std::move(b)), StatusCode::kInvalidArgument, "duplicate property key 'w'");
    }
    {
      WriteBatch b;
      b.UpsertEdge("KNOWS", VertexId(source), VertexId(target), {{"w", 1}, {"w", 2}}, UpsertMode::kReplace);
      ExpectCode(g->Write(std::move(b)), StatusCode::kInvalidArgument, "duplicate property key 'w'");
    }
  }
  // A type no constraint could ever be declared on: the name is bad, not
  // the graph's state.
  for (std::string type : {std::string(""), std::string("K\xC0\x80")}) {
    WriteBatch b;
    b.UpsertEdge(type, VertexId(0), VertexId(1));
    ExpectCode(g->Write(std::move(b)), StatusCode::kInvalidArgument, "edge type");
  }
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);
}

// UpsertVertex had the same gap: a property key twice was refused when the
// upsert added a vertex and applied (last value wins) when it found one.
TEST(EndpointReviewTest, UpsertVertexRefusesARepeatedPropertyWhetherItFindsOrAdds) {
  auto g = Constrained();
  ASSERT_TRUE(
      g->CreateIndex({.name = "n", .label = "Person", .keys = {"n"}, .kind = IndexKind::kUnique}).ok());
  const std::string before = test_util::Dump(g->GetSnapshot());
  for (int n : {0, 99}) {  // 0 finds vertex 0, 99 adds
    SCOPED_TRACE(n);
    WriteBatch b;
    b.UpsertVertex("Person", {{"n", n}}, {{"a", 1}, {"a", 2}});
    ExpectCode(g->Write(std::move(b)), StatusCode::kInvalidArgument, "duplicate property key 'a'");
  }
  for (std::string label : {std::string(""), std::string("P\xED\xA0\x80")}) {
    WriteBatch b;
    b.UpsertVertex(label, {{"n", 0}});
    ExpectCode(g->Write(std::move(b)), StatusCode::kInvalidArgument, "label");
  }
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);
}

// Random batches of upserts (endpoints committed, new, or upserted
// vertices; repeated pairs; self-loops), adds, removals and cascades, with
// the constraint dropped and declared again over the data now and then:
// after every commit the tree equals the scan, every upsert's edge has its
// pair, a refused batch changes nothing, and a reopen from the log, then
// from a checkpoint, gives the same state.
TEST(EndpointReviewTest, RandomBatchesKeepTheTreeEqualToTheScan) {
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  std::mt19937_64 rng(test_util::EnvOr("QUIVER_SEED", 7));
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::uint64_t committed = 0, failed = 0, upserts = 0;
  {
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
    WriteBatch people;
    for (int i = 0; i < 12; ++i) people.AddVertex("Person", {{"n", i}});
    MustWrite(*g, std::move(people));
    ASSERT_TRUE(g->CreateIndex(kKnowsOnce).ok());
    ASSERT_TRUE(
        g->CreateIndex({.name = "n", .label = "Person", .keys = {"n"}, .kind = IndexKind::kUnique}).ok());
    bool constrained = true;
    for (int round = 0; round < 400; ++round) {
      if (round % 100 == 50) {  // dropped: upserts are refused, parallel adds allowed
        ASSERT_TRUE(g->DropIndex("knows_once").ok());
        constrained = false;
      } else if (round % 100 == 80) {
        // Declared again over the data: refused while it repeats a pair.
        for (int attempt = 0; !constrained; ++attempt) {
          ASSERT_LT(attempt, 20);
          const Status c = g->CreateIndex(kKnowsOnce);
          if (c.ok()) {
            constrained = true;
            break;
          }
          ASSERT_EQ(c.code(), StatusCode::kAlreadyExists) << c.ToString();
          Snapshot now = g->GetSnapshot();
          std::map<std::pair<std::uint64_t, std::uint64_t>, int> seen;
          WriteBatch dedup;
          for (EdgeId e : now.Edges(*now.FindEdgeType("KNOWS"))) {
            const EdgeInfo info = *now.GetEdge(e);
            if (seen[{info.source.value(), info.target.value()}]++ > 0) dedup.RemoveEdge(e);
          }
          MustWrite(*g, std::move(dedup));
        }
      }
      Snapshot s = g->GetSnapshot();
      std::vector<std::uint64_t> vertices, edges;
      for (VertexId v : s.Vertices()) vertices.push_back(v.value());
      for (EdgeId e : s.Edges()) edges.push_back(e.value());
      WriteBatch b;
      std::vector<VertexRef> refs;
      for (std::uint64_t v : vertices) refs.push_back(VertexId(v));
      struct Up {
        NewEdge h;
        VertexRef src, dst;
      };
      std::vector<Up> ups;
      const int ops = 1 + static_cast<int>(pick(8));
      for (int i = 0; i < ops; ++i) {
        const std::size_t what = pick(10);
        if (what == 0 || refs.empty()) {
          refs.push_back(b.AddVertex("Person"));
        } else if (what == 1) {
          refs.push_back(b.UpsertVertex("Person", {{"n", static_cast<std::int64_t>(pick(20))}}));
        } else if (what <= 5) {
          VertexRef a = refs[pick(refs.size())];
          VertexRef c = pick(6) == 0 ? a : refs[pick(refs.size())];
          NewEdge h = b.UpsertEdge("KNOWS", a, c, {{"k", static_cast<std::int64_t>(pick(3))}},
                                   pick(4) == 0 ? UpsertMode::kReplace : UpsertMode::kMerge);
          ups.push_back({h, a, c});
          if (pick(3) == 0) b.SetProperty(h, "seen", true);
        } else if (what == 6 && !edges.empty() && pick(2) == 0) {
          const EdgeInfo e = *s.GetEdge(EdgeId(edges[pick(edges.size())]));  // its pair again
          b.AddEdge("KNOWS", e.source, e.target);
        } else if (what == 6) {
          b.AddEdge("KNOWS", refs[pick(refs.size())], refs[pick(refs.size())]);
        } else if (what == 7 && !edges.empty()) {
          b.RemoveEdge(EdgeId(edges[pick(edges.size())]));
        } else if (what == 8 && !ups.empty() && pick(3) == 0) {
          b.RemoveEdge(ups[pick(ups.size())].h);
        } else if (what == 9 && pick(3) == 0) {
          b.RemoveVertex(refs[pick(refs.size())]);
        }
      }
      Result<CommitInfo> r = g->Write(std::move(b));
      if (!r.ok()) {
        const StatusCode c = r.status().code();
        if (constrained || ups.empty()) {
          EXPECT_TRUE(c == StatusCode::kAlreadyExists || c == StatusCode::kNotFound) << r.status().ToString();
        } else {
          EXPECT_EQ(c, StatusCode::kFailedPrecondition) << r.status().ToString();
        }
        EXPECT_EQ(g->GetSnapshot().sequence(), s.sequence());  // nothing applied
        ++failed;
        continue;
      }
      EXPECT_TRUE(constrained || ups.empty());
      ++committed;
      Snapshot after = g->GetSnapshot();
      for (const Up& u : ups) {
        ++upserts;
        const EdgeId e = r->edges[u.h.index];
        if (!after.HasEdge(e)) continue;  // removed later in the batch
        const EdgeInfo info = *after.GetEdge(e);
        auto id = [&](VertexRef v) { return v.is_new() ? r->vertices[v.raw()].value() : v.raw(); };
        EXPECT_EQ(info.source.value(), id(u.src)) << "round " << round;
        EXPECT_EQ(info.target.value(), id(u.dst)) << "round " << round;
      }
      if (constrained) ExpectTreeMatchesScan(*g);
      if (HasFailure()) return;
    }
    EXPECT_GT(committed, 100u);
    EXPECT_GT(failed, 20u);
    std::string expected = test_util::Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());
    auto again = GraphImpl::OpenDurable(o, "/g", &fs).value();
    EXPECT_EQ(test_util::Dump(again->GetSnapshot()), expected);
    ExpectTreeMatchesScan(*again);
    ASSERT_TRUE(again->Checkpoint().ok());
    ASSERT_TRUE(again->Close().ok());
    auto third = GraphImpl::OpenDurable(o, "/g", &fs).value();
    EXPECT_EQ(test_util::Dump(third->GetSnapshot()), expected);
    ExpectTreeMatchesScan(*third);
    test::IndexOracleResult oracle = test::CheckIndexAnswers(third->GetSnapshot());
    EXPECT_EQ(oracle.mismatches, 0u);
    for (const std::string& m : oracle.messages) ADD_FAILURE() << m;
  }
  std::cout << "committed " << committed << ", failed " << failed << ", upserts " << upserts << "\n";
}

// Producers upserting and adding edges of a few pairs at once (their batches
// share commit groups, so an upsert resolves against the groups' earlier
// batches), while another thread drops the constraint and declares it again
// and checkpoints run: every answer is one of the documented codes, and the
// final tree equals the scan, also after a reopen.
TEST(EndpointReviewTest, ConcurrentUpsertsAndRedeclarationsKeepTheTreeExact) {
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  std::string expected;
  {
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
    WriteBatch people;
    for (int i = 0; i < 6; ++i) people.AddVertex("Person");
    MustWrite(*g, std::move(people));
    ASSERT_TRUE(g->CreateIndex(kKnowsOnce).ok());
    std::atomic<bool> stop{false};
    std::atomic<int> unexpected{0};
    std::vector<std::thread> producers;
    for (int t = 0; t < 3; ++t) {
      producers.emplace_back([&, t] {
        std::mt19937_64 rng(t + 1);
        for (int i = 0; i < 300; ++i) {
          WriteBatch b;
          const VertexId a(rng() % 6), c(rng() % 6);
          if (rng() % 4 == 0) {
            b.AddEdge("KNOWS", a, c);
          } else {
            NewEdge h = b.UpsertEdge("KNOWS", a, c, {{"t", t}, {"i", i}});
            if (rng() % 5 == 0) b.RemoveEdge(h);
          }
          Result<CommitInfo> r = g->Write(std::move(b));
          const StatusCode code = r.ok() ? StatusCode::kOk : r.status().code();
          if (code != StatusCode::kOk && code != StatusCode::kAlreadyExists &&
              code != StatusCode::kFailedPrecondition && code != StatusCode::kNotFound)
            ++unexpected;
        }
      });
    }
    std::thread admin([&] {
      for (int i = 0; i < 20 && !stop; ++i) {
        (void)g->DropIndex("knows_once");
        // Declared again over whatever the producers left: it holds or is refused.
        const Status s = g->CreateIndex(kKnowsOnce);
        if (!s.ok() && s.code() != StatusCode::kAlreadyExists) ++unexpected;
        if (i % 5 == 0 && !g->Checkpoint().ok()) ++unexpected;
      }
    });
    for (std::thread& p : producers) p.join();
    stop = true;
    admin.join();
    EXPECT_EQ(unexpected.load(), 0);
    // Declared for good: the duplicates parallel adds left go first.
    for (int attempt = 0;; ++attempt) {
      ASSERT_LT(attempt, 20);
      const Status c = g->CreateIndex(kKnowsOnce);
      if (c.ok() || c.code() == StatusCode::kAlreadyExists) {
        Snapshot now = g->GetSnapshot();
        if (c.ok() || now.Indexes().size() == 1) break;
        std::map<std::pair<std::uint64_t, std::uint64_t>, int> seen;
        WriteBatch dedup;
        for (EdgeId e : now.Edges(*now.FindEdgeType("KNOWS"))) {
          const EdgeInfo info = *now.GetEdge(e);
          if (seen[{info.source.value(), info.target.value()}]++ > 0) dedup.RemoveEdge(e);
        }
        MustWrite(*g, std::move(dedup));
        continue;
      }
      FAIL() << c.ToString();
    }
    ExpectTreeMatchesScan(*g);
    expected = test_util::Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), expected);
  ExpectTreeMatchesScan(*g);
}

// The data part of a dump (without its first line, which names the
// sequence: an index declaration takes a sequence number and no data).
std::string DataOf(const std::string& dump) { return dump.substr(dump.find('\n')); }

// A workload over the constraint's whole life: a declaration refused over a
// repeated pair, the repeat removed, declared, upserts with new endpoints,
// merges and replaces, a cascade, a checkpoint, more upserts, a drop, a
// parallel edge, a refused declaration. Records each acknowledged state.
void ConstraintWorkload(env::FileSystem* fs, std::map<SequenceNumber, std::string>* acked,
                        SequenceNumber* last_acked) {
  Options o;
  o.durable.checkpoint_on_close = false;
  // Nothing committed: the empty graph (Open may fail before it exists).
  acked->try_emplace(0, DataOf(test_util::Dump(Graph::OpenInMemory().value()->GetSnapshot())));
  auto opened = GraphImpl::OpenDurable(o, "/g", fs);
  if (!opened.ok()) return;
  std::unique_ptr<Graph> g = std::move(*opened);
  auto note = [&] {
    Snapshot s = g->GetSnapshot();
    acked->try_emplace(s.sequence(), DataOf(test_util::Dump(s)));
    *last_acked = s.sequence();
  };
  auto write = [&](WriteBatch b) {
    if (g->Write(std::move(b)).ok()) note();
  };
  auto create = [&] {
    if (g->CreateIndex(kKnowsOnce).ok()) note();
  };
  note();
  WriteBatch people;
  for (int i = 0; i < 6; ++i) people.AddVertex("Person", {{"n", i}});
  write(std::move(people));
  WriteBatch edges;
  edges.AddEdge("KNOWS", VertexId(0), VertexId(1));
  edges.AddEdge("KNOWS", VertexId(0), VertexId(1));  // a repeated pair
  edges.AddEdge("KNOWS", VertexId(2), VertexId(2));
  write(std::move(edges));
  create();  // refused: the pair repeats
  WriteBatch dedup;
  dedup.RemoveEdge(EdgeId(1));
  write(std::move(dedup));
  create();
  for (int i = 0; i < 6; ++i) {
    WriteBatch b;
    NewVertex v = b.AddVertex("Person");
    b.UpsertEdge("KNOWS", v, VertexId(i % 6), {{"i", i}});
    b.UpsertEdge("KNOWS", VertexId(i % 6), v);
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", i}},
                 i % 2 == 0 ? UpsertMode::kMerge : UpsertMode::kReplace);
    b.UpsertEdge("KNOWS", VertexId(i % 6), VertexId((i + 1) % 6));
    write(std::move(b));
  }
  WriteBatch cascade;
  cascade.RemoveVertex(VertexId(2));
  write(std::move(cascade));
  if (g->Checkpoint().ok()) note();
  WriteBatch more;
  more.UpsertEdge("KNOWS", VertexId(3), VertexId(3), {{"x", 1}});
  more.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"x", 2}});
  write(std::move(more));
  if (g->DropIndex("knows_once").ok()) note();
  WriteBatch parallel;
  parallel.AddEdge("KNOWS", VertexId(0), VertexId(1));
  write(std::move(parallel));
  create();  // refused again
  (void)g->Close();
}

// Every crash point of that workload under every crash policy: recovery
// opens, loses no acknowledged commit, lands on the state the uncrashed
// workload had at that sequence (an unacknowledged commit may survive), and
// a ready constraint's tree equals the scan (the index oracle agrees).
TEST(EndpointReviewTest, EveryCrashPointRecoversTheConstraintExactly) {
  std::uint64_t total = 0;
  std::map<SequenceNumber, std::string> reference;  // sequence -> data, uncrashed
  {
    env::SimFileSystem fs;
    SequenceNumber last = 0;
    ConstraintWorkload(&fs, &reference, &last);
    total = fs.operation_count();
  }
  // A sequence the workload never saw (an index declaration's) holds the data before it.
  auto data_at = [&](SequenceNumber seq) { return std::prev(reference.upper_bound(seq))->second; };
  const std::uint64_t stride = test_util::EnvOr("QUIVER_CRASH_STRIDE", 1);
  std::uint64_t recoveries = 0, with_constraint = 0;
  for (std::uint64_t n = 1; n <= total; n += stride) {
    env::SimFileSystem run;
    run.SetCrashAtOperation(n);
    std::map<SequenceNumber, std::string> acked;
    SequenceNumber last = 0;
    ConstraintWorkload(&run, &acked, &last);
    for (env::CrashPolicy policy : env::kAllCrashPolicies) {
      SCOPED_TRACE("crash at operation " + std::to_string(n) + ", policy " +
                   std::to_string(static_cast<int>(policy)));
      auto copy = run.Clone();
      copy->Crash(policy, n);
      Options o;
      o.durable.checkpoint_on_close = false;
      auto g = GraphImpl::OpenDurable(o, "/g", copy.get());
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      ++recoveries;
      Snapshot s = (*g)->GetSnapshot();
      EXPECT_GE(s.sequence(), last);
      EXPECT_EQ(DataOf(test_util::Dump(s)), data_at(s.sequence()));
      std::vector<IndexInfo> indexes = s.Indexes();
      if (!indexes.empty() && indexes[0].state == IndexState::kReady) {
        ++with_constraint;
        ExpectTreeMatchesScan(**g);
        test::IndexOracleResult r = test::CheckIndexAnswers(s);
        EXPECT_EQ(r.mismatches, 0u);
        for (const std::string& m : r.messages) ADD_FAILURE() << m;
      }
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(with_constraint, 0u);
  std::cout << "crash points " << total << ", recoveries " << recoveries << ", with the constraint "
            << with_constraint << "\n";
}

// The graph an upsert group is written on: vertices, constrained edges (a
// self-loop among them), the constraint ready.
void UpsertGroupBase(Graph& g) {
  WriteBatch people;
  for (int i = 0; i < 40; ++i) people.AddVertex("Person", {{"n", i}});
  MustWrite(g, std::move(people));
  WriteBatch edges;
  for (int i = 0; i < 40; ++i) edges.AddEdge("KNOWS", VertexId(i), VertexId((i * 7 + 1) % 40), {{"w", i}});
  edges.AddEdge("KNOWS", VertexId(5), VertexId(5));
  MustWrite(g, std::move(edges));
  ASSERT_TRUE(g.CreateIndex(kKnowsOnce).ok());
}

// A batch of upserts that add (to new and committed vertices), merge,
// replace and repeat, beside an add, a removal and a cascade.
WriteBatch UpsertGroup() {
  WriteBatch b;
  NewVertex v = b.AddVertex("Person", {{"n", 100}});
  for (int i = 0; i < 30; ++i) {
    b.UpsertEdge("KNOWS", VertexId(i), VertexId((i * 7 + 1) % 40), {{"w", -i}, {"u", "x"}},
                 i % 3 == 0 ? UpsertMode::kReplace : UpsertMode::kMerge);  // found
    b.UpsertEdge("KNOWS", v, VertexId(i), {{"i", i}});                     // added
    b.UpsertEdge("KNOWS", VertexId(i), VertexId((i + 3) % 40));            // added, or found
  }
  b.UpsertEdge("KNOWS", v, VertexId(0), {{"again", true}});  // a repeat
  b.UpsertEdge("KNOWS", VertexId(5), VertexId(5), {}, UpsertMode::kReplace);
  b.AddEdge("KNOWS", VertexId(39), VertexId(38));
  b.RemoveEdge(EdgeId(12));
  b.RemoveVertex(VertexId(33));  // with its constrained edges
  b.ExpectProperty(EdgeId(20), "w", 20);
  return b;
}

// Allocation n of the writer thread fails (once, and from n on) while it
// commits the upsert group: the group fails alone with ResourceExhausted and
// changes nothing (DESIGN: allocation failure never crosses the API), the
// graph stays writable, and the retry reaches the reference state with the
// reference's memory and a tree equal to the scan.
TEST(EndpointReviewTest, AnUpsertGroupRollsBackAtEveryAllocation) {
  std::string before, after;
  std::int64_t allocated_after = 0;
  {
    auto g = Graph::OpenInMemory().value();
    UpsertGroupBase(*g);
    before = test_util::Dump(g->GetSnapshot());
    MustWrite(*g, UpsertGroup());
    after = test_util::Dump(g->GetSnapshot());
    ASSERT_NE(before, after);
    allocated_after = static_cast<std::int64_t>(test_util::SettledMemoryStats(*g).allocated_bytes);
  }
  for (base::AllocationFaultMode mode :
       {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
    std::uint64_t n = 1;
    for (;; ++n) {
      SCOPED_TRACE(std::string(mode == base::AllocationFaultMode::kOnce ? "once" : "from n on") +
                   ", allocation " + std::to_string(n));
      Options o;
      o.writer.spin_microseconds = 0;
      o.writer.caller_commits = false;
      auto g = Graph::OpenInMemory(o).value();
      UpsertGroupBase(*g);
      Snapshot held = g->GetSnapshot();
      std::uint64_t counted = 0;
      Result<CommitInfo> r = [&] {
        WriteBatch batch = UpsertGroup();
        test_util::ScopedOperatorNewFaults hook;
        base::ArmAllocationFaults(static_cast<GraphImpl&>(*g).TEST_writer_thread_id(), n, mode);
        Result<CommitInfo> result = g->Write(std::move(batch));
        counted = base::DisarmAllocationFaults();
        return result;
      }();
      if (r.ok()) {
        ASSERT_LT(counted, n) << "the group succeeded although allocation " << n << " failed";
        ASSERT_EQ(test_util::Dump(g->GetSnapshot()), after);
        break;
      }
      ASSERT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
      ASSERT_EQ(test_util::Dump(g->GetSnapshot()), before);
      ASSERT_EQ(test_util::Dump(held), before);
      Result<CommitInfo> retry = g->Write(UpsertGroup());
      ASSERT_TRUE(retry.ok()) << retry.status().ToString();
      ASSERT_EQ(test_util::Dump(g->GetSnapshot()), after);
      ExpectTreeMatchesScan(*g);
      held = Snapshot();
      ASSERT_EQ(static_cast<std::int64_t>(test_util::SettledMemoryStats(*g).allocated_bytes),
                allocated_after);
      if (HasFailure()) return;
    }
    EXPECT_GT(n, 100u);  // the group allocates: the hook saw it
    std::cout << "fail " << (mode == base::AllocationFaultMode::kOnce ? "once" : "from n on") << ": " << n - 1
              << " failing allocations, each rolled back\n";
  }
}

// The index oracle (index_oracle.h), which the crash enumeration and
// quiver-crashloop run on every recovered graph, must judge an
// edge-endpoint constraint too: its entry count against the type's edges
// and the data's pairs, and no property query answered. It asked the
// constraint property lookups (InvalidArgument) and counted each as a
// mismatch, so no crash test could hold one.
TEST(EndpointReviewTest, TheIndexOracleJudgesAnEdgeEndpointConstraint) {
  auto g = Constrained();
  test::IndexOracleResult r = test::CheckIndexAnswers(g->GetSnapshot());
  EXPECT_EQ(r.mismatches, 0u);
  for (const std::string& m : r.messages) ADD_FAILURE() << m;
  EXPECT_GT(r.checks, 0u);
  // Its negative control: the scan missing an edge is a mismatch.
  EXPECT_GT(test::CheckIndexAnswers(g->GetSnapshot(), /*corrupt_expected=*/true).mismatches, 0u);
}

}  // namespace
}  // namespace quiver
