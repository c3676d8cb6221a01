// GraphImpl's checkpoint scheduler: the background thread that writes a
// checkpoint when the WAL has grown enough or the interval passed
// (CheckpointLoop), one checkpoint from a pinned version taken at a writer
// barrier (RunCheckpoint*), and the removal of the files a durable
// checkpoint covers, after it and at Open (RemoveCoveredFiles, PruneAtOpen).
// Graph::Checkpoint, Close and Backup call in here from graph_impl.cc.
#include <algorithm>
#include <chrono>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "base/durability_faults.h"
#include "base/strings.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/checkpoint_writer.h"
#include "checkpoint/chunk_pipeline.h"
#include "env/path.h"
#include "graph_impl.h"
#include "graph_impl_util.h"
#include "wal/wal_reader.h"

namespace quiver {

void GraphImpl::CheckpointLoop() {
  auto interval = options_.durable.checkpoint_interval_ms;
  while (true) {
    trigger_mu_.Lock();
    while (!checkpoint_requested_ && !stopping_) {
      if (interval == 0) {
        trigger_cv_.Wait();
      } else if (!trigger_cv_.WaitFor(std::chrono::milliseconds(interval))) {
        break;  // the interval passed: checkpoint if anything is new
      }
    }
    bool stop = stopping_;
    checkpoint_requested_ = false;
    trigger_mu_.Unlock();
    if (stop) return;
    // Failures are recorded in the stats; the WAL keeps everything meanwhile.
    // RunCheckpoint answers out of memory with a status; the catch is the
    // last resort of a thread an exception would end the process from.
    try {
      RunCheckpoint().IgnoreError();
    } catch (const std::bad_alloc&) {
    }
  }
}

Status GraphImpl::RunCheckpoint() {
  base::MutexLock lock(&checkpoint_mu_);
  if (closed_) return Status::Ok();
  return RunCheckpointLocked();
}

void GraphImpl::SetLastCheckpointError(const Status& s) {
  try {
    checkpoint_stats_.last_checkpoint_error = s;  // a copy allocates, unless immortal
  } catch (const std::bad_alloc&) {
    checkpoint_stats_.last_checkpoint_error = checkpoint::CheckpointOutOfMemory();
  }
}

Status GraphImpl::CheckpointFailed(Status s) {
  {
    base::MutexLock stats_lock(&stats_mu_);
    ++checkpoint_stats_.checkpoint_failures;
    SetLastCheckpointError(s);
    last_checkpoint_failed_ = true;
  }
  LogEvent(LogLevel::kError, "checkpoint_failed", [&] {
    return base::StrCat(
        "checkpoint of ", durable_->dir, " failed",
        poisoned_.load() ? " and the graph is poisoned: " : " (the WAL keeps everything): ", s.ToString());
  });
  return s;
}

Status GraphImpl::RunCheckpointLocked(bool writer_stopped) {
  try {
    return RunCheckpointUnguarded(writer_stopped);
  } catch (const std::bad_alloc&) {
    // Every allocation is outside the barrier's Push..Wait (the writer never
    // sees a request this thread has dropped) and the pin is a scope guard.
    return CheckpointFailed(checkpoint::CheckpointOutOfMemory());
  }
}

Status GraphImpl::RunCheckpointUnguarded(bool writer_stopped) {
  // RELIABILITY 2.7: after a WAL failure nothing more is written or removed.
  if (poisoned_.load())
    return Status(StatusCode::kPoisoned, "a WAL failure stopped this graph: no checkpoint is written");
  // The version to write and where the log continues after it, taken with
  // nothing held back, so the checkpoint covers only groups in the WAL and
  // records exactly where the next record starts (recovery resumes there
  // after damage it covers; a record never straddles its sequence). The
  // writer takes them at a barrier after writing what unsynced writes held
  // back; after the writer stopped (Close) it held nothing back.
  // The WAL bytes counted up to that position are read with it: groups
  // the writer logs after the barrier, while this thread wakes up and
  // writes, stay counted after the checkpoint (they would be replayed).
  const storage::Version* pinned = nullptr;
  std::uint64_t log_segment = 0, log_offset = 0, pending = 0;
  auto take = [&] {
    pinned = chain_->Acquire();
    log_segment = durable_->wal->segment_number();
    log_offset = durable_->wal->segment_size();
    base::MutexLock lock(&stats_mu_);
    pending = wal_bytes_since_checkpoint_;
  };
  // Holds the reference from the moment it is known, so that nothing
  // thrown or returned below can leak it.
  std::optional<PinnedVersion> pin;
  if (writer_stopped) {
    take();
    pin.emplace(chain_, pinned);
  } else {
    // Owned here until the queue takes it: set_after_sync allocates.
    auto barrier = std::make_unique<WriteRequest>(WriteBatch(), /*async=*/false, /*sync=*/true);
    const SequenceNumber last_written = last_checkpoint_;
    barrier->set_after_sync([&, last_written] {
      take();
      // With the writer's role held (the writer thread, or a producer
      // leading the queued group), with everything up to the checkpoint's
      // position in the log: the next group starts a new segment (see
      // rotate_before_next_group_) if a checkpoint will be written and the
      // current segment is not still small. Only ever set here: a
      // checkpoint with nothing new must not cancel an earlier one's ask.
      if (HasNewSince(pinned->roots.sequence, last_written) && durable_->wal->RotateAfterCheckpoint())
        rotate_before_next_group_ = true;
    });
    if (Status s = queue_.Push(barrier.get()); !s.ok())
      return s;  // closing: Close writes the final checkpoint
    Result<CommitInfo> r = queue_.Wait(barrier.release());
    if (pinned != nullptr) pin.emplace(chain_, pinned);
    // Poisoned before the barrier ran: nothing was attempted, as above.
    if (r.status().code() == StatusCode::kPoisoned)
      return Status(StatusCode::kPoisoned,
                    base::StrCat("a WAL failure stopped this graph: no checkpoint is written (",
                                 r.status().message(), ")"));
    // The barrier itself failed: out of memory (nothing written, what was
    // held back is kept) or writing what was held back failed
    // (DurabilityUnknown, as for every call that carried held-back writes;
    // the graph is poisoned). A failed checkpoint either way.
    if (!r.ok()) return CheckpointFailed(r.status());
    if (pinned == nullptr) return InternalError("checkpoint barrier completed without a version");
    if (after_checkpoint_barrier_for_test_) after_checkpoint_barrier_for_test_();
  }
  // The writer's only cost: one reference.
  storage::GraphRoots roots = pin->roots();
  roots.log_segment = log_segment;
  roots.log_offset = log_offset;
  if (!HasNewSince(roots.sequence, last_checkpoint_)) return Status::Ok();
  auto start = std::chrono::steady_clock::now();
  checkpoint::WriteStats ws;
  Status s = checkpoint::WriteCheckpoint(durable_->fs, durable_->dir, durable_->uuid, roots, &ws,
                                         CheckpointWriteOptions(options_));
  if (!s.ok()) {
    // Renamed but the directory fsync failed: the name may or may not be
    // durable and a later fsync may not tell (fsyncgate). Stop, as for the WAL.
    if (ws.dir_sync_failed) Poison("a directory fsync failed after a checkpoint was renamed into place", s);
    return CheckpointFailed(std::move(s));
  }
  previous_checkpoint_ = last_checkpoint_;
  last_checkpoint_ = roots.sequence;
  {
    base::MutexLock stats_lock(&stats_mu_);
    // Only this thread lowers it (under checkpoint_mu_): it is >= pending.
    wal_bytes_since_checkpoint_ -= std::min(pending, wal_bytes_since_checkpoint_);
    ++checkpoint_stats_.checkpoints_written;
    checkpoint_stats_.last_checkpoint_sequence = roots.sequence;
    checkpoint_stats_.last_checkpoint_bytes = ws.bytes;
    checkpoint_stats_.last_checkpoint_microseconds = MicrosSince(start);
    last_checkpoint_failed_ = false;
  }
  // A WAL failure while the checkpoint was written: keep every file.
  if (poisoned_.load())
    return Status(StatusCode::kPoisoned, "a WAL failure stopped this graph: covered files are kept");
  // The new checkpoint is durable; what is left to do only frees space.
  bool dir_sync_failed = false;
  Status cleanup;
  try {
    cleanup = RemoveCoveredFiles(*durable_, previous_checkpoint_, current_segment_.load(), &dir_sync_failed);
  } catch (const std::bad_alloc&) {
    cleanup = checkpoint::CheckpointOutOfMemory();  // dir_sync_failed says if it was in the fsync
  }
  if (dir_sync_failed) {
    Poison("a directory fsync failed after checkpoint cleanup removed files", cleanup);
    return CheckpointFailed(std::move(cleanup));
  }
  if (!cleanup.ok()) {
    base::MutexLock stats_lock(&stats_mu_);
    SetLastCheckpointError(std::move(cleanup));
  }
  return Status::Ok();
}

Result<GraphImpl::CoveredFiles> GraphImpl::FindCoveredFiles(DurableState& d,
                                                            SequenceNumber previous_checkpoint,
                                                            std::uint64_t current_segment) {
  // Kept: the newest checkpoint, the previous one as a fallback, and every
  // WAL segment holding a sequence above the previous one, so recovery from
  // either checkpoint finds its log.
  CoveredFiles out;
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, d.fs->ListDir(d.dir));
  for (const std::string& name : names) {
    if (auto seq = checkpoint::ParseCheckpointFileName(name); seq && *seq < previous_checkpoint)
      out.checkpoints.push_back(name);
  }
  // Segment k is covered when the segment after it starts at or below
  // previous + 1. The current segment is never removed.
  base::MutexLock lock(&d.segments_mu);
  for (auto it = d.segment_first.begin(); it != d.segment_first.end(); ++it) {
    auto next = std::next(it);
    if (next == d.segment_first.end() || next->first > current_segment ||
        next->second > previous_checkpoint + 1)
      break;
    out.segments.push_back(it->first);
  }
  return out;
}

Status GraphImpl::RemoveFiles(DurableState& d, const CoveredFiles& files, bool* dir_sync_failed) {
  // Checkpoints first: a checkpoint that is still there always has its log
  // (recovery may fall back to it).
  for (const std::string& name : files.checkpoints)
    QUIVER_RETURN_IF_ERROR(d.fs->Remove(env::JoinPath(d.dir, name)));
  for (std::uint64_t number : files.segments) {
    QUIVER_RETURN_IF_ERROR(d.fs->Remove(env::JoinPath(d.dir, wal::SegmentFileName(number))));
    base::MutexLock lock(&d.segments_mu);
    d.segment_first.erase(number);
  }
  if (files.empty() && !base::DurabilityFaultOn(&base::DurabilityFaults::remove_before_dir_sync))
    return Status::Ok();
  // Failed until it reports success: an exception from inside it must not
  // pass for "not attempted" (RELIABILITY 2.7: a failed fsync is final).
  if (dir_sync_failed != nullptr) *dir_sync_failed = true;
  Status s = d.fs->SyncDir(d.dir);
  if (s.ok() && dir_sync_failed != nullptr) *dir_sync_failed = false;
  return s;
}

Status GraphImpl::RemoveCoveredFiles(DurableState& d, SequenceNumber previous_checkpoint,
                                     std::uint64_t current_segment, bool* dir_sync_failed) {
  QUIVER_ASSIGN_OR_RETURN(CoveredFiles files, FindCoveredFiles(d, previous_checkpoint, current_segment));
  return RemoveFiles(d, files, dir_sync_failed);
}

Status GraphImpl::PruneAtOpen(DurableState& d, SequenceNumber loaded_checkpoint) {
  // The newest checkpoint was loaded; the one before it is the fallback.
  // Anything older exists only if a kill came between a checkpoint's
  // publication and its cleanup: finish that cleanup now, but only while
  // it keeps a valid fallback. A failure here loses nothing (the files are
  // redundant), so it is reported, not fatal; only a failed directory
  // fsync fails the Open (the directory's later fsyncs, on which new WAL
  // segments rely, could not be trusted).
  Result<std::vector<std::string>> names = d.fs->ListDir(d.dir);
  if (!names.ok()) {
    d.open_stats.prune_status = names.status();
    return Status::Ok();
  }
  SequenceNumber previous = 0;
  for (const std::string& name : *names) {
    if (auto seq = checkpoint::ParseCheckpointFileName(name); seq && *seq < loaded_checkpoint)
      previous = std::max(previous, *seq);
  }
  if (previous == 0) return Status::Ok();
  Result<CoveredFiles> files = FindCoveredFiles(d, previous, d.wal->segment_number());
  if (!files.ok()) {
    d.open_stats.prune_status = files.status();
    return Status::Ok();
  }
  if (files->empty()) return Status::Ok();
  // Removing what `previous` covers leaves it the only fallback: it must be
  // valid on disk now, not only when it was written.
  const std::string path = env::JoinPath(d.dir, checkpoint::CheckpointFileName(previous));
  Status valid = [&]() -> Status {
    QUIVER_ASSIGN_OR_RETURN(auto file, d.fs->OpenReadable(path));
    checkpoint::Header header;
    return checkpoint::VerifyCheckpointFile(*file, &header);
  }();
  if (!valid.ok()) {
    d.open_stats.prune_status =
        Status(valid.code(), base::StrCat("nothing pruned: the fallback checkpoint ", path,
                                          " does not verify, so the older files stay: ", valid.message()));
    return Status::Ok();
  }
  // Both checkpoints' names durable before anything they make redundant goes.
  QUIVER_RETURN_IF_ERROR(d.fs->SyncDir(d.dir));
  bool dir_sync_failed = false;
  Status removed = RemoveFiles(d, *files, &dir_sync_failed);
  if (dir_sync_failed) return removed;
  d.open_stats.prune_status = removed;
  return Status::Ok();
}

}  // namespace quiver
