// DumpJsonLines: see dump_json.h. It reads the dump's text line by line, as
// its grammar is pinned by the library's golden tests (tests/data/dump):
// a line's indent says its depth (two spaces a level), its first words what
// it is. A line it does not recognise still gets an object, with its text.
#include "dump_json.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

namespace quiver::cli {
namespace {

// The number at the start of `s`, and `s` moved past it.
std::optional<std::uint64_t> TakeNumber(std::string_view* s) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(s->data(), s->data() + s->size(), v);
  if (r.ec != std::errc() || r.ptr == s->data()) return std::nullopt;
  s->remove_prefix(static_cast<std::size_t>(r.ptr - s->data()));
  return v;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Whether `s` starts with `prefix` followed by a number: that number.
std::optional<std::uint64_t> NumberAfter(std::string_view s, std::string_view prefix) {
  if (!StartsWith(s, prefix)) return std::nullopt;
  s.remove_prefix(prefix.size());
  return TakeNumber(&s);
}

// "! stopped at offset N: why" or "! why".
Json Damage(Json j, std::string_view text) {
  if (std::optional<std::uint64_t> at = NumberAfter(text, "! stopped at offset ")) {
    j["record"] = "stopped";
    j["offset"] = *at;
  } else {
    j["record"] = "error";
  }
  return j;
}

}  // namespace

Json DumpJsonLines::Record(std::string_view record) const {
  return Json{{"file", file_}, {"record", record}};
}

void DumpJsonLines::Line(std::string_view line) {
  const Json j = ToJson(line);
  if (j.is_null()) return;
  const std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::fprintf(out_, "%s\n", text.c_str());
}

Json DumpJsonLines::ToJson(std::string_view line) {
  if (line.empty()) return nullptr;
  const std::size_t indent = line.find_first_not_of(' ');
  const std::string_view text = line.substr(indent == std::string_view::npos ? line.size() : indent);
  const int depth = static_cast<int>(indent / 2);
  Json j = depth == 0    ? FileRecord(text)
           : checkpoint_ ? CheckpointRecord(depth, text)
                         : WalRecord(depth, text);
  if (depth != 0) j["text"] = std::string(text);
  return j;
}

// "wal-….log (N bytes)", or the bare name of a file that could not be read
// (its "! why" follows).
Json DumpJsonLines::FileRecord(std::string_view text) {
  const std::size_t paren = text.rfind(" (");
  file_ = std::string(paren == std::string_view::npos ? text : text.substr(0, paren));
  checkpoint_ = StartsWith(file_, "checkpoint-");
  batch_ = 0;
  Json j = Record("file");
  j["kind"] = checkpoint_ ? "checkpoint" : "wal";
  if (paren != std::string_view::npos) {
    std::string_view size = text.substr(paren + 2);
    if (std::optional<std::uint64_t> bytes = TakeNumber(&size)) j["bytes"] = *bytes;
  }
  return j;
}

Json DumpJsonLines::WalRecord(int depth, std::string_view text) {
  if (StartsWith(text, "!")) return Damage(Record("error"), text);
  if (depth == 3) {
    Json j = Record("operation");
    j["sequence"] = batch_;
    return j;
  }
  if (std::optional<std::uint64_t> seq = NumberAfter(text, "batch ")) {
    batch_ = *seq;
    Json j = Record("batch");
    j["sequence"] = *seq;
    return j;
  }
  if (StartsWith(text, "group at ")) {
    // "group at O, B bytes, sequence S" / "sequences F..L" (an undecodable
    // group has no bytes).
    Json j = Record("group");
    std::string_view rest = text.substr(9);
    if (std::optional<std::uint64_t> offset = TakeNumber(&rest)) j["offset"] = *offset;
    if (StartsWith(rest, ", ")) {
      rest.remove_prefix(2);
      std::string_view sizes = rest;
      if (std::optional<std::uint64_t> bytes = TakeNumber(&sizes); bytes && StartsWith(sizes, " bytes, ")) {
        j["bytes"] = *bytes;
        rest = sizes.substr(8);
      }
    }
    const bool many = StartsWith(rest, "sequences ");
    rest.remove_prefix(std::min(rest.size(), std::size_t{many ? 10u : 9u}));
    if (std::optional<std::uint64_t> first = TakeNumber(&rest)) {
      j["first_sequence"] = *first;
      if (many && StartsWith(rest, "..")) rest.remove_prefix(2);
      std::optional<std::uint64_t> last = many ? TakeNumber(&rest) : first;
      if (last) j["last_sequence"] = *last;
    }
    return j;
  }
  if (StartsWith(text, "header")) return Record("header");
  if (StartsWith(text, "end: ")) return Record("end");
  if (StartsWith(text, "... ")) return Record("more");
  return Record("line");
}

Json DumpJsonLines::CheckpointRecord(int depth, std::string_view text) {
  if (StartsWith(text, "!")) return Damage(Record("error"), text);
  if (depth == 1) {
    if (std::optional<std::uint64_t> offset = NumberAfter(text, "block at ")) {
      // "block at O: KIND, ..."
      Json j = Record("block");
      j["offset"] = *offset;
      const std::size_t colon = text.find(": ");
      const std::size_t comma = text.find(',', colon);
      if (colon != std::string_view::npos && comma != std::string_view::npos)
        j["block"] = std::string(text.substr(colon + 2, comma - colon - 2));
      return j;
    }
    if (std::optional<std::uint64_t> offset = NumberAfter(text, "trailer at ")) {
      Json j = Record("trailer");
      j["offset"] = *offset;
      return j;
    }
    if (StartsWith(text, "header")) return Record("header");
    return Record("line");
  }
  // Depth 2: the entries of a block.
  for (const char* name : {"label", "type", "key"}) {
    if (std::optional<std::uint64_t> id = NumberAfter(text, std::string(name) + " ")) {
      Json j = Record(name);
      j["id"] = *id;
      return j;
    }
  }
  if (StartsWith(text, "index ")) return Record("index");
  if (StartsWith(text, "... ")) return Record("more");
  for (const auto& [prefix, record] : {std::pair{"v", "vertex"}, std::pair{"e", "edge"}}) {
    if (std::optional<std::uint64_t> id = NumberAfter(text, prefix)) {
      // "v7 key ...": an entry of an index entries block (format 5 on).
      const bool entry = text.substr(1 + std::to_string(*id).size()).substr(0, 5) == " key ";
      Json j = Record(entry ? "entry" : record);
      if (entry) j["element"] = record;
      j["id"] = *id;
      return j;
    }
  }
  return Record("line");
}

}  // namespace quiver::cli
