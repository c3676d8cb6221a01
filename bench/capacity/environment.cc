#include "environment.h"

#include <stdio.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <thread>

#if QUIVER_USE_MIMALLOC
#include <mimalloc.h>
#endif

namespace quiver::capacity {
namespace {

std::string Trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n\"");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n\"");
  s = s.substr(b, e - b + 1);
  // Collapse runs of spaces (some brand strings pad with them).
  std::string out;
  for (char c : s) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

// The value after "key" and ':' (cpuinfo) or '=' (os-release) on the first matching line.
std::optional<std::string> FileField(const std::string& path, const std::string& key, char separator) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto sep = line.find(separator);
    if (sep == std::string::npos) continue;
    if (Trim(line.substr(0, sep)) == key) {
      std::string v = Trim(line.substr(sep + 1));
      if (!v.empty()) return v;
    }
  }
  return std::nullopt;
}

// Output of a shell command, or nullopt if it failed. Only fixed commands run here.
std::optional<std::string> CommandOutput(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  if (pclose(pipe) != 0) return std::nullopt;
  return out;
}

Json FileSystemName(const std::string& dir) {
  struct statfs s {};
  if (statfs(dir.c_str(), &s) != 0) return NotMeasured("statfs on the data directory failed");
  switch (static_cast<std::uint64_t>(s.f_type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs";
    case 0x794C7630: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    case 0x6969: return "nfs";
    case 0xF2F52010: return "f2fs";
    case 0x65735546: return "fuse";
    case 0x858458F6: return "ramfs";
    case 0x5346544E: return "ntfs";
    case 0x4D44: return "vfat";
    case 0x01021997: return "9p";
    case 0x73717368: return "squashfs";
    default: break;
  }
  // Unknown magic: the longest /proc/mounts mount point that prefixes the directory.
  std::ifstream mounts("/proc/mounts");
  std::string device, point, type, best_type;
  std::size_t best = 0;
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    if (!(fields >> device >> point >> type)) continue;
    if (dir.rfind(point, 0) == 0 && point.size() >= best) {
      best = point.size();
      best_type = type;
    }
  }
  if (!best_type.empty()) return best_type;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(s.f_type));
  return std::string("unknown (statfs f_type ") + hex + ")";
}

Json Compiler() {
  Json c;
#if defined(__clang__)
  c["name"] = "Clang";
  c["version"] = std::to_string(__clang_major__) + "." + std::to_string(__clang_minor__) + "." +
                 std::to_string(__clang_patchlevel__);
#elif defined(__GNUC__)
  c["name"] = "GCC";
  c["version"] = std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                 std::to_string(__GNUC_PATCHLEVEL__);
#else
  c["name"] = "unknown";
  c["version"] = "unknown";
#endif
  return c;
}

// The kernel's transparent huge page mode: the bracketed word of its setting ("always", "madvise" or
// "never").
Json TransparentHugePageMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return NotMeasured("no /sys/kernel/mm/transparent_hugepage/enabled");
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1)
    return NotMeasured("no bracketed mode in /sys/kernel/mm/transparent_hugepage/enabled");
  return line.substr(open + 1, close - open - 1);
}

Json Allocator() {
  Json a;
#if QUIVER_USE_MIMALLOC
  const int v = mi_version();
  a["name"] = "mimalloc";
  a["version"] = std::to_string(v / 100) + "." + std::to_string((v / 10) % 10) + "." + std::to_string(v % 10);
  a["scope"] =
      "engine blocks (the figures of Graph::GetMemoryStats); the bench's own arrays use the C library";
  // Quiver turns mimalloc's large OS pages on unless MIMALLOC_LARGE_OS_PAGES says otherwise.
  a["hugePages"] = {{"requested", mi_option_is_enabled(mi_option_large_os_pages)},
                    {"transparentHugePages", TransparentHugePageMode()}};
#else
  a["name"] = "system malloc";
  a["version"] = NotMeasured("the C library's allocator reports no version");
  a["scope"] = "engine blocks and the bench's own arrays (built with QUIVER_USE_MIMALLOC=OFF)";
#endif
  return a;
}

}  // namespace

std::string ProjectVersion() { return QUIVER_BENCH_VERSION; }

Json ProbeEnvironment(const std::string& data_dir, const std::optional<std::string>& runner_label) {
  struct utsname u {};
  const bool have_uname = uname(&u) == 0;
  Json e;
  std::optional<std::string> os = FileField("/etc/os-release", "PRETTY_NAME", '=');
  if (os) {
    e["os"] = have_uname ? std::string(u.sysname) + " (" + *os + ")" : *os;
  } else {
    e["os"] = have_uname ? Json(std::string(u.sysname)) : NotMeasured("uname failed and no /etc/os-release");
  }
  e["kernel"] = have_uname ? Json(std::string(u.release)) : NotMeasured("uname failed");
  e["architecture"] = have_uname ? Json(std::string(u.machine)) : NotMeasured("uname failed");
  std::optional<std::string> cpu = FileField("/proc/cpuinfo", "model name", ':');
  if (!cpu) cpu = FileField("/proc/cpuinfo", "Model", ':');
  e["cpuModel"] = cpu ? Json(*cpu) : NotMeasured("/proc/cpuinfo names no model");
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  e["logicalCores"] = cores > 0 ? Json(cores) : NotMeasured("sysconf(_SC_NPROCESSORS_ONLN) failed");
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  e["memoryBytes"] = pages > 0 && page > 0
                         ? Json(static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page))
                         : NotMeasured("sysconf(_SC_PHYS_PAGES) failed");
  e["compiler"] = Compiler();
  e["buildType"] = QUIVER_BENCH_BUILD_TYPE[0] != '\0' ? QUIVER_BENCH_BUILD_TYPE : "unspecified";
#if defined(NDEBUG)
  e["assertions"] = false;
#else
  e["assertions"] = true;
#endif
  e["allocator"] = Allocator();
  e["dataDirFileSystem"] = FileSystemName(data_dir);
  e["runnerLabel"] = runner_label
                         ? Json(*runner_label)
                         : NotMeasured("no --runner-label given and QUIVER_BENCH_RUNNER_LABEL unset");
  return e;
}

Json ProbeSource() {
  Json s;
  s["version"] = ProjectVersion();
  const std::string git = "git -C '" QUIVER_BENCH_SOURCE_DIR "' ";
  std::optional<std::string> head = CommandOutput(git + "rev-parse HEAD 2>/dev/null");
  if (head && Trim(*head).size() == 40) {
    s["commit"] = Trim(*head);
    std::optional<std::string> status = CommandOutput(git + "status --porcelain 2>/dev/null");
    s["dirty"] = status ? Json(!Trim(*status).empty()) : NotMeasured("git status failed");
  } else {
    s["commit"] = NotMeasured("git is unavailable or the source tree is not a git checkout");
    s["dirty"] = NotMeasured("git is unavailable or the source tree is not a git checkout");
  }
  return s;
}

std::string EnvironmentDigest(const Json& environment) {
  // Only what stays put on one machine: MemTotal drifts by kilobytes between boots and the
  // kernel's build suffix between updates, and either would make every run a "new machine"
  // with no baseline. So memory in whole GiB (rounded) and the kernel's major.minor.
  Json stable = environment;
  if (environment.contains("memoryBytes") && environment["memoryBytes"].is_number()) {
    const double gib = environment["memoryBytes"].get<double>() / (1024.0 * 1024 * 1024);
    stable["memoryBytes"] = static_cast<std::int64_t>(gib + 0.5);
  }
  if (environment.contains("kernel") && environment["kernel"].is_string()) {
    const std::string kernel = environment["kernel"].get<std::string>();
    const std::size_t first = kernel.find('.');
    const std::size_t second =
        first == std::string::npos ? first : kernel.find_first_not_of("0123456789", first + 1);
    stable["kernel"] = kernel.substr(0, second);
  }
  std::string key;
  for (const char* field : {"cpuModel", "logicalCores", "memoryBytes", "kernel", "compiler"})
    key += stable.value(field, Json()).dump() + "|";
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(hex, 12);
}

}  // namespace quiver::capacity
