// The environment probe: what machine, system and build produced a report, read from the machine
// itself (the CPU model comes from /proc/cpuinfo, never from user input), and which source tree
// (git commit and whether the working tree had uncommitted changes, at run time).
#ifndef QUIVER_BENCH_CAPACITY_ENVIRONMENT_H_
#define QUIVER_BENCH_CAPACITY_ENVIRONMENT_H_

#include <optional>
#include <string>

#include "figure.h"

namespace quiver::capacity {

// The report's "environment" object. `data_dir` must exist (its file system is named);
// `runner_label` is the user's free text, if any.
Json ProbeEnvironment(const std::string& data_dir, const std::optional<std::string>& runner_label);

// The report's "source" object: {version, commit, dirty}.
Json ProbeSource();

// A short stable hash of the fields that make two runs comparable: cpuModel, logicalCores,
// memoryBytes in whole GiB, the kernel's major.minor and compiler.
std::string EnvironmentDigest(const Json& environment);

// The project version this bench was built from ("0.1.0").
std::string ProjectVersion();

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_ENVIRONMENT_H_
