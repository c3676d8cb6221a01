// Power-loss enumeration as unkind as production (crash_enumeration.h):
// several producers with several batches in flight (multi-batch groups),
// background checkpoints on, explicit checkpoints, small segments, groups
// over one WAL fragment, several seeds, every crash policy, a second crash
// during each recovery whose recovered state is compared, and the
// independent reader's second opinion on every crashed directory.
//
// Knobs (environment): QUIVER_ENUM_SEEDS (default 2), QUIVER_ENUM_POINTS
// (crash points per seed, default 24; 0 = every operation),
// QUIVER_ENUM_BURSTS (bursts per producer, default 6). The ctest entry
// `crash_enumeration_soak` (label soak) runs it wide.
#include <gtest/gtest.h>

#include <iostream>

#include "crash_enumeration.h"

namespace quiver {
namespace {

using test_util::EnvOr;

test_util::EnumerationConfig WideConfig(std::uint64_t seed) {
  test_util::EnumerationConfig c;
  c.seed = seed;
  c.options.durable.wal_segment_bytes = std::uint64_t{16} << 10;
  c.options.durable.checkpoint_wal_bytes = std::uint64_t{24} << 10;  // background checkpoints
  c.options.writer.spin_microseconds = 0;
  c.producers = 3;
  c.bursts_per_producer = static_cast<int>(EnvOr("QUIVER_ENUM_BURSTS", 6));
  c.crash_points = EnvOr("QUIVER_ENUM_POINTS", 24);
  return c;
}

TEST(DurabilityEnumerationTest, SeveralProducersBackgroundCheckpointsAndSecondCrashes) {
  test_util::EnumerationFigures total;
  const std::uint64_t seeds = EnvOr("QUIVER_ENUM_SEEDS", 2);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed)
    total.Add(test_util::CrashEnumerator(WideConfig(seed)).Run());
  std::cout << total << "\n";
  for (const std::string& f : total.first_failures) ADD_FAILURE() << f;
  EXPECT_EQ(total.violations(), 0u);
  // The run was as wide as it claims.
  EXPECT_GT(total.batches, total.groups) << "no commit group held several batches";
  EXPECT_GT(total.checkpoints, 0u);
  EXPECT_GT(total.big_groups, 0u) << "no group was larger than one WAL fragment";
}

}  // namespace
}  // namespace quiver
