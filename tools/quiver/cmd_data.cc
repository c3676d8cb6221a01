// quiver import / export / backup: data in and out of a graph directory.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.h"
#include "quiver/import.h"

namespace quiver::cli {
namespace {

constexpr const char* kImportAbout =
    "Loads files into the graph at DIR. A missing or empty DIR, or a graph that has never held\n"
    "an element and declares no index, gets the import built whole in one checkpoint\n"
    "(all-or-nothing); any other graph gets the rows through large batches (all-or-nothing too).\n"
    "Bad input changes nothing. On a terminal, stderr shows each phase's progress: bytes and\n"
    "rows per second and an ETA.\n";

constexpr const char* kExportAbout =
    "Writes the graph at DIR (opened read-only) to OUTDIR: vertices.csv and edges.csv,\n"
    "graph.v and graph.e, or vertices.jsonl and edges.jsonl. Existing files are not overwritten.\n"
    "On a terminal, stderr shows each file's progress: rows and bytes per second and an ETA.\n";

constexpr const char* kBackupAbout =
    "Copies the graph at DIR (opened read-only) into DEST, a new or empty directory, as one\n"
    "checkpoint: opening DEST gives the graph as of the copied commit. A failed backup leaves\n"
    "no graph in DEST.\n";

bool ParseFormat(const std::string& text, DataFormat* format) {
  if (text == "csv") {
    *format = DataFormat::kCsv;
  } else if (text == "evlp") {
    *format = DataFormat::kEvlp;
  } else if (text == "jsonl") {
    *format = DataFormat::kJsonl;
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

// "[LABEL=]FILE[,FILE...]" -> one ImportFile per file, all with LABEL (or
// `fallback_label`). CSV: the files after the first take the first one's
// header (ImportFile::header), as Neo4j's admin import does. False (with
// `*error`) for an empty file name in the list.
bool AddFileArg(const std::string& arg, const std::string& fallback_label, bool csv,
                std::vector<ImportFile>* files, std::string* error) {
  // A label is what comes before a '=' that precedes the first ','.
  const std::size_t eq = arg.find('=');
  const bool labelled = eq != std::string::npos && eq < arg.find(',');
  const std::string label = labelled ? arg.substr(0, eq) : fallback_label;
  const std::string list = labelled ? arg.substr(eq + 1) : arg;
  std::string header;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = list.find(',', begin);
    std::string path = list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (path.empty()) {
      *error = "an empty file name in '" + arg + "'";
      return false;
    }
    files->push_back({path, label, header});
    if (csv && header.empty()) header = path;
    if (comma == std::string::npos) return true;
    begin = comma + 1;
  }
}

// Whether `dir` is missing or an empty directory: an import there builds a
// new graph whole (ImportNewGraph), as it does into an empty graph.
bool IsNewGraphDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return !ec;
  return std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec) && !ec;
}

// Whether `graph` has never held an element and declares no index:
// ImportNewGraph takes such a graph too, once it is closed (it checks
// again under the graph's LOCK).
bool IsEmptyGraph(const Graph& graph) {
  const Snapshot s = graph.GetSnapshot();
  return s.vertex_id_limit() == 0 && s.edge_id_limit() == 0 && s.Indexes().empty();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int Import(int argc, const char* const* argv) {
  CliArgs args("quiver import [options] DIR", kImportAbout);
  args.AddOption("--vertices,--nodes", "", "[LABEL=]FILE[,FILE...]",
                 "vertex files (repeatable; --nodes is the same, as in Neo4j's\n"
                 "admin import); LABEL for rows without a :LABEL.\n"
                 "CSV: the first file's header is the header of the others,\n"
                 "which have none (Neo4j's header.csv,part1.csv,...)");
  args.AddOption("--edges", "", "[TYPE=]FILE[,FILE...]",
                 "edge files (repeatable); TYPE for rows without a :TYPE");
  args.AddOption("--format", "csv", "csv|evlp|jsonl",
                 "input format (default csv); EVLP labels default to Vertex / EDGE");
  args.AddOption("--delimiter", ",", "C", "CSV field delimiter (default ','; 'tab' for a tab)");
  args.AddOption("--array-delimiter", ";", "C",
                 "CSV: the separator of string[] and float[] elements (default ';')");
  args.AddOption("--graphalytics", "", "FILE",
                 "an LDBC Graphalytics dataset named by its .properties file: its\n"
                 ".v and .e files, weight and direction (implies --format evlp)");
  args.AddFlag("--id-index", "create a unique index on each label's id property");
  args.AddOption("--skip-bad-rows", "0", "N", "import the rest if at most N rows are bad (default 0)");
  args.AddFlag("--batches", "a new graph too goes through batches (slower; for comparison)");
  args.AddOption("--report", "", "FILE", "write the rejected rows there, as CSV");
  args.AddOption("--threads", "0", "N", "threads parsing one file (default 0: every core)");
  args.AddOption("--jsonl-id-key", "id", "KEY",
                 "JSON Lines: the property that keeps a vertex's id (default id;\n"
                 "'' keeps none: for files whose ids are Quiver ids)");
  args.AddFlag("--json", "print the result as JSON (shows no progress)");
  args.AddFlag("--quiet", "print nothing on success, show no progress");
  if (int rc = ParseArgs(args, argc, argv, 1); rc >= 0) return rc;
  ImportOptions options;
  if (!ParseFormat(args.Get("--format"), &options.format)) {
    return Usage(args, "--format must be csv, evlp or jsonl");
  }
  if (!ParseDelimiter(args.Get("--delimiter"), &options.delimiter)) {
    return Usage(args, "--delimiter must be one character (or 'tab')");
  }
  if (!ParseDelimiter(args.Get("--array-delimiter"), &options.array_delimiter)) {
    return Usage(args, "--array-delimiter must be one character (or 'tab')");
  }
  if (args.Has("--graphalytics")) {
    if (args.Has("--format") && options.format != DataFormat::kEvlp)
      return Usage(args, "--graphalytics reads EVLP (--format evlp)");
    options.format = DataFormat::kEvlp;
  }
  std::uint64_t skip = 0;
  if (!args.GetU64("--skip-bad-rows", &skip)) return Usage(args, "--skip-bad-rows needs a number");
  options.skip_bad_rows = static_cast<std::size_t>(skip);
  std::uint64_t threads = 0;
  if (!args.GetU64("--threads", &threads) || threads > 1024) {
    return Usage(args, "--threads needs a number (at most 1024)");
  }
  options.threads = static_cast<std::uint32_t>(threads);
  options.reject_report = args.Get("--report");
  options.create_id_indexes = args.Has("--id-index");
  options.jsonl_id_key = args.Get("--jsonl-id-key");
  const bool evlp = options.format == DataFormat::kEvlp;
  ImportSpec spec;
  const bool csv = options.format == DataFormat::kCsv;
  std::string bad;
  for (const std::string& f : args.GetAll("--vertices")) {  // --nodes too
    if (!AddFileArg(f, evlp ? "Vertex" : "", csv, &spec.vertices, &bad)) return Usage(args, bad);
  }
  for (const std::string& f : args.GetAll("--edges")) {
    if (!AddFileArg(f, evlp ? "EDGE" : "", csv, &spec.edges, &bad)) return Usage(args, bad);
  }
  spec.graphalytics.properties = args.Get("--graphalytics");
  if (spec.vertices.empty() && spec.edges.empty() && spec.graphalytics.properties.empty())
    return Usage(args, "nothing to import");

  const bool quiet = args.Has("--quiet");
  ProgressLine progress(!quiet && !args.Has("--json") && StderrIsTerminal());
  options.progress = [&progress](const ImportProgress& p) {
    progress.Update(p.phase, p.bytes_done, p.bytes_total, "bytes", p.rows_done, "rows");
  };
  const std::string& dir = args.positional()[0];
  const auto start = std::chrono::steady_clock::now();
  Result<ImportStats> r = InvalidArgumentError("");
  const bool new_dir = IsNewGraphDir(dir);
  // An existing graph is opened once: kept for the batches, or closed for
  // the bulk path if it is empty.
  std::unique_ptr<Graph> graph;
  bool bulk = !args.Has("--batches") && new_dir;
  if (!args.Has("--batches") && !new_dir) {
    Result<std::unique_ptr<Graph>> opened = Graph::Open(Options{}, dir);
    if (!opened.ok()) return Fail("open " + dir, opened.status());
    graph = std::move(*opened);
    if (IsEmptyGraph(*graph)) {
      Status closed = graph->Close();
      if (!closed.ok()) return Fail("close", closed);
      graph.reset();
      bulk = true;
    }
  }
  if (bulk) {
    r = quiver::ImportNewGraph(dir, spec, options);
    progress.Finish();
    // A graph that looked empty here but that ImportNewGraph, reading it
    // under its LOCK, will not take (written meanwhile): through batches,
    // as any other graph.
    if (!r.ok() && !new_dir && r.status().code() == StatusCode::kFailedPrecondition) bulk = false;
    if (bulk && !r.ok()) return Fail("import", r.status());
  }
  if (!bulk) {
    if (graph == nullptr) {
      Result<std::unique_ptr<Graph>> opened = Graph::Open(Options{}, dir);
      if (!opened.ok()) return Fail("open " + dir, opened.status());
      graph = std::move(*opened);
    }
    r = quiver::Import(*graph, spec, options);
    progress.Finish();
    Status closed = graph->Close();
    if (!r.ok()) return Fail("import", r.status());
    if (!closed.ok()) return Fail("close", closed);
  }
  const double seconds = SecondsSince(start);
  for (const ImportRowError& e : r->rejected) {
    std::fprintf(stderr, "quiver: rejected %s:%llu:%llu: %s\n", e.file.c_str(),
                 static_cast<unsigned long long>(e.line), static_cast<unsigned long long>(e.column),
                 e.reason.c_str());
  }
  if (args.Has("--json")) {
    Json j = {{"new_graph", bulk},
              {"vertices", r->vertices},
              {"edges", r->edges},
              {"batches", r->batches},
              {"checkpoint_bytes", r->checkpoint_bytes},
              {"seconds", seconds},
              {"indexes_created", r->indexes_created},
              {"rejected", Json::array()}};
    for (const ImportRowError& e : r->rejected) {
      j["rejected"].push_back(
          {{"file", e.file}, {"line", e.line}, {"column", e.column}, {"reason", e.reason}});
    }
    PrintJson(j);
    return kOk;
  }
  if (quiet) return kOk;
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
  return kOk;
}

int Export(int argc, const char* const* argv) {
  CliArgs args("quiver export [options] DIR OUTDIR\n       quiver export [options] DIR --out OUTDIR",
               kExportAbout);
  args.AddOption("--out", "", "OUTDIR", "where to write (instead of the second argument)");
  args.AddOption("--format", "csv", "csv|evlp|jsonl", "output format (default csv)");
  args.AddOption("--delimiter", ",", "C", "CSV field delimiter (default ',')");
  args.AddOption("--array-delimiter", ";", "C",
                 "CSV: the separator of string[] and float[] elements (default ';')");
  args.AddOption("--jsonl-id-key", "id", "KEY",
                 "JSON Lines: write each vertex's KEY as its id when every vertex holds a\n"
                 "distinct one (default id; '' always writes Quiver ids)");
  args.AddOption("--threads", "0", "N",
                 "threads formatting one file (default 0: one per core, at most 8;\n"
                 "the files are the same for every N)");
  args.AddFlag("--json", "print the result as JSON (shows no progress)");
  args.AddFlag("--quiet", "print nothing on success, show no progress");
  if (int rc = ParseArgs(args, argc, argv, 1, 2); rc >= 0) return rc;
  // The output directory: the second argument or --out, exactly one of them.
  const bool out_option = !args.GetAll("--out").empty();
  if (out_option == (args.positional().size() == 2)) {
    return Usage(args, out_option ? "give the output directory once: OUTDIR or --out"
                                  : "expected 2 argument(s), got 1 (or give --out OUTDIR)");
  }
  const std::string out_dir = out_option ? args.Get("--out") : args.positional()[1];
  if (out_dir.empty()) return Usage(args, "--out needs a directory");
  ExportOptions options;
  std::uint64_t threads = 0;
  if (!args.GetU64("--threads", &threads) || threads > kMaxExportThreads) {
    return Usage(args, "--threads needs a number (at most 1024)");
  }
  options.threads = static_cast<std::uint32_t>(threads);
  if (!ParseFormat(args.Get("--format"), &options.format)) {
    return Usage(args, "--format must be csv, evlp or jsonl");
  }
  if (!ParseDelimiter(args.Get("--delimiter"), &options.delimiter)) {
    return Usage(args, "--delimiter must be one character (or 'tab')");
  }
  if (!ParseDelimiter(args.Get("--array-delimiter"), &options.array_delimiter)) {
    return Usage(args, "--array-delimiter must be one character (or 'tab')");
  }
  options.jsonl_id_key = args.Get("--jsonl-id-key");
  ProgressLine progress(!args.Has("--quiet") && !args.Has("--json") && StderrIsTerminal());
  options.progress = [&progress](const ExportProgress& p) {
    progress.Update(p.phase, p.rows_done, p.rows_total, "rows", p.bytes_written, "bytes");
  };
  Result<std::unique_ptr<Graph>> graph = OpenReadOnly(args.positional()[0]);
  if (!graph.ok()) return Fail("open " + args.positional()[0], graph.status());
  const auto start = std::chrono::steady_clock::now();
  Result<ExportStats> r = quiver::Export((*graph)->GetSnapshot(), out_dir, options);
  progress.Finish();
  if (!r.ok()) return Fail("export", r.status());
  if (args.Has("--json")) {
    PrintJson({{"vertices", r->vertices},
               {"edges", r->edges},
               {"files", r->files},
               {"seconds", SecondsSince(start)}});
    return kOk;
  }
  if (!args.Has("--quiet")) {
    std::printf("exported %llu vertices and %llu edges\n", static_cast<unsigned long long>(r->vertices),
                static_cast<unsigned long long>(r->edges));
    for (const std::string& f : r->files) std::printf("wrote %s\n", f.c_str());
  }
  return kOk;
}

int Backup(int argc, const char* const* argv) {
  CliArgs args("quiver backup [options] DIR DEST", kBackupAbout);
  args.AddFlag("--json", "print the result as JSON (shows no progress)");
  args.AddFlag("--quiet", "print nothing on success, show no progress");
  if (int rc = ParseArgs(args, argc, argv, 2); rc >= 0) return rc;
  const std::string& dir = args.positional()[0];
  const std::string& dest = args.positional()[1];
  Result<std::unique_ptr<Graph>> graph = OpenReadOnly(dir);
  if (!graph.ok()) return Fail("open " + dir, graph.status());
  ProgressLine progress(!args.Has("--quiet") && !args.Has("--json") && StderrIsTerminal());
  const auto start = std::chrono::steady_clock::now();
  Result<BackupInfo> r = (*graph)->Backup(
      dest, [&progress](std::uint64_t bytes) { progress.Update("backup", bytes, 0, "bytes"); });
  progress.Finish();
  if (!r.ok()) return Fail("backup", r.status());
  const double seconds = SecondsSince(start);
  if (args.Has("--json")) {
    PrintJson({{"sequence", r->sequence}, {"bytes", r->bytes}, {"dest", dest}, {"seconds", seconds}});
  } else if (!args.Has("--quiet")) {
    std::printf("backed up sequence %llu of %s into %s: one %.1f MB checkpoint in %.3f s\n",
                static_cast<unsigned long long>(r->sequence), dir.c_str(), dest.c_str(),
                static_cast<double>(r->bytes) / 1e6, seconds);
  }
  return kOk;
}

}  // namespace quiver::cli
