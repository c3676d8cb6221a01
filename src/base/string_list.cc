#include "base/string_list.h"

#include <cstdint>
#include <cstring>

namespace quiver::base {

std::size_t PackedStringListBytes(const StringListView& list) {
  return sizeof(std::uint32_t) * (1 + list.size()) + list.text_bytes();
}

void PackStringList(const StringListView& list, std::byte* out) {
  auto put = [&out](std::uint32_t v) {
    std::memcpy(out, &v, sizeof(v));
    out += sizeof(v);
  };
  put(static_cast<std::uint32_t>(list.size()));
  std::uint32_t end = 0;
  for (std::string_view s : list) put(end += static_cast<std::uint32_t>(s.size()));
  for (std::string_view s : list) {
    if (!s.empty()) std::memcpy(out, s.data(), s.size());
    out += s.size();
  }
}

}  // namespace quiver::base
