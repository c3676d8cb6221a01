// CountingFileSystem: a ForwardingFileSystem that records every call that
// could change a directory (OpenWritable in any mode, Rename, Remove,
// SyncDir, CreateDir, an exclusive LockFile) and passes it on, so a test can assert that
// a path promised to change nothing called none of them.
#ifndef QUIVER_TESTS_COUNTING_FILE_SYSTEM_H_
#define QUIVER_TESTS_COUNTING_FILE_SYSTEM_H_

#include <mutex>
#include <string>
#include <vector>

#include "env/forwarding_file_system.h"

namespace quiver::test_util {

class CountingFileSystem : public env::ForwardingFileSystem {
 public:
  explicit CountingFileSystem(env::FileSystem* base) : ForwardingFileSystem(base) {}

  Result<std::unique_ptr<env::WritableFile>> OpenWritable(const std::string& path,
                                                          env::OpenMode mode) override {
    Note("OpenWritable " + path);
    return ForwardingFileSystem::OpenWritable(path, mode);
  }
  Status Rename(const std::string& from, const std::string& to) override {
    Note("Rename " + from + " " + to);
    return ForwardingFileSystem::Rename(from, to);
  }
  Status Remove(const std::string& path) override {
    Note("Remove " + path);
    return ForwardingFileSystem::Remove(path);
  }
  Status SyncDir(const std::string& dir) override {
    Note("SyncDir " + dir);
    return ForwardingFileSystem::SyncDir(dir);
  }
  Status CreateDir(const std::string& dir) override {
    Note("CreateDir " + dir);
    return ForwardingFileSystem::CreateDir(dir);
  }
  // A shared lock is not noted: it never creates the file (posix opens it
  // read-only); an exclusive one may create it.
  Result<std::unique_ptr<env::FileLock>> LockFile(const std::string& path, env::LockMode mode) override {
    if (mode == env::LockMode::kExclusive) Note("LockFile " + path);
    return ForwardingFileSystem::LockFile(path, mode);
  }

  // The calls recorded so far, one "<call> <path>" each, in order.
  std::vector<std::string> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  void Reset() {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.clear();
  }

 private:
  void Note(std::string call) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(std::move(call));
  }

  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_COUNTING_FILE_SYSTEM_H_
