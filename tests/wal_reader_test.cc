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

#include "base/crc32c.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_environment.h"
#include "test_util.h"
#include "wal/wal_writer.h"

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

// --- The page rule (format version 3, docs/wal_format.md)

// Writes groups with raw payloads of the given sizes through WalWriter (one
// append and one sync each) and returns the segment's bytes.
std::string RawSegment(const std::vector<std::size_t>& payload_sizes) {
  env::SimFileSystem fs;
  EXPECT_TRUE(fs.CreateDir("/db").ok());
  {
    wal::WalWriter writer(&fs, "/db", kFixedUuid, std::uint64_t{1} << 24);
    EXPECT_TRUE(writer.StartSegment(1, 1).ok());
    EXPECT_EQ(writer.segment_size(), wal::kWalPageBytes);
    SequenceNumber seq = 1;
    for (std::size_t n : payload_sizes) {
      std::vector<std::byte> payload(n, std::byte{0x5a});
      EXPECT_TRUE(writer.AppendGroup(seq, seq, payload).ok());
      EXPECT_TRUE(writer.Sync().ok());
      EXPECT_EQ(writer.segment_size() % wal::kWalPageBytes, 0u) << "group " << seq;
      ++seq;
    }
  }
  return fs.ReadFileForTest("/db/" + wal::SegmentFileName(1)).value();
}

struct RawScan {
  Status status;
  wal::SegmentScan scan;
  std::vector<SequenceNumber> groups;
};

RawScan ScanRaw(const std::string& bytes) {
  RawScan r;
  r.status = wal::ScanSegment(
      AsBytes(bytes),
      [&r](SequenceNumber first, SequenceNumber, std::span<const std::byte>) {
        r.groups.push_back(first);
        return Status::Ok();
      },
      &r.scan);
  return r;
}

// Review (WAL format 3, finding 1): the header's padding is synced before
// any group is written, so damage there followed by a valid group, even the
// first one the segment expects, hit durable bytes: Corruption, never a torn
// tail that cuts the acknowledged group away.
TEST(WalReaderTest, DamageInTheHeaderPageBeforeAGroupIsCorruption) {
  std::string bytes = RawSegment({40});
  ASSERT_EQ(ScanRaw(bytes).groups.size(), 1u);
  bytes[wal::kSegmentHeaderBytes + 200] = static_cast<char>(bytes[wal::kSegmentHeaderBytes + 200] ^ 1);
  const RawScan r = ScanRaw(bytes);
  EXPECT_EQ(r.status.code(), StatusCode::kCorruption) << r.status.ToString();
  EXPECT_TRUE(r.groups.empty());
}

// The zeroed end (format 3, docs/wal_format.md): the writer zero-fills a
// segment ahead of its appends. Zeros after the last group, which ends on a
// page boundary, are the segment's unused end: no torn tail, nothing to cut.
// One byte other than zero there makes all of it a torn tail again; and in
// format 2, which was never zero-filled, zeros stay a torn tail.
TEST(WalReaderTest, ZerosAfterTheLastGroupAreTheZeroedEndNotATornTail) {
  const std::string segment = RawSegment({40, 5000});
  ASSERT_EQ(segment.size() % wal::kWalPageBytes, 0u);
  RawScan r = ScanRaw(segment + std::string(3 * wal::kWalPageBytes, '\0'));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.scan.valid_end, segment.size());
  EXPECT_EQ(r.scan.tail_bytes, 0u);
  EXPECT_EQ(r.scan.zeroed_bytes, 3 * wal::kWalPageBytes);

  std::string torn = segment + std::string(3 * wal::kWalPageBytes, '\0');
  torn[segment.size() + 5000] = '\x01';
  r = ScanRaw(torn);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.scan.tail_bytes, 3 * wal::kWalPageBytes);
  EXPECT_EQ(r.scan.zeroed_bytes, 0u);

  // A header whose padding never made it (valid end 64): zeros after it are
  // no zeroed end (the fill starts only after the header's page is synced).
  std::string header_only =
      segment.substr(0, wal::kSegmentHeaderBytes) + std::string(wal::kWalPageBytes, '\0');
  r = ScanRaw(header_only);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.scan.zeroed_bytes, 0u);
  EXPECT_EQ(r.scan.tail_bytes, wal::kWalPageBytes);
}

// Record payload sizes that hit each case of the padding: room left for a
// padding record, exactly none (a record ending on the boundary: no padding),
// fewer than 32 bytes left (the padding reaches the boundary after), and a
// group of several fragments.
TEST(WalReaderTest, EveryGroupEndsOnAPageBoundary) {
  test_util::ScopedEngineWalMaxFragment engine_fragment;  // the big group: a 1 MiB fragment and a short one
  const std::size_t exact = wal::kWalPageBytes - wal::kRecordHeaderBytes;           // 4064
  const std::size_t short_gap = wal::kWalPageBytes - wal::kRecordHeaderBytes - 16;  // 16 bytes left
  const std::vector<std::size_t> sizes = {31, exact, short_gap, 0 + 1, wal::kMaxFragment + 100, 200};
  const std::string bytes = RawSegment(sizes);
  ASSERT_EQ(bytes.size() % wal::kWalPageBytes, 0u);
  // The header's padding runs from 64 to 4096.
  auto hp = wal::ParseRecordHeader(AsBytes(bytes).subspan(wal::kSegmentHeaderBytes));
  ASSERT_TRUE(hp.has_value());
  EXPECT_EQ(hp->type, wal::RecordType::kPadding);
  EXPECT_EQ(wal::kSegmentHeaderBytes + wal::kRecordHeaderBytes + hp->length, wal::kWalPageBytes);
  const std::vector<format_test::RecordSpan> spans = format_test::RecordSpans(AsBytes(bytes));
  ASSERT_EQ(spans.size(), sizes.size() + 1);  // the big group is two fragments
  EXPECT_EQ(spans[0].offset, wal::kWalPageBytes);
  for (const format_test::RecordSpan& r : spans) EXPECT_EQ(r.offset % 8, 0u);
  EXPECT_EQ(spans[1].padding, 0u) << "a record ending on the boundary needs no padding";
  EXPECT_EQ(spans[1].end - spans[1].offset, wal::kWalPageBytes);
  EXPECT_EQ(spans[2].end - spans[2].offset, 2 * wal::kWalPageBytes) << "16 bytes left: one more page";
  EXPECT_EQ(spans[2].padding, 16 + wal::kWalPageBytes);
  EXPECT_EQ(spans[4].padding, 0u) << "padding follows only the last fragment of a group";
  for (const format_test::RecordSpan& r : spans) {
    if (r.padding > 0) {
      EXPECT_EQ(r.end % wal::kWalPageBytes, 0u);
    }
  }
  RawScan scan = ScanRaw(bytes);
  ASSERT_TRUE(scan.status.ok()) << scan.status.ToString();
  EXPECT_EQ(scan.groups, (std::vector<SequenceNumber>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(scan.scan.valid_end, bytes.size());
  EXPECT_EQ(scan.scan.tail_bytes, 0u);
  // Every byte is a record header, a payload or padding.
  std::uint64_t payloads = 0;
  for (std::size_t n : sizes) payloads += n;
  const std::uint64_t records = sizes.size() + 1;
  EXPECT_EQ(scan.scan.padding_bytes,
            bytes.size() - wal::kSegmentHeaderBytes - records * wal::kRecordHeaderBytes - payloads -
                (wal::PaddedLength(31) - 31) - (wal::PaddedLength(1) - 1) - (wal::PaddedLength(100) - 100));
}

// The length limit exactly: a group of kMaxFragment bytes is one full
// record of that length, one a byte longer is a first record of that length
// and a last of one byte, and both read back; a record header claiming a
// byte more than kMaxFragment is refused (with a CRC that matches).
TEST(WalReaderTest, FragmentsOfExactlyTheLimitReadBackAndOneByteMoreIsRefused) {
  test_util::ScopedEngineWalMaxFragment engine_fragment;
  const std::string bytes = RawSegment({wal::kMaxFragment, wal::kMaxFragment + 1});
  const std::vector<format_test::RecordSpan> spans = format_test::RecordSpans(AsBytes(bytes));
  ASSERT_EQ(spans.size(), 3u);
  const wal::RecordType want[] = {wal::RecordType::kFull, wal::RecordType::kFirst, wal::RecordType::kLast};
  const std::size_t lengths[] = {wal::kMaxFragment, wal::kMaxFragment, 1};
  for (std::size_t i = 0; i < 3; ++i) {
    auto h = wal::ParseRecordHeader(AsBytes(bytes).subspan(spans[i].offset, wal::kRecordHeaderBytes));
    ASSERT_TRUE(h.has_value()) << i;
    EXPECT_EQ(h->type, want[i]) << i;
    EXPECT_EQ(h->length, lengths[i]) << i;
  }
  RawScan scan = ScanRaw(bytes);
  ASSERT_TRUE(scan.status.ok()) << scan.status.ToString();
  EXPECT_EQ(scan.groups, (std::vector<SequenceNumber>{1, 2}));
  EXPECT_EQ(scan.scan.tail_bytes, 0u);

  std::vector<std::byte> record(wal::kRecordHeaderBytes + wal::kMaxFragment + 1, std::byte{0x5a});
  const std::span<const std::byte> payload(record.data() + wal::kRecordHeaderBytes, wal::kMaxFragment + 1);
  wal::EncodeRecordHeader(
      wal::RecordHeader{0, 0, wal::RecordType::kFull, 1, 1}, payload,
      std::span<std::byte, wal::kRecordHeaderBytes>(record.data(), wal::kRecordHeaderBytes));
  const std::span<const std::byte> header = std::span<const std::byte>(record).first(wal::kRecordHeaderBytes);
  EXPECT_TRUE(wal::RecordCrcMatches(header, payload));
  EXPECT_FALSE(wal::ParseRecordHeader(header).has_value());
}

// A group whose records are whole but whose padding record is missing or
// torn was never synced: it is the torn tail, and the valid end stays on the
// page boundary where appends may continue.
TEST(WalReaderTest, AGroupCountsOnlyWithItsPadding) {
  const std::string bytes = RawSegment({40, 50, 60});
  const std::vector<format_test::RecordSpan> spans = format_test::RecordSpans(AsBytes(bytes));
  ASSERT_EQ(spans.size(), 3u);
  for (std::size_t cut : {spans[2].payload_end, spans[2].end - spans[2].padding + 7, spans[2].end - 1}) {
    SCOPED_TRACE(cut);
    RawScan scan = ScanRaw(bytes.substr(0, cut));
    ASSERT_TRUE(scan.status.ok()) << scan.status.ToString();
    EXPECT_EQ(scan.groups, (std::vector<SequenceNumber>{1, 2}));
    EXPECT_EQ(scan.scan.valid_end, spans[1].end);
    EXPECT_EQ(scan.scan.valid_end % wal::kWalPageBytes, 0u);
  }
  // The last group's padding damaged: a torn tail too; a middle group's: its
  // group is missing while later ones follow: Corruption.
  std::string last = bytes;
  last[spans[2].end - 100] ^= 1;
  RawScan torn = ScanRaw(last);
  ASSERT_TRUE(torn.status.ok()) << torn.status.ToString();
  EXPECT_EQ(torn.groups, (std::vector<SequenceNumber>{1, 2}));
  std::string middle = bytes;
  middle[spans[1].end - 100] ^= 1;
  EXPECT_EQ(ScanRaw(middle).status.code(), StatusCode::kCorruption);
  // The header's padding torn: no group counts, the valid end is 64 (and
  // recovery starts a new segment rather than write into the header's page).
  RawScan header_torn = ScanRaw(bytes.substr(0, wal::kSegmentHeaderBytes + 100));
  ASSERT_TRUE(header_torn.status.ok()) << header_torn.status.ToString();
  EXPECT_TRUE(header_torn.groups.empty());
  EXPECT_EQ(header_torn.scan.valid_end, wal::kSegmentHeaderBytes);
}

// A padding record anywhere but right after the header or a group's last
// record, with another range, or not ending on a page boundary; a record
// where a padding record must be; a padding record in a version 2 segment:
// each is a CRC-valid record no writer wrote there, so Corruption.
TEST(WalReaderTest, PaddingOutOfPlaceIsCorruption) {
  const std::string bytes = RawSegment({40, 50, 60});
  const std::vector<format_test::RecordSpan> spans = format_test::RecordSpans(AsBytes(bytes));
  ASSERT_EQ(spans.size(), 3u);
  auto record = [](wal::RecordType type, SequenceNumber first, SequenceNumber last, std::size_t length) {
    std::string out(wal::kRecordHeaderBytes + wal::PaddedLength(static_cast<std::uint32_t>(length)), '\0');
    std::vector<std::byte> payload(length, std::byte{0});
    wal::EncodeRecordHeader(wal::RecordHeader{0, 0, type, first, last}, payload,
                            std::span<std::byte, wal::kRecordHeaderBytes>(
                                reinterpret_cast<std::byte*>(out.data()), wal::kRecordHeaderBytes));
    return out;
  };
  const std::string page2 = bytes.substr(spans[1].offset, spans[1].end - spans[1].offset);
  const std::string head = bytes.substr(0, spans[1].offset);  // header page and group 1
  const std::size_t pad_len = spans[1].padding - wal::kRecordHeaderBytes;
  const std::string group2 = bytes.substr(spans[1].offset, spans[1].end - spans[1].padding - spans[1].offset);
  struct Case {
    const char* what;
    std::string segment;
  };
  const std::vector<Case> cases = {
      {"padding with another range", head + group2 + record(wal::RecordType::kPadding, 3, 3, pad_len)},
      {"padding not ending on a page boundary",
       head + group2 + record(wal::RecordType::kPadding, 2, 2, pad_len - 8) + std::string(8, '\0')},
      {"two paddings", head + page2 + record(wal::RecordType::kPadding, 2, 2, wal::kWalPageBytes - 32)},
      {"a group where its padding must be", head + group2 + record(wal::RecordType::kFull, 3, 3, 8)},
      {"padding after a first fragment",
       head + record(wal::RecordType::kFirst, 2, 2, 8) +
           record(wal::RecordType::kPadding, 2, 2, wal::kWalPageBytes - 80)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(ScanRaw(c.segment + bytes.substr(spans[2].offset)).status.code(), StatusCode::kCorruption);
  }
  // Version 2: a padding record (here, the header's) is no record of that
  // format.
  std::string v2 = bytes;
  const std::uint32_t two = 2;
  std::memcpy(v2.data() + 8, &two, 4);
  const std::uint32_t crc = base::Crc32c(v2.data(), 56);
  std::memcpy(v2.data() + 56, &crc, 4);
  EXPECT_EQ(ScanRaw(v2).status.code(), StatusCode::kCorruption);
}

// The writer continues a segment only at a page boundary; recovery gives it
// none other: a last segment whose header's padding was torn is closed, and
// the next commit starts a new segment, which a reopen reads.
TEST(WalReaderTest, ATornHeaderPageIsClosedNotAppendedTo) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/db").ok());
  {
    wal::WalWriter writer(&fs, "/db", kFixedUuid, std::uint64_t{1} << 20);
    ASSERT_TRUE(writer.StartSegment(1, 1).ok());
  }
  const std::string full = fs.ReadFileForTest("/db/" + wal::SegmentFileName(1)).value();
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), full.substr(0, 1000)).ok());
  {
    wal::WalWriter writer(&fs, "/db", kFixedUuid, std::uint64_t{1} << 20);
    EXPECT_EQ(writer.ReopenSegment(1, 1000).code(), StatusCode::kFailedPrecondition);
  }
  Options o;
  o.durable.checkpoint_on_close = false;
  SequenceNumber acked;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    WriteBatch b;
    b.AddVertex("P");
    acked = (*g)->Write(std::move(b)).value().sequence;
  }
  const std::string seg1 = fs.ReadFileForTest("/db/" + wal::SegmentFileName(1)).value();
  EXPECT_LE(seg1.size(), wal::kWalPageBytes) << "a group was written into the header's page";
  const std::string seg2 = fs.ReadFileForTest("/db/" + wal::SegmentFileName(2)).value();
  // The header's page, the group's page, then zeros only (the zeroed end).
  ASSERT_GE(seg2.size(), 2 * wal::kWalPageBytes);
  EXPECT_EQ(seg2.find_first_not_of('\0', 2 * wal::kWalPageBytes), std::string::npos);
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), acked);
}

}  // namespace
}  // namespace quiver
