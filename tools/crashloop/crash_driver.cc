#include "crash_driver.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>

#include "child_process.h"
#include "dir_scan.h"
#include "independent_reader.h"
#include "quiver/graph.h"

namespace quiver::crashloop {
namespace {

constexpr std::uint64_t kMaxSavedFailures = 3;
constexpr std::uint64_t kMaxPrintedViolations = 100;
constexpr std::uint64_t kProgressEvery = 1000;
constexpr std::chrono::milliseconds kStallWindow{250};

// Ends the process if the parent's own open / verify / close hangs: a hang
// in recovery is a failure the loop must report rather than wait out.
char g_watchdog_message[256];
std::size_t g_watchdog_length = 0;

extern "C" void OnWatchdog(int) {
  [[maybe_unused]] ssize_t w = ::write(STDERR_FILENO, g_watchdog_message, g_watchdog_length);
  ::_exit(3);
}

class Watchdog {
 public:
  Watchdog(std::chrono::seconds timeout, std::uint64_t iteration, std::uint64_t seed) {
    const int n =
        std::snprintf(g_watchdog_message, sizeof g_watchdog_message,
                      "quiver-crashloop: the parent's open/verify/close hung for %llds at iteration %" PRIu64
                      " (seed %" PRIu64 ")\n",
                      static_cast<long long>(timeout.count()), iteration, seed);
    g_watchdog_length =
        static_cast<std::size_t>(std::clamp(n, 0, static_cast<int>(sizeof g_watchdog_message) - 1));
    ::signal(SIGALRM, OnWatchdog);
    ::alarm(static_cast<unsigned>(timeout.count()));
  }
  ~Watchdog() { ::alarm(0); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
};

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

void WriteLogFile(const std::string& path, const ChildLog& log) {
  std::ofstream out(path);
  out << "open started " << log.open_started << ", done " << log.open_done << ", recovered sequence "
      << log.child_recovered_sequence << ", checkpoints in flight " << log.checkpoints_in_flight << "\n";
  if (!log.error.empty()) out << "E " << log.error << "\n";
  for (std::uint64_t id : log.begun) out << "B " << id << "\n";
  for (const auto& [id, seq] : log.acked) out << "A " << id << " " << seq << "\n";
  for (const auto& [id, code] : log.failed) out << "F " << id << " " << StatusCodeName(code) << "\n";
  for (const IndexEvent& e : log.index_ops)
    out << "I " << (e.drop ? "drop " : "create ") << e.name << " "
        << (e.done ? std::string(StatusCodeName(e.code)) : std::string("(in flight)")) << "\n";
}

}  // namespace

CrashDriver::CrashDriver(DriverConfig config) : config_(std::move(config)) {
  for (FsMode mode : config_.modes) {
    if (std::any_of(states_.begin(), states_.end(), [mode](const ModeState& s) { return s.mode == mode; }))
      continue;
    states_.push_back(ModeState{mode, config_.root + "/" + std::string(FsModeName(mode)), {}, 0});
  }
}

RunTotals CrashDriver::Run() {
  for (ModeState& state : states_) Reset(state);
  for (std::uint64_t i = 0; i < config_.iterations; ++i) {
    const FsMode mode = config_.modes[i % config_.modes.size()];
    auto state =
        std::find_if(states_.begin(), states_.end(), [mode](const ModeState& s) { return s.mode == mode; });
    RunIteration(i, *state);
    if (!config_.verbose && (i + 1) % kProgressEvery == 0)
      std::fprintf(stderr, "quiver-crashloop: %" PRIu64 " iterations, %" PRIu64 " violations so far\n", i + 1,
                   totals_.total_violations());
  }
  return totals_;
}

void CrashDriver::RunIteration(std::uint64_t iteration, ModeState& state) {
  ++totals_.iterations;
  ModeTotals& mode = state.mode == FsMode::kPosix ? totals_.posix : totals_.buffered;
  ++mode.iterations;
  ChildRun run = RunChild(iteration, state);
  totals_.begun += run.log.begun.size();
  totals_.failed_writes += run.log.failed.size();
  totals_.explicit_checkpoints += run.log.checkpoints_done;
  if (run.log.open_done) state.last_open_us = run.log.child_open_us;
  const std::uint64_t violations_before = totals_.total_violations();
  const std::uint64_t lost_before = totals_.violations.acked_lost;
  ClassifyKill(iteration, state, run);
  // Verify even after a child failure: what the directory holds still counts.
  const bool model_valid = OpenAndVerify(iteration, state, run.log);
  const bool violated = totals_.total_violations() > violations_before;
  mode.violations += totals_.total_violations() - violations_before;
  mode.acked_lost += totals_.violations.acked_lost - lost_before;
  if (config_.verbose)
    std::fprintf(stderr,
                 "iteration %" PRIu64 " %s: window %.1f ms, begun %zu, acked %zu, open %s, recovered %" PRIu64
                 ", %s\n",
                 iteration, std::string(FsModeName(state.mode)).c_str(), run.commit_window.count() / 1000.0,
                 run.log.begun.size(), run.log.acked.size(),
                 run.log.open_done ? "done" : (run.log.open_started ? "cut" : "not started"),
                 state.model.sequence, violated ? "VIOLATION" : "ok");
  if (violated) SaveCopy(iteration, state, run.log);
  // The model no longer describes the directory: start afresh.
  if (!model_valid) Reset(state);
}

CrashDriver::ChildRun CrashDriver::RunChild(std::uint64_t iteration, const ModeState& state) {
  ChildRun run;
  KillRange range = config_.kill;
  range.early_window_us = std::max(range.early_window_us, state.last_open_us);
  const KillPlan plan = PlanKill(config_.seed, iteration, range);
  std::vector<std::string> argv = {"quiver-crashloop", "--child", "--dir", state.dir};
  auto add = [&argv](const char* flag, std::string value) {
    argv.emplace_back(flag);
    argv.push_back(std::move(value));
  };
  add("--seed", std::to_string(config_.seed));
  add("--iteration", std::to_string(iteration));
  add("--mode", std::string(FsModeName(state.mode)));
  add("--producers", std::to_string(config_.producers));
  if (config_.negative_control) argv.emplace_back("--lie-about-wal-sync");
  Result<ChildProcess> child = ChildProcess::Spawn(argv);
  if (!child.ok()) {
    run.exited_early = true;
    run.log.error = "spawn: " + child.status().ToString();
    return run;
  }
  auto deadline = ChildProcess::Clock::now() + config_.open_timeout;
  bool armed = false;
  while (true) {
    const ChildProcess::Event event = child->Wait(deadline, &run.log);
    if (event == ChildProcess::Event::kEndOfFile) {
      run.exited_early = true;
      break;
    }
    if (!armed && (plan.during_open ? run.log.open_started : run.log.open_done)) {
      armed = true;
      deadline = ChildProcess::Clock::now() + std::chrono::microseconds(plan.delay_us);
    } else if (event == ChildProcess::Event::kDeadline) {
      run.hung = !armed;
      break;
    }
  }
  const auto killed_at = ChildProcess::Clock::now();
  run.wait_status = child->KillAndDrain(&run.log);
  if (armed && !plan.during_open)
    run.commit_window = std::chrono::duration_cast<std::chrono::microseconds>(
        killed_at - (deadline - std::chrono::microseconds(plan.delay_us)));
  return run;
}

void CrashDriver::ClassifyKill(std::uint64_t iteration, const ModeState& state, const ChildRun& run) {
  const ChildLog& log = run.log;
  if (Result<DirScan> scan = ScanDir(state.dir); scan.ok()) {
    totals_.max_segments = std::max<std::uint64_t>(totals_.max_segments, scan->segments.size());
    totals_.max_checkpoints = std::max<std::uint64_t>(totals_.max_checkpoints, scan->checkpoints.size());
    if (log.checkpoints_in_flight > 0 || scan->tmp_files > 0) ++totals_.kills_checkpoint;
    if (config_.verbose) {
      std::string seqs;
      for (SequenceNumber s : scan->checkpoints) seqs += " " + std::to_string(s);
      std::fprintf(stderr, "  after the kill: %zu WAL segments, %" PRIu64 " *.tmp, checkpoints%s\n",
                   scan->segments.size(), scan->tmp_files, seqs.c_str());
    }
  }
  if (run.hung) {
    ++totals_.recovery_failures;
    Fail(iteration, state,
         "the child did not finish opening within " + std::to_string(config_.open_timeout.count()) +
             " s (recovery hang)");
    return;
  }
  if (!log.error.empty()) {
    ++totals_.recovery_failures;
    Fail(iteration, state, "the child could not open the graph: " + log.error);
    return;
  }
  if (run.exited_early) {
    ++(log.open_done ? totals_.child_failures : totals_.recovery_failures);
    Fail(iteration, state, "the child died before the kill: " + DescribeWaitStatus(run.wait_status));
    return;
  }
  if (log.malformed_lines > 0) {
    ++totals_.child_failures;
    Fail(iteration, state, std::to_string(log.malformed_lines) + " malformed protocol lines");
    return;
  }
  // Not a violation (a slow disk can do it), but a writer that deadlocks
  // would look like this, kill after kill.
  if (run.commit_window >= kStallWindow && log.acked.empty() && log.failed.empty()) ++totals_.stalled_windows;
  if (!log.open_started) {
    ++totals_.kills_before_open;
  } else if (!log.open_done) {
    ++totals_.kills_recovery;
  }
}

std::string CrashDriver::VerifyCopyPath(const ModeState& state) const {
  return config_.root + "/verify-" + std::string(FsModeName(state.mode));
}

bool CrashDriver::OpenAndVerify(std::uint64_t iteration, ModeState& state, const ChildLog& log) {
  // Recovery writes (a checkpoint, a truncated tail, a new segment): done
  // on the original, it would hand the next child a cleanly reopened
  // directory. The parent recovers a copy instead and leaves the original
  // exactly as the kill left it, so crashes pile up: the next child
  // recovers on top of this crash, perhaps of a crash during recovery.
  const std::string copy = VerifyCopyPath(state);
  std::error_code ec;
  std::filesystem::remove_all(copy, ec);
  std::filesystem::copy(state.dir, copy, std::filesystem::copy_options::recursive, ec);
  if (ec) {
    ++totals_.recovery_failures;
    Fail(iteration, state, "could not copy the directory for verification: " + ec.message());
    return false;
  }
  const bool model_valid = OpenAndVerifyCopy(iteration, state, log, copy);
  std::filesystem::remove_all(copy, ec);
  return model_valid;
}

bool CrashDriver::OpenAndVerifyCopy(std::uint64_t iteration, ModeState& state, const ChildLog& log,
                                    const std::string& dir) {
  // The second opinion reads the files before Graph::Open changes them.
  Result<test::ReaderState> independent = test::ReadGraphDirectory(dir);
  Options options;
  options.durable.checkpoint_on_close = PlanParentCheckpoint(config_.seed, iteration);
  options.durable.checkpoint_wal_bytes = 0;  // the parent writes nothing; only Close checkpoints
  // A segment it starts (in a fresh directory) is preallocated: keep it small.
  options.durable.wal_segment_bytes = std::uint64_t{64} << 10;
  const Watchdog watchdog(config_.open_timeout * 2, iteration, config_.seed);
  const auto t0 = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Graph>> graph = Graph::Open(options, dir);
  if (!graph.ok()) {
    ++totals_.recovery_failures;
    Fail(iteration, state, "the parent could not open the graph: " + graph.status().ToString());
    return false;
  }
  const OpenStats open = (*graph)->GetOpenStats();
  totals_.recovery_us.push_back(open.open_microseconds);
  if (open.tail_bytes_truncated > 0) ++totals_.torn_tails;
  if (open.used_previous_checkpoint) ++totals_.previous_checkpoint_opens;
  Verification v;
  {
    const Snapshot snapshot = (*graph)->GetSnapshot();
    v = Verify(snapshot, config_.seed, state.model, log, config_.index_negative_control);
    CompareWithIndependentReader(iteration, state, independent, snapshot);
  }
  // No catalog index can be violated by the loop's data: Open must build
  // every index a crash left unfinished, never drop one.
  for (const std::string& d : open.dropped_indexes) {
    ++v.violations.index_mismatches;
    v.messages.push_back("Open dropped index " + d);
  }
  if (open.recovered_sequence != v.model.sequence) {
    ++v.violations.sequence_gaps;
    v.messages.push_back("open statistics report sequence " + std::to_string(open.recovered_sequence) +
                         ", the snapshot has " + std::to_string(v.model.sequence));
  }
  totals_.violations.Add(v.violations);
  totals_.acked_verified += v.acked_verified;
  totals_.unacked_present += v.unacked_present;
  totals_.unacked_absent += v.unacked_absent;
  totals_.index_checks += v.index_checks;
  totals_.upsert_keys += v.upsert_keys;
  totals_.indexes_built_at_open += open.indexes_built;
  totals_.index_ops += log.index_ops.size();
  for (const IndexEvent& e : log.index_ops) {
    if (!e.done) ++totals_.kills_during_index_op;
  }
  for (const std::string& m : v.messages) Fail(iteration, state, m);
  const bool model_valid = v.violations.total() == 0;

  const Status closed = (*graph)->Close();
  const bool checkpointed = (*graph)->GetDurabilityStats().checkpoints_written > 0;
  graph->reset();  // joins the engine's threads and releases the lock before the next fork
  if (config_.verbose) {
    auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
    std::fprintf(stderr, "  parent: open+verify+close %lld ms (open %.1f ms), elements %" PRIu64 "\n",
                 static_cast<long long>(ms(std::chrono::steady_clock::now() - t0)),
                 open.open_microseconds / 1000.0, v.elements);
  }
  if (!closed.ok()) {
    ++totals_.close_failures;
    Fail(iteration, state, "the parent's Close failed: " + closed.ToString());
  }
  if (checkpointed) {
    if (std::optional<std::string> left = CheckTruncated(dir)) {
      ++totals_.wal_not_truncated;
      Fail(iteration, state, "the WAL was not truncated: " + *left);
    }
  }
  if (!model_valid) return false;
  state.model = std::move(v.model);
  Result<DirScan> scan = ScanDir(state.dir);
  if (v.elements > config_.reset_elements || (scan.ok() && scan->bytes > config_.reset_bytes)) {
    ++totals_.resets;
    Reset(state);
  }
  return true;
}

void CrashDriver::CompareWithIndependentReader(std::uint64_t iteration, const ModeState& state,
                                               const Result<test::ReaderState>& independent,
                                               const Snapshot& snapshot) {
  std::string why;
  if (!independent.ok()) {
    why = "it failed: " + independent.status().ToString();
  } else if (std::optional<std::string> diff = test::CompareWithSnapshot(*independent, snapshot)) {
    why = *diff;
  } else {
    ++totals_.reader_agreements;
    return;
  }
  ++totals_.reader_disagreements;
  Fail(iteration, state, "the independent reader disagrees with Graph::Open: " + why);
}

void CrashDriver::Fail(std::uint64_t iteration, const ModeState& state, const std::string& what) {
  if (++printed_ > kMaxPrintedViolations) {
    if (printed_ == kMaxPrintedViolations + 1)
      std::fprintf(stderr, "(further violations are counted, not printed)\n");
    return;
  }
  std::fprintf(stderr, "VIOLATION iteration %" PRIu64 " (%s, seed %" PRIu64 "): %s\n", iteration,
               std::string(FsModeName(state.mode)).c_str(), config_.seed, what.c_str());
}

void CrashDriver::SaveCopy(std::uint64_t iteration, const ModeState& state, const ChildLog& log) {
  if (saved_ < kMaxSavedFailures && !config_.negative_control && !config_.index_negative_control) {
    ++saved_;
    const std::string copy =
        config_.root + "/failed-" + std::to_string(iteration) + "-" + std::string(FsModeName(state.mode));
    std::error_code ec;
    std::filesystem::copy(state.dir, copy, std::filesystem::copy_options::recursive, ec);
    WriteLogFile(copy + "/child-log.txt", log);
    std::fprintf(stderr, "  directory as the kill left it, and the child's log, kept in %s%s\n", copy.c_str(),
                 ec ? (" (copy failed: " + ec.message() + ")").c_str() : "");
  }
}

void CrashDriver::Reset(ModeState& state) {
  std::error_code ec;
  std::filesystem::remove_all(state.dir, ec);
  std::filesystem::create_directories(state.dir, ec);
  state.model = DirModel{};
  state.last_open_us = 0;
}

}  // namespace quiver::crashloop
