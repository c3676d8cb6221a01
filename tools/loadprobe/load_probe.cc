// quiver-load-probe: batch edge inserts with random targets, timed beside a raw CSR build.
//
//   quiver-load-probe [--vertices N] [--degree K] [--batch B] [--runs R] [--order source|shuffled]
//                     [--dir D]
//
// Per run, on a fresh in-memory graph: N vertices (untimed), then N*K edges of one type, edge i
// from vertex i / K to a uniformly random vertex (seeded: the same edges every run), committed
// with Graph::Write in batches of B. `shuffled` permutes the edges first, so sources are random
// too. Each batch is recorded (WriteBatch::AddEdge, timed on this thread) and then written
// (Write's wall time: validation and apply on the writer thread), one after the other, so the two
// are told apart. Reported per run and as medians:
//   commit  edges / the summed Write wall time: what the engine's apply path sustains
//   total   edges / the wall time of the whole edge phase (recording included)
//   user    the process's user CPU seconds over the edge phase (getrusage)
// The ceiling, in the same run: a raw CSR build of the same edges in both directions (count
// degrees, prefix sums, scatter (neighbour, edge id) pairs), edges / its wall time; the ratio is
// commit / CSR.
//
// With --dir D (must not exist) one more load goes into a durable graph in D with no checkpoint
// (automatic checkpoints off, none on Close), which is closed and opened again: the open replays
// every edge from the WAL, through the same apply path; its wall time is reported.
//
// Under valgrind (instruction counts of the apply path), a small shape:
//   valgrind --tool=callgrind build/release/tools/loadprobe/quiver-load-probe
//       --vertices 20000 --degree 10 --runs 1
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli_args.h"
#include "common/bench_common.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

constexpr std::uint64_t kSeed = 0x5157'4552'0013ULL;

struct Args {
  std::uint64_t vertices = 1'000'000;
  std::uint64_t degree = 10;
  std::uint64_t batch = 100'000;
  int runs = 3;
  std::string order = "source";
  std::string dir;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "quiver-load-probe: %s\nusage: quiver-load-probe [--vertices N] [--degree K] [--batch B] "
               "[--runs R] [--order source|shuffled] [--dir D]\n",
               why);
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  cli::CliArgs flags;
  for (const char* name : {"--vertices", "--degree", "--batch", "--runs", "--order", "--dir"})
    flags.AddOption(name);
  std::string error;
  if (!flags.Parse(argc - 1, argv + 1, &error)) Usage(error.c_str());
  if (!flags.positional().empty()) Usage("unexpected argument");
  Args a;
  std::uint64_t runs = static_cast<std::uint64_t>(a.runs);
  const auto number = [&](const char* name, std::uint64_t* out) {
    if (flags.Has(name) && !flags.GetU64(name, out)) Usage("sizes must be whole numbers");
  };
  number("--vertices", &a.vertices);
  number("--degree", &a.degree);
  number("--batch", &a.batch);
  number("--runs", &runs);
  if (flags.Has("--order")) a.order = flags.Get("--order");
  a.dir = flags.Get("--dir");
  if (a.order != "source" && a.order != "shuffled") Usage("bad --order");
  if (a.vertices == 0 || a.degree == 0 || a.batch == 0 || runs == 0 || runs > 1000)
    Usage("sizes must be positive (and --runs at most 1000)");
  a.runs = static_cast<int>(runs);
  return a;
}

using Edges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// Endpoints relative to the first vertex.
Edges MakeEdges(const Args& a) {
  Rng rng(kSeed);
  Edges edges(a.vertices * a.degree);
  for (std::uint64_t i = 0; i < edges.size(); ++i) edges[i] = {i / a.degree, rng.Uniform(a.vertices)};
  if (a.order == "shuffled")
    for (std::uint64_t i = edges.size() - 1; i > 0; --i) std::swap(edges[i], edges[rng.Uniform(i + 1)]);
  return edges;
}

std::uint64_t WallNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

double UserSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec) / 1e6;
}

struct Load {
  double commit_s = 0;  // summed Write wall time
  double total_s = 0;   // the edge phase's wall time
  double user_s = 0;    // process user CPU over the edge phase
};

Load LoadEdges(Graph& graph, const Edges& edges, std::uint64_t batch_ops) {
  const VertexId first = AddVertices(graph, 1 + std::max_element(edges.begin(), edges.end())->first, "Node");
  Load l;
  const double u0 = UserSeconds();
  const std::uint64_t t0 = WallNs();
  std::uint64_t commit_ns = 0;
  for (std::uint64_t i = 0; i < edges.size();) {
    const std::uint64_t end = std::min<std::uint64_t>(edges.size(), i + batch_ops);
    WriteBatch batch;
    for (; i < end; ++i)
      batch.AddEdge("E", VertexId(first.value() + edges[i].first), VertexId(first.value() + edges[i].second));
    const std::uint64_t w0 = WallNs();
    ValueOrDie(graph.Write(std::move(batch)), "Write");
    commit_ns += WallNs() - w0;
  }
  l.total_s = static_cast<double>(WallNs() - t0) / 1e9;
  l.user_s = UserSeconds() - u0;
  l.commit_s = static_cast<double>(commit_ns) / 1e9;
  return l;
}

// A raw CSR of the edges in both directions: offsets per vertex, (neighbour, edge id) entries.
// Returns its wall seconds; `check` receives a sum over it so nothing is optimised away.
double BuildCsr(const Edges& edges, std::uint64_t n, std::uint64_t* check) {
  const std::uint64_t t0 = WallNs();
  std::vector<std::uint64_t> out_off(n + 1, 0), in_off(n + 1, 0);
  for (const auto& [s, t] : edges) {
    ++out_off[s + 1];
    ++in_off[t + 1];
  }
  for (std::uint64_t v = 0; v < n; ++v) {
    out_off[v + 1] += out_off[v];
    in_off[v + 1] += in_off[v];
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out(edges.size()), in(edges.size());
  for (std::uint64_t e = 0; e < edges.size(); ++e) {
    const auto [s, t] = edges[e];
    out[out_off[s]++] = {t, e};
    in[in_off[t]++] = {s, e};
  }
  const double seconds = static_cast<double>(WallNs() - t0) / 1e9;
  *check += out[edges.size() / 2].first + in[edges.size() / 3].second + out_off[n / 2] + in_off[n / 3];
  return seconds;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run(const Args& a) {
  const Edges edges = MakeEdges(a);
  const double m = static_cast<double>(edges.size());
  std::printf("%llu vertices, %llu edges (%s order), batches of %llu, %d runs\n",
              static_cast<unsigned long long>(a.vertices), static_cast<unsigned long long>(edges.size()),
              a.order.c_str(), static_cast<unsigned long long>(a.batch), a.runs);
  std::vector<double> commit, total, user, csr;
  std::uint64_t check = 0;
  for (int r = 0; r < a.runs; ++r) {
    Load l;
    {
      auto graph = ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
      l = LoadEdges(*graph, edges, a.batch);
      const Snapshot s = graph->GetSnapshot();
      if (s.edge_count() != edges.size()) Die("load", InternalError("edge count differs"));
    }
    const double c = BuildCsr(edges, a.vertices, &check);
    commit.push_back(m / l.commit_s / 1e6);
    total.push_back(m / l.total_s / 1e6);
    user.push_back(l.user_s);
    csr.push_back(m / c / 1e6);
    std::printf(
        "run %d: commit %.3f M edges/s, total %.3f M edges/s (%.2f s wall), user %.2f s; CSR build "
        "%.1f M edges/s (%.3f s)\n",
        r, commit.back(), total.back(), l.total_s, l.user_s, csr.back(), c);
  }
  std::printf(
      "median: commit %.3f M edges/s, total %.3f M edges/s, user %.2f s, CSR %.1f M edges/s, "
      "commit/CSR %.4f\n",
      Median(commit), Median(total), Median(user), Median(csr), Median(commit) / Median(csr));
  if (!a.dir.empty()) {
    Options options;
    options.error_if_exists = true;
    options.durable.checkpoint_wal_bytes = 0;
    options.durable.checkpoint_on_close = false;
    {
      auto graph = ValueOrDie(Graph::Open(options, a.dir), "Open");
      const Load l = LoadEdges(*graph, edges, a.batch);
      std::printf("durable load: commit %.3f M edges/s, total %.2f s wall\n", m / l.commit_s / 1e6,
                  l.total_s);
      if (Status s = graph->Close(); !s.ok()) Die("Close", s);
    }
    options.error_if_exists = false;
    const double u0 = UserSeconds();
    const std::uint64_t t0 = WallNs();
    auto graph = ValueOrDie(Graph::Open(options, a.dir), "reopen");
    const double open_s = static_cast<double>(WallNs() - t0) / 1e9;
    if (graph->GetSnapshot().edge_count() != edges.size()) Die("reopen", InternalError("edge count differs"));
    std::printf("reopen from the WAL: %.2f s wall, %.2f s user, %.3f M edges/s replayed\n", open_s,
                UserSeconds() - u0, m / open_s / 1e6);
  }
  std::printf("(check %llu)\n", static_cast<unsigned long long>(check));
  return 0;
}

}  // namespace
}  // namespace quiver::bench

int main(int argc, char** argv) { return quiver::bench::Run(quiver::bench::Parse(argc, argv)); }
