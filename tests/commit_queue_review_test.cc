// Review tests for the commit-queue change (12b7d65..1cb6111): the cgroup
// and affinity parsing behind base::AvailableCpus (src/base/cpus.cc), which
// sizes the queue's spin policy, and the byte estimate the queue's bound
// counts (WriteBatchInternal::ApproximateBytes, src/write/write_batch.cc).
// Unit tests only; the concurrency cases are in
// concurrency_queue_review_test.cc.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "base/cpus.h"
#include "quiver/write_batch.h"
#include "write/commit_queue.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

// Reads from a fixed map of path to contents.
base::ReadFileFn QueueReviewFiles(std::map<std::string, std::string> files) {
  return [files = std::move(files)](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

const char kQueueReviewV2MountInfo[] =
    "31 24 0:27 / /sys/fs/cgroup rw,nosuid,nodev shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";

// FINDING (cpus.cc HierarchyQuota): the walk up the cgroup path shortens
// `rel` with rel.resize(rel.rfind('/')); a path component with no '/'
// before it makes rfind return npos and resize(npos) throws
// std::length_error out of AvailableCpus (and so out of the CommitQueue
// constructor, i.e. out of every Graph::Open) instead of treating the file
// as "not such a file" (no limit), as the header promises for bad text.
TEST(CpusReviewTest, CgroupPathWithoutLeadingSlashIsNotAnException) {
  auto read = QueueReviewFiles({
      {"/proc/self/mountinfo", kQueueReviewV2MountInfo},
      {"/proc/self/cgroup", "0::system.slice\n"},  // malformed: no leading '/'
  });
  std::optional<unsigned> cpus;
  EXPECT_NO_THROW(cpus = base::CountAvailableCpus(4, read));
  EXPECT_EQ(cpus, 4u);
}

// FINDING (same line, reached by a real shape): the mount root is stripped
// with a plain prefix compare, no '/' boundary. A process in /docker/abcdef
// on a v1 hierarchy whose mount root is /docker/abc gets rel = "def": it
// reads "/sys/fs/cgroup/cpu,cpuacctdef/..." (a directory that is not its
// cgroup), then resize(npos) throws std::length_error.
TEST(CpusReviewTest, MountRootThatPrefixesAnotherCgroupNameIsNotAnException) {
  auto read = QueueReviewFiles({
      {"/proc/self/mountinfo",
       "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"},
      {"/proc/self/cgroup", "4:cpu,cpuacct:/docker/abcdef\n"},
      {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"},
      {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"},
  });
  std::optional<unsigned> cpus;
  EXPECT_NO_THROW(cpus = base::CountAvailableCpus(4, read));
  EXPECT_EQ(cpus, 4u);
}

// Coverage (passes): the other bad or extreme inputs the brief lists.
TEST(CpusReviewTest, ExtremeQuotaTextIsNoLimitOrClamped) {
  EXPECT_EQ(base::ParseCpuMax("max"), std::nullopt);
  EXPECT_EQ(base::ParseCpuMax("max 0"), std::nullopt);
  EXPECT_EQ(base::ParseCpuMax("100000 0"), std::nullopt);                // period 0
  EXPECT_EQ(base::ParseCpuMax("-100000 100000"), std::nullopt);          // negative quota
  EXPECT_EQ(base::ParseCpuMax("100000 -1"), std::nullopt);               // negative period
  EXPECT_EQ(base::ParseCpuMax("99999999999999999999 1"), std::nullopt);  // overflows long long
  EXPECT_EQ(base::ParseCpuMax("100000  100000"), std::nullopt);          // two spaces: 3 fields
  EXPECT_EQ(base::ParseCpuMax("\n"), std::nullopt);
  EXPECT_EQ(base::CpusForQuota(9.2e18), 1'000'000u);  // huge quota clamped
  EXPECT_EQ(base::CpusForQuota(-3.0), 1u);
  // A huge v2 quota with a tiny affinity mask: the mask wins.
  auto read = QueueReviewFiles({
      {"/proc/self/mountinfo", kQueueReviewV2MountInfo},
      {"/proc/self/cgroup", "0::/a\n"},
      {"/sys/fs/cgroup/a/cpu.max", "9223372036854775807 1\n"},
      {"/sys/fs/cgroup/cpu.max", "garbage\n"},
  });
  EXPECT_EQ(base::CountAvailableCpus(1, read), 1u);
  // Empty or missing files: the affinity count.
  EXPECT_EQ(base::CountAvailableCpus(
                3, QueueReviewFiles({{"/proc/self/mountinfo", ""}, {"/proc/self/cgroup", ""}})),
            3u);
}

// Coverage (passes): the byte estimate after the 32-byte op records counts
// the per-batch name table (a long label recorded once per batch) and the
// property payloads, so the queue's bound sees them.
TEST(CommitQueueReviewTest, ApproximateBytesCountsNameTableAndPayloads) {
  WriteBatch named;
  named.AddVertex(std::string(5000, 'L'));
  EXPECT_GT(internal::WriteBatchInternal::ApproximateBytes(named), 5000u);
  WriteBatch payload;
  payload.AddVertex("V", {{"s", std::string(20'000, 'x')}});
  EXPECT_GT(internal::WriteBatchInternal::ApproximateBytes(payload), 20'000u);
  // The same label many times is stored once: far less than 1000 copies.
  WriteBatch repeated;
  for (int i = 0; i < 1000; ++i) repeated.AddVertex(std::string(1000, 'R'));
  EXPECT_LT(internal::WriteBatchInternal::ApproximateBytes(repeated), 200'000u);
  // A reserved batch holds its capacity while it waits in the queue.
  WriteBatch reserved;
  reserved.reserve(10'000);
  reserved.AddVertex("V");
  EXPECT_GE(internal::WriteBatchInternal::ApproximateBytes(reserved), 10'000u * 32);
}

}  // namespace
}  // namespace quiver
