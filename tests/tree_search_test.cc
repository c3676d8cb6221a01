// The 8-byte-key fast paths of the index tree's node search (tree_node.cc
// Search8, tree_node.h CompareEntryAt and KeyEquals) and of the key
// encoding (key_codec.cc AppendBigEndian), each against a plain reference:
// a linear scan with CompareEntries over the node's entries, and the
// encoding byte by byte. Keys are encoded int64s (negative ones included)
// and doubles, with runs of equal keys under different ids, in nodes of
// every size from one entry to full (below and above the 16-way step's
// threshold) and in test shapes with small fan-outs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "index/index_tree.h"
#include "index/key_codec.h"
#include "index/tree_node.h"

namespace quiver::index {
namespace {

using SearchEntry = std::pair<std::string, std::uint64_t>;  // (encoded key, id)

std::string TreeSearchKeyOf(const PropertyView& v) {
  std::string out;
  AppendFixedKey(v, &out);
  return out;
}

// A pool of keys drawn from few values, so that keys repeat: small and
// large, negative and positive int64s, doubles of both signs, zeros.
std::vector<std::string> TreeSearchKeyPool(std::mt19937_64& rng, bool doubles) {
  std::vector<std::string> pool;
  if (doubles) {
    for (double d : {0.0, -0.0, 1.5, -1.5, 1e300, -1e300, std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min()}) {
      pool.push_back(TreeSearchKeyOf(PropertyView(d)));
    }
    std::normal_distribution<double> normal(0.0, 1e6);
    for (int i = 0; i < 40; ++i) pool.push_back(TreeSearchKeyOf(PropertyView(normal(rng))));
  } else {
    for (std::int64_t v :
         {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, std::numeric_limits<std::int64_t>::min(),
          std::numeric_limits<std::int64_t>::max()}) {
      pool.push_back(TreeSearchKeyOf(PropertyView(v)));
    }
    for (int i = 0; i < 40; ++i)
      pool.push_back(TreeSearchKeyOf(PropertyView(static_cast<std::int64_t>(rng()))));
    for (int i = 0; i < 20; ++i) {
      pool.push_back(TreeSearchKeyOf(PropertyView(static_cast<std::int64_t>(rng() % 2001) - 1000)));
    }
  }
  return pool;
}

// `count` distinct sorted entries with keys from `pool`.
std::vector<SearchEntry> TreeSearchEntries(std::mt19937_64& rng, const std::vector<std::string>& pool,
                                           std::uint32_t count) {
  std::vector<SearchEntry> entries;
  while (entries.size() < count) {
    entries.emplace_back(pool[rng() % pool.size()], rng() % 64);  // few ids: equal keys share some
    std::sort(entries.begin(), entries.end());
    entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  }
  return entries;
}

// A node buffer of `bytes`, aligned like an allocation.
struct TreeSearchNode {
  explicit TreeSearchNode(std::uint32_t bytes) : words(bytes / 8 + 1) {}
  void* get() { return words.data(); }
  std::vector<std::uint64_t> words;
};

int TreeSearchSign(int c) { return (c > 0) - (c < 0); }

// Probes: every entry, its neighbours by id, and random (key, id) pairs
// (pool keys and fresh ones), with ids 0 and the largest.
std::vector<SearchEntry> TreeSearchProbes(std::mt19937_64& rng, const std::vector<std::string>& pool,
                                          const std::vector<SearchEntry>& entries) {
  std::vector<SearchEntry> probes;
  for (const SearchEntry& e : entries) {
    probes.push_back(e);
    probes.emplace_back(e.first, e.second + 1);
    if (e.second > 0) probes.emplace_back(e.first, e.second - 1);
  }
  for (int i = 0; i < 200; ++i) {
    const std::string key = i % 3 == 0 ? TreeSearchKeyOf(PropertyView(static_cast<std::int64_t>(rng())))
                                       : pool[rng() % pool.size()];
    const std::uint64_t id = i % 5 == 0 ? 0 : (i % 5 == 1 ? tree::kMaxCount : rng() % 70);
    probes.emplace_back(key, id);
  }
  return probes;
}

// Node sizes: every one near the 16-way step's threshold and the small
// ones, then every sixth.
std::uint32_t TreeSearchStep(std::uint32_t count) {
  return count < 8 || (count + 4 >= tree::config::kWideSearchMin && count <= tree::config::kWideSearchMin + 4)
             ? 1
             : 6;
}

void CheckLeafSearches(const tree::Shape& s, std::mt19937_64& rng, bool doubles) {
  const std::vector<std::string> pool = TreeSearchKeyPool(rng, doubles);
  for (std::uint32_t count = 1; count <= s.max_count[tree::kLeaf]; count += TreeSearchStep(count)) {
    const std::vector<SearchEntry> entries = TreeSearchEntries(rng, pool, count);
    TreeSearchNode node(s.node_bytes[tree::kLeaf]);
    tree::InitNode(s, tree::kLeaf, node.get(), 1);
    for (std::uint32_t i = 0; i < count; ++i) {
      tree::InsertAt(s, tree::kLeaf, node.get(), i, tree::Entry{entries[i].first, entries[i].second});
    }
    for (const SearchEntry& p : TreeSearchProbes(rng, pool, entries)) {
      std::uint32_t below = 0;
      for (const SearchEntry& e : entries)
        below += tree::CompareEntries(e.first, e.second, p.first, p.second) < 0;
      ASSERT_EQ(tree::LowerBound(s, node.get(), p.first, p.second), below)
          << "count " << count << " probe id " << p.second;
      for (std::uint32_t i = 0; i < count; ++i) {
        ASSERT_EQ(
            TreeSearchSign(tree::CompareEntryAt(s, tree::kLeaf, node.get(), i, p.first, p.second)),
            TreeSearchSign(tree::CompareEntries(entries[i].first, entries[i].second, p.first, p.second)));
        ASSERT_EQ(tree::KeyEquals(s, tree::kLeaf, node.get(), i, p.first), entries[i].first == p.first);
      }
    }
  }
}

void CheckInnerSearches(const tree::Shape& s, std::mt19937_64& rng, bool doubles) {
  const std::vector<std::string> pool = TreeSearchKeyPool(rng, doubles);
  for (std::uint32_t count = 1; count <= s.max_count[tree::kInner]; count += TreeSearchStep(count)) {
    const std::vector<SearchEntry> seps = TreeSearchEntries(rng, pool, count);
    TreeSearchNode node(s.node_bytes[tree::kInner]);
    tree::InitNode(s, tree::kInner, node.get(), 1);
    for (std::uint32_t i = 0; i < count; ++i) {
      tree::InsertAt(s, tree::kInner, node.get(), i, tree::Entry{seps[i].first, seps[i].second, nullptr, 1});
    }
    for (const SearchEntry& p : TreeSearchProbes(rng, pool, seps)) {
      // The last i with i == 0 or separator i <= (key, id).
      std::uint32_t child = 0;
      for (std::uint32_t i = 1; i < count; ++i) {
        if (tree::CompareEntries(seps[i].first, seps[i].second, p.first, p.second) <= 0) child = i;
      }
      ASSERT_EQ(tree::ChildFor(s, node.get(), p.first, p.second), child)
          << "count " << count << " probe id " << p.second;
      for (std::uint32_t i = 0; i < count; ++i) {
        ASSERT_EQ(TreeSearchSign(tree::CompareEntryAt(s, tree::kInner, node.get(), i, p.first, p.second)),
                  TreeSearchSign(tree::CompareEntries(seps[i].first, seps[i].second, p.first, p.second)));
      }
    }
  }
}

TEST(TreeSearchTest, EightByteLeafSearchMatchesLinearScan) {
  std::mt19937_64 rng(91);
  for (std::uint32_t fanout : {0u, 4u, 50u}) {
    const tree::Shape s = tree::ShapeOf(IndexRoot{.key_width = 8, .max_fanout = fanout});
    CheckLeafSearches(s, rng, /*doubles=*/false);
    CheckLeafSearches(s, rng, /*doubles=*/true);
  }
}

TEST(TreeSearchTest, EightByteChildSearchMatchesLinearScan) {
  std::mt19937_64 rng(92);
  for (std::uint32_t fanout : {0u, 4u, 50u}) {
    const tree::Shape s = tree::ShapeOf(IndexRoot{.key_width = 8, .max_fanout = fanout});
    CheckInnerSearches(s, rng, /*doubles=*/false);
    CheckInnerSearches(s, rng, /*doubles=*/true);
  }
}

// A full leaf whose entries all hold one key: the search by id inside a run
// of equal keys that spans the whole 16-way step.
TEST(TreeSearchTest, OneKeyUnderManyIds) {
  const tree::Shape s = tree::ShapeOf(IndexRoot{.key_width = 8});
  const std::string key = TreeSearchKeyOf(PropertyView(std::int64_t{-7}));
  const std::string lower = TreeSearchKeyOf(PropertyView(std::int64_t{-8}));
  const std::string higher = TreeSearchKeyOf(PropertyView(std::int64_t{-6}));
  TreeSearchNode leaf(s.node_bytes[tree::kLeaf]);
  TreeSearchNode inner(s.node_bytes[tree::kInner]);
  tree::InitNode(s, tree::kLeaf, leaf.get(), 1);
  tree::InitNode(s, tree::kInner, inner.get(), 1);
  const std::uint32_t n = s.max_count[tree::kInner];  // fits both kinds
  ASSERT_LE(n, s.max_count[tree::kLeaf]);
  for (std::uint32_t i = 0; i < n; ++i) {
    tree::InsertAt(s, tree::kLeaf, leaf.get(), i, tree::Entry{key, 10 * i + 10});
    tree::InsertAt(s, tree::kInner, inner.get(), i, tree::Entry{key, 10 * i + 10, nullptr, 1});
  }
  for (std::uint64_t id = 0; id <= 10 * n + 20; ++id) {
    const std::uint32_t below =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(id == 0 ? 0 : (id - 1) / 10, n));
    ASSERT_EQ(tree::LowerBound(s, leaf.get(), key, id), below) << id;
    const std::uint32_t at_or_below = static_cast<std::uint32_t>(std::min<std::uint64_t>(id / 10, n));
    ASSERT_EQ(tree::ChildFor(s, inner.get(), key, id), at_or_below == 0 ? 0 : at_or_below - 1) << id;
  }
  EXPECT_EQ(tree::LowerBound(s, leaf.get(), lower, tree::kMaxCount), 0u);
  EXPECT_EQ(tree::LowerBound(s, leaf.get(), higher, 0), n);
  EXPECT_EQ(tree::ChildFor(s, inner.get(), lower, tree::kMaxCount), 0u);
  EXPECT_EQ(tree::ChildFor(s, inner.get(), higher, 0), n - 1);
}

TEST(TreeSearchTest, FixedKeysAreBigEndianBits) {
  std::mt19937_64 rng(93);
  auto reference = [](std::uint64_t bits) {
    std::string out;
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((bits >> shift) & 0xFF));
    return out;
  };
  for (int i = 0; i < 2000; ++i) {
    const auto v = static_cast<std::int64_t>(i < 1000 ? rng() : rng() % 512) - (i % 2 == 0 ? 256 : 0);
    const PropertyView iv(v);
    std::string out = "prefix";
    AppendFixedKey(iv, &out);
    ASSERT_EQ(out, "prefix" + reference(FixedKeyBits(iv)));
    ASSERT_EQ(reference(FixedKeyBits(iv)),
              reference(static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63)));
    double d;
    const std::uint64_t raw = rng();
    std::memcpy(&d, &raw, 8);
    if (std::isnan(d)) continue;
    const PropertyView dv(d);
    ASSERT_EQ(TreeSearchKeyOf(dv), reference(FixedKeyBits(dv)));
  }
  // The encoding orders int64s as numbers, negative ones first.
  EXPECT_LT(TreeSearchKeyOf(PropertyView(std::int64_t{-2})), TreeSearchKeyOf(PropertyView(std::int64_t{-1})));
  EXPECT_LT(TreeSearchKeyOf(PropertyView(std::int64_t{-1})), TreeSearchKeyOf(PropertyView(std::int64_t{0})));
  EXPECT_LT(TreeSearchKeyOf(PropertyView(-0.5)), TreeSearchKeyOf(PropertyView(0.25)));
}

}  // namespace
}  // namespace quiver::index
