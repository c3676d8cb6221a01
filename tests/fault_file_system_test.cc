// FaultFileSystem: once / persistent / random injection, the operation
// kinds and path filter that choose what is counted, the three error kinds,
// fsync-retry counting and Linux fsync-failure semantics over SimFileSystem.
#include "env/fault_file_system.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "env_test_util.h"

namespace quiver::env {
namespace {

class FaultFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override { QUIVER_ASSERT_OK(sim_.CreateDir("/db")); }

  std::unique_ptr<WritableFile> Open(const std::string& path) {
    auto f = fs_.OpenWritable(path, OpenMode::kCreateOrOpen);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  std::string Read(const std::string& path) const {
    auto r = sim_.ReadFileForTest(path);
    return r.ok() ? *r : "<missing>";
  }

  SimFileSystem sim_;
  FaultFileSystem fs_{&sim_};
};

TEST_F(FaultFileSystemTest, NoFaultPassesEverythingThrough) {
  auto f = Open("/db/a");
  QUIVER_ASSERT_OK(f->Append(AsBytes("abc")));
  QUIVER_ASSERT_OK(f->Sync());
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));
  EXPECT_EQ(test::ReadAll(fs_, "/db/a"), "abc");
  EXPECT_EQ(fs_.faults_injected(), 0u);
  EXPECT_EQ(fs_.ops_seen(), 0u);
  EXPECT_GE(fs_.total_ops(), 5u);
}

TEST_F(FaultFileSystemTest, OnceFailsOnlyTheNthCountedOperation) {
  auto f = Open("/db/a");
  fs_.SetFault({.ops = FaultOp::kWrite, .mode = FaultMode::kOnce, .at = 2});
  QUIVER_ASSERT_OK(f->Append(AsBytes("1")));
  QUIVER_ASSERT_OK(f->Sync());  // not a counted kind
  Status s = f->Append(AsBytes("2"));
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("injected EIO"), std::string_view::npos) << s.ToString();
  QUIVER_ASSERT_OK(f->Append(AsBytes("3")));
  EXPECT_EQ(Read("/db/a"), "13");  // the failed write did nothing
  EXPECT_EQ(fs_.ops_seen(), 3u);
  EXPECT_EQ(fs_.faults_injected(), 1u);
}

TEST_F(FaultFileSystemTest, PersistentFailsFromTheNthOn) {
  auto f = Open("/db/a");
  fs_.SetFault({.ops = FaultOp::kWrite | FaultOp::kSync, .mode = FaultMode::kPersistent, .at = 2});
  QUIVER_ASSERT_OK(f->Append(AsBytes("1")));
  EXPECT_FALSE(f->Sync().ok());
  EXPECT_FALSE(f->Append(AsBytes("2")).ok());
  EXPECT_FALSE(f->Append(AsBytes("3")).ok());
  QUIVER_EXPECT_OK(fs_.SyncDir("/db"));  // not a counted kind
  EXPECT_EQ(fs_.faults_injected(), 3u);
  fs_.ClearFault();
  QUIVER_EXPECT_OK(f->Append(AsBytes("4")));
  EXPECT_EQ(Read("/db/a"), "14");
}

TEST_F(FaultFileSystemTest, EnospcIsResourceExhausted) {
  auto f = Open("/db/a");
  fs_.SetFault({.ops = FaultOp::kWrite, .kind = FaultKind::kEnospc, .at = 1});
  Status s = f->Append(AsBytes("x"));
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("no space left on device: /db/a"), std::string_view::npos) << s.ToString();
  EXPECT_EQ(Read("/db/a"), "");
}

TEST_F(FaultFileSystemTest, ShortWritePassesHalfTheDataThenFails) {
  auto f = Open("/db/a");
  fs_.SetFault({.ops = FaultOp::kWrite, .mode = FaultMode::kPersistent, .kind = FaultKind::kShortWrite});
  Status s = f->Append(AsBytes("0123456789"));
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("short write"), std::string_view::npos) << s.ToString();
  EXPECT_EQ(Read("/db/a"), "01234");  // the partial bytes reached the file
  EXPECT_FALSE(f->WriteAt(10, AsBytes("abcd")).ok());
  EXPECT_EQ(Read("/db/a"), std::string("01234\0\0\0\0\0ab", 12));
  // A short write has no meaning for a sync: it fails as EIO.
  fs_.SetFault({.ops = FaultOp::kSync, .kind = FaultKind::kShortWrite});
  EXPECT_EQ(f->Sync().code(), StatusCode::kIOError);
}

TEST_F(FaultFileSystemTest, EachOperationKindCanFail) {
  QUIVER_ASSERT_OK(sim_.WriteFileForTest("/db/a", "data"));
  auto w = Open("/db/w");
  auto r = fs_.OpenReadable("/db/a");
  QUIVER_ASSERT_OK(r);
  std::vector<std::byte> buf(4);
  struct Case {
    FaultOp op;
    std::function<Status()> call;
  };
  const std::vector<Case> cases = {
      {FaultOp::kWrite, [&] { return w->Append(AsBytes("x")); }},
      {FaultOp::kSync, [&] { return w->Sync(); }},
      {FaultOp::kTruncate, [&] { return w->Truncate(0); }},
      {FaultOp::kAllocate, [&] { return w->Allocate(0, 100); }},
      {FaultOp::kWriteback, [&] { return w->StartWriteback(0, 1); }},
      {FaultOp::kWriteback, [&] { return w->WaitWriteback(0, 1); }},
      {FaultOp::kRead, [&] { return (*r)->ReadAt(0, buf).status(); }},
      {FaultOp::kOpen, [&] { return fs_.OpenReadable("/db/a").status(); }},
      {FaultOp::kOpen, [&] { return fs_.OpenWritable("/db/b", OpenMode::kCreateNew).status(); }},
      {FaultOp::kRename, [&] { return fs_.Rename("/db/a", "/db/c"); }},
      {FaultOp::kRemove, [&] { return fs_.Remove("/db/a"); }},
      {FaultOp::kSyncDir, [&] { return fs_.SyncDir("/db"); }},
      {FaultOp::kCreateDir, [&] { return fs_.CreateDir("/db/sub"); }},
      {FaultOp::kList, [&] { return fs_.ListDir("/db").status(); }},
      {FaultOp::kList, [&] { return fs_.Exists("/db/a").status(); }},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    fs_.SetFault({.ops = cases[i].op, .at = 1});
    EXPECT_EQ(cases[i].call().code(), StatusCode::kIOError) << "case " << i;
    EXPECT_EQ(fs_.faults_injected(), 1u) << "case " << i;
  }
  fs_.ClearFault();
  // Nothing happened: the failed calls did not reach the simulator.
  EXPECT_EQ(*sim_.ListDir("/db"), (std::vector<std::string>{"a", "w"}));
  EXPECT_EQ(Read("/db/w"), "");
}

TEST_F(FaultFileSystemTest, PathFilterCountsOnlyMatchingPaths) {
  auto wal = Open("/db/wal-000001.log");
  auto other = Open("/db/ckpt.tmp");
  fs_.SetFault({.ops = FaultOp::kWrite, .mode = FaultMode::kPersistent, .path_contains = "wal-"});
  QUIVER_EXPECT_OK(other->Append(AsBytes("x")));
  EXPECT_FALSE(wal->Append(AsBytes("x")).ok());
  EXPECT_EQ(fs_.ops_seen(), 1u);
  // A rename counts if either path matches.
  fs_.SetFault({.ops = FaultOp::kRename, .path_contains = "wal-"});
  EXPECT_FALSE(fs_.Rename("/db/ckpt.tmp", "/db/wal-000002.log").ok());
}

TEST_F(FaultFileSystemTest, RandomModeIsSeededAndDeterministic) {
  auto pattern = [this](std::uint64_t seed) {
    auto f = Open("/db/r" + std::to_string(seed));
    fs_.SetFault({.ops = FaultOp::kWrite, .mode = FaultMode::kRandom, .one_in = 4, .seed = seed});
    std::string failed;
    for (int i = 0; i < 400; ++i) failed.push_back(f->Append(AsBytes("x")).ok() ? '.' : 'F');
    return failed;
  };
  const std::string a = pattern(7);
  fs_.ClearFault();
  EXPECT_EQ(pattern(7), a);
  EXPECT_NE(pattern(8), a);
  const auto failures = std::count(a.begin(), a.end(), 'F');
  EXPECT_GT(failures, 50);  // expected 100
  EXPECT_LT(failures, 150);
}

TEST_F(FaultFileSystemTest, CountsSyncsRetriedAfterAFailedSync) {
  auto wal = Open("/db/wal");
  auto other = Open("/db/other");
  fs_.SetFault({.ops = FaultOp::kSync, .path_contains = "wal"});
  EXPECT_FALSE(wal->Sync().ok());
  QUIVER_EXPECT_OK(other->Sync());
  EXPECT_EQ(fs_.SyncsAfterFailedSync("/db/wal"), 0u);  // not retried (yet)
  EXPECT_EQ(fs_.TotalSyncsAfterFailedSync(), 0u);
  QUIVER_EXPECT_OK(wal->Sync());  // the fsyncgate mistake: the retry "succeeds"
  EXPECT_EQ(fs_.SyncsAfterFailedSync("/db/wal"), 1u);
  EXPECT_EQ(fs_.SyncsAfterFailedSync("/db/other"), 0u);
  EXPECT_EQ(fs_.TotalSyncsAfterFailedSync(), 1u);
  fs_.ResetSyncTracking();
  EXPECT_EQ(fs_.TotalSyncsAfterFailedSync(), 0u);
}

TEST_F(FaultFileSystemTest, AFailureReportedByTheWrappedFileSystemAlsoCounts) {
  auto f = Open("/db/a");
  sim_.SetCrashAtOperation(sim_.operation_count() + 1);
  EXPECT_FALSE(f->Sync().ok());  // the simulator's crash point, not a fault
  EXPECT_EQ(fs_.faults_injected(), 0u);
  EXPECT_FALSE(f->Sync().ok());
  EXPECT_EQ(fs_.SyncsAfterFailedSync("/db/a"), 1u);
}

TEST_F(FaultFileSystemTest, LinuxFsyncSemanticsDropTheUnsyncedWrites) {
  QUIVER_ASSERT_OK(sim_.WriteFileForTest("/db/wal", "acked;"));
  auto f = Open("/db/wal");
  QUIVER_ASSERT_OK(f->Append(AsBytes("pending;")));
  fs_.SetFault({.ops = FaultOp::kSync, .at = 1, .fsync_failure_drops_unsynced = true});
  EXPECT_FALSE(f->Sync().ok());
  EXPECT_EQ(Read("/db/wal"), "acked;pending;");  // still readable
  QUIVER_EXPECT_OK(f->Sync());                   // the retry succeeds ...
  std::unique_ptr<SimFileSystem> after = sim_.Clone();
  after->Crash(CrashPolicy::kLoseUnsyncedDirEntries, 0);
  EXPECT_EQ(*after->ReadFileForTest("/db/wal"), "acked;");  // ... and the bytes are gone
  EXPECT_EQ(fs_.SyncsAfterFailedSync("/db/wal"), 1u);
}

TEST_F(FaultFileSystemTest, WithoutLinuxSemanticsAFailedSyncKeepsThePendingWrites) {
  QUIVER_ASSERT_OK(sim_.WriteFileForTest("/db/wal", "acked;"));
  auto f = Open("/db/wal");
  QUIVER_ASSERT_OK(f->Append(AsBytes("pending;")));
  fs_.SetFault({.ops = FaultOp::kSync, .at = 1});
  EXPECT_FALSE(f->Sync().ok());
  QUIVER_EXPECT_OK(f->Sync());
  EXPECT_EQ(*sim_.ReadDurableForTest("/db/wal"), "acked;pending;");
}

TEST_F(FaultFileSystemTest, SyncDelaySlowsEverySync) {
  auto f = Open("/db/a");
  fs_.SetSyncDelay(std::chrono::milliseconds(20));
  const auto start = std::chrono::steady_clock::now();
  QUIVER_ASSERT_OK(f->Sync());
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(40));
}

TEST(FaultFileSystemPosixTest, WrapsTheRealFileSystem) {
  test::TempDir dir;
  FaultFileSystem fs(PosixFileSystem());
  auto f = fs.OpenWritable(dir.File("a"), OpenMode::kCreateNew);
  QUIVER_ASSERT_OK(f);
  fs.SetFault({.ops = FaultOp::kWrite, .kind = FaultKind::kShortWrite});
  EXPECT_FALSE((*f)->Append(AsBytes("abcdef")).ok());
  EXPECT_EQ(test::ReadAll(*PosixFileSystem(), dir.File("a")), "abc");
  fs.SetFault({.ops = FaultOp::kSync, .kind = FaultKind::kEnospc, .fsync_failure_drops_unsynced = true});
  EXPECT_EQ((*f)->Sync().code(), StatusCode::kResourceExhausted);  // no simulator: nothing dropped
}

}  // namespace
}  // namespace quiver::env
