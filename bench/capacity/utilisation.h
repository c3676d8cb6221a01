// Utilisation: how busy the hardware was while a figure was measured, so a reader can tell a
// figure bound by the machine from one bound by the software.
//
// Four probes, each usable around any measured window:
//   CPU            ThreadCpuNs() (CLOCK_THREAD_CPUTIME_ID) for threads the bench runs itself;
//                  TaskCpuSampler for threads it does not own (the engine's checkpoint writers):
//                  it polls /proc/self/task/*/schedstat (nanosecond on-CPU time per thread).
//   memory         computed by the family: the bytes the operation necessarily moved / time.
//   HW counters    HardwareCounters: perf_event_open, user space only, inherited by threads
//                  created while counting. Where the kernel or a VM refuses, every counter is
//                  the null pattern with the errno's name and meaning; nothing is estimated.
//   disk           ProcessWriteBytes(): /proc/self/io write_bytes, the bytes this process caused
//                  to be sent to storage.
// Report shapes are in schemas/capacity-report.schema.json ($defs/cpuUtilisation,
// $defs/hardwareCounters, $defs/diskWrite).
#ifndef QUIVER_BENCH_CAPACITY_UTILISATION_H_
#define QUIVER_BENCH_CAPACITY_UTILISATION_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "figure.h"

namespace quiver::capacity {

// A thread counts as saturated at this busy share or more.
inline constexpr double kBusyThreshold = 0.95;

// The calling thread's own CPU time in nanoseconds.
std::uint64_t ThreadCpuNs();
// The whole process's CPU time in nanoseconds (exited threads included).
std::uint64_t ProcessCpuNs();

// One thread's CPU time over a window.
struct ThreadCpu {
  std::string name;
  std::uint64_t cpu_ns = 0;
};

// {"windowSeconds", "threads": [{"name", "busyShare"}], "threadsAtLeast95PercentBusy",
//  "processBusyCores", "method"}: busy share = cpu_ns / window_ns, per thread.
Json CpuUtilisation(const std::vector<ThreadCpu>& threads, std::uint64_t window_ns,
                    std::uint64_t process_cpu_ns, const std::string& method);

// Samples the on-CPU time of every thread of this process (except its own) every `period_ms`
// between Start() and Stop(). A thread that exits keeps its last sample, so it loses at most one
// period; a thread that lives less than a period may be missed (processBusyCores, from the
// process clock, still counts it). Not thread-safe: one owner calls Start, Stop, Threads.
class TaskCpuSampler {
 public:
  explicit TaskCpuSampler(int period_ms = 5) : period_ms_(period_ms) {}
  ~TaskCpuSampler();
  void Start();
  void Stop();
  // Per thread seen: CPU time in the window (last sample minus the first, or minus 0 for a thread
  // born inside it), threads with no CPU time in the window left out. The main thread is named
  // "caller"; threads that kept the process's name "engine thread N".
  std::vector<ThreadCpu> Threads() const;
  std::uint64_t window_ns() const { return end_ns_ - start_ns_; }
  std::uint64_t process_cpu_ns() const { return process_end_ - process_start_; }

 private:
  struct Seen {
    std::string name;
    std::uint64_t first = 0;
    std::uint64_t last = 0;
  };
  void Sample(bool initial);

  int period_ms_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::map<long, Seen> seen_;  // by thread id; written by Sample under mu_
  long own_tid_ = 0;
  std::uint64_t start_ns_ = 0, end_ns_ = 0, process_start_ = 0, process_end_ = 0;
};

// Hardware counters of this thread and the threads it creates while counting (user space only).
class HardwareCounters {
 public:
  // Opens the counters (disabled); failures are kept as reasons, never thrown.
  HardwareCounters();
  ~HardwareCounters();
  HardwareCounters(const HardwareCounters&) = delete;
  HardwareCounters& operator=(const HardwareCounters&) = delete;
  void Start();
  void Stop();
  // {"cycles", "instructions", "instructionsPerCycle", "l1dLoads", "l1dLoadMisses",
  //  "lastLevelLoads", "lastLevelLoadMisses", "dtlbLoadMisses", "servedFrom": {"l1", "l2OrL3",
  //  "dram"}, "perfEventParanoid", "method"}; each figure a number or the null pattern.
  Json ToJson() const;

 private:
  struct Counter {
    const char* name;
    int fd = -1;
    std::string error;  // why it could not be opened or read
    std::uint64_t value = 0;
  };
  std::vector<Counter> counters_;
};

// Bytes this process has caused to be written to storage (/proc/self/io write_bytes); 0 and
// `error` set when the file cannot be read.
std::uint64_t ProcessWriteBytes(std::string* error);

// {"bytesWritten", "seconds", "megabytesPerSecond", "efficiency" (÷ ceilings.sequentialWrite),
//  "method"} for `bytes` written in `seconds`; the null pattern with `io_error` when /proc/self/io
// could not be read.
Json DiskWrite(std::uint64_t bytes, double seconds, const std::string& io_error, const Json& ceilings,
               const std::string& what);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_UTILISATION_H_
