// The FileSystem seam: every byte Quiver persists, and every directory
// operation that makes it durable, goes through these interfaces.
//
// The WAL, checkpoints and recovery take a FileSystem* and never call the
// operating system themselves, so the same engine code runs against
//   PosixFileSystem()    the real disk (production),
//   SimFileSystem        an in-memory disk that can lose power (crash tests),
//   FaultFileSystem      a wrapper that fails chosen operations (I/O-error loops),
//   BufferedFileSystem   the real disk with a process-memory page cache, so that
//                        kill -9 loses unsynced bytes like a power cut.
// Test doubles and tools that change one call derive from ForwardingFileSystem
// (env/forwarding_file_system.h), which passes every other call through.
// docs/env.md describes the storage model the engine may assume and what each
// implementation simulates.
//
// Paths are plain strings joined with '/' (JoinPath). Errors are mapped to
// canonical codes: ENOSPC -> ResourceExhausted, ENOENT -> NotFound,
// EEXIST -> AlreadyExists, anything else -> IOError (message names the path).
//
// Lifetime: a FileSystem must outlive every file and lock it returned.
//
// Locks: LockFile's FailedPrecondition says whether the holder is this
// process ("held by this process") or another one, and whether it holds
// the lock exclusively or shared.
//
// Example:
//   env::FileSystem* fs = env::PosixFileSystem();
//   QUIVER_ASSIGN_OR_RETURN(auto f, fs->OpenWritable(env::JoinPath(dir, "x"),
//                                                    env::OpenMode::kCreateNew));
//   QUIVER_RETURN_IF_ERROR(f->Append(bytes));
//   QUIVER_RETURN_IF_ERROR(f->Sync());          // data and size durable
//   QUIVER_RETURN_IF_ERROR(fs->SyncDir(dir));   // the name "x" durable
#ifndef QUIVER_ENV_FILE_SYSTEM_H_
#define QUIVER_ENV_FILE_SYSTEM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/status.h"

namespace quiver::env {

// An open file for writing. Not thread-safe: one user at a time. After a
// failed call the file's content is unspecified (a write may have reached
// the disk partly); callers treat any error as fatal for the file and never
// retry Sync (a failed fdatasync may have dropped the dirty data).
class WritableFile {
 public:
  virtual ~WritableFile() = default;

  // Writes `data` at the current end (Size()) and advances the end.
  virtual Status Append(std::span<const std::byte> data) = 0;
  // Writes `data` at `offset` (pwrite); the end becomes
  // max(Size(), offset + data.size()); a gap reads as zeros.
  virtual Status WriteAt(std::uint64_t offset, std::span<const std::byte> data) = 0;
  // fdatasync: every write and truncation made so far, and the file size,
  // are durable once this returns OK. Does not make the file's name durable
  // (FileSystem::SyncDir does).
  virtual Status Sync() = 0;
  // Sets the size to `size` (shrinks, or grows with zeros).
  virtual Status Truncate(std::uint64_t size) = 0;
  // Reserves disk space for [offset, offset + length) without changing the
  // size (fallocate with FALLOC_FL_KEEP_SIZE), so that ENOSPC surfaces here
  // rather than half-way through a later write. A best-effort optimisation:
  // OK where the file system cannot preallocate.
  virtual Status Allocate(std::uint64_t offset, std::uint64_t length) = 0;
  // Writes zeros over [offset, offset + length), real writes (blocks
  // allocated and written, never a hole or an unwritten extent), growing the
  // file like WriteAt. Not synced. ResourceExhausted when the disk is full
  // (some of the zeros may have landed). The WAL writer fills a segment
  // ahead of its appends with it (wal/wal_writer.h): a reservation by
  // writing, so a wrapper that tells a refused reservation from a failed
  // write (as for Allocate) can tell here too. The default writes through
  // WriteAt, 64 KiB at a time.
  virtual Status ZeroFill(std::uint64_t offset, std::uint64_t length);
  // Write-back hints for a file written in bulk (a checkpoint), so that its
  // dirty pages reach the disk steadily while it is written rather than all
  // at once in the final Sync, where they would queue ahead of other files'
  // syncs (the WAL's). StartWriteback starts writing back the dirty pages of
  // [offset, offset + length) and does not wait for them
  // (sync_file_range(SYNC_FILE_RANGE_WRITE)). WaitWriteback does the same
  // and then waits until every page of the range that was dirty or under
  // write-back at the call is written (WAIT_BEFORE | WRITE | WAIT_AFTER).
  // Neither makes anything durable: not the size, not the metadata, not the
  // disk's cache; only Sync does. A file system without such a call treats
  // both as no-ops. An error (a failed write-back) is an error of the file:
  // the caller abandons the file and never relies on a later Sync, which may
  // not report the same error again.
  virtual Status StartWriteback(std::uint64_t offset, std::uint64_t length) = 0;
  virtual Status WaitWriteback(std::uint64_t offset, std::uint64_t length) = 0;
  // Releases the file. Does not sync. Later calls fail with
  // FailedPrecondition. The destructor closes an open file, ignoring errors.
  virtual Status Close() = 0;
  // The logical size: where the next Append goes.
  virtual std::uint64_t Size() const = 0;
};

// An open file for reading. Thread-safe: ReadAt and Size may be called from
// several threads at once.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;

  // Reads up to buf.size() bytes at `offset` into `buf`; returns the number
  // of bytes read, which is short only at end of file (0 at or past it).
  virtual Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> buf) const = 0;
  // The current size of the file.
  virtual Result<std::uint64_t> Size() const = 0;
};

// A lock on a path (exclusive or shared, LockMode), held for the lifetime
// of the object and released on destruction.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// How LockFile locks a path. An exclusive lock excludes every other lock
// on the path; shared locks exclude only an exclusive one.
enum class LockMode {
  // Creates the file if missing (posix: opened read-write, O_CREAT).
  kExclusive,
  // Never creates the file (NotFound if it is missing) and opens it
  // read-only, so it works on a read-only file or file system.
  kShared,
};

// How OpenWritable treats the path.
enum class OpenMode {
  kCreateOrOpen,  // open the file, creating it empty if missing; content kept
  kCreateNew,     // create the file; AlreadyExists if the path exists
  kTruncate,      // open or create the file and truncate it to size 0
};

// A file system: files, directories and locks. All methods are thread-safe.
class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Opens `path` for writing as `mode` says. NotFound if the parent
  // directory does not exist. A created file's name is durable only after
  // SyncDir of its directory.
  virtual Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, OpenMode mode) = 0;
  // Opens an existing file for reading; NotFound if it does not exist.
  virtual Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) = 0;
  // Renames `from` to `to`, atomically replacing any file at `to`: a crash
  // leaves either name pointing at a whole file, never neither. Durable only
  // after SyncDir of both directories.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Removes the file `path`; NotFound if it does not exist. Durable only
  // after SyncDir.
  virtual Status Remove(const std::string& path) = 0;
  // Makes the creations, renames and removals of entries in `dir` durable
  // (fsync on the directory).
  virtual Status SyncDir(const std::string& dir) = 0;
  // Creates the directory `dir` (not its parents); OK if it already exists
  // as a directory.
  virtual Status CreateDir(const std::string& dir) = 0;
  // The names (not paths) of the entries of `dir`, without "." and "..",
  // sorted bytewise; NotFound if `dir` does not exist.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Whether a file or directory exists at `path`.
  virtual Result<bool> Exists(const std::string& path) = 0;
  // Takes a lock on `path` as `mode` says (kExclusive creates the file if
  // the implementation needs one; kShared never creates it). Never waits:
  // FailedPrecondition if a conflicting lock is held, by another process
  // or by another live FileLock of this one (the message says which, and
  // whether the holder's lock is exclusive or shared).
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode) = 0;
  // `path` with every symbolic link, "." and ".." resolved, absolute (posix
  // realpath(3)); NotFound if `path` or a directory on the way does not
  // exist. The in-memory file system has no links: it returns the path
  // normalized.
  virtual Result<std::string> RealPath(const std::string& path) = 0;
  // Bytes available to an unprivileged writer on the file system holding
  // `dir` (statvfs f_bavail * f_frsize). A hint for deciding whether to
  // start a checkpoint; ENOSPC can still happen.
  virtual Result<std::uint64_t> FreeSpace(const std::string& dir) = 0;
};

// The permission bits new files get by default (before the umask).
inline constexpr std::uint32_t kDefaultFileMode = 0644;

// The operating system's file system, creating files with kDefaultFileMode.
// A process-wide singleton, never deleted; thread-safe.
FileSystem* PosixFileSystem();
// The operating system's file system, creating files with `file_mode` and
// directories with `file_mode` plus a search bit for each read bit (0640
// gives 0750), both before the umask. Owned by the caller; must outlive
// every file and lock it returned. Files are never opened through a
// symbolic link (O_NOFOLLOW); directories are.
std::unique_ptr<FileSystem> NewPosixFileSystem(std::uint32_t file_mode);

// Joins a directory and a name with exactly one '/': JoinPath("a", "b") and
// JoinPath("a/", "b") are "a/b"; an empty `dir` yields `name` and an empty
// `name` yields `dir`.
std::string JoinPath(std::string_view dir, std::string_view name);

// Convenience views of text as bytes, for callers and tests that build
// records from strings.
inline std::span<const std::byte> AsBytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

}  // namespace quiver::env

#endif  // QUIVER_ENV_FILE_SYSTEM_H_
