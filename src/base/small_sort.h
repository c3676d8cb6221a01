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
#include <limits>
#include <utility>

namespace quiver::base {

namespace small_sort {

struct Comparator {
  std::uint8_t lo, hi;
};

// Batcher's odd-even merge sort of kP = the power of two at or above kN
// keys, restricted to the comparators whose wires are both below kN: with
// +infinity on wires kN..kP-1, every
// comparator touching one of them leaves both keys where they are (its max
// is that +infinity, already on the higher wire), so the rest sorts kN keys.
// Each order respects the comparators' dependencies.
template <std::size_t kN, std::size_t kP = std::bit_ceil(kN)>
constexpr std::size_t CountComparators() {
  std::size_t count = 0;
  for (std::size_t p = 1; p < kP; p <<= 1)
    for (std::size_t k = p; k >= 1; k >>= 1)
      for (std::size_t j = k % p; j + k < kP; j += 2 * k)
        for (std::size_t i = 0; i < std::min(k, kP - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < kN) ++count;
  return count;
}

template <std::size_t kN, std::size_t kP = std::bit_ceil(kN)>
constexpr auto MakeNetwork() {
  std::array<Comparator, CountComparators<kN>()> net{};
  std::size_t at = 0;
  for (std::size_t p = 1; p < kP; p <<= 1)
    for (std::size_t k = p; k >= 1; k >>= 1)
      for (std::size_t j = k % p; j + k < kP; j += 2 * k)
        for (std::size_t i = 0; i < std::min(k, kP - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < kN)
            net[at++] = {static_cast<std::uint8_t>(i + j), static_cast<std::uint8_t>(i + j + k)};
  return net;
}

template <std::size_t kN>
inline constexpr auto kNetwork = MakeNetwork<kN>();

template <std::size_t kN, std::size_t... kI>
inline void Apply(std::uint32_t* a, std::index_sequence<kI...>) {
  // One comparator per index, unrolled: the positions are constants, so the
  // keys can stay in registers.
  (
      [a] {
        constexpr Comparator c = kNetwork<kN>[kI];
        const std::uint32_t x = a[c.lo], y = a[c.hi];
        a[c.lo] = x < y ? x : y;
        a[c.hi] = x < y ? y : x;
      }(),
      ...);
}

template <std::size_t kN>
inline void Sort(std::uint32_t* t) {
  std::uint32_t a[kN];
  for (std::size_t i = 0; i < kN; ++i) a[i] = t[i];
  Apply<kN>(a, std::make_index_sequence<kNetwork<kN>.size()>{});
  for (std::size_t i = 0; i < kN; ++i) t[i] = a[i];
}

}  // namespace small_sort

// Sorts t[0, n) ascending.
inline void SortU32(std::uint32_t* t, std::size_t n) {
  switch (n) {
    case 0:
    case 1: return;
    case 2: return small_sort::Sort<2>(t);
    case 3: return small_sort::Sort<3>(t);
    case 4: return small_sort::Sort<4>(t);
    case 5: return small_sort::Sort<5>(t);
    case 6: return small_sort::Sort<6>(t);
    case 7: return small_sort::Sort<7>(t);
    case 8: return small_sort::Sort<8>(t);
    case 9: return small_sort::Sort<9>(t);
    case 10: return small_sort::Sort<10>(t);
    case 11: return small_sort::Sort<11>(t);
    case 12: return small_sort::Sort<12>(t);
    case 13: return small_sort::Sort<13>(t);
    case 14: return small_sort::Sort<14>(t);
    case 15: return small_sort::Sort<15>(t);
    case 16: return small_sort::Sort<16>(t);
    case 17: return small_sort::Sort<17>(t);
    case 18: return small_sort::Sort<18>(t);
    case 19: return small_sort::Sort<19>(t);
    case 20: return small_sort::Sort<20>(t);
    case 21: return small_sort::Sort<21>(t);
    case 22: return small_sort::Sort<22>(t);
    case 23: return small_sort::Sort<23>(t);
    case 24: return small_sort::Sort<24>(t);
    case 25: return small_sort::Sort<25>(t);
    case 26: return small_sort::Sort<26>(t);
    case 27: return small_sort::Sort<27>(t);
    case 28: return small_sort::Sort<28>(t);
    case 29: return small_sort::Sort<29>(t);
    case 30: return small_sort::Sort<30>(t);
    case 31: return small_sort::Sort<31>(t);
    case 32: return small_sort::Sort<32>(t);
    default: std::sort(t, t + n);
  }
}

}  // namespace quiver::base

#endif  // QUIVER_BASE_SMALL_SORT_H_
