// writes: commit throughput and latency as producers see it.
//
// Rows, each on a fresh graph: durable (WAL, fdatasync per commit group; automatic checkpoints
// off) and volatile, with single-element commits (one AddVertex per batch) from 1, 2, 8 and 32
// producer threads, then batches of 1,000 and 10,000 vertices from one producer. Each producer
// loops: build its batch, Write it (timed), until the row's time or commit budget is spent.
// 100 untimed commits (5 for batches) warm each graph first. Per row:
//   writesPerSecond      elements committed per second of the timed window (batch building included)
//   commitsPerSecond     batches per second
//   commitLatencyP50/P95/P99Ns   Write() call to return, per batch
//   meanGroupSize        batches / commit groups (GetDurabilityStats deltas): how many commits
//                        shared one version publication (and, durable, one fdatasync)
//   fsyncs               WAL syncs in the window (durable only)
// Efficiency (durable): writesPerSecond / ceilings.overwriteFdatasync.fdatasyncsPerSecond: a
// format-3 WAL commit group is at least one 4 KiB page written over the log's zeroed end and one
// fdatasync that flushes no metadata, which is what that ceiling does back to back
// (ceilings.appendFdatasync, whose every sync also flushes a grown file size, costs more than such
// a commit and bounds nothing). One producer of single elements cannot pass 1 (one fdatasync per commit);
// more producers and batches pass it by sharing fdatasyncs. syncEfficiency = the engine's fdatasyncs per
// second / the same ceiling's: how close the WAL comes to the device's own sync rate. Volatile rows have no
// I/O ceiling (they are bound by the producer-to-writer hand-off). diskWrite (durable): the bytes the process
// caused to be written to storage in the timed window (/proc/self/io write_bytes) per second, beside
// ceilings.sequentialWrite.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "families.h"
#include "timing.h"
#include "utilisation.h"

namespace quiver::capacity {
namespace {

struct RowSpec {
  bool durable;
  int producers;
  int batch_elements;
};

std::vector<RowSpec> Rows() {
  std::vector<RowSpec> rows;
  for (bool durable : {true, false}) {
    for (int p : {1, 2, 8, 32}) rows.push_back({durable, p, 1});
    for (int b : {1000, 10000}) rows.push_back({durable, 1, b});
  }
  return rows;
}

std::string WritesRowName(const RowSpec& r) {
  return std::string(r.durable ? "durable" : "volatile") + " producers=" + std::to_string(r.producers) +
         " batch=" + std::to_string(r.batch_elements);
}

WriteBatch MakeBatch(int elements) {
  WriteBatch b;
  for (int i = 0; i < elements; ++i) b.AddVertex("V");
  return b;
}

Json RunRow(Context& ctx, const RowSpec& spec, int index) {
  const Profile& p = ctx.profile;
  std::string dir;
  std::unique_ptr<Graph> graph;
  if (spec.durable) {
    dir = ctx.FreshDir("writes-" + std::to_string(index));
    Options o = BenchOptions();
    o.durability = Durability::kDurable;
    o.durable.checkpoint_wal_bytes = 0;
    o.durable.checkpoint_on_close = false;
    graph = ValueOrDie(Graph::Open(o, dir), "Graph::Open (writes)");
  } else {
    graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory (writes)");
  }
  const int warm_up = spec.batch_elements == 1 ? 100 : 5;
  for (int i = 0; i < warm_up; ++i) ValueOrDie(graph->Write(MakeBatch(spec.batch_elements)), "warm-up write");

  // Larger batches: fewer commits fit the budget; scale the cap by the batch size.
  const std::uint64_t max_commits =
      std::max<std::uint64_t>(100, p.write_row_max_commits / static_cast<std::uint64_t>(spec.batch_elements));
  const DurabilityStats before = graph->GetDurabilityStats();
  std::string io_error;
  const std::uint64_t io_before = ProcessWriteBytes(&io_error);
  std::atomic<std::uint64_t> commits{0};
  std::atomic<bool> failed{false};
  std::vector<std::vector<std::uint64_t>> latencies(static_cast<std::size_t>(spec.producers));
  const std::uint64_t start = NowNs();
  const auto deadline = start + static_cast<std::uint64_t>(p.write_row_seconds * 1e9);
  auto producer = [&](int t) {
    std::vector<std::uint64_t>& lat = latencies[static_cast<std::size_t>(t)];
    while (NowNs() < deadline && commits.fetch_add(1, std::memory_order_relaxed) < max_commits) {
      WriteBatch b = MakeBatch(spec.batch_elements);
      const std::uint64_t t0 = NowNs();
      Result<CommitInfo> r = graph->Write(std::move(b));
      lat.push_back(NowNs() - t0);
      if (!r.ok()) {
        failed = true;
        std::fprintf(stderr, "quiver-bench: write failed: %s\n", r.status().ToString().c_str());
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < spec.producers; ++t) pool.emplace_back(producer, t);
  producer(0);
  for (std::thread& t : pool) t.join();
  const double seconds = SecondsSince(start);
  const std::uint64_t io_after = ProcessWriteBytes(&io_error);
  const DurabilityStats after = graph->GetDurabilityStats();
  if (failed) Die("writes row " + WritesRowName(spec), InternalError("a commit failed"));
  CheckClose(*graph);
  graph.reset();
  if (!dir.empty()) ctx.RemoveDir(dir);

  std::vector<std::uint64_t> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  const auto committed = static_cast<double>(all.size());
  const double elements = committed * spec.batch_elements;
  const std::uint64_t groups = after.commit_groups - before.commit_groups;
  const std::uint64_t syncs = after.wal_syncs - before.wal_syncs;

  Json row;
  row["mode"] = spec.durable ? "durable" : "volatile";
  row["producers"] = spec.producers;
  row["batchElements"] = spec.batch_elements;
  row["commits"] = all.size();
  row["elementsWritten"] = static_cast<std::uint64_t>(elements);
  row["seconds"] = seconds;
  row["writesPerSecond"] = Positive(elements / seconds, "nothing was committed");
  row["commitsPerSecond"] = Positive(committed / seconds, "nothing was committed");
  const char* no_commits = "nothing was committed";
  row["commitLatencyP50Ns"] = all.empty() ? NotMeasured(no_commits) : Json(Quantile(all, 0.50));
  row["commitLatencyP95Ns"] = all.empty() ? NotMeasured(no_commits) : Json(Quantile(all, 0.95));
  row["commitLatencyP99Ns"] = all.empty() ? NotMeasured(no_commits) : Json(Quantile(all, 0.99));
  row["meanGroupSize"] = groups == 0 ? NotMeasured("no commit group was counted")
                                     : Positive(committed / static_cast<double>(groups), "");
  if (spec.durable) {
    row["fsyncs"] = Count(syncs, "no WAL sync was counted");
    row["walBytesPerCommit"] = Positive(static_cast<double>(after.wal_bytes - before.wal_bytes) / committed,
                                        "no WAL bytes were counted");
    const Json& ceiling = ctx.ceilings["overwriteFdatasync"]["fdatasyncsPerSecond"];
    row["efficiency"] =
        Efficiency(row["writesPerSecond"], ceiling, "/ceilings/overwriteFdatasync/fdatasyncsPerSecond",
                   "writesPerSecond / fdatasyncsPerSecond (above 1: group commit shares fdatasyncs)");
    row["syncEfficiency"] =
        Efficiency(Positive(static_cast<double>(syncs) / seconds, "no WAL sync was counted"), ceiling,
                   "/ceilings/overwriteFdatasync/fdatasyncsPerSecond",
                   "engine fdatasyncs per second / fdatasyncsPerSecond");
    row["diskWrite"] = DiskWrite(io_after - io_before, seconds, io_error, ctx.ceilings, "the timed window");
  } else {
    row["fsyncs"] = NotMeasured("volatile mode writes no log and syncs nothing");
    row["walBytesPerCommit"] = NotMeasured("volatile mode writes no log");
    row["efficiency"] =
        NoCeiling("a volatile commit does no I/O; no ceiling is measured for the thread hand-off");
    row["syncEfficiency"] = NoCeiling("volatile mode syncs nothing");
  }
  return row;
}

}  // namespace

void CheckClose(Graph& graph) {
  const Status s = graph.Close();
  if (!s.ok()) Die("Graph::Close", s);
}

void PlanWrites(Context& ctx) {
  for (const RowSpec& r : Rows())
    ctx.progress.Plan("writes", WritesRowName(r), ctx.profile.write_row_seconds + 0.3);
}

Json RunWrites(Context& ctx) {
  Json rows = Json::array();
  int index = 0;
  for (const RowSpec& r : Rows()) {
    ctx.progress.Start("writes", WritesRowName(r));
    rows.push_back(RunRow(ctx, r, index++));
    ctx.progress.Note(rows.back()["writesPerSecond"].dump() + " writes/s, group " +
                      rows.back()["meanGroupSize"].dump());
  }
  ctx.progress.Done();
  return rows;
}

}  // namespace quiver::capacity
