// Each decision uses its own stream of (seed, iteration), so adding a choice
// to one plan does not shift the others.
#include "iteration_plan.h"

#include <array>

#include "env/random.h"
#include "index_catalog.h"

namespace quiver::crashloop {
namespace {

enum Stream : std::uint64_t { kChildStream = 1, kKillStream = 2, kParentStream = 3, kIndexStream = 4 };

env::Rng StreamRng(std::uint64_t seed, std::uint64_t iteration, Stream s) {
  return env::Rng::Derive(seed, iteration * 8 + s);
}

template <typename T, std::size_t N>
T Pick(env::Rng& rng, const std::array<T, N>& choices) {
  return choices[rng.Uniform(N)];
}

}  // namespace

std::string_view FsModeName(FsMode mode) { return mode == FsMode::kPosix ? "posix" : "buffered"; }

std::optional<FsMode> ParseFsMode(std::string_view name) {
  if (name == "posix") return FsMode::kPosix;
  if (name == "buffered") return FsMode::kBuffered;
  return std::nullopt;
}

ChildPlan PlanChild(std::uint64_t seed, std::uint64_t iteration) {
  env::Rng rng = StreamRng(seed, iteration, kChildStream);
  ChildPlan p;
  DurableOptions& d = p.options.durable;
  d.wal_segment_bytes = Pick(rng, std::array<std::uint64_t, 4>{4 << 10, 16 << 10, 64 << 10, 256 << 10});
  d.checkpoint_wal_bytes = Pick(rng, std::array<std::uint64_t, 4>{32 << 10, 128 << 10, 512 << 10, 0});
  d.checkpoint_interval_ms = Pick(rng, std::array<std::uint32_t, 3>{0, 20, 100});
  if (d.checkpoint_wal_bytes == 0 && d.checkpoint_interval_ms == 0) d.checkpoint_interval_ms = 50;
  d.checkpoint_on_close = true;  // never reached: the child is killed
  WriterOptions& w = p.options.writer;
  w.max_group_batches = Pick(rng, std::array<std::size_t, 3>{1, 8, 1024});
  w.spin_microseconds = Pick(rng, std::array<std::uint32_t, 2>{0, 50});
  p.leak_one_in = Pick(rng, std::array<std::uint32_t, 3>{0, 4, 32});
  p.checkpoint_ms = Pick(rng, std::array<std::uint32_t, 4>{0, 0, 15, 60});
  // Three iterations in four declare or drop indexes (1-3 steps); the others
  // commit with the index set unchanged.
  env::Rng irng = StreamRng(seed, iteration, kIndexStream);
  if (!irng.OneIn(4)) {
    for (std::uint64_t n = 1 + irng.Uniform(3); n > 0; --n) {
      IndexStep step;
      step.drop = irng.Uniform(5) < 2;
      step.spec = 1 + static_cast<std::uint32_t>(irng.Uniform(IndexCatalog().size() - 1));
      step.delay_ms = static_cast<std::uint32_t>(irng.Uniform(120));
      p.index_steps.push_back(step);
    }
  }
  return p;
}

KillPlan PlanKill(std::uint64_t seed, std::uint64_t iteration, const KillRange& range) {
  env::Rng rng = StreamRng(seed, iteration, kKillStream);
  KillPlan k;
  k.during_open = rng.Uniform(100) < range.early_percent;
  if (k.during_open) {
    k.delay_us = rng.Uniform(range.early_window_us + 1);
  } else {
    const std::uint64_t lo = std::uint64_t{range.min_ms} * 1000, hi = std::uint64_t{range.max_ms} * 1000;
    k.delay_us = lo + rng.Uniform(hi - lo + 1);
  }
  return k;
}

bool PlanParentCheckpoint(std::uint64_t seed, std::uint64_t iteration) {
  return StreamRng(seed, iteration, kParentStream).OneIn(2);
}

}  // namespace quiver::crashloop
