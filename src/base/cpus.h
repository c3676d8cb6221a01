// How many CPUs this process may actually use: the ones its affinity mask
// allows, cut down to its cgroup's CPU quota (cgroup v2 cpu.max, cgroup v1
// cpu.cfs_quota_us / cpu.cfs_period_us). std::thread::hardware_concurrency
// counts the machine's CPUs, which in a container or under taskset is too
// many: a spin policy or a thread count sized by it oversubscribes the cores
// the process really has. Every thread count and spin policy in the engine
// takes its figure from AvailableCpus.
//
// The parsing is split from the reading so that tests can feed fixed file
// contents (CountAvailableCpus with a fake reader).
//
// Thread safety: every function may be called from any thread.
#ifndef QUIVER_BASE_CPUS_H_
#define QUIVER_BASE_CPUS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace quiver::base {

// The CPUs this process may use, at least 1: the affinity mask's count,
// lowered to the cgroup quota rounded up (a quota of 1.5 CPUs gives 2).
// Read once, at the first call; later changes to the mask or the quota are
// not seen.
unsigned AvailableCpus();

// A cgroup v2 cpu.max file ("$MAX $PERIOD", MAX "max" for none): the quota
// in CPUs, or nullopt for no limit or text that is not such a file.
std::optional<double> ParseCpuMax(std::string_view text);

// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us: the quota in CPUs, or
// nullopt for no limit (a quota of -1) or text that is not such a file.
std::optional<double> ParseCfsQuota(std::string_view quota, std::string_view period);

// A quota in CPUs as a CPU count: rounded up, at least 1.
unsigned CpusForQuota(double cpus);

// Reads a whole file; nullopt when it cannot be read.
using ReadFileFn = std::function<std::optional<std::string>(const std::string& path)>;

// The quota of the cgroup this process is in, the tightest along its path
// up to the cgroup mount (a parent's limit applies too), found through
// /proc/self/mountinfo and /proc/self/cgroup read with `read`; nullopt when
// there is none or it cannot be found.
std::optional<double> CgroupCpuQuota(const ReadFileFn& read);

// AvailableCpus's arithmetic: `affinity` CPUs (0: unknown, taken as 1) cut
// down to the quota found through `read`.
unsigned CountAvailableCpus(unsigned affinity, const ReadFileFn& read);

}  // namespace quiver::base

#endif  // QUIVER_BASE_CPUS_H_
