#include "base/strings.h"

namespace quiver::base {

std::string NumberedFileName(std::string_view prefix, std::uint64_t n, std::string_view suffix) {
  std::string digits = StrCat(n);
  return StrCat(prefix, std::string(20 - digits.size(), '0'), digits, suffix);
}

std::optional<std::uint64_t> ParseNumberedFileName(std::string_view name, std::string_view prefix,
                                                   std::string_view suffix) {
  if (name.size() != prefix.size() + 20 + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(prefix.size() + 20) != suffix)
    return std::nullopt;
  std::string_view digits = name.substr(prefix.size(), 20);
  std::uint64_t n = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) return std::nullopt;
  return n;
}

}  // namespace quiver::base
