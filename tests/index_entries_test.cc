// Index entries in the checkpoint (format 5, kind 8 blocks;
// src/checkpoint/index_entries.h): every ready index's contents are stored
// sorted and copied into leaves at load instead of being rebuilt.
//  - Round trip: a graph with every kind of index (fixed and variable keys,
//    unique, composite, edge indexes, the edge-endpoint constraint, an
//    empty one), one of them across several blocks, removed elements too:
//    the reopened graph loads every index from its entries and each answers
//    as a scan of the data says (test::CheckIndexAnswers), before and after
//    writes on the loaded trees and a second checkpoint.
//  - Bad input: the golden ordered-index checkpoint with one field of its
//    entries or definitions changed (every CRC resealed, so only the
//    reader's own checks can catch it) is Corruption naming what is wrong,
//    and Open falls back to the previous checkpoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/memory.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "index_entries_fixture.h"
#include "index_oracle.h"
#include "loop_sample.h"
#include "quiver/quiver.h"
#include "storage/version.h"
#include "test_util.h"

namespace quiver {
namespace {

using namespace entries_test;  // NOLINT: the fixture's names, shared by three files

void ExpectOracleAgrees(const Snapshot& s) {
  const test::IndexOracleResult r = test::CheckIndexAnswers(s);
  EXPECT_GT(r.checks, 0u);
  EXPECT_EQ(r.mismatches, 0u);
  for (const std::string& m : r.messages) ADD_FAILURE() << m;
}

// Every kind of index: int64 unique (more than one block's worth of
// entries), double ordered, string exact with repeats, a composite, an
// ordered edge index, the edge-endpoint constraint, and one whose label has
// no vertex (empty, ready).
void DeclareIndexes(Graph& g) {
  auto create = [&g](IndexSpec spec) { ASSERT_TRUE(g.CreateIndex(spec).ok()) << spec.name; };
  create(
      {.name = "p_id", .label = "P", .keys = {"id"}, .kind = IndexKind::kUnique, .type = ValueType::kInt64});
  create(
      {.name = "p_w", .label = "P", .keys = {"w"}, .kind = IndexKind::kOrdered, .type = ValueType::kDouble});
  create({.name = "p_city", .label = "P", .keys = {"city"}, .kind = IndexKind::kExact});
  create({.name = "p_city_id", .label = "P", .keys = {"city", "id"}, .kind = IndexKind::kOrdered});
  create({.name = "k_since",
          .element = ElementKind::kEdge,
          .label = "K",
          .keys = {"since"},
          .kind = IndexKind::kOrdered,
          .type = ValueType::kInt64});
  create(
      {.name = "k_once", .element = ElementKind::kEdge, .label = "K", .kind = IndexKind::kUniqueEndpoints});
  create({.name = "empty",
          .label = "Nobody",
          .keys = {"id"},
          .kind = IndexKind::kUnique,
          .type = ValueType::kInt64});
}

// Past kIndexEntriesPerBlock, so that p_id and p_w take two blocks each.
constexpr std::uint64_t kPeople = checkpoint::kIndexEntriesPerBlock + 4'000;

void AddPeople(Graph& g, std::mt19937_64& rng) {
  const char* cities[] = {"Oslo", "Lima", "", "Zoë's", "Kyiv"};
  for (std::uint64_t first = 0; first < kPeople; first += 10'000) {
    WriteBatch b;
    for (std::uint64_t i = first; i < std::min(kPeople, first + 10'000); ++i) {
      // Distinct ids, negative and positive, in no order.
      const auto id = static_cast<std::int64_t>((i * 0x9e3779b97f4a7c15ULL) >> 1) - (std::int64_t{1} << 61);
      std::vector<Property> props = {{"id", id}, {"w", static_cast<double>(rng() % 2001) / 8.0 - 125.0}};
      if (i % 7 != 0) props.push_back({"city", cities[i % 5]});
      b.AddVertex("P", props);
    }
    ASSERT_TRUE(g.Write(std::move(b)).ok());
  }
  WriteBatch e;
  for (std::uint64_t i = 0; i < 3'000; ++i)
    e.AddEdge("K", VertexId(i), VertexId((i * 7 + 1) % kPeople),
              {{"since", static_cast<std::int64_t>(i % 97)}});
  ASSERT_TRUE(g.Write(std::move(e)).ok());
}

// Random writes through every index: removals, key changes, new elements.
void Churn(Graph& g, std::mt19937_64& rng, int batches) {
  for (int r = 0; r < batches; ++r) {
    WriteBatch b;
    for (int k = 0; k < 200; ++k) {
      const VertexId v(rng() % kPeople);
      switch (rng() % 4) {
        case 0: b.RemoveVertex(v); break;
        case 1: b.SetProperty(v, "w", static_cast<double>(rng() % 1000)); break;
        case 2: b.SetProperty(v, "city", "Rome"); break;
        default: b.RemoveProperty(v, "city"); break;
      }
      Result<CommitInfo> done = g.Write(std::move(b));
      b = WriteBatch();
      (void)done;  // a removed vertex's write fails alone: nothing applied
    }
  }
}

TEST(IndexEntriesTest, EveryIndexLoadsFromItsEntriesAndAnswersAsTheData) {
  env::SimFileSystem fs;
  std::mt19937_64 rng(20261205);
  std::string expected;
  {
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs).value();
    DeclareIndexes(*g);
    AddPeople(*g, rng);
    Churn(*g, rng, 3);
    ASSERT_TRUE(g->Checkpoint().ok());
    expected = test_util::Dump(g->GetSnapshot());
    ExpectOracleAgrees(g->GetSnapshot());
  }
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs).value();
    EXPECT_EQ(g->GetOpenStats().indexes_built, 7u);
    EXPECT_EQ(g->GetOpenStats().indexes_loaded, 7u) << "every ready index came from its entries";
    EXPECT_EQ(g->GetOpenStats().wal_batches_replayed, 0u);
    EXPECT_EQ(test_util::Dump(g->GetSnapshot()), expected);
    ExpectOracleAgrees(g->GetSnapshot());
    // The loaded trees take writes (their leaves are full but at block
    // ends), and the next checkpoint stores what they hold then.
    Churn(*g, rng, 5);
    ExpectOracleAgrees(g->GetSnapshot());
    ASSERT_TRUE(g->Checkpoint().ok());
    expected = test_util::Dump(g->GetSnapshot());
  }
}

// The index's entries across several blocks: the checkpoint holds more
// than one kind 8 block for p_id, and a dump of it shows them in order.
TEST(IndexEntriesTest, ALargeIndexTakesSeveralBlocksInOrder) {
  env::SimFileSystem fs;
  std::mt19937_64 rng(7);
  {
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs).value();
    DeclareIndexes(*g);
    AddPeople(*g, rng);
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  const std::string name = CheckpointName(fs);
  ASSERT_FALSE(name.empty());
  const std::string file = fs.ReadFileForTest("/db/" + name).value();
  // (index, count) of each kind 8 block, in file order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks;
  format_test::ForEachCheckpointBlock(file, [&](std::size_t pos, std::uint32_t length) {
    if (static_cast<std::uint8_t>(file[pos]) == 8) {
      base::ByteReader r(format_test::AsBytes(file).subspan(pos + checkpoint::kBlockHeaderBytes, length));
      std::uint64_t first, count, index;
      ASSERT_TRUE(r.GetVarint(&first) && r.GetVarint(&count) && r.GetVarint(&index));
      blocks.emplace_back(index, count);
    }
  });
  std::vector<std::uint64_t> per_index(7, 0), blocks_of(7, 0);
  for (auto [index, count] : blocks) {
    ASSERT_LT(index, 7u);
    per_index[index] += count;
    ++blocks_of[index];
  }
  EXPECT_EQ(per_index[0], kPeople);
  EXPECT_EQ(blocks_of[0], 2u) << "p_id passes kIndexEntriesPerBlock";
  EXPECT_EQ(per_index[5], 3'000u);  // k_once: one entry per edge
  EXPECT_EQ(blocks_of[6], 1u) << "an empty index has one empty block";
  EXPECT_EQ(per_index[6], 0u);
  for (std::size_t i = 1; i < blocks.size(); ++i) EXPECT_LE(blocks[i - 1].first, blocks[i].first);
}

// --- Out of memory: every allocation of a load that copies entries can fail.

std::atomic<std::int64_t> freed_bytes{0};
void CountFree(void* block) {
  freed_bytes.fetch_add(static_cast<std::int64_t>(base::UsableSize(block)), std::memory_order_relaxed);
}

// A checkpoint of 2,000 vertices with an int64 index (14 leaves) and a
// string one, both stored.
std::string SmallIndexedCheckpoint() {
  env::SimFileSystem fs;
  Options o = NoAutomaticCheckpoints();
  o.durable.io_threads = 1;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
  EXPECT_TRUE(
      g->CreateIndex(
           {.name = "w", .label = "A", .keys = {"w"}, .kind = IndexKind::kOrdered, .type = ValueType::kInt64})
          .ok());
  EXPECT_TRUE(g->CreateIndex({.name = "s", .label = "A", .keys = {"s"}, .kind = IndexKind::kUnique}).ok());
  WriteBatch b;
  for (std::int64_t i = 0; i < 2'000; ++i)
    b.AddVertex("A", {{"w", (i * 7919) % 1000}, {"s", "s" + std::to_string(i)}});
  EXPECT_TRUE(g->Write(std::move(b)).ok());
  EXPECT_TRUE(g->Checkpoint().ok());
  const std::string name = CheckpointName(fs);
  return name.empty() ? "" : fs.ReadFileForTest("/db/" + name).value();
}

// Each allocation on the loading thread fails in turn: the load throws
// std::bad_alloc, and everything it built (leaves not yet hung included) is
// freed, the account back to exactly zero.
TEST(IndexEntriesTest, EveryAllocationOfTheLoadCanFailAndNothingLeaks) {
  const std::string bytes = SmallIndexedCheckpoint();
  ASSERT_FALSE(bytes.empty());
  // Stride 2 over the two thread counts: each allocation fails under one of
  // them in each run (under both with QUIVER_EVERY_POINT=1).
  const test_util::LoopSample sample("allocation failures in an index-holding checkpoint's load", 2);
  SCOPED_TRACE(sample.Describe());
  std::vector<bool> failed_under_some;         // [n]: allocation n failed under one thread count
  std::uint64_t shortest = ~std::uint64_t{0};  // the fewest allocations a whole load made
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    // The variant is the thread count's place (0, 1), not the count: 1 and
    // 3 are both odd, and would try the same allocations.
    const std::uint64_t variant = threads == 1 ? 0 : 1;
    bool finished = false;
    for (std::uint64_t n = 1; !finished; ++n) {
      if (!sample.Tries(n, variant)) continue;
      SCOPED_TRACE("failing allocation " + std::to_string(n));
      auto* chain = new storage::VersionChain();
      storage::MutationContext ctx{1, nullptr, nullptr};
      storage::Version* v = chain->NewVersion(&ctx);
      storage::OwnInternTable(v->roots.labels, ctx);
      storage::OwnInternTable(v->roots.types, ctx);
      storage::OwnInternTable(v->roots.keys, ctx);
      checkpoint::Header h;
      checkpoint::LoadStats stats;
      bool threw = false;
      Status st;
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      try {
        st = checkpoint::LoadCheckpoint(format_test::AsBytes(bytes), v->roots, ctx, &h, threads, &stats);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      const std::uint64_t counted = base::DisarmAllocationFaults();
      chain->Abandon(v);
      const std::int64_t allocated = chain->account()->allocated_bytes();
      freed_bytes.store(0);
      base::SetFreeObserver(&CountFree);
      chain->Shutdown();
      base::SetFreeObserver(nullptr);
      ASSERT_EQ(allocated - freed_bytes.load(), 0) << "account minus the bytes freed";
      if (!threw && counted < n) {
        ASSERT_TRUE(st.ok()) << st.ToString();
        EXPECT_EQ(stats.indexes_loaded, 2u);
        finished = true;
        shortest = std::min(shortest, counted);
      } else {
        ASSERT_TRUE(threw) << "the failed allocation was not reported: " << st.ToString();
        if (failed_under_some.size() <= n) failed_under_some.resize(n + 1);
        failed_under_some[n] = true;
      }
    }
  }
  // Between them the two thread counts failed every allocation both loads make.
  for (std::uint64_t n = 1; n <= shortest; ++n)
    EXPECT_TRUE(n < failed_under_some.size() && failed_under_some[n])
        << "allocation " << n << " never failed";
}

// --- Bad input: the golden ordered-index checkpoint, edited and resealed.

TEST(IndexEntriesTest, TheGoldenOrderedCheckpointLoadsItsIndexFromItsEntries) {
  const std::string golden = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  ASSERT_EQ(golden.size(), 334u);
  ASSERT_EQ(format_test::ResealCheckpoint(golden), golden) << "Reseal changes nothing in an intact file";
  checkpoint::Header header;
  std::string dump;
  Status s = format_test::LoadCheckpointForTest(format_test::AsBytes(golden), &header, &dump);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(
      dump.find("index person_born vertices Person keys=born; kind=2 type=int64 declared=2 ready entries=4"),
      std::string::npos)
      << dump;
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/db").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(4), golden).ok());
  auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->GetOpenStats().indexes_loaded, 1u);
  const Snapshot snap = (*g)->GetSnapshot();
  EXPECT_EQ(snap.VerticesInRange("Person", "born", {}).value(),
            (std::vector<VertexId>{VertexId(2), VertexId(0), VertexId(3), VertexId(1)}));
  ExpectOracleAgrees(snap);
}

struct Edit {
  const char* what;
  std::size_t offset;
  std::string bytes;
  const char* message;  // a part of the Corruption's message
};

TEST(IndexEntriesTest, EntriesThatBreakTheRulesAreCorruption) {
  const std::string golden = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  ASSERT_EQ(golden.size(), 334u);
  const std::string key_1906 = golden.substr(kKeys + 3 * 8, 8);
  const std::string key_minus_384 = golden.substr(kKeys, 8);
  const std::vector<Edit> edits = {
      {"keys out of order", kKeys, key_1906, "is not above the one before it"},
      {"a key below the one before", kKeys + 3 * 8, key_minus_384, "is not above the one before it"},
      {"an entry repeated", kIds + 2 * 6, std::string("\0\0\0\0\0\0", 6), "is not above the one before it"},
      {"an id past the vertex limit", kIds, std::string("\x04\0\0\0\0\0", 6),
       "past the checkpoint's id limit 4"},
      {"an index the definitions do not have", kEntriesIndex, "\x01", "is not a ready index"},
      {"entries of a building index", kDefinitionState, std::string("\0", 1), "is not a ready index"},
      {"a unique index with a repeated key", kDefinitionKind, "\x01", "repeats a key"},
  };
  for (const Edit& e : edits) {
    SCOPED_TRACE(e.what);
    std::string bytes = golden;
    bytes.replace(e.offset, e.bytes.size(), e.bytes);
    bytes = format_test::ResealCheckpoint(bytes);
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(format_test::AsBytes(bytes), &header, &dump);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find(e.message), std::string::npos) << s.ToString();
    // Open: damage, so the log is used instead (it starts at sequence 1
    // here: the golden segment of the same history), and nothing is lost.
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/db").ok());
    ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(4), bytes).ok());
    ASSERT_TRUE(fs.WriteFileForTest("/db/wal-00000000000000000001.log",
                                    format_test::ReadGoldenFile("wal-ordered.log"))
                    .ok());
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetOpenStats().checkpoint_sequence, 0u) << "the damaged checkpoint is not used";
    EXPECT_EQ((*g)->GetSnapshot().VerticesInRange("Person", "born", {}).value().size(), 4u);
  }
}

// A kind 8 block in a format 4 file is a bad block header: that format has
// no index entries.
TEST(IndexEntriesTest, EntriesInAFormat4FileAreABadBlock) {
  std::string bytes = format_test::ReadGoldenFile("checkpoint-ordered.qck");
  const std::uint32_t four = 4;
  std::memcpy(bytes.data() + 8, &four, 4);
  const std::uint32_t header_crc = base::Crc32c(bytes.data(), 76);
  std::memcpy(bytes.data() + 76, &header_crc, 4);
  bytes = format_test::ResealCheckpoint(bytes);
  checkpoint::Header header;
  std::string dump;
  Status s = format_test::LoadCheckpointForTest(format_test::AsBytes(bytes), &header, &dump);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("bad block header at offset 236"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace quiver
