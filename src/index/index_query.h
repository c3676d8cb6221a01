// Queries through the indexes of one version: which index answers a
// question, equality lookups, range scans and counts. What Snapshot's index
// methods run (snapshot_queries.cc).
//
// The range rules (on the index's first key; include/quiver/index.h):
// bounds are encoded like keys. For a single-key index a bound is the key
// itself; for a composite one, whose keys start with the first component's
// self-delimiting encoding, "first component <= hi" is "key < the prefix
// successor of hi's encoding", and "first component > lo" is "key >= the
// successor of lo's". A string prefix is the codec's StringPrefixRange. Infinite
// double bounds become the largest finite double on the same side
// (inclusive or not, so the same values are in range).
//
// Thread safety: reads one published version; any thread.
#ifndef QUIVER_INDEX_INDEX_QUERY_H_
#define QUIVER_INDEX_INDEX_QUERY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "index/catalog.h"
#include "quiver/ids.h"
#include "quiver/index.h"
#include "quiver/status.h"
#include "storage/elements.h"

namespace quiver::index {

enum class Need : std::uint8_t {
  kEquality,  // any kind
  kUnique,    // kUnique
  kOrdered,   // kOrdered
};

// The ready single-key index on (kind, label, key) that answers `need`
// (a composite index holds only elements with all its keys, so it cannot
// answer a question about one key). Among several, one that takes values
// of `value_type` (declared that type, or no type) first, then for
// equality a unique, an exact, an ordered one. FailedPrecondition if there
// is none (or only one still being built).
Result<const PropertyIndex*> PickIndex(const storage::GraphRoots& g, ElementKind kind, std::string_view label,
                                       std::string_view key, Need need, std::optional<ValueType> value_type);

// The ready index named `name`, of element kind `kind`. NotFound,
// FailedPrecondition (building; not unique when `need` is kUnique, not
// ordered when kOrdered), InvalidArgument (other element kind).
Result<const PropertyIndex*> IndexByName(const storage::GraphRoots& g, ElementKind kind,
                                         std::string_view name, Need need);

// Ids whose key equals `values` (one per index key), ascending; at most `limit`.
Status Lookup(const PropertyIndex& p, std::span<const PropertyValue> values, std::size_t limit,
              std::vector<std::uint64_t>* ids);

// Ids in `range` on the first key, in range order, appended to `ids` (at
// most range.limit of them). Id: VertexId or EdgeId.
template <typename Id>
Status Range(const PropertyIndex& p, const IndexRange& range, std::vector<Id>* ids);
Result<std::uint64_t> CountRange(const PropertyIndex& p, const IndexRange& range);

}  // namespace quiver::index

#endif  // QUIVER_INDEX_INDEX_QUERY_H_
