// Negative controls for the crash enumeration: each breaks one rule of the
// durable write path through a test-only switch (base/durability_faults.h)
// and checks that the enumeration (crash_enumeration.h) then sees the loss
// (acknowledged commits lost or a recovery failure), and that the same
// enumeration sees nothing with the switch off. A checker that passes a
// broken engine checks nothing.
#include <gtest/gtest.h>

#include <iostream>

#include "base/durability_faults.h"
#include "crash_enumeration.h"

namespace quiver {
namespace {

using base::DurabilityFaults;
using base::ScopedDurabilityFault;

test_util::EnumerationConfig ControlConfig() {
  test_util::EnumerationConfig c;
  c.seed = 7;
  c.options.durable.wal_segment_bytes = 1024;     // a new segment every group or two
  c.options.durable.checkpoint_wal_bytes = 2048;  // a checkpoint every few groups
  c.checkpoint_one_in = 2;
  c.options.writer.spin_microseconds = 0;
  c.producers = 2;
  c.bursts_per_producer = static_cast<int>(test_util::EnvOr("QUIVER_CONTROL_BURSTS", 6));
  c.big_value_one_in = 0;
  c.crash_points = test_util::EnvOr("QUIVER_CONTROL_POINTS", 0);  // every operation
  return c;
}

// The enumeration with every switch off: computed once, shared by the tests.
const test_util::EnumerationFigures& SoundFigures() {
  static const test_util::EnumerationFigures figures = test_util::CrashEnumerator(ControlConfig()).Run();
  return figures;
}

// The figures with the switches given on, then with all of them off.
void ExpectSeenOnlyWhenBroken(std::vector<std::atomic<bool> DurabilityFaults::*> faults, const char* name) {
  test_util::EnumerationFigures broken;
  {
    std::vector<std::unique_ptr<ScopedDurabilityFault>> on;
    for (auto f : faults) on.push_back(std::make_unique<ScopedDurabilityFault>(f));
    broken = test_util::CrashEnumerator(ControlConfig()).Run();
  }
  std::cout << name << " on: " << broken << "\n";
  EXPECT_GT(broken.acked_lost + broken.recovery_failures, 0u) << name << ": the enumeration did not notice";
  const test_util::EnumerationFigures& sound = SoundFigures();
  std::cout << name << " off: " << sound << "\n";
  for (const std::string& f : sound.first_failures) ADD_FAILURE() << f;
  EXPECT_EQ(sound.violations(), 0u);
}

TEST(DurabilityNegativeControlTest, NoDirectorySyncWhenStartingASegmentIsSeen) {
  ExpectSeenOnlyWhenBroken({&DurabilityFaults::skip_segment_dir_sync}, "no segment directory fsync");
}

TEST(DurabilityNegativeControlTest, NoCheckpointSyncBeforeRenameIsSeen) {
  ExpectSeenOnlyWhenBroken({&DurabilityFaults::skip_checkpoint_sync}, "no checkpoint fdatasync");
}

// Removing only what the *previous* (durable) checkpoint covers before the
// new checkpoint's directory fsync loses nothing: if the new name is lost,
// the previous checkpoint and the log after it are still there. This is why
// two generations are kept; the test pins it.
TEST(DurabilityNegativeControlTest, DeletingWhatThePreviousCheckpointCoversEarlyIsHarmless) {
  ScopedDurabilityFault early(&DurabilityFaults::remove_before_dir_sync);
  const test_util::EnumerationFigures f = test_util::CrashEnumerator(ControlConfig()).Run();
  std::cout << "delete (previous checkpoint's coverage) before the directory fsync: " << f << "\n";
  for (const std::string& s : f.first_failures) ADD_FAILURE() << s;
  EXPECT_EQ(f.violations(), 0u);
  EXPECT_GT(f.checkpoints, 1u);
}

}  // namespace
}  // namespace quiver
