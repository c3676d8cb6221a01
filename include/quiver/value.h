// Property values: the owning `PropertyValue` that batches carry, and the
// non-owning `PropertyView` that snapshots return.
//
// A value is one of: null, bool, int64, double, string (valid UTF-8), bytes,
// a vector of float32, or a list of strings (each valid UTF-8). Doubles and
// vector elements must be finite: NaN and +/-Inf are rejected with
// InvalidArgument when the batch is written (-0.0 and subnormals are stored
// as given).
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
// bytes, vector and string-list accessors return views of the payload,
// valid while the value (or, for a PropertyView, the snapshot) lives.
//
// Example:
//   batch.AddVertex("Person", {{"name", "Ada"}, {"born", 1815}, {"tags", StringList{"math", "poet"}}});
//   if (auto tags = snap.GetProperty(v, "tags")) {
//     if (std::optional<StringListView> list = tags->as_string_list())
//       for (std::string_view tag : *list) Use(tag);
//   }
#ifndef QUIVER_VALUE_H_
#define QUIVER_VALUE_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
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
  kStringList = 7,
};

std::string_view ValueTypeName(ValueType type);

using Bytes = std::vector<std::byte>;
using FloatVector = std::vector<float>;
using StringList = std::vector<std::string>;

// A read-only view of a list of strings (ValueType::kStringList): either
// the strings of an owned StringList or a stored list in its packed form.
// Its elements are string_views into the viewed storage, valid while that
// lives (the PropertyValue, or the snapshot a PropertyView came from).
// Cheap to copy. Thread-safe to read.
//   for (std::string_view s : list) ...;  list[0]; list.size();
class StringListView {
 public:
  StringListView() = default;  // empty
  // A view of `strings`, which must outlive it.
  explicit StringListView(std::span<const std::string> strings)
      : strings_(strings.data()), size_(strings.size()) {}
  // A view of a list in its packed form, the way storage keeps it:
  //   count:u32  end:u32[count]  bytes
  // (native byte order; end[i] is where element i ends in `bytes`, element
  // i starts where element i - 1 ends, element 0 at 0). Requires `packed`
  // to be well formed and to outlive the view.
  static StringListView Packed(std::span<const std::byte> packed);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Element i; requires i < size().
  std::string_view operator[](std::size_t i) const { return Element(strings_, packed_, i); }
  // The list's text bytes, all elements together (no separators).
  std::size_t text_bytes() const;

  // A forward iterator over the elements; it copies what it needs, so it
  // stays valid after the view it came from is gone (not the storage).
  class iterator {
   public:
    using value_type = std::string_view;
    using reference = std::string_view;
    using pointer = void;
    using difference_type = std::ptrdiff_t;
    // Elements are returned by value (views), so a legacy input iterator,
    // and a C++20 forward iterator.
    using iterator_category = std::input_iterator_tag;
    using iterator_concept = std::forward_iterator_tag;
    iterator() = default;
    std::string_view operator*() const { return Element(strings_, packed_, i_); }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++i_;
      return old;
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }

   private:
    friend class StringListView;
    iterator(const std::string* strings, const std::byte* packed, std::size_t i)
        : strings_(strings), packed_(packed), i_(i) {}
    const std::string* strings_ = nullptr;
    const std::byte* packed_ = nullptr;
    std::size_t i_ = 0;
  };
  iterator begin() const { return iterator(strings_, packed_, 0); }
  iterator end() const { return iterator(strings_, packed_, size_); }

  // The elements, copied.
  StringList ToList() const;

  // The same elements in the same order.
  friend bool operator==(const StringListView& a, const StringListView& b);

 private:
  // Element i of the owned form (strings non-null) or the packed form.
  static std::string_view Element(const std::string* strings, const std::byte* packed, std::size_t i);

  const std::string* strings_ = nullptr;  // the owned form, or
  const std::byte* packed_ = nullptr;     // the packed form (its start)
  std::size_t size_ = 0;
};

// An owned property value. Cheap to move; copying copies the payload.
class PropertyValue {
 public:
  PropertyValue() = default;        // null
  PropertyValue(std::nullptr_t) {}  // NOLINT
  PropertyValue(bool v) : v_(v) {}  // NOLINT
  // Any integer is an int64: an unsigned value above INT64_MAX wraps
  // (std::uint64_t{1} << 63 becomes INT64_MIN), so convert such values
  // yourself (to a double, a string or two properties).
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  PropertyValue(I v) : v_(static_cast<std::int64_t>(v)) {}  // NOLINT
  PropertyValue(double v) : v_(v) {}                        // NOLINT
  // A null pointer is the null value (std::getenv of an unset variable).
  PropertyValue(const char* v) {  // NOLINT
    if (v != nullptr) v_ = std::string(v);
  }
  PropertyValue(std::string v) : v_(std::move(v)) {}         // NOLINT
  PropertyValue(std::string_view v) : v_(std::string(v)) {}  // NOLINT
  PropertyValue(Bytes v) : v_(std::move(v)) {}               // NOLINT
  PropertyValue(FloatVector v) : v_(std::move(v)) {}         // NOLINT
  PropertyValue(StringList v) : v_(std::move(v)) {}          // NOLINT

  // Copying copies the payload; out of memory it throws std::bad_alloc and
  // leaves the destination as it was.
  PropertyValue(const PropertyValue& o) : v_(CopyOf(o.v_)) {}
  PropertyValue& operator=(const PropertyValue& o) {
    if (this != &o) v_ = CopyOf(o.v_);
    return *this;
  }
  PropertyValue(PropertyValue&&) noexcept = default;
  PropertyValue& operator=(PropertyValue&&) noexcept = default;
  ~PropertyValue() = default;

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
  std::optional<StringListView> as_string_list() const { return Get<StringList, StringListView>(); }

  // The heap memory the value holds, by capacity: a string, bytes or vector
  // moved in keeps the buffer it had, however little of it is used. A list
  // counts its array and its strings. 0 for null, bool, int64, double and a
  // string short enough to be held inline; allocator overhead not counted.
  std::size_t heap_bytes() const;

  friend bool operator==(const PropertyValue&, const PropertyValue&) = default;

 private:
  template <typename Held, typename Out = Held>
  std::optional<Out> Get() const {
    const Held* p = std::get_if<Held>(&v_);
    return p == nullptr ? std::nullopt : std::optional<Out>(Out(*p));
  }

  using Variant =
      std::variant<std::monostate, bool, std::int64_t, double, std::string, Bytes, FloatVector, StringList>;
  // The payload is copied into a temporary outside the variant, then moved
  // in (moves of these types do not throw). GCC 12's std::variant copy
  // constructor, when the payload's copy threw std::bad_alloc, went on
  // through an invalid index: a crash, not an exception.
  static Variant CopyOf(const Variant& v) {
    return std::visit(
        [](const auto& x) -> Variant {
          using T = std::decay_t<decltype(x)>;
          T copy(x);
          return Variant(std::in_place_type<T>, std::move(copy));
        },
        v);
  }

  Variant v_;
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
  explicit PropertyView(StringListView v) : v_(v) {}

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
  std::optional<StringListView> as_string_list() const { return Get<StringListView>(); }

  // Copies the viewed value into an owning PropertyValue.
  PropertyValue ToValue() const;

 private:
  template <typename T>
  std::optional<T> Get() const {
    const T* p = std::get_if<T>(&v_);
    return p == nullptr ? std::nullopt : std::optional<T>(*p);
  }

  std::variant<std::monostate, bool, std::int64_t, double, std::string_view, std::span<const std::byte>,
               std::span<const float>, StringListView>
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
