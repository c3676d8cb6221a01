#include "feed/log_replay.h"

#include <algorithm>
#include <new>
#include <utility>

#include "base/strings.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "env/path.h"
#include "feed/change_feed.h"
#include "graph_dir.h"
#include "recovery.h"
#include "storage/intern_table.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

namespace quiver::feed {

namespace {

Result<LogFiles> OpenLogFilesOrThrow(env::FileSystem* fs, const std::string& dir) {
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  QUIVER_RETURN_IF_ERROR(graphdir::CheckFormatVersions(fs, dir, names));
  LogFiles out;
  for (const std::string& name : names) {
    if (graphdir::IsOwnTempFile(name)) continue;  // a checkpoint being written
    if (auto seq = checkpoint::ParseCheckpointFileName(name)) {
      QUIVER_ASSIGN_OR_RETURN(auto file, fs->OpenReadable(env::JoinPath(dir, name)));
      out.checkpoints.emplace_back(*seq, std::move(file));
    } else if (auto n = wal::ParseSegmentFileName(name)) {
      QUIVER_ASSIGN_OR_RETURN(auto file, fs->OpenReadable(env::JoinPath(dir, name)));
      out.segments.emplace_back(*n, std::move(file));
    }
  }
  auto by_first = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::sort(out.checkpoints.begin(), out.checkpoints.end(), by_first);
  std::sort(out.segments.begin(), out.segments.end(), by_first);
  return out;
}

}  // namespace

Result<LogFiles> OpenLogFiles(env::FileSystem* fs, const std::string& dir) {
  try {
    return OpenLogFilesOrThrow(fs, dir);
  } catch (const std::bad_alloc&) {
    return FeedOutOfMemory("change feed: out of memory listing the graph's files");
  }
}

namespace {

Result<std::vector<std::byte>> ReadAll(const env::ReadableFile& file) {
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file.Size());
  std::vector<std::byte> bytes(size);
  std::uint64_t at = 0;
  while (at < size) {
    QUIVER_ASSIGN_OR_RETURN(std::size_t n, file.ReadAt(at, std::span<std::byte>(bytes).subspan(at)));
    if (n == 0) break;  // shorter than it was a moment ago: read what is there
    at += n;
  }
  bytes.resize(at);
  return bytes;
}

}  // namespace

LogReplay::LogReplay(LogFiles files, SequenceNumber upto)
    : files_(std::move(files)), upto_(upto), processor_(ReplayLimits()) {
  processor_.set_replay(true);
  chain_ = new storage::VersionChain();
}

LogReplay::~LogReplay() {
  if (version_ != nullptr) AbandonVersion();
  chain_->Shutdown();
}

void LogReplay::AbandonVersion() {
  // After a batch that threw part-way, the chain frees the tracked blocks
  // once each, reached or not (VersionChain::Abandon). Between batches each
  // is reached from the version: the record is dropped, so that freeing a
  // large private graph at the end of every catch-up does not look up each
  // block in it.
  if (!in_batch_) blocks_.Clear();
  chain_->Abandon(version_, std::move(blocks_));
  blocks_.Clear();
  version_ = nullptr;
}

void LogReplay::FreshVersion() {
  if (version_ != nullptr) {
    // The new chain first: if it cannot be made, chain_ is still the old
    // one, which the destructor frees (never a chain already shut down).
    auto* fresh = new storage::VersionChain();
    AbandonVersion();
    chain_->Shutdown();
    chain_ = fresh;
  }
  ctx_ = storage::MutationContext{1, nullptr, nullptr};
  version_ = chain_->NewVersion(&ctx_);
  // Never published: superseded blocks are freed at once, so a batch that
  // throws part-way leaves none both linked and retired (as recovery's).
  ctx_.retired->FreeOnAdd(ctx_.account);
}

Result<std::unique_ptr<LogReplay>> LogReplay::Start(LogFiles files, SequenceNumber from, SequenceNumber upto,
                                                    unsigned threads) {
  std::unique_ptr<LogReplay> r;
  try {
    r.reset(new LogReplay(std::move(files), upto));
    QUIVER_RETURN_IF_ERROR(r->LoadCheckpoint(from, threads));
    // The state before `from`, silently (no effects).
    while (r->version_->roots.sequence + 1 < from) QUIVER_RETURN_IF_ERROR(r->Step(nullptr));
  } catch (const std::bad_alloc&) {
    return FeedOutOfMemory("change feed: out of memory rebuilding the state to resume from the log");
  }
  return r;
}

// The newest checkpoint at or before from - 1 that loads; with none, the
// log alone if it starts at sequence 1.
Status LogReplay::LoadCheckpoint(SequenceNumber from, unsigned threads) {
  Status damaged;
  for (auto it = files_.checkpoints.rbegin(); it != files_.checkpoints.rend(); ++it) {
    if (it->first >= from) continue;
    FreshVersion();
    storage::GraphRoots& g = version_->roots;
    storage::OwnInternTable(g.labels, ctx_);
    storage::OwnInternTable(g.types, ctx_);
    storage::OwnInternTable(g.keys, ctx_);
    checkpoint::Header header;
    Status s = checkpoint::LoadCheckpointFile(*it->second, g, ctx_, &header, threads);
    if (s.ok() && header.sequence != it->first)
      s = CorruptionError("checkpoint: sequence differs from its file name");
    if (s.ok()) {
      covered_ = it->first;
      checkpoint_wal_segment_ = header.wal_segment;
      checkpoint_wal_offset_ = header.wal_offset;
      ctx_.blocks = &blocks_;
      files_.checkpoints.clear();  // loaded: no file of them is read again
      return Status::Ok();
    }
    if (s.code() != StatusCode::kCorruption) return s;
    if (damaged.ok()) damaged = std::move(s);
  }
  // No checkpoint at or before from - 1: the log must start at sequence 1.
  FreshVersion();
  ctx_.blocks = &blocks_;
  bool from_one = false;
  if (!files_.segments.empty()) {
    QUIVER_ASSIGN_OR_RETURN(std::optional<SequenceNumber> first, FirstSequence(0));
    from_one = first == SequenceNumber{1};
  }
  if (from_one) {
    files_.checkpoints.clear();
    return Status::Ok();
  }
  // A checkpoint before `from` is there but does not load: the files are
  // damaged, not too short (OutOfRange would send the consumer to a later
  // sequence the same damage refuses).
  if (!damaged.ok())
    return CorruptionError(
        base::StrCat("change feed: no checkpoint before sequence ", from, " loads: ", damaged.message()));
  SequenceNumber oldest = 0;
  for (const auto& [seq, file] : files_.checkpoints) {
    oldest = seq;
    break;
  }
  if (oldest == 0) {
    return CorruptionError(base::StrCat("change feed: no checkpoint precedes sequence ", from,
                                        " and the log does not start at sequence 1"));
  }
  return OutOfRangeError(base::StrCat(
      "change feed: sequence ", from, " is no longer in the log (it holds the batches after sequence ",
      oldest, "); subscribe from a later sequence, or from a snapshot's sequence + 1"));
}

Result<std::optional<SequenceNumber>> LogReplay::FirstSequence(std::size_t i) const {
  std::byte header[wal::kSegmentHeaderBytes];
  QUIVER_ASSIGN_OR_RETURN(std::size_t n, files_.segments[i].second->ReadAt(0, header));
  auto h = wal::DecodeSegmentHeader(std::span<const std::byte>(header, n));
  return h ? std::optional<SequenceNumber>(h->first_sequence) : std::nullopt;
}

std::uint64_t LogReplay::CoveredEnd(std::uint64_t number) const {
  if (checkpoint_wal_segment_ == 0 || number > checkpoint_wal_segment_) return 0;
  return number == checkpoint_wal_segment_ ? checkpoint_wal_offset_ : wal::kCoveredToTheEnd;
}

Status LogReplay::LoadSegment(std::size_t i) {
  const auto& [number, file] = files_.segments[i];
  groups_.clear();
  next_group_ = 0;
  QUIVER_ASSIGN_OR_RETURN(segment_bytes_, ReadAll(*file));
  wal::SegmentScan scan;
  Status s = wal::ScanSegment(
      segment_bytes_,
      [this](SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload) {
        groups_.push_back(Group{first, last, payload});
        return Status::Ok();
      },
      &scan, covered_, CoveredEnd(number));
  segment_format_ = scan.header.format_version;
  // The writer may be appending to the last segment as it is read: what
  // follows the batches this replay needs is not its concern.
  const bool enough = !groups_.empty() && groups_.back().last >= upto_;
  if (!s.ok() && !enough) return s;
  if (!scan.header_valid && !enough && i + 1 < files_.segments.size())
    return CorruptionError(base::StrCat("WAL segment ", number, " has a damaged header"));
  return Status::Ok();
}

Result<const wal::LoggedBatch*> LogReplay::NextLogged() {
  const SequenceNumber want = version_->roots.sequence + 1;
  for (;;) {
    while (next_batch_ < batches_.size()) {
      const wal::LoggedBatch* b = &batches_[next_batch_++];
      if (b->sequence >= want) return b;
    }
    if (next_group_ < groups_.size()) {
      const Group& gr = groups_[next_group_++];
      if (gr.last < want) continue;  // the checkpoint holds it
      QUIVER_ASSIGN_OR_RETURN(batches_, wal::DecodeGroup(gr.payload));
      if (batches_.empty() || batches_.size() != gr.last - gr.first + 1)
        return CorruptionError("WAL: group size mismatch");
      next_batch_ = 0;
      continue;
    }
    if (next_segment_ < files_.segments.size()) {
      // A segment whose successor starts at or before `want` holds nothing
      // still needed (the previous checkpoint's log): not read.
      if (next_segment_ + 1 < files_.segments.size()) {
        QUIVER_ASSIGN_OR_RETURN(std::optional<SequenceNumber> next_first, FirstSequence(next_segment_ + 1));
        if (next_first && *next_first <= want) {
          files_.segments[next_segment_++].second.reset();
          continue;
        }
      }
      QUIVER_RETURN_IF_ERROR(LoadSegment(next_segment_));
      // Its bytes are in memory: let go of the file (cleanup may have
      // removed its name; the space is freed once no handle holds it).
      files_.segments[next_segment_++].second.reset();
      continue;
    }
    return CorruptionError(base::StrCat("change feed: the log ends before sequence ", want,
                                        " (the graph committed up to ", upto_, ")"));
  }
}

Status LogReplay::Step(std::shared_ptr<const ChangeBatch>* out) {
  QUIVER_ASSIGN_OR_RETURN(const wal::LoggedBatch* lb, NextLogged());
  storage::GraphRoots& g = version_->roots;
  if (out == nullptr) {
    in_batch_ = true;
    Status s = ReplayLoggedBatch(processor_, *lb, segment_format_, g, ctx_);
    in_batch_ = false;  // a status comes before Apply: the version is whole
    QUIVER_RETURN_IF_ERROR(s);
  } else {
    QUIVER_RETURN_IF_ERROR(CheckLoggedBatch(processor_, *lb, segment_format_, g));
    const std::uint64_t first_vertex = g.vertex_limit, first_edge = g.edge_limit;
    effects_.Before(lb->batch, g);
    CommitInfo info;
    in_batch_ = true;
    processor_.Apply(lb->batch, g, ctx_, &info);
    in_batch_ = false;
    g.sequence = lb->sequence;
    *out = effects_.Finish(lb->batch, g, lb->sequence, first_vertex, first_edge);
  }
  // As recovery: past a bound, the tracked blocks count as published.
  if (blocks_.size() > kMaxTrackedReplayBlocks) blocks_.Clear();
  return Status::Ok();
}

Result<std::shared_ptr<const ChangeBatch>> LogReplay::Next() {
  std::shared_ptr<const ChangeBatch> batch;
  try {
    QUIVER_RETURN_IF_ERROR(Step(&batch));
  } catch (const std::bad_alloc&) {
    return FeedOutOfMemory("change feed: out of memory replaying the log");
  }
  return batch;
}

namespace {

class CatchUpSubscription final : public ChangeSubscription {
 public:
  CatchUpSubscription(std::unique_ptr<LogReplay> replay, std::unique_ptr<ChangeSubscription> live)
      : replay_(std::move(replay)), live_(std::move(live)), replay_next_(replay_->next()) {}

  // Safe beside a Next on another thread (as the window's subscription's):
  // reads only atomics until the replay is over.
  SequenceNumber next_sequence() const override {
    return replaying_.load(std::memory_order_acquire) ? replay_next_.load(std::memory_order_acquire)
                                                      : live_->next_sequence();
  }

  Result<std::shared_ptr<const ChangeBatch>> Next(std::chrono::milliseconds timeout) override {
    // Copying a status copies its message: out of memory, the answer is
    // ResourceExhausted (the subscription stays as it was), never a throw.
    try {
      if (closed_.load(std::memory_order_acquire))
        return FailedPreconditionError("change feed: the subscription is closed");
      if (!error_.ok()) return error_;
      if (replay_ != nullptr) {
        if (!replay_->done()) {
          Result<std::shared_ptr<const ChangeBatch>> r = replay_->Next();
          if (!r.ok()) {
            replay_.reset();
            // Ends the subscription even if copying r's message throws.
            error_ = FeedOutOfMemory("change feed: out of memory replaying the log");
            error_ = r.status();
          } else {
            replay_next_.store(replay_->next(), std::memory_order_release);
          }
          return r;
        }
        replaying_.store(false, std::memory_order_release);
        replay_.reset();  // caught up: the private graph is freed
      }
    } catch (const std::bad_alloc&) {
      return FeedOutOfMemory("change feed: out of memory");
    }
    return live_->Next(timeout);
  }

  void Close() override {
    closed_.store(true, std::memory_order_release);
    live_->Close();
  }

 private:
  std::unique_ptr<LogReplay> replay_;  // null once caught up (or failed)
  const std::unique_ptr<ChangeSubscription> live_;
  // next_sequence() while the log is replayed (it stays at a failed batch).
  std::atomic<bool> replaying_{true};
  std::atomic<SequenceNumber> replay_next_;
  std::atomic<bool> closed_{false};
  Status error_;
};

}  // namespace

std::unique_ptr<ChangeSubscription> MakeCatchUpSubscription(std::unique_ptr<LogReplay> replay,
                                                            std::unique_ptr<ChangeSubscription> live) {
  return std::make_unique<CatchUpSubscription>(std::move(replay), std::move(live));
}

}  // namespace quiver::feed
