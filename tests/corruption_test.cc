// The corruption corpus of RELIABILITY.md 3.6, at decoder level: a small
// valid WAL segment and a small checkpoint, built through the real writers
// from a seeded workload, mutated in every way listed there, and each
// mutation checked against the class the reading rules give it:
//
//  WAL segment (wal/wal_reader.h: damage before a later valid record is
//  Corruption; damage confined to the last record is a torn tail, dropped
//  and reported in tail_bytes):
//   - every single-bit flip: in the header or a record before the last one
//     => Corruption; in the last record => torn tail (OK, the groups before
//     it, tail_bytes > 0);
//   - every truncation length => OK with a prefix of the groups, never an
//     error, and a valid end where the next record can be appended;
//   - structured cases: zeroed / garbage 512-byte sector, garbage or zeros
//     appended past EOF, record length 0 / remaining+1 / 2^32-1, sequence
//     gap, duplicate and swapped records, undecodable CRC-valid record,
//     unknown format version (Unimplemented); across segments (end to end): another graph's
//     UUID, gap or overlap between segments, damage before a later segment
//     (and the salvage option).
//  Checkpoint (checkpoint/checkpoint_reader.h: any damage rejects it whole):
//   - every single-bit flip and every truncation => Corruption;
//   - zeroed / garbage sector, appended bytes, block length 0 / remaining+1 /
//     2^32-1 => Corruption (unknown format version: Unimplemented); a damaged newest
//     checkpoint falls back to the previous one end to end.
//  Mutations with the CRC recomputed (structure-only damage, as a fuzzer
//  without CRCs would make) must never crash, hang or over-allocate (the asan
//  build runs this file); whether they are caught is counted, not required.
//
// About 1% of the single-bit flips (seeded: QUIVER_SEED) are also opened end
// to end on a SimFileSystem and must agree with the decoder-level verdict;
// every structured WAL case is opened end to end. Each test prints
//   mutations: N, classified as expected: N, undetected corruptions: 0,
//   silent truncations of committed data: 0
// "Undetected" = a mutated file accepted as if intact (every group, or the
// whole checkpoint); "silent truncation" = OK with committed groups missing
// where the rule says Corruption.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "base/crc32c.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "loop_sample.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/batch_codec.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

namespace quiver {
namespace {

using format_test::AsBytes;
using format_test::kFixedUuid;
using format_test::LoggedGroup;
using format_test::RecordSpan;

const std::uint64_t kSeed = test_util::EnvOr("QUIVER_SEED", 20240601);

// --- The workload: every op kind, every value type, one batch per group but
// two in every fifth group; nothing it removes is referenced afterwards.

//
// `with_index` (the checkpoint's corpus): first an ordered int64 index on
// Person.k, declared and made ready, so that the checkpoint holds an index
// definitions block and an index entries block (format 5) for the flips.
Status BuildLog(format_test::LogBuilder& log, int groups, bool with_index = false) {
  if (with_index) {
    using internal::WriteBatchInternal;
    IndexOp define;
    define.spec = {.name = "person_k",
                   .label = "Person",
                   .keys = {"k"},
                   .kind = IndexKind::kOrdered,
                   .type = ValueType::kInt64};
    QUIVER_RETURN_IF_ERROR(log.AddGroup({WriteBatchInternal::IndexBatch(OpKind::kDefineIndex, define)}));
    IndexOp ready;
    ready.spec.name = "person_k";
    ready.declared = 1;
    QUIVER_RETURN_IF_ERROR(log.AddGroup({WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ready)}));
  }
  std::uint64_t next_v = 0, next_e = 0;
  std::vector<std::uint64_t> people, knows;                    // never removed
  std::vector<std::pair<std::uint64_t, std::uint64_t>> temps;  // (vertex, edge) removed later
  for (int k = 1; k <= groups; ++k) {
    std::vector<WriteBatch> batches;
    for (int b = 0; b < (k % 5 == 0 ? 2 : 1); ++b) {
      const int j = 10 * k + b;
      WriteBatch wb;
      std::vector<Property> props = {{"name", "p" + std::to_string(j)}, {"k", j}, {"score", 0.25 * j}};
      if (j % 2 == 0) props.push_back({"flag", j % 4 == 0});
      if (j % 4 == 0) props.push_back({"emb", FloatVector{0.5f * static_cast<float>(j), -1.0f, 3.25f}});
      if (j % 3 == 0) props.push_back({"blob", Bytes{std::byte(j & 0xff), std::byte{0}, std::byte{0xff}}});
      if (j % 7 == 0) props.push_back({"nothing", PropertyValue()});
      NewVertex v = wb.AddVertex(j % 3 == 0 ? "City" : "Person", props);
      const std::uint64_t vid = next_v++;
      if (!people.empty()) {
        wb.AddEdge("KNOWS", v, VertexId(people.back()), {{"w", j}});
        knows.push_back(next_e++);
      }
      if (people.size() >= 2)
        wb.SetProperty(VertexId(people[people.size() - 2]), "touched", std::string(6, 'a' + k % 26));
      if (k % 3 == 0 && people.size() >= 3) wb.RemoveProperty(VertexId(people[people.size() - 3]), "score");
      if (k % 4 == 0 && !knows.empty()) wb.SetProperty(EdgeId(knows[knows.size() / 2]), "since", 2000 + k);
      if (k % 6 == 0 && knows.size() > 1) wb.RemoveProperty(EdgeId(knows[0]), "w");
      if (k % 4 == 1) {
        NewVertex t = wb.AddVertex("Temp");
        const std::uint64_t tv = next_v++;
        wb.AddEdge("TMP", t, v);
        temps.emplace_back(tv, next_e++);
      } else if (k % 4 == 3 && !temps.empty()) {
        wb.RemoveEdge(EdgeId(temps.front().second));
        wb.RemoveVertex(VertexId(temps.front().first));
        temps.erase(temps.begin());
      }
      people.push_back(vid);
      batches.push_back(std::move(wb));
    }
    QUIVER_RETURN_IF_ERROR(log.AddGroup(batches));
  }
  return Status::Ok();
}

// 24 groups make a 100 KiB segment in WAL format 3 (a page per group; the
// exhaustive loops skip the inside of padding payloads, InsidePaddingPayload,
// which leaves about 5.5 KiB of bytes to flip). The checkpoint's size is a trade: every
// flip reloads everything before the damaged block, so the cost grows with
// the square of the size. 56 groups (~4.5 KiB) keep the file's tests near
// 5 s of CPU in a Debug build; QUIVER_CORRUPTION_CKPT_GROUPS=130 gives the
// ~16 KiB of RELIABILITY.md 3.6 for soak runs.
constexpr int kSegmentGroups = 24;
const int kCheckpointGroups = static_cast<int>(test_util::EnvOr("QUIVER_CORRUPTION_CKPT_GROUPS", 56));

struct Corpus {
  format_test::LogBuilder log;  // kSegmentGroups groups
  std::string segment;
  std::vector<RecordSpan> spans;
  format_test::LogBuilder big_log;  // kCheckpointGroups groups
  std::string checkpoint;
  SequenceNumber checkpoint_sequence = 0;
  std::string checkpoint_dump;
  std::vector<std::size_t> blocks;  // offsets of the checkpoint's blocks
};

const Corpus& GetCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    EXPECT_TRUE(BuildLog(c->log, kSegmentGroups).ok());
    env::SimFileSystem fs;
    c->segment = format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, c->log.groups()).value();
    c->spans = format_test::RecordSpans(AsBytes(c->segment));
    c->log.Finish();
    EXPECT_TRUE(BuildLog(c->big_log, kCheckpointGroups, /*with_index=*/true).ok());
    c->big_log.Finish();
    env::SimFileSystem fs2;
    EXPECT_TRUE(format_test::WriteSegmentFile(fs2, "/db", kFixedUuid, 1, 1, c->big_log.groups()).ok());
    c->checkpoint = format_test::WriteCheckpointFile(fs2, "/db", kFixedUuid).value();
    checkpoint::Header h;
    EXPECT_TRUE(format_test::LoadCheckpointForTest(AsBytes(c->checkpoint), &h, &c->checkpoint_dump).ok());
    c->checkpoint_sequence = h.sequence;
    for (std::size_t pos = checkpoint::kHeaderBytes;
         pos + checkpoint::kBlockHeaderBytes <= c->checkpoint.size();) {
      c->blocks.push_back(pos);
      std::uint32_t length;
      std::memcpy(&length, c->checkpoint.data() + pos + 4, 4);
      pos += checkpoint::kBlockHeaderBytes + length;
    }
    return c;
  }();
  return *corpus;
}

// --- Reading a segment the way replay does: ScanSegment, DecodeGroup on
// each group, the batch count and sequences checked, content compared with
// the group the log holds at that index.

struct WalOutcome {
  Status status;
  wal::SegmentScan scan;
  bool content_matches = true;
};

WalOutcome ScanAndDecode(std::span<const std::byte> bytes, const std::vector<LoggedGroup>& original) {
  WalOutcome o;
  std::size_t index = 0;
  o.status = wal::ScanSegment(
      bytes,
      [&](SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload) -> Status {
        const bool same = index < original.size() && original[index].first == first &&
                          original[index].last == last &&
                          std::equal(payload.begin(), payload.end(), original[index].payload.begin(),
                                     original[index].payload.end());
        ++index;
        // DecodeGroup is a pure function of the payload, and the intact
        // payloads decode (the corpus opens end to end): only a payload that
        // differs from the original needs decoding. This keeps the ~35,000
        // scans of the bit-flip loop fast in Debug and ASan builds.
        if (same) return Status::Ok();
        o.content_matches = false;
        Result<std::vector<wal::LoggedBatch>> batches = wal::DecodeGroup(payload);
        if (!batches.ok()) return batches.status();
        if (batches->size() != last - first + 1) return CorruptionError("group size mismatch");
        for (std::size_t i = 0; i < batches->size(); ++i)
          if ((*batches)[i].sequence != first + i) return CorruptionError("batch sequence mismatch");
        return Status::Ok();
      },
      &o.scan);
  return o;
}

// What the reading rules say a mutated segment must give.
struct WalExpect {
  enum Kind { kCorruption, kPrefix } kind = kCorruption;
  std::size_t groups = 0;       // kPrefix: groups kept
  std::uint64_t valid_end = 0;  // kPrefix: where they end
};

WalExpect Corrupt() { return {WalExpect::kCorruption, 0, 0}; }
WalExpect Prefix(const Corpus& c, std::size_t groups) {
  return {WalExpect::kPrefix, groups, groups == 0 ? wal::kSegmentHeaderBytes : c.spans[groups - 1].end};
}

std::string Describe(const WalOutcome& o) {
  if (!o.status.ok()) return o.status.ToString();
  return "OK, " + std::to_string(o.scan.groups) + " groups, valid_end " + std::to_string(o.scan.valid_end) +
         ", tail_bytes " + std::to_string(o.scan.tail_bytes) + ", zeroed_bytes " +
         std::to_string(o.scan.zeroed_bytes) + (o.scan.header_valid ? "" : ", header invalid") +
         (o.content_matches ? "" : ", CONTENT DIFFERS");
}
std::string Describe(const WalExpect& e) {
  if (e.kind == WalExpect::kCorruption) return "Corruption";
  return "OK with " + std::to_string(e.groups) + " groups, valid_end " + std::to_string(e.valid_end);
}

// Tallies verdicts and prints the report line.
struct Report {
  explicit Report(std::string n) : name(std::move(n)) {}

  std::string name;
  std::uint64_t mutations = 0, as_expected = 0, undetected = 0, silent_truncations = 0, content_changed = 0;
  std::uint64_t end_to_end = 0, end_to_end_disagreements = 0;
  std::vector<std::string> failures;

  void Fail(const std::string& what) {
    if (failures.size() < 8) failures.push_back(what);
  }
  void Print() const {
    std::cout << "[" << name << "] mutations: " << mutations << ", classified as expected: " << as_expected
              << ", undetected corruptions: " << undetected
              << ", silent truncations of committed data: " << silent_truncations << "\n"
              << "[" << name << "] decoded content changed: " << content_changed
              << ", opened end to end: " << end_to_end << " (disagreements: " << end_to_end_disagreements
              << ")\n";
    for (const std::string& f : failures) std::cout << "[" << name << "]   " << f << "\n";
  }
  void ExpectClean() const {
    EXPECT_EQ(as_expected, mutations) << name;
    EXPECT_EQ(undetected, 0u) << name;
    EXPECT_EQ(silent_truncations, 0u) << name;
    EXPECT_EQ(content_changed, 0u) << name;
    EXPECT_EQ(end_to_end_disagreements, 0u) << name;
  }
};

// Checks one mutated segment against `e`; returns the outcome.
WalOutcome CheckWal(const Corpus& c, std::span<const std::byte> bytes, const WalExpect& e,
                    const std::string& what, Report& r) {
  WalOutcome o = ScanAndDecode(bytes, c.log.groups());
  ++r.mutations;
  const std::size_t total = c.log.groups().size();
  bool ok;
  if (e.kind == WalExpect::kCorruption) {
    ok = o.status.code() == StatusCode::kCorruption;
    if (o.status.ok() && o.scan.groups >= total) ++r.undetected;
    if (o.status.ok() && o.scan.groups < total) ++r.silent_truncations;
  } else {
    ok = o.status.ok() && o.scan.groups == e.groups && o.content_matches &&
         (e.groups == 0 || o.scan.valid_end == e.valid_end) &&
         o.scan.valid_end + o.scan.tail_bytes + o.scan.zeroed_bytes ==
             std::max<std::uint64_t>(bytes.size(), o.scan.valid_end) &&
         (!o.scan.header_valid || o.scan.valid_end % 8 == 0);
    if (o.status.ok() && o.scan.groups == total && e.groups < total && bytes.size() >= c.segment.size())
      ++r.undetected;
  }
  if (o.status.ok() && !o.content_matches) ++r.content_changed;
  if (ok) {
    ++r.as_expected;
  } else {
    r.Fail(what + ": expected " + Describe(e) + ", got " + Describe(o));
  }
  return o;
}

// Opens a directory holding `files` on a fresh simulator.
struct OpenOutcome {
  Status status;
  std::string dump;
  OpenStats stats;
};

OpenOutcome OpenFiles(const std::vector<std::pair<std::string, std::string>>& files, bool salvage = false,
                      env::SimFileSystem* keep_fs = nullptr) {
  env::SimFileSystem local;
  env::SimFileSystem& fs = keep_fs != nullptr ? *keep_fs : local;
  EXPECT_TRUE(fs.CreateDir("/db").ok());
  for (const auto& [name, bytes] : files) EXPECT_TRUE(fs.WriteFileForTest("/db/" + name, bytes).ok());
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.salvage_wal_prefix = salvage;
  OpenOutcome out;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  out.status = g.status();
  if (g.ok()) {
    out.dump = test_util::Dump((*g)->GetSnapshot());
    out.stats = (*g)->GetOpenStats();
  }
  return out;
}

// End to end: the open must agree with the decoder-level outcome `o` of the
// single segment `bytes`.
void CheckWalEndToEnd(const Corpus& c, const std::string& bytes, const WalOutcome& o, const std::string& what,
                      Report& r) {
  ++r.end_to_end;
  OpenOutcome open = OpenFiles({{wal::SegmentFileName(1), bytes}});
  bool agree;
  if (!o.status.ok()) {
    agree = open.status.code() == o.status.code();
  } else {
    SequenceNumber seq = o.scan.groups == 0 ? 0 : c.log.groups()[o.scan.groups - 1].last;
    std::uint64_t truncated = o.scan.header_valid ? o.scan.tail_bytes : bytes.size();
    agree = open.status.ok() && open.stats.recovered_sequence == seq && open.dump == c.log.states()[seq] &&
            open.stats.tail_bytes_truncated == truncated;
  }
  if (!agree) {
    ++r.end_to_end_disagreements;
    r.Fail(what + " end to end: decoder " + Describe(o) + ", open " + open.status.ToString() + " recovered " +
           std::to_string(open.stats.recovered_sequence));
  }
}

std::string Mutated(const std::string& s, std::size_t offset, std::string_view bytes) {
  std::string out = s;
  out.replace(offset, bytes.size(), bytes);
  return out;
}

std::string FlipBit(const std::string& s, std::uint64_t bit) {
  std::string out = s;
  out[bit / 8] = static_cast<char>(out[bit / 8] ^ (1 << (bit % 8)));
  return out;
}

std::string RandomBytes(std::mt19937_64& rng, std::size_t n) {
  std::string out(n, '\0');
  for (char& ch : out) ch = static_cast<char>(rng() & 0xff);
  return out;
}

std::string U32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// True if byte `b` of the intact segment lies inside the zero payload of a
// padding record (format version 3: the header's and each group's), more
// than 8 bytes from either end. Such bytes are all alike to the reader (a
// damaged padding record: its CRC fails), so the exhaustive loops visit the
// first and last 8 of each payload and skip the rest, which would otherwise
// be most of the segment (each group takes a 4 KiB page).
bool InsidePaddingPayload(const Corpus& c, std::size_t b) {
  auto inside = [b](std::size_t record, std::size_t end) {
    const std::size_t payload = record + wal::kRecordHeaderBytes;
    return b >= payload + 8 && b + 8 < end;
  };
  if (!c.spans.empty() && inside(wal::kSegmentHeaderBytes, c.spans[0].offset)) return true;
  for (const RecordSpan& r : c.spans)
    if (r.padding > 0 && inside(r.end - r.padding, r.end)) return true;
  return false;
}

// The record index holding byte `b` of the intact segment (its padding
// record included), or -1 (header and its padding).
int RecordAt(const Corpus& c, std::size_t b) {
  for (std::size_t r = 0; r < c.spans.size(); ++r)
    if (b >= c.spans[r].offset && b < c.spans[r].end) return static_cast<int>(r);
  return -1;
}

// The rule for damage to bytes [from, to) of the intact segment: Corruption
// if a record lies wholly after the damage (committed data follows), else a
// torn tail that keeps the groups wholly before it.
WalExpect RuleFor(const Corpus& c, std::size_t from, std::size_t to) {
  for (const RecordSpan& s : c.spans)
    if (s.offset >= to) return Corrupt();
  if (from < wal::kSegmentHeaderBytes) return Prefix(c, 0);
  std::size_t keep = 0;
  while (keep < c.spans.size() && c.spans[keep].end <= from) ++keep;
  return Prefix(c, keep);
}

// The range of bytes that differ between two equal-sized strings.
std::pair<std::size_t, std::size_t> Changed(const std::string& a, const std::string& b) {
  std::size_t from = 0, to = a.size();
  while (from < a.size() && a[from] == b[from]) ++from;
  while (to > from && a[to - 1] == b[to - 1]) --to;
  return {from, to};
}

// --- WAL: every single-bit flip

TEST(CorruptionTest, WalEveryBitFlip) {
  const Corpus& c = GetCorpus();
  ASSERT_GE(c.spans.size(), 20u);
  ASSERT_EQ(c.spans.back().end, c.segment.size());
  std::cout << "segment: " << c.segment.size() << " bytes, " << c.spans.size() << " groups; seed " << kSeed
            << "\n";
  Report r("wal bit flips");
  std::uint64_t undetected_header_reserved = 0, undetected_padding = 0;
  std::mt19937_64 rng(kSeed);
  const std::size_t last = c.spans.size() - 1;
  for (std::uint64_t bit = 0; bit < 8 * c.segment.size(); ++bit) {
    const std::size_t b = bit / 8;
    if (InsidePaddingPayload(c, b)) continue;
    const int rec = RecordAt(c, b);
    // Header or an earlier record: a later valid record proves the damage is
    // not a torn write. The last record: the documented torn-tail limit.
    WalExpect e = (rec == static_cast<int>(last)) ? Prefix(c, last) : Corrupt();
    std::string bytes = FlipBit(c.segment, bit);
    std::uint64_t undetected_before = r.undetected;
    WalOutcome o = CheckWal(c, AsBytes(bytes), e,
                            "flip of bit " + std::to_string(bit % 8) + " at byte " + std::to_string(b) +
                                " (record " + std::to_string(rec) + ")",
                            r);
    if (r.undetected > undetected_before) {
      if (rec < 0) ++undetected_header_reserved;
      if (rec >= 0 && b >= c.spans[rec].payload_end) ++undetected_padding;
    }
    if (rng() % 100 == 0) CheckWalEndToEnd(c, bytes, o, "flip at bit " + std::to_string(bit), r);
  }
  r.Print();
  std::cout << "[wal bit flips] undetected in the header's reserved bytes 60..63: "
            << undetected_header_reserved << ", in record padding: " << undetected_padding << "\n";
  // The segment header's trailing reserved u32 (bytes 60..63, outside the
  // header CRC) and the zero padding after each record payload (outside the
  // record CRC) must be zero (docs/wal_format.md): a flip there is caught
  // like any other. The two counts above stay 0; they once were not.
  r.ExpectClean();
}

// A segment holding only its header and the header's padding record
// (created, nothing logged): any damage to the header is a torn creation,
// never an error (the padding record after it is no evidence of a durable
// header: the two are one append).
TEST(CorruptionTest, WalHeaderOnlySegmentEveryBitFlip) {
  const Corpus& c = GetCorpus();
  const std::string header = c.segment.substr(0, c.spans.at(0).offset);
  ASSERT_EQ(header.size(), wal::kWalPageBytes);
  Report r("wal header-only flips");
  for (std::uint64_t bit = 0; bit < 8 * wal::kSegmentHeaderBytes; ++bit) {
    std::string bytes = FlipBit(header, bit);
    WalOutcome o = ScanAndDecode(AsBytes(bytes), c.log.groups());
    ++r.mutations;
    if (o.status.ok() && !o.scan.header_valid && o.scan.groups == 0 && o.scan.tail_bytes == header.size()) {
      ++r.as_expected;
    } else {
      if (o.status.ok() && o.scan.header_valid) ++r.undetected;
      r.Fail("flip at bit " + std::to_string(bit) + ": expected header invalid, 0 groups; got " +
             Describe(o));
    }
  }
  r.Print();
  // Bytes 60..63 are checked too (see above).
  r.ExpectClean();
}

// --- WAL: every truncation length

TEST(CorruptionTest, WalEveryTruncation) {
  const Corpus& c = GetCorpus();
  Report r("wal truncations");
  for (std::size_t len = 0; len <= c.segment.size(); ++len) {
    if (len < c.segment.size() && InsidePaddingPayload(c, len)) continue;
    // Groups wholly inside the prefix, padding included; a record whose
    // payload is whole but whose padding is cut may count either way.
    std::size_t keep = 0;
    while (keep < c.spans.size() && c.spans[keep].end <= len) ++keep;
    WalExpect e = Prefix(c, keep);
    if (keep < c.spans.size() && c.spans[keep].payload_end <= len) {
      WalOutcome o = ScanAndDecode(AsBytes(c.segment.substr(0, len)), c.log.groups());
      // The record counts, and the valid end is its padded end: recovery
      // zero-fills the cut padding so appends resume where a reader looks.
      if (o.status.ok() && o.scan.groups == keep + 1)
        e = {WalExpect::kPrefix, keep + 1, (len + 7) & ~std::size_t{7}};
    }
    CheckWal(c, AsBytes(c.segment.substr(0, len)), e, "truncation to " + std::to_string(len) + " bytes", r);
  }
  r.Print();
  r.ExpectClean();
}

// End to end consequence of the case above. The segment ends inside the
// padding of its last record, whose group a checkpoint covers (so open
// replays nothing and keeps appending to that segment). A group written and
// acknowledged afterwards must survive the next open.
TEST(CorruptionTest, WalAppendAfterTruncatedPaddingKeepsCommits) {
  const Corpus& c = GetCorpus();
  // The last record whose payload is not a multiple of 8 long.
  std::size_t r = c.spans.size();
  while (r > 0 && c.spans[r - 1].payload_end == c.spans[r - 1].end) --r;
  ASSERT_GT(r, 0u);
  const RecordSpan& s = c.spans[r - 1];
  std::span<const LoggedGroup> groups(c.log.groups());
  env::SimFileSystem scratch;
  ASSERT_TRUE(format_test::WriteSegmentFile(scratch, "/db", kFixedUuid, 1, 1, groups.first(r)).ok());
  const std::string ckpt = format_test::WriteCheckpointFile(scratch, "/db", kFixedUuid).value();

  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/db").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), c.segment.substr(0, s.payload_end)).ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(groups[r - 1].last), ckpt).ok());
  Options o;
  o.durable.checkpoint_on_close = false;  // as if the process died after the acknowledgement
  SequenceNumber acked;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetOpenStats().wal_groups_replayed, 0u);
    WriteBatch b;
    b.AddVertex("AfterRecovery", {{"n", 1}});
    Result<CommitInfo> info = (*g)->Write(b);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    acked = info->sequence;
  }
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  // Regression: the first open resumed appending at the unaligned valid
  // end while the reader looks for the next record at the next multiple of
  // 8, so the acknowledged group was dropped as a torn tail. Recovery now
  // zero-fills up to the multiple of 8 first.
  EXPECT_EQ((*g)->GetSnapshot().sequence(), acked)
      << "tail_bytes_truncated " << (*g)->GetOpenStats().tail_bytes_truncated;
}

// --- WAL: structured cases

std::string Record(const Corpus& c, std::size_t i) {
  return c.segment.substr(c.spans[i].offset, c.spans[i].end - c.spans[i].offset);
}

// The segment header followed by the given records of the intact segment.
std::string Splice(const Corpus& c, const std::vector<std::size_t>& records) {
  std::string out = c.segment.substr(0, c.spans.at(0).offset);  // with the header's padding
  for (std::size_t i : records) out += Record(c, i);
  return out;
}

// Rewrites the CRC of the record at `offset` to match its (changed) bytes.
std::string FixRecordCrc(std::string s, std::size_t offset) {
  std::uint32_t length;
  std::memcpy(&length, s.data() + offset + 4, 4);
  length = std::min<std::uint32_t>(length,
                                   static_cast<std::uint32_t>(s.size() - offset - wal::kRecordHeaderBytes));
  std::uint32_t crc = base::Crc32cExtend(0, s.data() + offset + 4, wal::kRecordHeaderBytes - 4);
  crc = base::Crc32cExtend(crc, s.data() + offset + wal::kRecordHeaderBytes, length);
  return Mutated(s, offset, U32(crc));
}

TEST(CorruptionTest, WalStructuredCases) {
  const Corpus& c = GetCorpus();
  const std::size_t n = c.spans.size();
  std::mt19937_64 rng(kSeed + 1);
  Report r("wal structured");
  std::uint64_t dropped_by_sector_rule = 0;
  auto check = [&](const std::string& bytes, const WalExpect& e, const std::string& what) {
    WalOutcome o = CheckWal(c, AsBytes(bytes), e, what, r);
    CheckWalEndToEnd(c, bytes, o, what, r);
  };

  // Zeroed and garbage 512-byte sectors.
  for (std::size_t at = 0; at < c.segment.size(); at += env::kSectorSize) {
    const std::size_t len = std::min<std::size_t>(env::kSectorSize, c.segment.size() - at);
    for (bool zero : {true, false}) {
      std::string bytes = Mutated(c.segment, at, zero ? std::string(len, '\0') : RandomBytes(rng, len));
      auto [from, to] = Changed(c.segment, bytes);
      WalExpect e = RuleFor(c, from, to);
      // The documented rule's reach: damage that wipes the last record's
      // header as well as the end of the one before drops both groups.
      if (e.kind == WalExpect::kPrefix && e.groups + 1 < n) ++dropped_by_sector_rule;
      check(bytes, e, std::string(zero ? "zeroed" : "garbage") + " sector at " + std::to_string(at));
    }
  }
  // Garbage or zeros past EOF (a grown file after power loss): all groups.
  for (std::size_t len : {1, 7, 8, 31, 32, 100, 512, 4096}) {
    check(c.segment + RandomBytes(rng, len), Prefix(c, n), "garbage appended: " + std::to_string(len));
    check(c.segment + std::string(len, '\0'), Prefix(c, n), "zeros appended: " + std::to_string(len));
  }
  // Record length field: 0, remaining + 1, 2^32 - 1; in the first, a middle
  // and the last record; CRC left alone, and recomputed over what the length
  // now claims (a reader must not rely on the CRC alone).
  for (std::size_t i : {std::size_t{0}, n / 2, n - 1}) {
    const std::size_t off = c.spans[i].offset;
    const auto remaining = static_cast<std::uint32_t>(c.segment.size() - off - wal::kRecordHeaderBytes);
    for (std::uint32_t len : {0u, remaining + 1, 0xFFFFFFFFu}) {
      std::string bytes = Mutated(c.segment, off + 4, U32(len));
      std::string what = "record " + std::to_string(i) + " length " + std::to_string(len);
      check(bytes, i == n - 1 ? Prefix(c, n - 1) : Corrupt(), what);
      // With a matching CRC, a zero-length record is whole but undecodable:
      // Corruption before a later group. In the last record it is a torn
      // tail (format version 3): a group counts only with its padding
      // record, and where that must be lie the old payload's bytes, as a
      // torn append could leave them. The impossible lengths stay a torn
      // tail in the last record.
      check(FixRecordCrc(bytes, off), i == n - 1 ? Prefix(c, n - 1) : Corrupt(), what + " (CRC fixed)");
    }
  }
  // Out-of-sequence records, each CRC-valid: a gap, a duplicate, a swap,
  // and a record from the start appended at the end.
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  auto without = all;
  without.erase(without.begin() + 3);
  check(Splice(c, without), Corrupt(), "sequence gap (record 3 missing)");
  auto last_gap = all;
  last_gap.erase(last_gap.end() - 2);
  check(Splice(c, last_gap), Corrupt(), "sequence gap before the last record");
  auto dup = all;
  dup.insert(dup.begin() + 4, 4);
  check(Splice(c, dup), Corrupt(), "duplicate record 4");
  auto swapped = all;
  std::swap(swapped[5], swapped[6]);
  check(Splice(c, swapped), Corrupt(), "records 5 and 6 swapped");
  auto again = all;
  again.push_back(0);
  check(Splice(c, again), Corrupt(), "record 0 repeated at the end");
  // A CRC-valid record whose payload does not decode (first byte: a batch
  // count far beyond the payload): Corruption even as the last record.
  for (std::size_t i : {std::size_t{1}, n - 1}) {
    const std::size_t payload = c.spans[i].offset + wal::kRecordHeaderBytes;
    check(FixRecordCrc(Mutated(c.segment, payload, "\x7f"), c.spans[i].offset), Corrupt(),
          "undecodable CRC-valid record " + std::to_string(i));
  }
  // Unknown format version, header CRC recomputed: written whole by another
  // format, so Unimplemented (never salvaged or cut), decoder and open alike.
  std::string v2 = Mutated(c.segment, 8, U32(wal::kFormatVersion + 1));
  v2 = Mutated(v2, 56, U32(base::Crc32c(v2.data(), 56)));
  EXPECT_EQ(ScanAndDecode(AsBytes(v2), c.log.groups()).status.code(), StatusCode::kUnimplemented);
  for (bool salvage : {false, true})
    EXPECT_EQ(OpenFiles({{wal::SegmentFileName(1), v2}}, salvage).status.code(), StatusCode::kUnimplemented);
  r.Print();
  std::cout
      << "[wal structured] sector damage that also wiped the last record's start (documented rule: torn "
         "tail, acknowledged groups before it dropped): "
      << dropped_by_sector_rule << "\n";
  r.ExpectClean();
}

// A header with a valid CRC and an unknown version was written whole: it is
// no torn creation, and must be reported, not removed.
TEST(CorruptionTest, WalUnknownVersionOfAnEmptySegmentIsAnError) {
  const Corpus& c = GetCorpus();
  std::string v2 = Mutated(c.segment.substr(0, wal::kSegmentHeaderBytes), 8, U32(wal::kFormatVersion + 1));
  v2 = Mutated(v2, 56, U32(base::Crc32c(v2.data(), 56)));
  WalOutcome o = ScanAndDecode(AsBytes(v2), c.log.groups());
  EXPECT_EQ(o.status.code(), StatusCode::kUnimplemented) << Describe(o);
  env::SimFileSystem fs;
  OpenOutcome open = OpenFiles({{wal::SegmentFileName(1), v2}}, /*salvage=*/false, &fs);
  EXPECT_EQ(open.status.code(), StatusCode::kUnimplemented) << open.status.ToString();
  EXPECT_EQ(fs.ReadFileForTest("/db/" + wal::SegmentFileName(1)).value(), v2);
}

// --- WAL: across segments, end to end

TEST(CorruptionTest, WalSegmentsAcrossFiles) {
  const Corpus& c = GetCorpus();
  const auto& groups = c.log.groups();
  const std::size_t half = groups.size() / 2;
  auto segment = [](const wal::Uuid& uuid, std::uint64_t number, SequenceNumber first,
                    std::span<const LoggedGroup> gs) {
    env::SimFileSystem fs;
    return format_test::WriteSegmentFile(fs, "/db", uuid, number, first, gs).value();
  };
  std::span<const LoggedGroup> all(groups);
  const std::string s1 = segment(kFixedUuid, 1, 1, all.first(half));
  const std::string s2 = segment(kFixedUuid, 2, groups[half].first, all.subspan(half));
  const SequenceNumber last = groups.back().last;

  OpenOutcome ok = OpenFiles({{wal::SegmentFileName(1), s1}, {wal::SegmentFileName(2), s2}});
  ASSERT_TRUE(ok.status.ok()) << ok.status.ToString();
  EXPECT_EQ(ok.dump, c.log.states()[last]);

  wal::Uuid other = kFixedUuid;
  other[0] ^= 1;
  OpenOutcome foreign =
      OpenFiles({{wal::SegmentFileName(1), s1},
                 {wal::SegmentFileName(2), segment(other, 2, groups[half].first, all.subspan(half))}});
  EXPECT_EQ(foreign.status.code(), StatusCode::kCorruption)
      << "another graph's segment: " << foreign.status.ToString();

  OpenOutcome gap = OpenFiles(
      {{wal::SegmentFileName(1), s1},
       {wal::SegmentFileName(2), segment(kFixedUuid, 2, groups[half + 1].first, all.subspan(half + 1))}});
  EXPECT_EQ(gap.status.code(), StatusCode::kCorruption) << "gap between segments: " << gap.status.ToString();

  OpenOutcome overlap = OpenFiles(
      {{wal::SegmentFileName(1), s1},
       {wal::SegmentFileName(2), segment(kFixedUuid, 2, groups[half - 1].first, all.subspan(half - 1))}});
  EXPECT_EQ(overlap.status.code(), StatusCode::kCorruption)
      << "overlapping segments: " << overlap.status.ToString();

  // An old generation of segment 2 (the groups of segment 1 again).
  OpenOutcome stale = OpenFiles(
      {{wal::SegmentFileName(1), s1}, {wal::SegmentFileName(2), segment(kFixedUuid, 2, 1, all.first(half))}});
  EXPECT_EQ(stale.status.code(), StatusCode::kCorruption) << "stale segment: " << stale.status.ToString();

  // Damage in the last record of segment 1 is not a torn tail: segment 2
  // was written after it was synced.
  auto spans1 = format_test::RecordSpans(AsBytes(s1));
  std::string damaged = FlipBit(s1, 8 * (spans1.back().offset + 40));
  OpenOutcome torn_mid = OpenFiles({{wal::SegmentFileName(1), damaged}, {wal::SegmentFileName(2), s2}});
  EXPECT_EQ(torn_mid.status.code(), StatusCode::kCorruption) << torn_mid.status.ToString();

  // salvage_wal_prefix gives up what follows the damage, and says so: damage
  // in the middle of segment 1 ...
  {
    env::SimFileSystem fs;
    std::string mid = FlipBit(s1, 8 * (spans1[2].offset + 40));
    OpenOutcome salvaged =
        OpenFiles({{wal::SegmentFileName(1), mid}, {wal::SegmentFileName(2), s2}}, /*salvage=*/true, &fs);
    ASSERT_TRUE(salvaged.status.ok()) << salvaged.status.ToString();
    EXPECT_TRUE(salvaged.stats.salvaged);
    EXPECT_EQ(salvaged.stats.recovered_sequence, groups[1].last);
    EXPECT_EQ(salvaged.dump, c.log.states()[groups[1].last]);
    EXPECT_TRUE(fs.Exists("/db/" + wal::SegmentFileName(2) + ".salvaged").value());
  }
  // ... and in the last record of segment 1, before segment 2.
  {
    env::SimFileSystem fs;
    OpenOutcome salvaged =
        OpenFiles({{wal::SegmentFileName(1), damaged}, {wal::SegmentFileName(2), s2}}, /*salvage=*/true, &fs);
    // Regression: ScanSegment reports this damage as a torn tail (OK), and
    // recovery's "damage before the next segment" check returned Corruption
    // without consulting salvage_wal_prefix; it salvages now.
    ASSERT_TRUE(salvaged.status.ok()) << salvaged.status.ToString();
    EXPECT_TRUE(salvaged.stats.salvaged);
    SequenceNumber kept = groups[half - 2].last;
    EXPECT_EQ(salvaged.stats.recovered_sequence, kept);
    EXPECT_EQ(salvaged.dump, c.log.states()[kept]);
    EXPECT_TRUE(fs.Exists("/db/" + wal::SegmentFileName(2) + ".salvaged").value());
  }
}

// --- WAL damage that the checkpoint covers, a checkpoint ahead of the log,
// and salvage under crashes

// Segment 1 holds the first half of the corpus groups and segment 2 the
// rest; `checkpoint` is a checkpoint of the state after group
// `checkpoint_groups` (counted from 1).
struct TwoSegments {
  std::string s1, s2;
  std::vector<RecordSpan> spans1;
  std::string checkpoint;
  SequenceNumber checkpoint_sequence = 0;
};

TwoSegments MakeTwoSegments(const Corpus& c, std::size_t checkpoint_groups) {
  const auto& groups = c.log.groups();
  const std::size_t half = groups.size() / 2;
  std::span<const LoggedGroup> all(groups);
  TwoSegments t;
  {
    env::SimFileSystem fs;
    t.s1 = format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, all.first(half)).value();
  }
  {
    env::SimFileSystem fs;
    t.s2 = format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 2, groups[half].first, all.subspan(half))
               .value();
  }
  t.spans1 = format_test::RecordSpans(AsBytes(t.s1));
  env::SimFileSystem fs;
  EXPECT_TRUE(format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, all.first(checkpoint_groups)).ok());
  t.checkpoint = format_test::WriteCheckpointFile(fs, "/db", kFixedUuid).value();
  t.checkpoint_sequence = groups[checkpoint_groups - 1].last;
  return t;
}

// Regression: damage in WAL records that the loaded checkpoint already holds
// failed Open, and salvage then cut the log there and gave up the intact,
// acknowledged groups after it.
TEST(CorruptionTest, WalDamageCoveredByTheCheckpointIsSkippedAndReported) {
  const Corpus& c = GetCorpus();
  const SequenceNumber last = c.log.groups().back().last;
  const TwoSegments t = MakeTwoSegments(c, 5);
  const std::string damaged = FlipBit(t.s1, 8 * (t.spans1[2].offset + 40));
  for (bool salvage : {false, true}) {
    SCOPED_TRACE(salvage ? "salvage_wal_prefix" : "default");
    env::SimFileSystem fs;
    OpenOutcome open = OpenFiles({{wal::SegmentFileName(1), damaged},
                                  {wal::SegmentFileName(2), t.s2},
                                  {checkpoint::CheckpointFileName(t.checkpoint_sequence), t.checkpoint}},
                                 salvage, &fs);
    ASSERT_TRUE(open.status.ok()) << open.status.ToString();
    EXPECT_EQ(open.stats.checkpoint_sequence, t.checkpoint_sequence);
    EXPECT_EQ(open.stats.recovered_sequence, last);
    EXPECT_EQ(open.dump, c.log.states()[last]);
    EXPECT_FALSE(open.stats.salvaged);
    // Reading resumes where the checkpoint says the log continues (after
    // group 5): every byte from the damage to there is skipped.
    EXPECT_EQ(open.stats.wal_covered_damage_bytes, t.spans1[5].offset - t.spans1[2].offset);
    EXPECT_FALSE(fs.Exists("/db/" + wal::SegmentFileName(2) + ".salvaged").value());
  }
  // Damage above the checkpoint is still Corruption.
  const std::string uncovered = FlipBit(t.s1, 8 * (t.spans1[7].offset + 40));
  OpenOutcome open = OpenFiles({{wal::SegmentFileName(1), uncovered},
                                {wal::SegmentFileName(2), t.s2},
                                {checkpoint::CheckpointFileName(t.checkpoint_sequence), t.checkpoint}});
  EXPECT_EQ(open.status.code(), StatusCode::kCorruption) << open.status.ToString();
}

// Regression: a checkpoint newer than the log's end (the log's last pages
// never reached the disk, e.g. after a failed fsync and a checkpoint of what
// was read back) made Open append the next group to the last segment after
// a sequence gap, and the graph could not be opened again.
TEST(CorruptionTest, CheckpointAheadOfTheLogStartsANewSegment) {
  const Corpus& c = GetCorpus();
  const TwoSegments t = MakeTwoSegments(c, 5);
  std::string short_log;
  {
    env::SimFileSystem scratch;
    short_log = format_test::WriteSegmentFile(scratch, "/db", kFixedUuid, 1, 1,
                                              std::span<const LoggedGroup>(c.log.groups()).first(3))
                    .value();
  }
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/db").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), short_log).ok());
  ASSERT_TRUE(
      fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(t.checkpoint_sequence), t.checkpoint).ok());
  Options o;
  o.durable.checkpoint_on_close = false;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    WriteBatch b;
    b.AddVertex("Late", {{"k", 1}});
    Result<CommitInfo> r = (*g)->Write(std::move(b));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->sequence, t.checkpoint_sequence + 1);
  }
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().sequence(), t.checkpoint_sequence + 1);
}

// Salvage sets the damaged segment and every later one aside (renamed, never
// edited) and puts a copy of the valid prefix in the damaged one's place; a
// crash at any operation of a salvaging Open, under every crash policy,
// leaves a directory that the next salvage recovers to the same state, with
// every original byte still in a *.salvaged file.
TEST(CorruptionTest, SalvageSetsFilesAsideAndSurvivesACrashAtEveryOperation) {
  const Corpus& c = GetCorpus();
  const auto& groups = c.log.groups();
  const TwoSegments t = MakeTwoSegments(c, 1);
  const std::string damaged = FlipBit(t.s1, 8 * (t.spans1[2].offset + 40));
  const SequenceNumber kept = groups[1].last;
  const std::string seg1 = "/db/" + wal::SegmentFileName(1);
  const std::string seg2 = "/db/" + wal::SegmentFileName(2);
  auto setup = [&](env::SimFileSystem& fs) {
    ASSERT_TRUE(fs.CreateDir("/db").ok());
    ASSERT_TRUE(fs.WriteFileForTest(seg1, damaged).ok());
    ASSERT_TRUE(fs.WriteFileForTest(seg2, t.s2).ok());
  };
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.salvage_wal_prefix = true;
  auto check_salvaged = [&](env::SimFileSystem& fs, const std::string& what) {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << what << ": " << g.status().ToString();
    EXPECT_EQ((*g)->GetSnapshot().sequence(), kept) << what;
    EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), c.log.states()[kept]) << what;
    g->reset();
    // And the salvaged directory opens again, with or without the option.
    for (bool salvage : {true, false}) {
      Options again = o;
      again.durable.salvage_wal_prefix = salvage;
      auto reopened = GraphImpl::OpenDurable(again, "/db", &fs);
      ASSERT_TRUE(reopened.ok()) << what << ", reopened: " << reopened.status().ToString();
      EXPECT_EQ((*reopened)->GetSnapshot().sequence(), kept) << what;
    }
    auto aside1 = fs.ReadFileForTest(seg1 + ".salvaged");
    auto aside2 = fs.ReadFileForTest(seg2 + ".salvaged");
    EXPECT_TRUE(aside1.ok() && *aside1 == damaged) << what << ": segment 1 was not set aside whole";
    EXPECT_TRUE(aside2.ok() && *aside2 == t.s2) << what << ": segment 2 was not set aside whole";
  };
  std::uint64_t first_op = 0, last_op = 0;
  {
    env::SimFileSystem fs;
    setup(fs);
    first_op = fs.operation_count() + 1;
    check_salvaged(fs, "no crash");
    last_op = fs.operation_count();
    EXPECT_EQ(fs.ReadFileForTest(seg1).value().substr(0, t.spans1[1].end), t.s1.substr(0, t.spans1[1].end));
  }
  std::uint64_t states = 0;
  for (std::uint64_t n = first_op; n <= last_op; ++n) {
    env::SimFileSystem run;
    setup(run);
    run.SetCrashAtOperation(n);
    { auto g = GraphImpl::OpenDurable(o, "/db", &run); }
    for (env::CrashPolicy policy : env::kAllCrashPolicies) {
      auto copy = run.Clone();
      copy->Crash(policy, n);
      check_salvaged(*copy, "crash at operation " + std::to_string(n) + " under " +
                                std::string(env::CrashPolicyName(policy)));
      ++states;
      if (HasFatalFailure()) return;
    }
  }
  std::cout << "[salvage crash] operations: " << last_op - first_op + 1
            << ", crash states recovered: " << states << "\n";
}

// Finding: a second salvage (no checkpoint since the first) renamed the
// prefix copy onto the first salvage's *.salvaged file, destroying the
// original bytes it had set aside. Set-aside files are never overwritten.
TEST(CorruptionTest, SecondSalvageKeepsTheFirstSalvagedFiles) {
  const Corpus& c = GetCorpus();
  const auto& groups = c.log.groups();
  const TwoSegments t = MakeTwoSegments(c, 1);
  const std::string damaged = FlipBit(t.s1, 8 * (t.spans1[2].offset + 40));
  const std::string seg1 = "/db/" + wal::SegmentFileName(1);
  env::SimFileSystem fs;
  OpenOutcome first =
      OpenFiles({{wal::SegmentFileName(1), damaged}, {wal::SegmentFileName(2), t.s2}}, /*salvage=*/true, &fs);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  ASSERT_EQ(first.stats.recovered_sequence, groups[1].last);
  const std::string prefix = fs.ReadFileForTest(seg1).value();
  ASSERT_EQ(fs.ReadFileForTest(seg1 + ".salvaged").value(), damaged);
  // New damage in the prefix copy, which is no longer the last segment.
  ASSERT_TRUE(fs.FlipBit(seg1, 8 * (t.spans1[1].offset + 40)).ok());
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.salvage_wal_prefix = true;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_TRUE((*g)->GetOpenStats().salvaged);
    EXPECT_EQ((*g)->GetSnapshot().sequence(), groups[0].last);
  }
  EXPECT_EQ(fs.ReadFileForTest(seg1 + ".salvaged").value(), damaged)
      << "the first salvage's file was replaced";
  EXPECT_EQ(fs.ReadFileForTest("/db/" + wal::SegmentFileName(2) + ".salvaged").value(), t.s2);
  auto second = fs.ReadFileForTest(seg1 + ".salvaged.1");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->size(), prefix.size());
  EXPECT_NE(*second, prefix);  // the copy, with the new damage
  o.durable.salvage_wal_prefix = false;
  auto again = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->GetSnapshot().sequence(), groups[0].last);
}

// Finding: salvaging a segment whose header is damaged put a 0-byte copy of
// its "valid prefix" in its place, a damaged segment that every later Open
// refused. Such a segment is set aside with nothing in its place.
TEST(CorruptionTest, SalvageOfADamagedHeaderOpensAgain) {
  const Corpus& c = GetCorpus();
  const auto& groups = c.log.groups();
  const TwoSegments t = MakeTwoSegments(c, 1);
  const SequenceNumber kept = groups[groups.size() / 2 - 1].last;  // the end of segment 1
  const std::string damaged2 = FlipBit(t.s2, 8 * 20);              // a UUID byte of the header
  env::SimFileSystem fs;
  OpenOutcome first = OpenFiles({{wal::SegmentFileName(1), t.s1}, {wal::SegmentFileName(2), damaged2}},
                                /*salvage=*/true, &fs);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  EXPECT_TRUE(first.stats.salvaged);
  EXPECT_EQ(first.stats.recovered_sequence, kept);
  EXPECT_EQ(fs.ReadFileForTest("/db/" + wal::SegmentFileName(2) + ".salvaged").value(), damaged2);
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.salvage_wal_prefix = true;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_EQ((*g)->GetSnapshot().sequence(), kept);
    WriteBatch b;
    b.AddVertex("Late", {{"k", 1}});
    Result<CommitInfo> r = (*g)->Write(std::move(b));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->sequence, kept + 1);
  }
  for (bool salvage : {true, false}) {
    SCOPED_TRACE(salvage ? "salvage_wal_prefix" : "default");
    o.durable.salvage_wal_prefix = salvage;
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetSnapshot().sequence(), kept + 1);
  }
}

// --- Checkpoint

struct CkptVerdict {
  bool rejected = false;
  bool content_changed = false;
};

// Loads `bytes` and expects Corruption. With `parallel_too`, the parallel
// loader (3 threads) must reach the same verdict with the same message;
// with `end_to_end`, opening a directory holding the file must too.
CkptVerdict CheckCheckpoint(const Corpus& c, const std::string& bytes, const std::string& what, Report& r,
                            bool end_to_end = false, bool parallel_too = true) {
  checkpoint::Header h;
  std::string dump;
  Status s = format_test::LoadCheckpointForTest(AsBytes(bytes), &h, &dump);
  if (parallel_too) {
    checkpoint::Header h3;
    std::string dump3;
    Status s3 = format_test::LoadCheckpointForTest(AsBytes(bytes), &h3, &dump3, /*threads=*/3);
    EXPECT_TRUE(s3.ToString() == s.ToString() && (!s.ok() || dump3 == dump))
        << what << ": 1 thread gave " << s.ToString() << ", 3 threads " << s3.ToString();
  }
  ++r.mutations;
  CkptVerdict v;
  v.rejected = s.code() == StatusCode::kCorruption;
  if (v.rejected) {
    ++r.as_expected;
  } else {
    if (s.ok()) ++r.undetected;
    v.content_changed = s.ok() && dump != c.checkpoint_dump;
    if (v.content_changed) ++r.content_changed;
    r.Fail(what + ": expected Corruption, got " + s.ToString() +
           (v.content_changed ? " (content differs)" : ""));
  }
  if (end_to_end) {
    ++r.end_to_end;
    OpenOutcome open = OpenFiles({{checkpoint::CheckpointFileName(c.checkpoint_sequence), bytes}});
    if (open.status.code() != s.code()) {
      ++r.end_to_end_disagreements;
      r.Fail(what + " end to end: load " + s.ToString() + ", open " + open.status.ToString());
    }
  }
  return v;
}

TEST(CorruptionTest, CheckpointEveryBitFlip) {
  const Corpus& c = GetCorpus();
  std::cout << "checkpoint: " << c.checkpoint.size() << " bytes, " << c.blocks.size() << " blocks, sequence "
            << c.checkpoint_sequence << "; seed " << kSeed << "\n";
  Report r("checkpoint bit flips");
  std::uint64_t undetected_block_reserved = 0;
  std::mt19937_64 rng(kSeed + 2);
  // Every flip is loaded; the parallel loader's verdict is compared on a
  // sample of them (starting three loader threads per flip was most of
  // this test's 70 s under ASan). A stride prime to 8, so that the sample
  // holds every bit position of a byte.
  const test_util::LoopSample parallel("checkpoint bit flips also loaded on 3 threads", 7);
  SCOPED_TRACE(parallel.Describe());
  for (std::uint64_t bit = 0; bit < 8 * c.checkpoint.size(); ++bit) {
    const std::size_t b = bit / 8;
    std::uint64_t before = r.undetected;
    CheckCheckpoint(c, FlipBit(c.checkpoint, bit),
                    "flip of bit " + std::to_string(bit % 8) + " at byte " + std::to_string(b), r,
                    rng() % 100 == 0, parallel.Tries(bit));
    if (r.undetected > before)
      for (std::size_t blk : c.blocks)
        if (b >= blk + 12 && b < blk + 16) ++undetected_block_reserved;
  }
  r.Print();
  std::cout << "[checkpoint bit flips] undetected in block headers' reserved bytes 12..15: "
            << undetected_block_reserved << "\n";
  // The reserved u32 at bytes 12..15 of each block header lies outside the
  // block CRC; the reader requires it to be zero, so a flip there is caught
  // (the count above stays 0; it once was not).
  r.ExpectClean();
}

TEST(CorruptionTest, CheckpointEveryTruncation) {
  const Corpus& c = GetCorpus();
  Report r("checkpoint truncations");
  for (std::size_t len = 0; len < c.checkpoint.size(); ++len)
    CheckCheckpoint(c, c.checkpoint.substr(0, len), "truncation to " + std::to_string(len), r);
  r.Print();
  r.ExpectClean();
}

TEST(CorruptionTest, CheckpointStructuredCases) {
  const Corpus& c = GetCorpus();
  std::mt19937_64 rng(kSeed + 3);
  Report r("checkpoint structured");
  for (std::size_t at = 0; at < c.checkpoint.size(); at += env::kSectorSize) {
    const std::size_t len = std::min<std::size_t>(env::kSectorSize, c.checkpoint.size() - at);
    CheckCheckpoint(c, Mutated(c.checkpoint, at, std::string(len, '\0')),
                    "zeroed sector at " + std::to_string(at), r, true);
    CheckCheckpoint(c, Mutated(c.checkpoint, at, RandomBytes(rng, len)),
                    "garbage sector at " + std::to_string(at), r, true);
  }
  for (std::size_t len : {1, 15, 16, 17, 100, 512}) {
    CheckCheckpoint(c, c.checkpoint + RandomBytes(rng, len), "garbage appended: " + std::to_string(len), r,
                    true);
    CheckCheckpoint(c, c.checkpoint + std::string(len, '\0'), "zeros appended: " + std::to_string(len), r,
                    true);
  }
  // A copy of the end block appended: a second, CRC-valid end.
  const std::size_t end_block = c.blocks.back();
  CheckCheckpoint(c, c.checkpoint + c.checkpoint.substr(end_block), "end block repeated", r, true);
  for (std::size_t blk : c.blocks) {
    const auto remaining =
        static_cast<std::uint32_t>(c.checkpoint.size() - blk - checkpoint::kBlockHeaderBytes);
    for (std::uint32_t len : {0u, remaining + 1, 0xFFFFFFFFu})
      CheckCheckpoint(c, Mutated(c.checkpoint, blk + 4, U32(len)),
                      "block at " + std::to_string(blk) + " length " + std::to_string(len), r, true);
  }
  // A 512-byte block copied from elsewhere in the file (misdirected write).
  if (c.checkpoint.size() >= 3 * env::kSectorSize)
    CheckCheckpoint(c, Mutated(c.checkpoint, 2 * env::kSectorSize, c.checkpoint.substr(0, env::kSectorSize)),
                    "sector 0 copied over sector 2", r, true);
  // A newer format version with a matching header CRC: an explicit error.
  std::string v2 = Mutated(c.checkpoint, 8, U32(checkpoint::kFormatVersion + 1));
  v2 = Mutated(v2, 76, U32(base::Crc32c(v2.data(), 76)));
  checkpoint::Header h;
  Status s = format_test::LoadCheckpointForTest(AsBytes(v2), &h);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("version"), std::string::npos) << s.ToString();
  EXPECT_EQ(OpenFiles({{checkpoint::CheckpointFileName(c.checkpoint_sequence), v2}}).status.code(),
            StatusCode::kUnimplemented);
  r.Print();
  r.ExpectClean();
}

// Recovery with a damaged newest checkpoint uses the previous one and the
// WAL after it; with no valid checkpoint it refuses to open.
TEST(CorruptionTest, CheckpointFallbackEndToEnd) {
  const Corpus& c = GetCorpus();
  const auto& groups = c.log.groups();
  const std::size_t older_groups = groups.size() / 2;
  std::span<const LoggedGroup> all(groups);
  env::SimFileSystem a, b;
  ASSERT_TRUE(format_test::WriteSegmentFile(a, "/db", kFixedUuid, 1, 1, all.first(older_groups)).ok());
  const std::string older = format_test::WriteCheckpointFile(a, "/db", kFixedUuid).value();
  const std::string segment = format_test::WriteSegmentFile(b, "/db", kFixedUuid, 1, 1, all).value();
  const std::string newest = format_test::WriteCheckpointFile(b, "/db", kFixedUuid).value();
  const SequenceNumber s_old = groups[older_groups - 1].last, s_new = groups.back().last;
  const std::string damaged = FlipBit(newest, 8 * (newest.size() / 2) + 3);

  OpenOutcome fallback = OpenFiles({{wal::SegmentFileName(1), segment},
                                    {checkpoint::CheckpointFileName(s_old), older},
                                    {checkpoint::CheckpointFileName(s_new), damaged}});
  ASSERT_TRUE(fallback.status.ok()) << fallback.status.ToString();
  EXPECT_TRUE(fallback.stats.used_previous_checkpoint);
  EXPECT_EQ(fallback.stats.checkpoint_sequence, s_old);
  EXPECT_EQ(fallback.dump, c.log.states()[s_new]);

  // No valid checkpoint: the log alone rebuilds the graph while it starts at
  // sequence 1; without it, Corruption (never an empty graph).
  OpenOutcome log_alone =
      OpenFiles({{wal::SegmentFileName(1), segment}, {checkpoint::CheckpointFileName(s_new), damaged}});
  ASSERT_TRUE(log_alone.status.ok()) << log_alone.status.ToString();
  EXPECT_TRUE(log_alone.stats.used_previous_checkpoint);
  EXPECT_EQ(log_alone.stats.checkpoint_sequence, 0u);
  EXPECT_EQ(log_alone.dump, c.log.states()[s_new]);
  OpenOutcome none = OpenFiles({{checkpoint::CheckpointFileName(s_new), damaged}});
  EXPECT_EQ(none.status.code(), StatusCode::kCorruption) << none.status.ToString();

  // A checkpoint whose name disagrees with the sequence inside it.
  OpenOutcome renamed = OpenFiles({{checkpoint::CheckpointFileName(s_new + 1), newest}});
  EXPECT_EQ(renamed.status.code(), StatusCode::kCorruption) << renamed.status.ToString();
}

// --- Structure-only damage (CRC recomputed): no crash, no hang, no
// over-allocation; counted, not required to be caught.

TEST(CorruptionTest, CrcFixedMutationsNeverCrash) {
  const Corpus& c = GetCorpus();
  std::uint64_t wal_cases = 0, wal_caught = 0, ckpt_cases = 0, ckpt_caught = 0;
  // WAL: one bit of every payload byte, record CRC recomputed.
  for (std::size_t r = 0; r < c.spans.size(); ++r) {
    for (std::size_t b = c.spans[r].offset + wal::kRecordHeaderBytes; b < c.spans[r].payload_end; ++b) {
      std::string bytes = FixRecordCrc(FlipBit(c.segment, 8 * b + b % 8), c.spans[r].offset);
      WalOutcome o = ScanAndDecode(AsBytes(bytes), c.log.groups());
      ++wal_cases;
      wal_caught += !o.status.ok();
      EXPECT_TRUE(o.status.ok() || o.status.code() == StatusCode::kCorruption) << o.status.ToString();
    }
  }
  // Checkpoint: one bit of every block payload byte, block CRC (it
  // continues the header's) and the trailer's CRC over every block CRC
  // recomputed.
  const std::size_t blocks_end = c.checkpoint.size() - checkpoint::kTrailerBytes;
  const std::uint32_t seed = base::Crc32c(c.checkpoint.data(), checkpoint::kHeaderBytes);
  for (std::size_t i = 0; i < c.blocks.size(); ++i) {
    const std::size_t blk = c.blocks[i];
    const std::size_t end = i + 1 < c.blocks.size() ? c.blocks[i + 1] : blocks_end;
    for (std::size_t b = blk + checkpoint::kBlockHeaderBytes; b < end; ++b) {
      std::string bytes = FlipBit(c.checkpoint, 8 * b + b % 8);
      std::uint32_t crc = base::Crc32cExtend(base::Crc32cExtend(seed, bytes.data() + blk, 8),
                                             bytes.data() + blk + checkpoint::kBlockHeaderBytes,
                                             end - blk - checkpoint::kBlockHeaderBytes);
      bytes = Mutated(bytes, blk + 8, U32(crc));
      std::uint32_t file_crc = seed;
      for (std::size_t k : c.blocks) file_crc = base::Crc32cExtend(file_crc, bytes.data() + k + 8, 4);
      bytes = Mutated(bytes, blocks_end, U32(file_crc));
      checkpoint::Header h;
      Status s = format_test::LoadCheckpointForTest(AsBytes(bytes), &h);
      ++ckpt_cases;
      ckpt_caught += !s.ok();
      EXPECT_TRUE(s.ok() || s.code() == StatusCode::kCorruption) << s.ToString();
    }
  }
  std::cout << "[crc-fixed] wal payload mutations: " << wal_cases << ", rejected by structure: " << wal_caught
            << "; checkpoint payload mutations: " << ckpt_cases << ", rejected by structure: " << ckpt_caught
            << "; crashes: 0\n";
}

}  // namespace
}  // namespace quiver
