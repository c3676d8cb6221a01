// UTF-8 validation for every string that enters the graph (labels, edge
// types, property keys, string values). Leaf utility: depends on nothing.
#ifndef QUIVER_BASE_UTF8_H_
#define QUIVER_BASE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace quiver::base {

// True iff `s` is well-formed UTF-8 per RFC 3629: no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated
// sequences. NUL bytes are valid.
bool IsValidUtf8(std::string_view s);

// True iff every byte of `s` is below 0x80 (so `s` is valid UTF-8): the
// quick test before IsValidUtf8 for text that is mostly ASCII, sixteen
// bytes a step where SSE2 is there, eight elsewhere. Inline: the CSV
// reader asks it of every record.
inline bool IsAscii(std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
#if defined(__SSE2__)
  if (n >= 16) {
    // The last step overlaps the one before it rather than going byte by byte.
    __m128i any = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16));
    for (std::size_t i = 0; i + 16 < n; i += 16)
      any = _mm_or_si128(any, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
    return _mm_movemask_epi8(any) == 0;
  }
#endif
  std::uint64_t any = 0;
  if (n >= 8) {
    std::uint64_t w;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, p + i, 8);
      any |= w;
    }
    std::memcpy(&w, p + n - 8, 8);
    any |= w;
  } else {
    for (std::size_t i = 0; i < n; ++i) any |= static_cast<unsigned char>(p[i]);
  }
  return (any & 0x8080808080808080ULL) == 0;
}

}  // namespace quiver::base

#endif  // QUIVER_BASE_UTF8_H_
