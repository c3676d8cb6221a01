// WalWriter's disk reservation, measured on the real file system (st_blocks):
// a segment reserves space in doubling steps rather than its whole target
// size, and a segment whose torn tail recovery cut reserves again.
#include "wal/wal_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "durable_workload.h"
#include "env/file_system.h"
#include "env_test_util.h"
#include "quiver/quiver.h"
#include "test_environment.h"

namespace quiver {
namespace {

using env::test::TempDir;
using test_util::ApplyGroup;

// Disk blocks of `path`, in bytes (what it takes on disk, preallocation
// included).
std::uint64_t DiskBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_blocks) * 512 : 0;
}

// The size of `path`.
std::uint64_t FileBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::string OnlySegment(const std::string& dir) {
  std::string found;
  const std::vector<std::string> names = env::PosixFileSystem()->ListDir(dir).value();
  for (const std::string& n : names)
    if (n.rfind("wal-", 0) == 0) found = env::JoinPath(dir, n);
  return found;
}

TEST(WalWriterTest, ASmallGraphTakesLittleWalSpace) {
  test_util::ScopedEngineWalFillStep engine_step;  // the reservation production makes
  TempDir dir;
  Options o;  // default 64 MiB segments
  o.writer.spin_microseconds = 0;
  auto g = Graph::Open(o, dir.path()).value();
  for (int k = 1; k <= 5; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
  const std::string segment = OnlySegment(dir.path());
  ASSERT_FALSE(segment.empty());
  EXPECT_LE(DiskBytes(segment), 2 * wal::WalWriter::kFirstReservation);
}

TEST(WalWriterTest, ATruncatedTailKeepsItsReservation) {
  test_util::ScopedEngineWalFillStep engine_step;
  TempDir dir;
  Options o;
  o.writer.spin_microseconds = 0;
  {
    // Closed with a checkpoint: the reopen replays nothing and appends to
    // the same segment after cutting the tail.
    auto g = Graph::Open(o, dir.path()).value();
    for (int k = 1; k <= 5; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
  }
  const std::string segment = OnlySegment(dir.path());
  const std::uint64_t reserved = DiskBytes(segment);
  if (reserved < wal::WalWriter::kFirstReservation) GTEST_SKIP() << "the file system does not preallocate";
  {
    auto f = env::PosixFileSystem()->OpenWritable(segment, env::OpenMode::kCreateOrOpen).value();
    ASSERT_TRUE(f->Append(env::AsBytes(std::string(100, '\xA5'))).ok());  // a torn tail
  }
  auto g = Graph::Open(o, dir.path()).value();
  ASSERT_GT(g->GetOpenStats().tail_bytes_truncated, 0u);
  ASSERT_EQ(OnlySegment(dir.path()), segment);
  EXPECT_GE(DiskBytes(segment), wal::WalWriter::kFirstReservation);
}

// Zero-filled segments: after a group is acknowledged the writer writes
// zeros ahead of the write head (synced), so the next groups land inside the
// file's size, in blocks already written: their fdatasync has no metadata
// to flush. The reopen keeps that zeroed end (no torn tail to cut) and
// appends over it.
TEST(WalWriterTest, GroupsLandInTheZeroedEndAndAReopenKeepsIt) {
  test_util::ScopedEngineWalFillStep engine_step;  // 20 groups inside one step
  TempDir dir;
  Options o;
  o.writer.spin_microseconds = 0;  // closed with a checkpoint: the reopen replays nothing
  std::uint64_t size_after_first = 0;
  {
    auto g = Graph::Open(o, dir.path()).value();
    ASSERT_TRUE(ApplyGroup(*g, 1).ok());
    ASSERT_TRUE(ApplyGroup(*g, 2).ok());  // after the fill the first one set off
    const std::string segment = OnlySegment(dir.path());
    size_after_first = FileBytes(segment);
    EXPECT_GE(size_after_first, wal::WalWriter::FillStep()) << "no zeroed end ahead of the appends";
    for (int k = 3; k <= 20; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
    EXPECT_EQ(FileBytes(segment), size_after_first) << "groups were written past the zeroed end";
  }
  const std::string segment = OnlySegment(dir.path());
  auto g = Graph::Open(o, dir.path()).value();
  EXPECT_EQ(g->GetOpenStats().tail_bytes_truncated, 0u);
  EXPECT_EQ(g->GetOpenStats().recovered_sequence, 20u);
  EXPECT_EQ(OnlySegment(dir.path()), segment);
  EXPECT_EQ(FileBytes(segment), size_after_first);
  ASSERT_TRUE(ApplyGroup(*g, 21).ok());
  EXPECT_EQ(FileBytes(segment), size_after_first);
}

}  // namespace
}  // namespace quiver
