// SortU32: sorts a short array of 32-bit keys without data-dependent
// branches when it holds at most 32 of them.
//
// An insertion sort of ten random keys mispredicts about once per key (each
// inner loop ends at a position it could not predict): ~60 ns a list, which
// was half of a projection's build (one list per vertex); std::sort of twenty
// took ~250 ns, nearly all of CDLP (one list of neighbour labels per vertex
// per iteration). A sorting network makes the same comparisons whatever the
// keys: each comparator is a min and a max the compiler turns into
// conditional moves, so nothing is predicted: 17 ns for ten keys, 36 ns for
// twenty.
//
// The networks are Batcher's odd-even merge sorts (19 comparators for 8
// keys, 63 for 16, 191 for 32), generated at compile time, the one of the
// next power of two cut down for the lengths between (32 comparators for 10
// keys).
#ifndef QUIVER_BASE_SMALL_SORT_H_
#define QUIVER_BASE_SMALL_SORT_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace quiver::base {

// The longest array SortU32 and SortU64 sort with a network.
inline constexpr std::size_t kSortNetworkMaxKeys = 32;

namespace small_sort {

struct Comparator {
  std::uint8_t lo, hi;
};

// Calls fn(lo, hi) for each comparator of Batcher's odd-even merge sort of
// kP = the power of two at or above kN keys whose wires are both below kN,
// in an order that respects their dependencies. With +infinity on wires
// kN..kP-1, every comparator touching one of them leaves both keys where
// they are (its max is that +infinity, already on the higher wire), so the
// rest sorts kN keys.
template <std::size_t kN, typename Fn>
constexpr void ForEachComparator(Fn&& fn) {
  constexpr std::size_t kP = std::bit_ceil(kN);
  for (std::size_t p = 1; p < kP; p <<= 1)
    for (std::size_t k = p; k >= 1; k >>= 1)
      for (std::size_t j = k % p; j + k < kP; j += 2 * k)
        for (std::size_t i = 0; i < std::min(k, kP - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < kN) fn(i + j, i + j + k);
}

template <std::size_t kN>
constexpr std::size_t CountComparators() {
  std::size_t count = 0;
  ForEachComparator<kN>([&](std::size_t, std::size_t) { ++count; });
  return count;
}

template <std::size_t kN>
constexpr auto MakeNetwork() {
  std::array<Comparator, CountComparators<kN>()> net{};
  std::size_t at = 0;
  ForEachComparator<kN>([&](std::size_t lo, std::size_t hi) {
    net[at++] = {static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(hi)};
  });
  return net;
}

template <std::size_t kN>
inline constexpr auto kNetwork = MakeNetwork<kN>();

template <typename T, std::size_t kN, std::size_t... kI>
inline void Apply(T* a, std::index_sequence<kI...>) {
  // One comparator per index, unrolled: the positions are constants, so the
  // keys can stay in registers.
  (
      [a] {
        constexpr Comparator c = kNetwork<kN>[kI];
        const T x = a[c.lo], y = a[c.hi];
        a[c.lo] = x < y ? x : y;
        a[c.hi] = x < y ? y : x;
      }(),
      ...);
}

template <typename T, std::size_t kN>
inline void Sort(T* t) {
  T a[kN];
  for (std::size_t i = 0; i < kN; ++i) a[i] = t[i];
  Apply<T, kN>(a, std::make_index_sequence<kNetwork<kN>.size()>{});
  for (std::size_t i = 0; i < kN; ++i) t[i] = a[i];
}

// Sort<T, n> for the n given at run time, 2 <= n <= kSortNetworkMaxKeys (a
// table of them).
template <typename T, std::size_t... kI>
inline void SortLength(T* t, std::size_t n, std::index_sequence<kI...>) {
  using Fn = void (*)(T*);
  static constexpr Fn kSorts[] = {&Sort<T, kI + 2>...};
  kSorts[n - 2](t);
}

// Sorts t[0, n) ascending: a network up to kSortNetworkMaxKeys, std::sort above.
template <typename T>
inline void SortSmall(T* t, std::size_t n) {
  if (n <= 1) return;
  if (n > kSortNetworkMaxKeys) return std::sort(t, t + n);
  SortLength(t, n, std::make_index_sequence<kSortNetworkMaxKeys - 1>{});
}

}  // namespace small_sort

// Sorts t[0, n) ascending.
inline void SortU32(std::uint32_t* t, std::size_t n) { small_sort::SortSmall(t, n); }
inline void SortU64(std::uint64_t* t, std::size_t n) { small_sort::SortSmall(t, n); }

}  // namespace quiver::base

#endif  // QUIVER_BASE_SMALL_SORT_H_
