// DumpDirectory and DumpFile (include/quiver/dump.h): the text of a small
// graph's files against a golden file, the dump of the format docs' worked
// examples against theirs, what damage, a torn tail and a newer format
// print, the options, and that dumping changes nothing.
//
// The golden files are tests/data/dump/*.golden. After a deliberate change
// of the dump's text (or of the files a graph writes), regenerate them with
//   QUIVER_REGENERATE_GOLDEN=1 quiver_tests --gtest_filter='DumpTest.*Golden*'
// and review the diff.
#include "dump.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "base/crc32c.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "counting_file_system.h"
#include "env/sim_file_system.h"
#include "env_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_environment.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

namespace quiver {
namespace {

const std::string kDir = "/db";
const std::filesystem::path kGoldenDir = std::filesystem::path(QUIVER_TEST_DATA_DIR) / "dump";
const std::filesystem::path kFormatGoldenDir = std::filesystem::path(QUIVER_TESTS_SOURCE_DIR) / "golden";

struct Dumped {
  Status status;
  std::string text;  // the lines, each ending in '\n'
  std::vector<std::string> lines;
};

Dumped Collect(const std::function<Status(const DumpLineFn&)>& dump) {
  Dumped d;
  d.status = dump([&d](std::string_view line) {
    d.lines.emplace_back(line);
    d.text.append(line);
    d.text.push_back('\n');
  });
  return d;
}

Dumped DumpDir(env::FileSystem& fs, const DumpOptions& options = {}, const std::string& dir = kDir) {
  return Collect([&](const DumpLineFn& out) { return DumpGraphDirectory(&fs, dir, options, out); });
}

// The graph's UUID is random (chosen at creation): the golden text holds a
// placeholder in its place.
std::string WithoutUuid(const std::string& text) {
  static const std::regex kUuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  return std::regex_replace(text, kUuid, "<graph-uuid>");
}

// Compares `text` with tests/data/dump/<name>, or writes it there with
// QUIVER_REGENERATE_GOLDEN=1.
void ExpectGolden(const std::string& name, const std::string& text) {
  const std::filesystem::path path = kGoldenDir / name;
  const char* update = std::getenv("QUIVER_REGENERATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(kGoldenDir);
    std::ofstream(path, std::ios::binary) << text;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing: run with QUIVER_REGENERATE_GOLDEN=1";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(text, golden.str())
      << "the dump differs from " << path
      << " (after a deliberate change: QUIVER_REGENERATE_GOLDEN=1, then review the diff)";
}

Options GraphOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  return o;
}

// A small closed graph, one commit group per Write: vertices and edges with
// properties of every type, a property set and removed, a unique index, a
// checkpoint, then an upsert and removals in the log after it.
void MakeGraph(env::SimFileSystem& fs) {
  auto g = GraphImpl::OpenDurable(GraphOptions(), kDir, &fs).value();
  WriteBatch b1;
  NewVertex ada = b1.AddVertex("Person", {{"name", "Ada"},
                                          {"born", 1815},
                                          {"height", 1.65},
                                          {"active", true},
                                          {"photo", Bytes{std::byte{0x00}, std::byte{0xff}}},
                                          {"embedding", FloatVector{0.5f, -2.0f}}});
  NewVertex grace = b1.AddVertex("Person", {{"name", "Grace \"Amazing\"\nHopper"}, {"city", "Zoë's"}});
  b1.AddEdge("KNOWS", ada, grace, {{"since", 1843}});
  ASSERT_TRUE(g->Write(std::move(b1)).ok());
  WriteBatch b2;
  NewVertex london = b2.AddVertex("City", {{"name", "London"}});
  b2.AddEdge("LIVES_IN", VertexId(0), london);
  ASSERT_TRUE(g->Write(std::move(b2)).ok());
  WriteBatch b3;
  b3.SetProperty(VertexId(1), "born", 1906);
  b3.SetProperty(EdgeId(0), "weight", 0.5);
  b3.SetProperty(VertexId(0), "first name", "Augusta");
  b3.RemoveProperty(VertexId(0), "active");
  ASSERT_TRUE(g->Write(std::move(b3)).ok());
  ASSERT_TRUE(g->CreateIndex({.name = "person_name",
                              .label = "Person",
                              .keys = {"name"},
                              .kind = IndexKind::kUnique,
                              .type = ValueType::kString})
                  .ok());
  ASSERT_TRUE(g->Checkpoint().ok());
  WriteBatch b4;
  NewVertex alan = b4.UpsertVertex("Person", {{"name", "Alan"}}, {{"born", 1912}});
  b4.AddEdge("KNOWS", alan, VertexId(0));
  b4.RemoveProperty(EdgeId(0), "weight");
  ASSERT_TRUE(g->Write(std::move(b4)).ok());
  WriteBatch b5;
  b5.RemoveEdge(EdgeId(1));
  b5.RemoveVertex(VertexId(2));
  ASSERT_TRUE(g->Write(std::move(b5)).ok());
  ASSERT_TRUE(g->DropIndex("person_name").ok());
  ASSERT_TRUE(g->Close().ok());
}

std::string OnlyFile(env::SimFileSystem& fs, bool (*match)(std::string_view)) {
  std::string found;
  const std::vector<std::string> names = fs.ListDir(kDir).value();
  for (const std::string& name : names)
    if (match(name)) found = name;
  EXPECT_FALSE(found.empty());
  return kDir + "/" + found;
}

std::span<const std::byte> AsBytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

bool IsCheckpoint(std::string_view name) { return checkpoint::ParseCheckpointFileName(name).has_value(); }
bool IsSegment(std::string_view name) { return wal::ParseSegmentFileName(name).has_value(); }

// The offset in the line "  block at <offset>: <what>, ...".
std::uint64_t BlockOffset(const Dumped& d, const std::string& what) {
  const std::regex block("  block at ([0-9]+): " + what + ",.*");
  std::smatch m;
  for (const std::string& line : d.lines)
    if (std::regex_match(line, m, block)) return std::stoull(m[1]);
  ADD_FAILURE() << "no " << what << " block in\n" << d.text;
  return 0;
}

// Lines [0, n) of `d`: what was printed before line n.
std::vector<std::string> Prefix(const Dumped& d, std::size_t n) {
  return {d.lines.begin(), d.lines.begin() + static_cast<std::ptrdiff_t>(std::min(n, d.lines.size()))};
}

std::size_t LineIndex(const Dumped& d, const std::string& start) {
  for (std::size_t i = 0; i < d.lines.size(); ++i)
    if (d.lines[i].rfind(start, 0) == 0) return i;
  ADD_FAILURE() << "no line starting " << start << " in\n" << d.text;
  return d.lines.size();
}

TEST(DumpTest, SmallGraphMatchesItsGolden) {
  test_util::ScopedEngineWalFillStep engine_step;  // the golden shows the segment's zeroed end
  env::SimFileSystem fs;
  MakeGraph(fs);
  const Dumped d = DumpDir(fs);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString() << "\n" << d.text;
  ExpectGolden("graph.golden", WithoutUuid(d.text));
}

// The golden files the format docs take apart byte by byte (fixed UUID),
// dumped through the public DumpFile on the real file system: the docs show
// this text beside their bytes.
TEST(DumpTest, WorkedExamplesMatchTheirGolden) {
  std::string text;
  for (const char* name :
       {"wal-small.log", "checkpoint-small.qck", "wal-indexes.log", "checkpoint-indexes.qck"}) {
    const std::filesystem::path path = kFormatGoldenDir / name;
    // DumpFile wants the real names: copy each under one.
    env::test::TempDir tmp;
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    checkpoint::Header header;
    const std::string real = std::string(name).starts_with("wal-")
                                 ? wal::SegmentFileName(1)
                                 : (checkpoint::DecodeHeader(AsBytes(bytes), &header).ok()
                                        ? checkpoint::CheckpointFileName(header.sequence)
                                        : "checkpoint-bad-header");
    std::filesystem::copy_file(path, tmp.File(real));
    const Dumped d = Collect([&](const DumpLineFn& out) { return DumpFile(tmp.File(real), {}, out); });
    ASSERT_TRUE(d.status.ok()) << name << ": " << d.status.ToString() << "\n" << d.text;
    text += std::string("# ") + name + "\n" + d.text + "\n";
  }
  ExpectGolden("worked-examples.golden", text);
}

// docs/wal_format.md and docs/checkpoint_format.md show excerpts of
// graph.golden: every line they show is there, in the same order ("..."
// stands for lines left out).
TEST(DumpTest, DocsShowExcerptsOfTheGolden) {
  std::ifstream golden_in(kGoldenDir / "graph.golden", std::ios::binary);
  std::vector<std::string> golden;
  for (std::string line; std::getline(golden_in, line);) golden.push_back(line);
  ASSERT_FALSE(golden.empty());
  const std::filesystem::path docs = std::filesystem::path(QUIVER_TESTS_SOURCE_DIR).parent_path() / "docs";
  for (const char* doc : {"wal_format.md", "checkpoint_format.md"}) {
    SCOPED_TRACE(doc);
    std::ifstream in(docs / doc, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t section = text.find("as text: the dump\n");
    ASSERT_NE(section, std::string::npos);
    const std::size_t open = text.find("\n```\n", section);
    const std::size_t close = text.find("\n```\n", open + 1);
    ASSERT_NE(close, std::string::npos);
    std::istringstream excerpt(text.substr(open + 5, close - open - 4));
    std::size_t at = 0;
    int shown = 0;
    for (std::string line; std::getline(excerpt, line);) {
      if (line.find_first_not_of(' ') != std::string::npos &&
          line.substr(line.find_first_not_of(' ')) == "...")
        continue;
      const auto it = std::find(golden.begin() + static_cast<std::ptrdiff_t>(at), golden.end(), line);
      ASSERT_NE(it, golden.end()) << "not in graph.golden (in this order): " << line;
      at = static_cast<std::size_t>(it - golden.begin()) + 1;
      ++shown;
    }
    EXPECT_GT(shown, 10);
  }
}

TEST(DumpTest, DamagedCheckpointShowsWhatPrecedesTheDamageThenCorruption) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const Dumped whole = DumpDir(fs, {.wal = false});
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  const std::uint64_t at = BlockOffset(whole, "vertices");
  // A payload byte of the vertices block: its CRC fails.
  ASSERT_TRUE(fs.FlipBit(OnlyFile(fs, IsCheckpoint), (at + checkpoint::kBlockHeaderBytes + 2) * 8).ok());
  const Dumped d = DumpDir(fs, {.wal = false});
  EXPECT_EQ(d.status.code(), StatusCode::kCorruption) << d.status.ToString();
  EXPECT_NE(d.status.message().find("checkpoint-"), std::string::npos) << d.status.ToString();
  EXPECT_NE(d.status.message().find("offset " + std::to_string(at)), std::string::npos)
      << d.status.ToString();
  // Everything before the block as before, then the reason, and nothing else.
  const std::size_t block = LineIndex(whole, "  block at " + std::to_string(at) + ":");
  EXPECT_EQ(Prefix(d, block), Prefix(whole, block));
  ASSERT_EQ(d.lines.size(), block + 1) << d.text;
  EXPECT_EQ(d.lines.back().rfind("  ! stopped at offset " + std::to_string(at) + ": ", 0), 0u) << d.text;
  EXPECT_NE(d.lines.back().find("checksum"), std::string::npos) << d.text;
}

// checkpoint::ScanCheckpointFile, which the dump reads through, makes
// VerifyCheckpointFile's checks in file order: every flipped bit of a
// checkpoint fails both or neither, with the same code, and the scan names
// the damage no later in the file than Verify does (Verify checks all
// framing and the trailer before the blocks' CRCs).
TEST(DumpTest, CheckpointScanAgreesWithVerifyOnEveryBitFlip) {
  struct NoOp final : checkpoint::CheckpointVisitor {
    Status VisitHeader(const checkpoint::Header&) override { return Status::Ok(); }
    Status VisitBlock(const checkpoint::ScannedBlock&) override { return Status::Ok(); }
  } visitor;
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string path = OnlyFile(fs, IsCheckpoint);
  const std::string bytes = fs.ReadFileForTest(path).value();
  for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::string flipped = bytes;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    ASSERT_TRUE(fs.WriteFileForTest(path, flipped).ok());
    auto file = fs.OpenReadable(path).value();
    checkpoint::Header header;
    std::uint64_t verify_at = 0, scan_at = 0;
    const Status verify = checkpoint::VerifyCheckpointFile(*file, &header, &verify_at);
    const Status scan = checkpoint::ScanCheckpointFile(*file, visitor, &scan_at);
    ASSERT_EQ(scan.code(), verify.code())
        << "bit " << bit << ": " << scan.ToString() << " / " << verify.ToString();
    EXPECT_LE(scan_at, verify_at) << "bit " << bit;
  }
}

TEST(DumpTest, DamagedSegmentShowsTheGroupsBeforeTheDamageThenCorruption) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const Dumped whole = DumpDir(fs, {.checkpoint = false});
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  // The third group's first record: committed groups follow it.
  const std::size_t third = LineIndex(whole, "  group at " + std::to_string(3 * wal::kWalPageBytes) + ",");
  const std::uint64_t at = 3 * wal::kWalPageBytes;
  ASSERT_TRUE(fs.FlipBit(OnlyFile(fs, IsSegment), (at + wal::kRecordHeaderBytes + 1) * 8).ok());
  const Dumped d = DumpDir(fs, {.checkpoint = false});
  EXPECT_EQ(d.status.code(), StatusCode::kCorruption) << d.status.ToString();
  EXPECT_EQ(Prefix(d, third), Prefix(whole, third));
  ASSERT_EQ(d.lines.size(), third + 1) << d.text;
  EXPECT_EQ(d.lines.back().rfind("  ! stopped at offset " + std::to_string(at) + ": ", 0), 0u) << d.text;
}

// A group whose record is whole and CRC-valid but whose payload does not
// decode (no writer makes one; a bug would): the group's offset and why.
TEST(DumpTest, UndecodableGroupStopsAtItsOffset) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string path = OnlyFile(fs, IsSegment);
  std::string bytes = fs.ReadFileForTest(path).value();
  const std::size_t record = wal::kWalPageBytes;  // group 1
  std::uint32_t length;
  std::memcpy(&length, bytes.data() + record + 4, 4);
  // Payload: batch count, sequence (8 bytes), first vertex, first edge,
  // op count, then the first operation's kind.
  const std::size_t kind = record + wal::kRecordHeaderBytes + 1 + 8 + 1 + 1 + 1;
  ASSERT_EQ(bytes[kind], 1);  // AddVertex
  bytes[kind] = 99;
  std::uint32_t crc = base::Crc32c(bytes.data() + record + 4, wal::kRecordHeaderBytes - 4);
  crc = base::Crc32cExtend(crc, bytes.data() + record + wal::kRecordHeaderBytes, length);
  std::memcpy(bytes.data() + record, &crc, 4);
  ASSERT_TRUE(fs.WriteFileForTest(path, bytes).ok());
  const Dumped d = DumpDir(fs, {.checkpoint = false});
  EXPECT_EQ(d.status.code(), StatusCode::kCorruption) << d.status.ToString();
  ASSERT_EQ(d.lines.size(), 4u) << d.text;
  EXPECT_EQ(d.lines[2], "  group at 4096, sequence 1");
  EXPECT_EQ(d.lines[3], "  ! stopped at offset 4096: WAL group: bad operation 0 of batch 0");
}

TEST(DumpTest, TornTailIsShownAndIsNoError) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string path = OnlyFile(fs, IsSegment);
  std::string bytes = fs.ReadFileForTest(path).value();
  wal::SegmentScan scan;
  ASSERT_TRUE(wal::ScanSegment(
                  AsBytes(bytes),
                  [](SequenceNumber, SequenceNumber, std::span<const std::byte>) { return Status::Ok(); },
                  &scan)
                  .ok());
  // Half a record where the next group would go, and nothing after it.
  bytes.resize(scan.valid_end);
  bytes.append(20, '\xab');
  ASSERT_TRUE(fs.WriteFileForTest(path, bytes).ok());
  const Dumped d = DumpDir(fs, {.checkpoint = false, .values = false});
  EXPECT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(d.lines.back(), "  end: " + std::to_string(scan.groups) + " groups, the log ends at " +
                                std::to_string(scan.valid_end) + "; torn tail of 20 bytes")
      << d.text;
}

// `path` rewritten as a newer Quiver would have written it: its version
// field raised and its header CRC (over bytes 0..crc_at) resealed.
void MakeNewer(env::SimFileSystem& fs, const std::string& path, std::uint32_t newer, std::size_t crc_at) {
  std::string bytes = fs.ReadFileForTest(path).value();
  std::memcpy(bytes.data() + 8, &newer, 4);
  const std::uint32_t crc = base::Crc32c(bytes.data(), crc_at);
  std::memcpy(bytes.data() + crc_at, &crc, 4);
  ASSERT_TRUE(fs.WriteFileForTest(path, bytes).ok());
}

// A segment whose header never reached the disk whole (a crash during its
// creation): what ScanSegment makes of it, a tail, is no error.
TEST(DumpTest, SegmentCutInsideItsHeaderIsShownAsSuch) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::string path = OnlyFile(fs, IsSegment);
  ASSERT_TRUE(fs.WriteFileForTest(path, fs.ReadFileForTest(path).value().substr(0, 40)).ok());
  const Dumped d = DumpDir(fs, {.checkpoint = false});
  EXPECT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.lines.size(), 2u) << d.text;
  EXPECT_EQ(d.lines[1],
            "  header: not intact (40 bytes): a segment creation a crash interrupted, holding no group");
}

TEST(DumpTest, NewerFormatIsUnimplementedAndNotReadFurther) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const std::uint32_t newer_wal = wal::kFormatVersion + 1, newer_checkpoint = checkpoint::kFormatVersion + 1;
  MakeNewer(fs, OnlyFile(fs, IsSegment), newer_wal, 56);
  MakeNewer(fs, OnlyFile(fs, IsCheckpoint), newer_checkpoint, checkpoint::kHeaderBytes - 4);
  const Dumped d = DumpDir(fs);
  EXPECT_EQ(d.status.code(), StatusCode::kUnimplemented) << d.status.ToString();
  // Each file: its name, one line saying so, nothing else.
  ASSERT_EQ(d.lines.size(), 5u) << d.text;
  for (auto [line, newer] : {std::pair{1, newer_checkpoint}, {4, newer_wal}}) {
    EXPECT_EQ(d.lines[line].rfind("  ! ", 0), 0u) << d.text;
    EXPECT_NE(d.lines[line].find("format version " + std::to_string(newer)), std::string::npos) << d.text;
  }
}

// The public entry point on a real directory that a graph wrote.
TEST(DumpTest, DumpDirectoryReadsARealGraphDirectory) {
  env::test::TempDir tmp;
  {
    auto g = Graph::Open(GraphOptions(), tmp.File("g")).value();
    WriteBatch b;
    b.AddVertex("Person", {{"name", "Ada"}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ASSERT_TRUE(g->Close().ok());
  }
  const Dumped d = Collect([&](const DumpLineFn& out) { return DumpDirectory(tmp.File("g"), {}, out); });
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_NE(d.text.find("\n      add vertex v0 :Person {name: \"Ada\"}\n"), std::string::npos) << d.text;
}

TEST(DumpTest, MissingOrEmptyDirectoryIsNotFound) {
  env::SimFileSystem fs;
  EXPECT_EQ(DumpDir(fs, {}, "/nothing").status.code(), StatusCode::kNotFound);
  ASSERT_TRUE(fs.CreateDir("/empty").ok());
  const Dumped empty = DumpDir(fs, {}, "/empty");
  EXPECT_EQ(empty.status.code(), StatusCode::kNotFound) << empty.status.ToString();
  EXPECT_TRUE(empty.lines.empty());
  EXPECT_EQ(DumpDir(fs, {}, "").status.code(), StatusCode::kInvalidArgument);
  // The public entry points, on the real file system.
  env::test::TempDir tmp;
  auto ignore = [](std::string_view) {};
  EXPECT_EQ(DumpDirectory(tmp.path(), {}, ignore).code(), StatusCode::kNotFound);
  EXPECT_EQ(DumpDirectory(tmp.File("missing"), {}, ignore).code(), StatusCode::kNotFound);
  EXPECT_EQ(DumpFile(tmp.File(wal::SegmentFileName(1)), {}, ignore).code(), StatusCode::kNotFound);
  EXPECT_EQ(DumpFile(tmp.File("LOCK"), {}, ignore).code(), StatusCode::kInvalidArgument);
}

TEST(DumpTest, ChangesNothing) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  // A damaged file too: the error paths must not write either.
  ASSERT_TRUE(fs.FlipBit(OnlyFile(fs, IsCheckpoint), 200 * 8).ok());
  auto files = [&fs] {
    std::vector<std::pair<std::string, std::string>> out;
    const std::vector<std::string> names = fs.ListDir(kDir).value();
    for (const std::string& name : names)
      out.emplace_back(name, fs.ReadFileForTest(kDir + "/" + name).value());
    return out;
  };
  const auto before = files();
  test_util::CountingFileSystem counting(&fs);
  EXPECT_FALSE(DumpDir(counting).status.ok());
  ASSERT_TRUE(counting.calls().empty()) << counting.calls().front();
  EXPECT_EQ(files(), before);
}

TEST(DumpTest, OptionsChooseWhatIsPrinted) {
  env::SimFileSystem fs;
  MakeGraph(fs);
  const Dumped all = DumpDir(fs);
  const Dumped framing = DumpDir(fs, {.values = false});
  const Dumped wal_only = DumpDir(fs, {.checkpoint = false});
  const Dumped one = DumpDir(fs, {.max_records = 1});
  for (const Dumped* d : {&all, &framing, &wal_only, &one})
    ASSERT_TRUE(d->status.ok()) << d->status.ToString();
  EXPECT_NE(all.text.find("add vertex v0 :Person"), std::string::npos) << all.text;
  EXPECT_NE(all.text.find("    v0 :Person {"), std::string::npos) << all.text;
  EXPECT_EQ(framing.text.find("add vertex"), std::string::npos) << framing.text;
  EXPECT_EQ(framing.text.find("    v0 :Person"), std::string::npos) << framing.text;
  EXPECT_NE(framing.text.find("    batch 1: "), std::string::npos) << framing.text;
  EXPECT_NE(framing.text.find("    key 0: name"), std::string::npos) << framing.text;
  EXPECT_EQ(wal_only.lines.front().rfind("wal-", 0), 0u) << wal_only.text;
  EXPECT_EQ(wal_only.text.find("checkpoint-"), std::string::npos) << wal_only.text;
  // One vertex and no edge of the checkpoint, one group of the segment.
  EXPECT_NE(one.text.find("\n    v0 :Person {"), std::string::npos) << one.text;
  EXPECT_NE(one.text.find("\n    ... 2 more vertices\n"), std::string::npos) << one.text;
  EXPECT_NE(one.text.find("\n    ... 2 more edges\n"), std::string::npos) << one.text;
  EXPECT_NE(one.text.find("\n  group at 4096,"), std::string::npos) << one.text;
  EXPECT_EQ(one.text.find("\n  group at 8192,"), std::string::npos) << one.text;
  EXPECT_NE(one.text.find("\n  ... 7 more groups\n"), std::string::npos) << one.text;
}

}  // namespace
}  // namespace quiver
