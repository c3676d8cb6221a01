// A small command-line parser for the quiver tool and the probes in tools/: `--name value`,
// `--name=value`, boolean `--flag`, repeated options and positional
// arguments. (CLI11 is packaged by Debian but not among the dependencies
// scripts/install-deps.sh installs; this keeps the tool dependency-free.)
//
// Example:
//   CliArgs a;
//   a.AddOption("--format", "csv");
//   a.AddFlag("--quiet");
//   if (!a.Parse(argc - 2, argv + 2, &error)) Usage(error);
//   a.Get("--format"); a.GetAll("--vertices"); a.positional();
//   std::uint64_t n; if (!a.GetU64("--skip-bad-rows", &n)) Usage("needs a number");
#ifndef QUIVER_TOOLS_QUIVER_CLI_ARGS_H_
#define QUIVER_TOOLS_QUIVER_CLI_ARGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace quiver::cli {

class CliArgs {
 public:
  // An option taking a value; `fallback` is Get's answer when it is absent.
  void AddOption(const std::string& name, const std::string& fallback = "");
  void AddFlag(const std::string& name);
  // False with `*error` set for an unknown option or a missing value.
  bool Parse(int argc, const char* const* argv, std::string* error);

  const std::string& Get(const std::string& name) const;
  const std::vector<std::string>& GetAll(const std::string& name) const;
  bool Has(const std::string& name) const;
  // Get(name) as a whole decimal number: false (and *out unchanged) when
  // it is empty, signed, has anything after the digits, or overflows.
  bool GetU64(const std::string& name, std::uint64_t* out) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> fallback_;
  std::map<std::string, bool> is_flag_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace quiver::cli

#endif  // QUIVER_TOOLS_QUIVER_CLI_ARGS_H_
