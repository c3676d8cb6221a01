// RowBuilder: see row_builder.h.
#include "import/row_builder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "base/strings.h"
#include "import/field_value.h"
#include "simdjson.h"

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

// The JSON Lines state of a builder: simdjson's parser, the record copied
// with the padding simdjson reads past its end, and the fields (positions)
// the row's ids point at.
struct RowBuilder::Json {
  simdjson::ondemand::parser parser;
  std::string padded;
  CsvField id, start, end;
  std::string label;    // the label's unescaped text (a view into the parser dies with the next value)
  std::string id_text;  // a string id as written
  bool id_is_number = false;
};

RowBuilder::RowBuilder(const Schema& schema, std::string_view default_label)
    : schema_(schema), default_label_(default_label) {}

RowBuilder::~RowBuilder() = default;

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

bool RowBuilder::BuildLabel(const CsvField* f, bool csv, Row* row, RowIssue* issue) {
  row->label = f != nullptr && !f->text.empty() ? f->text : default_label_;
  const bool vertices = schema_.kind == FileKind::kVertices;
  if (row->label.empty()) {
    const char* what = vertices ? "no label (empty :LABEL and no default label for the file)"
                                : "no type (empty :TYPE and no default type for the file)";
    if (f != nullptr) return RejectAt(issue, *f, what);
    return RejectRow(issue, 0, 0, what);  // caught at the header; see ImportFile::label
  }
  if (vertices && csv && row->label.find(';') != std::string_view::npos) {
    // The file's own label is refused before any row (Importer::Run).
    if (f == nullptr || f->text.empty())
      return RejectRow(issue, 0, 0, "more than one label in the file's label");
    return RejectAt(issue, *f,
                    base::StrCat("more than one label ('", row->label, "'): a Quiver vertex has one"));
  }
  return true;
}

namespace {

namespace ondemand = simdjson::ondemand;

// A raw token without the white space after it.
std::string_view TrimJsonSpace(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Where the parser stopped in `doc`, null if it cannot say.
const char* Location(ondemand::document& doc) {
  const char* at = nullptr;
  if (doc.current_location().get(at) != simdjson::SUCCESS) return nullptr;
  return at;
}

// A JSON array as a float vector (numbers) or a string list (strings), by
// its first element; `strings_only` ({"strings": [...]}) takes strings only.
// An empty array is an empty float vector, or with `strings_only` an empty
// string list.
std::optional<PropertyValue> JsonArray(ondemand::array a, bool strings_only, std::string* why) {
  FloatVector floats;
  StringList strings;
  bool as_strings = strings_only;
  bool first = true;
  for (auto element : a) {
    if (element.error() != simdjson::SUCCESS) {
      *why = "invalid JSON";
      return std::nullopt;
    }
    ondemand::value e = element.value_unsafe();
    ondemand::json_type t;
    if (e.type().get(t) != simdjson::SUCCESS) {
      *why = "invalid JSON";
      return std::nullopt;
    }
    if (first && !strings_only) as_strings = t == ondemand::json_type::string;
    first = false;
    if (as_strings) {
      std::string_view s;
      if (t != ondemand::json_type::string) {
        *why = strings_only ? "\"strings\" holds strings only (a string list)"
                            : "an array holds strings only (a string list) or numbers only (a float vector)";
        return std::nullopt;
      }
      if (e.get_string().get(s) != simdjson::SUCCESS) {
        *why = "invalid JSON string in a string list (a bad escape)";
        return std::nullopt;
      }
      strings.emplace_back(s);
      continue;
    }
    if (t != ondemand::json_type::number) {
      *why = "an array holds numbers only (a float vector) or strings only (a string list)";
      return std::nullopt;
    }
    // Each read as a float from its own digits (what export writes round
    // trips; through a double it could round twice).
    const std::string_view digits = e.raw_json_token();
    std::string item_why;
    std::optional<PropertyValue> f =
        ParseFieldValue(FieldType::kFloatArray, TrimJsonSpace(digits), &item_why);
    double d = 0;
    if (!f || f->as_float_vector()->size() != 1 || e.get_double().get(d) != simdjson::SUCCESS) {
      *why = base::StrCat("'", TrimJsonSpace(digits), "' is not a finite float (in a float vector)");
      return std::nullopt;
    }
    floats.push_back((*f->as_float_vector())[0]);
  }
  if (as_strings) {
    if (!CheckListLength(strings.size(), why)) return std::nullopt;
    return PropertyValue(std::move(strings));
  }
  return PropertyValue(std::move(floats));
}

// A JSON value as a property value; nullopt with `*why` for a value Quiver
// has no type for. A null gives a null value (the property is left unset).
std::optional<PropertyValue> JsonValue(ondemand::value v, std::string* why) {
  ondemand::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) {
    *why = "invalid JSON";
    return std::nullopt;
  }
  switch (type) {
    case ondemand::json_type::null: {
      // (is_null's result converted to bool throws on an error, such as
      // "nd" where a null was expected: found by fuzz_import.)
      bool null = false;
      if (v.is_null().get(null) != simdjson::SUCCESS || !null) break;
      return PropertyValue();
    }
    case ondemand::json_type::boolean: {
      bool b = false;
      if (v.get_bool().get(b) != simdjson::SUCCESS) break;
      return PropertyValue(b);
    }
    case ondemand::json_type::number: {
      // simdjson checks the grammar; the value is read from the digits as
      // CSV reads them (simdjson 3.0.1's slow path gives 0 for 19 or more
      // significant digits), so both formats agree on every number.
      const std::string_view digits = TrimJsonSpace(v.raw_json_token());
      ondemand::number n;
      if (v.get_number().get(n) != simdjson::SUCCESS &&
          digits.find_first_of(".eE") == std::string_view::npos) {
        // An integer simdjson cannot hold: beyond int64 (or not one at all).
        std::uint64_t u = 0;
        const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), u);
        *why = r.ec == std::errc::result_out_of_range ? "an integer beyond the int64 range"
                                                      : base::StrCat("'", digits, "' is not a JSON number");
        return std::nullopt;
      }
      const bool integral = digits.find_first_of(".eE") == std::string_view::npos;
      if (integral && n.get_number_type() == ondemand::number_type::unsigned_integer) {
        *why = "an integer beyond the int64 range";
        return std::nullopt;
      }
      std::string item_why;
      std::optional<PropertyValue> value =
          ParseFieldValue(integral ? FieldType::kInt : FieldType::kDouble, digits, &item_why);
      if (!value) {
        *why = integral ? "an integer beyond the int64 range"
                        : base::StrCat("'", digits, "' is not a finite double");
        return std::nullopt;
      }
      return value;
    }
    case ondemand::json_type::string: {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) {
        *why = "invalid JSON string (a bad escape)";
        return std::nullopt;
      }
      return PropertyValue(s);
    }
    case ondemand::json_type::array: {
      // Numbers: a float vector; strings: a string list (the first element
      // decides; `[]` is an empty float vector).
      ondemand::array a;
      if (v.get_array().get(a) != simdjson::SUCCESS) break;
      return JsonArray(a, /*strings_only=*/false, why);
    }
    case ondemand::json_type::object: {
      // {"bytes": "<hex>"}: a bytes value; {"strings": [...]}: a string list.
      constexpr const char* kForms = "an object value must be {\"bytes\": \"<hex>\"} or {\"strings\": [...]}";
      ondemand::object o;
      if (v.get_object().get(o) != simdjson::SUCCESS) break;
      std::optional<PropertyValue> value;
      for (auto member : o) {
        std::string_view key;
        if (value || member.unescaped_key().get(key) != simdjson::SUCCESS) {
          *why = kForms;
          return std::nullopt;
        }
        if (key == "bytes") {
          std::string_view hex;
          if (member.value().get_string().get(hex) != simdjson::SUCCESS) {
            *why = kForms;
            return std::nullopt;
          }
          value = ParseFieldValue(FieldType::kBytes, hex, why);
        } else if (key == "strings") {
          ondemand::array a;
          if (member.value().get_array().get(a) != simdjson::SUCCESS) {
            *why = kForms;
            return std::nullopt;
          }
          value = JsonArray(a, /*strings_only=*/true, why);
        } else {
          *why = kForms;
          return std::nullopt;
        }
        if (!value) return std::nullopt;
      }
      if (!value) *why = kForms;
      return value;
    }
  }
  *why = "invalid JSON";
  return std::nullopt;
}

}  // namespace

bool RowBuilder::BuildJson(const CsvReader& reader, Row* row, RowIssue* issue) {
  if (json_ == nullptr) json_ = std::make_unique<Json>();
  Json& j = *json_;
  const CsvField& record = reader.fields()[0];
  j.padded.assign(record.text);
  j.padded.append(simdjson::SIMDJSON_PADDING, '\0');
  const char* base = j.padded.data();
  // The position of `p` (a pointer into the record's copy).
  auto column_of = [&](const char* p) {
    const std::size_t offset =
        p != nullptr && p >= base && p <= base + record.text.size() ? static_cast<std::size_t>(p - base) : 0;
    return record.column + offset;
  };
  auto reject_at = [&](const char* p, std::string reason) {
    return RejectRow(issue, record.line, column_of(p), std::move(reason));
  };
  row->properties.clear();
  row->has_id = false;
  seen_keys_.clear();
  const bool vertices = schema_.kind == FileKind::kVertices;
  ondemand::document doc;
  ondemand::object object;
  simdjson::error_code error = j.parser.iterate(base, record.text.size(), j.padded.size()).get(doc);
  if (error == simdjson::SUCCESS) error = doc.get_object().get(object);
  if (error != simdjson::SUCCESS) {
    const std::size_t first = record.text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || record.text[first] != '{')
      return reject_at(base, "not a JSON object");
    return reject_at(base, base::StrCat("invalid JSON (", simdjson::error_message(error), ")"));
  }
  // Sets `id` from a string or an integer member (a vertex's: also
  // id_is_number and id_text).
  auto take_id = [&](ondemand::value v, const char* where, CsvField* field, ExternalId* id) -> bool {
    field->line = record.line;
    field->column = column_of(where);
    field->text = {};
    id->group = "";
    id->field = field;
    ondemand::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS) return reject_at(where, "invalid JSON");
    if (type == ondemand::json_type::number) {
      std::int64_t n = 0;
      if (v.get_int64().get(n) != simdjson::SUCCESS)
        return reject_at(where, "an id must be a string or an int64");
      id->SetNumber(n);
      j.id_is_number = true;
      return true;
    }
    std::string_view s;
    if (type != ondemand::json_type::string) return reject_at(where, "an id must be a string or an int64");
    if (v.get_string().get(s) != simdjson::SUCCESS)
      return reject_at(where, "invalid JSON string (a bad escape)");
    if (s.empty()) return reject_at(where, "empty id");
    id->SetText(s);
    j.id_is_number = false;
    j.id_text.assign(s);
    return true;
  };
  bool has_label = false, has_start = false, has_end = false, has_properties = false;
  const char* label_at = base;
  PropertyValue id_value;
  for (auto member : object) {
    if (member.error() != simdjson::SUCCESS) return reject_at(Location(doc), "invalid JSON");
    ondemand::field field = member.value_unsafe();
    const char* key_at = field.key().raw() - 1;  // its opening quote (before unescaped_key takes the key)
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      return reject_at(key_at, "invalid JSON string (a bad escape in a member name)");
    ondemand::value v = field.value();
    const char* at = v.raw_json_token().data();
    const std::string_view k = key;
    if (vertices && k == "id" && !row->has_id) {
      if (!take_id(v, at, &j.id, &row->id)) return false;
      row->has_id = true;
      // One label's ids are all numbers or all strings: the file's first id decides.
      if (j.id_is_number != (schema_.columns[0].type == FieldType::kInt))
        return reject_at(at, j.id_is_number
                                 ? "a number id in a file whose ids are strings (as its first row's)"
                                 : "a string id in a file whose ids are numbers (as its first row's)");
    } else if (!vertices && (k == "start" || k == "end") && !(k == "start" ? has_start : has_end)) {
      if (!take_id(v, at, k == "start" ? &j.start : &j.end, k == "start" ? &row->start : &row->end))
        return false;
      (k == "start" ? has_start : has_end) = true;
    } else if (k == (vertices ? "label" : "type") && !has_label) {
      std::string_view s;
      ondemand::json_type type;
      if (v.type().get(type) != simdjson::SUCCESS || type != ondemand::json_type::string)
        return reject_at(at, base::StrCat("\"", k, "\" must be a string"));
      if (v.get_string().get(s) != simdjson::SUCCESS)
        return reject_at(at, "invalid JSON string (a bad escape)");
      j.label.assign(s);
      has_label = true;
      label_at = at;
    } else if (k == "properties" && !has_properties) {
      has_properties = true;
      ondemand::object props;
      if (v.get_object().get(props) != simdjson::SUCCESS)
        return reject_at(at, "\"properties\" must be an object");
      seen_keys_.clear();  // every name given, null values' too
      for (auto p : props) {
        if (p.error() != simdjson::SUCCESS)
          return reject_at(Location(doc), "invalid JSON (the object's structure)");
        ondemand::field pf = p.value_unsafe();
        const char* name_at = pf.key().raw() - 1;  // before unescaped_key takes the key
        std::string_view name;
        if (pf.unescaped_key().get(name) != simdjson::SUCCESS)
          return reject_at(name_at, "invalid JSON string (a bad escape in a property name)");
        ondemand::value pv = pf.value();
        const char* value_at = pv.raw_json_token().data();
        if (name.empty()) return reject_at(value_at, "a property needs a name");
        std::string why;
        std::optional<PropertyValue> value = JsonValue(pv, &why);
        if (!value) return reject_at(value_at, base::StrCat(why, " (property ", name, ")"));
        // (Names are views into the parser's string buffer, valid for this record.)
        if (std::find(seen_keys_.begin(), seen_keys_.end(), name) != seen_keys_.end())
          return reject_at(value_at, base::StrCat("property '", name, "' given twice"));
        seen_keys_.push_back(name);
        if (!value->is_null()) row->properties.push_back({std::string(name), std::move(*value)});
      }
    } else {
      using namespace std::string_view_literals;
      const bool known = vertices ? (k == "id"sv || k == "label"sv || k == "properties"sv)
                                  : (k == "start" || k == "end" || k == "type" || k == "properties");
      return reject_at(key_at, known ? base::StrCat("member \"", k, "\" given twice")
                                     : base::StrCat("unknown member \"", k, "\" (",
                                                    vertices ? "a vertex has id, label and properties"
                                                             : "an edge has start, end, type and properties",
                                                    ")"));
    }
  }
  // A location left means tokens after the object (at the end there is none).
  if (const char* at = nullptr; doc.current_location().get(at) == simdjson::SUCCESS)
    return reject_at(at, "text after the JSON object");
  if (!vertices && (!has_start || !has_end))
    return reject_at(base, has_start ? "no \"end\" member" : "no \"start\" member");
  // The label: the row's own, else the file's.
  if ((!has_label || j.label.empty()) && default_label_.empty())
    return reject_at(has_label ? label_at : base,
                     vertices ? "no \"label\" (or an empty one) and no label for the file (ImportFile::label)"
                              : "no \"type\" (or an empty one) and no type for the file (ImportFile::label)");
  CsvField label_field{j.label, false, record.line, column_of(label_at)};
  if (!BuildLabel(has_label ? &label_field : nullptr, /*csv=*/false, row, issue)) return false;
  // The id, kept under the schema's key: a number as an int64, a string as
  // it is written.
  const std::string& id_key = vertices ? schema_.columns[0].name : std::string();
  if (row->has_id && !id_key.empty()) {
    for (const Property& p : row->properties) {
      if (p.key == id_key)
        return RejectRow(issue, j.id.line, j.id.column,
                         base::StrCat("property '", id_key, "' given twice (the id is kept under it)"));
    }
    row->properties.insert(row->properties.begin(), {id_key, j.id_is_number ? PropertyValue(row->id.number)
                                                                            : PropertyValue(j.id_text)});
  }
  return true;
}

FieldType JsonlIdType(std::string_view record) {
  ondemand::parser parser;
  std::string padded(record);
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  ondemand::document doc;
  ondemand::object object;
  if (parser.iterate(padded.data(), record.size(), padded.size()).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(object) != simdjson::SUCCESS)
    return FieldType::kString;
  for (auto member : object) {
    std::string_view key;
    ondemand::value v;
    if (member.unescaped_key().get(key) != simdjson::SUCCESS || member.value().get(v) != simdjson::SUCCESS)
      break;
    if (key != "id") continue;
    ondemand::json_type type;
    if (v.type().get(type) == simdjson::SUCCESS && type == ondemand::json_type::number)
      return FieldType::kInt;
    break;
  }
  return FieldType::kString;
}

bool RowBuilder::Build(const CsvReader& reader, Row* row, RowIssue* issue) {
  if (schema_.json) return BuildJson(reader, row, issue);
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
  if (!BuildLabel(label, /*csv=*/true, row, issue)) return false;
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
        std::optional<PropertyValue> v = ParseFieldValue(col.type, f.text, &why, schema_.array_delimiter);
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
