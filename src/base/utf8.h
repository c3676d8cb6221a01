// UTF-8 validation for every string that enters the graph (labels, edge
// types, property keys, string values). Leaf utility: depends on nothing.
#ifndef QUIVER_BASE_UTF8_H_
#define QUIVER_BASE_UTF8_H_

#include <string_view>

namespace quiver::base {

// True iff `s` is well-formed UTF-8 per RFC 3629: no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated
// sequences. NUL bytes are valid.
bool IsValidUtf8(std::string_view s);

// True iff every byte of `s` is below 0x80 (so `s` is valid UTF-8): the
// quick test before IsValidUtf8 for text that is mostly ASCII, sixteen
// bytes a step where SSE2 is there, eight elsewhere.
bool IsAscii(std::string_view s);

}  // namespace quiver::base

#endif  // QUIVER_BASE_UTF8_H_
