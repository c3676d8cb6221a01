// Review of checkpoint format 5's index entries (kind 8 blocks): inputs
// that pass every CRC (resealed as a writer would have sealed them) and
// every rule the reader checks, yet break what the checkpoint contract
// promises (docs/checkpoint_format.md, "Reading rules"; RELIABILITY.md:
// detect, never serve, corruption).
//
// Each test is a finding; it fails against the reviewed commit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "index_entries_fixture.h"
#include "index_oracle.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

using namespace entries_test;  // NOLINT: the fixture's names, shared by three files

// The same file without its kind 8 block (what a format 4 build would
// have written but the version field): the loader builds the index from
// the elements, as before.
std::string WithoutEntries(const std::string& bytes) {
  std::string out = bytes.substr(0, kEntriesBlock) + bytes.substr(kEndBlock);
  // The end block's blocks_before: 5 -> 4.
  const std::size_t blocks_before = kEntriesBlock + checkpoint::kBlockHeaderBytes + 2;
  EXPECT_EQ(out[blocks_before], '\x05');
  out[blocks_before] = '\x04';
  return format_test::ResealCheckpoint(out);
}

// Finding 1: the reading rules say "no ready unique index is violated by
// the data ... (Corruption otherwise)", and format 4 (the same file with
// its entries rebuilt) enforces it. A format 5 file whose stored entries
// of a unique index are distinct, while two elements hold the same key,
// loads: the entries are never checked against the elements.
TEST(IndexEntriesReviewTest, AUniqueIndexTheDataViolatesIsCorruption) {
  std::string bytes = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  ASSERT_EQ(bytes.size(), 334u);
  bytes[kDefinitionKind] = '\x01';  // unique: v0 and v3 both hold born 1815
  // Entry 2 (v3) stored under 1816 instead: the stored keys are distinct
  // and still ascend (-384, 1815, 1816, 1906).
  ASSERT_EQ(static_cast<unsigned char>(bytes[kKeys + 2 * 8 + 7]), 0x17u);
  bytes[kKeys + 2 * 8 + 7] = '\x18';
  bytes = format_test::ResealCheckpoint(bytes);

  // Control: rebuilt from the elements (no kind 8 block), the violation is
  // Corruption, as the rules say.
  const Status rebuilt = Load(WithoutEntries(bytes));
  ASSERT_EQ(rebuilt.code(), StatusCode::kCorruption) << rebuilt.ToString();

  const Status stored = Load(bytes);
  EXPECT_EQ(stored.code(), StatusCode::kCorruption)
      << "a unique index the data violates loads from its stored entries: " << stored.ToString();

  // End to end: Open serves the violated unique index (the checkpoint is
  // used, not the log), and FindVertex by born = 1815 names one of two.
  env::SimFileSystem fs;
  auto g = OpenWithLog(fs, bytes);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->GetOpenStats().checkpoint_sequence, 0u) << "the inconsistent checkpoint was loaded";
}

// Finding 1b: a typed index whose element holds another type. The rules
// make it Corruption ("no typed index holds another type"); format 4 does.
// With stored entries the element's value is never looked at.
TEST(IndexEntriesReviewTest, ATypedIndexWhoseElementHoldsAnotherTypeIsCorruption) {
  std::string bytes = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  ASSERT_EQ(bytes.size(), 334u);
  ASSERT_EQ(bytes[kVertex1Type], '\x02');
  bytes[kVertex1Type] = '\x03';  // v1's born: a double, in an int64 index
  bytes = format_test::ResealCheckpoint(bytes);

  const Status rebuilt = Load(WithoutEntries(bytes));
  ASSERT_EQ(rebuilt.code(), StatusCode::kCorruption) << rebuilt.ToString();

  const Status stored = Load(bytes);
  EXPECT_EQ(stored.code(), StatusCode::kCorruption)
      << "an int64 index listing a vertex whose value is a double loads: " << stored.ToString();
}

// Finding 2: entries that name the wrong elements (every rule the reader
// checks holds: ids below the limit, (key, id) ascending) load, and the
// index then answers what the data does not say: corruption served, not
// detected. Worse than before format 5, the drift is now permanent: a
// new checkpoint writes the wrong entries again, so no reopen repairs it
// (formats 1 to 4 rebuilt every index from the elements at each open).
TEST(IndexEntriesReviewTest, EntriesNamingTheWrongElementsAreServedAndPersist) {
  std::string bytes = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  ASSERT_EQ(bytes.size(), 334u);
  // Ids 2, 0, 3, 1 (the data's order by born) become 0, 1, 2, 3: keys
  // -384, 1815, 1815, 1906 with ascending ids, so every rule holds.
  for (int i = 0; i < 4; ++i) {
    const std::string id = std::string(1, static_cast<char>(i)) + std::string(5, '\0');
    bytes.replace(kIds + static_cast<std::size_t>(i) * 6, 6, id);
  }
  bytes = format_test::ResealCheckpoint(bytes);
  const std::vector<VertexId> truth = {VertexId(2), VertexId(0), VertexId(3), VertexId(1)};

  const Status stored = Load(bytes);
  EXPECT_EQ(stored.code(), StatusCode::kCorruption)
      << "entries that disagree with the elements load: " << stored.ToString();

  env::SimFileSystem fs;
  {
    auto g = OpenWithLog(fs, bytes);
    ASSERT_NE(g, nullptr);
    const Snapshot snap = g->GetSnapshot();
    EXPECT_EQ(snap.VerticesInRange("Person", "born", {}).value(), truth)
        << "the index answers against the data";
    const test::IndexOracleResult r = test::CheckIndexAnswers(snap);
    EXPECT_EQ(r.mismatches, 0u);
    for (const std::string& m : r.messages) ADD_FAILURE() << m;
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  // Reopened from the checkpoint just written: still wrong.
  auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetSnapshot().VerticesInRange("Person", "born", {}).value(), truth)
      << "the wrong entries survived a checkpoint and a reopen";
}

// Finding 2, write side: the edge-endpoint constraint is what UpsertEdge
// finds an edge by. Its stored entries with their ids swapped (keys
// distinct and ascending, every rule holds) load; then a plain
// UpsertEdge(v0, v1, {w: 5}) on a graph whose data is fine fails
// (observed: AlreadyExists, "pair (0 -> 1) is held by edge 0; edge 1 would
// hold it too": the resolver found e1, which runs v1 -> v2). The expected
// result: the upsert finds e0 and sets w on it. Stored entries that
// disagree with the elements break writes, not just reads, and no reopen
// repairs them.
TEST(IndexEntriesReviewTest, SwappedEndpointEntriesMakeUpsertEdgeWriteTheWrongEdge) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs).value();
    ASSERT_TRUE(g->CreateIndex({.name = "k_once",
                                .element = ElementKind::kEdge,
                                .label = "K",
                                .kind = IndexKind::kUniqueEndpoints})
                    .ok());
    WriteBatch b;
    for (int i = 0; i < 3; ++i) b.AddVertex("V", {});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    WriteBatch e;
    e.AddEdge("K", VertexId(0), VertexId(1), {});  // e0
    e.AddEdge("K", VertexId(1), VertexId(2), {});  // e1
    ASSERT_TRUE(g->Write(std::move(e)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  const std::string name = CheckpointName(fs);
  ASSERT_FALSE(name.empty());
  std::string file = fs.ReadFileForTest("/db/" + name).value();
  // The one kind 8 block: (key (0,1), e0), (key (1,2), e1); swap the ids.
  bool swapped = false;
  format_test::ForEachCheckpointBlock(file, [&](std::size_t pos, std::uint32_t length) {
    if (static_cast<std::uint8_t>(file[pos]) == 8) {
      const std::size_t body = pos + checkpoint::kBlockHeaderBytes;
      // first_id 0, count 2, index 0, then (len 16, key, id) twice.
      ASSERT_EQ(length, 3u + 2 * (1 + 16 + 6));
      ASSERT_EQ(file.substr(body, 4), std::string("\x00\x02\x00\x10", 4));
      const std::size_t id0 = body + 3 + 1 + 16, id1 = id0 + 6 + 1 + 16;
      ASSERT_EQ(file[id0], '\x00');
      ASSERT_EQ(file[id1], '\x01');
      file[id0] = '\x01';
      file[id1] = '\x00';
      swapped = true;
    }
  });
  ASSERT_TRUE(swapped);
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + name, format_test::ResealCheckpoint(file)).ok());

  auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  WriteBatch u;
  u.UpsertEdge("K", VertexId(0), VertexId(1), {{"w", std::int64_t{5}}});
  Result<CommitInfo> done = (*g)->Write(std::move(u));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  ASSERT_EQ(done->edges.size(), 1u);
  const std::optional<EdgeInfo> edge = (*g)->GetSnapshot().GetEdge(done->edges[0]);
  ASSERT_TRUE(edge.has_value());
  EXPECT_EQ(edge->source, VertexId(0));
  EXPECT_EQ(edge->target, VertexId(1))
      << "UpsertEdge(v0, v1) wrote edge " << done->edges[0].value() << ", which runs " << edge->source.value()
      << " -> " << edge->target.value();
}

// One kind 8 block of the golden file's index `index` 0 (fixed layout).
std::string ReviewEntriesBlock(std::uint64_t first, const std::vector<std::string>& keys,
                               const std::vector<std::string>& ids) {
  std::vector<std::byte> payload;
  base::ByteWriter w(&payload);
  w.PutVarint(first);
  w.PutVarint(keys.size());
  w.PutVarint(0);
  for (const std::string& k : keys) w.PutBytes(k.data(), k.size());
  for (const std::string& id : ids) w.PutBytes(id.data(), id.size());
  std::string block(checkpoint::kBlockHeaderBytes, '\0');
  block[0] = '\x08';
  const auto length = static_cast<std::uint32_t>(payload.size());
  std::memcpy(block.data() + 4, &length, 4);
  block.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  return block;
}

// Finding 3 (low): "which error a damaged file gets does not depend on the
// thread count (the lowest damaged block is reported)". The entries of the
// golden file cut into three blocks: the second breaks the order across
// the first two (the lowest damage), the third lists an id past the vertex
// limit. The load reports the third: every block's own checks run (in
// parallel) before the checks across blocks. Likewise an end block whose
// totals disagree is reported before any damage in the kind 8 blocks that
// precede it (End runs before IndexEntries).
TEST(IndexEntriesReviewTest, TheLowestDamagedBlockIsReported) {
  const std::string golden = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  ASSERT_EQ(golden.size(), 334u);
  auto key = [&](int i) { return golden.substr(kKeys + static_cast<std::size_t>(i) * 8, 8); };
  auto id = [&](int i) { return golden.substr(kIds + static_cast<std::size_t>(i) * 6, 6); };
  const std::string past_limit("\x09\0\0\0\0\0", 6);
  // Blocks: [e0, e3], [e1] (1815 after 1906: out of order across blocks),
  // [e2 with id 9] (past the limit 4).
  std::string bytes =
      golden.substr(0, kEntriesBlock) + ReviewEntriesBlock(0, {key(0), key(3)}, {id(0), id(3)}) +
      ReviewEntriesBlock(2, {key(1)}, {id(1)}) + ReviewEntriesBlock(3, {key(2)}, {past_limit});
  const std::size_t end_block = bytes.size();
  bytes += golden.substr(kEndBlock);
  ASSERT_EQ(bytes[end_block + checkpoint::kBlockHeaderBytes + 2], '\x05');
  bytes[end_block + checkpoint::kBlockHeaderBytes + 2] = '\x07';  // blocks_before
  bytes = format_test::ResealCheckpoint(bytes);
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE(threads);
    checkpoint::Header header;
    const Status s =
        format_test::LoadCheckpointForTest(format_test::AsBytes(bytes), &header, nullptr, threads);
    ASSERT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find("out of order"), std::string::npos)
        << "the second block's damage (the lowest) is not the one reported: " << s.ToString();
  }

  // The end block's live vertex count off by one, and the kind 8 block
  // before it listing an id past the limit.
  std::string both = golden;
  both.replace(kIds, 6, past_limit);
  ASSERT_EQ(both[kEndBlock + checkpoint::kBlockHeaderBytes], '\x04');
  both[kEndBlock + checkpoint::kBlockHeaderBytes] = '\x03';
  both = format_test::ResealCheckpoint(both);
  checkpoint::Header header;
  const Status s = format_test::LoadCheckpointForTest(format_test::AsBytes(both), &header);
  ASSERT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("past the checkpoint's id limit"), std::string::npos)
      << "the end block's damage is reported before the entries block's: " << s.ToString();
}

}  // namespace
}  // namespace quiver
