// import: bulk import and export (include/quiver/import.h, docs/import-export.md), each figure beside
// a ceiling measured in the same run, with the target it is held to and whether it is met.
//
// Inputs (import_inputs.h): V x 10 EVLP files (ids 0..V-1 written in a shuffled order, uniform
// random targets, no weights) and V x 10 typed CSV files, generated with a fixed seed into the data
// directory before they are measured and removed after. Rows, in run order (each raw ceiling on
// one thread, the fastest of kImportCeilingPasses; Options{} for every graph):
//   evlpImportNewGraph  ImportNewGraph of the EVLP files (V = profile.import_evlp_vertices) into a
//                      fresh directory, Graph::Open of it and Close: edges / the sum of the three
//                      wall times (each in detail), target >= 10M edges/s; ceiling: read(2) of
//                      graph.e in 1 MiB chunks and std::from_chars of each line's two integers,
//                      summed: edges/s. Run 1 + kEvlpWarmPasses times, each into a fresh directory
//                      removed after: the first pass (the one the exports and the peak resident set
//                      below use; closed after the exports) first-touches memory the process never
//                      had, which on a VM whose free memory goes back to the host runs at the host's
//                      rate of backing it again (ceilings.freshMemoryTouch), so the figure is the
//                      median pass of the later ones (memory the process gave back moments before;
//                      on that VM what stays free about 2 s goes back to the host too, so they are
//                      spared only part of the cost), and detail holds the first pass's figures
//                      (firstPass*), the bytes it touched (its peak resident set minus the set
//                      before) and that many bytes' time at the first-touch ceiling's two rates
//   evlpSequentialRead  read(2) of graph.v and graph.e in 1 MiB chunks right after they were
//                      written (the page cache warm), MB/s: itself a bound, so no ceiling and no
//                      target; ratio: ImportNewGraph's input MB/s over it
//   evlpImportPeakResident  the highest resident set during that ImportNewGraph + Open (a thread
//                      reads /proc/self/statm every 5 ms) minus the resident set just before it
//                      (the allocators' free memory handed back first), in bytes; ceiling: the
//                      opened graph's GetMemoryStats().allocated_bytes; target ratio <= 1.3
//   exportEvlp, exportCsv  Export of that graph's snapshot to EVLP and to CSV in fresh
//                      directories: edges / Export's wall time, target >= 10M edges/s; ceiling:
//                      write(2) of as many bytes as the export wrote, 1 MiB chunks and one
//                      fdatasync, as edges/s (the export syncs its files too)
//   evlpImportBatches  Import (through WriteBatches) of EVLP files of V = profile.import_batch_vertices
//                      (the same files when that equals the V above) into an empty durable graph
//                      (Graph::Open of a fresh directory): edges / Import's wall time; no target (the
//                      batch path, beside the new-graph one); ceiling: the raw parse of its graph.e
//   csvImportNewGraph  ImportNewGraph of the CSV files (V = profile.import_csv_vertices) + Open +
//                      Close: rows (vertex and edge rows) / the three wall times, target >= 3M
//                      rows/s; ceiling: read(2) of both files in 1 MiB chunks counting ',' and '\n'
//   csvSequentialRead  read(2) of the CSV files in 1 MiB chunks right after they were written, as
//                      evlpSequentialRead: MB/s, no ceiling, no target; ratio: csvImportNewGraph's
//                      input MB/s over it
//   jsonlImport        ImportNewGraph of the same rows as JSON Lines (V = profile.import_csv_vertices,
//                      import_inputs.h) + Open + Close: rows / the three wall times, target >= 2M
//                      rows/s; ceiling: read(2) of both files in 1 MiB chunks of whole lines and
//                      simdjson's on-demand document stream over each, every value read, 1 thread
//   jsonlSequentialRead  the same for the JSON Lines files, beside jsonlImport
// Every import is checked before its figure is kept (counts, ids dense from 0 in input order, and
// sampled vertices' and edges' ids and properties against the generated ones), every export's
// counts and every raw ceiling's own count and sum; a mismatch stops the bench.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if QUIVER_USE_MIMALLOC
#include <mimalloc.h>
#endif

#include "families.h"
#include "import_inputs.h"
#include "quiver/import.h"
#include "timing.h"

namespace quiver::capacity {
namespace {

// The family's rows: one sample and a figure-over-ceiling ratio unless a row says otherwise.
struct ImportRow : TargetRow {
  ImportRow(const char* f, std::string v) : TargetRow(f, std::move(v)) {
    samples = 1;
    ratio_definition = "figure / ceiling";
  }
};

Json Rate(double n, double seconds) { return Positive(n / seconds, "no time elapsed"); }
Json Seconds(double seconds) { return Positive(seconds, "no time elapsed"); }

std::uint64_t SizeOf(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t n = std::filesystem::file_size(path, ec);
  if (ec) ImportFail("cannot stat " + path + ": " + ec.message());
  return n;
}

ImportSpec SpecOf(const ImportInputs& in, const char* label, const char* type) {
  ImportSpec spec;
  for (const std::string& f : in.vertex_files) spec.vertices.push_back({.path = f, .label = label});
  for (const std::string& f : in.edge_files) spec.edges.push_back({.path = f, .label = type});
  return spec;
}

// ---- Checks ----

std::int64_t IntOf(const Snapshot& snap, VertexId v, std::string_view key) {
  const auto p = snap.GetProperty(v, key);
  if (!p || !p->as_int64())
    ImportFail("vertex " + std::to_string(v.value()) + " lacks int '" + std::string(key) + "'");
  return *p->as_int64();
}

std::string StringOf(const Snapshot& snap, VertexId v, std::string_view key) {
  const auto p = snap.GetProperty(v, key);
  if (!p || !p->as_string())
    ImportFail("vertex " + std::to_string(v.value()) + " lacks string '" + std::string(key) + "'");
  return std::string(*p->as_string());
}

// The imported graph holds `in`: its counts, ids dense from 0 in input order, and the sampled rows'
// external ids and properties (EVLP ids as int64 "id", CSV ids as string "id").
void CheckImported(const Snapshot& snap, const ImportInputs& in, bool csv, const char* what) {
  if (snap.vertex_count() != in.vertices || snap.edge_count() != in.edges ||
      snap.vertex_id_limit() != in.vertices || snap.edge_id_limit() != in.edges)
    ImportFail(std::string(what) + ": the graph's counts or id limits differ from the files'");
  auto external = [&](VertexId v) {
    if (!csv) return IntOf(snap, v, "id");
    const std::string id = StringOf(snap, v, "id");
    std::int64_t n = -1;
    std::from_chars(id.data(), id.data() + id.size(), n);
    return n;
  };
  for (const EdgeSample& s : in.edge_samples) {
    const std::optional<EdgeInfo> e = snap.GetEdge(EdgeId(s.position));
    if (!e || e->source.value() != s.position / kImportOutDegree || external(e->source) != s.source ||
        external(e->target) != s.target)
      ImportFail(std::string(what) + ": edge " + std::to_string(s.position) + " differs from the file's");
    if (csv) {
      const auto since = snap.GetProperty(EdgeId(s.position), "since");
      if (!since || since->as_int64() != s.since)
        ImportFail(std::string(what) + ": an edge's 'since' differs");
    }
  }
  for (const VertexSample& s : in.vertex_samples) {
    const VertexId v(s.position);
    const auto score = snap.GetProperty(v, "score");
    if (external(v) != s.id || StringOf(snap, v, "name") != s.name || IntOf(snap, v, "age") != s.age ||
        !score || score->as_double() != s.score)
      ImportFail(std::string(what) + ": vertex " + std::to_string(s.position) + " differs from the file's");
  }
}

// ---- Peak resident set ----

// Hands the allocators' free memory back to the system, so the resident set before an import is
// what is in use and the import's growth is not hidden by reuse.
void ReleaseFreeMemory() {
#if QUIVER_USE_MIMALLOC
  mi_collect(true);
#endif
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// Reads the resident set every 5 ms on its own thread until Stop; keeps the highest reading.
class PeakResident {
 public:
  PeakResident() : thread_([this] { Run(); }) {}
  PeakResident(const PeakResident&) = delete;
  PeakResident& operator=(const PeakResident&) = delete;
  ~PeakResident() { Stop(); }
  void Stop() {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
  }
  // Valid after Stop.
  std::uint64_t peak() const { return peak_; }
  std::uint64_t readings() const { return readings_; }

 private:
  void Run() {
    while (true) {
      peak_ = std::max(peak_, ResidentBytes());
      ++readings_;
      if (stop_.load()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::atomic<bool> stop_{false};
  std::uint64_t peak_ = 0;  // written by the thread until it is joined
  std::uint64_t readings_ = 0;
  std::thread thread_;
};

// ---- The rows ----

// Every graph of the family opens with the defaults: durable, a load thread per core (at most 8),
// a checkpoint on Close.
Options GraphOptions() { return BenchOptions(); }

// A new graph built from `in` by ImportNewGraph and opened; times of each step.
struct NewGraph {
  std::string dir;
  std::unique_ptr<Graph> graph;
  ImportStats stats;
  double import_seconds = 0, open_seconds = 0, close_seconds = 0;
  std::uint64_t resident_before = 0, resident_peak = 0, resident_readings = 0;
};

NewGraph BuildNewGraph(Context& ctx, const ImportInputs& in, const std::string& name, DataFormat format) {
  NewGraph g;
  g.dir = ctx.FreshDir(name);
  const ImportSpec spec = format == DataFormat::kEvlp ? SpecOf(in, "V", "E") : SpecOf(in, "Person", "KNOWS");
  ReleaseFreeMemory();
  g.resident_before = ResidentBytes();
  PeakResident peak;
  std::uint64_t t0 = NowNs();
  g.stats = ValueOrDie(ImportNewGraph(g.dir, spec, {.format = format}), "ImportNewGraph (import)");
  g.import_seconds = SecondsSince(t0);
  t0 = NowNs();
  g.graph = ValueOrDie(Graph::Open(GraphOptions(), g.dir), "Graph::Open (import)");
  g.open_seconds = SecondsSince(t0);
  peak.Stop();
  g.resident_peak = peak.peak();
  g.resident_readings = peak.readings();
  CheckImported(g.graph->GetSnapshot(), in, format != DataFormat::kEvlp, "ImportNewGraph");
  return g;
}

void CloseNewGraph(Context& ctx, NewGraph& g) {
  const std::uint64_t t0 = NowNs();
  CheckClose(*g.graph);
  g.close_seconds = SecondsSince(t0);
  g.graph.reset();
  ctx.RemoveDir(g.dir);
}

// EVLP ImportNewGraph + Open + Close passes after the first; the row's figure is their median.
constexpr int kEvlpWarmPasses = 3;

// The total wall time of a pass.
double TotalSeconds(const NewGraph& g) { return g.import_seconds + g.open_seconds + g.close_seconds; }

// The median of `passes` by total time (of an even count, the slower middle one).
const NewGraph& MedianPass(const std::vector<NewGraph>& passes) {
  std::vector<const NewGraph*> by_time;
  for (const NewGraph& g : passes) by_time.push_back(&g);
  std::sort(by_time.begin(), by_time.end(),
            [](const NewGraph* a, const NewGraph* b) { return TotalSeconds(*a) < TotalSeconds(*b); });
  return *by_time[by_time.size() / 2];
}

// The threads of an end-to-end row: ImportOptions::threads 0 parses every (uncompressed) file on
// every core; DurableOptions::io_threads 0 loads on a thread per core, at most 8.
int Threads(const Context& ctx, DataFormat) { return ctx.Cores(); }

// The sequential read of an import row's input files (`figure`, beside `import_figure`): needs
// `import_seconds`, ImportNewGraph's time for the same files, for its ratio.
struct ReadShape {
  const char* figure;         // "evlpSequentialRead", ...
  const char* files;          // "graph.v and graph.e", ...
  const char* import_figure;  // the row whose input rate the ratio takes
};

ImportRow SequentialReadRow(const ReadShape& shape, const ImportInputs& in, double read_seconds,
                            double import_seconds) {
  ImportRow r{shape.figure, std::string("read(2) of ") + shape.files +
                                " in 1 MiB chunks, page cache warm (written just before)"};
  r.elements = in.bytes;
  r.samples = kImportCeilingPasses;
  r.value = Rate(static_cast<double>(in.bytes) / 1e6, read_seconds);
  r.unit = "megabytesPerSecond";
  r.ceiling = NotMeasured(std::string("none: the row is itself a bound, for ") + shape.import_figure +
                          "'s input rate");
  r.ratio =
      Ratio(Rate(static_cast<double>(in.bytes) / 1e6, import_seconds), r.value, "a side was not measured");
  r.ratio_definition = std::string(shape.import_figure) +
                       "'s input MB/s during ImportNewGraph (its detail.inputMegabytesPerSecond) / this "
                       "read rate (best of the passes): the share of a warm sequential read the import reads "
                       "its input at";
  r.target = "none: the input rate the import rows read beside";
  r.no_target = "no target: a bound for the import rows";
  return r;
}

// The detail every new-graph import row carries: the three wall times and the bytes in and out.
void AddNewGraphDetail(const ImportInputs& in, const NewGraph& g, ImportRow* r) {
  r->detail["importSeconds"] = Seconds(g.import_seconds);
  r->detail["openSeconds"] = Seconds(g.open_seconds);
  r->detail["closeSeconds"] = Seconds(g.close_seconds);
  r->detail["inputBytes"] = Count(in.bytes, "the files are empty");
  r->detail["checkpointBytes"] =
      Count(g.stats.checkpoint_bytes, "ImportNewGraph reported no checkpoint bytes");
}

// `first`: the first pass (its graph closed); `warm`: the passes after it, of which the median
// gives the figure and the main detail.
ImportRow EvlpNewGraphRow(Context& ctx, const ImportInputs& in, const NewGraph& first,
                          const std::vector<NewGraph>& warm, double parse_seconds) {
  const NewGraph& g = MedianPass(warm);
  const double total = TotalSeconds(g);
  const auto edges = static_cast<double>(in.edges);
  ImportRow r{"evlpImportNewGraph",
              std::to_string(in.vertices) +
                  " x 10, uniform targets, no weights; ImportNewGraph + Open + Close, median of " +
                  std::to_string(warm.size()) + " passes after a first"};
  r.elements = in.edges;
  r.threads = Threads(ctx, DataFormat::kEvlp);
  r.samples = warm.size();
  r.value = Rate(edges, total);
  r.unit = "edgesPerSecond";
  r.ceiling = Rate(edges, parse_seconds);
  r.ceiling_definition =
      "read(2) of the same .e file in 1 MiB chunks and std::from_chars of each line's two integers, "
      "summed, 1 thread (best of 3 passes)";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.ratio_definition = "figure (the median pass after the first) / ceiling";
  r.target = ">= 10M edges/s, end to end";
  r.met = [](double v, double) { return v >= 10e6; };
  AddNewGraphDetail(in, g, &r);
  r.detail["importEdgesPerSecond"] = Rate(edges, g.import_seconds);
  r.detail["inputMegabytesPerSecond"] = Rate(static_cast<double>(in.bytes) / 1e6, g.import_seconds);
  double slowest = TotalSeconds(g), fastest = slowest;
  for (const NewGraph& w : warm) {
    slowest = std::max(slowest, TotalSeconds(w));
    fastest = std::min(fastest, TotalSeconds(w));
  }
  r.detail["warmPassSlowestEdgesPerSecond"] = Rate(edges, slowest);
  r.detail["warmPassFastestEdgesPerSecond"] = Rate(edges, fastest);
  // The first pass, and what bounds it where fresh memory is slow to come by.
  r.detail["firstPassEdgesPerSecond"] = Rate(edges, TotalSeconds(first));
  r.detail["firstPassImportSeconds"] = Seconds(first.import_seconds);
  r.detail["firstPassOpenSeconds"] = Seconds(first.open_seconds);
  r.detail["firstPassCloseSeconds"] = Seconds(first.close_seconds);
  const std::uint64_t touched =
      first.resident_peak > first.resident_before ? first.resident_peak - first.resident_before : 0;
  r.detail["firstPassTouchedBytes"] = Count(touched, "the resident set did not grow");
  const Json& touch = ctx.ceilings.contains("freshMemoryTouch") ? ctx.ceilings["freshMemoryTouch"] : Json();
  auto at_rate = [&](const char* key) -> Json {
    const std::optional<double> gbps = touch.contains(key) ? NumberOf(touch[key]) : std::nullopt;
    if (!gbps) return NotMeasured(std::string("ceilings.freshMemoryTouch.") + key + " was not measured");
    if (touched == 0) return NotMeasured("the resident set did not grow");
    return Seconds(static_cast<double>(touched) / (*gbps * 1e9));
  };
  r.detail["firstTouchCeilingSeconds"] = at_rate("firstTouchGigabytesPerSecond");
  r.detail["retouchCeilingSeconds"] = at_rate("retouchGigabytesPerSecond");
  return r;
}

ImportRow PeakResidentRow(Context& ctx, const ImportInputs& in, const NewGraph& g) {
  const std::uint64_t allocated = g.graph->GetMemoryStats().allocated_bytes;
  ImportRow r{"evlpImportPeakResident", std::to_string(in.vertices) + " x 10; ImportNewGraph + Open"};
  r.elements = in.edges;
  r.threads = Threads(ctx, DataFormat::kEvlp);
  r.samples = g.resident_readings;
  r.value = g.resident_peak > g.resident_before
                ? Json(static_cast<double>(g.resident_peak - g.resident_before))
                : NotMeasured("the resident set did not grow (the allocators reused memory freed before)");
  r.unit = "bytes";
  r.ceiling = Count(allocated, "the graph reported no allocated bytes");
  r.ceiling_definition = "the opened graph's GetMemoryStats().allocated_bytes (its blocks once loaded)";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.ratio_definition =
      "peak resident set during ImportNewGraph + Open, sampled every 5 ms from /proc/self/statm (a shorter "
      "peak can be missed), minus the resident set just before / the opened graph's allocated bytes";
  r.target = "ratio <= 1.3";
  r.met = [](double, double q) { return q <= 1.3; };
  r.detail["residentBeforeBytes"] = Count(g.resident_before, "the resident set is unknown");
  r.detail["residentPeakBytes"] = Count(g.resident_peak, "the resident set is unknown");
  ctx.progress.Note("peak resident " + r.value.dump() + " B over " + std::to_string(allocated) +
                    " allocated");
  return r;
}

ImportRow ExportRow(Context& ctx, const ImportInputs& in, const Graph& graph, DataFormat format) {
  const bool csv = format == DataFormat::kCsv;
  const std::string dir = ctx.FreshDir(csv ? "import-export-csv" : "import-export-evlp");
  const Snapshot snap = graph.GetSnapshot();
  const std::uint64_t t0 = NowNs();
  const ExportStats stats = ValueOrDie(Export(snap, dir, {.format = format}), "Export (import)");
  const double seconds = SecondsSince(t0);
  if (stats.vertices != in.vertices || stats.edges != in.edges) ImportFail("Export wrote the wrong counts");
  std::uint64_t bytes = 0;
  for (const std::string& f : stats.files) bytes += SizeOf(f);
  ctx.RemoveDir(dir);
  const Json write_seconds = SequentialWriteSeconds(ctx.data_dir, bytes);
  const auto edges = static_cast<double>(in.edges);
  ImportRow r{
      csv ? "exportCsv" : "exportEvlp",
      std::to_string(in.vertices) + " x 10" + (csv ? ", vertices.csv + edges.csv" : ", graph.v + graph.e")};
  r.elements = in.edges;
  r.threads = std::min(ctx.Cores(), 8);  // ExportOptions::threads 0: a thread per core, at most 8
  r.value = Rate(edges, seconds);
  r.unit = "edgesPerSecond";
  const std::optional<double> ws = NumberOf(write_seconds);
  r.ceiling = ws ? Rate(edges, *ws) : write_seconds;
  r.ceiling_definition =
      "write(2) of as many bytes as the export wrote to one file, 1 MiB chunks, then one fdatasync, "
      "as edges/s (the edges / that time)";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.ratio_definition = "figure / ceiling, both in edges/s (equal to the export's MB/s / the write's)";
  r.target = ">= 10M edges/s";
  r.met = [](double v, double) { return v >= 10e6; };
  r.detail["exportSeconds"] = Seconds(seconds);
  r.detail["writtenBytes"] = Count(bytes, "the export wrote no bytes");
  r.detail["exportMegabytesPerSecond"] = Rate(static_cast<double>(bytes) / 1e6, seconds);
  r.detail["writeMegabytesPerSecond"] = ws ? Rate(static_cast<double>(bytes) / 1e6, *ws) : write_seconds;
  ctx.progress.Note(std::string(r.figure) + " " + r.value.dump() + " edges/s (write " + r.ceiling.dump() +
                    ")");
  return r;
}

ImportRow EvlpBatchesRow(Context& ctx, const ImportInputs& in, double parse_seconds) {
  const std::string dir = ctx.FreshDir("import-batches");
  std::uint64_t t0 = NowNs();
  auto graph = ValueOrDie(Graph::Open(GraphOptions(), dir), "Graph::Open (import batches)");
  const double open_seconds = SecondsSince(t0);
  t0 = NowNs();
  const ImportStats stats =
      ValueOrDie(Import(*graph, SpecOf(in, "V", "E"), {.format = DataFormat::kEvlp}), "Import (import)");
  const double seconds = SecondsSince(t0);
  CheckImported(graph->GetSnapshot(), in, false, "Import");
  t0 = NowNs();
  CheckClose(*graph);
  const double close_seconds = SecondsSince(t0);
  graph.reset();
  ctx.RemoveDir(dir);
  const auto edges = static_cast<double>(in.edges);
  ImportRow r{"evlpImportBatches", std::to_string(in.vertices) +
                                       " x 10, uniform targets, no weights; Import into "
                                       "an empty durable graph (Open and Close not counted)"};
  r.elements = in.edges;
  r.threads = ctx.Cores();  // ImportOptions::threads 0: graph.e parsed on every core
  r.value = Rate(edges, seconds);
  r.unit = "edgesPerSecond";
  r.ceiling = Rate(edges, parse_seconds);
  r.ceiling_definition =
      "read(2) of the same .e file in 1 MiB chunks and std::from_chars of each line's two integers, "
      "summed, 1 thread (best of 3 passes)";
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.target = "none: the batch path, beside evlpImportNewGraph";
  r.no_target = "no target: a comparison row";
  r.detail["importSeconds"] = Seconds(seconds);
  r.detail["openSeconds"] = Seconds(open_seconds);
  r.detail["closeSeconds"] = Seconds(close_seconds);
  r.detail["batches"] = Count(stats.batches, "Import reported no batches");
  ctx.progress.Note("batches " + r.value.dump() + " edges/s");
  return r;
}

// A row-format file pair (CSV or JSON Lines) into a new graph end to end, rows/s, beside a raw
// parse of the same bytes taking `ceiling_seconds`.
struct RowsShape {
  const char* figure;
  ReadShape read;  // the row of the sequential read of the same files
  DataFormat format;
  const char* graph_dir;
  const char* variant;  // after "<V> x 10; "
  const char* ceiling_definition;
  double target_rows_per_second;
  const char* target;
  const char* note;  // progress: "<note> <value> rows/s (<ceiling_note> <ceiling>)"
  const char* ceiling_note;
};

// The end-to-end row, then the sequential read of its files (taking `read_seconds`).
std::pair<ImportRow, ImportRow> RowsNewGraphRows(Context& ctx, const ImportInputs& in, const RowsShape& shape,
                                                 double read_seconds, double ceiling_seconds) {
  NewGraph g = BuildNewGraph(ctx, in, shape.graph_dir, shape.format);
  CloseNewGraph(ctx, g);
  const double total = g.import_seconds + g.open_seconds + g.close_seconds;
  const auto rows = static_cast<double>(in.vertices + in.edges);
  ImportRow r{shape.figure,
              std::to_string(in.vertices) + " x 10; " + shape.variant + "; ImportNewGraph + Open + Close"};
  r.elements = in.vertices + in.edges;
  r.threads = Threads(ctx, shape.format);
  r.value = Rate(rows, total);
  r.unit = "rowsPerSecond";
  r.ceiling = Rate(rows, ceiling_seconds);
  r.ceiling_definition = shape.ceiling_definition;
  r.ratio = Ratio(r.value, r.ceiling, "a side was not measured");
  r.target = shape.target;
  const double target = shape.target_rows_per_second;
  r.met = [target](double v, double) { return v >= target; };
  AddNewGraphDetail(in, g, &r);
  r.detail["inputMegabytesPerSecond"] = Rate(static_cast<double>(in.bytes) / 1e6, g.import_seconds);
  ctx.progress.Note(std::string(shape.note) + " " + r.value.dump() + " rows/s (" + shape.ceiling_note + " " +
                    r.ceiling.dump() + ")");
  return {std::move(r), SequentialReadRow(shape.read, in, read_seconds, g.import_seconds)};
}

// Each rows format's files are read sequentially right after they are written (page cache warm), as
// the EVLP files are, then parsed raw, then imported.
std::pair<ImportRow, ImportRow> CsvNewGraphRows(Context& ctx, const ImportInputs& in) {
  const double read_seconds = ReadInputSeconds(in);
  const double split_seconds = SplitCsvSeconds(in);
  return RowsNewGraphRows(ctx, in,
                          {"csvImportNewGraph",
                           {"csvSequentialRead", "vertices.csv and edges.csv", "csvImportNewGraph"},
                           DataFormat::kCsv,
                           "import-csv-graph",
                           "id:ID,name,age:int,score:double and :START_ID,:END_ID,:TYPE,since:int",
                           "read(2) of the same files in 1 MiB chunks counting ',' and '\\n' (the fields of "
                           "every line), 1 thread "
                           "(best of 3 passes)",
                           3e6,
                           ">= 3M rows/s, end to end",
                           "CSV",
                           "split"},
                          read_seconds, split_seconds);
}

std::pair<ImportRow, ImportRow> JsonLinesRows(Context& ctx, const ImportInputs& in) {
  const double read_seconds = ReadInputSeconds(in);
  const double parse_seconds = ParseJsonlSeconds(in);
  return RowsNewGraphRows(
      ctx, in,
      {"jsonlImport",
       {"jsonlSequentialRead", "vertices.jsonl and edges.jsonl", "jsonlImport"},
       DataFormat::kJsonl,
       "import-jsonl-graph",
       "the CSV rows as JSON objects (string ids, 3 vertex and 1 edge property)",
       "read(2) of the same files in 1 MiB chunks of whole lines and simdjson's on-demand document stream "
       "(iterate_many) over each, every member's value read, 1 thread (best of 3 passes)",
       2e6,
       ">= 2M rows/s, end to end",
       "JSON Lines",
       "simdjson"},
      read_seconds, parse_seconds);
}

double ShapeSeconds(std::uint64_t vertices, double per_edge_us) {
  return static_cast<double>(vertices * kImportOutDegree) * per_edge_us * 1e-6;
}

std::string EvlpStep(std::uint64_t v) { return "EVLP " + std::to_string(v) + " x 10: write, read, parse"; }

std::string WarmPassesStep() {
  return "ImportNewGraph, Open, Close: " + std::to_string(kEvlpWarmPasses) + " passes more";
}

}  // namespace

void PlanImport(Context& ctx) {
  const Profile& p = ctx.profile;
  // Time per edge, from quick runs on the 2-core development VM: writing the EVLP files and
  // the raw ceilings ~0.1 us; ImportNewGraph + Open + Close, both exports and their write ceilings
  // ~1 us; Import through batches ~1.5-2 us (and ~0.1 us more to write files of its own); the CSV
  // files, their split and their import ~1.3 us per edge (its vertex rows included).
  ctx.progress.Plan("import", EvlpStep(p.import_evlp_vertices), ShapeSeconds(p.import_evlp_vertices, 0.1));
  ctx.progress.Plan("import", "ImportNewGraph, Open, exports, Close",
                    ShapeSeconds(p.import_evlp_vertices, 1.0));
  // Each pass after the first ~0.08 us per edge (full profile, memory the machine backs).
  ctx.progress.Plan("import", WarmPassesStep(), ShapeSeconds(p.import_evlp_vertices, 0.08 * kEvlpWarmPasses));
  ctx.progress.Plan(
      "import", "Import through batches",
      ShapeSeconds(p.import_batch_vertices, p.import_batch_vertices == p.import_evlp_vertices ? 2.0 : 2.1));
  ctx.progress.Plan("import", "CSV " + std::to_string(p.import_csv_vertices) + " x 10",
                    ShapeSeconds(p.import_csv_vertices, 1.3));
  ctx.progress.Plan("import", "JSON Lines " + std::to_string(p.import_csv_vertices) + " x 10",
                    ShapeSeconds(p.import_csv_vertices, 1.5));
}

Json RunImport(Context& ctx) {
  const Profile& p = ctx.profile;
  ctx.progress.Start("import", EvlpStep(p.import_evlp_vertices));
  const ImportInputs evlp = WriteEvlpInputs(ctx.FreshDir("import-evlp"), p.import_evlp_vertices);
  const double read_seconds = ReadInputSeconds(evlp);
  const double parse_seconds = ParseEvlpSeconds(evlp);
  ctx.progress.Note("read " + std::to_string(static_cast<double>(evlp.bytes) / 1e6 / read_seconds) +
                    " MB/s, parse " + std::to_string(static_cast<double>(evlp.edges) / parse_seconds) +
                    " edges/s");

  ctx.progress.Start("import", "ImportNewGraph, Open, exports, Close");
  NewGraph first = BuildNewGraph(ctx, evlp, "import-evlp-graph", DataFormat::kEvlp);
  ImportRow peak = PeakResidentRow(ctx, evlp, first);
  ImportRow export_evlp = ExportRow(ctx, evlp, *first.graph, DataFormat::kEvlp);
  ImportRow export_csv = ExportRow(ctx, evlp, *first.graph, DataFormat::kCsv);
  CloseNewGraph(ctx, first);
  ctx.progress.Note("first pass " + std::to_string(static_cast<double>(evlp.edges) / TotalSeconds(first)) +
                    " edges/s");

  ctx.progress.Start("import", WarmPassesStep());
  std::vector<NewGraph> warm;
  for (int i = 0; i < kEvlpWarmPasses; ++i) {
    warm.push_back(BuildNewGraph(ctx, evlp, "import-evlp-graph", DataFormat::kEvlp));
    CloseNewGraph(ctx, warm.back());
    ctx.progress.Note("pass " + std::to_string(i + 2) + " " +
                      std::to_string(static_cast<double>(evlp.edges) / TotalSeconds(warm.back())) +
                      " edges/s");
  }
  ImportRow new_graph = EvlpNewGraphRow(ctx, evlp, first, warm, parse_seconds);
  ImportRow read = SequentialReadRow({"evlpSequentialRead", "graph.v and graph.e", "evlpImportNewGraph"},
                                     evlp, read_seconds, MedianPass(warm).import_seconds);
  ctx.progress.Note("ImportNewGraph + Open + Close " + new_graph.value.dump() + " edges/s (parse " +
                    new_graph.ceiling.dump() + ")");

  ctx.progress.Start("import", "Import through batches");
  ImportRow batches = [&] {
    if (p.import_batch_vertices == p.import_evlp_vertices) return EvlpBatchesRow(ctx, evlp, parse_seconds);
    ctx.RemoveDir(evlp.dir);
    const ImportInputs own = WriteEvlpInputs(ctx.FreshDir("import-evlp-batches"), p.import_batch_vertices);
    ImportRow r = EvlpBatchesRow(ctx, own, ParseEvlpSeconds(own));
    ctx.RemoveDir(own.dir);
    return r;
  }();
  ctx.RemoveDir(evlp.dir);

  ctx.progress.Start("import", "CSV " + std::to_string(p.import_csv_vertices) + " x 10");
  const ImportInputs csv = WriteCsvInputs(ctx.FreshDir("import-csv"), p.import_csv_vertices);
  auto [csv_row, csv_read] = CsvNewGraphRows(ctx, csv);
  ctx.RemoveDir(csv.dir);

  ctx.progress.Start("import", "JSON Lines " + std::to_string(p.import_csv_vertices) + " x 10");
  const ImportInputs jsonl = WriteJsonlInputs(ctx.FreshDir("import-jsonl"), p.import_csv_vertices);
  auto [jsonl_row, jsonl_read] = JsonLinesRows(ctx, jsonl);
  ctx.RemoveDir(jsonl.dir);
  ctx.progress.Done();

  Json out = Json::array();
  for (const ImportRow* r : {&new_graph, &read, &batches, &csv_row, &csv_read, &export_evlp, &export_csv,
                             &peak, &jsonl_row, &jsonl_read})
    out.push_back(ToJson(*r));
  return out;
}

}  // namespace quiver::capacity
