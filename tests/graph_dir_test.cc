// The graph directory (docs/directory.md): the identity file, which
// directories Open accepts, creates, adopts or refuses, which files it may
// remove, and what its errors name. On the real file system; the parent
// fsync of a new directory is tested on the simulator in durability_test.cc.
#include "graph_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "durable_workload.h"
#include "env/file_system.h"
#include "env_test_util.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

using env::test::ReadAll;
using env::test::TempDir;
using env::test::WriteAll;
using test_util::ApplyGroup;

Options SmallOptions() {
  Options o;
  o.durable.wal_segment_bytes = 4096;
  o.durable.checkpoint_wal_bytes = 0;
  o.writer.spin_microseconds = 0;
  return o;
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

TEST(GraphDirTest, IdentityFileBytes) {
  // "QUIVERDB", version 1 (LE), CRC-32C of those 12 bytes (LE): the worked
  // example in docs/directory.md.
  const std::string expected("QUIVERDB\x01\x00\x00\x00\xf6\x56\xd7\xcd", 16);
  EXPECT_EQ(graphdir::EncodeIdentity(), expected);
}

TEST(GraphDirTest, NewGraphWritesTheIdentityFile) {
  TempDir dir;
  auto g = Graph::Open(SmallOptions(), dir.path()).value();
  EXPECT_EQ(ReadAll(*env::PosixFileSystem(), dir.File("QUIVER")), graphdir::EncodeIdentity());
}

TEST(GraphDirTest, ForeignDirectoryIsRefusedAndLeftUntouched) {
  TempDir dir;
  ASSERT_TRUE(WriteAll(*env::PosixFileSystem(), dir.File("notes.txt"), "mine").ok());
  ASSERT_TRUE(WriteAll(*env::PosixFileSystem(), dir.File("work.tmp"), "also mine").ok());
  auto g = Graph::Open(SmallOptions(), dir.path());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(g.status().message().find(dir.path()), std::string::npos) << g.status().ToString();
  EXPECT_NE(g.status().message().find("not a Quiver graph"), std::string::npos) << g.status().ToString();
  EXPECT_EQ(ReadAll(*env::PosixFileSystem(), dir.File("work.tmp")), "also mine");
  EXPECT_FALSE(Exists(dir.File("LOCK")));
  EXPECT_FALSE(Exists(dir.File("QUIVER")));
}

// Set-aside names: "<data file>.salvaged" and, from a later salvage,
// "<data file>.salvaged.<k>"; nothing else that merely looks like them.
TEST(GraphDirTest, SalvagedNamesAreOwnFiles) {
  const std::string seg = wal::SegmentFileName(2);
  for (const std::string& name : {seg + ".salvaged", seg + ".salvaged.1", seg + ".salvaged.17"}) {
    EXPECT_TRUE(graphdir::IsOwnFile(name)) << name;
    EXPECT_EQ(graphdir::SalvagedStem(name), std::optional<std::string_view>(seg)) << name;
  }
  for (const std::string& name : {seg + ".salvaged.", seg + ".salvaged.x", seg + ".salvaged1",
                                  std::string("notes.salvaged"), std::string("notes.salvaged.1")}) {
    EXPECT_FALSE(graphdir::IsOwnFile(name)) << name;
    EXPECT_FALSE(graphdir::SalvagedStem(name).has_value()) << name;
  }
}

TEST(GraphDirTest, OnlyQuiversOwnTemporaryFilesAreRemoved) {
  TempDir dir;
  { auto g = Graph::Open(SmallOptions(), dir.path()).value(); }
  auto* fs = env::PosixFileSystem();
  ASSERT_TRUE(WriteAll(*fs, dir.File("checkpoint-00000000000000000007.qck.tmp"), "stale").ok());
  ASSERT_TRUE(WriteAll(*fs, dir.File("work.tmp"), "user's").ok());
  auto g = Graph::Open(SmallOptions(), dir.path()).value();
  EXPECT_FALSE(Exists(dir.File("checkpoint-00000000000000000007.qck.tmp")));
  EXPECT_EQ(ReadAll(*fs, dir.File("work.tmp")), "user's");
}

TEST(GraphDirTest, CreateIfMissingFalseRefusesAMissingOrEmptyDirectory) {
  TempDir dir;
  Options o = SmallOptions();
  o.create_if_missing = false;
  auto missing = Graph::Open(o, dir.File("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_FALSE(Exists(dir.File("nope")));
  auto empty = Graph::Open(o, dir.path());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound) << empty.status().ToString();
  EXPECT_FALSE(Exists(dir.File("QUIVER")));
  { auto g = Graph::Open(SmallOptions(), dir.path()).value(); }
  EXPECT_TRUE(Graph::Open(o, dir.path()).ok());  // an existing graph opens
}

TEST(GraphDirTest, ErrorIfExistsRefusesAnExistingGraph) {
  TempDir dir;
  Options o = SmallOptions();
  o.error_if_exists = true;
  { auto g = Graph::Open(o, dir.path()).value(); }  // new: fine
  auto again = Graph::Open(o, dir.path());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
}

TEST(GraphDirTest, MissingAncestorsAreCreated) {
  TempDir dir;
  const std::string deep = dir.File("a/b/graph");
  {
    auto g = Graph::Open(SmallOptions(), deep).value();
    ASSERT_TRUE(ApplyGroup(*g, 1).ok());
  }
  auto g = Graph::Open(SmallOptions(), deep).value();
  EXPECT_EQ(g->GetSnapshot().sequence(), 1u);
}

TEST(GraphDirTest, GraphMadeBeforeTheIdentityFileIsAdopted) {
  TempDir dir;
  Options o = SmallOptions();
  o.durable.checkpoint_on_close = false;
  {
    auto g = Graph::Open(o, dir.path()).value();
    for (int k = 1; k <= 30; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
    for (int k = 31; k <= 40; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
  }
  // As an older Quiver left it: segments and a checkpoint, no identity file.
  std::filesystem::remove(dir.File("QUIVER"));
  auto g = Graph::Open(o, dir.path());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), 40u);
  EXPECT_EQ(ReadAll(*env::PosixFileSystem(), dir.File("QUIVER")), graphdir::EncodeIdentity());
}

// The names in `dir`, sorted, with their bytes.
std::map<std::string, std::string> Listing(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out[e.path().filename().string()] = ReadAll(*env::PosixFileSystem(), e.path().string());
  return out;
}

// Regression: a graph directory made before the identity file existed was
// refused as "not a Quiver graph" as soon as it held any file Quiver did not
// write. Valid Quiver data files make it a graph: it is adopted, and the
// unrelated files are left exactly as they were (never removed, renamed or
// written), including names that look like Quiver's transient ones.
TEST(GraphDirTest, LegacyDirectoryWithUnrelatedFilesIsAdoptedAndKeepsThem) {
  TempDir dir;
  Options o = SmallOptions();
  o.durable.checkpoint_on_close = false;
  {
    auto g = Graph::Open(o, dir.path()).value();
    for (int k = 1; k <= 30; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
    for (int k = 31; k <= 40; ++k) ASSERT_TRUE(ApplyGroup(*g, k).ok());
  }
  // As an older Quiver left it (no identity file, no SEGMENTS), with the
  // owner's files beside it.
  std::filesystem::remove(dir.File("QUIVER"));
  std::filesystem::remove(dir.File("SEGMENTS"));
  auto* fs = env::PosixFileSystem();
  const std::map<std::string, std::string> theirs = {{"notes.txt", "mine"},
                                                     {"work.tmp", "also mine"},
                                                     {"draft.prefix", "a prefix of mine"},
                                                     {"old.salvaged", "not a set-aside segment"}};
  for (const auto& [name, bytes] : theirs) ASSERT_TRUE(WriteAll(*fs, dir.File(name), bytes).ok());
  for (int round = 0; round < 2; ++round) {
    auto g = Graph::Open(o, dir.path());
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetSnapshot().sequence(), 40u);
  }
  EXPECT_EQ(ReadAll(*fs, dir.File("QUIVER")), graphdir::EncodeIdentity());
  const std::map<std::string, std::string> now = Listing(dir.path());
  for (const auto& [name, bytes] : theirs) {
    ASSERT_TRUE(now.count(name)) << name << " was removed";
    EXPECT_EQ(now.at(name), bytes) << name;
  }
}

// A file merely named like a Quiver data file does not make a directory a
// graph: with another file beside it and no valid Quiver header in it, the
// directory is still refused, untouched.
TEST(GraphDirTest, DataFileNamesWithoutQuiverContentDoNotMakeAGraph) {
  TempDir dir;
  auto* fs = env::PosixFileSystem();
  ASSERT_TRUE(WriteAll(*fs, dir.File("notes.txt"), "mine").ok());
  ASSERT_TRUE(WriteAll(*fs, dir.File(wal::SegmentFileName(1)), "not a segment, just a name").ok());
  const std::map<std::string, std::string> before = Listing(dir.path());
  auto g = Graph::Open(SmallOptions(), dir.path());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kFailedPrecondition) << g.status().ToString();
  EXPECT_EQ(Listing(dir.path()), before);
}

// Regression: an Open refused after the first look at the directory (an
// identity file of a newer format, or a damaged one) had already created
// LOCK in it. A refused Open creates nothing.
TEST(GraphDirTest, RefusedOpenCreatesNothing) {
  const std::string newer = graphdir::EncodeIdentity(graphdir::kDirFormatVersion + 1);
  for (const std::string& identity : {newer, std::string("QUIVERDB garbage")}) {
    TempDir dir;
    ASSERT_TRUE(WriteAll(*env::PosixFileSystem(), dir.File("QUIVER"), identity).ok());
    const std::map<std::string, std::string> before = Listing(dir.path());
    auto g = Graph::Open(SmallOptions(), dir.path());
    ASSERT_FALSE(g.ok());
    EXPECT_TRUE(g.status().code() == StatusCode::kUnimplemented ||
                g.status().code() == StatusCode::kCorruption)
        << g.status().ToString();
    EXPECT_EQ(Listing(dir.path()), before);
  }
}

// A crash after the identity file was written but before the first WAL
// segment was recorded leaves a directory with QUIVER and nothing else: no
// commit was ever acknowledged there, so it holds no graph yet. Open
// finishes creating it, error_if_exists does not refuse it, and
// create_if_missing = false finds no graph.
TEST(GraphDirTest, InterruptedCreationHoldsNoGraphYet) {
  TempDir dir;
  ASSERT_TRUE(WriteAll(*env::PosixFileSystem(), dir.File("QUIVER"), graphdir::EncodeIdentity()).ok());
  Options missing = SmallOptions();
  missing.create_if_missing = false;
  auto none = Graph::Open(missing, dir.path());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status().ToString();
  Options fresh = SmallOptions();
  fresh.error_if_exists = true;
  {
    auto g = Graph::Open(fresh, dir.path());
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_TRUE(ApplyGroup(**g, 1).ok());
  }
  auto again = Graph::Open(fresh, dir.path());  // now it holds a graph
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
}

TEST(GraphDirTest, IdentityOfANewerFormatIsRefusedAndKept) {
  TempDir dir;
  { auto g = Graph::Open(SmallOptions(), dir.path()).value(); }
  const std::string newer = graphdir::EncodeIdentity(graphdir::kDirFormatVersion + 1);
  ASSERT_TRUE(WriteAll(*env::PosixFileSystem(), dir.File("QUIVER"), newer).ok());
  auto g = Graph::Open(SmallOptions(), dir.path());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented) << g.status().ToString();
  EXPECT_EQ(ReadAll(*env::PosixFileSystem(), dir.File("QUIVER")), newer);
}

TEST(GraphDirTest, DamagedIdentityIsCorruption) {
  TempDir dir;
  { auto g = Graph::Open(SmallOptions(), dir.path()).value(); }
  ASSERT_TRUE(WriteAll(*env::PosixFileSystem(), dir.File("QUIVER"), "QUIVERDB garbage").ok());
  auto g = Graph::Open(SmallOptions(), dir.path());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
}

TEST(GraphDirTest, OpenErrorsNameTheDirectoryAndTheProblem) {
  TempDir dir;
  auto empty = Graph::Open(SmallOptions(), "");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos) << empty.status().ToString();

  ASSERT_TRUE(WriteAll(*env::PosixFileSystem(), dir.File("file"), "x").ok());
  auto file = Graph::Open(SmallOptions(), dir.File("file"));
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find(dir.File("file")), std::string::npos) << file.status().ToString();
  EXPECT_NE(file.status().message().find("Not a directory"), std::string::npos) << file.status().ToString();

  auto proc = Graph::Open(SmallOptions(), "/proc");
  ASSERT_FALSE(proc.ok());
  EXPECT_EQ(proc.status().code(), StatusCode::kFailedPrecondition) << proc.status().ToString();
  EXPECT_NE(proc.status().message().find("/proc"), std::string::npos) << proc.status().ToString();
  EXPECT_EQ(proc.status().message().find("LOCK"), std::string::npos) << proc.status().ToString();
}

TEST(GraphDirTest, FilesAreCreatedWithTheConfiguredMode) {
  TempDir dir;
  Options o = SmallOptions();
  o.durable.file_mode = 0600;
  const std::string path = dir.File("g");
  { auto g = Graph::Open(o, path).value(); }
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path)) {
    struct stat st;
    ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << e.path();
    ++files;
  }
  EXPECT_GE(files, 3);  // QUIVER, LOCK, a WAL segment, the close checkpoint
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
}  // namespace quiver
