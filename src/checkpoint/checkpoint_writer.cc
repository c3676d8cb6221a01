// WriteCheckpoint: the file steps, the chunk plan, and the paced sink that
// appends encoded chunks to the file.
//
// Why pace the write-back: written buffered and synced once, a checkpoint of
// a large graph leaves hundreds of MiB dirty, and the final fdatasync (or
// the kernel's flusher) writes them back in one burst; the WAL's fdatasync,
// issued meanwhile by the writer thread, waits behind that burst in the
// device queue, stalling every commit for tens of milliseconds. Starting the
// write-back of each step of `writeback_bytes` as soon as it is written, and
// waiting for the step before it, keeps at most about two steps dirty or in
// flight, so the disk works while the graph is encoded and a WAL sync never
// queues behind more than that.
#include "checkpoint/checkpoint_writer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <new>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/durability_faults.h"
#include "base/strings.h"
#include "checkpoint/chunk_encoder.h"
#include "checkpoint/chunk_pipeline.h"
#include "checkpoint/index_block.h"
#include "checkpoint/index_entries.h"
#include "index/catalog.h"

namespace quiver::checkpoint {
namespace {

// The vertex table's chunks, then the edge table's, each [0, limit) cut
// every `chunk_ids` ids.
std::vector<Chunk> PlanChunks(const storage::GraphRoots& g, std::uint64_t chunk_ids) {
  std::vector<Chunk> chunks;
  for (auto [kind, limit] :
       {std::pair{BlockKind::kVertices, g.vertex_limit}, {BlockKind::kEdges, g.edge_limit}}) {
    for (std::uint64_t begin = 0; begin < limit; begin += chunk_ids)
      chunks.push_back({kind, begin, std::min(limit, begin + chunk_ids)});
  }
  return chunks;
}

// Every block of the version's checkpoint, from the names to the end block.
Status WriteBlocks(CheckpointSink& sink, const storage::GraphRoots& g, const WriteOptions& options,
                   WriteStats* stats) {
  const std::uint32_t seed = sink.seed();  // every block's CRC continues it
  EncodedChunk names;
  for (auto [kind, table] : {std::pair{BlockKind::kLabels, g.labels},
                             {BlockKind::kEdgeTypes, g.types},
                             {BlockKind::kPropertyKeys, g.keys}}) {
    QUIVER_RETURN_IF_ERROR(EncodeNames(kind, *table, seed, &names));
    QUIVER_RETURN_IF_ERROR(sink.AppendChunk(names));
  }
  if (options.progress) options.progress(stats->bytes);
  if (!g.catalog->indexes().empty()) {
    std::vector<std::byte> block;
    QUIVER_RETURN_IF_ERROR(
        AppendBlock(BlockKind::kIndexDefinitions, EncodeIndexBlock(*g.catalog), seed, &block));
    QUIVER_RETURN_IF_ERROR(sink.AppendBlock(block));
  }

  // A chunk boundary must fall on a radix leaf boundary (the encoder walks
  // whole leaves from a chunk's first id).
  const std::uint64_t leaf = storage::VertexTable::kLeafSize;
  const std::uint64_t chunk_ids = std::max(leaf, (options.chunk_ids + leaf - 1) / leaf * leaf);
  const std::vector<Chunk> chunks = PlanChunks(g, chunk_ids);
  const std::uint32_t threads = std::max<std::uint32_t>(1, options.threads);
  ChunkPipeline pipeline(
      chunks.size(), threads, /*window=*/2 * std::size_t{threads},
      [&](std::size_t i, EncodedChunk* out) { return EncodeChunk(g, chunks[i], seed, out); },
      [&](const EncodedChunk& chunk) {
        QUIVER_RETURN_IF_ERROR(sink.AppendChunk(chunk));
        if (options.progress) options.progress(stats->bytes);
        return Status::Ok();
      },
      options.worker_nice);
  QUIVER_RETURN_IF_ERROR(pipeline.Run());
  // The ready indexes' entries, in order (format 5 on): the loader copies
  // them into leaves instead of sorting every entry again.
  std::vector<std::byte> block;
  Status entries = EncodeIndexEntries(*g.catalog, [&](std::span<const std::byte> payload) {
    block.clear();
    QUIVER_RETURN_IF_ERROR(AppendBlock(BlockKind::kIndexEntries, payload, seed, &block));
    QUIVER_RETURN_IF_ERROR(sink.AppendBlock(block));
    if (options.progress) options.progress(stats->bytes);
    return Status::Ok();
  });
  QUIVER_RETURN_IF_ERROR(entries);
  return sink.AppendEnd(g.live_vertices, g.live_edges);
}

Status WriteBody(env::WritableFile* file, Header header, const CheckpointBody& body,
                 const WriteOptions& options, WriteStats* stats, const std::function<Status()>& check_space) {
  const std::array<std::byte, kHeaderBytes> header_bytes = EncodeHeader(&header);
  CheckpointSink sink(file, options.writeback_bytes, stats, check_space, header.seed);
  QUIVER_RETURN_IF_ERROR(sink.Append(header_bytes));
  QUIVER_RETURN_IF_ERROR(body(sink));
  if (!sink.ended()) return InternalError("checkpoint: the body wrote no end block");
  return sink.AppendTrailer();
}

Status WriteCheckpointUnguarded(env::FileSystem* fs, const std::string& dir, const Header& header,
                                const CheckpointBody& body, WriteStats* stats, const WriteOptions& options) {
  // FreeSpace is a hint: if the file system cannot tell, ENOSPC still stops
  // the checkpoint cleanly.
  auto check_space = [&]() -> Status {
    if (options.keep_free_bytes == 0) return Status::Ok();
    Result<std::uint64_t> free = fs->FreeSpace(dir);
    if (!free.ok() || *free >= options.keep_free_bytes) return Status::Ok();
    return ResourceExhaustedError(base::StrCat("checkpoint abandoned: ", *free, " bytes free in ", dir,
                                               ", and ", options.keep_free_bytes,
                                               " are kept for the write-ahead log"));
  };
  QUIVER_RETURN_IF_ERROR(check_space());
  std::string name = CheckpointFileName(header.sequence);
  std::string tmp = env::JoinPath(dir, name + ".tmp");
  // However this returns or throws short of the rename, the .tmp goes (after
  // the file, declared below, is closed): left behind it would hold a whole
  // checkpoint's bytes until the next Open.
  struct RemoveUnlessRenamed {
    env::FileSystem* fs;
    const std::string& tmp;
    const WriteStats* stats;
    ~RemoveUnlessRenamed() {
      if (stats->renamed) return;
      try {
        fs->Remove(tmp).IgnoreError();  // best effort: Open also removes stale .tmp files
      } catch (...) {
      }
    }
  } remove_tmp{fs, tmp, stats};
  auto file = fs->OpenWritable(tmp, env::OpenMode::kTruncate);
  if (!file.ok()) return file.status();
  Status s;
  try {
    s = WriteBody(file->get(), header, body, options, stats, check_space);
  } catch (const std::bad_alloc&) {
    s = CheckpointOutOfMemory();
  }
  if (s.ok() && !base::DurabilityFaultOn(&base::DurabilityFaults::skip_checkpoint_sync)) s = (*file)->Sync();
  Status closed = (*file)->Close();
  if (s.ok()) s = closed;
  if (s.ok()) s = fs->Rename(tmp, env::JoinPath(dir, name));
  if (s.ok()) {
    stats->renamed = true;
    // Negative control (tests only): leave the rename unsynced.
    if (base::DurabilityFaultOn(&base::DurabilityFaults::remove_before_dir_sync)) return s;
    // Failed until it reports success: an exception from inside it (out of
    // memory building its error, say) must not pass for "not attempted".
    stats->dir_sync_failed = true;
    s = fs->SyncDir(dir);
    stats->dir_sync_failed = !s.ok();
    return s;
  }
  return s;
}

}  // namespace

Status WriteCheckpointFile(env::FileSystem* fs, const std::string& dir, const Header& header,
                           const CheckpointBody& body, WriteStats* stats, const WriteOptions& options) {
  *stats = WriteStats{};
  try {
    return WriteCheckpointUnguarded(fs, dir, header, body, stats, options);
  } catch (const std::bad_alloc&) {
    // Outside the body's own guard (names, open, sync, rename, the
    // directory fsync): the .tmp is removed on the way out; a directory
    // fsync that threw counts as failed (stats->dir_sync_failed), and the
    // caller stops.
    return CheckpointOutOfMemory();
  }
}

Status WriteCheckpoint(env::FileSystem* fs, const std::string& dir, const wal::Uuid& uuid,
                       const storage::GraphRoots& roots, WriteStats* stats, const WriteOptions& options) {
  const Header header{.uuid = uuid,
                      .sequence = roots.sequence,
                      .vertex_limit = roots.vertex_limit,
                      .edge_limit = roots.edge_limit,
                      .wal_segment = options.record_wal_position ? roots.log_segment : 0,
                      .wal_offset = options.record_wal_position ? roots.log_offset : 0};
  return WriteCheckpointFile(
      fs, dir, header, [&](CheckpointSink& sink) { return WriteBlocks(sink, roots, options, stats); }, stats,
      options);
}

// CheckpointSink.

Status CheckpointSink::AppendBlock(std::span<const std::byte> block) {
  file_crc_ = base::Crc32cExtend(file_crc_, block.data() + 8, 4);
  ++stats_->blocks;
  return Append(block);
}

Status CheckpointSink::AppendChunk(const EncodedChunk& chunk) {
  for (std::size_t i = 0; i < chunk.blocks.size(); ++i) QUIVER_RETURN_IF_ERROR(AppendBlock(chunk.Block(i)));
  return Status::Ok();
}

Status CheckpointSink::AppendEnd(std::uint64_t live_vertices, std::uint64_t live_edges) {
  std::vector<std::byte> payload, block;
  base::ByteWriter w(&payload);
  w.PutVarint(live_vertices);
  w.PutVarint(live_edges);
  w.PutVarint(stats_->blocks);
  QUIVER_RETURN_IF_ERROR(checkpoint::AppendBlock(BlockKind::kEnd, payload, seed_, &block));
  QUIVER_RETURN_IF_ERROR(AppendBlock(block));
  ended_ = true;
  return Status::Ok();
}

Status CheckpointSink::AppendTrailer() {
  std::byte trailer[kTrailerBytes];
  std::memcpy(trailer, &file_crc_, kTrailerBytes);
  return Append(trailer);
}

Status CheckpointSink::Append(std::span<const std::byte> bytes) {
  QUIVER_RETURN_IF_ERROR(file_->Append(bytes));
  stats_->bytes += bytes.size();
  return Pace();
}

Status CheckpointSink::Pace() {
  const std::uint64_t end = file_->Size();
  if (step_ == 0 || end - started_ < step_) return Status::Ok();
  QUIVER_RETURN_IF_ERROR(check_space_());
  QUIVER_RETURN_IF_ERROR(file_->StartWriteback(started_, end - started_));
  QUIVER_RETURN_IF_ERROR(file_->WaitWriteback(waited_, started_ - waited_));
  waited_ = started_;
  started_ = end;
  return Status::Ok();
}

}  // namespace quiver::checkpoint
