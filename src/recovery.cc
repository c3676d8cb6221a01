#include "recovery.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/parallel.h"
#include "base/strings.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "graph_dir.h"
#include "index/catalog.h"
#include "index/index_build.h"
#include "wal/batch_codec.h"
#include "wal/wal_reader.h"
#include "write/batch_processor.h"

namespace quiver {
namespace {

// Salvage's names: a segment's valid prefix being copied, and a file set
// aside (never read or removed by Quiver again).
constexpr char kPrefixCopySuffix[] = ".prefix";
constexpr char kSalvagedSuffix[] = ".salvaged";

struct DirListing {
  std::vector<std::uint64_t> checkpoints;  // sequences, ascending
  std::vector<std::uint64_t> segments;     // numbers, ascending
  // Read-only: segments whose bytes are in salvage's finished copy (the
  // segment was set aside, the copy not yet renamed in its place).
  std::map<std::uint64_t, std::string> copies;
};

// A copy salvage made of a segment's valid prefix (Rebuilder::Salvage):
// complete once the segment was set aside, so then it takes the segment's
// place and the salvage, finished now, is reported (*finished); while the
// segment is still there, it is an unfinished copy.
Status FinishSalvageCopy(env::FileSystem* fs, const std::string& dir, const std::string& name,
                         std::vector<std::string>* names, bool* finished) {
  std::string segment = name.substr(0, name.size() - (sizeof(kPrefixCopySuffix) - 1));
  if (std::find(names->begin(), names->end(), segment) != names->end())
    return fs->Remove(env::JoinPath(dir, name));
  names->push_back(segment);
  *finished = true;
  return fs->Rename(env::JoinPath(dir, name), env::JoinPath(dir, segment));
}

// Lists `dir`, refuses newer formats, removes Quiver's stale temporary
// files and finishes (or removes) an interrupted salvage's copy; sets
// *salvage_finished if it finished one. Read-only, it changes nothing: the
// temporary files are ignored and a finished copy is read in place of its
// segment (an unfinished one, beside its segment, is ignored).
Result<DirListing> ListAndClean(env::FileSystem* fs, const std::string& dir, bool read_only,
                                bool* salvage_finished) {
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  QUIVER_RETURN_IF_ERROR(graphdir::CheckFormatVersions(fs, dir, names));
  DirListing out;
  bool removed = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string name = names[i];
    if (read_only && graphdir::IsOwnTempFile(name)) continue;
    if (read_only && graphdir::IsPrefixCopy(name)) {
      std::string segment = name.substr(0, name.size() - (sizeof(kPrefixCopySuffix) - 1));
      auto n = wal::ParseSegmentFileName(segment);
      if (n && std::find(names.begin(), names.end(), segment) == names.end()) {
        out.segments.push_back(*n);
        out.copies[*n] = name;
        *salvage_finished = true;
      }
      continue;
    }
    if (graphdir::IsOwnTempFile(name)) {  // never a file Quiver did not write
      QUIVER_RETURN_IF_ERROR(fs->Remove(env::JoinPath(dir, name)));
      removed = true;
    } else if (graphdir::IsPrefixCopy(name)) {  // never a file Quiver did not write either
      QUIVER_RETURN_IF_ERROR(FinishSalvageCopy(fs, dir, name, &names, salvage_finished));
      removed = true;
    } else if (auto seq = checkpoint::ParseCheckpointFileName(name)) {
      out.checkpoints.push_back(*seq);
    } else if (auto n = wal::ParseSegmentFileName(name)) {
      out.segments.push_back(*n);
    }
  }
  if (removed) QUIVER_RETURN_IF_ERROR(fs->SyncDir(dir));
  std::sort(out.checkpoints.begin(), out.checkpoints.end());
  std::sort(out.segments.begin(), out.segments.end());
  return out;
}

}  // namespace

wal::Uuid NewGraphUuid() {
  std::random_device rd;
  wal::Uuid u;
  for (auto& b : u) b = static_cast<std::uint8_t>(rd());
  u[6] = static_cast<std::uint8_t>((u[6] & 0x0F) | 0x40);  // RFC 4122 version 4
  u[8] = static_cast<std::uint8_t>((u[8] & 0x3F) | 0x80);
  return u;
}

Limits ReplayLimits() {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  return Limits{.max_string_bytes = kMax,
                .max_vector_dims = kMax,
                .max_list_elements = kMax,
                .max_batch_ops = kMax,
                .max_properties_per_element = kMax};
}

Status CheckLoggedBatch(BatchProcessor& processor, const wal::LoggedBatch& lb, std::uint32_t format_version,
                        const storage::GraphRoots& g) {
  if (lb.sequence != g.sequence + 1 || lb.first_vertex != g.vertex_limit || lb.first_edge != g.edge_limit)
    return CorruptionError(base::StrCat("WAL: batch ", lb.sequence, " does not follow the recovered state"));
  // Index operations came with format version 2: a version 1 writer never
  // logged one.
  if (format_version < 2 && internal::WriteBatchInternal::HasIndexOp(lb.batch))
    return CorruptionError(
        base::StrCat("WAL: batch ", lb.sequence, " holds an index operation in a format version 1 segment"));
  // Index kind 3 (the edge-endpoint constraint) came with format version 4:
  // an older writer never logged one, and an older reader could not read it.
  if (format_version < wal::kFirstEndpointConstraintVersion) {
    for (const internal::WriteBatchInternal::Op& op : internal::WriteBatchInternal::Ops(lb.batch)) {
      if (op.kind == OpKind::kDefineIndex && op.index->spec.kind == IndexKind::kUniqueEndpoints)
        return CorruptionError(base::StrCat(
            "WAL: batch ", lb.sequence, " defines '", op.index->spec.name,
            "', an edge-endpoint constraint (index kind 3), in a format version ", format_version,
            " segment; that kind came with format version ", wal::kFirstEndpointConstraintVersion));
    }
  }
  // Value type 7 (a string list) came with format version 5, likewise.
  if (format_version < wal::kFirstStringListVersion) {
    for (const internal::WriteBatchInternal::Op& op : internal::WriteBatchInternal::Ops(lb.batch)) {
      for (const Property& p : internal::WriteBatchInternal::Props(lb.batch, op)) {
        if (p.value.type() == ValueType::kStringList)
          return CorruptionError(base::StrCat("WAL: batch ", lb.sequence, " sets '", p.key,
                                              "' to a string list (value type 7) in a format version ",
                                              format_version, " segment; that type came with format version ",
                                              wal::kFirstStringListVersion));
      }
    }
  }
  Status s = processor.Validate(lb.batch, g);
  if (!s.ok())
    return CorruptionError(base::StrCat("WAL: batch ", lb.sequence, " does not replay: ", s.message()));
  return Status::Ok();
}

Status ReplayLoggedBatch(BatchProcessor& processor, const wal::LoggedBatch& lb, std::uint32_t format_version,
                         storage::GraphRoots& g, storage::MutationContext& ctx) {
  QUIVER_RETURN_IF_ERROR(CheckLoggedBatch(processor, lb, format_version, g));
  CommitInfo info;
  processor.Apply(lb.batch, g, ctx, &info);
  g.sequence = lb.sequence;
  return Status::Ok();
}

namespace {

// Builds the recovered version: checkpoint load and WAL replay.
class Rebuilder {
 public:
  Rebuilder(env::FileSystem* fs, const std::string& dir, const Options& options, RecoveredState* state)
      : fs_(fs),
        dir_(dir),
        options_(options),
        read_only_(options.read_only),
        state_(state),
        processor_(ReplayLimits()) {
    processor_.set_replay(true);
  }

  Status Run() {
    bool salvage_finished = false;
    QUIVER_ASSIGN_OR_RETURN(DirListing listing, ListAndClean(fs_, dir_, read_only_, &salvage_finished));
    copies_ = listing.copies;
    // An Open that died at the last step of a salvage gave up committed
    // data and never said so: this one does.
    if (salvage_finished) state_->stats.salvaged = true;
    const auto start = std::chrono::steady_clock::now();
    QUIVER_RETURN_IF_ERROR(LoadNewestCheckpoint(listing));
    const auto loaded = std::chrono::steady_clock::now();
    QUIVER_RETURN_IF_ERROR(ReplaySegments(listing));
    const auto replayed = std::chrono::steady_clock::now();
    BuildUnfinishedIndexes();
    auto micros = [](auto d) {
      return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
    };
    state_->stats.checkpoint_load_microseconds = micros(loaded - start);
    state_->stats.wal_replay_microseconds = micros(replayed - loaded);
    if (state_->stats.checkpoint_sequence != 0)
      state_->stats.load_threads = base::ResolveThreads(options_.durable.io_threads);
    state_->stats.recovered_sequence = version_->roots.sequence;
    // Where the next group's record will start: appends continue in the
    // last segment, or a new segment starts after the recovered sequence.
    version_->roots.log_segment = state_->last_segment != 0 ? state_->last_segment : state_->next_segment;
    version_->roots.log_offset =
        state_->last_segment != 0 ? state_->last_segment_size : wal::FirstRecordOffset(wal::kFormatVersion);
    state_->replay_end_allocated_bytes = state_->chain->account()->allocated_bytes();
    replay_blocks_.Clear();  // the blocks belong to the version from now on
    ctx_.blocks = nullptr;
    ctx_.retired->FreeOnAdd(nullptr);  // published: later versions may be read
    if (version_->roots.sequence > 0) {
      state_->chain->Publish(version_);
    } else {
      state_->chain->Discard(version_);
    }
    version_ = nullptr;
    return Status::Ok();
  }

  // On failure: frees the half-built version with the chain, also after a
  // throw inside a replayed batch (VersionChain::Abandon frees the blocks
  // replay still tracks once each, whether the version reaches them or
  // not; replay retires in free-now mode, see ReplaySegments).
  void Abandon() {
    if (version_ != nullptr) state_->chain->Abandon(version_, std::move(replay_blocks_));
    replay_blocks_.Clear();
    version_ = nullptr;
  }

 private:
  void StartVersion() {
    ctx_ = storage::MutationContext{++state_->epoch, nullptr, nullptr};
    version_ = state_->chain->NewVersion(&ctx_);
  }

  // The newest checkpoint that passes every check; if it is damaged, the
  // one before it, and so on (each kept checkpoint has its log: cleanup
  // removes a checkpoint before the segments the next one covers). With
  // none valid, the log alone if it still starts at sequence 1; else
  // Corruption, never an empty graph.
  Status LoadNewestCheckpoint(const DirListing& listing) {
    Status newest_error;
    for (auto it = listing.checkpoints.rbegin(); it != listing.checkpoints.rend(); ++it) {
      Status s = TryCheckpoint(*it);
      if (s.ok()) {
        for (const index::PropertyIndex& p : version_->roots.catalog->indexes())
          if (p.built) ++state_->stats.indexes_built;
        state_->stats.checkpoint_sequence = *it;
        state_->last_checkpoint = *it;
        state_->stats.used_previous_checkpoint = it != listing.checkpoints.rbegin();
        return Status::Ok();
      }
      // Only damage falls back to an older checkpoint; an I/O error fails
      // the open as it is.
      if (s.code() != StatusCode::kCorruption) return s;
      if (newest_error.ok()) newest_error = std::move(s);
    }
    if (!listing.checkpoints.empty()) {
      QUIVER_ASSIGN_OR_RETURN(bool from_one, LogStartsAtOne(listing));
      if (!from_one)
        return Status(newest_error.code(), base::StrCat("no valid checkpoint: ", newest_error.message()));
      state_->stats.used_previous_checkpoint = true;
      FreshVersion();
    }
    StartVersion();
    state_->uuid = NewGraphUuid();
    fresh_uuid_ = true;
    return Status::Ok();
  }

  // Whether the first segment's header is intact and starts the log at
  // sequence 1 (then the log alone rebuilds the graph).
  Result<bool> LogStartsAtOne(const DirListing& listing) {
    if (listing.segments.empty()) return false;
    QUIVER_ASSIGN_OR_RETURN(auto first, HeaderFirstSequence(listing.segments.front()));
    return first.has_value() && *first == 1;
  }

  // Frees what a failed checkpoint load built: the next attempt starts on a
  // fresh chain.
  void FreshVersion() {
    if (version_ == nullptr) return;
    // The new chain first: if it cannot be made, state_->chain is still
    // the old one, which Abandon and Recover free.
    auto* fresh = new storage::VersionChain();
    state_->chain->Abandon(version_);
    version_ = nullptr;
    state_->chain->Shutdown();
    state_->chain = fresh;
  }

  Status TryCheckpoint(std::uint64_t sequence) {
    FreshVersion();  // each attempt builds on a fresh chain so a failed one is freed whole
    StartVersion();
    storage::OwnInternTable(version_->roots.labels, ctx_);
    storage::OwnInternTable(version_->roots.types, ctx_);
    storage::OwnInternTable(version_->roots.keys, ctx_);
    QUIVER_ASSIGN_OR_RETURN(auto file,
                            fs_->OpenReadable(env::JoinPath(dir_, checkpoint::CheckpointFileName(sequence))));
    checkpoint::Header header;
    checkpoint::LoadStats load;
    QUIVER_RETURN_IF_ERROR(checkpoint::LoadCheckpointFile(
        *file, version_->roots, ctx_, &header, base::ResolveThreads(options_.durable.io_threads), &load));
    if (header.sequence != sequence)
      return CorruptionError("checkpoint: sequence differs from its file name");
    state_->uuid = header.uuid;
    checkpoint_wal_segment_ = header.wal_segment;
    checkpoint_wal_offset_ = header.wal_offset;
    // The checkpoint that loads, alone.
    state_->stats.index_build_microseconds = load.index_build_microseconds;
    state_->stats.indexes_loaded = load.indexes_loaded;
    return Status::Ok();
  }

  // Where the group after the loaded checkpoint starts, for segment
  // `number` (wal::ScanSegment's `covered_end`): the checkpoint's offset in
  // its own segment, the end of a segment before it, 0 (not known) after it
  // or when the checkpoint records no position (format 1).
  std::uint64_t CoveredEnd(std::uint64_t number) const {
    if (checkpoint_wal_segment_ == 0 || number > checkpoint_wal_segment_) return 0;
    return number == checkpoint_wal_segment_ ? checkpoint_wal_offset_ : wal::kCoveredToTheEnd;
  }

  // The first sequence a segment's header names; nullopt if the header is
  // not intact (the full scan then judges it). I/O errors fail the open.
  Result<std::optional<SequenceNumber>> HeaderFirstSequence(std::uint64_t number) {
    QUIVER_ASSIGN_OR_RETURN(auto file, fs_->OpenReadable(SegmentPath(number)));
    std::byte header[wal::kSegmentHeaderBytes];
    QUIVER_ASSIGN_OR_RETURN(std::size_t n, file->ReadAt(0, header));
    auto h = wal::DecodeSegmentHeader(std::span<const std::byte>(header, n));
    return h ? std::optional<SequenceNumber>(h->first_sequence) : std::nullopt;
  }

  // Where segment `number`'s bytes are: its file, or (read-only) salvage's
  // finished copy of it.
  std::string SegmentPath(std::uint64_t number) const {
    auto it = copies_.find(number);
    return env::JoinPath(dir_, it != copies_.end() ? it->second : wal::SegmentFileName(number));
  }

  // Segments before the first one still needed by the checkpoint: those
  // whose successor starts at or below checkpoint + 1 hold nothing newer.
  // They stay on disk as the previous checkpoint's log and are not read:
  // damage in them matters only if that checkpoint is ever needed (and is
  // then reported).
  Result<std::size_t> FirstNeededSegment(const DirListing& listing) {
    SequenceNumber c = version_->roots.sequence;
    std::size_t first = 0;
    while (c > 0 && first + 1 < listing.segments.size()) {
      QUIVER_ASSIGN_OR_RETURN(auto next_first, HeaderFirstSequence(listing.segments[first + 1]));
      if (!next_first || *next_first > c + 1) break;
      // Skipped segments are remembered for checkpoint cleanup; the first
      // one's own start is never consulted (only its successor's is).
      state_->segment_first.emplace(listing.segments[first], 0);
      state_->segment_first[listing.segments[first + 1]] = *next_first;
      ++first;
    }
    return first;
  }

  Status ReplaySegments(const DirListing& listing) {
    SequenceNumber expected_header_first = 0;  // 0: not known yet
    if (!listing.segments.empty()) state_->next_segment = listing.segments.back() + 1;
    QUIVER_ASSIGN_OR_RETURN(std::size_t first_needed, FirstNeededSegment(listing));
    const SequenceNumber covered = version_->roots.sequence;  // held by the loaded checkpoint
    covered_ = covered;
    // Replay builds one version no reader can see until it is published:
    // every block it allocates is private to it, so it tracks them (as a
    // commit group does) and edits them in place, freeing each one it
    // supersedes at once. Untracked, each would count as published: every
    // change would copy its element's block and keep the old one until the
    // end, O(groups x element size) of memory.
    ctx_.blocks = &replay_blocks_;
    // No reader sees the version before Run ends: a superseded block is
    // freed at once rather than kept until then, and a batch that throws
    // part-way leaves nothing both linked and retired (RetireList::FreeOnAdd).
    ctx_.retired->FreeOnAdd(ctx_.account);
    SequenceNumber wal_end = 0;  // the last sequence the last segment holds
    bool rewritten = false;
    // Segments up to this one were started durably: header synced, name
    // synced (SEGMENTS is written only after both).
    QUIVER_ASSIGN_OR_RETURN(std::optional<std::uint64_t> recorded, graphdir::ReadNewestSegment(fs_, dir_));
    // Never start a segment under a number SEGMENTS already names (a
    // salvage may have set that segment aside): SEGMENTS would vouch for a
    // header whose start never completed, and a torn start would then be
    // refused as Corruption instead of removed as an interrupted creation.
    if (recorded) state_->next_segment = std::max(state_->next_segment, *recorded + 1);
    for (std::size_t i = first_needed; i < listing.segments.size(); ++i) {
      std::uint64_t number = listing.segments[i];
      bool last = i + 1 == listing.segments.size();
      std::string path = SegmentPath(number);
      QUIVER_ASSIGN_OR_RETURN(auto bytes, wal::ReadWholeFile(fs_, path));
      ++state_->stats.wal_segments_read;
      const std::uint64_t replayed_before = state_->stats.wal_groups_replayed;
      wal::SegmentScan scan;
      Status s = wal::ScanSegment(
          bytes,
          [this, &scan](SequenceNumber f, SequenceNumber l, std::span<const std::byte> p) {
            return Replay(f, l, p, scan.header.format_version);
          },
          &scan, covered, CoveredEnd(number));
      state_->stats.wal_covered_damage_bytes += scan.covered_damage_bytes;
      if (!s.ok() && !(s.code() == StatusCode::kCorruption && options_.durable.salvage_wal_prefix)) return s;
      if (!s.ok()) {
        // A group that failed half-way through replay cannot be salvaged
        // without showing part of it.
        if (in_group_) return s;
        return Salvage(listing, i, bytes, scan);
      }
      if (!scan.header_valid) {
        // A segment SEGMENTS names was started durably (header synced, then
        // the name): its damaged header is damage, never an interrupted
        // creation, whatever its size. In formats 1 and 2 the first group
        // shares the header's page, so a file of one page or less may hold
        // acknowledged groups whose records are damaged with the header.
        const bool started = recorded.has_value() && *recorded >= number;
        if (!last || started) {
          if (options_.durable.salvage_wal_prefix) return Salvage(listing, i, bytes, scan);
          return CorruptionError(base::StrCat("WAL segment ", number, " has a damaged header",
                                              last ? " (SEGMENTS shows its start completed)" : ""));
        }
        // Created but never made durable before a crash: nothing in it was
        // acknowledged. (Read-only: left as it is.)
        if (!read_only_) {
          QUIVER_RETURN_IF_ERROR(fs_->Remove(path));
          QUIVER_RETURN_IF_ERROR(fs_->SyncDir(dir_));
        }
        state_->stats.tail_bytes_truncated += bytes.size();
        continue;
      }
      QUIVER_RETURN_IF_ERROR(CheckSegmentHeader(scan, &expected_header_first));
      state_->segment_first[number] = scan.header.first_sequence;
      // What the log takes on disk, padding (format version 3) included, as
      // the writer counts it (checkpoint_wal_bytes); not the zeroed end.
      state_->wal_bytes_read += scan.valid_end;
      if (last) {
        // Appends continue in the last segment only if it is of this
        // build's format version, an older one is closed as it is, and only
        // at a page boundary (the page rule, wal/wal_format.h): a segment
        // whose header's padding was torn (valid end 64) is closed too, so
        // no group is ever written into the header's page.
        state_->last_segment =
            scan.header.format_version == wal::kFormatVersion && scan.valid_end % wal::kWalPageBytes == 0
                ? number
                : 0;
        state_->last_segment_size = scan.valid_end;
        wal_end = scan.next_sequence - 1;
        // The checkpoint says the group after it starts in a later segment:
        // appends go to a new one, where a reader will look for it.
        if (scan.skipped_to_end) state_->last_segment = 0;
      }
      if (scan.tail_bytes > 0 && !last) {
        if (options_.durable.salvage_wal_prefix) return Salvage(listing, i, bytes, scan);
        return CorruptionError(base::StrCat("WAL segment ", number, " has damage before the next segment"));
      }
      const bool start_durable = recorded.has_value() && *recorded >= number;
      if (read_only_) {
        // The replayed state lives in memory only: nothing is made durable,
        // cut or zero-filled (the next writable Open does that).
        state_->stats.tail_bytes_truncated += scan.tail_bytes;
      } else if (state_->stats.wal_groups_replayed > replayed_before || (last && !start_durable)) {
        // Replayed groups were read back, which is no proof that they are on
        // disk (see RewriteSegment): write them again, whole and synced. The
        // last segment is written again even with no replayed group unless
        // SEGMENTS shows its start completed, since the writer appends to
        // it: a segment start that failed or was killed after its header was
        // written leaves a header that may be in the page cache only, or a
        // name not yet durable in the directory (synced below), and commits
        // appended to it would be lost with it. With nothing replayed and
        // the start known durable there is nothing to make durable.
        // With its zeroed end (format version 3) only if there is room for
        // it: the copy is written while the old file still exists, so it
        // must not need more room than the log itself (a nearly full disk
        // must still open); without it, the writer zero-fills again ahead
        // of the next group.
        QUIVER_RETURN_IF_ERROR(RewriteSegment(path, bytes, scan.valid_end, scan.zeroed_bytes));
        state_->stats.tail_bytes_truncated += scan.tail_bytes;
        ++state_->stats.wal_segments_rewritten;
        rewritten = true;
      } else if (scan.tail_bytes > 0 || scan.file_bytes < scan.valid_end) {
        // Cut a torn tail, or zero-fill a cut inside the last record's
        // padding, so appends continue at the aligned end. A zeroed end
        // (format version 3, zeroed_bytes) stays: the writer appends over it.
        QUIVER_RETURN_IF_ERROR(TruncateTail(path, scan.valid_end));
        state_->stats.tail_bytes_truncated += scan.tail_bytes;
      }
    }
    if (rewritten) QUIVER_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    // A checkpoint newer than the log's end (its last pages never reached
    // the disk): appending there would leave a sequence gap in the segment.
    // New records go to a new segment that starts after the checkpoint.
    if (state_->last_segment != 0 && wal_end < version_->roots.sequence) state_->last_segment = 0;
    return Status::Ok();
  }

  Status CheckSegmentHeader(const wal::SegmentScan& scan, SequenceNumber* expected_first) {
    if (fresh_uuid_) {
      state_->uuid = scan.header.uuid;
      fresh_uuid_ = false;
    } else if (scan.header.uuid != state_->uuid) {
      return CorruptionError(
          base::StrCat("WAL segment ", scan.header.segment_number, " belongs to another graph"));
    }
    if (first_header_ == 0) {
      // The first segment read must start no later than the group after
      // the checkpoint (with none, at sequence 1), whether or not it holds
      // a group: a header-only last segment after deleted ones replays
      // nothing, and would otherwise open with a silent gap.
      first_header_ = scan.header.first_sequence;
      if (first_header_ > covered_ + 1)
        return CorruptionError(base::StrCat(
            "WAL segment ", scan.header.segment_number, " starts at sequence ", first_header_, ", but ",
            covered_ == 0 ? std::string("with no checkpoint the log must start at sequence 1")
                          : base::StrCat("the checkpoint holds only up to sequence ", covered_),
            ": the segments with the sequences between are missing"));
    }
    if (*expected_first != 0 && scan.header.first_sequence != *expected_first)
      return CorruptionError(base::StrCat("WAL segment ", scan.header.segment_number, " starts at sequence ",
                                          scan.header.first_sequence, ", expected ", *expected_first));
    *expected_first = scan.next_sequence;
    return Status::Ok();
  }

  // Replays one group of a segment of `format_version`.
  Status Replay(SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload,
                std::uint32_t format_version) {
    SequenceNumber base_seq = version_->roots.sequence;
    if (last <= base_seq) return Status::Ok();  // covered by the checkpoint
    if (first != base_seq + 1)
      return CorruptionError(
          base::StrCat("WAL: sequence gap: recovered up to ", base_seq, ", next group starts at ", first));
    QUIVER_ASSIGN_OR_RETURN(std::vector<wal::LoggedBatch> batches, wal::DecodeGroup(payload));
    if (batches.empty() || batches.size() != last - first + 1)
      return CorruptionError("WAL: group size mismatch");
    in_group_ = true;
    for (const wal::LoggedBatch& lb : batches) {
      QUIVER_RETURN_IF_ERROR(ReplayLoggedBatch(processor_, lb, format_version, version_->roots, ctx_));
      ++state_->stats.wal_batches_replayed;
    }
    in_group_ = false;
    ++state_->stats.wal_groups_replayed;
    // Bounds the record of private blocks (a few words each): past the
    // bound, the blocks so far count as published from now on (copied when
    // changed, the originals freed then: free-now mode), which costs work
    // only for elements changed again later.
    if (replay_blocks_.size() > kMaxTrackedReplayBlocks) replay_blocks_.Clear();
    return Status::Ok();
  }

  // After the replay: builds every index whose contents the version does
  // not hold (the log declared it, or made it ready, after the checkpoint),
  // on io_threads threads. One its data violates is reported in OpenStats
  // and left unbuilt, for GraphImpl to drop with a logged commit.
  void BuildUnfinishedIndexes() {
    const auto start = std::chrono::steady_clock::now();
    storage::GraphRoots& g = version_->roots;
    const unsigned threads = base::ResolveThreads(options_.durable.io_threads);
    bool owned = false;
    for (std::size_t i = 0; i < g.catalog->indexes().size(); ++i) {
      if (g.catalog->indexes()[i].built) continue;
      if (!owned) index::OwnCatalog(g.catalog, ctx_);
      owned = true;
      index::PropertyIndex& p = g.catalog->mutable_indexes()[i];
      Status s = index::BuildIndex(g, *p.def, threads, ctx_, &p.root);
      if (!s.ok()) {
        p.root = index::IndexRoot{};
        p.root.key_width = p.def->key_width;
        p.state = IndexState::kBuilding;
        state_->stats.dropped_indexes.push_back(base::StrCat(p.def->name, ": ", s.message()));
        state_->indexes_to_drop.emplace_back(p.def->name, p.def->declared);
        continue;
      }
      p.state = IndexState::kReady;
      p.built = true;
      ++state_->stats.indexes_built;
    }
    if (!owned) return;  // nothing to build: no time to count
    state_->stats.index_build_microseconds += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count());
  }

  Status TruncateTail(const std::string& path, std::uint64_t size) {
    QUIVER_ASSIGN_OR_RETURN(auto file, fs_->OpenWritable(path, env::OpenMode::kCreateOrOpen));
    QUIVER_RETURN_IF_ERROR(file->Truncate(size));
    QUIVER_RETURN_IF_ERROR(file->Sync());
    return file->Close();
  }

  // Writes bytes [0, size) of `bytes` (zeros past its end) to `to`, synced.
  // Reserves nothing ahead: the copy needs only its own size on disk (the
  // writer reserves room for appends when it reopens the segment, and goes
  // on without a reservation if there is none).
  // `zeros` more zero bytes follow [0, size) if the file system has room for
  // them: a segment's zeroed end (format 3) is copied when it fits, so a
  // copy is normally the file it replaces, byte for byte, and is dropped
  // when it does not (the writer fills again), so a nearly full disk still
  // opens.
  Status WriteCopy(const std::string& to, std::span<const std::byte> bytes, std::uint64_t size,
                   std::uint64_t zeros = 0) {
    QUIVER_ASSIGN_OR_RETURN(auto file, fs_->OpenWritable(to, env::OpenMode::kTruncate));
    std::uint64_t n = std::min<std::uint64_t>(size, bytes.size());
    QUIVER_RETURN_IF_ERROR(file->Append(bytes.first(n)));
    if (n < size) QUIVER_RETURN_IF_ERROR(file->Append(std::vector<std::byte>(size - n)));
    if (zeros != 0) {
      Status z = file->Append(std::vector<std::byte>(zeros));
      if (z.code() == StatusCode::kResourceExhausted) z = file->Truncate(size);
      QUIVER_RETURN_IF_ERROR(z);
    }
    QUIVER_RETURN_IF_ERROR(file->Sync());
    return file->Close();
  }

  // Makes the valid prefix [0, size) of segment `path` durable for certain.
  // Bytes read back after a crash may come from the page cache only: after
  // a failed fsync Linux keeps a page readable that it never writes, and a
  // later fsync does not write it either. Syncing the file again proves
  // nothing; writing the bytes again does. They go to a new file, synced,
  // that replaces the segment by rename (never an overwrite in place, which
  // a torn write could turn into damage of acknowledged records). A crash
  // leaves the old file or the new one, both holding what was read.
  Status RewriteSegment(const std::string& path, std::span<const std::byte> bytes, std::uint64_t size,
                        std::uint64_t zeros = 0) {
    std::string tmp = path + ".tmp";
    QUIVER_RETURN_IF_ERROR(WriteCopy(tmp, bytes, size, zeros));
    return fs_->Rename(tmp, path);
  }

  // The name `path` is set aside under: <path>.salvaged, or, if an earlier
  // salvage already left that (no checkpoint since), <path>.salvaged.<k>
  // with the smallest free k. Rename replaces its target, so a reused name
  // would destroy the bytes the earlier salvage kept.
  Result<std::string> FreshSalvagedName(const std::string& path) {
    std::string name = path + kSalvagedSuffix;
    for (int k = 1;; ++k) {
      QUIVER_ASSIGN_OR_RETURN(bool exists, fs_->Exists(name));
      if (!exists) return name;
      name = base::StrCat(path, kSalvagedSuffix, ".", k);
    }
  }

  // salvage_wal_prefix: keep what replayed; set the damaged segment and
  // every later one aside (renamed to *.salvaged, or *.salvaged.<k> if that
  // name is taken; never edited, never overwritten) and put a
  // copy of the damaged segment's valid prefix in its place. Each step is
  // durable before the next, so a crash anywhere loses nothing the next
  // salvage could read:
  //   1. the copy, as <segment>.prefix, synced, and its directory entry
  //      (a crash leaves the original in place; Open removes the copy);
  //   2. the later segments renamed aside (a crash leaves the damaged
  //      segment last: a later open reads its valid prefix again);
  //   3. the damaged segment renamed aside (a crash leaves the copy without
  //      its segment: Open puts it in place, see ListAndClean);
  //   4. the copy renamed to the segment's name.
  //
  // Read-only, salvage happens in memory only: replay stops at the damage
  // and no file is touched.
  Status Salvage(const DirListing& listing, std::size_t index, std::span<const std::byte> bytes,
                 const wal::SegmentScan& scan) {
    state_->stats.salvaged = true;
    if (read_only_) {
      state_->last_segment = 0;
      return Status::Ok();
    }
    if (fresh_uuid_ && scan.header_valid) {
      // No checkpoint and no segment before this one: the graph is the one
      // this segment's header names, so the next segment carries its UUID.
      state_->uuid = scan.header.uuid;
      fresh_uuid_ = false;
    }
    std::string path = env::JoinPath(dir_, wal::SegmentFileName(listing.segments[index]));
    std::string copy = path + kPrefixCopySuffix;
    // With a damaged header nothing of the segment is valid: set it aside
    // with no copy in its place (a copy without a header would be a
    // damaged segment that no later Open gets past).
    const bool keep_prefix = scan.header_valid && scan.valid_end >= wal::kSegmentHeaderBytes;
    if (keep_prefix) {
      QUIVER_RETURN_IF_ERROR(WriteCopy(copy, bytes, scan.valid_end));
      QUIVER_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    }
    if (index + 1 < listing.segments.size()) {
      for (std::size_t k = index + 1; k < listing.segments.size(); ++k) {
        std::string later = env::JoinPath(dir_, wal::SegmentFileName(listing.segments[k]));
        QUIVER_ASSIGN_OR_RETURN(std::string aside, FreshSalvagedName(later));
        QUIVER_RETURN_IF_ERROR(fs_->Rename(later, aside));
      }
      QUIVER_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    }
    QUIVER_ASSIGN_OR_RETURN(std::string aside, FreshSalvagedName(path));
    QUIVER_RETURN_IF_ERROR(fs_->Rename(path, aside));
    QUIVER_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    if (keep_prefix) QUIVER_RETURN_IF_ERROR(fs_->Rename(copy, path));
    state_->next_segment = listing.segments.back() + 1;
    state_->last_segment = 0;
    return fs_->SyncDir(dir_);
  }

  env::FileSystem* fs_;
  const std::string& dir_;
  const Options& options_;
  const bool read_only_;                         // change nothing (Options::read_only)
  std::map<std::uint64_t, std::string> copies_;  // see DirListing::copies
  RecoveredState* state_;
  BatchProcessor processor_;
  storage::MutationContext ctx_{};
  storage::GroupBlocks replay_blocks_;  // blocks replay allocated and still uses (see ReplaySegments)
  storage::Version* version_ = nullptr;
  bool fresh_uuid_ = false;
  SequenceNumber first_header_ = 0;
  SequenceNumber covered_ = 0;  // the loaded checkpoint's sequence (0: none)
  // Where the loaded checkpoint says the group after it starts (0, 0: not
  // known; see CoveredEnd).
  std::uint64_t checkpoint_wal_segment_ = 0;
  std::uint64_t checkpoint_wal_offset_ = 0;
  bool in_group_ = false;  // a group's batches are being applied
};

}  // namespace

const Status& OpenOutOfMemory() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted, "Open: out of memory while recovering the graph; nothing was changed"));
  return *s;
}

namespace {
// Built before main: Open's first out-of-memory answer must not allocate.
[[maybe_unused]] const bool open_out_of_memory_built = (OpenOutOfMemory(), true);
}  // namespace

Result<RecoveredState> Recover(env::FileSystem* fs, const std::string& dir, const Options& options) {
  RecoveredState state;
  // Read first: a damaged one fails Open before anything is changed.
  Result<std::optional<graphdir::ImportJournal>> journal = graphdir::ReadImportJournal(fs, dir);
  if (!journal.ok()) return journal.status();
  state.import_journal = std::move(*journal);
  state.chain = new storage::VersionChain();  // throws with nothing to free
  std::optional<Rebuilder> rebuilder;
  Status s;
  try {
    rebuilder.emplace(fs, dir, options, &state);
    s = rebuilder->Run();
  } catch (const std::bad_alloc&) {
    // Out of memory in the checkpoint's load (its index builds at open run
    // side by side, each with its own collect and sort scratch), the log's
    // replay, the index builds after it or the files' buffers: a status,
    // never an exception, and the half-built version is freed like any
    // failed one. The loader leaves every table slot below a limit written
    // whatever throws (checkpoint_reader.cc, the rule at its top), so
    // DestroyGraph may read them.
    //
    // Also inside a replayed batch, which edits the one version in place
    // and has no rollback: replay retires in free-now mode, so no block is
    // left both linked and retired, or unlinked and unrecorded, and the
    // blocks it allocated are freed from its record whether the version
    // reaches them or not (one built for a place it never reached).
    s = OpenOutOfMemory();
  }
  if (!s.ok()) {
    if (rebuilder) rebuilder->Abandon();
    state.chain->Shutdown();
    return s;
  }
  return state;
}

}  // namespace quiver
