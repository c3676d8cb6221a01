// quiver-traversal-cost: one kind of online traversal query, repeated on a fixed graph, for
// instruction counts per query (callgrind) and wall-clock quantiles beside a raw-array ceiling
// timed in the same run.
//
//   quiver-traversal-cost path|topk|expand2|expand3 [vertices] [queries]
//
//   path     ShortestPath, unweighted, out-direction, between random pairs of a graph of
//            `vertices` (default 200,000) x 10 uniform out-edges (the online family's shape);
//            ceiling: the same bidirectional BFS on a CSR of out- and in-edges.
//   topk     TopKNeighbors: the 20 heaviest of the 100 out-edges of a random hub by the double
//            edge property "w", 2,000 hubs (the online family's graph); ceiling:
//            partial_sort_copy of the same weights from a flat array.
//   expandN  Expand, deduplicating, to depth N from a random seed; ceiling: a BFS on the CSR.
//
// It prints the queries' mean work (TraversalStats), a checksum of every answer (so a change
// that must not alter results can be checked on a large graph), and the p50 / p95 of the engine
// and of the ceiling, each query timed alone with the tick counter. Instruction counts of the
// queries alone:
//
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='quiver::ShortestPath*'
//     build/release/bench/quiver-traversal-cost path 200000 200
//
// (quiver::TopKNeighbors*, quiver::Expand* for the others); divide the total by the queries.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/bench_common.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

constexpr std::uint64_t kSeed = 0x51ed2701;

struct Csr {
  std::vector<std::uint64_t> offsets, neighbours;  // dense indexes, not ids
};

Csr BuildCsr(const Snapshot& snap, std::uint64_t first, std::uint64_t n, Direction d) {
  Csr c;
  c.offsets.assign(n + 1, 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    c.offsets[i] = c.neighbours.size();
    for (const EdgeGroup& g :
         d == Direction::kOut ? snap.OutEdges(VertexId(first + i)) : snap.InEdges(VertexId(first + i)))
      for (const EdgeEntry& e : g.entries) c.neighbours.push_back(e.neighbor().value() - first);
  }
  c.offsets[n] = c.neighbours.size();
  return c;
}

// Bidirectional BFS on two CSRs (whole levels, the smaller frontier first, as Quiver's); returns
// the distance or -1. Marks: stamp[v] = generation * 2 + side + 1.
int CsrPath(const Csr* csr, std::vector<std::uint64_t>& stamp, std::uint64_t& gen,
            std::vector<std::uint64_t>* q, std::vector<std::uint32_t>& depth, std::uint64_t s,
            std::uint64_t t) {
  if (s == t) return 0;
  gen += 2;
  std::size_t begin[2] = {0, 0};
  for (int side = 0; side < 2; ++side) {
    q[side].clear();
    q[side].push_back(side == 0 ? s : t);
    stamp[side == 0 ? s : t] = gen + side;
    depth[side == 0 ? s : t] = 0;
  }
  while (true) {
    const std::size_t n0 = q[0].size() - begin[0], n1 = q[1].size() - begin[1];
    if (n0 == 0 || n1 == 0) return -1;
    const int side = n0 <= n1 ? 0 : 1;
    const std::size_t end = q[side].size();
    for (std::size_t i = begin[side]; i < end; ++i) {
      const std::uint64_t v = q[side][i];
      const Csr& c = csr[side];
      for (std::uint64_t j = c.offsets[v]; j < c.offsets[v + 1]; ++j) {
        const std::uint64_t n = c.neighbours[j];
        if (stamp[n] == gen + side) continue;
        if (stamp[n] == gen + 1 - side) return static_cast<int>(depth[v] + 1 + depth[n]);
        stamp[n] = gen + side;
        depth[n] = depth[v] + 1;
        q[side].push_back(n);
      }
    }
    begin[side] = end;
  }
}

std::uint64_t CsrExpand(const Csr& csr, std::vector<std::uint64_t>& stamp, std::uint64_t gen,
                        std::vector<std::uint64_t>& q, std::uint64_t seed, std::uint32_t depth) {
  q.clear();
  q.push_back(seed);
  stamp[seed] = gen;
  std::uint64_t reached = 0;
  std::size_t begin = 0;
  for (std::uint32_t d = 0; d < depth; ++d) {
    const std::size_t end = q.size();
    for (std::size_t i = begin; i < end; ++i)
      for (std::uint64_t j = csr.offsets[q[i]]; j < csr.offsets[q[i] + 1]; ++j) {
        const std::uint64_t n = csr.neighbours[j];
        if (stamp[n] == gen) continue;
        stamp[n] = gen;
        ++reached;
        q.push_back(n);
      }
    begin = end;
  }
  return reached;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

struct Timings {
  std::vector<double> engine, ceiling;
  std::uint64_t vertices = 0, edges = 0, checksum = 0;
  void Print(const char* what) const {
    const double n = static_cast<double>(engine.size());
    std::printf("%s: %zu queries, mean %.1f vertices visited, %.1f edges examined, checksum %016llx\n", what,
                engine.size(), static_cast<double>(vertices) / n, static_cast<double>(edges) / n,
                static_cast<unsigned long long>(checksum));
    std::printf("  engine  p50 %9.0f ns  p95 %9.0f ns\n", Quantile(engine, 0.5), Quantile(engine, 0.95));
    std::printf("  ceiling p50 %9.0f ns  p95 %9.0f ns  (ratio p50 %.2f, p95 %.2f)\n", Quantile(ceiling, 0.5),
                Quantile(ceiling, 0.95), Quantile(engine, 0.5) / Quantile(ceiling, 0.5),
                Quantile(engine, 0.95) / Quantile(ceiling, 0.95));
  }
};

std::uint64_t Mix(std::uint64_t h, std::uint64_t x) { return (h ^ x) * 0x100000001b3ULL + (h >> 29); }

template <typename Fn>
double Time(Fn&& fn) {
  const std::uint64_t t0 = ReadTicks();
  fn();
  return static_cast<double>(ReadTicks() - t0) * NanosecondsPerTick();
}

void RunPathsOrExpand(const std::string& mode, std::uint64_t n, std::size_t queries) {
  auto graph = ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
  const VertexId first = AddVertices(*graph, n, "V");
  Rng build(kSeed ^ n);
  AddEdges(*graph, n * 10, "E", [&](std::uint64_t i) {
    return std::pair(first.value() + i / 10, first.value() + build.Uniform(n));
  });
  const Snapshot snap = graph->GetSnapshot();
  const Csr csr[2] = {BuildCsr(snap, first.value(), n, Direction::kOut),
                      BuildCsr(snap, first.value(), n, Direction::kIn)};
  std::vector<std::uint64_t> stamp(n, 0), q[2];
  std::vector<std::uint32_t> depth(n, 0);
  std::uint64_t gen = 0;
  TraversalContext ctx;
  Rng rng(kSeed ^ 0x9a75);
  Timings t;
  if (mode == "path") {
    PathSpec spec;
    Path path;
    for (std::size_t i = 0; i < queries + 20; ++i) {
      const std::uint64_t s = rng.Uniform(n), d = rng.Uniform(n);
      bool found = false;
      TraversalStats stats;
      Status st;
      const double e = Time([&] {
        st = ShortestPath(snap, VertexId(first.value() + s), VertexId(first.value() + d), spec, ctx, &path,
                          &found, &stats);
      });
      int want = 0;
      const double c = Time([&] { want = CsrPath(csr, stamp, gen, q, depth, s, d); });
      if (!st.ok()) Die("ShortestPath", st);
      if (want != (found ? static_cast<int>(path.edges.size()) : -1))
        Die("ShortestPath", InternalError("the path's length differs from the CSR search's"));
      if (i < 20) continue;  // warm-up: the context's arrays, the caches
      t.engine.push_back(e);
      t.ceiling.push_back(c);
      t.vertices += stats.vertices_visited;
      t.edges += stats.edges_examined;
      t.checksum = Mix(t.checksum, found);
      for (VertexId v : path.vertices) t.checksum = Mix(t.checksum, v.value());
      for (EdgeId x : path.edges) t.checksum = Mix(t.checksum, x.value());
    }
    t.Print("path");
    return;
  }
  ExpandSpec spec;
  spec.seeds = {first};
  spec.max_depth = mode == "expand2" ? 2 : 3;
  std::uint64_t count = 0, sum = 0;
  const std::function<bool(const Visit&)> sink = [&](const Visit& v) {
    ++count;
    sum = Mix(sum, v.vertex.value());
    return true;
  };
  for (std::size_t i = 0; i < queries + 20; ++i) {
    const std::uint64_t seed = rng.Uniform(n);
    spec.seeds[0] = VertexId(first.value() + seed);
    count = 0;
    TraversalStats stats;
    Status st;
    const double e = Time([&] { st = Expand(snap, spec, ctx, sink, &stats); });
    std::uint64_t want = 0;
    const double c = Time([&] { want = CsrExpand(csr[0], stamp, ++gen, q[0], seed, spec.max_depth); });
    if (!st.ok()) Die("Expand", st);
    if (want != count) Die("Expand", InternalError("Expand and the CSR BFS reached different counts"));
    if (i < 20) continue;
    t.engine.push_back(e);
    t.ceiling.push_back(c);
    t.vertices += stats.vertices_visited;
    t.edges += stats.edges_examined;
  }
  t.checksum = sum;
  t.Print(mode.c_str());
}

void RunTopK(std::size_t queries) {
  constexpr std::uint64_t kHubs = 2'000, kDegree = 100;
  auto graph = ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
  Rng rng(kSeed ^ 0x70b4);
  std::vector<VertexId> hubs;
  std::vector<std::vector<double>> weights(kHubs);
  for (std::uint64_t h0 = 0; h0 < kHubs; h0 += 100) {
    WriteBatch b;
    std::vector<NewVertex> nv;
    for (std::uint64_t h = h0; h < h0 + 100; ++h) nv.push_back(b.AddVertex("V"));
    for (std::uint64_t h = h0; h < h0 + 100; ++h)
      for (std::uint64_t j = 0; j < kDegree; ++j) {
        const double w = static_cast<double>(rng.Uniform(1'000'000)) / 1e6;
        weights[h].push_back(w);
        b.AddEdge("E", nv[h - h0], nv[rng.Uniform(100)], {{"w", w}});
      }
    CommitInfo info = ValueOrDie(graph->Write(std::move(b)), "top-K build");
    hubs.insert(hubs.end(), info.vertices.begin(), info.vertices.end());
  }
  const Snapshot snap = graph->GetSnapshot();
  TraversalContext ctx;
  TopKSpec spec;
  spec.key = "w";
  spec.k = 20;
  std::vector<Neighbor> best;
  std::vector<double> top(20);
  Timings t;
  for (std::size_t i = 0; i < queries + 100; ++i) {
    const std::uint64_t h = rng.Uniform(kHubs);
    TraversalStats stats;
    Status st;
    const double e = Time([&] { st = TopKNeighbors(snap, hubs[h], spec, ctx, &best, &stats); });
    const double c = Time([&] {
      std::partial_sort_copy(weights[h].begin(), weights[h].end(), top.begin(), top.end(), std::greater<>());
    });
    if (!st.ok()) Die("TopKNeighbors", st);
    if (best.size() != 20 || best[0].score != top[0] || best[19].score != top[19])
      Die("TopKNeighbors", InternalError("differs from partial_sort_copy"));
    if (i < 100) continue;
    t.engine.push_back(e);
    t.ceiling.push_back(c);
    t.vertices += stats.vertices_visited;
    t.edges += stats.edges_examined;
    for (const Neighbor& b : best) t.checksum = Mix(t.checksum, b.edge.value());
  }
  t.Print("topk");
}

}  // namespace
}  // namespace quiver::bench

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const std::uint64_t vertices = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200'000;
  const std::size_t queries = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 2'000;
  if (mode == "topk") {
    quiver::bench::RunTopK(queries);
  } else if (mode == "path" || mode == "expand2" || mode == "expand3") {
    quiver::bench::RunPathsOrExpand(mode, vertices, queries);
  } else {
    std::fprintf(stderr, "usage: quiver-traversal-cost path|topk|expand2|expand3 [vertices] [queries]\n");
    return 2;
  }
  return 0;
}
