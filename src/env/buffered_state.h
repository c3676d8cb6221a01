// BufferedState: the process-memory page cache BufferedFileSystem keeps for
// one path: the bytes written but not yet synced, and how they overlay the
// real file.
//
// The real file holds "valid" bytes [0, valid_size) that are part of the
// file's content; past valid_size it may hold stale bytes or deliberate
// garbage (a simulated early writeback), which reads never see. The pending
// writes and truncations, applied in issue order on top of the valid bytes
// (zeros past them), give the content every reader sees. Sync writes them
// through, fixes the real size and fdatasyncs; until then kill -9 loses them.
//
// Invariants:
//   1. valid_size <= logical_size once every pending change is applied;
//   2. content = pending changes applied to (real bytes [0, valid_size) + zeros);
//   3. the real file's size is real_size (as far as this process changed it).
//
// Thread safety: every method is thread-safe (one mutex per state).
#ifndef QUIVER_ENV_BUFFERED_STATE_H_
#define QUIVER_ENV_BUFFERED_STATE_H_

#include <cstdint>
#include <deque>
#include <span>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "env/file_system.h"
#include "env/random.h"
#include "env/sim_file.h"
#include "quiver/status.h"

namespace quiver::env {

class BufferedState {
 public:
  // For a real file of `disk_size` bytes with nothing pending.
  explicit BufferedState(std::uint64_t disk_size)
      : valid_size_(disk_size), real_size_(disk_size), logical_size_(disk_size) {}

  // The size readers and Append see.
  std::uint64_t logical_size() const;
  // Bytes of pending writes held in memory.
  std::uint64_t pending_bytes() const;

  // Buffers a write at the logical end.
  void Append(std::span<const std::byte> data);
  // Buffers a write at `offset`.
  void WriteAt(std::uint64_t offset, std::span<const std::byte> data);
  // Buffers a truncation.
  void Truncate(std::uint64_t size);
  // Reads the logical content at `offset` through `real` (a reader of the
  // same path); returns the bytes read, short only at the logical end.
  Result<std::size_t> Read(const ReadableFile& real, std::uint64_t offset, std::span<std::byte> buf);

  // Writes pending changes through `out`, in issue order, stopping after
  // `budget` bytes of written data (a write that does not fit is split; its
  // tail stays pending). No fdatasync. A simulated early writeback.
  Status WriteBack(WritableFile* out, std::uint64_t budget);
  // Overwrites the real file past the valid bytes, up to the logical size,
  // with bytes from `rng` (what a grown file may show after a crash).
  Status FillGrownRegionWithGarbage(WritableFile* out, Rng& rng);
  // Writes everything through, gives the real file the logical size and
  // fdatasyncs it through `out`.
  Status Sync(WritableFile* out);

 private:
  Status WriteBackLocked(WritableFile* out, std::uint64_t budget) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Zeros the real bytes in [from, to) that lie below real_size: the stale
  // or garbage bytes a write past valid_size would otherwise expose.
  Status ZeroStale(WritableFile* out, std::uint64_t from, std::uint64_t to)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable base::Mutex mu_;
  std::uint64_t valid_size_ ABSL_GUARDED_BY(mu_);
  std::uint64_t real_size_ ABSL_GUARDED_BY(mu_);
  std::uint64_t logical_size_ ABSL_GUARDED_BY(mu_);
  std::deque<PendingWrite> pending_ ABSL_GUARDED_BY(mu_);  // issue order
};

}  // namespace quiver::env

#endif  // QUIVER_ENV_BUFFERED_STATE_H_
