// The analytics ceiling both benches measure against (the capacity bench's analytics family and
// bench/micro/analytics_bench.cc): a raw compressed-sparse-row copy of a snapshot's edges and the
// Graphalytics kernels written directly on its arrays, the least any engine could do for the same
// answers on the same machine.
//
// Layout (the floor Projection is compared with): 64-bit offsets, 32-bit neighbour ids, out and
// in, each vertex's neighbours sorted by id (out weights beside them, sorted with them). Kernels
// run on `threads` threads over dynamically handed-out chunks of 4,096 vertices, the same
// algorithms as src/analytics (pull PageRank, direction-optimising level-synchronous BFS,
// Afforest over a lock-free union-find, sort-and-count CDLP, mark-array LCC, delta-stepping
// SSSP), so a
// ratio to them measures what Quiver's abstractions cost, not a different algorithm.
#ifndef QUIVER_BENCH_COMMON_RAW_KERNELS_H_
#define QUIVER_BENCH_COMMON_RAW_KERNELS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "quiver/quiver.h"

namespace quiver::bench {

struct RawCsr {
  std::vector<std::uint64_t> offsets;  // n + 1
  std::vector<std::uint32_t> targets;
  std::vector<double> weights;  // parallel to targets; empty when not built
  std::span<const std::uint32_t> Neighbors(std::uint32_t v) const {
    return {targets.data() + offsets[v], targets.data() + offsets[v + 1]};
  }
  std::span<const double> Weights(std::uint32_t v) const {
    return {weights.data() + offsets[v], weights.data() + offsets[v + 1]};
  }
  std::uint64_t Bytes() const { return offsets.size() * 8 + targets.size() * 4 + weights.size() * 8; }
};

struct RawGraph {
  std::uint32_t n = 0;
  RawCsr out;  // with weights
  RawCsr in;   // without
};

// Copies the out-edges of vertices [first, first + n) of `snapshot` (every edge type; neighbours
// must lie in the same range) and, if `weight_key` is given, their weights under it (int64 or
// double; a missing one dies), then derives the in adjacency. Untimed set-up: plain loops through
// the public API.
RawGraph BuildRawGraph(const Snapshot& snapshot, VertexId first, std::uint64_t n,
                       std::optional<PropertyKeyId> weight_key);

// Runs fn(worker, begin, end) over [0, n) in chunks of 4,096 handed out to `threads` threads
// (worker < threads; the caller's thread is worker 0).
void ForChunks(std::uint64_t n, int threads,
               const std::function<void(int worker, std::uint64_t begin, std::uint64_t end)>& fn);

// The sum of every target id of `csr` (a sweep), on `threads` threads.
std::uint64_t RawSweep(const RawCsr& csr, int threads);

std::vector<double> RawPageRank(const RawGraph& g, int iterations, int threads);
std::vector<std::int64_t> RawBfs(const RawGraph& g, std::uint32_t source, int threads);
// Component label: the smallest member's id.
std::vector<std::uint32_t> RawWcc(const RawGraph& g, int threads);
std::vector<std::uint32_t> RawCdlp(const RawGraph& g, int iterations, int threads);
std::vector<double> RawLcc(const RawGraph& g, int threads);
// Delta-stepping, as quiver::Sssp: the library's template (analytics/delta_stepping.h) on the raw
// arrays, so its ratio is the Projection's cost alone.
std::vector<double> RawSssp(const RawGraph& g, std::uint32_t source, int threads);

}  // namespace quiver::bench

#endif  // QUIVER_BENCH_COMMON_RAW_KERNELS_H_
