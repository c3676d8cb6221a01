// BufferedFileSystem: the real file system with a page cache in process
// memory, so that kill -9 loses unsynced bytes the way a power cut does
// (RocksDB's FaultInjectionTestFS idea; RELIABILITY.md 3.3).
//
// Killing a process does not lose what it wrote to the OS page cache, so a
// kill -9 test on PosixFileSystem only tests process crashes. Through this
// wrapper, Append, WriteAt and Truncate stay in process memory (a
// BufferedState per path) until Sync writes them through and fdatasyncs;
// reads through the wrapper see them; kill -9 throws them away.
//
// Optionally (Options::leak_one_in) a write sometimes triggers a simulated
// early writeback, so a killed process can leave real torn or garbage tails:
// a random prefix of the pending bytes reaches the real file, and/or the
// grown region past the written bytes is filled with random garbage first.
//
// Limits: directory operations (create, rename, remove, mkdir, SyncDir) and
// file creation go straight to the real file system, so a kill -9 never
// loses a directory entry; SimFileSystem covers that. Only files written and
// read through the same BufferedFileSystem see each other's unsynced bytes.
//
// Thread safety: all methods are thread-safe. The wrapped FileSystem must
// outlive this one, and this one every file it returned.
#ifndef QUIVER_ENV_BUFFERED_FILE_SYSTEM_H_
#define QUIVER_ENV_BUFFERED_FILE_SYSTEM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "env/buffered_state.h"
#include "env/file_system.h"
#include "env/random.h"
#include "quiver/status.h"

namespace quiver::env {

class BufferedFileSystem final : public FileSystem {
 public:
  struct Options {
    // Each Append or WriteAt triggers an early writeback with probability
    // 1/leak_one_in (0: never, the default): with probability 1/2 the grown
    // region is first filled with garbage, then a uniformly random number
    // of the pending bytes (in issue order) is written through, unsynced.
    std::uint32_t leak_one_in = 0;
    // Seeds the early-writeback choices.
    std::uint64_t seed = 0;
  };

  // Wraps `base` (not owned; default the posix file system).
  explicit BufferedFileSystem(FileSystem* base = PosixFileSystem()) : BufferedFileSystem(base, Options{}) {}
  BufferedFileSystem(FileSystem* base, Options options);

  // Bytes of unsynced writes held in memory, over all paths.
  std::uint64_t BufferedBytes() const;

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, OpenMode mode) override;
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status Remove(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;
  Status CreateDir(const std::string& dir) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Result<bool> Exists(const std::string& path) override;
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode) override;
  Result<std::string> RealPath(const std::string& path) override;
  Result<std::uint64_t> FreeSpace(const std::string& dir) override;

 private:
  class Writable;
  class Readable;

  // The state of `path`, created for a real file of `disk_size` bytes if
  // there is none (or if `fresh`, replacing any).
  std::shared_ptr<BufferedState> StateFor(const std::string& path, std::uint64_t disk_size, bool fresh);
  // After a buffered write: maybe simulate an early writeback through `out`.
  Status MaybeLeak(BufferedState* state, WritableFile* out);

  FileSystem* const base_;
  const Options options_;
  mutable base::Mutex mu_;
  std::map<std::string, std::shared_ptr<BufferedState>> states_ ABSL_GUARDED_BY(mu_);
  Rng rng_ ABSL_GUARDED_BY(mu_);
};

}  // namespace quiver::env

#endif  // QUIVER_ENV_BUFFERED_FILE_SYSTEM_H_
