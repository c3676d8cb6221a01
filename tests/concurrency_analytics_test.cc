// The analytics kernels whose workers share state (BFS's CAS-claimed depths
// and bottom-up bitmaps, WCC's lock-free union-find, SSSP's delta-stepping
// with shared distances and a barrier per round, LCC's atomic adds to the
// corners of the triangles other workers find) under ThreadSanitizer: on 2,
// 4 and 8 threads each gives what one thread gives. Built into the
// concurrency binary, so the tsan stage runs it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "quiver/analytics.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

// 20,000 vertices and 80,000 random edges with weights from 0 to 1 (a
// quarter of them 0), plus a chain of 300 edges of weight 50 entered from
// vertex 0, which moves delta-stepping's window of bins several times.
std::unique_ptr<Graph> KernelGraph() {
  std::mt19937_64 rng(11);
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 20300; ++i) vs.push_back(b.AddVertex("V"));
  for (int i = 0; i < 80000; ++i) {
    const double w = rng() % 4 == 0 ? 0.0 : static_cast<double>(rng() % 1000) / 1e3;
    b.AddEdge("E", vs[rng() % 20000], vs[rng() % 20000], {{"w", w}});
  }
  b.AddEdge("E", vs[0], vs[20000], {{"w", 1.0}});
  for (int i = 20000; i + 1 < 20300; ++i) b.AddEdge("E", vs[i], vs[i + 1], {{"w", 50.0}});
  EXPECT_TRUE(graph->Write(std::move(b)).ok());
  return graph;
}

TEST(ConcurrencyAnalyticsTest, SharedStateKernelsGiveWhatOneThreadGives) {
  auto graph = KernelGraph();
  Snapshot snap = graph->GetSnapshot();
  auto both = Project(snap, {.weight_property = "w", .threads = 2}).value();
  auto out_only = Project(snap, {.in = false, .weight_property = "w", .threads = 2}).value();
  const RunOptions one{.threads = 1};
  const auto bfs = Bfs(both, VertexId(0), one).value();
  const auto wcc = Wcc(both, one).value();
  const auto sssp = Sssp(out_only, VertexId(0), one).value();
  ASSERT_NE(sssp[20299], std::numeric_limits<double>::infinity());
  for (std::uint32_t t : {2u, 4u, 8u}) {
    SCOPED_TRACE(t);
    const RunOptions run{.threads = t};
    EXPECT_TRUE(Bfs(both, VertexId(0), run).value() == bfs);
    EXPECT_TRUE(Bfs(out_only, VertexId(0), run).value() == bfs);
    EXPECT_TRUE(Wcc(both, run).value() == wcc);
    EXPECT_TRUE(Wcc(out_only, run).value() == wcc);
    EXPECT_TRUE(Sssp(out_only, VertexId(0), run).value() == sssp);
  }
}

// A ring lattice (each vertex joined to the next four, in alternating
// directions) over three blocks: its triangles cross the blocks, so workers
// add to each other's vertices.
TEST(ConcurrencyAnalyticsTest, LccAddsToOtherWorkersVertices) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  constexpr int kLatticeVertices = 3 * 4096 + 100;
  std::vector<NewVertex> vs;
  for (int i = 0; i < kLatticeVertices; ++i) vs.push_back(b.AddVertex("V"));
  for (int i = 0; i < kLatticeVertices; ++i) {
    for (int k = 1; k <= 4; ++k) {
      const int j = (i + k) % kLatticeVertices;
      if ((i + k) % 2 == 0) {
        b.AddEdge("E", vs[i], vs[j]);
      } else {
        b.AddEdge("E", vs[j], vs[i]);
      }
    }
  }
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  Snapshot snap = graph->GetSnapshot();
  auto p = Project(snap, {.threads = 2}).value();
  const auto lcc = Lcc(p, {.threads = 1}).value();
  ASSERT_GT(lcc[5], 0.0);
  for (std::uint32_t t : {2u, 4u, 8u}) {
    SCOPED_TRACE(t);
    EXPECT_TRUE(Lcc(p, {.threads = t}).value() == lcc);
  }
}

}  // namespace
}  // namespace quiver
