// Review of the insert-path series (48177a8..cf9f975): the index tree's
// Search comparing a node's last entry first, InsertAt skipping the shift at
// a fixed node's end, and batch validation's fast paths (prefetch, cached
// edge-type name, skipped property checks for property-less edges,
// CommittedEndpointsFit) and ApplyPlain's cached edge type. (The set append
// path went with the label and type sets' move to IdSet in stop 40; its
// byte-image and builder-epoch tests moved to tests/id_set_test.cc.)
//
// Every test compares against a trivially correct answer: a linear scan of
// the node, a std::set model, or the exact status a batch must fail
// with (code, operation index, and the degree CheckDegree counted).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "env_test_util.h"
#include "index/index_tree.h"
#include "index/tree_node.h"
#include "quiver/graph.h"
#include "storage/retire_list.h"
#include "test_util.h"

namespace quiver {
namespace {

// ============================================================================
// Part 1: the index tree
// ============================================================================

namespace ipr {

using index::IndexRoot;
using index::IndexTree;
namespace tree = index::tree;

constexpr std::uint64_t kMax48 = (std::uint64_t{1} << 48) - 1;

// A node-sized, 8-byte aligned buffer.
struct NodeBuf {
  explicit NodeBuf(std::size_t bytes) : words((bytes + 7) / 8 + 1, 0) {}
  void* get() { return words.data(); }
  std::vector<std::uint64_t> words;
};

// The number of entries of `sorted` below (key, id): what LowerBound answers.
std::uint32_t LinearLowerBound(const std::vector<std::pair<std::string, std::uint64_t>>& sorted,
                               std::string_view key, std::uint64_t id) {
  std::uint32_t n = 0;
  for (const auto& e : sorted) n += tree::CompareEntries(e.first, e.second, key, id) < 0;
  return n;
}

// The last i with i == 0 or separator i <= (key, id): what ChildFor answers.
std::uint32_t LinearChildFor(const std::vector<std::pair<std::string, std::uint64_t>>& seps,
                             std::string_view key, std::uint64_t id) {
  std::uint32_t child = 0;
  for (std::uint32_t i = 1; i < seps.size(); ++i)
    if (tree::CompareEntries(seps[i].first, seps[i].second, key, id) <= 0) child = i;
  return child;
}

std::string SearchKey(std::mt19937_64& rng, std::int32_t width) {
  static constexpr char kAlphabet[] = {'\0', 'a', 'b', '\xff'};
  if (width == 0) return std::string();
  if (width > 0) {
    // Few distinct keys (16), so that equal keys with different ids are common.
    std::string s(static_cast<std::size_t>(width), kAlphabet[rng() % 4]);
    s.back() = kAlphabet[rng() % 4];
    return s;
  }
  std::string s(rng() % 5, ' ');
  for (char& c : s) c = kAlphabet[rng() % 4];
  return s;
}

std::uint64_t SearchId(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: return 0;
    case 1: return kMax48;
    case 2: return kMax48 - 1 - rng() % 3;
    case 3: return 1 + rng() % 3;
    default: return rng() % 4096;
  }
}

// Probes around every entry of `sorted` and a few random ones, among them
// ids 0, 2^48 - 1 and UINT64_MAX (a cursor seeks with those).
std::vector<std::pair<std::string, std::uint64_t>> Probes(
    const std::vector<std::pair<std::string, std::uint64_t>>& sorted, std::int32_t width,
    std::mt19937_64& rng) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const auto& e : sorted) {
    out.push_back(e);
    if (e.second > 0) out.push_back({e.first, e.second - 1});
    out.push_back({e.first, e.second + 1});
    out.push_back({e.first, 0});
    out.push_back({e.first, kMax48});
    out.push_back({e.first, std::numeric_limits<std::uint64_t>::max()});
  }
  for (int i = 0; i < 40; ++i) out.push_back({SearchKey(rng, width), SearchId(rng)});
  if (width > 0) {
    out.push_back({std::string(static_cast<std::size_t>(width), '\0'), 0});
    out.push_back(
        {std::string(static_cast<std::size_t>(width), '\xff'), std::numeric_limits<std::uint64_t>::max()});
  } else {
    out.push_back({std::string(), 0});
    out.push_back({std::string(), std::numeric_limits<std::uint64_t>::max()});
  }
  return out;
}

struct SearchLayout {
  std::int32_t width;
  std::uint32_t fanout;
};
constexpr SearchLayout kSearchLayouts[] = {{0, 0}, {0, 4}, {0, 5}, {8, 0}, {8, 4}, {3, 0}, {-1, 0}, {-1, 4}};

// Entries that fit one node of kind k, sorted and distinct: up to `n`.
std::vector<std::pair<std::string, std::uint64_t>> NodeEntries(const tree::Shape& s, tree::Kind k,
                                                               std::size_t n, std::mt19937_64& rng) {
  std::set<std::pair<std::string, std::uint64_t>> set;
  std::size_t attempts = 0;
  while (set.size() < n && attempts++ < 50 * n + 100) set.insert({SearchKey(rng, s.width), SearchId(rng)});
  std::vector<std::pair<std::string, std::uint64_t>> out;
  tree::Load load;
  for (const auto& e : set) {
    const tree::Load next = load + tree::EntryLoad(s, k, e.first.size());
    if (!tree::Fits(s, k, next)) break;
    load = next;
    out.push_back(e);
  }
  return out;
}

void* FakeChild(std::uint32_t i) { return reinterpret_cast<void*>(std::uintptr_t{0x10000} + 64 * i); }

// Builds a node of kind k from `entries` twice: appended in order (InsertAt
// at the end: no shift since 6873805) and inserted in a random order at the
// position a linear scan gives (shifts of every length). Both must hold
// exactly the entries, children and counts.
void BuildBothWays(const tree::Shape& s, tree::Kind k,
                   const std::vector<std::pair<std::string, std::uint64_t>>& entries, void* appended,
                   void* shuffled, std::mt19937_64& rng) {
  tree::InitNode(s, k, appended, 1);
  tree::InitNode(s, k, shuffled, 1);
  for (std::uint32_t i = 0; i < entries.size(); ++i) {
    tree::InsertAt(s, k, appended, tree::Count(appended),
                   tree::Entry{entries[i].first, entries[i].second, FakeChild(i), i + 1u});
  }
  std::vector<std::uint32_t> order(entries.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::pair<std::string, std::uint64_t>> so_far;
  for (std::uint32_t i : order) {
    const auto& e = entries[i];
    const std::uint32_t at = LinearLowerBound(so_far, e.first, e.second);
    so_far.insert(so_far.begin() + at, e);
    tree::InsertAt(s, k, shuffled, at, tree::Entry{e.first, e.second, FakeChild(i), i + 1u});
  }
  for (void* n : {appended, shuffled}) {
    ASSERT_EQ(tree::Count(n), entries.size());
    for (std::uint32_t i = 0; i < entries.size(); ++i) {
      ASSERT_EQ(std::string(tree::Key(s, k, n, i)), entries[i].first) << "entry " << i;
      ASSERT_EQ(tree::Id(s, k, n, i), entries[i].second) << "entry " << i;
      if (k == tree::kInner) {
        ASSERT_EQ(tree::Child(s, n, i), FakeChild(i)) << "entry " << i;
        ASSERT_EQ(tree::ChildCount(s, n, i), i + 1u) << "entry " << i;
      }
    }
  }
}

// Passing coverage: LowerBound and ChildFor against a linear scan at every
// count that matters (0, 1, 2, the 16-way search's threshold and a full
// node), every layout, equal keys with different ids, ids 0 and 2^48 - 1,
// and probes with ids past 48 bits.
TEST(InsertPathReviewTest, SearchMatchesLinearScanAtEveryCountAndLayout) {
  std::mt19937_64 rng(2024);
  for (const SearchLayout& layout : kSearchLayouts) {
    SCOPED_TRACE("width " + std::to_string(layout.width) + " fanout " + std::to_string(layout.fanout));
    const tree::Shape s = tree::ShapeOf(IndexRoot{.key_width = layout.width, .max_fanout = layout.fanout});
    for (tree::Kind k : {tree::kLeaf, tree::kInner}) {
      SCOPED_TRACE(k == tree::kLeaf ? "leaf" : "inner");
      const std::uint32_t max = s.max_count[k];
      std::vector<std::size_t> counts = {0, 1, 2, 3, 4, 5, 47, 48, 49, 50, 64, 100, 300, max - 1, max};
      NodeBuf a(s.node_bytes[k]), b(s.node_bytes[k]);
      for (std::size_t want : counts) {
        if (want > max) continue;
        if (k == tree::kInner && want == 0) continue;  // an inner node has a child
        for (int rep = 0; rep < 3; ++rep) {
          const auto entries = NodeEntries(s, k, want, rng);
          if (k == tree::kInner && entries.empty()) continue;
          SCOPED_TRACE("count " + std::to_string(entries.size()));
          ASSERT_NO_FATAL_FAILURE(BuildBothWays(s, k, entries, a.get(), b.get(), rng));
          for (const auto& p : Probes(entries, layout.width, rng)) {
            if (layout.width > 0 && p.first.size() != static_cast<std::size_t>(layout.width)) continue;
            if (k == tree::kLeaf) {
              ASSERT_EQ(tree::LowerBound(s, a.get(), p.first, p.second),
                        LinearLowerBound(entries, p.first, p.second))
                  << "probe id " << p.second;
            } else {
              ASSERT_EQ(tree::ChildFor(s, a.get(), p.first, p.second),
                        LinearChildFor(entries, p.first, p.second))
                  << "probe id " << p.second;
            }
          }
        }
      }
    }
  }
}

}  // namespace ipr

// ============================================================================
// Part 2: batch validation and apply, through the public API
// ============================================================================

constexpr std::size_t kReviewMaxDegree = 8;
constexpr std::size_t kReviewMaxString = 16;

Options ReviewOptions() {
  Options o;
  o.limits.max_degree = kReviewMaxDegree;
  o.limits.max_string_bytes = kReviewMaxString;
  return o;
}

std::unique_ptr<Graph> OpenReviewGraph() {
  auto g = Graph::OpenInMemory(ReviewOptions());
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : nullptr;
}

// n committed vertices of label "V".
std::vector<VertexId> AddVertices(Graph& g, std::size_t n) {
  WriteBatch b;
  for (std::size_t i = 0; i < n; ++i) b.AddVertex("V");
  auto r = g.Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->vertices : std::vector<VertexId>{};
}

// The status of a batch that must fail: its code, its operation index and a
// message fragment; the graph must be unchanged.
void ExpectFails(Graph& g, WriteBatch b, StatusCode code, std::size_t op, const std::string& fragment = "") {
  const Snapshot before = g.GetSnapshot();
  const std::string dump = test_util::Dump(before);
  auto r = g.Write(std::move(b));
  ASSERT_FALSE(r.ok()) << "the batch committed";
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find("operation " + std::to_string(op) + ":"), std::string::npos)
      << r.status().ToString();
  if (!fragment.empty()) {
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().ToString();
  }
  const Snapshot after = g.GetSnapshot();
  EXPECT_EQ(after.sequence(), before.sequence());
  EXPECT_EQ(test_util::Dump(after), dump);
}

// Passing coverage: a hub near Limits::max_degree among committed vertices
// far from it and fresh vertices, in one batch: the committed pairs take
// CommittedEndpointsFit, the hub's edges the full count; the hub ends at
// exactly the limit, and one more is refused with the exact degree.
TEST(InsertPathReviewTest, HubNearTheDegreeLimitAmongFastPathEdges) {
  auto g = OpenReviewGraph();
  ASSERT_NE(g, nullptr);
  const std::vector<VertexId> v = AddVertices(*g, 12);
  const VertexId hub = v[0], a = v[1], b = v[2], c = v[3], sink = v[4];
  {  // hub: 6 out-edges; sink: 6 in-edges
    WriteBatch w;
    for (int i = 0; i < 6; ++i) w.AddEdge("E", hub, v[5 + i]);
    for (int i = 0; i < 6; ++i) w.AddEdge("E", v[5 + i], sink);
    ASSERT_TRUE(g->Write(std::move(w)).ok());
  }
  {  // 2 more out for the hub, 2 more in for the sink, among committed and fresh edges
    WriteBatch w;
    NewVertex f = w.AddVertex("V");
    w.AddEdge("E", a, b);
    w.AddEdge("E", hub, a);
    w.AddEdge("E", f, hub);
    w.AddEdge("E", b, c);
    w.AddEdge("E", c, sink);
    w.AddEdge("F", a, c);
    w.AddEdge("E", hub, f);
    w.AddEdge("E", f, sink);
    w.AddEdge("E", c, a);
    auto r = g->Write(std::move(w));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.OutDegree(hub), kReviewMaxDegree);
  EXPECT_EQ(s.InDegree(sink), kReviewMaxDegree);
  EXPECT_EQ(s.InDegree(hub), 1u);
  {
    WriteBatch w;
    for (int i = 0; i < 5; ++i) w.AddEdge("E", a, b);
    w.AddEdge("E", hub, c);  // operation 5: the hub's 9th
    ExpectFails(*g, std::move(w), StatusCode::kOutOfRange, 5, "9 out-edges");
  }
  {
    WriteBatch w;
    w.AddEdge("E", b, c);
    w.AddEdge("E", a, sink);  // operation 1: the sink's 9th
    ExpectFails(*g, std::move(w), StatusCode::kOutOfRange, 1, "9 in-edges");
  }
  {  // the hub may still take in-edges (its in-degree is far from the limit)
    WriteBatch w;
    for (int i = 0; i < 7; ++i) w.AddEdge("E", v[5 + i % 6], hub);
    ASSERT_TRUE(g->Write(std::move(w)).ok());
    EXPECT_EQ(g->GetSnapshot().InDegree(hub), kReviewMaxDegree);
  }
}

// Passing coverage: a batch of more edges than max_degree makes every
// endpoint take the counting path; counts per vertex and direction are exact
// (a self-loop counts once out and once in).
TEST(InsertPathReviewTest, DegreeCountsAreExactWhenEveryEndpointIsCounted) {
  auto g = OpenReviewGraph();
  ASSERT_NE(g, nullptr);
  const std::vector<VertexId> v = AddVertices(*g, 4);
  {
    WriteBatch w;
    w.AddEdge("E", v[0], v[1]);
    ASSERT_TRUE(g->Write(std::move(w)).ok());
  }
  {  // v0: 1 + 7 = 8 out; v1: 1 + 7 = 8 in; then v2's self-loops
    WriteBatch w;
    for (int i = 0; i < 7; ++i) w.AddEdge("E", v[0], v[1]);
    for (int i = 0; i < 8; ++i) w.AddEdge("L", v[2], v[2]);
    auto r = g->Write(std::move(w));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.OutDegree(v[0]), 8u);
  EXPECT_EQ(s.InDegree(v[1]), 8u);
  EXPECT_EQ(s.OutDegree(v[2]), 8u);
  EXPECT_EQ(s.InDegree(v[2]), 8u);
  {
    WriteBatch w;
    w.AddEdge("E", v[3], v[3]);
    w.AddEdge("E", v[2], v[3]);  // operation 1: v2's 9th out-edge
    ExpectFails(*g, std::move(w), StatusCode::kOutOfRange, 1, "9 out-edges");
  }
  {  // a fresh vertex's own count, past the limit within the batch
    WriteBatch w;
    NewVertex f = w.AddVertex("V");
    for (int i = 0; i < 9; ++i) w.AddEdge("E", f, v[3]);
    ExpectFails(*g, std::move(w), StatusCode::kOutOfRange, 9, "9 out-edges");
  }
}

// Passing coverage: the cached edge-type name. A name that fails CheckName
// (empty, invalid UTF-8, too long) is refused wherever it stands, after a
// valid name repeated (past the prefetch window too), at the first
// operation, and repeated; a name at the length limit repeated is fine.
TEST(InsertPathReviewTest, EdgeTypeNameIsCheckedWheneverItChanges) {
  auto g = OpenReviewGraph();
  ASSERT_NE(g, nullptr);
  const std::vector<VertexId> v = AddVertices(*g, 3);
  const std::string too_long(kReviewMaxString + 1, 't');
  const std::string at_limit(kReviewMaxString, 't');
  struct Bad {
    std::string name;
    StatusCode code;
  };
  const std::vector<Bad> bad = {{"", StatusCode::kInvalidArgument},
                                {"T\xff", StatusCode::kInvalidArgument},
                                {std::string("\xc3"), StatusCode::kInvalidArgument},
                                {std::string("\x80"), StatusCode::kInvalidArgument},
                                {std::string("T\xc0\x80"), StatusCode::kInvalidArgument},
                                {std::string("T\xed\xa0\x80"), StatusCode::kInvalidArgument},
                                {std::string("T\xf4\x90\x80\x80"), StatusCode::kInvalidArgument},
                                {std::string("\xf8\x88\x80\x80\x80"), StatusCode::kInvalidArgument},
                                {too_long, StatusCode::kOutOfRange}};
  for (const Bad& x : bad) {
    SCOPED_TRACE("name of " + std::to_string(x.name.size()) + " bytes");
    for (std::size_t good_before : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{20}}) {
      WriteBatch w;
      for (std::size_t i = 0; i < good_before; ++i)
        w.AddEdge(i % 2 == 0 ? "T" : "U", v[i % 3], v[(i + 1) % 3]);
      w.AddEdge(x.name, v[0], v[1]);
      w.AddEdge(x.name, v[1], v[2]);
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), x.code, good_before));
    }
    {  // the bad name right after the same good prefix, alternating
      WriteBatch w;
      w.AddEdge("T", v[0], v[1]);
      w.AddEdge(x.name, v[0], v[1]);
      w.AddEdge("T", v[0], v[1]);
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), x.code, 1));
    }
  }
  WriteBatch w;
  for (int i = 0; i < 4; ++i) w.AddEdge(at_limit, v[0], v[1]);
  ASSERT_TRUE(g->Write(std::move(w)).ok());
  EXPECT_EQ(g->GetSnapshot().CountEdges(*g->GetSnapshot().FindEdgeType(at_limit)), 4u);
}

// Passing coverage: types alternating and new types appearing mid-batch
// (the intern table cloned, OwnInternTable, between two edges of a cached
// type), in one batch, across batches of one commit group, and replayed from
// the WAL: every edge has its type, every type set holds exactly its edges,
// and a snapshot taken before keeps its sets.
std::map<std::string, std::vector<std::uint64_t>> ExpectTypes(
    const Snapshot& s, const std::vector<std::pair<EdgeId, std::string>>& edges) {
  std::map<std::string, std::vector<std::uint64_t>> by_type;
  for (const auto& [e, type] : edges) {
    by_type[type].push_back(e.value());
    auto info = s.GetEdge(e);
    EXPECT_TRUE(info.has_value()) << "edge " << e.value();
    if (!info) continue;
    auto t = s.FindEdgeType(type);
    EXPECT_TRUE(t.has_value()) << type;
    if (t) {
      EXPECT_EQ(info->type, *t) << "edge " << e.value() << " should be " << type;
    }
  }
  for (auto& [type, ids] : by_type) {
    std::sort(ids.begin(), ids.end());
    auto t = s.FindEdgeType(type);
    if (!t) continue;
    std::vector<std::uint64_t> got;
    for (EdgeId e : s.Edges(*t)) got.push_back(e.value());
    EXPECT_EQ(got, ids) << "the set of " << type;
    EXPECT_EQ(s.CountEdges(*t), ids.size()) << type;
  }
  return by_type;
}

TEST(InsertPathReviewTest, AlternatingAndNewEdgeTypesInOneBatchGroupAndReplay) {
  env::test::TempDir dir;
  Options o = ReviewOptions();
  o.limits.max_degree = 1u << 20;
  o.durable.checkpoint_on_close = false;  // reopening replays the WAL
  std::vector<std::pair<EdgeId, std::string>> edges;
  std::string dump;
  {
    auto opened = Graph::Open(o, dir.File("graph"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto g = std::move(opened).value();
    const std::vector<VertexId> v = AddVertices(*g, 40);
    {  // A and B exist before
      WriteBatch w;
      w.AddEdge("A", v[0], v[1]);
      w.AddEdge("B", v[1], v[2]);
      auto r = g->Write(std::move(w));
      ASSERT_TRUE(r.ok());
      edges.push_back({r->edges[0], "A"});
      edges.push_back({r->edges[1], "B"});
    }
    const Snapshot old = g->GetSnapshot();
    const auto old_sets = ExpectTypes(old, edges);
    const std::vector<std::string> pattern = {"A", "B", "A", "B", "C", "A", "C",
                                              "C", "D", "B", "A", "A", "E", "A"};
    {  // one batch: alternation, new types (C, D, E) interned mid-batch, fresh endpoints too
      WriteBatch w;
      NewVertex f = w.AddVertex("V");
      std::vector<std::string> types;
      for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < pattern.size(); ++i) {
          const VertexRef src = i % 5 == 0 ? VertexRef(f) : VertexRef(v[(i + round) % 40]);
          w.AddEdge(pattern[i], src, v[(i * 7 + round) % 40]);
          types.push_back(pattern[i]);
        }
      }
      auto r = g->Write(std::move(w));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (std::size_t i = 0; i < types.size(); ++i) edges.push_back({r->edges[i], types[i]});
    }
    {  // two batches that may share a group: the first adds type F, the second alternates F and A
      WriteBatch w1, w2;
      w1.AddEdge("F", v[3], v[4]);
      w1.AddEdge("A", v[4], v[5]);
      for (int i = 0; i < 10; ++i) w2.AddEdge(i % 2 == 0 ? "F" : "A", v[i], v[i + 1]);
      w2.AddEdge("G", v[1], v[1]);
      w2.AddEdge("F", v[2], v[2]);
      auto f1 = g->WriteAsync(std::move(w1));
      auto f2 = g->WriteAsync(std::move(w2));
      auto r1 = f1.get();
      auto r2 = f2.get();
      ASSERT_TRUE(r1.ok() && r2.ok());
      edges.push_back({r1->edges[0], "F"});
      edges.push_back({r1->edges[1], "A"});
      for (int i = 0; i < 10; ++i) edges.push_back({r2->edges[i], i % 2 == 0 ? "F" : "A"});
      edges.push_back({r2->edges[10], "G"});
      edges.push_back({r2->edges[11], "F"});
    }
    const Snapshot s = g->GetSnapshot();
    ExpectTypes(s, edges);
    // The snapshot from before still reads its own sets.
    for (const auto& [type, ids] : old_sets) {
      std::vector<std::uint64_t> got;
      for (EdgeId e : old.Edges(*old.FindEdgeType(type))) got.push_back(e.value());
      EXPECT_EQ(got, ids) << "old snapshot's set of " << type;
      EXPECT_EQ(old.CountEdges(*old.FindEdgeType(type)), ids.size());
    }
    dump = test_util::Dump(s);
  }
  auto reopened = Graph::Open(o, dir.File("graph"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  const Snapshot s = (*reopened)->GetSnapshot();
  EXPECT_EQ(test_util::Dump(s), dump);
  ExpectTypes(s, edges);
}

// Passing coverage: endpoints CommittedEndpointsFit must hand to the full
// checks: a vertex removed earlier in the batch (and the batch's other
// edges while any vertex is removed), a vertex removed by an earlier batch,
// ids at and past vertex_limit (up to 2^48 - 1), a handle from another
// batch, and a new vertex removed before the edge; each at the first
// operation and past the prefetch window.
TEST(InsertPathReviewTest, EndpointsTheFastPathMustNotAccept) {
  auto g = OpenReviewGraph();
  ASSERT_NE(g, nullptr);
  std::vector<VertexId> v = AddVertices(*g, 6);
  const VertexId dead = v[5];
  {
    WriteBatch w;
    w.RemoveVertex(dead);
    ASSERT_TRUE(g->Write(std::move(w)).ok());
  }
  const std::uint64_t limit = g->GetSnapshot().vertex_id_limit();
  for (std::size_t filler : {std::size_t{0}, std::size_t{20}}) {
    SCOPED_TRACE("filler " + std::to_string(filler));
    auto fill = [&](WriteBatch& w) {
      for (std::size_t i = 0; i < filler; ++i) w.AddEdge("E", v[1 + i % 3], v[1 + (i + 1) % 3]);
    };
    {  // removed earlier in this batch
      WriteBatch w;
      w.RemoveVertex(v[4]);
      fill(w);
      w.AddEdge("E", v[1], v[2]);
      w.AddEdge("E", v[1], v[4]);
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kNotFound, filler + 2));
    }
    {
      WriteBatch w;
      fill(w);
      w.AddEdge("E", v[4], v[1]);
      w.RemoveVertex(v[4]);
      w.AddEdge("E", v[4], v[1]);
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kNotFound, filler + 2));
    }
    for (std::uint64_t id : {dead.value(), limit, limit + 1, limit + 16, ipr::kMax48}) {
      SCOPED_TRACE("target id " + std::to_string(id));
      WriteBatch w;
      fill(w);
      w.AddEdge("E", v[1], VertexId(id));
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kNotFound, filler));
      WriteBatch w2;
      fill(w2);
      w2.AddEdge("E", VertexId(id), v[1]);
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w2), StatusCode::kNotFound, filler));
    }
    {  // a handle from another batch
      WriteBatch other;
      NewVertex foreign = other.AddVertex("V");
      WriteBatch w;
      fill(w);
      w.AddEdge("E", v[1], foreign);
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kInvalidArgument, filler));
    }
    {  // a new vertex removed, then an edge to it
      WriteBatch w;
      NewVertex n = w.AddVertex("V");
      w.AddEdge("E", n, v[1]);
      w.RemoveVertex(n);
      fill(w);
      w.AddEdge("E", v[1], n);
      ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kNotFound, filler + 3));
    }
  }
  {  // a removal, then edges between live committed vertices: fine
    WriteBatch w;
    w.RemoveVertex(v[4]);
    for (int i = 0; i < 20; ++i) w.AddEdge("E", v[1 + i % 3], v[1 + (i + 1) % 3]);
    auto r = g->Write(std::move(w));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(g->GetSnapshot().HasVertex(v[4]));
  }
}

// Passing coverage: property checks still run for edges with properties
// after property-less ones (the skip is only for empty lists), and a
// property-less edge's type is still interned and indexed.
TEST(InsertPathReviewTest, EdgePropertiesAreCheckedAfterPropertylessEdges) {
  auto g = OpenReviewGraph();
  ASSERT_NE(g, nullptr);
  const std::vector<VertexId> v = AddVertices(*g, 3);
  {
    WriteBatch w;
    w.AddEdge("E", v[0], v[1]);
    w.AddEdge("E", v[1], v[2]);
    w.AddEdge("E", v[0], v[2], {{"k", 1}, {"k", 2}});  // a key twice
    ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kInvalidArgument, 2));
  }
  {
    WriteBatch w;
    w.AddEdge("E", v[0], v[1]);
    w.AddEdge("E", v[0], v[2], {{"", 1}});  // an empty key
    ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kInvalidArgument, 1));
  }
  {
    WriteBatch w;
    w.AddEdge("E", v[0], v[1]);
    w.AddEdge("E", v[0], v[2], {{"s", std::string(kReviewMaxString + 1, 'x')}});
    ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kOutOfRange, 1));
  }
}

// Passing coverage: an upsert batch (validated as the resolver's plain
// batch, whose operation indexes map back to the caller's) with alternating
// types and an edge type that fails late.
TEST(InsertPathReviewTest, UpsertBatchesWithAlternatingEdgeTypes) {
  auto g = OpenReviewGraph();
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(
      g->CreateIndex({.name = "person_name", .label = "Person", .keys = {"name"}, .kind = IndexKind::kUnique})
          .ok());
  const std::vector<VertexId> v = AddVertices(*g, 3);
  std::vector<std::pair<EdgeId, std::string>> edges;
  {
    WriteBatch w;
    NewVertex p = w.UpsertVertex("Person", {{"name", "p"}});
    w.AddEdge("A", v[0], p);
    w.AddEdge("B", p, v[1]);
    w.AddEdge("A", v[1], v[2]);
    w.AddEdge("B", v[2], v[0]);
    auto r = g->Write(std::move(w));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (int i = 0; i < 4; ++i) edges.push_back({r->edges[i], i % 2 == 0 ? "A" : "B"});
  }
  {
    WriteBatch w;
    NewVertex p = w.UpsertVertex("Person", {{"name", "p"}});  // found
    w.AddEdge("A", v[0], p);
    w.AddEdge("A", p, v[1]);
    auto r = g->Write(std::move(w));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->vertex_found[0]);
    edges.push_back({r->edges[0], "A"});
    edges.push_back({r->edges[1], "A"});
  }
  {
    WriteBatch w;
    NewVertex p = w.UpsertVertex("Person", {{"name", "p"}});
    w.AddEdge("A", v[0], p);
    w.AddEdge("A", p, v[1]);
    w.AddEdge("", p, v[1]);
    ASSERT_NO_FATAL_FAILURE(ExpectFails(*g, std::move(w), StatusCode::kInvalidArgument, 3));
  }
  ExpectTypes(g->GetSnapshot(), edges);
}

// Passing coverage: type sets the checkpoint loader built (BuildSets, in
// recovery's epoch, published at open) take appends from the writer's
// groups: a snapshot taken at open keeps its sets, the new sets hold every
// edge, and a second reopen (checkpoint plus WAL replay on top) agrees.
TEST(InsertPathReviewTest, SetsLoadedFromACheckpointTakeAppendsAndKeepOldVersions) {
  env::test::TempDir dir;
  Options o = ReviewOptions();
  o.limits.max_degree = 1u << 20;
  std::vector<std::pair<EdgeId, std::string>> edges;
  std::vector<VertexId> v;
  {  // enough edges for type sets of height 1 and more, then a checkpoint on close
    auto g = Graph::Open(o, dir.File("graph")).value();
    v = AddVertices(*g, 64);
    for (int batch = 0; batch < 4; ++batch) {
      WriteBatch w;
      std::vector<std::string> types;
      for (int i = 0; i < 1500; ++i) {
        types.push_back(i % 3 == 0 ? "B" : "A");
        w.AddEdge(types.back(), v[static_cast<std::size_t>(i) % 64],
                  v[static_cast<std::size_t>(i * 7 + batch) % 64]);
      }
      auto r = g->Write(std::move(w));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (std::size_t i = 0; i < types.size(); ++i) edges.push_back({r->edges[i], types[i]});
    }
  }
  o.durable.checkpoint_on_close = false;
  std::string dump;
  {
    auto opened = Graph::Open(o, dir.File("graph"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto g = std::move(opened).value();
    ASSERT_GT(g->GetOpenStats().checkpoint_sequence, 0u) << "the sets must come from the checkpoint loader";
    const Snapshot at_open = g->GetSnapshot();
    const auto sets_at_open = ExpectTypes(at_open, edges);
    for (int batch = 0; batch < 6; ++batch) {
      WriteBatch w;
      std::vector<std::string> types;
      for (int i = 0; i < 700; ++i) {
        types.push_back(i % 4 == 0 ? "B" : i % 4 == 1 ? "C" : "A");
        w.AddEdge(types.back(), v[static_cast<std::size_t>(i * 3) % 64],
                  v[static_cast<std::size_t>(i + batch) % 64]);
      }
      if (batch == 3) w.RemoveEdge(edges[5].first);  // an erase in the loaded set, then appends
      auto r = g->Write(std::move(w));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (std::size_t i = 0; i < types.size(); ++i) edges.push_back({r->edges[i], types[i]});
      if (batch == 3) edges.erase(edges.begin() + 5);
    }
    for (const auto& [type, ids] : sets_at_open) {
      std::vector<std::uint64_t> got;
      for (EdgeId e : at_open.Edges(*at_open.FindEdgeType(type))) got.push_back(e.value());
      EXPECT_EQ(got, ids) << "the set of " << type << " at open";
    }
    const Snapshot s = g->GetSnapshot();
    ExpectTypes(s, edges);
    dump = test_util::Dump(s);
  }
  auto reopened = Graph::Open(o, dir.File("graph"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_GT((*reopened)->GetOpenStats().wal_groups_replayed, 0u) << "the second open must replay the WAL";
  const Snapshot s = (*reopened)->GetSnapshot();
  EXPECT_EQ(test_util::Dump(s), dump);
  ExpectTypes(s, edges);
}

void RandomValidationRun(std::uint64_t seed);

// Passing coverage: random batches of AddVertex, AddEdge (committed, new,
// dead, removed and out-of-range endpoints; types "A", "B" and an invalid
// one) and RemoveVertex against a model of ValidatePlain's rules as they
// were before the series: the first failing operation (code and index),
// and after each commit every live vertex's degrees. max_degree is 8, so
// batches of more than 8 edges count every endpoint, smaller ones only
// those near the limit (CommittedEndpointsFit and CheckDegree's cheap test).
TEST(InsertPathReviewTest, RandomBatchesMatchAModelOfValidation) {
  for (std::uint64_t seed : {99, 100, 101, 102}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_NO_FATAL_FAILURE(RandomValidationRun(seed));
  }
}

void RandomValidationRun(std::uint64_t seed) {
  auto g = OpenReviewGraph();
  ASSERT_NE(g, nullptr);
  std::mt19937_64 rng(seed);
  std::set<std::uint64_t> live;
  std::set<std::uint64_t> dead;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> model_edges;
  for (VertexId x : AddVertices(*g, 10)) live.insert(x.value());
  int committed = 0, failed = 0;
  for (int round = 0; round < 1500; ++round) {
    const std::uint64_t limit = g->GetSnapshot().vertex_id_limit();
    std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> degrees;  // committed (out, in)
    for (std::uint64_t x : live) degrees[x] = {0, 0};
    for (const auto& [a, b] : model_edges) {
      ++degrees[a].first;
      ++degrees[b].second;
    }
    // The batch, as (kind, type, endpoints): endpoint < 0 is new vertex -1-endpoint.
    struct MOp {
      int kind;  // 0 add vertex, 1 add edge, 2 remove vertex
      std::string type;
      std::int64_t v1 = 0, v2 = 0;
    };
    std::vector<MOp> ops;
    std::int64_t new_count = 0;
    std::vector<std::uint64_t> live_list(live.begin(), live.end());
    auto endpoint = [&]() -> std::int64_t {
      const std::uint64_t r = rng() % 100;
      if (r < 12 && new_count > 0) return -1 - static_cast<std::int64_t>(rng() % new_count);
      if (r < 16 && !dead.empty())
        return static_cast<std::int64_t>(*std::next(dead.begin(), rng() % dead.size()));
      if (r < 18) return static_cast<std::int64_t>(limit + rng() % 3);
      if (live_list.empty()) return static_cast<std::int64_t>(limit);
      return static_cast<std::int64_t>(live_list[rng() % live_list.size()]);
    };
    const int n = 1 + static_cast<int>(rng() % (rng() % 4 == 0 ? 30 : 9));
    for (int i = 0; i < n; ++i) {
      const std::uint64_t r = rng() % 100;
      if (r < 12 || live_list.size() < 3) {
        ops.push_back({0, "V"});
        ++new_count;
      } else if (r < 96) {
        const std::uint64_t t = rng() % 100;
        ops.push_back({1, t < 2 ? std::string() : t < 60 ? "A" : "B", endpoint(), endpoint()});
      } else {
        ops.push_back({2, "", endpoint(), 0});
      }
    }
    // The model's verdict.
    std::size_t added_edges = 0;
    for (const MOp& op : ops) added_edges += op.kind == 1;
    std::set<std::uint64_t> removed_committed;
    std::set<std::int64_t> removed_new;
    std::map<std::pair<std::int64_t, int>, std::uint64_t> counted;
    StatusCode want = StatusCode::kOk;
    std::size_t want_op = 0;
    auto check_vertex = [&](std::int64_t x) {
      if (x < 0) return removed_new.count(x) ? StatusCode::kNotFound : StatusCode::kOk;
      const auto u = static_cast<std::uint64_t>(x);
      if (!live.count(u) || removed_committed.count(u)) return StatusCode::kNotFound;
      return StatusCode::kOk;
    };
    auto check_degree = [&](std::int64_t x, int dir) {
      const std::uint64_t b = x < 0      ? 0
                              : dir == 0 ? degrees[static_cast<std::uint64_t>(x)].first
                                         : degrees[static_cast<std::uint64_t>(x)].second;
      if (b + added_edges <= kReviewMaxDegree) return StatusCode::kOk;
      return b + ++counted[{x, dir}] <= kReviewMaxDegree ? StatusCode::kOk : StatusCode::kOutOfRange;
    };
    for (std::size_t i = 0; i < ops.size() && want == StatusCode::kOk; ++i) {
      const MOp& op = ops[i];
      StatusCode c = StatusCode::kOk;
      if (op.kind == 1) {
        if (op.type.empty()) c = StatusCode::kInvalidArgument;
        if (c == StatusCode::kOk) c = check_vertex(op.v1);
        if (c == StatusCode::kOk) c = check_vertex(op.v2);
        if (c == StatusCode::kOk) c = check_degree(op.v1, 0);
        if (c == StatusCode::kOk) c = check_degree(op.v2, 1);
      } else if (op.kind == 2) {
        c = check_vertex(op.v1);
        if (c == StatusCode::kOk) {
          if (op.v1 < 0) {
            removed_new.insert(op.v1);
          } else {
            removed_committed.insert(static_cast<std::uint64_t>(op.v1));
          }
        }
      }
      if (c != StatusCode::kOk) {
        want = c;
        want_op = i;
      }
    }
    // The batch itself.
    WriteBatch w;
    std::vector<NewVertex> handles;
    auto ref = [&](std::int64_t x) -> VertexRef {
      if (x < 0) return handles[static_cast<std::size_t>(-1 - x)];
      return VertexId(static_cast<std::uint64_t>(x));
    };
    // endpoint() drew new vertices among the AddVertex ops before, so every
    // handle exists when an operation names it.
    for (const MOp& op : ops) {
      if (op.kind == 0) {
        handles.push_back(w.AddVertex("V"));
      } else if (op.kind == 1) {
        w.AddEdge(op.type, ref(op.v1), ref(op.v2));
      } else {
        w.RemoveVertex(ref(op.v1));
      }
    }
    std::string described;
    for (const MOp& op : ops) {
      described += op.kind == 0 ? "V"
                   : op.kind == 1
                       ? "E'" + op.type + "'(" + std::to_string(op.v1) + "," + std::to_string(op.v2) + ")"
                       : "R(" + std::to_string(op.v1) + ")";
      described += " ";
    }
    for (const auto& [x, d] : degrees)
      described +=
          " [" + std::to_string(x) + ":" + std::to_string(d.first) + "/" + std::to_string(d.second) + "]";
    described += " limit " + std::to_string(limit);
    auto r = g->Write(std::move(w));
    if (want != StatusCode::kOk) {
      ++failed;
      ASSERT_FALSE(r.ok()) << "round " << round << ": expected failure at operation " << want_op << ": "
                           << described;
      ASSERT_EQ(r.status().code(), want) << "round " << round << ": " << r.status().ToString();
      ASSERT_NE(r.status().message().find("operation " + std::to_string(want_op) + ":"), std::string::npos)
          << "round " << round << ": " << r.status().ToString();
      continue;
    }
    ++committed;
    ASSERT_TRUE(r.ok()) << "round " << round << ": " << r.status().ToString() << ": " << described;
    // Apply to the model.
    std::vector<std::uint64_t> new_ids;
    for (VertexId x : r->vertices) new_ids.push_back(x.value());
    auto id_of = [&](std::int64_t x) {
      return x < 0 ? new_ids[static_cast<std::size_t>(-1 - x)] : static_cast<std::uint64_t>(x);
    };
    for (std::uint64_t x : new_ids) live.insert(x);
    for (const MOp& op : ops) {
      if (op.kind == 1) model_edges.push_back({id_of(op.v1), id_of(op.v2)});
      if (op.kind == 2) {
        const std::uint64_t x = id_of(op.v1);
        live.erase(x);
        dead.insert(x);
        std::erase_if(model_edges, [x](const auto& e) { return e.first == x || e.second == x; });
      }
    }
    const Snapshot s = g->GetSnapshot();
    std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> deg;
    for (std::uint64_t x : live) deg[x] = {0, 0};
    for (const auto& [a, b] : model_edges) {
      ++deg[a].first;
      ++deg[b].second;
    }
    for (const auto& [x, d] : deg) {
      ASSERT_TRUE(s.HasVertex(VertexId(x)));
      ASSERT_EQ(s.OutDegree(VertexId(x)), d.first) << "vertex " << x;
      ASSERT_EQ(s.InDegree(VertexId(x)), d.second) << "vertex " << x;
    }
    EXPECT_EQ(s.vertex_count(), live.size());
    EXPECT_EQ(s.edge_count(), model_edges.size());
  }
  EXPECT_GT(committed, 200);
  EXPECT_GT(failed, 200);
}

}  // namespace
}  // namespace quiver
