// Helpers shared by the FileSystem tests (posix, sim, fault, buffered): a
// scratch directory removed at the end, status assertions, and whole-file
// reads and writes through the FileSystem interface.
#ifndef QUIVER_TESTS_ENV_TEST_UTIL_H_
#define QUIVER_TESTS_ENV_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "env/file_system.h"
#include "quiver/status.h"

namespace quiver::env::test {

inline const Status& ToStatus(const Status& s) { return s; }
template <typename T>
const Status& ToStatus(const Result<T>& r) {
  return r.status();
}

}  // namespace quiver::env::test

// Asserts / expects that a Status or Result is OK, printing it otherwise.
#define QUIVER_ASSERT_OK(expr)                                                            \
  do {                                                                                    \
    const auto& quiver_ok_ = (expr);                                                      \
    ASSERT_TRUE(quiver_ok_.ok()) << ::quiver::env::test::ToStatus(quiver_ok_).ToString(); \
  } while (0)
#define QUIVER_EXPECT_OK(expr)                                                            \
  do {                                                                                    \
    const auto& quiver_ok_ = (expr);                                                      \
    EXPECT_TRUE(quiver_ok_.ok()) << ::quiver::env::test::ToStatus(quiver_ok_).ToString(); \
  } while (0)

namespace quiver::env::test {

// A fresh directory under the system's temporary directory, removed with
// everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "quiver-env-test-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) != nullptr) path_ = buf.data();
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return JoinPath(path_, name); }

 private:
  std::string path_;
};

// The whole content of `path` read through `fs`, or "<error: ...>".
inline std::string ReadAll(FileSystem& fs, const std::string& path) {
  Result<std::unique_ptr<ReadableFile>> f = fs.OpenReadable(path);
  if (!f.ok()) return "<error: " + f.status().ToString() + ">";
  Result<std::uint64_t> size = (*f)->Size();
  if (!size.ok()) return "<error: " + size.status().ToString() + ">";
  std::string out(*size, '\0');
  Result<std::size_t> n = (*f)->ReadAt(0, std::as_writable_bytes(std::span<char>(out.data(), out.size())));
  if (!n.ok()) return "<error: " + n.status().ToString() + ">";
  out.resize(*n);
  return out;
}

// Creates or replaces `path` with `content` and syncs it (not its name).
inline Status WriteAll(FileSystem& fs, const std::string& path, std::string_view content) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, fs.OpenWritable(path, OpenMode::kTruncate));
  QUIVER_RETURN_IF_ERROR(f->Append(AsBytes(content)));
  QUIVER_RETURN_IF_ERROR(f->Sync());
  return f->Close();
}

}  // namespace quiver::env::test

#endif  // QUIVER_TESTS_ENV_TEST_UTIL_H_
