#include "index/index_keys.h"

#include <cmath>

#include "base/strings.h"
#include "base/utf8.h"
#include "index/key_codec.h"

namespace quiver::index {
namespace {

Status CheckName(std::string_view what, std::string_view name, std::size_t max_bytes) {
  if (name.empty()) return InvalidArgumentError(base::StrCat(what, " is empty"));
  if (name.size() > max_bytes)
    return OutOfRangeError(base::StrCat(what, " is ", name.size(), " bytes; the limit is ", max_bytes));
  if (!base::IsValidUtf8(name)) return InvalidArgumentError(base::StrCat(what, " is not valid UTF-8"));
  return Status::Ok();
}

}  // namespace

std::int32_t KeyWidthFor(const IndexSpec& spec) {
  return spec.keys.size() == 1 && spec.type ? FixedKeyWidth(*spec.type) : -1;
}

Status CheckSpec(const IndexSpec& spec, std::size_t max_name_bytes) {
  QUIVER_RETURN_IF_ERROR(CheckName("index name", spec.name, max_name_bytes));
  auto in = [&spec](const Status& s) {
    return s.ok() ? s : Status(s.code(), base::StrCat("index '", spec.name, "': ", s.message()));
  };
  if (spec.element != ElementKind::kVertex && spec.element != ElementKind::kEdge)
    return in(
        InvalidArgumentError(base::StrCat("element kind ", static_cast<int>(spec.element), " is unknown")));
  QUIVER_RETURN_IF_ERROR(in(
      CheckName(spec.element == ElementKind::kVertex ? "label" : "edge type", spec.label, max_name_bytes)));
  if (spec.kind != IndexKind::kExact && spec.kind != IndexKind::kUnique && spec.kind != IndexKind::kOrdered &&
      spec.kind != IndexKind::kUniqueEndpoints)
    return in(InvalidArgumentError(base::StrCat("index kind ", static_cast<int>(spec.kind), " is unknown")));
  if (spec.kind == IndexKind::kUniqueEndpoints) {
    if (spec.element != ElementKind::kEdge)
      return in(
          InvalidArgumentError("an edge-endpoint constraint (kUniqueEndpoints) needs ElementKind::kEdge"));
    if (!spec.keys.empty())
      return in(InvalidArgumentError(
          "an edge-endpoint constraint (kUniqueEndpoints) takes no property keys: it is keyed by the edges' "
          "(source, target)"));
    if (spec.type)
      return in(InvalidArgumentError("an edge-endpoint constraint (kUniqueEndpoints) takes no value type"));
    return Status::Ok();
  }
  if (spec.keys.empty()) return in(InvalidArgumentError("no property keys"));
  if (spec.keys.size() > kMaxIndexKeys)
    return in(InvalidArgumentError(
        base::StrCat(spec.keys.size(), " property keys; an index takes at most ", kMaxIndexKeys)));
  for (std::size_t i = 0; i < spec.keys.size(); ++i) {
    QUIVER_RETURN_IF_ERROR(in(CheckName("property key", spec.keys[i], max_name_bytes)));
    for (std::size_t j = 0; j < i; ++j)
      if (spec.keys[j] == spec.keys[i])
        return in(InvalidArgumentError(base::StrCat("property key '", spec.keys[i], "' is listed twice")));
  }
  if (spec.type) {
    ValueType t = *spec.type;
    if (t == ValueType::kNull || !IsIndexable(t))
      return in(
          InvalidArgumentError(base::StrCat("values of type ", ValueTypeName(t), " cannot be indexed")));
  }
  return Status::Ok();
}

void AppendComponent(const IndexDef& def, const PropertyView& v, std::string* key) {
  if (def.key_width > 0) {
    AppendFixedKey(v, key);
  } else {
    AppendKey(v, key);
  }
}

void EndpointKey(std::uint64_t source, std::uint64_t target, std::string* key) {
  key->resize(16);
  for (int i = 0; i < 8; ++i) {
    (*key)[i] = static_cast<char>(source >> (56 - 8 * i));
    (*key)[8 + i] = static_cast<char>(target >> (56 - 8 * i));
  }
}

std::pair<std::uint64_t, std::uint64_t> DecodeEndpointKey(std::string_view key) {
  std::uint64_t s = 0, t = 0;
  for (std::size_t i = 0; i < 8 && 8 + i < key.size(); ++i) {
    s = (s << 8) | static_cast<unsigned char>(key[i]);
    t = (t << 8) | static_cast<unsigned char>(key[8 + i]);
  }
  return {s, t};
}

std::string DescribePair(std::uint64_t source, std::uint64_t target) {
  return base::StrCat("(", source, " -> ", target, ")");
}

KeyStatus ElementKey(const IndexDef& def, const storage::PropBlock* block, std::string* key,
                     std::size_t* bad) {
  return MakeKey(
      def, [&](std::size_t i) { return storage::GetProperty(block, def.key_ids[i]); }, key, bad);
}

Status BoundKey(const IndexDef& def, const PropertyValue& value, std::string* key) {
  const PropertyView v = storage::ViewOf(value);
  if (v.is_null() || !IsIndexable(v.type()))
    return InvalidArgumentError(base::StrCat(DescribeIndex(def), ": ", ValueTypeName(v.type()),
                                             " values are never indexed, so they cannot be looked up"));
  if (def.type && v.type() != *def.type)
    return InvalidArgumentError(base::StrCat(DescribeIndex(def), " holds ", ValueTypeName(*def.type),
                                             " values; got ", ValueTypeName(v.type()), " ",
                                             DescribeValue(v)));
  if (v.type() == ValueType::kDouble && std::isnan(*v.as_double()))
    return InvalidArgumentError(base::StrCat(DescribeIndex(def), ": NaN is not a value"));
  AppendComponent(def, v, key);
  return Status::Ok();
}

Status LookupKey(const IndexDef& def, std::span<const PropertyValue> values, std::string* key) {
  key->clear();
  if (def.kind == IndexKind::kUniqueEndpoints)
    return InvalidArgumentError(
        base::StrCat(DescribeIndex(def), " holds no property values; it is looked up by (source, target)"));
  if (values.size() != def.keys.size())
    return InvalidArgumentError(
        base::StrCat(DescribeIndex(def), " has ", def.keys.size(), " keys; got ", values.size(), " values"));
  for (const PropertyValue& v : values) QUIVER_RETURN_IF_ERROR(BoundKey(def, v, key));
  return Status::Ok();
}

std::string DescribeValue(const PropertyView& v) {
  switch (v.type()) {
    case ValueType::kNull: return "null";
    case ValueType::kBool: return *v.as_bool() ? "true" : "false";
    case ValueType::kInt64: return base::StrCat(*v.as_int64());
    case ValueType::kDouble: return base::StrCat(*v.as_double());
    case ValueType::kString: {
      std::string_view s = *v.as_string();
      if (s.size() <= 64) return base::StrCat("\"", s, "\"");
      return base::StrCat("\"", s.substr(0, 64), "\"... (", s.size(), " bytes)");
    }
    case ValueType::kBytes: return base::StrCat("bytes[", v.as_bytes()->size(), "]");
    case ValueType::kFloatVector: return base::StrCat("float_vector[", v.as_float_vector()->size(), "]");
    case ValueType::kStringList: return base::StrCat("string_list[", v.as_string_list()->size(), "]");
  }
  return "?";
}

std::string DescribeIndex(const IndexDef& def) {
  if (def.kind == IndexKind::kUniqueEndpoints)
    return base::StrCat("edge-endpoint constraint '", def.name, "' (", def.label,
                        ": one edge per (source, target))");
  std::string keys;
  for (std::size_t i = 0; i < def.keys.size(); ++i) keys += (i == 0 ? "" : ",") + def.keys[i];
  return base::StrCat("index '", def.name, "' (", def.label, def.keys.size() == 1 ? "." : ".(", keys,
                      def.keys.size() == 1 ? ")" : "))");
}

}  // namespace quiver::index
