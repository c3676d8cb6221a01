// ValueTypeName, StringListView, PropertyValue::heap_bytes,
// PropertyView::ToValue and view/value equality.
#include "quiver/value.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>

namespace quiver {
namespace {

// A u32 of a packed list (which may lie at any alignment in a caller's
// buffer: memcpy, not a cast).
std::uint32_t PackedU32(const std::byte* p, std::size_t index) {
  std::uint32_t v;
  std::memcpy(&v, p + index * sizeof(v), sizeof(v));
  return v;
}

// Heap bytes of a string: none while it fits in the string itself.
std::size_t StringHeapBytes(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

}  // namespace

std::size_t PropertyValue::heap_bytes() const {
  if (const auto* s = std::get_if<std::string>(&v_)) return StringHeapBytes(*s);
  if (const auto* b = std::get_if<Bytes>(&v_)) return b->capacity();
  if (const auto* f = std::get_if<FloatVector>(&v_)) return f->capacity() * sizeof(float);
  if (const auto* l = std::get_if<StringList>(&v_)) {
    std::size_t n = l->capacity() * sizeof(std::string);
    for (const std::string& e : *l) n += StringHeapBytes(e);
    return n;
  }
  return 0;
}

StringListView StringListView::Packed(std::span<const std::byte> packed) {
  StringListView v;
  v.packed_ = packed.data();
  v.size_ = PackedU32(packed.data(), 0);
  return v;
}

std::string_view StringListView::Element(const std::string* strings, const std::byte* packed, std::size_t i) {
  if (strings != nullptr) return strings[i];
  // count, end[count], bytes: element i is [end[i - 1], end[i]) of bytes.
  const std::size_t count = PackedU32(packed, 0);
  const std::uint32_t begin = i == 0 ? 0 : PackedU32(packed, i);
  const std::uint32_t end = PackedU32(packed, i + 1);
  const char* bytes = reinterpret_cast<const char*>(packed) + (1 + count) * sizeof(std::uint32_t);
  return std::string_view(bytes + begin, end - begin);
}

std::size_t StringListView::text_bytes() const {
  if (size_ == 0) return 0;
  if (packed_ != nullptr) return PackedU32(packed_, size_);
  std::size_t n = 0;
  for (std::size_t i = 0; i < size_; ++i) n += strings_[i].size();
  return n;
}

StringList StringListView::ToList() const {
  StringList out;
  out.reserve(size_);
  for (std::string_view s : *this) out.emplace_back(s);
  return out;
}

bool operator==(const StringListView& a, const StringListView& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

std::string_view ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kNull: return "null";
    case ValueType::kBool: return "bool";
    case ValueType::kInt64: return "int64";
    case ValueType::kDouble: return "double";
    case ValueType::kString: return "string";
    case ValueType::kBytes: return "bytes";
    case ValueType::kFloatVector: return "float_vector";
    case ValueType::kStringList: return "string_list";
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
    case ValueType::kStringList: return PropertyValue(as_string_list()->ToList());
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
    case ValueType::kStringList: return *a.as_string_list() == *b.as_string_list();
  }
  return false;
}

}  // namespace

bool operator==(const PropertyView& a, const PropertyValue& b) { return Compare(a, b, /*bitwise=*/false); }

bool IdenticalValues(const PropertyView& a, const PropertyValue& b) {
  return Compare(a, b, /*bitwise=*/true);
}

}  // namespace quiver
