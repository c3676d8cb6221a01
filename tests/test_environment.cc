// Process-wide settings of every gtest binary, made before main
// (quiver_add_gtest_binary in tests/CMakeLists.txt adds this file to each).
#include <algorithm>
#include <cstdint>

#include "graph_impl.h"
#include "test_util.h"
#include "wal/wal_writer.h"

namespace quiver::test_util {
namespace {

// WAL segments are zero-filled ahead by 64 KiB instead of the engine's
// 1 MiB (wal_writer.h). The simulated file system copies a file whole at
// every clone, crash image and recovery rewrite, so a megabyte of zeros
// per segment was most of what the durable sweeps did: under ASan the
// index crash sweep took 40 s instead of 8 and the durable allocation
// sweep 128 s instead of 62. The fill logic is the same at either step;
// QUIVER_WAL_FILL_STEP sets another (0: the engine's own).
const bool kWalFillStepSet = [] {
  wal::WalWriter::SetFillStepForTesting(EnvOr("QUIVER_WAL_FILL_STEP", std::uint64_t{64} << 10));
  return true;
}();

// WAL records are cut into fragments of at most 64 KiB instead of 1 MiB:
// the random workloads' values "over one fragment" (random_workload.h) are
// sized from WalWriter::MaxFragment(), and at a megabyte each the crash
// sweeps spent most of their time copying them at every clone and crash
// image. Readers take any fragment up to the format's 1 MiB, so this is
// the same format, fragmented more often. QUIVER_WAL_MAX_FRAGMENT sets
// another (0: the engine's own).
const bool kWalMaxFragmentSet = [] {
  const std::uint64_t bytes = EnvOr("QUIVER_WAL_MAX_FRAGMENT", std::uint64_t{64} << 10);
  wal::WalWriter::SetMaxFragmentForTesting(
      static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, wal::kMaxFragment)));
  return true;
}();

// Background compaction (Options::compaction) stays off in graphs opened
// with its default threshold: it starts in idle gaps, which the sanitizers
// and a loaded machine stretch at random, and a pass moves blocks under
// tests that count memory, frees or allocations. The compactor's own tests
// (compactor_test.cc, concurrency_compact_test.cc) set a threshold of their
// own. QUIVER_TEST_DEFAULT_COMPACTION=1 leaves the default on, to run the
// suite with the compactor as applications get it.
const bool kDefaultCompactionOff = [] {
  GraphImpl::SetDefaultCompactionOffForTesting(EnvOr("QUIVER_TEST_DEFAULT_COMPACTION", std::uint64_t{0}) ==
                                               0);
  return true;
}();

}  // namespace
}  // namespace quiver::test_util
