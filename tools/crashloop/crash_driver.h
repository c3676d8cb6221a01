// CrashDriver: the parent side of the kill -9 loop (RELIABILITY.md 3.3).
//
// Per iteration: start a child on the mode's directory, let it recover and
// commit, SIGKILL it at the planned moment, then copy the directory, read
// the copy with the independent reader (tests/independent_reader.h), open
// the copy in this process (posix file system: a buffered child's unsynced
// bytes died with it), verify it (crash_verifier.h) and compare it with the
// independent reader's state, close it (with a checkpoint every other time
// or so) and check that checkpoints truncated the WAL. The original
// directory is never opened by the parent and is kept across iterations as
// the kill left it, so crashes pile on crashes; it is
// wiped (a "reset") only when the graph outgrows a size bound, or when a
// violation means the model no longer describes it. The first few
// violating directories are copied for diagnosis.
//
// Thread safety: single-threaded; Run() forks children.
#ifndef QUIVER_TOOLS_CRASHLOOP_CRASH_DRIVER_H_
#define QUIVER_TOOLS_CRASHLOOP_CRASH_DRIVER_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "child_log.h"
#include "crash_report.h"
#include "crash_verifier.h"
#include "independent_reader.h"
#include "iteration_plan.h"

namespace quiver::crashloop {

struct DriverConfig {
  std::uint64_t iterations = 0;
  std::vector<FsMode> modes;  // iteration i uses modes[i % size]
  std::string root;           // holds one directory per mode
  std::uint64_t seed = 0;
  KillRange kill;
  std::uint32_t producers = 4;
  // Wipe a directory once its graph holds more elements (vertex + edge ids)
  // or bytes than this, so recovery time stays bounded over long runs.
  std::uint64_t reset_elements = 150'000;
  std::uint64_t reset_bytes = std::uint64_t{48} << 20;
  // A child that has not finished opening by then is counted as hung.
  std::chrono::seconds open_timeout{120};
  bool verbose = false;
  // Children lie about WAL syncs (lying_file_system.h): the run must fail.
  bool negative_control = false;
  // The verifier compares indexes with a deliberately wrong scan
  // (index_catalog.h): the run must report index mismatches.
  bool index_negative_control = false;
};

class CrashDriver {
 public:
  explicit CrashDriver(DriverConfig config);
  // Runs every iteration; the totals say whether any violation occurred.
  RunTotals Run();

 private:
  struct ModeState {
    FsMode mode;
    std::string dir;
    DirModel model;
    std::uint64_t last_open_us = 0;  // the child's, for the early-kill window
  };

  // How one child ended.
  struct ChildRun {
    ChildLog log;
    int wait_status = 0;
    bool exited_early = false;  // before the kill
    bool hung = false;          // never finished opening
    // Time from open-done to the kill, if the kill was planned after it.
    std::chrono::microseconds commit_window{0};
  };

  void RunIteration(std::uint64_t iteration, ModeState& state);
  ChildRun RunChild(std::uint64_t iteration, const ModeState& state);
  // Counts where the kill landed, and a child that failed on its own.
  void ClassifyKill(std::uint64_t iteration, const ModeState& state, const ChildRun& run);
  // Opens, verifies and closes the directory, counting violations. Returns
  // false if the directory no longer matches the model (it did not open,
  // or its contents are wrong): it must be reset. Files left behind are a
  // violation that leaves the model valid.
  // Works on a copy of the directory (VerifyCopyPath), removed afterwards;
  // the original stays as the kill left it for the next child.
  bool OpenAndVerify(std::uint64_t iteration, ModeState& state, const ChildLog& log);
  bool OpenAndVerifyCopy(std::uint64_t iteration, ModeState& state, const ChildLog& log,
                         const std::string& dir);
  std::string VerifyCopyPath(const ModeState& state) const;
  // The second opinion: the state the independent reader
  // (tests/independent_reader.h) rebuilt from the files must be the one
  // Graph::Open recovered.
  void CompareWithIndependentReader(std::uint64_t iteration, const ModeState& state,
                                    const Result<test::ReaderState>& independent, const Snapshot& snapshot);
  void Fail(std::uint64_t iteration, const ModeState& state, const std::string& what);
  // Keeps a copy of the directory and the child's log (first few failures).
  void SaveCopy(std::uint64_t iteration, const ModeState& state, const ChildLog& log);
  // Wipes the directory and forgets its model.
  void Reset(ModeState& state);

  const DriverConfig config_;
  RunTotals totals_;
  std::vector<ModeState> states_;
  std::uint64_t saved_ = 0;    // directories copied by SaveCopy
  std::uint64_t printed_ = 0;  // violations reported by Fail
};

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_CRASH_DRIVER_H_
