// The figure families of the capacity bench and what they share while the bench runs.
//
// Each family has a Plan function (registers its steps and time estimates with Progress before
// anything runs) and a Run function (returns the family's value in the report: an array of rows).
// Families run in the order of kFamilies; the machine ceilings run first, since every family's
// efficiency ratios point into them.
#ifndef QUIVER_BENCH_CAPACITY_FAMILIES_H_
#define QUIVER_BENCH_CAPACITY_FAMILIES_H_

#include <array>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "figure.h"
#include "graphs.h"
#include "profile.h"
#include "progress.h"

namespace quiver::capacity {

inline constexpr std::array<std::string_view, 12> kFamilies = {
    "ceilings", "memory", "writes",    "checkpoint", "load",   "traversal",
    "latency",  "online", "analytics", "indexes",    "import", "engine"};

struct Context {
  const Profile& profile;
  // A directory the bench created for this run; removed at the end.
  std::string data_dir;
  Progress& progress;
  // The report's "ceilings" object: families read the machine ceilings and add CSR rows.
  Json& ceilings;
  std::set<std::string, std::less<>> selected;
  // Graphs the memory family built that the traversal family reuses (same shape, same seed).
  std::vector<std::pair<Shape, BuiltGraph>> shared;

  bool Selected(std::string_view family) const { return selected.count(family) != 0; }
  // A fresh, empty directory data_dir/name.
  std::string FreshDir(const std::string& name) const;
  void RemoveDir(const std::string& dir) const;
  // The logical cores of this machine (at least 1).
  int Cores() const;
};

// The computed memory floor the memory family compares with ("ceilings"/"memoryFloor").
Json MemoryFloor();
void PlanMemory(Context& ctx);
Json RunMemory(Context& ctx);
void PlanWrites(Context& ctx);
Json RunWrites(Context& ctx);
// Checkpoint and load share their graphs: RunCheckpointAndLoad fills whichever is selected.
void PlanCheckpointAndLoad(Context& ctx);
void RunCheckpointAndLoad(Context& ctx, Json* checkpoint, Json* load);
void PlanTraversal(Context& ctx);
Json RunTraversal(Context& ctx);
// The traversal family's layout rows (the report's "traversalLayout"): planned by PlanTraversal.
Json RunTraversalLayout(Context& ctx);
void PlanLatency(Context& ctx);
Json RunLatency(Context& ctx);
void PlanOnline(Context& ctx);
Json RunOnline(Context& ctx);
void PlanAnalytics(Context& ctx);
Json RunAnalytics(Context& ctx);
void PlanIndexes(Context& ctx);
Json RunIndexes(Context& ctx);
void PlanImport(Context& ctx);
Json RunImport(Context& ctx);
void PlanEngine(Context& ctx);
Json RunEngine(Context& ctx);

// Closes `graph`; a failure aborts the bench.
void CheckClose(Graph& graph);

// Resident set size of this process in bytes (/proc/self/statm), 0 if unknown.
std::uint64_t ResidentBytes();

// Rough build-time estimate for the progress plan: seconds to add `vertices` and `edges`.
double EstimateBuildSeconds(std::uint64_t vertices, std::uint64_t edges);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_FAMILIES_H_
