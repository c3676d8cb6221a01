// CliArgs: see cli_args.h. The only file that includes CLI11: it is large,
// and the commands need none of its types.
#include "cli_args.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <utility>

namespace quiver::cli {
namespace {

// --help as the quiver tool has always printed it: "usage: <usage>", the
// text under it, the options, the footer. (CLI11's own starts with the
// description and "Usage:".)
class HelpFormatter final : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::string usage) : usage_(std::move(usage)) {}

  std::string make_help(const CLI::App* app, std::string /*name*/, CLI::AppFormatMode mode) const override {
    std::string out = usage_.empty() ? std::string() : "usage: " + usage_ + "\n";
    out += app->get_description();
    out += make_groups(app, mode);
    out += app->get_footer();
    return out;
  }

 private:
  std::string usage_;
};

}  // namespace

struct CliArgs::Impl {
  struct Entry {
    std::string fallback;
    std::vector<std::string> values;  // CLI11 appends each value given
    CLI::Option* option = nullptr;    // owned by `app`
  };

  CLI::App app;
  std::map<std::string, Entry> entries;  // by first name; a map keeps `values` in place
};

CliArgs::CliArgs(const std::string& usage, const std::string& about, const std::string& footer)
    : impl_(std::make_unique<Impl>()) {
  CLI::App& app = impl_->app;
  app.description(about);
  app.footer(footer);
  app.formatter(std::make_shared<HelpFormatter>(usage));
  app.set_help_flag("-h,--help", "print this help")->group("options");
  // Unknown options are left for Parse to name (CLI11's error lists every
  // argument it did not expect).
  app.allow_extras(true);
  app.add_option("args", positional_)->group("");
}

CliArgs::~CliArgs() = default;

std::string CliArgs::FirstName(const std::string& names) { return names.substr(0, names.find(',')); }

void CliArgs::AddOption(const std::string& names, const std::string& fallback, const std::string& value,
                        const std::string& help) {
  Impl::Entry& e = impl_->entries[FirstName(names)];
  e.fallback = fallback;
  // One value per occurrence: `--type A B` leaves B a positional argument.
  e.option = impl_->app.add_option(names, e.values, help)
                 ->allow_extra_args(false)
                 ->option_text(value)
                 ->group("options");
}

void CliArgs::AddFlag(const std::string& names, const std::string& help) {
  Impl::Entry& e = impl_->entries[FirstName(names)];
  // --flag=value is refused, as the hand-written parser refused it (CLI11
  // would read --json=false as given).
  e.option = impl_->app.add_flag(names, help)->disable_flag_override()->group("options");
}

bool CliArgs::Parse(int argc, const char* const* argv, std::string* error) {
  // CLI11 takes the arguments last first. "--name=" (an empty value) goes in
  // as "--name" "": CLI11 would take the next argument as its value.
  std::vector<std::string> args;
  bool options_done = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") options_done = true;
    if (!options_done && arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=') {
      arg.pop_back();
      args.push_back(arg);
      args.emplace_back();
      continue;
    }
    args.push_back(std::move(arg));
  }
  std::reverse(args.begin(), args.end());
  try {
    impl_->app.parse(args);
  } catch (const CLI::CallForHelp&) {
    help_requested_ = true;
    return true;
  } catch (const CLI::ArgumentMismatch& e) {
    // Said in CLI11's terms: "--name: 1 required TEXT missing", "name was
    // given a disallowed flag override".
    const std::string what = e.what();
    const auto ends_with = [&what](std::string_view end) {
      return what.size() > end.size() && what.compare(what.size() - end.size(), end.size(), end) == 0;
    };
    if (ends_with(" missing")) {
      *error = "option " + what.substr(0, what.find(':')) + " needs a value";
    } else if (ends_with(" was given a disallowed flag override")) {
      *error = "option --" + what.substr(0, what.find(' ')) + " takes no value";
    } else {
      *error = what;
    }
    return false;
  } catch (const CLI::ParseError& e) {
    *error = e.what();
    return false;
  }
  for (const std::string& arg : impl_->app.remaining()) {
    if (arg == "--") continue;  // CLI11 leaves the separator among the extras
    *error = arg.size() > 1 && arg[0] == '-' ? "unknown option " + arg.substr(0, arg.find('='))
                                             : "unexpected argument " + arg;
    return false;
  }
  return true;
}

std::string CliArgs::Help() const { return impl_->app.help(); }

const std::string& CliArgs::Get(const std::string& name) const {
  const Impl::Entry& e = impl_->entries.at(name);
  return e.values.empty() ? e.fallback : e.values.back();
}

const std::vector<std::string>& CliArgs::GetAll(const std::string& name) const {
  return impl_->entries.at(name).values;
}

bool CliArgs::Has(const std::string& name) const { return impl_->entries.at(name).option->count() > 0; }

bool CliArgs::GetU64(const std::string& name, std::uint64_t* out) const {
  const std::string& s = Get(name);
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  *out = v;
  return true;
}

}  // namespace quiver::cli
