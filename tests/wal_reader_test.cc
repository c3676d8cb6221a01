// Reading WAL segments after damage (wal/wal_reader.h) where the loaded
// checkpoint covers the damage: the reader may skip it, but must resume only
// on a true record boundary, never inside a payload that happens to hold
// bytes shaped like a record (here a bytes value).
#include "wal/wal_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

using format_test::AsBytes;
using format_test::kFixedUuid;
using format_test::LogBuilder;

constexpr int kCovered = 5;  // the checkpoint's sequence
constexpr std::size_t kBlobBytes = 512;

// Groups 1..kCovered-1 add a vertex each, group kCovered adds a vertex
// carrying `blob` as a bytes value, group kCovered+1 adds `last_label`.
void BuildLog(LogBuilder& log, const std::string& blob, const char* last_label) {
  for (int k = 1; k < kCovered; ++k) {
    WriteBatch b;
    b.AddVertex("P", {{"k", k}});
    ASSERT_TRUE(log.AddGroup({b}).ok());
  }
  WriteBatch carrier;
  Bytes value(blob.size());
  std::memcpy(value.data(), blob.data(), blob.size());
  carrier.AddVertex("Carrier", {{"blob", value}});
  ASSERT_TRUE(log.AddGroup({carrier}).ok());
  WriteBatch last;
  last.AddVertex(last_label);
  ASSERT_TRUE(log.AddGroup({last}).ok());
}

// Regression: damage the checkpoint covered was skipped by resuming at the
// first CRC-valid record past it that started a group at most one past the
// checkpoint, wherever that record lay. A covered group whose payload holds
// a well-formed record (a string value, say) claiming the next sequence,
// behind a damaged record header, was taken for that group: replayed in
// place of the real one, which was then cut away as a torn tail. Open said
// OK and served a group that was never committed.
TEST(WalReaderTest, CoveredDamageNeverResumesInsideAPayload) {
  const std::string filler(kBlobBytes, 'x');
  // The smuggled record: the group a payload claims for sequence kCovered+1.
  std::string fake;
  {
    LogBuilder evil;
    BuildLog(evil, filler, "Evil");
    const format_test::LoggedGroup& g = evil.groups().back();
    std::vector<std::byte> record(wal::kRecordHeaderBytes + wal::PaddedLength(g.payload.size()));
    wal::EncodeRecordHeader(
        wal::RecordHeader{0, 0, wal::RecordType::kFull, g.first, g.last}, g.payload,
        std::span<std::byte, wal::kRecordHeaderBytes>(record.data(), wal::kRecordHeaderBytes));
    std::memcpy(record.data() + wal::kRecordHeaderBytes, g.payload.data(), g.payload.size());
    fake.assign(reinterpret_cast<const char*>(record.data()), record.size());
  }
  // Where the blob lands in the segment, and an 8-aligned place in it.
  std::string blob = filler;
  {
    LogBuilder probe;
    BuildLog(probe, filler, "Real");
    env::SimFileSystem fs;
    const std::string segment =
        format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, probe.groups()).value();
    const std::size_t at = segment.find(filler);
    ASSERT_NE(at, std::string::npos);
    const std::size_t aligned = (at + 7) & ~std::size_t{7};
    ASSERT_LE(aligned - at + fake.size(), blob.size());
    blob.replace(aligned - at, fake.size(), fake);
  }
  LogBuilder log;
  BuildLog(log, blob, "Real");
  log.Finish();
  std::string segment, ckpt;
  {
    env::SimFileSystem fs;
    segment = format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, log.groups()).value();
  }
  {
    env::SimFileSystem fs;
    std::span<const format_test::LoggedGroup> groups(log.groups());
    ASSERT_TRUE(format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, groups.first(kCovered)).ok());
    ckpt = format_test::WriteCheckpointFile(fs, "/db", kFixedUuid).value();
  }
  // Damage the carrier's record header (its CRC): the carrier group is
  // covered, so the damage may be skipped, but its payload is intact.
  const std::vector<format_test::RecordSpan> spans = format_test::RecordSpans(AsBytes(segment));
  ASSERT_EQ(spans.size(), static_cast<std::size_t>(kCovered + 1));
  segment[spans[kCovered - 1].offset] ^= 0x01;
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/db").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), segment).ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(kCovered), ckpt).ok());
  Options o;
  o.durable.checkpoint_on_close = false;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
    return;
  }
  EXPECT_FALSE((*g)->GetSnapshot().FindLabel("Evil").has_value())
      << "a group smuggled in a payload was replayed";
  EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), log.states()[kCovered + 1]);
  EXPECT_EQ((*g)->GetOpenStats().wal_covered_damage_bytes,
            spans[kCovered - 1].end - spans[kCovered - 1].offset);
}

// ScanSegment's own rules for a recorded boundary (`covered_end`), on a
// segment of groups 1..6 whose group-2 record header is damaged and a
// checkpoint at sequence 4: it resumes only at an offset that is past the
// damage, a multiple of 8 and inside the file; anything else (a position
// from a log that later lost bytes, say) is not trusted, and the damage,
// with group 5 after it, is then Corruption.
TEST(WalReaderTest, RecordedBoundaryIsUsedOnlyWhenItCanBeOne) {
  LogBuilder log;
  for (int k = 1; k <= 6; ++k) {
    WriteBatch b;
    b.AddVertex("P", {{"k", k}});
    ASSERT_TRUE(log.AddGroup({b}).ok());
  }
  log.Finish();
  env::SimFileSystem fs;
  std::string segment = format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, log.groups()).value();
  const std::vector<format_test::RecordSpan> spans = format_test::RecordSpans(AsBytes(segment));
  ASSERT_EQ(spans.size(), 6u);
  segment[spans[1].offset] ^= 0x01;
  constexpr SequenceNumber kCheckpoint = 4;
  const std::uint64_t boundary = spans[kCheckpoint].offset;  // where group 5 starts
  auto scan_with = [&](std::uint64_t covered_end, wal::SegmentScan* scan) {
    std::vector<SequenceNumber> replayed;
    Status s = wal::ScanSegment(
        AsBytes(segment),
        [&](SequenceNumber first, SequenceNumber, std::span<const std::byte>) {
          replayed.push_back(first);
          return Status::Ok();
        },
        scan, kCheckpoint, covered_end);
    return std::make_pair(s, replayed);
  };
  {
    wal::SegmentScan scan;
    auto [s, replayed] = scan_with(boundary, &scan);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(replayed, (std::vector<SequenceNumber>{1, 5, 6}));
    EXPECT_EQ(scan.covered_damage_bytes, boundary - spans[1].offset);
    EXPECT_EQ(scan.next_sequence, 7u);
    EXPECT_FALSE(scan.skipped_to_end);
  }
  {
    // A later segment holds the group after the checkpoint: the rest of
    // this one is covered, and nothing more is read from it.
    wal::SegmentScan scan;
    auto [s, replayed] = scan_with(wal::kCoveredToTheEnd, &scan);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(replayed, (std::vector<SequenceNumber>{1}));
    EXPECT_TRUE(scan.skipped_to_end);
    EXPECT_EQ(scan.valid_end, segment.size());
    EXPECT_EQ(scan.next_sequence, kCheckpoint + 1);
  }
  for (std::uint64_t bad : {boundary + 4, std::uint64_t{segment.size()} + 8, std::uint64_t{spans[1].offset},
                            std::uint64_t{spans[0].offset}}) {
    SCOPED_TRACE(bad);
    wal::SegmentScan scan;
    auto [s, replayed] = scan_with(bad, &scan);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    EXPECT_EQ(replayed, (std::vector<SequenceNumber>{1}));
  }
}

}  // namespace
}  // namespace quiver
