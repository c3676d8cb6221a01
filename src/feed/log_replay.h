// The change feed's catch-up from a durable graph's files: a subscription
// from a sequence the in-memory window no longer holds (or never held, e.g.
// after a reopen) is served from the newest checkpoint at or before it and
// the WAL after that checkpoint, as long as the graph still keeps them.
//
// A logged batch records what was applied, not the old values it replaced
// nor the properties of the elements it removed, so the effects need the
// state before each batch: LogReplay loads the checkpoint into a private
// graph of its own, replays the log up to `from - 1` silently, and then
// replays one batch per Next, computing its effects with the same
// EffectsRecorder the writer uses (so a batch read from the log equals the
// one a live subscription delivered). It stops at `upto`, the last
// sequence before the live window takes over (CatchUpSubscription).
//
// Cost: the private graph is a full copy of the graph as of that
// checkpoint (the memory of a reopen) and its load takes as long as a
// reopen's; replay then runs at recovery's speed. It is freed when the
// catch-up reaches the live window.
//
// Files: OpenLogFiles opens every checkpoint and segment at once, and the
// graph calls it under its checkpoint lock, so checkpoint cleanup cannot
// remove a file between the listing and the open; an open handle then
// reads a removed file to its end (POSIX semantics; the simulator keeps a
// removed file's bytes for its open handles too). The replay lets go of
// each file once it has read it, so the space of removed files is freed as
// it catches up.
//
// Thread safety: one consumer thread at a time (ChangeSubscription's rule).
#ifndef QUIVER_FEED_LOG_REPLAY_H_
#define QUIVER_FEED_LOG_REPLAY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "env/file_system.h"
#include "feed/effects.h"
#include "quiver/change_feed.h"
#include "quiver/status.h"
#include "storage/retire_list.h"
#include "storage/version.h"
#include "wal/batch_codec.h"
#include "write/batch_processor.h"

namespace quiver::feed {

// The checkpoints and WAL segments of a graph directory, open for reading.
struct LogFiles {
  std::vector<std::pair<SequenceNumber, std::unique_ptr<env::ReadableFile>>> checkpoints;  // ascending
  std::vector<std::pair<std::uint64_t, std::unique_ptr<env::ReadableFile>>> segments;      // by number
};

// Lists `dir` and opens every checkpoint and segment in it. Changes nothing.
Result<LogFiles> OpenLogFiles(env::FileSystem* fs, const std::string& dir);

class LogReplay {
 public:
  // The state at `from - 1`, rebuilt from the newest checkpoint at or
  // before it that loads (an older one if it is damaged) and the log
  // after it, ready to deliver `from`..`upto` (from <= upto). OutOfRange if
  // the files no longer hold `from` (the message names what they hold);
  // Corruption or an I/O error as the files give them.
  static Result<std::unique_ptr<LogReplay>> Start(LogFiles files, SequenceNumber from, SequenceNumber upto,
                                                  unsigned threads);
  ~LogReplay();
  LogReplay(const LogReplay&) = delete;
  LogReplay& operator=(const LogReplay&) = delete;

  // The sequence of the batch the next Next returns.
  SequenceNumber next() const { return version_->roots.sequence + 1; }
  // Every batch up to `upto` was delivered.
  bool done() const { return version_->roots.sequence >= upto_; }
  // The next batch's effects (done() must be false). Corruption if the log
  // ends early or does not replay; ResourceExhausted out of memory.
  Result<std::shared_ptr<const ChangeBatch>> Next();

 private:
  struct Group {
    SequenceNumber first, last;
    std::span<const std::byte> payload;  // inside segment_bytes_
  };

  LogReplay(LogFiles files, SequenceNumber upto);
  Status LoadCheckpoint(SequenceNumber from, unsigned threads);
  void FreshVersion();
  // Hands version_ to the chain to be freed with it (VersionChain::Abandon).
  void AbandonVersion();
  // Replays the next logged batch; its effects into *out if `out` is set.
  Status Step(std::shared_ptr<const ChangeBatch>* out);
  // The next logged batch after the state's sequence.
  Result<const wal::LoggedBatch*> NextLogged();
  Status LoadSegment(std::size_t i);
  std::uint64_t CoveredEnd(std::uint64_t number) const;
  // The first sequence segment i's header names; nullopt if it is damaged.
  Result<std::optional<SequenceNumber>> FirstSequence(std::size_t i) const;

  LogFiles files_;
  const SequenceNumber upto_;
  storage::VersionChain* chain_ = nullptr;  // deletes itself after Shutdown
  storage::Version* version_ = nullptr;     // private: never published
  storage::MutationContext ctx_{};
  storage::GroupBlocks blocks_;  // private blocks edited in place (as recovery's replay)
  // A batch is being applied: if that threw, the version may not reach
  // every block in blocks_ (AbandonVersion).
  bool in_batch_ = false;
  BatchProcessor processor_;
  EffectsRecorder effects_;
  SequenceNumber covered_ = 0;  // the loaded checkpoint's sequence
  std::uint64_t checkpoint_wal_segment_ = 0, checkpoint_wal_offset_ = 0;
  // The log, read segment by segment, group by group.
  std::size_t next_segment_ = 0;
  std::uint32_t segment_format_ = 0;
  std::vector<std::byte> segment_bytes_;
  std::vector<Group> groups_;
  std::size_t next_group_ = 0;
  std::vector<wal::LoggedBatch> batches_;
  std::size_t next_batch_ = 0;
};

// A subscription that delivers `replay`'s batches, then `live`'s (which
// starts at the batch after replay's last). Errors of the replay end it
// (every later Next answers the same); Close closes both.
std::unique_ptr<ChangeSubscription> MakeCatchUpSubscription(std::unique_ptr<LogReplay> replay,
                                                            std::unique_ptr<ChangeSubscription> live);

}  // namespace quiver::feed

#endif  // QUIVER_FEED_LOG_REPLAY_H_
