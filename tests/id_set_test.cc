// IdSet (the label and type sets) against a trivially correct model
// (std::set of ids): randomized inserts and erases over many groups and id
// layouts (dense, clustered, sparse over a 2^44 id space), every published
// version read again at the end (copy on write), the chunk forms and their
// conversions, Fill from any position, the Builder, and allocation failures.
#include "index/id_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "id_set_fill.h"
#include "loop_sample.h"
#include "storage/radix_table.h"
#include "storage/retire_list.h"
#include "tree_versions.h"

namespace quiver::index {
namespace {

using Model = std::set<std::uint64_t>;
using Versions = test_util::TreeVersions;
using Table = storage::RadixTable<IdChunk>;

// The chunk forms' invariants, slot by slot; returns the ids they hold.
void CheckNode(const void* node, std::uint32_t h, std::uint64_t first, Model* out, std::uint64_t* count) {
  if (node == nullptr) return;
  if (h > 0) {
    const unsigned shift = Table::kLeafBits + Table::kInnerBits * (h - 1);
    const auto* inner = static_cast<const Table::Inner*>(node);
    for (std::uint64_t i = 0; i < Table::kInnerSize; ++i)
      CheckNode(inner->children[i], h - 1, first + (i << shift), out, count);
    return;
  }
  const auto* leaf = static_cast<const Table::Leaf*>(node);
  for (std::uint64_t i = 0; i < Table::kLeafSize; ++i) {
    const IdChunk& s = leaf->slots[i];
    const std::uint64_t base = (first + i) << IdSet::kChunkBits;
    if (s.data == nullptr) {
      EXPECT_EQ(s.count, 0u);
      continue;
    }
    EXPECT_GT(s.count, 0u) << "a chunk block with no ids";
    if (s.capacity == 0) {
      const auto* w = static_cast<const std::uint64_t*>(s.data);
      std::uint32_t bits = 0;
      for (std::size_t j = 0; j < IdSet::kBitmapBytes / 8; ++j) {
        bits += static_cast<std::uint32_t>(__builtin_popcountll(w[j]));
        for (std::uint64_t b = w[j]; b != 0; b &= b - 1) out->insert(base + j * 64 + __builtin_ctzll(b));
      }
      EXPECT_EQ(bits, s.count);
      EXPECT_GE(s.count, IdSet::kArrayBackAt) << "a bitmap that should have become an array";
    } else {
      EXPECT_LE(s.count, s.capacity);
      EXPECT_LE(s.capacity, IdSet::kArrayMax);
      const auto* a = static_cast<const std::uint16_t*>(s.data);
      for (std::uint32_t j = 0; j < s.count; ++j) {
        if (j > 0) {
          EXPECT_LT(a[j - 1], a[j]);
        }
        EXPECT_LT(a[j], IdSet::kChunkIds);
        out->insert(base + a[j]);
      }
    }
    *count += s.count;
  }
}

// Checks `root` against `model` every way it can be read.
void ExpectSet(const IdSetRoot& root, const Model& model) {
  Model walked;
  std::uint64_t count = 0;
  if (root.small != nullptr) {
    EXPECT_EQ(root.dir.node, nullptr) << "both forms at once";
    EXPECT_LE(root.count, IdSet::kSmallMax);
    EXPECT_LE(root.count, root.small_capacity);
    const auto* ids = static_cast<const std::uint64_t*>(root.small);
    for (std::uint64_t i = 0; i < root.count; ++i) {
      if (i > 0) {
        EXPECT_LT(ids[i - 1], ids[i]);
      }
      walked.insert(ids[i]);
    }
    count = root.count;
  } else if (root.dir.node == nullptr) {
    EXPECT_EQ(root.count, 0u);
  }
  CheckNode(root.dir.node, root.dir.height, 0, &walked, &count);
  ASSERT_EQ(walked, model);
  EXPECT_EQ(count, model.size());
  EXPECT_EQ(root.count, model.size());
  const std::vector<std::uint64_t> want(model.begin(), model.end());
  for (std::size_t batch : {std::size_t{1}, std::size_t{7}, std::size_t{256}})
    EXPECT_EQ(FillAllIds(root, batch), want);
  for (std::uint64_t id : model) ASSERT_TRUE(IdSet::Contains(root, id)) << id;
  // Fill from points inside and between the ids.
  std::mt19937_64 rng(model.size());
  for (int i = 0; i < 50 && !model.empty(); ++i) {
    const std::uint64_t from = *std::next(model.begin(), static_cast<std::ptrdiff_t>(rng() % model.size())) +
                               (i % 2 == 0 ? 0 : rng() % 70000);
    std::uint64_t got[5];
    const std::size_t n = IdSet::Fill(root, from, got, 5);
    auto it = model.lower_bound(from);
    for (std::size_t j = 0; j < n; ++j, ++it) {
      ASSERT_NE(it, model.end());
      EXPECT_EQ(got[j], *it);
    }
    EXPECT_TRUE(n == 5 || it == model.end());
  }
}

// The end of a test: frees `roots` and every version's retired blocks;
// nothing may stay allocated.
void ExpectAllFreed(Versions& v, std::initializer_list<IdSetRoot*> roots) {
  for (IdSetRoot* r : roots) IdSet::Destroy(*r, &v.account());
  v.Publish();
  v.FreeRetired();
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

enum class Layout { kDense, kClustered, kSparse };

std::uint64_t RandomId(std::mt19937_64& rng, Layout layout) {
  switch (layout) {
    case Layout::kDense: return rng() % 60000;                               // about 4 chunks, bitmaps
    case Layout::kClustered: return (rng() % 5) * 1'000'003 + rng() % 3000;  // arrays that come and go
    case Layout::kSparse: return rng() % (std::uint64_t{1} << 44);  // one id per chunk, a tall directory
  }
  return 0;
}

TEST(IdSetTest, RandomGroupsMatchTheModelAndOldVersionsStayIntact) {
  for (Layout layout : {Layout::kDense, Layout::kClustered, Layout::kSparse}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(testing::Message() << "layout " << static_cast<int>(layout) << " seed " << seed);
      Versions v;
      IdSetRoot root;
      Model model;
      std::vector<std::pair<IdSetRoot, Model>> kept;
      std::mt19937_64 rng(seed);
      for (int group = 0; group < 60; ++group) {
        storage::MutationContext ctx = v.ctx();
        // Groups that mostly add, then mostly remove, so chunks cross both
        // conversion thresholds both ways.
        const bool adding = (group / 10) % 2 == 0;
        const int ops = 1 + static_cast<int>(rng() % 2000);
        for (int op = 0; op < ops; ++op) {
          const bool erase = !model.empty() && (rng() % 4 < (adding ? 1u : 3u));
          if (erase) {
            auto it = model.lower_bound(RandomId(rng, layout));
            if (it == model.end()) it = model.begin();
            const std::uint64_t victim = *it;
            ASSERT_TRUE(IdSet::Erase(root, victim, ctx));
            ASSERT_FALSE(IdSet::Erase(root, victim, ctx));
            model.erase(victim);
          } else {
            const std::uint64_t id = RandomId(rng, layout);
            ASSERT_EQ(IdSet::Insert(root, id, ctx), model.insert(id).second);
          }
        }
        v.Publish();
        if (group % 7 == 0) kept.emplace_back(root, model);
      }
      ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
      for (const auto& [old_root, old_model] : kept) ASSERT_NO_FATAL_FAILURE(ExpectSet(old_root, old_model));
      ExpectAllFreed(v, {&root});
    }
  }
}

TEST(IdSetTest, ChunksTurnIntoBitmapsAndBackAtTheirThresholds) {
  Versions v;
  IdSetRoot root;
  Model model;
  auto chunk = [&] { return *Table::Find(root.dir, 3); };
  storage::MutationContext ctx = v.ctx();
  const std::uint64_t base = 3 * IdSet::kChunkIds;
  for (std::uint32_t i = 0; i < IdSet::kArrayMax; ++i) {
    ASSERT_TRUE(IdSet::Insert(root, base + i * 13 % IdSet::kChunkIds, ctx));
    model.insert(base + i * 13 % IdSet::kChunkIds);
  }
  EXPECT_NE(chunk().capacity, 0u) << "kArrayMax ids still fit an array";
  v.Publish();
  ctx = v.ctx();
  ASSERT_TRUE(IdSet::Insert(root, base + 5, ctx));
  model.insert(base + 5);
  EXPECT_EQ(chunk().capacity, 0u) << "one more makes a bitmap";
  ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
  v.Publish();
  ctx = v.ctx();
  while (model.size() >= IdSet::kArrayBackAt) {
    EXPECT_EQ(chunk().capacity, 0u);
    ASSERT_TRUE(IdSet::Erase(root, *model.begin(), ctx));
    model.erase(model.begin());
  }
  EXPECT_NE(chunk().capacity, 0u) << "below kArrayBackAt it is an array again";
  ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
  while (!model.empty()) {
    ASSERT_TRUE(IdSet::Erase(root, *model.rbegin(), ctx));
    model.erase(std::prev(model.end()));
  }
  EXPECT_EQ(root.dir.node, nullptr) << "an empty set keeps no directory";
  EXPECT_EQ(root.count, 0u);
  v.Publish();
  v.FreeRetired();
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

// The memory the sets are for: a dense set costs about a bit per id, a
// chunk of a few ids two bytes each (the B+tree of ids took 6 bytes per id).
TEST(IdSetTest, DenseSetsCostABitPerIdAndSparseOnesTwoBytes) {
  Versions v;
  storage::MutationContext ctx = v.ctx();
  IdSetRoot dense, sparse;
  for (std::uint64_t id = 0; id < 1'000'000; ++id) IdSet::Insert(dense, id, ctx);
  for (std::uint64_t id = 0; id < 1'000'000; id += 32) IdSet::Insert(sparse, id, ctx);
  EXPECT_LT(static_cast<double>(IdSet::MemoryBytes(dense)) / 1'000'000, 0.2);
  EXPECT_LT(static_cast<double>(IdSet::MemoryBytes(sparse)) / 31'250, 3.0);
  EXPECT_EQ(dense.count, 1'000'000u);
  ExpectAllFreed(v, {&dense, &sparse});
}

TEST(IdSetTest, FillSkipsEmptyStretchesOfTheIdSpace) {
  Versions v;
  storage::MutationContext ctx = v.ctx();
  IdSetRoot root;
  Model model = {0,
                 1,
                 IdSet::kChunkIds - 1,
                 IdSet::kChunkIds,
                 std::uint64_t{1} << 30,
                 (std::uint64_t{1} << 47) + 12345,
                 (std::uint64_t{1} << 48) - 1};
  // Past kSmallMax, so the set is chunked: a dense run in the first chunk.
  for (std::uint64_t id = 100; id < 100 + IdSet::kSmallMax; ++id) model.insert(id);
  for (std::uint64_t id : model) ASSERT_TRUE(IdSet::Insert(root, id, ctx));
  EXPECT_EQ(root.small, nullptr);
  ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
  std::uint64_t got[2];
  EXPECT_EQ(IdSet::Fill(root, (std::uint64_t{1} << 30) + 1, got, 2), 2u);
  EXPECT_EQ(got[0], (std::uint64_t{1} << 47) + 12345);
  EXPECT_EQ(got[1], (std::uint64_t{1} << 48) - 1);
  EXPECT_EQ(IdSet::Fill(root, std::uint64_t{1} << 48, got, 2), 0u);
  EXPECT_FALSE(IdSet::Contains(root, std::uint64_t{1} << 48));
  EXPECT_FALSE(IdSet::Contains(IdSetRoot{}, 0));
  EXPECT_EQ(IdSet::Fill(IdSetRoot{}, 0, got, 2), 0u);
  ExpectAllFreed(v, {&root});
}

TEST(IdSetTest, SmallSetsAreOneBlockUntilTheyPassKSmallMax) {
  Versions v;
  storage::MutationContext ctx = v.ctx();
  IdSetRoot root;
  Model model;
  std::mt19937_64 rng(3);
  while (model.size() < IdSet::kSmallMax) {
    const std::uint64_t id = rng() % (std::uint64_t{1} << 40);
    ASSERT_EQ(IdSet::Insert(root, id, ctx), model.insert(id).second);
  }
  EXPECT_NE(root.small, nullptr);
  EXPECT_EQ(root.dir.node, nullptr);
  EXPECT_LE(IdSet::MemoryBytes(root), IdSet::kSmallMax * 8u);
  ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
  v.Publish();
  const IdSetRoot small = root;
  const Model small_model = model;
  ctx = v.ctx();
  std::uint64_t more = rng() % (std::uint64_t{1} << 40);
  while (model.count(more) != 0) ++more;
  ASSERT_TRUE(IdSet::Insert(root, more, ctx));
  model.insert(more);
  EXPECT_EQ(root.small, nullptr) << "one past kSmallMax is chunked";
  ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
  ASSERT_NO_FATAL_FAILURE(ExpectSet(small, small_model));
  ExpectAllFreed(v, {&root});
}

// From the review: a rare label or type scattered over a large table cost a
// 1.5 KiB directory leaf per id (945 B per id for 100 ids in 100M) where the
// B+tree it replaced took one 4 KiB leaf.
TEST(IdSetTest, ScatteredSmallSetsCostNoMoreThanTheTreeTheyReplaced) {
  Versions v;
  storage::MutationContext ctx = v.ctx();
  IdSetRoot inserted;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100; ++i) IdSet::Insert(inserted, rng() % 100'000'000, ctx);
  EXPECT_LE(IdSet::MemoryBytes(inserted), 4096u);
  IdSetRoot built;
  {
    IdSet::Builder b(ctx);
    for (std::uint64_t id = 0; id < 100'000'000; id += 1'000'000) b.Add(id);
    built = b.Finish();
  }
  EXPECT_LE(IdSet::MemoryBytes(built), 4096u);
  EXPECT_EQ(built.count, 100u);
  ExpectAllFreed(v, {&inserted, &built});
}

// From the second review: past kSmallMax a scattered set pays a directory
// leaf per chunk it touches (about 300 B per id for 513 ids in 100M), and a
// set that shrinks back must not keep that directory: at kSmallBackAt ids it
// is one small block again.
TEST(IdSetTest, ChunkedSetsThatShrinkBecomeSmallAgain) {
  Versions v;
  storage::MutationContext ctx = v.ctx();
  IdSetRoot root;
  Model model;
  std::mt19937_64 rng(5);
  while (model.size() <= IdSet::kSmallMax) model.insert(rng() % 100'000'000);
  for (std::uint64_t id : model) ASSERT_TRUE(IdSet::Insert(root, id, ctx));
  EXPECT_EQ(root.small, nullptr);
  v.Publish();
  const IdSetRoot chunked = root;
  const Model chunked_model = model;
  ctx = v.ctx();
  while (model.size() > IdSet::kSmallBackAt + 1) {
    auto it = model.lower_bound(rng() % 100'000'000);
    if (it == model.end()) it = model.begin();
    ASSERT_TRUE(IdSet::Erase(root, *it, ctx));
    model.erase(it);
  }
  EXPECT_EQ(root.small, nullptr) << "above kSmallBackAt it stays chunked";
  ASSERT_TRUE(IdSet::Erase(root, *model.begin(), ctx));
  model.erase(model.begin());
  EXPECT_NE(root.small, nullptr);
  EXPECT_EQ(root.dir.node, nullptr);
  EXPECT_LE(IdSet::MemoryBytes(root), IdSet::kSmallBackAt * 8u);
  ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
  ASSERT_NO_FATAL_FAILURE(ExpectSet(chunked, chunked_model));
  v.Publish();
  // Emptied (chunked, then small at kSmallBackAt): no block at all.
  ctx = v.ctx();
  IdSetRoot emptied;
  for (std::uint64_t id = 0; id <= IdSet::kSmallMax; ++id) ASSERT_TRUE(IdSet::Insert(emptied, id * 7, ctx));
  v.Publish();
  ctx = v.ctx();
  for (std::uint64_t id = 0; id <= IdSet::kSmallMax; ++id) ASSERT_TRUE(IdSet::Erase(emptied, id * 7, ctx));
  EXPECT_EQ(emptied.small, nullptr);
  EXPECT_EQ(emptied.dir.node, nullptr);
  EXPECT_EQ(emptied.count, 0u);
  v.Publish();
  ExpectAllFreed(v, {&root});
}

// The bytes of every block a version reaches, to check later that no
// group wrote them (DESIGN.md invariant 1), not just that they read the same.
struct BlockImage {
  const void* block;
  std::vector<unsigned char> bytes;
};

void ImageNode(const void* node, std::uint32_t h, std::vector<BlockImage>* out) {
  if (node == nullptr) return;
  auto image = [out](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    out->push_back({p, std::vector<unsigned char>(b, b + n)});
  };
  if (h > 0) {
    const auto* inner = static_cast<const Table::Inner*>(node);
    image(inner, sizeof(Table::Inner));
    for (const void* child : inner->children) ImageNode(child, h - 1, out);
    return;
  }
  const auto* leaf = static_cast<const Table::Leaf*>(node);
  image(leaf, sizeof(Table::Leaf));
  for (const IdChunk& s : leaf->slots)
    if (s.data != nullptr) image(s.data, s.capacity == 0 ? IdSet::kBitmapBytes : s.count * 2);
}

std::vector<BlockImage> ImageSet(const IdSetRoot& root) {
  std::vector<BlockImage> out;
  if (root.small != nullptr) {
    const auto* b = reinterpret_cast<const unsigned char*>(root.small);
    out.push_back({root.small, std::vector<unsigned char>(b, b + root.count * 8)});
  }
  ImageNode(root.dir.node, root.dir.height, &out);
  return out;
}

// Rising ids (the engine's common case: new elements), ids below the last,
// erases and conversions, in groups of every size; after every group, every
// block of every earlier published version still holds its bytes.
TEST(IdSetTest, GroupsNeverWriteAPublishedByte) {
  for (Layout layout : {Layout::kDense, Layout::kClustered, Layout::kSparse}) {
    Versions v;
    IdSetRoot root;
    Model model;
    std::vector<BlockImage> images;
    std::vector<std::pair<IdSetRoot, Model>> published;
    std::mt19937_64 rng(static_cast<std::uint64_t>(layout) + 11);
    std::uint64_t next = 0;
    for (int group = 0; group < 80; ++group) {
      storage::MutationContext ctx = v.ctx();
      for (int i = 0, n = 1 + static_cast<int>(rng() % 400); i < n; ++i) {
        const std::uint64_t r = rng() % 10;
        if (r < 6) {
          next += 1 + rng() % (layout == Layout::kSparse ? 100000 : 3);
          ASSERT_EQ(IdSet::Insert(root, next, ctx), model.insert(next).second);
        } else if (r < 8) {
          const std::uint64_t id = RandomId(rng, layout);
          ASSERT_EQ(IdSet::Insert(root, id, ctx), model.insert(id).second);
        } else if (!model.empty()) {
          auto it = model.lower_bound(RandomId(rng, layout));
          if (it == model.end()) it = std::prev(model.end());
          ASSERT_TRUE(IdSet::Erase(root, *it, ctx));
          model.erase(it);
        }
      }
      for (const BlockImage& im : images)
        ASSERT_EQ(std::memcmp(im.block, im.bytes.data(), im.bytes.size()), 0) << "group " << group;
      v.Publish();
      published.emplace_back(root, model);
      for (BlockImage& im : ImageSet(root)) images.push_back(std::move(im));
    }
    for (const auto& [r, m] : published) ASSERT_NO_FATAL_FAILURE(ExpectSet(r, m));
    ExpectAllFreed(v, {&root});
  }
}

// A set the Builder made in epoch E (the checkpoint loader) takes changes in
// place in E (recovery's replay into the version it loaded) and copies in
// E + 1: the built blocks' bytes survive the second.
TEST(IdSetTest, BuiltSetTakesChangesInItsEpochAndCopiesAfter) {
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{512}, std::uint64_t{513}, std::uint64_t{50000}}) {
    SCOPED_TRACE(testing::Message() << "n " << n);
    Versions v;
    v.set_epoch(7);
    storage::MutationContext ctx = v.ctx();
    Model model;
    IdSetRoot root;
    {
      IdSet::Builder b(ctx);
      for (std::uint64_t i = 0; i < n; ++i) {
        b.Add(3 * i);
        model.insert(3 * i);
      }
      root = b.Finish();
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
    std::uint64_t next = 3 * n;
    for (int i = 0; i < 50; ++i, next += 2) {
      ASSERT_TRUE(IdSet::Insert(root, next, ctx));
      model.insert(next);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
    v.Publish();
    const std::vector<BlockImage> images = ImageSet(root);
    const IdSetRoot before = root;
    const Model before_model = model;
    ctx = v.ctx();
    for (int i = 0; i < 300; ++i, next += 5) {
      ASSERT_TRUE(IdSet::Insert(root, next, ctx));
      model.insert(next);
    }
    ASSERT_TRUE(IdSet::Erase(root, 0, ctx));
    model.erase(0);
    for (const BlockImage& im : images) ASSERT_EQ(std::memcmp(im.block, im.bytes.data(), im.bytes.size()), 0);
    ASSERT_NO_FATAL_FAILURE(ExpectSet(before, before_model));
    ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
    v.Publish();
    ExpectAllFreed(v, {&root});
  }
}

TEST(IdSetTest, BuilderMatchesInsertsAndFreesWhatItBuiltWhenAbandoned) {
  for (Layout layout : {Layout::kDense, Layout::kClustered, Layout::kSparse}) {
    Versions v;
    std::mt19937_64 rng(7);
    Model model;
    for (int i = 0; i < 40000; ++i) model.insert(RandomId(rng, layout));
    storage::MutationContext ctx = v.ctx();
    IdSetRoot built;
    {
      IdSet::Builder b(ctx);
      for (std::uint64_t id : model) b.Add(id);
      built = b.Finish();
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSet(built, model));
    const std::int64_t with_set = v.account().allocated_bytes();
    {
      IdSet::Builder b(ctx);
      for (std::uint64_t id : model) b.Add(id);
    }
    EXPECT_EQ(v.account().allocated_bytes(), with_set) << "an abandoned Builder frees its blocks";
    // A built set is an ordinary one: a later group edits it.
    v.Publish();
    ctx = v.ctx();
    for (int i = 0; i < 3000; ++i) {
      const std::uint64_t id = RandomId(rng, layout);
      if (i % 2 == 0) {
        ASSERT_EQ(IdSet::Insert(built, id, ctx), model.insert(id).second);
      } else {
        ASSERT_EQ(IdSet::Erase(built, id, ctx), model.erase(id) == 1);
      }
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSet(built, model));
    ExpectAllFreed(v, {&built});
  }
}

// Fails the n-th allocation of each group of one to five operations for
// n = 1, 2, ... until the group succeeds; after every failure the group
// rolls back and the published set reads as before. Then nothing leaks.
// The groups the loop runs on are a sample (loop_sample.h: the first 16,
// then one in 3, rotating over the six cases, so each group fails under two
// of them; every group under every case in the soak entry); the others are
// applied without a failure, so the set grows the same either way.
TEST(IdSetTest, AllocationFailuresDamageNothingAndLeakNothing) {
  const test_util::LoopSample sample("id set groups with allocation failures (variant: mode x layout)", 3);
  SCOPED_TRACE(sample.Describe());
  std::uint64_t variant = 0;
  for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
    for (Layout layout : {Layout::kDense, Layout::kClustered, Layout::kSparse}) {
      const std::uint64_t this_variant = variant++;
      Versions v;
      IdSetRoot root;
      Model model;
      std::mt19937_64 rng(21);
      for (int group = 0; group < 400; ++group) {
        // Adds first, so the set turns chunked and arrays fill up and
        // convert; then adds and erases.
        std::vector<std::pair<bool, std::uint64_t>> ops;
        Model after = model;
        for (std::uint64_t k = 1 + rng() % 5; k > 0; --k) {
          const bool erase = group > 250 && rng() % 2 == 0 && !after.empty();
          std::uint64_t id = RandomId(rng, layout);
          if (erase) {
            auto it = after.lower_bound(id);
            id = it == after.end() ? *after.begin() : *it;
            after.erase(id);
          } else {
            after.insert(id);
          }
          ops.emplace_back(erase, id);
        }
        // A group outside the sample is armed past its last allocation.
        for (std::uint64_t n =
                 sample.Tries(static_cast<std::uint64_t>(group), this_variant) ? 1 : ~std::uint64_t{0};
             ; ++n) {
          const IdSetRoot saved = root;
          base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
          try {
            storage::MutationContext ctx = v.ctx();
            for (const auto& [erase, id] : ops) {
              if (erase) {
                IdSet::Erase(root, id, ctx);
              } else {
                IdSet::Insert(root, id, ctx);
              }
            }
            base::DisarmAllocationFaults();
            break;
          } catch (const std::bad_alloc&) {
            base::DisarmAllocationFaults();
            v.Rollback();
            root = saved;
            ASSERT_EQ(root.count, model.size());
            ASSERT_EQ(FillAllIds(root, 256), std::vector<std::uint64_t>(model.begin(), model.end()));
          }
        }
        model = std::move(after);
        v.Publish();
      }
      ASSERT_NO_FATAL_FAILURE(ExpectSet(root, model));
      ExpectAllFreed(v, {&root});
    }
  }
}

}  // namespace
}  // namespace quiver::index
