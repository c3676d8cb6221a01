// Deterministic graphs for the capacity bench, built through the public API only.
//
// Every graph is bare: vertices labelled "V", edges of one type "E", no properties. Vertices are
// added first (ids dense from the first one, which the builders check), then edges, in batches of
// kBuildBatchOps operations with one batch in flight (WriteAsync), so building batch k+1 overlaps
// the writer applying batch k. Random draws come from SplitMix64 with a fixed seed per shape, so a
// shape is the same graph on every machine and every run.
//
// Target distributions:
//   uniform    vertex i has exactly `out_degree` out-edges, each to a uniformly random vertex
//              (pessimistic for caches, as in Fallen-8's bench);
//   power-law  V x out_degree edges whose sources and targets are each drawn from a Zipf(1)
//              distribution (rank r with probability ~ 1/(r+1)) mapped through a fixed affine
//              permutation of the ids, so hubs are scattered over the id space.
// The latency graph (LatencyShape) is described in latency_family.cc.
#ifndef QUIVER_BENCH_CAPACITY_GRAPHS_H_
#define QUIVER_BENCH_CAPACITY_GRAPHS_H_

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/bench_common.h"
#include "figure.h"
#include "quiver/quiver.h"

namespace quiver::capacity {

inline constexpr std::uint64_t kSeed = 20260805;

using bench::Die;
using bench::kBuildBatchOps;
using bench::PipelinedWriter;
using bench::Rng;
using bench::ValueOrDie;

enum class Targets { kUniform, kPowerLaw };

struct Shape {
  std::uint64_t vertices = 0;
  std::uint32_t out_degree = 0;
  Targets targets = Targets::kUniform;

  std::uint64_t edges() const { return vertices * out_degree; }
  std::uint64_t elements() const { return vertices + edges(); }
  // "200000x10" or "200000x10-power-law".
  std::string label() const;
  // {"label", "vertices", "outDegree", "edges", "targets"}.
  Json ToJson() const;
  friend bool operator==(const Shape&, const Shape&) = default;
};

// Adds `count` vertices labelled "V"; returns the first id (ids are checked to be dense).
inline VertexId AddVertices(Graph& graph, std::uint64_t count) {
  return bench::AddVertices(graph, count, "V");
}

// Adds edges of type "E" produced by `next(i)` for i in [0, count): (source, target).
template <typename NextFn>
void AddEdges(Graph& graph, std::uint64_t count, NextFn&& next) {
  bench::AddEdges(graph, count, "E", std::forward<NextFn>(next));
}

// Adds the shape's edges over the vertices [first, first + shape.vertices).
void AddShapeEdges(Graph& graph, const Shape& shape, VertexId first);

// The options every bench graph opens with: the defaults, less background
// compaction (Options::compaction). A row measures the layout its writes
// left, or one it made with Graph::Compact itself (the traversal family's
// layout rows); a pass started by an idle gap would also take a core from
// the timed loops of whatever row runs next.
Options BenchOptions();

struct BuiltGraph {
  std::unique_ptr<Graph> graph;
  VertexId first;
  double vertex_seconds = 0;
  double edge_seconds = 0;
};

// A volatile graph holding `shape`.
BuiltGraph BuildVolatile(const Shape& shape);

// Compressed sparse rows of a snapshot's out-edges over [first, first + n): offsets and 8-byte
// neighbour ids, the least any engine could read for the same sweep.
struct Csr {
  std::vector<std::uint64_t> offsets;     // n + 1
  std::vector<std::uint64_t> neighbours;  // offsets[n]
  std::uint64_t first = 0;
};
Csr BuildCsr(const Snapshot& snapshot, VertexId first, std::uint64_t n);

// Runs fn(begin, end) over [0, n) in chunks handed out dynamically to `threads` threads (the
// caller's thread is one of them) and returns the sum of the results. When `cpu_ns` is given
// (one slot per thread, the caller's first), each thread adds its own CPU time to its slot.
std::uint64_t ParallelSum(std::uint64_t n, int threads,
                          const std::function<std::uint64_t(std::uint64_t, std::uint64_t)>& fn,
                          std::vector<std::uint64_t>* cpu_ns = nullptr);

// One sweep over every out-edge of [first, first + n): sums the neighbour ids. `cpu_ns` as in
// ParallelSum.
std::uint64_t SweepQuiver(const Snapshot& snapshot, VertexId first, std::uint64_t n, int threads,
                          std::vector<std::uint64_t>* cpu_ns = nullptr);
std::uint64_t SweepCsr(const Csr& csr, int threads);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_GRAPHS_H_
