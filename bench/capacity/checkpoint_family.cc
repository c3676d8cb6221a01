// checkpoint and load: what a checkpoint costs the writer and the disk, and how fast a graph opens.
//
// Per shape (out-degree 2, uniform; rows named by their element count V + E), a durable graph is
// built through the WAL in batches of 100,000 (automatic checkpoints off). Then:
//
// checkpoint  A committer thread does single-vertex durable commits back to back, timing each.
//             After stall_outside_seconds, the main thread calls Graph::Checkpoint() and waits
//             for it; the committer goes on for stall_outside_seconds more. Commits whose call
//             overlapped the checkpoint are "during", the others "outside":
//               writerStall.maxCommitLatencyDuringNs   the longest wait a committer saw
//               writerStall.medianCommitLatencyOutsideNs
//               writerStall.stallRatio                 max during / median outside (1 = no stall)
//               writerStall.p99/maxCommitLatencyOutsideNs  the noise floor: fdatasync latency
//                                                      varies by itself, checkpoint or not
//               writerStall.p99CommitLatencyDuringNs   beside ceilings.overwriteFdatasync.latencyP99Ns:
//                                                      the tail a checkpoint adds, read against the
//                                                      device's own for what a commit does (a page
//                                                      over the WAL's zeroed end + fdatasync; its
//                                                      longest is ceilings.overwriteFdatasync.
//                                                      latencyMaxNs)
//               writerStall.deviceBesideWrites         run right after the committer stops: the
//                                                      overwrite ceiling's page + fdatasync while a
//                                                      second thread writes a file at this
//                                                      checkpoint's own rate and write-back step, for
//                                                      the checkpoint's duration (0.25 to 2 s): what
//                                                      the device allows a commit beside the same
//                                                      disk load, without the checkpoint's CPU work
//                                                      (ceilings.h MeasureOverwriteBesideWrites)
//               writerStall.p99DuringOverDevice        p99CommitLatencyDuringNs / its latencyP99Ns:
//                                                      what the engine adds to the device's own tail.
//                                                      Both not measured when fewer than 100 commits
//                                                      overlapped the checkpoint (no tail to compare)
//             durationMicroseconds and checkpointBytes come from GetDurabilityStats
//             (last_checkpoint_*); megabytesPerSecond = bytes / duration, compared with
//             ceilings.sequentialWrite.
//             utilisation, over the Checkpoint() call: the on-CPU time of every thread of the
//             process (the engine's checkpoint threads, the committer, the caller) sampled from
//             /proc/self/task/*/schedstat every 5 ms; hardware counters of the calling thread and
//             the threads it creates; and the disk: /proc/self/io write_bytes over the call
//             (the committer's WAL appends included) beside ceilings.sequentialWrite.
// load        The graph is closed (no checkpoint on close) and opened again: newest checkpoint plus
//             the WAL tail (the committer's commits after the checkpoint's pin; the committer runs
//             around the checkpoint under --only load too, and a load with no tail is an error;
//             walBatchesReplayed is the tail's size). openMicroseconds is
//             GetOpenStats().open_microseconds (with its checkpoint-load and WAL-replay parts and
//             the load thread count beside it); elementsPerSecond = elements / that. The reopened
//             counts are checked. The checkpoint file was just written, so it is read from the page
//             cache: the ratio compares the checkpoint bytes decoded per second with one core's
//             memory read bandwidth.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ceilings.h"
#include "families.h"
#include "timing.h"
#include "utilisation.h"

namespace quiver::capacity {
namespace {

struct CheckpointCommit {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
};

// Fewer commits during a checkpoint than this: their p99 is no tail (it is their maximum), and the
// device beside the same load is not measured.
constexpr std::size_t kMinCommitsForP99 = 100;

Options CheckpointGraphOptions() {
  Options o = BenchOptions();
  o.durability = Durability::kDurable;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  return o;
}

std::string CheckpointRowName(const Shape& s) { return std::to_string(s.elements()) + " elements"; }

// Runs the committer around one checkpoint; returns the checkpoint row.
Json MeasureCheckpoint(Context& ctx, Graph& graph, const Shape& shape) {
  std::atomic<bool> stop{false};
  std::vector<CheckpointCommit> commits;
  commits.reserve(1 << 20);
  std::thread committer([&] {
    pthread_setname_np(pthread_self(), "committer");
    while (!stop.load(std::memory_order_relaxed)) {
      WriteBatch b;
      b.AddVertex("V");
      const std::uint64_t t0 = NowNs();
      Result<CommitInfo> r = graph.Write(std::move(b));
      commits.push_back({t0, NowNs()});
      if (!r.ok()) Die("committer write", r.status());
    }
  });
  const auto outside = std::chrono::duration<double>(ctx.profile.stall_outside_seconds);
  std::this_thread::sleep_for(outside);
  TaskCpuSampler sampler;
  HardwareCounters counters;
  std::string io_error;
  const std::uint64_t io_before = ProcessWriteBytes(&io_error);
  sampler.Start();
  counters.Start();
  const std::uint64_t cp_start = NowNs();
  const Status s = graph.Checkpoint();
  const std::uint64_t cp_end = NowNs();
  counters.Stop();
  sampler.Stop();
  const std::uint64_t io_after = ProcessWriteBytes(&io_error);
  std::this_thread::sleep_for(outside);
  stop = true;
  committer.join();
  if (!s.ok()) Die("Graph::Checkpoint", s);

  std::vector<std::uint64_t> during, out;
  for (const CheckpointCommit& c : commits) {
    const bool overlaps = c.start_ns < cp_end && c.end_ns > cp_start;
    (overlaps ? during : out).push_back(c.end_ns - c.start_ns);
  }
  const DurabilityStats d = graph.GetDurabilityStats();
  Json row;
  row["shape"] = shape.ToJson();
  row["elements"] = shape.elements();
  row["checkpointBytes"] = Count(d.last_checkpoint_bytes, "the engine reported no checkpoint bytes");
  row["durationMicroseconds"] = Count(d.last_checkpoint_microseconds, "the engine reported no duration");
  row["wallMicroseconds"] = (cp_end - cp_start) / 1000;
  row["megabytesPerSecond"] = d.last_checkpoint_microseconds == 0
                                  ? NotMeasured("the engine reported no duration")
                                  : Positive(static_cast<double>(d.last_checkpoint_bytes) /
                                                 static_cast<double>(d.last_checkpoint_microseconds),
                                             "no checkpoint bytes");
  Json stall;
  stall["commitsDuring"] = during.size();
  stall["commitsOutside"] = out.size();
  const std::uint64_t max_during = during.empty() ? 0 : *std::max_element(during.begin(), during.end());
  stall["maxCommitLatencyDuringNs"] =
      during.empty() ? NotMeasured("no commit overlapped the checkpoint") : Json(max_during);
  stall["p50CommitLatencyDuringNs"] =
      during.empty() ? NotMeasured("no commit overlapped the checkpoint") : Json(Quantile(during, 0.5));
  stall["p99CommitLatencyDuringNs"] =
      during.empty() ? NotMeasured("no commit overlapped the checkpoint") : Json(Quantile(during, 0.99));
  const double median_out = out.empty() ? 0 : static_cast<double>(Quantile(out, 0.5));
  stall["medianCommitLatencyOutsideNs"] = Positive(median_out, "no commit ran outside the checkpoint");
  stall["p99CommitLatencyOutsideNs"] =
      out.empty() ? NotMeasured("no commit ran outside the checkpoint") : Json(Quantile(out, 0.99));
  stall["maxCommitLatencyOutsideNs"] = out.empty() ? NotMeasured("no commit ran outside the checkpoint")
                                                   : Json(*std::max_element(out.begin(), out.end()));
  stall["stallRatio"] = during.empty() || out.empty()
                            ? NotMeasured("needs commits both during and outside the checkpoint")
                            : Positive(static_cast<double>(max_during) / median_out, "");
  const double cp_seconds = static_cast<double>(cp_end - cp_start) / 1e9;
  if (d.last_checkpoint_bytes == 0 || cp_seconds <= 0) {
    stall["deviceBesideWrites"] = NotMeasured("the engine reported no checkpoint bytes");
    stall["p99DuringOverDevice"] = NotMeasured("the engine reported no checkpoint bytes");
  } else if (during.size() < kMinCommitsForP99) {
    // A p99 of so few commits is their maximum: no tail to compare.
    const std::string why = "fewer than " + std::to_string(kMinCommitsForP99) +
                            " commits overlapped the checkpoint (" + std::to_string(during.size()) + ")";
    stall["deviceBesideWrites"] = NotMeasured(why);
    stall["p99DuringOverDevice"] = NotMeasured(why);
  } else {
    // The checkpoint's own bytes at its own rate (at least 0.25 s of it, at most 2 s).
    Json device = MeasureOverwriteBesideWrites(ctx.data_dir, std::clamp(cp_seconds, 0.25, 2.0),
                                               static_cast<double>(d.last_checkpoint_bytes) / cp_seconds);
    const std::optional<double> device_p99 = NumberOf(device["latencyP99Ns"]);
    stall["p99DuringOverDevice"] =
        !device_p99.has_value()
            ? NotMeasured("the device figure beside the same writes is missing")
            : Positive(static_cast<double>(Quantile(during, 0.99)) / *device_p99, "no device latency");
    stall["deviceBesideWrites"] = std::move(device);
  }
  row["writerStall"] = stall;
  row["efficiency"] =
      Efficiency(row["megabytesPerSecond"], ctx.ceilings["sequentialWrite"]["megabytesPerSecond"],
                 "/ceilings/sequentialWrite/megabytesPerSecond",
                 "megabytesPerSecond / sequentialWrite.megabytesPerSecond");
  Json u;
  u["cpu"] = CpuUtilisation(sampler.Threads(), sampler.window_ns(), sampler.process_cpu_ns(),
                            "/proc/self/task/*/schedstat on-CPU time of every thread, sampled every 5 ms "
                            "over the Checkpoint() call");
  u["hardwareCounters"] = counters.ToJson();
  u["diskWrite"] = DiskWrite(io_after - io_before, static_cast<double>(cp_end - cp_start) / 1e9, io_error,
                             ctx.ceilings, "the Checkpoint() call (the committer's WAL appends included)");
  row["utilisation"] = u;
  return row;
}

Json MeasureLoad(Context& ctx, std::unique_ptr<Graph>& graph, const std::string& dir, const Shape& shape) {
  const Snapshot before = graph->GetSnapshot();
  const std::uint64_t vertices = before.vertex_count(), edges = before.edge_count();
  const std::uint64_t checkpoint_bytes = graph->GetDurabilityStats().last_checkpoint_bytes;
  CheckClose(*graph);
  graph.reset();
  const std::uint64_t t0 = NowNs();
  graph = ValueOrDie(Graph::Open(CheckpointGraphOptions(), dir), "Graph::Open (load)");
  const std::uint64_t wall_us = (NowNs() - t0) / 1000;
  const OpenStats o = graph->GetOpenStats();
  const Snapshot after = graph->GetSnapshot();
  if (after.vertex_count() != vertices || after.edge_count() != edges)
    Die("load", InternalError("the reopened graph's counts differ from the closed one's"));
  if (o.wal_batches_replayed == 0) Die("load", InternalError("the reopen replayed no WAL tail"));
  Json row;
  row["shape"] = shape.ToJson();
  row["elements"] = vertices + edges;
  row["checkpointBytes"] = Count(checkpoint_bytes, "no checkpoint was written");
  row["walBatchesReplayed"] = o.wal_batches_replayed;
  row["openMicroseconds"] = Count(o.open_microseconds, "the engine reported no open time");
  row["checkpointLoadMicroseconds"] = o.checkpoint_load_microseconds;
  row["walReplayMicroseconds"] = o.wal_replay_microseconds;
  row["loadThreads"] = o.load_threads;
  row["wallMicroseconds"] = wall_us;
  const double seconds = static_cast<double>(o.open_microseconds) / 1e6;
  row["elementsPerSecond"] = Positive(static_cast<double>(vertices + edges) / seconds, "no open time");
  const Json mbps = Positive(static_cast<double>(checkpoint_bytes) / 1e6 / seconds, "no open time");
  row["checkpointMegabytesPerSecond"] = mbps;
  row["efficiency"] =
      Efficiency(mbps, ctx.ceilings["memoryBandwidth"][0]["readMegabytesPerSecond"],
                 "/ceilings/memoryBandwidth/0/readMegabytesPerSecond",
                 "checkpointMegabytesPerSecond / memoryBandwidth[1 thread].readMegabytesPerSecond");
  return row;
}

}  // namespace

void PlanCheckpointAndLoad(Context& ctx) {
  for (const Shape& s : ctx.profile.checkpoint) {
    // Durable build: the WAL costs about as much again as the in-memory apply.
    double estimate = 1.5 * EstimateBuildSeconds(s.vertices, s.edges());
    const double write_seconds = static_cast<double>(s.elements()) * 30 / 300e6;
    // The committer runs around the checkpoint whichever of the two is selected (the load's tail).
    estimate += 2 * ctx.profile.stall_outside_seconds + 2 * write_seconds;
    if (ctx.Selected("load")) estimate += static_cast<double>(s.elements()) / 5e6;
    ctx.progress.Plan("checkpoint", CheckpointRowName(s), estimate);
  }
}

void RunCheckpointAndLoad(Context& ctx, Json* checkpoint, Json* load) {
  *checkpoint = Json::array();
  *load = Json::array();
  for (const Shape& shape : ctx.profile.checkpoint) {
    ctx.progress.Start("checkpoint", CheckpointRowName(shape));
    const std::string dir = ctx.FreshDir("checkpoint-" + shape.label());
    std::unique_ptr<Graph> graph =
        ValueOrDie(Graph::Open(CheckpointGraphOptions(), dir), "Graph::Open (checkpoint)");
    const VertexId first = AddVertices(*graph, shape.vertices);
    AddShapeEdges(*graph, shape, first);
    ctx.progress.Note("built through the WAL");
    // The checkpoint always runs with the committer around it, so the load below always has a WAL
    // tail to replay (the committer's commits after the checkpoint's pin), whether or not the
    // checkpoint row is reported.
    Json row = MeasureCheckpoint(ctx, *graph, shape);
    if (ctx.Selected("checkpoint")) {
      ctx.progress.Note("checkpoint " + row["megabytesPerSecond"].dump() + " MB/s, writer stall max " +
                        row["writerStall"]["maxCommitLatencyDuringNs"].dump() + " ns");
      checkpoint->push_back(std::move(row));
    }
    if (ctx.Selected("load")) {
      load->push_back(MeasureLoad(ctx, graph, dir, shape));
      ctx.progress.Note("reopened at " + load->back()["elementsPerSecond"].dump() + " elements/s");
    }
    CheckClose(*graph);
    graph.reset();
    ctx.RemoveDir(dir);
  }
  ctx.progress.Done();
}

}  // namespace quiver::capacity
