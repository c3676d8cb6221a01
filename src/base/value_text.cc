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
  for (char c : s) {
    const auto b = static_cast<std::uint8_t>(c);
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
  out.append(spec.element == ElementKind::kEdge ? " on edges :" : " on vertices :");
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
  }
  out.append("?");
}

std::string ValueText(const PropertyValue& v) {
  std::string out;
  AppendValueText(out, v);
  return out;
}

}  // namespace quiver::base
