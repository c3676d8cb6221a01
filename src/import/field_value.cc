// Field parsing and formatting: see field_value.h. std::from_chars and
// std::to_chars give locale-free, exact round trips (to_chars without a
// precision writes the shortest text that reads back to the same bits).
#include "import/field_value.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "base/strings.h"
#include "quiver/options.h"

namespace quiver::import {
namespace {

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  s = TrimSpaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<PropertyValue> ParseFloats(std::string_view text, std::string* why, char delimiter) {
  FloatVector v;
  if (text.empty()) return PropertyValue(std::move(v));
  std::size_t from = 0;
  while (true) {
    const std::size_t to = text.find(delimiter, from);
    const std::string_view item = text.substr(from, to == std::string_view::npos ? to : to - from);
    float f = 0;
    if (!ParseNumber(item, &f) || !std::isfinite(f)) {
      *why = base::StrCat("'", item, "' is not a finite float (in a float[])");
      return std::nullopt;
    }
    v.push_back(f);
    if (to == std::string_view::npos) break;
    from = to + 1;
  }
  return PropertyValue(std::move(v));
}

// Splits at each delimiter not escaped (field_value.h, kArrayEscape). The
// elements are pieces of valid UTF-8 cut at ASCII bytes, so valid UTF-8.
PropertyValue ParseStrings(std::string_view text, char delimiter) {
  StringList list;
  if (text.empty()) return PropertyValue(std::move(list));
  std::string element;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == kArrayEscape && i + 1 < text.size() &&
        (text[i + 1] == kArrayEscape || text[i + 1] == delimiter)) {
      element.push_back(text[++i]);
    } else if (c == delimiter) {
      list.push_back(std::move(element));
      element.clear();
    } else {
      element.push_back(c);
    }
  }
  list.push_back(std::move(element));
  return PropertyValue(std::move(list));
}

void AppendEscaped(std::string* out, std::string_view element, char delimiter) {
  for (char c : element) {
    if (c == kArrayEscape || c == delimiter) out->push_back(kArrayEscape);
    out->push_back(c);
  }
}

std::optional<PropertyValue> ParseHex(std::string_view text, std::string* why) {
  if (text.size() % 2 != 0) {
    *why = "bytes need an even number of hex digits";
    return std::nullopt;
  }
  Bytes b(text.size() / 2);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const int hi = HexDigit(text[2 * i]);
    const int lo = HexDigit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      *why = base::StrCat("'", text, "' is not hex bytes");
      return std::nullopt;
    }
    b[i] = static_cast<std::byte>(hi * 16 + lo);
  }
  return PropertyValue(std::move(b));
}

template <typename T>
void AppendNumber(std::string* out, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

Status CheckArrayDelimiter(char d, std::string_view option) {
  const auto u = static_cast<unsigned char>(d);
  if (u >= 0x80 || std::ispunct(u) == 0 || d == kArrayEscape || d == '.' || d == '+' || d == '-')
    return InvalidArgumentError(base::StrCat(option,
                                             " must be an ASCII punctuation character other than "
                                             "'\\', '.', '+' and '-'"));
  return Status::Ok();
}

bool CheckListLength(std::size_t elements, std::string* why) {
  const std::size_t limit = Limits{}.max_list_elements;
  if (elements <= limit) return true;
  *why = base::StrCat("a string list of ", elements, " elements; the limit is ", limit,
                      " (Limits::max_list_elements), on either import path");
  return false;
}

std::optional<PropertyValue> ParseFieldValue(FieldType type, std::string_view text, std::string* why,
                                             char array_delimiter) {
  switch (type) {
    case FieldType::kString: return PropertyValue(text);
    case FieldType::kInt: {
      std::int64_t v = 0;
      if (ParseNumber(text, &v)) return PropertyValue(v);
      *why = base::StrCat("'", text, "' is not an int");
      return std::nullopt;
    }
    case FieldType::kDouble: {
      double v = 0;
      if (ParseNumber(text, &v) && std::isfinite(v)) return PropertyValue(v);
      *why = base::StrCat("'", text, "' is not a finite double");
      return std::nullopt;
    }
    case FieldType::kBool: {
      const std::string_view t = TrimSpaces(text);
      if (EqualsLower(t, "true")) return PropertyValue(true);
      if (EqualsLower(t, "false")) return PropertyValue(false);
      *why = base::StrCat("'", text, "' is not a boolean (true or false)");
      return std::nullopt;
    }
    case FieldType::kFloatArray: return ParseFloats(text, why, array_delimiter);
    case FieldType::kStringArray: {
      PropertyValue list = ParseStrings(text, array_delimiter);
      if (!CheckListLength(list.as_string_list()->size(), why)) return std::nullopt;
      return list;
    }
    case FieldType::kBytes: return ParseHex(text, why);
  }
  *why = "unknown type";
  return std::nullopt;
}

FieldType FieldTypeOf(ValueType t) {
  switch (t) {
    case ValueType::kNull:
    case ValueType::kString: return FieldType::kString;
    case ValueType::kBool: return FieldType::kBool;
    case ValueType::kInt64: return FieldType::kInt;
    case ValueType::kDouble: return FieldType::kDouble;
    case ValueType::kBytes: return FieldType::kBytes;
    case ValueType::kFloatVector: return FieldType::kFloatArray;
    case ValueType::kStringList: return FieldType::kStringArray;
  }
  return FieldType::kString;
}

bool TextRoundTrips(const PropertyView& value) {
  const std::optional<StringListView> list = value.as_string_list();
  return !list || list->size() != 1 || !(*list)[0].empty();
}

FieldType FormatFieldValue(const PropertyView& value, std::string* out, char array_delimiter) {
  out->clear();
  switch (value.type()) {
    case ValueType::kNull:
    case ValueType::kString: out->append(value.as_string().value_or("")); return FieldType::kString;
    case ValueType::kBool: out->append(*value.as_bool() ? "true" : "false"); return FieldType::kBool;
    case ValueType::kInt64: AppendNumber(out, *value.as_int64()); return FieldType::kInt;
    case ValueType::kDouble: AppendNumber(out, *value.as_double()); return FieldType::kDouble;
    case ValueType::kBytes: {
      static constexpr char kHex[] = "0123456789abcdef";
      // A named copy: a range-for over *value.as_bytes() would iterate a
      // span inside a temporary optional that is already destroyed.
      const auto bytes = value.as_bytes();
      for (std::byte b : *bytes) {
        out->push_back(kHex[std::to_integer<int>(b) >> 4]);
        out->push_back(kHex[std::to_integer<int>(b) & 15]);
      }
      return FieldType::kBytes;
    }
    case ValueType::kFloatVector: {
      bool first = true;
      const auto floats = value.as_float_vector();  // named: see kBytes
      for (float f : *floats) {
        if (!first) out->push_back(array_delimiter);
        first = false;
        AppendNumber(out, f);
      }
      return FieldType::kFloatArray;
    }
    case ValueType::kStringList: {
      const StringListView list = *value.as_string_list();
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0) out->push_back(array_delimiter);
        AppendEscaped(out, list[i], array_delimiter);
      }
      return FieldType::kStringArray;
    }
  }
  return FieldType::kString;
}

}  // namespace quiver::import
