// quiver-crashloop: the kill -9 crash loop of RELIABILITY.md 3.3.
//
//   quiver-crashloop --iterations N [--mode posix|buffered|both] [--dir D] [--seed S]
//                    [--min-ms A --max-ms B] [--early-percent P] [--producers T]
//                    [--reset-elements E] [--open-timeout-s T] [--verbose]
//   quiver-crashloop --iterations N --mode buffered --negative-control
//   quiver-crashloop --iterations N --index-negative-control
//
// Without --iterations, QUIVER_ITERS is used; without --seed, QUIVER_SEED,
// else a random seed (printed either way). Without --dir, a fresh directory
// under $TMPDIR (or /tmp) is used and removed at the end unless a violation
// was found. --dir must name an empty or missing directory.
// Exit status: 0 no violation, 1 violations, 2 usage error, 3 the parent
// hung (watchdog).
//
// The same executable is the child (--child ...; internal, started by the
// parent with the protocol pipe on fd 3).
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "crash_child.h"
#include "crash_driver.h"
#include "crash_report.h"

namespace quiver::crashloop {
namespace {

constexpr const char* kUsage =
    "usage: quiver-crashloop --iterations N [--mode posix|buffered|both] [--dir D] [--seed S]\n"
    "                        [--min-ms A --max-ms B] [--early-percent P] [--producers T]\n"
    "                        [--reset-elements E] [--open-timeout-s T] [--verbose]\n"
    "       quiver-crashloop --iterations N --mode buffered --negative-control\n"
    "       quiver-crashloop --iterations N --index-negative-control\n"
    "  --iterations N   crash iterations in all (QUIVER_ITERS if absent); with --mode both,\n"
    "                   posix and buffered alternate\n"
    "  --mode M         posix: process crash; buffered: power cut (unsynced bytes lost); default both\n"
    "  --dir D          an empty or missing directory to work in (default: a fresh temp dir)\n"
    "  --seed S         seeds every choice (QUIVER_SEED if absent, else random)\n"
    "  --min-ms/--max-ms  kill delay after the child has opened, uniform (default 20..300)\n"
    "  --early-percent  iterations that kill 0-5 ms into recovery instead (default 10)\n"
    "  --producers T    committing threads in the child (default 4)\n"
    "  --reset-elements wipe a directory once its graph has more elements (default 150000)\n"
    "  --open-timeout-s a child still opening after this is a recovery hang (default 120)\n"
    "  --negative-control  children acknowledge commits whose WAL sync they skipped: the run\n"
    "                   must report lost commits or failed recoveries (checks the checker)\n"
    "  --index-negative-control  the verifier compares every index with a scan that misses one\n"
    "                   element: the run must report index mismatches (checks the index check)\n";

int UsageError(const std::string& why) {
  std::fprintf(stderr, "quiver-crashloop: %s\n%s", why.c_str(), kUsage);
  return 2;
}

std::optional<std::uint64_t> ParseU64(std::string_view s) {
  std::uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Flag name -> value, in order; a flag without a value gets "".
struct ParsedArgs {
  std::vector<std::pair<std::string, std::string>> flags;
  std::string error;
};

ParsedArgs Parse(int argc, char** argv) {
  static const std::vector<std::string_view> kBoolFlags = {
      "--child", "--verbose", "--negative-control", "--index-negative-control", "--lie-about-wal-sync"};
  ParsedArgs out;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.substr(0, 2) != "--") {
      out.error = "unexpected argument '" + std::string(a) + "'";
      return out;
    }
    if (std::find(kBoolFlags.begin(), kBoolFlags.end(), a) != kBoolFlags.end()) {
      out.flags.emplace_back(a, "");
    } else if (i + 1 < argc) {
      out.flags.emplace_back(a, argv[++i]);
    } else {
      out.error = "missing value for " + std::string(a);
      return out;
    }
  }
  return out;
}

int ChildMain(const ParsedArgs& args) {
  ChildArgs c;
  for (const auto& [flag, value] : args.flags) {
    if (flag == "--child") continue;
    if (flag == "--lie-about-wal-sync") {
      c.lie_about_wal_sync = true;
      continue;
    }
    std::optional<std::uint64_t> n = ParseU64(value);
    if (flag == "--dir") {
      c.dir = value;
    } else if (flag == "--mode" && ParseFsMode(value)) {
      c.mode = *ParseFsMode(value);
    } else if (flag == "--seed" && n) {
      c.seed = *n;
    } else if (flag == "--iteration" && n) {
      c.iteration = *n;
    } else if (flag == "--producers" && n && *n >= 1 && *n <= 64) {
      c.producers = static_cast<std::uint32_t>(*n);
    } else {
      return UsageError("child: bad flag " + flag + (" " + value));
    }
  }
  if (c.dir.empty()) return UsageError("child: --dir is required");
  if (c.lie_about_wal_sync && c.mode != FsMode::kBuffered)
    return UsageError("child: lying needs buffered mode");
  return RunChild(c);
}

std::optional<std::uint64_t> FromEnv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::nullopt : ParseU64(v);
}

// Applies one parent flag to `c`; returns an error message or "".
std::string ApplyFlag(const std::string& flag, const std::string& value, DriverConfig* c) {
  std::optional<std::uint64_t> n = ParseU64(value);
  auto small = [&n](std::uint64_t max) { return n && *n <= max; };
  if (flag == "--verbose") {
    c->verbose = true;
  } else if (flag == "--negative-control") {
    c->negative_control = true;
  } else if (flag == "--index-negative-control") {
    c->index_negative_control = true;
  } else if (flag == "--mode") {
    if (value == "both") {
      c->modes = {FsMode::kPosix, FsMode::kBuffered};
    } else if (std::optional<FsMode> m = ParseFsMode(value)) {
      c->modes = {*m};
    } else {
      return "--mode must be posix, buffered or both";
    }
  } else if (flag == "--dir") {
    c->root = value;
  } else if (flag == "--iterations" && n && *n >= 1) {
    c->iterations = *n;
  } else if (flag == "--seed" && n) {
    c->seed = *n;
  } else if (flag == "--min-ms" && small(600'000)) {
    c->kill.min_ms = static_cast<std::uint32_t>(*n);
  } else if (flag == "--max-ms" && small(600'000)) {
    c->kill.max_ms = static_cast<std::uint32_t>(*n);
  } else if (flag == "--early-percent" && small(100)) {
    c->kill.early_percent = static_cast<std::uint32_t>(*n);
  } else if (flag == "--producers" && n && *n >= 1 && *n <= 64) {
    c->producers = static_cast<std::uint32_t>(*n);
  } else if (flag == "--reset-elements" && n && *n >= 1) {
    c->reset_elements = *n;
  } else if (flag == "--open-timeout-s" && n && *n >= 1 && *n <= 3600) {
    c->open_timeout = std::chrono::seconds(*n);
  } else {
    return "bad flag or value: " + flag + (value.empty() ? "" : " " + value);
  }
  return "";
}

// A fresh directory under $TMPDIR or /tmp.
std::string MakeTempRoot() {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "quiver-crashloop-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

int ParentMain(const ParsedArgs& args) {
  DriverConfig c;
  c.modes = {FsMode::kPosix, FsMode::kBuffered};
  c.iterations = FromEnv("QUIVER_ITERS").value_or(0);
  std::optional<std::uint64_t> seed = FromEnv("QUIVER_SEED");
  c.seed = seed ? *seed : std::random_device{}();
  for (const auto& [flag, value] : args.flags)
    if (std::string e = ApplyFlag(flag, value, &c); !e.empty()) return UsageError(e);
  if (c.iterations == 0) return UsageError("--iterations N (N >= 1) is required");
  if (c.kill.min_ms > c.kill.max_ms) return UsageError("--min-ms must not exceed --max-ms");
  if (c.negative_control && (c.modes.size() != 1 || c.modes[0] != FsMode::kBuffered))
    return UsageError("--negative-control needs --mode buffered");
  const bool temp_root = c.root.empty();
  if (temp_root) {
    c.root = MakeTempRoot();
    if (c.root.empty()) return UsageError("cannot create a temporary directory");
  } else {
    std::error_code ec;
    if (std::filesystem::exists(c.root, ec) && !std::filesystem::is_empty(c.root, ec))
      return UsageError("--dir " + c.root + " is not empty");
    std::filesystem::create_directories(c.root, ec);
    if (ec) return UsageError("cannot create --dir " + c.root + ": " + ec.message());
  }
  std::fprintf(stderr, "quiver-crashloop: seed %llu, %llu iterations, directory %s\n",
               static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(c.iterations),
               c.root.c_str());
  const std::uint64_t run_seed = c.seed;
  const std::string root = c.root;
  const bool negative_control = c.negative_control || c.index_negative_control;
  RunTotals totals = CrashDriver(std::move(c)).Run();
  PrintSummary(totals, stdout);
  PrintDetails(totals, run_seed, stderr);
  const bool failed = totals.total_violations() != 0;
  if (failed && !negative_control)
    std::fprintf(stderr, "quiver-crashloop: FAILED; rerun with --seed %llu; directory kept: %s\n",
                 static_cast<unsigned long long>(run_seed), root.c_str());
  if (failed && negative_control)
    std::fprintf(stderr, "quiver-crashloop: the negative control failed, as it must\n");
  if (temp_root && (!failed || negative_control)) {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace quiver::crashloop

int main(int argc, char** argv) {
  using namespace quiver::crashloop;  // NOLINT(google-build-using-namespace)
  const ParsedArgs args = Parse(argc, argv);
  if (!args.error.empty()) return UsageError(args.error);
  for (const auto& [flag, value] : args.flags)
    if (flag == "--child") return ChildMain(args);
  return ParentMain(args);
}
