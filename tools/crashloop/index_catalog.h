// The crash loop's indexes: the fixed catalog children declare and drop,
// and the parent's check of every ready index of a recovered graph against
// a brute-force scan of the same snapshot.
//
// The catalog covers every index kind on data the loop writes (commit_spec.h):
// unique (Key.k, which upserts need; commit.id, one per commit; the
// composite Thing(commit, idx)), exact (the composite City(a, b) and
// KNOWS.score, both of any type), ordered (commit.count and Key.last, int64;
// Person.name of any type; LIKES.idx on edges). No index's data can violate
// it, and every typed index is on keys that only ever hold its type, so an
// index never fails a data commit and the commits' outcomes stay functions
// of their specs.
//
// Example:
//   IndexCheck c = CheckIndexes(snapshot, /*corrupt_expected=*/false);
//   if (c.mismatches > 0) Report(c.messages);
//
// Thread safety: plain functions; the snapshot is only read.
#ifndef QUIVER_TOOLS_CRASHLOOP_INDEX_CATALOG_H_
#define QUIVER_TOOLS_CRASHLOOP_INDEX_CATALOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/index.h"
#include "quiver/snapshot.h"

namespace quiver::crashloop {

// The unique index every upsert goes through; children create it before
// they commit, and never drop it.
inline constexpr std::string_view kKeyIndex = "key_k";

// Every index a child may declare; kKeyIndex first.
const std::vector<IndexSpec>& IndexCatalog();
// The catalog's spec named `name`, if any.
const IndexSpec* FindCatalogSpec(std::string_view name);
bool SameSpec(const IndexSpec& a, const IndexSpec& b);

struct IndexCheck {
  std::uint64_t checks = 0;      // answers compared (lookups, scans, counts, entry counts)
  std::uint64_t mismatches = 0;  // answers that differ from the scan
  std::vector<std::string> messages;
};

// Checks every ready index of `snapshot`: its entry count, a lookup of every
// key present (and a few absent ones), and for ordered indexes full scans
// both ways, a range with its count, a limit and a string prefix, each
// against a brute-force scan of the same snapshot. An index not in the
// catalog, or whose spec differs from the catalog's, is a mismatch.
// `corrupt_expected` (the index negative control) drops the lowest-id
// element from every expected answer: the check must then fail.
IndexCheck CheckIndexes(const Snapshot& snapshot, bool corrupt_expected);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_INDEX_CATALOG_H_
