// SimFileSystem: the namespace and file operations, the operation counter
// and crash point, the exact effect of every crash policy on data and on
// directory entries, damage helpers, Clone and the lock table.
#include "env/sim_file_system.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "env/path.h"
#include "env_test_util.h"

namespace quiver::env {
namespace {

using test::ReadAll;

constexpr int kSeeds = 200;

std::string Block(char c, std::size_t n = kSectorSize) { return std::string(n, c); }

class SimFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override { QUIVER_ASSERT_OK(fs_.CreateDir("/db")); }

  std::unique_ptr<WritableFile> Open(SimFileSystem& fs, const std::string& path,
                                     OpenMode mode = OpenMode::kCreateOrOpen) {
    auto f = fs.OpenWritable(path, mode);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  std::unique_ptr<WritableFile> Open(const std::string& path) { return Open(fs_, path); }

  // A file whose name and `content` are durable.
  void Durable(const std::string& path, std::string_view content) {
    QUIVER_ASSERT_OK(fs_.WriteFileForTest(path, content));
  }

  static std::string Read(const SimFileSystem& fs, const std::string& path) {
    auto r = fs.ReadFileForTest(path);
    return r.ok() ? *r : "<missing>";
  }
  static bool Exists(SimFileSystem& fs, const std::string& path) {
    auto r = fs.Exists(path);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  }
  std::unique_ptr<SimFileSystem> Crashed(CrashPolicy policy, std::uint64_t seed = 1) const {
    std::unique_ptr<SimFileSystem> copy = fs_.Clone();
    copy->Crash(policy, seed);
    return copy;
  }

  SimFileSystem fs_;
};

// ---- Plain file-system behaviour ----

TEST_F(SimFileSystemTest, ReadsSeeUnsyncedWrites) {
  auto f = Open("/db/a");
  QUIVER_ASSERT_OK(f->Append(AsBytes("hello")));
  QUIVER_ASSERT_OK(f->WriteAt(7, AsBytes("!")));
  EXPECT_EQ(f->Size(), 8u);
  EXPECT_EQ(ReadAll(fs_, "/db/a"), std::string("hello\0\0!", 8));
  EXPECT_EQ(*fs_.ReadDurableForTest("/db/a"), "");
  QUIVER_ASSERT_OK(f->Sync());
  EXPECT_EQ(*fs_.ReadDurableForTest("/db/a"), std::string("hello\0\0!", 8));
}

// A write-back hint is not a sync: nothing becomes durable, and it is not a
// crash point.
TEST_F(SimFileSystemTest, WritebackMakesNothingDurable) {
  auto f = Open("/db/a");
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));  // the name survives the crash below; the data must not
  QUIVER_ASSERT_OK(f->Append(AsBytes("hello")));
  const std::uint64_t ops = fs_.operation_count();
  QUIVER_ASSERT_OK(f->StartWriteback(0, 5));
  QUIVER_ASSERT_OK(f->WaitWriteback(0, 5));
  EXPECT_EQ(fs_.operation_count(), ops);
  EXPECT_EQ(*fs_.ReadDurableForTest("/db/a"), "");
  fs_.Crash(CrashPolicy::kDropUnsynced, 0);
  EXPECT_EQ(*fs_.ReadDurableForTest("/db/a"), "");
  EXPECT_EQ(f->WaitWriteback(0, 5).code(), StatusCode::kIOError);  // opened before the crash
}

TEST_F(SimFileSystemTest, NamespaceOperations) {
  for (const char* name : {"zeta", "alpha", "m10", "m9"}) Open(std::string("/db/") + name);
  QUIVER_ASSERT_OK(fs_.CreateDir("/db/sub"));
  EXPECT_EQ(*fs_.ListDir("/db"), (std::vector<std::string>{"alpha", "m10", "m9", "sub", "zeta"}));
  EXPECT_TRUE(Exists(fs_, "/db//alpha/"));  // paths are normalized
  EXPECT_TRUE(Exists(fs_, "/db/sub"));
  EXPECT_FALSE(Exists(fs_, "/db/nope"));
  EXPECT_EQ(fs_.OpenWritable("/db/alpha", OpenMode::kCreateNew).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(fs_.OpenWritable("/nope/x", OpenMode::kCreateOrOpen).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.OpenReadable("/db/nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.Remove("/db/nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.Rename("/db/alpha", "/nope/x").code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.ListDir("/nope").status().code(), StatusCode::kNotFound);
  QUIVER_ASSERT_OK(fs_.Rename("/db/alpha", "/db/beta"));
  QUIVER_ASSERT_OK(fs_.Remove("/db/zeta"));
  EXPECT_EQ(*fs_.ListDir("/db"), (std::vector<std::string>{"beta", "m10", "m9", "sub"}));
}

TEST_F(SimFileSystemTest, OpenTruncateAndClose) {
  Durable("/db/f", "abc");
  auto f = Open(fs_, "/db/f", OpenMode::kTruncate);
  EXPECT_EQ(f->Size(), 0u);
  QUIVER_ASSERT_OK(f->Close());
  EXPECT_EQ(f->Append(AsBytes("x")).code(), StatusCode::kFailedPrecondition);
  auto g = Open("/db/f");
  QUIVER_ASSERT_OK(g->Append(AsBytes("xy")));
  QUIVER_ASSERT_OK(g->Truncate(1));
  EXPECT_EQ(Read(fs_, "/db/f"), "x");
}

TEST_F(SimFileSystemTest, OperationCountCountsOnlyMutatingCalls) {
  EXPECT_EQ(fs_.operation_count(), 1u);            // CreateDir in SetUp
  auto f = Open("/db/a");                          // 2
  QUIVER_ASSERT_OK(f->Append(AsBytes("x")));       // 3
  QUIVER_ASSERT_OK(f->WriteAt(0, AsBytes("y")));   // 4
  QUIVER_ASSERT_OK(f->Sync());                     // 5
  QUIVER_ASSERT_OK(f->Truncate(1));                // 6
  QUIVER_ASSERT_OK(f->Allocate(0, 4096));          // 7
  QUIVER_ASSERT_OK(fs_.Rename("/db/a", "/db/b"));  // 8
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));            // 9
  EXPECT_EQ(fs_.operation_count(), 9u);
  // Reads, listings, locks, Size and Close are not counted.
  auto r = fs_.OpenReadable("/db/b");
  QUIVER_ASSERT_OK(r);
  std::vector<std::byte> buf(4);
  QUIVER_ASSERT_OK((*r)->ReadAt(0, buf));
  QUIVER_ASSERT_OK(fs_.ListDir("/db"));
  QUIVER_ASSERT_OK(fs_.Exists("/db/b"));
  QUIVER_ASSERT_OK(fs_.LockFile("/db/LOCK", LockMode::kExclusive));
  EXPECT_EQ(f->Size(), 1u);
  QUIVER_ASSERT_OK(f->Close());
  EXPECT_EQ(fs_.operation_count(), 9u);
  QUIVER_ASSERT_OK(fs_.Remove("/db/b"));  // 10
  EXPECT_EQ(fs_.operation_count(), 10u);
}

TEST_F(SimFileSystemTest, CrashPointKillsTheProcessUntilCrash) {
  auto f = Open("/db/a");                        // op 2
  QUIVER_ASSERT_OK(f->Append(AsBytes("kept")));  // op 3
  QUIVER_ASSERT_OK(f->Sync());                   // op 4
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));          // op 5
  fs_.SetCrashAtOperation(7);
  QUIVER_ASSERT_OK(f->Append(AsBytes("lost")));  // op 6
  Status s = f->Sync();                          // op 7: not performed
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_EQ(s.message(), "simulated crash");
  EXPECT_TRUE(fs_.dead());
  // Everything fails while dead, and is not counted.
  EXPECT_EQ(f->Append(AsBytes("x")).code(), StatusCode::kIOError);
  EXPECT_EQ(fs_.OpenReadable("/db/a").status().code(), StatusCode::kIOError);
  EXPECT_EQ(fs_.ListDir("/db").status().code(), StatusCode::kIOError);
  EXPECT_EQ(fs_.operation_count(), 7u);
  EXPECT_EQ(Read(fs_, "/db/a"), "keptlost");  // test helpers still work

  fs_.Crash(CrashPolicy::kDropUnsynced, 1);
  EXPECT_FALSE(fs_.dead());
  EXPECT_EQ(Read(fs_, "/db/a"), "kept");
  // The dead process's files stay dead.
  EXPECT_EQ(f->Append(AsBytes("x")).code(), StatusCode::kIOError);
  QUIVER_EXPECT_OK(Open("/db/a")->Append(AsBytes("!")));
  EXPECT_EQ(fs_.operation_count(), 9u);  // counting continues
}

TEST_F(SimFileSystemTest, CrashPointAtOrBeforeTheCountFiresOnTheNextOp) {
  fs_.SetCrashAtOperation(1);
  EXPECT_EQ(fs_.CreateDir("/db/x").code(), StatusCode::kIOError);
  EXPECT_TRUE(fs_.dead());
  fs_.Crash(CrashPolicy::kDropUnsynced, 0);
  QUIVER_EXPECT_OK(fs_.CreateDir("/db/x"));  // disarmed by Crash
}

// ---- kDropUnsynced: exactly what was synced ----

TEST_F(SimFileSystemTest, DropUnsyncedKeepsExactlyTheSyncedBytes) {
  auto f = Open("/db/a");
  QUIVER_ASSERT_OK(f->Append(AsBytes("hello")));
  QUIVER_ASSERT_OK(f->Sync());
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));
  QUIVER_ASSERT_OK(f->Append(AsBytes(" world")));
  QUIVER_ASSERT_OK(f->WriteAt(0, AsBytes("J")));
  Durable("/db/t", "truncate me");
  QUIVER_ASSERT_OK(Open("/db/t")->Truncate(3));
  Durable("/db/o", "old");
  Open(fs_, "/db/o", OpenMode::kTruncate);
  auto crashed = Crashed(CrashPolicy::kDropUnsynced);
  EXPECT_EQ(Read(*crashed, "/db/a"), "hello");
  EXPECT_EQ(Read(*crashed, "/db/t"), "truncate me");
  EXPECT_EQ(Read(*crashed, "/db/o"), "old");
}

TEST_F(SimFileSystemTest, DropUnsyncedUndoesEveryUnsyncedDirectoryChange) {
  Durable("/db/a", "A");
  Durable("/db/b", "B");
  Durable("/db/gone", "G");
  auto created = Open("/db/new");
  QUIVER_ASSERT_OK(created->Append(AsBytes("synced data, unsynced name")));
  QUIVER_ASSERT_OK(created->Sync());
  QUIVER_ASSERT_OK(fs_.Rename("/db/a", "/db/b"));
  QUIVER_ASSERT_OK(fs_.Remove("/db/gone"));
  auto crashed = Crashed(CrashPolicy::kDropUnsynced);
  EXPECT_FALSE(Exists(*crashed, "/db/new"));  // an unsynced create vanishes
  EXPECT_EQ(Read(*crashed, "/db/a"), "A");    // a rename without SyncDir is undone
  EXPECT_EQ(Read(*crashed, "/db/b"), "B");
  EXPECT_EQ(Read(*crashed, "/db/gone"), "G");  // so is a removal
}

TEST_F(SimFileSystemTest, SyncDirMakesEntryChangesDurable) {
  Durable("/db/a", "A");
  Durable("/db/b", "B");
  auto created = Open("/db/new");
  QUIVER_ASSERT_OK(created->Append(AsBytes("data")));
  QUIVER_ASSERT_OK(created->Sync());
  QUIVER_ASSERT_OK(fs_.Rename("/db/a", "/db/b"));
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));
  auto crashed = Crashed(CrashPolicy::kDropUnsynced);
  EXPECT_EQ(Read(*crashed, "/db/new"), "data");
  EXPECT_FALSE(Exists(*crashed, "/db/a"));
  EXPECT_EQ(Read(*crashed, "/db/b"), "A");
}

TEST_F(SimFileSystemTest, SubdirectoryNeedsItsParentSynced) {
  QUIVER_ASSERT_OK(fs_.CreateDir("/db/sub"));
  QUIVER_ASSERT_OK(test::WriteAll(fs_, "/db/sub/f", "data"));
  QUIVER_ASSERT_OK(fs_.SyncDir("/db/sub"));
  auto lost = Crashed(CrashPolicy::kDropUnsynced);
  EXPECT_FALSE(Exists(*lost, "/db/sub"));
  EXPECT_EQ(lost->ListDir("/db/sub").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Exists(*lost, "/db"));  // a mount point never disappears

  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));
  auto kept = Crashed(CrashPolicy::kDropUnsynced);
  EXPECT_EQ(Read(*kept, "/db/sub/f"), "data");
}

// Every directory below a mount point is an entry of its parent, at any
// depth: losing an unsynced parent entry takes the synced child with it.
TEST_F(SimFileSystemTest, EveryDirectoryBelowAMountCanLoseItsEntry) {
  QUIVER_ASSERT_OK(fs_.CreateDir("/db/a"));
  QUIVER_ASSERT_OK(fs_.CreateDir("/db/a/b"));
  QUIVER_ASSERT_OK(test::WriteAll(fs_, "/db/a/b/f", "data"));
  QUIVER_ASSERT_OK(fs_.SyncDir("/db/a/b"));
  QUIVER_ASSERT_OK(fs_.SyncDir("/db/a"));  // "b" durable in "a", "a" not in "/db"
  for (CrashPolicy policy : {CrashPolicy::kDropUnsynced, CrashPolicy::kLoseUnsyncedDirEntries}) {
    auto lost = Crashed(policy);
    EXPECT_FALSE(Exists(*lost, "/db/a"));
    EXPECT_FALSE(Exists(*lost, "/db/a/b/f"));
  }
  QUIVER_ASSERT_OK(fs_.SyncDir("/db"));
  EXPECT_EQ(Read(*Crashed(CrashPolicy::kLoseUnsyncedDirEntries), "/db/a/b/f"), "data");
}

TEST_F(SimFileSystemTest, MkdirNeedsItsParentAndRootsAlwaysExist) {
  EXPECT_EQ(fs_.CreateDir("/db/missing/child").code(), StatusCode::kNotFound);
  EXPECT_FALSE(Exists(fs_, "/db/missing/child"));
  EXPECT_TRUE(Exists(fs_, "/"));
  EXPECT_TRUE(Exists(fs_, "."));
  QUIVER_EXPECT_OK(fs_.SyncDir("/"));  // outside the simulation: nothing to make durable
  EXPECT_EQ(fs_.SyncDir("/db/missing").code(), StatusCode::kNotFound);
}

TEST_F(SimFileSystemTest, CrossDirectoryRenameIsDurableOnlyPerSyncedDirectory) {
  QUIVER_ASSERT_OK(fs_.CreateDir("/other"));
  Durable("/db/f", "F");
  QUIVER_ASSERT_OK(fs_.Rename("/db/f", "/other/f"));
  QUIVER_ASSERT_OK(fs_.SyncDir("/other"));  // the source directory is not synced
  auto crashed = Crashed(CrashPolicy::kDropUnsynced);
  // Both names survive (like a hard link): the unlink was never made durable.
  EXPECT_EQ(Read(*crashed, "/db/f"), "F");
  EXPECT_EQ(Read(*crashed, "/other/f"), "F");
}

// ---- The other policies ----

// An empty durable file "/db/log" with four unsynced one-sector appends.
class SimFileSystemCrashTest : public SimFileSystemTest {
 protected:
  void SetUp() override {
    SimFileSystemTest::SetUp();
    Durable("/db/log", "");
    log_ = Open("/db/log");
    for (char c : {'a', 'b', 'c', 'd'}) QUIVER_ASSERT_OK(log_->Append(AsBytes(Block(c))));
  }
  std::string Full() const { return Block('a') + Block('b') + Block('c') + Block('d'); }

  std::unique_ptr<WritableFile> log_;
};

TEST_F(SimFileSystemCrashTest, KeepRandomPrefixKeepsAPrefixInWriteOrder) {
  std::set<std::size_t> lengths;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const std::string got = Read(*Crashed(CrashPolicy::kKeepRandomPrefix, seed), "/db/log");
    ASSERT_EQ(got.size() % kSectorSize, 0u);
    ASSERT_EQ(got, Full().substr(0, got.size())) << "seed " << seed;
    lengths.insert(got.size());
  }
  EXPECT_EQ(lengths, (std::set<std::size_t>{0, 512, 1024, 1536, 2048}));
}

TEST_F(SimFileSystemTest, KeepRandomPrefixCutsUnalignedWritesAtSectorBoundaries) {
  Durable("/db/f", Block('z', 100));
  QUIVER_ASSERT_OK(Open("/db/f")->Append(AsBytes(Block('y', 1000))));
  const std::string full = Block('z', 100) + Block('y', 1000);
  std::set<std::size_t> lengths;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const std::string got = Read(*Crashed(CrashPolicy::kKeepRandomPrefix, seed), "/db/f");
    ASSERT_EQ(got, full.substr(0, got.size()));
    lengths.insert(got.size());
  }
  EXPECT_EQ(lengths, (std::set<std::size_t>{100, 512, 1024, 1100}));
}

TEST_F(SimFileSystemCrashTest, ReorderSectorsKeepsAnySubsetOfSectors) {
  bool later_without_earlier = false;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const std::string got = Read(*Crashed(CrashPolicy::kReorderSectors, seed), "/db/log");
    ASSERT_EQ(got.size() % kSectorSize, 0u);
    const std::size_t sectors = got.size() / kSectorSize;
    for (std::size_t i = 0; i < sectors; ++i) {
      const std::string sector = got.substr(i * kSectorSize, kSectorSize);
      const bool kept = sector == Block(static_cast<char>('a' + i));
      // Each sector is whole or a hole; the last one present defines the size.
      ASSERT_TRUE(kept || (sector == Block('\0') && i + 1 < sectors)) << "seed " << seed << " sector " << i;
      if (i > 0 && kept && got.substr(0, kSectorSize) == Block('\0')) later_without_earlier = true;
    }
  }
  EXPECT_TRUE(later_without_earlier);
}

TEST_F(SimFileSystemTest, ReorderSectorsMayApplyOverlappingWritesOutOfOrder) {
  Durable("/db/f", Block('z'));
  auto f = Open("/db/f");
  QUIVER_ASSERT_OK(f->WriteAt(0, AsBytes(Block('x'))));
  QUIVER_ASSERT_OK(f->WriteAt(0, AsBytes(Block('y'))));
  std::set<std::string> seen;
  for (int seed = 0; seed < kSeeds; ++seed)
    seen.insert(Read(*Crashed(CrashPolicy::kReorderSectors, seed), "/db/f"));
  EXPECT_EQ(seen, (std::set<std::string>{Block('x'), Block('y'), Block('z')}));
}

TEST_F(SimFileSystemTest, TornLastWriteKeepsAllButPartOfTheLastWrite) {
  auto f = Open("/db/new");  // never dir-synced: torn writes keep entries
  QUIVER_ASSERT_OK(f->Append(AsBytes(Block('a'))));
  QUIVER_ASSERT_OK(f->Append(AsBytes(Block('b', 3 * kSectorSize))));
  std::set<std::size_t> kept_sectors;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const std::string got = Read(*Crashed(CrashPolicy::kTornLastWrite, seed), "/db/new");
    ASSERT_GE(got.size(), kSectorSize);
    const std::size_t k = (got.size() - kSectorSize) / kSectorSize;
    ASSERT_EQ(got, Block('a') + Block('b', k * kSectorSize));
    kept_sectors.insert(k);
  }
  EXPECT_EQ(kept_sectors, (std::set<std::size_t>{0, 1, 2}));  // never all three
}

TEST_F(SimFileSystemTest, TornLastWriteLosesATrailingTruncate) {
  Durable("/db/f", "hello");
  auto f = Open("/db/f");
  QUIVER_ASSERT_OK(f->Append(AsBytes("XY")));
  QUIVER_ASSERT_OK(f->Truncate(1));
  EXPECT_EQ(Read(*Crashed(CrashPolicy::kTornLastWrite), "/db/f"), "helloXY");
}

// The page holding the durable end, written again by an unsynced append into
// it, comes back per sector as old, new or garbage bytes: durable bytes
// before the append can be lost. Nothing outside that page changes.
TEST_F(SimFileSystemTest, TearPartialPageMayDestroyDurableBytesOfThePage) {
  const std::string durable = Block('d', kPageSize) + Block('a', 1000);  // ends inside the second page
  Durable("/db/f", durable);
  QUIVER_ASSERT_OK(Open("/db/f")->Append(AsBytes(Block('n', 3000))));
  const std::string applied = durable + Block('n', 3000);
  std::set<std::string> sector_kinds;
  bool durable_damaged = false;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const std::string got = Read(*Crashed(CrashPolicy::kTearPartialPage, seed), "/db/f");
    ASSERT_GE(got.size(), kPageSize + 1000) << "seed " << seed;
    ASSERT_LE(got.size(), applied.size()) << "seed " << seed;
    ASSERT_EQ(got.substr(0, kPageSize), Block('d', kPageSize)) << "a whole durable page is never torn";
    if (got.size() > 2 * kPageSize) {
      ASSERT_EQ(got.substr(2 * kPageSize), applied.substr(2 * kPageSize, got.size() - 2 * kPageSize))
          << "past the torn page the unsynced bytes are a prefix, as kKeepRandomPrefix keeps them";
    }
    const std::size_t page_end = std::min<std::size_t>(got.size(), 2 * kPageSize);
    for (std::size_t at = kPageSize; at < page_end; at += kSectorSize) {
      const std::size_t n = std::min<std::size_t>(kSectorSize, page_end - at);
      const std::string sector = got.substr(at, n);
      const std::string old_bytes = (durable + std::string(2 * kPageSize, '\0')).substr(at, n);
      const std::string new_bytes = (applied + std::string(2 * kPageSize, '\0')).substr(at, n);
      if (sector == old_bytes) {
        sector_kinds.insert("old");
      } else if (sector == new_bytes) {
        sector_kinds.insert("new");
      } else {
        sector_kinds.insert("garbage");
      }
      if (at < durable.size() && sector.substr(0, std::min(n, durable.size() - at)) !=
                                     durable.substr(at, std::min(n, durable.size() - at)))
        durable_damaged = true;
    }
  }
  EXPECT_EQ(sector_kinds, (std::set<std::string>{"old", "new", "garbage"}));
  EXPECT_TRUE(durable_damaged) << "no seed damaged a synced byte of the partly filled page";
}

// No partly filled page (the durable end on a page boundary), or unsynced
// writes only into other pages: the durable bytes always survive.
TEST_F(SimFileSystemTest, TearPartialPageSparesPagesNotWrittenAgain) {
  Durable("/db/aligned", Block('d', kPageSize));
  QUIVER_ASSERT_OK(Open("/db/aligned")->Append(AsBytes(Block('n', 1000))));
  Durable("/db/elsewhere", Block('d', 1000));
  QUIVER_ASSERT_OK(Open("/db/elsewhere")->WriteAt(2 * kPageSize, AsBytes(Block('n', 100))));
  for (int seed = 0; seed < kSeeds; ++seed) {
    auto crashed = Crashed(CrashPolicy::kTearPartialPage, seed);
    const std::string aligned = Read(*crashed, "/db/aligned");
    ASSERT_EQ(aligned.substr(0, kPageSize), Block('d', kPageSize)) << "seed " << seed;
    const std::string elsewhere = Read(*crashed, "/db/elsewhere");
    ASSERT_EQ(elsewhere.substr(0, 1000), Block('d', 1000)) << "seed " << seed;
  }
}

TEST_F(SimFileSystemTest, ExtendWithGarbageKeepsTheSizeNotTheBytes) {
  Durable("/db/grew", "hello");
  Durable("/db/same", "stay");
  auto grew = Open("/db/grew");
  QUIVER_ASSERT_OK(grew->WriteAt(0, AsBytes("J")));
  QUIVER_ASSERT_OK(grew->Append(AsBytes(Block('q', 1000))));
  QUIVER_ASSERT_OK(Open("/db/same")->WriteAt(0, AsBytes("X")));
  Open("/db/unnamed");
  auto crashed = Crashed(CrashPolicy::kExtendWithGarbage, 7);
  const std::string got = Read(*crashed, "/db/grew");
  ASSERT_EQ(got.size(), 1005u);
  EXPECT_EQ(got.substr(0, 5), "hello");  // the unsynced overwrite is lost
  EXPECT_NE(got.substr(5), Block('q', 1000));
  EXPECT_NE(got.substr(5), Block('\0', 1000));
  EXPECT_EQ(Read(*crashed, "/db/same"), "stay");
  EXPECT_FALSE(Exists(*crashed, "/db/unnamed"));
}

TEST_F(SimFileSystemTest, ExtendWithZerosFillsTheGrownRegionWithZeros) {
  Durable("/db/grew", "hello");
  QUIVER_ASSERT_OK(Open("/db/grew")->Append(AsBytes(Block('q', 1000))));
  EXPECT_EQ(Read(*Crashed(CrashPolicy::kExtendWithZeros), "/db/grew"), "hello" + Block('\0', 1000));
}

TEST_F(SimFileSystemTest, LoseUnsyncedDirEntriesKeepsDataUndoesNames) {
  Durable("/db/a", "1");
  Durable("/db/b", "B");
  Durable("/db/gone", "G");
  QUIVER_ASSERT_OK(Open("/db/a")->Append(AsBytes("2")));
  QUIVER_ASSERT_OK(Open("/db/new")->Append(AsBytes("n")));
  QUIVER_ASSERT_OK(fs_.Rename("/db/b", "/db/c"));
  QUIVER_ASSERT_OK(fs_.Remove("/db/gone"));
  auto crashed = Crashed(CrashPolicy::kLoseUnsyncedDirEntries);
  EXPECT_EQ(Read(*crashed, "/db/a"), "12");
  EXPECT_FALSE(Exists(*crashed, "/db/new"));
  EXPECT_EQ(Read(*crashed, "/db/b"), "B");
  EXPECT_FALSE(Exists(*crashed, "/db/c"));
  EXPECT_EQ(Read(*crashed, "/db/gone"), "G");
}

TEST_F(SimFileSystemTest, KeepRemovalsLoseAdditionsKeepsOnlyRemovals) {
  Durable("/db/a", "1");
  Durable("/db/b", "B");
  Durable("/db/gone", "G");
  QUIVER_ASSERT_OK(Open("/db/a")->Append(AsBytes("2")));
  QUIVER_ASSERT_OK(Open("/db/new")->Append(AsBytes("n")));
  QUIVER_ASSERT_OK(fs_.Rename("/db/b", "/db/c"));
  QUIVER_ASSERT_OK(fs_.Remove("/db/gone"));
  auto crashed = Crashed(CrashPolicy::kKeepRemovalsLoseAdditions);
  EXPECT_EQ(Read(*crashed, "/db/a"), "12");   // file data survives
  EXPECT_FALSE(Exists(*crashed, "/db/new"));  // a creation is lost ...
  EXPECT_EQ(Read(*crashed, "/db/b"), "B");    // ... and a rename, whole ...
  EXPECT_FALSE(Exists(*crashed, "/db/c"));
  EXPECT_FALSE(Exists(*crashed, "/db/gone"));  // ... while the later removal survives
}

TEST_F(SimFileSystemTest, KeepRandomPrefixKeepsAPrefixOfDirectoryChanges) {
  for (const char* name : {"/db/f1", "/db/f2", "/db/f3"}) Open(name);
  std::set<std::vector<std::string>> outcomes;
  for (int seed = 0; seed < kSeeds; ++seed) {
    outcomes.insert(*Crashed(CrashPolicy::kKeepRandomPrefix, seed)->ListDir("/db"));
  }
  EXPECT_EQ(outcomes, (std::set<std::vector<std::string>>{{}, {"f1"}, {"f1", "f2"}, {"f1", "f2", "f3"}}));
}

TEST_F(SimFileSystemTest, RenameIsAtomicUnderEveryPolicy) {
  Durable("/db/a", "A");
  QUIVER_ASSERT_OK(fs_.Rename("/db/a", "/db/b"));
  for (CrashPolicy policy : kAllCrashPolicies) {
    std::set<std::vector<std::string>> outcomes;
    for (int seed = 0; seed < 50; ++seed) {
      auto crashed = Crashed(policy, seed);
      const std::vector<std::string> names = *crashed->ListDir("/db");
      ASSERT_EQ(names.size(), 1u) << CrashPolicyName(policy);
      EXPECT_EQ(Read(*crashed, "/db/" + names[0]), "A");
      outcomes.insert(names);
    }
    if (policy == CrashPolicy::kKeepRandomPrefix || policy == CrashPolicy::kReorderSectors) {
      EXPECT_EQ(outcomes.size(), 2u) << CrashPolicyName(policy);  // either side, at random
    }
  }
}

// ---- Determinism, Clone ----

TEST_F(SimFileSystemTest, SameSeedSameStateDifferentSeedsDiffer) {
  for (int i = 0; i < 8; ++i) {
    auto f = Open("/db/f" + std::to_string(i));
    for (int j = 0; j < 6; ++j) QUIVER_ASSERT_OK(f->Append(AsBytes(Block(static_cast<char>('a' + j), 700))));
  }
  auto snapshot = [](SimFileSystem& fs) {
    std::string out;
    const std::vector<std::string> names = *fs.ListDir("/db");
    for (const std::string& name : names) out += name + "=" + Read(fs, "/db/" + name) + ";";
    return out;
  };
  for (CrashPolicy policy : kAllCrashPolicies) {
    EXPECT_EQ(snapshot(*Crashed(policy, 42)), snapshot(*Crashed(policy, 42))) << CrashPolicyName(policy);
  }
  std::set<std::string> distinct;
  for (int seed = 0; seed < 10; ++seed)
    distinct.insert(snapshot(*Crashed(CrashPolicy::kReorderSectors, seed)));
  EXPECT_GT(distinct.size(), 1u);
}

TEST_F(SimFileSystemTest, CloneIsADeepIndependentCopy) {
  Durable("/db/a", "a");
  auto f = Open("/db/a");
  QUIVER_ASSERT_OK(f->Append(AsBytes("b")));  // unsynced, cloned as unsynced
  std::unique_ptr<SimFileSystem> clone = fs_.Clone();
  QUIVER_ASSERT_OK(f->Append(AsBytes("c")));  // after the clone: original only
  EXPECT_EQ(Read(*clone, "/db/a"), "ab");
  clone->Crash(CrashPolicy::kDropUnsynced, 0);
  EXPECT_EQ(Read(*clone, "/db/a"), "a");
  EXPECT_EQ(Read(fs_, "/db/a"), "abc");  // the crash of the clone left the original alone
  QUIVER_ASSERT_OK(Open(*clone, "/db/a")->Append(AsBytes("z")));
  EXPECT_EQ(Read(fs_, "/db/a"), "abc");
  EXPECT_EQ(Read(*Crashed(CrashPolicy::kLoseUnsyncedDirEntries), "/db/a"), "abc");
}

TEST_F(SimFileSystemTest, CloneOfADeadFileSystemIsDeadUntilCrashed) {
  fs_.SetCrashAtOperation(fs_.operation_count() + 1);
  EXPECT_EQ(fs_.CreateDir("/db/x").code(), StatusCode::kIOError);
  std::unique_ptr<SimFileSystem> clone = fs_.Clone();
  EXPECT_TRUE(clone->dead());
  clone->Crash(CrashPolicy::kDropUnsynced, 0);
  QUIVER_EXPECT_OK(clone->CreateDir("/db/x"));
  EXPECT_TRUE(fs_.dead());
}

// ---- Linux fsync semantics, damage, helpers, locks ----

TEST_F(SimFileSystemTest, DropUnsyncedNeverBecomesDurable) {
  Durable("/db/a", "d");
  auto f = Open("/db/a");
  QUIVER_ASSERT_OK(f->Append(AsBytes("x")));
  QUIVER_ASSERT_OK(fs_.DropUnsynced("/db/a"));
  EXPECT_EQ(Read(fs_, "/db/a"), "dx");  // still readable
  QUIVER_ASSERT_OK(f->Sync());          // a retried fsync "succeeds" ...
  EXPECT_EQ(*fs_.ReadDurableForTest("/db/a"), "d");
  EXPECT_EQ(Read(*Crashed(CrashPolicy::kLoseUnsyncedDirEntries), "/db/a"), "d");  // ... but the data is gone
  EXPECT_EQ(fs_.DropUnsynced("/db/nope").code(), StatusCode::kNotFound);
}

TEST_F(SimFileSystemTest, DamageChangesDurableBytes) {
  Durable("/db/f", "0123456789");
  QUIVER_ASSERT_OK(fs_.FlipBit("/db/f", 8 * 1 + 2));  // '1' (0x31) -> '5' (0x35)
  EXPECT_EQ(ReadAll(fs_, "/db/f"), "0523456789");
  QUIVER_ASSERT_OK(fs_.MisdirectWrite("/db/f", 0, 6, 3));
  EXPECT_EQ(ReadAll(fs_, "/db/f"), "0523450529");
  QUIVER_ASSERT_OK(fs_.Corrupt("/db/f", 9, AsBytes("!")));
  EXPECT_EQ(*fs_.ReadDurableForTest("/db/f"), "052345052!");
  EXPECT_EQ(fs_.FlipBit("/db/f", 80).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(fs_.MisdirectWrite("/db/f", 8, 0, 3).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(fs_.Corrupt("/db/f", 9, AsBytes("ab")).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(fs_.FlipBit("/db/nope", 0).code(), StatusCode::kNotFound);
  // Unsynced bytes are not on the disk yet, so they cannot be damaged.
  QUIVER_ASSERT_OK(Open("/db/f")->Append(AsBytes("tail")));
  EXPECT_EQ(fs_.Corrupt("/db/f", 10, AsBytes("x")).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(Read(fs_, "/db/f"), "052345052!tail");
}

TEST_F(SimFileSystemTest, WriteFileForTestIsDurable) {
  QUIVER_ASSERT_OK(Open("/db/f")->Append(AsBytes("unsynced")));
  QUIVER_ASSERT_OK(fs_.WriteFileForTest("/db/f", "replaced"));
  QUIVER_ASSERT_OK(fs_.WriteFileForTest("/db/g", "new"));
  auto crashed = Crashed(CrashPolicy::kDropUnsynced);
  EXPECT_EQ(Read(*crashed, "/db/f"), "replaced");
  EXPECT_EQ(Read(*crashed, "/db/g"), "new");
  EXPECT_EQ(fs_.WriteFileForTest("/nope/f", "x").code(), StatusCode::kNotFound);
}

TEST_F(SimFileSystemTest, LockTableIsExclusiveAndClearedByCrash) {
  auto first = fs_.LockFile("/db/LOCK", LockMode::kExclusive);
  QUIVER_ASSERT_OK(first);
  EXPECT_EQ(fs_.LockFile("/db/LOCK", LockMode::kExclusive).status().code(), StatusCode::kFailedPrecondition);
  QUIVER_EXPECT_OK(fs_.LockFile("/db/OTHER", LockMode::kExclusive));  // released at once (temporary)
  first->reset();
  auto second = fs_.LockFile("/db/LOCK", LockMode::kExclusive);
  QUIVER_ASSERT_OK(second);
  fs_.Crash(CrashPolicy::kDropUnsynced, 0);  // the holder died
  auto third = fs_.LockFile("/db/LOCK", LockMode::kExclusive);
  QUIVER_ASSERT_OK(third);
  second->reset();  // the dead holder's release does not free the new lock
  EXPECT_EQ(fs_.LockFile("/db/LOCK", LockMode::kExclusive).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SimFileSystemTest, SharedLocksCoexistAndExcludeAnExclusiveOne) {
  EXPECT_EQ(fs_.LockFile("/db/LOCK", LockMode::kShared).status().code(), StatusCode::kNotFound);
  QUIVER_ASSERT_OK(fs_.WriteFileForTest("/db/LOCK", ""));
  auto a = fs_.LockFile("/db/LOCK", LockMode::kShared);
  QUIVER_ASSERT_OK(a);
  auto b = fs_.LockFile("/db/LOCK", LockMode::kShared);
  QUIVER_ASSERT_OK(b);
  Status ex = fs_.LockFile("/db/LOCK", LockMode::kExclusive).status();
  EXPECT_EQ(ex.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ex.message().find("shared"), std::string::npos) << ex.ToString();
  a->reset();
  EXPECT_EQ(fs_.LockFile("/db/LOCK", LockMode::kExclusive).status().code(), StatusCode::kFailedPrecondition);
  b->reset();
  auto c = fs_.LockFile("/db/LOCK", LockMode::kExclusive);
  QUIVER_ASSERT_OK(c);
  Status sh = fs_.LockFile("/db/LOCK", LockMode::kShared).status();
  EXPECT_EQ(sh.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(sh.message().find("exclusive"), std::string::npos) << sh.ToString();
}

TEST_F(SimFileSystemTest, RealPathFoldsDotsAndNeedsThePath) {
  EXPECT_EQ(fs_.RealPath("//db/./x/../").value(), "/db");
  EXPECT_EQ(fs_.RealPath("/db/none").status().code(), StatusCode::kNotFound);
}

// The lexical folding RealPath (keep_leading_dotdot = false) and the
// engine's directory comparison (true) share.
TEST(FoldPathTest, FoldsByNameAndStopsAtTheRoot) {
  for (bool keep : {false, true}) {
    EXPECT_EQ(FoldPath("//db/./x/../", keep), "/db");
    EXPECT_EQ(FoldPath("/", keep), "/");
    EXPECT_EQ(FoldPath("/../a", keep), "/a") << "above an absolute root stays at the root";
    EXPECT_EQ(FoldPath("/a/b/../../..", keep), "/");
    EXPECT_EQ(FoldPath("a/./b//", keep), "a/b");
    EXPECT_EQ(FoldPath("a/..", keep), "");
    EXPECT_EQ(FoldPath("", keep), "");
  }
  EXPECT_EQ(FoldPath("../a/../b", true), "../b");
  EXPECT_EQ(FoldPath("../../a", true), "../../a");
  EXPECT_EQ(FoldPath("../a/../b", false), "b");
}

TEST_F(SimFileSystemTest, FreeSpaceReportsTheConfiguredValue) {
  EXPECT_EQ(*fs_.FreeSpace("/db"), std::uint64_t{1} << 40);
  fs_.SetFreeSpace(4096);
  EXPECT_EQ(*fs_.FreeSpace("/db"), 4096u);
}

TEST_F(SimFileSystemTest, ConcurrentReadersAndAWriter) {
  auto f = Open("/db/f");
  auto r = fs_.OpenReadable("/db/f");
  QUIVER_ASSERT_OK(r);
  const ReadableFile& reader = **r;
  std::vector<std::thread> readers;
  std::vector<int> bad(3, 0);
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      std::vector<std::byte> buf(64);
      for (int i = 0; i < 2000; ++i) {
        auto n = reader.ReadAt(0, buf);
        // Every append writes 'x', so any prefix read must be all 'x'.
        if (!n.ok()) ++bad[t];
        for (std::size_t j = 0; n.ok() && j < *n; ++j) bad[t] += buf[j] != std::byte{'x'};
      }
    });
  }
  for (int i = 0; i < 500; ++i) QUIVER_ASSERT_OK(f->Append(AsBytes("x")));
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad, std::vector<int>(3, 0));
  EXPECT_EQ(f->Size(), 500u);
}

}  // namespace
}  // namespace quiver::env
