// The command-line parser of the quiver tool and the probes in tools/: a thin
// layer over CLI11 (Debian's libcli11-dev, header-only) that keeps CLI11 out of
// every file but cli_args.cc. It takes `--name value`, `--name=value`, boolean
// `--flag`, aliases (`--vertices,--nodes`), repeated options, positional
// arguments in any place and `--` before positional arguments that start with
// a dash; `--help`/`-h` asks for the help that CLI11 formats from the usage
// line, the description and each option's text.
//
// Example:
//   CliArgs a("quiver import [options] DIR", "Loads files into the graph at DIR.");
//   a.AddOption("--format", "csv", "csv|evlp|jsonl", "input format (default csv)");
//   a.AddFlag("--quiet", "print nothing on success");
//   if (!a.Parse(argc - 2, argv + 2, &error)) Usage(error);
//   if (a.help_requested()) std::fputs(a.Help().c_str(), stdout);
//   a.Get("--format"); a.GetAll("--vertices"); a.positional();
//   std::uint64_t n; if (!a.GetU64("--skip-bad-rows", &n)) Usage("needs a number");
//
// Thread safety: none; one parser per thread.
#ifndef QUIVER_TOOLS_QUIVER_CLI_ARGS_H_
#define QUIVER_TOOLS_QUIVER_CLI_ARGS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace quiver::cli {

class CliArgs {
 public:
  // `usage`: --help's first line after "usage: " ("quiver info [options] DIR");
  // `about`: the text under it; `footer`: the text after the options. All may
  // be empty (the probes print their own usage).
  explicit CliArgs(const std::string& usage = "", const std::string& about = "",
                   const std::string& footer = "");
  ~CliArgs();
  CliArgs(const CliArgs&) = delete;
  CliArgs& operator=(const CliArgs&) = delete;

  // An option taking a value, given any number of times. `names`: "--name"
  // or "--name,--alias"; Get, GetAll and Has take the first name. `fallback`
  // is Get's answer when it is absent; `value` names the value in --help
  // and `help` describes the option there.
  void AddOption(const std::string& names, const std::string& fallback = "",
                 const std::string& value = "VALUE", const std::string& help = "");
  void AddFlag(const std::string& names, const std::string& help = "");
  // False with `*error` set for an unknown option or a missing value. True
  // with help_requested() for --help or -h (the rest is then not checked).
  bool Parse(int argc, const char* const* argv, std::string* error);
  bool help_requested() const { return help_requested_; }
  // The help text: usage line, about, the options, footer.
  std::string Help() const;

  // The last value given, else the fallback.
  const std::string& Get(const std::string& name) const;
  // Every value given, in order (the aliases' too).
  const std::vector<std::string>& GetAll(const std::string& name) const;
  bool Has(const std::string& name) const;
  // Get(name) as a whole decimal number: false (and *out unchanged) when
  // it is empty, signed, has anything after the digits, or overflows.
  bool GetU64(const std::string& name, std::uint64_t* out) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  struct Impl;  // the CLI::App and the options' storage (cli_args.cc)

  // "--name,--alias" -> "--name".
  static std::string FirstName(const std::string& names);

  std::unique_ptr<Impl> impl_;
  std::vector<std::string> positional_;
  bool help_requested_ = false;
};

}  // namespace quiver::cli

#endif  // QUIVER_TOOLS_QUIVER_CLI_ARGS_H_
