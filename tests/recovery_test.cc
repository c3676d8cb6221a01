// Recover (src/recovery.h) called directly, for what Open does not show: the
// memory recovery holds while it replays the WAL.
#include "recovery.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

// Regression: replay applied every group to one unpublished version without
// tracking which blocks it had allocated itself, so each of those blocks
// counted as published: changing an element copied its block and kept the
// old one until the end of recovery. N small groups that set a property on
// one element with a large block held N copies of the block: memory grew
// with the WAL's length times the element's size, not with the graph.
TEST(RecoveryTest, ReplayOfManySmallGroupsKeepsMemoryFlat) {
  constexpr int kGroups = 2000;
  const std::string big(4096, 'b');
  env::SimFileSystem fs;
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    WriteBatch first;
    first.AddVertex("Hub", {{"blob", big}, {"n", 0}});
    ASSERT_TRUE(g->Write(std::move(first)).ok());
    for (int k = 1; k < kGroups; ++k) {
      WriteBatch b;
      b.SetProperty(VertexId(0), "n", k);  // one small group each, on the same element
      ASSERT_TRUE(g->Write(std::move(b)).ok());
    }
  }
  Result<RecoveredState> rs = Recover(&fs, "/db", o);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  const std::int64_t settled = rs->chain->account()->allocated_bytes();
  EXPECT_EQ(rs->stats.wal_groups_replayed, static_cast<std::uint64_t>(kGroups));
  std::cout << "[          ] replay of " << kGroups << " groups setting a property of one element with a "
            << big.size() << "-byte value: " << rs->replay_end_allocated_bytes
            << " bytes held at the end of replay, " << settled << " bytes after publication\n";
  // O(graph), not O(groups x element): at most the settled graph twice over
  // plus a constant (the state at the end is one element).
  EXPECT_LT(rs->replay_end_allocated_bytes, 2 * settled + (std::int64_t{64} << 10));
  rs->chain->Shutdown();
}

}  // namespace
}  // namespace quiver
