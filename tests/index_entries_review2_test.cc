// Second review of checkpoint format 5's index entries (kind 8 blocks),
// after c8dc998 (the entries checked against the elements by an order-free
// digest) and 94f0333 (entries decoded in phase 5's pool). Inputs that pass
// every CRC (resealed as a writer would have sealed them) and every rule the
// reader checks, yet break what the checkpoint contract promises
// (DESIGN.md: "A checkpoint may store contents in a fast-loading form; it
// must never be the only source of truth").
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

// Finding 1 (low): EntriesDigest hashes an entry as mix(key * C + id) with
// one odd constant C, so the digest of (key, id) equals that of
// (key - C^-1 * d, id + d) for every d: a linear relation between key and
// id that no mix after it undoes. One wrong entry (another element, another
// key) passes with no search at all: here (1906, v1) is stored as
// (1906 - C^-1, v2), still ascending, and the file loads; the index then
// lists v2 twice and v1 never, and born = 1906 finds nothing.
TEST(IndexEntriesReview2Test, ADigestCollisionOfKeyTimesConstantPlusIdLoads) {
  std::string bytes = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  ASSERT_EQ(bytes.size(), 334u);
  ASSERT_EQ(bytes.substr(kKeys + 3 * 8, 8), Int64Key(1906));
  ASSERT_EQ(bytes.substr(kIds + 3 * 6, 6), Id48(1));
  // C^-1 mod 2^64 for C = 0x9e3779b97f4a7c15 (index_entries.h).
  constexpr std::uint64_t kInverse = 0xf1de83e19937733dULL;
  static_assert(kInverse * 0x9e3779b97f4a7c15ULL == 1);
  const auto forged = static_cast<std::int64_t>(std::uint64_t{1906} - kInverse);  // 1018231460777727029
  ASSERT_GT(forged, 1906);
  bytes.replace(kKeys + 3 * 8, 8, Int64Key(forged));
  bytes.replace(kIds + 3 * 6, 6, Id48(2));
  bytes = format_test::ResealCheckpoint(bytes);

  const Status stored = Load(bytes);
  EXPECT_EQ(stored.code(), StatusCode::kCorruption)
      << "an entry naming another element under another key passes the digest: " << stored.ToString();

  env::SimFileSystem fs;
  auto g = OpenWithLog(fs, bytes);
  ASSERT_NE(g, nullptr);
  const Snapshot snap = g->GetSnapshot();
  const std::vector<VertexId> truth = {VertexId(2), VertexId(0), VertexId(3), VertexId(1)};
  EXPECT_EQ(snap.VerticesInRange("Person", "born", {}).value(), truth)
      << "the index answers against the data";
}

// Finding 2 (low): "the lowest damaged block is reported", and
// IndexEntries' own comment: "Per index, in block order: each block's own
// checks, then the order across it and the block before; then the digest
// against the elements". The walk over index A's blocks checks the own
// status of the block that ends it, the first of index B, before A's
// digest: when A's entries disagree with the elements and B's first block
// is damaged, B's damage is reported, though A's blocks come first (B's
// block names index 1: a reader going block by block knows A has ended
// and compares A's digest before it reads further).
TEST(IndexEntriesReview2Test, ADigestMismatchIsReportedBeforeALaterIndexsDamagedBlock) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs).value();
    ASSERT_TRUE(g->CreateIndex({.name = "p_a",
                                .label = "P",
                                .keys = {"a"},
                                .kind = IndexKind::kOrdered,
                                .type = ValueType::kInt64})
                    .ok());
    ASSERT_TRUE(g->CreateIndex({.name = "p_b",
                                .label = "P",
                                .keys = {"b"},
                                .kind = IndexKind::kOrdered,
                                .type = ValueType::kInt64})
                    .ok());
    WriteBatch b;
    for (int i = 0; i < 3; ++i) b.AddVertex("P", {{"a", std::int64_t{i}}, {"b", std::int64_t{10 + i}}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  const std::string name = CheckpointName(fs);
  ASSERT_FALSE(name.empty());
  std::string file = fs.ReadFileForTest("/db/" + name).value();
  int seen = 0;
  format_test::ForEachCheckpointBlock(file, [&](std::size_t pos, std::uint32_t length) {
    if (static_cast<std::uint8_t>(file[pos]) == 8) {
      const std::size_t body = pos + checkpoint::kBlockHeaderBytes;
      // first_id, count 3, index: one byte each; then 3 keys, 3 ids.
      ASSERT_EQ(length, 3u + 3 * (8 + 6));
      ASSERT_EQ(file[body + 1], '\x03');
      const std::size_t ids = body + 3 + 3 * 8;
      if (file[body + 2] == '\x00') {
        // p_a: (0, v0), (1, v1), (2, v2) -> (0, v1), (1, v0): keys still
        // ascend, but they are not the elements' entries.
        ASSERT_EQ(file[ids], '\x00');
        ASSERT_EQ(file[ids + 6], '\x01');
        file[ids] = '\x01';
        file[ids + 6] = '\x00';
      } else {
        // p_b's block: an id past the vertex limit (its own check fails).
        ASSERT_EQ(file[body + 2], '\x01');
        file.replace(ids, 6, std::string(6, '\x7f'));
      }
      ++seen;
    }
  });
  ASSERT_EQ(seen, 2);
  file = format_test::ResealCheckpoint(file);
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE(threads);
    checkpoint::Header header;
    const Status s =
        format_test::LoadCheckpointForTest(format_test::AsBytes(file), &header, nullptr, threads);
    ASSERT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find("p_a"), std::string::npos)
        << "index p_a's damage (its blocks come first) is not the one reported: " << s.ToString();
  }
}

}  // namespace
}  // namespace quiver
