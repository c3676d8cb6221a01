// IterationPlan: every random choice of one crash-loop iteration, drawn from
// (seed, iteration) so a run replays its choices from its seed, and the
// child derives its half from its own command line without being told.
//
// Options are re-randomised per iteration (as RocksDB's db_crashtest does
// after each crash): WAL segment size, checkpoint triggers, group size,
// spinning, early-writeback leaks in the buffered file system, explicit
// Checkpoint() calls. All of them keep checkpoints and segment rotation
// frequent enough that kills land in them.
//
// Thread safety: plain functions of their arguments.
#ifndef QUIVER_TOOLS_CRASHLOOP_ITERATION_PLAN_H_
#define QUIVER_TOOLS_CRASHLOOP_ITERATION_PLAN_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "quiver/options.h"

namespace quiver::crashloop {

// How the child reaches the disk.
enum class FsMode : std::uint8_t {
  kPosix,     // Graph::Open: a kill -9 is a process crash, the page cache survives
  kBuffered,  // GraphImpl::OpenDurable on a BufferedFileSystem: a kill -9 is a power cut
};

std::string_view FsModeName(FsMode mode);
std::optional<FsMode> ParseFsMode(std::string_view name);

// One index operation of a child's index thread: CreateIndex or DropIndex
// of IndexCatalog()[spec] (index_catalog.h; never 0, the upserts' index),
// `delay_ms` after the previous step (the first: after the producers
// started), so builds run beside commits and kills land in them.
struct IndexStep {
  bool drop = false;
  std::uint32_t spec = 1;
  std::uint32_t delay_ms = 0;
};

// What the child does.
struct ChildPlan {
  Options options;                     // durable, small segments, small checkpoint triggers
  std::uint32_t leak_one_in = 0;       // BufferedFileSystem::Options::leak_one_in (buffered mode)
  std::uint32_t checkpoint_ms = 0;     // explicit Checkpoint() about this often; 0: never
  std::vector<IndexStep> index_steps;  // in order, on one thread
};

// When the parent kills the child.
struct KillPlan {
  // True: the delay counts from the child's "open-start" line, so the kill
  // lands in recovery (or just after it). False: from its "open-done" line,
  // so the kill lands in the commit loop whatever recovery took.
  bool during_open = false;
  std::uint64_t delay_us = 0;
};

struct KillRange {
  std::uint32_t min_ms = 20;
  std::uint32_t max_ms = 300;
  std::uint32_t early_percent = 10;  // iterations whose kill aims at recovery
  // Upper bound of an early kill's delay: at least 5 ms, more once
  // recoveries are seen to take longer.
  std::uint64_t early_window_us = 5000;
};

ChildPlan PlanChild(std::uint64_t seed, std::uint64_t iteration);
KillPlan PlanKill(std::uint64_t seed, std::uint64_t iteration, const KillRange& range);
// Whether the parent's Close() after verifying writes a checkpoint.
bool PlanParentCheckpoint(std::uint64_t seed, std::uint64_t iteration);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_ITERATION_PLAN_H_
