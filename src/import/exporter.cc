// Export: see exporter.h.
//
// Each file is written by `threads` workers (ExportOptions::threads): the
// id space is cut into chunks of ExportTuning::chunk_ids ids, workers claim
// chunks in order and format each into a buffer of their own, and
// OrderedWriter (ordered_writer.h) puts the chunks' text into the file in
// chunk order, so the file is byte for byte what one thread writes. Memory
// stays bounded whatever the rows hold: per worker its buffer (about
// 2 x spill_bytes of room, plus one row) and CSV cells of at most 4 KiB
// room each (plus one row's values); the finished chunks waiting, at most
// pending_bytes of room; each output file's 1 MiB buffer; and, for EVLP and
// JSON Lines, the id maps below.
#include "import/exporter.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "base/prefetch.h"
#include "base/safe_hash.h"
#include "base/strings.h"
#include "import/csv_schema.h"
#include "import/csv_writer.h"
#include "import/field_value.h"
#include "import/ordered_writer.h"

namespace quiver::import {

const Status& ExportOutOfMemory() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted, "Export: out of memory; the files it created were removed"));
  return *s;
}

namespace {

// A worker caught an exception other than std::bad_alloc.
const Status& ExportWorkerThrew() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kInternal, "Export: a worker thread threw; the files it created were removed"));
  return *s;
}

// Built before main: an export's first out-of-memory answer must not
// allocate.
[[maybe_unused]] const bool export_statuses_built = (ExportOutOfMemory(), ExportWorkerThrew(), true);

// Ok unless `v` is a string list longer than any import reads back (the
// default Limits::max_list_elements: a graph opened with a higher limit
// holds such lists, and the export would promise a round trip it cannot
// keep); `what` names the element and key for the status.
template <typename What>
Status ListReadsBack(const PropertyView& v, What what) {
  if (v.type() != ValueType::kStringList) return Status::Ok();
  std::string why;
  if (CheckListLength(v.as_string_list()->size(), &why)) return Status::Ok();
  return FailedPreconditionError(base::StrCat("Export: ", what(), " is ", why, "; no import reads it back"));
}

// Appends `v` in decimal (no allocation, unlike StrCat).
void AppendInt(std::string* out, std::int64_t v) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

// ExportOptions::progress for the file being written: workers add each
// chunk's rows and bytes; only the calling thread reports, so the callback
// never runs concurrently (worker 0 runs on the calling thread).
class ProgressMeter {
 public:
  explicit ProgressMeter(const ExportOptions& options) : fn_(options.progress) {}

  // What `w`'s file is called in ExportProgress::phase, and its rows.
  void Bind(const CsvWriter* w, std::string_view phase, std::uint64_t rows_total) {
    files_.push_back({w, phase, rows_total});
  }
  // Calling thread: `w`'s rows start.
  void Begin(const CsvWriter* w) {
    current_ = {};
    for (const File& f : files_)
      if (f.writer == w) current_ = f;
    rows_.store(0, std::memory_order_relaxed);
    bytes_.store(0, std::memory_order_relaxed);
    Report();
  }
  // Any worker: a chunk of `rows` rows and `bytes` bytes went to the file.
  void Add(std::uint64_t rows, std::uint64_t bytes) {
    rows_.fetch_add(rows, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  // Calling thread only.
  void Report() const {
    if (!fn_ || current_.writer == nullptr) return;
    fn_(ExportProgress{current_.phase, rows_.load(std::memory_order_relaxed), current_.rows_total,
                       bytes_.load(std::memory_order_relaxed)});
  }

 private:
  struct File {
    const CsvWriter* writer = nullptr;
    std::string_view phase;
    std::uint64_t rows_total = 0;
  };
  const std::function<void(const ExportProgress&)>& fn_;
  std::vector<File> files_;
  File current_;
  std::atomic<std::uint64_t> rows_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

// What every part of one export shares: its threads, tuning and progress.
struct Job {
  unsigned threads;
  ExportTuning tuning;
  ProgressMeter* meter;
  // The chunks of ids [0, limit).
  std::uint64_t Chunks(std::uint64_t limit) const {
    return limit / tuning.chunk_ids + (limit % tuning.chunk_ids != 0);
  }
  // The workers for `chunks` chunks: at most one per chunk, at least one.
  unsigned Workers(std::uint64_t chunks) const {
    return static_cast<unsigned>(std::clamp<std::uint64_t>(threads, 1, std::max<std::uint64_t>(chunks, 1)));
  }
  // Runs fn(worker, begin, end) for each chunk [begin, end) of ids
  // [0, limit), in no order, on Workers(Chunks(limit)) workers. An
  // exception is rethrown once every worker is done.
  template <typename Fn>
  void ForChunks(std::uint64_t limit, Fn fn) const {
    const std::uint64_t chunks = Chunks(limit);
    std::atomic<std::uint64_t> next{0};
    base::RunOnThreads(Workers(chunks), [&](unsigned worker) {
      for (std::uint64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;)
        fn(worker, c * tuning.chunk_ids, std::min(limit, (c + 1) * tuning.chunk_ids));
    });
  }
};

// A worker's output while it formats one chunk: the CsvWriter's interface
// (append to buffer(), then MaybeFlush()), so a row is formatted the same
// way on one thread or many.
class ChunkOut {
 public:
  ChunkOut(OrderedWriter* order, std::size_t spill_bytes) : order_(order), spill_bytes_(spill_bytes) {}
  std::string* buffer() { return &text_; }
  // After each row (which counts it, for progress).
  Status MaybeFlush() {
    ++rows_;
    if (text_.size() < spill_bytes_) return Status::Ok();
    spilled_bytes_ += text_.size();
    return order_->Spill(chunk_, &text_);
  }

 private:
  friend Status WriteInOrder(CsvWriter*, std::uint64_t, const Job&,
                             const std::function<Status(unsigned, std::uint64_t, std::uint64_t, ChunkOut*)>&);
  OrderedWriter* order_;
  const std::size_t spill_bytes_;
  std::uint64_t chunk_ = 0;
  std::string text_;
  std::uint64_t rows_ = 0;           // of the chunk, so far
  std::uint64_t spilled_bytes_ = 0;  // of the chunk, spilled before its end
};

// Writes the rows of ids [0, limit) into `w` in id order: fn(worker, begin,
// end, out) appends those of [begin, end) to out, calling out->MaybeFlush()
// after each row, on `threads` workers (worker 0 on the calling thread).
// The calling thread writes what goes before (a header) into `w` first.
Status WriteInOrder(CsvWriter* w, std::uint64_t limit, const Job& job,
                    const std::function<Status(unsigned, std::uint64_t, std::uint64_t, ChunkOut*)>& fn) {
  const std::uint64_t chunk_ids = job.tuning.chunk_ids;
  const std::uint64_t chunks = job.Chunks(limit);
  const unsigned threads = job.Workers(chunks);
  OrderedWriter order(w, chunks,
                      {.spill_bytes = job.tuning.spill_bytes,
                       .pending_bytes = job.tuning.pending_bytes,
                       .ring = job.tuning.ring});
  // A worker that could not start runs after worker 0 and finds every chunk
  // claimed: a worker only ever waits for chunks claimed before its own,
  // which running workers hold.
  job.meter->Begin(w);
  base::RunOnThreads(threads, [&](unsigned worker) {
    try {
      ChunkOut out(&order, job.tuning.spill_bytes);
      for (std::uint64_t c; order.Claim(&c);) {
        out.chunk_ = c;
        out.rows_ = out.spilled_bytes_ = 0;
        Status s = fn(worker, c * chunk_ids, std::min(limit, (c + 1) * chunk_ids), &out);
        const std::uint64_t bytes = out.spilled_bytes_ + out.text_.size();
        if (s.ok()) s = order.Done(c, &out.text_);
        if (!s.ok()) {
          order.Abort(s);
          return;
        }
        job.meter->Add(out.rows_, bytes);
        if (worker == 0) job.meter->Report();  // the calling thread
      }
    } catch (const std::bad_alloc&) {
      order.Abort(ExportOutOfMemory());
    } catch (...) {  // nothing else throws today; a worker that left silently would hang the others
      order.Abort(ExportWorkerThrew());
    }
  });
  Status s = order.status();
  if (s.ok()) job.meter->Report();  // the file's last rows
  return s;
}

// Per-worker counts, each on its own cache line.
struct alignas(64) RowCount {
  std::uint64_t rows = 0;
};

std::uint64_t Total(const std::vector<RowCount>& counts) {
  std::uint64_t n = 0;
  for (const RowCount& c : counts) n += c.rows;
  return n;
}

// Writes a row per live element into `w` in id order: `elements(begin,
// end)` lists those of ids [begin, end) of [0, limit), and row(worker, id,
// text) appends one's row. Sets *rows to how many were written.
template <typename Elements, typename RowFn>
Status WriteRows(CsvWriter* w, std::uint64_t limit, const Job& job, Elements elements, RowFn row,
                 std::uint64_t* rows) {
  std::vector<RowCount> counts(job.threads);
  Status s =
      WriteInOrder(w, limit, job, [&](unsigned worker, std::uint64_t b, std::uint64_t e, ChunkOut* out) {
        for (const auto id : elements(b, e)) {
          QUIVER_RETURN_IF_ERROR(row(worker, id, out->buffer()));
          QUIVER_RETURN_IF_ERROR(out->MaybeFlush());
          ++counts[worker].rows;
        }
        return Status::Ok();
      });
  *rows = Total(counts);
  return s;
}

// One output column: a property key holding values of one type.
struct ExportColumn {
  PropertyKeyId key;
  FieldType type;
};

// Columns per element kind, and where each (key, type) cell goes.
struct ColumnSet {
  std::vector<ExportColumn> columns;
  // columns index by key id, then by type: -1 if that pair is not in use.
  std::vector<std::vector<int>> index;

  void Add(PropertyKeyId key, FieldType type) {
    if (index.size() <= key.value()) index.resize(key.value() + 1);
    std::vector<int>& by_type = index[key.value()];
    const auto t = static_cast<std::size_t>(type);
    if (by_type.size() <= t) by_type.resize(t + 1, -1);
    if (by_type[t] < 0) by_type[t] = 0;  // numbered in Finish
  }
  void Finish() {
    for (std::size_t k = 0; k < index.size(); ++k) {
      for (std::size_t t = 0; t < index[k].size(); ++t) {
        if (index[k][t] < 0) continue;
        index[k][t] = static_cast<int>(columns.size());
        columns.push_back({PropertyKeyId(static_cast<std::uint32_t>(k)), static_cast<FieldType>(t)});
      }
    }
  }
  int Find(PropertyKeyId key, FieldType type) const {
    const auto t = static_cast<std::size_t>(type);
    if (key.value() >= index.size() || t >= index[key.value()].size()) return -1;
    return index[key.value()][t];
  }
};

// The columns in use among the elements of ids [0, limit) (`Elements(begin,
// end)` lists the live ones), collected on `threads` workers.
template <typename Id, typename Elements>
ColumnSet CollectColumns(const Snapshot& snap, std::uint64_t limit, const Job& job, Elements elements) {
  std::vector<ColumnSet> sets(job.Workers(job.Chunks(limit)));
  job.ForChunks(limit, [&](unsigned worker, std::uint64_t begin, std::uint64_t end) {
    for (Id id : elements(begin, end)) {
      for (const PropertyRange::Entry& e : snap.Properties(id)) {
        if (!e.value.is_null()) sets[worker].Add(e.key, FieldTypeOf(e.value.type()));
      }
    }
  });
  ColumnSet all;
  for (const ColumnSet& set : sets) {
    for (std::size_t k = 0; k < set.index.size(); ++k) {
      for (std::size_t t = 0; t < set.index[k].size(); ++t) {
        if (set.index[k][t] >= 0)
          all.Add(PropertyKeyId(static_cast<std::uint32_t>(k)), static_cast<FieldType>(t));
      }
    }
  }
  all.Finish();
  return all;
}

// Formats CSV rows; one per worker (its scratch and name caches).
class CsvRows {
 public:
  CsvRows(const Snapshot& snap, char delimiter, char array_delimiter, const ColumnSet& set)
      : snap_(snap), d_(delimiter), array_d_(array_delimiter), set_(set) {}

  Status Vertex(VertexId v, std::string* out) {
    AppendInt(out, static_cast<std::int64_t>(v.value()));
    out->push_back(d_);
    const LabelId label = *snap_.LabelOf(v);
    const std::string& field = Escaped(&labels_, label.value(), [&] { return snap_.LabelName(label); });
    // CSV import reads ';' in :LABEL as a separator of several labels (the
    // Neo4j convention), which a Quiver vertex cannot have.
    if (field.find(';') != std::string::npos)
      return FailedPreconditionError(base::StrCat("Export: vertex ", v.value(), "'s label '",
                                                  snap_.LabelName(label),
                                                  "' holds ';', which CSV import reads as a second label; "
                                                  "export as JSON Lines"));
    out->append(field);
    return WriteCells(snap_.Properties(v), out, "vertex", v.value());
  }

  Status Edge(EdgeId e, std::string* out) {
    const EdgeInfo info = *snap_.GetEdge(e);
    AppendInt(out, static_cast<std::int64_t>(info.source.value()));
    out->push_back(d_);
    AppendInt(out, static_cast<std::int64_t>(info.target.value()));
    out->push_back(d_);
    out->append(Escaped(&types_, info.type.value(), [&] { return snap_.EdgeTypeName(info.type); }));
    return WriteCells(snap_.Properties(e), out, "edge", e.value());
  }

  // The header row: the fixed columns, then one per (key, type) in use.
  void Header(std::string_view fixed, std::string* out) {
    out->append(fixed);
    for (const ExportColumn& c : set_.columns) {
      out->push_back(d_);
      AppendCsvField(out, base::StrCat(snap_.PropertyKeyName(c.key), ":", FieldTypeName(c.type)), d_, true);
    }
    out->push_back('\n');
  }

 private:
  // A label's or type's name as a CSV field, escaped once per id.
  template <typename Name>
  const std::string& Escaped(std::vector<std::optional<std::string>>* cache, std::uint32_t id, Name name) {
    if (cache->size() <= id) cache->resize(id + 1);
    std::optional<std::string>& field = (*cache)[id];
    if (!field) {
      field.emplace();
      AppendCsvField(&*field, name(), d_, true);
    }
    return *field;
  }

  Status WriteCells(const PropertyRange& props, std::string* out, const char* kind, std::uint64_t id) {
    cells_.resize(set_.columns.size());  // kept between rows: their strings' room is reused
    filled_.assign(set_.columns.size(), false);
    for (const PropertyRange::Entry& e : props) {
      if (e.value.is_null()) continue;
      if (!TextRoundTrips(e.value))
        return FailedPreconditionError(
            base::StrCat("Export: ", kind, " ", id, "'s ", snap_.PropertyKeyName(e.key),
                         " is a string list of one empty string, which CSV cannot tell from the empty list; "
                         "export as JSON Lines"));
      QUIVER_RETURN_IF_ERROR(ListReadsBack(
          e.value, [&] { return base::StrCat(kind, " ", id, "'s ", snap_.PropertyKeyName(e.key)); }));
      FormatFieldValue(e.value, &text_, array_d_);
      // The column CollectColumns chose, by the same function.
      const int c = set_.Find(e.key, FieldTypeOf(e.value.type()));
      cells_[c].swap(text_);
      filled_[c] = true;
    }
    for (std::size_t c = 0; c < cells_.size(); ++c) {
      out->push_back(d_);
      if (!filled_[c]) continue;
      AppendCsvField(out, cells_[c], d_, true);
      // A cell keeps its room for the next row, unless a large value made
      // it large: then a worker would keep every column's largest value.
      if (cells_[c].capacity() > kCellRoom) std::string().swap(cells_[c]);
    }
    if (text_.capacity() > kCellRoom) std::string().swap(text_);
    out->push_back('\n');
    return Status::Ok();
  }

  static constexpr std::size_t kCellRoom = 4096;

  const Snapshot& snap_;
  const char d_;
  const char array_d_;
  const ColumnSet& set_;
  std::string text_;
  std::vector<std::string> cells_;
  std::vector<bool> filled_;
  std::vector<std::optional<std::string>> labels_, types_;  // Escaped's
};

Status WriteCsv(const Snapshot& snap, const ExportOptions& options, const Job& job, CsvWriter* vw,
                CsvWriter* ew, ExportStats* stats) {
  const char d = options.delimiter;
  const std::string sep(1, d);
  auto vertices = [&](std::uint64_t b, std::uint64_t e) { return snap.Vertices(b, e); };
  auto edges = [&](std::uint64_t b, std::uint64_t e) { return snap.Edges(b, e); };
  {
    const std::uint64_t limit = snap.vertex_id_limit();
    const ColumnSet set = CollectColumns<VertexId>(snap, limit, job, vertices);
    std::vector<CsvRows> rows(job.threads, CsvRows(snap, d, options.array_delimiter, set));
    rows[0].Header(base::StrCat(":ID", sep, ":LABEL"), vw->buffer());
    QUIVER_RETURN_IF_ERROR(vw->MaybeFlush());
    auto row = [&](unsigned w, VertexId v, std::string* out) { return rows[w].Vertex(v, out); };
    QUIVER_RETURN_IF_ERROR(WriteRows(vw, limit, job, vertices, row, &stats->vertices));
  }
  const std::uint64_t limit = snap.edge_id_limit();
  const ColumnSet set = CollectColumns<EdgeId>(snap, limit, job, edges);
  std::vector<CsvRows> rows(job.threads, CsvRows(snap, d, options.array_delimiter, set));
  rows[0].Header(base::StrCat(":START_ID", sep, ":END_ID", sep, ":TYPE"), ew->buffer());
  QUIVER_RETURN_IF_ERROR(ew->MaybeFlush());
  auto row = [&](unsigned w, EdgeId e, std::string* out) { return rows[w].Edge(e, out); };
  return WriteRows(ew, limit, job, edges, row, &stats->edges);
}

// EVLP ids: the vertices' int64 `key` values if every vertex has a distinct
// one; else (empty result) the Quiver ids.
std::vector<std::int64_t> EvlpIds(const Snapshot& snap, const std::string& key, const Job& job) {
  std::vector<std::int64_t> ids;
  const std::optional<PropertyKeyId> k = snap.FindPropertyKey(key);
  if (!k) return ids;
  const std::uint64_t limit = snap.vertex_id_limit();
  ids.assign(limit, 0);
  struct alignas(64) Range {
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    std::uint64_t count = 0;
    bool all = true;  // every vertex seen held an int64
  };
  std::vector<Range> ranges(job.Workers(job.Chunks(limit)));
  std::atomic<bool> missing{false};  // a vertex without an int64 id: the rest need not be read
  job.ForChunks(limit, [&](unsigned worker, std::uint64_t begin, std::uint64_t end) {
    Range& r = ranges[worker];
    if (missing.load(std::memory_order_relaxed)) return;
    for (VertexId v : snap.Vertices(begin, end)) {
      std::optional<PropertyView> p = snap.GetProperty(v, *k);
      std::optional<std::int64_t> id = p ? p->as_int64() : std::nullopt;
      if (!id) {
        r.all = false;
        missing.store(true, std::memory_order_relaxed);
        return;
      }
      ids[v.value()] = *id;
      r.lo = std::min(r.lo, *id);
      r.hi = std::max(r.hi, *id);
      ++r.count;
    }
  });
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::uint64_t count = 0;
  for (const Range& r : ranges) {
    if (!r.all) return {};
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
    count += r.count;
  }
  if (count == 0) return ids;
  // Distinct? A bitmap over their range when it is small (ids numbered from
  // about 0: a bit each, no hash probe at random), else a hash set.
  const std::uint64_t range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  if (range != 0 && range <= 8 * count) {
    std::vector<std::uint64_t> seen((range + 63) / 64);
    for (VertexId v : snap.Vertices()) {
      const std::uint64_t at = static_cast<std::uint64_t>(ids[v.value()]) - static_cast<std::uint64_t>(lo);
      const std::uint64_t bit = std::uint64_t{1} << (at & 63);
      if ((seen[at >> 6] & bit) != 0) return {};
      seen[at >> 6] |= bit;
    }
  } else {
    base::SafeFlatHashSet<std::int64_t> seen;
    seen.Reserve(count);
    for (VertexId v : snap.Vertices()) {
      if (!seen.insert(ids[v.value()]).second) return {};
    }
  }
  return ids;
}

bool AllEdgesWeighted(const Snapshot& snap, std::optional<PropertyKeyId> key, const Job& job) {
  if (!key) return false;
  std::atomic<bool> missing{false};
  job.ForChunks(snap.edge_id_limit(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    if (missing.load(std::memory_order_relaxed)) return;
    for (EdgeId e : snap.Edges(begin, end)) {
      std::optional<PropertyView> w = snap.GetProperty(e, *key);
      if (!w || (!w->as_double() && !w->as_int64())) {
        missing.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  return !missing.load();
}

Status WriteEvlp(const Snapshot& snap, const ExportOptions& options, const Job& job, CsvWriter* vw,
                 CsvWriter* ew, ExportStats* stats) {
  const std::vector<std::int64_t> ids = EvlpIds(snap, options.evlp_id_key, job);
  auto id_of = [&](VertexId v) {
    return ids.empty() ? static_cast<std::int64_t>(v.value()) : ids[v.value()];
  };
  auto vertex_row = [&](unsigned, VertexId v, std::string* out) {
    AppendInt(out, id_of(v));
    out->push_back('\n');
    return Status::Ok();
  };
  QUIVER_RETURN_IF_ERROR(WriteRows(
      vw, snap.vertex_id_limit(), job, [&](std::uint64_t b, std::uint64_t e) { return snap.Vertices(b, e); },
      vertex_row, &stats->vertices));
  const std::optional<PropertyKeyId> wkey = snap.FindPropertyKey(options.evlp_weight_key);
  const bool weighted = AllEdgesWeighted(snap, wkey, job);
  // Edges in id order, a batch at a time: the endpoints' ids are read at
  // random from `ids` (80 MB at 10M vertices), so a batch's are all
  // prefetched before the first is formatted.
  constexpr std::size_t kBatch = 64;
  struct Pending {
    EdgeId edge;
    VertexId source, target;
  };
  struct Scratch {
    Pending batch[kBatch];
    std::string text;
  };
  std::vector<Scratch> scratch(job.threads);
  std::vector<RowCount> counts(job.threads);
  if (Status s = WriteInOrder(ew, snap.edge_id_limit(), job,
                              [&](unsigned w, std::uint64_t b, std::uint64_t e, ChunkOut* out) {
                                Scratch& my = scratch[w];
                                std::size_t pending = 0;
                                auto flush = [&]() -> Status {
                                  for (std::size_t i = 0; i < pending; ++i) {
                                    std::string* text = out->buffer();
                                    AppendInt(text, id_of(my.batch[i].source));
                                    text->push_back(' ');
                                    AppendInt(text, id_of(my.batch[i].target));
                                    if (weighted) {
                                      FormatFieldValue(*snap.GetProperty(my.batch[i].edge, *wkey), &my.text);
                                      text->push_back(' ');
                                      text->append(my.text);
                                    }
                                    text->push_back('\n');
                                    QUIVER_RETURN_IF_ERROR(out->MaybeFlush());
                                  }
                                  counts[w].rows += pending;
                                  pending = 0;
                                  return Status::Ok();
                                };
                                for (EdgeId id : snap.Edges(b, e)) {
                                  const EdgeInfo info = *snap.GetEdge(id);
                                  my.batch[pending] = {id, info.source, info.target};
                                  if (!ids.empty()) {
                                    base::Prefetch(&ids[info.source.value()]);
                                    base::Prefetch(&ids[info.target.value()]);
                                  }
                                  if (++pending == kBatch) QUIVER_RETURN_IF_ERROR(flush());
                                }
                                return flush();
                              });
      !s.ok())
    return s;
  stats->edges = Total(counts);
  return Status::Ok();
}

// ---- JSON Lines ----

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\u00");
          out->push_back(kHex[(c >> 4) & 15]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(c);  // UTF-8 as it is (stored strings are valid UTF-8)
        }
    }
  }
  out->push_back('"');
}

// A value as JSON that the importer reads back as the same value: a double
// always with a '.' or an exponent (else it would come back an int64),
// bytes as {"bytes": "<hex>"}, a string list as an array of strings (the
// empty one as {"strings": []}: `[]` reads back as an empty float vector). InvalidArgument for a non-finite
// double or float (JSON has no NaN or infinity), naming what `what()` returns: a graph holds none (a
// WriteBatch refuses them), so this guards against a change to that rule.
template <typename What>
Status AppendJsonValue(std::string* out, const PropertyView& v, std::string* text, What what) {
  switch (v.type()) {
    case ValueType::kNull: out->append("null"); return Status::Ok();
    case ValueType::kString: AppendJsonString(out, *v.as_string()); return Status::Ok();
    case ValueType::kBool:
    case ValueType::kInt64:
      FormatFieldValue(v, text);
      out->append(*text);
      return Status::Ok();
    case ValueType::kDouble: {
      if (!std::isfinite(*v.as_double()))
        return InvalidArgumentError(
            base::StrCat("Export: ", what(), " is ", *v.as_double(), ": JSON has no NaN or infinity"));
      FormatFieldValue(v, text);
      out->append(*text);
      if (text->find_first_of(".eEn") == std::string::npos) out->append(".0");
      return Status::Ok();
    }
    case ValueType::kBytes:
      FormatFieldValue(v, text);
      out->append("{\"bytes\":\"");
      out->append(*text);
      out->append("\"}");
      return Status::Ok();
    case ValueType::kFloatVector: {
      out->push_back('[');
      bool first = true;
      const auto floats = v.as_float_vector();  // named: a temporary optional would die before the loop
      for (float f : *floats) {
        if (!std::isfinite(f))
          return InvalidArgumentError(
              base::StrCat("Export: ", what(), " holds ", f, ": JSON has no NaN or infinity"));
        if (!first) out->push_back(',');
        first = false;
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof buf, f);
        out->append(buf, r.ptr);
      }
      out->push_back(']');
      return Status::Ok();
    }
    case ValueType::kStringList: {
      QUIVER_RETURN_IF_ERROR(ListReadsBack(v, what));
      const StringListView list = *v.as_string_list();
      if (list.empty()) {
        out->append("{\"strings\":[]}");
        return Status::Ok();
      }
      out->push_back('[');
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0) out->push_back(',');
        AppendJsonString(out, list[i]);
      }
      out->push_back(']');
      return Status::Ok();
    }
  }
  return Status::Ok();
}

// JSON Lines ids: every vertex's value under `key` if all hold one, all
// int64 or all strings, and no two the same (then the key is not written
// among the properties); else (nullopt) the Quiver ids.
struct JsonlIds {
  std::optional<PropertyKeyId> key;
  bool numbers = true;
};

JsonlIds FindJsonlIds(const Snapshot& snap, const std::string& key) {
  const std::optional<PropertyKeyId> k = key.empty() ? std::nullopt : snap.FindPropertyKey(key);
  if (!k) return {};
  base::SafeFlatHashSet<std::int64_t> numbers;
  base::SafeFlatHashSet<std::string> strings;
  bool any = false, numeric = true;
  for (VertexId v : snap.Vertices()) {
    std::optional<PropertyView> p = snap.GetProperty(v, *k);
    if (!p) return {};
    if (!any) numeric = p->as_int64().has_value();
    any = true;
    if (numeric) {
      if (!p->as_int64() || !numbers.insert(*p->as_int64()).second) return {};
    } else if (!p->as_string() || !strings.insert(std::string(*p->as_string())).second) {
      return {};
    }
  }
  if (!any) return {};
  return {k, numeric};
}

Status WriteJsonl(const Snapshot& snap, const ExportOptions& options, const Job& job, CsvWriter* vw,
                  CsvWriter* ew, ExportStats* stats) {
  const JsonlIds ids = FindJsonlIds(snap, options.jsonl_id_key);
  auto append_id = [&](std::string* out, VertexId v) {
    if (!ids.key) {
      AppendInt(out, static_cast<std::int64_t>(v.value()));
      return;
    }
    const PropertyView p = *snap.GetProperty(v, *ids.key);
    if (ids.numbers) {
      AppendInt(out, *p.as_int64());
    } else {
      AppendJsonString(out, *p.as_string());
    }
  };
  std::vector<std::string> texts(job.threads);
  // `skip`: the id key, for a vertex whose id was written from it.
  auto append_props = [&](unsigned w, std::string* out, const PropertyRange& props,
                          std::optional<PropertyKeyId> skip, const char* kind, std::uint64_t id) -> Status {
    out->append(",\"properties\":{");
    bool first = true;
    for (const PropertyRange::Entry& e : props) {
      if (e.value.is_null() || e.key == skip) continue;
      if (!first) out->push_back(',');
      first = false;
      AppendJsonString(out, snap.PropertyKeyName(e.key));
      out->push_back(':');
      QUIVER_RETURN_IF_ERROR(AppendJsonValue(out, e.value, &texts[w], [&] {
        return base::StrCat(kind, " ", id, "'s ", snap.PropertyKeyName(e.key));
      }));
    }
    out->append("}}\n");
    return Status::Ok();
  };
  auto vertex_row = [&](unsigned w, VertexId v, std::string* out) {
    out->append("{\"id\":");
    append_id(out, v);
    out->append(",\"label\":");
    AppendJsonString(out, snap.LabelName(*snap.LabelOf(v)));
    return append_props(w, out, snap.Properties(v), ids.key, "vertex", v.value());
  };
  QUIVER_RETURN_IF_ERROR(WriteRows(
      vw, snap.vertex_id_limit(), job, [&](std::uint64_t b, std::uint64_t e) { return snap.Vertices(b, e); },
      vertex_row, &stats->vertices));
  auto edge_row = [&](unsigned w, EdgeId id, std::string* out) {
    const EdgeInfo info = *snap.GetEdge(id);
    out->append("{\"start\":");
    append_id(out, info.source);
    out->append(",\"end\":");
    append_id(out, info.target);
    out->append(",\"type\":");
    AppendJsonString(out, snap.EdgeTypeName(info.type));
    return append_props(w, out, snap.Properties(id), std::nullopt, "edge", id.value());
  };
  return WriteRows(
      ew, snap.edge_id_limit(), job, [&](std::uint64_t b, std::uint64_t e) { return snap.Edges(b, e); },
      edge_row, &stats->edges);
}

Status CreateDirs(env::FileSystem* fs, const std::string& dir) {
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') QUIVER_RETURN_IF_ERROR(fs->CreateDir(dir.substr(0, i)));
  }
  return Status::Ok();
}

Status WriteAll(env::FileSystem* fs, const Snapshot& snap, const std::string& dir,
                const ExportOptions& options, const ExportTuning& tuning, ExportStats* stats) {
  QUIVER_RETURN_IF_ERROR(CreateDirs(fs, dir));
  const bool csv = options.format == DataFormat::kCsv;
  const bool jsonl = options.format == DataFormat::kJsonl;
  const std::string vpath = env::JoinPath(dir, csv ? "vertices.csv" : jsonl ? "vertices.jsonl" : "graph.v");
  const std::string epath = env::JoinPath(dir, csv ? "edges.csv" : jsonl ? "edges.jsonl" : "graph.e");
  // Room for both paths first: a path is recorded (for removal on failure)
  // before its file can exist, without allocating, and taken back only when
  // the file was already there (a file this export did not create).
  stats->files.reserve(2);
  auto create = [&](const std::string& path) -> Result<std::unique_ptr<CsvWriter>> {
    stats->files.push_back(path);
    Result<std::unique_ptr<CsvWriter>> w = CsvWriter::Create(fs, path, env::OpenMode::kCreateNew);
    if (!w.ok() && w.status().code() == StatusCode::kAlreadyExists) stats->files.pop_back();
    return w;
  };
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<CsvWriter> vw, create(vpath));
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<CsvWriter> ew, create(epath));
  ProgressMeter meter(options);
  meter.Bind(vw.get(), "vertices", snap.vertex_count());
  meter.Bind(ew.get(), "edges", snap.edge_count());
  const Job job{base::ResolveThreads(options.threads), tuning, &meter};
  if (csv) {
    QUIVER_RETURN_IF_ERROR(WriteCsv(snap, options, job, vw.get(), ew.get(), stats));
  } else if (jsonl) {
    QUIVER_RETURN_IF_ERROR(WriteJsonl(snap, options, job, vw.get(), ew.get(), stats));
  } else {
    QUIVER_RETURN_IF_ERROR(WriteEvlp(snap, options, job, vw.get(), ew.get(), stats));
  }
  QUIVER_RETURN_IF_ERROR(vw->Finish());
  QUIVER_RETURN_IF_ERROR(ew->Finish());
  return fs->SyncDir(dir);
}

}  // namespace

Result<ExportStats> RunExport(env::FileSystem* fs, const Snapshot& snap, const std::string& dir,
                              const ExportOptions& options, const ExportTuning& tuning) {
  ExportStats stats;
  Status s;
  try {
    const char d = options.delimiter;
    if (dir.empty()) {
      s = InvalidArgumentError("Export: empty directory path");
    } else if (options.format == DataFormat::kCsv && (d == '"' || d == '\n' || d == '\r')) {
      s = InvalidArgumentError("ExportOptions::delimiter may not be a quote or a line break");
    } else if (Status a = options.format == DataFormat::kCsv
                              ? CheckArrayDelimiter(options.array_delimiter, "ExportOptions::array_delimiter")
                              : Status::Ok();
               !a.ok()) {
      s = std::move(a);
    } else if (options.threads > kMaxExportThreads) {
      s = InvalidArgumentError(
          base::StrCat("ExportOptions::threads is ", options.threads, "; at most ", kMaxExportThreads));
    } else if (tuning.chunk_ids == 0 || tuning.ring == 0) {
      s = InvalidArgumentError("ExportTuning: chunk_ids and ring must be at least 1");
    } else {
      s = WriteAll(fs, snap, dir, options, tuning, &stats);
    }
  } catch (const std::bad_alloc&) {
    s = ExportOutOfMemory();
  }
  if (s.ok()) return stats;
  // Remove what this export created (a file that was already there made
  // its OpenWritable fail and is not in the list; a path whose file was
  // never made fails to be removed, harmlessly). Best effort: a removal
  // that fails, or runs out of memory, leaves that file.
  for (const std::string& f : stats.files) {
    try {
      fs->Remove(f).IgnoreError();
    } catch (const std::bad_alloc&) {
    }
  }
  return s;
}

}  // namespace quiver::import
