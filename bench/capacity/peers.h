// External graph libraries the analytics family runs beside Quiver, on the same edges in the same
// run: Boost.Graph (header-only; a bidirectional compressed_sparse_row_graph) and igraph's C
// library (an igraph_t). Both are optional build dependencies of quiver-bench alone (CMake finds
// them and defines QUIVER_BENCH_HAVE_BOOST_GRAPH / QUIVER_BENCH_HAVE_IGRAPH); the library never
// links them. A peer that was not found is reported "not measured (...)", never as zero.
//
// Each peer's graph is built from the raw CSR outside the timed bracket; a kernel's time is the
// median of `repeats` calls; each result is checked against the raw CSR kernel where the
// definitions agree (BFS depths, component partitions, SSSP distances) and the difference of
// definition is stated where they do not (Boost's page_rank spreads no sink mass and adds (1 - d)
// rather than (1 - d) / V; igraph's transitivity reads the graph as undirected).
#ifndef QUIVER_BENCH_CAPACITY_PEERS_H_
#define QUIVER_BENCH_CAPACITY_PEERS_H_

#include <memory>
#include <optional>
#include <string>

#include "common/raw_kernels.h"

namespace quiver::capacity {

// The raw CSR ceiling (bench/common), by name in this bench.
using bench::BuildRawGraph;
using bench::RawBfs;
using bench::RawCdlp;
using bench::RawGraph;
using bench::RawLcc;
using bench::RawPageRank;
using bench::RawSssp;
using bench::RawSweep;
using bench::RawWcc;

// One peer kernel's measurement: seconds (median), or the reason it was not measured.
struct PeerTime {
  std::string library;   // "boostGraph" or "igraph"
  std::string function;  // the call timed
  std::optional<double> seconds;
  std::string reason;  // why seconds is empty
  std::string note;    // how its definition differs from the Graphalytics one, if it does
};

// The kernels the analytics family asks the peers for.
enum class PeerKernel { kPageRank, kBfs, kWcc, kLcc, kSssp };

class Peers {
 public:
  // Builds each available peer's graph from `g` (untimed).
  explicit Peers(const RawGraph& g);
  ~Peers();
  Peers(const Peers&) = delete;
  Peers& operator=(const Peers&) = delete;

  // The peers' times for `kernel` (PageRank: `iterations`; BFS and SSSP from `source`), each
  // the median of `repeats` runs; a library that has no such kernel is absent from the list.
  std::vector<PeerTime> Run(PeerKernel kernel, int iterations, std::uint32_t source, int repeats);

 private:
  struct Boost;
  struct Igraph;
  const RawGraph& g_;
  std::unique_ptr<Boost> boost_;
  std::unique_ptr<Igraph> igraph_;
};

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_PEERS_H_
