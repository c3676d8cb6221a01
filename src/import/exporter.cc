// Export: see exporter.h.
#include "import/exporter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/prefetch.h"
#include "base/strings.h"
#include "import/csv_schema.h"
#include "import/csv_writer.h"
#include "import/field_value.h"

namespace quiver::import {
namespace {

// Appends `v` in decimal (no allocation, unlike StrCat).
void AppendInt(std::string* out, std::int64_t v) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
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
      AppendInt(out, static_cast<std::int64_t>(v.value()));
      out->push_back(d_);
      const LabelId label = *snap_.LabelOf(v);
      out->append(Escaped(&labels_, label.value(), [&] { return snap_.LabelName(label); }));
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
      AppendInt(out, static_cast<std::int64_t>(info.source.value()));
      out->push_back(d_);
      AppendInt(out, static_cast<std::int64_t>(info.target.value()));
      out->push_back(d_);
      out->append(Escaped(&types_, info.type.value(), [&] { return snap_.EdgeTypeName(info.type); }));
      WriteCells(set, snap_.Properties(e), out);
      QUIVER_RETURN_IF_ERROR(w->MaybeFlush());
      ++stats->edges;
    }
    return Status::Ok();
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

  void WriteHeader(const ColumnSet& set, std::string* out) {
    for (const ExportColumn& c : set.columns) {
      out->push_back(d_);
      AppendCsvField(out, base::StrCat(snap_.PropertyKeyName(c.key), ":", FieldTypeName(c.type)), d_, true);
    }
    out->push_back('\n');
  }

  void WriteCells(const ColumnSet& set, const PropertyRange& props, std::string* out) {
    cells_.resize(set.columns.size());  // kept between rows: their strings' room is reused
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
  std::vector<std::optional<std::string>> labels_, types_;  // Escaped's
};

// EVLP ids: the vertices' int64 `key` values if every vertex has a distinct
// one; else (empty result) the Quiver ids.
std::vector<std::int64_t> EvlpIds(const Snapshot& snap, const std::string& key) {
  std::vector<std::int64_t> ids;
  const std::optional<PropertyKeyId> k = snap.FindPropertyKey(key);
  if (!k) return ids;
  ids.assign(snap.vertex_id_limit(), 0);
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::uint64_t count = 0;
  for (VertexId v : snap.Vertices()) {
    std::optional<PropertyView> p = snap.GetProperty(v, *k);
    std::optional<std::int64_t> id = p ? p->as_int64() : std::nullopt;
    if (!id) return {};
    ids[v.value()] = *id;
    lo = std::min(lo, *id);
    hi = std::max(hi, *id);
    ++count;
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
    absl::flat_hash_set<std::int64_t> seen;
    seen.reserve(count);
    for (VertexId v : snap.Vertices()) {
      if (!seen.insert(ids[v.value()]).second) return {};
    }
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
    std::string* out = vw->buffer();
    AppendInt(out, id_of(v));
    out->push_back('\n');
    QUIVER_RETURN_IF_ERROR(vw->MaybeFlush());
    ++stats->vertices;
  }
  const std::optional<PropertyKeyId> wkey = snap.FindPropertyKey(options.evlp_weight_key);
  const bool weighted = AllEdgesWeighted(snap, wkey);
  std::string text;
  // Edges in id order, a batch at a time: the endpoints' ids are read at
  // random from `ids` (80 MB at 10M vertices), so a batch's are all
  // prefetched before the first is formatted.
  constexpr std::size_t kBatch = 64;
  struct Pending {
    EdgeId edge;
    VertexId source, target;
  };
  Pending batch[kBatch];
  std::size_t pending = 0;
  auto flush = [&]() -> Status {
    for (std::size_t i = 0; i < pending; ++i) {
      std::string* out = ew->buffer();
      AppendInt(out, id_of(batch[i].source));
      out->push_back(' ');
      AppendInt(out, id_of(batch[i].target));
      if (weighted) {
        FormatFieldValue(*snap.GetProperty(batch[i].edge, *wkey), &text);
        out->push_back(' ');
        out->append(text);
      }
      out->push_back('\n');
      QUIVER_RETURN_IF_ERROR(ew->MaybeFlush());
      ++stats->edges;
    }
    pending = 0;
    return Status::Ok();
  };
  for (EdgeId e : snap.Edges()) {
    const EdgeInfo info = *snap.GetEdge(e);
    batch[pending] = {e, info.source, info.target};
    if (!ids.empty()) {
      base::Prefetch(&ids[info.source.value()]);
      base::Prefetch(&ids[info.target.value()]);
    }
    if (++pending == kBatch) QUIVER_RETURN_IF_ERROR(flush());
  }
  return flush();
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
// bytes as {"bytes": "<hex>"}. InvalidArgument for a non-finite double or
// float (JSON has no NaN or infinity), naming `what`: a graph holds none
// (a WriteBatch refuses them), so this guards against a change to that rule.
Status AppendJsonValue(std::string* out, const PropertyView& v, std::string* text, const std::string& what) {
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
            base::StrCat("Export: ", what, " is ", *v.as_double(), ": JSON has no NaN or infinity"));
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
              base::StrCat("Export: ", what, " holds ", f, ": JSON has no NaN or infinity"));
        if (!first) out->push_back(',');
        first = false;
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof buf, f);
        out->append(buf, r.ptr);
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
  absl::flat_hash_set<std::int64_t> numbers;
  absl::flat_hash_set<std::string> strings;
  bool any = false, numeric = true;
  for (VertexId v : snap.Vertices()) {
    std::optional<PropertyView> p = snap.GetProperty(v, *k);
    if (!p) return {};
    if (!any) numeric = p->as_int64().has_value();
    any = true;
    if (numeric) {
      if (!p->as_int64() || !numbers.insert(*p->as_int64()).second) return {};
    } else if (!p->as_string() || !strings.emplace(*p->as_string()).second) {
      return {};
    }
  }
  if (!any) return {};
  return {k, numeric};
}

Status WriteJsonl(const Snapshot& snap, const ExportOptions& options, CsvWriter* vw, CsvWriter* ew,
                  ExportStats* stats) {
  const JsonlIds ids = FindJsonlIds(snap, options.jsonl_id_key);
  std::string text;
  auto append_id = [&](std::string* out, VertexId v) {
    if (!ids.key) {
      out->append(base::StrCat(v.value()));
      return;
    }
    const PropertyView p = *snap.GetProperty(v, *ids.key);
    if (ids.numbers) {
      out->append(base::StrCat(*p.as_int64()));
    } else {
      AppendJsonString(out, *p.as_string());
    }
  };
  // `skip`: the id key, for a vertex whose id was written from it.
  auto append_props = [&](std::string* out, const PropertyRange& props, std::optional<PropertyKeyId> skip,
                          const std::string& what) -> Status {
    out->append(",\"properties\":{");
    bool first = true;
    for (const PropertyRange::Entry& e : props) {
      if (e.value.is_null() || e.key == skip) continue;
      if (!first) out->push_back(',');
      first = false;
      AppendJsonString(out, snap.PropertyKeyName(e.key));
      out->push_back(':');
      QUIVER_RETURN_IF_ERROR(
          AppendJsonValue(out, e.value, &text, base::StrCat(what, "'s ", snap.PropertyKeyName(e.key))));
    }
    out->append("}}\n");
    return Status::Ok();
  };
  for (VertexId v : snap.Vertices()) {
    std::string* out = vw->buffer();
    out->append("{\"id\":");
    append_id(out, v);
    out->append(",\"label\":");
    AppendJsonString(out, snap.LabelName(*snap.LabelOf(v)));
    QUIVER_RETURN_IF_ERROR(
        append_props(out, snap.Properties(v), ids.key, base::StrCat("vertex ", v.value())));
    QUIVER_RETURN_IF_ERROR(vw->MaybeFlush());
    ++stats->vertices;
  }
  for (EdgeId e : snap.Edges()) {
    const EdgeInfo info = *snap.GetEdge(e);
    std::string* out = ew->buffer();
    out->append("{\"start\":");
    append_id(out, info.source);
    out->append(",\"end\":");
    append_id(out, info.target);
    out->append(",\"type\":");
    AppendJsonString(out, snap.EdgeTypeName(info.type));
    QUIVER_RETURN_IF_ERROR(
        append_props(out, snap.Properties(e), std::nullopt, base::StrCat("edge ", e.value())));
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
  const bool jsonl = options.format == DataFormat::kJsonl;
  const std::string vpath = env::JoinPath(dir, csv ? "vertices.csv" : jsonl ? "vertices.jsonl" : "graph.v");
  const std::string epath = env::JoinPath(dir, csv ? "edges.csv" : jsonl ? "edges.jsonl" : "graph.e");
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
  } else if (jsonl) {
    QUIVER_RETURN_IF_ERROR(WriteJsonl(snap, options, vw.get(), ew.get(), stats));
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
