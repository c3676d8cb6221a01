// fuzz_recovery: a durable graph on the power-loss simulator
// (env::SimFileSystem) runs a workload the input chooses, loses power at an
// I/O operation the input chooses, under a CrashPolicy the input chooses, and
// is reopened; the recovered state is checked against a volatile graph that
// ran the same batches (RELIABILITY.md 3.2's oracle).
//
// Input (read front to back with FuzzInput; a short input is a small case):
//   segment size (128 B .. 8 KiB), checkpoint_on_close, max_group_batches,
//   crash point (mutating operation number 1..511; 0 = no crash point: power
//   is cut after the workload), crash policy, crash seed, a second crash during
//   recovery (0 = none, else where), a write after recovery (bool),
//   then up to kMaxSteps steps:
//     write       one batch of 1..6 operations (Write)
//     burst       2..5 batches queued at once (WriteAsync), so groups hold
//                 several batches (grouping depends on timing: the one
//                 nondeterministic choice here)
//     checkpoint  Graph::Checkpoint
//     reopen      Close, then OpenDurable on the same file system
//   Batches add and remove vertices and edges and set and remove properties
//   of every value type; some name missing elements or carry invalid input,
//   and fail validation (identically in both graphs).
//
// Oracle:
//  - before the crash point, every write gets exactly the result it got on
//    the volatile graph (same sequence number, or the same error code);
//    after it, a write either succeeded before the failure (same result) or
//    gets DurabilityUnknown or Poisoned; an Open, Close or Checkpoint fails
//    only after the crash point;
//  - a reopen without a crash recovers exactly the acknowledged state;
//  - after the crash, open succeeds and the recovered sequence M satisfies
//    acked <= M <= acked + (writes answered DurabilityUnknown), and the
//    recovered state equals the volatile graph's state after M commits
//    (test_util::Dump);
//  - a crash during that recovery, and another open, recover the same M and
//    state;
//  - a write after recovery is durable: it survives Close, a power cut and
//    another open.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/sim_file.h"
#include "env/sim_file_system.h"
#include "fuzz_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver::fuzz {
namespace {

using test_util::Dump;

constexpr char kDir[] = "/db";
constexpr int kMaxSteps = 40;

std::string U64(std::uint64_t v) { return std::to_string(v); }

// ---- The workload ----

enum class StepKind { kWrite, kBurst, kCheckpoint, kReopen };

struct Step {
  StepKind kind = StepKind::kWrite;
  std::vector<WriteBatch> batches;
};

// What a batch got on the volatile graph.
struct Outcome {
  StatusCode code = StatusCode::kOk;
  SequenceNumber sequence = 0;
};

Outcome OutcomeOf(const Result<CommitInfo>& r) {
  return r.ok() ? Outcome{StatusCode::kOk, r->sequence} : Outcome{r.status().code(), 0};
}

std::string Describe(const Result<CommitInfo>& r) {
  return r.ok() ? "ok, sequence " + U64(r->sequence) : r.status().ToString();
}

class BatchMaker {
 public:
  BatchMaker(FuzzInput& in, std::uint64_t vertex_limit, std::uint64_t edge_limit)
      : in_(in), vertex_limit_(vertex_limit), edge_limit_(edge_limit) {}

  WriteBatch Make() {
    WriteBatch b;
    std::vector<NewVertex> vertices;
    std::vector<NewEdge> edges;
    const std::uint64_t ops = in_.Range(1, 6);
    for (std::uint64_t i = 0; i < ops; ++i) {
      switch (in_.Byte() % 16) {
        case 0:
        case 1:
        case 2:
        case 3:
        case 4:
        case 5: vertices.push_back(b.AddVertex(Name(), Props())); break;
        case 6:
        case 7:
        case 8:
        case 9: {
          VertexRef source = Vertex(vertices);
          VertexRef target = Vertex(vertices);
          edges.push_back(b.AddEdge(Name(), source, target, Props()));
          break;
        }
        case 10: {
          VertexRef v = Vertex(vertices);
          std::string key = Name();
          b.SetProperty(v, key, Value());
          break;
        }
        case 11: {
          EdgeRef e = Edge(edges);
          std::string key = Name();
          b.SetProperty(e, key, Value());
          break;
        }
        case 12:
          if (in_.Bool()) {
            VertexRef v = Vertex(vertices);
            b.RemoveProperty(v, Name());
          } else {
            EdgeRef e = Edge(edges);
            b.RemoveProperty(e, Name());
          }
          break;
        case 13: b.RemoveEdge(Edge(edges)); break;
        case 14: b.RemoveVertex(Vertex(vertices)); break;
        default: {
          // A vertex with a value long enough to cross sector boundaries.
          std::vector<Property> props;
          props.push_back(Property{"blob", std::string(in_.Range(0, 1500), 'x')});
          vertices.push_back(b.AddVertex("Blob", props));
          break;
        }
      }
    }
    return b;
  }

 private:
  // Mostly a handful of names; sometimes whatever the input holds (empty or
  // invalid UTF-8 fails the batch).
  std::string Name() {
    static const char* const kNames[] = {"A", "B", "Person", "City", "KNOWS", "name", "w"};
    std::uint8_t pick = in_.Byte() % 16;
    return pick < 15 ? kNames[pick % 7] : in_.Str(6);
  }
  // An element added earlier in the batch, or a committed id (the limit
  // itself, which does not exist yet, now and then).
  VertexRef Vertex(const std::vector<NewVertex>& added) {
    if (!added.empty() && in_.Bool()) return added[in_.Range(0, added.size() - 1)];
    return VertexId(in_.Range(0, vertex_limit_));
  }
  EdgeRef Edge(const std::vector<NewEdge>& added) {
    if (!added.empty() && in_.Bool()) return added[in_.Range(0, added.size() - 1)];
    return EdgeId(in_.Range(0, edge_limit_));
  }
  PropertyValue Value() {
    switch (in_.Byte() % 8) {
      case 0: return PropertyValue();
      case 1: return PropertyValue(in_.Bool());
      case 2: return PropertyValue(static_cast<std::int64_t>(in_.Range(0, UINT64_MAX)));
      case 3: return PropertyValue(static_cast<double>(static_cast<std::int16_t>(in_.Range(0, 65535))) / 8);
      case 4: return PropertyValue(in_.Str(24));
      case 5: {
        std::string s = in_.Str(16);
        const auto* p = reinterpret_cast<const std::byte*>(s.data());
        return PropertyValue(Bytes(p, p + s.size()));
      }
      case 6: {
        FloatVector f(in_.Range(0, 4));
        for (float& x : f) x = static_cast<float>(in_.Byte()) / 4;
        return PropertyValue(std::move(f));
      }
      default: return PropertyValue(std::string(in_.Range(0, 700), 'v'));
    }
  }
  std::vector<Property> Props() {
    std::vector<Property> props;
    const std::uint64_t n = in_.Range(0, 3);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string key = Name();
      props.push_back(Property{std::move(key), Value()});
    }
    return props;
  }

  FuzzInput& in_;
  std::uint64_t vertex_limit_;
  std::uint64_t edge_limit_;
};

struct Plan {
  Options options;
  std::uint64_t crash_at = 0;
  env::CrashPolicy policy = env::CrashPolicy::kDropUnsynced;
  std::uint64_t crash_seed = 0;
  std::uint64_t second_crash = 0;
  bool write_after_recovery = false;
  std::vector<Step> steps;
  std::vector<Outcome> outcomes;  // per batch, in step order
  // states[m]: the volatile graph after m commits (snapshots stay readable
  // after their graph is gone; dumped only when compared, which is cheap).
  std::vector<Snapshot> states;
};

// Reads the plan and runs its batches on a volatile graph.
Plan MakePlan(FuzzInput& in) {
  Plan p;
  p.options.durable.wal_segment_bytes = std::uint64_t{128} << in.Range(0, 6);
  p.options.durable.checkpoint_wal_bytes = 0;  // no background checkpoints: operation numbers stay put
  p.options.durable.checkpoint_interval_ms = 0;
  p.options.durable.checkpoint_on_close = in.Bool();
  p.options.writer.max_group_batches = in.Range(1, 8);
  p.options.writer.spin_microseconds = 0;
  p.crash_at = in.Range(0, 511);
  p.policy = env::kAllCrashPolicies[in.Range(0, std::size(env::kAllCrashPolicies) - 1)];
  p.crash_seed = in.Range(0, UINT32_MAX);
  p.second_crash = in.Range(0, 255);
  p.write_after_recovery = in.Bool();

  auto model = Graph::OpenInMemory(p.options);
  QUIVER_FUZZ_CHECK(model.ok(), model.status().ToString());
  Graph& g = **model;
  p.states.push_back(g.GetSnapshot());
  while (!in.empty() && p.steps.size() < kMaxSteps) {
    Step step;
    const std::uint8_t kind = in.Byte() % 10;
    step.kind = kind < 6   ? StepKind::kWrite
                : kind < 8 ? StepKind::kBurst
                : kind < 9 ? StepKind::kCheckpoint
                           : StepKind::kReopen;
    const std::uint64_t batches = step.kind == StepKind::kWrite   ? 1
                                  : step.kind == StepKind::kBurst ? in.Range(2, 5)
                                                                  : 0;
    std::uint64_t vertex_limit, edge_limit;
    {
      Snapshot before = g.GetSnapshot();
      vertex_limit = before.vertex_id_limit();
      edge_limit = before.edge_id_limit();
    }
    BatchMaker maker(in, vertex_limit, edge_limit);
    for (std::uint64_t i = 0; i < batches; ++i) step.batches.push_back(maker.Make());
    for (const WriteBatch& b : step.batches) {
      Result<CommitInfo> r = g.Write(b);
      p.outcomes.push_back(OutcomeOf(r));
      if (!r.ok()) continue;
      QUIVER_FUZZ_CHECK(r->sequence == p.states.size(), "volatile graph skipped a sequence: " + Describe(r));
      p.states.push_back(g.GetSnapshot());
    }
    p.steps.push_back(std::move(step));
  }
  return p;
}

// ---- The durable run ----

class DurableRun {
 public:
  DurableRun(const Plan& plan, env::SimFileSystem* fs) : plan_(plan), fs_(fs) {}

  // Runs the steps until the end or until the graph cannot be reopened.
  void Run() {
    if (!Open()) return;
    std::size_t next_outcome = 0;
    for (const Step& step : plan_.steps) {
      switch (step.kind) {
        case StepKind::kWrite: Check(graph_->Write(step.batches[0]), plan_.outcomes[next_outcome++]); break;
        case StepKind::kBurst: {
          std::vector<std::future<Result<CommitInfo>>> pending;
          for (const WriteBatch& b : step.batches) pending.push_back(graph_->WriteAsync(b));
          for (auto& f : pending) Check(f.get(), plan_.outcomes[next_outcome++]);
          break;
        }
        case StepKind::kCheckpoint: {
          Status s = graph_->Checkpoint();
          QUIVER_FUZZ_CHECK(s.ok() || fs_->dead(),
                            "checkpoint failed before the crash point: " + s.ToString());
          break;
        }
        case StepKind::kReopen: {
          Status s = graph_->Close();
          QUIVER_FUZZ_CHECK(s.ok() || fs_->dead(), "close failed before the crash point: " + s.ToString());
          graph_.reset();
          if (!Open()) return;
          // No crash so far (Open succeeded), so nothing was in doubt.
          QUIVER_FUZZ_CHECK(unknown_ == 0, "DurabilityUnknown without a crash");
          Snapshot snap = graph_->GetSnapshot();
          QUIVER_FUZZ_CHECK(
              snap.sequence() == acked_ && Dump(snap) == Dump(plan_.states[acked_]),
              "clean reopen recovered sequence " + U64(snap.sequence()) + ", acknowledged " + U64(acked_));
          break;
        }
      }
    }
  }

  // Destroys the graph (its destructor closes it).
  void Stop() { graph_.reset(); }

  SequenceNumber acked() const { return acked_; }
  std::uint64_t unknown() const { return unknown_; }

 private:
  bool Open() {
    auto g = GraphImpl::OpenDurable(plan_.options, kDir, fs_);
    if (!g.ok()) {
      QUIVER_FUZZ_CHECK(fs_->dead(), "open failed before the crash point: " + g.status().ToString());
      return false;
    }
    graph_ = std::move(*g);
    return true;
  }

  void Check(const Result<CommitInfo>& r, const Outcome& expected) {
    const Outcome got = OutcomeOf(r);
    const bool same = got.code == expected.code && got.sequence == expected.sequence;
    if (r.ok()) acked_ = std::max(acked_, r->sequence);
    if (got.code == StatusCode::kDurabilityUnknown) ++unknown_;
    if (same) return;
    QUIVER_FUZZ_CHECK(fs_->dead() && !r.ok() &&
                          (got.code == StatusCode::kDurabilityUnknown || got.code == StatusCode::kPoisoned),
                      "write got " + Describe(r) + " where the volatile graph got code " +
                          U64(static_cast<std::uint64_t>(expected.code)) + " sequence " +
                          U64(expected.sequence) +
                          (fs_->dead() ? " (after the crash point)" : " (before the crash point)"));
  }

  const Plan& plan_;
  env::SimFileSystem* fs_;
  std::unique_ptr<Graph> graph_;
  SequenceNumber acked_ = 0;
  std::uint64_t unknown_ = 0;
};

// Opens `fs` after a crash and checks the recovered state; returns its
// sequence.
SequenceNumber Recover(const Plan& plan, env::SimFileSystem* fs, SequenceNumber low, SequenceNumber high,
                       const char* what, std::unique_ptr<Graph>* keep = nullptr) {
  auto g = GraphImpl::OpenDurable(plan.options, kDir, fs);
  QUIVER_FUZZ_CHECK(g.ok(), std::string(what) + ": open failed: " + g.status().ToString());
  Snapshot snap = (*g)->GetSnapshot();
  const SequenceNumber m = snap.sequence();
  QUIVER_FUZZ_CHECK(m >= low && m <= high && m < plan.states.size(),
                    std::string(what) + ": recovered sequence " + U64(m) + ", expected " + U64(low) + ".." +
                        U64(high) + " (policy " + std::string(env::CrashPolicyName(plan.policy)) + ")");
  const std::string dump = Dump(snap);
  const std::string expected = Dump(plan.states[m]);
  QUIVER_FUZZ_CHECK(dump == expected, std::string(what) + ": state at sequence " + U64(m) +
                                          " differs from the volatile graph's:\n" + dump + "--- expected\n" +
                                          expected);
  if (keep != nullptr) *keep = std::move(*g);
  return m;
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  const Plan plan = MakePlan(in);

  env::SimFileSystem fs;
  fs.SetCrashAtOperation(plan.crash_at);
  DurableRun run(plan, &fs);
  run.Run();
  run.Stop();
  const bool crashed_early = fs.dead();

  fs.Crash(plan.policy, plan.crash_seed);
  std::unique_ptr<env::SimFileSystem> before_recovery = fs.Clone();
  const std::uint64_t ops_before = fs.operation_count();
  std::unique_ptr<Graph> graph;
  const SequenceNumber m = Recover(plan, &fs, run.acked(), run.acked() + run.unknown(), "recovery", &graph);
  const std::uint64_t recovery_ops = fs.operation_count() - ops_before;
  if (Verbose()) {
    std::fprintf(
        stderr,
        "  %zu steps, %zu batches, %zu commits; crash at op %llu of %llu (%s), policy %s: acked %llu, "
        "unknown %llu, recovered %llu (%llu recovery ops)\n",
        plan.steps.size(), plan.outcomes.size(), plan.states.size() - 1,
        static_cast<unsigned long long>(plan.crash_at), static_cast<unsigned long long>(ops_before),
        crashed_early ? "fired" : "not reached", std::string(env::CrashPolicyName(plan.policy)).c_str(),
        static_cast<unsigned long long>(run.acked()), static_cast<unsigned long long>(run.unknown()),
        static_cast<unsigned long long>(m), static_cast<unsigned long long>(recovery_ops));
  }

  if (plan.write_after_recovery) {
    WriteBatch b;
    b.AddVertex("After", {{"m", static_cast<std::int64_t>(m)}});
    Result<CommitInfo> r = graph->Write(b);
    QUIVER_FUZZ_CHECK(r.ok() && r->sequence == m + 1, "write after recovery: " + Describe(r));
    const std::string expected = Dump(graph->GetSnapshot());
    Status closed = graph->Close();
    QUIVER_FUZZ_CHECK(closed.ok(), "close after recovery: " + closed.ToString());
    graph.reset();
    fs.Crash(plan.policy, plan.crash_seed + 1);
    auto again = GraphImpl::OpenDurable(plan.options, kDir, &fs);
    QUIVER_FUZZ_CHECK(again.ok(), "open after the write after recovery: " + again.status().ToString());
    Snapshot snap = (*again)->GetSnapshot();
    QUIVER_FUZZ_CHECK(
        snap.sequence() == m + 1 && Dump(snap) == expected,
        "the write after recovery was lost: sequence " + U64(snap.sequence()) + ", expected " + U64(m + 1));
  }
  graph.reset();

  // A second power cut during recovery recovers the same state.
  if (plan.second_crash != 0 && recovery_ops > 0) {
    before_recovery->SetCrashAtOperation(before_recovery->operation_count() + 1 +
                                         plan.second_crash % recovery_ops);
    { auto interrupted = GraphImpl::OpenDurable(plan.options, kDir, before_recovery.get()); }
    before_recovery->Crash(plan.policy, plan.crash_seed ^ 0x9E3779B9u);
    Recover(plan, before_recovery.get(), m, m, "recovery after a crash during recovery");
  }
}

}  // namespace
}  // namespace quiver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  quiver::fuzz::TestOneInput(data, size);
  return 0;
}
