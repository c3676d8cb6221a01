// Header parsing: see csv_schema.h. A header field is `name:type`, split at
// its last ':' (so a key may hold ':' when a type follows); a field without
// ':' is a string property.
#include "import/csv_schema.h"

#include <array>
#include <utility>

#include "base/strings.h"

namespace quiver::import {
namespace {

struct TypeName {
  std::string_view name;
  FieldType type;
};

constexpr std::array<TypeName, 10> kFieldTypes = {{{"string", FieldType::kString},
                                                   {"int", FieldType::kInt},
                                                   {"long", FieldType::kInt},
                                                   {"short", FieldType::kInt},
                                                   {"byte", FieldType::kInt},
                                                   {"double", FieldType::kDouble},
                                                   {"float", FieldType::kDouble},
                                                   {"boolean", FieldType::kBool},
                                                   {"float[]", FieldType::kFloatArray},
                                                   {"string[]", FieldType::kStringArray}}};

// Neo4j types with no Quiver value (yet).
constexpr std::array<std::string_view, 9> kUnsupportedTypes = {
    "date", "localtime", "time", "localdatetime", "datetime", "duration", "point", "char", "vector"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// "ID(Group)" -> role name "ID", group "Group".
bool SplitGroup(std::string_view type, std::string_view* base, std::string_view* group) {
  const std::size_t open = type.find('(');
  if (open == std::string_view::npos) {
    *base = type;
    *group = {};
    return true;
  }
  if (type.back() != ')') return false;
  *base = type.substr(0, open);
  *group = type.substr(open + 1, type.size() - open - 2);
  return true;
}

struct HeaderContext {
  std::string_view path;
  const CsvField* field;
  Status Error(StatusCode code, std::string_view reason) const {
    return PositionError(code, path, field->line, field->column, reason);
  }
};

Status SetSpecial(const HeaderContext& ctx, int* slot, int index, std::string_view what) {
  if (*slot >= 0) return ctx.Error(StatusCode::kInvalidArgument, base::StrCat("a second ", what, " column"));
  *slot = index;
  return Status::Ok();
}

Result<FieldType> PropertyType(const HeaderContext& ctx, std::string_view type) {
  const std::string lower = Lower(type);
  if (lower == "bytes") return FieldType::kBytes;
  for (const TypeName& t : kFieldTypes) {
    if (t.name == lower) return t.type;
  }
  if (lower.size() > 2 && lower.ends_with("[]")) {
    return ctx.Error(StatusCode::kUnimplemented,
                     base::StrCat("array type '", type, "' is not supported: Quiver's arrays are ",
                                  "float[] (a float32 vector) and string[] (a string list)"));
  }
  for (std::string_view u : kUnsupportedTypes) {
    if (u == lower) {
      return ctx.Error(StatusCode::kUnimplemented,
                       base::StrCat("type '", type, "' is not supported: Quiver has no such value type"));
    }
  }
  return ctx.Error(StatusCode::kInvalidArgument, base::StrCat("unknown header type '", type, "'"));
}

// One header field into `schema`.
Status AddColumn(const HeaderContext& ctx, FileKind kind, Schema* schema) {
  const std::string_view text = ctx.field->text;
  const int index = static_cast<int>(schema->columns.size());
  const std::size_t colon = text.rfind(':');
  Column col;
  col.name = std::string(colon == std::string_view::npos ? text : text.substr(0, colon));
  const std::string_view type = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  std::string_view base_type;
  std::string_view group;
  if (!SplitGroup(type, &base_type, &group)) {
    return ctx.Error(StatusCode::kInvalidArgument, base::StrCat("unknown header type '", type, "'"));
  }
  col.group = std::string(group);
  const bool vertices = kind == FileKind::kVertices;
  const char* wrong_file = vertices ? " column in a vertex file" : " column in an edge file";
  if (base_type == "ID" || base_type == "LABEL" || base_type == "START_ID" || base_type == "END_ID" ||
      base_type == "TYPE") {
    const bool vertex_role = base_type == "ID" || base_type == "LABEL";
    if (vertex_role != vertices) {
      return ctx.Error(StatusCode::kInvalidArgument, base::StrCat("a :", base_type, wrong_file));
    }
    const bool takes_group = base_type == "ID" || base_type == "START_ID" || base_type == "END_ID";
    if (!takes_group && !group.empty()) {
      return ctx.Error(StatusCode::kInvalidArgument, base::StrCat("unknown header type '", type, "'"));
    }
  } else if (!group.empty()) {
    return ctx.Error(StatusCode::kInvalidArgument, base::StrCat("unknown header type '", type, "'"));
  }
  if (base_type == "ID") {
    col.role = ColumnRole::kId;
    QUIVER_RETURN_IF_ERROR(SetSpecial(ctx, &schema->id, index, ":ID"));
  } else if (base_type == "LABEL") {
    col.role = ColumnRole::kLabel;
    QUIVER_RETURN_IF_ERROR(SetSpecial(ctx, &schema->label, index, ":LABEL"));
  } else if (base_type == "START_ID") {
    col.role = ColumnRole::kStartId;
    QUIVER_RETURN_IF_ERROR(SetSpecial(ctx, &schema->start, index, ":START_ID"));
  } else if (base_type == "END_ID") {
    col.role = ColumnRole::kEndId;
    QUIVER_RETURN_IF_ERROR(SetSpecial(ctx, &schema->end, index, ":END_ID"));
  } else if (base_type == "TYPE") {
    col.role = ColumnRole::kType;
    QUIVER_RETURN_IF_ERROR(SetSpecial(ctx, &schema->type, index, ":TYPE"));
  } else if (base_type == "IGNORE") {
    col.role = ColumnRole::kIgnore;
  } else {
    col.role = ColumnRole::kProperty;
    if (col.name.empty()) return ctx.Error(StatusCode::kInvalidArgument, "a property column needs a name");
    if (!base_type.empty()) {
      QUIVER_ASSIGN_OR_RETURN(col.type, PropertyType(ctx, base_type));
    }
  }
  schema->columns.push_back(std::move(col));
  return Status::Ok();
}

}  // namespace

std::string_view FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kString: return "string";
    case FieldType::kInt: return "int";
    case FieldType::kDouble: return "double";
    case FieldType::kBool: return "boolean";
    case FieldType::kFloatArray: return "float[]";
    case FieldType::kBytes: return "bytes";
    case FieldType::kStringArray: return "string[]";
  }
  return "string";
}

Result<Schema> ParseCsvHeader(std::span<const CsvField> header, FileKind kind, std::string_view path) {
  Schema schema;
  schema.kind = kind;
  for (const CsvField& field : header) {
    QUIVER_RETURN_IF_ERROR(AddColumn(HeaderContext{path, &field}, kind, &schema));
  }
  if (kind == FileKind::kEdges && (schema.start < 0 || schema.end < 0)) {
    const CsvField& first = header.front();
    return PositionError(
        StatusCode::kInvalidArgument, path, first.line, first.column,
        schema.start < 0 ? "an edge file needs a :START_ID column" : "an edge file needs an :END_ID column");
  }
  return schema;
}

Schema EvlpSchema(FileKind kind, std::size_t columns, std::string_view id_key, std::string_view weight_key) {
  Schema s;
  s.kind = kind;
  if (kind == FileKind::kVertices) {
    s.columns.push_back({ColumnRole::kId, std::string(id_key), FieldType::kInt, ""});
    s.id = 0;
    return s;
  }
  s.columns.push_back({ColumnRole::kStartId, "", FieldType::kInt, ""});
  s.columns.push_back({ColumnRole::kEndId, "", FieldType::kInt, ""});
  s.start = 0;
  s.end = 1;
  if (columns >= 3)
    s.columns.push_back({ColumnRole::kProperty, std::string(weight_key), FieldType::kDouble, ""});
  return s;
}

Schema JsonlSchema(FileKind kind, std::string_view id_key, FieldType id_type) {
  Schema s;
  s.kind = kind;
  s.json = true;
  if (kind == FileKind::kVertices) {
    s.columns.push_back({ColumnRole::kId, std::string(id_key), id_type, ""});
    s.id = 0;
    return s;
  }
  s.columns.push_back({ColumnRole::kStartId, "", FieldType::kString, ""});
  s.columns.push_back({ColumnRole::kEndId, "", FieldType::kString, ""});
  s.start = 0;
  s.end = 1;
  return s;
}

}  // namespace quiver::import
