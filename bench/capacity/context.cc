#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "families.h"

namespace quiver::capacity {

std::string Context::FreshDir(const std::string& name) const {
  const std::filesystem::path dir = std::filesystem::path(data_dir) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void Context::RemoveDir(const std::string& dir) const {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

int Context::Cores() const { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

std::uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

double EstimateBuildSeconds(std::uint64_t vertices, std::uint64_t edges) {
  // Measured on the 2-core development VM: ~3M vertices/s and ~0.6M edges/s with 100K batches.
  return static_cast<double>(vertices) / 3e6 + static_cast<double>(edges) / 6e5;
}

}  // namespace quiver::capacity
