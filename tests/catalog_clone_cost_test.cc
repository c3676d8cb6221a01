// Review finding (label/type sets' callers, src/index/catalog.cc; failed before
// its fix, stop 45: the catalog's per-label values are CowArrays now):
// every commit group that adds or removes one element, or changes one property,
// clones the whole Catalog (OwnCatalog -> Catalog::Clone), which copies one
// 56-byte IdSetRoot per label id and per edge type id ever used (plus the
// key counts and IndexesOn vectors). A one-vertex commit on a graph with
// 200,000 labels copies ~11 MB. DESIGN.md: "a commit group costs
// O(changed elements), not O(graph)" and, for indexes, "a commit costs
// O(changed entries x log n)". Fails today: the heap peak of a one-vertex
// commit grows with the number of labels.
//
// Needs the quiver_tests binary's operator new (alloc_hook.h: live-heap
// tracking); skips where it is not linked in.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloc_hook.h"
#include "quiver/graph.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

// A graph with `labels` labels, `per_label` vertices each, in batches.
std::unique_ptr<Graph> IdSetRevManyLabels(std::uint32_t labels, std::uint32_t per_label) {
  Options o;
  o.writer.spin_microseconds = 0;
  auto g = Graph::OpenInMemory(o).value();
  WriteBatch b;
  std::uint64_t in_batch = 0;
  for (std::uint32_t l = 0; l < labels; ++l) {
    const std::string name = "L" + std::to_string(l);
    for (std::uint32_t i = 0; i < per_label; ++i) {
      b.AddVertex(name);
      if (++in_batch == 20'000) {
        EXPECT_TRUE(g->Write(std::move(b)).ok());
        b = WriteBatch();
        in_batch = 0;
      }
    }
  }
  if (in_batch > 0) {
    EXPECT_TRUE(g->Write(std::move(b)).ok());
  }
  return g;
}

// The most the heap grew above its level at the start while one vertex of
// an existing label was committed.
std::int64_t IdSetRevOneVertexCommitPeak(Graph& g) {
  WriteBatch b;
  b.AddVertex("L0");
  std::int64_t peak = 0;
  {
    test_util::ScopedLiveHeapTracking tracking;
    EXPECT_TRUE(g.Write(std::move(b)).ok());
    peak = tracking.PeakGrowth();
  }
  return peak;
}

TEST(IdSetReviewTest, FindingOneVertexCommitCopiesEveryLabelsSetRoot) {
  {  // Is live-heap tracking linked into this binary?
    test_util::ScopedLiveHeapTracking probe;
    auto block = std::make_unique<std::vector<char>>(4u << 20, 'x');
    if (probe.PeakGrowth() < (4 << 20)) GTEST_SKIP() << "no live-heap tracking operator new in this binary";
  }
  // The same number of vertices either way: 200,000 labels of one vertex,
  // or one label of 200,000.
  auto few = IdSetRevManyLabels(1, 200'000);
  auto many = IdSetRevManyLabels(200'000, 1);
  // A first one-vertex commit each, so the writer's reservation for the
  // group's blocks (sized by the last group: 20,000 adds) is small again.
  IdSetRevOneVertexCommitPeak(*few);
  IdSetRevOneVertexCommitPeak(*many);
  const std::int64_t few_peak = IdSetRevOneVertexCommitPeak(*few);
  const std::int64_t many_peak = IdSetRevOneVertexCommitPeak(*many);
  // A one-vertex commit changes one set: a few KiB of blocks (a small
  // block or a chunk, a directory path) whatever the number of labels.
  EXPECT_LT(few_peak, 1 << 20);
  EXPECT_LT(many_peak, 1 << 20) << "a one-vertex commit held " << many_peak
                                << " bytes more heap with 200,000 labels (" << few_peak
                                << " with one): Catalog::Clone copies every label's IdSetRoot";
  EXPECT_LT(many_peak, 4 * few_peak + (256 << 10));
}

}  // namespace
}  // namespace quiver
