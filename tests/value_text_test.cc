// ValueText (base/value_text.h): every value type prints typed and
// unambiguous; names print bare only when they are identifiers.
#include "base/value_text.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <string>

namespace quiver::base {
namespace {

TEST(ValueTextTest, EveryTypeIsTellable) {
  EXPECT_EQ(ValueText(PropertyValue()), "null");
  EXPECT_EQ(ValueText(PropertyValue(true)), "true");
  EXPECT_EQ(ValueText(PropertyValue(false)), "false");
  EXPECT_EQ(ValueText(PropertyValue(std::int64_t{42})), "42");
  EXPECT_EQ(ValueText(PropertyValue(std::numeric_limits<std::int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(ValueText(PropertyValue(42.0)), "42.0");
  EXPECT_EQ(ValueText(PropertyValue(-0.0)), "-0.0");
  EXPECT_EQ(ValueText(PropertyValue(0.1)), "0.1");
  EXPECT_EQ(ValueText(PropertyValue(1e300)), "1e+300");
  EXPECT_EQ(ValueText(PropertyValue("42")), "\"42\"");
  EXPECT_EQ(ValueText(PropertyValue(Bytes{std::byte{0x00}, std::byte{0xab}})), "x'00ab'");
  EXPECT_EQ(ValueText(PropertyValue(Bytes{})), "x''");
  EXPECT_EQ(ValueText(PropertyValue(FloatVector{1.5f, -2.0f, 0.1f})), "f32[1.5, -2.0, 0.1]");
  EXPECT_EQ(ValueText(PropertyValue(FloatVector{})), "f32[]");
  EXPECT_EQ(ValueText(PropertyValue(StringList{"math", "", "a\"b"})), R"(str["math", "", "a\"b"])");
  EXPECT_EQ(ValueText(PropertyValue(StringList{})), "str[]");
  // A list of one string is not the string.
  EXPECT_NE(ValueText(PropertyValue(StringList{"42"})), ValueText(PropertyValue("42")));
}

TEST(ValueTextTest, StringsAreEscaped) {
  EXPECT_EQ(Quoted("a\"b\\c\nd\re\tf"), R"("a\"b\\c\nd\re\tf")");
  EXPECT_EQ(Quoted(std::string("\x01\x7f", 2)), R"("\x01\x7f")");
  EXPECT_EQ(Quoted(std::string("nul\0", 4)), R"("nul\x00")");
  // Valid UTF-8 stays as it is; a string that is not shows its high bytes.
  EXPECT_EQ(Quoted("Zoë"), "\"Zoë\"");
  EXPECT_EQ(Quoted("Zo\xc3"), R"("Zo\xc3")");
}

TEST(ValueTextTest, NamesAreBareOnlyWhenIdentifiers) {
  auto name = [](std::string_view n) {
    std::string out;
    AppendName(out, n);
    return out;
  };
  EXPECT_EQ(name("Person"), "Person");
  EXPECT_EQ(name("_x9"), "_x9");
  EXPECT_EQ(name("first name"), "\"first name\"");
  EXPECT_EQ(name("9lives"), "\"9lives\"");
  EXPECT_EQ(name(""), "\"\"");
  EXPECT_EQ(name("Zoë"), "\"Zoë\"");
}

TEST(ValueTextTest, IndexSpecs) {
  std::string out;
  AppendIndexSpec(out, {.name = "person_name",
                        .label = "Person",
                        .keys = {"name", "born"},
                        .kind = IndexKind::kUnique,
                        .type = ValueType::kString});
  EXPECT_EQ(out, "person_name: unique on vertices :Person (name, born), type string");
  out.clear();
  AppendIndexSpec(out, {.name = "knows once",
                        .element = ElementKind::kEdge,
                        .label = "KNOWS",
                        .kind = IndexKind::kUniqueEndpoints});
  EXPECT_EQ(out, "\"knows once\": edge-endpoint constraint on edges :KNOWS");
  // Review: a damaged record's element kind is shown as it is, not as vertices.
  out.clear();
  AppendIndexSpec(out, {.name = "x", .element = static_cast<ElementKind>(5), .label = "L", .keys = {"k"}});
  EXPECT_EQ(out, "x: exact on element 5 :L (k)");
}

// Review: valid UTF-8 that breaks or reorders a line (NEL and the other C1
// controls, U+2028/U+2029, the bidi controls) is escaped, and a message
// from a damaged file prints as one line.
TEST(ValueTextTest, NothingPrintedBreaksALine) {
  EXPECT_EQ(Quoted("a\u2028b"), R"("a\u2028b")");
  EXPECT_EQ(Quoted("a\u2029b\u0085c"), R"("a\u2029b\u0085c")");
  EXPECT_EQ(Quoted("\u202e\u2066x\u2069"), R"("\u202e\u2066x\u2069")");
  EXPECT_EQ(Quoted("\u2027\u00a0"), "\"\u2027\u00a0\"");  // neighbours stay as they are
  EXPECT_EQ(OneLine("index 'x\n  block at 196: vertices' \"q\""),
            R"(index 'x\n  block at 196: vertices' "q")");
}

}  // namespace
}  // namespace quiver::base
