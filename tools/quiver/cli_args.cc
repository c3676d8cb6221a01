// CliArgs: see cli_args.h.
#include "cli_args.h"

#include <charconv>

namespace quiver::cli {

void CliArgs::AddOption(const std::string& name, const std::string& fallback) {
  fallback_[name] = fallback;
  is_flag_[name] = false;
}

void CliArgs::AddFlag(const std::string& name) {
  fallback_[name] = "";
  is_flag_[name] = true;
}

bool CliArgs::Parse(int argc, const char* const* argv, std::string* error) {
  bool options_done = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    std::string value;
    bool has_value = false;
    const std::size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto it = is_flag_.find(arg);
    if (it == is_flag_.end()) {
      *error = "unknown option " + arg;
      return false;
    }
    if (it->second) {
      if (has_value) {
        *error = "option " + arg + " takes no value";
        return false;
      }
      values_[arg].push_back("1");
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *error = "option " + arg + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    values_[arg].push_back(value);
  }
  return true;
}

const std::string& CliArgs::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end() && !it->second.empty()) return it->second.back();
  return fallback_.at(name);
}

const std::vector<std::string>& CliArgs::GetAll(const std::string& name) const {
  static const std::vector<std::string> kNone;
  auto it = values_.find(name);
  return it == values_.end() ? kNone : it->second;
}

bool CliArgs::Has(const std::string& name) const { return values_.count(name) > 0; }

bool CliArgs::GetU64(const std::string& name, std::uint64_t* out) const {
  const std::string& s = Get(name);
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  *out = v;
  return true;
}

}  // namespace quiver::cli
