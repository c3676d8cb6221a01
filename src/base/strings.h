// String helpers for the engine: message building and transparent string
// hashing. (Debian's abseil builds absl::string_view as its own type, so
// absl::StrCat and absl's string hashers do not take std::string_view.)
#ifndef QUIVER_BASE_STRINGS_H_
#define QUIVER_BASE_STRINGS_H_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace quiver::base {

namespace strings_internal {
inline void Append(std::string& out, std::string_view s) { out.append(s); }
inline void Append(std::string& out, const char* s) { out.append(s); }
inline void Append(std::string& out, const std::string& s) { out.append(s); }
template <typename I, std::enable_if_t<std::is_arithmetic_v<I>, int> = 0>
void Append(std::string& out, I v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}
}  // namespace strings_internal

// Concatenates strings and numbers.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (strings_internal::Append(out, args), ...);
  return out;
}

// Hash and equality for string-keyed containers that accept
// std::string_view lookups without building a std::string.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
struct StringEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

// "<prefix><n as 20 zero-padded digits><suffix>": file names that sort in
// numeric order.
std::string NumberedFileName(std::string_view prefix, std::uint64_t n, std::string_view suffix);
// The number in a NumberedFileName with this prefix and suffix, or nullopt.
std::optional<std::uint64_t> ParseNumberedFileName(std::string_view name, std::string_view prefix,
                                                   std::string_view suffix);

}  // namespace quiver::base

#endif  // QUIVER_BASE_STRINGS_H_
