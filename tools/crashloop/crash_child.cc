#include "crash_child.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "child_log.h"
#include "commit_spec.h"
#include "env/buffered_file_system.h"
#include "env/random.h"
#include "graph_impl.h"
#include "index_catalog.h"
#include "lying_file_system.h"
#include "quiver/graph.h"

namespace quiver::crashloop {
namespace {

constexpr auto kLifetime = std::chrono::minutes(10);

Result<std::unique_ptr<Graph>> OpenGraph(const ChildArgs& args, const ChildPlan& plan) {
  if (args.mode == FsMode::kPosix) return Graph::Open(plan.options, args.dir);
  // Never freed: the graph using it lives until the kill. Unsynced bytes
  // stay in this process's memory and die with it.
  env::FileSystem* fs = new env::BufferedFileSystem(
      env::PosixFileSystem(), {.leak_one_in = plan.leak_one_in, .seed = args.seed ^ (args.iteration << 20)});
  if (args.lie_about_wal_sync) fs = new LyingFileSystem(fs);
  return GraphImpl::OpenDurable(plan.options, args.dir, fs);
}

// One producer: B, Write, A or F, until the id space of the iteration runs
// out or a write fails (any failure is reported; after one the graph is
// usually poisoned, so there is no point going on) other than the Aborted
// a spec's failing expectation calls for.
void Produce(Graph* graph, const ChildArgs& args, const LineWriter& out, std::atomic<std::uint64_t>* next) {
  while (true) {
    const std::uint64_t local = next->fetch_add(1) + 1;
    if (local >= kIdsPerIteration) return;
    const std::uint64_t id = args.iteration * kIdsPerIteration + local;
    const CommitSpec spec = MakeCommitSpec(args.seed, id);
    WriteBatch batch = BuildBatch(spec);
    out.Write("B " + std::to_string(id));
    Result<CommitInfo> r = graph->Write(std::move(batch));
    if (!r.ok()) {
      out.Write("F " + std::to_string(id) + " " + std::string(StatusCodeName(r.status().code())));
      if (r.status().code() == StatusCode::kAborted && spec.expectation == Expectation::kFails) continue;
      return;
    }
    out.Write("A " + std::to_string(id) + " " + std::to_string(r->sequence));
  }
}

// Explicit checkpoints at random intervals averaging `every_ms`.
void CheckpointNow(Graph* graph, const ChildArgs& args, const LineWriter& out, std::uint32_t every_ms) {
  env::Rng rng = env::Rng::Derive(args.seed, args.iteration * 8 + 5);
  while (true) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng.Uniform(2000ull * every_ms + 1)));
    out.Write("P checkpoint-start");
    Status s = graph->Checkpoint();
    out.Write("P checkpoint-done " + std::string(StatusCodeName(s.code())));
  }
}

// CreateIndex or DropIndex of a catalog index, between I and J lines.
Status IndexOp(Graph* graph, const LineWriter& out, bool drop, const IndexSpec& spec) {
  const std::string what = std::string(drop ? "drop " : "create ") + spec.name;
  out.Write("I " + what);
  Status s = drop ? graph->DropIndex(spec.name) : graph->CreateIndex(spec);
  out.Write("J " + what + " " + std::string(StatusCodeName(s.code())));
  return s;
}

// The index thread: the plan's steps, one after the other, while the
// producers commit.
void ChangeIndexes(Graph* graph, const LineWriter& out, const ChildPlan& plan) {
  for (const IndexStep& step : plan.index_steps) {
    std::this_thread::sleep_for(std::chrono::milliseconds(step.delay_ms));
    IndexOp(graph, out, step.drop, IndexCatalog()[step.spec]).IgnoreError();
  }
}

// Upserts need the key index ready: created here, before any commit, unless
// an earlier child did (Open finishes one a crash interrupted).
Status EnsureKeyIndex(Graph* graph, const LineWriter& out) {
  for (const IndexInfo& info : graph->GetSnapshot().Indexes()) {
    if (info.spec.name != kKeyIndex) continue;
    if (info.state == IndexState::kReady) return Status::Ok();
    return FailedPreconditionError("the key index is still building after Open");
  }
  return IndexOp(graph, out, false, IndexCatalog()[0]);
}

}  // namespace

int RunChild(const ChildArgs& args) {
  const LineWriter out(args.fd);
  const ChildPlan plan = PlanChild(args.seed, args.iteration);
  const pid_t parent = ::getppid();
  out.Write("P open-start");
  Result<std::unique_ptr<Graph>> opened = OpenGraph(args, plan);
  if (!opened.ok()) {
    out.Write("E open " + opened.status().ToString().substr(0, 400));
    return 1;
  }
  // Released only by the kill (or _exit): the graph is never closed.
  Graph* graph = opened->release();
  const OpenStats stats = graph->GetOpenStats();
  out.Write("P open-done " + std::to_string(stats.recovered_sequence) + " " +
            std::to_string(stats.open_microseconds));

  if (Status s = EnsureKeyIndex(graph, out); !s.ok()) {
    out.Write("E key index " + s.ToString().substr(0, 400));
    ::_exit(1);
  }

  // The threads may refer to `args` and `plan`: from here on this function
  // never returns, it only ends the process.
  auto* next = new std::atomic<std::uint64_t>(0);
  for (std::uint32_t i = 0; i < args.producers; ++i)
    std::thread([graph, &args, out, next] { Produce(graph, args, out, next); }).detach();
  if (!plan.index_steps.empty())
    std::thread([graph, out, &plan] { ChangeIndexes(graph, out, plan); }).detach();
  if (plan.checkpoint_ms != 0)
    std::thread([graph, &args, out, &plan] { CheckpointNow(graph, args, out, plan.checkpoint_ms); }).detach();

  const auto deadline = std::chrono::steady_clock::now() + kLifetime;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (::getppid() != parent) ::_exit(6);  // orphaned: nobody will kill or read us
  }
  ::_exit(4);
}

}  // namespace quiver::crashloop
