// analytics: whole-graph analytics (include/quiver/analytics.h) on 2 threads (1 on a one-core
// machine), each figure beside a raw CSR kernel of the same run (common/raw_kernels.h) and, where
// quiver-bench was built with them, Boost.Graph and igraph (peers.h).
//
// Graph: V x 10 uniform (profile.analytics: 200K quick; 1M and 10M full), every edge carrying an
// integer weight "w" in [1, 100] as a double, built through the public API; one snapshot. The raw
// CSR is copied from that snapshot before anything is timed, and the snapshot and graph are
// released once the projections are built (a projection outlives them; the kernels never read
// the graph). Rows, in order:
//   projectionBuild          Project(snapshot, {.threads}): out and in, unweighted (what PageRank,
//                            CDLP and LCC read). Rate: entries built per second; ceiling: the raw
//                            CSR sweep of the same entries (RawSweep of out and of in, same
//                            threads); memory_bytes() beside the raw CSR floor, 8 (V + 1) + 4 E
//                            bytes per direction.
//   projectionBuildWeighted  Project(snapshot, {.in = false, .weight_property = "w"}), what SSSP
//                            reads; floor 8 (V + 1) + 12 E.
//   pageRank (10 iterations), bfs (from vertex 0), wcc, cdlp (10 iterations), lcc, sssp (from
//   vertex 0): the median of `repeats` runs of the Quiver kernel and
//   of the raw one, alternated so both see the same machine; each Quiver result is checked against
//   the raw one (exactly, PageRank within 1e-9 relative) or the bench stops. Ratio: Quiver time /
//   raw time (target <= 1.3); peers: their median time / Quiver's (target >= 3). Graphs above 10M
//   edges are timed once per kernel (RepeatsFor), after an untimed raw run.
// Builds are timed the same way (median of `repeats`; the raw sweep alternated with them).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "families.h"
#include "peers.h"
#include "quiver/analytics.h"
#include "timing.h"

namespace quiver::capacity {
namespace {

constexpr std::uint32_t kIterations = 10;

// Timed runs per kernel: the profile's, but one on graphs above 10M edges, where one run of CDLP or
// LCC takes minutes and the run-to-run spread is small next to it.
int RepeatsFor(const Profile& profile, const Shape& shape) {
  return shape.edges() > 10'000'000 ? 1 : profile.analytics_repeats;
}

BuiltGraph BuildWeighted(const Shape& shape) {
  BuiltGraph b;
  b.graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (analytics)");
  std::uint64_t t0 = NowNs();
  b.first = AddVertices(*b.graph, shape.vertices);
  b.vertex_seconds = SecondsSince(t0);
  t0 = NowNs();
  const std::uint64_t n = shape.vertices, d = shape.out_degree, base = b.first.value();
  Rng rng(kSeed ^ (n * 131 + d) ^ 0xa4a1);
  PipelinedWriter writer(*b.graph);
  for (std::uint64_t i = 0; i < shape.edges();) {
    const std::uint64_t end = std::min(shape.edges(), i + kBuildBatchOps);
    WriteBatch batch;
    for (; i < end; ++i) {
      const VertexId source(base + i / d), target(base + rng.Uniform(n));
      batch.AddEdge("E", source, target, {{"w", static_cast<double>(1 + rng.Uniform(100))}});
    }
    writer.Submit(std::move(batch));
  }
  writer.Drain();
  b.edge_seconds = SecondsSince(t0);
  return b;
}

// Times `quiver` and `raw` alternately, `repeats` times each; returns the medians. With one
// repeat, an untimed raw run goes first: else Quiver alone would pay for first touching the
// memory both kernels allocate (at 10M x 10, near the machine's memory, BFS timed 2.6 s against
// the raw run's 0.57 s right after it; run alone, the two take the same time).
template <typename QuiverFn, typename RawFn>
std::pair<double, double> TimePair(int repeats, QuiverFn&& quiver, RawFn&& raw) {
  if (repeats == 1) raw();
  std::vector<double> q, r;
  for (int i = 0; i < repeats; ++i) {
    std::uint64_t t0 = NowNs();
    quiver();
    q.push_back(SecondsSince(t0));
    t0 = NowNs();
    raw();
    r.push_back(SecondsSince(t0));
  }
  return {QuantileD(q, 0.5), QuantileD(r, 0.5)};
}

Json Peer(const PeerTime& p, double quiver_seconds) {
  Json j;
  j["library"] = p.library;
  j["function"] = p.function;
  if (p.seconds) {
    j["seconds"] = Positive(*p.seconds, "below the clock's resolution");
    j["quiverSpeedup"] = Positive(*p.seconds / quiver_seconds, "below the clock's resolution");
  } else {
    j["seconds"] = NotMeasured(p.reason);
    j["quiverSpeedup"] = NotMeasured(p.reason);
  }
  j["note"] = p.note.empty() ? Json(nullptr) : Json(p.note);
  return j;
}

Json KernelRow(const char* kernel, const Shape& shape, int threads, std::optional<std::uint32_t> iterations,
               int repeats, std::pair<double, double> t, const std::vector<PeerTime>& peers,
               const char* target) {
  Json row;
  row["kernel"] = kernel;
  row["shape"] = shape.ToJson();
  row["threads"] = threads;
  row["iterations"] = iterations ? Json(*iterations) : Json(nullptr);
  row["repeats"] = repeats;
  row["quiverSeconds"] = Positive(t.first, "below the clock's resolution");
  row["csrSeconds"] = Positive(t.second, "below the clock's resolution");
  row["quiverOverCsr"] = Positive(t.first / t.second, "below the clock's resolution");
  row["target"] = target;
  row["peers"] = Json::array();
  for (const PeerTime& p : peers) row["peers"].push_back(Peer(p, t.first));
  return row;
}

// The projection rows: build rate against the raw sweep of the same entries, memory against the floor.
Json BuildRow(const char* kernel, const Shape& shape, int threads, int repeats, std::pair<double, double> t,
              const Projection& p, std::uint64_t entries, std::uint64_t floor_bytes) {
  Json row = KernelRow(kernel, shape, threads, std::nullopt, repeats, t, {},
                       "entries/s >= 0.5 x the raw CSR sweep of the same entries; memory <= 1.1 x the floor");
  row["entries"] = entries;
  row["edgesPerSecond"] = Positive(static_cast<double>(entries) / t.first, "below the clock's resolution");
  row["csrSweepEdgesPerSecond"] =
      Positive(static_cast<double>(entries) / t.second, "below the clock's resolution");
  row["rateOverCsrSweep"] = Positive(t.second / t.first, "below the clock's resolution");
  row["memoryBytes"] = p.memory_bytes();
  row["floorBytes"] = floor_bytes;
  row["floorOverMemory"] =
      Positive(static_cast<double>(floor_bytes) / static_cast<double>(p.memory_bytes()), "no memory held");
  return row;
}

template <typename T>
T Take(Result<T> r, const char* what) {
  return ValueOrDie(std::move(r), what);
}

void CheckEqual(bool equal, const char* kernel) {
  if (!equal) Die(kernel, InternalError("Quiver's result differs from the raw CSR kernel's"));
}

void RunShape(Context& ctx, const Shape& shape, Json& rows) {
  const int threads = ctx.Cores() > 1 ? 2 : 1;
  const int repeats = RepeatsFor(ctx.profile, shape);
  const RunOptions run{.threads = static_cast<std::uint32_t>(threads)};
  BuiltGraph built = BuildWeighted(shape);
  Projection proj, weighted;
  RawGraph raw;
  {
    const Snapshot snap = built.graph->GetSnapshot();
    if (built.first.value() != 0 || snap.vertex_id_limit() != shape.vertices)
      Die("analytics", InternalError("the graph's vertex ids are not 0..V-1"));
    ctx.progress.Note("copying the raw CSR");
    raw = BuildRawGraph(snap, built.first, shape.vertices, *snap.FindPropertyKey("w"));
    ctx.progress.Note("projection builds");
    const std::uint64_t want_sum = RawSweep(raw.out, 1) + RawSweep(raw.in, 1);
    std::uint64_t sum = 0;
    const ProjectionSpec spec{.threads = static_cast<std::uint32_t>(threads)};
    auto t = TimePair(
        repeats, [&] { proj = Take(Project(snap, spec), "Project"); },
        [&] { sum = RawSweep(raw.out, threads) + RawSweep(raw.in, threads); });
    if (sum != want_sum) Die("analytics sweep", InternalError("the raw sweep's sum changed"));
    const std::uint64_t e = raw.out.targets.size(), v1 = shape.vertices + 1;
    CheckEqual(proj.edge_count() == e, "Project");
    rows.push_back(
        BuildRow("projectionBuild", shape, threads, repeats, t, proj, 2 * e, 2 * (8 * v1 + 4 * e)));
    ctx.progress.Note("projection " + rows.back()["rateOverCsrSweep"].dump() + " x the raw sweep");
    const ProjectionSpec wspec{
        .in = false, .weight_property = "w", .threads = static_cast<std::uint32_t>(threads)};
    t = TimePair(
        repeats, [&] { weighted = Take(Project(snap, wspec), "Project (weighted)"); },
        [&] { sum = RawSweep(raw.out, threads); });
    rows.push_back(
        BuildRow("projectionBuildWeighted", shape, threads, repeats, t, weighted, e, 8 * v1 + 12 * e));
  }
  CheckClose(*built.graph);
  built.graph.reset();
  for (std::uint32_t v = 0; v < raw.n; v += 997) {
    CheckEqual(std::ranges::equal(proj.OutNeighbors(v), raw.out.Neighbors(v)) &&
                   std::ranges::equal(proj.InNeighbors(v), raw.in.Neighbors(v)) &&
                   std::ranges::equal(weighted.OutWeights(v), raw.out.Weights(v)),
               "Project");
  }
  Peers peers(raw);
  const VertexId source(0);

  ctx.progress.Note("pageRank");
  std::vector<double> pr, raw_pr;
  auto t = TimePair(
      repeats, [&] { pr = Take(PageRank(proj, {.iterations = kIterations}, run), "PageRank"); },
      [&] { raw_pr = RawPageRank(raw, kIterations, threads); });
  for (std::uint32_t v = 0; v < raw.n; ++v)
    CheckEqual(std::abs(pr[v] - raw_pr[v]) <= 1e-9 * raw_pr[v], "PageRank");
  rows.push_back(KernelRow("pageRank", shape, threads, kIterations, repeats, t,
                           peers.Run(PeerKernel::kPageRank, kIterations, 0, repeats),
                           "<= 1.3 x the raw CSR; <= 250 ms at 1M x 10"));

  ctx.progress.Note("bfs");
  std::vector<std::int64_t> depth, raw_depth;
  t = TimePair(
      repeats, [&] { depth = Take(Bfs(proj, source, run), "Bfs"); },
      [&] { raw_depth = RawBfs(raw, 0, threads); });
  CheckEqual(depth == raw_depth, "Bfs");
  rows.push_back(KernelRow("bfs", shape, threads, std::nullopt, repeats, t,
                           peers.Run(PeerKernel::kBfs, 0, 0, repeats),
                           "<= 1.3 x the raw CSR; >= 3 x faster than each peer"));

  ctx.progress.Note("wcc");
  std::vector<VertexId> comp;
  std::vector<std::uint32_t> raw_comp;
  t = TimePair(
      repeats, [&] { comp = Take(Wcc(proj, run), "Wcc"); }, [&] { raw_comp = RawWcc(raw, threads); });
  for (std::uint32_t v = 0; v < raw.n; ++v) CheckEqual(comp[v].value() == raw_comp[v], "Wcc");
  rows.push_back(KernelRow("wcc", shape, threads, std::nullopt, repeats, t,
                           peers.Run(PeerKernel::kWcc, 0, 0, repeats),
                           "<= 1.3 x the raw CSR; >= 3 x faster than each peer"));

  ctx.progress.Note("cdlp");
  std::vector<VertexId> labels;
  std::vector<std::uint32_t> raw_labels;
  t = TimePair(
      repeats, [&] { labels = Take(Cdlp(proj, kIterations, run), "Cdlp"); },
      [&] { raw_labels = RawCdlp(raw, kIterations, threads); });
  for (std::uint32_t v = 0; v < raw.n; ++v) CheckEqual(labels[v].value() == raw_labels[v], "Cdlp");
  rows.push_back(KernelRow("cdlp", shape, threads, kIterations, repeats, t, {}, "<= 1.3 x the raw CSR"));

  ctx.progress.Note("lcc");
  std::vector<double> lcc, raw_lcc;
  t = TimePair(
      repeats, [&] { lcc = Take(Lcc(proj, run), "Lcc"); }, [&] { raw_lcc = RawLcc(raw, threads); });
  CheckEqual(lcc == raw_lcc, "Lcc");
  rows.push_back(KernelRow("lcc", shape, threads, std::nullopt, repeats, t,
                           peers.Run(PeerKernel::kLcc, 0, 0, repeats),
                           "<= 1.3 x the raw CSR; >= 3 x faster than each peer"));

  ctx.progress.Note("sssp");
  std::vector<double> dist, raw_dist;
  t = TimePair(
      repeats, [&] { dist = Take(Sssp(weighted, source, run), "Sssp"); },
      [&] { raw_dist = RawSssp(raw, 0, threads); });
  CheckEqual(dist == raw_dist, "Sssp");
  rows.push_back(KernelRow("sssp", shape, threads, std::nullopt, repeats, t,
                           peers.Run(PeerKernel::kSssp, 0, 0, repeats),
                           "<= 1.3 x the raw CSR; >= 3 x faster than each peer"));
}

}  // namespace

void PlanAnalytics(Context& ctx) {
  for (const Shape& s : ctx.profile.analytics) {
    double estimate = EstimateBuildSeconds(s.vertices, s.edges()) * 1.5;  // weights: a property per edge
    estimate += static_cast<double>(s.edges()) * 1e-6;                    // raw CSR copy
    // Per repeat, Quiver + raw + peers: roughly 600 ns per edge over all kernels on this VM class.
    estimate += static_cast<double>(RepeatsFor(ctx.profile, s)) * static_cast<double>(s.edges()) * 600e-9;
    ctx.progress.Plan("analytics", s.label(), estimate);
  }
}

Json RunAnalytics(Context& ctx) {
  Json rows = Json::array();
  for (const Shape& shape : ctx.profile.analytics) {
    ctx.progress.Start("analytics", shape.label());
    RunShape(ctx, shape, rows);
  }
  ctx.progress.Done();
  return rows;
}

}  // namespace quiver::capacity
