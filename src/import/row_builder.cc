// RowBuilder: see row_builder.h.
#include "import/row_builder.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "base/strings.h"
#include "import/field_value.h"

namespace quiver::import {
namespace {

bool RejectRow(RowIssue* issue, std::uint64_t line, std::uint64_t column, std::string reason) {
  issue->line = line;
  issue->column = column;
  issue->reason = std::move(reason);
  return false;
}

bool RejectAt(RowIssue* issue, const CsvField& f, std::string reason) {
  return RejectRow(issue, f.line, f.column, std::move(reason));
}

}  // namespace

RowBuilder::RowBuilder(const Schema& schema, std::string_view default_label)
    : schema_(schema), default_label_(default_label) {}

bool RowBuilder::BuildId(const CsvField& f, const Column& col, ExternalId* id, RowIssue* issue) {
  id->group = col.group;
  id->field = &f;
  if (f.text.empty()) return RejectAt(issue, f, "empty id");
  if (col.type == FieldType::kInt) {
    std::string why;
    std::optional<PropertyValue> v = ParseFieldValue(FieldType::kInt, f.text, &why);
    if (!v) return RejectAt(issue, f, why);
    id->SetNumber(*v->as_int64());
  } else {
    id->SetText(f.text);
  }
  return true;
}

bool RowBuilder::BuildLabel(const CsvField* f, Row* row, RowIssue* issue) {
  row->label = f != nullptr && !f->text.empty() ? f->text : default_label_;
  const bool vertices = schema_.kind == FileKind::kVertices;
  if (row->label.empty()) {
    const char* what = vertices ? "no label (empty :LABEL and no default label for the file)"
                                : "no type (empty :TYPE and no default type for the file)";
    if (f != nullptr) return RejectAt(issue, *f, what);
    return RejectRow(issue, 0, 0, what);  // caught at the header; see ImportFile::label
  }
  if (vertices && row->label.find(';') != std::string_view::npos) {
    // The file's own label is refused before any row (Importer::Run).
    if (f == nullptr || f->text.empty())
      return RejectRow(issue, 0, 0, "more than one label in the file's label");
    return RejectAt(issue, *f,
                    base::StrCat("more than one label ('", row->label, "'): a Quiver vertex has one"));
  }
  return true;
}

bool RowBuilder::Build(const CsvReader& reader, Row* row, RowIssue* issue) {
  const std::span<const CsvField> fields = reader.fields();
  const std::size_t want = schema_.columns.size();
  if (fields.size() > want) {
    return RejectAt(issue, fields[want],
                    base::StrCat("wrong column count: ", fields.size(), " fields, the header has ", want));
  }
  if (fields.size() < want) {
    return RejectRow(issue, reader.end_line(), reader.end_column(),
                     base::StrCat("wrong column count: ", fields.size(), " fields, the header has ", want));
  }
  row->properties.clear();
  row->has_id = false;
  seen_keys_.clear();
  const CsvField* label = schema_.label >= 0 ? &fields[schema_.label] : nullptr;
  if (schema_.kind == FileKind::kEdges && schema_.type >= 0) label = &fields[schema_.type];
  if (!BuildLabel(label, row, issue)) return false;
  for (std::size_t i = 0; i < want; ++i) {
    const Column& col = schema_.columns[i];
    const CsvField& f = fields[i];
    switch (col.role) {
      case ColumnRole::kId:
        if (!BuildId(f, col, &row->id, issue)) return false;
        row->has_id = true;
        if (!col.name.empty()) {
          if (col.type == FieldType::kInt) {
            row->properties.push_back({col.name, PropertyValue(row->id.number)});
          } else {
            row->properties.push_back({col.name, PropertyValue(f.text)});
          }
          seen_keys_.push_back(col.name);
        }
        break;
      case ColumnRole::kStartId:
        if (!BuildId(f, col, &row->start, issue)) return false;
        break;
      case ColumnRole::kEndId:
        if (!BuildId(f, col, &row->end, issue)) return false;
        break;
      case ColumnRole::kProperty: {
        if (f.text.empty() && !f.quoted) break;  // unset
        std::string why;
        std::optional<PropertyValue> v = ParseFieldValue(col.type, f.text, &why);
        if (!v) return RejectAt(issue, f, base::StrCat(why, " (column ", col.name, ")"));
        if (std::find(seen_keys_.begin(), seen_keys_.end(), col.name) != seen_keys_.end()) {
          return RejectAt(issue, f, base::StrCat("property '", col.name, "' given twice"));
        }
        seen_keys_.push_back(col.name);
        row->properties.push_back({col.name, std::move(*v)});
        break;
      }
      case ColumnRole::kLabel:
      case ColumnRole::kType:
      case ColumnRole::kIgnore: break;
    }
  }
  return true;
}

}  // namespace quiver::import
