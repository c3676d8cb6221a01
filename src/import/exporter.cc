// Export: see exporter.h.
#include "import/exporter.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/strings.h"
#include "import/csv_schema.h"
#include "import/csv_writer.h"
#include "import/field_value.h"

namespace quiver::import {
namespace {

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

template <typename Id>
void CollectColumns(const Snapshot& snap, Id id, ColumnSet* set, std::string* scratch) {
  for (const PropertyRange::Entry& e : snap.Properties(id)) {
    if (e.value.is_null()) continue;
    set->Add(e.key, FormatFieldValue(e.value, scratch));
  }
}

class CsvExport {
 public:
  CsvExport(const Snapshot& snap, const ExportOptions& options) : snap_(snap), d_(options.delimiter) {}

  Status WriteVertices(CsvWriter* w, ExportStats* stats) {
    ColumnSet set;
    for (VertexId v : snap_.Vertices()) CollectColumns(snap_, v, &set, &text_);
    set.Finish();
    std::string* out = w->buffer();
    out->append(base::StrCat(":ID", std::string(1, d_), ":LABEL"));
    WriteHeader(set, out);
    for (VertexId v : snap_.Vertices()) {
      out->append(base::StrCat(v.value(), std::string(1, d_)));
      AppendCsvField(out, snap_.LabelName(*snap_.LabelOf(v)), d_, true);
      WriteCells(set, snap_.Properties(v), out);
      QUIVER_RETURN_IF_ERROR(w->MaybeFlush());
      ++stats->vertices;
    }
    return Status::Ok();
  }

  Status WriteEdges(CsvWriter* w, ExportStats* stats) {
    ColumnSet set;
    for (EdgeId e : snap_.Edges()) CollectColumns(snap_, e, &set, &text_);
    set.Finish();
    std::string* out = w->buffer();
    out->append(base::StrCat(":START_ID", std::string(1, d_), ":END_ID", std::string(1, d_), ":TYPE"));
    WriteHeader(set, out);
    for (EdgeId e : snap_.Edges()) {
      const EdgeInfo info = *snap_.GetEdge(e);
      out->append(
          base::StrCat(info.source.value(), std::string(1, d_), info.target.value(), std::string(1, d_)));
      AppendCsvField(out, snap_.EdgeTypeName(info.type), d_, true);
      WriteCells(set, snap_.Properties(e), out);
      QUIVER_RETURN_IF_ERROR(w->MaybeFlush());
      ++stats->edges;
    }
    return Status::Ok();
  }

 private:
  void WriteHeader(const ColumnSet& set, std::string* out) {
    for (const ExportColumn& c : set.columns) {
      out->push_back(d_);
      AppendCsvField(out, base::StrCat(snap_.PropertyKeyName(c.key), ":", FieldTypeName(c.type)), d_, true);
    }
    out->push_back('\n');
  }

  void WriteCells(const ColumnSet& set, const PropertyRange& props, std::string* out) {
    cells_.assign(set.columns.size(), std::string());
    filled_.assign(set.columns.size(), false);
    for (const PropertyRange::Entry& e : props) {
      if (e.value.is_null()) continue;
      const FieldType t = FormatFieldValue(e.value, &text_);
      const int c = set.Find(e.key, t);
      cells_[c] = text_;
      filled_[c] = true;
    }
    for (std::size_t c = 0; c < cells_.size(); ++c) {
      out->push_back(d_);
      if (filled_[c]) AppendCsvField(out, cells_[c], d_, true);
    }
    out->push_back('\n');
  }

  const Snapshot& snap_;
  char d_;
  std::string text_;
  std::vector<std::string> cells_;
  std::vector<bool> filled_;
};

// EVLP ids: the vertices' int64 `key` values if every vertex has a distinct
// one; else (empty result) the Quiver ids.
std::vector<std::int64_t> EvlpIds(const Snapshot& snap, const std::string& key) {
  std::vector<std::int64_t> ids;
  const std::optional<PropertyKeyId> k = snap.FindPropertyKey(key);
  if (!k) return ids;
  absl::flat_hash_set<std::int64_t> seen;
  ids.assign(snap.vertex_id_limit(), 0);
  for (VertexId v : snap.Vertices()) {
    std::optional<PropertyView> p = snap.GetProperty(v, *k);
    std::optional<std::int64_t> id = p ? p->as_int64() : std::nullopt;
    if (!id || !seen.insert(*id).second) return {};
    ids[v.value()] = *id;
  }
  return ids;
}

bool AllEdgesWeighted(const Snapshot& snap, std::optional<PropertyKeyId> key) {
  if (!key) return false;
  for (EdgeId e : snap.Edges()) {
    std::optional<PropertyView> w = snap.GetProperty(e, *key);
    if (!w || (!w->as_double() && !w->as_int64())) return false;
  }
  return true;
}

Status WriteEvlp(const Snapshot& snap, const ExportOptions& options, CsvWriter* vw, CsvWriter* ew,
                 ExportStats* stats) {
  const std::vector<std::int64_t> ids = EvlpIds(snap, options.evlp_id_key);
  auto id_of = [&](VertexId v) {
    return ids.empty() ? static_cast<std::int64_t>(v.value()) : ids[v.value()];
  };
  for (VertexId v : snap.Vertices()) {
    vw->buffer()->append(base::StrCat(id_of(v), "\n"));
    QUIVER_RETURN_IF_ERROR(vw->MaybeFlush());
    ++stats->vertices;
  }
  const std::optional<PropertyKeyId> wkey = snap.FindPropertyKey(options.evlp_weight_key);
  const bool weighted = AllEdgesWeighted(snap, wkey);
  std::string text;
  for (EdgeId e : snap.Edges()) {
    const EdgeInfo info = *snap.GetEdge(e);
    std::string* out = ew->buffer();
    out->append(base::StrCat(id_of(info.source), " ", id_of(info.target)));
    if (weighted) {
      FormatFieldValue(*snap.GetProperty(e, *wkey), &text);
      out->append(base::StrCat(" ", text));
    }
    out->push_back('\n');
    QUIVER_RETURN_IF_ERROR(ew->MaybeFlush());
    ++stats->edges;
  }
  return Status::Ok();
}

Status CreateDirs(env::FileSystem* fs, const std::string& dir) {
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') QUIVER_RETURN_IF_ERROR(fs->CreateDir(dir.substr(0, i)));
  }
  return Status::Ok();
}

Status WriteAll(env::FileSystem* fs, const Snapshot& snap, const std::string& dir,
                const ExportOptions& options, ExportStats* stats) {
  QUIVER_RETURN_IF_ERROR(CreateDirs(fs, dir));
  const bool csv = options.format == DataFormat::kCsv;
  const std::string vpath = env::JoinPath(dir, csv ? "vertices.csv" : "graph.v");
  const std::string epath = env::JoinPath(dir, csv ? "edges.csv" : "graph.e");
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<CsvWriter> vw,
                          CsvWriter::Create(fs, vpath, env::OpenMode::kCreateNew));
  stats->files.push_back(vpath);
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<CsvWriter> ew,
                          CsvWriter::Create(fs, epath, env::OpenMode::kCreateNew));
  stats->files.push_back(epath);
  if (csv) {
    CsvExport x(snap, options);
    QUIVER_RETURN_IF_ERROR(x.WriteVertices(vw.get(), stats));
    QUIVER_RETURN_IF_ERROR(x.WriteEdges(ew.get(), stats));
  } else {
    QUIVER_RETURN_IF_ERROR(WriteEvlp(snap, options, vw.get(), ew.get(), stats));
  }
  QUIVER_RETURN_IF_ERROR(vw->Finish());
  QUIVER_RETURN_IF_ERROR(ew->Finish());
  return fs->SyncDir(dir);
}

}  // namespace

Result<ExportStats> RunExport(env::FileSystem* fs, const Snapshot& snap, const std::string& dir,
                              const ExportOptions& options) {
  if (dir.empty()) return InvalidArgumentError("Export: empty directory path");
  const char d = options.delimiter;
  if (options.format == DataFormat::kCsv && (d == '"' || d == '\n' || d == '\r')) {
    return InvalidArgumentError("ExportOptions::delimiter may not be a quote or a line break");
  }
  ExportStats stats;
  Status s = WriteAll(fs, snap, dir, options, &stats);
  if (s.ok()) return stats;
  // Remove what this export created (a file that was already there made
  // its OpenWritable fail and is not in the list).
  for (const std::string& f : stats.files) fs->Remove(f).IgnoreError();
  return s;
}

}  // namespace quiver::import
