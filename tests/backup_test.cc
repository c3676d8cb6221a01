// Graph::Backup: a consistent, openable copy of a pinned version while
// writes continue; refused targets; a failure in the target leaves the
// graph as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "env/fault_file_system.h"
#include "env/sim_file_system.h"
#include "env_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "verify.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

const std::string kDir = "/db";

Options TestOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_wal_bytes = 4096;  // background checkpoints meanwhile
  o.durable.wal_segment_bytes = 1024;
  o.durable.io_threads = 2;
  return o;
}

// Batch k: vertex k, with an edge from vertex k - 1. Applied one batch per
// Write, batch k commits as sequence k + 1 in any graph.
WriteBatch Batch(int k) {
  WriteBatch b;
  NewVertex v =
      b.AddVertex("Item", {{"k", k}, {"pad", std::string(static_cast<std::size_t>(k % 7) * 9, 'p')}});
  if (k > 0) b.AddEdge("NEXT", VertexId(static_cast<std::uint64_t>(k - 1)), v, {{"w", k}});
  return b;
}

// The state after batches 0 .. n-1, built in memory.
std::string ReferenceDump(SequenceNumber n) {
  auto g = Graph::OpenInMemory().value();
  for (SequenceNumber k = 0; k < n; ++k) EXPECT_TRUE(g->Write(Batch(static_cast<int>(k))).ok());
  return test_util::Dump(g->GetSnapshot());
}

std::map<std::string, std::string> Files(env::SimFileSystem& fs, const std::string& dir) {
  std::map<std::string, std::string> out;
  const std::vector<std::string> listing = fs.ListDir(dir).value();
  for (const std::string& name : listing) out[name] = fs.ReadFileForTest(dir + "/" + name).value();
  return out;
}

TEST(BackupTest, CopyDuringWritesOpensToExactlyOneCommittedState) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), kDir, &fs).value();
  for (int k = 0; k < 50; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> written{50};
  std::thread writer([&] {
    for (int k = 50; !stop.load(); ++k) {
      ASSERT_TRUE(g->Write(Batch(k)).ok());
      written.store(k + 1);
    }
  });
  std::vector<std::uint64_t> progress;
  Result<BackupInfo> info =
      g->Backup("/backups/one", [&](std::uint64_t bytes) { progress.push_back(bytes); });
  while (written.load() < 80) std::this_thread::yield();  // writes went on after the pin too
  stop.store(true);
  writer.join();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_GE(info->sequence, 50u);
  ASSERT_FALSE(progress.empty());
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_LE(progress[i - 1], progress[i]);
  EXPECT_LE(progress.back(), info->bytes);
  EXPECT_LT(info->sequence, g->GetSnapshot().sequence());
  // Only the checkpoint and the identity file.
  const std::map<std::string, std::string> files = Files(fs, "/backups/one");
  EXPECT_EQ(files.size(), 2u);
  EXPECT_EQ(files.count("QUIVER"), 1u);
  ASSERT_EQ(files.count(checkpoint::CheckpointFileName(info->sequence)), 1u);
  EXPECT_EQ(files.at(checkpoint::CheckpointFileName(info->sequence)).size(), info->bytes);
  Result<VerifyReport> report = VerifyGraphDirectory(&fs, "/backups/one");
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->status.ToString();
  // What survives power loss right after Backup returned: everything.
  std::unique_ptr<env::SimFileSystem> crashed = fs.Clone();
  crashed->Crash(env::CrashPolicy::kDropUnsynced, 1);
  auto copy = GraphImpl::OpenDurable(TestOptions(), "/backups/one", crashed.get());
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ((*copy)->GetSnapshot().sequence(), info->sequence);
  EXPECT_EQ(test_util::Dump((*copy)->GetSnapshot()), ReferenceDump(info->sequence));
  // The copy is a graph of its own: it takes writes and reopens.
  ASSERT_TRUE((*copy)->Write(Batch(static_cast<int>(info->sequence))).ok());
  copy->reset();
  auto again = GraphImpl::OpenDurable(TestOptions(), "/backups/one", crashed.get()).value();
  EXPECT_EQ(test_util::Dump(again->GetSnapshot()), ReferenceDump(info->sequence + 1));
}

TEST(BackupTest, BadTargetsAreRefusedAndLeftAlone) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), kDir, &fs).value();
  for (int k = 0; k < 5; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  for (const std::string& same : {std::string("/db"), std::string("/db/"), std::string("//db/./")}) {
    Result<BackupInfo> r = g->Backup(same);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << same << ": " << r.status().ToString();
  }
  EXPECT_EQ(g->Backup("").status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(fs.CreateDir("/full").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/full/notes.txt", "mine").ok());
  Result<BackupInfo> r = g->Backup("/full");
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find("notes.txt"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(Files(fs, "/full"), (std::map<std::string, std::string>{{"notes.txt", "mine"}}));
  EXPECT_EQ(g->Backup("/full/nested/deeper").status().code(), StatusCode::kOk);
  // Another graph's directory is not empty either.
  auto other = GraphImpl::OpenDurable(TestOptions(), "/other", &fs).value();
  EXPECT_EQ(g->Backup("/other").status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(fs.WriteFileForTest("/full/afile", "x").ok());
  EXPECT_FALSE(g->Backup("/full/afile").ok());
  EXPECT_EQ(fs.ReadFileForTest("/full/afile").value(), "x");
  // An empty directory is fine.
  ASSERT_TRUE(fs.CreateDir("/empty").ok());
  EXPECT_TRUE(g->Backup("/empty").ok());
}

// A target under the graph's own directory would put a subdirectory among
// its files: one named like the next WAL segment makes the next rotation
// fail (the graph poisoned), and Open would list it as a segment.
TEST(BackupTest, TargetInsideTheGraphDirectoryIsRefused) {
  env::SimFileSystem fs;
  Options o = TestOptions();
  o.durable.wal_segment_bytes = 512;
  // No background checkpoint may change the listing compared below: with
  // format 3 every group takes a page, past TestOptions' threshold.
  o.durable.checkpoint_wal_bytes = 0;
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  const std::vector<std::string> before = fs.ListDir(kDir).value();
  std::uint64_t newest = 0;
  for (const std::string& name : before)
    if (auto n = wal::ParseSegmentFileName(name)) newest = std::max(newest, *n);
  const std::string next_segment = wal::SegmentFileName(newest + 1);
  for (const std::string& inside : {kDir + "/" + next_segment, kDir + "/sub/deeper", std::string("//db/./x/"),
                                    std::string("/other/../db/y")}) {
    Result<BackupInfo> r = g->Backup(inside);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << inside << ": " << r.status().ToString();
  }
  EXPECT_EQ(fs.ListDir(kDir).value(), before);
  EXPECT_FALSE(fs.Exists("/other").value());
  for (int k = 3; k < 40; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());  // rotates past next_segment
  EXPECT_FALSE(g->GetDurabilityStats().poisoned);
  ASSERT_TRUE(g->Close().ok());
  ASSERT_TRUE(GraphImpl::OpenDurable(TestOptions(), kDir, &fs).ok());
  // A sibling whose name starts like the graph's is no subdirectory.
  EXPECT_TRUE(GraphImpl::OpenDurable(TestOptions(), kDir, &fs).value()->Backup(kDir + "x").ok());
}

// The graph UUID in the header of `dir`'s checkpoint at `sequence`.
wal::Uuid CheckpointUuid(env::FileSystem& fs, const std::string& dir, SequenceNumber sequence) {
  auto file = fs.OpenReadable(dir + "/" + checkpoint::CheckpointFileName(sequence)).value();
  checkpoint::Header h;
  EXPECT_TRUE(checkpoint::VerifyCheckpointFile(*file, &h).ok());
  return h.uuid;
}

// A backup is a new graph: it gets its own UUID. Restored next to the
// original and written to, its files must not pass for the original's: a
// checkpoint of the copy placed among the original's files is reported by
// Verify and refused by Open, never replayed as if it were the original's.
TEST(BackupTest, ABackupIsANewGraphWithItsOwnUuid) {
  env::SimFileSystem fs;
  Options o = TestOptions();
  o.durable.checkpoint_wal_bytes = 0;  // only the checkpoints this test asks for
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  for (int k = 0; k < 20; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  ASSERT_TRUE(g->Checkpoint().ok());
  ASSERT_TRUE(g->Backup("/copy").ok());
  for (int k = 20; k < 25; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  ASSERT_TRUE(g->Close().ok());
  EXPECT_NE(CheckpointUuid(fs, "/copy", 20), CheckpointUuid(fs, kDir, 20));
  // The copy goes its own way.
  {
    auto copy = GraphImpl::OpenDurable(o, "/copy", &fs).value();
    for (int k = 20; k < 40; ++k) ASSERT_TRUE(copy->Write(Batch(k)).ok());
    ASSERT_TRUE(copy->Checkpoint().ok());
    ASSERT_TRUE(copy->Close().ok());
  }
  EXPECT_EQ(CheckpointUuid(fs, "/copy", 40), CheckpointUuid(fs, "/copy", 20));
  const std::string name = checkpoint::CheckpointFileName(40);
  ASSERT_TRUE(fs.WriteFileForTest(kDir + "/" + name, fs.ReadFileForTest("/copy/" + name).value()).ok());
  Result<VerifyReport> report = VerifyGraphDirectory(&fs, kDir);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->ok());
  for (const VerifiedFile& f : report->files)
    EXPECT_EQ(f.status.ok(), f.name != name) << f.name << ": " << f.status.ToString();
  EXPECT_FALSE(GraphImpl::OpenDurable(o, kDir, &fs).ok());
}

// The target is judged by where it leads, not how it is spelled: a
// symbolic link into the graph's directory is refused like the directory.
TEST(BackupTest, TargetThroughASymlinkIntoTheGraphDirectoryIsRefused) {
  env::test::TempDir tmp;
  const std::string dir = tmp.File("g");
  Options o = TestOptions();
  o.durable.checkpoint_wal_bytes = 0;  // no background checkpoint changes the listing compared below
  auto g = Graph::Open(o, dir).value();
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  std::filesystem::create_directory_symlink(dir, tmp.File("link"));
  const std::vector<std::string> before = env::PosixFileSystem()->ListDir(dir).value();
  for (const std::string& target : {tmp.File("link/sub"), tmp.File("link/sub/deeper"), tmp.File("link")}) {
    Result<BackupInfo> r = g->Backup(target);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << target << ": " << r.status().ToString();
  }
  EXPECT_EQ(env::PosixFileSystem()->ListDir(dir).value(), before);
  // A link to elsewhere is followed to a legitimate target.
  std::filesystem::create_directory(tmp.File("elsewhere"));
  std::filesystem::create_directory_symlink(tmp.File("elsewhere"), tmp.File("out"));
  Result<BackupInfo> r = g->Backup(tmp.File("out/copy"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(tmp.File("elsewhere")) / "copy" / "QUIVER"));
}

TEST(BackupTest, FaultInTheTargetLeavesTheGraphUntouched) {
  env::SimFileSystem sim;
  Options o = TestOptions();
  o.durable.checkpoint_wal_bytes = 0;
  auto g = GraphImpl::OpenDurable(o, kDir, &sim).value();
  for (int k = 0; k < 20; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  auto* impl = static_cast<GraphImpl*>(g.get());
  const std::map<std::string, std::string> before = Files(sim, kDir);
  std::uint64_t failures = 0;
  for (std::uint64_t n = 1;; ++n) {
    env::FaultFileSystem fs(&sim);
    const std::string target = "/backup" + std::to_string(n);
    fs.SetFault({.ops = env::FaultOp::kAll, .at = n, .path_contains = target});
    Result<BackupInfo> r = impl->BackupTo(&fs, target, {});
    if (fs.faults_injected() == 0) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      break;
    }
    ++failures;
    EXPECT_FALSE(r.ok()) << "fault at operation " << n << " was not reported";
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find(target), std::string::npos) << r.status().ToString();
    }
    // The graph: files unchanged, not poisoned, still writable.
    EXPECT_EQ(Files(sim, kDir), before) << "fault at operation " << n;
    const DurabilityStats d = g->GetDurabilityStats();
    EXPECT_FALSE(d.poisoned) << n;
    EXPECT_EQ(d.health, HealthState::kOk) << n << ": " << d.health_reason;
    // A failed backup is no graph: nothing of it opens as one.
    if (sim.Exists(target).value()) {
      const std::vector<std::string> listing = sim.ListDir(target).value();
      for (const std::string& name : listing)
        EXPECT_TRUE(name.find(".tmp") != std::string::npos) << n << ": left " << name;
    }
  }
  EXPECT_GT(failures, 5u);
  ASSERT_TRUE(g->Write(Batch(20)).ok());
  EXPECT_EQ(g->GetSnapshot().sequence(), 21u);
}

TEST(BackupTest, ReadOnlyEmptyAndInMemoryGraphs) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(TestOptions(), kDir, &fs).value();
    for (int k = 0; k < 30; ++k) ASSERT_TRUE(g->Write(Batch(k)).ok());
  }
  Options ro = TestOptions();
  ro.read_only = true;
  auto reader = GraphImpl::OpenDurable(ro, kDir, &fs).value();
  Result<BackupInfo> r = reader->Backup("/fromro");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sequence, 30u);
  auto copy = GraphImpl::OpenDurable(TestOptions(), "/fromro", &fs).value();
  EXPECT_EQ(test_util::Dump(copy->GetSnapshot()), ReferenceDump(30));

  auto empty = GraphImpl::OpenDurable(TestOptions(), "/emptygraph", &fs).value();
  Result<BackupInfo> e = empty->Backup("/emptycopy");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->sequence, 0u);
  // The identity file alone: a graph that never committed (so NotFound with
  // create_if_missing = false, as for the original before its first commit).
  EXPECT_EQ(fs.ListDir("/emptycopy").value(), std::vector<std::string>{"QUIVER"});
  // Read-only too, writing nothing: an operator checking the copy of an
  // empty graph gets the empty graph, not NotFound.
  {
    auto empty_ro = GraphImpl::OpenDurable(ro, "/emptycopy", &fs);
    ASSERT_TRUE(empty_ro.ok()) << empty_ro.status().ToString();
    EXPECT_EQ((*empty_ro)->GetSnapshot().sequence(), 0u);
    EXPECT_EQ(fs.ListDir("/emptycopy").value(), std::vector<std::string>{"QUIVER"});
  }
  // A damaged identity file alone is still refused.
  ASSERT_TRUE(fs.CreateDir("/badcopy").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/badcopy/QUIVER", "QUIVERDBxxxxxxxx").ok());
  EXPECT_EQ(GraphImpl::OpenDurable(ro, "/badcopy", &fs).status().code(), StatusCode::kCorruption);
  auto empty_copy = GraphImpl::OpenDurable(TestOptions(), "/emptycopy", &fs);
  ASSERT_TRUE(empty_copy.ok()) << empty_copy.status().ToString();
  EXPECT_EQ((*empty_copy)->GetSnapshot().sequence(), 0u);

  env::test::TempDir tmp;
  auto mem = Graph::OpenInMemory().value();
  for (int k = 0; k < 10; ++k) ASSERT_TRUE(mem->Write(Batch(k)).ok());
  Result<BackupInfo> m = mem->Backup(tmp.File("mem"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto opened = Graph::Open(TestOptions(), tmp.File("mem")).value();
  EXPECT_EQ(test_util::Dump(opened->GetSnapshot()), ReferenceDump(10));
}

}  // namespace
}  // namespace quiver
