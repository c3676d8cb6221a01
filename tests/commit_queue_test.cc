// CommitQueue (src/write/commit_queue.h): closing the queue ends the
// writer's spin for work at once, so destroying a graph never waits out a
// spin, however long the configured one.
#include "write/commit_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

namespace quiver {
namespace {

// Before the fix PopGroup spun through its whole budget (here 71 minutes)
// after Close, and this test hung until ctest's timeout killed it.
TEST(CommitQueueTest, CloseEndsTheWritersSpinForWork) {
  CommitQueue queue(4, std::numeric_limits<std::uint32_t>::max());
  std::vector<WriteRequest*> group;
  bool popped = true;
  std::thread writer([&] { popped = queue.PopGroup(&group, 8, 100); });
  queue.Close();
  writer.join();
  EXPECT_FALSE(popped);
  EXPECT_TRUE(group.empty());
  // Closed before the writer looks: no spin either.
  EXPECT_FALSE(queue.PopGroup(&group, 8, 100));
}

}  // namespace
}  // namespace quiver
