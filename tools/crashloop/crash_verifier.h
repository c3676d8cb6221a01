// The crash loop's oracle: checks the graph a parent recovered after a kill
// against what the child reported (child_log.h) and what the previous
// verification of the same directory found.
//
// Every crash-loop data batch is one commit with exactly one marker vertex
// (commit_spec.h) and nothing is ever removed, so the markers, in vertex-id
// order, are the data commits in sequence order. The other commits are
// index operations (CreateIndex commits two, DropIndex one), which the
// child reports as it begins and ends them. With X = M - markers the
// commits that are not data (M the recovered sequence):
//   - X lies between what the index operations acknowledged since the last
//     verification must have added and what all those begun could have;
//   - every acknowledged commit of rank r (its marker's place) and sequence
//     s has r <= s <= r + X; ordered by rank, known sequences increase and
//     s - r never decreases;
//   - commits verified earlier keep their rank (the state only grows).
// When no index operation ran since the last verification, X is exact and
// so is every acknowledged commit's place: the s-th commit is that one.
//
// Upserts and expectations (commit_spec.h): replaying the upserts of the
// present commits in rank order gives every Key vertex's properties, and
// the commit that created it (its id lies between that commit's marker and
// the next); a commit whose expectation must fail is never present nor
// acknowledged, one whose expectations hold never fails with Aborted.
//
// Indexes (index_catalog.h): every ready index answers as a brute-force
// scan of the snapshot does; one the log (or the last verification) says
// exists must be ready, one it says does not must be absent.
//
// Thread safety: plain functions.
#ifndef QUIVER_TOOLS_CRASHLOOP_CRASH_VERIFIER_H_
#define QUIVER_TOOLS_CRASHLOOP_CRASH_VERIFIER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "child_log.h"
#include "quiver/ids.h"
#include "quiver/snapshot.h"

namespace quiver::crashloop {

// What the parent knows of one graph directory between iterations.
struct DirModel {
  std::map<std::uint64_t, std::uint64_t> present;     // commit id -> its marker's rank (1-based)
  std::map<std::uint64_t, SequenceNumber> sequences;  // commit id -> sequence, where acknowledged
  SequenceNumber sequence = 0;                        // the recovered sequence last time
  std::uint64_t non_data = 0;                         // of those, index operation commits
  std::set<std::string> indexes;                      // the ready indexes last time
};

// Contract violations, by kind. Each counts commits (or checks) that failed.
struct Violations {
  // An acknowledged commit, or one verified present earlier, is absent or
  // not exactly its generated contents.
  std::uint64_t acked_lost = 0;
  // Part of an unacknowledged commit is visible (or its contents are wrong).
  std::uint64_t partial_groups = 0;
  // The state is not the prefix 1..M of the commit order, an acknowledged
  // sequence is above M or names another commit, or the state went back.
  std::uint64_t sequence_gaps = 0;
  // A whole commit is visible that no child began in this iteration and no
  // earlier verification saw, or whose Write failed with a definite error.
  std::uint64_t phantoms = 0;
  // Graph invariants: live counts vs id limits, edge endpoints, adjacency
  // both ways, elements that belong to no commit.
  std::uint64_t invariant_errors = 0;
  // An index answer differs from the scan, an index exists that must not
  // or is missing (or still building) though it must be ready.
  std::uint64_t index_mismatches = 0;
  // A Key vertex differs from the replay of the present commits' upserts.
  std::uint64_t upsert_mismatches = 0;
  // A commit whose expectation must fail is present or acknowledged, or
  // one whose expectations hold failed with Aborted.
  std::uint64_t expectation_errors = 0;

  std::uint64_t total() const {
    return acked_lost + partial_groups + sequence_gaps + phantoms + invariant_errors + index_mismatches +
           upsert_mismatches + expectation_errors;
  }
  void Add(const Violations& o);
};

struct Verification {
  Violations violations;
  std::vector<std::string> messages;  // the first few violations, spelled out
  DirModel model;                     // what was found: the next iteration's `before`
  std::uint64_t acked_verified = 0;   // this child's acknowledged commits found whole
  std::uint64_t unacked_present = 0;  // begun, not acknowledged, found whole
  std::uint64_t unacked_absent = 0;   // begun, not acknowledged, absent
  std::uint64_t elements = 0;         // vertex + edge id limits of the graph
  std::uint64_t index_checks = 0;     // index answers and states compared
  std::uint64_t upsert_keys = 0;      // Key vertices compared with the replay
};

// Checks `snapshot` (the graph recovered from the directory) against
// `before` (the last verification of the directory) and `log` (what the
// child killed since then reported). Commits are regenerated from `seed`.
// `corrupt_index_expectations`: the index negative control
// (CheckIndexes' corrupt_expected).
Verification Verify(const Snapshot& snapshot, std::uint64_t seed, const DirModel& before, const ChildLog& log,
                    bool corrupt_index_expectations = false);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_CRASH_VERIFIER_H_
