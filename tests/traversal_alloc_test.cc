// A warmed-up TraversalContext serves repeated queries without allocating,
// and Project checks its memory limit before allocating its arrays: this
// binary's operator new counts allocations (and their bytes) made on the
// test's thread while counting is switched on. (It is also the binary's one
// operator new, so it carries the allocation-failure hook of alloc_hook.h.)
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "alloc_hook.h"
#include "gtest/gtest.h"
#include "quiver/analytics.h"
#include "quiver/traversal.h"
#include "traversal_test_graph.h"

// Specs are aggregates with defaults, written with designated initializers;
// GCC 12 flags every member such an initializer leaves to its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

thread_local bool g_counting = false;
thread_local std::size_t g_allocations = 0;
thread_local std::size_t g_bytes = 0;
// Allocations of more bytes than this on the test's thread throw bad_alloc.
thread_local std::size_t g_fail_above = ~std::size_t{0};

}  // namespace

// The replaceable global allocation functions (one definition per program;
// quiver_tests has no other). GCC cannot see that this free() pairs with the
// malloc() in operator new above and warns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (n > g_fail_above) throw std::bad_alloc();
  if (g_counting) {
    ++g_allocations;
    g_bytes += n;
  }
  if (quiver::test_util::OperatorNewShouldFail()) throw std::bad_alloc();
  if (void* p = std::malloc(n == 0 ? 1 : n)) {
    if (quiver::test_util::g_track_live.load(std::memory_order_relaxed)) {
      const auto size = static_cast<std::int64_t>(malloc_usable_size(p));
      const std::int64_t live = quiver::test_util::g_live_bytes.fetch_add(size) + size;
      std::int64_t peak = quiver::test_util::g_peak_live_bytes.load();
      while (live > peak && !quiver::test_util::g_peak_live_bytes.compare_exchange_weak(peak, live)) {
      }
    }
    return p;
  }
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): they
// must pair with the operator delete below, which calls free().
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
namespace {
// Every operator delete below: `asked` is the size the block was asked for,
// 0 where the unsized forms do not know it.
void FreeBlock(void* p, std::size_t asked) noexcept {
  if (auto* observe = quiver::test_util::g_operator_delete_observer.load(std::memory_order_relaxed))
    observe(p, asked);
  if (p != nullptr && quiver::test_util::g_track_live.load(std::memory_order_relaxed))
    quiver::test_util::g_live_bytes.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)));
  std::free(p);
}
}  // namespace
void operator delete(void* p) noexcept { FreeBlock(p, 0); }
void operator delete(void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t n) noexcept { FreeBlock(p, n); }
void operator delete[](void* p, std::size_t n) noexcept { FreeBlock(p, n); }

namespace quiver {
namespace {

TEST(TraversalAllocTest, WarmContextAllocatesNothing) {
  traversal_test::RefGraph g = traversal_test::BuildRandom(9, 300, 3000, false);
  Snapshot snap = g.graph->GetSnapshot();
  TraversalContext ctx;
  ExpandSpec expand{.seeds = {VertexId(g.vertices[0]), VertexId(g.vertices[1])},
                    .direction = TraversalDirection::kBoth,
                    .edge_types = {"A"},
                    .max_depth = 3};
  expand.vertex_labels = {"P"};
  expand.edge_predicates = {{"w", CompareOp::kGe, std::int64_t{1}}};
  PathSpec unweighted{.direction = TraversalDirection::kBoth};
  PathSpec weighted{.weight_key = "w"};
  TopKSpec top{.key = "w", .k = 20};
  std::vector<Visit> visits;
  std::vector<Neighbor> best;
  Path path;
  auto run = [&](std::uint64_t i) {
    VertexId s(g.vertices[i % 300]), t(g.vertices[(i * 7 + 3) % 300]);
    expand.seeds[0] = s;
    EXPECT_TRUE(Expand(snap, expand, ctx, &visits).ok());
    EXPECT_TRUE(ShortestPath(snap, s, t, unweighted, ctx, &path).ok());
    EXPECT_TRUE(ShortestPath(snap, s, t, weighted, ctx, &path).ok());
    EXPECT_TRUE(TopKNeighbors(snap, s, top, ctx, &best).ok());
  };
  for (std::uint64_t i = 0; i < 300; ++i) run(i);  // warm-up: every buffer reaches its high-water mark
  g_allocations = 0;
  g_counting = true;
  for (std::uint64_t i = 0; i < 300; ++i) run(i);
  g_counting = false;
  EXPECT_EQ(g_allocations, 0u);
  // The counter does count: a fresh context must allocate its scratch.
  TraversalContext cold;
  g_counting = true;
  EXPECT_TRUE(
      ShortestPath(snap, VertexId(g.vertices[0]), VertexId(g.vertices[5]), unweighted, cold, &path).ok());
  g_counting = false;
  EXPECT_GT(g_allocations, 0u);
}

// Regression: the memory limit was checked only after the id map and the
// offsets were allocated. Refused early, a projection of 50,000 vertex ids
// allocates less than a byte per id on the calling thread.
TEST(ProjectionAllocTest, MemoryLimitIsCheckedBeforeArraysAreAllocated) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 50000; ++i) vs.push_back(b.AddVertex(i % 2 == 0 ? "A" : "B"));
  b.AddEdge("E", vs[0], vs[2]);
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  Snapshot snap = graph->GetSnapshot();
  for (const std::vector<std::string>& labels : {std::vector<std::string>{}, std::vector<std::string>{"A"}}) {
    g_bytes = 0;
    g_counting = true;
    auto r = Project(snap, {.vertex_labels = labels, .memory_limit_bytes = 1000, .threads = 1});
    g_counting = false;
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << labels.size();
    EXPECT_LT(g_bytes, 50000u) << labels.size();
  }
}

// Out of memory while building, Project returns ResourceExhausted instead of
// letting std::bad_alloc escape the API.
TEST(ProjectionAllocTest, OutOfMemoryIsAStatus) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 50000; ++i) vs.push_back(b.AddVertex("A"));
  b.AddEdge("E", vs[0], vs[2]);
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  Snapshot snap = graph->GetSnapshot();
  g_fail_above = 100000;  // the 400,000-byte offsets array fails
  Result<Projection> r = InvalidArgumentError("not run");
  EXPECT_NO_THROW(r = Project(snap, {.threads = 1}));
  g_fail_above = ~std::size_t{0};
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

// Review finding: the traversal calls had no try: out of memory growing a
// fresh context's per-vertex arrays (or an output) threw std::bad_alloc
// across the API. Each call answers ResourceExhausted with its outputs
// cleared, and the context serves the next call once memory is back.
TEST(TraversalAllocTest, OutOfMemoryIsAStatusAndTheContextLivesOn) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> v;
  for (int i = 0; i < 20000; ++i) v.push_back(b.AddVertex("P"));
  b.AddEdge("R", v[0], v[19999], {{"w", 2.0}});
  b.AddEdge("R", v[0], v[1], {{"w", 1.0}});
  const CommitInfo info = graph->Write(std::move(b)).value();
  Snapshot snap = graph->GetSnapshot();
  const VertexId s = info.vertices[0], t = info.vertices[19999];
  for (const bool weighted : {false, true}) {
    TraversalContext ctx;
    const PathSpec spec{.weight_key = weighted ? "w" : ""};
    Path p;
    bool found = true;
    Status st;
    TraversalStats stats;
    g_fail_above = 64 * 1024;  // the per-vertex arrays of 20,000 ids fail
    EXPECT_NO_THROW(st = ShortestPath(snap, s, t, spec, ctx, &p, &found, &stats));
    g_fail_above = ~std::size_t{0};
    EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
    EXPECT_EQ(stats.stopped_by, StopReason::kCompleted);  // what tells it from a budget stop
    EXPECT_FALSE(found);
    EXPECT_TRUE(p.vertices.empty());
    std::vector<Visit> out;
    g_fail_above = 64 * 1024;
    EXPECT_NO_THROW(st = Expand(snap, {.seeds = {s}, .max_depth = 2}, ctx, &out));
    g_fail_above = ~std::size_t{0};
    EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(PathTo(snap, ctx, t, &p).code(), StatusCode::kFailedPrecondition);
    std::vector<Path> paths;
    g_fail_above = 64 * 1024;
    EXPECT_NO_THROW(st = KShortestPaths(snap, s, t, 2, spec, ctx, &paths));
    g_fail_above = ~std::size_t{0};
    EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
    EXPECT_TRUE(paths.empty());
    // Memory back: the same context answers.
    ASSERT_TRUE(ShortestPath(snap, s, t, spec, ctx, &p, &found).ok());
    EXPECT_TRUE(found);
    EXPECT_EQ(p.edges.size(), 1u);
    ASSERT_TRUE(Expand(snap, {.seeds = {s}, .max_depth = 2}, ctx, &out).ok());
    EXPECT_EQ(out.size(), 2u);  // min_depth 1: the two neighbours
  }
}

// Review finding: out of memory growing the kept entries inside a group the
// budget counted whole (BudgetClock::Edges) left the whole group in
// stats.edges_examined; only the entries examined may be counted.
TEST(TraversalAllocTest, TopKOutOfMemoryInAGroupCountedWholeCountsOnlyWhatItExamined) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  const NewVertex hub = b.AddVertex("H");
  const NewVertex other = b.AddVertex("V");
  for (int i = 0; i < 1000; ++i) b.AddEdge("E", hub, other, {{"w", static_cast<double>(i)}});
  const CommitInfo info = graph->Write(std::move(b)).value();
  const Snapshot snap = graph->GetSnapshot();
  TraversalContext ctx;  // fresh: the kept entries grow past 64 (2,048 bytes) to 128 (4,096)
  std::vector<Neighbor> best;
  TraversalStats stats;
  Status st;
  g_fail_above = 3000;
  EXPECT_NO_THROW(st = TopKNeighbors(snap, info.vertices[0], {.key = "w", .k = 20}, ctx, &best, &stats));
  g_fail_above = ~std::size_t{0};
  ASSERT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_EQ(stats.stopped_by, StopReason::kCompleted);
  EXPECT_TRUE(best.empty());
  // The 64th entry filled the buffer, and making room for the next failed.
  EXPECT_EQ(stats.edges_examined, 64u);
  // Memory back: the same context answers, counting every entry.
  ASSERT_TRUE(TopKNeighbors(snap, info.vertices[0], {.key = "w", .k = 20}, ctx, &best, &stats).ok());
  EXPECT_EQ(stats.edges_examined, 1000u);
  ASSERT_EQ(best.size(), 20u);
  EXPECT_EQ(best[0].score, 999.0);
}

// Review finding: once the last subscription's window was swapped out with
// its batches, every new subscription allocated the window's index again
// (max_retained_batches pointers, zero-filled) under the mutex the writer's
// Append takes. The index is made once per graph.
TEST(ChangeFeedAllocTest, ResubscribingDoesNotMakeTheWindowIndexAgain) {
  Options o;
  o.change_feed.max_retained_batches = std::size_t{1} << 20;  // a 16 MiB index
  auto g = Graph::OpenInMemory(o).value();
  {
    auto first = g->Subscribe().value();  // makes it
    WriteBatch b;
    b.AddVertex("P");
    ASSERT_TRUE(g->Write(std::move(b)).ok());
  }
  g_bytes = 0;
  g_counting = true;
  auto again = g->Subscribe();
  g_counting = false;
  ASSERT_TRUE(again.ok());
  EXPECT_LT(g_bytes, std::size_t{1} << 20);
}

}  // namespace
}  // namespace quiver
