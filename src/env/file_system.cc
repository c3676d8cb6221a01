// Path helpers shared by every FileSystem implementation.
#include "env/file_system.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "env/path.h"

namespace quiver::env {

Status WritableFile::ZeroFill(std::uint64_t offset, std::uint64_t length) {
  static constexpr std::size_t kPiece = std::size_t{64} << 10;
  static const std::array<std::byte, kPiece> kZeros{};
  while (length > 0) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(length, kPiece));
    QUIVER_RETURN_IF_ERROR(WriteAt(offset, std::span<const std::byte>(kZeros.data(), n)));
    offset += n;
    length -= n;
  }
  return Status::Ok();
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (name.empty()) return std::string(dir);
  std::string out(dir);
  if (out.back() != '/') out.push_back('/');
  // A leading '/' in `name` would double the separator.
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  out.append(name);
  return out;
}

std::string FoldPath(std::string_view path, bool keep_leading_dotdot) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    const std::string_view part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute && keep_leading_dotdot) {
        parts.push_back(part);
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (std::string_view part : parts) {
    if (!out.empty() || absolute) out += '/';
    out += part;
  }
  return out.empty() && absolute ? "/" : out;
}

}  // namespace quiver::env
