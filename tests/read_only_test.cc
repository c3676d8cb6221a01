// Options::read_only: Open changes nothing (no mutating FileSystem call, no
// byte of any file), replays the log in memory (torn tail, salvage), serves
// the state a writable Open would recover, and refuses writes and a
// directory a writable handle holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/crc32c.h"
#include "counting_file_system.h"
#include "env/forwarding_file_system.h"
#include "env/sim_file_system.h"
#include "env_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

const std::string kReadOnlyDir = "/db";

Options ReadOnly() {
  Options o = test_util::SmallSegmentOptions();
  o.read_only = true;
  return o;
}

void ReadOnlyWriteGroups(Graph& g, int from, int to) {
  for (int k = from; k < to; ++k) {
    WriteBatch b;
    VertexId prev{static_cast<std::uint64_t>(k > 0 ? k - 1 : 0)};
    NewVertex v = b.AddVertex("Item", {{"k", k}, {"pad", std::string(40, 'p')}});
    if (k > 0) b.AddEdge("NEXT", prev, v);
    ASSERT_TRUE(g.Write(std::move(b)).ok());
  }
}

// 30 groups, a checkpoint after 12: the log holds 18 groups to replay.
void MakeGraph(env::SimFileSystem& fs) {
  auto g = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kReadOnlyDir, &fs).value();
  ReadOnlyWriteGroups(*g, 0, 12);
  ASSERT_TRUE(g->Checkpoint().ok());
  ReadOnlyWriteGroups(*g, 12, 30);
  ASSERT_TRUE(g->Close().ok());
}

std::map<std::string, std::string> Files(env::SimFileSystem& fs) {
  std::map<std::string, std::string> out;
  const std::vector<std::string> listing = fs.ListDir(kReadOnlyDir).value();
  for (const std::string& name : listing) out[name] = fs.ReadFileForTest(kReadOnlyDir + "/" + name).value();
  return out;
}

std::string ReadOnlyLastSegment(env::SimFileSystem& fs) {
  std::string last;
  const std::vector<std::string> listing = fs.ListDir(kReadOnlyDir).value();
  for (const std::string& name : listing)
    if (wal::ParseSegmentFileName(name)) last = name;
  return last;
}

// What a writable Open recovers from the same bytes (on a copy).
std::string WritableDump(env::SimFileSystem& fs, Options o = test_util::SmallSegmentOptions()) {
  std::unique_ptr<env::SimFileSystem> copy = fs.Clone();
  auto g = GraphImpl::OpenDurable(o, kReadOnlyDir, copy.get());
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? test_util::Dump((*g)->GetSnapshot()) : "";
}

// Opens read-only through a counting wrapper and checks that no mutating
// call was made and no file changed. Returns the graph (or the error).
Result<std::unique_ptr<Graph>> OpenReadOnlyChecked(env::SimFileSystem& fs, Options o = ReadOnly()) {
  const std::map<std::string, std::string> before = Files(fs);
  test_util::CountingFileSystem counting(&fs);
  Result<std::unique_ptr<Graph>> g = GraphImpl::OpenDurable(o, kReadOnlyDir, &counting);
  std::vector<std::string> calls = counting.calls();
  EXPECT_TRUE(calls.empty()) << calls.size() << " mutating calls, the first: " << calls.front();
  EXPECT_EQ(Files(fs), before);
  return g;
}

TEST(ReadOnlyTest, ServesTheRecoveredStateAndChangesNothing) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string expected = WritableDump(fs);
  Result<std::unique_ptr<Graph>> g = OpenReadOnlyChecked(fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), expected);
  EXPECT_EQ((*g)->GetSnapshot().sequence(), 30u);
  const OpenStats stats = (*g)->GetOpenStats();
  EXPECT_EQ(stats.checkpoint_sequence, 12u);
  EXPECT_EQ(stats.wal_batches_replayed, 18u);
  EXPECT_EQ(stats.wal_segments_rewritten, 0u);
}

TEST(ReadOnlyTest, WritesAreRefusedAndCloseWritesNothing) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::map<std::string, std::string> before = Files(fs);
  test_util::CountingFileSystem counting(&fs);
  Options o = ReadOnly();
  o.durable.checkpoint_on_close = true;  // ignored: nothing is written
  auto g = GraphImpl::OpenDurable(o, kReadOnlyDir, &counting).value();
  WriteBatch b;
  b.AddVertex("Item");
  Result<CommitInfo> w = g->Write(std::move(b));
  EXPECT_EQ(w.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(w.status().message().find("read-only"), std::string::npos) << w.status().ToString();
  WriteBatch b2;
  b2.AddVertex("Item");
  EXPECT_EQ(g->WriteAsync(std::move(b2)).get().status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(g->Checkpoint().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(g->CreateIndex({.name = "k", .label = "Item", .keys = {"k"}}).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(g->DropIndex("k").code(), StatusCode::kFailedPrecondition);
  Result<VerifyReport> r = g->Verify();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->status.ToString();
  EXPECT_TRUE(g->Close().ok());
  EXPECT_EQ(g->GetSnapshot().sequence(), 30u);  // snapshots work after Close
  g.reset();
  EXPECT_TRUE(counting.calls().empty()) << counting.calls().front();
  EXPECT_EQ(Files(fs), before);
}

TEST(ReadOnlyTest, TornTailIsIgnoredInMemoryNotCut) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string path = kReadOnlyDir + "/" + ReadOnlyLastSegment(fs);
  const std::string bytes = fs.ReadFileForTest(path).value();
  ASSERT_TRUE(fs.WriteFileForTest(path, bytes.substr(0, bytes.size() - 5)).ok());
  const std::string expected = WritableDump(fs);
  Result<std::unique_ptr<Graph>> g = OpenReadOnlyChecked(fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), expected);
  EXPECT_EQ((*g)->GetSnapshot().sequence(), 29u);  // the torn last group is not there
  EXPECT_GT((*g)->GetOpenStats().tail_bytes_truncated, 0u);
}

TEST(ReadOnlyTest, TornSegmentCreationIsLeftAlone) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::uint64_t next = *wal::ParseSegmentFileName(ReadOnlyLastSegment(fs)) + 1;
  ASSERT_TRUE(
      fs.WriteFileForTest(kReadOnlyDir + "/" + wal::SegmentFileName(next), std::string(40, 'x')).ok());
  const std::string expected = WritableDump(fs);
  Result<std::unique_ptr<Graph>> g = OpenReadOnlyChecked(fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), expected);
}

TEST(ReadOnlyTest, NewerFormatFileFailsAndIsUntouched) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string path = kReadOnlyDir + "/" + ReadOnlyLastSegment(fs);
  std::string bytes = fs.ReadFileForTest(path).value();
  const std::uint32_t newer = wal::kFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &newer, 4);
  const std::uint32_t crc = base::Crc32c(bytes.data(), 56);
  std::memcpy(bytes.data() + 56, &crc, 4);
  ASSERT_TRUE(fs.WriteFileForTest(path, bytes).ok());
  for (bool salvage : {false, true}) {
    Options o = ReadOnly();
    o.durable.salvage_wal_prefix = salvage;
    Result<std::unique_ptr<Graph>> g = OpenReadOnlyChecked(fs, o);
    EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented) << g.status().ToString();
  }
}

TEST(ReadOnlyTest, DamageIsSalvagedInMemoryOnly) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  // A record in the middle of the log: a sealed segment after the checkpoint.
  std::vector<std::string> segments;
  const std::vector<std::string> listing = fs.ListDir(kReadOnlyDir).value();
  for (const std::string& name : listing)
    if (wal::ParseSegmentFileName(name)) segments.push_back(name);
  ASSERT_GE(segments.size(), 3u);
  const std::string damaged = segments[segments.size() - 2];
  ASSERT_TRUE(fs.FlipBit(kReadOnlyDir + "/" + damaged,
                         (wal::FirstRecordOffset(wal::kFormatVersion) + wal::kRecordHeaderBytes + 3) * 8)
                  .ok());
  EXPECT_EQ(OpenReadOnlyChecked(fs).status().code(), StatusCode::kCorruption);
  Options o = ReadOnly();
  o.durable.salvage_wal_prefix = true;
  Options w = test_util::SmallSegmentOptions();
  w.durable.salvage_wal_prefix = true;
  const std::string expected = WritableDump(fs, w);
  Result<std::unique_ptr<Graph>> g = OpenReadOnlyChecked(fs, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE((*g)->GetOpenStats().salvaged);
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), expected);
  EXPECT_LT((*g)->GetSnapshot().sequence(), 30u);
}

TEST(ReadOnlyTest, NoGraphIsNotFoundAndNothingIsCreated) {
  env::SimFileSystem fs;
  test_util::CountingFileSystem counting(&fs);
  Options o = ReadOnly();
  o.create_if_missing = true;  // ignored read-only
  EXPECT_EQ(GraphImpl::OpenDurable(o, "/none", &counting).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(fs.CreateDir("/empty").ok());
  EXPECT_EQ(GraphImpl::OpenDurable(o, "/empty", &counting).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(fs.CreateDir("/other").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/other/notes.txt", "x").ok());
  EXPECT_EQ(GraphImpl::OpenDurable(o, "/other", &counting).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(counting.calls().empty()) << counting.calls().front();
  EXPECT_FALSE(fs.Exists("/none").value());
  EXPECT_EQ(fs.ListDir("/empty").value().size(), 0u);
}

TEST(ReadOnlyTest, AGraphAWriterHoldsIsRefused) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  // The simulator's locks are not files; posix creates LOCK at the first
  // Open, so give the directory one as posix would have.
  ASSERT_TRUE(fs.WriteFileForTest(kReadOnlyDir + "/LOCK", "").ok());
  auto writer = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kReadOnlyDir, &fs).value();
  Result<std::unique_ptr<Graph>> g = GraphImpl::OpenDurable(ReadOnly(), kReadOnlyDir, &fs);
  EXPECT_EQ(g.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(g.status().message().find("read-only"), std::string::npos) << g.status().ToString();
  ASSERT_TRUE(writer->Close().ok());
  g = GraphImpl::OpenDurable(ReadOnly(), kReadOnlyDir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  // The read-only graph released LOCK when Open returned: a writer may open.
  auto again = GraphImpl::OpenDurable(test_util::SmallSegmentOptions(), kReadOnlyDir, &fs);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(ReadOnlyTest, PosixDirectoryHeldRefusedThenReadWithoutCreatingLock) {
  env::test::TempDir tmp;
  const std::string dir = tmp.File("g");
  auto writer = Graph::Open(test_util::SmallSegmentOptions(), dir).value();
  ReadOnlyWriteGroups(*writer, 0, 5);
  EXPECT_EQ(Graph::Open(ReadOnly(), dir).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(writer->Close().ok());
  std::filesystem::remove(std::filesystem::path(dir) / "LOCK");
  auto g = Graph::Open(ReadOnly(), dir);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), 5u);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / "LOCK"));
}

// Runs `hook` once, in the middle of an Open's recovery: at the first
// OpenReadable of a WAL segment after the Open looked for LOCK (what
// another process could do at that moment).
class MidRecoveryHook : public env::ForwardingFileSystem {
 public:
  MidRecoveryHook(env::FileSystem* base, std::function<void()> hook)
      : ForwardingFileSystem(base), hook_(std::move(hook)) {}
  Result<bool> Exists(const std::string& path) override {
    if (path.size() >= 4 && path.compare(path.size() - 4, 4, "LOCK") == 0) armed_ = true;
    return ForwardingFileSystem::Exists(path);
  }
  Result<std::unique_ptr<env::ReadableFile>> OpenReadable(const std::string& path) override {
    if (armed_ && !fired_ && path.find("wal-") != std::string::npos) {
      fired_ = true;
      hook_();
    }
    return ForwardingFileSystem::OpenReadable(path);
  }
  bool fired() const { return fired_; }

 private:
  std::function<void()> hook_;
  bool armed_ = false;
  bool fired_ = false;
};

// Two read-only handles on one directory: each takes LOCK shared while it
// recovers, so they never refuse each other.
TEST(ReadOnlyTest, TwoReadOnlyOpensAtOnceBothOpen) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  ASSERT_TRUE(fs.WriteFileForTest(kReadOnlyDir + "/LOCK", "").ok());  // as posix leaves it
  Status inner = InternalError("not run");
  MidRecoveryHook hook(&fs, [&] { inner = GraphImpl::OpenDurable(ReadOnly(), kReadOnlyDir, &fs).status(); });
  Result<std::unique_ptr<Graph>> outer = GraphImpl::OpenDurable(ReadOnly(), kReadOnlyDir, &hook);
  ASSERT_TRUE(hook.fired());
  EXPECT_TRUE(inner.ok()) << inner.ToString();
  ASSERT_TRUE(outer.ok()) << outer.status().ToString();
  EXPECT_EQ((*outer)->GetSnapshot().sequence(), 30u);
}

// The same on the real file system, where LOCK is an flock.
TEST(ReadOnlyTest, PosixTwoReadOnlyOpensAtOnceBothOpen) {
  env::test::TempDir tmp;
  const std::string dir = tmp.File("g");
  {
    auto writer = Graph::Open(test_util::SmallSegmentOptions(), dir).value();
    ReadOnlyWriteGroups(*writer, 0, 5);
    ASSERT_TRUE(writer->Close().ok());
  }
  Status inner = InternalError("not run");
  MidRecoveryHook hook(env::PosixFileSystem(), [&] { inner = Graph::Open(ReadOnly(), dir).status(); });
  Result<std::unique_ptr<Graph>> outer = GraphImpl::OpenDurable(ReadOnly(), dir, &hook);
  ASSERT_TRUE(hook.fired());
  EXPECT_TRUE(inner.ok()) << inner.ToString();
  ASSERT_TRUE(outer.ok()) << outer.status().ToString();
  // A writer is refused while a reader recovers, and told why.
  Status writer = InternalError("not run");
  MidRecoveryHook hook2(env::PosixFileSystem(),
                        [&] { writer = Graph::Open(test_util::SmallSegmentOptions(), dir).status(); });
  ASSERT_TRUE(GraphImpl::OpenDurable(ReadOnly(), dir, &hook2).ok());
  EXPECT_EQ(writer.code(), StatusCode::kFailedPrecondition) << writer.ToString();
  EXPECT_NE(writer.message().find("read-only"), std::string::npos) << writer.ToString();
  // And a reader while a writer runs is told a writable handle holds it.
  auto running = Graph::Open(test_util::SmallSegmentOptions(), dir).value();
  Status refused = Graph::Open(ReadOnly(), dir).status();
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("writable handle"), std::string::npos) << refused.ToString();
}

// LOCK present: the read-only Open takes it shared, which never creates or
// writes the file (posix opens it read-only), so no mutating call at all.
TEST(ReadOnlyTest, LockIsTakenSharedWithNoMutatingCall) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  ASSERT_TRUE(fs.WriteFileForTest(kReadOnlyDir + "/LOCK", "").ok());
  Result<std::unique_ptr<Graph>> g = OpenReadOnlyChecked(fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), 30u);
}

// No LOCK: no writer is running (every writable Open creates LOCK before
// it changes anything, and never removes it after). A writer that starts
// during the read-only Open's recovery and changes files under it makes
// that recovery's outcome void, error or not: Open starts over with LOCK
// present, and either recovers what the writer left (it has closed) or is
// refused because a writable handle holds LOCK; never a spurious error.
void WriterDuringRecovery(bool writer_stays_open) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  ASSERT_FALSE(fs.Exists(kReadOnlyDir + "/LOCK").value());
  std::unique_ptr<Graph> writer;
  MidRecoveryHook hook(&fs, [&] {
    ASSERT_TRUE(fs.WriteFileForTest(kReadOnlyDir + "/LOCK", "").ok());  // what a posix writer creates
    Options o = test_util::SmallSegmentOptions();
    writer = GraphImpl::OpenDurable(o, kReadOnlyDir, &fs).value();
    ReadOnlyWriteGroups(*writer, 30, 60);
    ASSERT_TRUE(writer->Checkpoint().ok());
    ReadOnlyWriteGroups(*writer, 60, 70);
    ASSERT_TRUE(writer->Checkpoint().ok());  // the older segments and checkpoints go
    if (!writer_stays_open) {
      ASSERT_TRUE(writer->Close().ok());
      writer.reset();
    }
  });
  Result<std::unique_ptr<Graph>> g = GraphImpl::OpenDurable(ReadOnly(), kReadOnlyDir, &hook);
  ASSERT_TRUE(hook.fired());
  if (writer_stays_open) {
    EXPECT_EQ(g.status().code(), StatusCode::kFailedPrecondition) << g.status().ToString();
    EXPECT_NE(g.status().message().find("writable handle"), std::string::npos) << g.status().ToString();
    ASSERT_TRUE(writer->Close().ok());
    return;
  }
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), 70u);
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), WritableDump(fs));
}

TEST(ReadOnlyTest, WriterStartingDuringALocklessRecoveryThenClosingIsRecoveredAfter) {
  WriterDuringRecovery(/*writer_stays_open=*/false);
}

TEST(ReadOnlyTest, WriterStartingDuringALocklessRecoveryAndStillOpenIsReported) {
  WriterDuringRecovery(/*writer_stays_open=*/true);
}

}  // namespace
}  // namespace quiver
