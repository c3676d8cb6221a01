// indexes: property indexes, label sets and upserts (docs/indexes.md), each figure beside a ceiling
// measured in the same run, with the target it is held to and whether it is met.
//
// Graph (volatile): profile.index_keys vertices labelled "P", each with two int64 properties, "k"
// and "t", both distinct random 64-bit values (SplitMix64 of the vertex's position, a bijection),
// built in batches of kBuildBatchOps. On it, in this order:
//   countVerticesOfLabel / firstIdOfLabel
//                      Snapshot::CountVertices(label) and the first id of Vertices(label), per
//                      call: one O(1) call is shorter than the timer's own overhead, so each
//                      sample times kLabelCallsPerSample calls in a row (RDTSCP;
//                      profile.index_lookup_samples / 16 samples) and p50 / p95 are of the
//                      samples divided by that count (detail callsPerSample). The label is
//                      laundered before each call and the answers summed into a consumed sum, so
//                      no call is folded or hoisted. Target <= 100 ns each; ceiling: the
//                      dependent-load latency of the machine (ceilings.dependentLoad), ratio
//                      figure / ceiling
//   memoryPerEntry     per kind (exact, unique on "k"; ordered on "t"): the graph's allocated bytes
//                      minus retired bytes (GetMemoryStats, the allocator's block sizes) after
//                      CreateIndex minus before, over the index's entries; target <= 24 B (exact,
//                      unique), <= 20 B (ordered); floor: 16 B (an 8-byte key and an 8-byte id in
//                      a sorted array), computed, ratio floor / figure
//   onlineBuild        CreateIndex of an exact index on "t" while a writer thread commits single
//                      vertices of "P" (one every 100 us), kBuildRounds times (the index dropped
//                      between builds): entries / CreateIndex's wall time, the median of the builds,
//                      target >= 10M entries/s (the engine builds on 2 threads); ceiling: sorting
//                      the same (key, id) pairs from a flat array on 2 threads (halves, merge)
//   onlineBuildCommitStall  per build, the longest of the writer's commits that overlap it beside
//                      the longest of those before and after it (as long as the build each, at
//                      least profile.index_outside_seconds): ratio during / outside; the row is the
//                      build of the median ratio (a longest commit is one sample: one preemption on
//                      a shared machine decides it), with the lowest and highest in its detail;
//                      target <= 2
//   pointLookupUnique  FindVertex("P", "k", key) for random keys of the graph (unique index), p50
//                      and p95 of single timed lookups; ceiling: absl::flat_hash_map<int64, uint64>
//                      of the same keys, the same key sequence; target: engine <= 2 x the map
//   rangeScanOrdered   VerticesInRange("P", "t", [lo, hi]) over profile.index_range_entries
//                      entries (bounds chosen from the sorted keys), entries/s, median of the ranges;
//                      ceiling: the same range from a sorted array of (key, id) pairs (two binary
//                      searches and a copy of the ids into a fresh vector); target >= 100M/s
// Then, each on fresh graphs:
//   volatileBatches    one producer commits batches of 1,000 vertices ("k" and "t" as above) into
//                      a graph with a unique index on "k" and an ordered one on "t", and into one
//                      without indexes, alternately, kRounds times each: vertices/s, medians;
//                      ratio with / without, target >= 0.5
//   upsertVertex       UpsertVertex of profile.index_upsert_keys distinct random keys through a
//                      unique index, one producer, batches of 1,000: "create" (every key new), then
//                      "merge" (every key found; the same keys in another order); upserts/s;
//                      ceiling: try_emplace of the same keys in the same order into an
//                      absl::flat_hash_map on one thread; target >= 500K/s
// Every answer is checked (lookups against the key's id, ranges against the sorted array, upserts'
// found flags, the build's entry count) before a figure is kept; a mismatch stops the bench.
// Durable graphs, in the data directory (on tmpfs an fdatasync costs nothing, so the commit ratio
// there is the index's CPU cost against a commit's, a lower bound for a real device):
//   durableCommitsWithUniqueIndex  one producer's synced single-vertex commits into a graph with a
//                      unique index on "k" and into one without, in alternating windows of
//                      profile.index_durable_seconds, kRounds each: commits/s, medians; ratio
//                      with / without, target >= 0.9
//   reopenWithIndexes  profile.index_reopen_vertices keyed vertices (volatile) backed up (Backup:
//                      a checkpoint) without indexes, then again with a unique index on "k" and an
//                      ordered one on "t"; each backup opened read-only, alternately, kRounds
//                      times: vertices / Open's wall time, medians (checkpoint format 5 stores
//                      each ready index's entries, sorted, and Open copies them into the trees;
//                      indexesLoaded counts them); ratio with / without, target >= 0.7
#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "families.h"
#include "timing.h"

namespace quiver::capacity {
namespace {

constexpr int kRounds = 3;
// Online builds of the same index, each its own stall sample (RunOnlineBuild).
constexpr int kBuildRounds = 3;
constexpr std::uint64_t kBatchVertices = 1'000;
constexpr double kFloorBytesPerEntry = 16;
// Calls of CountVertices / the first id timed together as one sample: one call takes about as
// long as an empty RDTSCP bracket, whose median the timer subtracts, so timed alone its p50 came
// out at or below zero ("below the timer's resolution"); 256 calls last a few microseconds. The
// p95 of such a sample is of a 256-call mean: a rare slow call is spread over its sample.
constexpr std::uint64_t kLabelCallsPerSample = 256;

// Distinct 64-bit values: SplitMix64's output function is a bijection of its input.
std::int64_t KeyOf(std::uint64_t i, std::uint64_t salt) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ULL + salt;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::int64_t>(z ^ (z >> 31));
}
constexpr std::uint64_t kSaltK = 0x6b;
constexpr std::uint64_t kSaltT = 0x74;

double IndexesMedian(std::vector<double> v) { return QuantileD(v, 0.5); }

std::string Below(TickTimer& t) {
  return "below the timer's resolution (" + std::to_string(t.ns_per_tick()) + " ns per tick, overhead " +
         std::to_string(t.overhead_ns()) + " ns subtracted)";
}

// The "P" graph: vertex ids[i] holds "k" = keys[i] and "t" = ts[i]. The first `bulk` are the
// built graph (ids dense from `first`); the online build's writer appends the rest.
struct KeyedGraph {
  std::unique_ptr<Graph> graph;
  std::uint64_t first = 0, bulk = 0;
  std::vector<std::uint64_t> ids;
  std::vector<std::int64_t> keys, ts;
};

// Adds vertices [done, done + n) of the keyed shape to `batch`.
void AddKeyed(WriteBatch& batch, std::string_view label, std::uint64_t from, std::uint64_t n) {
  for (std::uint64_t i = from; i < from + n; ++i)
    batch.AddVertex(label, {{"k", KeyOf(i, kSaltK)}, {"t", KeyOf(i, kSaltT)}});
}

KeyedGraph BuildKeyed(std::uint64_t n) {
  KeyedGraph g;
  g.graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (indexes)");
  std::optional<std::uint64_t> next;
  auto check = [&](const std::optional<CommitInfo>& info) {
    if (!info) return;
    for (VertexId v : info->vertices) {
      if (!next) g.first = *(next = v.value());
      if (v.value() != (*next)++) Die("indexes build", InternalError("vertex ids are not dense"));
    }
  };
  PipelinedWriter writer(*g.graph);
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t m = std::min(kBuildBatchOps, n - done);
    WriteBatch batch;
    AddKeyed(batch, "P", done, m);
    done += m;
    check(writer.Submit(std::move(batch)));
  }
  check(writer.Drain());
  g.bulk = n;
  for (std::uint64_t i = 0; i < n; ++i) {
    g.ids.push_back(g.first + i);
    g.keys.push_back(KeyOf(i, kSaltK));
    g.ts.push_back(KeyOf(i, kSaltT));
  }
  return g;
}

double LiveBytes(const Graph& graph) {
  const MemoryStats m = graph.GetMemoryStats();
  return static_cast<double>(m.allocated_bytes) - static_cast<double>(m.retired_bytes);
}

std::uint64_t EntriesOf(const Graph& graph, std::string_view name) {
  for (const IndexInfo& info : graph.GetSnapshot().Indexes())
    if (info.spec.name == name) return info.entries;
  Die("indexes", InternalError("index " + std::string(name) + " is not listed"));
}

void CheckOk(const Status& s, const char* what) {
  if (!s.ok()) Die(what, s);
}

void RunLabelCount(Context& ctx, const KeyedGraph& g, std::vector<Json>& rows) {
  const Snapshot snap = g.graph->GetSnapshot();
  const LabelId label = *snap.FindLabel("P");
  const std::uint64_t n = g.bulk;
  // A sixteenth as many samples as single lookups get: still 16 x as many calls in all.
  const std::uint64_t samples = std::max<std::uint64_t>(ctx.profile.index_lookup_samples / 16, 100);
  const Json& dram = ctx.ceilings["dependentLoad"]["latencyNs"];
  for (const bool first_id : {false, true}) {
    TickTimer timer(samples);
    std::uint64_t sum = 0;
    // kLabelCallsPerSample calls; the sum of their answers is consumed inside the bracket.
    auto op = [&] {
      std::uint64_t s = 0;
      for (std::uint64_t c = 0; c < kLabelCallsPerSample; ++c) {
        std::uint32_t raw = label.value();
        Launder(raw);  // as far as the compiler knows, each call asks about another label
        s += first_id ? (*snap.Vertices(LabelId(raw)).begin()).value() : snap.CountVertices(LabelId(raw));
      }
      Consume(s);
      sum = s;
    };
    for (std::uint64_t i = 0; i < samples / 10; ++i) op();
    for (std::uint64_t i = 0; i < samples; ++i) timer.Time(op);
    if (sum != (first_id ? g.first : n) * kLabelCallsPerSample)
      Die("indexes label set", InternalError("CountVertices or the first id of the label is wrong"));
    const std::string below = Below(timer);
    for (const double q : {0.5, 0.95}) {
      TargetRow r{first_id ? "firstIdOfLabel" : "countVerticesOfLabel", q == 0.5 ? "p50" : "p95"};
      r.elements = n;
      r.samples = timer.size();
      r.value = Positive(timer.QuantileNs(q) / static_cast<double>(kLabelCallsPerSample), below);
      r.detail["callsPerSample"] = kLabelCallsPerSample;
      r.unit = "ns";
      r.ceiling = dram;
      r.ceiling_definition = "ceilings.dependentLoad.latencyNs: one DRAM-missing dependent load";
      r.ratio = Ratio(r.value, dram, "a side was not measured");
      r.ratio_definition = "figure / one dependent load";
      r.target = "<= 100 ns (O(1)) at 10M vertices";
      r.met = [](double v, double) { return v <= 100; };
      rows.push_back(ToJson(r));
    }
    ctx.progress.Note(std::string(first_id ? "first id" : "count") + " p95 " + rows.back()["value"].dump() +
                      " ns (p95)");
  }
}

void RunMemoryPerEntry(Context& ctx, KeyedGraph& g, std::vector<Json>& rows) {
  struct Kind {
    const char* name;
    const char* index;
    const char* key;
    IndexKind kind;
    double target;
  };
  const Kind kinds[] = {{"exact", "k_exact", "k", IndexKind::kExact, 24},
                        {"unique", "k_unique", "k", IndexKind::kUnique, 24},
                        {"ordered", "t_ordered", "t", IndexKind::kOrdered, 20}};
  for (const Kind& k : kinds) {
    const double before = LiveBytes(*g.graph);
    const std::uint64_t t0 = NowNs();
    CheckOk(g.graph->CreateIndex(
                {.name = k.index, .label = "P", .keys = {k.key}, .kind = k.kind, .type = ValueType::kInt64}),
            "indexes CreateIndex");
    const double seconds = SecondsSince(t0);
    const double after = LiveBytes(*g.graph);
    const std::uint64_t entries = EntriesOf(*g.graph, k.index);
    if (entries != g.ids.size()) Die("indexes memory", InternalError("the index lacks entries"));
    TargetRow r{"memoryPerEntry", k.name};
    r.elements = entries;
    r.samples = 1;
    r.value = Positive((after - before) / static_cast<double>(entries), "no allocation was counted");
    r.unit = "bytesPerEntry";
    r.ceiling = kFloorBytesPerEntry;
    r.ceiling_definition =
        "computed, not measured: an 8-byte key and an 8-byte id per entry in a sorted array";
    r.ratio = Ratio(r.ceiling, r.value, "no allocation was counted");
    r.ratio_definition = "floor / figure";
    const double target = k.target;
    r.target = "<= " + std::to_string(static_cast<int>(target)) + " B per entry";
    r.met = [target](double v, double) { return v <= target; };
    r.detail["createIndexSeconds"] = Positive(seconds, "no time elapsed");
    rows.push_back(ToJson(r));
    ctx.progress.Note(std::string(k.name) + ": " + rows.back()["value"].dump() + " B/entry");
  }
}

// Sorts `pairs` on two threads: each half, then an in-place merge.
void SortOnTwoThreads(std::vector<std::pair<std::int64_t, std::uint64_t>>& pairs) {
  const auto mid = pairs.begin() + static_cast<std::ptrdiff_t>(pairs.size() / 2);
  std::thread other([&] { std::sort(pairs.begin(), mid); });
  std::sort(mid, pairs.end());
  other.join();
  std::inplace_merge(pairs.begin(), mid, pairs.end());
}

void RunOnlineBuild(Context& ctx, KeyedGraph& g, std::vector<Json>& rows) {
  // The ceiling first: the same (key, id) pairs sorted from a flat array on 2 threads.
  const std::uint64_t n = g.ids.size();
  double sort_rate = 0;
  {
    std::vector<std::pair<std::int64_t, std::uint64_t>> pairs(n);
    for (std::uint64_t i = 0; i < n; ++i) pairs[i] = {g.ts[i], g.ids[i]};
    const std::uint64_t t0 = NowNs();
    SortOnTwoThreads(pairs);
    sort_rate = static_cast<double>(n) / SecondsSince(t0);
  }

  // kBuildRounds builds of the same index (dropped between them), each with a writer committing
  // single vertices of "P", paced, timestamps recorded. Each build's figures are the longest commit
  // during it and outside it; a longest commit is one sample, and on a shared machine one
  // preemption decides it (one build measured 41.7 and the next run's 1.98), so the rows give the
  // round of the median ratio, and the detail the spread.
  struct Round {
    double build_seconds = 0;
    std::uint64_t entries = 0;
    std::uint64_t longest_in = 0, longest_out = 0, n_in = 0, n_out = 0, longest_in_after = 0;
    std::uint64_t p99_in = 0, p99_out = 0;
    double ratio() const {
      return longest_out == 0 ? 0.0 : static_cast<double>(longest_in) / static_cast<double>(longest_out);
    }
  };
  auto one_build = [&](bool keep) {
    struct Commit {
      std::uint64_t start, end, id;
    };
    std::vector<Commit> commits;
    commits.reserve(1 << 20);
    std::atomic<bool> stop{false};
    const std::uint64_t first = g.ids.size();  // positions past the graph's: fresh keys
    std::thread writer([&] {
      std::uint64_t i = first;
      auto next = std::chrono::steady_clock::now();
      while (!stop.load(std::memory_order_relaxed)) {
        WriteBatch b;
        AddKeyed(b, "P", i++, 1);
        const std::uint64_t t0 = NowNs();
        auto info = g.graph->Write(std::move(b));
        const std::uint64_t t1 = NowNs();
        if (!info.ok()) Die("indexes online build writer", info.status());
        commits.push_back({t0, t1, info->vertices.at(0).value()});
        next += std::chrono::microseconds(100);
        std::this_thread::sleep_until(next);
        if (std::chrono::steady_clock::now() > next + std::chrono::milliseconds(10))
          next = std::chrono::steady_clock::now();
      }
    });
    const double outside = ctx.profile.index_outside_seconds;
    std::this_thread::sleep_for(std::chrono::duration<double>(outside));
    const std::uint64_t b0 = NowNs();
    const Status s = g.graph->CreateIndex({.name = "t_online",
                                           .label = "P",
                                           .keys = {"t"},
                                           .kind = IndexKind::kExact,
                                           .type = ValueType::kInt64});
    const std::uint64_t b1 = NowNs();
    Round r;
    r.build_seconds = static_cast<double>(b1 - b0) / 1e9;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::max(outside, r.build_seconds)));
    stop = true;
    writer.join();
    CheckOk(s, "indexes online CreateIndex");
    for (std::uint64_t j = 0; j < commits.size(); ++j) {
      g.ids.push_back(commits[j].id);
      g.keys.push_back(KeyOf(first + j, kSaltK));
      g.ts.push_back(KeyOf(first + j, kSaltT));
    }
    r.entries = EntriesOf(*g.graph, "t_online");
    const std::uint64_t vertices =
        g.graph->GetSnapshot().CountVertices(*g.graph->GetSnapshot().FindLabel("P"));
    if (r.entries != vertices)
      Die("indexes online build", InternalError("the index does not hold every vertex"));
    if (!keep) CheckOk(g.graph->DropIndex("t_online"), "indexes online DropIndex");

    std::vector<std::uint64_t> in_ns, out_ns;
    std::uint64_t longest_in_start = 0;
    for (const Commit& c : commits) {
      const bool during = c.end > b0 && c.start < b1;
      (during ? in_ns : out_ns).push_back(c.end - c.start);
      if (during && c.end - c.start > r.longest_in) longest_in_start = c.start;
      (during ? r.longest_in : r.longest_out) =
          std::max(during ? r.longest_in : r.longest_out, c.end - c.start);
      ++(during ? r.n_in : r.n_out);
    }
    r.longest_in_after = longest_in_start > b0 ? longest_in_start - b0 : 0;
    if (!in_ns.empty()) r.p99_in = Quantile(in_ns, 0.99);
    if (!out_ns.empty()) r.p99_out = Quantile(out_ns, 0.99);
    return r;
  };
  std::vector<Round> rounds;
  for (int i = 0; i < kBuildRounds; ++i) rounds.push_back(one_build(/*keep=*/i + 1 == kBuildRounds));
  std::vector<double> rates, seconds;
  for (const Round& r : rounds) {
    rates.push_back(static_cast<double>(r.entries) / r.build_seconds);
    seconds.push_back(r.build_seconds);
  }
  const double rate = QuantileD(rates, 0.5);
  std::vector<Round> by_ratio = rounds;
  std::sort(by_ratio.begin(), by_ratio.end(),
            [](const Round& a, const Round& b) { return a.ratio() < b.ratio(); });
  const Round& mid = by_ratio[by_ratio.size() / 2];
  std::uint64_t n_in = 0;
  for (const Round& r : rounds) n_in += r.n_in;

  TargetRow build{"onlineBuild", "exact int64, 2 build threads"};
  build.elements = rounds.back().entries;
  build.threads = 2;
  build.samples = rounds.size();
  build.value = Positive(rate, "no time elapsed");
  build.unit = "entriesPerSecond";
  build.ceiling = Positive(sort_rate, "no time elapsed");
  build.ceiling_definition =
      "std::sort of the same (key, id) pairs in a flat array, halves on 2 threads, then merged";
  build.ratio = Ratio(build.value, build.ceiling, "a side was not measured");
  build.ratio_definition = "figure / ceiling";
  build.target = ">= 10M entries/s";
  build.met = [](double v, double) { return v >= 10e6; };
  build.detail["buildSeconds"] = Positive(QuantileD(seconds, 0.5), "no time elapsed");  // the median build
  build.detail["commitsDuringBuild"] = Count(n_in, "no commit overlapped the build");
  build.detail["builds"] = Count(rounds.size(), "no build");
  rows.push_back(ToJson(build));

  TargetRow stall{"onlineBuildCommitStall", "single-vertex commits, one every 100 us"};
  stall.elements = mid.entries;
  stall.threads = 2;
  stall.samples = mid.n_in + mid.n_out;
  stall.value = Count(mid.longest_in, "no commit overlapped the build");
  stall.unit = "ns";
  stall.ceiling = Count(mid.longest_out, "no commit outside the build");
  stall.ceiling_definition =
      "the longest of the same writer's commits before and after the same build (the build of the median "
      "ratio of " +
      std::to_string(rounds.size()) + ")";
  stall.ratio = Ratio(stall.value, stall.ceiling, "a side was not measured");
  stall.ratio_definition = "longest commit during the build / longest outside it; the median over the builds";
  stall.target = "ratio <= 2";
  stall.met = [](double, double q) { return q <= 2; };
  if (mid.n_in > 0) stall.detail["p99CommitDuringNs"] = Count(mid.p99_in, "below the clock");
  if (mid.n_out > 0) stall.detail["p99CommitOutsideNs"] = Count(mid.p99_out, "below the clock");
  // Where in the build the longest commit began (the build's declaration, collection and sort, or
  // the publishing commit at its end): seconds after CreateIndex was called.
  stall.detail["longestDuringStartedAfterSeconds"] =
      mid.longest_in_after > 0 ? Positive(static_cast<double>(mid.longest_in_after) / 1e9, "no time elapsed")
                               : NotMeasured("the longest commit began before CreateIndex was called");
  stall.detail["commitsDuringBuild"] = Count(mid.n_in, "no commit overlapped the build");
  stall.detail["commitsOutsideBuild"] = Count(mid.n_out, "no commit outside the build");
  stall.detail["builds"] = Count(rounds.size(), "no build");
  stall.detail["lowestBuildRatio"] = Positive(by_ratio.front().ratio(), "a side was not measured");
  stall.detail["highestBuildRatio"] = Positive(by_ratio.back().ratio(), "a side was not measured");
  rows.push_back(ToJson(stall));
  std::string ratios;
  for (const Round& r : rounds) ratios += (ratios.empty() ? "" : ", ") + std::to_string(r.ratio());
  ctx.progress.Note("online build " + rows[rows.size() - 2]["value"].dump() + " entries/s; stall ratios " +
                    ratios);
}

void RunPointLookups(Context& ctx, const KeyedGraph& g, std::vector<Json>& rows) {
  const std::uint64_t n = g.ids.size();
  absl::flat_hash_map<std::int64_t, std::uint64_t> map;
  map.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) map.emplace(g.keys[i], g.ids[i]);
  const Snapshot snap = g.graph->GetSnapshot();
  const std::uint64_t samples = ctx.profile.index_lookup_samples;
  TickTimer engine(samples), raw(samples);
  Rng rng(kSeed ^ 0x1d3);
  for (std::uint64_t s = 0; s < samples + samples / 10; ++s) {
    const std::uint64_t i = rng.Uniform(n);
    const std::int64_t key = g.keys[i];
    std::uint64_t got = 0, want = 0;
    auto lookup = [&] {
      auto r = snap.FindVertex("P", "k", key);
      got = r.ok() && r->has_value() ? (*r)->value() : 0;
    };
    auto find = [&] {
      auto it = map.find(key);
      want = it == map.end() ? 0 : it->second;
    };
    if (s < samples / 10) {
      lookup();
      find();
    } else {
      engine.Time(lookup);
      raw.Time(find);
    }
    Consume(want);
    if (got != g.ids[i] || want != got)
      Die("indexes point lookup", InternalError("FindVertex answered wrong"));
  }
  const std::string below = Below(engine);
  for (const double q : {0.5, 0.95}) {
    TargetRow r{"pointLookupUnique", q == 0.5 ? "p50" : "p95"};
    r.elements = n;
    r.samples = engine.size();
    r.value = Positive(engine.QuantileNs(q), below);
    r.unit = "ns";
    r.ceiling = Positive(raw.QuantileNs(q), below);
    r.ceiling_definition =
        "absl::flat_hash_map<int64, uint64>::find of the same keys, same order, same quantile";
    r.ratio = Ratio(r.value, r.ceiling, "a side was below the timer's resolution");
    r.ratio_definition = "figure / ceiling";
    r.target = "<= 2 x the hash map";
    r.met = [](double, double q2) { return q2 <= 2; };
    rows.push_back(ToJson(r));
  }
  ctx.progress.Note("FindVertex p50 " + rows[rows.size() - 2]["value"].dump() + " ns (map " +
                    rows[rows.size() - 2]["ceiling"].dump() + " ns)");
}

void RunRangeScans(Context& ctx, const KeyedGraph& g, std::vector<Json>& rows) {
  const std::uint64_t n = g.ids.size();
  const std::uint64_t m = std::min(ctx.profile.index_range_entries, n);
  std::vector<std::pair<std::int64_t, std::uint64_t>> sorted(n);
  for (std::uint64_t i = 0; i < n; ++i) sorted[i] = {g.ts[i], g.ids[i]};
  std::sort(sorted.begin(), sorted.end());
  const Snapshot snap = g.graph->GetSnapshot();
  Rng rng(kSeed ^ 0x5ca);
  std::vector<double> engine_rate, raw_rate;
  for (int s = 0; s < ctx.profile.index_range_scans + 2; ++s) {
    const std::uint64_t from = rng.Uniform(n - m + 1);
    const std::int64_t lo = sorted[from].first, hi = sorted[from + m - 1].first;
    const IndexRange range{.lo = RangeBound{lo}, .hi = RangeBound{hi}};
    std::uint64_t t0 = NowNs();
    auto got = snap.VerticesInRange("P", "t", range);
    const double e_ns = static_cast<double>(NowNs() - t0);
    if (!got.ok()) Die("indexes range scan", got.status());
    t0 = NowNs();
    const auto b = std::lower_bound(sorted.begin(), sorted.end(), std::pair(lo, std::uint64_t{0}));
    const auto e = std::upper_bound(b, sorted.end(), std::pair(hi, ~std::uint64_t{0}));
    std::vector<std::uint64_t> ids;
    ids.reserve(static_cast<std::size_t>(e - b));
    for (auto it = b; it != e; ++it) ids.push_back(it->second);
    const double r_ns = static_cast<double>(NowNs() - t0);
    if (got->size() != m || ids.size() != m)
      Die("indexes range scan", InternalError("VerticesInRange returned the wrong number of ids"));
    for (std::uint64_t j = 0; j < m; ++j)
      if ((*got)[j].value() != ids[j]) Die("indexes range scan", InternalError("VerticesInRange differs"));
    if (s < 2) continue;  // warm-up
    engine_rate.push_back(static_cast<double>(m) / e_ns * 1e9);
    raw_rate.push_back(static_cast<double>(m) / r_ns * 1e9);
  }
  TargetRow r{"rangeScanOrdered", std::to_string(m) + " entries per range"};
  r.elements = n;
  r.samples = engine_rate.size();
  r.value = Positive(IndexesMedian(engine_rate), "no time elapsed");
  r.unit = "entriesPerSecond";
  r.ceiling = Positive(IndexesMedian(raw_rate), "no time elapsed");
  r.ceiling_definition =
      "the same range from a sorted array of (key, id) pairs: two binary searches, ids copied into a fresh "
      "vector";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.ratio_definition = "figure / ceiling (medians over the ranges)";
  r.target = ">= 100M entries/s, 1 thread";
  r.met = [](double v, double) { return v >= 100e6; };
  rows.push_back(ToJson(r));
  ctx.progress.Note("range scan " + rows.back()["value"].dump() + " entries/s (array " +
                    rows.back()["ceiling"].dump() + ")");
}

// Vertices/s of one producer committing batches of 1,000 keyed vertices into a fresh graph.
double BatchRate(std::uint64_t vertices, bool indexed) {
  auto graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (indexes batches)");
  if (indexed) {
    CheckOk(graph->CreateIndex({.name = "k_unique",
                                .label = "B",
                                .keys = {"k"},
                                .kind = IndexKind::kUnique,
                                .type = ValueType::kInt64}),
            "indexes CreateIndex");
    CheckOk(graph->CreateIndex({.name = "t_ordered",
                                .label = "B",
                                .keys = {"t"},
                                .kind = IndexKind::kOrdered,
                                .type = ValueType::kInt64}),
            "indexes CreateIndex");
  }
  std::vector<WriteBatch> batches;
  for (std::uint64_t done = 0; done < vertices; done += kBatchVertices) {
    batches.emplace_back();
    AddKeyed(batches.back(), "B", done, kBatchVertices);
  }
  const std::uint64_t t0 = NowNs();
  for (WriteBatch& b : batches) ValueOrDie(graph->Write(std::move(b)), "indexes batch");
  const double seconds = SecondsSince(t0);
  const Snapshot snap = graph->GetSnapshot();
  if (snap.CountVertices(*snap.FindLabel("B")) != batches.size() * kBatchVertices)
    Die("indexes batches", InternalError("vertices missing"));
  if (indexed && snap.CountVerticesInRange("B", "t", {}).value() != batches.size() * kBatchVertices)
    Die("indexes batches", InternalError("the ordered index lacks entries"));
  return static_cast<double>(batches.size() * kBatchVertices) / seconds;
}

void RunBatches(Context& ctx, std::vector<Json>& rows) {
  const std::uint64_t v =
      std::max(kBatchVertices, ctx.profile.index_batch_vertices / kBatchVertices * kBatchVertices);
  std::vector<double> with, without;
  for (int round = 0; round < kRounds; ++round) {
    without.push_back(BatchRate(v, false));
    with.push_back(BatchRate(v, true));
  }
  TargetRow r{"volatileBatchesWithIndexes", "1,000 vertices per batch, unique + ordered int64"};
  r.elements = v;
  r.samples = kRounds;
  r.value = Positive(IndexesMedian(with), "no time elapsed");
  r.unit = "verticesPerSecond";
  r.ceiling = Positive(IndexesMedian(without), "no time elapsed");
  r.ceiling_definition = "the same batches into a graph without indexes, same run (median of the rounds)";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.ratio_definition = "with / without";
  r.target = "ratio >= 0.5";
  r.met = [](double, double q) { return q >= 0.5; };
  rows.push_back(ToJson(r));
  ctx.progress.Note("batches " + rows.back()["value"].dump() + " vertices/s with, " +
                    rows.back()["ceiling"].dump() + " without");
}

void RunUpserts(Context& ctx, std::vector<Json>& rows) {
  const std::uint64_t n =
      std::max(kBatchVertices, ctx.profile.index_upsert_keys / kBatchVertices * kBatchVertices);
  auto graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (indexes upserts)");
  CheckOk(graph->CreateIndex({.name = "u_key",
                              .label = "U",
                              .keys = {"k"},
                              .kind = IndexKind::kUnique,
                              .type = ValueType::kInt64}),
          "indexes CreateIndex");
  std::vector<std::int64_t> order(n);
  for (std::uint64_t i = 0; i < n; ++i) order[i] = KeyOf(i, kSaltK);
  absl::flat_hash_map<std::int64_t, std::uint64_t> map;
  for (const bool merge : {false, true}) {
    if (merge) {
      Rng rng(kSeed ^ 0x0b5e);
      for (std::uint64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.Uniform(i + 1)]);
    }
    std::vector<WriteBatch> batches;
    for (std::uint64_t done = 0; done < n; done += kBatchVertices) {
      batches.emplace_back();
      for (std::uint64_t i = done; i < done + kBatchVertices; ++i)
        batches.back().UpsertVertex("U", {{"k", order[i]}}, {{"n", static_cast<std::int64_t>(i)}});
    }
    std::uint64_t found = 0;
    std::uint64_t t0 = NowNs();
    for (WriteBatch& b : batches) {
      const CommitInfo info = ValueOrDie(graph->Write(std::move(b)), "indexes upsert");
      for (const bool f : info.vertex_found) found += f;
    }
    const double seconds = SecondsSince(t0);
    if (found != (merge ? n : 0)) Die("indexes upsert", InternalError("upserts found the wrong vertices"));
    t0 = NowNs();
    std::uint64_t added = 0;
    for (std::uint64_t i = 0; i < n; ++i) added += map.try_emplace(order[i], i).second;
    const double map_seconds = SecondsSince(t0);
    Consume(added);
    if (added != (merge ? 0 : n)) Die("indexes upsert", InternalError("the map disagrees"));
    TargetRow r{"upsertVertex", merge ? "merge (every key found)" : "create (every key new)"};
    r.elements = n;
    r.samples = 1;
    r.value = Positive(static_cast<double>(n) / seconds, "no time elapsed");
    r.unit = "upsertsPerSecond";
    r.ceiling = Positive(static_cast<double>(n) / map_seconds, "no time elapsed");
    r.ceiling_definition =
        "absl::flat_hash_map<int64, uint64>::try_emplace of the same keys in the same order, 1 thread";
    r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
    r.ratio_definition = "figure / ceiling";
    r.target = ">= 500K upserts/s (1 producer, batches of 1,000)";
    r.met = [](double v, double) { return v >= 500e3; };
    rows.push_back(ToJson(r));
    ctx.progress.Note(std::string(merge ? "merge" : "create") + " upserts " + rows.back()["value"].dump() +
                      "/s");
  }
}

Options DurableGraphOptions(bool read_only) {
  Options o = BenchOptions();
  o.durability = Durability::kDurable;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  o.read_only = read_only;
  return o;
}

// Single-vertex synced commits, one producer, into a durable graph with a unique index on "k" and
// one without, in alternating windows: commits/s, medians.
void RunDurableCommits(Context& ctx, std::vector<Json>& rows) {
  const double window = ctx.profile.index_durable_seconds;
  std::unique_ptr<Graph> graphs[2];
  std::string dirs[2];
  std::uint64_t next[2] = {0, 0};
  for (int with = 0; with < 2; ++with) {
    dirs[with] = ctx.FreshDir(with ? "indexes-durable-with" : "indexes-durable-without");
    graphs[with] = ValueOrDie(Graph::Open(DurableGraphOptions(false), dirs[with]), "Graph::Open (indexes)");
    if (with)
      CheckOk(graphs[with]->CreateIndex({.name = "d_key",
                                         .label = "D",
                                         .keys = {"k"},
                                         .kind = IndexKind::kUnique,
                                         .type = ValueType::kInt64}),
              "indexes CreateIndex");
  }
  auto commit = [&](int with) {
    WriteBatch b;
    b.AddVertex("D", {{"k", KeyOf(next[with]++, kSaltK)}});
    ValueOrDie(graphs[with]->Write(std::move(b)), "indexes durable commit");
  };
  for (int with = 0; with < 2; ++with)
    for (int i = 0; i < 100; ++i) commit(with);  // warm-up
  std::vector<double> rate[2];
  std::uint64_t total = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int with = 0; with < 2; ++with) {
      std::uint64_t n = 0;
      const std::uint64_t t0 = NowNs();
      while (SecondsSince(t0) < window) {
        commit(with);
        ++n;
      }
      rate[with].push_back(static_cast<double>(n) / SecondsSince(t0));
      total += n;
    }
  }
  const Snapshot snap = graphs[1]->GetSnapshot();
  if (snap.CountVertices(*snap.FindLabel("D")) != next[1] || snap.Indexes().at(0).entries != next[1])
    Die("indexes durable commits", InternalError("the unique index lacks entries"));
  for (int with = 0; with < 2; ++with) {
    CheckClose(*graphs[with]);
    graphs[with].reset();
    ctx.RemoveDir(dirs[with]);
  }
  TargetRow r{"durableCommitsWithUniqueIndex", "single-vertex synced commits, 1 producer, unique int64"};
  r.elements = next[1];
  r.samples = total;
  r.value = Positive(IndexesMedian(rate[1]), "no time elapsed");
  r.unit = "commitsPerSecond";
  r.ceiling = Positive(IndexesMedian(rate[0]), "no time elapsed");
  r.ceiling_definition =
      "the same commits into a durable graph without indexes, alternating windows (medians)";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.ratio_definition = "with / without";
  r.target = "ratio >= 0.9";
  r.met = [](double, double q) { return q >= 0.9; };
  rows.push_back(ToJson(r));
  ctx.progress.Note("durable commits " + rows.back()["value"].dump() + "/s with, " +
                    rows.back()["ceiling"].dump() + " without");
}

// A volatile graph of keyed vertices backed up (a checkpoint) without indexes and again with a
// unique index on "k" and an ordered one on "t"; each backup opened read-only, alternately.
void RunReopen(Context& ctx, std::vector<Json>& rows) {
  const std::uint64_t n = ctx.profile.index_reopen_vertices;
  const std::string dirs[2] = {ctx.FreshDir("indexes-reopen-without"), ctx.FreshDir("indexes-reopen-with")};
  {
    KeyedGraph g = BuildKeyed(n);
    ValueOrDie(g.graph->Backup(dirs[0]), "indexes Backup");
    CheckOk(g.graph->CreateIndex({.name = "k_unique",
                                  .label = "P",
                                  .keys = {"k"},
                                  .kind = IndexKind::kUnique,
                                  .type = ValueType::kInt64}),
            "indexes CreateIndex");
    CheckOk(g.graph->CreateIndex({.name = "t_ordered",
                                  .label = "P",
                                  .keys = {"t"},
                                  .kind = IndexKind::kOrdered,
                                  .type = ValueType::kInt64}),
            "indexes CreateIndex");
    ValueOrDie(g.graph->Backup(dirs[1]), "indexes Backup");
    CheckClose(*g.graph);
  }
  std::vector<double> seconds[2];
  std::vector<double> load_seconds[2];
  std::uint64_t built = 0, loaded = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int with = 0; with < 2; ++with) {
      const std::uint64_t t0 = NowNs();
      auto graph =
          ValueOrDie(Graph::Open(DurableGraphOptions(true), dirs[with]), "Graph::Open (indexes reopen)");
      seconds[with].push_back(SecondsSince(t0));
      load_seconds[with].push_back(static_cast<double>(graph->GetOpenStats().checkpoint_load_microseconds) /
                                   1e6);
      const Snapshot snap = graph->GetSnapshot();
      if (snap.vertex_count() != n) Die("indexes reopen", InternalError("the reopened graph lacks vertices"));
      if (with) {
        const std::vector<IndexInfo> indexes = snap.Indexes();
        if (indexes.size() != 2 || indexes[0].entries != n || indexes[1].entries != n ||
            indexes[0].state != IndexState::kReady || indexes[1].state != IndexState::kReady)
          Die("indexes reopen", InternalError("the reopened graph's indexes are incomplete"));
        built = graph->GetOpenStats().indexes_built;
        loaded = graph->GetOpenStats().indexes_loaded;
      }
      CheckClose(*graph);
    }
  }
  for (const std::string& d : dirs) ctx.RemoveDir(d);
  TargetRow r{"reopenWithIndexes", "read-only Open of a checkpoint, unique + ordered int64"};
  r.elements = n;
  r.threads = std::min(ctx.Cores(), 8);  // DurableOptions::io_threads = 0: one per core, at most 8
  r.samples = kRounds;
  r.value = Positive(static_cast<double>(n) / IndexesMedian(seconds[1]), "no time elapsed");
  r.unit = "elementsPerSecond";
  r.ceiling = Positive(static_cast<double>(n) / IndexesMedian(seconds[0]), "no time elapsed");
  r.ceiling_definition =
      "the same graph's checkpoint without indexes, opened the same way (medians of the rounds)";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.ratio_definition = "with / without";
  r.target = "ratio >= 0.7";
  r.met = [](double, double q) { return q >= 0.7; };
  // The loader makes a checkpoint's indexes inside the checkpoint load (OpenStats counts them in
  // indexes_built, those copied from stored entries in indexes_loaded, their time in
  // checkpoint_load_microseconds).
  r.detail["openWithSeconds"] = Positive(IndexesMedian(seconds[1]), "no time elapsed");
  r.detail["openWithoutSeconds"] = Positive(IndexesMedian(seconds[0]), "no time elapsed");
  r.detail["checkpointLoadWithSeconds"] =
      Positive(IndexesMedian(load_seconds[1]), "Open reported no load time");
  r.detail["checkpointLoadWithoutSeconds"] =
      Positive(IndexesMedian(load_seconds[0]), "Open reported no load time");
  r.detail["indexesBuilt"] = Count(built, "Open built no index");
  // Of those, the ones copied from the checkpoint's stored entries (0 would mean they were sorted again).
  r.detail["indexesLoaded"] = loaded;
  rows.push_back(ToJson(r));
  ctx.progress.Note("reopen " + rows.back()["value"].dump() + " elements/s with, " +
                    rows.back()["ceiling"].dump() + " without");
}

}  // namespace

void PlanIndexes(Context& ctx) {
  const Profile& p = ctx.profile;
  const double n = static_cast<double>(p.index_keys);
  ctx.progress.Plan("indexes", "build " + std::to_string(p.index_keys) + " keyed vertices",
                    EstimateBuildSeconds(p.index_keys, 0) * 2);
  ctx.progress.Plan("indexes", "memory per entry, online build",
                    n * (2 + kBuildRounds * 2) * 0.6e-6 + kBuildRounds * 3 * p.index_outside_seconds);
  ctx.progress.Plan("indexes", "lookups and ranges",
                    n * 0.4e-6 + static_cast<double>(p.index_lookup_samples) * 4e-6);
  ctx.progress.Plan("indexes", "batches and upserts",
                    static_cast<double>(p.index_batch_vertices) * 2 * kRounds * 1.5e-6 +
                        static_cast<double>(p.index_upsert_keys) * 2 * 2e-6);
  ctx.progress.Plan("indexes", "durable commits and reopen",
                    p.index_durable_seconds * 2 * kRounds +
                        EstimateBuildSeconds(p.index_reopen_vertices, 0) * 2 +
                        static_cast<double>(p.index_reopen_vertices) * 2e-6 * kRounds);
}

Json RunIndexes(Context& ctx) {
  const Profile& p = ctx.profile;
  std::vector<Json> rows;
  {
    ctx.progress.Start("indexes", "build " + std::to_string(p.index_keys) + " keyed vertices");
    KeyedGraph g = BuildKeyed(p.index_keys);
    RunLabelCount(ctx, g, rows);
    ctx.progress.Start("indexes", "memory per entry, online build");
    RunMemoryPerEntry(ctx, g, rows);
    RunOnlineBuild(ctx, g, rows);
    ctx.progress.Start("indexes", "lookups and ranges");
    RunPointLookups(ctx, g, rows);
    RunRangeScans(ctx, g, rows);
    CheckClose(*g.graph);
  }
  ctx.progress.Start("indexes", "batches and upserts");
  RunBatches(ctx, rows);
  RunUpserts(ctx, rows);
  ctx.progress.Start("indexes", "durable commits and reopen");
  RunDurableCommits(ctx, rows);
  RunReopen(ctx, rows);
  ctx.progress.Done();
  Json out = Json::array();
  for (Json& r : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace quiver::capacity
