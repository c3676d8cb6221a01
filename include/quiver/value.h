// Property values: the owning `PropertyValue` that batches carry, and the
// non-owning `PropertyView` that snapshots return.
//
// A value is one of: null, bool, int64, double, string (valid UTF-8), bytes,
// or a vector of float32. Doubles and vector elements must be finite: NaN
// and +/-Inf are rejected with InvalidArgument when the batch is written
// (-0.0 and subnormals are stored as given).
//
// Typed accessors never throw: `as_int64()` and friends return the value
// when it has that type and std::nullopt otherwise (a null value, or any
// other type), so reading a property whose type is not certain is a test,
// not a crash:
//   if (auto born = snap.GetProperty(v, "born")) {
//     if (std::optional<std::int64_t> year = born->as_int64()) Use(*year);
//   }
// Mind as_bool(): `if (v.as_bool())` tests only that the value is a bool;
// write `v.as_bool() == true` or `v.as_bool().value_or(false)`. String,
// bytes and vector accessors return views of the payload, valid while the
// value (or, for a PropertyView, the snapshot) lives.
//
// Example:
//   batch.AddVertex("Person", {{"name", "Ada"}, {"born", 1815}});
#ifndef QUIVER_VALUE_H_
#define QUIVER_VALUE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
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

  // The value if it has the accessor's type, else nullopt. Never throw.
  std::optional<bool> as_bool() const { return Get<bool>(); }
  std::optional<std::int64_t> as_int64() const { return Get<std::int64_t>(); }
  std::optional<double> as_double() const { return Get<double>(); }
  // Views of the payload, valid while this value lives and is not modified.
  std::optional<std::string_view> as_string() const { return Get<std::string, std::string_view>(); }
  std::optional<std::span<const std::byte>> as_bytes() const {
    return Get<Bytes, std::span<const std::byte>>();
  }
  std::optional<std::span<const float>> as_float_vector() const {
    return Get<FloatVector, std::span<const float>>();
  }

  friend bool operator==(const PropertyValue&, const PropertyValue&) = default;

 private:
  template <typename Held, typename Out = Held>
  std::optional<Out> Get() const {
    const Held* p = std::get_if<Held>(&v_);
    return p == nullptr ? std::nullopt : std::optional<Out>(Out(*p));
  }

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
  // The value if it has the accessor's type, else nullopt. Never throw.
  // Views point into the snapshot the PropertyView came from.
  std::optional<bool> as_bool() const { return Get<bool>(); }
  std::optional<std::int64_t> as_int64() const { return Get<std::int64_t>(); }
  std::optional<double> as_double() const { return Get<double>(); }
  std::optional<std::string_view> as_string() const { return Get<std::string_view>(); }
  std::optional<std::span<const std::byte>> as_bytes() const { return Get<std::span<const std::byte>>(); }
  std::optional<std::span<const float>> as_float_vector() const { return Get<std::span<const float>>(); }

  // Copies the viewed value into an owning PropertyValue.
  PropertyValue ToValue() const;

 private:
  template <typename T>
  std::optional<T> Get() const {
    const T* p = std::get_if<T>(&v_);
    return p == nullptr ? std::nullopt : std::optional<T>(*p);
  }

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
