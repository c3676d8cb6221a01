// Path helpers shared by every FileSystem implementation.
#include "env/file_system.h"

#include <string>
#include <string_view>

namespace quiver::env {

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

}  // namespace quiver::env
