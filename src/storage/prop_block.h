// PropBlock: the immutable, self-contained encoding of one element's
// properties: one allocation, entries sorted by key id, payloads inline.
//
//   PropBlock  := count:u32 data_bytes:u32 Entry[count] payload bytes
//   Entry      := key:u32 type:u8 pad:u8[3] word:u64
//   word       := bool/int64/double bits inline, or for string, bytes,
//                 float vectors and string lists: offset:u32 (from the block
//                 start, 8-aligned) | length:u32 (bytes) << 32
//   a string list's payload is its packed form (base/string_list.h)
//
// A change to a published block builds a new block and retires the old one,
// so a change costs O(size of that element's properties) and published
// blocks are never written (invariant 1). A block the group being built
// allocated is private (MutationContext::IsPrivate): a value that fits is
// overwritten in place (SetPropertyInPlace), and a rebuilt private block is
// freed at once, so k changes to one element in one group retain one old
// block, not k. All the changes to one element in a batch are built as one
// block (WithChanges; BatchProcessor::ApplyPropertyChanges), so k new keys
// cost one block, not k blocks of growing size. An element without properties has no block.
//
// Thread safety: blocks are immutable once built; any thread may read them.
#ifndef QUIVER_STORAGE_PROP_BLOCK_H_
#define QUIVER_STORAGE_PROP_BLOCK_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "base/memory.h"
#include "quiver/value.h"
#include "storage/retire_list.h"

namespace quiver::storage {

struct PropBlock {
  std::uint32_t count;
  std::uint32_t data_bytes;
};

// One entry of a block (the grammar above); declared here for the inline
// lookups below.
struct PropEntry {
  std::uint32_t key;
  std::uint8_t type;
  std::uint8_t pad[3];
  std::uint64_t word;
};
static_assert(sizeof(PropEntry) == 16);

// One property to encode: a key id and a view of its value.
struct PropInput {
  std::uint32_t key;
  PropertyView value;
};

// The view of an owned value (valid while `v` lives).
PropertyView ViewOf(const PropertyValue& v);

// Builds a block from entries with distinct keys (any order). Null if empty.
// The first form is untracked (the checkpoint loader); the second records
// the block as the group's (ctx.Allocate).
PropBlock* BuildPropBlock(std::vector<PropInput>& entries, base::MemoryAccount* account);
PropBlock* BuildPropBlock(std::vector<PropInput>& entries, MutationContext& ctx);

// A new block equal to `old` with `key` set to `value`.
PropBlock* WithProperty(const PropBlock* old, std::uint32_t key, PropertyView value, MutationContext& ctx);
// A new block equal to `old` without `key`; null if nothing remains. Requires
// `key` to be present (check with GetProperty first).
PropBlock* WithoutProperty(const PropBlock* old, std::uint32_t key, MutationContext& ctx);
// One change of a run of changes to one element's properties: `key` set to
// `value`, or removed (`remove`).
struct PropChange {
  std::uint32_t key;
  bool remove;
  PropertyView value;
  std::uint32_t order = 0;  // WithChanges' own (its place in the run)
};
// `old` with `changes` applied in their order (the last change of a key
// wins; removing a key `old` lacks changes nothing), built as one new block:
// O((n + k) log k) for n properties and k changes, where a block per change
// cost O(k (n + k)) (Engine II 1.1). Sets *changed; when false nothing was
// built and null is returned (keep `old`). Otherwise the new block, null if
// nothing remains. Sorts `changes` by key, then place (std::sort: a stable
// sort's buffer is a nothrow allocation it does without when refused, which
// the allocation-failure sweeps see as a failure the group survived), and
// uses `scratch`.
// WithProperty and WithoutProperty are its runs of one change.
PropBlock* WithChanges(const PropBlock* old, std::span<PropChange> changes, std::vector<PropInput>& scratch,
                       MutationContext& ctx, bool* changed);
// Overwrites the value of `key` in `b` if `key` is present and the value
// fits (an inline type, or a payload no longer than the old payload's room);
// false, changing nothing, otherwise. Requires `b` private to the group, and
// `value` not to view `b`'s own bytes (a string list is packed element by
// element into the room).
bool SetPropertyInPlace(PropBlock* b, std::uint32_t key, PropertyView value);

// Sizes, for Limits::max_property_bytes_per_element: a block takes
// kPropBlockHeaderBytes plus PropEntryBytes of each value it holds.
inline constexpr std::size_t kPropBlockHeaderBytes = 8;
// 16, plus a string, bytes, vector or packed string-list payload rounded up
// to 8.
std::size_t PropEntryBytes(const PropertyView& v);
// The bytes of `b`; 0 for null (no properties).
std::size_t PropBlockBytes(const PropBlock* b);

std::uint32_t PropCount(const PropBlock* b);
std::optional<PropertyView> GetProperty(const PropBlock* b, std::uint32_t key);

// The entry of `key` in `b` (null: none), by binary search; FindEntry's
// path for blocks of more than 8 properties.
const PropEntry* FindEntrySorted(const PropBlock* b, std::uint32_t key);

// The entry of `key` in `b`, or null if `b` is null or lacks the key.
// Inline, with a linear scan for the few properties a block usually holds:
// hot loops (ranking, weights) call it once per element.
inline const PropEntry* FindEntry(const PropBlock* b, std::uint32_t key) {
  if (b == nullptr) return nullptr;
  if (b->count > 8) return FindEntrySorted(b, key);
  const PropEntry* it = reinterpret_cast<const PropEntry*>(b + 1);
  for (const PropEntry* last = it + b->count; it != last; ++it)
    if (it->key >= key) return it->key == key ? it : nullptr;
  return nullptr;
}

// i - (double)i exactly, where `rounded` is (double)i. The rounding is
// monotone, so comparing (rounded, remainder) pairs orders the int64s
// exactly; the remainder is at most half an ulp (1024 below 2^63), so the
// int64 difference and its double are exact. `rounded` may be 2^63, which no
// int64 holds: then i - 2^63 is (i - INT64_MAX) - 1.
inline double RoundingRemainder(std::int64_t i, double rounded) {
  if (rounded >= 9223372036854775808.0)
    return static_cast<double>(i - std::numeric_limits<std::int64_t>::max()) - 1.0;
  return static_cast<double>(i - static_cast<std::int64_t>(rounded));
}

// The value of `key` in `b` read as a number, for hot loops that rank or
// weigh by one numeric property (no PropertyView is built): kNumber with
// *value set for an int64 (rounded to the nearest double) or a double;
// kAbsent for a missing key or a null; kOther for any other type (*type says
// which). With `low`, *low is the exact remainder of that rounding (value -
// *value: 0 for a double or an int64 within 2^53, else an integer of
// magnitude at most 1024), so (*value, *low) in lexicographic order ranks
// every int64 and double exactly, one against another.
enum class NumberLookup : std::uint8_t { kNumber, kAbsent, kOther };
inline NumberLookup GetNumber(const PropBlock* b, std::uint32_t key, double* value, ValueType* type,
                              double* low = nullptr) {
  const PropEntry* e = FindEntry(b, key);
  if (e == nullptr) return NumberLookup::kAbsent;
  *type = static_cast<ValueType>(e->type);
  switch (*type) {
    case ValueType::kDouble:
      *value = std::bit_cast<double>(e->word);
      if (low != nullptr) *low = 0;
      return NumberLookup::kNumber;
    case ValueType::kInt64: {
      const auto i = static_cast<std::int64_t>(e->word);
      *value = static_cast<double>(i);
      if (low != nullptr) *low = RoundingRemainder(i, *value);
      return NumberLookup::kNumber;
    }
    case ValueType::kNull: return NumberLookup::kAbsent;
    default: return NumberLookup::kOther;
  }
}
// Requires i < PropCount(b).
PropInput PropAt(const PropBlock* b, std::uint32_t i);

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_PROP_BLOCK_H_
