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

#include "figure.h"
#include "quiver/quiver.h"

namespace quiver::capacity {

inline constexpr std::uint64_t kSeed = 20260805;
inline constexpr std::uint64_t kBuildBatchOps = 100'000;

// SplitMix64: a few instructions per draw, identical on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) for n < 2^32 (multiply-shift).
  std::uint64_t Uniform(std::uint64_t n) { return ((Next() >> 32) * n) >> 32; }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

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

// Aborts with `what` and the status: a bench has no recovery path for a failed build.
[[noreturn]] void Die(const std::string& what, const Status& status);

template <typename T>
T ValueOrDie(Result<T> r, const std::string& what) {
  if (!r.ok()) Die(what, r.status());
  return std::move(r).value();
}

// Commits batches keeping one in flight.
class PipelinedWriter {
 public:
  explicit PipelinedWriter(Graph& graph) : graph_(graph) {}
  ~PipelinedWriter() { Drain(); }
  PipelinedWriter(const PipelinedWriter&) = delete;
  PipelinedWriter& operator=(const PipelinedWriter&) = delete;
  // Queues `batch`; returns the commit of the batch queued before it, if any.
  std::optional<CommitInfo> Submit(WriteBatch batch);
  std::optional<CommitInfo> Drain();

 private:
  Graph& graph_;
  std::future<Result<CommitInfo>> pending_;
};

// Adds `count` vertices labelled "V"; returns the first id (ids are checked to be dense).
VertexId AddVertices(Graph& graph, std::uint64_t count);

// Adds edges produced by `next(i)` for i in [0, count): (source, target).
void AddEdges(Graph& graph, std::uint64_t count,
              const std::function<std::pair<std::uint64_t, std::uint64_t>(std::uint64_t)>& next);

// Adds the shape's edges over the vertices [first, first + shape.vertices).
void AddShapeEdges(Graph& graph, const Shape& shape, VertexId first);

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
// caller's thread is one of them) and returns the sum of the results.
std::uint64_t ParallelSum(std::uint64_t n, int threads,
                          const std::function<std::uint64_t(std::uint64_t, std::uint64_t)>& fn);

// One sweep over every out-edge of [first, first + n): sums the neighbour ids.
std::uint64_t SweepQuiver(const Snapshot& snapshot, VertexId first, std::uint64_t n, int threads);
std::uint64_t SweepCsr(const Csr& csr, int threads);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_GRAPHS_H_
