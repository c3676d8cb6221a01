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
#include "quiver/status.h"
#include "quiver/value.h"

namespace quiver::import {

// The default separator of float[] and string[] elements
// (ImportOptions::array_delimiter, ExportOptions::array_delimiter).
inline constexpr char kArrayDelimiter = ';';

// The escape of string[] elements: `\\` stands for a backslash and `\`
// followed by the array delimiter for the delimiter; a backslash before
// anything else, or at the end, is kept as it is (so a path such as
// `C:\dir` in a Neo4j file loads unchanged). Export escapes every backslash
// and delimiter of an element, so each element reads back exactly. The
// empty text is the empty list.
inline constexpr char kArrayEscape = '\\';

// InvalidArgument naming `option` unless `d` may separate array elements:
// an ASCII punctuation character other than the escape and the characters
// of a number ('.', '+', '-').
Status CheckArrayDelimiter(char d, std::string_view option);

// Parses `text` as `type`. Numbers and booleans may have surrounding
// spaces; strings are taken as they are; float[] and string[] elements are
// separated by `array_delimiter`. nullopt with `*why` set (e.g. "'abc' is
// not an int") if the text is not of the type or is NaN/infinite.
// False, with `*why`, for a string list longer than the default
// Limits::max_list_elements: a row that a write through batches would
// refuse is refused in pass 1 on the bulk path too (which applies no
// Options::limits), so the two paths agree.
bool CheckListLength(std::size_t elements, std::string* why);

std::optional<PropertyValue> ParseFieldValue(FieldType type, std::string_view text, std::string* why,
                                             char array_delimiter = kArrayDelimiter);

// Writes `value` as text into `*out` and returns its column type, array
// elements separated by `array_delimiter`. Requires a non-null value.
FieldType FormatFieldValue(const PropertyView& value, std::string* out,
                           char array_delimiter = kArrayDelimiter);

// Whether FormatFieldValue's text of `value` parses back to `value`: false
// only for a string list of one empty string, whose text ("") is the empty
// list's (export refuses it; JSON Lines has a form for it).
bool TextRoundTrips(const PropertyView& value);

// The column type FormatFieldValue returns for a value of type `t`, without
// formatting it (kString for null).
FieldType FieldTypeOf(ValueType t);

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_FIELD_VALUE_H_
