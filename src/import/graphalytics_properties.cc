// GraphalyticsProperties: see graphalytics_properties.h.
#include "import/graphalytics_properties.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "base/utf8.h"
#include "import/csv_reader.h"

namespace quiver::import {
namespace {

// One key = value line (continuations joined). Columns count bytes from 1
// in the joined line: exact unless the part lies past a continuation.
struct Entry {
  std::string key;
  std::string value;
  std::uint64_t line = 0;
  std::uint64_t value_column = 0;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Whether `line` (without its '\n' and trailing white space) ends in an odd
// number of backslashes: it continues on the next line.
bool Continues(std::string_view line) {
  line = Trim(line);
  std::size_t n = 0;
  while (n < line.size() && line[line.size() - 1 - n] == '\\') ++n;
  return n % 2 == 1;
}

Result<std::string> ReadWhole(env::FileSystem* fs, const std::string& path) {
  Result<std::unique_ptr<env::ReadableFile>> file = fs->OpenReadable(path);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound)
      return PositionError(StatusCode::kNotFound, path, 0, 0, "no such file");
    return file.status();
  }
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, (*file)->Size());
  std::string text(static_cast<std::size_t>(size), '\0');
  QUIVER_ASSIGN_OR_RETURN(std::size_t n, (*file)->ReadAt(0, std::as_writable_bytes(std::span<char>(text))));
  text.resize(n);
  return text;
}

// The entries of `text`, in order.
std::vector<Entry> ParseEntries(std::string_view text) {
  std::vector<Entry> out;
  std::uint64_t line_no = 0;
  while (!text.empty()) {
    // A logical line: physical lines joined while each continues.
    std::string logical;
    const std::uint64_t first = line_no + 1;
    bool more = true;
    while (more && !text.empty()) {
      const std::size_t nl = text.find('\n');
      std::string_view physical = text.substr(0, nl);
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
      ++line_no;
      if (!logical.empty()) physical = Trim(physical);  // a continuation's indent
      more = Continues(physical);
      if (more) physical = Trim(physical).substr(0, Trim(physical).size() - 1);
      logical.append(physical);
    }
    std::string_view l = logical;
    std::size_t start = 0;
    while (start < l.size() && IsSpace(l[start])) ++start;
    if (start == l.size() || l[start] == '#' || l[start] == '!') continue;
    std::size_t key_end = start;
    while (key_end < l.size() && !IsSpace(l[key_end]) && l[key_end] != '=' && l[key_end] != ':') ++key_end;
    std::size_t v = key_end;
    while (v < l.size() && IsSpace(l[v])) ++v;
    if (v < l.size() && (l[v] == '=' || l[v] == ':')) ++v;
    while (v < l.size() && IsSpace(l[v])) ++v;
    out.push_back(
        {std::string(l.substr(start, key_end - start)), std::string(Trim(l.substr(v))), first, v + 1});
  }
  return out;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

// `value` split at ',' with each item trimmed; an empty value is no items.
std::vector<std::string_view> SplitList(std::string_view value) {
  std::vector<std::string_view> items;
  if (Trim(value).empty()) return items;
  while (true) {
    const std::size_t comma = value.find(',');
    items.push_back(Trim(value.substr(0, comma)));
    if (comma == std::string_view::npos) return items;
    value.remove_prefix(comma + 1);
  }
}

enum Key : std::size_t { kVertexFile, kEdgeFile, kDirected, kNames, kTypes, kVertexNames, kKeyCount };
constexpr std::array<std::string_view, kKeyCount> kSuffixes = {"vertex-file",
                                                               "edge-file",
                                                               "directed",
                                                               "edge-properties.names",
                                                               "edge-properties.types",
                                                               "vertex-properties.names"};

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Result<GraphalyticsProperties> Read(env::FileSystem* fs) {
    QUIVER_ASSIGN_OR_RETURN(std::string text, ReadWhole(fs, path_));
    const std::size_t slash = path_.rfind('/');
    dir_ = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
    std::string_view name = std::string_view(path_).substr(slash == std::string::npos ? 0 : slash + 1);
    if (name.ends_with(".properties")) name.remove_suffix(std::string_view(".properties").size());
    prefix_ = base::StrCat("graph.", name, ".");
    for (Entry& e : ParseEntries(text)) QUIVER_RETURN_IF_ERROR(Take(std::move(e)));
    GraphalyticsProperties out;
    out.path = path_;
    QUIVER_RETURN_IF_ERROR(File(fs, kVertexFile, &out.vertex_file, &out.vertex_file_line));
    QUIVER_RETURN_IF_ERROR(File(fs, kEdgeFile, &out.edge_file, &out.edge_file_line));
    if (out.edge_file == out.vertex_file)
      return At(kEdgeFile, base::StrCat("the edge file is the vertex file (", KeyName(kVertexFile), ", line ",
                                        out.vertex_file_line, ")"));
    QUIVER_RETURN_IF_ERROR(Directed(&out.directed));
    QUIVER_RETURN_IF_ERROR(EdgeProperty(&out.weight_key, &out.names_line));
    if (keys_[kVertexNames] && !SplitList(keys_[kVertexNames]->value).empty())
      return At(kVertexNames, "vertex properties are not imported (an EVLP vertex line holds its id only)",
                StatusCode::kUnimplemented);
    return out;
  }

 private:
  std::string KeyName(Key k) const { return base::StrCat(prefix_, kSuffixes[k]); }

  Status At(Key k, std::string_view reason, StatusCode code = StatusCode::kInvalidArgument) const {
    return PositionError(code, path_, keys_[k]->line, keys_[k]->value_column, reason);
  }

  Status Take(Entry e) {
    if (!e.key.starts_with(prefix_)) return Status::Ok();
    const std::string_view suffix = std::string_view(e.key).substr(prefix_.size());
    auto it = std::find(kSuffixes.begin(), kSuffixes.end(), suffix);
    if (it == kSuffixes.end()) return Status::Ok();
    std::optional<Entry>& slot = keys_[static_cast<std::size_t>(it - kSuffixes.begin())];
    if (slot)
      return PositionError(StatusCode::kInvalidArgument, path_, e.line, 1,
                           base::StrCat("repeated key ", e.key, " (first at line ", slot->line, ")"));
    slot = std::move(e);
    return Status::Ok();
  }

  Status Require(Key k) const {
    if (keys_[k]) return Status::Ok();
    return InvalidArgumentError(base::StrCat(path_, ": no ", KeyName(k),
                                             " (a Graphalytics dataset's "
                                             ".properties names its vertex "
                                             "and edge files and whether it is "
                                             "directed)"));
  }

  Status File(env::FileSystem* fs, Key k, std::string* out, std::uint64_t* line) const {
    QUIVER_RETURN_IF_ERROR(Require(k));
    const std::string& value = keys_[k]->value;
    if (value.empty()) return At(k, base::StrCat("empty ", KeyName(k)));
    *out = value.front() == '/' ? value : dir_ + value;
    *line = keys_[k]->line;
    QUIVER_ASSIGN_OR_RETURN(bool exists, fs->Exists(*out));
    if (!exists) return At(k, base::StrCat("no such file: ", *out), StatusCode::kNotFound);
    return Status::Ok();
  }

  Status Directed(bool* out) const {
    QUIVER_RETURN_IF_ERROR(Require(kDirected));
    const std::string& value = keys_[kDirected]->value;
    if (EqualsIgnoringCase(value, "true") || EqualsIgnoringCase(value, "false")) {
      *out = EqualsIgnoringCase(value, "true");
      return Status::Ok();
    }
    return At(kDirected, base::StrCat("'", value, "' is not true or false"));
  }

  Status EdgeProperty(std::string* key, std::uint64_t* line) const {
    const std::vector<std::string_view> names =
        keys_[kNames] ? SplitList(keys_[kNames]->value) : std::vector<std::string_view>{};
    const std::vector<std::string_view> types =
        keys_[kTypes] ? SplitList(keys_[kTypes]->value) : std::vector<std::string_view>{};
    if (names.size() != types.size()) {
      const Key k = keys_[kTypes] ? kTypes : kNames;
      return At(k, base::StrCat(names.size(), " edge property names but ", types.size(), " types"));
    }
    for (std::string_view name : names) {
      if (name.empty() || !base::IsValidUtf8(name))
        return At(kNames, "an edge property name is empty or not valid UTF-8");
    }
    if (names.empty()) return Status::Ok();
    if (names.size() > 1)
      return At(
          kNames,
          base::StrCat(names.size(), " edge properties; an EVLP edge line holds at most one (the weight)"),
          StatusCode::kUnimplemented);
    if (!EqualsIgnoringCase(types[0], "real"))
      return At(kTypes, base::StrCat("unknown edge property type '", types[0],
                                     "' (an EVLP weight is read as a double: 'real')"));
    *key = std::string(names[0]);
    *line = keys_[kNames]->line;
    return Status::Ok();
  }

  const std::string path_;
  std::string dir_;     // path_'s directory with its '/', or ""
  std::string prefix_;  // "graph.NAME."
  std::array<std::optional<Entry>, kKeyCount> keys_;
};

}  // namespace

Result<GraphalyticsProperties> ReadGraphalyticsProperties(env::FileSystem* fs, const std::string& path) {
  return Reader(path).Read(fs);
}

}  // namespace quiver::import
