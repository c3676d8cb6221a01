// The crash loop's oracle: checks the graph a parent recovered after a kill
// against what the child reported (child_log.h) and what the previous
// verification of the same directory found.
//
// Every crash-loop batch is one commit with exactly one marker vertex
// (commit_spec.h) and nothing is ever removed, so the marker ranks, in
// vertex-id order, are the commits' sequence numbers: the k-th marker is
// the commit with sequence k. That turns "no hole" into exact checks:
//   - the recovered sequence M equals the number of markers;
//   - every acknowledged sequence s <= M and the s-th marker is that commit;
//   - commits verified earlier keep their sequence (the state only grows).
//
// Thread safety: plain functions.
#ifndef QUIVER_TOOLS_CRASHLOOP_CRASH_VERIFIER_H_
#define QUIVER_TOOLS_CRASHLOOP_CRASH_VERIFIER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "child_log.h"
#include "quiver/ids.h"
#include "quiver/snapshot.h"

namespace quiver::crashloop {

// What the parent knows of one graph directory between iterations.
struct DirModel {
  std::map<std::uint64_t, SequenceNumber> present;  // commit id -> its sequence number
  SequenceNumber sequence = 0;                      // the recovered sequence last time
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

  std::uint64_t total() const {
    return acked_lost + partial_groups + sequence_gaps + phantoms + invariant_errors;
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
};

// Checks `snapshot` (the graph recovered from the directory) against
// `before` (the last verification of the directory) and `log` (what the
// child killed since then reported). Commits are regenerated from `seed`.
Verification Verify(const Snapshot& snapshot, std::uint64_t seed, const DirModel& before,
                    const ChildLog& log);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_CRASH_VERIFIER_H_
