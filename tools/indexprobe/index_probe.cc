// quiver-index-probe: the index maintenance on the commit path, as the `indexes` bench family
// measures it (bench/capacity/indexes_family.cc), one scenario at a time and at any size, so that
// it can run under valgrind (callgrind's instruction counts) or perf.
//
//   quiver-index-probe [--scenario batches|upserts|durable] [--vertices N] [--runs R]
//                      [--commits C] [--dir D] [--side both|with|without]
//
//   batches  one producer commits N vertices in batches of 1,000 ("k" and "t": distinct random
//            int64 values, as the family's) into a fresh volatile graph with a unique index on "k"
//            and an ordered one on "t" ("with"), and into one without indexes ("without"),
//            alternately, R times each: vertices/s per run, medians, and with / without.
//   upserts  UpsertVertex of N distinct random keys through a unique index in batches of 1,000 on
//            a fresh volatile graph: "create" (every key new), then "merge" (every key found, the
//            keys in another order); upserts/s per run, medians.
//   online   the online build's commit stall: N vertices ("k", "t" as above) with an exact and a
//            unique index on "k" and an ordered one on "t" (the family's graph at that point);
//            then, R times, a writer thread commits one vertex every 100 us while CreateIndex
//            builds an exact index on "t" (dropped after each run): the longest commit during
//            the build and outside it (0.5 s before and after), their ratio (the family's
//            onlineBuildCommitStall), and when in the build the longest began.
//   reopen   N vertices ("k", "t" as above, batches of 100,000) backed up into D twice (a fresh
//            subdirectory each; D must exist): without indexes, then with the family's unique index on
//            "k" and ordered one on "t"; then each backup opened read-only, alternately, R times: the
//            open's wall time, its checkpoint load and index time (OpenStats), medians, and the
//            ratio of opens per second with / without (the family's reopenWithIndexes); --keep
//            leaves the two backups (D/reopen-without, D/reopen-with) for quiver-reopen-probe.
//   durable  C single-vertex synced commits into a durable graph in D (a fresh subdirectory per
//            run; must exist) with a unique index on "k" ("with") and into one without,
//            alternately, R times each: commits/s, medians, and with / without.
// Each run also reports the process's user CPU seconds (getrusage), the figure to trust on a
// shared, loaded machine. `--side` runs one side only (for valgrind).
//
//   valgrind --tool=callgrind build/release/tools/indexprobe/quiver-index-probe
//       --scenario batches --vertices 50000 --runs 1 --side with
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_args.h"
#include "common/bench_common.h"
#include "quiver/quiver.h"

namespace quiver::bench {
namespace {

constexpr std::uint64_t kBatch = 1'000;

struct Args {
  std::string scenario = "batches";
  std::uint64_t vertices = 1'000'000;
  std::uint64_t commits = 20'000;
  int runs = 3;
  std::string dir;
  std::string side = "both";
  bool keep = false;  // reopen: leave the two backups in --dir (for quiver-reopen-probe, perf)
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(
      stderr,
      "quiver-index-probe: %s\nusage: quiver-index-probe [--scenario batches|upserts|online|durable|reopen] "
      "[--vertices N] [--runs R] [--commits C] [--dir D] [--side both|with|without]\n",
      why);
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  cli::CliArgs flags;
  for (const char* name : {"--scenario", "--vertices", "--runs", "--commits", "--dir", "--side"})
    flags.AddOption(name);
  flags.AddFlag("--keep");
  std::string error;
  if (!flags.Parse(argc - 1, argv + 1, &error)) Usage(error.c_str());
  if (!flags.positional().empty()) Usage("unexpected argument");
  Args a;
  std::uint64_t runs = static_cast<std::uint64_t>(a.runs);
  const auto number = [&](const char* name, std::uint64_t* out) {
    if (flags.Has(name) && !flags.GetU64(name, out)) Usage("sizes must be whole numbers");
  };
  number("--vertices", &a.vertices);
  number("--commits", &a.commits);
  number("--runs", &runs);
  if (flags.Has("--scenario")) a.scenario = flags.Get("--scenario");
  if (flags.Has("--side")) a.side = flags.Get("--side");
  a.dir = flags.Get("--dir");
  a.keep = flags.Has("--keep");
  if (a.scenario != "batches" && a.scenario != "upserts" && a.scenario != "online" &&
      a.scenario != "durable" && a.scenario != "reopen")
    Usage("bad --scenario");
  if (a.side != "both" && a.side != "with" && a.side != "without") Usage("bad --side");
  if ((a.scenario == "durable" || a.scenario == "reopen") && a.dir.empty())
    Usage("--scenario durable and reopen need --dir");
  if (a.vertices < kBatch || a.commits == 0 || runs == 0 || runs > 1000)
    Usage("sizes must be positive, --vertices at least 1000, --runs at most 1000");
  a.vertices = a.vertices / kBatch * kBatch;
  a.runs = static_cast<int>(runs);
  return a;
}

// The family's keys: SplitMix64's output function of the position, a bijection.
std::int64_t KeyOf(std::uint64_t i, std::uint64_t salt) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ULL + salt;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::int64_t>(z ^ (z >> 31));
}
constexpr std::uint64_t kSaltK = 0x6b;
constexpr std::uint64_t kSaltT = 0x74;

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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void CheckOk(const Status& s, const char* what) {
  if (!s.ok()) Die(what, s);
}

void Index(Graph& g, const char* name, const char* label, const char* key, IndexKind kind) {
  CheckOk(
      g.CreateIndex({.name = name, .label = label, .keys = {key}, .kind = kind, .type = ValueType::kInt64}),
      "CreateIndex");
}

struct Timed {
  double rate = 0;  // elements per wall second
  double user = 0;  // user CPU seconds
};

Timed Batches(std::uint64_t n, bool indexed) {
  auto graph = ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
  if (indexed) {
    Index(*graph, "k_unique", "B", "k", IndexKind::kUnique);
    Index(*graph, "t_ordered", "B", "t", IndexKind::kOrdered);
  }
  std::vector<WriteBatch> batches;
  for (std::uint64_t done = 0; done < n; done += kBatch) {
    batches.emplace_back();
    for (std::uint64_t i = done; i < done + kBatch; ++i)
      batches.back().AddVertex("B", {{"k", KeyOf(i, kSaltK)}, {"t", KeyOf(i, kSaltT)}});
  }
  const double u0 = UserSeconds();
  const std::uint64_t t0 = WallNs();
  for (WriteBatch& b : batches) ValueOrDie(graph->Write(std::move(b)), "Write");
  const double seconds = static_cast<double>(WallNs() - t0) / 1e9;
  Timed t{static_cast<double>(n) / seconds, UserSeconds() - u0};
  const Snapshot snap = graph->GetSnapshot();
  if (snap.CountVertices(*snap.FindLabel("B")) != n) Die("batches", InternalError("vertices missing"));
  if (indexed && snap.CountVerticesInRange("B", "t", {}).value() != n)
    Die("batches", InternalError("the ordered index lacks entries"));
  return t;
}

void Upserts(std::uint64_t n, Timed* create, Timed* merge) {
  auto graph = ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
  Index(*graph, "u_key", "U", "k", IndexKind::kUnique);
  std::vector<std::int64_t> order(n);
  for (std::uint64_t i = 0; i < n; ++i) order[i] = KeyOf(i, kSaltK);
  for (const bool merging : {false, true}) {
    if (merging) {
      Rng rng(0x0b5e);
      for (std::uint64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.Uniform(i + 1)]);
    }
    std::vector<WriteBatch> batches;
    for (std::uint64_t done = 0; done < n; done += kBatch) {
      batches.emplace_back();
      for (std::uint64_t i = done; i < done + kBatch; ++i)
        batches.back().UpsertVertex("U", {{"k", order[i]}}, {{"n", static_cast<std::int64_t>(i)}});
    }
    std::uint64_t found = 0;
    const double u0 = UserSeconds();
    const std::uint64_t t0 = WallNs();
    for (WriteBatch& b : batches) {
      const CommitInfo info = ValueOrDie(graph->Write(std::move(b)), "Write");
      for (const bool f : info.vertex_found) found += f;
    }
    const double seconds = static_cast<double>(WallNs() - t0) / 1e9;
    if (found != (merging ? n : 0)) Die("upserts", InternalError("upserts found the wrong vertices"));
    *(merging ? merge : create) = {static_cast<double>(n) / seconds, UserSeconds() - u0};
  }
}

Timed Durable(const std::string& dir, std::uint64_t commits, bool indexed) {
  Options o;
  o.durability = Durability::kDurable;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  o.error_if_exists = true;
  Timed t;
  {
    auto graph = ValueOrDie(Graph::Open(o, dir), "Graph::Open");
    if (indexed) Index(*graph, "d_key", "D", "k", IndexKind::kUnique);
    std::uint64_t next = 0;
    auto commit = [&] {
      WriteBatch b;
      b.AddVertex("D", {{"k", KeyOf(next++, kSaltK)}});
      ValueOrDie(graph->Write(std::move(b)), "Write");
    };
    for (int i = 0; i < 100; ++i) commit();  // warm-up
    const double u0 = UserSeconds();
    const std::uint64_t t0 = WallNs();
    for (std::uint64_t i = 0; i < commits; ++i) commit();
    const double seconds = static_cast<double>(WallNs() - t0) / 1e9;
    t = {static_cast<double>(commits) / seconds, UserSeconds() - u0};
    CheckOk(graph->Close(), "Close");
  }
  std::filesystem::remove_all(dir);
  return t;
}

// One online build beside a paced writer; prints and returns the stall ratio.
double OnlineBuild(Graph& g, std::uint64_t* next, int run) {
  struct Commit {
    std::uint64_t start, end;
  };
  std::vector<Commit> commits;
  commits.reserve(1 << 16);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto due = std::chrono::steady_clock::now();
    while (!stop.load(std::memory_order_relaxed)) {
      WriteBatch b;
      const std::uint64_t i = (*next)++;
      b.AddVertex("P", {{"k", KeyOf(i, kSaltK)}, {"t", KeyOf(i, kSaltT)}});
      const std::uint64_t t0 = WallNs();
      ValueOrDie(g.Write(std::move(b)), "Write");
      commits.push_back({t0, WallNs()});
      due += std::chrono::microseconds(100);
      std::this_thread::sleep_until(due);
      if (std::chrono::steady_clock::now() > due + std::chrono::milliseconds(10))
        due = std::chrono::steady_clock::now();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::uint64_t b0 = WallNs();
  Index(g, "t_online", "P", "t", IndexKind::kExact);
  const std::uint64_t b1 = WallNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  stop = true;
  writer.join();
  CheckOk(g.DropIndex("t_online"), "DropIndex");
  std::uint64_t in = 0, out = 0, in_start = 0;
  for (const Commit& c : commits) {
    const bool during = c.end > b0 && c.start < b1;
    const std::uint64_t d = c.end - c.start;
    if (during && d > in) in = d, in_start = c.start;
    if (!during) out = std::max(out, d);
  }
  const double ratio = static_cast<double>(in) / static_cast<double>(std::max<std::uint64_t>(out, 1));
  std::printf(
      "run %d: build %.3f s; longest commit %.2f ms during (began %.3f s in), %.2f ms outside; ratio %.2f\n",
      run, static_cast<double>(b1 - b0) / 1e9, static_cast<double>(in) / 1e6,
      in_start > b0 ? static_cast<double>(in_start - b0) / 1e9 : 0.0, static_cast<double>(out) / 1e6, ratio);
  return ratio;
}

int RunOnline(const Args& a) {
  auto graph = ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
  std::uint64_t next = 0;
  for (; next < a.vertices; next += 10 * kBatch) {
    WriteBatch b;
    for (std::uint64_t i = next; i < next + 10 * kBatch && i < a.vertices; ++i)
      b.AddVertex("P", {{"k", KeyOf(i, kSaltK)}, {"t", KeyOf(i, kSaltT)}});
    ValueOrDie(graph->Write(std::move(b)), "Write");
  }
  next = a.vertices;
  Index(*graph, "k_exact", "P", "k", IndexKind::kExact);
  Index(*graph, "k_unique", "P", "k", IndexKind::kUnique);
  Index(*graph, "t_ordered", "P", "t", IndexKind::kOrdered);
  std::vector<double> ratios;
  for (int r = 0; r < a.runs; ++r) ratios.push_back(OnlineBuild(*graph, &next, r));
  std::printf("median of %d: stall ratio %.2f; %llu vertices\n", a.runs, Median(ratios),
              static_cast<unsigned long long>(a.vertices));
  return 0;
}

int RunReopen(const Args& a) {
  const std::string dirs[2] = {a.dir + "/reopen-without", a.dir + "/reopen-with"};
  for (const std::string& d : dirs) std::filesystem::remove_all(d);
  {
    auto graph = ValueOrDie(Graph::OpenInMemory(), "OpenInMemory");
    constexpr std::uint64_t kLoadBatch = 100'000;
    for (std::uint64_t done = 0; done < a.vertices; done += kLoadBatch) {
      WriteBatch b;
      for (std::uint64_t i = done; i < std::min(a.vertices, done + kLoadBatch); ++i)
        b.AddVertex("P", {{"k", KeyOf(i, kSaltK)}, {"t", KeyOf(i, kSaltT)}});
      ValueOrDie(graph->Write(std::move(b)), "Write");
    }
    double backup_s[2];
    std::uint64_t t0 = WallNs();
    ValueOrDie(graph->Backup(dirs[0]), "Backup");
    backup_s[0] = static_cast<double>(WallNs() - t0) / 1e9;
    Index(*graph, "k_unique", "P", "k", IndexKind::kUnique);
    Index(*graph, "t_ordered", "P", "t", IndexKind::kOrdered);
    t0 = WallNs();
    ValueOrDie(graph->Backup(dirs[1]), "Backup");
    backup_s[1] = static_cast<double>(WallNs() - t0) / 1e9;
    for (int with = 0; with < 2; ++with) {
      std::uint64_t bytes = 0;
      for (const auto& e : std::filesystem::directory_iterator(dirs[with]))
        if (e.path().filename().string().rfind("checkpoint-", 0) == 0) bytes += e.file_size();
      std::printf("backup %s: %.3f s, checkpoint %llu bytes (%.1f per vertex)\n", with ? "with" : "without",
                  backup_s[with], static_cast<unsigned long long>(bytes),
                  static_cast<double>(bytes) / static_cast<double>(a.vertices));
    }
  }
  Options o;
  o.durability = Durability::kDurable;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  o.read_only = true;
  std::vector<double> open_s[2], load_s[2], index_s[2], cpu_s[2];
  const auto cpu = [] {  // user + system seconds of the process: what a busy machine does not inflate
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  for (int r = 0; r < a.runs; ++r) {
    for (int with = 0; with < 2; ++with) {
      const double c0 = cpu();
      const std::uint64_t t0 = WallNs();
      auto graph = ValueOrDie(Graph::Open(o, dirs[with]), "Open");
      const double seconds = static_cast<double>(WallNs() - t0) / 1e9;
      cpu_s[with].push_back(cpu() - c0);
      const OpenStats st = graph->GetOpenStats();
      if (graph->GetSnapshot().vertex_count() != a.vertices) Die("reopen", InternalError("vertices missing"));
      open_s[with].push_back(seconds);
      load_s[with].push_back(static_cast<double>(st.checkpoint_load_microseconds) / 1e6);
      index_s[with].push_back(static_cast<double>(st.index_build_microseconds) / 1e6);
      std::printf(
          "run %d %s: open %.3f s, CPU %.3f s (checkpoint load %.3f s, indexes %.3f s; %llu built, %llu "
          "loaded)\n",
          r, with ? "with" : "without", seconds, cpu_s[with].back(), load_s[with].back(),
          index_s[with].back(), static_cast<unsigned long long>(st.indexes_built),
          static_cast<unsigned long long>(st.indexes_loaded));
    }
  }
  std::printf(
      "median of %d: open without %.3f s, with %.3f s (indexes %.3f s); with / without %.3f; CPU without "
      "%.3f s, with %.3f s (ratio %.3f); %llu vertices\n",
      a.runs, Median(open_s[0]), Median(open_s[1]), Median(index_s[1]), Median(open_s[0]) / Median(open_s[1]),
      Median(cpu_s[0]), Median(cpu_s[1]), Median(cpu_s[0]) / Median(cpu_s[1]),
      static_cast<unsigned long long>(a.vertices));
  if (!a.keep)
    for (const std::string& d : dirs) std::filesystem::remove_all(d);
  return 0;
}

int Run(const Args& a) {
  if (a.scenario == "online") return RunOnline(a);
  if (a.scenario == "reopen") return RunReopen(a);
  const bool with = a.side != "without", without = a.side != "with";
  std::vector<double> rw, rwo, uw, uwo;
  if (a.scenario == "upserts") {
    std::vector<double> rc, rm, uc, um;
    for (int r = 0; r < a.runs; ++r) {
      Timed c, m;
      Upserts(a.vertices, &c, &m);
      rc.push_back(c.rate), rm.push_back(m.rate), uc.push_back(c.user), um.push_back(m.user);
      std::printf("run %d: create %.0f upserts/s (user %.3f s), merge %.0f upserts/s (user %.3f s)\n", r,
                  c.rate, c.user, m.rate, m.user);
    }
    std::printf("median of %d: create %.0f/s (user %.3f s), merge %.0f/s (user %.3f s); %llu keys\n", a.runs,
                Median(rc), Median(uc), Median(rm), Median(um), static_cast<unsigned long long>(a.vertices));
    return 0;
  }
  for (int r = 0; r < a.runs; ++r) {
    Timed x, y;
    const std::string dir = a.dir + "/run";
    if (without) {
      x = a.scenario == "batches" ? Batches(a.vertices, false) : Durable(dir, a.commits, false);
      rwo.push_back(x.rate), uwo.push_back(x.user);
    }
    if (with) {
      y = a.scenario == "batches" ? Batches(a.vertices, true) : Durable(dir, a.commits, true);
      rw.push_back(y.rate), uw.push_back(y.user);
    }
    std::printf("run %d: without %.0f/s (user %.3f s), with %.0f/s (user %.3f s)\n", r, x.rate, x.user,
                y.rate, y.user);
  }
  if (with && without) {
    std::printf(
        "median of %d: without %.0f/s (user %.3f s), with %.0f/s (user %.3f s), with / without %.3f "
        "(user without / with %.3f)\n",
        a.runs, Median(rwo), Median(uwo), Median(rw), Median(uw), Median(rw) / Median(rwo),
        Median(uwo) / Median(uw));
  }
  return 0;
}

}  // namespace
}  // namespace quiver::bench

int main(int argc, char** argv) { return quiver::bench::Run(quiver::bench::Parse(argc, argv)); }
