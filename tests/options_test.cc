// Option validation at Open (include/quiver/options.h): every value that is
// nonsense, or that the engine's fixed-width fields cannot honour, is refused
// with InvalidArgument naming the field, before any file is touched; the
// boundary values are accepted.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

struct OptionCase {
  std::string field;  // must appear in the message
  std::function<void(Options&)> set;
  bool durable_only = false;  // checked only when the graph is durable
};

std::vector<OptionCase> BadOptions() {
  constexpr auto kSizeMax = std::numeric_limits<std::size_t>::max();
  return {
      {"durability", [](Options& o) { o.durability = static_cast<Durability>(7); }},
      {"max_string_bytes", [](Options& o) { o.limits.max_string_bytes = 0; }},
      {"max_string_bytes", [](Options& o) { o.limits.max_string_bytes = kMaxPropertyBytesCeiling + 1; }},
      {"max_string_bytes", [](Options& o) { o.limits.max_string_bytes = kSizeMax; }},
      {"max_vector_dims", [](Options& o) { o.limits.max_vector_dims = kMaxPropertyBytesCeiling / 4 + 1; }},
      {"max_list_elements",
       [](Options& o) { o.limits.max_list_elements = kMaxPropertyBytesCeiling / 4 + 1; }},
      {"max_batch_ops", [](Options& o) { o.limits.max_batch_ops = 0; }},
      // Op::prop_begin, NewVertex::index and friends are 32 bits wide.
      {"max_batch_ops", [](Options& o) { o.limits.max_batch_ops = std::size_t{1} << 32; }},
      {"max_properties_per_element", [](Options& o) { o.limits.max_properties_per_element = 0; }},
      {"max_properties_per_element",
       [](Options& o) { o.limits.max_properties_per_element = kMaxPropertyBytesCeiling / 16 + 1; }},
      {"max_property_bytes_per_element", [](Options& o) { o.limits.max_property_bytes_per_element = 0; }},
      {"max_property_bytes_per_element",
       [](Options& o) { o.limits.max_property_bytes_per_element = kMaxPropertyBytesCeiling + 1; }},
      {"max_degree", [](Options& o) { o.limits.max_degree = 0; }},
      {"max_degree", [](Options& o) { o.limits.max_degree = kMaxDegreeCeiling + 1; }},
      {"max_queued_batches", [](Options& o) { o.writer.max_queued_batches = 0; }},
      {"max_queued_bytes", [](Options& o) { o.writer.max_queued_bytes = 0; }},
      {"max_group_batches", [](Options& o) { o.writer.max_group_batches = 0; }},
      {"max_group_ops", [](Options& o) { o.writer.max_group_ops = 0; }},
      {"spin_microseconds", [](Options& o) { o.writer.spin_microseconds = kMaxSpinMicroseconds + 1; }},
      {"spin_microseconds",
       [](Options& o) { o.writer.spin_microseconds = std::numeric_limits<std::uint32_t>::max(); }},
      {"wal_segment_bytes", [](Options& o) { o.durable.wal_segment_bytes = 0; }, true},
      {"wal_segment_bytes", [](Options& o) { o.durable.wal_segment_bytes = kMinWalSegmentBytes - 1; }, true},
      {"wal_segment_bytes", [](Options& o) { o.durable.wal_segment_bytes = kMaxWalSegmentBytes + 1; }, true},
      {"checkpoint_wal_bytes",
       [](Options& o) { o.durable.checkpoint_wal_bytes = kMinCheckpointWalBytes - 1; }, true},
      {"io_threads", [](Options& o) { o.durable.io_threads = kMaxIoThreads + 1; }, true},
      {"io_threads", [](Options& o) { o.durable.io_threads = std::numeric_limits<std::uint32_t>::max(); },
       true},
      {"background_nice", [](Options& o) { o.background_nice = kMaxBackgroundNice + 1; }, false},
  };
}

TEST(OptionsTest, NonsenseIsRefusedAtOpenWithInvalidArgument) {
  for (const OptionCase& c : BadOptions()) {
    SCOPED_TRACE(c.field);
    Options o;
    c.set(o);
    {
      env::SimFileSystem fs;
      Result<std::unique_ptr<Graph>> g = GraphImpl::OpenDurable(o, "/db", &fs);
      ASSERT_FALSE(g.ok());
      EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << g.status().ToString();
      EXPECT_NE(g.status().message().find(c.field), std::string_view::npos) << g.status().ToString();
      // Refused before anything was created.
      EXPECT_FALSE(fs.Exists("/db").value());
    }
    Result<std::unique_ptr<Graph>> m = Graph::OpenInMemory(o);
    if (c.durable_only) {
      EXPECT_TRUE(m.ok()) << "durable options do not concern an in-memory graph: " << m.status().ToString();
    } else if (c.field != "durability") {  // OpenInMemory sets durability itself
      ASSERT_FALSE(m.ok());
      EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
      EXPECT_NE(m.status().message().find(c.field), std::string_view::npos) << m.status().ToString();
    }
  }
}

TEST(OptionsTest, BoundaryValuesAreAccepted) {
  std::vector<std::function<void(Options&)>> good = {
      [](Options&) {},
      [](Options& o) {
        o.limits.max_string_bytes = 1;
        o.limits.max_vector_dims = 0;
        o.limits.max_list_elements = 0;
        o.limits.max_batch_ops = 1;
        o.limits.max_properties_per_element = 1;
        o.limits.max_property_bytes_per_element = 1;
        o.limits.max_degree = 1;
      },
      [](Options& o) {
        o.limits.max_string_bytes = kMaxPropertyBytesCeiling;
        o.limits.max_vector_dims = kMaxPropertyBytesCeiling / 4;
        o.limits.max_list_elements = kMaxPropertyBytesCeiling / 4;
        o.limits.max_batch_ops = std::numeric_limits<std::uint32_t>::max();
        o.limits.max_properties_per_element = kMaxPropertyBytesCeiling / 16;
        o.limits.max_property_bytes_per_element = kMaxPropertyBytesCeiling;
        o.limits.max_degree = kMaxDegreeCeiling;
      },
      [](Options& o) {
        o.writer.max_queued_batches = 1;
        o.writer.max_group_batches = 1;
        o.writer.max_group_ops = 1;
        o.writer.spin_microseconds = 0;
      },
      [](Options& o) { o.writer.spin_microseconds = kMaxSpinMicroseconds; },
      [](Options& o) {
        o.durable.wal_segment_bytes = kMinWalSegmentBytes;
        o.durable.checkpoint_wal_bytes = kMinCheckpointWalBytes;
        o.durable.checkpoint_interval_ms = std::numeric_limits<std::uint32_t>::max();
        o.durable.io_threads = kMaxIoThreads;
        o.background_nice = kMaxBackgroundNice;
      },
      [](Options& o) {
        o.durable.wal_segment_bytes = kMaxWalSegmentBytes;
        o.durable.checkpoint_wal_bytes = 0;
        o.durable.io_threads = 0;
        o.background_nice = 0;
      },
  };
  for (std::size_t i = 0; i < good.size(); ++i) {
    SCOPED_TRACE(i);
    Options o;
    good[i](o);
    o.durable.checkpoint_on_close = false;
    env::SimFileSystem fs;
    Result<std::unique_ptr<Graph>> g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    WriteBatch b;
    b.AddVertex("V");
    EXPECT_TRUE((*g)->Write(std::move(b)).ok());
    EXPECT_TRUE(Graph::OpenInMemory(o).ok());
  }
}

}  // namespace
}  // namespace quiver
