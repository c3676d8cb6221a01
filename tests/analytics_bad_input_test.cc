// Bad input to projections and kernels: each gets its precise status and
// nothing half-built; plus the contracts around the edges of the API:
// cancellation, progress, write-back, a projection outliving its graph.
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "quiver/analytics.h"
#include "quiver/graph.h"

namespace quiver {
namespace {

// 0 -> 1 -> 2, 2 -> 0 (type E, weights 1, 2, 3), an isolated 3 of label B.
struct Small {
  std::unique_ptr<Graph> graph = Graph::OpenInMemory().value();
  std::vector<VertexId> v;
  std::vector<EdgeId> e;
  Small() {
    WriteBatch b;
    auto a = b.AddVertex("A"), c = b.AddVertex("A"), d = b.AddVertex("A"), x = b.AddVertex("B");
    b.AddEdge("E", a, c, {{"w", 1}});
    b.AddEdge("E", c, d, {{"w", 2.0}});
    b.AddEdge("E", d, a, {{"w", 3}});
    (void)x;
    CommitInfo info = graph->Write(std::move(b)).value();
    v = info.vertices;
    e = info.edges;
  }
};

TEST(AnalyticsBadInputTest, UnknownNamesAreNotFound) {
  Small s;
  Snapshot snap = s.graph->GetSnapshot();
  auto r = Project(snap, {.vertex_labels = {"A", "Nope"}});
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("'Nope'"), std::string::npos);
  EXPECT_EQ(Project(snap, {.edge_types = {"F"}}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Project(snap, {.weight_property = "missing"}).status().code(), StatusCode::kNotFound);
}

TEST(AnalyticsBadInputTest, NonNumericWeightNamesTheEdge) {
  Small s;
  WriteBatch b;
  b.SetProperty(s.e[1], "w", "heavy");
  ASSERT_TRUE(s.graph->Write(std::move(b)).ok());
  auto r = Project(s.graph->GetSnapshot(), {.weight_property = "w"});
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("edge " + std::to_string(s.e[1].value())), std::string::npos)
      << r.status().ToString();
}

TEST(AnalyticsBadInputTest, MissingWeightNeedsADefault) {
  Small s;
  WriteBatch b;
  b.RemoveProperty(s.e[2], "w");
  ASSERT_TRUE(s.graph->Write(std::move(b)).ok());
  Snapshot snap = s.graph->GetSnapshot();
  auto r = Project(snap, {.weight_property = "w"});
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("edge " + std::to_string(s.e[2].value())), std::string::npos);
  auto p = Project(snap, {.weight_property = "w", .default_weight = 0.25}).value();
  EXPECT_EQ(p.OutWeights(*p.ToDense(s.v[2]))[0], 0.25);
  EXPECT_EQ(Project(snap, {.weight_property = "w", .default_weight = std::nan("")}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(AnalyticsBadInputTest, NegativeWeightFailsSsspNamingTheEdge) {
  Small s;
  WriteBatch b;
  b.SetProperty(s.e[1], "w", -0.5);
  ASSERT_TRUE(s.graph->Write(std::move(b)).ok());
  auto p = Project(s.graph->GetSnapshot(), {.weight_property = "w"}).value();
  EXPECT_EQ(p.negative_weight_edge(), s.e[1]);
  EXPECT_EQ(p.min_weight(), -0.5);
  auto r = Sssp(p, s.v[0]);
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("edge " + std::to_string(s.e[1].value())), std::string::npos);
}

TEST(AnalyticsBadInputTest, SourceOutsideTheProjectionIsNotFound) {
  Small s;
  WriteBatch b;
  b.RemoveVertex(s.v[1]);
  ASSERT_TRUE(s.graph->Write(std::move(b)).ok());
  auto p = Project(s.graph->GetSnapshot(), {.vertex_labels = {"A"}, .weight_property = "w"}).value();
  EXPECT_EQ(p.vertex_count(), 2u);
  for (VertexId bad : {s.v[1] /*removed*/, s.v[3] /*label B*/, VertexId(1000) /*never existed*/}) {
    EXPECT_EQ(Bfs(p, bad).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(Sssp(p, bad).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(PersonalizedPageRank(p, std::vector<std::pair<VertexId, double>>{{bad, 1.0}}).status().code(),
              StatusCode::kNotFound);
  }
}

TEST(AnalyticsBadInputTest, MemoryLimitIsCheckedBeforeBuilding) {
  Small s;
  Snapshot snap = s.graph->GetSnapshot();
  auto full = Project(snap, {.weight_property = "w"}).value();
  // 4 vertices, 3 entries per direction, weighted, identity map: 2 x (8 x 5 + 12 x 3).
  EXPECT_EQ(full.memory_bytes(), 2u * (8 * 5 + 12 * 3));
  EXPECT_TRUE(Project(snap, {.weight_property = "w", .memory_limit_bytes = full.memory_bytes()}).ok());
  auto r = Project(snap, {.weight_property = "w", .memory_limit_bytes = full.memory_bytes() - 1});
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

TEST(AnalyticsBadInputTest, KernelsStateWhatTheyNeed) {
  Small s;
  Snapshot snap = s.graph->GetSnapshot();
  EXPECT_EQ(Project(snap, {.out = false, .in = false}).status().code(), StatusCode::kInvalidArgument);
  auto out_only = Project(snap, {.in = false}).value();
  EXPECT_EQ(PageRank(out_only).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Cdlp(out_only, 3).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Lcc(out_only).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Sssp(out_only, s.v[0]).status().code(), StatusCode::kFailedPrecondition);  // unweighted
  auto in_only = Project(snap, {.out = false}).value();
  EXPECT_EQ(Bfs(in_only, s.v[0]).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Wcc(in_only).status().code(), StatusCode::kFailedPrecondition);
  // PageRank pulls over in-edges and counts out-degrees from them.
  auto pr_in = PageRank(in_only, {.iterations = 3}).value();
  auto both = Project(snap).value();
  EXPECT_TRUE(PageRank(both, {.iterations = 3}).value() == pr_in);
  EXPECT_EQ(PageRank(both, {.damping = 1.5}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PageRank(both, {.damping = std::nan("")}).status().code(), StatusCode::kInvalidArgument);
  using Seeds = std::vector<std::pair<VertexId, double>>;
  EXPECT_EQ(PersonalizedPageRank(both, Seeds{}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PersonalizedPageRank(both, Seeds{{s.v[0], -1.0}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PersonalizedPageRank(both, Seeds{{s.v[0], 0.0}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PersonalizedPageRank(both, Seeds{{s.v[0], std::nan("")}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(AnalyticsBadInputTest, CancelledKernelsReturnCancelled) {
  Small s;
  auto p = Project(s.graph->GetSnapshot(), {.weight_property = "w"}).value();
  std::atomic<bool> cancel{true};
  const RunOptions run{.cancel = &cancel};
  EXPECT_EQ(Bfs(p, s.v[0], run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(PageRank(p, {}, run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(Wcc(p, run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(Cdlp(p, 2, run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(Lcc(p, run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(Sssp(p, s.v[0], run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(TriangleCount(p, run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(CoreNumbers(p, run).status().code(), StatusCode::kCancelled);
}

TEST(AnalyticsBadInputTest, CancelFromTheProgressCallbackStopsBetweenIterations) {
  Small s;
  auto p = Project(s.graph->GetSnapshot()).value();
  std::atomic<bool> cancel{false};
  std::vector<std::uint64_t> iterations;
  RunOptions run{.progress =
                     [&](const Progress& pr) {
                       if (pr.phase != "pagerank iteration") return;
                       iterations.push_back(pr.done);
                       EXPECT_EQ(pr.total, 10u);
                       if (pr.done == 3) cancel = true;
                     },
                 .cancel = &cancel};
  EXPECT_EQ(PageRank(p, {.iterations = 10}, run).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(iterations, (std::vector<std::uint64_t>{0, 1, 2, 3}));
}

TEST(AnalyticsBadInputTest, ProjectionOutlivesSnapshotAndGraph) {
  Projection p;
  VertexId first;
  {
    Small s;
    first = s.v[0];
    p = Project(s.graph->GetSnapshot()).value();
    ASSERT_TRUE(s.graph->Close().ok());
  }
  auto depth = Bfs(p, first).value();
  EXPECT_EQ(depth, (std::vector<std::int64_t>{0, 1, 2, kUnreachableDepth}));
}

TEST(AnalyticsBadInputTest, WriteBackSetsAndRemovesProperties) {
  Small s;
  auto p = Project(s.graph->GetSnapshot(), {.weight_property = "w"}).value();
  auto dist = Sssp(p, s.v[0]).value();
  EXPECT_EQ(dist, (std::vector<double>{0, 1, 3, std::numeric_limits<double>::infinity()}));
  {  // the isolated vertex had a stale distance: unreachable removes it
    WriteBatch b;
    b.SetProperty(s.v[3], "dist", 9.0);
    ASSERT_TRUE(s.graph->Write(std::move(b)).ok());
  }
  EXPECT_EQ(WriteVertexProperty(*s.graph, p, "dist", dist, {.batch_vertices = 3}).value(), 4u);
  auto depth = Bfs(p, s.v[0]).value();
  EXPECT_EQ(WriteVertexProperty(*s.graph, p, "depth", depth).value(), 4u);
  Snapshot snap = s.graph->GetSnapshot();
  EXPECT_EQ(snap.GetProperty(s.v[2], "dist")->as_double(), 3.0);
  EXPECT_FALSE(snap.GetProperty(s.v[3], "dist").has_value());
  EXPECT_EQ(snap.GetProperty(s.v[3], "depth")->as_int64(), kUnreachableDepth);
  EXPECT_EQ(WriteVertexProperty(*s.graph, p, "dist", std::span<const double>(dist).first(2)).status().code(),
            StatusCode::kInvalidArgument);
  WriteBatch b;  // a vertex removed since the projection was built
  b.RemoveVertex(s.v[1]);
  ASSERT_TRUE(s.graph->Write(std::move(b)).ok());
  EXPECT_EQ(WriteVertexProperty(*s.graph, p, "dist", dist).status().code(), StatusCode::kNotFound);
}

// Regression: two finite seed weights whose sum overflows to +infinity made
// every rank 0 with OK.
TEST(AnalyticsBadInputTest, HugeSeedWeightsStillSumToOne) {
  Small s;
  auto p = Project(s.graph->GetSnapshot()).value();
  using Seeds = std::vector<std::pair<VertexId, double>>;
  for (const Seeds& seeds : {Seeds{{s.v[0], 1e308}, {s.v[1], 1e308}}, Seeds{{s.v[0], 1e308}, {s.v[0], 1e308}},
                             Seeds{{s.v[0], 4e-320}, {s.v[1], 1e-320}}}) {
    auto r = PersonalizedPageRank(p, seeds);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    double sum = 0;
    for (double x : *r) sum += x;
    EXPECT_NEAR(sum, 1.0, 1e-9);
  }
}

// Regression: min_weight() and negative_weight_edge() described the weights
// before kMerge summed them.
TEST(AnalyticsBadInputTest, MergedWeightsDescribeTheProjection) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  auto a = b.AddVertex("A"), c = b.AddVertex("A");
  b.AddEdge("E", a, c, {{"w", -1.0}});
  b.AddEdge("E", a, c, {{"w", 5}});
  CommitInfo info = graph->Write(std::move(b)).value();
  Snapshot snap = graph->GetSnapshot();
  auto merged = Project(snap, {.weight_property = "w", .parallel_edges = ParallelEdges::kMerge}).value();
  const std::uint32_t da = merged.ToDense(info.vertices[0]).value();
  ASSERT_EQ(merged.OutWeights(da).size(), 1u);
  EXPECT_EQ(merged.OutWeights(da)[0], 4.0);
  EXPECT_EQ(merged.min_weight(), 4.0);
  EXPECT_FALSE(merged.negative_weight_edge().has_value());
  EXPECT_TRUE(Sssp(merged, info.vertices[0]).ok());
  // Dropped, the negative edge is what remains (the smallest weight).
  auto dropped = Project(snap, {.weight_property = "w", .parallel_edges = ParallelEdges::kDrop}).value();
  EXPECT_EQ(dropped.min_weight(), -1.0);
  EXPECT_EQ(dropped.negative_weight_edge(), info.edges[0]);
  // Merged to a negative sum, the entry names its smallest edge id.
  WriteBatch more;
  more.AddEdge("E", info.vertices[0], info.vertices[1], {{"w", -7}});
  ASSERT_TRUE(graph->Write(std::move(more)).ok());
  auto negative =
      Project(graph->GetSnapshot(), {.weight_property = "w", .parallel_edges = ParallelEdges::kMerge})
          .value();
  EXPECT_EQ(negative.min_weight(), -3.0);
  EXPECT_EQ(negative.negative_weight_edge(), info.edges[0]);
}

// Regression: Fill stopped handing out blocks after the first error, so the
// edge named depended on the thread count. The smaller bad edge id sits in a
// later block of vertex ids than the larger one.
TEST(AnalyticsBadInputTest, BadWeightMessageIsTheSameOnEveryThreadCount) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 20000; ++i) vs.push_back(b.AddVertex("A"));
  b.AddEdge("E", vs[19000], vs[19001], {{"w", "light"}});  // the smaller edge id, a late block
  for (int i = 0; i < 2000; ++i) b.AddEdge("E", vs[i], vs[i + 1], {{"w", 1.0}});
  b.AddEdge("E", vs[0], vs[2], {{"w", "heavy"}});  // a larger edge id, the first block
  CommitInfo info = graph->Write(std::move(b)).value();
  Snapshot snap = graph->GetSnapshot();
  auto one = Project(snap, {.weight_property = "w", .threads = 1});
  ASSERT_EQ(one.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(one.status().message().find("edge " + std::to_string(info.edges[0].value()) + " "),
            std::string::npos)
      << one.status().ToString();
  for (std::uint32_t t : {2u, 3u}) {
    auto r = Project(snap, {.weight_property = "w", .threads = t});
    EXPECT_EQ(r.status().message(), one.status().message()) << t;
  }
}

// Regression: a null weight was an error even with default_weight set;
// traversal and Top-K treat a null as missing.
TEST(AnalyticsBadInputTest, NullWeightIsMissing) {
  Small s;
  WriteBatch b;
  b.SetProperty(s.e[1], "w", nullptr);
  ASSERT_TRUE(s.graph->Write(std::move(b)).ok());
  Snapshot snap = s.graph->GetSnapshot();
  auto with_default = Project(snap, {.weight_property = "w", .default_weight = 9.0});
  ASSERT_TRUE(with_default.ok()) << with_default.status().ToString();
  const std::uint32_t d1 = with_default->ToDense(s.v[1]).value();
  ASSERT_EQ(with_default->OutWeights(d1).size(), 1u);
  EXPECT_EQ(with_default->OutWeights(d1)[0], 9.0);
  auto without = Project(snap, {.weight_property = "w"});
  ASSERT_EQ(without.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(without.status().message().find("edge " + std::to_string(s.e[1].value()) + " has no weight"),
            std::string::npos)
      << without.status().ToString();
}

}  // namespace
}  // namespace quiver
