// Tests for PropertyValue / PropertyView (include/quiver/value.h), the strong
// id types (ids.h) and the EdgeEntry layout (snapshot.h).
#include "quiver/value.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "quiver/ids.h"
#include "quiver/snapshot.h"

namespace quiver {
namespace {

constexpr ValueType kAllTypes[] = {
    ValueType::kNull,   ValueType::kBool,  ValueType::kInt64,       ValueType::kDouble,
    ValueType::kString, ValueType::kBytes, ValueType::kFloatVector, ValueType::kStringList,
};

Bytes MakeBytes(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(static_cast<std::byte>(x));
  return b;
}

TEST(ValueTypeTest, ValuesAreStable) {
  // Persisted: never renumber.
  EXPECT_EQ(static_cast<int>(ValueType::kNull), 0);
  EXPECT_EQ(static_cast<int>(ValueType::kBool), 1);
  EXPECT_EQ(static_cast<int>(ValueType::kInt64), 2);
  EXPECT_EQ(static_cast<int>(ValueType::kDouble), 3);
  EXPECT_EQ(static_cast<int>(ValueType::kString), 4);
  EXPECT_EQ(static_cast<int>(ValueType::kBytes), 5);
  EXPECT_EQ(static_cast<int>(ValueType::kFloatVector), 6);
  EXPECT_EQ(static_cast<int>(ValueType::kStringList), 7);
  EXPECT_EQ(ValueTypeName(ValueType::kStringList), "string_list");
}

TEST(ValueTypeTest, NamesAreDistinctAndNonEmpty) {
  std::set<std::string> names;
  for (ValueType t : kAllTypes) {
    std::string name(ValueTypeName(t));
    EXPECT_FALSE(name.empty()) << static_cast<int>(t);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), std::size(kAllTypes));
}

TEST(PropertyValueTest, DefaultAndNullptrAreNull) {
  PropertyValue a;
  PropertyValue b(nullptr);
  EXPECT_TRUE(a.is_null());
  EXPECT_TRUE(b.is_null());
  EXPECT_EQ(a.type(), ValueType::kNull);
  EXPECT_EQ(a, b);
}

TEST(PropertyValueTest, ConstructorsPickTheRightType) {
  EXPECT_EQ(PropertyValue(true).type(), ValueType::kBool);
  EXPECT_EQ(PropertyValue(false).type(), ValueType::kBool);
  EXPECT_EQ(PropertyValue(7).type(), ValueType::kInt64);
  EXPECT_EQ(PropertyValue(std::int64_t{7}).type(), ValueType::kInt64);
  EXPECT_EQ(PropertyValue(std::uint8_t{7}).type(), ValueType::kInt64);
  EXPECT_EQ(PropertyValue(7u).type(), ValueType::kInt64);
  EXPECT_EQ(PropertyValue(short{7}).type(), ValueType::kInt64);
  EXPECT_EQ(PropertyValue(1.5).type(), ValueType::kDouble);
  EXPECT_EQ(PropertyValue(1.5f).type(), ValueType::kDouble);
  EXPECT_EQ(PropertyValue("abc").type(), ValueType::kString);
  EXPECT_EQ(PropertyValue(std::string("abc")).type(), ValueType::kString);
  EXPECT_EQ(PropertyValue(std::string_view("abc")).type(), ValueType::kString);
  EXPECT_EQ(PropertyValue(Bytes{}).type(), ValueType::kBytes);
  EXPECT_EQ(PropertyValue(FloatVector{1.0f}).type(), ValueType::kFloatVector);
  EXPECT_EQ(PropertyValue(StringList{"a"}).type(), ValueType::kStringList);
  EXPECT_EQ(PropertyValue(StringList{}).type(), ValueType::kStringList);
}

// The packed form StringListView::Packed reads, as value.h writes it down:
// count:u32, end:u32[count], the elements' bytes.
std::vector<std::byte> Packed(const StringList& list) {
  std::vector<std::byte> out;
  auto put = [&out](std::uint32_t v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  };
  put(static_cast<std::uint32_t>(list.size()));
  std::uint32_t end = 0;
  for (const std::string& s : list) put(end += static_cast<std::uint32_t>(s.size()));
  for (const std::string& s : list)
    for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

TEST(StringListViewTest, OwnedAndPackedFormsReadAlike) {
  const StringList list = {"math", "", std::string("n\0l", 3), "po\xC3\xA9t"};
  const std::vector<std::byte> packed = Packed(list);
  const StringListView owned(list);
  const StringListView stored = StringListView::Packed(packed);
  for (const StringListView& v : {owned, stored}) {
    ASSERT_EQ(v.size(), 4u);
    EXPECT_FALSE(v.empty());
    EXPECT_EQ(v[0], "math");
    EXPECT_EQ(v[1], "");
    EXPECT_EQ(v[2], std::string_view("n\0l", 3));
    EXPECT_EQ(v[3], "po\xC3\xA9t");
    EXPECT_EQ(v.text_bytes(), 4u + 0u + 3u + 5u);
    EXPECT_EQ(v.ToList(), list);
    std::vector<std::string_view> seen(v.begin(), v.end());
    EXPECT_EQ(seen.size(), 4u);
    EXPECT_EQ(seen[3], "po\xC3\xA9t");
  }
  EXPECT_EQ(owned[0].data(), list[0].data());  // views, not copies
  EXPECT_EQ(stored[0].data(), reinterpret_cast<const char*>(packed.data()) + 4 * (1 + 4));
  EXPECT_TRUE(owned == stored);
  const StringListView empty = StringListView::Packed(Packed({}));
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.text_bytes(), 0u);
  EXPECT_TRUE(empty == StringListView());
  EXPECT_EQ(empty.begin(), empty.end());
}

TEST(StringListViewTest, EqualityComparesElementsNotTheirConcatenation) {
  const StringList ab_c = {"ab", "c"}, a_bc = {"a", "bc"}, abc = {"abc"};
  EXPECT_FALSE(StringListView(ab_c) == StringListView(a_bc));
  EXPECT_FALSE(StringListView(ab_c) == StringListView(abc));
  EXPECT_FALSE(StringListView(StringList{""}) == StringListView(StringList{}));
  EXPECT_NE(PropertyValue(ab_c), PropertyValue(a_bc));
  EXPECT_NE(PropertyValue(StringList{"s"}), PropertyValue("s"));
  EXPECT_EQ(PropertyValue(ab_c), PropertyValue(StringList{"ab", "c"}));
  const std::vector<std::byte> packed = Packed(ab_c);
  const PropertyView stored(StringListView::Packed(packed));
  EXPECT_TRUE(stored == PropertyValue(ab_c));
  EXPECT_TRUE(IdenticalValues(stored, PropertyValue(ab_c)));
  EXPECT_FALSE(stored == PropertyValue(a_bc));
  EXPECT_FALSE(IdenticalValues(stored, PropertyValue(a_bc)));
  EXPECT_EQ(stored.ToValue(), PropertyValue(ab_c));
}

// Every accessor on every type: the value for its own type, nullopt for any
// other, never an exception (they used to throw std::bad_variant_access).
TEST(PropertyValueTest, AccessorsOfTheWrongTypeGiveNullopt) {
  const std::vector<PropertyValue> values = {PropertyValue(),
                                             PropertyValue(false),
                                             PropertyValue(7),
                                             PropertyValue(2.5),
                                             PropertyValue("s"),
                                             PropertyValue(Bytes{std::byte{1}}),
                                             PropertyValue(FloatVector{1.0f}),
                                             PropertyValue(StringList{"s"})};
  for (const PropertyValue& v : values) {
    SCOPED_TRACE(ValueTypeName(v.type()));
    EXPECT_NO_THROW({
      EXPECT_EQ(v.as_bool().has_value(), v.type() == ValueType::kBool);
      EXPECT_EQ(v.as_int64().has_value(), v.type() == ValueType::kInt64);
      EXPECT_EQ(v.as_double().has_value(), v.type() == ValueType::kDouble);
      EXPECT_EQ(v.as_string().has_value(), v.type() == ValueType::kString);
      EXPECT_EQ(v.as_bytes().has_value(), v.type() == ValueType::kBytes);
      EXPECT_EQ(v.as_float_vector().has_value(), v.type() == ValueType::kFloatVector);
      EXPECT_EQ(v.as_string_list().has_value(), v.type() == ValueType::kStringList);
    });
  }
  // The same through PropertyView.
  const std::string str = "s";
  const Bytes bytes = {std::byte{1}};
  const FloatVector floats = {1.0f};
  const StringList strings = {"s"};
  const std::vector<PropertyView> views = {PropertyView(),
                                           PropertyView(false),
                                           PropertyView(std::int64_t{7}),
                                           PropertyView(2.5),
                                           PropertyView(std::string_view(str)),
                                           PropertyView(std::span<const std::byte>(bytes)),
                                           PropertyView(std::span<const float>(floats)),
                                           PropertyView(StringListView(strings))};
  for (const PropertyView& x : views) {
    SCOPED_TRACE(ValueTypeName(x.type()));
    EXPECT_NO_THROW({
      EXPECT_EQ(x.as_bool().has_value(), x.type() == ValueType::kBool);
      EXPECT_EQ(x.as_int64().has_value(), x.type() == ValueType::kInt64);
      EXPECT_EQ(x.as_double().has_value(), x.type() == ValueType::kDouble);
      EXPECT_EQ(x.as_string().has_value(), x.type() == ValueType::kString);
      EXPECT_EQ(x.as_bytes().has_value(), x.type() == ValueType::kBytes);
      EXPECT_EQ(x.as_float_vector().has_value(), x.type() == ValueType::kFloatVector);
      EXPECT_EQ(x.as_string_list().has_value(), x.type() == ValueType::kStringList);
    });
  }
  EXPECT_EQ(PropertyView(false).as_bool(), false);  // a present false, not "absent"
  EXPECT_EQ(PropertyValue(7).as_string().value_or("none"), "none");
}

TEST(PropertyValueTest, Accessors) {
  EXPECT_EQ(PropertyValue(true).as_bool(), true);
  EXPECT_EQ(PropertyValue(false).as_bool(), false);
  EXPECT_EQ(PropertyValue(-5).as_int64(), -5);
  EXPECT_EQ(PropertyValue(std::numeric_limits<std::int64_t>::min()).as_int64(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(PropertyValue(std::numeric_limits<std::int64_t>::max()).as_int64(),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(PropertyValue(2.25).as_double(), 2.25);
  EXPECT_EQ(PropertyValue("héllo").as_string(), "héllo");
  std::string with_nul("a\0b", 3);
  EXPECT_EQ(PropertyValue(with_nul).as_string(), with_nul);
  EXPECT_EQ(PropertyValue(std::string_view(with_nul)).as_string()->size(), 3u);
  EXPECT_TRUE(
      std::ranges::equal(*PropertyValue(MakeBytes({0, 255, 128})).as_bytes(), MakeBytes({0, 255, 128})));
  EXPECT_TRUE(std::ranges::equal(*PropertyValue(FloatVector{1.0f, -2.5f}).as_float_vector(),
                                 FloatVector{1.0f, -2.5f}));
}

TEST(PropertyValueTest, NegativeZeroKeepsItsSign) {
  PropertyValue v(-0.0);
  EXPECT_TRUE(std::signbit(*v.as_double()));
}

TEST(PropertyValueTest, EqualityComparesTypeAndPayload) {
  EXPECT_EQ(PropertyValue(1), PropertyValue(1));
  EXPECT_NE(PropertyValue(1), PropertyValue(2));
  EXPECT_NE(PropertyValue(1), PropertyValue(1.0));
  EXPECT_NE(PropertyValue(true), PropertyValue(1));
  EXPECT_NE(PropertyValue("1"), PropertyValue(1));
  EXPECT_NE(PropertyValue(""), PropertyValue());
  EXPECT_NE(PropertyValue(Bytes{}), PropertyValue(""));
  EXPECT_NE(PropertyValue(Bytes{}), PropertyValue(FloatVector{}));
  EXPECT_EQ(PropertyValue("x"), PropertyValue(std::string("x")));
}

TEST(PropertyValueTest, CopyAndMove) {
  PropertyValue a(std::string(1000, 'z'));
  PropertyValue b = a;
  EXPECT_EQ(a, b);
  PropertyValue c = std::move(a);
  EXPECT_EQ(c, b);
  PropertyValue d;
  d = b;
  EXPECT_EQ(d.as_string()->size(), 1000u);
}

TEST(PropertyViewTest, DefaultIsNull) {
  PropertyView v;
  EXPECT_TRUE(v.is_null());
  EXPECT_EQ(v.type(), ValueType::kNull);
  EXPECT_TRUE(v.ToValue().is_null());
  EXPECT_TRUE(v == PropertyValue());
}

TEST(PropertyViewTest, TypesAndAccessors) {
  EXPECT_EQ(PropertyView(true).type(), ValueType::kBool);
  EXPECT_EQ(PropertyView(true).as_bool(), true);
  EXPECT_EQ(PropertyView(std::int64_t{-3}).type(), ValueType::kInt64);
  EXPECT_EQ(PropertyView(std::int64_t{-3}).as_int64(), -3);
  EXPECT_EQ(PropertyView(0.5).type(), ValueType::kDouble);
  EXPECT_EQ(PropertyView(0.5).as_double(), 0.5);
  EXPECT_EQ(PropertyView(std::string_view("s")).type(), ValueType::kString);
  EXPECT_EQ(PropertyView(std::string_view("s")).as_string(), "s");
  Bytes bytes = MakeBytes({1, 2, 3});
  PropertyView bv{std::span<const std::byte>(bytes)};
  EXPECT_EQ(bv.type(), ValueType::kBytes);
  EXPECT_EQ(bv.as_bytes()->size(), 3u);
  EXPECT_EQ(bv.as_bytes()->data(), bytes.data());  // a view, not a copy
  FloatVector fv = {1.0f, 2.0f};
  PropertyView vv{std::span<const float>(fv)};
  EXPECT_EQ(vv.type(), ValueType::kFloatVector);
  EXPECT_EQ(vv.as_float_vector()->data(), fv.data());
}

TEST(PropertyViewTest, ToValueCopiesEveryType) {
  std::string s("a\0z", 3);
  Bytes bytes = MakeBytes({0xff, 0x00, 0x80});
  FloatVector fv = {0.0f, -0.0f, 3.5f, std::numeric_limits<float>::denorm_min()};
  const std::pair<PropertyView, PropertyValue> cases[] = {
      {PropertyView(), PropertyValue()},
      {PropertyView(false), PropertyValue(false)},
      {PropertyView(std::numeric_limits<std::int64_t>::min()),
       PropertyValue(std::numeric_limits<std::int64_t>::min())},
      {PropertyView(-1.25), PropertyValue(-1.25)},
      {PropertyView(std::string_view(s)), PropertyValue(s)},
      {PropertyView(std::span<const std::byte>(bytes)), PropertyValue(bytes)},
      {PropertyView(std::span<const float>(fv)), PropertyValue(fv)},
  };
  for (const auto& [view, value] : cases) {
    PropertyValue copy = view.ToValue();
    EXPECT_EQ(copy.type(), view.type());
    EXPECT_EQ(copy, value) << ValueTypeName(view.type());
    EXPECT_TRUE(view == value) << ValueTypeName(view.type());
  }
  // The copy owns its payload.
  PropertyValue copy = PropertyView(std::string_view(s)).ToValue();
  s[0] = 'Q';
  EXPECT_EQ((*copy.as_string())[0], 'a');
}

TEST(PropertyViewTest, ToValueKeepsNegativeZero) {
  PropertyValue v = PropertyView(-0.0).ToValue();
  EXPECT_TRUE(std::signbit(*v.as_double()));
}

TEST(PropertyViewTest, EqualityWithValue) {
  EXPECT_TRUE(PropertyView(std::int64_t{1}) == PropertyValue(1));
  EXPECT_FALSE(PropertyView(std::int64_t{1}) == PropertyValue(2));
  EXPECT_FALSE(PropertyView(std::int64_t{1}) == PropertyValue(1.0));  // types differ
  EXPECT_FALSE(PropertyView(1.0) == PropertyValue(1));
  EXPECT_FALSE(PropertyView(true) == PropertyValue(1));
  EXPECT_FALSE(PropertyView() == PropertyValue(false));
  EXPECT_FALSE(PropertyView(std::string_view("")) == PropertyValue());
  EXPECT_TRUE(PropertyView(0.0) == PropertyValue(-0.0));  // doubles compare with ==
  EXPECT_TRUE(PropertyView(-0.0) == PropertyValue(0.0));
  EXPECT_TRUE(PropertyView(std::string_view("ab")) == PropertyValue("ab"));
  EXPECT_FALSE(PropertyView(std::string_view("ab")) == PropertyValue("abc"));
  EXPECT_FALSE(PropertyView(std::string_view("ab")) == PropertyValue(MakeBytes({'a', 'b'})));
  Bytes bytes = MakeBytes({'a', 'b'});
  EXPECT_TRUE(PropertyView(std::span<const std::byte>(bytes)) == PropertyValue(bytes));
  EXPECT_FALSE(PropertyView(std::span<const std::byte>(bytes)) == PropertyValue(MakeBytes({'a'})));
  FloatVector fv = {1.0f, 2.0f};
  EXPECT_TRUE(PropertyView(std::span<const float>(fv)) == PropertyValue(fv));
  EXPECT_FALSE(PropertyView(std::span<const float>(fv)) == PropertyValue(FloatVector{1.0f}));
  EXPECT_FALSE(PropertyView(std::span<const float>(fv)) == PropertyValue(FloatVector{1.0f, 3.0f}));
}

TEST(PropertyTest, IsKeyValuePair) {
  Property p{"name", "Ada"};
  EXPECT_EQ(p.key, "name");
  EXPECT_EQ(p.value, PropertyValue("Ada"));
  Property q{"age", 36};
  EXPECT_EQ(q.value.type(), ValueType::kInt64);
}

TEST(StrongIdTest, KindsDoNotConvert) {
  static_assert(!std::is_convertible_v<VertexId, EdgeId>);
  static_assert(!std::is_convertible_v<EdgeId, VertexId>);
  static_assert(!std::is_convertible_v<LabelId, EdgeTypeId>);
  static_assert(!std::is_convertible_v<EdgeTypeId, PropertyKeyId>);
  static_assert(!std::is_convertible_v<std::uint64_t, VertexId>);
  static_assert(!std::is_convertible_v<VertexId, std::uint64_t>);
  static_assert(std::is_same_v<VertexId::rep_type, std::uint64_t>);
  static_assert(std::is_same_v<LabelId::rep_type, std::uint32_t>);
  SUCCEED();
}

TEST(StrongIdTest, CompareAndHash) {
  EXPECT_EQ(VertexId(3), VertexId(3));
  EXPECT_LT(VertexId(3), VertexId(4));
  EXPECT_EQ(VertexId().value(), 0u);
  EXPECT_EQ(EdgeId(kMaxElementId).value(), (std::uint64_t{1} << 48) - 1);
  std::unordered_set<VertexId> set = {VertexId(1), VertexId(2), VertexId(1)};
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(std::hash<EdgeId>()(EdgeId(9)), std::hash<EdgeId>()(EdgeId(9)));
}

std::array<unsigned char, 12> EncodeEntry(std::uint64_t edge, std::uint64_t neighbor) {
  std::array<unsigned char, 12> b{};
  for (int i = 0; i < 6; ++i) b[i] = static_cast<unsigned char>(edge >> (8 * i));
  for (int i = 0; i < 6; ++i) b[6 + i] = static_cast<unsigned char>(neighbor >> (8 * i));
  return b;
}

TEST(EdgeEntryTest, IsTwelveBytes) {
  EXPECT_EQ(sizeof(EdgeEntry), 12u);
  static_assert(std::is_trivially_copyable_v<EdgeEntry>);
}

TEST(EdgeEntryTest, DecodesTwo48BitIds) {
  const std::pair<std::uint64_t, std::uint64_t> cases[] = {
      {0, 0},
      {1, 2},
      {kMaxElementId, 0},
      {0, kMaxElementId},
      {kMaxElementId, kMaxElementId},
      {0x123456789abcULL, 0xfedcba987654ULL},
  };
  for (auto [edge, neighbor] : cases) {
    EdgeEntry e = std::bit_cast<EdgeEntry>(EncodeEntry(edge, neighbor));
    EXPECT_EQ(e.edge(), EdgeId(edge));
    EXPECT_EQ(e.neighbor(), VertexId(neighbor));
  }
}

}  // namespace
}  // namespace quiver

namespace quiver {
namespace {

TEST(ValueIdentityTest, IdentityComparesDoublesByBitPatternEqualityByValue) {
  PropertyValue neg_zero(-0.0), zero(0.0);
  PropertyView view_zero(0.0);
  EXPECT_TRUE(view_zero == neg_zero);
  EXPECT_FALSE(IdenticalValues(view_zero, neg_zero));
  EXPECT_TRUE(IdenticalValues(view_zero, zero));
  FloatVector v{1.0f, -0.0f};
  FloatVector w{1.0f, 0.0f};
  PropertyView view_v{std::span<const float>(v)};
  EXPECT_TRUE(view_v == PropertyValue(w));
  EXPECT_FALSE(IdenticalValues(view_v, PropertyValue(w)));
  EXPECT_FALSE(IdenticalValues(PropertyView(std::int64_t{1}), PropertyValue(true)));
}

}  // namespace
}  // namespace quiver
