#include "base/cpus.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace quiver::base {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

// A whole decimal integer, sign allowed; nullopt for anything else.
std::optional<long long> ParseInt(std::string_view s) {
  s = Trim(s);
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Quota and period in microseconds as CPUs; nullopt unless both are positive.
std::optional<double> QuotaCpus(std::optional<long long> quota, std::optional<long long> period) {
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

bool HasToken(std::string_view list, std::string_view token) {
  for (std::string_view t : Split(list, ','))
    if (t == token) return true;
  return false;
}

// A cgroup hierarchy: where it is mounted, the cgroup path the mount shows
// at its root, and this process's cgroup path in it.
struct Hierarchy {
  std::string mount_point;
  std::string mount_root;
  std::string path;
};

// The cgroup v2 (`v2`) or v1 cpu-controller hierarchy from mountinfo and
// /proc/self/cgroup; nullopt when this process is in none.
std::optional<Hierarchy> FindHierarchy(std::string_view mountinfo, std::string_view cgroups, bool v2) {
  std::optional<Hierarchy> h;
  for (std::string_view line : Split(cgroups, '\n')) {
    // hierarchy-ID:controller-list:cgroup-path
    std::size_t a = line.find(':');
    std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    bool match = v2 ? (id == "0" && controllers.empty()) : HasToken(controllers, "cpu");
    if (match) {
      h.emplace();
      h->path = std::string(Trim(line.substr(b + 1)));
      break;
    }
  }
  if (!h) return std::nullopt;
  for (std::string_view line : Split(mountinfo, '\n')) {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    std::size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::vector<std::string_view> left = Split(line.substr(0, dash), ' ');
    std::vector<std::string_view> right = Split(line.substr(dash + 3), ' ');
    if (left.size() < 5 || right.size() < 3) continue;
    bool match = v2 ? right[0] == "cgroup2" : (right[0] == "cgroup" && HasToken(Trim(right[2]), "cpu"));
    if (!match) continue;
    h->mount_root = std::string(left[3]);
    h->mount_point = std::string(left[4]);
    return h;
  }
  return std::nullopt;
}

// The tightest quota from `h`'s cgroup up to its mount.
std::optional<double> HierarchyQuota(const Hierarchy& h, bool v2, const ReadFileFn& read) {
  // The cgroup's path below the mount: strip the part the mount's root
  // already stands for (no cgroup namespace: root "/docker/x", path
  // "/docker/x/y"); a path outside the root (a namespace shows "/") is
  // taken as it is.
  // The root stands for a prefix of whole names only: root "/docker/abc"
  // is not a prefix of "/docker/abcdef". A path that does not start with
  // '/' is not one /proc/self/cgroup gives: no limit read from it.
  std::string rel = h.path;
  if (rel.empty() || rel.front() != '/') return std::nullopt;
  const std::string& root = h.mount_root;
  if (root != "/" && rel.compare(0, root.size(), root) == 0 &&
      (rel.size() == root.size() || rel[root.size()] == '/'))
    rel = rel.substr(root.size());
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  std::optional<double> best;
  for (int depth = 0; depth < 64; ++depth) {
    std::string dir = h.mount_point + rel;
    std::optional<double> q;
    if (v2) {
      if (auto text = read(dir + "/cpu.max")) q = ParseCpuMax(*text);
    } else {
      auto quota = read(dir + "/cpu.cfs_quota_us");
      auto period = read(dir + "/cpu.cfs_period_us");
      if (quota && period) q = ParseCfsQuota(*quota, *period);
    }
    if (q && (!best || *q < *best)) best = q;
    const std::size_t up = rel.rfind('/');
    if (rel.empty() || up == std::string::npos) break;
    rel.resize(up);
  }
  return best;
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(s).str();
}

unsigned AffinityCpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
#endif
  return std::thread::hardware_concurrency();  // 0 when unknown
}

}  // namespace

std::optional<double> ParseCpuMax(std::string_view text) {
  std::vector<std::string_view> f = Split(Trim(text), ' ');
  if (f.empty() || f.size() > 2 || f[0] == "max") return std::nullopt;
  // The period may be left out (the kernel's default, 100 ms).
  return QuotaCpus(ParseInt(f[0]), f.size() == 2 ? ParseInt(f[1]) : std::optional<long long>(100000));
}

std::optional<double> ParseCfsQuota(std::string_view quota, std::string_view period) {
  return QuotaCpus(ParseInt(quota), ParseInt(period));
}

unsigned CpusForQuota(double cpus) {
  if (!(cpus > 1)) return 1;  // NaN too
  if (cpus > 1e6) return 1'000'000;
  return static_cast<unsigned>(std::ceil(cpus));
}

std::optional<double> CgroupCpuQuota(const ReadFileFn& read) {
  std::optional<std::string> mountinfo = read("/proc/self/mountinfo");
  std::optional<std::string> cgroups = read("/proc/self/cgroup");
  if (!mountinfo || !cgroups) return std::nullopt;
  std::optional<double> best;
  // Both: a hybrid setup may put the cpu controller in either.
  for (bool v2 : {true, false}) {
    std::optional<Hierarchy> h = FindHierarchy(*mountinfo, *cgroups, v2);
    if (!h) continue;
    std::optional<double> q = HierarchyQuota(*h, v2, read);
    if (q && (!best || *q < *best)) best = q;
  }
  return best;
}

unsigned CountAvailableCpus(unsigned affinity, const ReadFileFn& read) {
  unsigned cpus = std::max(affinity, 1u);
  if (std::optional<double> quota = CgroupCpuQuota(read)) cpus = std::min(cpus, CpusForQuota(*quota));
  return cpus;
}

unsigned AvailableCpus() {
  static const unsigned cpus = CountAvailableCpus(AffinityCpus(), ReadWholeFile);
  return cpus;
}

}  // namespace quiver::base
