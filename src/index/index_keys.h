// Index keys: how an element's properties, or a query's values, become the
// encoded key an index stores (key_codec.h), and the rules on what is
// indexed (include/quiver/index.h):
//   - an element is indexed when every key of the index holds a value that
//     is neither null nor a float vector;
//   - in an index with a declared type, another type is an error (null is
//     allowed and not indexed);
//   - an encoded key longer than kMaxKeyBytes is an error.
// A single-key int64 or double index stores fixed 8-byte keys
// (AppendFixedKey: the codec's encoding without the type tag every key of
// such an index shares, so the order is unchanged).
//
// Thread safety: pure functions.
#ifndef QUIVER_INDEX_INDEX_KEYS_H_
#define QUIVER_INDEX_INDEX_KEYS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "index/catalog.h"
#include "index/key_codec.h"
#include "quiver/index.h"
#include "quiver/status.h"
#include "quiver/value.h"
#include "storage/prop_block.h"

namespace quiver::index {

enum class KeyStatus : std::uint8_t {
  kIndexed,     // *key holds the element's key
  kNotIndexed,  // a key is missing or null (or a vector, in an index of no declared type)
  kWrongType,   // a value of another type than the index declares; *bad names which key
  kTooLong,     // the encoded key is longer than kMaxKeyBytes
};

// The key width of the tree for `spec`: 8 for one int64 or double key, else
// -1 (variable).
std::int32_t KeyWidthFor(const IndexSpec& spec);

// Checks a spec: InvalidArgument for an empty or non-UTF-8 name, label or
// key, no keys or more than kMaxIndexKeys, a key named twice, a declared type
// of kNull, kFloatVector or kStringList or out of range, an unknown kind or element; for
// kUniqueEndpoints, vertices, any key or a declared type.
// Names longer than `max_name_bytes` are OutOfRange.
Status CheckSpec(const IndexSpec& spec, std::size_t max_name_bytes);

// The key of an element whose values for the index's keys are given by
// value(i) (i indexing def.keys; nullopt for a missing key). On kWrongType,
// *bad is the position of the offending key.
template <typename ValueFn>
KeyStatus MakeKey(const IndexDef& def, ValueFn&& value, std::string* key, std::size_t* bad = nullptr);

// kUniqueEndpoints: the key of an edge from `source` to `target`, both ids
// 8 bytes big-endian, so keys order by (source, target). Replaces *key.
void EndpointKey(std::uint64_t source, std::uint64_t target, std::string* key);
// The (source, target) of an endpoint key.
std::pair<std::uint64_t, std::uint64_t> DecodeEndpointKey(std::string_view key);
// What messages call a key of `def`: "key", or "pair" for kUniqueEndpoints.
inline const char* KeyWord(const IndexDef& def) {
  return def.kind == IndexKind::kUniqueEndpoints ? "pair" : "key";
}
// "(3 -> 5)", for messages.
std::string DescribePair(std::uint64_t source, std::uint64_t target);

// The key of an element whose properties are `block` (not for
// kUniqueEndpoints, whose keys come from the edge: EndpointKey).
KeyStatus ElementKey(const IndexDef& def, const storage::PropBlock* block, std::string* key,
                     std::size_t* bad = nullptr);

// The key to look up for query values (one per index key, in order):
// InvalidArgument for a wrong count, null, a vector, a string list, NaN, or a value of
// another type than the index declares, or a kUniqueEndpoints index (it
// holds no property values).
Status LookupKey(const IndexDef& def, std::span<const PropertyValue> values, std::string* key);

// The encoding of one bound or prefix value for the index's first key, as
// LookupKey checks it.
Status BoundKey(const IndexDef& def, const PropertyValue& value, std::string* key);

// A short rendering of a value for messages: 42, 1.5, "Ada" (cut at 64 bytes), true, bytes[3].
std::string DescribeValue(const PropertyView& v);

// "index 'name' (Person.name)" for messages.
std::string DescribeIndex(const IndexDef& def);

// Appends the component for one value (indexable, of the right type).
void AppendComponent(const IndexDef& def, const PropertyView& v, std::string* key);

template <typename ValueFn>
KeyStatus MakeKey(const IndexDef& def, ValueFn&& value, std::string* key, std::size_t* bad) {
  key->clear();
  bool indexed = true;
  for (std::size_t i = 0; i < def.key_ids.size(); ++i) {
    std::optional<PropertyView> v = value(i);
    if (!v || v->is_null()) {
      indexed = false;
      continue;
    }
    if (def.type ? v->type() != *def.type : !IsIndexable(v->type())) {
      if (def.type) {
        if (bad != nullptr) *bad = i;
        return KeyStatus::kWrongType;
      }
      indexed = false;
      continue;
    }
    if (indexed) AppendComponent(def, *v, key);
  }
  if (!indexed) return KeyStatus::kNotIndexed;
  return key->size() > kMaxKeyBytes ? KeyStatus::kTooLong : KeyStatus::kIndexed;
}

}  // namespace quiver::index

#endif  // QUIVER_INDEX_INDEX_KEYS_H_
