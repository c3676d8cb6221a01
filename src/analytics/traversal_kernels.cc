// BFS, WCC and SSSP: the kernels that follow edges from vertex to vertex.
//
// BFS is level-synchronous and direction-optimising (analytics/bfs.h): it
// pushes from a small frontier and pulls into the unvisited vertices when the
// frontier is large.
//
// SSSP is delta-stepping (analytics/delta_stepping.h).
//
// WCC is Afforest (analytics/afforest.h): its links always point from the
// larger dense id to the smaller, so a tree's root is its smallest member and
// the component label is canonical whatever order the links ran in.
#include <functional>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analytics/afforest.h"
#include "analytics/bfs.h"
#include "analytics/delta_stepping.h"
#include "analytics/parallel_loop.h"
#include "quiver/analytics.h"

namespace quiver {

using analytics::CancelRequested;
using analytics::kBlock;
using analytics::KernelCancelled;
using analytics::ParallelBlocks;
using analytics::Step;
using analytics::ThreadsFor;

namespace {

// The kernels' answers to running out of memory, built before main: making
// one must not allocate.
enum class Kernel { kBfs, kWcc, kSssp };
const Status& OutOfMemory(Kernel k) {
  static const Status* const s[] = {
      new Status(internal::ImmortalStatus(StatusCode::kResourceExhausted, "Bfs: out of memory")),
      new Status(internal::ImmortalStatus(StatusCode::kResourceExhausted, "Wcc: out of memory")),
      new Status(internal::ImmortalStatus(StatusCode::kResourceExhausted, "Sssp: out of memory"))};
  return *s[static_cast<int>(k)];
}
[[maybe_unused]] const bool out_of_memory_built = (OutOfMemory(Kernel::kBfs), true);

Status NotInProjection(const char* kernel, VertexId v) {
  return NotFoundError(std::string(kernel) + ": vertex " + std::to_string(v.value()) +
                       " is not in the projection (removed, or outside its labels)");
}

}  // namespace

Result<std::vector<std::int64_t>> Bfs(const Projection& p, VertexId source, const RunOptions& run) {
  static_assert(kUnreachableDepth == analytics::kBfsUnreached && analytics::kBfsBlock == kBlock);
  if (!p.has_out()) return FailedPreconditionError("Bfs: the projection has no out adjacency");
  const std::optional<std::uint32_t> s = p.ToDense(source);
  if (!s) return NotInProjection("Bfs", source);
  const unsigned threads = ThreadsFor(run);
  auto for_blocks = [&](std::string_view phase, std::uint64_t n,
                        const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& fn) {
    return ParallelBlocks(
        run, threads, n, phase,
        [&](unsigned, std::uint64_t blk, std::uint64_t b, std::uint64_t e) { fn(blk, b, e); });
  };
  std::vector<std::int64_t> depth;
  try {
    if (!analytics::DirectionOptimizingBfs(
            p, *s, p.has_in(), for_blocks,
            [&](std::int64_t level) { return Step(run, "bfs level", static_cast<std::uint64_t>(level), 0); },
            &depth))
      return KernelCancelled("Bfs");
  } catch (const std::bad_alloc&) {
    return OutOfMemory(Kernel::kBfs);
  }
  return depth;
}

Result<std::vector<VertexId>> Wcc(const Projection& p, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Wcc: the projection has no out adjacency");
  const unsigned threads = ThreadsFor(run);
  std::vector<std::uint32_t> comp;
  auto for_blocks = [&](std::string_view phase, std::uint64_t n,
                        const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
    return ParallelBlocks(run, threads, n, phase,
                          [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) { fn(b, e); });
  };
  std::vector<VertexId> component;
  try {
    if (!analytics::Afforest(p, p.has_in(), p.undirected(), for_blocks, &comp)) return KernelCancelled("Wcc");
    component.resize(comp.size());
    const bool done = ParallelBlocks(run, threads, comp.size(), "wcc label",
                                     [&](unsigned, std::uint64_t, std::uint64_t b, std::uint64_t e) {
                                       for (std::uint64_t v = b; v < e; ++v)
                                         component[v] = p.ToVertexId(comp[v]);
                                     });
    if (!done) return KernelCancelled("Wcc");
  } catch (const std::bad_alloc&) {
    return OutOfMemory(Kernel::kWcc);
  }
  return component;
}

Result<std::vector<double>> Sssp(const Projection& p, VertexId source, const RunOptions& run) {
  if (!p.has_out()) return FailedPreconditionError("Sssp: the projection has no out adjacency");
  if (!p.weighted())
    return FailedPreconditionError("Sssp: the projection has no weights (ProjectionSpec::weight_property)");
  if (p.negative_weight_edge())
    return InvalidArgumentError("Sssp: edge " + std::to_string(p.negative_weight_edge()->value()) +
                                " has a negative weight");
  const std::optional<std::uint32_t> s = p.ToDense(source);
  if (!s) return NotInProjection("Sssp", source);
  std::vector<double> dist;
  const analytics::DeltaSteppingEnd end = analytics::DeltaStepping(
      p, *s, ThreadsFor(run), [&] { return CancelRequested(run); },
      [&](std::uint64_t expanded) { Step(run, "sssp vertices expanded", expanded, p.vertex_count()); },
      &dist);
  if (end == analytics::DeltaSteppingEnd::kCancelled) return KernelCancelled("Sssp");
  if (end == analytics::DeltaSteppingEnd::kOutOfMemory) return OutOfMemory(Kernel::kSssp);
  return dist;
}

}  // namespace quiver
