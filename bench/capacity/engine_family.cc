// engine: the cost of pinning a version from one and from two threads, and random-target edge
// inserts through synchronous batches, each beside the bound it is read against.
//
// snapshotAcquireRelease: a volatile graph of kSnapshotGraphVertices vertices; each timed thread
// loops `engine_snapshot_ops` times over Graph::GetSnapshot() and the Snapshot's destructor (one
// acquire + release of the graph's current version per iteration), timing its own loop with the
// monotonic clock; the threads start together (a spin barrier, outside the timed loops). A pass is
// one such loop per thread; a thread's figure for the pass is its loop time / ops. The 1-thread and
// 2-thread passes alternate (after one untimed 2-thread warm-up pass), so a load from outside the
// bench that comes and goes falls on both. Rows:
//   1 thread    the median over `engine_snapshot_passes` passes of the one thread's ns. No machine
//               ceiling and no target: it is the bound the 2-thread row is read against.
//   2 threads   both threads on the same graph's current version at once; per pass the mean of
//               the two threads' ns, and the row's value is the median over the passes (detail:
//               each thread's own median). Its "ceiling" is the 1-thread row's figure of the same
//               run, not a machine bound: the ratio (2-thread ns / 1-thread ns) says how much a
//               second reader slows each reader down, and the target is <= 1.5. Beside it, in the
//               detail, a raw shared counter (fetch_add + fetch_sub on one cache line, the least a
//               reference count on one shared object costs) timed the same way on 1 and 2 threads:
//               how much a design that shares one line between readers loses on this machine.
// Both rows' detail.leastBusyThreadShare: the median over the passes of the lowest of the timed
// threads' CPU time / wall time. Below 1, the kernel ran something else on a thread's core during
// its loop and its wall time includes that: on a machine shared with other work (2 cores and a
// build beside) the 2-thread figure, and so the ratio, are then an upper bound. threadCpuNs: the
// same median of the threads' own CPU time per operation, which such a load does not inflate (but
// two threads that took turns on one core never contended, so it can understate the 2-thread cost).
// randomEdgeInserts: one writer. Per pass a fresh volatile graph with V vertices committed first
// (untimed, through graphs.h's AddVertices), then E edges of type "E" with seeded uniform random
// source and target (the same list every pass, drawn before the passes) recorded into batches of
// kBuildBatchOps (100,000) WriteBatch::AddEdge calls, each batch committed with a synchronous
// Graph::Write before the next is recorded. The value is edges/s over the pass's record + Write
// time (median of `engine_edge_passes` passes); the detail splits the median pass into the time
// spent recording (AddEdge calls) and the time inside Write, and gives the spread of the passes.
// Ceiling, the same run: a raw CSR build of the same edge list on one thread (count out-degrees,
// prefix sum, scatter 8-byte target ids into a fresh array), edges/s, median of as many passes. It
// builds one direction and stores no edge records; Quiver stores both adjacency directions and an
// edge record, so the ratio is a bound, not a like-for-like. Target: >= 5M edges/s.
// The memory family's buildEdgesPerSecond is the same kind of figure through WriteAsync with one
// batch in flight (recording overlapping the writer) on its own shapes.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "families.h"
#include "timing.h"
#include "utilisation.h"

namespace quiver::capacity {
namespace {

constexpr std::uint64_t kSnapshotGraphVertices = 1'000;

double EngineMedian(std::vector<double> v) { return v.empty() ? 0.0 : QuantileD(v, 0.5); }

// One thread's timed loop: its wall time and its own CPU time (less when the kernel ran something
// else on its core for part of the loop).
struct Timed {
  double wall_ns = 0;
  double cpu_ns = 0;
};

// Runs body(thread) on `threads` threads that start together (the caller is thread 0); returns
// each thread's own loop time. `body` is the timed loop; thread creation is not timed.
template <typename Body>
std::vector<Timed> TimeTogether(int threads, Body&& body) {
  std::vector<Timed> times(static_cast<std::size_t>(threads));
  std::atomic<int> ready{0};
  auto run = [&](int t) {
    ready.fetch_add(1, std::memory_order_acq_rel);
    while (ready.load(std::memory_order_acquire) < threads) {
    }
    const std::uint64_t cpu0 = ThreadCpuNs();
    const std::uint64_t t0 = NowNs();
    body(t);
    const std::uint64_t t1 = NowNs();
    times[static_cast<std::size_t>(t)] = {static_cast<double>(t1 - t0),
                                          static_cast<double>(ThreadCpuNs() - cpu0)};
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (std::thread& t : pool) t.join();
  return times;
}

struct PerThread {
  double mean_ns = 0;             // median over the passes of the threads' mean ns per operation
  std::vector<double> thread_ns;  // each thread's median ns per operation
  double least_busy = 0;          // median over the passes of the least busy thread's CPU / wall time
  double cpu_ns = 0;              // median over the passes of the threads' mean CPU ns per operation
};

struct OneAndTwo {
  PerThread one, two;
};

// `passes` rounds, each a pass of op() `ops` times on 1 thread and then one on 2 threads at once:
// interleaved, so a load from outside the bench that comes and goes falls on both sides alike.
template <typename Op>
OneAndTwo MeasureOneAndTwo(std::uint64_t ops, int passes, Op&& op) {
  auto loop = [&](int) {
    for (std::uint64_t i = 0; i < ops; ++i) op();
  };
  TimeTogether(2, loop);  // warm-up, not a figure
  std::vector<double> means[2], least_busy[2], cpu_means[2];
  std::vector<double> per[2][2];
  for (int p = 0; p < passes; ++p) {
    for (int threads : {1, 2}) {
      const std::vector<Timed> times = TimeTogether(threads, loop);
      double sum = 0, cpu_sum = 0, busy = 1;
      for (std::size_t t = 0; t < times.size(); ++t) {
        const double each = times[t].wall_ns / static_cast<double>(ops);
        per[threads - 1][t].push_back(each);
        sum += each;
        cpu_sum += times[t].cpu_ns / static_cast<double>(ops);
        busy = std::min(busy, times[t].cpu_ns / times[t].wall_ns);
      }
      means[threads - 1].push_back(sum / static_cast<double>(threads));
      least_busy[threads - 1].push_back(busy);
      cpu_means[threads - 1].push_back(cpu_sum / static_cast<double>(threads));
    }
  }
  OneAndTwo r;
  for (int i = 0; i < 2; ++i) {
    PerThread& out = i == 0 ? r.one : r.two;
    out.mean_ns = EngineMedian(means[i]);
    out.least_busy = EngineMedian(least_busy[i]);
    out.cpu_ns = EngineMedian(cpu_means[i]);
    for (int t = 0; t <= i; ++t) out.thread_ns.push_back(EngineMedian(per[i][t]));
  }
  return r;
}

std::vector<Json> SnapshotRows(Context& ctx) {
  const Profile& p = ctx.profile;
  const std::uint64_t ops = p.engine_snapshot_ops;
  const int passes = p.engine_snapshot_passes;
  BuiltGraph built;
  built.graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (engine)");
  built.first = AddVertices(*built.graph, kSnapshotGraphVertices);
  const Graph& graph = *built.graph;
  auto acquire_release = [&graph] {
    const Snapshot s = graph.GetSnapshot();
    Consume(s.valid());
  };
  if (!graph.GetSnapshot().valid()) Die("engine", InternalError("GetSnapshot returned no version"));
  ctx.progress.Note("snapshot acquire + release, 1 and 2 threads");
  const OneAndTwo snapshots = MeasureOneAndTwo(ops, passes, acquire_release);
  const PerThread& one = snapshots.one;
  const PerThread& two = snapshots.two;
  // The raw shared counter: one cache line every thread increments and decrements.
  struct alignas(64) Line {
    std::atomic<std::uint64_t> count{0};
  };
  Line line;
  auto counter = [&line] {
    line.count.fetch_add(1, std::memory_order_acq_rel);
    line.count.fetch_sub(1, std::memory_order_acq_rel);
  };
  ctx.progress.Note("shared counter, 1 and 2 threads");
  const OneAndTwo counters = MeasureOneAndTwo(ops, passes, counter);
  const PerThread& counter_one = counters.one;
  const PerThread& counter_two = counters.two;
  CheckClose(*built.graph);

  const std::string variant_tail = "GetSnapshot() + ~Snapshot() on one graph's current version (" +
                                   std::to_string(kSnapshotGraphVertices) + " vertices, volatile, no writer)";
  const char* no_time = "below the clock's resolution";
  TargetRow solo("snapshotAcquireRelease", "1 thread; " + variant_tail);
  solo.elements = ops;
  solo.threads = 1;
  solo.samples = static_cast<std::uint64_t>(passes);
  solo.value = Positive(one.mean_ns, no_time);
  solo.unit = "ns";
  solo.ceiling = NotMeasured("none: this row is the bound the 2-thread row is read against");
  solo.ratio = NotMeasured("none: the 2-thread row carries the ratio to this figure");
  solo.ratio_definition = "none (the 2-thread row's ratio is its figure / this one)";
  solo.target = "none: the 1-thread cost the 2-thread row is held to";
  solo.no_target = "no target: the bound of the 2-thread row";
  solo.detail["sharedCounterNs"] = Positive(counter_one.mean_ns, no_time);
  solo.detail["leastBusyThreadShare"] =
      Positive(one.least_busy, "no CPU time was counted (CLOCK_THREAD_CPUTIME_ID)");
  solo.detail["threadCpuNs"] = Positive(one.cpu_ns, "no CPU time was counted (CLOCK_THREAD_CPUTIME_ID)");

  TargetRow pair("snapshotAcquireRelease", "2 threads at once, each timing its own loop; " + variant_tail);
  pair.elements = ops;
  pair.threads = 2;
  pair.samples = static_cast<std::uint64_t>(passes);
  pair.value = Positive(two.mean_ns, no_time);
  pair.unit = "ns";
  pair.ceiling = solo.value;
  pair.ceiling_definition =
      "not a machine bound: the 1-thread row's figure of the same run (the same loop on one thread alone)";
  pair.ratio = Ratio(pair.value, pair.ceiling, "a side was not measured");
  pair.ratio_definition = "ns per acquire + release per thread on 2 threads / on 1 thread (1: no slowdown)";
  pair.target = "ratio <= 1.5";
  pair.met = [](double, double ratio) { return ratio <= 1.5; };
  pair.detail["thread0Ns"] = Positive(two.thread_ns[0], no_time);
  pair.detail["thread1Ns"] = Positive(two.thread_ns[1], no_time);
  pair.detail["sharedCounterOneThreadNs"] = Positive(counter_one.mean_ns, no_time);
  pair.detail["sharedCounterTwoThreadsNs"] = Positive(counter_two.mean_ns, no_time);
  pair.detail["leastBusyThreadShare"] =
      Positive(two.least_busy, "no CPU time was counted (CLOCK_THREAD_CPUTIME_ID)");
  pair.detail["threadCpuNs"] = Positive(two.cpu_ns, "no CPU time was counted (CLOCK_THREAD_CPUTIME_ID)");
  ctx.progress.Note(pair.value.dump() + " ns on 2 threads, " + solo.value.dump() + " ns on 1");
  return {ToJson(solo), ToJson(pair)};
}

struct EdgeList {
  std::vector<std::uint32_t> source, target;  // relative to the first vertex
};

EdgeList DrawEdges(std::uint64_t vertices, std::uint64_t edges) {
  EdgeList list;
  list.source.resize(edges);
  list.target.resize(edges);
  Rng rng(kSeed ^ (vertices * 0x5851F42D4C957F2DULL + edges));
  for (std::uint64_t i = 0; i < edges; ++i) {
    list.source[i] = static_cast<std::uint32_t>(rng.Uniform(vertices));
    list.target[i] = static_cast<std::uint32_t>(rng.Uniform(vertices));
  }
  return list;
}

// One raw CSR build of `list` (out-direction, 8-byte target ids); returns its seconds. With
// `offsets_out`, hands the offsets back (the graph's out-degrees are checked against them).
double BuildRawCsr(const EdgeList& list, std::uint64_t vertices, std::vector<std::uint64_t>* offsets_out) {
  const std::uint64_t e = list.source.size();
  const std::uint64_t t0 = NowNs();
  std::vector<std::uint64_t> offsets(vertices + 1, 0);
  for (std::uint64_t i = 0; i < e; ++i) ++offsets[list.source[i] + 1];
  for (std::uint64_t v = 0; v < vertices; ++v) offsets[v + 1] += offsets[v];
  std::vector<std::uint64_t> cursor(offsets.begin(), offsets.end() - 1);
  std::vector<std::uint64_t> neighbours(e);
  for (std::uint64_t i = 0; i < e; ++i) neighbours[cursor[list.source[i]]++] = list.target[i];
  const double seconds = SecondsSince(t0);
  Consume(neighbours[e / 2]);
  if (offsets_out != nullptr) *offsets_out = std::move(offsets);
  return seconds;
}

struct InsertPass {
  double record_seconds = 0;
  double write_seconds = 0;
  double total() const { return record_seconds + write_seconds; }
};

InsertPass InsertEdges(const EdgeList& list, std::uint64_t vertices,
                       const std::vector<std::uint64_t>* offsets) {
  std::unique_ptr<Graph> graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (engine)");
  const VertexId first = AddVertices(*graph, vertices);
  const std::uint64_t base = first.value();
  const std::uint64_t e = list.source.size();
  std::uint64_t record_ns = 0, write_ns = 0;
  for (std::uint64_t i = 0; i < e;) {
    const std::uint64_t end = std::min(e, i + kBuildBatchOps);
    const std::uint64_t t0 = NowNs();
    WriteBatch batch;
    for (; i < end; ++i) batch.AddEdge("E", VertexId(base + list.source[i]), VertexId(base + list.target[i]));
    const std::uint64_t t1 = NowNs();
    ValueOrDie(graph->Write(std::move(batch)), "engine edge batch");
    const std::uint64_t t2 = NowNs();
    record_ns += t1 - t0;
    write_ns += t2 - t1;
  }
  // Checked outside the timing: every edge is there, from the source drawn.
  const Snapshot snap = graph->GetSnapshot();
  if (snap.edge_count() != e) Die("engine", InternalError("the graph lacks edges after the inserts"));
  if (offsets != nullptr) {
    for (std::uint64_t v = 0; v < vertices; ++v)
      if (snap.OutDegree(VertexId(base + v)) != (*offsets)[v + 1] - (*offsets)[v])
        Die("engine", InternalError("an out-degree differs from the raw CSR's"));
  }
  CheckClose(*graph);
  return {static_cast<double>(record_ns) / 1e9, static_cast<double>(write_ns) / 1e9};
}

Json EdgeInsertRow(Context& ctx) {
  const Profile& p = ctx.profile;
  const std::uint64_t v = p.engine_edge_vertices, e = p.engine_edges;
  const int passes = p.engine_edge_passes;
  const EdgeList list = DrawEdges(v, e);
  const auto edges = static_cast<double>(e);

  ctx.progress.Note("raw CSR build of the same edge list");
  std::vector<std::uint64_t> offsets;
  BuildRawCsr(list, v, &offsets);  // warm-up; its offsets check the graph's degrees
  std::vector<double> csr_rates;
  for (int i = 0; i < passes; ++i) csr_rates.push_back(edges / BuildRawCsr(list, v, nullptr));

  std::vector<InsertPass> runs;
  for (int i = 0; i < passes; ++i) {
    ctx.progress.Note("insert pass " + std::to_string(i + 1) + "/" + std::to_string(passes));
    runs.push_back(InsertEdges(list, v, i + 1 == passes ? &offsets : nullptr));
  }
  std::sort(runs.begin(), runs.end(),
            [](const InsertPass& a, const InsertPass& b) { return a.total() < b.total(); });
  const InsertPass& median = runs[runs.size() / 2];

  TargetRow row("randomEdgeInserts", std::to_string(v) + " vertices committed, then " + std::to_string(e) +
                                         " edges, uniform random source and target; batches of " +
                                         std::to_string(kBuildBatchOps) +
                                         " AddEdge, a synchronous Write each, one writer, volatile");
  row.elements = e;
  row.threads = 1;
  row.samples = static_cast<std::uint64_t>(passes);
  const char* no_time = "no time elapsed";
  row.value = Positive(edges / median.total(), no_time);
  row.unit = "edgesPerSecond";
  row.ceiling = Positive(EngineMedian(csr_rates), no_time);
  row.ceiling_definition =
      "a raw CSR build of the same edge list, 1 thread: count out-degrees, prefix sum, scatter 8-byte target "
      "ids "
      "into a fresh array (one direction, no edge records; median of as many passes)";
  row.ratio = Ratio(row.value, row.ceiling, "a side was not measured");
  row.ratio_definition = "figure (the median pass, recording + Write) / ceiling";
  row.target = ">= 5M edges/s";
  row.met = [](double value, double) { return value >= 5e6; };
  row.detail["vertices"] = Count(v, "no vertices");
  row.detail["batches"] = Count((e + kBuildBatchOps - 1) / kBuildBatchOps, "no batches");
  row.detail["recordSeconds"] = Positive(median.record_seconds, no_time);
  row.detail["writeSeconds"] = Positive(median.write_seconds, no_time);
  row.detail["recordEdgesPerSecond"] = Positive(edges / median.record_seconds, no_time);
  row.detail["writeEdgesPerSecond"] = Positive(edges / median.write_seconds, no_time);
  row.detail["slowestPassEdgesPerSecond"] = Positive(edges / runs.back().total(), no_time);
  row.detail["fastestPassEdgesPerSecond"] = Positive(edges / runs.front().total(), no_time);
  ctx.progress.Note(row.value.dump() + " edges/s (record " + row.detail["recordSeconds"].dump() +
                    " s, Write " + row.detail["writeSeconds"].dump() + " s), raw CSR " + row.ceiling.dump() +
                    " edges/s");
  return ToJson(row);
}

}  // namespace

void PlanEngine(Context& ctx) {
  const Profile& p = ctx.profile;
  // Four measurements (acquire on 1 and 2 threads, the counter on 1 and 2), 10-40 ns an operation.
  ctx.progress.Plan(
      "engine", "snapshotAcquireRelease",
      4.0 * p.engine_snapshot_passes * static_cast<double>(p.engine_snapshot_ops) * 30e-9 + 0.2);
  ctx.progress.Plan("engine", "randomEdgeInserts",
                    p.engine_edge_passes * EstimateBuildSeconds(p.engine_edge_vertices, p.engine_edges) +
                        static_cast<double>(p.engine_edges) * 50e-9 * p.engine_edge_passes);
}

Json RunEngine(Context& ctx) {
  Json rows = Json::array();
  ctx.progress.Start("engine", "snapshotAcquireRelease");
  for (Json& r : SnapshotRows(ctx)) rows.push_back(std::move(r));
  ctx.progress.Start("engine", "randomEdgeInserts");
  rows.push_back(EdgeInsertRow(ctx));
  ctx.progress.Done();
  return rows;
}

}  // namespace quiver::capacity
