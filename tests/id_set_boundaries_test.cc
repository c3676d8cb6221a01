// Regression tests for IdSet (the label and type sets), written by a review
// that read src/index/id_set.{h,cc} and its callers and found no defect.
// They pin the edges the review checked by reading, so a
// later change that breaks one fails here (all passed when added, stop 45).
//
//
//  - every form and its conversions at the exact thresholds (small 512 ->
//    chunked on the 513th id, chunked -> small at 128; array 1,024 -> bitmap
//    on the 1,025th, bitmap -> array below 512), ids at the chunk edge
//    16383/16384 and in the last chunk of the 48-bit id space, the last id of
//    a chunk removed (directory leaf reclaimed) and added again, the set
//    emptied and refilled; every published version re-read at the end, byte
//    for byte;
//  - hysteresis: one id added and removed in turn at each threshold, within a
//    group and across groups, never converts back and forth;
//  - allocation failure at every allocation of groups that cross each
//    conversion against published blocks, rolled back as GraphImpl does (a
//    new epoch per group): the published set reads as before, nothing leaks.
//
// Helpers are prefixed IdSetRev (the ASan build compiles several test files
// in one unit).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "id_set_fill.h"
#include "index/id_set.h"
#include "storage/radix_table.h"
#include "storage/retire_list.h"
#include "tree_versions.h"

namespace quiver::index {
namespace {

using IdSetRevModel = std::set<std::uint64_t>;
using IdSetRevTable = storage::RadixTable<IdChunk>;

constexpr std::uint64_t kIdSetRevMaxId = (std::uint64_t{1} << 48) - 1;
constexpr std::uint64_t kIdSetRevLastChunkFirst = (std::uint64_t{1} << 48) - IdSet::kChunkIds;

// `root` reads as `model` every way: count, Fill in batches, Contains, Fill
// from just past each id, and one form at a time.
void IdSetRevExpect(const IdSetRoot& root, const IdSetRevModel& model) {
  ASSERT_EQ(root.count, model.size());
  EXPECT_TRUE(root.small == nullptr || root.dir.node == nullptr) << "both forms at once";
  if (model.empty()) {
    EXPECT_EQ(root.small, nullptr);
    EXPECT_EQ(root.dir.node, nullptr);
  }
  if (root.small != nullptr) {
    EXPECT_LE(root.count, IdSet::kSmallMax);
  }
  if (root.dir.node != nullptr) {
    EXPECT_GT(root.count, IdSet::kSmallBackAt);
  }
  const std::vector<std::uint64_t> want(model.begin(), model.end());
  for (std::size_t batch : {std::size_t{1}, std::size_t{16}, std::size_t{256}})
    ASSERT_EQ(FillAllIds(root, batch), want) << "batch " << batch;
  for (std::uint64_t id : model) ASSERT_TRUE(IdSet::Contains(root, id)) << id;
  for (std::uint64_t id : {std::uint64_t{1}, std::uint64_t{16383}, std::uint64_t{16385}, kIdSetRevMaxId - 1})
    EXPECT_EQ(IdSet::Contains(root, id), model.count(id) != 0) << id;
  for (std::uint64_t id : model) {
    std::uint64_t got = 0;
    const std::size_t n = IdSet::Fill(root, id + 1, &got, 1);
    auto next = model.upper_bound(id);
    ASSERT_EQ(n, next == model.end() ? 0u : 1u) << id;
    if (n == 1) {
      ASSERT_EQ(got, *next);
    }
  }
}

// The bytes of every block a root reaches (the live part of an array).
struct IdSetRevBlock {
  const void* p;
  std::vector<unsigned char> bytes;
};

void IdSetRevAdd(std::vector<IdSetRevBlock>* out, const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  out->push_back(IdSetRevBlock{p, std::vector<unsigned char>(b, b + n)});
}

void IdSetRevImageNode(const void* node, std::uint32_t h, std::vector<IdSetRevBlock>* out) {
  if (node == nullptr) return;
  if (h == 0) {
    const auto* leaf = static_cast<const IdSetRevTable::Leaf*>(node);
    IdSetRevAdd(out, node, sizeof(IdSetRevTable::Leaf));
    for (const IdChunk& s : leaf->slots)
      if (s.data != nullptr)
        IdSetRevAdd(out, s.data, s.capacity == 0 ? IdSet::kBitmapBytes : s.count * sizeof(std::uint16_t));
    return;
  }
  const auto* inner = static_cast<const IdSetRevTable::Inner*>(node);
  IdSetRevAdd(out, node, sizeof(IdSetRevTable::Inner));
  for (const void* child : inner->children) IdSetRevImageNode(child, h - 1, out);
}

std::vector<IdSetRevBlock> IdSetRevImage(const IdSetRoot& root) {
  std::vector<IdSetRevBlock> out;
  if (root.small != nullptr) IdSetRevAdd(&out, root.small, root.count * sizeof(std::uint64_t));
  IdSetRevImageNode(root.dir.node, root.dir.height, &out);
  return out;
}

void IdSetRevExpectImage(const std::vector<IdSetRevBlock>& image) {
  for (const IdSetRevBlock& b : image)
    ASSERT_EQ(std::memcmp(b.p, b.bytes.data(), b.bytes.size()), 0) << "a published block was written";
}

const IdChunk* IdSetRevChunk(const IdSetRoot& root, std::uint64_t chunk) {
  const IdChunk* s = IdSetRevTable::Find(root.dir, chunk);
  return s == nullptr || s->data == nullptr ? nullptr : s;
}

struct IdSetRevOp {
  bool erase;
  std::uint64_t id;
};

std::vector<IdSetRevOp> IdSetRevRange(bool erase, std::uint64_t from, std::uint64_t to) {
  std::vector<IdSetRevOp> ops;
  for (std::uint64_t id = from; id < to; ++id) ops.push_back(IdSetRevOp{erase, id});
  return ops;
}

void IdSetRevApply(IdSetRoot& root, IdSetRevModel& model, const std::vector<IdSetRevOp>& ops,
                   storage::MutationContext& ctx) {
  for (const IdSetRevOp& op : ops) {
    if (op.erase) {
      ASSERT_EQ(IdSet::Erase(root, op.id, ctx), model.erase(op.id) == 1) << op.id;
    } else {
      ASSERT_EQ(IdSet::Insert(root, op.id, ctx), model.insert(op.id).second) << op.id;
    }
  }
}

// Every form change at its threshold, at the id space's edges, one group
// each; every published version is re-read (and compared byte for byte) at
// the end.
TEST(IdSetReviewTest, ThresholdsAndIdSpaceEdgesKeepEveryVersionIntact) {
  test_util::TreeVersions v;
  IdSetRoot root;
  IdSetRevModel model;
  struct Kept {
    IdSetRoot root;
    IdSetRevModel model;
    std::vector<IdSetRevBlock> image;
  };
  std::vector<Kept> kept;
  auto group = [&](const std::vector<IdSetRevOp>& ops) {
    storage::MutationContext ctx = v.ctx();
    IdSetRevApply(root, model, ops, ctx);
    v.Publish();
    IdSetRevExpect(root, model);
    kept.push_back(Kept{root, model, IdSetRevImage(root)});
  };
  // Small, with ids on both sides of the first chunk edge and in the last chunk.
  ASSERT_NO_FATAL_FAILURE(group({{false, 16384},
                                 {false, 16383},
                                 {false, 0},
                                 {false, kIdSetRevMaxId},
                                 {false, kIdSetRevLastChunkFirst}}));
  ASSERT_NE(root.small, nullptr);
  // 507 more: 512, still small.
  ASSERT_NO_FATAL_FAILURE(group(IdSetRevRange(false, 16385, 16385 + 507)));
  ASSERT_EQ(root.count, IdSet::kSmallMax);
  ASSERT_NE(root.small, nullptr);
  // The 513th: chunked; the tall directory reaches the last chunk.
  ASSERT_NO_FATAL_FAILURE(group({{false, 16385 + 507}}));
  ASSERT_EQ(root.small, nullptr);
  ASSERT_NE(root.dir.node, nullptr);
  ASSERT_NE(IdSetRevChunk(root, kIdSetRevMaxId >> IdSet::kChunkBits), nullptr);
  // The last chunk's ids go, one per group: its leaf (and the directory path
  // to it) is reclaimed; then one comes back.
  ASSERT_NO_FATAL_FAILURE(group({{true, kIdSetRevMaxId}}));
  ASSERT_NO_FATAL_FAILURE(group({{true, kIdSetRevLastChunkFirst}}));
  ASSERT_EQ(IdSetRevChunk(root, kIdSetRevMaxId >> IdSet::kChunkBits), nullptr);
  ASSERT_NO_FATAL_FAILURE(group({{false, kIdSetRevMaxId}}));
  // Chunk 1 (16384..) to 1,024 ids: still an array; the 1,025th: a bitmap.
  const std::uint64_t in_chunk1 = 1 + 508;  // 16384 and 16385 .. 16892
  ASSERT_NO_FATAL_FAILURE(group(IdSetRevRange(false, 16893, 16893 + (IdSet::kArrayMax - in_chunk1))));
  ASSERT_EQ(IdSetRevChunk(root, 1)->count, IdSet::kArrayMax);
  ASSERT_NE(IdSetRevChunk(root, 1)->capacity, 0u);
  ASSERT_NO_FATAL_FAILURE(group({{false, 16384 + IdSet::kChunkIds - 1}}));  // the chunk's last id
  ASSERT_EQ(IdSetRevChunk(root, 1)->capacity, 0u);
  // Down to 512: still a bitmap; 511: an array.
  std::vector<IdSetRevOp> down;
  for (std::uint64_t id = 16384; IdSetRevChunk(root, 1)->count - down.size() > IdSet::kArrayBackAt; ++id)
    if (model.count(id) != 0) down.push_back({true, id});
  ASSERT_NO_FATAL_FAILURE(group(down));
  ASSERT_EQ(IdSetRevChunk(root, 1)->count, IdSet::kArrayBackAt);
  ASSERT_EQ(IdSetRevChunk(root, 1)->capacity, 0u);
  ASSERT_NO_FATAL_FAILURE(group({{true, 16384 + IdSet::kChunkIds - 1}}));
  ASSERT_NE(IdSetRevChunk(root, 1)->capacity, 0u);
  // Down to 129: chunked; 128: small again.
  std::vector<IdSetRevOp> shrink;
  for (auto it = model.begin(); model.size() - shrink.size() > IdSet::kSmallBackAt + 1; ++it)
    if (*it != kIdSetRevMaxId && *it != 0) shrink.push_back({true, *it});
  ASSERT_NO_FATAL_FAILURE(group(shrink));
  ASSERT_NE(root.dir.node, nullptr);
  ASSERT_NO_FATAL_FAILURE(group({{true, 0}}));
  ASSERT_NE(root.small, nullptr);
  ASSERT_EQ(root.dir.node, nullptr);
  // Empty, then refilled across the chunk edge.
  std::vector<IdSetRevOp> all;
  for (std::uint64_t id : model) all.push_back({true, id});
  ASSERT_NO_FATAL_FAILURE(group(all));
  ASSERT_EQ(root.count, 0u);
  ASSERT_NO_FATAL_FAILURE(group(IdSetRevRange(false, 16384 - 300, 16384 + 300)));
  ASSERT_NE(root.dir.node, nullptr);
  for (const Kept& k : kept) {
    ASSERT_NO_FATAL_FAILURE(IdSetRevExpectImage(k.image));
    ASSERT_NO_FATAL_FAILURE(IdSetRevExpect(k.root, k.model));
  }
  IdSet::Destroy(root, &v.account());
  v.Publish();
  v.FreeRetired();
  EXPECT_EQ(v.account().allocated_bytes(), 0);
}

// One id added and removed in turn at each threshold, within one group and
// one op per group: the form never flips back.
TEST(IdSetReviewTest, HoveringAtAThresholdNeverConvertsBackAndForth) {
  for (bool per_group : {false, true}) {
    SCOPED_TRACE(per_group ? "one op per group" : "one group");
    test_util::TreeVersions v;
    IdSetRoot root;
    IdSetRevModel model;
    storage::MutationContext ctx = v.ctx();
    auto op = [&](bool erase, std::uint64_t id) {
      IdSetRevApply(root, model, {{erase, id}}, ctx);
      if (per_group) {
        v.Publish();
        ctx = v.ctx();
      }
    };
    for (std::uint64_t id = 0; id < IdSet::kSmallMax; ++id) op(false, id);
    op(false, IdSet::kSmallMax);  // 513: chunked
    for (int i = 0; i < 50; ++i) {
      op(true, IdSet::kSmallMax);
      ASSERT_NE(root.dir.node, nullptr) << "chunked -> small at 512";
      op(false, IdSet::kSmallMax);
    }
    for (std::uint64_t id = IdSet::kSmallMax; id > IdSet::kSmallBackAt; --id)
      op(true, id);  // 129 left: 0..128
    ASSERT_NE(root.dir.node, nullptr);
    op(true, IdSet::kSmallBackAt);  // 128: small
    ASSERT_NE(root.small, nullptr);
    for (int i = 0; i < 50; ++i) {
      op(false, IdSet::kSmallBackAt);
      ASSERT_NE(root.small, nullptr) << "small -> chunked at 129";
      op(true, IdSet::kSmallBackAt);
    }
    // Chunk 0 up to 1,025 ids (a bitmap), then hover at 512/513 and 1,024/1,025.
    for (std::uint64_t id = IdSet::kSmallBackAt; id <= IdSet::kArrayMax; ++id) op(false, id);
    ASSERT_EQ(IdSetRevChunk(root, 0)->capacity, 0u);
    for (int i = 0; i < 50; ++i) {
      op(true, IdSet::kArrayMax);
      ASSERT_EQ(IdSetRevChunk(root, 0)->capacity, 0u) << "bitmap -> array at 1,024";
      op(false, IdSet::kArrayMax);
    }
    // Down to 512: still a bitmap; 511: an array.
    for (std::uint64_t id = IdSet::kArrayMax; id >= IdSet::kArrayBackAt; --id) op(true, id);  // 0..511 left
    ASSERT_EQ(IdSetRevChunk(root, 0)->capacity, 0u);
    op(true, IdSet::kArrayBackAt - 1);  // 0..510
    ASSERT_NE(IdSetRevChunk(root, 0)->capacity, 0u);
    for (int i = 0; i < 50; ++i) {
      op(false, IdSet::kArrayBackAt - 1);
      ASSERT_NE(IdSetRevChunk(root, 0)->capacity, 0u) << "array -> bitmap at 512";
      op(true, IdSet::kArrayBackAt - 1);
    }
    ASSERT_NO_FATAL_FAILURE(IdSetRevExpect(root, model));
    IdSet::Destroy(root, &v.account());
    v.Publish();
    v.FreeRetired();
    EXPECT_EQ(v.account().allocated_bytes(), 0);
  }
}

// Fails the n-th allocation of groups that cross each conversion against
// published blocks, n = 1, 2, ... until the group succeeds; each failure is
// rolled back as GraphImpl does (private blocks freed, a new epoch), the
// published set reads as before, byte for byte, and nothing leaks.
TEST(IdSetReviewTest, AllocationFailureInEveryConversionRollsBackCleanly) {
  for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
    test_util::TreeVersions v;
    IdSetRoot root;
    IdSetRevModel model;
    const std::vector<std::vector<IdSetRevOp>> groups = {
        IdSetRevRange(false, 0, IdSet::kSmallMax),                // small, full
        {{false, IdSet::kSmallMax}, {false, 5'000'000}},          // small -> chunked (published small)
        IdSetRevRange(false, IdSet::kSmallMax + 1, 1100),         // chunk 0: array -> bitmap
        IdSetRevRange(true, 400, 1100),                           // chunk 0: bitmap -> array
        {{true, 5'000'000}},                                      // the only id of its leaf: leaf reclaimed
        {{false, 5'000'000}, {true, 5'000'000}, {false, 16384}},  // back and gone in one group
        IdSetRevRange(true, 128, 400),                            // 0..127 and 16384: 129, still chunked
        {{true, 16384}},                                          // 128: chunked -> small (published dir)
        IdSetRevRange(true, 0, 128),                              // empty
    };
    for (const std::vector<IdSetRevOp>& ops : groups) {
      const IdSetRoot saved = root;
      const IdSetRevModel saved_model = model;
      const std::vector<IdSetRevBlock> image = IdSetRevImage(saved);
      for (std::uint64_t n = 1;; ++n) {
        IdSetRevModel scratch = saved_model;
        base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
        try {
          storage::MutationContext ctx = v.ctx();
          for (const IdSetRevOp& op : ops) {
            if (op.erase) {
              IdSet::Erase(root, op.id, ctx);
              scratch.erase(op.id);
            } else {
              IdSet::Insert(root, op.id, ctx);
              scratch.insert(op.id);
            }
          }
          base::DisarmAllocationFaults();
          model = std::move(scratch);
          break;
        } catch (const std::bad_alloc&) {
          base::DisarmAllocationFaults();
          v.Rollback(/*new_epoch=*/true);
          root = saved;
          ASSERT_NO_FATAL_FAILURE(IdSetRevExpectImage(image));
          ASSERT_NO_FATAL_FAILURE(IdSetRevExpect(root, saved_model));
        }
        ASSERT_LT(n, 100000u);
      }
      v.Publish();
      ASSERT_NO_FATAL_FAILURE(IdSetRevExpect(root, model));
    }
    ASSERT_EQ(root.count, 0u);
    IdSet::Destroy(root, &v.account());
    v.Publish();
    v.FreeRetired();
    EXPECT_EQ(v.account().allocated_bytes(), 0);
  }
}

}  // namespace
}  // namespace quiver::index
