// The parallel checkpoint loader (src/checkpoint/checkpoint_reader.cc) on a
// graph big enough for every phase to split work: several vertex and edge
// blocks, three vertex buckets of 2^16, vertices with one edge type and with
// several, removed vertices and edges, properties on both. Whatever the
// thread count, reopening must give exactly the graph that was checkpointed,
// and a damaged file the same error.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <new>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/checkpoint_writer.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "loop_sample.h"
#include "quiver/quiver.h"
#include "storage/version.h"
#include "test_util.h"
#include "wal/wal_reader.h"

namespace quiver {
namespace {

constexpr std::uint64_t kVertices = 150'000;  // three buckets of 65,536
constexpr std::uint64_t kEdges = 200'000;     // four edge blocks of 2^16 ids

Options WithThreads(unsigned threads) {
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = threads;
  return o;
}

// Builds the graph in /db and checkpoints it; returns its Dump.
std::string BuildAndCheckpoint(env::SimFileSystem& fs) {
  auto g = GraphImpl::OpenDurable(WithThreads(1), "/db", &fs).value();
  EXPECT_EQ(g->GetOpenStats().load_threads, 0u) << "no checkpoint was loaded";
  std::mt19937_64 rng(20261130);
  const char* labels[] = {"A", "B", "C"};
  const char* types[] = {"T0", "T1", "T2"};
  for (std::uint64_t first = 0; first < kVertices; first += 10'000) {
    WriteBatch b;
    for (std::uint64_t i = first; i < first + 10'000; ++i)
      b.AddVertex(labels[i % 3], {{"name", "v" + std::to_string(i)}, {"w", static_cast<std::int64_t>(i)}});
    EXPECT_TRUE(g->Write(std::move(b)).ok());
  }
  for (std::uint64_t first = 0; first < kEdges; first += 20'000) {
    WriteBatch b;
    for (std::uint64_t i = first; i < first + 20'000; ++i) {
      const std::uint64_t src = rng() % kVertices, dst = rng() % kVertices;
      // Sources divisible by 4 get edges of every type, the rest only T0.
      const char* type = src % 4 == 0 ? types[rng() % 3] : types[0];
      if (i % 10 == 0) {
        b.AddEdge(type, VertexId(src), VertexId(dst), {{"since", static_cast<double>(i)}});
      } else {
        b.AddEdge(type, VertexId(src), VertexId(dst));
      }
    }
    EXPECT_TRUE(g->Write(std::move(b)).ok());
  }
  WriteBatch removals;
  for (std::uint64_t v = 7; v < kVertices; v += 997) removals.RemoveVertex(VertexId(v));
  for (std::uint64_t e = 3; e < kEdges; e += 331) removals.RemoveEdge(EdgeId(e));
  EXPECT_TRUE(g->Write(std::move(removals)).ok());
  EXPECT_TRUE(g->Checkpoint().ok());
  std::string dump = test_util::Dump(g->GetSnapshot());
  EXPECT_TRUE(g->Close().ok());
  return dump;
}

std::string CheckpointBytes(env::SimFileSystem& fs) {
  const std::vector<std::string> names = fs.ListDir("/db").value();
  for (const std::string& name : names) {
    if (checkpoint::ParseCheckpointFileName(name)) {
      std::vector<std::byte> b = wal::ReadWholeFile(&fs, "/db/" + name).value();
      return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    }
  }
  ADD_FAILURE() << "no checkpoint in /db";
  return {};
}

TEST(CheckpointLoadTest, EveryThreadCountReopensTheSameGraph) {
  env::SimFileSystem fs;
  const std::string before = BuildAndCheckpoint(fs);
  const std::string bytes = CheckpointBytes(fs);
  std::uint64_t blocks = 0;
  for (std::size_t pos = checkpoint::kHeaderBytes; pos + checkpoint::kBlockHeaderBytes <= bytes.size();
       ++blocks) {
    std::uint32_t length;
    std::memcpy(&length, bytes.data() + pos + 4, 4);
    pos += checkpoint::kBlockHeaderBytes + length;
  }
  EXPECT_GE(blocks, 8u) << "the graph should span several blocks per element kind";

  // One thread, then one of 2, 3 and 8, a different one from run to run
  // (loop_sample.h; all three with QUIVER_EVERY_POINT=1): each reopen loads
  // and dumps the whole graph, and four of them took 21-27 s under ASan.
  const test_util::LoopSample sample("checkpoint load thread counts 2, 3, 8", 3, 0);
  SCOPED_TRACE(sample.Describe());
  std::uint64_t fingerprint = 0;
  const unsigned counts[] = {1u, 2u, 3u, 8u};
  for (std::size_t i = 0; i < std::size(counts); ++i) {
    const unsigned threads = counts[i];
    if (i > 0 && !sample.Tries(i - 1)) continue;
    SCOPED_TRACE("io_threads=" + std::to_string(threads));
    auto g = GraphImpl::OpenDurable(WithThreads(threads), "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetOpenStats().wal_batches_replayed, 0u);
    EXPECT_EQ((*g)->GetOpenStats().load_threads, threads);
    Snapshot s = (*g)->GetSnapshot();
    EXPECT_EQ(test_util::Dump(s), before);
    const std::uint64_t f = test_util::Fingerprint(s);
    if (fingerprint == 0) fingerprint = f;
    EXPECT_EQ(f, fingerprint) << "group order differs between thread counts";
    EXPECT_TRUE((*g)->Close().ok());
  }
}

// The label and type sets are derived at load (never stored), on the
// workers beside the in direction's buckets; Dump does not read them. Each
// label's set must list exactly the live vertices of that label, each type's
// the live edges of that type, for every thread count, with edges and
// without (a graph with no edges has no bucket tasks).
std::string SetsOf(const Snapshot& s) {
  std::string out;
  for (const LabelCount& l : s.Labels()) {
    std::vector<std::uint64_t> from_set, from_scan;
    for (VertexId v : s.Vertices(l.label)) from_set.push_back(v.value());
    for (VertexId v : s.Vertices())
      if (s.LabelOf(v) == l.label) from_scan.push_back(v.value());
    EXPECT_EQ(from_set, from_scan) << "label " << l.name;
    out += std::string(l.name) + "=" + std::to_string(from_set.size()) + ";";
  }
  for (const EdgeTypeCount& t : s.EdgeTypes()) {
    std::vector<std::uint64_t> from_set, from_scan;
    for (EdgeId e : s.Edges(t.type)) from_set.push_back(e.value());
    for (EdgeId e : s.Edges())
      if (s.GetEdge(e)->type == t.type) from_scan.push_back(e.value());
    EXPECT_EQ(from_set, from_scan) << "type " << t.name;
    out += std::string(t.name) + "=" + std::to_string(from_set.size()) + ";";
  }
  return out;
}

TEST(CheckpointLoadTest, LabelAndTypeSetsAreRebuiltForEveryThreadCount) {
  for (bool edges : {true, false}) {
    SCOPED_TRACE(edges ? "with edges" : "vertices only");
    env::SimFileSystem fs;
    std::string expected;
    {
      auto g = GraphImpl::OpenDurable(WithThreads(1), "/db", &fs).value();
      const char* labels[] = {"A", "B", "C"};
      const char* types[] = {"T0", "T1"};
      constexpr std::uint64_t kN = 70'000;  // two buckets of 2^14 and more
      for (std::uint64_t first = 0; first < kN; first += 10'000) {
        WriteBatch b;
        for (std::uint64_t v = first; v < first + 10'000; ++v) b.AddVertex(labels[v * 7 % 5 % 3]);
        ASSERT_TRUE(g->Write(std::move(b)).ok());
      }
      if (edges) {
        WriteBatch b;
        for (std::uint64_t e = 0; e < kN; ++e)
          b.AddEdge(types[e % 3 == 0], VertexId(e), VertexId(e * 31 % kN));
        ASSERT_TRUE(g->Write(std::move(b)).ok());
      }
      WriteBatch removals;
      for (std::uint64_t v = 5; v < kN; v += 1'001) removals.RemoveVertex(VertexId(v));
      ASSERT_TRUE(g->Write(std::move(removals)).ok());
      ASSERT_TRUE(g->Checkpoint().ok());
      expected = SetsOf(g->GetSnapshot());
      ASSERT_TRUE(g->Close().ok());
    }
    for (unsigned threads : {1u, 2u, 3u}) {
      SCOPED_TRACE("io_threads=" + std::to_string(threads));
      auto g = GraphImpl::OpenDurable(WithThreads(threads), "/db", &fs);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      ASSERT_NE((*g)->GetOpenStats().checkpoint_sequence, 0u);
      EXPECT_EQ(SetsOf((*g)->GetSnapshot()), expected);
      EXPECT_TRUE((*g)->Close().ok());
    }
  }
}

// The (vertex, type, edge, neighbour) of every entry ScanEdges hands out in
// direction `d`, each checked against the per-vertex read of its group.
std::vector<std::string> ScannedEntries(const Snapshot& s, Direction d) {
  std::vector<std::string> out;
  s.ScanEdges(0, s.vertex_id_limit(), d, [&](VertexId v, const EdgeGroup& g) {
    const std::span<const EdgeEntry> same = s.Edges(v, d, g.type);
    EXPECT_EQ(same.data(), g.entries.data());
    EXPECT_EQ(same.size(), g.entries.size());
    for (const EdgeEntry& e : g.entries)
      out.push_back(std::to_string(v.value()) + ":" + std::to_string(g.type.value()) + ":" +
                    std::to_string(e.edge().value()) + ">" + std::to_string(e.neighbor().value()));
  });
  return out;
}

// A single group's head word carries its type only while the type id fits
// in 16 bits (storage/adjacency.h); past that the type is read from the
// array. Both kinds, and a vertex whose directory mixes them, read back the
// same written, loaded and swept.
TEST(CheckpointLoadTest, TypeIdsPastTheHeadWordSurviveALoad) {
  constexpr std::uint64_t kTypes = 65'540;
  env::SimFileSystem fs;
  std::vector<std::string> written[2];
  std::string before;
  {
    auto g = GraphImpl::OpenDurable(WithThreads(1), "/db", &fs).value();
    WriteBatch b;
    std::vector<NewVertex> v;
    for (std::uint64_t i = 0; i <= kTypes; ++i) v.push_back(b.AddVertex("V"));
    // Vertex i has one out-edge, of type "T<i>" (type id i), to vertex i + 1.
    for (std::uint64_t i = 0; i < kTypes; ++i) b.AddEdge("T" + std::to_string(i), v[i], v[i + 1]);
    b.AddEdge("T65538", v[3], v[0]);  // vertex 3: a directory of types 3 and 65,538
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    Snapshot s = g->GetSnapshot();
    for (std::uint64_t t : {0ull, 65'535ull, 65'536ull, 65'539ull}) {
      const auto type = s.FindEdgeType("T" + std::to_string(t));
      ASSERT_TRUE(type.has_value());
      ASSERT_EQ(type->value(), t);
      EXPECT_EQ(s.OutEdges(VertexId(t), *type).size(), 1u);
      ASSERT_EQ(s.OutEdges(VertexId(t)).group_count(), 1u);
      EXPECT_EQ((*s.OutEdges(VertexId(t)).begin()).type, *type);
    }
    EXPECT_EQ(s.OutEdges(VertexId(3)).group_count(), 2u);
    for (Direction d : {Direction::kOut, Direction::kIn}) written[static_cast<int>(d)] = ScannedEntries(s, d);
    EXPECT_EQ(written[0].size(), kTypes + 1);
    before = test_util::Dump(s);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(WithThreads(2), "/db", &fs).value();
  EXPECT_EQ(g->GetOpenStats().wal_batches_replayed, 0u);
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(test_util::Dump(s), before);
  for (Direction d : {Direction::kOut, Direction::kIn})
    EXPECT_EQ(ScannedEntries(s, d), written[static_cast<int>(d)]) << "direction " << static_cast<int>(d);
  EXPECT_TRUE(g->Close().ok());
}

TEST(CheckpointLoadTest, DamageGetsTheSameErrorWhateverTheThreadCount) {
  env::SimFileSystem fs;
  BuildAndCheckpoint(fs);
  const std::string bytes = CheckpointBytes(fs);
  // A byte in the middle of the file (inside an element block), one near
  // the end (the last edge block), and one of each in the same file, where
  // the lower block must be the one reported.
  const std::vector<std::vector<std::size_t>> damages = {
      {bytes.size() / 2}, {bytes.size() - 100}, {bytes.size() / 3, bytes.size() - 100}};
  for (const auto& offsets : damages) {
    std::string damaged = bytes;
    for (std::size_t at : offsets) damaged[at] = static_cast<char>(damaged[at] ^ 0x40);
    checkpoint::Header h;
    const Status one = format_test::LoadCheckpointForTest(format_test::AsBytes(damaged), &h, nullptr, 1);
    EXPECT_EQ(one.code(), StatusCode::kCorruption) << one.ToString();
    for (unsigned threads : {2u, 5u}) {
      const Status many =
          format_test::LoadCheckpointForTest(format_test::AsBytes(damaged), &h, nullptr, threads);
      EXPECT_EQ(many.ToString(), one.ToString()) << threads << " threads";
    }
  }
}

// --- The loader's memory: every block it allocates is counted in the
// chain's account exactly as Free will subtract it, and every allocation on
// the calling thread can fail and still leave a graph freed whole.

// A small graph whose limits are not multiples of 64 (the radix leaf), with
// removed vertices and edges at leaf boundaries (ids 63, 64, 127, 128 and
// the last), elements with and without properties mixed in each leaf, a
// vertex of degree 100 of one type (an array past mimalloc's small size,
// 1,024 bytes), vertices of several types and arrays of every small bin.
std::string SmallCheckpoint(env::SimFileSystem& fs, std::string* dump, std::string* sets = nullptr) {
  constexpr std::uint64_t kV = 203, kE = 451;
  auto g = GraphImpl::OpenDurable(WithThreads(1), "/db", &fs).value();
  WriteBatch b;
  for (std::uint64_t v = 0; v < kV; ++v) {
    if (v % 3 == 0) {
      b.AddVertex(v % 2 == 0 ? "A" : "B", {{"w", static_cast<std::int64_t>(v)}});
    } else {
      b.AddVertex(v % 2 == 0 ? "A" : "B");
    }
  }
  EXPECT_TRUE(g->Write(std::move(b)).ok());
  WriteBatch e;
  for (std::uint64_t i = 0; i < kE; ++i) {
    // Vertex 0: 100 out-edges of T0; vertex i % 90 for the rest, so degrees
    // spread over many bins; sources divisible by 5 get two types.
    const std::uint64_t src = i < 100 ? 0 : 1 + i % 90, dst = (i * 37 + 11) % kV;
    const char* type = src % 5 == 0 && i % 2 == 1 ? "T1" : "T0";
    if (i % 4 == 0) {
      e.AddEdge(type, VertexId(src), VertexId(dst), {{"k", static_cast<double>(i)}});
    } else {
      e.AddEdge(type, VertexId(src), VertexId(dst));
    }
  }
  EXPECT_TRUE(g->Write(std::move(e)).ok());
  WriteBatch r;
  for (std::uint64_t v : {63u, 64u, 127u, 128u, 202u}) r.RemoveVertex(VertexId(v));
  for (std::uint64_t id : {150u, 191u, 192u, 255u, 256u, 450u}) r.RemoveEdge(EdgeId(id));
  EXPECT_TRUE(g->Write(std::move(r)).ok());
  EXPECT_TRUE(g->Checkpoint().ok());
  *dump = test_util::Dump(g->GetSnapshot());
  if (sets != nullptr) *sets = SetsOf(g->GetSnapshot());
  EXPECT_TRUE(g->Close().ok());
  return CheckpointBytes(fs);
}

// Decode walks each radix leaf once: limits that are not multiples of 64,
// removed elements on both sides of leaf boundaries, the first and last
// leaf, elements with and without properties in one leaf, 1-3 threads.
TEST(CheckpointLoadTest, LeafBoundariesAndRemovedSlotsReopenTheSame) {
  env::SimFileSystem fs;
  std::string before, sets;
  SmallCheckpoint(fs, &before, &sets);
  for (unsigned threads : {1u, 2u, 3u}) {
    SCOPED_TRACE("io_threads=" + std::to_string(threads));
    auto g = GraphImpl::OpenDurable(WithThreads(threads), "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_NE((*g)->GetOpenStats().checkpoint_sequence, 0u);
    EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), before);
    EXPECT_EQ(SetsOf((*g)->GetSnapshot()), sets);
    EXPECT_TRUE((*g)->Close().ok());
  }
}

std::atomic<std::int64_t> freed_bytes{0};
void CountFree(void* block) {
  freed_bytes.fetch_add(static_cast<std::int64_t>(base::UsableSize(block)), std::memory_order_relaxed);
}

// Shuts `chain` down and returns its account before minus the usable bytes
// of the blocks it freed: 0 when the account counted exactly the blocks it
// held.
std::int64_t ShutdownAndCompare(storage::VersionChain* chain) {
  const std::int64_t counted = chain->account()->allocated_bytes();
  freed_bytes.store(0);
  base::SetFreeObserver(&CountFree);
  chain->Shutdown();
  base::SetFreeObserver(nullptr);
  return counted - freed_bytes.load();
}

TEST(CheckpointLoadTest, TheAccountCountsExactlyTheBlocksALoadLeaves) {
  env::SimFileSystem fs;
  std::string dump;
  const std::string bytes = SmallCheckpoint(fs, &dump);
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    auto* chain = new storage::VersionChain();
    storage::MutationContext ctx{1, nullptr, nullptr};
    storage::Version* v = chain->NewVersion(&ctx);
    storage::OwnInternTable(v->roots.labels, ctx);
    storage::OwnInternTable(v->roots.types, ctx);
    storage::OwnInternTable(v->roots.keys, ctx);
    checkpoint::Header h;
    const Status s = checkpoint::LoadCheckpoint(format_test::AsBytes(bytes), v->roots, ctx, &h, threads);
    EXPECT_TRUE(s.ok()) << s.ToString();
    chain->Abandon(v);
    EXPECT_EQ(ShutdownAndCompare(chain), 0) << "account minus the bytes freed";
  }
}

// After a load, then writes that grow and replace loaded arrays and removals
// that shrink them, the graph's account (GetMemoryStats) equals the usable
// bytes it frees when it is destroyed.
TEST(CheckpointLoadTest, MemoryStatsMatchTheBlocksFreedAfterLoadWritesAndRemovals) {
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE("io_threads=" + std::to_string(threads));
    env::SimFileSystem fs;
    std::string dump;
    SmallCheckpoint(fs, &dump);
    auto g = GraphImpl::OpenDurable(WithThreads(threads), "/db", &fs).value();
    ASSERT_NE(g->GetOpenStats().checkpoint_sequence, 0u);
    WriteBatch b;
    for (std::uint64_t i = 0; i < 300; ++i)
      b.AddEdge(i % 3 == 0 ? "T1" : "T0", VertexId(i % 7), VertexId(1 + i % 60));
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    WriteBatch r;
    {
      const Snapshot s = g->GetSnapshot();
      for (std::uint64_t e = 0; e < s.edge_id_limit(); e += 5)
        if (s.GetEdge(EdgeId(e))) r.RemoveEdge(EdgeId(e));
    }
    ASSERT_TRUE(g->Write(std::move(r)).ok());
    WriteBatch rv;
    rv.RemoveVertex(VertexId(0));
    ASSERT_TRUE(g->Write(std::move(rv)).ok());
    const std::int64_t counted = static_cast<std::int64_t>(test_util::SettledMemoryStats(*g).allocated_bytes);
    ASSERT_TRUE(g->Close().ok());
    EXPECT_EQ(static_cast<std::int64_t>(g->GetMemoryStats().allocated_bytes), counted);
    freed_bytes.store(0);
    base::SetFreeObserver(&CountFree);
    g.reset();
    base::SetFreeObserver(nullptr);
    EXPECT_EQ(counted - freed_bytes.load(), 0) << "account minus the bytes freed";
  }
}

// Every allocation the loader makes on the calling thread (worker 0) fails
// in turn: the load throws std::bad_alloc, and the half-built graph is
// still freed whole with the account back to exactly what it held.
TEST(CheckpointLoadTest, EveryLoaderAllocationCanFailAndTheGraphIsFreedWhole) {
  env::SimFileSystem fs;
  std::string dump;
  const std::string bytes = SmallCheckpoint(fs, &dump);
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    for (std::uint64_t n = 1;; ++n) {
      SCOPED_TRACE("failing allocation " + std::to_string(n));
      auto* chain = new storage::VersionChain();
      storage::MutationContext ctx{1, nullptr, nullptr};
      storage::Version* v = chain->NewVersion(&ctx);
      storage::OwnInternTable(v->roots.labels, ctx);
      storage::OwnInternTable(v->roots.types, ctx);
      storage::OwnInternTable(v->roots.keys, ctx);
      checkpoint::Header h;
      bool threw = false;
      Status s;
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      try {
        s = checkpoint::LoadCheckpoint(format_test::AsBytes(bytes), v->roots, ctx, &h, threads);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      const std::uint64_t counted = base::DisarmAllocationFaults();
      chain->Abandon(v);
      ASSERT_EQ(ShutdownAndCompare(chain), 0) << "account minus the bytes freed";
      if (!threw && counted < n) {
        ASSERT_TRUE(s.ok()) << s.ToString();
        EXPECT_GT(n, 10u) << "the load should allocate on the calling thread";
        break;
      }
      ASSERT_TRUE(threw) << "the failed allocation was not reported: " << s.ToString();
    }
  }
}

// A version on a fresh chain, ready for a load (empty intern tables born in
// ctx's epoch).
storage::Version* EmptyVersion(storage::VersionChain* chain, storage::MutationContext* ctx) {
  storage::Version* v = chain->NewVersion(ctx);
  storage::OwnInternTable(v->roots.labels, *ctx);
  storage::OwnInternTable(v->roots.types, *ctx);
  storage::OwnInternTable(v->roots.keys, *ctx);
  return v;
}

// SmallCheckpoint's graph written again in blocks of 64 ids into
// /small (four vertex blocks, eight edge blocks: a worker that throws
// leaves blocks no worker took); returns the file's path.
std::string SmallCheckpointInBlocksOf64(env::SimFileSystem& fs) {
  std::string dump;
  const std::string bytes = SmallCheckpoint(fs, &dump);
  auto* chain = new storage::VersionChain();
  storage::MutationContext ctx{1, nullptr, nullptr};
  storage::Version* v = EmptyVersion(chain, &ctx);
  checkpoint::Header h;
  EXPECT_TRUE(checkpoint::LoadCheckpoint(format_test::AsBytes(bytes), v->roots, ctx, &h, 1).ok());
  EXPECT_TRUE(fs.CreateDir("/small").ok());
  checkpoint::WriteStats stats;
  EXPECT_TRUE(checkpoint::WriteCheckpoint(&fs, "/small", h.uuid, v->roots, &stats, {.chunk_ids = 64}).ok());
  chain->Abandon(v);
  chain->Shutdown();
  const std::vector<std::string> names = fs.ListDir("/small").value();
  for (const std::string& name : names)
    if (checkpoint::ParseCheckpointFileName(name)) return "/small/" + name;
  ADD_FAILURE() << "no checkpoint in /small";
  return {};
}

// As above, with the standard library's allocations failing too (the
// pool's std::function and vectors, the workers' scratch, a block's read
// buffer), once and from then on, from a file read block by block: before,
// a std::bad_alloc after a phase had set its table's limit and before its
// workers wrote the slots (or after a worker's throw, in the blocks no
// worker then took) left slots that freeing the graph read unwritten.
TEST(CheckpointLoadTest, EveryStandardOrEngineAllocationCanFailAndTheGraphIsFreedWhole) {
  env::SimFileSystem fs;
  const std::string path = SmallCheckpointInBlocksOf64(fs);
  auto file = fs.OpenReadable(path).value();
  for (unsigned threads : {1u, 3u}) {
    for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
      SCOPED_TRACE("threads=" + std::to_string(threads) +
                   (mode == base::AllocationFaultMode::kOnce ? " once" : " from then on"));
      int failed = 0;
      for (std::uint64_t n = 1;; ++n) {
        SCOPED_TRACE("failing allocation " + std::to_string(n));
        auto* chain = new storage::VersionChain();
        storage::MutationContext ctx{1, nullptr, nullptr};
        storage::Version* v = EmptyVersion(chain, &ctx);
        checkpoint::Header h;
        bool threw = false;
        Status s;
        std::uint64_t counted = 0;
        {
          test_util::ScopedOperatorNewFaults hook;
          base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
          try {
            s = checkpoint::LoadCheckpointFile(*file, v->roots, ctx, &h, threads);
          } catch (const std::bad_alloc&) {
            threw = true;
          }
          counted = base::DisarmAllocationFaults();
        }
        chain->Abandon(v);
        ASSERT_EQ(ShutdownAndCompare(chain), 0) << "account minus the bytes freed";
        if (!threw && counted < n) {
          ASSERT_TRUE(s.ok()) << s.ToString();
          break;
        }
        // An allocation failed: reported by a throw, or by a status where
        // a caller turned it into one (out of memory, never damage), or
        // absorbed (a worker thread that could not be started runs on the
        // calling thread, base::RunOnThreads).
        ASSERT_TRUE(threw || s.ok() || s.code() == StatusCode::kResourceExhausted) << s.ToString();
        ++failed;
      }
      EXPECT_GT(failed, 20) << "the load should allocate on the calling thread";
    }
  }
}

}  // namespace
}  // namespace quiver
