// base/small_sort.h: SortU32 against std::sort for every length the sorting
// networks serve (2..32) and past them, with keys drawn from a narrow range
// (many duplicates), from the full range, and at the top of it (the largest
// key, which a padded network would use as its filler).
#include "base/small_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace quiver::base {
namespace {

TEST(SmallSortTest, NetworkSizesAreBatchersCutDown) {
  EXPECT_EQ(small_sort::kNetwork<32>.size(), 191u);
  EXPECT_EQ(small_sort::kNetwork<16>.size(), 63u);
  EXPECT_EQ(small_sort::kNetwork<8>.size(), 19u);
  EXPECT_EQ(small_sort::kNetwork<10>.size(), 32u);
  EXPECT_EQ(small_sort::kNetwork<2>.size(), 1u);
  for (const small_sort::Comparator c : small_sort::kNetwork<10>) {
    EXPECT_LT(c.lo, c.hi);
    EXPECT_LT(c.hi, 10);
  }
}

TEST(SmallSortTest, SortsLikeStdSortAtEveryLength) {
  std::mt19937_64 rng(7);
  constexpr std::uint32_t kMax = std::numeric_limits<std::uint32_t>::max();
  for (std::size_t n = 0; n <= 40; ++n) {
    SCOPED_TRACE(n);
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<std::uint32_t> keys(n);
      for (std::uint32_t& k : keys) {
        switch (trial % 3) {
          case 0: k = static_cast<std::uint32_t>(rng() % 4); break;
          case 1: k = static_cast<std::uint32_t>(rng()); break;
          default: k = kMax - static_cast<std::uint32_t>(rng() % 3); break;
        }
      }
      // A guard on each side: the sort touches exactly [0, n).
      std::vector<std::uint32_t> buffer(n + 2, 12345);
      std::copy(keys.begin(), keys.end(), buffer.begin() + 1);
      SortU32(buffer.data() + 1, n);
      std::sort(keys.begin(), keys.end());
      ASSERT_TRUE(std::equal(keys.begin(), keys.end(), buffer.begin() + 1));
      ASSERT_EQ(buffer.front(), 12345u);
      ASSERT_EQ(buffer.back(), 12345u);
    }
  }
}

TEST(SmallSortTest, SortU64LikeStdSortAtEveryLength) {
  std::mt19937_64 rng(11);
  for (std::size_t n = 0; n <= 40; ++n) {
    SCOPED_TRACE(n);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<std::uint64_t> keys(n);
      // High words from a narrow range, low words distinct: the (neighbour
      // << 32 | position) keys the weighted projection sorts.
      for (std::size_t i = 0; i < n; ++i) keys[i] = (rng() % 5) << 32 | i;
      if (trial % 2) {
        for (std::uint64_t& k : keys) k = rng();
      }
      std::vector<std::uint64_t> got = keys;
      SortU64(got.data(), n);
      std::sort(keys.begin(), keys.end());
      ASSERT_EQ(got, keys);
    }
  }
}

// The 0-1 principle: a comparator network sorts every input if it sorts
// every input of zeros and ones. So this is a proof for each length 2..20
// (the longer ones, to 32, are Batcher's network cut the same way; the
// random test covers them).
TEST(SmallSortTest, SortsEveryZeroOneInputUpToTwenty) {
  for (std::size_t n = 2; n <= 20; ++n) {
    SCOPED_TRACE(n);
    for (std::uint32_t bits = 0; bits < (1u << n); ++bits) {
      std::uint32_t keys[20];
      for (std::size_t i = 0; i < n; ++i) keys[i] = (bits >> i) & 1;
      SortU32(keys, n);
      ASSERT_TRUE(std::is_sorted(keys, keys + n)) << bits;
      ASSERT_EQ(static_cast<int>(std::count(keys, keys + n, 1u)), std::popcount(bits)) << bits;
    }
  }
}

TEST(SmallSortTest, SortsEveryPermutationOfEightDistinctKeys) {
  std::vector<std::uint32_t> perm = {0, 1, 2, 3, 4, 5, 6, 7};
  do {
    std::vector<std::uint32_t> keys = perm;
    SortU32(keys.data(), keys.size());
    ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
    ASSERT_EQ(keys.front(), 0u);
    ASSERT_EQ(keys.back(), 7u);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

}  // namespace
}  // namespace quiver::base
