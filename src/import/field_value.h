// Conversions between the text of an import field and a Quiver value, both
// ways: parsing a field by its column's declared type, and formatting a
// stored value for export so that parsing it gives the same value back
// (shortest round-trip decimal forms for double and float).
//
// Example:
//   std::string why;
//   std::optional<PropertyValue> v = ParseFieldValue(FieldType::kInt, " 42", &why);  // 42
//   std::string text;
//   FieldType t = FormatFieldValue(view, &text);  // view held 0.5 -> kDouble, "0.5"
#ifndef QUIVER_IMPORT_FIELD_VALUE_H_
#define QUIVER_IMPORT_FIELD_VALUE_H_

#include <optional>
#include <string>
#include <string_view>

#include "import/csv_schema.h"
#include "quiver/value.h"

namespace quiver::import {

// The separator of float[] elements.
inline constexpr char kArrayDelimiter = ';';

// Parses `text` as `type`. Numbers and booleans may have surrounding
// spaces; strings are taken as they are. nullopt with `*why` set (e.g.
// "'abc' is not an int") if the text is not of the type or is NaN/infinite.
std::optional<PropertyValue> ParseFieldValue(FieldType type, std::string_view text, std::string* why);

// Writes `value` as text into `*out` and returns its column type. Requires
// a non-null value.
FieldType FormatFieldValue(const PropertyView& value, std::string* out);

// The column type FormatFieldValue returns for a value of type `t`, without
// formatting it (kString for null).
FieldType FieldTypeOf(ValueType t);

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_FIELD_VALUE_H_
