// quiver::ImportNewGraph into an existing empty graph (issue 11 §2: "a new
// or empty graph" takes the bulk path): the import becomes the graph's next
// checkpoint, under its id, and its log continues after it. A graph that
// holds or held elements, or declares an index, or is open, is refused
// and changed in nothing; every failed operation leaves the graph as it
// was; a power loss anywhere leaves the empty graph or the whole import.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "env/fault_file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import_empty_graph_util.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"
#include "verify.h"

namespace quiver {
namespace {

using testing_empty_graph::Bulk;
using testing_empty_graph::Expected;
using testing_empty_graph::Files;
using testing_empty_graph::GraphOptions;
using testing_empty_graph::Input;
using testing_empty_graph::kDir;
using testing_empty_graph::MakeGraph;
using testing_empty_graph::Small;
using testing_import::Canonical;

// The graph after an import into an empty one: the import; a write after
// it survives a reopen; Verify finds one replay chain.
void EgCheckImported(env::FileSystem& fs, const std::string& expected, SequenceNumber before) {
  {
    auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(Canonical((*g)->GetSnapshot()), expected);
    EXPECT_EQ((*g)->GetSnapshot().sequence(), before + 1);
    EXPECT_TRUE((*g)->GetSnapshot().FindVertex("Person", "id", "p2").value().has_value());
    WriteBatch b;
    b.AddVertex("Person", {{"name", "Dee"}});
    Result<CommitInfo> c = (*g)->Write(std::move(b));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->sequence, before + 2);
    ASSERT_TRUE((*g)->Close().ok());
  }
  Result<VerifyReport> report = VerifyGraphDirectory(&fs, kDir);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << report->status.ToString();
  auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Snapshot s = g.value()->GetSnapshot();
  EXPECT_EQ(s.sequence(), before + 2);
  EXPECT_EQ(s.vertex_count(), 4u);
  EXPECT_EQ(s.GetProperty(VertexId(3), "name")->as_string(), "Dee");
}

TEST(ImportEmptyGraphTest, ANewlyCreatedGraphTakesTheBulkPath) {
  env::SimFileSystem fs;
  const Input in = Small(fs);
  const SequenceNumber before = MakeGraph(fs, [](Graph&) {});
  Result<ImportStats> r = Bulk(fs, in.spec, in.options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->batches, 0u);  // no batch: the checkpoint
  EXPECT_GT(r->checkpoint_bytes, 0u);
  EXPECT_EQ(r->vertices, 3u);
  EgCheckImported(fs, Expected(fs, in), before);
}

// Commits that left no element (an index created and dropped) and a
// checkpoint written at Close: the import follows the last of them.
TEST(ImportEmptyGraphTest, AGraphWithCommitsButNoElementTakesTheBulkPath) {
  env::SimFileSystem fs;
  const Input in = Small(fs);
  const SequenceNumber before = MakeGraph(fs, [](Graph& g) {
    ASSERT_TRUE(g.CreateIndex(IndexSpec{.name = "x", .label = "Other", .keys = {"k"}}).ok());
    ASSERT_TRUE(g.DropIndex("x").ok());
    ASSERT_TRUE(g.Checkpoint().ok());
  });
  ASSERT_GE(before, 2u);
  ASSERT_TRUE(Bulk(fs, in.spec, in.options).ok());
  EgCheckImported(fs, Expected(fs, in), before);
}

// Refused, FailedPrecondition, not a byte changed: a graph holding a
// vertex, one whose only vertex was removed (its id stays retired), one
// declaring an index, and one a writer has open.
TEST(ImportEmptyGraphTest, AGraphThatIsNotEmptyIsRefusedAndUntouched) {
  struct Case {
    const char* name;
    std::function<void(Graph&)> fill;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"holds a vertex",
       [](Graph& g) {
         WriteBatch b;
         b.AddVertex("P");
         ASSERT_TRUE(g.Write(std::move(b)).ok());
       },
       "has held elements"},
      {"held a vertex",
       [](Graph& g) {
         WriteBatch b;
         b.AddVertex("P");
         ASSERT_TRUE(g.Write(std::move(b)).ok());
         WriteBatch r;
         r.RemoveVertex(VertexId(0));
         ASSERT_TRUE(g.Write(std::move(r)).ok());
       },
       "has held elements"},
      {"declares an index",
       [](Graph& g) { ASSERT_TRUE(g.CreateIndex(IndexSpec{.name = "x", .label = "P", .keys = {"k"}}).ok()); },
       "declares indexes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    const Input in = Small(fs);
    MakeGraph(fs, c.fill);
    const auto files = Files(fs);
    Result<ImportStats> r = Bulk(fs, in.spec, in.options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().ToString();
    EXPECT_EQ(Files(fs), files);
  }
  // Open by a writer: its LOCK is held.
  env::SimFileSystem fs;
  const Input in = Small(fs);
  MakeGraph(fs, [](Graph&) {});
  auto open = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
  ASSERT_TRUE(open.ok());
  const auto files = Files(fs);
  Result<ImportStats> r = Bulk(fs, in.spec, in.options);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_EQ(Files(fs), files);
  ASSERT_TRUE((*open)->Close().ok());
}

// Every I/O operation failed in turn, once: the import fails with it or
// succeeds, and a failed one leaves the empty graph, which still opens
// empty and takes the import when run again.
TEST(ImportEmptyGraphTest, EveryFailedOperationLeavesTheEmptyGraph) {
  std::uint64_t failures = 0;
  for (std::uint64_t n = 1;; ++n) {
    env::SimFileSystem sim;
    const Input in = Small(sim);
    const SequenceNumber before = MakeGraph(sim, [](Graph&) {});
    const auto files = Files(sim);
    env::FaultFileSystem fs(&sim);
    fs.SetFault({.ops = env::FaultOp::kAll, .mode = env::FaultMode::kOnce, .at = n});
    Result<ImportStats> r = Bulk(fs, in.spec, in.options);
    if (fs.faults_injected() == 0) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      break;
    }
    EXPECT_EQ(fs.TotalSyncsAfterFailedSync(), 0u);
    SCOPED_TRACE(::testing::Message() << "operation " << n << ": " << r.status().ToString());
    if (r.ok()) continue;
    ++failures;
    EXPECT_EQ(Files(sim), files);  // the identity file too
    {
      auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &sim);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      EXPECT_EQ((*g)->GetSnapshot().vertex_count(), 0u);
      EXPECT_EQ((*g)->GetSnapshot().sequence(), before);
      ASSERT_TRUE((*g)->Close().ok());
    }
    ASSERT_TRUE(Bulk(sim, in.spec, in.options).ok());
  }
  EXPECT_GT(failures, 5u);
}

// Power lost at every operation of the import, under every crash policy:
// the graph opens empty (at its old sequence) or holding the whole import,
// never part of it; an acknowledged import is always there; and either way
// a commit after the reopen survives the next one.
TEST(ImportEmptyGraphTest, PowerLossAnywhereLeavesTheEmptyGraphOrTheWholeImport) {
  env::SimFileSystem once;
  const Input in = Small(once);
  const std::string expected = Expected(once, in);
  const SequenceNumber before = MakeGraph(once, [](Graph&) {});
  const std::uint64_t base = once.operation_count();
  ASSERT_TRUE(Bulk(once, in.spec, in.options).ok());
  const std::uint64_t total = once.operation_count() - base;
  ASSERT_GT(total, 5u);
  int whole = 0, empty = 0, acknowledged_lost = 0;
  for (std::uint64_t n = 1; n <= total + 1; ++n) {
    env::SimFileSystem run;
    Small(run);
    MakeGraph(run, [](Graph&) {});
    run.SetCrashAtOperation(run.operation_count() + n);
    const bool ok = Bulk(run, in.spec, in.options).ok();
    for (env::CrashPolicy p : env::kAllCrashPolicies) {
      SCOPED_TRACE(::testing::Message()
                   << "crash at operation " << n << " under " << env::CrashPolicyName(p));
      std::unique_ptr<env::SimFileSystem> crashed = run.Clone();
      crashed->Crash(p, n);
      auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, crashed.get());
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      Snapshot s = (*g)->GetSnapshot();
      const bool imported = s.vertex_count() != 0;
      if (imported) {
        EXPECT_EQ(Canonical(s), expected);
        EXPECT_EQ(s.sequence(), before + 1);
        ++whole;
      } else {
        EXPECT_EQ(s.sequence(), before);
        if (ok) ++acknowledged_lost;
        ++empty;
      }
      const SequenceNumber at = s.sequence();
      s = Snapshot();
      WriteBatch b;
      b.AddVertex("After");
      ASSERT_TRUE((*g)->Write(std::move(b)).ok());
      ASSERT_TRUE((*g)->Close().ok());
      auto again = GraphImpl::OpenDurable(GraphOptions(false), kDir, crashed.get());
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_EQ((*again)->GetSnapshot().sequence(), at + 1);
      EXPECT_EQ((*again)->GetSnapshot().vertex_count(), imported ? 4u : 1u);
    }
  }
  std::printf(
      "[ figures  ] import into an empty graph: %llu crash points, %d opens empty, %d whole, "
      "acknowledged imports lost: %d\n",
      static_cast<unsigned long long>(total + 1), empty, whole, acknowledged_lost);
  EXPECT_EQ(acknowledged_lost, 0);
  EXPECT_GT(whole, 0);
  EXPECT_GT(empty, 0);
}

}  // namespace
}  // namespace quiver
