// base::AvailableCpus's parsing (src/base/cpus.h): cgroup v2 cpu.max, v1
// cfs quota and period, and the walk from /proc/self/mountinfo and
// /proc/self/cgroup to the quota files, all on fixed inputs.
#include "base/cpus.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace quiver::base {
namespace {

TEST(CpusTest, ParsesCpuMax) {
  EXPECT_EQ(ParseCpuMax("max 100000\n"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("max"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("200000 100000\n"), 2.0);
  EXPECT_EQ(ParseCpuMax("150000 100000"), 1.5);
  EXPECT_EQ(ParseCpuMax("50000 100000"), 0.5);
  EXPECT_EQ(ParseCpuMax("300000"), 3.0);  // period left out: the kernel's 100 ms
  // Not such a file: no limit.
  EXPECT_EQ(ParseCpuMax(""), std::nullopt);
  EXPECT_EQ(ParseCpuMax("lots 100000"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("100000 0"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("-5 100000"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("1 2 3"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("100000x 100000"), std::nullopt);
}

TEST(CpusTest, ParsesCfsQuota) {
  EXPECT_EQ(ParseCfsQuota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(ParseCfsQuota("400000\n", "100000\n"), 4.0);
  EXPECT_EQ(ParseCfsQuota("25000", "100000"), 0.25);
  EXPECT_EQ(ParseCfsQuota("", "100000"), std::nullopt);
  EXPECT_EQ(ParseCfsQuota("100000", "0"), std::nullopt);
  EXPECT_EQ(ParseCfsQuota("100000", "x"), std::nullopt);
}

TEST(CpusTest, RoundsAQuotaUpToWholeCpus) {
  EXPECT_EQ(CpusForQuota(0.25), 1u);
  EXPECT_EQ(CpusForQuota(1.0), 1u);
  EXPECT_EQ(CpusForQuota(1.5), 2u);
  EXPECT_EQ(CpusForQuota(4.0), 4u);
  EXPECT_EQ(CpusForQuota(0.0), 1u);
}

// Reads from a fixed map of path to contents.
ReadFileFn Files(std::map<std::string, std::string> files) {
  return [files = std::move(files)](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

const char kV2MountInfo[] =
    "24 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"
    "31 24 0:27 / /sys/fs/cgroup rw,nosuid,nodev shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(CpusTest, TakesTheTightestCgroupV2QuotaOnThePath) {
  auto read = Files({
      {"/proc/self/mountinfo", kV2MountInfo},
      {"/proc/self/cgroup", "0::/system.slice/app.service\n"},
      {"/sys/fs/cgroup/system.slice/app.service/cpu.max", "max 100000\n"},
      {"/sys/fs/cgroup/system.slice/cpu.max", "250000 100000\n"},
      {"/sys/fs/cgroup/cpu.max", "max 100000\n"},
  });
  EXPECT_EQ(CgroupCpuQuota(read), 2.5);
  EXPECT_EQ(CountAvailableCpus(16, read), 3u);
  EXPECT_EQ(CountAvailableCpus(2, read), 2u);  // the affinity mask is tighter
}

TEST(CpusTest, CgroupNamespaceRootIsTheMount) {
  // Inside a container with its own cgroup namespace: the path is "/".
  auto read = Files({
      {"/proc/self/mountinfo", kV2MountInfo},
      {"/proc/self/cgroup", "0::/\n"},
      {"/sys/fs/cgroup/cpu.max", "100000 100000\n"},
  });
  EXPECT_EQ(CountAvailableCpus(8, read), 1u);
}

TEST(CpusTest, ReadsCgroupV1CfsQuotaBelowTheMountRoot) {
  // No cgroup namespace: the mount's root is the container's cgroup, which
  // /proc/self/cgroup names in full.
  auto read = Files({
      {"/proc/self/mountinfo",
       "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
       "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"},
      {"/proc/self/cgroup", "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n"},
      {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "150000\n"},
      {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"},
  });
  EXPECT_EQ(CgroupCpuQuota(read), 1.5);
  EXPECT_EQ(CountAvailableCpus(64, read), 2u);
}

TEST(CpusTest, NoCgroupOrNoLimitLeavesTheAffinityCount) {
  EXPECT_EQ(CountAvailableCpus(6, Files({})), 6u);
  EXPECT_EQ(CountAvailableCpus(0, Files({})), 1u);  // unknown: one
  // A hybrid host (this shape is a real one): v1 cpu with no quota, v2 without cpu.max.
  auto read = Files({
      {"/proc/self/mountinfo",
       "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
       "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"},
      {"/proc/self/cgroup", "2:cpuacct:/\n1:cpu:/\n0::/\n"},
      {"/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"},
      {"/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"},
  });
  EXPECT_EQ(CgroupCpuQuota(read), std::nullopt);
  EXPECT_EQ(CountAvailableCpus(2, read), 2u);
}

TEST(CpusTest, AvailableCpusIsAtLeastOne) { EXPECT_GE(AvailableCpus(), 1u); }

}  // namespace
}  // namespace quiver::base
