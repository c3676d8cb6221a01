// Bulk import and export: loading a graph from files and writing one out.
//
// Three formats (docs/import-export.md has the grammar and examples):
//  - CSV with typed headers in the convention of Neo4j's admin import.
//    Vertex files: an id column (`id:ID`, or `id:ID(Group)` for a separate
//    id space; a named id column is also stored as a string property of
//    that name, `:ID` is not stored), a `:LABEL` column, and typed
//    properties `name` (string), `age:int`, `score:double`,
//    `active:boolean`, `embedding:float[]` and `tags:string[]` (elements
//    separated by ImportOptions::array_delimiter, `;` by default; in a
//    string[] a backslash escapes the delimiter and itself), `blob:bytes`
//    (hex; a Quiver extension). Edge files: `:START_ID`, `:END_ID` (with the
//    same `(Group)` as the id they name), `:TYPE` and typed properties.
//    `:IGNORE` skips a column. Fields may be quoted ("..."), with doubled
//    quotes and embedded newlines; the delimiter is chosen. An unquoted
//    empty field leaves the property unset; a quoted empty field is an
//    empty string (or an empty vector, list or bytes value).
//  - LDBC Graphalytics EVLP: a `.v` file with one integer vertex id per
//    line and a `.e` file of `source target [weight]` lines, separated by
//    single spaces. Ids are kept as an int64 property (ImportOptions::
//    evlp_id_key), weights as a double property (evlp_weight_key). A
//    dataset may be named by its `.properties` file instead
//    (ImportSpec::graphalytics), which gives the files, the weight's name
//    and whether the graph is directed.
//  - JSON Lines: one JSON object per line. A vertex:
//    {"id": "p1", "label": "Person", "properties": {"name": "Ada", "age": 36}}
//    an edge: {"start": "p1", "end": "p2", "type": "KNOWS", "properties": {...}}.
//    "id" (optional) is a string or an integer, kept as a property
//    (ImportOptions::jsonl_id_key), all of one kind per file; "label" /
//    "type" default to the file's. Values: strings, integers (int64),
//    numbers with a fraction or exponent (double), booleans, null (unset),
//    arrays of numbers (float vectors; `[]` is an empty one), arrays of
//    strings (string lists), {"strings": [...]} (a string list, empty or
//    not) and {"bytes": "<hex>"}. Unknown members are an error. Parsed
//    with simdjson.
// Any file may be gzip-compressed (its first bytes gzip's magic): it is
// read through zlib, and positions are those of the decompressed text.
//
// Import is all-or-nothing against bad input: every file is parsed and
// every row validated (column counts, value types, UTF-8, duplicate ids,
// endpoints that name no imported vertex, ids already held by a vertex of
// the same label in the graph) before the first write, so a bad input
// changes nothing. The data is then written through large WriteBatches,
// several in flight so the writer groups them into few commits. With
// ImportOptions::atomic (the default) it is all-or-nothing against failed
// writes and crashes too: a failure midway removes what the import wrote,
// and a crash midway is undone by the next Graph::Open.
//
// Into a new graph, or a closed graph that has never held an element,
// ImportNewGraph is the fast path and is all-or-nothing in every case (an
// open graph, empty or not, takes Import's batches): it writes no batch
// and no log record, but the graph's next checkpoint, element by element
// as it reads the files, and Graph::Open loads that with the checkpoint
// loader's parallel build. A failure of any kind (bad input, an I/O error,
// a crash) leaves no graph, or the empty graph as it was.
//
// Vertices of an import can be referenced by edges of the same import
// only (through an in-memory map from external id to vertex id, built
// while importing), not by edges of a later import.
//
// Example:
//   quiver::ImportSpec spec;
//   spec.vertices = {{.path = "people.csv", .label = "Person"}};
//   spec.edges = {{.path = "knows.csv", .label = "KNOWS"}};
//   quiver::Result<quiver::ImportStats> r = quiver::Import(*graph, spec, {.create_id_indexes = true});
//   if (!r.ok()) std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
//   // "InvalidArgument: people.csv:7:12: 'abc' is not an int (column age)"
//   auto ada = graph->GetSnapshot().FindVertex("Person", "id", "p1");  // through the id index
//
//   quiver::Result<quiver::ExportStats> e = quiver::Export(graph->GetSnapshot(), "out/");
//
// Thread safety: Import may run while other threads read and write the
// graph; with ImportOptions::atomic their writes wait until it ends.
// Export reads one snapshot, so writes may continue while it runs.
#ifndef QUIVER_IMPORT_H_
#define QUIVER_IMPORT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/ids.h"
#include "quiver/status.h"

namespace quiver {

class Graph;
class Snapshot;

enum class DataFormat : std::uint8_t {
  kCsv = 0,    // Neo4j-style typed CSV
  kEvlp = 1,   // LDBC Graphalytics .v / .e
  kJsonl = 2,  // JSON Lines: one JSON object per vertex or edge
};

// One input file. `label` is the default label (vertex files) or edge type
// (edge files) of rows that have no `:LABEL` / `:TYPE` column or leave it
// empty; EVLP files have no such column, so it names them all.
//   quiver::ImportFile f{.path = "data/example-directed.v", .label = "V"};
//
// `header` (CSV only): a file whose first record is this file's header, as
// Neo4j's `header.csv,part1.csv,part2.csv`; `path` then has no header line
// and every record of it is a row (an empty `path` is no rows). The header
// file's other records, if any, are not read. Errors in the header name the
// header file. Empty (default): the first record of `path` is its header.
//   spec.vertices = {{.path = "people-1.csv", .label = "Person", .header = "people-header.csv"},
//                    {.path = "people-2.csv", .label = "Person", .header = "people-header.csv"}};
struct ImportFile {
  std::string path{};
  std::string label{};
  std::string header{};
};

// An LDBC Graphalytics dataset, named by its `NAME.properties` file (EVLP
// only). The import reads the file first and takes from it the vertex and
// edge files (`graph.NAME.vertex-file`, `.edge-file`, relative to its
// directory), whether the graph is directed (`graph.NAME.directed`) and the
// edge property (`graph.NAME.edge-properties.names` / `.types`: at most
// one, of type `real`), which it keeps under that name, in place of
// ImportOptions::evlp_weight_key; the edge file must then have as many
// columns as the file declares. An undirected graph's edges are imported
// as listed, each as one Quiver edge (ImportStats::directed says which it
// was; project it with undirected = true). Other keys (meta.*, algorithm
// parameters) are not read.
//   spec.graphalytics = {.properties = "data/example-directed.properties"};
struct GraphalyticsDataset {
  std::string properties{};  // empty (default): no dataset
  std::string vertex_label = "Vertex";
  std::string edge_type = "EDGE";
};

// What to import: vertex files first (in order), then edge files. A
// Graphalytics dataset's vertex file comes after `vertices`, its edge file
// after `edges`.
struct ImportSpec {
  std::vector<ImportFile> vertices{};
  std::vector<ImportFile> edges{};
  GraphalyticsDataset graphalytics{};
};

// How far an import is (ImportOptions::progress). An import reads its
// files twice: phase "checking" validates every row, phase "loading" writes
// them; in each, bytes_done counts from 0 to bytes_total, the input files'
// sizes together, and rows_done from 0 up: the rows of every file handled
// so far in the phase (read while checking; while loading, rows the
// checking rejected may be left out). rows_done never goes down within a
// phase; there is no rows total (the files are not counted ahead).
struct ImportProgress {
  std::string_view phase{};
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t rows_done = 0;
};

struct ImportOptions {
  DataFormat format = DataFormat::kCsv;
  // CSV field delimiter (not '"', '\n' or '\r'). Default ','.
  char delimiter = ',';
  // CSV: the separator of float[] and string[] elements, as Neo4j's
  // --array-delimiter: an ASCII punctuation character other than a
  // backslash, '.', '+' and '-'; it may equal `delimiter` (such fields are
  // then quoted). In a string[] field a backslash escapes the delimiter and
  // itself; before anything else it is kept. Default ';'.
  char array_delimiter = ';';
  // EVLP: the int64 property that keeps each vertex's id (empty: not kept),
  // and the double property that keeps an edge's weight. Defaults "id",
  // "weight".
  std::string evlp_id_key = "id";
  std::string evlp_weight_key = "weight";
  // JSON Lines: the property that keeps a vertex's "id" (empty: not kept).
  // Default "id".
  std::string jsonl_id_key = "id";
  // Create a unique index on (label, id key) for every label whose vertex
  // file has a named id column (EVLP: evlp_id_key), before writing, unless a
  // ready unique index on exactly that key exists; it is named
  // "<label>.<key>". Then Snapshot::FindVertex(label, key, id) resolves
  // external ids. Default false.
  bool create_id_indexes = false;
  // Rows that may be rejected: 0 (default) fails the import on the first
  // bad row; N imports the rest as long as at most N rows are bad
  // (ImportStats::rejected lists them). Errors of a whole file (missing,
  // empty, bad header, broken quoting) are never skipped.
  std::size_t skip_bad_rows = 0;
  // With skip_bad_rows: a file to write the rejected rows to, as CSV with
  // columns file,line,column,reason,row (empty: not written). Written
  // after validation, before the first write; an existing file is replaced.
  std::string reject_report{};
  // Operations per WriteBatch (an element with k properties counts 1 + k).
  // Larger batches commit faster; each holds its rows in memory. Default
  // 200,000; at least 1.
  std::size_t batch_ops = 200'000;
  // Batches in flight at once (the writer groups them into one commit).
  // Default 4; at least 1.
  std::size_t batches_in_flight = 4;
  // Threads that parse one file, the calling thread included; 0 (default)
  // uses every core. Files of every format are parsed in parallel, cut into
  // blocks of whole records (CSV only where quotes allow); a vertex file's
  // records then enter the id map on the calling thread, in input order.
  // A gzip file is read by one thread (a gzip stream cannot be cut). The
  // result does not depend on the number.
  std::uint32_t threads = 0;
  // Called as the import goes: at the start of each phase, every 65,536
  // rows or 4 MiB block of a file, and at the end of each file; on the
  // calling thread, never concurrently. Keep it cheap; it must not call
  // into the graph being imported into. Empty (default): not called.
  std::function<void(const ImportProgress&)> progress{};
  // Import into an existing graph (not ImportNewGraph): all-or-nothing in
  // every case (default true). Other threads' writes that change data, and
  // Backups, wait until the import ends; readers see its batches as they
  // commit. If any write fails, everything the import wrote is removed
  // again (its vertices, its edges, the indexes it created) before Import
  // returns; if the process dies midway, the next Graph::Open removes it
  // (a rollback record in the graph's directory, docs/directory.md, says
  // what). Ids the import took are not reused. False: the batches are
  // ordinary writes that other writers interleave with, and those
  // committed before a failure stay.
  bool atomic = true;
};

// One bad row (or file): where and why. line and column count from 1 (the
// column in bytes); both are 0 for an error of a whole file (missing).
struct ImportRowError {
  std::string file{};
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  std::string reason{};
};

// What an import did.
struct ImportStats {
  std::uint64_t vertices = 0;  // vertices written
  std::uint64_t edges = 0;     // edges written
  std::uint64_t batches = 0;   // WriteBatches committed (0 for ImportNewGraph)
  // ImportNewGraph: the size of the checkpoint it wrote, in bytes.
  std::uint64_t checkpoint_bytes = 0;
  // The rows skipped under ImportOptions::skip_bad_rows, in input order.
  std::vector<ImportRowError> rejected{};
  // Indexes the import created (create_id_indexes).
  std::vector<std::string> indexes_created{};
  // With ImportSpec::graphalytics: whether its .properties says the graph
  // is directed. True otherwise.
  bool directed = true;
};

// Imports `spec` into `graph` (which may already hold data). Errors, all
// with nothing written, their message starting "<file>:<line>:<column>: ":
// NotFound for a missing file (line and column 0); InvalidArgument for
// malformed input (an empty file, a bad header, an unterminated quote, a
// wrong column count, a value that is not of its column's type, invalid
// UTF-8, a duplicate id, an edge endpoint no imported vertex has, a vertex
// with more than one label); Unimplemented for a header type Quiver has no
// value for (`int[]`, `boolean[]`, `date`, `point`, ...); more than
// skip_bad_rows bad rows. A bad Graphalytics .properties file: NotFound
// for it or a file it names, InvalidArgument (Unimplemented for what Quiver
// cannot keep: several edge properties, vertex properties) at its line for
// a bad value, without a line for a missing key. InvalidArgument without a
// position for bad options. A failed CreateIndex (existing vertices violate it) is returned
// as is, with the indexes this import created dropped again. A failed
// write returns that write's status, its message prefixed with how many
// batches had committed before it (undone with ImportOptions::atomic,
// else they stay); DurabilityUnknown if the import committed but its
// rollback record could not be removed (the next Open may undo it).
//
// Example:
//   quiver::ImportSpec spec{.vertices = {{"g.v", "V"}}, .edges = {{"g.e", "E"}}};
//   auto stats = quiver::Import(*graph, spec, {.format = quiver::DataFormat::kEvlp}).value();
Result<ImportStats> Import(Graph& graph, const ImportSpec& spec, const ImportOptions& options = {});

// Builds a new durable graph in directory `dir` (created if missing; an
// existing one must be empty, or hold an empty graph: below) holding
// exactly what `spec`'s files hold,
// without going through a writer: the rows are validated as Import does
// (every error above, at the same positions), then encoded straight into
// the graph's first checkpoint (sequence 1; vertex ids in input order,
// vertex files first; edge ids likewise), followed by the identity file.
// Open it with Graph::Open afterwards; the id indexes (create_id_indexes)
// are declared in the checkpoint and built when it loads. batch_ops and
// batches_in_flight are not used.
//
// Into an empty graph: `dir` may hold a closed durable graph that has
// never held an element (a graph just created by Graph::Open, or one that
// only ever interned names), declares no index and has no import cut short
// to undo. It is read as a read-only Open reads it (refused as that
// refuses), before the files are read and again under its LOCK, and the
// import is written as its next checkpoint (its last sequence + 1, under
// its graph id); once that is durable its older checkpoints and its log
// are removed, so the directory holds what a new graph's import leaves
// (the next Open starts the log after the import). Its identity file
// stays; its interned names are not kept. A graph that holds or held
// elements, or declares an index, is FailedPrecondition, changed in
// nothing: import into it with Import. Reading it costs what a read-only
// Open of it costs.
//
// All-or-nothing: on any error, every file it wrote is removed again (a
// directory it created stays, holding at most LOCK) and that removal is
// synced (best effort), and a
// crash at any point leaves either no graph (an empty directory, or only
// LOCK and a `.tmp` file: run the import again; into an empty graph, that
// graph as it was) or the whole import. It
// holds the directory's LOCK while it writes, so a Graph::Open of it
// meanwhile is refused (and it waits for no writer: FailedPrecondition
// while one has the graph open). FailedPrecondition if `dir` holds anything
// but lost+found and what an import cut short leaves (LOCK, its `.tmp`
// files), unless it holds an empty graph (above); AlreadyExists if two id
// indexes would get one name; InvalidArgument if one label's ids kept under
// one key have two types (with create_id_indexes), or if a vertex holds its
// label's id key from an ordinary column while that key keeps ids from
// another file; ResourceExhausted for more than 2^32 - 3 vertices. Not
// checked here, unlike a WriteBatch: Options::limits (a 16 MiB string
// loads as it is).
//
// Example:
//   quiver::ImportSpec spec{.vertices = {{"g.v", "V"}}, .edges = {{"g.e", "E"}}};
//   quiver::ImportOptions o{.format = quiver::DataFormat::kEvlp, .create_id_indexes = true};
//   quiver::ImportStats stats = quiver::ImportNewGraph("graph-dir", spec, o).value();
//   auto graph = quiver::Graph::Open(quiver::Options{}, "graph-dir").value();
//   auto v = graph->GetSnapshot().FindVertex("V", "id", std::int64_t{42});
Result<ImportStats> ImportNewGraph(std::string_view dir, const ImportSpec& spec,
                                   const ImportOptions& options = {});

// How far an export is (ExportOptions::progress). It writes two files, the
// vertices' then the edges': phase "vertices" or "edges". rows_done counts
// the rows of that file written so far, from 0 to rows_total (the live
// vertices or edges); bytes_written the bytes of those rows (not a CSV
// header line). Neither goes down within a phase.
struct ExportProgress {
  std::string_view phase{};
  std::uint64_t rows_done = 0;
  std::uint64_t rows_total = 0;
  std::uint64_t bytes_written = 0;
};

struct ExportOptions {
  DataFormat format = DataFormat::kCsv;
  // CSV field delimiter. Default ','.
  char delimiter = ',';
  // CSV: the separator of float[] and string[] elements, by the rule of
  // ImportOptions::array_delimiter. A backslash or the delimiter in a
  // string-list element is written escaped (preceded by a backslash), so
  // the element reads back exactly. Default ';'.
  char array_delimiter = ';';
  // EVLP: if every vertex holds an int64 `evlp_id_key` property and no two
  // hold the same, those are the ids written; else the Quiver vertex ids
  // are. An edge's weight is written if every edge holds a number under
  // `evlp_weight_key`.
  std::string evlp_id_key = "id";
  std::string evlp_weight_key = "weight";
  // JSON Lines: if every vertex holds `jsonl_id_key`, all as int64 or all
  // as strings, and no two the same, those are the "id"s written (and the
  // key is not repeated among the properties); else the Quiver vertex ids
  // are. Empty: always the Quiver ids. Default "id".
  std::string jsonl_id_key = "id";
  // Threads that format one file, the calling thread included; 0 (default)
  // uses one per core, at most 8. The files are the same, byte for byte,
  // for every number: workers format chunks of 4,096 element ids and the
  // text reaches the file in id order. Memory for the text in flight is
  // bounded whatever the rows hold: about 2 MiB per thread plus one row,
  // and 16 MiB of finished chunks waiting. At most kMaxExportThreads.
  std::uint32_t threads = 0;
  // Called as each file is written: once at its start, after each chunk of
  // ids the calling thread formats (it is one of the threads; the counts
  // include every thread's chunks), and once at its end (rows_done ==
  // rows_total); on the calling thread, never concurrently. Keep it cheap.
  // Empty (default): not called.
  std::function<void(const ExportProgress&)> progress{};
};

// The largest ExportOptions::threads.
inline constexpr std::uint32_t kMaxExportThreads = 1024;

// What an export wrote.
struct ExportStats {
  std::uint64_t vertices = 0;
  std::uint64_t edges = 0;
  std::vector<std::string> files{};  // the paths written
};

// Writes the graph as `snapshot` sees it into directory `dir` (created if
// missing): CSV as vertices.csv and edges.csv, whose `:ID` / `:START_ID` /
// `:END_ID` columns hold Quiver vertex ids and whose other columns are
// every (property key, type) pair in use, so importing them into an empty
// graph (with the same delimiters) gives an identical graph (null-valued
// properties are written as unset); FailedPrecondition, naming the element
// and key, for a string list of one empty string, whose CSV text would read
// back as the empty list (JSON Lines writes it). CSV and JSON Lines answer
// FailedPrecondition for a string list longer than the default
// Limits::max_list_elements (a graph opened with a higher limit can hold
// one), which no import reads back; CSV also for a vertex label holding
// ';', which CSV import reads as a second label. EVLP as graph.v and graph.e (ids as ExportOptions says;
// labels, types and other properties are not kept). JSON Lines as vertices.jsonl and edges.jsonl, one object
// per element with every property (ids as ExportOptions::jsonl_id_key says), so importing them with the same
// jsonl_id_key gives an identical graph when the ids came from that key
// (else import with jsonl_id_key empty). Writes may continue
// while it runs: it reads only the snapshot. AlreadyExists if an output
// file exists (nothing is overwritten); the I/O status otherwise (files
// written so far are removed, best effort).
//
// Example:
//   quiver::Snapshot snap = graph->GetSnapshot();
//   quiver::ExportStats s = quiver::Export(snap, "backup-csv").value();  // s.files[0]: ".../vertices.csv"
Result<ExportStats> Export(const Snapshot& snapshot, std::string_view dir, const ExportOptions& options = {});

}  // namespace quiver

#endif  // QUIVER_IMPORT_H_
