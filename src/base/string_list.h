// The packed form of a string list (ValueType::kStringList), the one
// contiguous payload a property block stores and StringListView::Packed
// reads:
//
//   PackedList := count:u32  end:u32[count]  bytes
//
// in native byte order; end[i] is where element i ends within `bytes`
// (element 0 starts at 0, element i at end[i - 1]). In memory only: the
// files encode a list element by element (wal/value_codec.h).
//
// Thread safety: free functions of their arguments.
#ifndef QUIVER_BASE_STRING_LIST_H_
#define QUIVER_BASE_STRING_LIST_H_

#include <cstddef>

#include "quiver/value.h"

namespace quiver::base {

// The bytes PackStringList writes for `list`: 4 + 4 per element + the
// elements' text.
std::size_t PackedStringListBytes(const StringListView& list);

// Writes `list` packed to `out`, which must have room for
// PackedStringListBytes(list) bytes (at any alignment). Requires that size
// to fit in 32 bits (validation keeps a value within
// kMaxPropertyBytesCeiling).
void PackStringList(const StringListView& list, std::byte* out);

}  // namespace quiver::base

#endif  // QUIVER_BASE_STRING_LIST_H_
