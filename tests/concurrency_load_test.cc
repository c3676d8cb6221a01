// The parallel checkpoint loader under ThreadSanitizer: a graph spanning
// several blocks of each kind and several vertex buckets, with vertices of one
// and of several edge types, is checkpointed and reopened on 4 load threads.
// Built into the concurrency binary, so the tsan stage runs it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

TEST(ConcurrencyLoadTest, ParallelLoadReopensTheCheckpointedGraph) {
  constexpr std::uint64_t kVertices = 40'000;  // three buckets of 16,384
  constexpr std::uint64_t kEdges = 80'000;
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = 1;
  std::string before;
  {
    auto g = GraphImpl::OpenDurable(o, "db", &fs).value();
    WriteBatch b;
    for (std::uint64_t i = 0; i < kVertices; ++i)
      b.AddVertex(i % 2 == 0 ? "A" : "B", {{"name", "vertex number " + std::to_string(i)}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    WriteBatch e;
    std::uint64_t x = 88172645463325252ULL;  // xorshift: no <random> needed for this
    for (std::uint64_t i = 0; i < kEdges; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::uint64_t src = x % kVertices, dst = (x >> 20) % kVertices;
      e.AddEdge(src % 5 == 0 && i % 2 == 0 ? "OTHER" : "LINK", VertexId(src), VertexId(dst));
    }
    ASSERT_TRUE(g->Write(std::move(e)).ok());
    WriteBatch r;
    for (std::uint64_t v = 11; v < kVertices; v += 1009) r.RemoveVertex(VertexId(v));
    ASSERT_TRUE(g->Write(std::move(r)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
    before = test_util::Dump(g->GetSnapshot());
    ASSERT_TRUE(g->Close().ok());
  }
  o.durable.io_threads = 4;
  auto g = GraphImpl::OpenDurable(o, "db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetOpenStats().load_threads, 4u);
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), before);
}

}  // namespace
}  // namespace quiver
