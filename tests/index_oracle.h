// An oracle for property indexes: every ready index of a snapshot asked
// what it holds and compared with a brute-force scan of the same snapshot.
// Used after recoveries (quiver-crashloop's verifier, the crash
// enumeration): an index recovery rebuilt or maintained must answer as the
// recovered data says.
//
// Per ready index: its entry count; Find*ByIndex (and Find*ByIndex of one
// id for unique ones) of every key present, an absent key and, for
// composite indexes, a present prefix with an absent last key; for ordered
// ones, full scans both ways, [q1, q3), (q1, ..) descending with a limit,
// (.., q3] with a limit, a string prefix, and the count of each. An
// edge-endpoint constraint (kUniqueEndpoints), which holds no property
// values: its entry count against the type's edges, that the data repeats
// no pair, and that a property query on it is InvalidArgument. A
// single-key index is asked the same through the (label, key) forms
// (FindVertices, FindVertex, VerticesInRange, CountVerticesInRange and the
// edge forms). The value order and the indexing rules are index.h's,
// written out again here rather than taken from the engine.
//
// Example:
//   test::IndexOracleResult r = test::CheckIndexAnswers(graph->GetSnapshot());
//   for (const std::string& m : r.messages) ADD_FAILURE() << m;
//
// Thread safety: plain functions; the snapshot is only read.
#ifndef QUIVER_TESTS_INDEX_ORACLE_H_
#define QUIVER_TESTS_INDEX_ORACLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "quiver/snapshot.h"

namespace quiver::test {

struct IndexOracleResult {
  std::uint64_t checks = 0;           // answers compared
  std::uint64_t mismatches = 0;       // answers that differ from the scan
  std::vector<std::string> messages;  // the first 20 mismatches
};

// `corrupt_expected` (negative controls): the scan drops the lowest-id
// element of every index, so any index with an entry must mismatch.
IndexOracleResult CheckIndexAnswers(const Snapshot& snapshot, bool corrupt_expected = false);

}  // namespace quiver::test

#endif  // QUIVER_TESTS_INDEX_ORACLE_H_
