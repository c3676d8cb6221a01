// Shared by the tests of reclaiming removed slots (removed_leaf_test.cc and
// removed_leaf_review_test.cc): a vertex table driven by hand through
// epochs, and a scope in which no batch reclaims a leaf.
#ifndef QUIVER_TESTS_REMOVED_LEAF_FIXTURE_H_
#define QUIVER_TESTS_REMOVED_LEAF_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdint>

#include "base/memory.h"
#include "storage/elements.h"
#include "storage/retire_list.h"
#include "write/batch_processor.h"

namespace quiver::test_util {

// While one lives, no batch reclaims a leaf (write/batch_processor.h): a
// twin graph written inside one keeps every leaf it empties.
struct ScopedNoReclaiming {
  ScopedNoReclaiming() { g_reclaim_removed_leaves.store(false); }
  ~ScopedNoReclaiming() { g_reclaim_removed_leaves.store(true); }
  ScopedNoReclaiming(const ScopedNoReclaiming&) = delete;
  ScopedNoReclaiming& operator=(const ScopedNoReclaiming&) = delete;
};

// A vertex table written the way the writer writes one: each epoch is a
// group (its blocks private, GroupBlocks), NextEpoch publishes it. Slot i
// is appended with label i % 7. Destroying it checks that every node was
// freed once and no shared node was freed.
struct VertexTableFixture {
  using Table = storage::VertexTable;
  static constexpr std::uint64_t kLeaf = Table::kLeafSize;

  base::MemoryAccount account;
  storage::RetireList retired;
  storage::GroupBlocks blocks;
  storage::TableRoot root;
  std::uint64_t count = 0;
  std::uint64_t epoch = 1;

  static std::uint32_t LabelOf(std::uint64_t id) { return static_cast<std::uint32_t>(id % 7); }

  storage::MutationContext Ctx() { return storage::MutationContext{epoch, &account, &retired, &blocks}; }
  void Append(std::uint64_t n) {
    storage::MutationContext ctx = Ctx();
    for (std::uint64_t i = 0; i < n; ++i, ++count) {
      storage::VertexSlot s{};
      s.label = LabelOf(count);
      Table::Append(root, count, s, ctx);
    }
  }
  // A new group: this one's blocks become published, the retired ones go.
  void NextEpoch() {
    blocks.Clear();
    retired.FreeAll(&account);
    ++epoch;
  }
  void Remove(std::uint64_t id) {
    storage::MutationContext ctx = Ctx();
    storage::VertexSlot* s = Table::Mutable(root, id, ctx);
    *s = storage::VertexSlot{};
    s->label = storage::kDeadLabel;
  }
  bool Reclaim(std::uint64_t id) {
    storage::MutationContext ctx = Ctx();
    return Table::ReclaimIfRemoved(root, id, count, ctx);
  }
  // Removes [from, to), then reclaims each leaf it touched.
  void RemoveAndReclaim(std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t id = from; id < to; ++id) Remove(id);
    for (std::uint64_t id = from; id < to; id += kLeaf) Reclaim(id);
  }
  const Table::Leaf* LeafOf(std::uint64_t id) const { return Table::FindLeaf(root, id); }
  // Every id below `removed_below` reads as removed, every other as appended.
  void ExpectReads(std::uint64_t removed_below, const char* what) const {
    for (std::uint64_t id = 0; id < count; ++id) {
      const storage::VertexSlot* s = Table::Find(root, id);
      ASSERT_NE(s, nullptr) << what << " " << id;
      ASSERT_EQ(s->label, id < removed_below ? storage::kDeadLabel : LabelOf(id)) << what << " " << id;
    }
  }
  ~VertexTableFixture() {
    retired.FreeAll(&account);
    Table::Destroy(root, count, &account, [](storage::VertexSlot&) {});
    EXPECT_EQ(account.allocated_bytes(), 0) << "every node freed once, no shared node freed";
  }
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_REMOVED_LEAF_FIXTURE_H_
