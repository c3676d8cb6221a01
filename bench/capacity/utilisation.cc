#include "utilisation.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "timing.h"

namespace quiver::capacity {
namespace {

std::uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The first field of /proc/self/task/TID/schedstat: nanoseconds on a CPU. False if unreadable
// (the thread exited between listing and reading).
bool TaskRuntimeNs(long tid, std::uint64_t* ns, std::string* name) {
  const std::string base = "/proc/self/task/" + std::to_string(tid);
  std::ifstream stat(base + "/schedstat");
  if (!(stat >> *ns)) return false;
  std::ifstream comm(base + "/comm");
  std::getline(comm, *name);
  return true;
}

std::string ReadFirstLine(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// errno's name, its text, and what it means for perf_event_open.
std::string PerfError(int err) {
  const char* name = strerrorname_np(err);
  std::string s =
      std::string(name != nullptr ? name : "errno " + std::to_string(err)) + " (" + std::strerror(err) + ")";
  const std::string paranoid = ReadFirstLine("/proc/sys/kernel/perf_event_paranoid");
  switch (err) {
    case ENOENT:
    case ENODEV:
      s += ": the kernel exposes no hardware PMU for this event (typical of a VM without a virtual "
           "PMU)";
      break;
    case EACCES:
    case EPERM:
      s += ": not permitted at kernel.perf_event_paranoid=" + paranoid + " without CAP_PERFMON";
      break;
    case EOPNOTSUPP: s += ": the PMU does not support this event as requested"; break;
    default: break;
  }
  return "perf_event_open failed: " + s;
}

struct EventSpec {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
};

constexpr std::uint64_t CacheConfig(std::uint64_t id, std::uint64_t result) {
  return id | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (result << 16);
}

constexpr EventSpec kEvents[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"l1dLoads", PERF_TYPE_HW_CACHE, CacheConfig(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_RESULT_ACCESS)},
    {"l1dLoadMisses", PERF_TYPE_HW_CACHE,
     CacheConfig(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_RESULT_MISS)},
    {"lastLevelLoads", PERF_TYPE_HW_CACHE,
     CacheConfig(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_RESULT_ACCESS)},
    {"lastLevelLoadMisses", PERF_TYPE_HW_CACHE,
     CacheConfig(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_RESULT_MISS)},
    {"dtlbLoadMisses", PERF_TYPE_HW_CACHE,
     CacheConfig(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_RESULT_MISS)},
};

struct ReadValue {
  std::uint64_t value, enabled, running;
};

}  // namespace

std::uint64_t ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }
std::uint64_t ProcessCpuNs() { return ClockNs(CLOCK_PROCESS_CPUTIME_ID); }

Json CpuUtilisation(const std::vector<ThreadCpu>& threads, std::uint64_t window_ns,
                    std::uint64_t process_cpu_ns, const std::string& method) {
  Json j;
  const double window = static_cast<double>(window_ns);
  j["windowSeconds"] = Positive(window / 1e9, "the window was empty");
  Json rows = Json::array();
  int saturated = 0;
  for (const ThreadCpu& t : threads) {
    const double share = window_ns == 0 ? 0 : static_cast<double>(t.cpu_ns) / window;
    if (share > 1) {  // the thread's interval overran the window: a sampling error, not a figure
      rows.push_back(
          {{"name", t.name},
           {"busyShare", NotMeasured("the thread's CPU time exceeds the window (sampling overlap)")}});
      continue;
    }
    saturated += share >= kBusyThreshold ? 1 : 0;
    rows.push_back({{"name", t.name}, {"busyShare", Positive(share, "no CPU time in the window")}});
  }
  j["threads"] = rows;
  j["threadsAtLeast95PercentBusy"] = saturated;
  j["processBusyCores"] = Positive(window_ns == 0 ? 0 : static_cast<double>(process_cpu_ns) / window,
                                   "no CPU time in the window");
  j["method"] = method;
  return j;
}

TaskCpuSampler::~TaskCpuSampler() {
  if (thread_.joinable()) Stop();
}

void TaskCpuSampler::Sample(bool initial) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const long tid = std::strtol(e->d_name, nullptr, 10);
    if (tid == own_tid_) continue;
    std::uint64_t ns = 0;
    std::string name;
    if (!TaskRuntimeNs(tid, &ns, &name)) continue;
    auto [it, inserted] = seen_.try_emplace(tid);
    if (inserted) {
      it->second.name = name;
      it->second.first = initial ? ns : 0;  // born inside the window: all its time is in it
    }
    it->second.last = ns;
  }
  closedir(dir);
}

void TaskCpuSampler::Start() {
  seen_.clear();
  stop_ = false;
  std::atomic<bool> ready{false};
  thread_ = std::thread([this, &ready] {
    own_tid_ = static_cast<long>(syscall(SYS_gettid));
    // The window opens before the first sample and closes after the last (Stop), so each
    // thread's interval lies inside it and no busy share can pass 1.
    start_ns_ = NowNs();
    process_start_ = ProcessCpuNs();
    Sample(true);
    ready = true;
    while (!stop_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
      Sample(false);
    }
  });
  while (!ready.load()) std::this_thread::yield();
}

void TaskCpuSampler::Stop() {
  stop_ = true;
  thread_.join();
  Sample(false);
  process_end_ = ProcessCpuNs();
  end_ns_ = NowNs();
}

std::vector<ThreadCpu> TaskCpuSampler::Threads() const {
  // Threads the engine starts inherit the process's name: number them, and call the main thread
  // the caller, so the rows can be told apart.
  std::string process_name;
  std::uint64_t unused = 0;
  TaskRuntimeNs(getpid(), &unused, &process_name);
  std::vector<ThreadCpu> out;
  int unnamed = 0;
  for (const auto& [tid, s] : seen_) {
    if (s.last <= s.first) continue;
    std::string name = s.name;
    if (tid == getpid()) {
      name = "caller";
    } else if (name == process_name) {
      name = "engine thread " + std::to_string(++unnamed);
    }
    out.push_back({name, s.last - s.first});
  }
  return out;
}

HardwareCounters::HardwareCounters() {
  for (const EventSpec& spec : kEvents) {
    Counter c;
    c.name = spec.name;
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = spec.type;
    attr.config = spec.config;
    attr.disabled = 1;
    attr.inherit = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    c.fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    if (c.fd < 0) c.error = PerfError(errno);
    counters_.push_back(c);
  }
}

HardwareCounters::~HardwareCounters() {
  for (const Counter& c : counters_)
    if (c.fd >= 0) close(c.fd);
}

void HardwareCounters::Start() {
  for (const Counter& c : counters_) {
    if (c.fd < 0) continue;
    ioctl(c.fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(c.fd, PERF_EVENT_IOC_ENABLE, 0);
  }
}

void HardwareCounters::Stop() {
  for (Counter& c : counters_) {
    if (c.fd < 0) continue;
    ioctl(c.fd, PERF_EVENT_IOC_DISABLE, 0);
    ReadValue v{};
    if (read(c.fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) {
      c.error = std::string("reading the counter failed: ") + std::strerror(errno);
    } else if (v.running == 0) {
      c.error = "the counter was never scheduled on the PMU (multiplexed out)";
    } else {
      // Scaled for multiplexing: the PMU had the event for running of enabled nanoseconds.
      c.value = static_cast<std::uint64_t>(static_cast<double>(v.value) * static_cast<double>(v.enabled) /
                                           static_cast<double>(v.running));
      if (c.value == 0) c.error = "the counter counted nothing";
    }
  }
}

Json HardwareCounters::ToJson() const {
  Json j;
  std::map<std::string, std::optional<double>> value;
  for (const Counter& c : counters_) {
    const bool ok = c.error.empty();
    j[c.name] = ok ? Json(c.value) : NotMeasured(c.error);
    value[c.name] = ok ? std::optional<double>(static_cast<double>(c.value)) : std::nullopt;
  }
  auto reason = [&](const char* a, const char* b) {
    for (const Counter& c : counters_)
      if ((c.name == std::string(a) || c.name == std::string(b)) && !c.error.empty()) return c.error;
    return std::string("not measured");
  };
  const auto &cycles = value["cycles"], &instructions = value["instructions"];
  j["instructionsPerCycle"] = cycles && instructions ? Positive(*instructions / *cycles, "no instructions")
                                                     : NotMeasured(reason("cycles", "instructions"));
  const auto &l1 = value["l1dLoads"], &l1_miss = value["l1dLoadMisses"],
             &ll_miss = value["lastLevelLoadMisses"];
  Json served;
  if (l1 && l1_miss && ll_miss && *l1 > 0 && (*l1_miss > *l1 || *ll_miss > *l1_miss)) {
    // The counters are separate events, each scaled for multiplexing on its own (and last-level
    // misses may include prefetches): shares from such counts would be false, not approximate.
    const std::string why =
        "counters inconsistent (misses > loads): events counted and multiplexed separately";
    served["l1"] = NotMeasured(why);
    served["l2OrL3"] = NotMeasured(why);
    served["dram"] = NotMeasured(why);
  } else if (l1 && l1_miss && ll_miss && *l1 > 0) {
    served["l1"] = Positive(1 - *l1_miss / *l1, "every load missed L1");
    served["l2OrL3"] = Positive((*l1_miss - *ll_miss) / *l1, "no load was served between L1 and DRAM");
    served["dram"] = Positive(*ll_miss / *l1, "no load went to DRAM");
  } else {
    const std::string why = reason("l1dLoads", l1_miss ? "lastLevelLoadMisses" : "l1dLoadMisses");
    served["l1"] = NotMeasured(why);
    served["l2OrL3"] = NotMeasured(why);
    served["dram"] = NotMeasured(why);
  }
  j["servedFrom"] = served;
  const std::string paranoid = ReadFirstLine("/proc/sys/kernel/perf_event_paranoid");
  j["perfEventParanoid"] = paranoid.empty()
                               ? Json(NotMeasured("/proc/sys/kernel/perf_event_paranoid unreadable"))
                               : Json(paranoid);
  j["method"] =
      "perf_event_open, user space only, one counter per event (scaled for multiplexing), inherited by "
      "threads created while counting; servedFrom shares are of L1D loads: l1 = 1 - L1D misses / L1D "
      "loads, l2OrL3 = (L1D misses - last-level misses) / L1D loads, dram = last-level misses / L1D loads";
  return j;
}

std::uint64_t ProcessWriteBytes(std::string* error) {
  std::ifstream f("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (f >> key >> value) {
    if (key == "write_bytes:") return value;
  }
  *error = "/proc/self/io has no write_bytes (kernel built without task I/O accounting)";
  return 0;
}

Json DiskWrite(std::uint64_t bytes, double seconds, const std::string& io_error, const Json& ceilings,
               const std::string& what) {
  Json j;
  if (!io_error.empty()) {
    j["bytesWritten"] = NotMeasured(io_error);
    j["seconds"] = Positive(seconds, "the window was empty");
    j["megabytesPerSecond"] = NotMeasured(io_error);
  } else {
    j["bytesWritten"] = Count(bytes, "the process wrote nothing to storage in the window");
    j["seconds"] = Positive(seconds, "the window was empty");
    j["megabytesPerSecond"] = Positive(static_cast<double>(bytes) / 1e6 / seconds,
                                       "the process wrote nothing to storage in the window");
  }
  j["efficiency"] = Efficiency(j["megabytesPerSecond"], ceilings["sequentialWrite"]["megabytesPerSecond"],
                               "/ceilings/sequentialWrite/megabytesPerSecond",
                               "megabytesPerSecond / sequentialWrite.megabytesPerSecond");
  j["method"] = "/proc/self/io write_bytes delta over " + what;
  return j;
}

}  // namespace quiver::capacity
