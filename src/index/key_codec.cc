// The key encoding (grammar in key_codec.h). Fixed-width payloads are
// big-endian so memcmp compares them as unsigned integers; the int64 sign
// flip and the double transform make that unsigned order the value order.
#include "index/key_codec.h"

#include <bit>
#include <cstring>
#include <optional>
#include <span>
#include <utility>

namespace quiver::index {
namespace {

// Type tags: the tag order is the cross-type order. Persisted: never renumber.
enum Tag : unsigned char {
  kTagNull = 0x01,
  kTagBool = 0x02,
  kTagInt64 = 0x03,
  kTagDouble = 0x04,
  kTagString = 0x05,
  kTagBytes = 0x06,
};

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;

void AppendBigEndian(std::uint64_t v, std::string* out) {
  // One byte swap, not a loop of shifts (which GCC 12 keeps as eight
  // stores: 51 instructions a key, four keys per vertex in a batch with a
  // unique and an ordered index).
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  char b[8];
  std::memcpy(b, &v, 8);
  out->append(b, 8);
}

std::uint64_t LoadBigEndian(std::string_view s) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}

std::uint64_t OrderedDoubleBits(double d) {
  if (d == 0.0) d = 0.0;  // -0.0 == 0.0: one encoding for both
  const auto bits = std::bit_cast<std::uint64_t>(d);
  return (bits & kSignBit) != 0 ? ~bits : bits ^ kSignBit;
}

double DoubleFromOrderedBits(std::uint64_t t) {
  const std::uint64_t bits = (t & kSignBit) != 0 ? t ^ kSignBit : ~t;
  return std::bit_cast<double>(bits);
}

void AppendEscaped(std::string_view s, std::string* out) {
  for (char c : s) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xFF');
  }
}

// Reads an escaped string and its terminator from the front of `*in`.
bool DecodeEscaped(std::string_view* in, std::string* out) {
  for (std::size_t i = 0; i + 1 < in->size(); ++i) {
    const char c = (*in)[i];
    if (c != '\0') {
      out->push_back(c);
      continue;
    }
    const char next = (*in)[i + 1];
    if (next == '\0') {
      in->remove_prefix(i + 2);
      return true;
    }
    if (next != '\xFF') return false;
    out->push_back('\0');
    ++i;
  }
  return false;
}

std::string_view AsChars(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// The smallest string greater than every string that starts with `s`
// (s must contain a byte other than 0xFF).
std::string PrefixSuccessor(std::string s) {
  while (!s.empty() && s.back() == '\xFF') s.pop_back();
  s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

}  // namespace

bool IsIndexable(ValueType type) {
  return type != ValueType::kFloatVector && type != ValueType::kStringList &&
         static_cast<int>(type) <= static_cast<int>(ValueType::kStringList);
}

void AppendKey(const PropertyView& v, std::string* out) {
  switch (v.type()) {
    case ValueType::kNull: out->push_back(static_cast<char>(kTagNull)); return;
    case ValueType::kBool:
      out->push_back(static_cast<char>(kTagBool));
      out->push_back(*v.as_bool() ? '\x01' : '\x00');
      return;
    case ValueType::kInt64:
    case ValueType::kDouble:
      out->push_back(static_cast<char>(v.type() == ValueType::kInt64 ? kTagInt64 : kTagDouble));
      AppendFixedKey(v, out);
      return;
    case ValueType::kString:
    case ValueType::kBytes:
      out->push_back(static_cast<char>(v.type() == ValueType::kString ? kTagString : kTagBytes));
      AppendEscaped(v.type() == ValueType::kString ? *v.as_string() : AsChars(*v.as_bytes()), out);
      out->append(2, '\0');
      return;
    case ValueType::kFloatVector:
    case ValueType::kStringList: return;  // not indexable (IsIndexable)
  }
}

std::string EncodeKey(const PropertyView& v) {
  std::string out;
  AppendKey(v, &out);
  return out;
}

std::int32_t FixedKeyWidth(ValueType type) {
  return type == ValueType::kInt64 || type == ValueType::kDouble ? static_cast<std::int32_t>(kFixedKeyBytes)
                                                                 : -1;
}

std::uint64_t FixedKeyBits(const PropertyView& v) {
  if (std::optional<std::int64_t> i = v.as_int64()) return static_cast<std::uint64_t>(*i) ^ kSignBit;
  return OrderedDoubleBits(v.as_double().value_or(0.0));
}

void AppendFixedKey(const PropertyView& v, std::string* out) { AppendBigEndian(FixedKeyBits(v), out); }

PropertyValue DecodeFixedKey(std::string_view key, ValueType type) {
  const std::uint64_t t = LoadBigEndian(key);
  if (type == ValueType::kInt64) return PropertyValue(static_cast<std::int64_t>(t ^ kSignBit));
  return PropertyValue(DoubleFromOrderedBits(t));
}

bool DecodeKey(std::string_view* in, PropertyValue* out) {
  if (in->empty()) return false;
  const auto tag = static_cast<unsigned char>((*in)[0]);
  std::string_view rest = in->substr(1);
  switch (tag) {
    case kTagNull: *out = PropertyValue(); break;
    case kTagBool:
      if (rest.empty() || static_cast<unsigned char>(rest[0]) > 1) return false;
      *out = PropertyValue(rest[0] == '\x01');
      rest.remove_prefix(1);
      break;
    case kTagInt64:
    case kTagDouble:
      if (rest.size() < kFixedKeyBytes) return false;
      *out = DecodeFixedKey(rest, tag == kTagInt64 ? ValueType::kInt64 : ValueType::kDouble);
      rest.remove_prefix(kFixedKeyBytes);
      break;
    case kTagString:
    case kTagBytes: {
      std::string s;
      if (!DecodeEscaped(&rest, &s)) return false;
      if (tag == kTagString) {
        *out = PropertyValue(std::move(s));
      } else {
        const auto* p = reinterpret_cast<const std::byte*>(s.data());
        *out = PropertyValue(Bytes(p, p + s.size()));
      }
      break;
    }
    default: return false;
  }
  *in = rest;
  return true;
}

KeyRange StringPrefixRange(std::string_view prefix, ValueType type) {
  KeyRange r;
  r.lo.push_back(static_cast<char>(type == ValueType::kBytes ? kTagBytes : kTagString));
  AppendEscaped(prefix, &r.lo);
  r.hi = PrefixSuccessor(r.lo);  // the tag byte is never 0xFF
  return r;
}

}  // namespace quiver::index
