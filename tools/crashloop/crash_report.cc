#include "crash_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>

namespace quiver::crashloop {
namespace {

double Percentile(std::vector<std::uint64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return static_cast<double>(v[std::min(i, v.size() - 1)]);
}

}  // namespace

void PrintSummary(const RunTotals& t, std::FILE* out) {
  const Violations& v = t.violations;
  std::fprintf(out,
               "crash iterations: %" PRIu64 " (posix %" PRIu64 " / buffered %" PRIu64
               "), acknowledged commits lost: %" PRIu64 " (posix %" PRIu64 " / buffered %" PRIu64
               "), partial groups visible: %" PRIu64 ", sequence gaps: %" PRIu64 "\n",
               t.iterations, t.posix.iterations, t.buffered.iterations, v.acked_lost, t.posix.acked_lost,
               t.buffered.acked_lost, v.partial_groups, v.sequence_gaps);
  std::fprintf(out,
               "violations: %" PRIu64 " (posix %" PRIu64 " / buffered %" PRIu64
               "), acked commits verified: %" PRIu64 ", phantom commits: %" PRIu64
               ", recovery failures: %" PRIu64
               ", recovery ms p50/max: %.1f/%.1f, kills during checkpoint: %" PRIu64
               ", during recovery: %" PRIu64 "\n",
               t.total_violations(), t.posix.violations, t.buffered.violations, t.acked_verified, v.phantoms,
               t.recovery_failures, Percentile(t.recovery_us, 0.5) / 1000.0,
               Percentile(t.recovery_us, 1.0) / 1000.0, t.kills_checkpoint, t.kills_recovery);
  std::fflush(out);
}

void PrintDetails(const RunTotals& t, std::uint64_t seed, std::FILE* out) {
  std::fprintf(
      out,
      "details: seed %" PRIu64 ", commits begun %" PRIu64 ", unacked present %" PRIu64 " / absent %" PRIu64
      ", failed writes %" PRIu64 ", graph invariant errors %" PRIu64 ", child failures %" PRIu64
      ", close failures %" PRIu64 ", WAL not truncated %" PRIu64 ", kills before open %" PRIu64
      ", explicit checkpoints %" PRIu64 ", torn tails truncated %" PRIu64 ", max WAL segments %" PRIu64
      ", max checkpoints %" PRIu64 ", directory resets %" PRIu64 ", stalled commit windows %" PRIu64
      ", opens from the previous checkpoint %" PRIu64 ", independent reader agreed %" PRIu64
      " / disagreed %" PRIu64 ", index operations %" PRIu64 " (in flight at the kill %" PRIu64
      "), indexes built at open %" PRIu64 ", index checks: %" PRIu64 ", index mismatches: %" PRIu64
      ", upsert keys checked %" PRIu64 ", upsert mismatches %" PRIu64 ", expectation errors %" PRIu64 "\n",
      seed, t.begun, t.unacked_present, t.unacked_absent, t.failed_writes, t.violations.invariant_errors,
      t.child_failures, t.close_failures, t.wal_not_truncated, t.kills_before_open, t.explicit_checkpoints,
      t.torn_tails, t.max_segments, t.max_checkpoints, t.resets, t.stalled_windows,
      t.previous_checkpoint_opens, t.reader_agreements, t.reader_disagreements, t.index_ops,
      t.kills_during_index_op, t.indexes_built_at_open, t.index_checks, t.violations.index_mismatches,
      t.upsert_keys, t.violations.upsert_mismatches, t.violations.expectation_errors);
  std::fflush(out);
}

}  // namespace quiver::crashloop
