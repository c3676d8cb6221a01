// Arrays that grow one item at a time grow by doubling, so adding n items
// moves O(n) bytes, not O(n^2). Found by profiling the sanitizer run, where
// a batch of 65,540 edge types took 95 s: WriteBatch's name table reserved
// exactly one more end per new name, and CowArray exactly one more page per
// 256 ids, so each copied its whole array again at every step.
//
// Counted, not timed: the frees made while the items are added (through the
// test binary's operator delete, alloc_hook.h). A doubling array frees
// O(log n) old buffers; an exact reserve frees one per step.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "alloc_hook.h"
#include "index/cow_array.h"
#include "quiver/write_batch.h"

namespace quiver {
namespace {

std::atomic<std::uint64_t> g_growth_frees{0};
void CountGrowthFree(void*, std::size_t) { g_growth_frees.fetch_add(1, std::memory_order_relaxed); }

// Counts the frees `f` makes; -1 if this binary's operator delete does not
// report them (the test then skips).
template <typename F>
std::int64_t GrowthFrees(F&& f) {
  {  // Is the observer linked into this binary?
    g_growth_frees = 0;
    auto* probe = new std::vector<int>(1);
    test_util::g_operator_delete_observer.store(&CountGrowthFree);
    delete probe;
    test_util::g_operator_delete_observer.store(nullptr);
    if (g_growth_frees.load() == 0) return -1;
  }
  g_growth_frees = 0;
  test_util::g_operator_delete_observer.store(&CountGrowthFree);
  f();
  test_util::g_operator_delete_observer.store(nullptr);
  return static_cast<std::int64_t>(g_growth_frees.load());
}

TEST(GrowthAmortizedTest, ABatchOfManyDistinctNamesGrowsItsNameTableByDoubling) {
  constexpr int kNames = 20'000;
  std::vector<std::string> names;
  for (int i = 0; i < kNames; ++i) names.push_back("T" + std::to_string(i));
  WriteBatch b;
  std::vector<NewVertex> v;
  for (int i = 0; i < 2 * kNames; ++i) v.push_back(b.AddVertex("V"));
  const std::int64_t frees = GrowthFrees([&] {
    for (int i = 0; i < kNames; ++i) b.AddEdge(names[i], v[2 * i], v[2 * i + 1]);
  });
  if (frees < 0) GTEST_SKIP() << "no operator delete observer in this binary";
  // The names' bytes, their ends and the hash slots each double ~log2(n)
  // times; an exact reserve freed one array per name (20,000).
  EXPECT_LT(frees, 200) << kNames << " new names freed " << frees << " buffers";
  EXPECT_EQ(b.added_edges(), static_cast<std::size_t>(kNames));
}

TEST(GrowthAmortizedTest, ACowArrayGrowsItsPageListByDoubling) {
  constexpr std::size_t kPages = 2'000;
  index::CowArray<std::uint64_t> a;
  const std::int64_t frees = GrowthFrees([&] {
    for (std::size_t i = 0; i < kPages * index::CowArray<std::uint64_t>::kPageItems; ++i) a.Mutable(i, 1) = i;
  });
  if (frees < 0) GTEST_SKIP() << "no operator delete observer in this binary";
  EXPECT_LT(frees, 40) << kPages << " pages freed " << frees << " page lists";
  ASSERT_EQ(a.size(), kPages * index::CowArray<std::uint64_t>::kPageItems);
  for (std::size_t i = 0; i < a.size(); i += 997) EXPECT_EQ(*a.Find(i), i);
}

}  // namespace
}  // namespace quiver
