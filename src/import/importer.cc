// Importer, pass 1 (validation) and the driver: see importer.h.
#include "import/importer.h"

#include <algorithm>
#include <new>
#include <tuple>
#include <utility>

#include "base/reserve.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "graph_dir.h"
#include "import/csv_writer.h"
#include "import/field_value.h"

namespace quiver::import {

Importer::Importer(env::FileSystem* fs, Graph& graph, const ImportSpec& spec, const ImportOptions& options)
    : fs_(fs), graph_(&graph), spec_(spec), options_(options) {}

Importer::Importer(env::FileSystem* fs, std::string new_dir, const ImportSpec& spec,
                   const ImportOptions& options)
    : fs_(fs), new_dir_(std::move(new_dir)), spec_(spec), options_(options) {}

std::uint32_t Importer::NameTable::Intern(std::string_view name) {
  auto [it, inserted] = ids.try_emplace(name, static_cast<std::uint32_t>(names.size()));
  if (inserted) names.emplace_back(name);
  return it->second;
}

void Importer::InternNames(FileKind kind, const Row& row) {
  (kind == FileKind::kVertices ? labels_ : types_).Intern(row.label);
  for (const Property& p : row.properties) keys_.Intern(p.key);
}

const ImportFile& Importer::FileAt(std::size_t index) const {
  return index < spec_.vertices.size() ? spec_.vertices[index] : spec_.edges[index - spec_.vertices.size()];
}

FileKind Importer::KindAt(std::size_t index) const {
  return index < spec_.vertices.size() ? FileKind::kVertices : FileKind::kEdges;
}

const Status& ImportOutOfMemory() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted,
      "import: out of memory (an atomic import or a new graph is undone; a non-atomic one keeps the "
      "batches committed before it)"));
  return *s;
}

namespace {
// Built as the library loads: giving it allocates nothing.
[[maybe_unused]] const bool import_statuses_built = (ImportOutOfMemory(), true);
}  // namespace

Result<ImportStats> Importer::Run() {
  try {
    return RunUnguarded();
  } catch (const std::bad_alloc&) {
    try {
      return ResourceExhaustedError(
          bulk() ? "import: out of memory; what it wrote into the new graph's directory was removed"
          : options_.atomic ? "import: out of memory; what it wrote was undone (or, if that failed too, the "
                              "next Open undoes it)"
                            : "import: out of memory; the batches committed before it stay");
    } catch (const std::bad_alloc&) {
      return ImportOutOfMemory();  // built before: no memory for the message
    }
  }
}

bool Importer::SameFile(const std::string& a, const std::string& b) const {
  if (a == b) return true;
  Result<std::string> ra = fs_->RealPath(a);
  Result<std::string> rb = fs_->RealPath(b);
  return ra.ok() && rb.ok() && *ra == *rb;
}

Status Importer::AddGraphalyticsDataset() {
  const GraphalyticsDataset& d = spec_.graphalytics;
  if (d.properties.empty()) return Status::Ok();
  if (options_.format != DataFormat::kEvlp)
    return InvalidArgumentError(base::StrCat("ImportSpec::graphalytics (", d.properties,
                                             ") is an EVLP dataset: ImportOptions::format must be kEvlp"));
  QUIVER_ASSIGN_OR_RETURN(GraphalyticsProperties p, ReadGraphalyticsProperties(fs_, d.properties));
  spec_.vertices.push_back({.path = p.vertex_file, .label = d.vertex_label});
  spec_.edges.push_back({.path = p.edge_file, .label = d.edge_type});
  dataset_edges_ = FileCount() - 1;
  stats_.directed = p.directed;
  dataset_ = std::move(p);
  return Status::Ok();
}

Result<Schema> Importer::EvlpSchemaOf(std::size_t index, const CsvReader& first) const {
  const std::size_t columns = first.fields().size();
  if (index != dataset_edges_)
    return EvlpSchema(KindAt(index), columns, options_.evlp_id_key, options_.evlp_weight_key);
  // The dataset's edge file holds what its .properties declares.
  const bool weighted = !dataset_->weight_key.empty();
  if (columns != (weighted ? 3u : 2u)) {
    const std::string declared =
        weighted ? base::StrCat(dataset_->path, ":", dataset_->names_line, " declares one edge property")
                 : base::StrCat(dataset_->path, " declares no edge property");
    return PositionError(
        StatusCode::kInvalidArgument, first.path(), first.line(), 1,
        base::StrCat(columns, " fields, but ", declared, " (", weighted ? 3 : 2, " fields a line)"));
  }
  return EvlpSchema(FileKind::kEdges, columns, options_.evlp_id_key, dataset_->weight_key);
}

Result<ImportStats> Importer::RunUnguarded() {
  QUIVER_RETURN_IF_ERROR(AddGraphalyticsDataset());
  const char d = options_.delimiter;
  if (options_.format == DataFormat::kCsv && (d == '"' || d == '\n' || d == '\r')) {
    return InvalidArgumentError("ImportOptions::delimiter may not be a quote or a line break");
  }
  // A byte of a multi-byte UTF-8 character would cut characters in two.
  if (options_.format == DataFormat::kCsv && static_cast<unsigned char>(d) >= 0x80) {
    return InvalidArgumentError("ImportOptions::delimiter must be an ASCII character");
  }
  if (options_.format == DataFormat::kCsv)
    QUIVER_RETURN_IF_ERROR(CheckArrayDelimiter(options_.array_delimiter, "ImportOptions::array_delimiter"));
  for (const std::vector<ImportFile>* files : {&spec_.vertices, &spec_.edges}) {
    for (const ImportFile& f : *files) {
      if (!base::IsValidUtf8(f.label))
        return InvalidArgumentError(base::StrCat("ImportFile::label of ", f.path, " is not valid UTF-8"));
      if (!f.header.empty() && SameFile(f.header, f.path)) {
        return InvalidArgumentError(
            base::StrCat("ImportFile::header of ", f.path,
                         " is the file itself (its header line would be read as a row)"));
      }
      if (!f.header.empty() && options_.format != DataFormat::kCsv) {
        return InvalidArgumentError(
            base::StrCat("ImportFile::header of ", f.path,
                         ": a header file is for CSV only (EVLP and JSON Lines have none)"));
      }
      if (files == &spec_.vertices && f.label.find(';') != std::string::npos)
        return InvalidArgumentError(base::StrCat("ImportFile::label of ", f.path, " ('", f.label,
                                                 "') names more than one label: a Quiver vertex has one"));
    }
  }
  if (!base::IsValidUtf8(options_.evlp_id_key) || !base::IsValidUtf8(options_.evlp_weight_key) ||
      !base::IsValidUtf8(options_.jsonl_id_key))
    return InvalidArgumentError(
        "ImportOptions::evlp_id_key, evlp_weight_key and jsonl_id_key must be valid UTF-8");
  if (options_.batch_ops == 0 || options_.batches_in_flight == 0) {
    return InvalidArgumentError("ImportOptions::batch_ops and batches_in_flight must be at least 1");
  }
  if (bulk()) {
    // Checked again before the first write; here so a long parse is not wasted.
    QUIVER_RETURN_IF_ERROR(CheckBulkTarget());
  }
  rejected_lines_.assign(FileCount(), {});
  rows_.assign(FileCount(), 0);
  planned_.assign(FileCount(), {});
  planned_end_.assign(FileCount(), 0);
  if (options_.progress) {
    // The sizes the files have now (a missing one counts 0: OpenInput
    // reports it).
    progress_bases_.assign(1, 0);
    for (std::size_t i = 0; i < FileCount(); ++i) {
      std::uint64_t size = 0;
      Result<std::unique_ptr<env::ReadableFile>> file = fs_->OpenReadable(FileAt(i).path);
      if (file.ok()) {
        Result<std::uint64_t> s = (*file)->Size();
        if (s.ok()) size = *s;
      }
      progress_bases_.push_back(progress_bases_.back() + size);
    }
  }
  QUIVER_RETURN_IF_ERROR(Validate());
  QUIVER_RETURN_IF_ERROR(WriteReport());
  if (bulk()) {
    QUIVER_RETURN_IF_ERROR(BulkWrite());
  } else {
    QUIVER_RETURN_IF_ERROR(WriteIntoGraph());
  }
  return std::move(stats_);
}

Result<Importer::Input> Importer::OpenInput(std::size_t index) {
  const ImportFile& file = FileAt(index);
  const FileKind kind = KindAt(index);
  const bool evlp = options_.format == DataFormat::kEvlp;
  const bool jsonl = options_.format == DataFormat::kJsonl;
  Input in;
  in.index = index;
  if (!file.header.empty()) {
    // The header is another file's first record (CSV only: Run checked);
    // every record of this one is a row, and it may have none.
    QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<CsvReader> header,
                            CsvReader::Open(fs_, file.header, DialectOf()));
    QUIVER_ASSIGN_OR_RETURN(bool any, header->Next());
    if (!any) return PositionError(StatusCode::kInvalidArgument, file.header, 1, 1, "empty header file");
    QUIVER_ASSIGN_OR_RETURN(in.schema, ParseCsvHeader(header->fields(), kind, file.header));
    QUIVER_ASSIGN_OR_RETURN(in.reader, CsvReader::Open(fs_, file.path, DialectOf()));
  } else {
    QUIVER_ASSIGN_OR_RETURN(in.reader, CsvReader::Open(fs_, file.path, DialectOf()));
    QUIVER_ASSIGN_OR_RETURN(bool any, in.reader->Next());
    if (!any) {
      return PositionError(StatusCode::kInvalidArgument, file.path, 1, 1,
                           evlp || jsonl ? "empty file" : "empty file (no header)");
    }
  }
  if (!file.header.empty()) {
    // The schema is the header file's.
  } else if (jsonl) {
    // Its first record is a row, whose id's type is the file's.
    in.schema = JsonlSchema(
        kind, options_.jsonl_id_key,
        kind == FileKind::kVertices ? JsonlIdType(in.reader->fields()[0].text) : FieldType::kString);
    in.first_is_data = true;
  } else if (evlp) {
    QUIVER_ASSIGN_OR_RETURN(in.schema, EvlpSchemaOf(index, *in.reader));
    in.first_is_data = true;
  } else {
    QUIVER_ASSIGN_OR_RETURN(in.schema, ParseCsvHeader(in.reader->fields(), kind, file.path));
    in.rows_offset = in.reader->bytes_read();
    in.rows_line = in.reader->end_line() + 1;
  }
  in.schema.array_delimiter = options_.array_delimiter;
  if (kind == FileKind::kVertices) {
    vertex_file_bytes_ = in.reader->file_size();
    vertex_file_compressed_ = in.reader->compressed();
  }
  // (A JSON Lines row names its own label or type, or takes the file's.)
  const bool has_name_column =
      in.schema.json || (kind == FileKind::kVertices ? in.schema.label >= 0 : in.schema.type >= 0);
  if (!has_name_column && file.label.empty()) {
    return PositionError(StatusCode::kInvalidArgument, file.header.empty() ? file.path : file.header, 1, 1,
                         kind == FileKind::kVertices
                             ? "no :LABEL column and no label for the file (ImportFile::label)"
                             : "no :TYPE column and no type for the file (ImportFile::label)");
  }
  return in;
}

Result<bool> Importer::NextRow(Input* in) {
  if (in->first_is_data && !in->first_taken) {
    in->first_taken = true;
    ++in->rows;  // a row like the others, for progress
    return true;
  }
  QUIVER_ASSIGN_OR_RETURN(bool more, in->reader->Next());
  if (options_.progress && (!more || (++in->rows & 0xFFFF) == 0))
    ReportProgress(in->index, more ? in->reader->file_bytes_read() : UINT64_MAX, in->rows);
  return more;
}

void Importer::StartProgress(std::string_view phase) {
  if (!options_.progress) return;
  progress_phase_ = phase;
  progress_file_rows_.assign(FileCount(), 0);
  progress_rows_ = 0;
  options_.progress(ImportProgress{phase, 0, progress_bases_.back(), 0});
}

void Importer::ReportProgress(std::size_t index, std::uint64_t offset, std::uint64_t rows) {
  if (!options_.progress) return;
  const std::uint64_t base = progress_bases_[index];
  const std::uint64_t size = progress_bases_[index + 1] - base;  // a file that grew counts its old size
  // The phase's rows: each file's latest count, added up as they climb.
  std::uint64_t& file_rows = progress_file_rows_[index];
  if (rows > file_rows) {
    progress_rows_ += rows - file_rows;
    file_rows = rows;
  }
  options_.progress(
      ImportProgress{progress_phase_, base + std::min(offset, size), progress_bases_.back(), progress_rows_});
}

Status Importer::Reject(std::size_t file, std::uint64_t record_line, std::uint64_t line, std::uint64_t column,
                        std::string reason, std::string_view raw) {
  const std::string& path = FileAt(file).path;
  if (stats_.rejected.size() >= options_.skip_bad_rows) {
    if (options_.skip_bad_rows > 0) {
      reason.append(base::StrCat(" (more than ", options_.skip_bad_rows, " bad rows)"));
    }
    return PositionError(StatusCode::kInvalidArgument, path, line, column, reason);
  }
  stats_.rejected.push_back({path, line, column, std::move(reason)});
  rejected_raw_.emplace_back(raw);
  rejected_lines_[file].push_back(record_line);
  return Status::Ok();
}

std::uint32_t Importer::SpaceOf(std::string_view label, const Schema& schema, const IdSpace** clash) {
  const Column& col = schema.columns[schema.id];
  // Nearly always the previous row's.
  if (last_space_ < spaces_.size()) {
    const IdSpace& s = spaces_[last_space_];
    if (s.label == label && s.key == col.name && s.group == col.group && s.type == col.type)
      return last_space_;
  }
  for (std::uint32_t i = 0; i < spaces_.size(); ++i) {
    const IdSpace& s = spaces_[i];
    if (s.label == label && s.key == col.name && s.group == col.group) {
      // One label's ids kept under one key have one type (a JSON Lines
      // file's is its first id's): else no unique index could hold them.
      if (!s.key.empty() && s.type != col.type) {
        *clash = &s;
        return kNoEntry;
      }
      return last_space_ = i;
    }
  }
  spaces_.push_back({std::string(label), col.name, col.group, col.type});
  return last_space_ = static_cast<std::uint32_t>(spaces_.size() - 1);
}

std::uint32_t Importer::Find(const ExternalId& id, SpaceCache* cache) const {
  if (cache->map == nullptr || cache->group != id.group) {
    auto space = ids_.find(id.group);
    if (space == ids_.end()) return kNoEntry;
    cache->group.assign(id.group);
    cache->map = &space->second;
  }
  return cache->map->Find(id);
}

Status Importer::ValidateVertex(std::size_t index, const CsvReader& r, const Schema& schema, Row* row) {
  key_views_.clear();
  if (options_.create_id_indexes) {
    for (const Property& p : row->properties) key_views_.push_back(p.key);
  }
  const CsvField* f = row->has_id ? row->id.field : nullptr;
  return AddVertex(index,
                   {.record_line = r.line(),
                    .raw = r.raw(),
                    .label = row->label,
                    .keys = key_views_,
                    .id = row->has_id ? &row->id : nullptr,
                    .id_line = f != nullptr ? f->line : 0,
                    .id_column = f != nullptr ? f->column : 0},
                   schema);
}

Status Importer::AddVertex(std::size_t index, const VertexFacts& v, const Schema& schema) {
  if (options_.create_id_indexes) {
    const std::string_view kept = v.id != nullptr ? std::string_view(schema.columns[schema.id].name) : "";
    for (std::string_view key : v.keys) {
      if (key == kept) continue;  // its own id, kept under its key
      ordinary_keys_.try_emplace(base::StrCat(v.label, std::string_view("\0", 1), key),
                                 OrdinaryKey{static_cast<std::uint32_t>(index), v.record_line});
    }
  }
  if (v.id == nullptr) return Status::Ok();
  const IdSpace* clash = nullptr;
  const std::uint32_t space_of = SpaceOf(v.label, schema, &clash);
  if (space_of == kNoEntry) {
    const char* type = schema.columns[schema.id].type == FieldType::kInt ? "an int" : "a string";
    return Reject(index, v.record_line, v.id_line, v.id_column,
                  base::StrCat(type, " id, but the ", clash->label, " ids kept as '", clash->key, "' are ",
                               clash->type == FieldType::kInt ? "ints" : "strings",
                               " in an earlier file (one unique index could not hold both)"),
                  v.raw);
  }
  if (insert_map_ == nullptr || insert_group_ != v.id->group) {
    auto space = ids_.find(v.id->group);
    if (space == ids_.end()) {
      space = ids_.try_emplace(std::string(v.id->group)).first;
      cache_.map = nullptr;  // a rehash may have moved the maps
      // A line of the file takes a few bytes at least. (Ids of later files
      // that fall outside what this allows go to the hash table.)
      space->second.SetSizeHint(vertex_file_bytes_ / 8);
    }
    insert_map_ = &space->second;
    insert_group_.assign(v.id->group);
  }
  return AddId(index, v.record_line, v.id_line, v.id_column, *v.id, space_of, v.raw);
}

Status Importer::AddId(std::size_t index, std::uint64_t record_line, std::uint64_t line, std::uint64_t column,
                       const ExternalId& id, std::uint32_t space, std::string_view raw) {
  if (entries_.size() >= kRejectedEntry)
    return ResourceExhaustedError(base::StrCat("import: more than ", kRejectedEntry - 1,
                                               " vertices with ids; the id map holds no more"));
  // Room first: if the map took the id and the push then threw, the map
  // would name an entry that does not exist.
  base::ReserveAmortized(entries_, std::max<std::size_t>(64, entries_.size() + 1));
  auto [entry, inserted] = insert_map_->Insert(id, static_cast<std::uint32_t>(entries_.size()));
  if (!inserted) {
    const IdEntry& first = entries_[entry];
    return Reject(index, record_line, line, column,
                  base::StrCat("duplicate id '", id.Text(), "' (first at ", FileAt(first.file).path, ":",
                               first.line, ")"),
                  raw);
  }
  IdEntry e;
  e.record_line = record_line;
  e.line = line;
  e.column = column;
  e.file = static_cast<std::uint32_t>(index);
  e.space = space;
  for (std::size_t i = 0; i <= index; ++i) e.ordinal += rows_[i];
  --e.ordinal;  // rows_[index] counts this record
  entries_.push_back(e);
  return Status::Ok();
}

bool Importer::EndpointsKnown(const Row& row, SpaceCache* cache, RowIssue* issue) const {
  for (const ExternalId* id : {&row.start, &row.end}) {
    const std::uint32_t e = Find(*id, cache);
    if (e == kNoEntry || e == kRejectedEntry) {
      const char* which = id == &row.start ? ":START_ID" : ":END_ID";
      issue->reason = base::StrCat("unknown ", which, " '", id->Text(), "'");
      if (!id->group.empty()) issue->reason.append(base::StrCat(" in id space '", id->group, "'"));
      if (e == kRejectedEntry) issue->reason.append(" (its vertex row was rejected)");
      issue->line = id->field->line;
      issue->column = id->field->column;
      return false;
    }
  }
  return true;
}

Status Importer::ValidateEdge(std::size_t index, const CsvReader& r, const Row& row) {
  RowIssue issue;
  if (EndpointsKnown(row, &cache_, &issue)) return Status::Ok();
  return Reject(index, r.line(), issue.line, issue.column, std::move(issue.reason), r.raw());
}

Status Importer::ValidateFile(std::size_t index) {
  if (Splittable(index))
    return KindAt(index) == FileKind::kVertices ? ValidateVerticesParallel(index)
                                                : ValidateFileParallel(index);
  if (FastVerticesOk(index)) return ValidateVerticesFast(index);
  QUIVER_ASSIGN_OR_RETURN(Input in, OpenInput(index));
  RowBuilder builder(in.schema, FileAt(index).label);
  Row row;
  const bool vertices = KindAt(index) == FileKind::kVertices;
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(bool more, NextRow(&in));
    if (!more) break;
    QUIVER_RETURN_IF_ERROR(ValidateRow(index, *in.reader, in.schema, builder, &row).status());
    if (vertices && (rows_[index] & (kHintRows - 1)) == 0) RefineIdHint(index, in.reader->file_bytes_read());
  }
  return Status::Ok();
}

void Importer::RefineIdHint(std::size_t index, std::uint64_t bytes_done) {
  // A gzip file's compressed bytes read say little of its rows read (zlib
  // reads ahead): its first hint stands.
  if (insert_map_ == nullptr || bytes_done == 0 || vertex_file_compressed_) return;
  // The rows of this file at the rate so far, and those of the files before.
  std::uint64_t rows = 0;
  for (std::size_t i = 0; i < index; ++i) rows += rows_[i];
  const double rate = static_cast<double>(rows_[index]) / static_cast<double>(bytes_done);
  const double expected = static_cast<double>(rows) + rate * static_cast<double>(vertex_file_bytes_);
  insert_map_->SetSizeHint(static_cast<std::uint64_t>(std::min(expected * 1.125, 1e18)) + kHintRows);
}

Result<bool> Importer::ValidateRow(std::size_t index, const CsvReader& r, const Schema& schema,
                                   RowBuilder& builder, Row* row) {
  ++rows_[index];
  RowIssue issue;
  if (!builder.Build(r, row, &issue)) {
    QUIVER_RETURN_IF_ERROR(
        Reject(index, r.line(), issue.line, issue.column, std::move(issue.reason), r.raw()));
    return false;
  }
  const std::size_t rejected = stats_.rejected.size();
  if (KindAt(index) == FileKind::kVertices) {
    QUIVER_RETURN_IF_ERROR(ValidateVertex(index, r, schema, row));
  } else {
    QUIVER_RETURN_IF_ERROR(ValidateEdge(index, r, *row));
  }
  if (stats_.rejected.size() != rejected) return false;
  // The names of accepted rows only, in the order batches would intern
  // them. (A vertex rejected later, for an id another id space also
  // holds, keeps its names: the one case where the two paths' name ids
  // may differ.)
  if (bulk()) InternNames(KindAt(index), *row);
  return true;
}

// An id this import brings that a vertex of the same label already holds
// under the same key: rejected, so that the id stays unique per label (and
// a unique index on it can be built).
Status Importer::CheckExistingIds() {
  if (bulk()) return Status::Ok();  // a new graph holds no vertex
  const Snapshot snap = graph_->GetSnapshot();
  for (std::uint32_t s = 0; s < spaces_.size(); ++s) {
    const IdSpace& space = spaces_[s];
    if (space.key.empty()) continue;
    const std::optional<LabelId> label = snap.FindLabel(space.label);
    const std::optional<PropertyKeyId> key = snap.FindPropertyKey(space.key);
    auto group = ids_.find(space.group);
    if (!label || !key || group == ids_.end()) continue;
    for (VertexId v : snap.Vertices(*label)) {
      std::optional<PropertyView> value = snap.GetProperty(v, *key);
      if (!value) continue;
      std::string text;
      if (space.type == FieldType::kInt && value->as_int64()) {
        text = base::StrCat(*value->as_int64());
      } else if (space.type == FieldType::kString && value->as_string()) {
        text = std::string(*value->as_string());
      } else {
        continue;
      }
      const std::uint32_t found = group->second.FindText(text);
      if (found == kNoEntry) continue;
      IdEntry& e = entries_[found];
      if (e.space != s || e.rejected) continue;
      e.rejected = true;
      QUIVER_RETURN_IF_ERROR(Reject(e.file, e.record_line, e.line, e.column,
                                    base::StrCat("id '", text, "' is already held by vertex ", v.value(),
                                                 " (", space.label, ".", space.key, ")"),
                                    ""));
    }
  }
  return Status::Ok();
}

// Ids kept under one key of one label but imported in several id spaces
// must still differ (a unique index on the key would refuse a batch midway
// otherwise): the later of two equal ones, in input order, is rejected.
Status Importer::CheckIdsAcrossSpaces() {
  struct Seen {
    std::string id;
    std::uint32_t entry;
  };
  for (std::uint32_t s = 0; s < spaces_.size(); ++s) {
    const IdSpace& space = spaces_[s];
    std::vector<std::uint32_t> shared;  // spaces of the same label and key, s first
    for (std::uint32_t t = s; t < spaces_.size(); ++t) {
      if (spaces_[t].label == space.label && spaces_[t].key == space.key) shared.push_back(t);
    }
    if (space.key.empty() || shared.size() < 2 || shared.front() != s) continue;
    std::vector<Seen> seen;
    for (std::uint32_t t : shared) {
      auto group = ids_.find(spaces_[t].group);
      if (group == ids_.end()) continue;
      group->second.ForEach([&](std::string id, std::uint32_t entry) {
        if (entries_[entry].space == t) seen.push_back({std::move(id), entry});
      });
    }
    std::sort(seen.begin(), seen.end(), [&](const Seen& a, const Seen& b) {
      const IdEntry& x = entries_[a.entry];
      const IdEntry& y = entries_[b.entry];
      return std::tie(a.id, x.file, x.line) < std::tie(b.id, y.file, y.line);
    });
    for (std::size_t i = 1; i < seen.size(); ++i) {
      if (seen[i].id != seen[i - 1].id) continue;
      IdEntry& e = entries_[seen[i].entry];
      const IdEntry& first = entries_[seen[i - 1].entry];
      e.rejected = true;
      QUIVER_RETURN_IF_ERROR(
          Reject(e.file, e.record_line, e.line, e.column,
                 base::StrCat("id '", seen[i].id, "' is also the ", space.key, " of a ", space.label, " at ",
                              FileAt(first.file).path, ":", first.line, " (another id space)"),
                 ""));
    }
  }
  return Status::Ok();
}

Result<std::vector<std::uint32_t>> Importer::BulkVertexIds() {
  std::uint64_t vertices = 0;
  for (std::size_t f = 0; f < spec_.vertices.size(); ++f) {
    std::sort(rejected_lines_[f].begin(), rejected_lines_[f].end());
    vertices += rows_[f] - rejected_lines_[f].size();
  }
  // The id maps hold vertex ids as u32 on this path.
  if (vertices >= kRejectedEntry)
    return ResourceExhaustedError(base::StrCat("import: ", vertices,
                                               " vertices; a new graph built whole takes at most ",
                                               kRejectedEntry - 1, " (use Import into an open graph)"));
  std::vector<std::uint32_t> ids(entries_.size());
  std::uint64_t rejected_before_file = 0;
  std::size_t file = 0;
  std::size_t next = 0;  // rejected_lines_[file][next] is the first at or after the entry's record
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    const IdEntry& entry = entries_[e];
    while (file < entry.file) {
      rejected_before_file += rejected_lines_[file++].size();
      next = 0;
    }
    const std::vector<std::uint64_t>& lines = rejected_lines_[file];
    while (next < lines.size() && lines[next] < entry.record_line) ++next;
    ids[e] = static_cast<std::uint32_t>(entry.ordinal - rejected_before_file - next);
  }
  return ids;
}

Status Importer::CheckOrdinaryIdKeys() const {
  for (const IdSpace& space : spaces_) {
    if (space.key.empty()) continue;
    auto it = ordinary_keys_.find(base::StrCat(space.label, std::string_view("\0", 1), space.key));
    if (it == ordinary_keys_.end()) continue;
    return PositionError(StatusCode::kInvalidArgument, FileAt(it->second.file).path, it->second.line, 1,
                         base::StrCat("a ", space.label, " holds '", space.key,
                                      "' from an ordinary column or property, but that key keeps the ",
                                      space.label, " ids (create_id_indexes needs it to hold ids only)"));
  }
  return Status::Ok();
}

Status Importer::Validate() {
  StartProgress("checking");
  for (std::size_t i = 0; i < spec_.vertices.size(); ++i) QUIVER_RETURN_IF_ERROR(ValidateFile(i));
  if (options_.create_id_indexes) QUIVER_RETURN_IF_ERROR(CheckOrdinaryIdKeys());
  QUIVER_RETURN_IF_ERROR(CheckIdsAcrossSpaces());
  QUIVER_RETURN_IF_ERROR(CheckExistingIds());
  // Every vertex is in. A rejected vertex's id stays in its map, marked, so
  // an edge naming it is told why. On the bulk path the maps hold vertex
  // ids from here on (an edge endpoint is one lookup); through batches,
  // entries (the vertex ids are known once the batches commit).
  std::vector<std::uint32_t> remap;  // entry -> what the maps hold from here on
  if (bulk()) {
    QUIVER_ASSIGN_OR_RETURN(remap, BulkVertexIds());
  } else {
    remap.resize(entries_.size());
    for (std::uint32_t e = 0; e < remap.size(); ++e) remap[e] = e;
  }
  for (std::uint32_t e = 0; e < remap.size(); ++e) {
    if (entries_[e].rejected) remap[e] = kRejectedEntry;
  }
  for (auto& [group, map] : ids_) map.Freeze(remap);
  for (std::size_t i = spec_.vertices.size(); i < FileCount(); ++i) QUIVER_RETURN_IF_ERROR(ValidateFile(i));
  for (std::vector<std::uint64_t>& lines : rejected_lines_) std::sort(lines.begin(), lines.end());
  return Status::Ok();
}

Status Importer::WriteReport() {
  if (options_.reject_report.empty()) return Status::Ok();
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<CsvWriter> w,
                          CsvWriter::Create(fs_, options_.reject_report, env::OpenMode::kTruncate));
  std::string* out = w->buffer();
  out->append("file,line,column,reason,row\n");
  for (std::size_t i = 0; i < stats_.rejected.size(); ++i) {
    const ImportRowError& e = stats_.rejected[i];
    AppendCsvField(out, e.file, ',', true);
    out->append(base::StrCat(",", e.line, ",", e.column, ","));
    AppendCsvField(out, e.reason, ',', true);
    out->push_back(',');
    AppendCsvField(out, rejected_raw_[i], ',', true);
    out->push_back('\n');
    QUIVER_RETURN_IF_ERROR(w->MaybeFlush());
  }
  return w->Finish();
}

}  // namespace quiver::import
