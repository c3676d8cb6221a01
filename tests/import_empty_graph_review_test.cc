// Review of ImportNewGraph into an existing empty graph (commit fb20ac5):
// what the import's checkpoint, written past the end of the graph's log
// and held by no log record, does to recovery's fallback, to
// VerifyDirectory, to the change feed, and which directories the bulk
// path must refuse as a read-only Open refuses them.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "env/sim_file_system.h"
#include "graph_dir.h"
#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import_empty_graph_util.h"
#include "import_test_util.h"
#include "quiver/change_feed.h"
#include "quiver/graph.h"
#include "quiver/import.h"
#include "verify.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

using testing_import::Canonical;
using testing_import::GetFile;
using testing_import::PutFile;

using testing_empty_graph::Bulk;
using testing_empty_graph::Expected;
using testing_empty_graph::Files;
using testing_empty_graph::GraphOptions;
using testing_empty_graph::Input;
using testing_empty_graph::kDir;
using testing_empty_graph::Small;

std::string ERNames(const std::map<std::string, std::string>& files) {
  std::string out;
  for (const auto& [name, bytes] : files) out += name + " (" + std::to_string(bytes.size()) + " bytes) ";
  return out;
}

// The two kinds of empty graph: one just created (sequence 0, no
// checkpoint, its log starting at 1) and one whose only commits created and
// dropped an index, with a checkpoint at its last sequence.
enum class ERKind { kFresh, kCommitsAndCheckpoint };

const char* ERKindName(ERKind k) { return k == ERKind::kFresh ? "fresh" : "commits and a checkpoint"; }

SequenceNumber ERMakeGraph(env::FileSystem& fs, ERKind kind) {
  return testing_empty_graph::MakeGraph(fs, [kind](Graph& g) {
    if (kind != ERKind::kCommitsAndCheckpoint) return;
    EXPECT_TRUE(g.CreateIndex(IndexSpec{.name = "x", .label = "Other", .keys = {"k"}}).ok());
    EXPECT_TRUE(g.DropIndex("x").ok());
    EXPECT_TRUE(g.Checkpoint().ok());
  });
}

// Flips one byte in the middle of `path`.
void ERDamage(env::FileSystem& fs, const std::string& path) {
  std::string bytes = GetFile(fs, path);
  ASSERT_GT(bytes.size(), 64u);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  PutFile(fs, path, bytes);
}

// The import is held by its one checkpoint: no log record and no older
// checkpoint holds it (docs/import-export.md: "If it is damaged, ... Open
// reports Corruption"). A damaged import checkpoint must not open, read-only
// or writable, as the empty graph it replaced: that is the whole import
// lost with an OK, and the writable Open's next checkpoint at sequence S+1
// would rename over the damaged file, the one copy of the import.
TEST(ImportEmptyGraphReviewTest, ADamagedImportCheckpointDoesNotOpenAsTheEmptyGraph) {
  for (ERKind kind : {ERKind::kFresh, ERKind::kCommitsAndCheckpoint}) {
    SCOPED_TRACE(ERKindName(kind));
    env::SimFileSystem fs;
    const Input in = Small(fs);
    const SequenceNumber before = ERMakeGraph(fs, kind);
    ASSERT_TRUE(Bulk(fs, in.spec, in.options).ok());
    ERDamage(fs, kDir + "/" + checkpoint::CheckpointFileName(before + 1));
    for (bool read_only : {true, false}) {
      SCOPED_TRACE(read_only ? "read-only Open" : "writable Open");
      auto g = GraphImpl::OpenDurable(GraphOptions(false, read_only), kDir, &fs);
      if (g.ok()) {
        ADD_FAILURE() << "opened with OK: sequence " << (*g)->GetSnapshot().sequence() << ", "
                      << (*g)->GetSnapshot().vertex_count() << " vertices, used_previous_checkpoint "
                      << (*g)->GetOpenStats().used_previous_checkpoint << " (the import is lost)";
        ASSERT_TRUE((*g)->Close().ok());
        continue;
      }
      EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
    }
  }
}

// After the import and a reopen, the log has a hole at S+1 (the import
// has no record): its old segments end at S and the segment Open starts
// begins at S+2. The directory is healthy (it opens, every commit
// survives), so VerifyDirectory, Graph::Verify and `quiver verify` must
// not call it broken. The window lasts until a checkpoint removes the old
// segments (a Close with no commit writes none).
TEST(ImportEmptyGraphReviewTest, VerifyAcceptsTheDirectoryAfterTheImportAndAReopen) {
  for (ERKind kind : {ERKind::kFresh, ERKind::kCommitsAndCheckpoint}) {
    SCOPED_TRACE(ERKindName(kind));
    env::SimFileSystem fs;
    const Input in = Small(fs);
    const std::string expected = Expected(fs, in);
    const SequenceNumber before = ERMakeGraph(fs, kind);
    ASSERT_TRUE(Bulk(fs, in.spec, in.options).ok());
    {
      Result<VerifyReport> r = VerifyGraphDirectory(&fs, kDir);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r->ok()) << "right after the import: " << r->status.ToString();
    }
    {
      auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      EXPECT_EQ(Canonical((*g)->GetSnapshot()), expected);
      Result<VerifyReport> r = (*g)->Verify();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r->ok()) << "Graph::Verify after the reopen: " << r->status.ToString();
      ASSERT_TRUE((*g)->Close().ok());
    }
    Result<VerifyReport> r = VerifyGraphDirectory(&fs, kDir);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->ok()) << "after a reopen and a Close: " << r->status.ToString();
    // The directory is indeed healthy: it opens with the import, and a
    // commit survives a reopen.
    {
      auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      EXPECT_EQ((*g)->GetSnapshot().sequence(), before + 1);
      WriteBatch b;
      b.AddVertex("After");
      ASSERT_TRUE((*g)->Write(std::move(b)).ok());
      Result<VerifyReport> live = (*g)->Verify();
      ASSERT_TRUE(live.ok()) << live.status().ToString();
      EXPECT_TRUE(live->ok()) << "Graph::Verify after a commit: " << live->status.ToString();
      ASSERT_TRUE((*g)->Close().ok());
    }
    auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetSnapshot().vertex_count(), 4u);
  }
}

// A read-only Open refuses these directories before recovery reads a file
// (CheckDirectory: the identity file's version and CRC, SEGMENTS naming a
// newest segment that is gone). ImportNewGraph says it reads the graph "as
// a read-only Open reads it", but calls Recover directly: it must refuse
// them too and change nothing, not write a checkpoint into a directory of a
// newer format, or on top of a graph whose newest segment (which may hold
// its elements) is missing.
TEST(ImportEmptyGraphReviewTest, WhatAReadOnlyOpenRefusesIsRefusedUnchanged) {
  struct Case {
    const char* name;
    std::function<void(env::FileSystem&)> spoil;
    StatusCode open_code;
  };
  const std::vector<Case> cases = {
      {"identity file of a newer directory format",
       [](env::FileSystem& fs) {
         PutFile(fs, kDir + "/" + graphdir::kIdentityFileName,
                 graphdir::EncodeIdentity(graphdir::kDirFormatVersion + 1));
       },
       StatusCode::kUnimplemented},
      {"damaged identity file",
       [](env::FileSystem& fs) {
         std::string id = GetFile(fs, kDir + "/" + graphdir::kIdentityFileName);
         ASSERT_EQ(id.size(), 16u);
         id[15] = static_cast<char>(id[15] ^ 0x01);
         PutFile(fs, kDir + "/" + graphdir::kIdentityFileName, id);
       },
       StatusCode::kCorruption},
      {"SEGMENTS names a newest segment that is missing",
       [](env::FileSystem& fs) { ASSERT_TRUE(graphdir::RecordNewestSegment(&fs, kDir, 7).ok()); },
       StatusCode::kCorruption},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    const Input in = Small(fs);
    ERMakeGraph(fs, ERKind::kFresh);
    c.spoil(fs);
    {
      auto ro = GraphImpl::OpenDurable(GraphOptions(false, true), kDir, &fs);
      ASSERT_FALSE(ro.ok());
      ASSERT_EQ(ro.status().code(), c.open_code) << ro.status().ToString();
    }
    const auto files = Files(fs);
    Result<ImportStats> r = Bulk(fs, in.spec, in.options);
    EXPECT_FALSE(r.ok()) << "the import wrote " << r.value().checkpoint_bytes << " bytes of checkpoint";
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), c.open_code) << r.status().ToString();
    }
    const auto after = Files(fs);
    EXPECT_TRUE(after == files) << "files after: " << ERNames(after) << "; before: " << ERNames(files);
  }
}

// Graph::Subscribe resumes "from any sequence after the oldest checkpoint
// it keeps (or from 1 while its log still starts there)", else OutOfRange.
// After the import there is no batch S+1 anywhere (it is the checkpoint),
// and the log before it ends at S, so a subscription from S+1 or before
// cannot be served: OutOfRange, not a subscription whose first Next is
// Corruption ("does not follow the recovered state"), which tells the
// consumer its graph is damaged. From S+2 on it resumes.
TEST(ImportEmptyGraphReviewTest, SubscribingFromTheImportsSequenceIsOutOfRange) {
  for (ERKind kind : {ERKind::kFresh, ERKind::kCommitsAndCheckpoint}) {
    SCOPED_TRACE(ERKindName(kind));
    env::SimFileSystem fs;
    const Input in = Small(fs);
    const SequenceNumber before = ERMakeGraph(fs, kind);
    ASSERT_TRUE(Bulk(fs, in.spec, in.options).ok());
    auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    for (int i = 0; i < 2; ++i) {
      WriteBatch b;
      b.AddVertex("After");
      ASSERT_TRUE((*g)->Write(std::move(b)).ok());
    }
    ASSERT_EQ((*g)->GetSnapshot().sequence(), before + 3);
    // From S+2, the first commit after the import: resumed from the files.
    {
      auto sub = (*g)->Subscribe(before + 2);
      ASSERT_TRUE(sub.ok()) << sub.status().ToString();
      auto batch = (*sub)->Next(std::chrono::milliseconds(1000));
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      EXPECT_EQ((*batch)->sequence, before + 2);
      EXPECT_EQ((*batch)->created_vertices.size(), 1u);
    }
    for (SequenceNumber from : {before + 1, SequenceNumber{1}}) {
      SCOPED_TRACE(::testing::Message() << "Subscribe(" << from << ")");
      auto sub = (*g)->Subscribe(from);
      if (sub.ok()) {
        // Whatever it delivers, it must not claim batch S+1 exists, nor
        // call the healthy graph damaged.
        for (int i = 0; i < 8; ++i) {
          auto batch = (*sub)->Next(std::chrono::milliseconds(0));
          if (!batch.ok()) {
            ADD_FAILURE() << "a subscription was opened, then Next says: " << batch.status().ToString();
            break;
          }
          if (*batch == nullptr) break;
          EXPECT_LE((*batch)->sequence, before) << "delivered a batch for the import's sequence or later";
        }
        ADD_FAILURE() << "Subscribe(" << from << ") opened a subscription; want OutOfRange";
        continue;
      }
      EXPECT_EQ(sub.status().code(), StatusCode::kOutOfRange) << sub.status().ToString();
    }
    ASSERT_TRUE((*g)->Close().ok());
  }
}

// A directory holding QUIVER alone (a creation cut short before its first
// segment; also the backup of an empty graph) is the empty graph to Open:
// the import takes it, under a graph id of its own, and the graph goes on
// after it.
TEST(ImportEmptyGraphReviewTest, AnIdentityFileAloneTakesTheImport) {
  env::SimFileSystem fs;
  const Input in = Small(fs);
  const std::string expected = Expected(fs, in);
  ASSERT_TRUE(fs.CreateDir(kDir).ok());
  ASSERT_TRUE(graphdir::WriteIdentity(&fs, kDir).ok());
  const std::string identity = GetFile(fs, kDir + "/" + graphdir::kIdentityFileName);
  Result<ImportStats> r = Bulk(fs, in.spec, in.options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(GetFile(fs, kDir + "/" + graphdir::kIdentityFileName), identity);
  {
    auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(Canonical((*g)->GetSnapshot()), expected);
    EXPECT_EQ((*g)->GetSnapshot().sequence(), 1u);
    WriteBatch b;
    b.AddVertex("After");
    ASSERT_TRUE((*g)->Write(std::move(b)).ok());
    ASSERT_TRUE((*g)->Close().ok());
  }
  Result<VerifyReport> v = VerifyGraphDirectory(&fs, kDir);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(v->ok()) << v->status.ToString();
  auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), 2u);
  EXPECT_EQ((*g)->GetSnapshot().vertex_count(), 4u);
}

// A graph made before the identity file (no QUIVER; Open adopts it) is a
// closed durable graph too, and `quiver import` sends it to ImportNewGraph
// when a read-only Open finds it empty (cmd_data.cc HoldsEmptyGraph): the
// contract ("dir may hold a closed durable graph that has never held an
// element") takes it, or the CLI fails where it imported through batches
// before this change.
TEST(ImportEmptyGraphReviewTest, ALegacyEmptyGraphTakesTheImport) {
  env::SimFileSystem fs;
  const Input in = Small(fs);
  const std::string expected = Expected(fs, in);
  ERMakeGraph(fs, ERKind::kCommitsAndCheckpoint);
  ASSERT_TRUE(fs.Remove(kDir + "/" + graphdir::kIdentityFileName).ok());
  {
    // What HoldsEmptyGraph sees: an empty graph.
    auto ro = GraphImpl::OpenDurable(GraphOptions(false, true), kDir, &fs);
    ASSERT_TRUE(ro.ok()) << ro.status().ToString();
    EXPECT_EQ((*ro)->GetSnapshot().vertex_id_limit(), 0u);
    EXPECT_TRUE((*ro)->GetSnapshot().Indexes().empty());
  }
  Result<ImportStats> r = Bulk(fs, in.spec, in.options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Canonical((*g)->GetSnapshot()), expected);
}

// A torn tail on the empty graph's last segment (a commit cut short by a
// crash): the import reads past it as a read-only Open does, and the next
// writable Open cuts it and goes on after the import; read-only Open and
// Backup afterwards see the import.
TEST(ImportEmptyGraphReviewTest, ATornLogTailThenReadOnlyOpenAndBackup) {
  env::SimFileSystem fs;
  const Input in = Small(fs);
  const std::string expected = Expected(fs, in);
  const SequenceNumber before = ERMakeGraph(fs, ERKind::kCommitsAndCheckpoint);
  std::string last_segment;
  for (const auto& [name, bytes] : Files(fs)) {
    if (wal::ParseSegmentFileName(name)) last_segment = name;
  }
  ASSERT_FALSE(last_segment.empty());
  {
    std::string bytes = GetFile(fs, kDir + "/" + last_segment);
    bytes += std::string(100, '\x37');  // a record cut short
    PutFile(fs, kDir + "/" + last_segment, bytes);
  }
  Result<ImportStats> r = Bulk(fs, in.spec, in.options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  {
    auto ro = GraphImpl::OpenDurable(GraphOptions(false, true), kDir, &fs);
    ASSERT_TRUE(ro.ok()) << ro.status().ToString();
    EXPECT_EQ(Canonical((*ro)->GetSnapshot()), expected);
    EXPECT_EQ((*ro)->GetSnapshot().sequence(), before + 1);
  }
  {
    auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(Canonical((*g)->GetSnapshot()), expected);
    WriteBatch b;
    b.AddVertex("After");
    Result<CommitInfo> c = (*g)->Write(std::move(b));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->sequence, before + 2);
    Result<BackupInfo> backup = (*g)->Backup("/backup");
    ASSERT_TRUE(backup.ok()) << backup.status().ToString();
    ASSERT_TRUE((*g)->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), before + 2);
  EXPECT_EQ((*g)->GetSnapshot().vertex_count(), 4u);
  auto b = GraphImpl::OpenDurable(GraphOptions(false), "/backup", &fs);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Canonical((*b)->GetSnapshot()), Canonical((*g)->GetSnapshot()));
}

// The id indexes are declared at the import's sequence (S+1), not at 1:
// dropped and created again after the reopen, with commits between, they
// answer the same, across reopens.
TEST(ImportEmptyGraphReviewTest, TheIdIndexDeclaredAtTheImportsSequenceDropsAndReturns) {
  env::SimFileSystem fs;
  const Input in = Small(fs);
  const SequenceNumber before = ERMakeGraph(fs, ERKind::kCommitsAndCheckpoint);
  ASSERT_GE(before, 2u);
  ASSERT_TRUE(Bulk(fs, in.spec, in.options).ok());
  {
    auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_EQ((*g)->GetSnapshot().Indexes().size(), 1u);
    EXPECT_TRUE((*g)->GetSnapshot().FindVertex("Person", "id", "p3").value().has_value());
    ASSERT_TRUE((*g)->DropIndex("Person.id").ok());
    ASSERT_TRUE((*g)->Close().ok());
  }
  {
    auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_TRUE((*g)->GetSnapshot().Indexes().empty());
    Status s = (*g)->CreateIndex(
        IndexSpec{.name = "Person.id", .label = "Person", .keys = {"id"}, .kind = IndexKind::kUnique});
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE((*g)->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(GraphOptions(false), kDir, &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().Indexes().size(), 1u);
  EXPECT_TRUE((*g)->GetSnapshot().FindVertex("Person", "id", "p3").value().has_value());
  Result<VerifyReport> v = (*g)->Verify();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(v->ok()) << v->status.ToString();
}

// Before this change a directory holding a graph was refused before the
// input was read ("checked ... here so a long parse is not wasted"); now any
// directory with an identity file passes that early check, and a graph that
// holds elements is refused only after pass 1 has read every input file
// (hours for a large import), and after a whole read-only recovery of the
// graph. Here the input names a file that does not exist: the refusal of the
// graph should come first, as it did.
TEST(ImportEmptyGraphReviewTest, AGraphThatHoldsElementsIsRefusedBeforeTheInputIsRead) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(GraphOptions(true), kDir, &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    WriteBatch b;
    b.AddVertex("P");
    ASSERT_TRUE((*g)->Write(std::move(b)).ok());
    ASSERT_TRUE((*g)->Close().ok());
  }
  ImportSpec spec{.vertices = {{"/in/missing.csv", "Person"}}};
  Result<ImportStats> r = Bulk(fs, spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
}

}  // namespace
}  // namespace quiver
