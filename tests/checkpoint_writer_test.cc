// The checkpoint writer: parallel encoding of many chunks loads back as the
// graph it was taken from, the thread count never changes the bytes, and a
// failure at any write, write-back hint or sync abandons the checkpoint
// cleanly (workers joined, no file left).
#include "checkpoint/checkpoint_writer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "checkpoint_test_graph.h"
#include "env/fault_file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "recovery.h"
#include "test_util.h"

namespace quiver {
namespace {

using checkpoint::BlockKind;
using test_util::CountBlocks;
using test_util::Dump;

Options TestOptions(std::uint32_t io_threads) {
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = io_threads;
  return o;
}

// Builds the test graph in `dir` (WAL only, no checkpoint) and returns the
// Dump of its final state. (Dump, not Fingerprint: a loaded graph may order
// a vertex's edge-type groups differently, which no reader may rely on.)
std::string BuildInDir(env::FileSystem* fs, const std::string& dir, std::uint64_t vertices) {
  auto g = GraphImpl::OpenDurable(TestOptions(1), dir, fs);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  Status s = test_util::BuildCheckpointTestGraph(**g, vertices, 2);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::string dump = Dump((*g)->GetSnapshot());
  EXPECT_TRUE((*g)->Close().ok());
  return dump;
}

void RemoveAll(env::FileSystem& fs, const std::string& dir) {
  const std::vector<std::string> names = fs.ListDir(dir).value();
  for (const std::string& name : names) ASSERT_TRUE(fs.Remove(env::JoinPath(dir, name)).ok()) << name;
}

// The state recovered from a directory, pinned, to write checkpoints of it
// directly with chosen WriteOptions.
class RecoveredGraph {
 public:
  RecoveredGraph(env::SimFileSystem* sim, const std::string& dir)
      : sim_(sim), rs_(Recover(sim, dir, TestOptions(1)).value()), version_(rs_.chain->Acquire()) {}
  ~RecoveredGraph() {
    rs_.chain->Release(version_);
    rs_.chain->Shutdown();
  }
  RecoveredGraph(const RecoveredGraph&) = delete;
  RecoveredGraph& operator=(const RecoveredGraph&) = delete;

  // Writes a checkpoint into `out_dir` through `fs` (the simulator or a
  // wrapper of it); returns the status and, on success, the file's bytes.
  Result<std::string> Write(env::FileSystem* fs, const std::string& out_dir,
                            const checkpoint::WriteOptions& options) {
    checkpoint::WriteStats stats;
    QUIVER_RETURN_IF_ERROR(sim_->CreateDir(out_dir));
    QUIVER_RETURN_IF_ERROR(
        checkpoint::WriteCheckpoint(fs, out_dir, rs_.uuid, version_->roots, &stats, options));
    return sim_->ReadFileForTest(
        env::JoinPath(out_dir, checkpoint::CheckpointFileName(version_->roots.sequence)));
  }

 private:
  env::SimFileSystem* const sim_;
  RecoveredState rs_;
  const storage::Version* const version_;
};

// A graph of 70K vertices and ~130K live edges spans two vertex chunks and
// three edge chunks of the default 64K ids; four threads encode them, all
// at once. (The tests below cut hundreds of small chunks.)
TEST(CheckpointWriterTest, ParallelCheckpointOfManyChunksLoadsBackIdentical) {
  env::SimFileSystem fs;
  const std::string expected = BuildInDir(&fs, "/db", 70'000);
  SequenceNumber sequence = 0;
  std::string checkpointed;
  {
    auto g = GraphImpl::OpenDurable(TestOptions(4), "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_TRUE(Dump((*g)->GetSnapshot()) == expected);  // replayed from the WAL
    // Open made the replayed log durable again (no checkpoint); write one.
    ASSERT_GE((*g)->GetOpenStats().wal_segments_rewritten, 1u);
    WriteBatch b;
    b.AddVertex("Late", {{"k", 1}});
    ASSERT_TRUE((*g)->Write(std::move(b)).ok());
    ASSERT_TRUE((*g)->Checkpoint().ok());
    sequence = (*g)->GetSnapshot().sequence();
    checkpointed = Dump((*g)->GetSnapshot());
    ASSERT_TRUE((*g)->Close().ok());
  }
  const std::string file = fs.ReadFileForTest("/db/" + checkpoint::CheckpointFileName(sequence)).value();
  auto blocks = CountBlocks(file);
  EXPECT_GE(blocks[BlockKind::kVertices], 2u);
  EXPECT_GE(blocks[BlockKind::kEdges], 3u);
  EXPECT_EQ(blocks[BlockKind::kEnd], 1u);

  auto g = GraphImpl::OpenDurable(TestOptions(1), "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetOpenStats().checkpoint_sequence, sequence);
  EXPECT_EQ((*g)->GetOpenStats().wal_batches_replayed, 0u);
  Snapshot s = (*g)->GetSnapshot();
  EXPECT_EQ(s.sequence(), sequence);
  EXPECT_TRUE(Dump(s) == checkpointed);
  EXPECT_GT(s.vertex_id_limit(), s.vertex_count());  // removed vertices came back as removed
  EXPECT_GT(s.edge_id_limit(), s.edge_count());
}

// Chunk boundaries depend on ids only: one thread and several write the same
// bytes, whatever the chunk size, and every one of them loads to the graph.
TEST(CheckpointWriterTest, ThreadCountsWriteTheSameBytes) {
  env::SimFileSystem fs;
  const std::string expected = BuildInDir(&fs, "/db", 4000);
  RecoveredGraph graph(&fs, "/db");
  for (std::uint64_t chunk_ids : {std::uint64_t{64}, std::uint64_t{192}, checkpoint::kChunkIds}) {
    SCOPED_TRACE("chunk_ids " + std::to_string(chunk_ids));
    auto one = graph.Write(&fs, "/one", {.threads = 1, .chunk_ids = chunk_ids, .writeback_bytes = 4096});
    auto four = graph.Write(&fs, "/four", {.threads = 4, .chunk_ids = chunk_ids, .writeback_bytes = 0});
    auto niced = graph.Write(&fs, "/niced", {.threads = 2, .worker_nice = 10, .chunk_ids = chunk_ids});
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    ASSERT_TRUE(four.ok()) << four.status().ToString();
    ASSERT_TRUE(niced.ok()) << niced.status().ToString();
    EXPECT_TRUE(*one == *four);
    EXPECT_TRUE(*one == *niced);
    const std::uint64_t vertex_limit = 4000;
    EXPECT_EQ(CountBlocks(*four)[BlockKind::kVertices], (vertex_limit + chunk_ids - 1) / chunk_ids);
    // The checkpoint alone (no WAL) opens to the same graph.
    auto g = GraphImpl::OpenDurable(TestOptions(1), "/four", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_TRUE(Dump((*g)->GetSnapshot()) == expected);
    EXPECT_TRUE((*g)->Close().ok());
    for (const char* dir : {"/one", "/four", "/niced"}) RemoveAll(fs, dir);
  }
}

// A failure of any write, write-back hint or sync of the checkpoint file,
// while four threads encode 64-id chunks, fails the checkpoint and leaves no
// checkpoint file behind; without a fault the checkpoint is written.
TEST(CheckpointWriterTest, AnyFailureAbandonsTheCheckpointCleanly) {
  env::SimFileSystem sim;
  BuildInDir(&sim, "/db", 2000);
  RecoveredGraph graph(&sim, "/db");
  env::FaultFileSystem fs(&sim);
  const checkpoint::WriteOptions options{.threads = 4, .chunk_ids = 64, .writeback_bytes = 2048};
  for (env::FaultOp op : {env::FaultOp::kWrite, env::FaultOp::kWriteback, env::FaultOp::kSync}) {
    for (env::FaultKind kind : {env::FaultKind::kEio, env::FaultKind::kEnospc}) {
      std::uint64_t n = 1;
      for (;; ++n) {
        SCOPED_TRACE("op " + std::to_string(static_cast<int>(op)) + " at " + std::to_string(n));
        fs.SetFault({.ops = op, .kind = kind, .at = n, .path_contains = ".qck"});
        auto r = graph.Write(&fs, "/out", options);
        if (fs.faults_injected() == 0) {
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          break;
        }
        ASSERT_FALSE(r.ok());
        if (kind == env::FaultKind::kEnospc) {
          EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
        }
        EXPECT_TRUE(sim.ListDir("/out").value().empty());
      }
      EXPECT_GT(n, op == env::FaultOp::kSync ? 1u : 4u);  // the loop met several such calls
      fs.ClearFault();
      RemoveAll(sim, "/out");
    }
  }
}

}  // namespace
}  // namespace quiver
