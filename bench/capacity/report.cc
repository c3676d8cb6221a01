#include "report.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "environment.h"

namespace quiver::capacity {
namespace {

std::string SourcePath(const char* relative) { return std::string(QUIVER_BENCH_SOURCE_DIR) + "/" + relative; }

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The first row of `rows` (an array) for which pred(row) holds, or null.
template <typename Pred>
Json Find(const Json& rows, Pred&& pred) {
  if (!rows.is_array()) return Json();
  for (const Json& r : rows)
    if (pred(r)) return r;
  return Json();
}

Json Pick(const Json& row, std::initializer_list<const char*> path) {
  const Json* j = &row;
  for (const char* key : path) {
    if (!j->is_object() || !j->contains(key)) return NotMeasured("not in this report");
    j = &(*j)[key];
  }
  return *j;
}

}  // namespace

std::string SchemaPath() { return SourcePath("schemas/capacity-report.schema.json"); }
std::string ValidatorPath() { return SourcePath("scripts/validate-report"); }
std::string DefaultOutputPath() { return SourcePath("bench/results/capacity-report.json"); }
std::string HistoryPath() { return SourcePath("bench/results/history.jsonl"); }
std::string GatePath() { return SourcePath("scripts/release-gate"); }

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool ValidateAndWrite(const Json& report, const std::string& out, std::string* error) {
  const std::filesystem::path target = std::filesystem::absolute(out);
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  const std::string tmp = target.string() + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream f(tmp);
    f << report.dump(2) << "\n";
    if (!f) {
      *error = "cannot write the candidate report beside the output";
      return false;
    }
  }
  const std::string command = "/usr/bin/python3 " + ShellQuote(ValidatorPath()) + " --schema " +
                              ShellQuote(SchemaPath()) + " " + ShellQuote(tmp) + " 1>&2";
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::filesystem::remove(tmp, ec);
    *error = "the report does not validate against the schema (validator output above); nothing was written";
    return false;
  }
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    *error = "cannot rename the validated report into place: " + ec.message();
    return false;
  }
  return true;
}

Json HistoryLine(const Json& report) {
  Json line;
  const Json& commit = report["source"]["commit"];
  line["runId"] = report["generatedAtUtc"].get<std::string>() + "-" +
                  (commit.is_string() ? commit.get<std::string>().substr(0, 12) : std::string("unknown"));
  // Every run enters as a candidate; scripts/release-gate --publish marks it published.
  line["status"] = "candidate";
  line["commit"] = commit;
  line["dirty"] = report["source"]["dirty"];
  line["dateUtc"] = report["generatedAtUtc"];
  line["profile"] = report["profile"];
  line["partial"] = report["partial"];
  line["schemaVersion"] = report["schemaVersion"];
  line["environmentDigest"] = EnvironmentDigest(report["environment"]);
  Json h;
  const Json& writes = report["writes"];
  for (int producers : {1, 32}) {
    const Json row = Find(writes, [&](const Json& r) {
      return r["mode"] == "durable" && r["producers"] == producers && r["batchElements"] == 1;
    });
    const std::string key =
        "durableWrites" + std::to_string(producers) + "Producer" + (producers > 1 ? "s" : "");
    h[key + "PerSecond"] = Pick(row, {"writesPerSecond"});
    h[key + "Ratio"] = Pick(row, {"efficiency", "ratio"});
  }
  const Json& checkpoint = report["checkpoint"];
  const Json big_cp = checkpoint.is_array() && !checkpoint.empty() ? checkpoint.back() : Json();
  h["checkpointElements"] = Pick(big_cp, {"elements"});
  h["checkpointMaxWriterStallNs"] = Pick(big_cp, {"writerStall", "maxCommitLatencyDuringNs"});
  h["checkpointMegabytesPerSecond"] = Pick(big_cp, {"megabytesPerSecond"});
  h["checkpointRatio"] = Pick(big_cp, {"efficiency", "ratio"});
  const Json& load = report["load"];
  const Json big_load = load.is_array() && !load.empty() ? load.back() : Json();
  h["loadElementsPerSecond"] = Pick(big_load, {"elementsPerSecond"});
  h["loadRatio"] = Pick(big_load, {"efficiency", "ratio"});
  // The largest uniform traversal shape with all threads.
  Json sweep;
  if (report["traversal"].is_array()) {
    for (const Json& r : report["traversal"])
      if (r["shape"]["targets"] == "uniform" &&
          (sweep.is_null() || r["shape"]["edges"] > sweep["shape"]["edges"] ||
           (r["shape"]["edges"] == sweep["shape"]["edges"] && r["threads"] > sweep["threads"])))
        sweep = r;
  }
  h["traversalEdges"] = Pick(sweep, {"shape", "edges"});
  h["traversalBestEdgesPerSecond"] = Pick(sweep, {"bestEdgesPerSecond"});
  h["traversalRatio"] = Pick(sweep, {"efficiency", "ratio"});
  const Json mem = Find(report["memory"], [](const Json& r) {
    return r["shape"]["outDegree"] == 10 && r["shape"]["targets"] == "uniform";
  });
  h["bytesPerVertex"] = Pick(mem, {"bytesPerVertex"});
  h["bytesPerEdgeDegree10"] = Pick(mem, {"bytesPerEdge"});
  h["bytesPerEdgeDegree10Ratio"] = Pick(mem, {"efficiency", "ratio"});
  for (const char* op : {"vertexLookup", "outEdges100", "twoHop800"}) {
    Json best;
    if (report["latency"].is_array()) {
      for (const Json& r : report["latency"])
        if (r["operation"] == op && (best.is_null() || r["vertices"] > best["vertices"])) best = r;
    }
    h[std::string(op) + "P95Ns"] = Pick(best, {"latencyP95Ns"});
  }
  line["headline"] = h;
  return line;
}

bool AppendHistory(const Json& line, const std::string& history, std::string* error) {
  // The same lock release-gate --publish takes to rewrite the history: no append is lost. The
  // rewrite renames a new file over the old one, so once locked, check that the file still is
  // the one at the path, else lock the new one.
  int fd = -1;
  bool ok = true;
  struct stat st {};
  for (;;) {
    fd = open(history.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      *error = "cannot open " + history + ": " + std::strerror(errno);
      return false;
    }
    struct stat now {};
    ok = flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0;
    if (!ok || (stat(history.c_str(), &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev))
      break;
    close(fd);
  }
  std::string text = line.dump() + "\n";
  std::string old(ok ? static_cast<std::size_t>(st.st_size) : 0, '\0');
  if (ok && !old.empty()) ok = pread(fd, old.data(), old.size(), 0) == static_cast<ssize_t>(old.size());
  // Every complete append ends with a newline: a last line without one is an append a crash
  // interrupted. If it is not valid JSON it was never a record: drop it (as release-gate does),
  // so this run is not glued onto it and lost as well. If it is, only its newline is missing.
  if (ok && !old.empty() && old.back() != '\n') {
    const std::size_t start = old.rfind('\n') == std::string::npos ? 0 : old.rfind('\n') + 1;
    if (Json::accept(old.substr(start))) {
      text.insert(text.begin(), '\n');
    } else {
      std::fprintf(stderr, "quiver-bench: %s: dropping a torn last line (an interrupted append)\n",
                   history.c_str());
      ok = ftruncate(fd, static_cast<off_t>(start)) == 0;
    }
  }
  for (std::size_t done = 0; ok && done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && fsync(fd) == 0;
  const int saved = ok ? 0 : errno;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    *error = "cannot append to " + history + ": " + std::strerror(saved != 0 ? saved : errno);
    return false;
  }
  return true;
}

int RunGate(const std::string& run_id, const std::string& history, bool enforce) {
  const std::string command = "/usr/bin/python3 " + ShellQuote(GatePath()) + " --history " +
                              ShellQuote(history) + " --run " + ShellQuote(run_id) +
                              (enforce ? " --publish" : " --report-only") + " 1>&2";
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return 2;
  return WEXITSTATUS(status);
}

}  // namespace quiver::capacity
