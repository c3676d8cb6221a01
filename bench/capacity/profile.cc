#include "profile.h"

namespace quiver::capacity {
namespace {

Shape Uniform(std::uint64_t v, std::uint32_t d) { return Shape{v, d, Targets::kUniform}; }
Shape PowerLaw(std::uint64_t v, std::uint32_t d) { return Shape{v, d, Targets::kPowerLaw}; }

}  // namespace

Profile QuickProfile() {
  Profile p;
  p.name = "quick";
  p.memory = {Uniform(200'000, 2), Uniform(200'000, 10), Uniform(100'000, 20), PowerLaw(200'000, 10)};
  p.write_row_seconds = 1.0;
  p.write_row_max_commits = 200'000;
  p.checkpoint = {Uniform(100'000, 2), Uniform(334'000, 2)};
  p.stall_outside_seconds = 0.5;
  p.traversal = {Uniform(100'000, 10), Uniform(500'000, 10), PowerLaw(200'000, 10)};
  p.traversal_passes = 10;
  p.traversal_layout = Uniform(100'000, 10);
  p.latency_vertices = {10'000, 100'000, 1'000'000};
  p.latency_samples = 20'000;
  // The 1M x 10 shape is the full profile's; the quick one is a
  // smoke run that CI pays for on two cores.
  p.online_vertices = 200'000;
  p.online_samples = 500;
  p.analytics = {Uniform(200'000, 10)};
  p.analytics_repeats = 3;
  // A smoke run of the indexes family (a few seconds); the sizes are the full profile's.
  p.index_keys = 200'000;
  p.index_lookup_samples = 20'000;
  p.index_range_entries = 20'000;
  p.index_range_scans = 20;
  p.index_batch_vertices = 50'000;
  p.index_upsert_keys = 100'000;
  p.index_outside_seconds = 0.3;
  p.index_durable_seconds = 0.25;
  p.index_reopen_vertices = 200'000;
  // A smoke run of the import family (a few seconds); the 10M x 10 is the full profile's.
  p.import_evlp_vertices = 100'000;
  p.import_batch_vertices = 100'000;
  p.import_csv_vertices = 50'000;
  // A smoke run of the engine rows (a few seconds); the 10M edges on 1M vertices are full's.
  p.engine_snapshot_ops = 2'000'000;
  p.engine_snapshot_passes = 9;
  p.engine_edge_vertices = 100'000;
  p.engine_edges = 1'000'000;
  p.engine_edge_passes = 3;
  p.fdatasync_seconds = 1.5;
  p.sequential_write_bytes = std::uint64_t{256} << 20;
  p.bandwidth_array_bytes = std::uint64_t{128} << 20;
  p.bandwidth_passes = 3;
  p.chase_bytes = std::uint64_t{256} << 20;
  p.chase_loads = 2'000'000;
  p.fresh_touch_bytes = std::uint64_t{1} << 30;
  return p;
}

Profile FullProfile() {
  Profile p;
  p.name = "full";
  // 10M x 10 last: the traversal family reuses it as its 100M-edge row.
  p.memory = {Uniform(2'000'000, 2), Uniform(1'000'000, 20), PowerLaw(2'000'000, 10),
              Uniform(10'000'000, 10)};
  p.write_row_seconds = 8.0;
  p.write_row_max_commits = 2'000'000;
  p.checkpoint = {Uniform(334'000, 2), Uniform(1'334'000, 2), Uniform(6'667'000, 2)};
  p.stall_outside_seconds = 2.0;
  p.traversal = {Uniform(500'000, 10), Uniform(2'000'000, 10), PowerLaw(2'000'000, 10),
                 Uniform(10'000'000, 10)};
  p.traversal_passes = 5;
  p.traversal_layout = Uniform(500'000, 10);
  p.latency_vertices = {10'000, 100'000, 1'000'000};
  p.latency_samples = 100'000;
  p.online_vertices = 1'000'000;
  p.online_samples = 5'000;
  // The 1M x 10 shape and the 10M x 10 one.
  p.analytics = {Uniform(1'000'000, 10), Uniform(10'000'000, 10)};
  p.analytics_repeats = 3;
  // The sizes: 10M int64 keys, 1M upsert keys.
  p.index_keys = 10'000'000;
  p.index_lookup_samples = 200'000;
  p.index_range_entries = 1'000'000;
  p.index_range_scans = 20;
  p.index_batch_vertices = 1'000'000;
  p.index_upsert_keys = 1'000'000;
  p.index_outside_seconds = 2.0;
  p.index_durable_seconds = 1.5;
  p.index_reopen_vertices = 20'000'000;
  // The 10M x 10 into a new graph; through batches, far slower, 1M x 10 files of their own.
  p.import_evlp_vertices = 10'000'000;
  p.import_batch_vertices = 1'000'000;
  p.import_csv_vertices = 1'000'000;
  // The 10M random-target edges on 1M vertices.
  p.engine_snapshot_ops = 10'000'000;
  p.engine_snapshot_passes = 9;
  p.engine_edge_vertices = 1'000'000;
  p.engine_edges = 10'000'000;
  p.engine_edge_passes = 3;
  p.fdatasync_seconds = 5.0;
  p.sequential_write_bytes = std::uint64_t{1} << 30;
  p.bandwidth_array_bytes = std::uint64_t{512} << 20;
  p.bandwidth_passes = 5;
  p.chase_bytes = std::uint64_t{1} << 30;
  p.chase_loads = 10'000'000;
  p.fresh_touch_bytes = std::uint64_t{4} << 30;
  return p;
}

std::optional<Profile> ProfileNamed(std::string_view name) {
  if (name == "quick") return QuickProfile();
  if (name == "full") return FullProfile();
  return std::nullopt;
}

}  // namespace quiver::capacity
