// Verify and VerifyDirectory (include/quiver/verify.h): a healthy directory
// reports every file OK; each kind of damage is reported on the file it is
// in, with the offset where it lies; nothing is ever changed.
#include "verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/crc32c.h"
#include "checkpoint/checkpoint_format.h"
#include "counting_file_system.h"
#include "durable_workload.h"
#include "env/sim_file_system.h"
#include "env_test_util.h"
#include "graph_dir.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

const std::string kDir = "/db";

void WriteGroups(Graph& g, int from, int to) {
  for (int k = from; k < to; ++k) {
    WriteBatch b;
    b.AddVertex("Item", {{"k", k}, {"pad", std::string(40, 'p')}});
    ASSERT_TRUE(g.Write(std::move(b)).ok());
  }
}

std::vector<std::uint64_t> Segments(env::SimFileSystem& fs) {
  std::vector<std::uint64_t> out;
  const std::vector<std::string> listing = fs.ListDir(kDir).value();
  for (const std::string& name : listing)
    if (auto n = wal::ParseSegmentFileName(name)) out.push_back(*n);
  return out;
}

std::vector<std::uint64_t> Checkpoints(env::SimFileSystem& fs) {
  std::vector<std::uint64_t> out;
  const std::vector<std::string> listing = fs.ListDir(kDir).value();
  for (const std::string& name : listing)
    if (auto n = checkpoint::ParseCheckpointFileName(name)) out.push_back(*n);
  return out;
}

// A closed graph: 40 groups over several segments, a checkpoint after 25
// (so the log holds segments before and after it).
void MakeGraph(env::SimFileSystem& fs) {
  auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &fs).value();
  WriteGroups(*g, 0, 25);
  ASSERT_TRUE(g->Checkpoint().ok());
  WriteGroups(*g, 25, 40);
  ASSERT_TRUE(g->Close().ok());
}

VerifyReport VerifyOn(env::FileSystem& fs) {
  Result<VerifyReport> r = VerifyGraphDirectory(&fs, kDir);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : VerifyReport{};
}

const VerifiedFile* Find(const VerifyReport& r, const std::string& name) {
  for (const VerifiedFile& f : r.files)
    if (f.name == name) return &f;
  return nullptr;
}

// Every file but `bad` is OK; returns `bad`'s entry (never null).
const VerifiedFile& OnlyBad(const VerifyReport& r, const std::string& bad) {
  for (const VerifiedFile& f : r.files)
    if (f.name != bad) {
      EXPECT_TRUE(f.status.ok()) << f.name << ": " << f.status.ToString();
    }
  const VerifiedFile* f = Find(r, bad);
  EXPECT_NE(f, nullptr) << bad << " not in the report";
  static const VerifiedFile kNone;
  if (f == nullptr) return kNone;
  EXPECT_FALSE(f->status.ok()) << bad;
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status.message().find(bad), std::string::npos) << r.status.ToString();
  return *f;
}

TEST(VerifyTest, HealthyDirectoryReportsEveryFileOk) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::vector<std::uint64_t> segments = Segments(fs);
  ASSERT_GE(segments.size(), 3u);
  std::vector<std::string> progress;
  VerifyOptions options;
  options.progress = [&](const VerifiedFile& f) { progress.push_back(f.name); };
  Result<VerifyReport> r = VerifyGraphDirectory(&fs, kDir, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->status.ToString();
  ASSERT_EQ(r->files.size(), Checkpoints(fs).size() + segments.size());
  EXPECT_EQ(progress.size(), r->files.size());
  SequenceNumber expected_first = 0;
  for (const VerifiedFile& f : r->files) {
    EXPECT_TRUE(f.status.ok()) << f.name << ": " << f.status.ToString();
    EXPECT_FALSE(f.first_bad_offset.has_value()) << f.name;
    EXPECT_EQ(f.tail_bytes, 0u) << f.name;
    EXPECT_EQ(f.bytes, fs.ReadFileForTest(kDir + "/" + f.name).value().size()) << f.name;
    if (f.kind == VerifiedFileKind::kCheckpoint) {
      EXPECT_EQ(f.first_sequence, 25u);
      EXPECT_EQ(f.format_version, checkpoint::kFormatVersion);
      continue;
    }
    EXPECT_EQ(f.format_version, wal::kFormatVersion);
    if (expected_first != 0) {
      EXPECT_EQ(f.first_sequence, expected_first) << f.name;
    }
    expected_first = f.last_sequence + 1;
  }
  EXPECT_EQ(expected_first, 41u);
}

// Review of walpage2: segment sizes that are no multiple of 4096, the
// smallest allowed, and ones that zero-fill: every segment (zeroed end or
// not) verifies clean, with and without a reopen in between, and the log
// replays whole. Passes on walpage2.
TEST(VerifyTest, ZeroFilledSegmentsOfOddAndTinySizesVerifyAndReopen) {
  for (const std::uint64_t segment_bytes :
       {std::uint64_t{128}, std::uint64_t{5000}, std::uint64_t{3} * 4096 + 1, std::uint64_t{200} << 10}) {
    SCOPED_TRACE(testing::Message() << "wal_segment_bytes " << segment_bytes);
    env::SimFileSystem fs;
    Options o = test_util::SmallSegmentOptions();
    o.durable.wal_segment_bytes = segment_bytes;
    for (int round = 0; round < 2; ++round) {
      auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
      EXPECT_EQ(g->GetSnapshot().sequence(), static_cast<SequenceNumber>(12 * round));
      for (int k = 1; k <= 12; ++k) ASSERT_TRUE(test_util::ApplyGroup(*g, 12 * round + k).ok());
      ASSERT_TRUE(g->Close().ok());
      Result<VerifyReport> r = VerifyGraphDirectory(&fs, kDir, VerifyOptions{});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r->ok()) << r->status.ToString();
      for (const VerifiedFile& f : r->files) {
        EXPECT_TRUE(f.status.ok()) << f.name << ": " << f.status.ToString();
        EXPECT_EQ(f.tail_bytes, 0u) << f.name;
      }
    }
    auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
    EXPECT_EQ(g->GetSnapshot().sequence(), 24u);
    EXPECT_EQ(g->GetOpenStats().tail_bytes_truncated, 0u);
  }
}

TEST(VerifyTest, VerifyOfARunningGraphWhileWritesContinue) {
  env::SimFileSystem fs;
  Options o = test_util::SmallSegmentOptions();
  o.durable.checkpoint_wal_bytes = 2048;  // background checkpoints and cleanup meanwhile
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  WriteGroups(*g, 0, 20);
  std::atomic<bool> stop{false};
  // At most kMaxGroups: Graph::Verify holds checkpoints off while it reads,
  // so an unbounded writer (fast in an optimised build) added segments
  // faster than Verify read them, without end.
  constexpr int kMaxGroups = 2000;
  std::thread writer([&] {
    for (int k = 20; !stop.load() && k < 20 + kMaxGroups; ++k) WriteGroups(*g, k, k + 1);
  });
  for (int i = 0; i < 20; ++i) {
    Result<VerifyReport> r = g->Verify();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->ok()) << r->status.ToString();
  }
  stop.store(true);
  writer.join();
  ASSERT_TRUE(g->Close().ok());
  EXPECT_EQ(g->Verify().status().code(), StatusCode::kFailedPrecondition);
  auto mem = Graph::OpenInMemory().value();
  EXPECT_EQ(mem->Verify().status().code(), StatusCode::kFailedPrecondition);
}

TEST(VerifyTest, FlippedBitInACheckpointBlockIsReportedOnTheCheckpoint) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string name = checkpoint::CheckpointFileName(25);
  // The first block starts right after the header; flip a bit deep in its payload.
  const std::uint64_t block = checkpoint::kHeaderBytes;
  ASSERT_TRUE(fs.FlipBit(kDir + "/" + name, (block + checkpoint::kBlockHeaderBytes + 3) * 8 + 1).ok());
  const VerifyReport r = VerifyOn(fs);
  const VerifiedFile& f = OnlyBad(r, name);
  EXPECT_EQ(f.status.code(), StatusCode::kCorruption) << f.status.ToString();
  EXPECT_EQ(f.first_bad_offset, std::optional<std::uint64_t>(block));
  EXPECT_EQ(f.kind, VerifiedFileKind::kCheckpoint);
}

TEST(VerifyTest, FlippedBitInASealedSegmentIsReportedOnTheSegment) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::vector<std::uint64_t> segments = Segments(fs);
  const std::string name = wal::SegmentFileName(segments[1]);
  const std::uint64_t record = wal::FirstRecordOffset(wal::kFormatVersion);
  ASSERT_TRUE(fs.FlipBit(kDir + "/" + name, (record + wal::kRecordHeaderBytes + 5) * 8).ok());
  const VerifyReport r = VerifyOn(fs);
  const VerifiedFile& f = OnlyBad(r, name);
  EXPECT_EQ(f.status.code(), StatusCode::kCorruption) << f.status.ToString();
  EXPECT_EQ(f.first_bad_offset, std::optional<std::uint64_t>(record));
}

TEST(VerifyTest, MissingMiddleSegmentIsReportedByName) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::vector<std::uint64_t> segments = Segments(fs);
  const std::string name = wal::SegmentFileName(segments[segments.size() / 2]);
  ASSERT_TRUE(fs.Remove(kDir + "/" + name).ok());
  const VerifyReport r = VerifyOn(fs);
  const VerifiedFile& f = OnlyBad(r, name);
  EXPECT_EQ(f.status.code(), StatusCode::kCorruption);
  EXPECT_EQ(f.bytes, 0u);
  EXPECT_NE(f.status.message().find("missing"), std::string::npos) << f.status.ToString();
}

TEST(VerifyTest, MissingNewestSegmentIsReportedByName) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string name = wal::SegmentFileName(Segments(fs).back());
  ASSERT_TRUE(fs.Remove(kDir + "/" + name).ok());
  const VerifyReport report = VerifyOn(fs);
  const VerifiedFile& f = OnlyBad(report, name);
  EXPECT_NE(f.status.message().find("SEGMENTS"), std::string::npos) << f.status.ToString();
}

TEST(VerifyTest, TruncatedTailIsReportedOnTheLastSegmentAndIsNoError) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string path = kDir + "/" + wal::SegmentFileName(Segments(fs).back());
  const std::string bytes = fs.ReadFileForTest(path).value();
  ASSERT_TRUE(fs.WriteFileForTest(path, bytes.substr(0, bytes.size() - 20)).ok());
  const VerifyReport r = VerifyOn(fs);
  EXPECT_TRUE(r.ok()) << r.status.ToString();
  const VerifiedFile* f = Find(r, wal::SegmentFileName(Segments(fs).back()));
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->status.ok());
  EXPECT_GT(f->tail_bytes, 0u);
  ASSERT_TRUE(f->first_bad_offset.has_value());
  EXPECT_EQ(*f->first_bad_offset + f->tail_bytes, bytes.size() - 20);
  for (const VerifiedFile& other : r.files)
    if (other.name != f->name) {
      EXPECT_EQ(other.tail_bytes, 0u) << other.name;
    }
}

TEST(VerifyTest, TruncatedSealedSegmentIsCorruption) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string name = wal::SegmentFileName(Segments(fs)[1]);
  const std::string bytes = fs.ReadFileForTest(kDir + "/" + name).value();
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/" + name, bytes.substr(0, bytes.size() - 20)).ok());
  const VerifyReport report = VerifyOn(fs);
  const VerifiedFile& f = OnlyBad(report, name);
  EXPECT_EQ(f.status.code(), StatusCode::kCorruption);
  ASSERT_TRUE(f.first_bad_offset.has_value());
  EXPECT_GT(f.tail_bytes, 0u);
}

TEST(VerifyTest, NewerFormatFileIsUnimplementedAndUntouched) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string name = wal::SegmentFileName(Segments(fs).back());
  std::string bytes = fs.ReadFileForTest(kDir + "/" + name).value();
  const std::uint32_t newer = wal::kFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &newer, 4);
  const std::uint32_t crc = base::Crc32c(bytes.data(), 56);
  std::memcpy(bytes.data() + 56, &crc, 4);
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/" + name, bytes).ok());
  test_util::CountingFileSystem counting(&fs);
  const VerifyReport report = VerifyOn(counting);
  const VerifiedFile& f = OnlyBad(report, name);
  EXPECT_EQ(f.status.code(), StatusCode::kUnimplemented) << f.status.ToString();
  EXPECT_EQ(fs.ReadFileForTest(kDir + "/" + name).value(), bytes);
  EXPECT_TRUE(counting.calls().empty());
}

TEST(VerifyTest, ChangesNothingOnADamagedDirectory) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::vector<std::uint64_t> segments = Segments(fs);
  ASSERT_TRUE(fs.FlipBit(kDir + "/" + wal::SegmentFileName(segments[0]), 100 * 8).ok());
  ASSERT_TRUE(fs.Remove(kDir + "/" + wal::SegmentFileName(segments[2])).ok());
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/checkpoint-00000000000000000030.qck.tmp", "partial").ok());
  const std::vector<std::string> before = fs.ListDir(kDir).value();
  test_util::CountingFileSystem counting(&fs);
  const VerifyReport r = VerifyOn(counting);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(counting.calls().empty()) << counting.calls().front();
  EXPECT_EQ(fs.ListDir(kDir).value(), before);
}

TEST(VerifyTest, FileOfAnotherGraphIsReported) {
  env::SimFileSystem fs, other;
  MakeGraph(fs);
  MakeGraph(other);
  const std::string name = wal::SegmentFileName(Segments(fs)[1]);
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/" + name, other.ReadFileForTest(kDir + "/" + name).value()).ok());
  const VerifyReport report = VerifyOn(fs);
  const VerifiedFile& f = OnlyBad(report, name);
  EXPECT_NE(f.status.message().find("another graph"), std::string::npos) << f.status.ToString();
}

// A checkpoint of another graph, newer than any of the graph's own (a
// backup's copied in by mistake), is the one file reported: the graph's
// identity is what most of its files carry, not whatever the newest
// checkpoint says.
TEST(VerifyTest, ForeignNewestCheckpointIsTheFileReported) {
  env::SimFileSystem fs, other;
  MakeGraph(fs);
  {
    auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kDir, &other).value();
    WriteGroups(*g, 0, 60);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  const std::uint64_t foreign = Checkpoints(other).back();
  ASSERT_GT(foreign, Checkpoints(fs).back());
  const std::string name = checkpoint::CheckpointFileName(foreign);
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/" + name, other.ReadFileForTest(kDir + "/" + name).value()).ok());
  const VerifyReport report = VerifyOn(fs);
  const VerifiedFile& f = OnlyBad(report, name);
  EXPECT_NE(f.status.message().find("another graph"), std::string::npos) << f.status.ToString();
}

// Verify must not pass a directory Open refuses: the identity file is
// checked as Open checks it, SEGMENTS' CRC too, and a directory without a
// graph in it is no healthy graph.
TEST(VerifyTest, DamagedOrNewerIdentityFileIsReported) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/QUIVER", "QUIVERDBxxxxxxxx").ok());
  const VerifyReport damaged = VerifyOn(fs);
  EXPECT_EQ(damaged.status.code(), StatusCode::kCorruption) << damaged.status.ToString();
  EXPECT_EQ(OnlyBad(damaged, "QUIVER").kind, VerifiedFileKind::kDirectoryRecord);
  ASSERT_TRUE(
      fs.WriteFileForTest(kDir + "/QUIVER", graphdir::EncodeIdentity(graphdir::kDirFormatVersion + 1)).ok());
  const VerifyReport newer = VerifyOn(fs);
  EXPECT_EQ(newer.status.code(), StatusCode::kUnimplemented) << newer.status.ToString();
  OnlyBad(newer, "QUIVER");
}

TEST(VerifyTest, DamagedSegmentsRecordIsReported) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/SEGMENTS", "junk junk junk junk!").ok());
  const VerifyReport r = VerifyOn(fs);
  EXPECT_EQ(r.status.code(), StatusCode::kCorruption) << r.status.ToString();
  EXPECT_EQ(OnlyBad(r, "SEGMENTS").kind, VerifiedFileKind::kDirectoryRecord);
}

TEST(VerifyTest, DirectoryWithoutAGraphIsNotOk) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/emptydir").ok());
  Result<VerifyReport> empty = VerifyGraphDirectory(&fs, "/emptydir");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_FALSE(empty->ok());
  ASSERT_TRUE(fs.CreateDir("/other").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/other/notes.txt", "hello").ok());
  Result<VerifyReport> foreign = VerifyGraphDirectory(&fs, "/other");
  ASSERT_TRUE(foreign.ok()) << foreign.status().ToString();
  EXPECT_FALSE(foreign->ok());
  // A graph created and never written (its identity file alone) is a graph.
  { auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), "/fresh", &fs).value(); }
  Result<VerifyReport> fresh = VerifyGraphDirectory(&fs, "/fresh");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_TRUE(fresh->ok()) << fresh->status.ToString();
}

TEST(VerifyTest, DirectoryErrors) {
  env::SimFileSystem fs;
  EXPECT_EQ(VerifyGraphDirectory(&fs, "/nowhere").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(VerifyDirectory("").status().code(), StatusCode::kInvalidArgument);
  env::test::TempDir tmp;
  {
    auto g = Graph::Open(test_util::SmallSegmentOptions(), tmp.path()).value();
    WriteGroups(*g, 0, 10);
  }
  Result<VerifyReport> r = VerifyDirectory(tmp.path());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->status.ToString();
}

}  // namespace
}  // namespace quiver
