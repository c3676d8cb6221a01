// online: single online traversal queries on a snapshot (include/quiver/traversal.h), one thread,
// p50/p95 of individually timed queries, beside the same query on a raw CSR where one applies.
//
// Graph: the uniform shape V x 10 (profile.online_vertices; ids dense), one snapshot, one
// TraversalContext warmed by the first queries (so the timed ones allocate nothing). Queries:
//   expand2Hop / expand3Hop  deduplicating out-expansion to depth 2 / 3 from a random seed
//                            (Expand, a counting sink); ceiling: the same BFS on a CSR of the
//                            same out-edges (8-byte offsets and neighbours, a stamp array). The
//                            two must report the same number of vertices, or the bench stops.
//   shortestPath             unweighted out-path between a random pair (bidirectional BFS);
//                            no CSR ceiling (it would need in-edges too); target p50 <= 50 us.
//   topK20ByWeight           the 20 heaviest of 100 out-edges of a random hub by the double edge
//                            property "w" (TopKNeighbors), on a separate graph of 2,000 hubs;
//                            ceiling: partial_sort_copy of the same 100 weights from a flat array;
//                            target p95 <= 2 us.
// Timing: steady_clock per query for expansions and paths (microseconds and up); RDTSCP ticks
// (TickTimer) for top-K. Inputs are drawn outside the timed bracket.
#include <algorithm>
#include <string>
#include <vector>

#include "families.h"
#include "quiver/traversal.h"
#include "timing.h"

namespace quiver::capacity {
namespace {

constexpr std::uint64_t kHubs = 2'000;
constexpr std::uint32_t kHubDegree = 100;

// Depth-limited BFS on the CSR; returns the vertices reached at depth 1..depth.
std::uint64_t CsrExpand(const Csr& csr, std::vector<std::uint32_t>& stamp, std::uint32_t gen,
                        std::vector<std::uint64_t>& queue, std::uint64_t seed, std::uint32_t depth) {
  queue.clear();
  queue.push_back(seed);
  stamp[seed] = gen;
  std::uint64_t reached = 0;
  std::size_t level_begin = 0;
  for (std::uint32_t d = 0; d < depth; ++d) {
    const std::size_t level_end = queue.size();
    for (std::size_t i = level_begin; i < level_end; ++i) {
      const std::uint64_t v = queue[i];
      for (std::uint64_t j = csr.offsets[v]; j < csr.offsets[v + 1]; ++j) {
        const std::uint64_t n = csr.neighbours[j] - csr.first;
        if (stamp[n] == gen) continue;
        stamp[n] = gen;
        ++reached;
        queue.push_back(n);
      }
    }
    level_begin = level_end;
  }
  return reached;
}

struct Latency {
  double p50 = 0, p95 = 0;
};

Latency OnlineQuantiles(std::vector<double> ns) {
  Latency l;
  l.p50 = QuantileD(ns, 0.5);
  l.p95 = QuantileD(ns, 0.95);
  return l;
}

Json OnlineRow(const char* query, const Json& shape, std::size_t samples, Latency engine,
               std::optional<Latency> csr, const char* no_csr, const char* target) {
  Json row;
  row["query"] = query;
  row["shape"] = shape;
  row["samples"] = samples;
  row["latencyP50Ns"] = Positive(engine.p50, "below the timer's resolution");
  row["latencyP95Ns"] = Positive(engine.p95, "below the timer's resolution");
  if (csr) {
    row["csrLatencyP50Ns"] = Positive(csr->p50, "below the timer's resolution");
    row["csrLatencyP95Ns"] = Positive(csr->p95, "below the timer's resolution");
    row["ratioP50"] = Positive(engine.p50 / csr->p50, "below the timer's resolution");
    row["ratioP95"] = Positive(engine.p95 / csr->p95, "below the timer's resolution");
  } else {
    row["csrLatencyP50Ns"] = NotMeasured(no_csr);
    row["csrLatencyP95Ns"] = NotMeasured(no_csr);
    row["ratioP50"] = NotMeasured(no_csr);
    row["ratioP95"] = NotMeasured(no_csr);
  }
  row["target"] = target;
  return row;
}

void RunExpansions(Context& ctx, const Shape& shape, const Snapshot& snap, VertexId first, Json& rows) {
  const std::uint64_t n = shape.vertices;
  const Csr csr = BuildCsr(snap, first, n);
  std::vector<std::uint32_t> stamp(n, 0);
  std::vector<std::uint64_t> queue;
  std::uint32_t gen = 0;
  TraversalContext tctx;
  Rng rng(kSeed ^ 0x0e7a);
  for (std::uint32_t depth : {2u, 3u}) {
    const std::size_t samples = depth == 2 ? ctx.profile.online_samples : ctx.profile.online_samples / 5;
    ExpandSpec spec;
    spec.seeds = {first};
    spec.max_depth = depth;
    std::uint64_t count = 0;
    const std::function<bool(const Visit&)> sink = [&count](const Visit&) {
      ++count;
      return true;
    };
    std::vector<double> engine_ns, csr_ns;
    for (std::size_t i = 0; i < samples + 20; ++i) {
      const std::uint64_t seed = rng.Uniform(n);
      spec.seeds[0] = VertexId(first.value() + seed);
      count = 0;
      std::uint64_t t0 = NowNs();
      Status s = Expand(snap, spec, tctx, sink);
      const double e_ns = static_cast<double>(NowNs() - t0);
      if (!s.ok()) Die("online expand", s);
      t0 = NowNs();
      const std::uint64_t want = CsrExpand(csr, stamp, ++gen, queue, seed, depth);
      const double c_ns = static_cast<double>(NowNs() - t0);
      if (want != count)
        Die("online expand", InternalError("Expand and the CSR BFS reached different counts"));
      if (i < 20) continue;  // warm-up: the context and the caches
      engine_ns.push_back(e_ns);
      csr_ns.push_back(c_ns);
    }
    const Latency e = OnlineQuantiles(engine_ns), c = OnlineQuantiles(csr_ns);
    rows.push_back(OnlineRow(depth == 2 ? "expand2Hop" : "expand3Hop", shape.ToJson(), samples, e, c, "",
                             "p50 and p95 <= 1.3 x the CSR's"));
    ctx.progress.Note(std::to_string(depth) + "-hop p50 " + std::to_string(e.p50 / 1e3) + " us (CSR " +
                      std::to_string(c.p50 / 1e3) + " us)");
  }

  PathSpec ps;
  Path path;
  std::vector<double> path_ns;
  std::size_t found_count = 0;
  for (std::size_t i = 0; i < ctx.profile.online_samples + 20; ++i) {
    const VertexId s(first.value() + rng.Uniform(n)), t(first.value() + rng.Uniform(n));
    bool found = false;
    const std::uint64_t t0 = NowNs();
    Status st = ShortestPath(snap, s, t, ps, tctx, &path, &found);
    const double ns = static_cast<double>(NowNs() - t0);
    if (!st.ok()) Die("online shortest path", st);
    if (i < 20) continue;
    found_count += found;
    path_ns.push_back(ns);
  }
  const Latency p = OnlineQuantiles(path_ns);
  rows.push_back(OnlineRow("shortestPath", shape.ToJson(), path_ns.size(), p, std::nullopt,
                           "a CSR bidirectional BFS needs in-edges; not built", "p50 <= 50000 ns"));
  ctx.progress.Note("shortest path p50 " + std::to_string(p.p50 / 1e3) + " us, " +
                    std::to_string(found_count) + " of " + std::to_string(path_ns.size()) +
                    " pairs connected");
}

void RunTopK(Context& ctx, Json& rows) {
  auto graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (online top-K)");
  Rng rng(kSeed ^ 0x70b4);
  std::vector<VertexId> hubs;
  std::vector<std::vector<double>> weights(kHubs);
  for (std::uint64_t h0 = 0; h0 < kHubs; h0 += 100) {
    WriteBatch b;
    std::vector<NewVertex> nv;
    for (std::uint64_t h = h0; h < h0 + 100; ++h) nv.push_back(b.AddVertex("V"));
    for (std::uint64_t h = h0; h < h0 + 100; ++h) {
      for (std::uint32_t j = 0; j < kHubDegree; ++j) {
        const double w = static_cast<double>(rng.Uniform(1'000'000)) / 1e6;
        weights[h].push_back(w);
        b.AddEdge("E", nv[h - h0], nv[rng.Uniform(100)], {{"w", w}});
      }
    }
    CommitInfo info = ValueOrDie(graph->Write(std::move(b)), "online top-K build");
    hubs.insert(hubs.end(), info.vertices.begin(), info.vertices.end());
  }
  const Snapshot snap = graph->GetSnapshot();
  TraversalContext tctx;
  TopKSpec spec;
  spec.key = "w";
  spec.k = 20;
  std::vector<Neighbor> best;
  std::vector<double> top(20);
  TickTimer engine(ctx.profile.online_samples * 10), raw(ctx.profile.online_samples * 10);
  for (std::size_t i = 0; i < ctx.profile.online_samples * 10 + 100; ++i) {
    const std::uint64_t h = rng.Uniform(kHubs);
    Status s;
    if (i >= 100) {
      engine.Time([&] { s = TopKNeighbors(snap, hubs[h], spec, tctx, &best); });
      raw.Time([&] {
        std::partial_sort_copy(weights[h].begin(), weights[h].end(), top.begin(), top.end(),
                               std::greater<>());
      });
    } else {
      s = TopKNeighbors(snap, hubs[h], spec, tctx, &best);
    }
    if (!s.ok()) Die("online top-K", s);
    std::partial_sort_copy(weights[h].begin(), weights[h].end(), top.begin(), top.end(), std::greater<>());
    if (best.size() != 20 || best[0].score != top[0] || best[19].score != top[19])
      Die("online top-K", InternalError("TopKNeighbors differs from partial_sort_copy"));
  }
  const Latency e{engine.QuantileNs(0.5), engine.QuantileNs(0.95)};
  const Latency c{raw.QuantileNs(0.5), raw.QuantileNs(0.95)};
  Json shape;
  shape["label"] = std::to_string(kHubs) + "x" + std::to_string(kHubDegree) + "-weighted";
  shape["vertices"] = kHubs;
  shape["outDegree"] = kHubDegree;
  shape["edges"] = kHubs * kHubDegree;
  shape["targets"] = "uniform";
  rows.push_back(OnlineRow("topK20ByWeight", shape, engine.size(), e, c, "", "p95 <= 2000 ns"));
  ctx.progress.Note("top-20 p95 " + std::to_string(e.p95) + " ns (flat array " + std::to_string(c.p95) +
                    " ns)");
}

}  // namespace

void PlanOnline(Context& ctx) {
  const Shape s{ctx.profile.online_vertices, 10, Targets::kUniform};
  double estimate = EstimateBuildSeconds(s.vertices, s.edges()) + static_cast<double>(s.edges()) * 20e-9;
  estimate += static_cast<double>(ctx.profile.online_samples) * 3 * 1e-3;
  ctx.progress.Plan("online", s.label(), estimate);
}

Json RunOnline(Context& ctx) {
  Json rows = Json::array();
  const Shape shape{ctx.profile.online_vertices, 10, Targets::kUniform};
  ctx.progress.Start("online", shape.label());
  BuiltGraph built = BuildVolatile(shape);
  {
    const Snapshot snap = built.graph->GetSnapshot();
    RunExpansions(ctx, shape, snap, built.first, rows);
  }
  CheckClose(*built.graph);
  RunTopK(ctx, rows);
  ctx.progress.Done();
  return rows;
}

}  // namespace quiver::capacity
