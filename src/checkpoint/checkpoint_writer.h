// WriteCheckpoint: streams one pinned version to a checkpoint file.
//
// The version is immutable (it is pinned by the caller's snapshot), so this
// runs on any thread while the writer keeps committing. Order: write
// `<name>.tmp`, fdatasync, close, rename to `<name>`, fsync the directory.
// On any error the temporary file is removed (best effort) and the previous
// checkpoints are untouched.
//
// The vertex and edge tables are cut into chunks of `chunk_ids` ids, encoded
// on `threads` threads (ChunkPipeline) and written in order; the file's
// dirty pages are written back every `writeback_bytes` as the file grows
// (WritableFile::StartWriteback / WaitWriteback), so the final fdatasync
// finds little left to write. Chunk boundaries depend only on the ids, so
// every thread count writes the same bytes.
#ifndef QUIVER_CHECKPOINT_CHECKPOINT_WRITER_H_
#define QUIVER_CHECKPOINT_CHECKPOINT_WRITER_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include "checkpoint/checkpoint_format.h"
#include "checkpoint/chunk_encoder.h"
#include "env/file_system.h"
#include "quiver/status.h"
#include "storage/elements.h"
#include "wal/wal_format.h"

namespace quiver::checkpoint {

struct WriteStats {
  std::uint64_t bytes = 0;
  std::uint64_t blocks = 0;
  // The file was renamed to its final name.
  bool renamed = false;
  // After the rename, the directory fsync itself reported an error: the
  // checkpoint is visible but maybe not durable, and a later fsync may not
  // tell (fsyncgate). Running out of memory before the fsync ran is not
  // this: the next checkpoint writes the file again and syncs.
  bool dir_sync_failed = false;
};

struct WriteOptions {
  // Threads that encode, the calling thread included (0 counts as 1).
  std::uint32_t threads = 1;
  // Above 0: `threads` encoders of their own run this many nice steps below
  // the calling thread, which only writes (ChunkPipeline).
  std::uint32_t worker_nice = 0;
  // Ids per chunk of the vertex and edge tables; a multiple of 64 (the
  // radix leaf size). Chunk ends are also block ends.
  std::uint64_t chunk_ids = kChunkIds;
  // Bytes written between write-back hints; 0 leaves write-back to the
  // kernel and the final fdatasync.
  std::uint64_t writeback_bytes = kWritebackBytes;
  // Space the checkpoint must leave free on the directory's file system
  // (FileSystem::FreeSpace, checked before the first write and at every
  // write-back step): below it the checkpoint is abandoned with
  // ResourceExhausted, so it never takes the space the WAL needs for its
  // next segment. 0 checks nothing.
  std::uint64_t keep_free_bytes = 0;
  // Record where the log continues (GraphRoots::log_segment, log_offset) in
  // the header; false writes 0, 0 ("not known"): a checkpoint written into
  // another directory (a backup) has none of that log.
  bool record_wal_position = true;
  // Called with the bytes written so far after the names and after each
  // chunk of elements, on the calling thread. Default none.
  std::function<void(std::uint64_t)> progress = {};
};

// Appends the parts of one checkpoint file, in order: the header (by
// WriteCheckpointFile), the blocks, the end block, the trailer. It counts
// blocks and bytes into WriteStats, keeps the trailer's CRC, and paces the
// file's write-back (checkpoint_writer.cc says why).
class CheckpointSink {
 public:
  CheckpointSink(env::WritableFile* file, std::uint64_t writeback_bytes, WriteStats* stats,
                 std::function<Status()> check_space, std::uint32_t seed)
      : file_(file),
        step_(writeback_bytes),
        stats_(stats),
        check_space_(std::move(check_space)),
        seed_(seed),
        file_crc_(seed) {}

  // What every block's CRC continues: the header's CRC (Header::seed).
  std::uint32_t seed() const { return seed_; }
  // One framed block (checkpoint::AppendBlock, EncodedChunk::Block).
  Status AppendBlock(std::span<const std::byte> block);
  // Every block of `chunk`, in order.
  Status AppendChunk(const EncodedChunk& chunk);
  // The end block, counting the blocks appended before it.
  Status AppendEnd(std::uint64_t live_vertices, std::uint64_t live_edges);
  bool ended() const { return ended_; }

  // For WriteCheckpointFile: raw bytes (the header), and the trailer.
  Status Append(std::span<const std::byte> bytes);
  Status AppendTrailer();

 private:
  Status Pace();

  env::WritableFile* const file_;
  const std::uint64_t step_;
  WriteStats* const stats_;
  const std::function<Status()> check_space_;
  const std::uint32_t seed_;
  std::uint32_t file_crc_;     // the trailer's CRC so far
  std::uint64_t started_ = 0;  // write-back was started for [0, started_)
  std::uint64_t waited_ = 0;   // and is complete for [0, waited_)
  bool ended_ = false;
};

// Appends every block of a checkpoint, from the names through the end
// block (CheckpointSink::AppendEnd), in the grammar's order.
using CheckpointBody = std::function<Status(CheckpointSink&)>;

// Writes a checkpoint file `header` describes into `dir`, its blocks
// appended by `body`, through the steps above (`.tmp`, fdatasync, close,
// rename, directory fsync; the `.tmp` removed on any failure). The
// header's uuid, sequence and limits are the caller's to get right; the
// file's name comes from header.sequence. Uses `options`' writeback_bytes
// and keep_free_bytes. A bulk import writes a new graph's first checkpoint
// through it; WriteCheckpoint below is this with a version as the body.
Status WriteCheckpointFile(env::FileSystem* fs, const std::string& dir, const Header& header,
                           const CheckpointBody& body, WriteStats* stats, const WriteOptions& options = {});

// Writes the checkpoint of `roots` into `dir`. Returns the first error
// (ResourceExhausted for ENOSPC, memory exhaustion, or an element over
// 4 GiB encoded); then no checkpoint file was added. Every thread it starts
// is joined before it returns.
Status WriteCheckpoint(env::FileSystem* fs, const std::string& dir, const wal::Uuid& uuid,
                       const storage::GraphRoots& roots, WriteStats* stats, const WriteOptions& options = {});

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHECKPOINT_WRITER_H_
