// The checkpoint writer's threads, in the concurrency binary so that they
// also run under ThreadSanitizer: four encoders over many small chunks,
// failures that stop them mid-way, and checkpoints taken with four threads
// while a writer commits.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_writer.h"
#include "checkpoint_test_graph.h"
#include "env/fault_file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "recovery.h"
#include "test_util.h"

namespace quiver {
namespace {

Options FourThreads() {
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = 4;
  return o;
}

// A failing write at every point of a checkpoint of 64-id chunks encoded by
// four threads: each attempt fails cleanly (every worker joined, no file);
// the attempt without a fault writes the same bytes as one thread.
TEST(ConcurrencyCheckpointWriterTest, FourEncodersStopOnAnyFailure) {
  env::SimFileSystem sim;
  {
    auto g = GraphImpl::OpenDurable(FourThreads(), "/db", &sim);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    Status s = test_util::BuildCheckpointTestGraph(**g, 1500, 2);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE((*g)->Close().ok());
  }
  auto rs = Recover(&sim, "/db", FourThreads());
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  const storage::Version* v = rs->chain->Acquire();
  const std::string name = checkpoint::CheckpointFileName(v->roots.sequence);
  checkpoint::WriteStats stats;
  ASSERT_TRUE(sim.CreateDir("/one").ok());
  ASSERT_TRUE(checkpoint::WriteCheckpoint(&sim, "/one", rs->uuid, v->roots, &stats,
                                          {.threads = 1, .chunk_ids = 64, .writeback_bytes = 0})
                  .ok());
  const std::string reference = sim.ReadFileForTest("/one/" + name).value();

  env::FaultFileSystem fs(&sim);
  ASSERT_TRUE(sim.CreateDir("/four").ok());
  for (std::uint64_t n = 1;; ++n) {
    fs.SetFault({.ops = env::FaultOp::kWrite | env::FaultOp::kWriteback, .at = n, .path_contains = ".qck"});
    Status s = checkpoint::WriteCheckpoint(&fs, "/four", rs->uuid, v->roots, &stats,
                                           {.threads = 4, .chunk_ids = 64, .writeback_bytes = 4096});
    if (fs.faults_injected() == 0) {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_TRUE(sim.ReadFileForTest("/four/" + name).value() == reference);
      break;
    }
    ASSERT_FALSE(s.ok()) << "fault at " << n;
    ASSERT_TRUE(sim.ListDir("/four").value().empty()) << "fault at " << n;
  }
  rs->chain->Release(v);
  rs->chain->Shutdown();
}

// Checkpoints with four encoder threads while a producer commits: each is a
// consistent state, and the last one plus the WAL reopens to the final graph.
TEST(ConcurrencyCheckpointWriterTest, FourEncodersWhileWriting) {
  env::SimFileSystem sim;
  std::string final_state;
  {
    auto g = GraphImpl::OpenDurable(FourThreads(), "/db", &sim);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    Status s = test_util::BuildCheckpointTestGraph(**g, 1000, 2);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::atomic<bool> stop{false};
    std::thread producer([&] {
      for (int i = 0; !stop.load(); ++i) {
        WriteBatch b;
        b.AddVertex("P", {{"i", i}});
        b.AddEdge("NEXT", VertexId(static_cast<std::uint64_t>(i) % 1000), VertexId(1));
        if (!(*g)->Write(std::move(b)).ok()) return;
      }
    });
    for (int i = 0; i < 5; ++i) EXPECT_TRUE((*g)->Checkpoint().ok());
    stop = true;
    producer.join();
    final_state = test_util::Dump((*g)->GetSnapshot());
    ASSERT_TRUE((*g)->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(FourThreads(), "/db", &sim);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_GT((*g)->GetOpenStats().checkpoint_sequence, 0u);
  EXPECT_TRUE(test_util::Dump((*g)->GetSnapshot()) == final_state);
}

}  // namespace
}  // namespace quiver
