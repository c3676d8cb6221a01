// Property values: the owning `PropertyValue` that batches carry, and the
// non-owning `PropertyView` that snapshots return.
//
// A value is one of: null, bool, int64, double, string (valid UTF-8), bytes,
// or a vector of float32. Doubles and vector elements must be finite: NaN
// and +/-Inf are rejected with InvalidArgument when the batch is written
// (-0.0 and subnormals are stored as given).
//
// Example:
//   batch.AddVertex("Person", {{"name", "Ada"}, {"born", 1815}});
#ifndef QUIVER_VALUE_H_
#define QUIVER_VALUE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace quiver {

// The type of a property value. Persisted: never renumber.
enum class ValueType : std::uint8_t {
  kNull = 0,
  kBool = 1,
  kInt64 = 2,
  kDouble = 3,
  kString = 4,
  kBytes = 5,
  kFloatVector = 6,
};

std::string_view ValueTypeName(ValueType type);

using Bytes = std::vector<std::byte>;
using FloatVector = std::vector<float>;

// An owned property value. Cheap to move; copying copies the payload.
class PropertyValue {
 public:
  PropertyValue() = default;        // null
  PropertyValue(std::nullptr_t) {}  // NOLINT
  PropertyValue(bool v) : v_(v) {}  // NOLINT
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  PropertyValue(I v) : v_(static_cast<std::int64_t>(v)) {}   // NOLINT
  PropertyValue(double v) : v_(v) {}                         // NOLINT
  PropertyValue(const char* v) : v_(std::string(v)) {}       // NOLINT
  PropertyValue(std::string v) : v_(std::move(v)) {}         // NOLINT
  PropertyValue(std::string_view v) : v_(std::string(v)) {}  // NOLINT
  PropertyValue(Bytes v) : v_(std::move(v)) {}               // NOLINT
  PropertyValue(FloatVector v) : v_(std::move(v)) {}         // NOLINT

  ValueType type() const { return static_cast<ValueType>(v_.index()); }
  bool is_null() const { return type() == ValueType::kNull; }

  // Typed accessors; calling the wrong one is a programming error.
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int64() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Bytes& as_bytes() const { return std::get<Bytes>(v_); }
  const FloatVector& as_float_vector() const { return std::get<FloatVector>(v_); }

  friend bool operator==(const PropertyValue&, const PropertyValue&) = default;

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Bytes, FloatVector> v_;
};

// A read-only view of a stored value. It points into the snapshot it came
// from and is valid only while that snapshot lives.
class PropertyView {
 public:
  PropertyView() = default;  // null
  explicit PropertyView(bool v) : v_(v) {}
  explicit PropertyView(std::int64_t v) : v_(v) {}
  explicit PropertyView(double v) : v_(v) {}
  explicit PropertyView(std::string_view v) : v_(v) {}
  explicit PropertyView(std::span<const std::byte> v) : v_(v) {}
  explicit PropertyView(std::span<const float> v) : v_(v) {}

  ValueType type() const { return static_cast<ValueType>(v_.index()); }
  bool is_null() const { return type() == ValueType::kNull; }
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int64() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  std::string_view as_string() const { return std::get<std::string_view>(v_); }
  std::span<const std::byte> as_bytes() const { return std::get<std::span<const std::byte>>(v_); }
  std::span<const float> as_float_vector() const { return std::get<std::span<const float>>(v_); }

  // Copies the viewed value into an owning PropertyValue.
  PropertyValue ToValue() const;

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string_view, std::span<const std::byte>,
               std::span<const float>>
      v_;
};

// Equality of a stored value and an owned value (doubles compare with ==,
// so -0.0 == 0.0).
bool operator==(const PropertyView& a, const PropertyValue& b);

// Identity: the same type and the same bytes. Unlike ==, doubles and
// vector elements compare by bit pattern, so -0.0 differs from 0.0. What a
// round trip through the graph (or its files) must preserve.
bool IdenticalValues(const PropertyView& a, const PropertyValue& b);

// One key/value pair as a batch carries it.
struct Property {
  std::string key;
  PropertyValue value;
};

}  // namespace quiver

#endif  // QUIVER_VALUE_H_
