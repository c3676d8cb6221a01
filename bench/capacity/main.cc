// quiver-bench: Quiver's capacity bench. Builds deterministic graphs (fixed seed) through the
// public API, measures each figure family next to the same machine's ceilings, and writes a
// report that validates against schemas/capacity-report.schema.json.
//
// Usage: quiver-bench --profile quick|full [--out PATH] [--runner-label TEXT] [--only FAMILY]
//                     [--data-dir DIR] [--record] [--history PATH]
//   --out           report path (default bench/results/capacity-report.json in the source tree)
//   --runner-label  free text naming the runner (default: $QUIVER_BENCH_RUNNER_LABEL, else null)
//   --only          run one family (ceilings always run); the report is marked partial
//   --data-dir      where durable graphs and ceiling files go (default: the system temp dir); the
//                   bench works in a fresh subdirectory and removes it
//   --record        append a summary line to bench/results/history.jsonl as a candidate, then run
//                   scripts/release-gate on it: a full, complete run is gated for real (a pass
//                   publishes it); any other run in report-only mode (verdict printed only)
//   --history       the history --record appends to (default bench/results/history.jsonl)
// Progress goes to stderr. Exit 0: report written (and, with --record, the gate passed or only
// reported); 1: a measurement or the validation failed (nothing is written); 2: usage error;
// 3: the report and the candidate were recorded but the release gate refused to publish it.
//
// Scenarios, in run order (quick | full):
//   ceilings    fresh memory first touch (1 | 4 GiB), then again; fdatasync per 100 B append, per 4 KiB
//               overwrite; 1 MiB writes + fsync; mem bw; pointer chase
//   memory      allocator B/vertex, B/edge, retained (RSS beside): 200Kx2 200Kx10 100Kx20 | 2Mx2 1Mx20 10Mx10
//   memory      the same for one power-law shape: 200Kx10 | 2Mx10 (Zipf sources and targets)
//   writes      durable/volatile 1-element commits, 1/2/8/32 producers: writes/s, p50/p95/p99, group, fsyncs
//   writes      durable/volatile batches of 1,000 and 10,000 vertices, one producer (1 s | 8 s per row)
//   checkpoint  max commit latency during Checkpoint() vs median outside, MB/s: 300K 1M | 1M 4M 20M elements
//   load        reopen (checkpoint + WAL tail replay) time and elements/s of the checkpoint graphs
//   traversal   out-edge sweep, 1 and all threads, vs raw CSR: 1M 5M | 5M 20M 100M edges, + power-law shape;
//               and (traversalLayout) 1M | 5M edges swept after random-order inserts and after Close + Open
//   latency     vertex lookup, 100 out-edges, 2-hop over 800 edges, p50/p95/p99: 10K, 100K, 1M vertices
//   online      2-/3-hop expansion vs CSR, shortest path, top-20 by weight, p50/p95: 200K | 1M x 10
//               (+ 2K x 100 hubs)
//   analytics   projection build vs raw CSR sweep, PageRank BFS WCC CDLP LCC SSSP vs raw CSR kernels,
//               Boost.Graph and igraph beside them, 2 threads: 200K x 10 | 1M x 10, 10M x 10
//   indexes     label count / first id, B per index entry, online build (+ longest commit), unique
//               point lookup vs a hash map, ordered range scan vs a sorted array: 200K | 10M int64
//               keys; batches of 1,000 with 2 indexes vs without; UpsertVertex: 100K | 1M keys
//   import      EVLP ImportNewGraph + Open + Close (a first pass, then the median of 3 more) vs a raw
//               from_chars parse, peak resident vs the graph's bytes: 100K | 10M x 10; Export to EVLP
//               and CSV vs sequential writes; EVLP through batches: 100K | 1M x 10; typed CSV into a
//               new graph: 50K | 1M x 10
//   engine      snapshot acquire + release on 1 and 2 threads (ns per thread, 2-thread / 1-thread ratio):
//               2M | 10M per thread per pass; random-target edge inserts, batches of 100,000 AddEdge with
//               a synchronous Write each (recording and Write timed apart) vs a raw CSR build of the same
//               edges: 1M edges on 100K vertices | 10M on 1M
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ceilings.h"
#include "environment.h"
#include "families.h"
#include "profile.h"
#include "progress.h"
#include "report.h"

namespace quiver::capacity {
namespace {

constexpr const char* kUsage =
    "usage: quiver-bench --profile quick|full [--out PATH] [--runner-label TEXT] [--only FAMILY]\n"
    "                    [--data-dir DIR] [--record] [--history PATH]\n"
    "  FAMILY: ceilings, memory, writes, checkpoint, load, traversal, latency, online, analytics,\n"
    "          indexes, import, engine\n";

struct Args {
  std::string profile = "quick";
  std::optional<std::string> out, runner_label, only, data_dir, history;
  bool record = false;
};

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "quiver-bench: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool has_value = false;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= args.size()) UsageError(flag + " needs a value");
      return args[++i];
    };
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (flag == "--profile") {
      a.profile = take();
      if (!ProfileNamed(a.profile)) UsageError("unknown profile '" + a.profile + "'");
    } else if (flag == "--out") {
      a.out = take();
    } else if (flag == "--runner-label") {
      a.runner_label = take();
    } else if (flag == "--only") {
      a.only = take();
      bool known = false;
      for (std::string_view f : kFamilies) known |= f == *a.only;
      if (!known) UsageError("unknown family '" + *a.only + "'");
    } else if (flag == "--data-dir") {
      a.data_dir = take();
    } else if (flag == "--history") {
      a.history = take();
    } else if (flag == "--record" && !has_value) {
      a.record = true;
    } else {
      UsageError("unknown argument '" + args[i] + "'");
    }
  }
  if (a.out && a.out->empty()) UsageError("--out needs a path");
  if (!a.runner_label) {
    if (const char* env = std::getenv("QUIVER_BENCH_RUNNER_LABEL"); env != nullptr && *env != '\0')
      a.runner_label = env;
  }
  return a;
}

// A fresh directory inside `parent` (created if missing).
std::string MakeRunDir(const std::string& parent) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  std::string pattern = (std::filesystem::path(parent) / "quiver-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "quiver-bench: cannot create a directory in the data dir: %s\n",
                 std::strerror(errno));
    std::exit(1);
  }
  return pattern;
}

int Run(const Args& args) {
  const Profile profile = *ProfileNamed(args.profile);
  const std::string parent = args.data_dir ? *args.data_dir : std::filesystem::temp_directory_path().string();
  const std::string run_dir = MakeRunDir(parent);

  Json report;
  report["schemaVersion"] = kSchemaVersion;
  report["schemaMinor"] = kSchemaMinor;
  report["generatedAtUtc"] = UtcNow();
  report["tool"] = {{"name", "quiver-bench"}, {"version", ProjectVersion()}};
  report["source"] = ProbeSource();
  report["environment"] = ProbeEnvironment(run_dir, args.runner_label);
  report["profile"] = profile.name;
  report["partial"] = args.only.has_value();
  Json selected = Json::array();
  for (std::string_view f : kFamilies)
    if (!args.only || f == *args.only || f == "ceilings") selected.push_back(std::string(f));
  report["selectedFamilies"] = selected;

  Progress progress;
  Json ceilings;
  Context ctx{profile, run_dir, progress, ceilings, {}, {}};
  for (const Json& f : selected) ctx.selected.insert(f.get<std::string>());

  PlanCeilings(profile, progress);
  if (ctx.Selected("memory")) PlanMemory(ctx);
  if (ctx.Selected("writes")) PlanWrites(ctx);
  if (ctx.Selected("checkpoint") || ctx.Selected("load")) PlanCheckpointAndLoad(ctx);
  if (ctx.Selected("traversal")) PlanTraversal(ctx);
  if (ctx.Selected("latency")) PlanLatency(ctx);
  if (ctx.Selected("online")) PlanOnline(ctx);
  if (ctx.Selected("analytics")) PlanAnalytics(ctx);
  if (ctx.Selected("indexes")) PlanIndexes(ctx);
  if (ctx.Selected("import")) PlanImport(ctx);
  if (ctx.Selected("engine")) PlanEngine(ctx);
  std::fprintf(stderr, "quiver-bench: profile %s, about %.0f s estimated; data in a fresh directory on %s\n",
               profile.name.c_str(), progress.EstimatedTotalSeconds(),
               report["environment"]["dataDirFileSystem"].dump().c_str());

  ceilings = MeasureCeilings(profile, run_dir, progress);
  ceilings["memoryFloor"] = MemoryFloor();
  const std::string skipped = "not selected (--only " + args.only.value_or("") + ")";
  Json memory = ctx.Selected("memory") ? RunMemory(ctx) : NotMeasured(skipped);
  Json writes = ctx.Selected("writes") ? RunWrites(ctx) : NotMeasured(skipped);
  Json checkpoint = NotMeasured(skipped), load = NotMeasured(skipped);
  if (ctx.Selected("checkpoint") || ctx.Selected("load")) {
    Json cp, ld;
    RunCheckpointAndLoad(ctx, &cp, &ld);
    if (ctx.Selected("checkpoint")) checkpoint = cp;
    if (ctx.Selected("load")) load = ld;
  }
  Json traversal = ctx.Selected("traversal") ? RunTraversal(ctx) : NotMeasured(skipped);
  Json traversal_layout = ctx.Selected("traversal") ? RunTraversalLayout(ctx) : NotMeasured(skipped);
  Json latency = ctx.Selected("latency") ? RunLatency(ctx) : NotMeasured(skipped);
  Json online = ctx.Selected("online") ? RunOnline(ctx) : NotMeasured(skipped);
  Json analytics = ctx.Selected("analytics") ? RunAnalytics(ctx) : NotMeasured(skipped);
  Json indexes = ctx.Selected("indexes") ? RunIndexes(ctx) : NotMeasured(skipped);
  Json import_rows = ctx.Selected("import") ? RunImport(ctx) : NotMeasured(skipped);
  Json engine = ctx.Selected("engine") ? RunEngine(ctx) : NotMeasured(skipped);
  ctx.shared.clear();
  std::error_code ec;
  std::filesystem::remove_all(run_dir, ec);

  report["ceilings"] = ceilings;
  report["memory"] = memory;
  report["writes"] = writes;
  report["checkpoint"] = checkpoint;
  report["load"] = load;
  report["traversal"] = traversal;
  report["traversalLayout"] = traversal_layout;
  report["latency"] = latency;
  report["online"] = online;
  report["analytics"] = analytics;
  report["indexes"] = indexes;
  report["import"] = import_rows;
  report["engine"] = engine;
  report["run"] = {{"seed", kSeed}, {"elapsedSeconds", progress.ElapsedSeconds()}};

  const std::string out = args.out ? *args.out : DefaultOutputPath();
  std::string error;
  if (!ValidateAndWrite(report, out, &error)) {
    std::fprintf(stderr, "quiver-bench: %s\n", error.c_str());
    return 1;
  }
  std::fprintf(stderr, "quiver-bench: report written (%.0f s)\n", progress.ElapsedSeconds());
  if (args.record) {
    const Json line = HistoryLine(report);
    const std::string history = args.history ? *args.history : HistoryPath();
    if (!AppendHistory(line, history, &error)) {
      std::fprintf(stderr, "quiver-bench: %s\n", error.c_str());
      return 1;
    }
    std::fprintf(stderr, "quiver-bench: history line appended (candidate %s)\n",
                 line["runId"].get<std::string>().c_str());
    const bool enforce = profile.name == "full" && !args.only;
    const int gate = RunGate(line["runId"].get<std::string>(), history, enforce);
    if (enforce && gate != 0) {
      std::fprintf(stderr, "quiver-bench: the release gate did not publish this run (exit %d)\n", gate);
      return 3;
    }
  }
  return 0;
}

}  // namespace
}  // namespace quiver::capacity

int main(int argc, char** argv) { return quiver::capacity::Run(quiver::capacity::ParseArgs(argc, argv)); }
