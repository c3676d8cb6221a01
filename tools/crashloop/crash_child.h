// The crash loop's child: opens the graph (running recovery), then commits
// deterministic batches from several producer threads until the parent
// kills it, reporting every step on the pipe (child_log.h).
//
// Commit ids are iteration * kIdsPerIteration + 1, 2, ...: unique across
// the iterations of a run, so a commit that reappears in a later iteration
// is recognised as the one written earlier.
#ifndef QUIVER_TOOLS_CRASHLOOP_CRASH_CHILD_H_
#define QUIVER_TOOLS_CRASHLOOP_CRASH_CHILD_H_

#include <cstdint>
#include <string>

#include "iteration_plan.h"

namespace quiver::crashloop {

inline constexpr std::uint64_t kIdsPerIteration = 1'000'000;

struct ChildArgs {
  std::string dir;
  std::uint64_t seed = 0;
  std::uint64_t iteration = 0;
  FsMode mode = FsMode::kPosix;
  std::uint32_t producers = 4;
  int fd = 3;  // the pipe's write end
  // The negative control (lying_file_system.h): WAL syncs report success
  // without syncing. Buffered mode only.
  bool lie_about_wal_sync = false;
};

// Runs until killed. Returns (exit status) only if the graph does not open:
// 1 after reporting "E open ...". Ends the process itself if the parent
// goes away or, as a backstop, after ten minutes.
int RunChild(const ChildArgs& args);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_CRASH_CHILD_H_
