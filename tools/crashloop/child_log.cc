#include "child_log.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace quiver::crashloop {
namespace {

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    std::size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) end = line.size();
    if (end > pos) out.push_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::optional<std::uint64_t> ParseU64(std::string_view s) {
  std::uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<StatusCode> ParseCode(std::string_view name) {
  for (int c = 0; c <= static_cast<int>(StatusCode::kAborted); ++c) {  // the highest code
    if (StatusCodeName(static_cast<StatusCode>(c)) == name) return static_cast<StatusCode>(c);
  }
  return std::nullopt;
}

}  // namespace

void LineWriter::Write(std::string_view line) const {
  char buf[512];
  if (line.size() >= sizeof buf) std::abort();  // a protocol line must stay below PIPE_BUF
  line.copy(buf, line.size());
  buf[line.size()] = '\n';
  const std::size_t n = line.size() + 1;
  ssize_t w;
  do {
    w = ::write(fd_, buf, n);
  } while (w < 0 && errno == EINTR);
  // A pipe write below PIPE_BUF is all or nothing; anything else means the
  // parent is gone.
  if (w != static_cast<ssize_t>(n)) ::_exit(5);
}

void ChildLog::Add(std::string_view line) {
  std::vector<std::string_view> f = Fields(line);
  bool ok = false;
  if (f.size() == 2 && f[0] == "B") {
    if (auto id = ParseU64(f[1])) ok = begun.insert(*id).second;
  } else if (f.size() == 3 && f[0] == "A") {
    auto id = ParseU64(f[1]), seq = ParseU64(f[2]);
    if (id && seq) ok = acked.emplace(*id, *seq).second;
  } else if (f.size() == 3 && f[0] == "F") {
    auto id = ParseU64(f[1]);
    auto code = ParseCode(f[2]);
    if (id && code) ok = failed.emplace(*id, *code).second;
  } else if (f.size() == 3 && f[0] == "I" && (f[1] == "create" || f[1] == "drop")) {
    index_ops.push_back({f[1] == "drop", std::string(f[2]), false, StatusCode::kOk});
    ok = true;
  } else if (f.size() == 4 && f[0] == "J" && (f[1] == "create" || f[1] == "drop")) {
    auto code = ParseCode(f[3]);
    // Ends the last operation, which must be the one it names.
    if (code && !index_ops.empty() && !index_ops.back().done && index_ops.back().name == f[2] &&
        index_ops.back().drop == (f[1] == "drop")) {
      index_ops.back().done = true;
      index_ops.back().code = *code;
      ok = true;
    }
  } else if (f.size() >= 2 && f[0] == "P") {
    ok = true;
    if (f[1] == "open-start") {
      open_started = true;
    } else if (f[1] == "open-done" && f.size() == 4) {
      open_done = true;
      child_recovered_sequence = ParseU64(f[2]).value_or(0);
      child_open_us = ParseU64(f[3]).value_or(0);
    } else if (f[1] == "checkpoint-start") {
      ++checkpoints_in_flight;
    } else if (f[1] == "checkpoint-done") {
      --checkpoints_in_flight;
      ++checkpoints_done;
    } else {
      ok = false;
    }
  } else if (!f.empty() && f[0] == "E") {
    error = line.size() > 2 ? std::string(line.substr(2)) : "(no message)";
    ok = true;
  }
  if (!ok) ++malformed_lines;
}

void LineSplitter::Feed(std::string_view bytes, ChildLog* log) {
  for (char c : bytes) {
    if (c != '\n') {
      partial_.push_back(c);
      continue;
    }
    log->Add(partial_);
    partial_.clear();
  }
}

}  // namespace quiver::crashloop
