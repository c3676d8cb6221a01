// Adjacency heads (storage/adjacency.h): what a reader learns from the head
// word alone, and that every head shape reads back the entries written.
#include "storage/adjacency.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
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
  // The block of one entry is the allocator's bin for 12 bytes, not 20.
  std::uintptr_t& one = heads.New();
  std::uint32_t one_degree = 0;
  AppendEntry(one, one_degree, 7, 1, 2, ctx);
  EXPECT_EQ(base::UsableSize(AsMutableArray(one)), base::GoodAllocationSize(sizeof(EdgeEntry)));
  EXPECT_EQ(ArrayCapacity(AsArray(one)), base::GoodAllocationSize(sizeof(EdgeEntry)) / sizeof(EdgeEntry));
  for (std::uint32_t n : {1u, 2u, 3u, 7u, 10u, 100u, 1000u}) {
    MutationContext c = heads.ctx();
    EdgeArray* made = NewEdgeArray(n, c);
    EXPECT_EQ(ArrayCapacity(made), base::GoodAllocationSize(n * sizeof(EdgeEntry)) / sizeof(EdgeEntry)) << n;
    EXPECT_GE(ArrayCapacity(made), n);
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
