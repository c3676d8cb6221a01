#include "wal/value_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace quiver::wal {

void EncodeValue(base::ByteWriter& w, const PropertyView& v) {
  w.PutU8(static_cast<std::uint8_t>(v.type()));
  switch (v.type()) {
    case ValueType::kNull: break;
    case ValueType::kBool: w.PutU8(*v.as_bool() ? 1 : 0); break;
    case ValueType::kInt64: w.PutU64(static_cast<std::uint64_t>(*v.as_int64())); break;
    case ValueType::kDouble: w.PutU64(std::bit_cast<std::uint64_t>(*v.as_double())); break;
    case ValueType::kString: w.PutString(*v.as_string()); break;
    case ValueType::kBytes:
      w.PutVarint(v.as_bytes()->size());
      w.PutBytes(v.as_bytes()->data(), v.as_bytes()->size());
      break;
    case ValueType::kFloatVector:
      w.PutVarint(v.as_float_vector()->size());
      w.PutBytes(v.as_float_vector()->data(), v.as_float_vector()->size() * sizeof(float));
      break;
    case ValueType::kStringList: {
      const StringListView list = *v.as_string_list();
      w.PutVarint(list.size());
      for (std::string_view s : list) w.PutString(s);
      break;
    }
  }
}

bool DecodeValue(base::ByteReader& r, PropertyValue* out) {
  std::uint8_t type;
  if (!r.GetU8(&type)) return false;
  switch (static_cast<ValueType>(type)) {
    case ValueType::kNull: *out = PropertyValue(); return true;
    case ValueType::kBool: {
      std::uint8_t b;
      if (!r.GetU8(&b) || b > 1) return false;
      *out = PropertyValue(b == 1);
      return true;
    }
    case ValueType::kInt64: {
      std::uint64_t x;
      if (!r.GetU64(&x)) return false;
      *out = PropertyValue(static_cast<std::int64_t>(x));
      return true;
    }
    case ValueType::kDouble: {
      std::uint64_t x;
      if (!r.GetU64(&x)) return false;
      const double d = std::bit_cast<double>(x);
      if (!std::isfinite(d)) return false;  // the write path never stores one
      *out = PropertyValue(d);
      return true;
    }
    case ValueType::kString: {
      std::string_view s;
      if (!r.GetString(&s)) return false;
      *out = PropertyValue(s);
      return true;
    }
    case ValueType::kBytes: {
      std::uint64_t n;
      std::span<const std::byte> s;
      if (!r.GetVarint(&n) || n > r.remaining() || !r.GetSpan(n, &s)) return false;
      *out = PropertyValue(Bytes(s.begin(), s.end()));
      return true;
    }
    case ValueType::kFloatVector: {
      std::uint64_t n;
      std::span<const std::byte> s;
      if (!r.GetVarint(&n) || n > r.remaining() / sizeof(float) || !r.GetSpan(n * sizeof(float), &s))
        return false;
      FloatVector f(n);
      if (n > 0) std::memcpy(f.data(), s.data(), s.size());
      for (const float x : f)
        if (!std::isfinite(x)) return false;
      *out = PropertyValue(std::move(f));
      return true;
    }
    case ValueType::kStringList: {
      // Each element takes at least its length byte, so a count the input
      // cannot hold is refused. A std::string is 32 bytes: reserving the
      // whole count up front would hold 32 times the input for a count the
      // elements do not back, so the reserve stops at 2 times.
      std::uint64_t n;
      if (!r.GetVarint(&n) || n > r.remaining()) return false;
      StringList list;
      list.reserve(std::min<std::uint64_t>(n, r.remaining() / 16));
      for (std::uint64_t i = 0; i < n; ++i) {
        std::string_view s;
        if (!r.GetString(&s)) return false;
        list.emplace_back(s);
      }
      *out = PropertyValue(std::move(list));
      return true;
    }
  }
  return false;
}

}  // namespace quiver::wal
