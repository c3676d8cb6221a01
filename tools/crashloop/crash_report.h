// RunTotals: the crash loop's figures over all iterations, and the lines
// that report them (RELIABILITY.md 3.3's wording).
//
// stdout gets exactly two lines:
//   crash iterations: N (posix a / buffered b), acknowledged commits lost: 0 (posix 0 / buffered 0),
//   partial groups visible: 0, sequence gaps: 0
//   violations: 0 (posix 0 / buffered 0), acked commits verified: X, phantom commits: 0,
//   recovery failures: 0, recovery ms p50/max: p/m, kills during checkpoint: k, during recovery: r
// (each on one line); stderr gets a third with the remaining figures. The
// contract holds in each mode on its own, so each mode's losses and
// violations are printed beside the total: a total of 0 is the sum of two
// zeros, never a figure in which one mode's losses hide.
//
// Thread safety: plain values.
#ifndef QUIVER_TOOLS_CRASHLOOP_CRASH_REPORT_H_
#define QUIVER_TOOLS_CRASHLOOP_CRASH_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <vector>

#include "crash_verifier.h"

namespace quiver::crashloop {

// One file system mode's share of the figures.
struct ModeTotals {
  std::uint64_t iterations = 0;
  std::uint64_t acked_lost = 0;  // Violations::acked_lost in this mode's iterations
  std::uint64_t violations = 0;  // RunTotals::total_violations() in this mode's iterations
};

struct RunTotals {
  std::uint64_t iterations = 0;
  ModeTotals posix;
  ModeTotals buffered;
  Violations violations;  // both modes
  // Violations outside the verifier's:
  std::uint64_t recovery_failures = 0;  // a parent or child open failed, or hung
  std::uint64_t child_failures = 0;     // a child died on its own after opening, or spoke nonsense
  std::uint64_t wal_not_truncated = 0;  // files left behind after a checkpointing close
  std::uint64_t close_failures = 0;     // the parent's Close (its checkpoint) failed
  // The independent reader failed, or its state differs from Graph::Open's.
  std::uint64_t reader_disagreements = 0;
  std::uint64_t reader_agreements = 0;

  std::uint64_t acked_verified = 0;
  std::uint64_t unacked_present = 0;
  std::uint64_t unacked_absent = 0;
  std::uint64_t begun = 0;
  std::uint64_t failed_writes = 0;      // F lines (DurabilityUnknown and others)
  std::uint64_t kills_checkpoint = 0;   // an explicit checkpoint in flight, or a *.tmp left
  std::uint64_t kills_recovery = 0;     // after "open-start", before "open-done"
  std::uint64_t kills_before_open = 0;  // before the child reached Open
  std::uint64_t explicit_checkpoints = 0;
  std::uint64_t torn_tails = 0;                 // parent opens that truncated a tail
  std::uint64_t resets = 0;                     // directories wiped to bound the graph's size
  std::uint64_t previous_checkpoint_opens = 0;  // parent opens that fell back to the older checkpoint
  std::uint64_t stalled_windows = 0;            // >= 250 ms after open-done without one Write returning
  std::uint64_t max_segments = 0;               // WAL segments on disk after a kill
  std::uint64_t max_checkpoints = 0;            // checkpoint files on disk after a kill
  std::vector<std::uint64_t> recovery_us;       // the parent's open times
  std::uint64_t index_checks = 0;               // index answers and states compared (Verification)
  std::uint64_t upsert_keys = 0;                // Key vertices compared with the upserts' replay
  std::uint64_t index_ops = 0;                  // CreateIndex / DropIndex calls children began
  std::uint64_t kills_during_index_op = 0;      // a CreateIndex / DropIndex in flight at the kill
  std::uint64_t indexes_built_at_open = 0;      // OpenStats::indexes_built of the parent's opens

  std::uint64_t total_violations() const {
    return violations.total() + recovery_failures + child_failures + wal_not_truncated + close_failures +
           reader_disagreements;
  }
};

// The two summary lines.
void PrintSummary(const RunTotals& t, std::FILE* out);
// One line with everything else, the seed first.
void PrintDetails(const RunTotals& t, std::uint64_t seed, std::FILE* out);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_CRASH_REPORT_H_
