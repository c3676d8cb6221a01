#include "base/value_text.h"

#include <charconv>
#include <cstdint>
#include <span>

#include "base/utf8.h"

namespace quiver::base {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(std::string& out, std::uint8_t b) {
  out.push_back(kHex[b >> 4]);
  out.push_back(kHex[b & 0xF]);
}

// Shortest round-trip digits, with ".0" added when they would read as an
// integer ("2" -> "2.0"); "inf", "-inf" and "nan" as std::to_chars spells them.
template <typename F>
void AppendFloat(std::string& out, F v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  const std::string_view digits(buf, static_cast<std::size_t>(r.ptr - buf));
  out.append(digits);
  if (digits.find_first_of(".eEn") == std::string_view::npos) out.append(".0");
}

}  // namespace

void AppendQuoted(std::string& out, std::string_view s) {
  // Valid UTF-8 stays readable; anything else shows its bytes.
  const bool utf8 = IsValidUtf8(s);
  out.push_back('"');
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto b = static_cast<std::uint8_t>(c);
    // Valid UTF-8 that would break or reorder a line of text: C1 controls
    // (U+0080-U+009F, NEL among them), the line and paragraph separators
    // and the bidirectional controls (U+2028-U+202E, U+2066-U+2069), as \u.
    if (utf8 && b == 0xC2 && i + 1 < s.size() && static_cast<std::uint8_t>(s[i + 1]) <= 0x9F) {
      out.append("\\u00");
      AppendHexByte(out, static_cast<std::uint8_t>(s[i + 1]));
      ++i;
      continue;
    }
    if (utf8 && b == 0xE2 && i + 2 < s.size()) {
      const auto b1 = static_cast<std::uint8_t>(s[i + 1]), b2 = static_cast<std::uint8_t>(s[i + 2]);
      if ((b1 == 0x80 && b2 >= 0xA8 && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9)) {
        out.append("\\u20");
        AppendHexByte(out, static_cast<std::uint8_t>(b1 == 0x80 ? b2 - 0x80 : b2 - 0x80 + 0x40));
        i += 2;
        continue;
      }
    }
    switch (c) {
      case '"': out.append("\\\""); continue;
      case '\\': out.append("\\\\"); continue;
      case '\n': out.append("\\n"); continue;
      case '\r': out.append("\\r"); continue;
      case '\t': out.append("\\t"); continue;
      default: break;
    }
    if (b < 0x20 || b == 0x7F || (b >= 0x80 && !utf8)) {
      out.append("\\x");
      AppendHexByte(out, b);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

void AppendName(std::string& out, std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  bool bare = !name.empty() && letter(name[0]);
  for (char c : name) bare = bare && (letter(c) || (c >= '0' && c <= '9'));
  if (bare) {
    out.append(name);
  } else {
    AppendQuoted(out, name);
  }
}

void AppendIndexSpec(std::string& out, const IndexSpec& spec) {
  AppendName(out, spec.name);
  out.append(": ");
  switch (spec.kind) {
    case IndexKind::kExact: out.append("exact"); break;
    case IndexKind::kUnique: out.append("unique"); break;
    case IndexKind::kOrdered: out.append("ordered"); break;
    case IndexKind::kUniqueEndpoints: out.append("edge-endpoint constraint"); break;
    default:
      out.append("kind ");
      out.append(std::to_string(static_cast<int>(spec.kind)));
      break;
  }
  switch (spec.element) {
    case ElementKind::kVertex: out.append(" on vertices :"); break;
    case ElementKind::kEdge: out.append(" on edges :"); break;
    default:  // a damaged or newer record: shown as it is, never as another value
      out.append(" on element ");
      out.append(std::to_string(static_cast<int>(spec.element)));
      out.append(" :");
      break;
  }
  AppendName(out, spec.label);
  if (!spec.keys.empty()) {
    out.append(" (");
    for (std::size_t i = 0; i < spec.keys.size(); ++i) {
      if (i > 0) out.append(", ");
      AppendName(out, spec.keys[i]);
    }
    out.push_back(')');
  }
  if (spec.type) {
    out.append(", type ");
    out.append(ValueTypeName(*spec.type));
  }
}

std::string Quoted(std::string_view s) {
  std::string out;
  AppendQuoted(out, s);
  return out;
}

std::string OneLine(std::string_view s) {
  std::string q = Quoted(s);
  // Drop the quotes AppendQuoted added, and unescape the quotes and
  // backslashes it escaped (they cannot break a line).
  std::string out;
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    if (q[i] == '\\' && (q[i + 1] == '"' || q[i + 1] == '\\')) ++i;
    out.push_back(q[i]);
  }
  return out;
}

void AppendValueText(std::string& out, const PropertyValue& v) {
  switch (v.type()) {
    case ValueType::kNull: out.append("null"); return;
    case ValueType::kBool: out.append(*v.as_bool() ? "true" : "false"); return;
    case ValueType::kInt64: {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof(buf), *v.as_int64());
      out.append(buf, r.ptr);
      return;
    }
    case ValueType::kDouble: AppendFloat(out, *v.as_double()); return;
    case ValueType::kString: AppendQuoted(out, *v.as_string()); return;
    case ValueType::kBytes: {
      out.append("x'");
      // A named span: a range-for over *v.as_bytes() would reference the
      // span inside a temporary optional.
      const std::span<const std::byte> bytes = *v.as_bytes();
      for (std::byte b : bytes) AppendHexByte(out, static_cast<std::uint8_t>(b));
      out.push_back('\'');
      return;
    }
    case ValueType::kFloatVector: {
      out.append("f32[");
      const std::span<const float> floats = *v.as_float_vector();
      for (std::size_t i = 0; i < floats.size(); ++i) {
        if (i > 0) out.append(", ");
        AppendFloat(out, floats[i]);
      }
      out.push_back(']');
      return;
    }
    case ValueType::kStringList: {
      out.append("str[");
      const StringListView list = *v.as_string_list();
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0) out.append(", ");
        AppendQuoted(out, list[i]);
      }
      out.push_back(']');
      return;
    }
  }
  out.append("?");
}

std::string ValueText(const PropertyValue& v) {
  std::string out;
  AppendValueText(out, v);
  return out;
}

}  // namespace quiver::base
