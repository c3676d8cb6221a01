// BufferedFileSystem: unsynced bytes live in process memory (reads see
// them, the real file does not) until Sync; kill -9 of a real child process
// loses exactly them; early writebacks and garbage tails never change what
// reads see; directory operations pass straight through.
#include "env/buffered_file_system.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "env/random.h"
#include "env_test_util.h"

namespace quiver::env {
namespace {

using test::ReadAll;

class BufferedFileSystemTest : public ::testing::Test {
 protected:
  std::unique_ptr<WritableFile> Open(BufferedFileSystem& fs, const std::string& path,
                                     OpenMode mode = OpenMode::kCreateOrOpen) {
    auto f = fs.OpenWritable(path, mode);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  // What the disk holds: read around the buffer.
  std::string OnDisk(const std::string& path) { return ReadAll(*PosixFileSystem(), path); }

  test::TempDir dir_;
  BufferedFileSystem fs_;
};

TEST_F(BufferedFileSystemTest, UnsyncedBytesStayInMemoryUntilSync) {
  const std::string path = dir_.File("f");
  auto f = Open(fs_, path);
  QUIVER_ASSERT_OK(f->Append(AsBytes("hello")));
  EXPECT_EQ(f->Size(), 5u);
  EXPECT_EQ(ReadAll(fs_, path), "hello");
  EXPECT_EQ(OnDisk(path), "");  // created on disk at once, but empty
  EXPECT_EQ(fs_.BufferedBytes(), 5u);
  QUIVER_ASSERT_OK(f->Sync());
  EXPECT_EQ(OnDisk(path), "hello");
  EXPECT_EQ(fs_.BufferedBytes(), 0u);
  // Close keeps the page cache: readers still see unsynced bytes.
  QUIVER_ASSERT_OK(f->Append(AsBytes(" world")));
  QUIVER_ASSERT_OK(f->Close());
  EXPECT_EQ(ReadAll(fs_, path), "hello world");
  EXPECT_EQ(OnDisk(path), "hello");
}

TEST_F(BufferedFileSystemTest, WritesAndTruncatesOverlayTheRealFile) {
  const std::string path = dir_.File("f");
  QUIVER_ASSERT_OK(test::WriteAll(*PosixFileSystem(), path, "0123456789"));
  auto f = Open(fs_, path);
  QUIVER_ASSERT_OK(f->WriteAt(2, AsBytes("ab")));
  QUIVER_ASSERT_OK(f->Truncate(6));
  QUIVER_ASSERT_OK(f->Append(AsBytes("XY")));
  QUIVER_ASSERT_OK(f->WriteAt(11, AsBytes("!")));  // a gap of zeros
  const std::string expected("01ab45XY\0\0\0!", 12);
  EXPECT_EQ(ReadAll(fs_, path), expected);
  EXPECT_EQ(OnDisk(path), "0123456789");
  QUIVER_ASSERT_OK(f->Sync());
  EXPECT_EQ(OnDisk(path), expected);
}

TEST_F(BufferedFileSystemTest, OpenWithTruncateIsBufferedToo) {
  const std::string path = dir_.File("f");
  QUIVER_ASSERT_OK(test::WriteAll(*PosixFileSystem(), path, "old"));
  auto f = Open(fs_, path, OpenMode::kTruncate);
  EXPECT_EQ(ReadAll(fs_, path), "");
  EXPECT_EQ(OnDisk(path), "old");
  QUIVER_ASSERT_OK(f->Sync());
  EXPECT_EQ(OnDisk(path), "");
  EXPECT_EQ(fs_.OpenWritable(path, OpenMode::kCreateNew).status().code(), StatusCode::kAlreadyExists);
}

TEST_F(BufferedFileSystemTest, RenameCarriesTheBufferedBytes) {
  const std::string tmp = dir_.File("ckpt.tmp");
  const std::string final_path = dir_.File("ckpt");
  auto f = Open(fs_, tmp);
  QUIVER_ASSERT_OK(f->Append(AsBytes("payload")));
  QUIVER_ASSERT_OK(fs_.Rename(tmp, final_path));
  QUIVER_ASSERT_OK(fs_.SyncDir(dir_.path()));
  EXPECT_EQ(ReadAll(fs_, final_path), "payload");
  EXPECT_EQ(OnDisk(final_path), "");
  QUIVER_ASSERT_OK(f->Sync());  // the open file follows its inode
  EXPECT_EQ(OnDisk(final_path), "payload");
  QUIVER_ASSERT_OK(fs_.Remove(final_path));
  EXPECT_EQ(*fs_.Exists(final_path), false);
}

TEST_F(BufferedFileSystemTest, DirectoryOperationsPassThrough) {
  QUIVER_ASSERT_OK(fs_.CreateDir(dir_.File("sub")));
  Open(fs_, dir_.File("b"));
  Open(fs_, dir_.File("a"));
  EXPECT_EQ(*fs_.ListDir(dir_.path()), (std::vector<std::string>{"a", "b", "sub"}));
  EXPECT_EQ(*PosixFileSystem()->ListDir(dir_.path()), (std::vector<std::string>{"a", "b", "sub"}));
  auto lock = fs_.LockFile(dir_.File("LOCK"), LockMode::kExclusive);
  QUIVER_ASSERT_OK(lock);
  EXPECT_EQ(fs_.LockFile(dir_.File("LOCK"), LockMode::kExclusive).status().code(),
            StatusCode::kFailedPrecondition);
  QUIVER_EXPECT_OK(fs_.FreeSpace(dir_.path()));
}

// The point of the wrapper: a real SIGKILL loses what was not synced.
TEST_F(BufferedFileSystemTest, KillNineLosesExactlyTheUnsyncedBytes) {
  const std::string path = dir_.File("wal");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    BufferedFileSystem fs;
    auto f = fs.OpenWritable(path, OpenMode::kCreateNew);
    if (!f.ok() || !(*f)->Append(AsBytes("synced;")).ok() || !(*f)->Sync().ok()) ::_exit(1);
    if (!(*f)->Append(AsBytes("unsynced;")).ok() || !(*f)->WriteAt(0, AsBytes("S")).ok()) ::_exit(2);
    ::kill(::getpid(), SIGKILL);
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(OnDisk(path), "synced;");
}

// Random writes, overwrites past the end and truncations with early
// writebacks and garbage tails: reads always equal a plain string model, and
// after Sync so does the disk.
TEST_F(BufferedFileSystemTest, EarlyWritebackNeverChangesWhatReadsSee) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    BufferedFileSystem fs(PosixFileSystem(), {.leak_one_in = 2, .seed = seed});
    const std::string path = dir_.File("model" + std::to_string(seed));
    auto f = Open(fs, path);
    std::string model;
    Rng rng(seed);
    for (int op = 0; op < 60; ++op) {
      const std::uint64_t kind = rng.Uniform(10);
      if (kind < 6) {
        std::string data(1 + rng.Uniform(700), static_cast<char>('a' + rng.Uniform(26)));
        if (kind < 3) {
          model += data;
          QUIVER_ASSERT_OK(f->Append(AsBytes(data)));
        } else {
          const std::uint64_t at = rng.Uniform(model.size() + 600);
          if (model.size() < at + data.size()) model.resize(at + data.size(), '\0');
          model.replace(at, data.size(), data);
          QUIVER_ASSERT_OK(f->WriteAt(at, AsBytes(data)));
        }
      } else if (kind < 8) {
        const std::uint64_t size = rng.Uniform(model.size() + 300);
        model.resize(size, '\0');
        QUIVER_ASSERT_OK(f->Truncate(size));
      } else if (kind == 8) {
        QUIVER_ASSERT_OK(f->Sync());
        ASSERT_EQ(OnDisk(path), model) << "seed " << seed << " op " << op;
      }
      ASSERT_EQ(f->Size(), model.size());
      ASSERT_EQ(ReadAll(fs, path), model) << "seed " << seed << " op " << op;
    }
    QUIVER_ASSERT_OK(f->Sync());
    EXPECT_EQ(OnDisk(path), model) << "seed " << seed;
  }
}

TEST_F(BufferedFileSystemTest, EarlyWritebackLeavesRealTornAndGarbageTails) {
  bool saw_torn_prefix = false;  // the disk holds a strict prefix of the content
  bool saw_garbage = false;      // the disk holds bytes that were never written
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const std::string path = dir_.File("wal" + std::to_string(seed));
    BufferedFileSystem fs(PosixFileSystem(), {.leak_one_in = 1, .seed = seed});
    auto f = Open(fs, path);
    std::string model;
    for (int i = 0; i < 20; ++i) {
      const std::string record(100, static_cast<char>('A' + i));
      model += record;
      QUIVER_ASSERT_OK(f->Append(AsBytes(record)));
      const std::string disk = OnDisk(path);
      ASSERT_LE(disk.size(), model.size());  // garbage only where the file grew
      const bool prefix = model.compare(0, disk.size(), disk) == 0;
      saw_torn_prefix |= prefix && !disk.empty() && disk.size() < model.size();
      saw_garbage |= !prefix;
    }
    ASSERT_EQ(ReadAll(fs, path), model);
  }
  EXPECT_TRUE(saw_torn_prefix);
  EXPECT_TRUE(saw_garbage);
}

}  // namespace
}  // namespace quiver::env
