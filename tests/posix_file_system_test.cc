// PosixFileSystem: every FileSystem call against a real scratch directory,
// the errno -> Status mapping, and lock exclusivity.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "env/file_system.h"
#include "env/posix_error.h"
#include "env_test_util.h"

namespace quiver::env {
namespace {

using test::ReadAll;
using test::TempDir;
using test::WriteAll;

class PosixFileSystemTest : public ::testing::Test {
 protected:
  FileSystem& fs_ = *PosixFileSystem();
  TempDir dir_;
};

TEST(FileSystemTest, JoinPathJoinsWithExactlyOneSlash) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "/b"), "a/b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("a", ""), "a");
}

TEST(PosixFileSystemErrorTest, MapsErrnoToCanonicalCodes) {
  Status nospc = PosixError("pwrite", "d/f", ENOSPC);
  EXPECT_EQ(nospc.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(nospc.message(), "no space left on device: d/f");
  EXPECT_EQ(PosixError("open", "d/f", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(PosixError("open", "d/f", EEXIST).code(), StatusCode::kAlreadyExists);
  Status eio = PosixError("fdatasync", "d/f", EIO);
  EXPECT_EQ(eio.code(), StatusCode::kIOError);
  EXPECT_NE(eio.message().find("fdatasync d/f: "), std::string_view::npos) << eio.ToString();
}

TEST_F(PosixFileSystemTest, AppendWriteAtSyncAndReadBack) {
  const std::string path = dir_.File("data");
  auto f = fs_.OpenWritable(path, OpenMode::kCreateNew);
  QUIVER_ASSERT_OK(f);
  QUIVER_ASSERT_OK((*f)->Append(AsBytes("hello ")));
  QUIVER_ASSERT_OK((*f)->Append(AsBytes("world")));
  EXPECT_EQ((*f)->Size(), 11u);
  QUIVER_ASSERT_OK((*f)->WriteAt(0, AsBytes("J")));
  QUIVER_ASSERT_OK((*f)->WriteAt(14, AsBytes("!")));  // past the end: a zero gap
  EXPECT_EQ((*f)->Size(), 15u);
  QUIVER_ASSERT_OK((*f)->Sync());
  QUIVER_ASSERT_OK((*f)->Close());
  EXPECT_EQ(ReadAll(fs_, path), std::string("Jello world\0\0\0!", 15));

  auto r = fs_.OpenReadable(path);
  QUIVER_ASSERT_OK(r);
  std::vector<std::byte> buf(10);
  auto n = (*r)->ReadAt(12, buf);  // short only at end of file
  QUIVER_ASSERT_OK(n);
  EXPECT_EQ(*n, 3u);
  n = (*r)->ReadAt(100, buf);
  QUIVER_ASSERT_OK(n);
  EXPECT_EQ(*n, 0u);
}

TEST_F(PosixFileSystemTest, OpenModes) {
  const std::string path = dir_.File("f");
  QUIVER_ASSERT_OK(WriteAll(fs_, path, "abc"));
  EXPECT_EQ(fs_.OpenWritable(path, OpenMode::kCreateNew).status().code(), StatusCode::kAlreadyExists);

  auto keep = fs_.OpenWritable(path, OpenMode::kCreateOrOpen);
  QUIVER_ASSERT_OK(keep);
  EXPECT_EQ((*keep)->Size(), 3u);
  QUIVER_ASSERT_OK((*keep)->Append(AsBytes("d")));  // Append goes at the end
  QUIVER_ASSERT_OK((*keep)->Close());
  EXPECT_EQ(ReadAll(fs_, path), "abcd");

  auto trunc = fs_.OpenWritable(path, OpenMode::kTruncate);
  QUIVER_ASSERT_OK(trunc);
  EXPECT_EQ((*trunc)->Size(), 0u);
  EXPECT_EQ(ReadAll(fs_, path), "");
}

TEST_F(PosixFileSystemTest, MissingPathsAreNotFound) {
  EXPECT_EQ(fs_.OpenReadable(dir_.File("nope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.OpenWritable(dir_.File("no/such"), OpenMode::kCreateOrOpen).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(fs_.Remove(dir_.File("nope")).code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.Rename(dir_.File("nope"), dir_.File("x")).code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.ListDir(dir_.File("nope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.SyncDir(dir_.File("nope")).code(), StatusCode::kNotFound);
}

TEST_F(PosixFileSystemTest, TruncateAndAllocate) {
  const std::string path = dir_.File("t");
  auto f = fs_.OpenWritable(path, OpenMode::kCreateNew);
  QUIVER_ASSERT_OK(f);
  QUIVER_ASSERT_OK((*f)->Append(AsBytes("0123456789")));
  QUIVER_ASSERT_OK((*f)->Truncate(4));
  EXPECT_EQ((*f)->Size(), 4u);
  QUIVER_ASSERT_OK((*f)->Append(AsBytes("x")));  // Append follows the truncation
  QUIVER_ASSERT_OK((*f)->Truncate(7));           // grows with zeros
  // Preallocation reserves space but never changes the size.
  QUIVER_ASSERT_OK((*f)->Allocate(0, 1 << 20));
  EXPECT_EQ((*f)->Size(), 7u);
  QUIVER_ASSERT_OK((*f)->Sync());
  EXPECT_EQ(ReadAll(fs_, path), std::string("0123x\0\0", 7));
}

TEST_F(PosixFileSystemTest, WritebackHintsKeepContentAndSize) {
  const std::string path = dir_.File("w");
  auto f = fs_.OpenWritable(path, OpenMode::kCreateNew);
  QUIVER_ASSERT_OK(f);
  QUIVER_ASSERT_OK((*f)->Append(AsBytes(std::string(10000, 'a'))));
  QUIVER_ASSERT_OK((*f)->StartWriteback(0, 4096));
  QUIVER_ASSERT_OK((*f)->WaitWriteback(0, 10000));
  QUIVER_ASSERT_OK((*f)->WaitWriteback(10000, 0));  // empty: a no-op, not "to the end"
  EXPECT_EQ((*f)->Size(), 10000u);
  EXPECT_EQ(ReadAll(fs_, path), std::string(10000, 'a'));
  QUIVER_ASSERT_OK((*f)->Close());
  EXPECT_EQ((*f)->StartWriteback(0, 1).code(), StatusCode::kFailedPrecondition);
}

TEST_F(PosixFileSystemTest, ClosedFileFailsWithFailedPrecondition) {
  auto f = fs_.OpenWritable(dir_.File("c"), OpenMode::kCreateNew);
  QUIVER_ASSERT_OK(f);
  QUIVER_ASSERT_OK((*f)->Close());
  EXPECT_EQ((*f)->Append(AsBytes("x")).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*f)->Sync().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*f)->Close().code(), StatusCode::kFailedPrecondition);
}

TEST_F(PosixFileSystemTest, RenameReplacesAndRemoveDeletes) {
  const std::string a = dir_.File("a");
  const std::string b = dir_.File("b");
  QUIVER_ASSERT_OK(WriteAll(fs_, a, "new"));
  QUIVER_ASSERT_OK(WriteAll(fs_, b, "old"));
  QUIVER_ASSERT_OK(fs_.Rename(a, b));
  QUIVER_ASSERT_OK(fs_.SyncDir(dir_.path()));
  EXPECT_EQ(*fs_.Exists(a), false);
  EXPECT_EQ(ReadAll(fs_, b), "new");
  QUIVER_ASSERT_OK(fs_.Remove(b));
  EXPECT_EQ(*fs_.Exists(b), false);
}

TEST_F(PosixFileSystemTest, DirectoriesListSortedAndCreateIsIdempotent) {
  const std::string sub = dir_.File("sub");
  QUIVER_ASSERT_OK(fs_.CreateDir(sub));
  QUIVER_ASSERT_OK(fs_.CreateDir(sub));  // OK if it exists
  for (const char* name : {"zeta", "alpha", "Beta", "m10", "m9"}) {
    QUIVER_ASSERT_OK(WriteAll(fs_, JoinPath(sub, name), name));
  }
  QUIVER_ASSERT_OK(fs_.CreateDir(JoinPath(sub, "dir")));
  QUIVER_ASSERT_OK(fs_.SyncDir(sub));
  auto names = fs_.ListDir(sub);
  QUIVER_ASSERT_OK(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"Beta", "alpha", "dir", "m10", "m9", "zeta"}));
  EXPECT_EQ(*fs_.Exists(sub), true);
  EXPECT_EQ(*fs_.Exists(JoinPath(sub, "alpha")), true);
  // A file where a directory is asked for is not "already a directory".
  EXPECT_EQ(fs_.CreateDir(JoinPath(sub, "alpha")).code(), StatusCode::kAlreadyExists);
}

TEST_F(PosixFileSystemTest, LockIsExclusiveUntilReleased) {
  const std::string path = dir_.File("LOCK");
  auto first = fs_.LockFile(path, LockMode::kExclusive);
  QUIVER_ASSERT_OK(first);
  // flock conflicts between open file descriptions, even in one process.
  EXPECT_EQ(fs_.LockFile(path, LockMode::kExclusive).status().code(), StatusCode::kFailedPrecondition);
  first->reset();
  auto again = fs_.LockFile(path, LockMode::kExclusive);
  QUIVER_EXPECT_OK(again);
}

TEST_F(PosixFileSystemTest, LockHeldInThisProcessSaysSo) {
  const std::string path = dir_.File("LOCK");
  auto first = fs_.LockFile(path, LockMode::kExclusive);
  QUIVER_ASSERT_OK(first);
  Status second = fs_.LockFile(path, LockMode::kExclusive).status();
  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.message().find("held by this process"), std::string::npos) << second.ToString();
  EXPECT_NE(second.message().find(path), std::string::npos) << second.ToString();
}

// Shared locks coexist, in one process as across processes, and exclude an
// exclusive one (and it them); the refusal says which kind holds it. A
// shared lock never creates the file and needs no write permission.
TEST_F(PosixFileSystemTest, SharedLocksCoexistAndExcludeAnExclusiveOne) {
  const std::string path = dir_.File("LOCK");
  EXPECT_EQ(fs_.LockFile(path, LockMode::kShared).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs_.Exists(path).value());
  QUIVER_ASSERT_OK(WriteAll(fs_, path, ""));
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0) << std::strerror(errno);
  auto a = fs_.LockFile(path, LockMode::kShared);
  QUIVER_ASSERT_OK(a);
  auto b = fs_.LockFile(path, LockMode::kShared);
  QUIVER_ASSERT_OK(b);
  Status ex = fs_.LockFile(path, LockMode::kExclusive).status();
  EXPECT_EQ(ex.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ex.message().find("shared"), std::string::npos) << ex.ToString();
  a->reset();
  EXPECT_EQ(fs_.LockFile(path, LockMode::kExclusive).status().code(), StatusCode::kFailedPrecondition);
  b->reset();
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0) << std::strerror(errno);
  auto c = fs_.LockFile(path, LockMode::kExclusive);
  QUIVER_ASSERT_OK(c);
  Status sh = fs_.LockFile(path, LockMode::kShared).status();
  EXPECT_EQ(sh.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(sh.message().find("exclusive"), std::string::npos) << sh.ToString();
}

TEST_F(PosixFileSystemTest, RealPathResolvesLinksDotsAndDotDots) {
  const std::string sub = dir_.File("sub");
  QUIVER_ASSERT_OK(fs_.CreateDir(sub));
  const std::string link = dir_.File("link");
  ASSERT_EQ(::symlink(sub.c_str(), link.c_str()), 0) << std::strerror(errno);
  const std::string real = fs_.RealPath(sub).value();
  EXPECT_EQ(fs_.RealPath(link).value(), real);
  EXPECT_EQ(fs_.RealPath(link + "/./../sub/").value(), real);
  EXPECT_EQ(fs_.RealPath(dir_.File("none")).status().code(), StatusCode::kNotFound);
}

// A symbolic link where a file should be is refused (O_NOFOLLOW), so a
// planted link cannot make Quiver write through it.
TEST_F(PosixFileSystemTest, FileOpensDoNotFollowSymbolicLinks) {
  const std::string target = dir_.File("target");
  const std::string link = dir_.File("link");
  QUIVER_ASSERT_OK(WriteAll(fs_, target, "untouched"));
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << std::strerror(errno);
  EXPECT_FALSE(fs_.OpenWritable(link, OpenMode::kTruncate).ok());
  EXPECT_FALSE(fs_.OpenWritable(link, OpenMode::kCreateOrOpen).ok());
  EXPECT_FALSE(fs_.OpenReadable(link).ok());
  EXPECT_FALSE(fs_.LockFile(link, LockMode::kExclusive).ok());
  EXPECT_EQ(ReadAll(fs_, target), "untouched");
}

TEST_F(PosixFileSystemTest, CreatesFilesAndDirectoriesWithTheConfiguredMode) {
  std::unique_ptr<FileSystem> fs = NewPosixFileSystem(0640);
  QUIVER_ASSERT_OK(WriteAll(*fs, dir_.File("f"), "x"));
  QUIVER_ASSERT_OK(fs->CreateDir(dir_.File("d")));
  struct stat st;
  ASSERT_EQ(::stat(dir_.File("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ASSERT_EQ(::stat(dir_.File("d").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);  // read bits gain their search bit
}

TEST_F(PosixFileSystemTest, FreeSpaceIsReported) {
  auto space = fs_.FreeSpace(dir_.path());
  QUIVER_ASSERT_OK(space);
  EXPECT_GT(*space, 0u);
}

TEST_F(PosixFileSystemTest, ConcurrentReadsSeeTheSameBytes) {
  const std::string path = dir_.File("shared");
  std::string content;
  for (int i = 0; i < 4096; ++i) content.push_back(static_cast<char>('a' + i % 26));
  QUIVER_ASSERT_OK(WriteAll(fs_, path, content));
  auto r = fs_.OpenReadable(path);
  QUIVER_ASSERT_OK(r);
  const ReadableFile& file = **r;
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::byte> buf(100);
      for (std::uint64_t off = t; off + 100 <= content.size(); off += 97) {
        auto n = file.ReadAt(off, buf);
        if (!n.ok() || *n != 100 || std::memcmp(buf.data(), content.data() + off, 100) != 0) ++mismatches[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace quiver::env
