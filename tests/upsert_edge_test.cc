// The edge-endpoint constraint (IndexKind::kUniqueEndpoints: at most one
// edge of a type between an ordered pair of vertices) and
// WriteBatch::UpsertEdge: declaring, listing and dropping the constraint,
// AddEdge guarded against committed data and within a batch, upserts that
// create, merge and replace, repeats within a batch, FailedPrecondition
// without the constraint, a declaration over violating data, and that the
// constraint survives a reopen from the log and from a checkpoint and keeps
// enforcing it.
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

const IndexSpec kKnowsOnce{.name = "knows_once",
                           .element = ElementKind::kEdge,
                           .label = "KNOWS",
                           .kind = IndexKind::kUniqueEndpoints};

// Vertices 0, 1, 2 (Person); edge 0 KNOWS 0->1 {since 2001, w 1}; edge 1
// LIKES 0->1 twice (edges 1, 2: LIKES has no constraint).
void Populate(Graph& g, bool constrain = true) {
  WriteBatch b;
  NewVertex a = b.AddVertex("Person", {{"name", "a"}});
  NewVertex c = b.AddVertex("Person", {{"name", "b"}});
  b.AddVertex("Person", {{"name", "c"}});
  b.AddEdge("KNOWS", a, c, {{"since", 2001}, {"w", 1}});
  b.AddEdge("LIKES", a, c);
  b.AddEdge("LIKES", a, c);
  ASSERT_TRUE(g.Write(std::move(b)).ok());
  if (constrain) {
    Status s = g.CreateIndex(kKnowsOnce);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
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

void ExpectCode(Result<CommitInfo> r, StatusCode code, std::vector<std::string> message_has) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  for (const std::string& m : message_has)
    EXPECT_NE(r.status().message().find(m), std::string::npos) << r.status().message() << " lacks " << m;
}

std::string Props(const Snapshot& s, EdgeId e) {
  std::string out;
  for (const auto& [key, value] : test_util::PropertyMap(s, e)) out += (out.empty() ? "" : ",") + key;
  return out;
}

std::uint64_t CountKnows(const Snapshot& s) { return s.CountEdges(*s.FindEdgeType("KNOWS")); }

TEST(UpsertEdgeTest, TheConstraintIsListedAndDroppable) {
  auto g = Base();
  Snapshot s = g->GetSnapshot();
  ASSERT_EQ(s.Indexes().size(), 1u);
  const IndexInfo info = s.Indexes()[0];
  EXPECT_EQ(info.spec.name, "knows_once");
  EXPECT_EQ(info.spec.kind, IndexKind::kUniqueEndpoints);
  EXPECT_EQ(info.spec.element, ElementKind::kEdge);
  EXPECT_EQ(info.spec.label, "KNOWS");
  EXPECT_TRUE(info.spec.keys.empty());
  EXPECT_EQ(info.state, IndexState::kReady);
  EXPECT_EQ(info.entries, 1u);
  // It answers no property query.
  EXPECT_EQ(s.FindEdgesByIndex("knows_once", {}).status().code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(g->DropIndex("knows_once").ok());
  EXPECT_TRUE(g->GetSnapshot().Indexes().empty());
  // Without it, parallel edges are fine again and upserts have nothing to find through.
  WriteBatch b;
  b.AddEdge("KNOWS", VertexId(0), VertexId(1));
  MustWrite(*g, std::move(b));
  WriteBatch u;
  u.UpsertEdge("KNOWS", VertexId(0), VertexId(1));
  ExpectCode(g->Write(std::move(u)), StatusCode::kFailedPrecondition,
             {"'KNOWS'", "edge-endpoint constraint"});
}

TEST(UpsertEdgeTest, BadSpecsAreInvalidArguments) {
  auto g = Base();
  const SequenceNumber seq = g->GetSnapshot().sequence();
  for (IndexSpec spec : {
           IndexSpec{.name = "v",
          .element = ElementKind::kVertex,
          .label = "Person",
          .kind = IndexKind::kUniqueEndpoints},
           IndexSpec{.name = "k",
           .element = ElementKind::kEdge,
           .label = "KNOWS",
           .keys = {"since"},
           .kind = IndexKind::kUniqueEndpoints},
           IndexSpec{.name = "t",
           .element = ElementKind::kEdge,
           .label = "KNOWS",
           .kind = IndexKind::kUniqueEndpoints,
           .type = ValueType::kInt64},
       }) {
    SCOPED_TRACE(spec.name);
    Status s = g->CreateIndex(spec);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("edge-endpoint constraint"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(g->GetSnapshot().sequence(), seq);
}

TEST(UpsertEdgeTest, UpsertAddsThenFindsAndMerges) {
  auto g = Base();
  WriteBatch b;
  NewEdge h = b.UpsertEdge("KNOWS", VertexId(1), VertexId(0), {{"since", 1999}});
  CommitInfo info = MustWrite(*g, std::move(b));
  ASSERT_EQ(info.edges.size(), 1u);
  EXPECT_EQ(info.edges[h.index], EdgeId(3));
  EXPECT_EQ(info.edge_found, (std::vector<bool>{false}));

  WriteBatch again;
  NewEdge k = again.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 2}, {"new", true}});
  info = MustWrite(*g, std::move(again));
  EXPECT_EQ(info.edges[k.index], EdgeId(0));
  EXPECT_EQ(info.edge_found, (std::vector<bool>{true}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(CountKnows(s), 2u);
  EXPECT_EQ(Props(s, EdgeId(0)), "new,since,w");  // merge keeps "since"
  EXPECT_EQ(*s.GetProperty(EdgeId(0), "w")->as_int64(), 2);
  EXPECT_EQ(*s.GetProperty(EdgeId(3), "since")->as_int64(), 1999);
}

TEST(UpsertEdgeTest, ReplaceLeavesExactlyTheProperties) {
  auto g = Base();
  WriteBatch b;
  b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 5}}, UpsertMode::kReplace);
  CommitInfo info = MustWrite(*g, std::move(b));
  EXPECT_EQ(info.edges, (std::vector<EdgeId>{EdgeId(0)}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(Props(s, EdgeId(0)), "w");
  EXPECT_EQ(*s.GetProperty(EdgeId(0), "w")->as_int64(), 5);
  // Replace with nothing clears them all.
  WriteBatch clear;
  clear.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {}, UpsertMode::kReplace);
  MustWrite(*g, std::move(clear));
  EXPECT_EQ(Props(g->GetSnapshot(), EdgeId(0)), "");
}

TEST(UpsertEdgeTest, TheSamePairTwiceInABatchIsOneEdge) {
  auto g = Base();
  WriteBatch b;
  NewVertex v = b.AddVertex("Person", {{"name", "d"}});
  NewEdge e1 = b.UpsertEdge("KNOWS", VertexId(2), v, {{"a", 1}});
  NewEdge e2 = b.UpsertEdge("KNOWS", VertexId(2), v, {{"b", 2}});
  NewEdge e3 = b.UpsertEdge("KNOWS", VertexId(2), VertexId(0), {{"a", 1}});
  NewEdge e4 = b.UpsertEdge("KNOWS", VertexId(2), VertexId(0), {{"b", 2}}, UpsertMode::kReplace);
  NewEdge e5 = b.UpsertEdge("KNOWS", VertexId(0), VertexId(1));
  NewEdge e6 = b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"c", 3}});
  b.SetProperty(e2, "seen", true);  // the handle of a repeat names the one edge
  CommitInfo info = MustWrite(*g, std::move(b));
  ASSERT_EQ(info.edges.size(), 6u);
  EXPECT_EQ(info.edges[e1.index], info.edges[e2.index]);
  EXPECT_EQ(info.edges[e3.index], info.edges[e4.index]);
  EXPECT_EQ(info.edges[e5.index], EdgeId(0));
  EXPECT_EQ(info.edges[e6.index], EdgeId(0));
  EXPECT_EQ(info.edge_found, (std::vector<bool>{false, false, false, false, true, true}));
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(CountKnows(s), 3u);
  EXPECT_EQ(Props(s, info.edges[e1.index]), "a,b,seen");
  EXPECT_EQ(Props(s, info.edges[e3.index]), "b");  // replace drops what the first upsert set
  EXPECT_EQ(Props(s, EdgeId(0)), "c,since,w");
  EXPECT_EQ(info.vertices.size(), 1u);
}

TEST(UpsertEdgeTest, AddEdgeIsGuardedAgainstCommittedAndBatchEdges) {
  auto g = Base();
  const std::string before = test_util::Dump(g->GetSnapshot());
  {
    WriteBatch b;
    b.AddEdge("KNOWS", VertexId(0), VertexId(1));
    ExpectCode(g->Write(std::move(b)), StatusCode::kAlreadyExists,
               {"'knows_once'", "pair (0 -> 1)", "held by edge 0", "edge 3 (added by this batch)"});
  }
  {
    WriteBatch b;
    b.AddEdge("KNOWS", VertexId(1), VertexId(2));
    b.AddEdge("KNOWS", VertexId(1), VertexId(2));
    ExpectCode(g->Write(std::move(b)), StatusCode::kAlreadyExists,
               {"pair (1 -> 2)", "edge 3 (added by this batch)", "edge 4 (added by this batch)"});
  }
  {
    WriteBatch b;  // an add and an upsert of one pair: the upsert does not see the add
    b.AddEdge("KNOWS", VertexId(1), VertexId(2));
    b.UpsertEdge("KNOWS", VertexId(1), VertexId(2));
    ExpectCode(g->Write(std::move(b)), StatusCode::kAlreadyExists, {"pair (1 -> 2)", "edge 3", "edge 4"});
  }
  {
    WriteBatch b;  // an upsert that finds edge 0, and an add of its pair
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 7}});
    b.AddEdge("KNOWS", VertexId(0), VertexId(1));
    ExpectCode(g->Write(std::move(b)), StatusCode::kAlreadyExists, {"pair (0 -> 1)", "edge 0", "edge 3"});
  }
  {
    WriteBatch b;  // new vertices count with the ids they would get
    NewVertex v = b.AddVertex("Person");
    b.AddEdge("KNOWS", v, VertexId(0));
    b.AddEdge("KNOWS", v, VertexId(0));
    ExpectCode(g->Write(std::move(b)), StatusCode::kAlreadyExists, {"pair (3 -> 0)"});
  }
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);

  // What is fine: the other direction, a self-loop once, another type,
  // removing the edge and adding its pair again in one batch.
  WriteBatch ok;
  ok.AddEdge("KNOWS", VertexId(1), VertexId(0));
  ok.AddEdge("KNOWS", VertexId(2), VertexId(2));
  ok.AddEdge("LIKES", VertexId(0), VertexId(1));
  ok.RemoveEdge(EdgeId(0));
  ok.AddEdge("KNOWS", VertexId(0), VertexId(1));
  CommitInfo info = MustWrite(*g, std::move(ok));
  WriteBatch loop;
  loop.AddEdge("KNOWS", VertexId(2), VertexId(2));
  ExpectCode(g->Write(std::move(loop)), StatusCode::kAlreadyExists, {"pair (2 -> 2)"});
  // Removing a vertex frees its pairs.
  WriteBatch rm;
  rm.RemoveVertex(VertexId(1));
  MustWrite(*g, std::move(rm));
  WriteBatch up;
  NewEdge e = up.UpsertEdge("KNOWS", VertexId(2), VertexId(2), {{"x", 1}});
  CommitInfo found = MustWrite(*g, std::move(up));
  EXPECT_EQ(found.edges[e.index], info.edges[1]);
  EXPECT_EQ(g->GetSnapshot().Indexes()[0].entries, 1u);  // the self-loop
}

TEST(UpsertEdgeTest, UpsertRefusals) {
  auto g = Base();
  const std::string before = test_util::Dump(g->GetSnapshot());
  {
    WriteBatch b;
    b.UpsertEdge("LIKES", VertexId(0), VertexId(1));
    ExpectCode(g->Write(std::move(b)), StatusCode::kFailedPrecondition,
               {"operation 0", "'LIKES'", "no ready edge-endpoint constraint"});
  }
  {
    WriteBatch b;
    b.RemoveEdge(EdgeId(0));
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1));
    ExpectCode(g->Write(std::move(b)), StatusCode::kNotFound, {"operation 1", "edge 0", "removed earlier"});
  }
  {
    WriteBatch b;
    b.RemoveVertex(VertexId(1));
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1));
    ExpectCode(g->Write(std::move(b)), StatusCode::kNotFound,
               {"operation 1", "endpoint 1", "removed earlier"});
  }
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);
}

TEST(UpsertEdgeTest, DeclaringOverViolatingDataFailsAndChangesNothing) {
  auto g = Graph::OpenInMemory().value();
  Populate(*g, /*constrain=*/false);
  const SequenceNumber seq = g->GetSnapshot().sequence();
  const std::string before = test_util::Dump(g->GetSnapshot());
  Status s = g->CreateIndex({.name = "likes_once",
                             .element = ElementKind::kEdge,
                             .label = "LIKES",
                             .kind = IndexKind::kUniqueEndpoints});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.ToString();
  for (const char* part : {"'likes_once'", "pair (0 -> 1)", "edge 1", "edge 2"})
    EXPECT_NE(s.message().find(part), std::string::npos) << s.ToString() << " lacks " << part;
  Snapshot after = g->GetSnapshot();
  EXPECT_TRUE(after.Indexes().empty());
  EXPECT_EQ(after.sequence(), seq + 2);  // declared and taken back
  std::string dump = test_util::Dump(after);
  EXPECT_EQ(dump.substr(dump.find('\n')), before.substr(before.find('\n')));
  // The type can still get parallel edges.
  WriteBatch b;
  b.AddEdge("LIKES", VertexId(0), VertexId(1));
  MustWrite(*g, std::move(b));
}

TEST(UpsertEdgeTest, TheConstraintSurvivesReplayAndCheckpoint) {
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  std::string expected;
  auto check = [&](Graph& g) {
    Snapshot s = g.GetSnapshot();
    EXPECT_EQ(test_util::Dump(s), expected);
    ASSERT_EQ(s.Indexes().size(), 1u);
    EXPECT_EQ(s.Indexes()[0].spec.kind, IndexKind::kUniqueEndpoints);
    EXPECT_EQ(s.Indexes()[0].state, IndexState::kReady);
    EXPECT_EQ(s.Indexes()[0].entries, 2u);
    WriteBatch dup;
    dup.AddEdge("KNOWS", VertexId(0), VertexId(1));
    ExpectCode(g.Write(std::move(dup)), StatusCode::kAlreadyExists, {"pair (0 -> 1)", "edge 0"});
    WriteBatch up;
    NewEdge e = up.UpsertEdge("KNOWS", VertexId(1), VertexId(0));
    CommitInfo info = MustWrite(g, std::move(up));
    EXPECT_EQ(info.edges[e.index], EdgeId(3));
    EXPECT_EQ(info.edge_found, (std::vector<bool>{true}));
  };
  {
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();
    Populate(*g);
    WriteBatch b;
    b.UpsertEdge("KNOWS", VertexId(1), VertexId(0), {{"since", 1}});
    b.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"w", 9}});
    MustWrite(*g, std::move(b));
    expected = test_util::Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());
  }
  {
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();  // from the log alone
    check(*g);
    expected = test_util::Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  {
    auto g = GraphImpl::OpenDurable(o, "/g", &fs).value();  // from the checkpoint
    EXPECT_GE(g->GetOpenStats().checkpoint_sequence, 1u);
    check(*g);
  }
}

}  // namespace
}  // namespace quiver
