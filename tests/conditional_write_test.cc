// Expectations (WriteBatch::Expect*): each kind holding and failing, the
// Aborted message (which expectation, what was found), that a failed batch
// changes nothing and leaves its group's other batches alone, and that
// expectations see the batches before theirs in the group, never their own
// batch's operations.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

// Vertex 0 Person {n: 3, name: "Ada"}, vertex 1 Person {name: "Bob"};
// edge 0 KNOWS 0->1 {w: 1.5}; a unique index on Person.name.
std::unique_ptr<Graph> Base() {
  auto g = Graph::OpenInMemory().value();
  WriteBatch b;
  NewVertex a = b.AddVertex("Person", {{"n", 3}, {"name", "Ada"}});
  NewVertex c = b.AddVertex("Person", {{"name", "Bob"}});
  b.AddEdge("KNOWS", a, c, {{"w", 1.5}});
  EXPECT_TRUE(g->Write(std::move(b)).ok());
  EXPECT_TRUE(
      g->CreateIndex({.name = "person_name", .label = "Person", .keys = {"name"}, .kind = IndexKind::kUnique})
          .ok());
  return g;
}

// A batch that sets vertex 0's n to 100 after the expectation `expect` adds.
Result<CommitInfo> Conditional(Graph& g, const std::function<void(WriteBatch&)>& expect) {
  WriteBatch b;
  b.AddVertex("Noise", {{"x", 1}});
  expect(b);
  b.SetProperty(VertexId(0), "n", 100);
  return g.Write(std::move(b));
}

void ExpectAborted(const Result<CommitInfo>& r, std::vector<std::string> message_has) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kAborted) << r.status().ToString();
  for (const std::string& m : message_has)
    EXPECT_NE(r.status().message().find(m), std::string::npos) << r.status().message() << " lacks " << m;
}

TEST(ConditionalWriteTest, EachExpectationHolds) {
  auto g = Base();
  const VertexId v0(0), v1(1), v9(9);
  const EdgeId e0(0), e5(5);
  std::vector<std::function<void(WriteBatch&)>> holding = {
      [&](WriteBatch& b) { b.ExpectProperty(v0, "n", 3); },
      [&](WriteBatch& b) { b.ExpectProperty(e0, "w", 1.5); },
      [&](WriteBatch& b) { b.ExpectNoProperty(v1, "n"); },
      [&](WriteBatch& b) { b.ExpectNoProperty(e0, "nothing_has_this"); },
      [&](WriteBatch& b) { b.ExpectExists(v1); },
      [&](WriteBatch& b) { b.ExpectExists(e0); },
      [&](WriteBatch& b) { b.ExpectMissing(v9); },
      [&](WriteBatch& b) { b.ExpectMissing(e5); },
      [&](WriteBatch& b) {
        b.ExpectKeyFree("Person", {{"name", "Cy"}});
      },
  };
  for (std::size_t i = 0; i < holding.size(); ++i) {
    SCOPED_TRACE(i);
    Result<CommitInfo> r = Conditional(*g, holding[i]);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->vertices.size(), 1u);
    EXPECT_EQ(*g->GetSnapshot().GetProperty(v0, "n")->as_int64(), 100);
    WriteBatch reset;
    reset.SetProperty(v0, "n", 3);
    ASSERT_TRUE(g->Write(std::move(reset)).ok());
  }
}

TEST(ConditionalWriteTest, FailedExpectationAbortsNamingItAndChangesNothing) {
  auto g = Base();
  struct Row {
    const char* name;
    std::function<void(WriteBatch&)> expect;
    std::vector<std::string> message_has;
  };
  const VertexId v0(0), v1(1);
  const EdgeId e0(0);
  std::vector<Row> rows = {
      {"other value", [&](WriteBatch& b) { b.ExpectProperty(v0, "n", 4); }, {"'n' = 3", "expected 'n' = 4"}},
      {"other type", [&](WriteBatch& b) { b.ExpectProperty(v0, "n", 3.0); }, {"'n' = 3", "expected 'n' = 3"}},
      {"absent key", [&](WriteBatch& b) { b.ExpectProperty(v1, "n", 3); }, {"vertex 1 has no 'n'"}},
      {"unknown key", [&](WriteBatch& b) { b.ExpectProperty(v1, "never_seen", 3); }, {"no 'never_seen'"}},
      {"edge value", [&](WriteBatch& b) { b.ExpectProperty(e0, "w", 2.5); }, {"edge 0 has 'w' = 1.5"}},
      {"present",
       [&](WriteBatch& b) { b.ExpectNoProperty(v0, "name"); },
       {"'name' = \"Ada\"", "expected no"}},
      {"vertex missing", [&](WriteBatch& b) { b.ExpectExists(VertexId(7)); }, {"vertex 7 does not exist"}},
      {"edge missing", [&](WriteBatch& b) { b.ExpectExists(EdgeId(7)); }, {"edge 7 does not exist"}},
      {"vertex exists", [&](WriteBatch& b) { b.ExpectMissing(v1); }, {"vertex 1 exists"}},
      {"edge exists", [&](WriteBatch& b) { b.ExpectMissing(e0); }, {"edge 0 exists"}},
      {"key taken",
       [&](WriteBatch& b) {
         b.ExpectKeyFree("Person", {{"name", "Bob"}});
       },
       {"\"Bob\"", "held by vertex 1"}},
      {"second of two",
       [&](WriteBatch& b) {
         b.ExpectExists(v0);
         b.ExpectProperty(v0, "n", 5);
       },
       {"expectation 1 (operation 2)"}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const std::string before = test_util::Dump(g->GetSnapshot());
    const SequenceNumber seq = g->GetSnapshot().sequence();
    Result<CommitInfo> r = Conditional(*g, row.expect);
    ExpectAborted(r, row.message_has);
    EXPECT_EQ(g->GetSnapshot().sequence(), seq);
    EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);
  }
}

TEST(ConditionalWriteTest, ExpectationIndexAndOperationAreNamed) {
  auto g = Base();
  WriteBatch b;
  b.AddVertex("Noise");
  b.ExpectExists(VertexId(0));  // expectation 0, operation 1
  b.SetProperty(VertexId(1), "x", 1);
  b.ExpectProperty(VertexId(0), "n", 9);  // expectation 1, operation 3
  ExpectAborted(g->Write(std::move(b)), {"expectation 1 (operation 3)", "vertex 0 has 'n' = 3"});
}

TEST(ConditionalWriteTest, ExpectOnARemovedElementAborts) {
  auto g = Base();
  WriteBatch rm;
  rm.RemoveVertex(VertexId(1));  // and edge 0 with it
  ASSERT_TRUE(g->Write(std::move(rm)).ok());
  ExpectAborted(Conditional(*g, [](WriteBatch& b) { b.ExpectProperty(VertexId(1), "name", "Bob"); }),
                {"vertex 1 does not exist"});
  ExpectAborted(Conditional(*g, [](WriteBatch& b) { b.ExpectNoProperty(EdgeId(0), "w"); }),
                {"edge 0 does not exist"});
  ExpectAborted(Conditional(*g, [](WriteBatch& b) { b.ExpectExists(VertexId(1)); }), {"does not exist"});
  EXPECT_TRUE(Conditional(*g, [](WriteBatch& b) { b.ExpectMissing(EdgeId(0)); }).ok());
}

TEST(ConditionalWriteTest, ExpectationsIgnoreTheirOwnBatch) {
  auto g = Base();
  // The batch sets n to 7 before expecting 3: judged on the state before
  // the batch, so it holds.
  WriteBatch b;
  b.SetProperty(VertexId(0), "n", 7);
  b.ExpectProperty(VertexId(0), "n", 3);
  b.RemoveVertex(VertexId(1));
  b.ExpectExists(VertexId(1));
  ASSERT_TRUE(g->Write(std::move(b)).ok());
  EXPECT_EQ(*g->GetSnapshot().GetProperty(VertexId(0), "n")->as_int64(), 7);
}

TEST(ConditionalWriteTest, KeyFreeNeedsACoveringUniqueIndex) {
  auto g = Base();
  WriteBatch b;
  b.ExpectKeyFree("Person", {{"n", 1}});
  Result<CommitInfo> r = g->Write(std::move(b));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("'Person'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("(n)"), std::string::npos) << r.status().message();
}

TEST(ConditionalWriteTest, ExpectationsSeeEarlierBatchesOfTheGroupAndFailAlone) {
  // Many rounds: some share a commit group, some not; the outcome must not
  // depend on it.
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    auto g = Base();
    WriteBatch first;
    first.SetProperty(VertexId(0), "n", 4);
    WriteBatch stale;  // read n = 3 before `first`
    stale.ExpectProperty(VertexId(0), "n", 3);
    stale.SetProperty(VertexId(0), "n", 50);
    WriteBatch fresh;  // read n = 4 after `first`
    fresh.ExpectProperty(VertexId(0), "n", 4);
    fresh.SetProperty(VertexId(1), "seen", 4);
    WriteBatch last;
    last.AddVertex("After");
    auto f1 = g->WriteAsync(std::move(first));
    auto f2 = g->WriteAsync(std::move(stale));
    auto f3 = g->WriteAsync(std::move(fresh));
    auto f4 = g->WriteAsync(std::move(last));
    ASSERT_TRUE(f1.get().ok());
    ExpectAborted(f2.get(), {"vertex 0 has 'n' = 4", "expected 'n' = 3"});
    Result<CommitInfo> r3 = f3.get();
    ASSERT_TRUE(r3.ok()) << r3.status().ToString();
    ASSERT_TRUE(f4.get().ok());
    Snapshot s = g->GetSnapshot();
    EXPECT_EQ(*s.GetProperty(VertexId(0), "n")->as_int64(), 4);
    EXPECT_EQ(*s.GetProperty(VertexId(1), "seen")->as_int64(), 4);
    EXPECT_EQ(s.CountVertices(*s.FindLabel("After")), 1u);
  }
}

TEST(ConditionalWriteTest, OnlyExpectationsCommitNothingVisible) {
  auto g = Base();
  const std::string before = test_util::Dump(g->GetSnapshot());
  WriteBatch b;
  b.ExpectExists(VertexId(0));
  Result<CommitInfo> r = g->Write(std::move(b));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->vertices.empty());
  EXPECT_EQ(test_util::Dump(g->GetSnapshot()), before);
}

}  // namespace
}  // namespace quiver
