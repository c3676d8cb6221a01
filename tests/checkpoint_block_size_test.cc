// A checkpoint of any graph the API accepts must load again. The writer never
// splits an element across blocks, and the reader refuses blocks above
// a 64 MiB block cap (since removed), so one element whose properties add
// up to more than that, which the default Limits allow, is the edge case.
// (Heavy: about 70 MiB per copy of the data.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

TEST(CheckpointBlockSizeTest, AnElementLargerThanTheBlockLimitStillReopens) {
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    // Five 13 MiB strings (each within Limits::max_string_bytes, 16 MiB):
    // 65 MiB of properties on one vertex.
    std::vector<Property> props;
    for (int i = 0; i < 5; ++i)
      props.push_back(
          {"p" + std::to_string(i), std::string(std::size_t{13} << 20, static_cast<char>('a' + i))});
    ASSERT_GT(5 * (std::size_t{13} << 20), std::size_t{64} << 20);  // the block cap this test once caught
    WriteBatch b;
    b.AddVertex("Big", props);
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  // Regression: the checkpoint's vertex block was over 64 MiB, LoadCheckpoint
  // rejected it as Corruption, and with no older checkpoint the graph could
  // not be opened although its WAL was intact.
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Snapshot s = (*g)->GetSnapshot();
  EXPECT_EQ(s.sequence(), 1u);
  EXPECT_EQ(s.vertex_count(), 1u);
}

}  // namespace
}  // namespace quiver
