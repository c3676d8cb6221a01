// The compactor (Graph::Compact) under ThreadSanitizer: readers sweep
// snapshots and check each against itself while one thread compacts in
// steps and another keeps adding edges (which move repacked vertices out
// again). A snapshot must read the same however its layout changes after
// it was taken. Built into the concurrency binary, so the tsan stage runs
// it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "graph_impl.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

// The sum and count of the out-neighbour ids of `snap`, read twice: by a
// sweep and vertex by vertex.
struct Sums {
  std::uint64_t sum = 0, count = 0;
  bool operator==(const Sums&) const = default;
};
Sums Sweep(const Snapshot& snap) {
  Sums s;
  snap.ScanEdges(0, snap.vertex_id_limit(), Direction::kOut, [&](VertexId, const EdgeGroup& g) {
    for (const EdgeEntry& e : g.entries) s.sum += e.neighbor().value();
    s.count += g.entries.size();
  });
  return s;
}
Sums OneByOne(const Snapshot& snap) {
  Sums s;
  for (std::uint64_t v = 0; v < snap.vertex_id_limit(); ++v) {
    for (const EdgeGroup& g : snap.OutEdges(VertexId(v))) {
      for (const EdgeEntry& e : g.entries) s.sum += e.neighbor().value();
      s.count += g.entries.size();
    }
  }
  return s;
}

// 20,000 vertices (313 leaves) and 80,000 random edges, compacting in
// steps of 2,000 entries or 16 leaves (tens of steps a pass); two readers
// check every snapshot they take until Stop.
class Scene {
 public:
  static constexpr std::uint64_t kVertices = 20'000;

  Scene(const Options& o, std::uint64_t seed) : graph_(Graph::OpenInMemory(o).value()), next_(seed) {
    static_cast<GraphImpl&>(*graph_).TEST_set_compact_step(2'000, 16);
    WriteBatch b;
    for (std::uint64_t i = 0; i < kVertices; ++i) b.AddVertex("V");
    EXPECT_TRUE(graph_->Write(std::move(b)).ok());
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(graph_->Write(Edges(20'000)).ok());
    for (int r = 0; r < 2; ++r) {
      readers_.emplace_back([this] {
        while (!stop_.load()) {
          const Snapshot snap = graph_->GetSnapshot();
          const Sums a = Sweep(snap);
          if (!(a == OneByOne(snap)) || a.count != snap.edge_count() || !(Sweep(snap) == a))
            failures_.fetch_add(1);
          checked_.fetch_add(1);
        }
      });
    }
  }
  ~Scene() { StopReaders(); }

  Graph& graph() { return *graph_; }
  // `n` random edges (the caller's thread only).
  WriteBatch Edges(std::uint64_t n) {
    WriteBatch b;
    for (std::uint64_t i = 0; i < n; ++i)
      b.AddEdge("E", VertexId(next_() % kVertices), VertexId(next_() % kVertices));
    return b;
  }
  // Once each reader checked a few snapshots; returns the failures seen.
  std::uint64_t StopReaders() {
    while (!readers_.empty() && checked_.load() < 6) std::this_thread::yield();
    stop_.store(true);
    for (std::thread& t : readers_) t.join();
    readers_.clear();
    return failures_.load();
  }

 private:
  std::unique_ptr<Graph> graph_;
  std::mt19937_64 next_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> checked_{0}, failures_{0};
  std::vector<std::thread> readers_;
};

TEST(ConcurrencyCompactTest, ReadersSeeTheirSnapshotWhileCompactAndWritesInterleave) {
  Scene scene(Options{}, 20261206);
  Graph& graph = scene.graph();
  std::vector<WriteBatch> batches;
  for (int i = 0; i < 20; ++i) batches.push_back(scene.Edges(500));
  std::thread writer([&] {
    for (WriteBatch& b : batches) EXPECT_TRUE(graph.Write(std::move(b)).ok());
  });
  std::uint64_t blocks = 0;
  for (int round = 0; round < 3; ++round) {
    Result<CompactStats> c = graph.Compact();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    blocks += c->blocks;
  }
  writer.join();
  ASSERT_TRUE(graph.Compact().ok());
  EXPECT_EQ(scene.StopReaders(), 0u);
  EXPECT_GT(blocks, 0u);
  const Snapshot snap = graph.GetSnapshot();
  EXPECT_EQ(Sweep(snap), OneByOne(snap));
  EXPECT_EQ(Sweep(snap).count, 80'000u + 20u * 500u);
}

// The same with the graph compacting itself (Options::compaction): its
// compactor thread commits steps whenever the writer pauses for a
// millisecond, while readers check their snapshots; then Close stops it.
TEST(ConcurrencyCompactTest, ReadersSeeTheirSnapshotWhileTheGraphCompactsItself) {
  Options o;
  o.compaction.after_changes = 1'000;
  o.compaction.idle_milliseconds = 1;
  Scene scene(o, 20261207);
  Graph& graph = scene.graph();
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(graph.Write(scene.Edges(500)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  EXPECT_EQ(scene.StopReaders(), 0u);
  // The pass the last writes started (the readers' pins, which pause a
  // pass, are gone).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (graph.GetCompactionStats().passes == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GT(graph.GetCompactionStats().passes, 0u);
  ASSERT_TRUE(graph.Close().ok());
  const Snapshot snap = graph.GetSnapshot();
  EXPECT_EQ(Sweep(snap), OneByOne(snap));
  EXPECT_EQ(Sweep(snap).count, 80'000u + 40u * 500u);
}

}  // namespace
}  // namespace quiver
