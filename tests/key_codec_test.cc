// The key codec against the documented value order: random values of every
// indexable type, single and composite keys, -0.0 == 0.0, round trips,
// fixed keys and string prefix ranges.
#include "index/key_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace quiver::index {
namespace {

// The documented order of values (key_codec.h): by type, then by value.
int TypeRank(ValueType t) { return static_cast<int>(t); }  // null 0 < bool 1 < ... < bytes 5

template <typename T>
int Sign(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareValues(const PropertyValue& a, const PropertyValue& b) {
  if (a.type() != b.type()) return Sign(TypeRank(a.type()), TypeRank(b.type()));
  switch (a.type()) {
    case ValueType::kNull: return 0;
    case ValueType::kBool: return Sign(*a.as_bool(), *b.as_bool());
    case ValueType::kInt64: return Sign(*a.as_int64(), *b.as_int64());
    case ValueType::kDouble: return Sign(*a.as_double(), *b.as_double());  // -0.0 == 0.0
    case ValueType::kString: return Sign(std::string(*a.as_string()), std::string(*b.as_string()));
    case ValueType::kBytes: {
      auto x = *a.as_bytes();
      auto y = *b.as_bytes();
      return Sign(std::string(reinterpret_cast<const char*>(x.data()), x.size()),
                  std::string(reinterpret_cast<const char*>(y.data()), y.size()));
    }
    case ValueType::kFloatVector:
    case ValueType::kStringList: break;
  }
  ADD_FAILURE() << "not indexable";
  return 0;
}

PropertyView View(const PropertyValue& v) {
  switch (v.type()) {
    case ValueType::kNull: return PropertyView();
    case ValueType::kBool: return PropertyView(*v.as_bool());
    case ValueType::kInt64: return PropertyView(*v.as_int64());
    case ValueType::kDouble: return PropertyView(*v.as_double());
    case ValueType::kString: return PropertyView(*v.as_string());
    case ValueType::kBytes: return PropertyView(*v.as_bytes());
    case ValueType::kFloatVector: return PropertyView(*v.as_float_vector());
    case ValueType::kStringList: return PropertyView(*v.as_string_list());
  }
  return PropertyView();
}

std::string Encode(const PropertyValue& v) { return EncodeKey(View(v)); }

// Short strings over bytes that stress the escaping (0x00, 0x01, 0xFF).
std::string RandomString(std::mt19937_64& rng) {
  static constexpr char kAlphabet[] = {'\0', '\x01', 'a', 'b', '\x7f', '\x80', '\xfe', '\xff'};
  std::string s(rng() % 6, ' ');
  for (char& c : s) c = kAlphabet[rng() % sizeof(kAlphabet)];
  return s;
}

double RandomDouble(std::mt19937_64& rng) {
  static constexpr double kSpecial[] = {0.0,
                                        -0.0,
                                        1.0,
                                        -1.0,
                                        std::numeric_limits<double>::denorm_min(),
                                        -std::numeric_limits<double>::denorm_min(),
                                        std::numeric_limits<double>::min(),
                                        std::numeric_limits<double>::max(),
                                        std::numeric_limits<double>::lowest(),
                                        1e-300,
                                        -1e300};
  if (rng() % 3 == 0) return kSpecial[rng() % std::size(kSpecial)];
  const double mag = std::ldexp(static_cast<double>(rng() % 1000) / 7.0, static_cast<int>(rng() % 200) - 100);
  return rng() % 2 ? mag : -mag;
}

PropertyValue RandomValue(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: return PropertyValue();
    case 1: return PropertyValue(rng() % 2 == 0);
    case 2: {
      static constexpr std::int64_t kSpecial[] = {0, -1, 1, std::numeric_limits<std::int64_t>::min(),
                                                  std::numeric_limits<std::int64_t>::max()};
      if (rng() % 4 == 0) return PropertyValue(kSpecial[rng() % std::size(kSpecial)]);
      return PropertyValue(static_cast<std::int64_t>(rng()) >> (rng() % 64));
    }
    case 3: return PropertyValue(RandomDouble(rng));
    case 4: return PropertyValue(RandomString(rng));
    default: {
      std::string s = RandomString(rng);
      const auto* p = reinterpret_cast<const std::byte*>(s.data());
      return PropertyValue(Bytes(p, p + s.size()));
    }
  }
}

int Sign(int c) { return c < 0 ? -1 : (c > 0 ? 1 : 0); }

TEST(KeyCodecTest, MemcmpOrderIsValueOrder) {
  std::mt19937_64 rng(1);
  std::vector<PropertyValue> values;
  for (int i = 0; i < 400; ++i) values.push_back(RandomValue(rng));
  for (const PropertyValue& a : values) {
    for (const PropertyValue& b : values) {
      ASSERT_EQ(Sign(Encode(a).compare(Encode(b))), CompareValues(a, b));
    }
  }
}

TEST(KeyCodecTest, CompositeKeysOrderLexicographically) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 20000; ++i) {
    const PropertyValue a1 = RandomValue(rng), a2 = RandomValue(rng);
    // Share the first component often, so the second one decides.
    const PropertyValue b1 = rng() % 2 ? a1 : RandomValue(rng), b2 = RandomValue(rng);
    const int expected = CompareValues(a1, b1) != 0 ? CompareValues(a1, b1) : CompareValues(a2, b2);
    ASSERT_EQ(Sign((Encode(a1) + Encode(a2)).compare(Encode(b1) + Encode(b2))), expected);
  }
}

TEST(KeyCodecTest, StringsWithZeroBytesSortBeforeTheirExtensions) {
  const std::vector<std::string> ordered = {
      std::string(""),           std::string("\0", 1), std::string("\0\0", 2),
      std::string("\0\x01", 2),  std::string("a"),     std::string("a\0", 2),
      std::string("a\0\xff", 3), std::string("a\x01"), std::string("\xff")};
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    EXPECT_LT(EncodeKey(PropertyView(std::string_view(ordered[i]))),
              EncodeKey(PropertyView(std::string_view(ordered[i + 1]))))
        << i;
  }
}

TEST(KeyCodecTest, NegativeZeroIsZero) {
  EXPECT_EQ(EncodeKey(PropertyView(-0.0)), EncodeKey(PropertyView(0.0)));
  std::string a, b;
  AppendFixedKey(PropertyView(-0.0), &a);
  AppendFixedKey(PropertyView(0.0), &b);
  EXPECT_EQ(a, b);
  const std::string key = EncodeKey(PropertyView(-0.0));
  std::string_view in = key;
  PropertyValue out;
  ASSERT_TRUE(DecodeKey(&in, &out));
  EXPECT_TRUE(IdenticalValues(PropertyView(0.0), out));
}

TEST(KeyCodecTest, DecodeInvertsEncode) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 5000; ++i) {
    std::vector<PropertyValue> parts(1 + rng() % 3);
    std::string key;
    for (PropertyValue& v : parts) {
      v = RandomValue(rng);
      AppendKey(View(v), &key);
    }
    std::string_view in = key;
    for (const PropertyValue& v : parts) {
      PropertyValue out;
      ASSERT_TRUE(DecodeKey(&in, &out));
      ASSERT_EQ(CompareValues(v, out), 0);
      ASSERT_EQ(v.type(), out.type());
    }
    EXPECT_TRUE(in.empty());
  }
}

TEST(KeyCodecTest, DecodeRejectsMalformedKeys) {
  for (std::string bad : {std::string(""), std::string("\x07"), std::string("\x03\x01\x02"),
                          std::string("\x05"
                                      "abc"),
                          std::string("\x05"
                                      "a\0b",
                                      4),
                          std::string("\x02\x05")}) {
    std::string_view in = bad;
    PropertyValue out;
    EXPECT_FALSE(DecodeKey(&in, &out)) << bad.size();
    EXPECT_EQ(in.size(), bad.size());
  }
}

TEST(KeyCodecTest, FixedKeysOrderWithinTheirType) {
  std::mt19937_64 rng(4);
  EXPECT_EQ(FixedKeyWidth(ValueType::kInt64), 8);
  EXPECT_EQ(FixedKeyWidth(ValueType::kDouble), 8);
  EXPECT_EQ(FixedKeyWidth(ValueType::kString), -1);
  for (int i = 0; i < 20000; ++i) {
    const auto x = static_cast<std::int64_t>(rng()) >> (rng() % 64);
    const auto y = static_cast<std::int64_t>(rng()) >> (rng() % 64);
    std::string a, b;
    AppendFixedKey(PropertyView(x), &a);
    AppendFixedKey(PropertyView(y), &b);
    ASSERT_EQ(a.size(), kFixedKeyBytes);
    ASSERT_EQ(Sign(a.compare(b)), Sign(x, y));
    ASSERT_EQ(DecodeFixedKey(a, ValueType::kInt64), PropertyValue(x));
    // The tagged encoding is the tag and the fixed payload.
    ASSERT_EQ(EncodeKey(PropertyView(x)).substr(1), a);

    const double d = RandomDouble(rng), e = RandomDouble(rng);
    std::string c, f;
    AppendFixedKey(PropertyView(d), &c);
    AppendFixedKey(PropertyView(e), &f);
    ASSERT_EQ(Sign(c.compare(f)), Sign(d, e)) << d << " " << e;
    ASSERT_EQ(*DecodeFixedKey(c, ValueType::kDouble).as_double(), d);
  }
}

TEST(KeyCodecTest, StringPrefixRangeHoldsExactlyThePrefixedStrings) {
  std::mt19937_64 rng(5);
  for (ValueType type : {ValueType::kString, ValueType::kBytes}) {
    for (int i = 0; i < 20000; ++i) {
      const std::string prefix = RandomString(rng).substr(0, rng() % 3);
      const std::string s = rng() % 2 ? prefix + RandomString(rng) : RandomString(rng);
      const KeyRange r = StringPrefixRange(prefix, type);
      const auto* p = reinterpret_cast<const std::byte*>(s.data());
      const PropertyValue v =
          type == ValueType::kString ? PropertyValue(s) : PropertyValue(Bytes(p, p + s.size()));
      // A second component must not matter.
      const std::string key = Encode(v) + (rng() % 2 ? Encode(RandomValue(rng)) : std::string());
      const bool inside = r.lo <= key && key < r.hi;
      ASSERT_EQ(inside, s.compare(0, prefix.size(), prefix) == 0 && s.size() >= prefix.size());
    }
  }
  // Other types stay outside.
  const KeyRange all = StringPrefixRange("");
  EXPECT_FALSE(all.lo <= EncodeKey(PropertyView(std::int64_t{5})));
  EXPECT_FALSE(EncodeKey(PropertyView(std::span<const std::byte>())) < all.hi);
}

TEST(KeyCodecTest, FloatVectorsAreNotIndexable) {
  EXPECT_FALSE(IsIndexable(ValueType::kFloatVector));
  for (ValueType t : {ValueType::kNull, ValueType::kBool, ValueType::kInt64, ValueType::kDouble,
                      ValueType::kString, ValueType::kBytes}) {
    EXPECT_TRUE(IsIndexable(t));
  }
}

}  // namespace
}  // namespace quiver::index
