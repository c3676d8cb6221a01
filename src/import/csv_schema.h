// The typed header of an import file: what each column is (an id, a label,
// an endpoint, a type, a property of a given value type, ignored), parsed
// from a Neo4j-style CSV header (`id:ID(Group)`, `:LABEL`, `age:int`, ...)
// or built for an EVLP file. docs/import-export.md lists the header types.
//
// Example:
//   QUIVER_ASSIGN_OR_RETURN(Schema s, ParseCsvHeader(reader->fields(), FileKind::kVertices, path));
//   if (s.id >= 0) ...  // s.columns[s.id].name is the id property ("" if not kept)
#ifndef QUIVER_IMPORT_CSV_SCHEMA_H_
#define QUIVER_IMPORT_CSV_SCHEMA_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "import/csv_reader.h"
#include "quiver/status.h"

namespace quiver::import {

enum class FileKind : std::uint8_t { kVertices, kEdges };

enum class ColumnRole : std::uint8_t { kProperty, kId, kLabel, kStartId, kEndId, kType, kIgnore };

// The value types a column may declare, each mapped onto a Quiver value.
enum class FieldType : std::uint8_t {
  kString,       // string
  kInt,          // int, long, short, byte -> int64
  kDouble,       // double, float -> double
  kBool,         // boolean
  kFloatArray,   // float[] -> float32 vector
  kBytes,        // bytes (hex) -> bytes; a Quiver extension
  kStringArray,  // string[] -> string list
};

// The header name of a field type ("int", "double", ...), as export writes it.
std::string_view FieldTypeName(FieldType type);

struct Column {
  ColumnRole role = ColumnRole::kProperty;
  // Property key (kProperty; kId: the property that keeps the id, "" for none).
  std::string name;
  FieldType type = FieldType::kString;
  // Id space of kId / kStartId / kEndId ("" for the default one).
  std::string group;
};

struct Schema {
  FileKind kind = FileKind::kVertices;
  std::vector<Column> columns;
  // Column index of each special column, -1 if absent.
  int id = -1;
  int label = -1;
  int start = -1;
  int end = -1;
  int type = -1;
  // JSON Lines: each record is one JSON object (RowBuilder reads its
  // members); `columns` name the id (vertices: its key and type) and the
  // endpoints.
  bool json = false;
  // The separator of float[] and string[] elements (ImportOptions::
  // array_delimiter).
  char array_delimiter = ';';
};

// Parses the header record `header` of file `path`. Errors carry the
// header field's position: InvalidArgument for an unknown type, a column
// that does not belong in this kind of file, a repeated special column, an
// empty property name, a missing :START_ID / :END_ID; Unimplemented for a
// type Quiver has no value for (arrays other than float[] and string[],
// temporal and spatial types).
Result<Schema> ParseCsvHeader(std::span<const CsvField> header, FileKind kind, std::string_view path);

// The schema of an EVLP file: a vertex file holds an int id (kept under
// `id_key`, "" for not kept); an edge file two int endpoints and, when
// `columns` is 3, a double weight kept under `weight_key`.
Schema EvlpSchema(FileKind kind, std::size_t columns, std::string_view id_key, std::string_view weight_key);

// The schema of a JSON Lines file: a vertex file's ids are kept under
// `id_key` ("" for not kept) and are of `id_type` (kInt or kString: the
// type of the file's first id); an edge file's endpoints may be either.
Schema JsonlSchema(FileKind kind, std::string_view id_key, FieldType id_type);

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_CSV_SCHEMA_H_
