// quiver-sweep-probe: one graph, one layout, its out-edge sweep beside a raw CSR sweep.
//
//   quiver-sweep-probe --layout inserted|shuffled|compacted|loaded [--dir D] [--vertices N] [--degree K]
//                      [--passes P] [--sweep quiver|csr|both]
//
// The graph: N vertices, each with exactly K out-edges of one type to uniformly random targets
// (seeded, the same graph every run). `inserted` adds the edges in batches of 100,000 in source
// order (as quiver-bench builds its graphs); `shuffled` adds the same edges in a random order, so
// every out-array grows by appends scattered over the whole build; `compacted` builds `shuffled`
// and calls Graph::Compact, which packs each leaf's entries in one block; `loaded` builds `shuffled` in a
// durable graph in directory D (which must not exist), closes it (a checkpoint) and opens it
// again, so the adjacency is the checkpoint loader's.
//
// It then copies the snapshot's out-edges into a CSR (8-byte offsets and neighbour ids) and runs P
// passes of each sweep, alternating, each in a function of its own (SweepQuiverPass,
// SweepCsrPass) so valgrind can count only them:
//   valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*SweepQuiverPass*' ...
// For each pass it reports the thread's user+system CPU time (CLOCK_THREAD_CPUTIME_ID); at the
// end the median of each and the ratio quiver / CSR in edges per CPU second.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "cli_args.h"
#include "common/bench_common.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

// The graph's seed (the micro benches' sweep graph uses the same SplitMix64 stream).
constexpr std::uint64_t kSeed = 0x5157'4552'0001ULL;

struct Args {
  std::string layout = "shuffled";
  std::string dir;
  std::string sweep = "both";
  std::uint64_t vertices = 100'000;
  std::uint64_t degree = 10;
  int passes = 5;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "quiver-sweep-probe: %s\nusage: quiver-sweep-probe --layout "
               "inserted|shuffled|compacted|loaded [--dir D] "
               "[--vertices N] [--degree K] [--passes P] [--sweep quiver|csr|both]\n",
               why);
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  cli::CliArgs flags;
  for (const char* name : {"--layout", "--dir", "--sweep", "--vertices", "--degree", "--passes"})
    flags.AddOption(name);
  std::string error;
  if (!flags.Parse(argc - 1, argv + 1, &error)) Usage(error.c_str());
  if (!flags.positional().empty()) Usage("unexpected argument");
  Args a;
  std::uint64_t passes = static_cast<std::uint64_t>(a.passes);
  const auto number = [&](const char* name, std::uint64_t* out) {
    if (flags.Has(name) && !flags.GetU64(name, out)) Usage("sizes must be whole numbers");
  };
  number("--vertices", &a.vertices);
  number("--degree", &a.degree);
  number("--passes", &passes);
  if (flags.Has("--layout")) a.layout = flags.Get("--layout");
  if (flags.Has("--sweep")) a.sweep = flags.Get("--sweep");
  a.dir = flags.Get("--dir");
  if (a.layout != "inserted" && a.layout != "shuffled" && a.layout != "compacted" && a.layout != "loaded")
    Usage("bad --layout");
  if (a.layout == "loaded" && a.dir.empty()) Usage("--layout loaded needs --dir");
  if (a.sweep != "quiver" && a.sweep != "csr" && a.sweep != "both") Usage("bad --sweep");
  if (a.vertices == 0 || a.degree == 0 || passes == 0 || passes > 1000)
    Usage("sizes must be positive (and --passes at most 1000)");
  a.passes = static_cast<int>(passes);
  return a;
}

// Edge i of the graph: source i / degree, a random target. Shuffled: a random permutation of them.
std::vector<std::pair<std::uint64_t, std::uint64_t>> Edges(const Args& a, std::uint64_t first) {
  Rng rng(kSeed);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> edges(a.vertices * a.degree);
  for (std::uint64_t i = 0; i < edges.size(); ++i)
    edges[i] = {first + i / a.degree, first + rng.Uniform(a.vertices)};
  if (a.layout != "inserted") {
    for (std::uint64_t i = edges.size() - 1; i > 0; --i) std::swap(edges[i], edges[rng.Uniform(i + 1)]);
  }
  return edges;
}

void Fill(Graph& graph, const Args& a) {
  const VertexId first = AddVertices(graph, a.vertices, "Node");
  const auto edges = Edges(a, first.value());
  AddEdges(graph, edges.size(), "E", [&](std::uint64_t i) { return edges[i]; });
}

std::unique_ptr<Graph> Build(const Args& a) {
  // The layout asked for and no other: no background compaction, which
  // would also take a core from the sweeps.
  Options options;
  options.compaction.after_changes = 0;
  if (a.layout != "loaded") {
    auto graph = ValueOrDie(Graph::OpenInMemory(options), "OpenInMemory");
    Fill(*graph, a);
    if (a.layout == "compacted") {
      const auto t0 = std::chrono::steady_clock::now();
      const CompactStats c = ValueOrDie(graph->Compact(), "Compact");
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("compact: %.1f ms, %llu steps (%.2f ms a step), %llu entries (%.1f M a second)\n", ms,
                  static_cast<unsigned long long>(c.steps),
                  ms / static_cast<double>(std::max<std::uint64_t>(c.steps, 1)),
                  static_cast<unsigned long long>(c.entries), static_cast<double>(c.entries) / ms / 1e3);
    }
    return graph;
  }
  options.error_if_exists = true;
  {
    auto graph = ValueOrDie(Graph::Open(options, a.dir), "Open");
    Fill(*graph, a);
    if (Status s = graph->Close(); !s.ok()) Die("Close", s);
  }
  options.error_if_exists = false;
  return ValueOrDie(Graph::Open(options, a.dir), "reopen");
}

struct Csr {
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint64_t> neighbours;
};

Csr CopyCsr(const Snapshot& s) {
  Csr c;
  const std::uint64_t n = s.vertex_id_limit();
  c.offsets.resize(n + 1);
  for (std::uint64_t v = 0; v < n; ++v) {
    c.offsets[v] = c.neighbours.size();
    for (const EdgeGroup& g : s.OutEdges(VertexId(v)))
      for (const EdgeEntry& e : g.entries) c.neighbours.push_back(e.neighbor().value());
  }
  c.offsets[n] = c.neighbours.size();
  return c;
}

[[gnu::noinline]] std::uint64_t SweepQuiverPass(const Snapshot& s) {
  std::uint64_t sum = 0;
  s.ScanEdges(0, s.vertex_id_limit(), Direction::kOut, [&sum](VertexId, const EdgeGroup& g) {
    for (const EdgeEntry& e : g.entries) sum += e.neighbor().value();
  });
  return sum;
}

[[gnu::noinline]] std::uint64_t SweepCsrPass(const Csr& c) {
  std::uint64_t sum = 0;
  const std::uint64_t n = c.offsets.size() - 1;
  for (std::uint64_t v = 0; v < n; ++v)
    for (std::uint64_t k = c.offsets[v]; k < c.offsets[v + 1]; ++k) sum += c.neighbours[k];
  return sum;
}

std::uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

template <typename Fn>
std::uint64_t TimedPass(Fn&& fn, std::uint64_t expected, const char* what) {
  const std::uint64_t t0 = ThreadCpuNs();
  const std::uint64_t sum = fn();
  const std::uint64_t ns = ThreadCpuNs() - t0;
  if (sum != expected) Die(what, InternalError("sweep sum differs from the CSR's"));
  return ns;
}

double Median(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]);
}

int Run(const Args& a) {
  auto graph = Build(a);
  const Snapshot snap = graph->GetSnapshot();
  const Csr csr = CopyCsr(snap);
  const std::uint64_t edges = csr.neighbours.size();
  const std::uint64_t expected =
      std::accumulate(csr.neighbours.begin(), csr.neighbours.end(), std::uint64_t{0});
  const bool quiver = a.sweep != "csr", raw = a.sweep != "quiver";
  std::vector<std::uint64_t> q_ns, c_ns;
  for (int p = 0; p < a.passes; ++p) {
    if (quiver) q_ns.push_back(TimedPass([&] { return SweepQuiverPass(snap); }, expected, "quiver sweep"));
    if (raw) c_ns.push_back(TimedPass([&] { return SweepCsrPass(csr); }, expected, "CSR sweep"));
  }
  std::printf("layout %s, %llu vertices, %llu edges, %d passes\n", a.layout.c_str(),
              static_cast<unsigned long long>(a.vertices), static_cast<unsigned long long>(edges), a.passes);
  const std::uint64_t bytes = graph->GetMemoryStats().allocated_bytes;
  std::printf("graph memory (allocator): %llu bytes, %.1f B per edge\n",
              static_cast<unsigned long long>(bytes),
              static_cast<double>(bytes) / static_cast<double>(edges));
  auto report = [&](const char* name, const std::vector<std::uint64_t>& ns) {
    std::printf("%-7s cpu ms per pass:", name);
    for (std::uint64_t t : ns) std::printf(" %.2f", static_cast<double>(t) / 1e6);
    std::printf("  median %.2f ms, %.1f M edges per cpu s\n", Median(ns) / 1e6,
                static_cast<double>(edges) / Median(ns) * 1e3);
  };
  if (quiver) report("quiver", q_ns);
  if (raw) report("csr", c_ns);
  if (quiver && raw)
    std::printf("ratio quiver/csr (edges per cpu s, medians): %.3f\n", Median(c_ns) / Median(q_ns));
  return 0;
}

}  // namespace
}  // namespace quiver::bench

int main(int argc, char** argv) { return quiver::bench::Run(quiver::bench::Parse(argc, argv)); }
