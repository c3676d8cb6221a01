// What the quiver tool's commands share: exit codes, usage and failure
// messages, argument parsing, opening a graph, naming a vertex on the
// command line, JSON output and the progress line on stderr.
//
// Every command is `int Name(int argc, const char* const* argv)` taking the
// arguments after its name and returning the process's exit code.
#ifndef QUIVER_TOOLS_QUIVER_CLI_H_
#define QUIVER_TOOLS_QUIVER_CLI_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "cli_args.h"
#include "nlohmann/json.hpp"
#include "quiver/graph.h"
#include "quiver/snapshot.h"
#include "quiver/status.h"

namespace quiver::cli {

// JSON output keeps its keys in the order they are added.
using Json = nlohmann::ordered_json;

// Exit codes (README.md, "The quiver tool").
inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;    // bad input, an I/O error, a damaged directory
inline constexpr int kUsage = 2;     // bad arguments
inline constexpr int kNoResult = 3;  // the question had no answer (`path`: no path)

// Prints "quiver: <error>" and the help to stderr; kUsage.
int Usage(const char* help, const std::string& error);
// The same with the command's help (CliArgs::Help).
int Usage(const CliArgs& args, const std::string& error);
// Prints "quiver: <what>: <status>" to stderr; kFailed.
int Fail(std::string_view what, const Status& s);

// Parses; prints the help to stdout for --help/-h (kOk) or a usage error
// (kUsage), and checks the number of positional arguments. -1 to go on.
int ParseArgs(CliArgs& args, int argc, const char* const* argv, std::size_t positional);
// The same for a command taking `min` to `max` arguments.
int ParseArgs(CliArgs& args, int argc, const char* const* argv, std::size_t min, std::size_t max);

// Opens the durable graph at `dir` read-only (nothing written, no LOCK);
// NotFound if there is none.
Result<std::unique_ptr<Graph>> OpenReadOnly(const std::string& dir);
// Opens it for writing (the graph must exist).
Result<std::unique_ptr<Graph>> OpenExisting(const std::string& dir);

// Resolves a vertex named on the command line: a vertex id ("42"), or with
// `by` = "LABEL.KEY" the value of that key, found through an index on
// (LABEL, KEY) — as an int64 if it reads as one and the index holds it,
// else as a string. NotFound if no live vertex matches.
Result<VertexId> ResolveVertex(const Snapshot& snap, const std::string& text, const std::string& by);

// A value as JSON: null, bool, number, string; bytes as an array of
// numbers, a float vector as an array. A non-finite double is null.
Json ToJson(const PropertyView& v);
// A value as text, for a tab-separated column: ints and doubles as numbers
// (doubles to round trip), strings with a backslash, tab, newline and
// carriage return escaped (\\ \t \n \r), bytes and vectors bracketed, a
// string list as [a;b] with each element escaped so and ';' as \;.
std::string ToText(const PropertyView& v);
// A double to round trip ("%.17g" shortened), "infinity" / "-infinity" / "nan".
std::string FormatDouble(double d);
// Prints `j` to `out` (stdout by default), indented, and a newline.
void PrintJson(const Json& j, std::FILE* out = stdout);
// A name or value for a line of text output: control bytes (a line break,
// a tab, NUL) as \xNN, so a stored name cannot forge or cut a line.
std::string Printable(std::string_view s);
// `s` as one CSV field: quoted (quotes doubled) if it holds a comma, a
// quote or a line break.
std::string CsvField(std::string_view s);

// A progress line on stderr: "\r<phase>: <done>/<total> <unit> (<rate>
// <unit>/s, <rate> <also_unit>/s, ETA <s> s)", redrawn at most every 200 ms;
// enabled only when stderr is a terminal and the command is neither --quiet
// nor --json. Bytes show as MB. Finish() clears it.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine() { Finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // total 0: unknown (no ETA, no total shown). `also`: a second count of the
  // same work (rows beside bytes), shown as its rate when `also_unit` is set.
  void Update(std::string_view phase, std::uint64_t done, std::uint64_t total, std::string_view unit,
              std::uint64_t also = 0, std::string_view also_unit = {});
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::string phase_;
  std::chrono::steady_clock::time_point phase_start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// Whether stderr is a terminal.
bool StderrIsTerminal();

// The commands (cmd_data.cc, cmd_inspect.cc, cmd_query.cc).
int Import(int argc, const char* const* argv);
int Export(int argc, const char* const* argv);
int Backup(int argc, const char* const* argv);
int Info(int argc, const char* const* argv);
int Verify(int argc, const char* const* argv);
int Dump(int argc, const char* const* argv);
int Neighbors(int argc, const char* const* argv);
int Path(int argc, const char* const* argv);
int Run(int argc, const char* const* argv);

}  // namespace quiver::cli

#endif  // QUIVER_TOOLS_QUIVER_CLI_H_
