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
// The grammar (a tag byte, then the payload; tags are persisted in
// checkpointed index contents: never renumber):
//   key     := component+
//   null    := 0x01
//   bool    := 0x02 (0x00 | 0x01)
//   int64   := 0x03 be64(v XOR 2^63)                  sign bit flipped
//   double  := 0x04 be64(t)   t = bits ^ 2^63 for v >= +0.0, ~bits for v < 0;
//                             -0.0 is encoded as +0.0
//   string  := 0x05 escaped 0x00 0x00
//   bytes   := 0x06 escaped 0x00 0x00
//   escaped := each byte b as b, except 0x00 as 0x00 0xFF
// The terminator 0x00 0x00 sorts below every escaped byte (0x00 0xFF and
// 0x01..0xFF), so a string sorts before its extensions, and every key with
// string prefix p starts with 0x05 escaped(p) (StringPrefixRange).
//
// Fixed-width keys. An index declared int64 or double with a single
// component needs no tag and no terminator: AppendFixedKey writes the 8-byte
// payload alone, and the tree stores it inline (IndexRoot::key_width = 8).
// The payload order is the value order within the type, so a fixed-width
// tree answers the same queries; its bounds must be fixed keys too.
//
// Example:
//   std::string k = EncodeKey(PropertyView(std::int64_t{42}));   // 9 bytes
//   std::string f;  AppendFixedKey(PropertyView(std::int64_t{42}), &f);  // 8
//   KeyRange r = StringPrefixRange("Ad");  // every string starting "Ad"
//
// Thread safety: pure functions.
#ifndef QUIVER_INDEX_KEY_CODEC_H_
#define QUIVER_INDEX_KEY_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/value.h"

namespace quiver::index {

// Longest encoded key an index stores; a value whose encoding is longer
// cannot be indexed (the write fails with InvalidArgument).
inline constexpr std::size_t kMaxKeyBytes = 1024;

// Width of a fixed key (AppendFixedKey): int64 and double payloads.
inline constexpr std::size_t kFixedKeyBytes = 8;

// Whether values of `type` can be index keys (all but kFloatVector and
// kStringList, and types this build does not know).
bool IsIndexable(ValueType type);

// Appends the encoding of `v` (IsIndexable(v.type())) to `*out`.
void AppendKey(const PropertyView& v, std::string* out);

// The encoding of `v` alone.
std::string EncodeKey(const PropertyView& v);

// The key width a single-component index of declared type `type` uses:
// kFixedKeyBytes for int64 and double (pass it as IndexRoot::key_width and
// encode with AppendFixedKey), -1 (variable-length keys, AppendKey) for
// every other type.
std::int32_t FixedKeyWidth(ValueType type);

// Appends the 8-byte fixed encoding of `v`, which must be an int64 or a
// double: the payload of AppendKey without the tag.
void AppendFixedKey(const PropertyView& v, std::string* out);
// The same encoding as an integer: its 8 bytes are the big-endian bytes of
// the result, so integer order is key order.
std::uint64_t FixedKeyBits(const PropertyView& v);

// Decodes one component at the front of `*in` (an AppendKey encoding) into
// `*out` and advances `*in` past it; false (nothing consumed) if `*in` does
// not start with a well-formed component. -0.0 comes back as +0.0.
bool DecodeKey(std::string_view* in, PropertyValue* out);

// Decodes a fixed key (AppendFixedKey) of a value of `type` (int64 or
// double); requires key.size() == kFixedKeyBytes.
PropertyValue DecodeFixedKey(std::string_view key, ValueType type);

// A half-open range [lo, hi) of encoded keys: pass lo as an inclusive lower
// Bound and hi as an exclusive upper Bound (index_tree.h).
struct KeyRange {
  std::string lo;
  std::string hi;
};

// The keys whose first component is a string (type kString) or bytes value
// (kBytes) starting with `prefix`, whatever components follow.
KeyRange StringPrefixRange(std::string_view prefix, ValueType type = ValueType::kString);

}  // namespace quiver::index

#endif  // QUIVER_INDEX_KEY_CODEC_H_
