// Lexical path folding shared by the engine (comparing two spellings of a
// graph directory) and SimFileSystem::RealPath. Defined in file_system.cc.
#ifndef QUIVER_ENV_PATH_H_
#define QUIVER_ENV_PATH_H_

#include <string>
#include <string_view>

namespace quiver::env {

// `path` with repeated and trailing slashes and "." components removed and
// "name/.." pairs folded, by name only (symbolic links are not resolved).
// ".." above the root of an absolute path stays at the root ("/../a" is
// "/a"); above the start of a relative one it is kept ("../a") when
// `keep_leading_dotdot`, else dropped ("../a" is "a": a file system whose
// relative paths start at a root, as the simulator's do). An empty result
// is "/" for an absolute path and "" for a relative one.
std::string FoldPath(std::string_view path, bool keep_leading_dotdot);

}  // namespace quiver::env

#endif  // QUIVER_ENV_PATH_H_
