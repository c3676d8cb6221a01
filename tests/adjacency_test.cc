// Adjacency heads (storage/adjacency.h): what a reader learns from the head
// word alone, and that every head shape reads back the entries written.
#include "storage/adjacency.h"

#include <gtest/gtest.h>

#include <cstdint>
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

 private:
  base::MemoryAccount account_;
  RetireList retired_;
  GroupBlocks blocks_;
  std::vector<std::uintptr_t> heads_;
};

std::vector<std::pair<std::uint64_t, std::uint64_t>> Entries(std::span<const EdgeEntry> entries) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const EdgeEntry& e : entries) out.emplace_back(e.edge().value(), e.neighbor().value());
  return out;
}

// A single-group head carries its type: the reader never reads the array's
// header for it (here the header is scribbled on and the reader must not
// notice), so a sweep can prefetch an array before touching it.
TEST(AdjacencyTest, SingleGroupHeadCarriesItsType) {
  Heads heads;
  MutationContext ctx = heads.ctx();
  std::uintptr_t& head = heads.New();
  std::uint32_t degree = 0;
  for (std::uint64_t i = 0; i < 5; ++i) AppendEntry(head, degree, 7, 100 + i, 200 + i, ctx);
  ASSERT_FALSE(IsDir(head));
  const_cast<EdgeArray*>(AsArray(head))->type = 9;  // the reader must not look here
  EXPECT_EQ(GroupAt(head, degree, 0).type, EdgeTypeId(7));
  EXPECT_EQ(FindGroup(head, degree, 7).size(), 5u);
  EXPECT_TRUE(FindGroup(head, degree, 9).empty());
  const_cast<EdgeArray*>(AsArray(head))->type = 7;
}

// Types that do not fit beside the address keep them in the header: every
// head shape (one group, a directory, back to one group) reads back right.
TEST(AdjacencyTest, LargeAndSmallTypesReadBackThroughEveryHeadShape) {
  Heads heads;
  MutationContext ctx = heads.ctx();
  for (std::uint32_t big : {0xFFFFu, 0x10000u, 0xFFFFFFFEu}) {
    std::uintptr_t& head = heads.New();
    std::uint32_t degree = 0;
    AppendEntry(head, degree, big, 1, 11, ctx);
    AppendEntry(head, degree, big, 2, 12, ctx);
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

}  // namespace
}  // namespace quiver::storage
