// PosixFileSystem: the FileSystem over the operating system's calls.
//
// Every call retries EINTR; writes loop until all bytes are written (a
// write that makes no progress is an IOError). errno is mapped once, in
// PosixError, so every message names the call, the path and strerror.
// Files use pread/pwrite at explicit offsets, never the fd's file position,
// so a WritableFile's Append and WriteAt cannot disturb each other.
// Write-back hints are sync_file_range.
//
// Thread safety: the FileSystem is stateless. A PosixWritableFile is used by
// one thread at a time (its contract); PosixReadableFile only calls pread
// and fstat, which are thread-safe.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "env/file_system.h"
#include "env/posix_error.h"
#include "quiver/status.h"

namespace quiver::env {
namespace {

// strerror_r comes in a GNU flavour (returns the message) and an XSI one
// (fills the buffer); these overloads accept either.
[[maybe_unused]] const char* ErrorText(int /*xsi_result*/, const char* buf) { return buf; }
[[maybe_unused]] const char* ErrorText(const char* gnu_result, const char* /*buf*/) { return gnu_result; }

}  // namespace

Status PosixError(std::string_view call, const std::string& path, int err) {
  if (err == ENOSPC) return ResourceExhaustedError(base::StrCat("no space left on device: ", path));
  char buf[128] = {};
  std::string message =
      base::StrCat(call, " ", path, ": ", ErrorText(strerror_r(err, buf, sizeof(buf)), buf));
  if (err == ENOENT) return NotFoundError(message);
  if (err == EEXIST) return AlreadyExistsError(message);
  return IOError(message);
}

namespace {

// Runs `call` (returning -1 and setting errno on failure) until it does not
// fail with EINTR.
template <typename Call>
auto RetryOnEintr(Call call) {
  decltype(call()) r;
  do {
    r = call();
  } while (r == -1 && errno == EINTR);
  return r;
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path, std::uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::span<const std::byte> data) override { return WriteAt(size_, data); }

  Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    const std::byte* p = data.data();
    std::size_t left = data.size();
    std::uint64_t at = offset;
    while (left > 0) {
      ssize_t n = RetryOnEintr([&] { return ::pwrite(fd_, p, left, static_cast<off_t>(at)); });
      if (n < 0) return PosixError("pwrite", path_, errno);
      if (n == 0) return IOError(base::StrCat("pwrite made no progress: ", path_));
      p += n;
      left -= static_cast<std::size_t>(n);
      at += static_cast<std::uint64_t>(n);
    }
    size_ = std::max(size_, offset + data.size());
    return Status::Ok();
  }

  Status Sync() override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    if (RetryOnEintr([&] { return ::fdatasync(fd_); }) != 0) return PosixError("fdatasync", path_, errno);
    return Status::Ok();
  }

  Status Truncate(std::uint64_t size) override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    if (RetryOnEintr([&] { return ::ftruncate(fd_, static_cast<off_t>(size)); }) != 0) {
      return PosixError("ftruncate", path_, errno);
    }
    size_ = size;
    return Status::Ok();
  }

  Status Allocate(std::uint64_t offset, std::uint64_t length) override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    if (length == 0) return Status::Ok();
    int r = RetryOnEintr([&] {
      return ::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(length));
    });
    // Preallocation is an optimisation: a file system without it (tmpfs on
    // old kernels, some FUSE mounts) is not an error.
    if (r != 0 && errno != EOPNOTSUPP && errno != ENOSYS) return PosixError("fallocate", path_, errno);
    return Status::Ok();
  }

  Status StartWriteback(std::uint64_t offset, std::uint64_t length) override {
    return SyncFileRange(offset, length, SYNC_FILE_RANGE_WRITE);
  }

  Status WaitWriteback(std::uint64_t offset, std::uint64_t length) override {
    return SyncFileRange(offset, length,
                         SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
  }

  Status Close() override {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    // close() is not retried on EINTR: Linux releases the fd either way.
    int r = ::close(fd_);
    fd_ = -1;
    if (r != 0 && errno != EINTR) return PosixError("close", path_, errno);
    return Status::Ok();
  }

  std::uint64_t Size() const override { return size_; }

 private:
  Status CheckOpen() const {
    if (fd_ < 0) return FailedPreconditionError(base::StrCat("file is closed: ", path_));
    return Status::Ok();
  }

  // sync_file_range on [offset, offset + length); a zero length would mean
  // "to the end of the file" to the kernel, so it does nothing here.
  Status SyncFileRange(std::uint64_t offset, std::uint64_t length, unsigned flags) {
    QUIVER_RETURN_IF_ERROR(CheckOpen());
    if (length == 0) return Status::Ok();
    int r = RetryOnEintr([&] {
      return ::sync_file_range(fd_, static_cast<off64_t>(offset), static_cast<off64_t>(length), flags);
    });
    // Only a hint: a file system that cannot do it (ESPIPE, EINVAL on some
    // FUSE mounts) is not an error. A failed write-back (EIO, ENOSPC) is.
    if (r != 0 && errno != ESPIPE && errno != EINVAL && errno != ENOSYS)
      return PosixError("sync_file_range", path_, errno);
    return Status::Ok();
  }

  int fd_;
  const std::string path_;
  std::uint64_t size_;
};

class PosixReadableFile final : public ReadableFile {
 public:
  PosixReadableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixReadableFile() override { ::close(fd_); }

  Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> buf) const override {
    std::size_t done = 0;
    while (done < buf.size()) {
      ssize_t n = RetryOnEintr([&] {
        return ::pread(fd_, buf.data() + done, buf.size() - done, static_cast<off_t>(offset + done));
      });
      if (n < 0) return PosixError("pread", path_, errno);
      if (n == 0) break;  // end of file
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  Result<std::uint64_t> Size() const override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return PosixError("fstat", path_, errno);
    return static_cast<std::uint64_t>(st.st_size);
  }

 private:
  const int fd_;
  const std::string path_;
};

// The lock files (device, inode) this process holds a PosixFileLock on, and
// how, so that a conflicting attempt can say the holder is this process
// rather than another one (flock cannot tell).
class HeldLocks {
 public:
  using Key = std::pair<dev_t, ino_t>;
  // Records a lock of `mode` on `key`; false if this process holds a
  // conflicting one (*shared_holder says whether that one is shared).
  bool Add(Key key, LockMode mode, bool* shared_holder) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(key);
    if (it != held_.end()) {
      *shared_holder = it->second > 0;
      if (mode == LockMode::kExclusive || it->second == 0) return false;
      ++it->second;
      return true;
    }
    held_[key] = mode == LockMode::kShared ? 1 : 0;
    return true;
  }
  void Remove(Key key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(key);
    if (it == held_.end()) return;
    if (it->second > 1) {
      --it->second;
    } else {
      held_.erase(it);
    }
  }

 private:
  std::mutex mu_;
  std::map<Key, int> held_;  // number of shared holders; 0 for the exclusive one
};

HeldLocks& Held() {
  static HeldLocks* const held = new HeldLocks();  // never deleted, like the file system
  return *held;
}

// Holds an flock (LOCK_EX or LOCK_SH) for its lifetime; closing the fd
// releases it.
class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(int fd, HeldLocks::Key key) : fd_(fd), key_(key) {}
  ~PosixFileLock() override {
    Held().Remove(key_);
    ::close(fd_);
  }

 private:
  const int fd_;
  const HeldLocks::Key key_;
};

// Files are opened with O_NOFOLLOW: every name Quiver opens is one it
// creates itself, so a symbolic link in its place is never followed.
Result<int> OpenFd(const std::string& path, int flags, mode_t mode = 0) {
  int fd = RetryOnEintr([&] { return ::open(path.c_str(), flags | O_CLOEXEC, mode); });
  if (fd < 0) {
    if (errno == ELOOP && (flags & O_NOFOLLOW) != 0)
      return IOError(base::StrCat("open ", path, ": is a symbolic link (not followed)"));
    return PosixError("open", path, errno);
  }
  return fd;
}

// The mode for directories: the file mode plus, for each class that may
// read, the search (execute) bit.
mode_t DirMode(mode_t file_mode) { return file_mode | ((file_mode & 0444) >> 2); }

class PosixFs final : public FileSystem {
 public:
  explicit PosixFs(mode_t file_mode) : file_mode_(file_mode & 07777) {}

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, OpenMode mode) override {
    int flags = O_WRONLY | O_CREAT;
    if (mode == OpenMode::kCreateNew) flags |= O_EXCL;
    if (mode == OpenMode::kTruncate) flags |= O_TRUNC;
    QUIVER_ASSIGN_OR_RETURN(int fd, OpenFd(path, flags | O_NOFOLLOW, file_mode_));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      Status s = PosixError("fstat", path, errno);
      ::close(fd);
      return s;
    }
    try {
      return std::unique_ptr<WritableFile>(
          std::make_unique<PosixWritableFile>(fd, path, static_cast<std::uint64_t>(st.st_size)));
    } catch (...) {  // out of memory: no descriptor leaks (the caller removes the file it asked for)
      ::close(fd);
      throw;
    }
  }

  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override {
    QUIVER_ASSIGN_OR_RETURN(int fd, OpenFd(path, O_RDONLY | O_NOFOLLOW));
    try {
      return std::unique_ptr<ReadableFile>(std::make_unique<PosixReadableFile>(fd, path));
    } catch (...) {
      ::close(fd);
      throw;
    }
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return PosixError("rename", from + " -> " + to, errno);
    return Status::Ok();
  }

  Status Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return PosixError("unlink", path, errno);
    return Status::Ok();
  }

  Status SyncDir(const std::string& dir) override {
    QUIVER_ASSIGN_OR_RETURN(int fd, OpenFd(dir, O_RDONLY | O_DIRECTORY));
    int r = RetryOnEintr([&] { return ::fsync(fd); });
    int err = errno;
    ::close(fd);
    if (r != 0) return PosixError("fsync directory", dir, err);
    return Status::Ok();
  }

  Status CreateDir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), DirMode(file_mode_)) == 0) return Status::Ok();
    int err = errno;
    struct stat st;
    if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::Ok();
    return PosixError("mkdir", dir, err);
  }

  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError("opendir", dir, errno);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      std::string_view name = e->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
      errno = 0;
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return PosixError("readdir", dir, err);
    std::sort(names.begin(), names.end());
    return names;
  }

  Result<bool> Exists(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT) return false;
    return PosixError("stat", path, errno);
  }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode) override {
    const bool shared = mode == LockMode::kShared;
    // A shared lock opens the file read-only and never creates it: flock
    // needs no write access, so it works on a read-only file system.
    QUIVER_ASSIGN_OR_RETURN(int fd, shared ? OpenFd(path, O_RDONLY | O_NOFOLLOW)
                                           : OpenFd(path, O_RDWR | O_CREAT | O_NOFOLLOW, file_mode_));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      Status s = PosixError("fstat", path, errno);
      ::close(fd);
      return s;
    }
    const HeldLocks::Key key{st.st_dev, st.st_ino};
    bool shared_holder = false;
    bool added = false;
    try {
      added = Held().Add(key, mode, &shared_holder);
    } catch (const std::bad_alloc&) {
      ::close(fd);
      throw;
    }
    if (!added) {
      ::close(fd);
      return FailedPreconditionError(base::StrCat("lock is held by this process, ",
                                                  shared_holder ? "shared" : "exclusively",
                                                  " (another open handle on the same directory): ", path));
    }
    // flock locks belong to the open file description, so a second open of
    // the same file conflicts even within one process.
    if (RetryOnEintr([&] { return ::flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB); }) != 0) {
      int err = errno;
      Held().Remove(key);
      if (err != EWOULDBLOCK) {
        ::close(fd);
        return PosixError("flock", path, err);
      }
      // Which kind holds it: a refused shared lock means an exclusive
      // holder; a refused exclusive one, shared holders if a shared lock
      // can be had now (taken and dropped at once).
      bool holders_shared = false;
      if (!shared && RetryOnEintr([&] { return ::flock(fd, LOCK_SH | LOCK_NB); }) == 0) holders_shared = true;
      ::close(fd);
      return FailedPreconditionError(base::StrCat("lock is held by another process, ",
                                                  holders_shared ? "shared" : "exclusively", ": ", path));
    }
    try {
      return std::unique_ptr<FileLock>(std::make_unique<PosixFileLock>(fd, key));
    } catch (const std::bad_alloc&) {
      // Out of memory for the handle: the lock is given back (closing the
      // descriptor drops the flock), or it would stay held for good.
      Held().Remove(key);
      ::close(fd);
      throw;
    }
  }

  Result<std::string> RealPath(const std::string& path) override {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr) return PosixError("realpath", path, errno);
    std::string out(resolved);
    std::free(resolved);
    return out;
  }

  Result<std::uint64_t> FreeSpace(const std::string& dir) override {
    struct statvfs st;
    if (RetryOnEintr([&] { return ::statvfs(dir.c_str(), &st); }) != 0)
      return PosixError("statvfs", dir, errno);
    return static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
  }

 private:
  const mode_t file_mode_;
};

}  // namespace

FileSystem* PosixFileSystem() {
  static PosixFs* const fs =
      new PosixFs(kDefaultFileMode);  // never deleted: usable during static destruction
  return fs;
}

std::unique_ptr<FileSystem> NewPosixFileSystem(std::uint32_t file_mode) {
  return std::make_unique<PosixFs>(static_cast<mode_t>(file_mode));
}

}  // namespace quiver::env
