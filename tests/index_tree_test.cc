// IndexTree against a trivially correct model (std::set of (key, id)):
// randomized inserts, erases, counts and cursor walks over many seeds and
// every key layout, with tiny nodes (max_fanout) so that a few thousand
// entries make trees of height 3-5; persistence of published versions;
// allocation failures; the Builder.
#include "index/index_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <new>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "index/index_build.h"
#include "index/key_codec.h"
#include "index/tree_node.h"
#include "loop_sample.h"
#include "storage/retire_list.h"
#include "tree_versions.h"

namespace quiver::index {
namespace {

using Model = std::set<std::pair<std::string, std::uint64_t>>;
constexpr std::uint64_t kMaxId = std::numeric_limits<std::uint64_t>::max();

using Versions = test_util::TreeVersions;

// ---- Structural check

struct SubtreeInfo {
  std::uint64_t count = 0;
  std::pair<std::string, std::uint64_t> first, last;
};

// Walks the subtree, checking order, counts, separators, node loads and
// depth; appends its entries to `out`.
SubtreeInfo CheckNode(const tree::Shape& s, const void* n, std::uint32_t height, bool is_root, Model* out) {
  using tree::Key;
  const tree::Kind k = height == 0 ? tree::kLeaf : tree::kInner;
  SubtreeInfo info;
  const std::uint32_t count = tree::Count(n);
  EXPECT_TRUE(is_root || count > 0) << "empty non-root node";
  EXPECT_TRUE(tree::Fits(s, k, tree::LoadOf(s, k, n)));
  if (height == 0) {
    for (std::uint32_t i = 0; i < count; ++i) {
      std::pair<std::string, std::uint64_t> e{std::string(Key(s, k, n, i)), tree::Id(s, k, n, i)};
      EXPECT_LT(e.second, std::uint64_t{1} << 48);
      if (i > 0) {
        EXPECT_LT(info.last, e);
      }
      if (i == 0) info.first = e;
      info.last = e;
      out->insert(e);
    }
    info.count = count;
    return info;
  }
  EXPECT_TRUE(is_root ? count >= 2 : count >= 1);
  for (std::uint32_t i = 0; i < count; ++i) {
    const SubtreeInfo child = CheckNode(s, tree::Child(s, n, i), height - 1, false, out);
    EXPECT_EQ(child.count, tree::ChildCount(s, n, i));
    const std::pair<std::string, std::uint64_t> sep{std::string(Key(s, k, n, i)), tree::Id(s, k, n, i)};
    if (i > 0) {
      EXPECT_LE(sep, child.first) << "separator above its child";
      EXPECT_LT(info.last, sep) << "separator not above the left child";
    } else {
      info.first = child.first;
    }
    info.last = child.last;
    info.count += child.count;
  }
  return info;
}

// The tree's entries, after checking its structure.
Model Walk(const IndexRoot& root) {
  Model m;
  if (root.node == nullptr) {
    EXPECT_EQ(root.count, 0u);
    return m;
  }
  EXPECT_EQ(root.birth, tree::Hdr(root.node)->birth);
  const SubtreeInfo info = CheckNode(tree::ShapeOf(root), root.node, root.height, true, &m);
  EXPECT_EQ(info.count, root.count);
  EXPECT_TRUE(root.height == 0 || tree::Count(root.node) >= 2);
  return m;
}

// ---- Random keys per layout

struct Layout {
  std::int32_t width;
  std::uint32_t fanout;
};

std::string FixedKey(std::uint64_t v) {
  std::string k;
  AppendFixedKey(PropertyView(static_cast<std::int64_t>(v)), &k);
  return k;
}

std::string RandomKey(std::mt19937_64& rng, std::int32_t width) {
  if (width == 0) return std::string();
  if (width == 8) return FixedKey(rng() % 300 - 150);
  if (rng() % 50 == 0) return std::string(1 + rng() % kMaxKeyBytes, static_cast<char>('a' + rng() % 3));
  static constexpr char kAlphabet[] = {'\0', 'a', 'b', '\xff'};
  std::string s(rng() % 5, ' ');
  for (char& c : s) c = kAlphabet[rng() % sizeof(kAlphabet)];
  return s;
}

Bound RandomBound(std::mt19937_64& rng, std::int32_t width, std::string* storage) {
  *storage = RandomKey(rng, width);
  switch (rng() % 5) {
    case 0: return Bound{};
    case 1:
    case 2: return Bound::Inclusive(*storage);
    default: return Bound::Exclusive(*storage);
  }
}

// ---- Model queries

Model::const_iterator ModelSeek(const Model& m, const Bound& lo) {
  if (lo.unbounded) return m.begin();
  const std::string k(lo.key);
  return lo.inclusive ? m.lower_bound({k, 0}) : m.upper_bound({k, kMaxId});
}

// The first model entry past the range that ends at `hi`.
Model::const_iterator ModelEnd(const Model& m, const Bound& hi) {
  if (hi.unbounded) return m.end();
  const std::string k(hi.key);
  return hi.inclusive ? m.upper_bound({k, kMaxId}) : m.lower_bound({k, 0});
}

void ExpectAt(const IndexTree::Cursor& c, const Model& m, Model::const_iterator it) {
  ASSERT_EQ(c.Valid(), it != m.end());
  if (it != m.end()) {
    ASSERT_EQ(std::string(c.key()), it->first);
    ASSERT_EQ(c.id(), it->second);
  }
}

// NextIds / PrevIds over the range [lo, hi] as a range scan reads it (the
// count first, then batches of random sizes, some reaching past the
// range's end), and to the tree's end: the ids the model holds, in order.
void CheckBatchReads(const IndexRoot& root, const Model& m, std::mt19937_64& rng, const Bound& lo,
                     const Bound& hi, Model::const_iterator begin, std::uint64_t count) {
  std::vector<std::uint64_t> expected;
  for (auto it = begin; expected.size() < count; ++it) expected.push_back(it->second);
  for (const bool descending : {false, true}) {
    SCOPED_TRACE(descending ? "PrevIds" : "NextIds");
    if (descending) std::reverse(expected.begin(), expected.end());
    IndexTree::Cursor c(root);
    if (descending) {
      c.SeekLast(hi);
    } else {
      c.Seek(lo);
    }
    std::vector<std::uint64_t> got;
    while (got.size() < count) {
      const std::size_t want = std::min<std::size_t>(1 + rng() % 40, count - got.size());
      std::vector<std::uint64_t> batch(want + 1, kMaxId);
      const std::size_t n = descending ? c.PrevIds(batch.data(), want) : c.NextIds(batch.data(), want);
      ASSERT_EQ(n, want);
      ASSERT_EQ(batch[want], kMaxId) << "wrote past max";
      got.insert(got.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(n));
    }
    ASSERT_EQ(got, expected);
    if (count == 0) continue;  // the cursor stands wherever the bounds' seek left it
    // The cursor stands on the entry after the range (in the scan's
    // direction), or is invalid; reading on to the tree's end yields the rest.
    const std::uint64_t before = static_cast<std::uint64_t>(std::distance(m.begin(), begin));
    const std::uint64_t rest = descending ? before : m.size() - before - count;
    ASSERT_EQ(c.Valid(), rest > 0);
    std::vector<std::uint64_t> tail(rest + 1);
    const std::size_t n = descending ? c.PrevIds(tail.data(), rest + 1) : c.NextIds(tail.data(), rest + 1);
    ASSERT_EQ(n, rest);
    ASSERT_FALSE(c.Valid());
    if (rest > 0) {
      auto it = descending ? std::prev(begin) : std::next(begin, static_cast<std::ptrdiff_t>(count));
      ASSERT_EQ(tail[0], it->second);
      ASSERT_EQ(tail[rest - 1], descending ? m.begin()->second : m.rbegin()->second);
    }
  }
}

// Seeks both ways and wanders with Next and Prev, comparing with the model.
void CheckCursor(const IndexRoot& root, const Model& m, std::mt19937_64& rng, std::int32_t width) {
  std::string lo_key, hi_key;
  const Bound lo = RandomBound(rng, width, &lo_key);
  const Bound hi = RandomBound(rng, width, &hi_key);
  const auto begin = ModelSeek(m, lo);
  const auto end = ModelEnd(m, hi);
  const auto expected_count = begin != m.end() && (end == m.end() || *begin < *end)
                                  ? static_cast<std::uint64_t>(std::distance(begin, end))
                                  : 0;
  ASSERT_EQ(IndexTree::CountRange(root, lo, hi), expected_count);

  ASSERT_NO_FATAL_FAILURE(CheckBatchReads(root, m, rng, lo, hi, begin, expected_count));

  IndexTree::Cursor c(root);
  c.Seek(lo);
  auto it = begin;
  ASSERT_NO_FATAL_FAILURE(ExpectAt(c, m, it));
  c.SeekLast(hi);
  it = end == m.begin() ? m.end() : std::prev(end);
  ASSERT_NO_FATAL_FAILURE(ExpectAt(c, m, it));
  for (int step = 0; step < 40 && it != m.end(); ++step) {
    if (rng() % 3 == 0) {
      if (it == m.begin()) break;
      c.Prev();
      --it;
    } else {
      c.Next();
      ++it;
    }
    ASSERT_NO_FATAL_FAILURE(ExpectAt(c, m, it));
  }
  if (!m.empty() && rng() % 4 == 0) {  // a full backward walk
    c.SeekLast(Bound{});
    std::size_t n = 0;
    for (auto r = m.rbegin(); r != m.rend(); ++r, ++n) {
      ASSERT_TRUE(c.Valid());
      ASSERT_EQ(c.id(), r->second);
      c.Prev();
    }
    EXPECT_FALSE(c.Valid());
  }
  const std::string k = RandomKey(rng, width);
  std::uint64_t first = 0;
  const auto hit = m.lower_bound({k, 0});
  const bool has = hit != m.end() && hit->first == k;
  ASSERT_EQ(IndexTree::Contains(root, k, &first), has);
  if (has) {
    ASSERT_EQ(first, hit->second);
  }
}

// ---- The randomized run

struct Snapshot {
  IndexRoot root;
  Model model;
};

void RandomRun(std::uint64_t seed, Layout layout, int ops) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " width " + std::to_string(layout.width) + " fanout " +
               std::to_string(layout.fanout));
  std::mt19937_64 rng(seed);
  Versions v;
  IndexRoot root{.key_width = layout.width, .max_fanout = layout.fanout};
  Model model;
  std::vector<Snapshot> snapshots;
  const std::uint64_t id_space = 50 + rng() % 3000;
  for (int op = 0; op < ops; ++op) {
    storage::MutationContext ctx = v.ctx();
    const std::uint64_t r = rng() % 100;
    if (r < 55) {
      const std::string k = RandomKey(rng, layout.width);
      const std::uint64_t id = rng() % id_space;
      ASSERT_EQ(IndexTree::Insert(root, k, id, ctx), model.insert({k, id}).second);
    } else if (r < 90 && !model.empty()) {
      // An existing entry mostly, sometimes a missing one.
      auto it = model.lower_bound({RandomKey(rng, layout.width), rng() % id_space});
      std::pair<std::string, std::uint64_t> e = it == model.end() ? *model.begin() : *it;
      if (rng() % 8 == 0) e.second = id_space + 1;
      ASSERT_EQ(IndexTree::Erase(root, e.first, e.second, ctx), model.erase(e) == 1);
    } else {
      ASSERT_NO_FATAL_FAILURE(CheckCursor(root, model, rng, layout.width));
    }
    ASSERT_EQ(root.count, model.size());
    if (rng() % 16 == 0) {
      v.Publish();
      if (rng() % 4 == 0) snapshots.push_back({root, model});
    }
    if (op % 97 == 0) {
      ASSERT_EQ(Walk(root), model);
    }
  }
  ASSERT_EQ(Walk(root), model);
  // Empty the tree: merges all the way down to no root.
  while (!model.empty()) {
    storage::MutationContext ctx = v.ctx();
    auto it = model.lower_bound({RandomKey(rng, layout.width), rng() % id_space});
    if (it == model.end()) it = model.begin();
    ASSERT_TRUE(IndexTree::Erase(root, it->first, it->second, ctx));
    model.erase(it);
    if (rng() % 16 == 0) v.Publish();
    if (model.size() % 101 == 0) {
      ASSERT_EQ(Walk(root), model);
    }
  }
  EXPECT_EQ(root.node, nullptr);
  EXPECT_EQ(root.height, 0u);
  v.Publish();
  // Every published version still reads exactly what it held.
  for (const Snapshot& snap : snapshots) ASSERT_EQ(Walk(snap.root), snap.model);
  v.FreeRetired();
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

constexpr Layout kLayouts[] = {{-1, 4}, {-1, 5}, {-1, 0}, {8, 4}, {8, 7}, {8, 0}, {0, 4}, {0, 6}, {0, 0}};

// Seeds 1..24 under every layout: six per layout in a run, a different six
// from run to run and from layout to layout (loop_sample.h; all 24 with
// QUIVER_EVERY_POINT=1). Twelve fixed seeds per layout took 19-25 s under
// ASan.
TEST(IndexTreeTest, RandomOperationsMatchModel) {
  const test_util::LoopSample sample("index tree random runs: seeds 1..24 per layout", 4, 0);
  SCOPED_TRACE(sample.Describe());
  for (std::size_t i = 0; i < std::size(kLayouts); ++i) {
    for (std::uint64_t seed = 1; seed <= 24; ++seed)
      if (sample.Tries(seed, i)) RandomRun(seed, kLayouts[i], 3000);
  }
}

TEST(IndexTreeTest, TinyNodesGrowTallTrees) {
  Versions v;
  IndexRoot root{.key_width = 8, .max_fanout = 4};
  storage::MutationContext ctx = v.ctx();
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) IndexTree::Insert(root, FixedKey(rng() % 100000), i, ctx);
  EXPECT_GE(root.height, 4u);
  Walk(root);
  IndexTree::Destroy(root, &v.account());
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

// Many versions, each a few changes; every kept root reads its old contents
// after all later changes, then all memory comes back.
TEST(IndexTreeTest, PublishedVersionsKeepTheirContents) {
  for (const Layout& layout : {Layout{8, 5}, Layout{-1, 0}, Layout{0, 0}, Layout{8, 0}}) {
    Versions v;
    IndexRoot root{.key_width = layout.width, .max_fanout = layout.fanout};
    Model model;
    std::vector<Snapshot> versions;
    std::mt19937_64 rng(11);
    for (int version = 0; version < 300; ++version) {
      storage::MutationContext ctx = v.ctx();
      for (int i = 0, n = 1 + static_cast<int>(rng() % 40); i < n; ++i) {
        const std::string k = RandomKey(rng, layout.width);
        const std::uint64_t id = rng() % 100000;
        if (rng() % 3 == 0 && !model.empty()) {
          auto it = model.lower_bound({k, id});
          if (it == model.end()) it = model.begin();
          ASSERT_TRUE(IndexTree::Erase(root, it->first, it->second, ctx));
          model.erase(it);
        } else {
          ASSERT_EQ(IndexTree::Insert(root, k, id, ctx), model.insert({k, id}).second);
        }
      }
      v.Publish();
      versions.push_back({root, model});
    }
    for (const Snapshot& snap : versions) ASSERT_EQ(Walk(snap.root), snap.model);
    IndexTree::Destroy(root, &v.account());
    v.FreeRetired();
    EXPECT_EQ(v.account().allocated_bytes(), 0);
  }
}

// Within one epoch every node is private: edits happen in place and nothing
// is retired.
TEST(IndexTreeTest, PrivateNodesAreEditedInPlace) {
  Versions v;
  IndexRoot root{.key_width = 8};
  storage::RetireList retired;
  storage::MutationContext ctx{v.epoch(), &v.account(), &retired, nullptr};
  for (std::uint64_t i = 0; i < 20000; ++i) IndexTree::Insert(root, FixedKey(i * 7919 % 20000), i, ctx);
  for (std::uint64_t i = 0; i < 20000; i += 2) IndexTree::Erase(root, FixedKey(i * 7919 % 20000), i, ctx);
  EXPECT_TRUE(retired.empty());
  EXPECT_EQ(static_cast<std::uint64_t>(v.account().allocated_bytes()), IndexTree::MemoryBytes(root));
  IndexTree::Destroy(root, &v.account());
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

TEST(IndexTreeTest, RetireHandsEveryNodeToTheRetireList) {
  Versions v;
  IndexRoot root{.key_width = -1, .max_fanout = 4};
  storage::MutationContext ctx = v.ctx();
  for (int i = 0; i < 500; ++i) IndexTree::Insert(root, "k" + std::to_string(i), i, ctx);
  v.Publish();
  IndexRoot published = root;
  ctx = v.ctx();
  IndexTree::Insert(root, "x", 1, ctx);  // a private path over shared nodes
  IndexTree::Retire(root, ctx);
  EXPECT_EQ(root.node, nullptr);
  EXPECT_EQ(root.key_width, -1);
  EXPECT_EQ(Walk(published).size(), 500u);  // retired, not freed
  v.Publish();
  v.FreeRetired();
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

// ---- Allocation failures

// Runs `op` failing at its n-th allocation for n = 1, 2, ... until it
// succeeds; after every failure the group rolls back and the published
// tree must read as before.
template <typename Op>
void FailEachAllocation(Versions& v, IndexRoot& root, const Model& before, base::AllocationFaultMode mode,
                        Op op) {
  for (std::uint64_t n = 1;; ++n) {
    const IndexRoot saved = root;
    base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
    try {
      storage::MutationContext ctx = v.ctx();
      op(root, ctx);
      base::DisarmAllocationFaults();
      return;
    } catch (const std::bad_alloc&) {
      base::DisarmAllocationFaults();
      v.Rollback();
      root = saved;
      ASSERT_EQ(Walk(root), before);
    }
  }
}

TEST(IndexTreeTest, AllocationFailuresDamageNothingAndLeakNothing) {
  for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
    for (const Layout& layout : {Layout{8, 4}, Layout{-1, 4}, Layout{0, 5}}) {
      Versions v;
      IndexRoot root{.key_width = layout.width, .max_fanout = layout.fanout};
      Model model;
      std::mt19937_64 rng(21);
      for (int op = 0; op < 400; ++op) {
        const std::string k = RandomKey(rng, layout.width);
        const std::uint64_t id = rng() % 500;
        const bool erase = rng() % 3 == 0 && !model.empty();
        auto it = model.lower_bound({k, id});
        if (it == model.end() && erase) it = model.begin();
        const std::pair<std::string, std::uint64_t> e = erase ? *it : std::make_pair(k, id);
        ASSERT_NO_FATAL_FAILURE(FailEachAllocation(v, root, model, mode, [&](IndexRoot& r, auto& ctx) {
          if (erase) {
            IndexTree::Erase(r, e.first, e.second, ctx);
          } else {
            IndexTree::Insert(r, e.first, e.second, ctx);
          }
        }));
        if (erase) {
          model.erase(e);
        } else {
          model.insert(e);
        }
        v.Publish();
      }
      ASSERT_EQ(Walk(root), model);
      IndexTree::Destroy(root, &v.account());
      v.FreeRetired();
      EXPECT_EQ(v.account().allocated_bytes(), 0);
    }
  }
}

// Without GroupBlocks (the loader, recovery) births alone decide privacy; a
// failing insert leaves the tree exactly as it was.
TEST(IndexTreeTest, AllocationFailureWithoutGroupBlocksLeavesTreeUnchanged) {
  Versions v(/*track_blocks=*/false);
  IndexRoot root{.key_width = 8, .max_fanout = 4};
  Model model;
  for (std::uint64_t i = 0; i < 300; ++i) {
    const std::string k = FixedKey(i * 37 % 300);
    for (std::uint64_t n = 1;; ++n) {
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      try {
        storage::MutationContext ctx = v.ctx();
        IndexTree::Insert(root, k, i, ctx);
        base::DisarmAllocationFaults();
        break;
      } catch (const std::bad_alloc&) {
        base::DisarmAllocationFaults();
        ASSERT_EQ(Walk(root), model);
      }
    }
    model.insert({k, i});
  }
  ASSERT_EQ(Walk(root), model);
  IndexTree::Destroy(root, &v.account());
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

// ---- Builder

// The entry or child counts of every node, by height, left to right.
void CollectCounts(const tree::Shape& s, const void* n, std::uint32_t height,
                   std::vector<std::vector<std::uint32_t>>* out) {
  if (n == nullptr) return;
  (*out)[height].push_back(tree::Count(n));
  if (height == 0) return;
  for (std::uint32_t i = 0; i < tree::Count(n); ++i) CollectCounts(s, tree::Child(s, n, i), height - 1, out);
}

Model SortedEntries(std::int32_t width, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Model m;
  while (m.size() < n) m.insert({RandomKey(rng, width), rng() % (n * 4)});
  return m;
}

TEST(IndexTreeTest, BuilderBuildsFullLeavesThatMatchTheInput) {
  for (const Layout& layout : {Layout{8, 0}, Layout{8, 5}, Layout{0, 0}, Layout{-1, 0}, Layout{-1, 4}}) {
    for (std::size_t n : {0, 1, 2, 5, 291, 292, 1000, 30000}) {
      Versions v;
      const Model input = SortedEntries(layout.width, n, n);
      storage::MutationContext ctx = v.ctx();
      IndexTree::Builder b(IndexRoot{.key_width = layout.width, .max_fanout = layout.fanout}, ctx);
      for (const auto& [k, id] : input) b.Add(k, id);
      IndexRoot root = b.Finish();
      ASSERT_EQ(Walk(root), input);
      // Every node but the last of its level is full (fixed widths).
      if (layout.width >= 0) {
        const tree::Shape sh = tree::ShapeOf(root);
        std::vector<std::vector<std::uint32_t>> counts(root.height + 1);
        CollectCounts(sh, root.node, root.height, &counts);
        for (std::uint32_t h = 0; h <= root.height; ++h) {
          const tree::Kind k = h == 0 ? tree::kLeaf : tree::kInner;
          for (std::size_t i = 0; i + 1 < counts[h].size(); ++i) ASSERT_EQ(counts[h][i], sh.max_count[k]);
        }
      }
      // The built tree takes further writes.
      std::mt19937_64 rng(n);
      Model model = input;
      v.Publish();
      ctx = v.ctx();
      for (int i = 0; i < 300; ++i) {
        const std::string k = RandomKey(rng, layout.width);
        const std::uint64_t id = rng() % 1000;
        if (rng() % 2) {
          ASSERT_EQ(IndexTree::Insert(root, k, id, ctx), model.insert({k, id}).second);
        } else {
          ASSERT_EQ(IndexTree::Erase(root, k, id, ctx), model.erase({k, id}) == 1);
        }
      }
      ASSERT_EQ(Walk(root), model);
      IndexTree::Destroy(root, &v.account());
      v.FreeRetired();
      EXPECT_EQ(v.account().allocated_bytes(), 0);
    }
  }
}

TEST(IndexTreeTest, BuilderFreesWhatItBuiltWhenAbandoned) {
  for (bool track : {true, false}) {
    for (std::uint64_t n = 1; n < 40; ++n) {
      Versions v(track);
      const Model input = SortedEntries(8, 3000, 5);
      {
        storage::MutationContext ctx = v.ctx();
        IndexTree::Builder b(IndexRoot{.key_width = 8, .max_fanout = 4}, ctx);
        base::ArmAllocationFaults(std::this_thread::get_id(), n * 17, base::AllocationFaultMode::kOnce);
        bool failed = false;
        for (const auto& [k, id] : input) {
          try {
            b.Add(k, id);
          } catch (const std::bad_alloc&) {
            failed = true;
            break;
          }
        }
        base::DisarmAllocationFaults();
        EXPECT_TRUE(failed);
      }
      v.Rollback();
      EXPECT_EQ(v.account().allocated_bytes(), 0);
    }
  }
}

// ---- Layout-specific behaviour

TEST(IndexTreeTest, AppendingIdsKeepsLabelSetLeavesFull) {
  Versions v;
  IndexRoot root{.key_width = 0};
  constexpr std::uint64_t kIds = 200000;
  for (std::uint64_t id = 0; id < kIds; ++id) {
    storage::MutationContext ctx = v.ctx();
    IndexTree::Insert(root, "", id, ctx);
    if (id % 1000 == 999) v.Publish();
  }
  v.Publish();
  v.FreeRetired();
  const double per_entry = static_cast<double>(IndexTree::MemoryBytes(root)) / kIds;
  EXPECT_LT(per_entry, 6.2);
  EXPECT_EQ(IndexTree::CountRange(root, Bound{}, Bound{}), kIds);
  EXPECT_TRUE(IndexTree::ContainsEntry(root, "", 12345));
  EXPECT_FALSE(IndexTree::ContainsEntry(root, "", kIds));
  IndexTree::Destroy(root, &v.account());
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

// A label or type set takes rising ids past its last entry without a search
// while the rightmost path is private (IndexTree::Insert's append path).
// Rising ids with gaps, mixed with inserts below the last id, repeats and
// erases, over many groups: every published version keeps its contents, and
// the tree's counts and order match the model (Walk checks the structure).
TEST(IndexTreeTest, RisingIdsInASetMatchModelAcrossVersions) {
  for (std::uint32_t fanout : {4u, 5u, 0u}) {
    SCOPED_TRACE("fanout " + std::to_string(fanout));
    Versions v;
    IndexRoot root{.key_width = 0, .max_fanout = fanout};
    Model model;
    std::vector<Snapshot> versions;
    std::mt19937_64 rng(fanout + 3);
    std::uint64_t next = 0;
    for (int version = 0; version < 200; ++version) {
      storage::MutationContext ctx = v.ctx();
      for (int i = 0, n = 1 + static_cast<int>(rng() % 80); i < n; ++i) {
        const std::uint64_t r = rng() % 10;
        if (r < 7) {  // past the last: the append path
          next += 1 + rng() % 3;
          ASSERT_TRUE(IndexTree::Insert(root, "", next, ctx));
          model.insert({"", next});
        } else if (r < 9) {  // at or below the last: the general path
          const std::uint64_t id = rng() % (next + 1);
          ASSERT_EQ(IndexTree::Insert(root, "", id, ctx), model.insert({"", id}).second);
        } else if (!model.empty()) {  // erase, the last entry one time in three
          auto it = rng() % 3 == 0 ? std::prev(model.end()) : model.lower_bound({"", rng() % (next + 1)});
          if (it == model.end()) it = model.begin();
          ASSERT_TRUE(IndexTree::Erase(root, it->first, it->second, ctx));
          model.erase(it);
        }
      }
      ASSERT_EQ(root.count, model.size());
      v.Publish();
      versions.push_back({root, model});
    }
    for (const Snapshot& snap : versions) ASSERT_EQ(Walk(snap.root), snap.model);
    IndexTree::Destroy(root, &v.account());
    v.FreeRetired();
    EXPECT_EQ(v.account().allocated_bytes(), 0);
  }
}

// Splits in a tree whose inner and leaf nodes differ in size give each half
// a node of its own kind (regression: every right half produced by a split
// took a block of the larger kind, so random int64 keys loaded by inserts
// cost ~40 B per entry).
TEST(IndexTreeTest, SplitLeavesTakeLeafSizedNodes) {
  Versions v;
  IndexRoot root{.key_width = 8};
  std::mt19937_64 rng(11);
  constexpr std::uint64_t kEntries = 200000;
  storage::MutationContext ctx = v.ctx();
  for (std::uint64_t id = 0; id < kEntries; ++id) IndexTree::Insert(root, FixedKey(rng()), id, ctx);
  v.Publish();
  EXPECT_EQ(root.count, kEntries);
  const double per_entry = static_cast<double>(IndexTree::MemoryBytes(root)) / kEntries;
  EXPECT_LE(per_entry, 24.0);
  IndexTree::Destroy(root, &v.account());
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

TEST(IndexTreeTest, ManyIdsUnderOneKeyComeOutInIdOrder) {
  Versions v;
  IndexRoot root{.key_width = -1, .max_fanout = 5};
  storage::MutationContext ctx = v.ctx();
  const std::string k = EncodeKey(PropertyView(std::string_view("same")));
  for (std::uint64_t id = 1000; id > 0; --id) IndexTree::Insert(root, k, id * 3, ctx);
  IndexTree::Insert(root, EncodeKey(PropertyView(std::string_view("samf"))), 1, ctx);
  std::uint64_t first = 0;
  ASSERT_TRUE(IndexTree::Contains(root, k, &first));
  EXPECT_EQ(first, 3u);
  IndexTree::Cursor c(root);
  c.SeekEntry(k, 1501);
  ASSERT_TRUE(c.Valid());
  EXPECT_EQ(c.id(), 1503u);
  EXPECT_EQ(IndexTree::CountRange(root, Bound::Inclusive(k), Bound::Inclusive(k)), 1000u);
  const KeyRange r = StringPrefixRange("sam");
  EXPECT_EQ(IndexTree::CountRange(root, Bound::Inclusive(r.lo), Bound::Exclusive(r.hi)), 1001u);
  IndexTree::Destroy(root, &v.account());
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

TEST(IndexTreeTest, EmptyTreeReadsAsEmpty) {
  const IndexRoot root{.key_width = 8};
  IndexTree::Cursor c(root);
  c.Seek(Bound{});
  EXPECT_FALSE(c.Valid());
  c.SeekLast(Bound{});
  EXPECT_FALSE(c.Valid());
  EXPECT_EQ(IndexTree::CountRange(root, Bound{}, Bound{}), 0u);
  EXPECT_FALSE(IndexTree::Contains(root, FixedKey(1)));
  EXPECT_EQ(IndexTree::MemoryBytes(root), 0u);
}

// EntryList::Sort for fixed-width keys: radix-sorted runs (one per
// thread) merged by ForEach, or std::sort when the ids do not ascend; both
// must come out in (key, id) order, repeated keys included.
TEST(EntryListTest, FixedWidthSortsIntoKeyThenIdOrder) {
  for (const unsigned threads : {1u, 2u, 3u}) {
    for (const bool ids_ascend : {true, false}) {
      SCOPED_TRACE(std::to_string(threads) + (ids_ascend ? " ascending ids" : " shuffled ids"));
      std::mt19937_64 rng(threads * 2 + ids_ascend);
      const std::uint64_t n = 200'000;  // past the one-run threshold
      std::vector<std::pair<std::uint64_t, std::uint64_t>> want;
      for (std::uint64_t i = 0; i < n; ++i) {
        // A third of the keys repeat a few values; others spread over every digit.
        const std::uint64_t key = rng() % 3 == 0 ? rng() % 7 : rng();
        want.emplace_back(key, ids_ascend ? i * 3 : rng() % (n * 4));
      }
      EntryList list(8);
      for (const auto& [key, id] : want) {
        char buf[8];
        for (int b = 0; b < 8; ++b) buf[b] = static_cast<char>(key >> (8 * (7 - b)));
        list.Add(std::string_view(buf, 8), id);
      }
      std::sort(want.begin(), want.end());
      list.Sort(threads);
      std::vector<std::pair<std::uint64_t, std::uint64_t>> got;
      list.ForEach([&](std::string_view key, std::uint64_t id) {
        std::uint64_t k = 0;
        for (char c : key) k = (k << 8) | static_cast<unsigned char>(c);
        got.emplace_back(k, id);
      });
      ASSERT_EQ(got.size(), want.size());
      EXPECT_TRUE(got == want);
    }
  }
}

// Runs past the size sorted whole (2^16 entries) are split by their highest
// digit that varies; these key sets move that digit (or leave none), and
// make parts of every size: one key, keys below 2^20 (digit 1 the highest),
// a few huge parts beside tiny ones, spread keys. ForEachFixed and ForEach
// agree.
TEST(EntryListTest, LargeRunsSplitByTheirHighestVaryingDigit) {
  const std::vector<std::pair<const char*, std::uint64_t (*)(std::mt19937_64&)>> kinds = {
      {"one key", [](std::mt19937_64&) { return std::uint64_t{42}; }},
      {"below 2^20", [](std::mt19937_64& r) { return r() % (std::uint64_t{1} << 20); }},
      {"lopsided",
       [](std::mt19937_64& r) { return r() % 10 == 0 ? r() : (std::uint64_t{5} << 58) | (r() % 3); }},
      {"spread", [](std::mt19937_64& r) { return r(); }},
  };
  for (const auto& [name, next_key] : kinds) {
    for (const unsigned threads : {1u, 2u}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(threads) + " threads");
      std::mt19937_64 rng(threads);
      const std::uint64_t n = 150'001;
      std::vector<std::pair<std::uint64_t, std::uint64_t>> want;
      EntryList list(8);
      for (std::uint64_t i = 0; i < n; ++i) {
        want.emplace_back(next_key(rng), i * 2 + 1);
        list.AddFixed(want.back().first, want.back().second);
      }
      std::sort(want.begin(), want.end());
      list.Sort(threads);
      std::vector<std::pair<std::uint64_t, std::uint64_t>> got, got_bytes;
      list.ForEachFixed([&](std::uint64_t key, std::uint64_t id) { got.emplace_back(key, id); });
      list.ForEach([&](std::string_view key, std::uint64_t id) {
        std::uint64_t k = 0;
        for (char c : key) k = (k << 8) | static_cast<unsigned char>(c);
        got_bytes.emplace_back(k, id);
      });
      EXPECT_TRUE(got == want);
      EXPECT_TRUE(got_bytes == want);
    }
  }
}

}  // namespace
}  // namespace quiver::index
