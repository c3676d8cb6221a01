// The log position a format-2 checkpoint records (wal_segment, wal_offset in
// its header; docs/checkpoint_format.md): where the record of the group
// after the checkpoint's sequence starts. Recovery trusts it as a record
// boundary when it skips damage the checkpoint covers (wal/wal_reader.h), so
// a wrong position could make it resume inside a payload. These tests take
// checkpoints wherever the position is set in a different way (inside a
// segment, at a segment's end before a rotation, from the state recovery
// rebuilt: appending to the last segment, after a torn tail was cut, after
// a salvage, with the next segment still to start) and check the recorded
// position against the group the writer logged next.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

using format_test::AsBytes;

const std::string kDir = "/db";

Options TestOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_wal_bytes = 0;  // checkpoints only when the test asks
  o.durable.checkpoint_on_close = false;
  // A rotation every few groups: each group takes a 4 KiB page of its own
  // (WAL format version 3), the header the first.
  o.durable.wal_segment_bytes = 4 * wal::kWalPageBytes;
  return o;
}

void WriteGroup(Graph& g, int k) {
  WriteBatch b;
  b.AddVertex("Item", {{"k", k}, {"pad", std::string(static_cast<std::size_t>(k % 5) * 8, 'p')}});
  ASSERT_TRUE(g.Write(std::move(b)).ok());
}

checkpoint::Header ReadCheckpointHeader(env::SimFileSystem& fs, SequenceNumber sequence) {
  const std::string bytes = fs.ReadFileForTest(kDir + "/" + checkpoint::CheckpointFileName(sequence)).value();
  checkpoint::Header h;
  EXPECT_TRUE(checkpoint::DecodeHeader(AsBytes(bytes), &h).ok());
  EXPECT_EQ(h.version, checkpoint::kFormatVersion);
  return h;
}

std::vector<std::uint64_t> Segments(env::SimFileSystem& fs) {
  std::vector<std::uint64_t> out;
  const std::vector<std::string> names = fs.ListDir(kDir).value();
  for (const std::string& name : names)
    if (auto n = wal::ParseSegmentFileName(name)) out.push_back(*n);
  std::sort(out.begin(), out.end());
  return out;
}

struct Place {
  std::uint64_t segment = 0;
  std::uint64_t offset = 0;
};

// Where the record that starts the group beginning at `sequence` lies.
std::optional<Place> FindGroupStart(env::SimFileSystem& fs, SequenceNumber sequence) {
  for (std::uint64_t n : Segments(fs)) {
    const std::string bytes = fs.ReadFileForTest(kDir + "/" + wal::SegmentFileName(n)).value();
    for (const format_test::RecordSpan& r : format_test::RecordSpans(AsBytes(bytes))) {
      auto h = wal::ParseRecordHeader(AsBytes(bytes).subspan(r.offset, wal::kRecordHeaderBytes));
      if (h && (h->type == wal::RecordType::kFull || h->type == wal::RecordType::kFirst) &&
          h->first_sequence == sequence)
        return Place{n, r.offset};
    }
  }
  return std::nullopt;
}

// Checks checkpoint `sequence`'s recorded position against the record of
// group sequence + 1, which the caller has written since: the same place, or
// the end of the segment before the one that group starts (at its first
// page boundary, after the header's padding) — the two forms
// docs/checkpoint_format.md allows.
void ExpectPositionOfNextGroup(env::SimFileSystem& fs, SequenceNumber sequence) {
  SCOPED_TRACE(sequence);
  const checkpoint::Header h = ReadCheckpointHeader(fs, sequence);
  const std::optional<Place> next = FindGroupStart(fs, sequence + 1);
  ASSERT_TRUE(next.has_value()) << "group " << sequence + 1 << " is not in the log";
  if (h.wal_segment == next->segment) {
    EXPECT_EQ(h.wal_offset, next->offset);
    return;
  }
  // The segment-end form: the recorded segment ends at the recorded offset,
  // and the group starts the very next segment on disk.
  EXPECT_EQ(next->offset, wal::FirstRecordOffset(wal::kFormatVersion));
  const std::vector<std::uint64_t> segments = Segments(fs);
  auto it = std::find(segments.begin(), segments.end(), next->segment);
  ASSERT_NE(it, segments.begin());
  EXPECT_EQ(*std::prev(it), h.wal_segment)
      << "recorded segment " << h.wal_segment << ", group starts in " << next->segment;
  const std::string bytes = fs.ReadFileForTest(kDir + "/" + wal::SegmentFileName(h.wal_segment)).value();
  EXPECT_EQ(h.wal_offset, bytes.size());
}

// The writer's position: a checkpoint after every group, so every place a
// group can end in is recorded once, at a rotation's segment end included.
TEST(CheckpointWalPositionTest, WriterRecordsWhereTheNextGroupStarts) {
  env::SimFileSystem fs;
  auto g = GraphImpl::OpenDurable(TestOptions(), kDir, &fs).value();
  std::uint64_t rotations_seen = 0;
  for (int k = 1; k <= 40; ++k) {
    WriteGroup(*g, k);
    if (k > 1) ExpectPositionOfNextGroup(fs, static_cast<SequenceNumber>(k - 1));
    const checkpoint::Header before = k > 1 ? ReadCheckpointHeader(fs, k - 1) : checkpoint::Header{};
    ASSERT_TRUE(g->Checkpoint().ok());
    const checkpoint::Header h = ReadCheckpointHeader(fs, static_cast<SequenceNumber>(k));
    if (k > 1 && h.wal_segment != before.wal_segment) ++rotations_seen;
  }
  EXPECT_GT(rotations_seen, 3u);
}

// Checkpoints of the state recovery rebuilt, before anything new is written.
class RecoveredPositionTest : public ::testing::Test {
 protected:
  // Writes groups 1..n, with a checkpoint after group `checkpoint_at` (0:
  // none), then closes without a checkpoint.
  void WriteLog(int n, int checkpoint_at) {
    auto g = GraphImpl::OpenDurable(TestOptions(), kDir, &fs_).value();
    for (int k = 1; k <= n; ++k) {
      WriteGroup(*g, k);
      if (k == checkpoint_at) {
        ASSERT_TRUE(g->Checkpoint().ok());
      }
    }
    ASSERT_TRUE(g->Close().ok());
  }

  // Opens with `o`, checkpoints the recovered state (sequence `expected`),
  // writes one group and checks the checkpoint's position against it.
  void CheckpointRecoveredThenWrite(const Options& o, SequenceNumber expected) {
    auto g = GraphImpl::OpenDurable(o, kDir, &fs_);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_EQ((*g)->GetSnapshot().sequence(), expected);
    ASSERT_TRUE((*g)->Checkpoint().ok());
    WriteGroup(**g, 1000);
    ExpectPositionOfNextGroup(fs_, expected);
    // And the graph still opens, the checkpoint with it.
    ASSERT_TRUE((*g)->Close().ok());
    g = Result<std::unique_ptr<Graph>>(nullptr);
    auto again = GraphImpl::OpenDurable(o, kDir, &fs_);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ((*again)->GetSnapshot().sequence(), expected + 1);
  }

  std::string LastSegmentPath() { return kDir + "/" + wal::SegmentFileName(Segments(fs_).back()); }

  env::SimFileSystem fs_;
};

TEST_F(RecoveredPositionTest, AppendingToTheLastSegment) {
  WriteLog(3, 0);
  CheckpointRecoveredThenWrite(TestOptions(), 3);
}

TEST_F(RecoveredPositionTest, LastSegmentFullSoTheNextGroupStartsANewOne) {
  // Write until the last segment has reached its target size: the next
  // group rotates.
  {
    auto g = GraphImpl::OpenDurable(TestOptions(), kDir, &fs_).value();
    for (int k = 1; k <= 200; ++k) {
      WriteGroup(*g, k);
      const std::string last = fs_.ReadFileForTest(LastSegmentPath()).value();
      if (last.size() >= TestOptions().durable.wal_segment_bytes) break;
    }
    ASSERT_TRUE(g->Close().ok());
  }
  SequenceNumber last = 0;
  while (FindGroupStart(fs_, last + 1).has_value()) ++last;
  CheckpointRecoveredThenWrite(TestOptions(), last);
}

TEST_F(RecoveredPositionTest, AfterATornTailWasCut) {
  WriteLog(3, 0);
  const std::string path = LastSegmentPath();
  std::string bytes = fs_.ReadFileForTest(path).value();
  bytes += std::string(40, '\x5a');  // half a record the crash tore
  ASSERT_TRUE(fs_.WriteFileForTest(path, bytes).ok());
  CheckpointRecoveredThenWrite(TestOptions(), 3);
  EXPECT_EQ(fs_.ReadFileForTest(path).value().find(std::string(40, '\x5a')), std::string::npos);
}

TEST_F(RecoveredPositionTest, AfterASalvage) {
  // Damage in group 4's record, with groups after it: salvage keeps 1..3
  // and sets the rest aside; new records go to a new segment.
  WriteLog(5, 0);
  const std::string path = kDir + "/" + wal::SegmentFileName(FindGroupStart(fs_, 4)->segment);
  ASSERT_TRUE(fs_.FlipBit(path, 8 * (FindGroupStart(fs_, 4)->offset + wal::kRecordHeaderBytes)).ok());
  Options o = TestOptions();
  o.durable.salvage_wal_prefix = true;
  CheckpointRecoveredThenWrite(o, 3);
}

TEST_F(RecoveredPositionTest, CheckpointedStateWithItsLogTail) {
  // A checkpoint at 4 and groups 5..9 after it: the recovered state's
  // position is the log's end, not the loaded checkpoint's.
  WriteLog(9, 4);
  CheckpointRecoveredThenWrite(TestOptions(), 9);
}

// Covered damage is skipped to exactly the recorded position, wherever the
// writer recorded it: for checkpoints at several places (inside a segment,
// at a segment's end), damage each covered group's record in turn, with
// groups after the checkpoint in the log.
TEST(CheckpointWalPositionTest, EveryCoveredGroupsDamageIsSkippedToThePosition) {
  constexpr int kGroups = 24;
  int skipped = 0;
  for (int checkpoint_at = 10; checkpoint_at <= 20; ++checkpoint_at) {
    SCOPED_TRACE(checkpoint_at);
    env::SimFileSystem base;
    {
      auto g = GraphImpl::OpenDurable(TestOptions(), kDir, &base).value();
      for (int k = 1; k <= kGroups; ++k) {
        WriteGroup(*g, k);
        if (k == checkpoint_at) {
          ASSERT_TRUE(g->Checkpoint().ok());
        }
      }
      ASSERT_TRUE(g->Close().ok());
    }
    std::string clean;
    {
      std::unique_ptr<env::SimFileSystem> fs = base.Clone();
      auto g = GraphImpl::OpenDurable(TestOptions(), kDir, fs.get()).value();
      clean = test_util::Dump(g->GetSnapshot());
    }
    // Recovery reads from the segment where the group after the checkpoint
    // starts (those before it hold nothing newer).
    const std::uint64_t first_read = FindGroupStart(base, checkpoint_at + 1)->segment;
    for (int k = 1; k <= checkpoint_at; ++k) {
      SCOPED_TRACE(k);
      std::unique_ptr<env::SimFileSystem> fs = base.Clone();
      const std::optional<Place> at = FindGroupStart(*fs, static_cast<SequenceNumber>(k));
      ASSERT_TRUE(at.has_value());
      ASSERT_TRUE(fs->FlipBit(kDir + "/" + wal::SegmentFileName(at->segment), 8 * at->offset).ok());
      auto g = GraphImpl::OpenDurable(TestOptions(), kDir, fs.get());
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      EXPECT_EQ((*g)->GetSnapshot().sequence(), static_cast<SequenceNumber>(kGroups));
      EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), clean);
      if (at->segment == first_read) {
        EXPECT_GT((*g)->GetOpenStats().wal_covered_damage_bytes, 0u);
        ++skipped;
      }
    }
  }
  EXPECT_GT(skipped, 10);
}

}  // namespace
}  // namespace quiver
