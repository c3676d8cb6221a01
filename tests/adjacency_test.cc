// Adjacency heads (storage/adjacency.h): what a reader learns from the head
// word alone, and that every head shape reads back the entries written.
#include "storage/adjacency.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "storage/retire_list.h"

namespace quiver::storage {
namespace {

// One writer's blocks: every head built here is freed at the end.
class Heads {
 public:
  ~Heads() {
    for (std::uintptr_t h : heads_) FreeAdjacency(h, &account_);
    retired_.FreeAll(&account_);
  }
  MutationContext ctx() { return {1, &account_, &retired_, &blocks_}; }
  std::uintptr_t& New() { return heads_.emplace_back(0); }
  base::MemoryAccount& account() { return account_; }
  // Blocks made with this context count as published: never edited in
  // place, retired (not freed) when replaced.
  MutationContext published() { return {0, &account_, &retired_, nullptr}; }
  const RetireList& retired() const { return retired_; }
  const GroupBlocks& blocks() const { return blocks_; }

 private:
  base::MemoryAccount account_;
  RetireList retired_;
  GroupBlocks blocks_;
  std::deque<std::uintptr_t> heads_;  // New() hands out references that must stay valid
};

std::vector<std::pair<std::uint64_t, std::uint64_t>> Entries(std::span<const EdgeEntry> entries) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const EdgeEntry& e : entries) out.emplace_back(e.edge().value(), e.neighbor().value());
  return out;
}

// A single-group head carries its type, and its array is nothing but its
// entries (no header): the entries start at the block's first byte, the
// block is exactly what the allocator's bin gives for them, and the room
// the writer appends into is that bin's (ArrayCapacity).
TEST(AdjacencyTest, SingleGroupHeadCarriesItsTypeAndTheArrayOnlyEntries) {
  Heads heads;
  MutationContext ctx = heads.ctx();
  std::uintptr_t& head = heads.New();
  std::uint32_t degree = 0;
  for (std::uint64_t i = 0; i < 5; ++i) AppendEntry(head, degree, 7, 100 + i, 200 + i, ctx);
  ASSERT_FALSE(IsDir(head));
  EXPECT_EQ(ArrayType(head), 7u);
  EXPECT_EQ(GroupAt(head, degree, 0).type, EdgeTypeId(7));
  EXPECT_EQ(FindGroup(head, degree, 7).size(), 5u);
  EXPECT_TRUE(FindGroup(head, degree, 9).empty());
  const EdgeArray* a = AsArray(head);
  EXPECT_EQ(static_cast<const void*>(a), static_cast<const void*>(FindGroup(head, degree, 7).data()));
  EXPECT_EQ(a->entries()[0].edge().value(), 100u);
  EXPECT_EQ(a->entries()[4].neighbor().value(), 204u);
  // The block of one entry is what the allocator gives for 12 bytes, less
  // than a block of 20 (an entry and the old header) would take. (Exact bins
  // hold for mimalloc and the sanitizers' allocators; glibc's malloc may
  // make more usable, so the checks are on usable sizes.)
  std::uintptr_t& one = heads.New();
  std::uint32_t one_degree = 0;
  AppendEntry(one, one_degree, 7, 1, 2, ctx);
  EXPECT_LT(base::UsableSize(AsMutableArray(one)), base::GoodAllocationSize(sizeof(EdgeEntry) + 8));
  for (std::uint32_t n : {1u, 2u, 3u, 7u, 10u, 100u, 1000u}) {
    MutationContext c = heads.ctx();
    EdgeArray* made = NewEdgeArray(n, c);
    EXPECT_EQ(ArrayCapacity(made), base::UsableSize(made) / sizeof(EdgeEntry)) << n;
    EXPECT_GE(ArrayCapacity(made), n);
    EXPECT_GE(base::UsableSize(made), base::GoodAllocationSize(n * sizeof(EdgeEntry))) << n;
    c.FreeUnlinked(made);
  }
}

// A type that does not fit beside the address (>= 2^16) keeps a directory
// even for one group (arrays have no header to hold it): every head shape
// (one group, a directory, back to one group) reads back right.
TEST(AdjacencyTest, LargeAndSmallTypesReadBackThroughEveryHeadShape) {
  Heads heads;
  MutationContext ctx = heads.ctx();
  for (std::uint32_t big : {0xFFFFu, 0x10000u, 0xFFFFFFFEu}) {
    std::uintptr_t& head = heads.New();
    std::uint32_t degree = 0;
    AppendEntry(head, degree, big, 1, 11, ctx);
    AppendEntry(head, degree, big, 2, 12, ctx);
    EXPECT_EQ(IsDir(head), big > kMaxTypeInHead);
    EXPECT_EQ(GroupCount(head), 1u);
    EXPECT_EQ(GroupAt(head, degree, 0).type, EdgeTypeId(big));
    EXPECT_EQ(Entries(FindGroup(head, degree, big)),
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 11}, {2, 12}}));
    AppendEntry(head, degree, 3, 3, 13, ctx);  // a directory now
    ASSERT_TRUE(IsDir(head));
    EXPECT_EQ(GroupCount(head), 2u);
    const std::uint64_t gone[] = {1, 2};
    EXPECT_EQ(RemoveEntries(head, degree, big, gone, ctx), 2u);  // back to one group, type 3
    ASSERT_FALSE(IsDir(head));
    EXPECT_EQ(GroupAt(head, degree, 0).type, EdgeTypeId(3));
    EXPECT_EQ(Entries(FindGroup(head, degree, 3)),
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{3, 13}}));
    const std::uint64_t last[] = {3};
    EXPECT_EQ(RemoveEntries(head, degree, 3, last, ctx), 1u);
    EXPECT_EQ(head, 0u);
    EXPECT_EQ(degree, 0u);
    // The other way back: the small type goes, the large one stays, in a
    // directory of one group if it does not fit the word.
    std::uintptr_t& mixed = heads.New();
    std::uint32_t mixed_degree = 0;
    AppendEntry(mixed, mixed_degree, 3, 4, 14, ctx);
    AppendEntry(mixed, mixed_degree, big, 5, 15, ctx);
    const std::uint64_t small[] = {4};
    EXPECT_EQ(RemoveEntries(mixed, mixed_degree, 3, small, ctx), 1u);
    EXPECT_EQ(IsDir(mixed), big > kMaxTypeInHead);
    EXPECT_EQ(GroupCount(mixed), 1u);
    EXPECT_EQ(GroupAt(mixed, mixed_degree, 0).type, EdgeTypeId(big));
    EXPECT_EQ(Entries(FindGroup(mixed, mixed_degree, big)),
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{5, 15}}));
    // Its last entry gone, the head is empty: no directory of no groups.
    const std::uint64_t rest[] = {5};
    EXPECT_EQ(RemoveEntries(mixed, mixed_degree, big, rest, ctx), 1u);
    EXPECT_EQ(mixed, 0u);
    EXPECT_EQ(mixed_degree, 0u);
  }
}

// The block a head points to is the array (or directory) itself, whatever
// the tags: prefetching and freeing use it.
TEST(AdjacencyTest, HeadBlockIsTheArrayOrDirectory) {
  Heads heads;
  MutationContext ctx = heads.ctx();
  std::uintptr_t& head = heads.New();
  std::uint32_t degree = 0;
  EXPECT_EQ(HeadBlock(head), nullptr);
  AppendEntry(head, degree, 5, 1, 2, ctx);
  EXPECT_EQ(HeadBlock(head), static_cast<const void*>(AsArray(head)));
  EXPECT_EQ(static_cast<const void*>(AsArray(head)->entries()), GroupAt(head, degree, 0).entries.data());
  AppendEntry(head, degree, 6, 3, 4, ctx);
  EXPECT_EQ(HeadBlock(head), static_cast<const void*>(AsDir(head)));
}

// Growth leaves room for at least two more entries (and 1/8 spare): a
// published array appended to one entry at a time, as random edge inserts
// do (a batch each), is copied at most every other append while small,
// where growing to the next allocator bin copied it at nearly every one.
TEST(AdjacencyTest, GrowthLeavesRoomForTwoMoreEntries) {
  EXPECT_EQ(GrownCapacity(0, 1), 2u);
  EXPECT_EQ(GrownCapacity(1, 1), 3u);
  EXPECT_EQ(GrownCapacity(7, 1), 9u);
  EXPECT_EQ(GrownCapacity(15, 1), 17u);
  EXPECT_EQ(GrownCapacity(16, 1), 19u);
  EXPECT_EQ(GrownCapacity(100, 5), 113u);
  EXPECT_EQ(GrownCapacity(10, 50), 60u);
  Heads heads;
  MutationContext published = heads.published();
  std::uintptr_t& head = heads.New();
  std::uint32_t degree = 0;
  AppendEntry(head, degree, 7, 1, 101, published);
  const std::size_t before = heads.retired().size();
  for (std::uint64_t e = 2; e <= 16; ++e) AppendEntry(head, degree, 7, e, 100 + e, published);
  // 15 appends to a published array: each copy leaves two free entries at
  // least, so at most 8 copies (6 on mimalloc's bins, 7 on 16-byte
  // rounding; growing to the next bin made 9 on either).
  EXPECT_LE(heads.retired().size() - before, 8u);
  EXPECT_EQ(degree, 16u);
  EXPECT_EQ(FindGroup(head, degree, 7)[15].neighbor().value(), 116u);
}

// Review (stop 41): a first append fails at each of its allocations (the
// array; for a type that does not fit the word, the directory after it):
// the head stays empty, the group's record holds nothing, nothing leaks.
TEST(AdjacencyTest, FirstAppendFailingAtEachAllocationLeavesNothing) {
  for (std::uint32_t type : {7u, 0x10000u}) {
    for (std::uint64_t n = 1; n <= 3; ++n) {
      base::MemoryAccount account;
      RetireList retired;
      GroupBlocks blocks;
      MutationContext ctx{1, &account, &retired, &blocks};
      std::uintptr_t head = 0;
      std::uint32_t degree = 0;
      bool threw = false;
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      try {
        AppendEntry(head, degree, type, 1, 2, ctx);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      base::DisarmAllocationFaults();
      if (threw) {
        EXPECT_EQ(head, 0u) << type << " " << n;
        EXPECT_EQ(degree, 0u);
        EXPECT_EQ(blocks.size(), 0u);
      } else {
        EXPECT_EQ(GroupCount(head), 1u);
        FreeAdjacency(head, &account);
      }
      retired.FreeAll(&account);
      EXPECT_EQ(account.allocated_bytes(), 0) << type << " " << n;
    }
  }
}

// Review (stop 41): removing the last entries of a published directory of
// one group (a type above 65,535), failing at each allocation: after a
// rollback the published blocks are all that is left; after success the
// head is empty and the directory and array are retired.
TEST(AdjacencyTest, EmptyingAPublishedOneGroupDirectoryFailingAtEachAllocation) {
  for (std::uint64_t n = 1; n <= 6; ++n) {
    base::MemoryAccount account;
    RetireList retired;
    std::uintptr_t head = 0;
    std::uint32_t degree = 0;
    MutationContext published{0, &account, &retired, nullptr};
    AppendEntry(head, degree, 0x10000u, 1, 2, published);
    AppendEntry(head, degree, 0x10000u, 3, 4, published);
    retired.FreeAll(&account);
    const std::int64_t published_bytes = account.allocated_bytes();
    GroupBlocks blocks;
    RetireList group_retired;
    MutationContext ctx{5, &account, &group_retired, &blocks};
    std::uintptr_t h = head;
    std::uint32_t d = degree;
    const std::uint64_t edges[] = {1, 3};
    bool threw = false;
    base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
    try {
      RemoveEntries(h, d, 0x10000u, edges, ctx);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    base::DisarmAllocationFaults();
    if (threw) {
      blocks.FreeAll(&account);  // the rollback
      group_retired.Forget();
      EXPECT_EQ(account.allocated_bytes(), published_bytes) << n;
      FreeAdjacency(head, &account);
    } else {
      EXPECT_EQ(h, 0u);
      EXPECT_EQ(d, 0u);
      EXPECT_EQ(blocks.size(), 0u);
      group_retired.FreeAll(&account);  // the published directory and array
    }
    EXPECT_EQ(account.allocated_bytes(), 0) << n;
  }
}

// Review (stop 41): the capacity read back from the allocator never falls
// below the count, through 20,000 appends of one entry.
TEST(AdjacencyTest, CapacityCoversTheCountThroughGrowth) {
  Heads heads;
  MutationContext ctx = heads.ctx();
  std::uintptr_t& head = heads.New();
  std::uint32_t degree = 0;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    AppendEntry(head, degree, 3, i, i + 1, ctx);
    ASSERT_GE(ArrayCapacity(AsArray(head)), degree);
    ASSERT_GE(base::UsableSize(AsMutableArray(head)), std::size_t{ArrayCapacity(AsArray(head))} * 12);
  }
  for (std::uint64_t i = 0; i < 20000; ++i) ASSERT_EQ(FindGroup(head, degree, 3)[i].edge().value(), i);
}

// AppendEntries of k entries leaves every head shape as k calls of
// AppendEntry would (entries in order, degrees, groups), and replaces a
// published full array once: one new block, one retired.
TEST(AdjacencyTest, AppendEntriesEqualsOneAppendEachAndCopiesOnce) {
  using List = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  for (int shape = 0; shape < 5; ++shape) {
    for (std::uint32_t k : {1u, 3u, 200u}) {
      Heads heads;
      MutationContext old = heads.published();
      std::uintptr_t& bulk = heads.New();
      std::uintptr_t& each = heads.New();
      std::uint32_t bulk_degree = 0, each_degree = 0;
      // The published start, the same on both heads.
      for (auto [head, degree] : {std::pair{&bulk, &bulk_degree}, std::pair{&each, &each_degree}}) {
        std::uint64_t e = 1;
        if (shape == 1) {
          for (int i = 0; i < 3; ++i, ++e) AppendEntry(*head, *degree, 7, e, 1000 + e, old);
        } else if (shape == 2) {
          AppendEntry(*head, *degree, 7, e, 1000 + e, old);
          while (*degree < ArrayCapacity(AsArray(*head)))
            ++e, AppendEntry(*head, *degree, 7, e, 1000 + e, old);
        } else if (shape == 3) {
          AppendEntry(*head, *degree, 5, e, 1000 + e, old);
        } else if (shape == 4) {
          AppendEntry(*head, *degree, 5, e, 1000 + e, old);
          ++e, AppendEntry(*head, *degree, 7, e, 1000 + e, old);
        }
      }
      std::vector<EntryAdd> adds;
      for (std::uint32_t i = 0; i < k; ++i) adds.push_back(EntryAdd{0, 500 + i, 2000 + i, 7});
      MutationContext ctx = heads.ctx();
      const std::size_t retired_before = heads.retired().size(), blocks_before = heads.blocks().size();
      AppendEntries(bulk, bulk_degree, 7, adds, ctx);
      if (shape == 2) {  // full and published: copied once
        EXPECT_EQ(heads.retired().size(), retired_before + 1) << "k " << k;
        EXPECT_EQ(heads.blocks().size(), blocks_before + 1) << "k " << k;
        EXPECT_GE(ArrayCapacity(AsArray(bulk)), bulk_degree);
      }
      for (const EntryAdd& a : adds) AppendEntry(each, each_degree, 7, a.edge, a.neighbor, ctx);
      EXPECT_EQ(bulk_degree, each_degree) << "shape " << shape << " k " << k;
      ASSERT_EQ(GroupCount(bulk), GroupCount(each)) << "shape " << shape << " k " << k;
      for (std::uint32_t type : {5u, 7u})
        EXPECT_EQ(Entries(FindGroup(bulk, bulk_degree, type)), Entries(FindGroup(each, each_degree, type)))
            << "shape " << shape << " k " << k << " type " << type;
      List tail;
      for (const auto& p : Entries(FindGroup(bulk, bulk_degree, 7)))
        if (p.first >= 500) tail.push_back(p);
      ASSERT_EQ(tail.size(), k);
      for (std::uint32_t i = 0; i < k; ++i)
        EXPECT_EQ(tail[i], (std::pair<std::uint64_t, std::uint64_t>{500 + i, 2000 + i}));
    }
  }
}

}  // namespace
}  // namespace quiver::storage
