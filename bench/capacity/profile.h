// The two profiles of the capacity bench: which shapes each family measures, and for how long.
// quick fits in about three minutes on a 2-core machine; full (10M vertices / 100M edges
// included) in under 45 minutes on a 2-core, 24 GiB one. Shapes follow Fallen-8's bench so the
// figures compare row for row; each family's file says what it does with them.
#ifndef QUIVER_BENCH_CAPACITY_PROFILE_H_
#define QUIVER_BENCH_CAPACITY_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graphs.h"

namespace quiver::capacity {

struct Profile {
  std::string name;  // "quick" or "full"

  // memory: uniform shapes as Fallen-8's, then one power-law shape.
  std::vector<Shape> memory;
  // writes: each row runs until this many seconds or writes, whichever comes first.
  double write_row_seconds = 0;
  std::uint64_t write_row_max_commits = 0;
  // checkpoint and load: out-degree-2 shapes whose element counts are the rows' sizes.
  std::vector<Shape> checkpoint;
  // Single-element commits timed before and after the checkpoint (each side), in seconds.
  double stall_outside_seconds = 0;
  // traversal: out-degree-10 shapes plus the power-law shape of `memory`; timed passes per row.
  std::vector<Shape> traversal;
  int traversal_passes = 0;
  // traversal layout: one uniform shape swept after random-order inserts and after Close + Open.
  Shape traversal_layout;
  // latency: vertex counts and timed operations per operation kind.
  std::vector<std::uint64_t> latency_vertices;
  std::uint64_t latency_samples = 0;
  // online: the V of the V x 10 graph and the timed queries per kind (top-K: 10x as many).
  std::uint64_t online_vertices = 0;
  std::size_t online_samples = 0;
  // analytics: V x 10 shapes (weighted) and the timed runs per kernel (the median is reported).
  std::vector<Shape> analytics;
  int analytics_repeats = 0;
  // indexes (indexes_family.cc): keys of the lookup/range/memory graph, timed lookups per kind,
  // entries per range scan and ranges timed, vertices per batches run, upsert keys, and the
  // seconds of commits timed before (and at least after) the online index build.
  std::uint64_t index_keys = 0;
  std::uint64_t index_lookup_samples = 0;
  std::uint64_t index_range_entries = 0;
  int index_range_scans = 0;
  std::uint64_t index_batch_vertices = 0;
  std::uint64_t index_upsert_keys = 0;
  double index_outside_seconds = 0;
  // Each window of durable single-vertex commits (with and without a unique index, kRounds each),
  // and the vertices of the graph reopened with and without two indexes.
  double index_durable_seconds = 0;
  std::uint64_t index_reopen_vertices = 0;
  // import (import_family.cc): the V of the V x 10 EVLP files built into a new graph (and exported
  // from it), the V of the EVLP files imported through batches (the same files when equal), and the
  // V of the V x 10 CSV files built into a new graph.
  std::uint64_t import_evlp_vertices = 0;
  std::uint64_t import_batch_vertices = 0;
  std::uint64_t import_csv_vertices = 0;
  // engine (engine_family.cc): acquire + release operations per thread per pass and the passes of
  // the snapshot rows; the V and E of the random-target edge inserts and their passes.
  std::uint64_t engine_snapshot_ops = 0;
  int engine_snapshot_passes = 0;
  std::uint64_t engine_edge_vertices = 0;
  std::uint64_t engine_edges = 0;
  int engine_edge_passes = 0;
  // ceilings
  double fdatasync_seconds = 0;
  std::uint64_t sequential_write_bytes = 0;
  std::uint64_t bandwidth_array_bytes = 0;  // per array; copy touches two
  int bandwidth_passes = 0;
  std::uint64_t chase_bytes = 0;
  std::uint64_t chase_loads = 0;
  // Bytes of the fresh-memory first-touch ceiling (each of its two mappings): about 2.5 s per GiB
  // where the host must back the memory again (0.41 GB/s measured), a tenth of a second where not.
  std::uint64_t fresh_touch_bytes = 0;
};

Profile QuickProfile();
Profile FullProfile();
std::optional<Profile> ProfileNamed(std::string_view name);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_PROFILE_H_
