// Path handling for SimFileSystem: the normal form paths are stored in, and
// the split of a path into its directory and name.
#ifndef QUIVER_ENV_SIM_PATH_H_
#define QUIVER_ENV_SIM_PATH_H_

#include <string>
#include <string_view>
#include <utility>

namespace quiver::env {

// Collapses repeated '/' and drops trailing ones ("a//b/" -> "a/b"; "/" stays
// "/"). "." and ".." are kept as names, not resolved.
inline std::string NormalizePath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// Splits a normalized path into (directory, name): "a/b" -> ("a", "b"),
// "/b" -> ("/", "b"), "b" -> (".", "b"), "/" -> ("/", "").
inline std::pair<std::string, std::string> SplitPath(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace quiver::env

#endif  // QUIVER_ENV_SIM_PATH_H_
