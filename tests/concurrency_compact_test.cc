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

TEST(ConcurrencyCompactTest, ReadersSeeTheirSnapshotWhileCompactAndWritesInterleave) {
  constexpr std::uint64_t kVertices = 20'000;  // 313 leaves
  auto graph = Graph::OpenInMemory().value();
  static_cast<GraphImpl&>(*graph).TEST_set_compact_step(2'000, 16);  // tens of steps a call
  {
    WriteBatch b;
    for (std::uint64_t i = 0; i < kVertices; ++i) b.AddVertex("V");
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  std::mt19937_64 next(20261206);
  auto edges = [&](std::uint64_t n) {
    WriteBatch b;
    for (std::uint64_t i = 0; i < n; ++i)
      b.AddEdge("E", VertexId(next() % kVertices), VertexId(next() % kVertices));
    return b;
  };
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(graph->Write(edges(20'000)).ok());
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> checked{0}, failures{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const Snapshot snap = graph->GetSnapshot();
        const Sums a = Sweep(snap);
        const Sums b = OneByOne(snap);
        if (!(a == b) || a.count != snap.edge_count() || !(Sweep(snap) == a)) failures.fetch_add(1);
        checked.fetch_add(1);
      }
    });
  }
  std::thread writer([&] {
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(graph->Write(edges(500)).ok());
  });
  std::uint64_t blocks = 0;
  for (int round = 0; round < 3; ++round) {
    Result<CompactStats> c = graph->Compact();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    blocks += c->blocks;
  }
  writer.join();
  ASSERT_TRUE(graph->Compact().ok());
  while (checked.load() < 6) std::this_thread::yield();
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_GT(blocks, 0u);
  const Snapshot snap = graph->GetSnapshot();
  EXPECT_EQ(Sweep(snap), OneByOne(snap));
  EXPECT_EQ(Sweep(snap).count, 80'000u + 20u * 500u);
}

// The same with the graph compacting itself (Options::compaction): its
// compactor thread commits steps whenever the writer pauses for a
// millisecond, while readers check their snapshots; then Close stops it.
TEST(ConcurrencyCompactTest, ReadersSeeTheirSnapshotWhileTheGraphCompactsItself) {
  constexpr std::uint64_t kVertices = 20'000;
  Options o;
  o.compaction.after_changes = 1'000;
  o.compaction.idle_milliseconds = 1;
  auto graph = Graph::OpenInMemory(o).value();
  static_cast<GraphImpl&>(*graph).TEST_set_compact_step(2'000, 16);
  {
    WriteBatch b;
    for (std::uint64_t i = 0; i < kVertices; ++i) b.AddVertex("V");
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  std::mt19937_64 next(20261207);
  auto edges = [&](std::uint64_t n) {
    WriteBatch b;
    for (std::uint64_t i = 0; i < n; ++i)
      b.AddEdge("E", VertexId(next() % kVertices), VertexId(next() % kVertices));
    return b;
  };
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(graph->Write(edges(20'000)).ok());
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> checked{0}, failures{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const Snapshot snap = graph->GetSnapshot();
        const Sums a = Sweep(snap);
        if (!(a == OneByOne(snap)) || a.count != snap.edge_count()) failures.fetch_add(1);
        checked.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(graph->Write(edges(500)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  while (checked.load() < 6) std::this_thread::yield();
  stop.store(true);
  for (std::thread& t : readers) t.join();
  // The pass the last writes started (the readers' pins, which pause a
  // pass, are gone).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (graph->GetCompactionStats().passes == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GT(graph->GetCompactionStats().passes, 0u);
  ASSERT_TRUE(graph->Close().ok());
  EXPECT_EQ(failures.load(), 0u);
  const Snapshot snap = graph->GetSnapshot();
  EXPECT_EQ(Sweep(snap), OneByOne(snap));
  EXPECT_EQ(Sweep(snap).count, 80'000u + 40u * 500u);
}

}  // namespace
}  // namespace quiver
