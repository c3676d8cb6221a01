// The independent reader (independent_reader.h) against the engine: on the
// golden files of the format docs, on randomized workloads with background
// and explicit checkpoints, multi-batch and multi-fragment groups and WAL
// tails, and on damage it must refuse.
#include "independent_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "env_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "random_workload.h"
#include "test_environment.h"

namespace quiver {
namespace {

const std::filesystem::path kGoldenDir = std::filesystem::path(QUIVER_TESTS_SOURCE_DIR) / "golden";

std::string ReadWhole(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

test::DirectoryFiles OneFile(std::string name, std::string bytes) {
  test::DirectoryFiles files;
  files.names = {name};
  files.read = [name, bytes](const std::string& n) -> Result<std::string> {
    if (n != name) return NotFoundError(n);
    return bytes;
  };
  return files;
}

test::DirectoryFiles SimFiles(env::SimFileSystem* fs, const std::string& dir) {
  test::DirectoryFiles files;
  files.names = fs->ListDir(dir).value();
  files.read = [fs, dir](const std::string& name) { return fs->ReadFileForTest(dir + "/" + name); };
  return files;
}

std::string Le64(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

TEST(IndependentReaderTest, Crc32cCheckValue) { EXPECT_EQ(test::Crc32c(0, "123456789", 9), 0xE3069283u); }

// The two worked examples of the docs describe the same state at sequence
// 5: read each alone, the states must agree with each other and the docs.
// The WAL in each format version the docs describe: 4 and 3 (groups padded
// to 4 KiB pages), 2 and 1 (records back to back); the checkpoint in
// formats 3 and 2.
class IndependentReaderGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(IndependentReaderGoldenTest, GoldenWalAndGoldenCheckpointDescribeTheSameGraph) {
  Result<test::ReaderState> wal =
      test::ReadGraphFiles(OneFile("wal-00000000000000000001.log", ReadWhole(kGoldenDir / GetParam())));
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  Result<test::ReaderState> ckpt = test::ReadGraphFiles(
      OneFile("checkpoint-00000000000000000005.qck", ReadWhole(kGoldenDir / "checkpoint-small.qck")));
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  Result<test::ReaderState> ckpt2 = test::ReadGraphFiles(
      OneFile("checkpoint-00000000000000000005.qck", ReadWhole(kGoldenDir / "checkpoint-small-v2.qck")));
  ASSERT_TRUE(ckpt2.ok()) << ckpt2.status().ToString();
  for (const test::ReaderState* s : {&*wal, &*ckpt, &*ckpt2}) {
    EXPECT_EQ(s->sequence, 5u);
    ASSERT_EQ(s->vertices.size(), 2u);
    ASSERT_EQ(s->edges.size(), 1u);
    EXPECT_EQ(s->vertices[0].name, "Person");
    EXPECT_EQ(s->vertices[0].properties.at("name"), (test::ReaderValue{4, "Ada"}));
    EXPECT_EQ(s->vertices[0].properties.at("born"), (test::ReaderValue{2, Le64(1815)}));
    EXPECT_EQ(s->vertices[1].properties.at("name"), (test::ReaderValue{4, "Grace"}));
    EXPECT_EQ(s->edges[0].name, "KNOWS");
    EXPECT_EQ(s->edges[0].source, 0u);
    EXPECT_EQ(s->edges[0].target, 1u);
    EXPECT_EQ(s->edges[0].properties.at("since"), (test::ReaderValue{3, Le64(0x3FF8000000000000)}));
    EXPECT_EQ(s->keys, (std::vector<std::string>{"name", "born", "since"}));
  }
  EXPECT_EQ(wal->groups_replayed, 4u);
  EXPECT_EQ(ckpt->checkpoint_sequence, 5u);
}

INSTANTIATE_TEST_SUITE_P(WalVersions, IndependentReaderGoldenTest,
                         ::testing::Values("wal-small.log", "wal-small-v3.log", "wal-small-v2.log",
                                           "wal-small-v1.log"));

// The edge-endpoint constraint's golden files (WAL format 4, checkpoint
// format 3) describe the same graph; the segment sealed as format 3 (index
// kind 3 where that format has none) is refused.
TEST(IndependentReaderTest, EndpointGoldenFiles) {
  const std::string wal = ReadWhole(kGoldenDir / "wal-endpoints.log");
  Result<test::ReaderState> from_wal = test::ReadGraphFiles(OneFile("wal-00000000000000000001.log", wal));
  ASSERT_TRUE(from_wal.ok()) << from_wal.status().ToString();
  Result<test::ReaderState> from_ckpt = test::ReadGraphFiles(
      OneFile("checkpoint-00000000000000000006.qck", ReadWhole(kGoldenDir / "checkpoint-endpoints.qck")));
  ASSERT_TRUE(from_ckpt.ok()) << from_ckpt.status().ToString();
  for (const test::ReaderState* s : {&*from_wal, &*from_ckpt}) {
    EXPECT_EQ(s->sequence, 6u);
    ASSERT_EQ(s->edges.size(), 2u);
    EXPECT_EQ(s->edges[0].source, 0u);
    EXPECT_EQ(s->edges[1].source, 1u);
    EXPECT_EQ(s->edges[0].properties.at("since"), (test::ReaderValue{3, Le64(0x3FF8000000000000)}));
  }
  std::string v3 = wal;
  const std::uint32_t three = 3;
  std::memcpy(v3.data() + 8, &three, 4);
  const std::uint32_t crc = test::Crc32c(0, v3.data(), 56);
  std::memcpy(v3.data() + 56, &crc, 4);
  Result<test::ReaderState> refused = test::ReadGraphFiles(OneFile("wal-00000000000000000001.log", v3));
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("kind 3 in a format version 3 segment"), std::string::npos)
      << refused.status().ToString();
}

// The string-list golden files (WAL format 5, checkpoint format 4) describe
// the same graph, each list kept element by element; the segment sealed as
// format 4 (value type 7 where that format has none) is refused.
TEST(IndependentReaderTest, ListGoldenFiles) {
  const std::string wal = ReadWhole(kGoldenDir / "wal-lists.log");
  Result<test::ReaderState> from_wal = test::ReadGraphFiles(OneFile("wal-00000000000000000001.log", wal));
  ASSERT_TRUE(from_wal.ok()) << from_wal.status().ToString();
  Result<test::ReaderState> from_ckpt = test::ReadGraphFiles(
      OneFile("checkpoint-00000000000000000002.qck", ReadWhole(kGoldenDir / "checkpoint-lists.qck")));
  ASSERT_TRUE(from_ckpt.ok()) << from_ckpt.status().ToString();
  // Each element: its length as 8 little-endian bytes, then its bytes.
  const std::string tags = Le64(4) + "math" + Le64(4) + "poet";
  for (const test::ReaderState* s : {&*from_wal, &*from_ckpt}) {
    EXPECT_EQ(s->sequence, 2u);
    ASSERT_EQ(s->vertices.size(), 1u);
    EXPECT_EQ(s->vertices[0].properties.at("tags"), (test::ReaderValue{7, tags}));
    EXPECT_EQ(s->vertices[0].properties.at("aliases"), (test::ReaderValue{7, ""}));
    EXPECT_EQ(s->vertices[0].properties.at("notes"), (test::ReaderValue{7, Le64(0)}));
  }
  std::string v4 = wal;
  const std::uint32_t four = 4;
  std::memcpy(v4.data() + 8, &four, 4);
  const std::uint32_t crc = test::Crc32c(0, v4.data(), 56);
  std::memcpy(v4.data() + 56, &crc, 4);
  Result<test::ReaderState> refused = test::ReadGraphFiles(OneFile("wal-00000000000000000001.log", v4));
  EXPECT_FALSE(refused.ok());
}

// Writes a random workload in bursts (several batches in flight: multi-batch
// groups), with background checkpoints every few KiB of log, explicit ones
// now and then, small segments and values over one fragment; leaves a WAL
// tail (no checkpoint at close). Returns the final snapshot.
Snapshot RunRandomWorkload(Graph& g, std::uint64_t seed, int bursts, bool explicit_checkpoints = true) {
  std::mt19937_64 rng(seed);
  test_util::RandomBatchOptions ro;
  ro.big_value_one_in = 40;
  for (int burst = 0; burst < bursts; ++burst) {
    std::vector<std::future<Result<CommitInfo>>> pending;
    {
      const Snapshot s = g.GetSnapshot();
      const int n = 1 + static_cast<int>(rng() % 6);
      for (int i = 0; i < n; ++i) pending.push_back(g.WriteAsync(test_util::RandomBatch(s, rng, ro)));
    }
    for (auto& f : pending) {
      Result<CommitInfo> r = f.get();
      EXPECT_TRUE(r.ok() || r.status().code() == StatusCode::kNotFound) << r.status().ToString();
    }
    if (rng() % 25 == 0 && explicit_checkpoints) {
      EXPECT_TRUE(g.Checkpoint().ok());
    }
  }
  return g.GetSnapshot();
}

Options RandomOptions(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919);
  Options o;
  o.durable.wal_segment_bytes = std::uint64_t{4096} << (rng() % 5);
  o.durable.checkpoint_wal_bytes = rng() % 3 == 0 ? 0 : std::uint64_t{8192} << (rng() % 4);
  o.durable.checkpoint_on_close = false;
  o.writer.spin_microseconds = 0;
  return o;
}

TEST(IndependentReaderTest, AgreesWithOpenOnRandomWorkloads) {
  std::uint64_t checkpoints = 0, replayed = 0, multi_fragment = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    env::SimFileSystem fs;
    const Options o = RandomOptions(seed);
    Snapshot before;
    {
      auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
      before = RunRandomWorkload(*g, seed, 60);
    }
    Result<test::ReaderState> files = test::ReadGraphFiles(SimFiles(&fs, "/db"));
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    checkpoints += files->checkpoint_sequence > 0;
    replayed += files->groups_replayed;
    for (const auto& v : files->vertices) multi_fragment += v.name == "Big";
    // The state the last process served, and the one Open recovers.
    EXPECT_EQ(test::CompareWithSnapshot(*files, before), std::nullopt);
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    EXPECT_EQ(test::CompareWithSnapshot(*files, g->GetSnapshot()), std::nullopt);
  }
  // The workloads did exercise what they claim to.
  EXPECT_GT(checkpoints, 0u);
  EXPECT_GT(replayed, 0u);
  EXPECT_GT(multi_fragment, 0u);
}

// The engine's own fragment size (the gtest binaries cut at 64 KiB): a
// group of a value over 1 MiB is a first record of exactly kMaxFragment
// bytes and a last one, and the reader written from the docs takes both.
TEST(IndependentReaderTest, ReadsGroupsCutAtTheEngineFragment) {
  test_util::ScopedEngineWalMaxFragment engine_fragment;
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  Snapshot before;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    WriteBatch b;
    b.AddVertex("Big", {{"blob", PropertyValue(std::vector<std::byte>((std::size_t{1} << 20) + 100))}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    before = g->GetSnapshot();
  }
  Result<test::ReaderState> files = test::ReadGraphFiles(SimFiles(&fs, "/db"));
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->groups_replayed, 1u);
  EXPECT_EQ(test::CompareWithSnapshot(*files, before), std::nullopt);
}

// A torn tail (garbage after the last record) is skipped, not read.
TEST(IndependentReaderTest, SkipsATornTailAsOpenDoes) {
  env::test::TempDir dir;
  Options o = RandomOptions(3);
  o.durable.checkpoint_wal_bytes = 0;
  {
    auto g = Graph::Open(o, dir.path()).value();
    RunRandomWorkload(*g, 3, 20);
  }
  std::vector<std::string> segments;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename().string().rfind("wal-", 0) == 0) segments.push_back(e.path().string());
  std::sort(segments.begin(), segments.end());
  ASSERT_FALSE(segments.empty());
  {
    std::ofstream out(segments.back(), std::ios::binary | std::ios::app);
    out << std::string(100, '\x5a');
  }
  Result<test::ReaderState> files = test::ReadGraphDirectory(dir.path());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_GE(files->tail_bytes, 100u);
  auto g = Graph::Open(o, dir.path()).value();
  EXPECT_GT(g->GetOpenStats().tail_bytes_truncated, 0u);
  EXPECT_EQ(test::CompareWithSnapshot(*files, g->GetSnapshot()), std::nullopt);
}

// A crash in checkpoint cleanup, before its directory fsync: the removals of
// covered segments (oldest first) survive each at random, so wal-2's
// removal may be durable and wal-1's not. wal-1 is then covered by the
// checkpoint (its successor on disk, wal-3, starts at or below
// checkpoint + 1) and Open does not read it; the reader must not either, in
// whichever WAL format version the segments are: it skipped only segments
// whose header it took for intact, and took none of format 4 for intact, so
// it read wal-1 and refused wal-3 as not continuing it.
TEST(IndependentReaderTest, SkipsACoveredSegmentBeforeAGapAsOpenDoes) {
  env::SimFileSystem fs;
  Options o = RandomOptions(1);
  o.durable.wal_segment_bytes = 3 * 4096;  // the header's page and two groups
  o.durable.checkpoint_wal_bytes = 0;
  auto name = [](int n) { return std::string("/db/wal-0000000000000000000") + std::to_string(n) + ".log"; };
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    std::mt19937_64 rng(11);
    auto write = [&] {
      const Result<CommitInfo> r = g->Write(test_util::RandomBatch(g->GetSnapshot(), rng));
      EXPECT_TRUE(r.ok() || r.status().code() == StatusCode::kNotFound) << r.status().ToString();
    };
    for (int i = 0; i < 100 && !fs.ReadFileForTest(name(3)).ok(); ++i) write();
    ASSERT_TRUE(fs.ReadFileForTest(name(3)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());  // no previous checkpoint: nothing removed
    write();
  }
  ASSERT_TRUE(fs.Remove(name(2)).ok());
  Result<test::ReaderState> files = test::ReadGraphFiles(SimFiles(&fs, "/db"));
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_GT(files->checkpoint_sequence, 0u);
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(test::CompareWithSnapshot(*files, (*g)->GetSnapshot()), std::nullopt);
}

// Damage before later committed records: the reader refuses, as Open does.
TEST(IndependentReaderTest, RefusesDamageFollowedByCommittedRecords) {
  env::SimFileSystem fs;
  Options o = RandomOptions(5);
  o.durable.wal_segment_bytes = std::uint64_t{1} << 20;
  o.durable.checkpoint_wal_bytes = 0;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    RunRandomWorkload(*g, 5, 30, /*explicit_checkpoints=*/false);
  }
  const std::string segment = "/db/wal-00000000000000000001.log";
  ASSERT_TRUE(fs.FlipBit(segment, 8 * 100).ok());  // inside the first record
  Result<test::ReaderState> files = test::ReadGraphFiles(SimFiles(&fs, "/db"));
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kCorruption);
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace quiver
