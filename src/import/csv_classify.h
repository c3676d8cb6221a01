// Finding a CSV splitter's special bytes 64 at a time, for CsvReader
// (csv_reader.cc): a 64-bit mask of where a block holds any of three
// bytes, so the reader walks fields by counting zeros instead of testing
// every byte. Two ways to the same mask: SSE2 (the x86-64 baseline), and a
// portable one eight bytes a word for other targets. Both are here, not in
// the .cc, so tests/csv_reader_test.cc can hold one against the other.
#ifndef QUIVER_IMPORT_CSV_CLASSIFY_H_
#define QUIVER_IMPORT_CSV_CLASSIFY_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#define QUIVER_CSV_SSE2 1
#else
#define QUIVER_CSV_SSE2 0
#endif

namespace quiver::import {

inline constexpr std::size_t kCsvBlock = 64;

// Bit i set iff s[i] is a, b or c, for i < 64. Reads s[0, 64).
inline std::uint64_t ClassifyBlockScalar(const char* s, char a, char b, char c) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kLow7 = 0x7F7F7F7F7F7F7F7FULL,
                          kHigh = 0x8080808080808080ULL;
  // The high bit of each zero byte of x, exactly (no borrow between bytes).
  auto zero_bytes = [](std::uint64_t x) { return ~(((x & kLow7) + kLow7) | x) & kHigh; };
  const std::uint64_t va = kOnes * static_cast<unsigned char>(a);
  const std::uint64_t vb = kOnes * static_cast<unsigned char>(b);
  const std::uint64_t vc = kOnes * static_cast<unsigned char>(c);
  std::uint64_t bits = 0;
  for (std::size_t k = 0; k < 8; ++k) {
    std::uint64_t w;
    std::memcpy(&w, s + 8 * k, 8);
    const std::uint64_t m = zero_bytes(w ^ va) | zero_bytes(w ^ vb) | zero_bytes(w ^ vc);
    // Byte j's high bit to bit 56 + j: the products 8j + 7k never meet.
    bits |= (((m >> 7) * 0x0102040810204080ULL) >> 56) << (8 * k);
  }
  return bits;
}
static_assert(std::endian::native == std::endian::little, "ClassifyBlockScalar reads the lowest byte first");

#if QUIVER_CSV_SSE2
inline std::uint64_t ClassifyBlockSse2(const char* s, char a, char b, char c) {
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b), vc = _mm_set1_epi8(c);
  std::uint64_t bits = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16 * k));
    const __m128i m =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(x, vb)), _mm_cmpeq_epi8(x, vc));
    bits |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(m))) << (16 * k);
  }
  return bits;
}
#endif

inline std::uint64_t ClassifyBlock(const char* s, char a, char b, char c) {
#if QUIVER_CSV_SSE2
  return ClassifyBlockSse2(s, a, b, c);
#else
  return ClassifyBlockScalar(s, a, b, c);
#endif
}

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_CSV_CLASSIFY_H_
