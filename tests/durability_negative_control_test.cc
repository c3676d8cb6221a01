// Negative controls for the crash enumeration: each breaks one rule of the
// durable write path through a test-only switch (base/durability_faults.h)
// and checks that the enumeration (crash_enumeration.h) then sees the loss
// (acknowledged commits lost, a recovery failure, or a damaged newest
// checkpoint with no fallback left); EverySwitchOffSeesNothing checks that
// the same enumeration sees nothing with the switches off. A checker that passes a
// broken engine checks nothing.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "base/durability_faults.h"
#include "crash_enumeration.h"

namespace quiver {
namespace {

using base::DurabilityFaults;
using base::ScopedDurabilityFault;

test_util::EnumerationConfig ControlConfig() {
  test_util::EnumerationConfig c;
  c.seed = 7;
  // A new segment every group or two: the header's page and two groups'
  // (each group ends on a 4 KiB page boundary, WAL format version 3).
  c.options.durable.wal_segment_bytes = 3 * 4096;
  c.options.durable.checkpoint_wal_bytes = 2048;  // a checkpoint every few groups
  c.checkpoint_one_in = 2;
  c.options.writer.spin_microseconds = 0;
  c.producers = 2;
  c.bursts_per_producer = static_cast<int>(test_util::EnvOr("QUIVER_CONTROL_BURSTS", 6));
  c.big_value_one_in = 0;
  c.crash_points = test_util::EnvOr("QUIVER_CONTROL_POINTS", 0);  // every operation
  c.fallback_every_policy = true;
  return c;
}

// The figures with the switches given on must show the loss. Where commits
// form groups and checkpoints start depends on thread timing (two producers,
// background checkpoints), and some switches only lose data when a checkpoint
// lands in a particular place, so one seed can miss the window on a loaded
// machine: up to three seeds run, and the loss must be seen in one of them.
void ExpectSeen(std::vector<std::atomic<bool> DurabilityFaults::*> faults, const char* name,
                const test_util::EnumerationConfig& config = ControlConfig()) {
  std::vector<std::unique_ptr<ScopedDurabilityFault>> on;
  for (auto f : faults) on.push_back(std::make_unique<ScopedDurabilityFault>(f));
  for (int attempt = 0; attempt < 3; ++attempt) {
    test_util::EnumerationConfig c = config;
    c.seed = config.seed + static_cast<std::uint64_t>(attempt);
    c.stop_at_first_loss = true;
    const test_util::EnumerationFigures broken = test_util::CrashEnumerator(c).Run();
    std::cout << name << " on (seed " << c.seed << "): " << broken << "\n";
    // Seen for the switch, not for a value an older format it writes lacks
    // (unpadded_wal writes format 2 segments, which hold no string list).
    for (const std::string& f : broken.first_failures)
      EXPECT_EQ(f.find("value type"), std::string::npos) << name << ": seen for the wrong reason: " << f;
    if (broken.acked_lost + broken.recovery_failures + broken.fallback_failures > 0) return;
  }
  ADD_FAILURE() << name << ": the enumeration did not notice (3 seeds)";
}

// The same enumeration with every switch off sees nothing: what the tests
// below see is the switch, not the configuration. (One test, not a check in
// each: ctest runs every test in its own process, so a shared result would
// be computed again by each.)
TEST(DurabilityNegativeControlTest, EverySwitchOffSeesNothing) {
  const test_util::EnumerationFigures sound = test_util::CrashEnumerator(ControlConfig()).Run();
  std::cout << "every switch off: " << sound << "\n";
  for (const std::string& f : sound.first_failures) ADD_FAILURE() << f;
  EXPECT_EQ(sound.violations(), 0u);
}

TEST(DurabilityNegativeControlTest, NoDirectorySyncWhenStartingASegmentIsSeen) {
  ExpectSeen({&DurabilityFaults::skip_segment_dir_sync}, "no segment directory fsync");
}

TEST(DurabilityNegativeControlTest, NoCheckpointSyncBeforeRenameIsSeen) {
  ExpectSeen({&DurabilityFaults::skip_checkpoint_sync}, "no checkpoint fdatasync");
}

// Removing files before the directory fsync that publishes the checkpoint
// making them unnecessary. The files removed are those the *previous*
// checkpoint covers, so no acknowledged commit is lost outright (the previous
// checkpoint and its log survive a lost new name); what is lost is the second
// generation: a power cut may keep the removals and drop the new name,
// leaving one checkpoint and no log before it. The enumeration sees it by
// also damaging the newest checkpoint of each crashed directory (check 5 of
// crash_enumeration.h): with the switch on, some such directory has no
// fallback left.
TEST(DurabilityNegativeControlTest, DeletingFilesBeforeTheDirectorySyncIsSeen) {
  ExpectSeen({&DurabilityFaults::remove_before_dir_sync}, "delete before the directory fsync");
}

// The WAL's page rule off (version 2 segments: no padding to a 4 KiB page
// boundary after each group): the next group's append rewrites the page
// holding the end of the previous, acknowledged group, and a power cut that
// tears that page's write-back (CrashPolicy::kTearPartialPage) destroys the
// acknowledged bytes. EverySwitchOffSeesNothing runs the same enumeration
// with the padding on.
TEST(DurabilityNegativeControlTest, UnpaddedWalIsSeen) {
  ExpectSeen({&DurabilityFaults::unpadded_wal}, "no WAL page padding");
}

// Unsynced writes (WriteOptions::sync = false) appended each as its own
// record without a sync, instead of held back and written as one record with
// the next synced group. The writer then has nothing held back when Sync()
// comes, so Sync() syncs nothing, and a crash takes back writes it said were
// durable (seen as acknowledged commits lost, and as checkpoints with no
// fallback). The same workload with the switch off
// (DurabilityEnumerationTest.UnsyncedWritesLoseOnlyASuffix) sees nothing.
TEST(DurabilityNegativeControlTest, AppendingUnsyncedGroupsUnsyncedIsSeen) {
  test_util::EnumerationConfig c = ControlConfig();
  c.unsynced_one_in = 2;
  c.sync_one_in = 3;
  c.max_in_flight = 1;  // one batch a group: several unsynced records in a row
  ExpectSeen({&DurabilityFaults::append_unsynced_groups}, "unsynced groups appended unsynced", c);
}

// No fsync of the parent after Open creates the graph directory (nor of the
// ancestors before a new graph's first segment). The enumeration's graph
// lives below a mount point of the simulator (crash_enumeration.h), so a
// power cut that loses unsynced directory entries can take the graph
// directory's own name, and with it every acknowledged commit.
TEST(DurabilityNegativeControlTest, NoParentSyncAfterCreatingTheDirectoryIsSeen) {
  ExpectSeen({&DurabilityFaults::skip_parent_sync}, "no parent fsync");
}

}  // namespace
}  // namespace quiver
