// traversal: a parallel sweep over every out-edge of a graph.
//
// Shapes: out-degree-10 uniform graphs (5M, 20M and 100M edges in full; 1M and 5M in quick) and
// the memory family's power-law shape; graphs the memory family built are reused, not rebuilt.
// One snapshot is held for the whole row. A pass splits the vertex ids into chunks of
// max(256, V / (threads x 16)) handed out dynamically to 1 or all threads; each thread sweeps
// its range with Snapshot::ScanEdges (leaf by leaf, edge arrays prefetched a batch ahead) and sums
// the neighbour ids (the neighbour is stored inline in the adjacency entry, so this is a complete
// hop). One untimed pass, then `passes` timed
// ones; best and median edges per second are reported.
//
// Utilisation (the Quiver sweep's timed passes): each sweep thread's own CPU time over the passes'
// wall time (busy share); hardware counters around the passes; memory bandwidth used = the raw
// CSR's bytes (8 B per offset and per neighbour id, the least the same answer can be read from)
// / the best pass's time, beside ceilings.memoryBandwidth with the same thread count.
//
// Ceiling: a raw CSR (8-byte offsets, 8-byte neighbour ids) copied from the same snapshot, swept
// the same way with the same threads (ceilings.csrSweep). The two sweeps must produce the same
// sum, or the bench stops: a fast wrong answer is not a figure.
//
// Layout rows (the report's "traversalLayout"): how much the sweep depends on where the edge
// arrays lie. One uniform shape (profile.traversal_layout) is built in a durable graph with its
// edges added in a random order, in batches of 100,000, so every out-array grows by appends
// scattered over the whole build and in- and out-arrays interleave in memory ("randomInserts");
// the graph is then compacted (Graph::Compact: each leaf's entries in one block in id order,
// "compacted", with the call's time), closed (a checkpoint) and opened again, so its adjacency is
// the checkpoint loader's: packed per leaf, as Compact packs ("checkpointLoad"). Each layout is
// swept as above with 1 and all threads, each row beside a raw CSR sweep of the same graph with
// the same threads timed right after it.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "families.h"
#include "timing.h"
#include "utilisation.h"

namespace quiver::capacity {
namespace {

struct Passes {
  double best = 0;
  double median = 0;
  std::uint64_t timed_ns = 0;  // wall time of all timed passes
};

// Runs one untimed pass, then `passes` timed ones; window(true) and window(false) bracket the
// timed passes.
template <typename SweepFn>
Passes Time(int passes, std::uint64_t edges, std::uint64_t expected, SweepFn&& sweep, const char* what,
            const std::function<void(bool)>& window = {}) {
  if (sweep() != expected) Die(what, InternalError("sweep sum differs from the CSR sweep's"));
  std::vector<double> rates;
  if (window) window(true);
  const std::uint64_t start = NowNs();
  for (int p = 0; p < passes; ++p) {
    const std::uint64_t t0 = NowNs();
    const std::uint64_t sum = sweep();
    const double s = SecondsSince(t0);
    if (sum != expected) Die(what, InternalError("sweep sum differs from the CSR sweep's"));
    rates.push_back(static_cast<double>(edges) / s);
  }
  const std::uint64_t timed_ns = NowNs() - start;
  if (window) window(false);
  Passes r;
  r.timed_ns = timed_ns;
  r.best = *std::max_element(rates.begin(), rates.end());
  r.median = QuantileD(rates, 0.5);
  return r;
}

BuiltGraph TakeOrBuild(Context& ctx, const Shape& shape) {
  for (auto it = ctx.shared.begin(); it != ctx.shared.end(); ++it) {
    if (it->first == shape) {
      BuiltGraph g = std::move(it->second);
      ctx.shared.erase(it);
      return g;
    }
  }
  return BuildVolatile(shape);
}

// The sweep's utilisation: CPU per thread, memory bandwidth against the ceiling, counters.
Json SweepUtilisation(const Context& ctx, const Shape& shape, int threads, const Passes& engine,
                      const std::vector<std::uint64_t>& cpu_ns, std::uint64_t process_cpu_ns,
                      const HardwareCounters& counters) {
  std::vector<ThreadCpu> cpu;
  for (std::size_t t = 0; t < cpu_ns.size(); ++t) cpu.push_back({"sweep " + std::to_string(t), cpu_ns[t]});
  Json u;
  u["cpu"] = CpuUtilisation(cpu, engine.timed_ns, process_cpu_ns,
                            "CLOCK_THREAD_CPUTIME_ID of each sweep thread over the timed passes' wall time");
  const std::uint64_t bytes = 8 * (shape.vertices + 1) + 8 * shape.edges();
  Json bw;
  bw["necessaryBytes"] = bytes;
  bw["definition"] = "the raw CSR's bytes (8-byte offsets and neighbour ids) / the best pass's time";
  bw["megabytesPerSecond"] =
      Positive(static_cast<double>(bytes) / 1e6 * engine.best / static_cast<double>(shape.edges()),
               "no pass was timed");
  // The bandwidth ceiling of the same thread count, or none: another row's would be mislabelled.
  const Json& ceilings = ctx.ceilings["memoryBandwidth"];
  std::size_t row = 0;
  if (ceilings.is_array()) {
    while (row < ceilings.size() && ceilings[row]["threads"] != threads) ++row;
  }
  if (!ceilings.is_array() || row == ceilings.size()) {
    bw["efficiency"] =
        NoCeiling("no " + std::to_string(threads) + "-thread memoryBandwidth ceiling was measured");
  } else {
    bw["efficiency"] =
        Efficiency(bw["megabytesPerSecond"], ceilings[row]["readMegabytesPerSecond"],
                   "/ceilings/memoryBandwidth/" + std::to_string(row) + "/readMegabytesPerSecond",
                   "megabytesPerSecond / memoryBandwidth[" + std::to_string(threads) +
                       " threads].readMegabytesPerSecond");
  }
  u["memoryBandwidth"] = bw;
  u["hardwareCounters"] = counters.ToJson();
  return u;
}

bool Shared(const Context& ctx, const Shape& shape) {
  if (!ctx.Selected("memory")) return false;
  for (const Shape& s : ctx.profile.memory)
    if (s == shape) return true;
  return false;
}

// The sweep rows of one snapshot, each beside its CSR row (pushed to ceilings.csrSweep):
// `layout` names the adjacency layout in the rows ("" for the traversal family's own rows).
void SweepRows(Context& ctx, const Shape& shape, const Snapshot& snapshot, VertexId first,
               const std::string& layout, Json& rows) {
  const std::uint64_t n = shape.vertices;
  Csr csr = BuildCsr(snapshot, first, n);
  if (csr.neighbours.size() != shape.edges())
    Die("traversal", InternalError("edge count differs from the shape"));
  const std::uint64_t expected = SweepCsr(csr, 1);
  std::vector<int> thread_counts = {1};
  if (ctx.Cores() > 1) thread_counts.push_back(ctx.Cores());
  for (int threads : thread_counts) {
    ctx.progress.Note("sweeping with " + std::to_string(threads) + " thread(s)" +
                      (layout.empty() ? "" : " (" + layout + ")"));
    std::vector<std::uint64_t> cpu_ns;
    bool counting = false;
    std::uint64_t process_cpu = 0;
    HardwareCounters counters;
    const Passes engine = Time(
        ctx.profile.traversal_passes, shape.edges(), expected,
        [&] { return SweepQuiver(snapshot, first, n, threads, counting ? &cpu_ns : nullptr); },
        "traversal sweep",
        [&](bool start) {
          counting = start;
          if (start) {
            process_cpu = ProcessCpuNs();
            counters.Start();
          } else {
            counters.Stop();
            process_cpu = ProcessCpuNs() - process_cpu;
          }
        });
    const Passes raw = Time(
        ctx.profile.traversal_passes, shape.edges(), expected, [&] { return SweepCsr(csr, threads); },
        "CSR sweep");
    Json c;
    c["shape"] = shape.ToJson();
    c["threads"] = threads;
    c["passes"] = ctx.profile.traversal_passes;
    c["bestEdgesPerSecond"] = Positive(raw.best, "no time elapsed");
    c["medianEdgesPerSecond"] = Positive(raw.median, "no time elapsed");
    const std::string pointer = "/ceilings/csrSweep/" + std::to_string(ctx.ceilings["csrSweep"].size());
    ctx.ceilings["csrSweep"].push_back(c);
    Json row;
    row["shape"] = shape.ToJson();
    if (!layout.empty()) row["layout"] = layout;
    row["threads"] = threads;
    row["passes"] = ctx.profile.traversal_passes;
    row["bestEdgesPerSecond"] = Positive(engine.best, "no time elapsed");
    row["medianEdgesPerSecond"] = Positive(engine.median, "no time elapsed");
    row["efficiency"] =
        Efficiency(row["bestEdgesPerSecond"], c["bestEdgesPerSecond"], pointer + "/bestEdgesPerSecond",
                   "bestEdgesPerSecond / csrSweep.bestEdgesPerSecond");
    row["utilisation"] = SweepUtilisation(ctx, shape, threads, engine, cpu_ns, process_cpu, counters);
    rows.push_back(row);
    ctx.progress.Note(row["bestEdgesPerSecond"].dump() + " edges/s, " + row["efficiency"]["ratio"].dump() +
                      " of the CSR sweep");
  }
}

// Durable, no background checkpoints while building, one at Close.
Options LayoutOptions() {
  Options o = BenchOptions();
  o.durability = Durability::kDurable;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = true;
  return o;
}

// The shape's edges in a random order (the same graph as AddShapeEdges would build for a uniform
// shape: source i / out_degree, a seeded random target; then a seeded shuffle).
void AddShuffledEdges(Graph& graph, const Shape& shape, VertexId first) {
  const std::uint64_t base = first.value(), d = shape.out_degree;
  Rng rng(kSeed ^ (shape.vertices * 131 + d));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> edges(shape.edges());
  for (std::uint64_t i = 0; i < edges.size(); ++i)
    edges[i] = {base + i / d, base + rng.Uniform(shape.vertices)};
  for (std::uint64_t i = edges.size(); i > 1; --i) std::swap(edges[i - 1], edges[rng.Uniform(i)]);
  AddEdges(graph, edges.size(), [&](std::uint64_t i) { return edges[i]; });
}

}  // namespace

void PlanTraversal(Context& ctx) {
  const int thread_counts = ctx.Cores() > 1 ? 2 : 1;
  for (const Shape& s : ctx.profile.traversal) {
    double estimate = Shared(ctx, s) ? 0 : EstimateBuildSeconds(s.vertices, s.edges());
    estimate += static_cast<double>(s.edges()) * 20e-9;  // CSR copy
    estimate +=
        thread_counts * (ctx.profile.traversal_passes + 1) * static_cast<double>(s.edges()) * (12e-9 + 2e-9);
    ctx.progress.Plan("traversal", s.label(), estimate);
  }
  // The layout rows: a durable build, a checkpoint at Close, a load, and two layouts' sweeps.
  const Shape& s = ctx.profile.traversal_layout;
  double estimate = 1.5 * EstimateBuildSeconds(s.vertices, s.edges());
  estimate += 2 * static_cast<double>(s.edges()) * 20e-9;
  estimate += 3 * thread_counts * (ctx.profile.traversal_passes + 1) * static_cast<double>(s.edges()) *
              (12e-9 + 2e-9);
  ctx.progress.Plan("traversal", s.label() + " layouts", estimate);
}

Json RunTraversal(Context& ctx) {
  Json rows = Json::array();
  for (const Shape& shape : ctx.profile.traversal) {
    ctx.progress.Start("traversal", shape.label());
    BuiltGraph built = TakeOrBuild(ctx, shape);
    const Snapshot snapshot = built.graph->GetSnapshot();
    SweepRows(ctx, shape, snapshot, built.first, "", rows);
  }
  ctx.progress.Done();
  return rows;
}

Json RunTraversalLayout(Context& ctx) {
  Json rows = Json::array();
  const Shape& shape = ctx.profile.traversal_layout;
  ctx.progress.Start("traversal", shape.label() + " layouts");
  const std::string dir = ctx.FreshDir("traversal-layout-" + shape.label());
  {
    std::unique_ptr<Graph> graph = ValueOrDie(Graph::Open(LayoutOptions(), dir), "Graph::Open (layout)");
    const VertexId first = AddVertices(*graph, shape.vertices);
    AddShuffledEdges(*graph, shape, first);
    {
      const Snapshot snapshot = graph->GetSnapshot();
      SweepRows(ctx, shape, snapshot, first, "randomInserts", rows);
    }
    {
      const std::uint64_t t0 = NowNs();
      const CompactStats c = ValueOrDie(graph->Compact(), "Compact (layout)");
      const double seconds = SecondsSince(t0);
      const Snapshot snapshot = graph->GetSnapshot();
      const std::size_t from = rows.size();
      SweepRows(ctx, shape, snapshot, first, "compacted", rows);
      for (std::size_t i = from; i < rows.size(); ++i) {
        rows[i]["compactSeconds"] = seconds;
        rows[i]["compactEntriesPerSecond"] = static_cast<double>(c.entries) / std::max(seconds, 1e-9);
      }
      ctx.progress.Note("Compact: " + std::to_string(c.entries) + " entries in " + std::to_string(seconds) +
                        " s");
    }
    if (Status s = graph->Close(); !s.ok()) Die("Close (layout)", s);
    graph.reset();
    graph = ValueOrDie(Graph::Open(LayoutOptions(), dir), "Graph::Open (layout, reopen)");
    const Snapshot snapshot = graph->GetSnapshot();
    if (snapshot.edge_count() != shape.edges())
      Die("traversal layout", InternalError("the reopened graph's edge count differs"));
    SweepRows(ctx, shape, snapshot, first, "checkpointLoad", rows);
  }
  ctx.RemoveDir(dir);
  ctx.progress.Done();
  return rows;
}

}  // namespace quiver::capacity
