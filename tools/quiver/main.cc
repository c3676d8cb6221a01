// quiver: the command-line tool for Quiver graph directories.
//
//   quiver import [options] DIR     load CSV or EVLP files into the graph at DIR (a new
//                                   graph: built whole in one checkpoint)
//   quiver export [options] DIR OUT write the graph at DIR to files in OUT
//   quiver stats DIR                counts by label and type, property keys, indexes
//   quiver verify DIR               check every checkpoint and WAL segment (read-only)
//
// Exit codes: 0 success; 1 the operation failed (bad input, I/O error, a
// damaged directory); 2 a usage error. Errors go to stderr as one line
// each. README.md ("The quiver tool") documents every option. Uses only
// the public API.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "cli_args.h"
#include "quiver/graph.h"
#include "quiver/import.h"
#include "quiver/snapshot.h"
#include "quiver/verify.h"

namespace quiver::cli {
namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

constexpr const char* kMainHelp =
    "usage: quiver <command> [options] ...\n"
    "commands:\n"
    "  import   load CSV (Neo4j-style headers) or LDBC Graphalytics EVLP files into a graph\n"
    "  export   write a graph's current state to CSV or EVLP files\n"
    "  stats    counts by label and edge type, property keys, indexes\n"
    "  verify   check every checkpoint and WAL segment of a graph directory (changes nothing)\n"
    "`quiver <command> --help` describes a command. Exit codes: 0 ok, 1 failed, 2 usage error.\n";

constexpr const char* kImportHelp =
    "usage: quiver import [options] DIR\n"
    "Loads files into the graph at DIR. A missing or empty DIR gets a new graph, built whole in\n"
    "one checkpoint (all-or-nothing); an existing graph gets the rows through large batches.\n"
    "Bad input changes nothing.\n"
    "  --vertices [LABEL=]FILE   a vertex file (repeatable); LABEL for rows without a :LABEL\n"
    "  --edges [TYPE=]FILE       an edge file (repeatable); TYPE for rows without a :TYPE\n"
    "  --format csv|evlp         input format (default csv); EVLP labels default to Vertex / EDGE\n"
    "  --delimiter C             CSV field delimiter (default ','; 'tab' for a tab)\n"
    "  --id-index                create a unique index on each label's id property\n"
    "  --skip-bad-rows N         import the rest if at most N rows are bad (default 0)\n"
    "  --batches                 a new graph too goes through batches (slower; for comparison)\n"
    "  --report FILE             write the rejected rows there, as CSV\n"
    "  --quiet                   print nothing on success\n";

constexpr const char* kExportHelp =
    "usage: quiver export [options] DIR OUTDIR\n"
    "Writes the graph at DIR (opened read-only) to OUTDIR: vertices.csv and edges.csv, or\n"
    "graph.v and graph.e. Existing files are not overwritten.\n"
    "  --format csv|evlp   output format (default csv)\n"
    "  --delimiter C       CSV field delimiter (default ',')\n"
    "  --quiet             print nothing on success\n";

constexpr const char* kStatsHelp =
    "usage: quiver stats DIR\n"
    "Prints the vertex and edge counts, counts by label and edge type, property keys and\n"
    "indexes of the graph at DIR (opened read-only).\n";

constexpr const char* kVerifyHelp =
    "usage: quiver verify DIR\n"
    "Checks every CRC, the framing and the replay chain of the graph directory DIR and prints\n"
    "one line per file. Changes nothing. Exit 1 if anything is damaged.\n";

int Usage(const char* help, const std::string& error) {
  std::fprintf(stderr, "quiver: %s\n%s", error.c_str(), help);
  return kUsage;
}

int Fail(std::string_view what, const Status& s) {
  std::fprintf(stderr, "quiver: %.*s: %s\n", static_cast<int>(what.size()), what.data(),
               s.ToString().c_str());
  return kFailed;
}

bool ParseFormat(const std::string& text, DataFormat* format) {
  if (text == "csv") {
    *format = DataFormat::kCsv;
  } else if (text == "evlp") {
    *format = DataFormat::kEvlp;
  } else {
    return false;
  }
  return true;
}

bool ParseDelimiter(const std::string& text, char* delimiter) {
  if (text == "tab" || text == "\\t") {
    *delimiter = '\t';
    return true;
  }
  if (text.size() != 1) return false;
  *delimiter = text[0];
  return true;
}

// "[LABEL=]FILE" -> ImportFile.
ImportFile FileArg(const std::string& arg, const std::string& fallback_label) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos) return {arg, fallback_label};
  return {arg.substr(eq + 1), arg.substr(0, eq)};
}

// Parses a subcommand's arguments; returns -1 to go on, else an exit code.
int ParseArgs(CliArgs& args, int argc, const char* const* argv, const char* help, std::size_t positional) {
  args.AddFlag("--help");
  args.AddFlag("-h");
  std::string error;
  if (!args.Parse(argc, argv, &error)) return Usage(help, error);
  if (args.Has("--help") || args.Has("-h")) {
    std::fputs(help, stdout);
    return kOk;
  }
  if (args.positional().size() != positional) {
    return Usage(help, "expected " + std::to_string(positional) + " argument(s), got " +
                           std::to_string(args.positional().size()));
  }
  return -1;
}

// Whether `dir` is missing or an empty directory: an import there builds a
// new graph whole (ImportNewGraph).
bool IsNewGraphDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return !ec;
  return std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec) && !ec;
}

int Import(int argc, const char* const* argv) {
  CliArgs args;
  args.AddOption("--vertices");
  args.AddOption("--edges");
  args.AddOption("--format", "csv");
  args.AddOption("--delimiter", ",");
  args.AddOption("--skip-bad-rows", "0");
  args.AddOption("--report");
  args.AddFlag("--id-index");
  args.AddFlag("--batches");
  args.AddFlag("--quiet");
  if (int rc = ParseArgs(args, argc, argv, kImportHelp, 1); rc >= 0) return rc;
  ImportOptions options;
  if (!ParseFormat(args.Get("--format"), &options.format)) {
    return Usage(kImportHelp, "--format must be csv or evlp");
  }
  if (!ParseDelimiter(args.Get("--delimiter"), &options.delimiter)) {
    return Usage(kImportHelp, "--delimiter must be one character (or 'tab')");
  }
  std::uint64_t skip = 0;
  if (!args.GetU64("--skip-bad-rows", &skip)) return Usage(kImportHelp, "--skip-bad-rows needs a number");
  options.skip_bad_rows = static_cast<std::size_t>(skip);
  options.reject_report = args.Get("--report");
  options.create_id_indexes = args.Has("--id-index");
  const bool evlp = options.format == DataFormat::kEvlp;
  ImportSpec spec;
  for (const std::string& f : args.GetAll("--vertices"))
    spec.vertices.push_back(FileArg(f, evlp ? "Vertex" : ""));
  for (const std::string& f : args.GetAll("--edges")) spec.edges.push_back(FileArg(f, evlp ? "EDGE" : ""));
  if (spec.vertices.empty() && spec.edges.empty()) return Usage(kImportHelp, "nothing to import");

  const std::string& dir = args.positional()[0];
  const auto start = std::chrono::steady_clock::now();
  Result<ImportStats> r = InvalidArgumentError("");
  const bool bulk = !args.Has("--batches") && IsNewGraphDir(dir);
  if (bulk) {
    r = quiver::ImportNewGraph(dir, spec, options);
    if (!r.ok()) return Fail("import", r.status());
  } else {
    Result<std::unique_ptr<Graph>> graph = Graph::Open(Options{}, dir);
    if (!graph.ok()) return Fail("open " + dir, graph.status());
    r = quiver::Import(**graph, spec, options);
    Status closed = (*graph)->Close();
    if (!r.ok()) return Fail("import", r.status());
    if (!closed.ok()) return Fail("close", closed);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const ImportRowError& e : r->rejected) {
    std::fprintf(stderr, "quiver: rejected %s:%llu:%llu: %s\n", e.file.c_str(),
                 static_cast<unsigned long long>(e.line), static_cast<unsigned long long>(e.column),
                 e.reason.c_str());
  }
  if (!args.Has("--quiet")) {
    if (bulk) {
      std::printf("imported %llu vertices and %llu edges into a new graph, one %.1f MB checkpoint",
                  static_cast<unsigned long long>(r->vertices), static_cast<unsigned long long>(r->edges),
                  static_cast<double>(r->checkpoint_bytes) / 1e6);
    } else {
      std::printf("imported %llu vertices and %llu edges in %llu batches",
                  static_cast<unsigned long long>(r->vertices), static_cast<unsigned long long>(r->edges),
                  static_cast<unsigned long long>(r->batches));
    }
    std::printf(" (%zu rows rejected) in %.3f s", r->rejected.size(), seconds);
    if (seconds > 0) std::printf(": %.0f edges/s", static_cast<double>(r->edges) / seconds);
    std::printf("\n");
    for (const std::string& index : r->indexes_created) std::printf("created index %s\n", index.c_str());
  }
  return kOk;
}

Result<std::unique_ptr<Graph>> OpenReadOnly(const std::string& dir) {
  Options options;
  options.read_only = true;
  options.create_if_missing = false;
  return Graph::Open(options, dir);
}

int Export(int argc, const char* const* argv) {
  CliArgs args;
  args.AddOption("--format", "csv");
  args.AddOption("--delimiter", ",");
  args.AddFlag("--quiet");
  if (int rc = ParseArgs(args, argc, argv, kExportHelp, 2); rc >= 0) return rc;
  ExportOptions options;
  if (!ParseFormat(args.Get("--format"), &options.format)) {
    return Usage(kExportHelp, "--format must be csv or evlp");
  }
  if (!ParseDelimiter(args.Get("--delimiter"), &options.delimiter)) {
    return Usage(kExportHelp, "--delimiter must be one character (or 'tab')");
  }
  Result<std::unique_ptr<Graph>> graph = OpenReadOnly(args.positional()[0]);
  if (!graph.ok()) return Fail("open " + args.positional()[0], graph.status());
  Result<ExportStats> r = quiver::Export((*graph)->GetSnapshot(), args.positional()[1], options);
  if (!r.ok()) return Fail("export", r.status());
  if (!args.Has("--quiet")) {
    std::printf("exported %llu vertices and %llu edges\n", static_cast<unsigned long long>(r->vertices),
                static_cast<unsigned long long>(r->edges));
    for (const std::string& f : r->files) std::printf("wrote %s\n", f.c_str());
  }
  return kOk;
}

int Stats(int argc, const char* const* argv) {
  CliArgs args;
  if (int rc = ParseArgs(args, argc, argv, kStatsHelp, 1); rc >= 0) return rc;
  Result<std::unique_ptr<Graph>> graph = OpenReadOnly(args.positional()[0]);
  if (!graph.ok()) return Fail("open " + args.positional()[0], graph.status());
  const Snapshot s = (*graph)->GetSnapshot();
  std::printf("sequence %llu\nvertices %llu\nedges %llu\n", static_cast<unsigned long long>(s.sequence()),
              static_cast<unsigned long long>(s.vertex_count()),
              static_cast<unsigned long long>(s.edge_count()));
  for (const LabelCount& l : s.Labels()) {
    std::printf("label %s %llu\n", std::string(l.name).c_str(), static_cast<unsigned long long>(l.vertices));
  }
  for (const EdgeTypeCount& t : s.EdgeTypes()) {
    std::printf("type %s %llu\n", std::string(t.name).c_str(), static_cast<unsigned long long>(t.edges));
  }
  for (const PropertyKeyCount& k : s.PropertyKeys()) {
    std::printf("key %s vertices %llu edges %llu\n", std::string(k.name).c_str(),
                static_cast<unsigned long long>(k.vertices), static_cast<unsigned long long>(k.edges));
  }
  for (const IndexInfo& i : s.Indexes()) {
    std::printf("index %s %s entries %llu%s\n", i.spec.name.c_str(), i.spec.label.c_str(),
                static_cast<unsigned long long>(i.entries),
                i.state == IndexState::kReady ? "" : " (building)");
  }
  return kOk;
}

int Verify(int argc, const char* const* argv) {
  CliArgs args;
  if (int rc = ParseArgs(args, argc, argv, kVerifyHelp, 1); rc >= 0) return rc;
  Result<VerifyReport> r = VerifyDirectory(args.positional()[0]);
  if (!r.ok()) return Fail("verify " + args.positional()[0], r.status());
  for (const VerifiedFile& f : r->files) {
    std::printf("%s %s\n", f.name.c_str(), f.status.ok() ? "ok" : f.status.ToString().c_str());
  }
  if (!r->status.ok()) return Fail("verify", r->status);
  std::printf("ok\n");
  return kOk;
}

}  // namespace
}  // namespace quiver::cli

int main(int argc, char** argv) {
  using namespace quiver::cli;  // NOLINT(google-build-using-namespace)
  if (argc < 2) return Usage(kMainHelp, "no command");
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kMainHelp, stdout);
    return kOk;
  }
  const int n = argc - 2;
  const char* const* rest = argv + 2;
  if (command == "import") return Import(n, rest);
  if (command == "export") return Export(n, rest);
  if (command == "stats") return Stats(n, rest);
  if (command == "verify") return Verify(n, rest);
  return Usage(kMainHelp, "unknown command '" + command + "'");
}
