#include "storage/radix_table.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace quiver::storage {
namespace {

struct Slot64 {
  std::uint64_t value;
};
using Table = RadixTable<Slot64>;

// The checkpoint loader reserves a table's inner nodes on one thread and its
// leaves on several, each a range of its own, with a context of its own: the
// ranges, made in any order, must tile the table (every id reachable, each
// at a slot of its own), the last leaf's tail must be zeroed, and Destroy
// must free every node.
TEST(RadixTableTest, LeavesReservedInRangesCoverEveryId) {
  for (std::uint64_t count : {std::uint64_t{1}, std::uint64_t{63}, std::uint64_t{64}, std::uint64_t{65},
                              std::uint64_t{4096}, std::uint64_t{4097}, std::uint64_t{300'001}}) {
    SCOPED_TRACE(count);
    base::MemoryAccount account;
    RetireList retired;
    MutationContext ctx{1, &account, &retired};
    base::MemoryAccount worker_accounts[3];
    MutationContext workers[3] = {{1, &worker_accounts[0], &retired},
                                  {1, &worker_accounts[1], &retired},
                                  {1, &worker_accounts[2], &retired}};
    TableRoot root;
    Table::ReserveInner(root, count, ctx);
    const std::uint64_t leaves = Table::LeafCount(count);
    ASSERT_EQ(leaves, (count + Table::kLeafSize - 1) / Table::kLeafSize);
    const std::uint64_t cut1 = leaves / 3, cut2 = 2 * leaves / 3;
    Table::ReserveLeaves(root, count, cut2, leaves, workers[2]);
    Table::ReserveLeaves(root, count, 0, cut1, workers[0]);
    Table::ReserveLeaves(root, count, cut1, cut2, workers[1]);
    EXPECT_EQ(root.birth, 1u);
    for (std::uint64_t id = 0; id < count; ++id) Table::BornSlot(root, id)->value = id + 1;
    for (std::uint64_t id = 0; id < count; ++id) {
      const Slot64* s = Table::Find(root, id);
      ASSERT_NE(s, nullptr) << id;
      ASSERT_EQ(s->value, id + 1) << id;
    }
    const Slot64* last_leaf = Table::FindLeaf(root, count - 1)->slots;
    for (std::uint64_t i = (count - 1) % Table::kLeafSize + 1; i < Table::kLeafSize; ++i)
      EXPECT_EQ(last_leaf[i].value, 0u) << i;
    for (base::MemoryAccount& w : worker_accounts) account.Absorb(w);
    EXPECT_GT(account.allocated_bytes(), 0);
    Table::Destroy(root, count, &account, [](Slot64&) {});
    EXPECT_EQ(account.allocated_bytes(), 0);
  }
}

}  // namespace
}  // namespace quiver::storage
