// ValueTypeName, PropertyView::ToValue and view/value equality.
#include "quiver/value.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace quiver {

std::string_view ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kNull: return "null";
    case ValueType::kBool: return "bool";
    case ValueType::kInt64: return "int64";
    case ValueType::kDouble: return "double";
    case ValueType::kString: return "string";
    case ValueType::kBytes: return "bytes";
    case ValueType::kFloatVector: return "float_vector";
  }
  return "unknown";
}

PropertyValue PropertyView::ToValue() const {
  switch (type()) {
    case ValueType::kNull: return PropertyValue();
    case ValueType::kBool: return PropertyValue(*as_bool());
    case ValueType::kInt64: return PropertyValue(*as_int64());
    case ValueType::kDouble: return PropertyValue(*as_double());
    case ValueType::kString: return PropertyValue(*as_string());
    case ValueType::kBytes: {
      auto b = *as_bytes();
      return PropertyValue(Bytes(b.begin(), b.end()));
    }
    case ValueType::kFloatVector: {
      auto f = *as_float_vector();
      return PropertyValue(FloatVector(f.begin(), f.end()));
    }
  }
  return PropertyValue();
}

namespace {

// Shared by == and IdenticalValues; `bitwise` compares doubles and floats by
// bit pattern instead of by value.
bool Compare(const PropertyView& a, const PropertyValue& b, bool bitwise) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case ValueType::kNull: return true;
    case ValueType::kBool: return *a.as_bool() == *b.as_bool();
    case ValueType::kInt64: return *a.as_int64() == *b.as_int64();
    case ValueType::kDouble:
      return bitwise ? std::bit_cast<std::uint64_t>(*a.as_double()) ==
                           std::bit_cast<std::uint64_t>(*b.as_double())
                     : *a.as_double() == *b.as_double();
    case ValueType::kString: return *a.as_string() == *b.as_string();
    case ValueType::kBytes: {
      auto x = *a.as_bytes();
      std::span<const std::byte> y = *b.as_bytes();
      return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
    }
    case ValueType::kFloatVector: {
      auto x = *a.as_float_vector();
      std::span<const float> y = *b.as_float_vector();
      if (x.size() != y.size()) return false;
      if (bitwise) return x.empty() || std::memcmp(x.data(), y.data(), x.size_bytes()) == 0;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i] != y[i]) return false;
      return true;
    }
  }
  return false;
}

}  // namespace

bool operator==(const PropertyView& a, const PropertyValue& b) { return Compare(a, b, /*bitwise=*/false); }

bool IdenticalValues(const PropertyView& a, const PropertyValue& b) {
  return Compare(a, b, /*bitwise=*/true);
}

}  // namespace quiver
