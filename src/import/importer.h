// Importer: runs one quiver::Import (include/quiver/import.h) against a
// FileSystem, in two passes over the input files.
//
//  1. Validate: parse every file and build every row (RowBuilder), fill the
//     id map (external id -> entry, per id space), resolve every edge
//     endpoint through it, and check the ids against vertices already in
//     the graph. Bad rows are rejected (and remembered by line) up to
//     ImportOptions::skip_bad_rows; one more fails the import. Nothing has
//     been written yet.
//  2. Write: create the id indexes asked for, then parse the files again,
//     skip the rejected rows and add the others to WriteBatches of about
//     batch_ops operations, several in flight (WriteAsync) so the writer
//     groups them. Vertex batches commit before the first edge batch; each
//     vertex's committed id goes into its id-map entry, where edges find it.
//
// Into a new graph (the bulk path, bulk_writer.cc), pass 2 writes no
// batches: it encodes every row straight into the new graph's first
// checkpoint (checkpoint::WriteCheckpointFile, ElementStream), with vertex
// ids given in input order, then writes the identity file. Pass 1 also
// collects the labels, types and keys (the checkpoint's names come before
// its elements) and counts the rows (its header holds the id limits).
// Nothing is acknowledged before the identity file is durable, and every
// failure removes what was written: all-or-nothing.
//
// A file other than gzip is cut into blocks parsed on ImportOptions::threads
// threads (parallel_input.cc, parallel_vertices.cc); whatever depends on
// input order (the id map's insertions, rejections, names) is done in
// block order on the calling thread, so the result is one thread's. An
// ImportSpec::graphalytics dataset's .properties is read first and its
// files added to the spec (graphalytics_properties.h).
//
// Memory: the id map (one entry, about 100 bytes, more for ids longer than
// 15 bytes, per vertex with an id), the batches in flight, and one 1 MiB read
// buffer, or two blocks per thread (4 MiB each, and a vertex block's
// parsed records); the input is never held whole. Parsing twice trades CPU
// for that bound.
//
// Example:
//   Importer importer(env::PosixFileSystem(), *graph, spec, options);
//   Result<ImportStats> stats = importer.Run();
//   Importer bulk(env::PosixFileSystem(), std::string("new-graph"), spec, options);
//   stats = bulk.Run();  // then Graph::Open(options, "new-graph")
#ifndef QUIVER_IMPORT_IMPORTER_H_
#define QUIVER_IMPORT_IMPORTER_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/safe_hash.h"
#include "base/strings.h"
#include "checkpoint/checkpoint_writer.h"
#include "checkpoint/chunk_encoder.h"
#include "env/file_system.h"
#include "graph_dir.h"
#include "import/csv_reader.h"
#include "import/csv_schema.h"
#include "import/graphalytics_properties.h"
#include "import/id_map.h"
#include "import/input_blocks.h"
#include "import/row_builder.h"
#include "index/catalog.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver::import {

// The lines pass 1 rejected in one file (ascending), walked forward from
// `from`: Skip(line) is true for a rejected line. Ask in ascending order.
class RejectedLines {
 public:
  RejectedLines(std::span<const std::uint64_t> lines, std::uint64_t from)
      : next_(std::lower_bound(lines.begin(), lines.end(), from)), end_(lines.end()) {}
  bool Skip(std::uint64_t line) {
    while (next_ != end_ && *next_ < line) ++next_;
    return next_ != end_ && *next_ == line;
  }

 private:
  std::span<const std::uint64_t>::iterator next_;
  std::span<const std::uint64_t>::iterator end_;
};

// ResourceExhausted, built as the library loads (giving it allocates nothing).
const Status& ImportOutOfMemory();

class Importer {
 public:
  // Imports into `graph`, through its writer. `spec` is copied; `options`
  // (and `graph`) must outlive the importer.
  Importer(env::FileSystem* fs, Graph& graph, const ImportSpec& spec, const ImportOptions& options);
  // Builds a new graph in `new_dir`, which must not exist or be empty.
  Importer(env::FileSystem* fs, std::string new_dir, const ImportSpec& spec, const ImportOptions& options);
  Result<ImportStats> Run();

  // Input bytes per block of a file parsed in parallel (tests cut small
  // files into many blocks).
  void SetBlockBytesForTesting(std::uint64_t bytes) { block_bytes_ = bytes; }
  // The id map of an id space (group), null if none (tests).
  const IdMap* IdMapForTesting(std::string_view group) const { return FindSpace(group); }

 private:
  // One input file, open for a pass.
  struct Input {
    std::size_t index = 0;   // the file's
    std::uint64_t rows = 0;  // read so far (for progress)
    std::unique_ptr<CsvReader> reader;
    Schema schema;
    bool first_is_data = false;  // EVLP, JSON Lines: the record read to learn the schema is a row
    bool first_taken = false;
    // Where the rows start: past a CSV header line, else the file's start.
    std::uint64_t rows_offset = 0;
    std::uint64_t rows_line = 1;
  };
  // The vertices of one label whose ids share an id space and a key.
  struct IdSpace {
    std::string label;
    std::string key;  // the id property, "" if the id is not kept
    std::string group;
    FieldType type = FieldType::kString;
  };
  struct IdEntry {
    std::uint64_t record_line = 0;  // where the record starts (to skip it in pass 2)
    std::uint64_t line = 0;         // where the id field is
    std::uint64_t column = 0;
    std::uint32_t file = 0;
    std::uint32_t space = 0;
    bool rejected = false;
    std::uint64_t ordinal = 0;  // the record's place among every vertex record read, from 0
    VertexId vertex;            // set when its batch commits
  };
  static constexpr std::uint32_t kNoEntry = IdMap::kNone;
  static constexpr const char* kNewGraphRule =
      "a new graph is imported into a new or empty directory, or into an empty graph";
  // What a new graph's directory may hold: what an import cut short by a
  // crash leaves (LOCK, its checkpoint's and identity file's .tmp), and
  // lost+found. Not another writer's leftovers (a Backup's checkpoint).
  static std::vector<std::string> NewGraphLeftovers();
  // What an id map holds for a rejected vertex's id once pass 1 is done.
  static constexpr std::uint32_t kRejectedEntry = IdMap::kRejected;

  Result<ImportStats> RunUnguarded();
  // Reads ImportSpec::graphalytics and adds its files to spec_.
  Status AddGraphalyticsDataset();
  // The schema of EVLP file `index`, whose first line has `columns` fields.
  Result<Schema> EvlpSchemaOf(std::size_t index, const CsvReader& first) const;
  // Whether two paths name one file (as given, or resolved by RealPath).
  bool SameFile(const std::string& a, const std::string& b) const;
  // ImportOptions::progress: a phase starts (at byte 0, row 0); file
  // `index` is read up to `offset`, and `rows` of its rows are handled in
  // this phase.
  void StartProgress(std::string_view phase);
  void ReportProgress(std::size_t index, std::uint64_t offset, std::uint64_t rows);
  const ImportFile& FileAt(std::size_t index) const;
  FileKind KindAt(std::size_t index) const;
  std::size_t FileCount() const { return spec_.vertices.size() + spec_.edges.size(); }
  Result<Input> OpenInput(std::size_t index);
  // Reads the next row of `in`; false at the end.
  Result<bool> NextRow(Input* in);
  // Pass 2's walk of file `index`: calls f(reader, row, schema) for every
  // row pass 1 accepted, in order, built as pass 1 built it (a row that no
  // longer builds: the file changed). Stops at f's first error.
  template <typename F>
  Status ForEachAcceptedRow(std::size_t index, F f) {
    QUIVER_ASSIGN_OR_RETURN(Input in, OpenInput(index));
    RowBuilder builder(in.schema, FileAt(index).label);
    const std::vector<std::uint64_t>& rejected = rejected_lines_[index];
    std::size_t next_rejected = 0;
    Row row;
    RowIssue issue;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(bool more, NextRow(&in));
      if (!more) return Status::Ok();
      const CsvReader& r = *in.reader;
      if (next_rejected < rejected.size() && rejected[next_rejected] == r.line()) {
        ++next_rejected;
        continue;
      }
      if (!builder.Build(r, &row, &issue)) return FileChanged(r, issue.reason);
      QUIVER_RETURN_IF_ERROR(f(r, row, in.schema));
    }
  }

  // Pass 2's generic path over `text`, lines of `path` from `first_line`
  // on: calls f(reader, row) for every record on a line `skip` does not
  // name, built as pass 1 built it (a row that no longer builds: the file
  // changed). Stops at f's first error.
  template <typename Skip, typename F>
  Status ForEachRecordIn(const std::string& path, std::string_view text, std::uint64_t first_line,
                         RowBuilder& builder, Row* row, Skip skip, F f) const {
    std::unique_ptr<CsvReader> reader = CsvReader::OverBytes(path, text, DialectOf(), first_line);
    RowIssue issue;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(bool more, reader->Next());
      if (!more) return Status::Ok();
      const CsvReader& r = *reader;
      if (skip(r.line())) continue;
      if (!builder.Build(r, row, &issue)) return FileChanged(r, issue.reason);
      QUIVER_RETURN_IF_ERROR(f(r, *row));
    }
  }

  // Pass 1.
  Status Validate();
  // The bulk path's vertex id of each entry: its record's place among the
  // vertex records that are not rejected.
  Result<std::vector<std::uint32_t>> BulkVertexIds();
  Status ValidateFile(std::size_t index);
  Status ValidateVertex(std::size_t index, const CsvReader& r, const Schema& schema, Row* row);
  // What pass 1 needs of a vertex record that built.
  struct VertexFacts {
    std::uint64_t record_line = 0;
    std::string_view raw;
    std::string_view label;
    std::span<const std::string_view> keys;  // its properties' (read with create_id_indexes only)
    const ExternalId* id = nullptr;          // null: no id
    std::uint64_t id_line = 0;               // where the id field is
    std::uint64_t id_column = 0;
  };
  // ValidateVertex's work, on one thread in input order: the ordinary keys,
  // the id space, the id map (or the record's rejection).
  Status AddVertex(std::size_t index, const VertexFacts& v, const Schema& schema);
  Status ValidateEdge(std::size_t index, const CsvReader& r, const Row& row);
  // Adds a vertex record's id to insert_map_ (in id space `space`), or
  // rejects the record if the id is there.
  Status AddId(std::size_t index, std::uint64_t record_line, std::uint64_t line, std::uint64_t column,
               const ExternalId& id, std::uint32_t space, std::string_view raw);
  // Whether file `index` is an EVLP vertex file whose plain lines may skip
  // the generic reader (fast_lines.h), in pass 1 and on the bulk path's
  // pass 2; and those passes.
  bool FastVerticesOk(std::size_t index) const;
  Status ValidateVerticesFast(std::size_t index);
  // Pass 1 of vertex file `index`, read up to `bytes_done` (of
  // vertex_file_bytes_): tells the id map being filled how many ids to
  // expect, every kHintRows rows (IdMap::SetSizeHint), so that sparse
  // numeric ids leave its direct array early.
  void RefineIdHint(std::size_t index, std::uint64_t bytes_done);
  static constexpr std::uint64_t kHintRows = 4096;
  // Pass 1's work for the record `r` holds (counted, built, validated):
  // false if it was rejected.
  Result<bool> ValidateRow(std::size_t index, const CsvReader& r, const Schema& schema, RowBuilder& builder,
                           Row* row);
  Status CheckIdsAcrossSpaces();
  // Pass 1, with create_id_indexes: no vertex holds its label's id key
  // from an ordinary column (ordinary_keys_), on both paths alike.
  Status CheckOrdinaryIdKeys() const;
  Status CheckExistingIds();
  Status Reject(std::size_t file, std::uint64_t record_line, std::uint64_t line, std::uint64_t column,
                std::string reason, std::string_view raw);
  // The id space of a vertex row with an id; kNoEntry, with `*clash` set to
  // the space it would join, if that space keeps its ids under the same key
  // as another type.
  std::uint32_t SpaceOf(std::string_view label, const Schema& schema, const IdSpace** clash);
  // The last id map found, per thread: the ids of a file are nearly always
  // of one group.
  struct SpaceCache {
    const IdMap* map = nullptr;
    std::string group;
  };
  // The id-map entry of an id, kNoEntry if unknown. Thread-safe once
  // every vertex is in, each thread with its own cache.
  std::uint32_t Find(const ExternalId& id, SpaceCache* cache) const;
  std::uint32_t Find(const ExternalId& id) { return Find(id, &cache_); }
  // Whether both endpoints of an edge row are imported vertices; else the
  // issue to reject the row with.
  bool EndpointsKnown(const Row& row, SpaceCache* cache, RowIssue* issue) const;
  Status WriteReport();

  // Names interned in pass 1 for the bulk path, in id order.
  struct NameTable {
    absl::flat_hash_map<std::string, std::uint32_t, base::StringHash, base::StringEq> ids;
    std::vector<std::string> names;
    std::uint32_t Intern(std::string_view name);
  };
  bool bulk() const { return graph_ == nullptr; }
  void InternNames(FileKind kind, const Row& row);

  // Parallel parsing of one file (parallel_input.cc, parallel_vertices.cc):
  // edge and vertex files of every format but gzip, cut into blocks of
  // whole records, on ImportOptions::threads threads.
  struct PlannedBlock {
    InputBlock block;
    std::uint64_t first_line = 0;
    std::uint64_t edges = 0;  // edge files: rows accepted in pass 1
    std::uint64_t rows = 0;   // vertex files: records read in pass 1 (some rejected later)
  };
  unsigned Threads() const;
  // Whether an EVLP edge file's plain lines may skip the generic reader.
  bool FastEdgesOk(const Schema& schema) const;
  // The id map of `group`, null if none.
  const IdMap* FindSpace(std::string_view group) const;
  // InternalError "<path>:<line>: the file changed during the import: <what>".
  Status FileChanged(const CsvReader& r, std::string_view what) const;
  bool Splittable(std::size_t index) const;
  CsvDialect DialectOf() const;
  Status ValidateFileParallel(std::size_t index);
  Status BulkWriteEdgesParallel(std::size_t index, checkpoint::CheckpointSink& sink, std::uint64_t first_id);
  // Vertex files in parallel (parallel_vertices.cc): pass 1 parses the
  // blocks on the workers and adds their records to the id map on the
  // calling thread, in input order; the bulk path's pass 2 encodes the
  // blocks from vertex `first_id` on and returns the id after the file's.
  Status ValidateVerticesParallel(std::size_t index);
  Result<std::uint64_t> BulkWriteVerticesParallel(std::size_t index, checkpoint::CheckpointSink& sink,
                                                  std::uint64_t first_id);
  // The edge of a valid row, with its properties' key ids (sorted) in
  // `props`; InternalError if the row is not what pass 1 saw.
  struct EdgeRow {
    std::uint32_t type;
    std::uint32_t source;
    std::uint32_t target;
  };
  Result<EdgeRow> ResolveEdge(const CsvReader& r, const Row& row, SpaceCache* cache,
                              std::vector<checkpoint::KeyedValue>* props) const;
  Status ResolveKeys(const CsvReader& r, const Row& row, std::vector<checkpoint::KeyedValue>* props) const;

  // Pass 2 into a new graph (bulk_writer.cc).
  Status BulkWrite();
  Status BulkWriteFile(std::size_t index, class BulkSink& out);
  // One vertex row of the generic path into the checkpoint.
  Status BulkVertex(std::size_t index, const CsvReader& r, const Row& row, const Schema& schema,
                    BulkSink& out, std::vector<checkpoint::KeyedValue>* props);
  Status BulkWriteVerticesFast(std::size_t index, BulkSink& out);
  // BulkVertex's checks (the file unchanged since pass 1, the row's id
  // mapped to vertex `id`, the id keys' owners): the label's id, with the
  // properties' key ids in `props`. Thread-safe, each thread with its cache.
  Result<std::uint32_t> ResolveVertex(std::size_t index, const CsvReader& r, const Row& row,
                                      const Schema& schema, std::uint64_t id, SpaceCache* cache,
                                      std::vector<checkpoint::KeyedValue>* props) const;
  Status PlanIdIndexes(std::uint64_t sequence);
  // The bulk path's directory: missing, empty (but for NewGraphLeftovers)
  // or holding a graph (read by ReadEmptyGraph under LOCK); else
  // FailedPrecondition.
  Status CheckBulkTarget();
  // An existing graph the bulk path may replace: its id and last sequence.
  struct EmptyGraph {
    std::array<std::uint8_t, 16> uuid{};
    std::uint64_t sequence = 0;
  };
  Result<EmptyGraph> ReadEmptyGraph(const graphdir::DirState& state);
  void RemoveEmptyGraphFiles(std::uint64_t sequence);
  Status CheckIdKeyOwner(std::size_t index, const CsvReader& r, std::uint32_t label, const Schema& schema,
                         const Row& row, std::span<const checkpoint::KeyedValue> props) const;

  // A file about to be parsed in blocks (parallel_input.cc): its schema,
  // where its rows start, and its blocks of whole records; sets
  // planned_end_[index].
  struct PlannedFile {
    Schema schema;
    std::uint64_t start = 0;  // past a CSV header line
    std::uint64_t rows_line = 1;
    std::vector<InputBlock> blocks;
  };
  Result<PlannedFile> PlanFileBlocks(std::size_t index);

  // Pass 2 (import_writer.cc).
  // Pass 2 into an existing graph: with ImportOptions::atomic inside an
  // import span (GraphImpl::BeginImport / EndImport), undone whole if any
  // write fails.
  Status WriteIntoGraph();
  // The names of the id indexes CreateIndexes may create.
  std::vector<std::string> IdIndexNames() const;
  Status CreateIndexes();
  Status DropCreatedIndexes();
  Status WriteAll();
  Status WriteFile(std::size_t index);
  Status Submit();
  Status WaitOldest();
  Status DrainAll();

  env::FileSystem* fs_;
  Graph* graph_ = nullptr;  // null: the bulk path into new_dir_
  std::string new_dir_;
  ImportSpec spec_;  // a copy: a Graphalytics dataset's files are added to it
  const ImportOptions& options_;
  // ImportSpec::graphalytics, once read, and the index of its edge file
  // (SIZE_MAX if none).
  std::optional<GraphalyticsProperties> dataset_;
  std::size_t dataset_edges_ = SIZE_MAX;
  ImportStats stats_;

  base::SafeFlatHashMap<std::string, IdMap, base::StringHash, base::StringEq> ids_;  // group -> id -> entry
  SpaceCache cache_;                                                                 // the calling thread's
  // Pass 1's vertex rows: the last id map inserted into (a new map may
  // move the others: then null) and its group, and the last id space.
  IdMap* insert_map_ = nullptr;
  std::string insert_group_;
  std::uint32_t last_space_ = 0;
  std::uint64_t vertex_file_bytes_ = 0;  // the size of the vertex file opened last (OpenInput)
  bool vertex_file_compressed_ = false;  // and whether it is gzip
  std::vector<IdEntry> entries_;
  std::vector<std::string_view> key_views_;  // ValidateVertex's, reused
  std::vector<IdSpace> spaces_;
  // With create_id_indexes: the first vertex row, per (label, key), that
  // holds the key from an ordinary column (not as its own kept id); a key
  // that keeps a label's ids must not (the unique index would not build).
  struct OrdinaryKey {
    std::uint32_t file;
    std::uint64_t line;
  };
  absl::flat_hash_map<std::string, OrdinaryKey> ordinary_keys_;  // "<label>\0<key>"
  std::vector<std::vector<std::uint64_t>> rejected_lines_;       // per file, record start lines, sorted
  std::vector<std::string> rejected_raw_;                        // per stats_.rejected entry
  std::vector<std::uint64_t> rows_;                              // per file, records read in pass 1
  NameTable labels_, types_, keys_;                              // bulk path only
  std::vector<std::vector<PlannedBlock>> planned_;               // per file, if parsed in parallel
  std::vector<std::uint64_t> planned_end_;                       // per such file, the end of its plan
  // Input bytes per block: enough to amortise a block's set-up, few enough
  // that the window (two blocks per thread) stays a few tens of MiB.
  std::uint64_t block_bytes_ = std::uint64_t{4} << 20;
  // ImportOptions::progress: the files' sizes before each file (and their
  // total last), and the phase being reported.
  std::vector<std::uint64_t> progress_bases_;
  std::string_view progress_phase_;
  std::vector<std::uint64_t> progress_file_rows_;  // per file, its rows reported in this phase
  std::uint64_t progress_rows_ = 0;                // their sum
  std::vector<index::PropertyIndex> id_indexes_;   // bulk path only

  // Pass 2 state.
  struct Pending {
    std::future<Result<CommitInfo>> result;
    std::vector<std::uint32_t> entries;  // per vertex of the batch
  };
  WriteBatch batch_;
  std::vector<std::uint32_t> batch_entries_;
  std::size_t batch_ops_ = 0;
  std::deque<Pending> in_flight_;
  Status write_error_;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_IMPORTER_H_
