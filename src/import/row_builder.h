// RowBuilder: one record of an import file, checked against its schema and
// turned into what a WriteBatch needs (label or type, properties, the id or
// endpoint fields). Both passes of an import (validate, then write) build
// every row with it, so they agree on what a row means.
//
// Example:
//   RowBuilder b(schema, "Person");
//   Row row;
//   RowIssue issue;
//   if (!b.Build(*reader, &row, &issue)) Reject(issue.line, issue.column, issue.reason);
#ifndef QUIVER_IMPORT_ROW_BUILDER_H_
#define QUIVER_IMPORT_ROW_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "import/csv_reader.h"
#include "import/csv_schema.h"
#include "import/id_map.h"
#include "quiver/value.h"

namespace quiver::import {

// Why a row is bad, and where.
struct RowIssue {
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  std::string reason;
};

struct Row {
  std::string_view label;  // vertex label or edge type
  std::vector<Property> properties;
  bool has_id = false;
  ExternalId id;     // vertices, if has_id
  ExternalId start;  // edges
  ExternalId end;
};

// The type of a JSON Lines vertex record's "id" member: kInt for a
// number, else kString (what the file's ids must all be, if it is its first).
FieldType JsonlIdType(std::string_view record);

class RowBuilder {
 public:
  // `schema` must outlive the builder; `default_label` is the file's label.
  RowBuilder(const Schema& schema, std::string_view default_label);
  ~RowBuilder();
  RowBuilder(const RowBuilder&) = delete;
  RowBuilder& operator=(const RowBuilder&) = delete;

  // Builds the reader's current record into `row` (views into the reader,
  // valid until its next Next()). False, with `issue` set, for a bad row.
  bool Build(const CsvReader& reader, Row* row, RowIssue* issue);

 private:
  bool BuildId(const CsvField& f, const Column& col, ExternalId* id, RowIssue* issue);
  // `csv`: a ';' in a vertex's :LABEL separates labels (the Neo4j
  // convention), and a Quiver vertex has one, so such a row is refused; a
  // JSON Lines "label" is one string, ';' and all.
  bool BuildLabel(const CsvField* f, bool csv, Row* row, RowIssue* issue);
  // JSON Lines (Schema::json): the record's one field is a JSON object.
  bool BuildJson(const CsvReader& reader, Row* row, RowIssue* issue);
  struct Json;  // the parser and its buffers (row_builder.cc)
  std::unique_ptr<Json> json_;

  const Schema& schema_;
  std::string_view default_label_;
  std::vector<std::string_view> seen_keys_;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_ROW_BUILDER_H_
