// See cli.h.
#include "cli.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

namespace quiver::cli {

int Usage(const char* help, const std::string& error) {
  std::fprintf(stderr, "quiver: %s\n%s", error.c_str(), help);
  return kUsage;
}

int Fail(std::string_view what, const Status& s) {
  std::fprintf(stderr, "quiver: %.*s: %s\n", static_cast<int>(what.size()), what.data(),
               s.ToString().c_str());
  return kFailed;
}

int Usage(const CliArgs& args, const std::string& error) { return Usage(args.Help().c_str(), error); }

int ParseArgs(CliArgs& args, int argc, const char* const* argv, std::size_t positional) {
  return ParseArgs(args, argc, argv, positional, positional);
}

int ParseArgs(CliArgs& args, int argc, const char* const* argv, std::size_t min, std::size_t max) {
  std::string error;
  if (!args.Parse(argc, argv, &error)) return Usage(args, error);
  if (args.help_requested()) {
    std::fputs(args.Help().c_str(), stdout);
    return kOk;
  }
  const std::size_t n = args.positional().size();
  if (n < min || n > max) {
    const std::string want =
        min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
    return Usage(args, "expected " + want + " argument(s), got " + std::to_string(n));
  }
  return -1;
}

Result<std::unique_ptr<Graph>> OpenReadOnly(const std::string& dir) {
  Options options;
  options.read_only = true;
  options.create_if_missing = false;
  return Graph::Open(options, dir);
}

Result<std::unique_ptr<Graph>> OpenExisting(const std::string& dir) {
  Options options;
  options.create_if_missing = false;
  return Graph::Open(options, dir);
}

namespace {

std::optional<std::int64_t> ParseInt64(std::string_view text) {
  std::int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<VertexId> ResolveVertex(const Snapshot& snap, const std::string& text, const std::string& by) {
  if (by.empty()) {
    std::uint64_t id = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), id);
    if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
      return InvalidArgumentError("'" + text +
                                  "' is not a vertex id (use --by LABEL.KEY to name it by a key)");
    }
    if (!snap.HasVertex(VertexId(id))) return NotFoundError("no vertex " + text);
    return VertexId(id);
  }
  const std::size_t dot = by.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == by.size()) {
    return InvalidArgumentError("--by must be LABEL.KEY, not '" + by + "'");
  }
  const std::string label = by.substr(0, dot);
  const std::string key = by.substr(dot + 1);
  // Through FindVertices, which takes an exact, unique or ordered index:
  // an int64 first if the text reads as one, then the string.
  Status error;         // the last lookup's error
  bool looked = false;  // whether some index took the value
  auto lookup = [&](const PropertyValue& value) -> std::optional<VertexId> {
    Result<std::vector<VertexId>> ids = snap.FindVertices(label, key, value);
    if (!ids.ok()) {
      error = ids.status();
      return std::nullopt;
    }
    looked = true;
    if (ids->empty()) return std::nullopt;
    return ids->front();
  };
  if (std::optional<std::int64_t> n = ParseInt64(text)) {
    if (std::optional<VertexId> v = lookup(PropertyValue(*n))) return *v;
  }
  if (std::optional<VertexId> v = lookup(PropertyValue(text))) return *v;
  if (!looked) return error;
  return NotFoundError("no " + label + " vertex with " + key + " = " + text);
}

Json ToJson(const PropertyView& v) {
  switch (v.type()) {
    case ValueType::kNull: return nullptr;
    case ValueType::kBool: return *v.as_bool();
    case ValueType::kInt64: return *v.as_int64();
    case ValueType::kDouble: {
      const double d = *v.as_double();
      if (!std::isfinite(d)) return nullptr;
      return d;
    }
    case ValueType::kString:
      // nlohmann's dump throws on invalid UTF-8; stored strings are valid.
      return std::string(*v.as_string());
    case ValueType::kBytes: {
      Json a = Json::array();
      const auto bytes = v.as_bytes();  // named: a temporary optional would die before the loop
      for (std::byte b : *bytes) a.push_back(static_cast<unsigned>(b));
      return a;
    }
    case ValueType::kFloatVector: {
      Json a = Json::array();
      const auto floats = v.as_float_vector();  // named: a temporary optional would die before the loop
      for (float f : *floats) {
        if (std::isfinite(f)) {
          a.push_back(f);
        } else {
          a.push_back(nullptr);
        }
      }
      return a;
    }
    case ValueType::kStringList: {
      Json a = Json::array();
      const StringListView list =
          *v.as_string_list();  // named: a temporary optional would die before the loop
      for (std::string_view s : list) a.push_back(std::string(s));
      return a;
    }
  }
  return nullptr;
}

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "infinity" : "-infinity";
  // The shortest form that reads back as the same double.
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

namespace {

// `s` for a tab-separated column: a backslash, tab, newline and carriage
// return as \\, \t, \n and \r, and in a list element the separator ';' as
// \;, so every column and element reads back exactly. (A list of one empty
// string is written [\e]: "[]" is the empty list.)
void AppendEscaped(std::string_view s, bool list_element, std::string* out) {
  for (char c : s) {
    switch (c) {
      case '\\': *out += "\\\\"; break;
      case '\t': *out += "\\t"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case ';':
        if (list_element) *out += '\\';
        *out += c;
        break;
      default: *out += c;
    }
  }
}

}  // namespace

std::string ToText(const PropertyView& v) {
  switch (v.type()) {
    case ValueType::kNull: return "null";
    case ValueType::kBool: return *v.as_bool() ? "true" : "false";
    case ValueType::kInt64: return std::to_string(*v.as_int64());
    case ValueType::kDouble: return FormatDouble(*v.as_double());
    case ValueType::kString: {
      std::string s;
      AppendEscaped(*v.as_string(), false, &s);
      return s;
    }
    case ValueType::kBytes: {
      std::string s = "bytes[";
      char hex[3];
      const auto bytes = v.as_bytes();  // named: a temporary optional would die before the loop
      for (std::byte b : *bytes) {
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(b));
        s += hex;
      }
      return s + "]";
    }
    case ValueType::kFloatVector: {
      std::string s = "[";
      bool first = true;
      const auto floats = v.as_float_vector();  // named: a temporary optional would die before the loop
      for (float f : *floats) {
        if (!first) s += ";";
        first = false;
        s += FormatDouble(f);
      }
      return s + "]";
    }
    case ValueType::kStringList: {
      const StringListView list = *v.as_string_list();
      if (list.size() == 1 && list[0].empty()) return "[\\e]";  // "[]" is the empty list
      std::string s = "[";
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0) s += ";";
        AppendEscaped(list[i], true, &s);
      }
      return s + "]";
    }
  }
  return "";
}

void PrintJson(const Json& j, std::FILE* out) {
  const std::string text = j.dump(2, ' ', false, Json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fputc('\n', out);
}

std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled) {}

namespace {

// A count in its unit: bytes as MB, anything else as it is.
std::string Amount(double n, std::string_view unit) {
  char text[64];
  if (unit == "bytes") {
    std::snprintf(text, sizeof text, "%.1f", n * 1e-6);
  } else {
    std::snprintf(text, sizeof text, "%.0f", n);
  }
  return text;
}

std::string UnitName(std::string_view unit) {
  if (unit == "bytes") return " MB";
  return unit.empty() ? std::string() : " " + std::string(unit);
}

// "12.5 MB/s", "41200 rows/s": three significant digits, whole numbers
// past them (no exponent).
std::string Rate(double per_second, std::string_view unit) {
  const double shown = unit == "bytes" ? per_second * 1e-6 : per_second;
  char text[64];
  std::snprintf(text, sizeof text, shown >= 1000 ? "%.0f%s/s" : "%.3g%s/s", shown, UnitName(unit).c_str());
  return text;
}

}  // namespace

void ProgressLine::Update(std::string_view phase, std::uint64_t done, std::uint64_t total,
                          std::string_view unit, std::uint64_t also, std::string_view also_unit) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (phase != phase_) {  // a new phase: its rate starts again, the redraw pace does not
    phase_ = std::string(phase);
    phase_start_ = now;
  }
  if (now - last_draw_ < std::chrono::milliseconds(200) && !(total != 0 && done >= total)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - phase_start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  std::string line = phase_ + ": " + Amount(static_cast<double>(done), unit);
  if (total != 0) line += "/" + Amount(static_cast<double>(total), unit);
  line += UnitName(unit) + " (" + Rate(rate, unit);
  if (!also_unit.empty())
    line += ", " + Rate(seconds > 0 ? static_cast<double>(also) / seconds : 0, also_unit);
  if (total != 0 && rate > 0 && done < total) {
    char eta[48];
    std::snprintf(eta, sizeof eta, ", ETA %.0f s", static_cast<double>(total - done) / rate);
    line += eta;
  }
  // "\r" redraws the line; "\033[K" clears what a longer line left.
  std::fprintf(stderr, "\r%s)\033[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::Finish() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
  phase_.clear();
}

}  // namespace quiver::cli
