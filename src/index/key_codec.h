// Order-preserving encoding of property values into index keys.
//
// An index orders its entries by (encoded key bytes, element id), compared
// with memcmp. The encoding makes that byte order the documented value order
// (docs/indexes.md):
//   - values of different types order by type: null < bool < int64 < double
//     < string < bytes (an index of a declared type only ever holds that
//     type; the cross-type order matters for "any" indexes);
//   - int64 numerically, double numerically with -0.0 == 0.0 (doubles in the
//     graph are finite: NaN and ±Inf never reach an index), strings and
//     bytes lexicographically by byte (UTF-8 byte order = code point order);
//   - float vectors are not indexable.
// A composite key is the concatenation of its components' encodings; each
// component is self-delimiting, so (a, b) < (a', b') exactly when a < a', or
// a == a' and b < b'.
//
// Thread safety: pure functions.
#ifndef QUIVER_INDEX_KEY_CODEC_H_
#define QUIVER_INDEX_KEY_CODEC_H_

#include <string>
#include <string_view>

#include "quiver/value.h"

namespace quiver::index {

// Longest encoded key an index stores; a value whose encoding is longer
// cannot be indexed (the write fails with InvalidArgument).
inline constexpr std::size_t kMaxKeyBytes = 1024;

// Whether values of `type` can be index keys (all but kFloatVector).
bool IsIndexable(ValueType type);

// Appends the encoding of `v` (IsIndexable(v.type())) to `*out`.
void AppendKey(const PropertyView& v, std::string* out);

// The encoding of `v` alone.
std::string EncodeKey(const PropertyView& v);

}  // namespace quiver::index

#endif  // QUIVER_INDEX_KEY_CODEC_H_
