// latency: single point reads, one thread, p50/p95/p99 of individually timed operations.
//
// Graph per size N (10K, 100K, 1M vertices; volatile), by vertex id modulo 100:
//   1       "hub": 100 out-edges to uniformly random vertices
//   2       "middle": 99 out-edges to uniformly random vertices
//   3       "root": 8 out-edges to random middles
//   others  4 out-edges to uniformly random vertices (the graph's bulk)
// Operations, on uniformly drawn inputs (drawn outside the timed bracket):
//   vertexLookup  Snapshot::LabelOf(v) for a random vertex
//   outEdges100   every out-edge of a random hub (Snapshot::OutEdges(v)), neighbour ids summed
//   twoHop800     a random root's 8 out-edges and each middle's 99: 8 + 8 x 99 = 800 entries
// Timing: RDTSCP/LFENCE around each operation, empty-bracket overhead subtracted (timing.h).
// Ceilings: the same operations on a raw CSR copied from the same snapshot (ceilings.csrLatency:
// 8-byte offsets and neighbours; a lookup reads the vertex's two offsets), and for vertexLookup
// also the dependent-load latency of a large random cycle (ceilings.dependentLoad). Ratios are
// ceiling p50 / engine p50: 1 means as fast as the raw structure. A small graph fits the caches,
// so its lookups can beat the DRAM dependent load (ratio above 1).
#include <string>
#include <vector>

#include "families.h"
#include "timing.h"

namespace quiver::capacity {
namespace {

constexpr std::uint32_t kBulkDegree = 4;

std::uint32_t DegreeOf(std::uint64_t i) {
  switch (i % 100) {
    case 1: return 100;
    case 2: return 99;
    case 3: return 8;
    default: return kBulkDegree;
  }
}

std::uint64_t EdgeCount(std::uint64_t n) {
  std::uint64_t e = 0;
  for (std::uint64_t i = 0; i < n; ++i) e += DegreeOf(i);
  return e;
}

BuiltGraph BuildLatencyGraph(std::uint64_t n) {
  BuiltGraph b;
  b.graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (latency)");
  b.first = AddVertices(*b.graph, n);
  const std::uint64_t base = b.first.value();
  Rng rng(kSeed ^ (n * 7919));
  std::uint64_t vertex = 0, left = DegreeOf(0);
  AddEdges(*b.graph, EdgeCount(n), [&](std::uint64_t) {
    while (left == 0) left = DegreeOf(++vertex);
    --left;
    const std::uint64_t target = vertex % 100 == 3 ? (rng.Uniform(n / 100) * 100 + 2) : rng.Uniform(n);
    return std::pair(base + vertex, base + target);
  });
  return b;
}

// A random id in [0, n) whose class (id % 100) is `cls`.
std::uint64_t Draw(Rng& rng, std::uint64_t n, std::uint64_t cls) { return rng.Uniform(n / 100) * 100 + cls; }

struct LatencyQuantiles {
  Json p50, p95, p99;
};

template <typename InputFn, typename OpFn>
LatencyQuantiles Measure(std::uint64_t samples, InputFn&& input, OpFn&& op) {
  TickTimer timer(samples);
  for (std::uint64_t i = 0; i < samples / 10; ++i) Consume(op(input()));  // warm the caches
  for (std::uint64_t i = 0; i < samples; ++i) {
    const std::uint64_t in = input();
    timer.Time([&] { Consume(op(in)); });
  }
  const std::string below = "below the timer's resolution (" + std::to_string(timer.ns_per_tick()) +
                            " ns per tick, overhead " + std::to_string(timer.overhead_ns()) +
                            " ns subtracted)";
  return {Positive(timer.QuantileNs(0.50), below), Positive(timer.QuantileNs(0.95), below),
          Positive(timer.QuantileNs(0.99), below)};
}

Json LatencyJson(const LatencyQuantiles& q) {
  Json j;
  j["latencyP50Ns"] = q.p50;
  j["latencyP95Ns"] = q.p95;
  j["latencyP99Ns"] = q.p99;
  return j;
}

}  // namespace

void PlanLatency(Context& ctx) {
  for (std::uint64_t n : ctx.profile.latency_vertices) {
    const double ops = static_cast<double>(ctx.profile.latency_samples) * 1.1 * 2;
    ctx.progress.Plan("latency", std::to_string(n) + " vertices",
                      EstimateBuildSeconds(n, n * 6) + ops * (100e-9 + 300e-9 + 3e-6) + 0.3);
  }
}

Json RunLatency(Context& ctx) {
  Json rows = Json::array();
  const std::uint64_t samples = ctx.profile.latency_samples;
  for (std::uint64_t n : ctx.profile.latency_vertices) {
    ctx.progress.Start("latency", std::to_string(n) + " vertices");
    BuiltGraph built = BuildLatencyGraph(n);
    const Snapshot snap = built.graph->GetSnapshot();
    const Csr csr = BuildCsr(snap, built.first, n);
    const std::uint64_t base = built.first.value();
    const std::uint64_t* off = csr.offsets.data();
    const std::uint64_t* nb = csr.neighbours.data();
    for (std::uint64_t i = 1; i < n; i += 100)
      if (snap.OutDegree(VertexId(base + i)) != 100)
        Die("latency", InternalError("a hub lacks 100 out-edges"));

    // The engine's operations and their raw-CSR twins.
    auto lookup = [&](std::uint64_t v) -> std::uint64_t {
      return snap.LabelOf(VertexId(base + v)).value_or(LabelId(~0u)).value();
    };
    auto csr_lookup = [&](std::uint64_t v) -> std::uint64_t { return off[v] + off[v + 1]; };
    auto out_edges = [&](std::uint64_t v) -> std::uint64_t {
      std::uint64_t sum = 0;
      for (const EdgeGroup& g : snap.OutEdges(VertexId(base + v)))
        for (const EdgeEntry& e : g.entries) sum += e.neighbor().value();
      return sum;
    };
    auto csr_out_edges = [&](std::uint64_t v) -> std::uint64_t {
      std::uint64_t sum = 0;
      for (std::uint64_t k = off[v]; k < off[v + 1]; ++k) sum += nb[k];
      return sum;
    };
    auto two_hop = [&](std::uint64_t v) -> std::uint64_t {
      std::uint64_t sum = 0;
      for (const EdgeGroup& g : snap.OutEdges(VertexId(base + v)))
        for (const EdgeEntry& e : g.entries) sum += out_edges(e.neighbor().value() - base) + 1;
      return sum;
    };
    auto csr_two_hop = [&](std::uint64_t v) -> std::uint64_t {
      std::uint64_t sum = 0;
      for (std::uint64_t k = off[v]; k < off[v + 1]; ++k) sum += csr_out_edges(nb[k] - csr.first) + 1;
      return sum;
    };
    for (std::uint64_t v = 3; v < n; v += 1000)
      if (two_hop(v) != csr_two_hop(v)) Die("latency", InternalError("2-hop differs from the CSR's"));

    Json csr_row;
    csr_row["vertices"] = n;
    csr_row["edges"] = csr.neighbours.size();
    const std::string pointer = "/ceilings/csrLatency/" + std::to_string(ctx.ceilings["csrLatency"].size());
    struct Op {
      const char* name;
      std::uint64_t cls;  // id class the inputs are drawn from; 100: any vertex
    };
    for (const Op& op : {Op{"vertexLookup", 100}, Op{"outEdges100", 1}, Op{"twoHop800", 3}}) {
      ctx.progress.Note(op.name);
      Rng rng(kSeed + op.cls);
      auto input = [&] { return op.cls == 100 ? rng.Uniform(n) : Draw(rng, n, op.cls); };
      const std::string name = op.name;
      LatencyQuantiles engine, raw;
      if (name == "vertexLookup") {
        engine = Measure(samples, input, lookup);
        raw = Measure(samples, input, csr_lookup);
      } else if (name == "outEdges100") {
        engine = Measure(samples, input, out_edges);
        raw = Measure(samples, input, csr_out_edges);
      } else {
        engine = Measure(samples, input, two_hop);
        raw = Measure(samples, input, csr_two_hop);
      }
      csr_row[name] = LatencyJson(raw);
      Json row;
      row["vertices"] = n;
      row["edges"] = csr.neighbours.size();
      row["operation"] = name;
      row["samples"] = samples;
      row.update(LatencyJson(engine));
      row["efficiency"] =
          Efficiency(row["latencyP50Ns"], raw.p50, pointer + "/" + name + "/latencyP50Ns",
                     "csrLatency." + name + ".latencyP50Ns / latencyP50Ns", RatioKind::kCeilingOverFigure);
      if (name == "vertexLookup") {
        row["dependentLoadEfficiency"] =
            Efficiency(row["latencyP50Ns"], ctx.ceilings["dependentLoad"]["latencyNs"],
                       "/ceilings/dependentLoad/latencyNs", "dependentLoad.latencyNs / latencyP50Ns",
                       RatioKind::kCeilingOverFigure);
      }
      rows.push_back(row);
    }
    ctx.ceilings["csrLatency"].push_back(csr_row);
  }
  ctx.progress.Done();
  return rows;
}

}  // namespace quiver::capacity
