#include "verify.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "graph_dir.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

namespace quiver {
namespace {

// Missing segments listed one by one, at most this many per gap (a gap
// larger than that is one name too many to be a deletion by hand anyway).
constexpr std::uint64_t kMaxMissingListed = 64;

// What the chain checks need of a file whose own checks passed.
struct CheckpointFacts {
  bool valid = false;
  checkpoint::Header header;
};
struct SegmentFacts {
  bool valid = false;  // header intact and every check of the file passed
  wal::Uuid uuid{};
  SequenceNumber first = 0;  // the header's first sequence
  SequenceNumber next = 0;   // the sequence the next segment must start at
  std::uint64_t valid_end = 0;
};

Status Named(const std::string& name, const Status& s) {
  return Status(s.code(), base::StrCat(name, ": ", s.message()));
}

// Checks one checkpoint file; nullopt if it was removed after the listing.
std::optional<VerifiedFile> CheckCheckpoint(env::FileSystem* fs, const std::string& dir,
                                            const std::string& name, SequenceNumber sequence,
                                            CheckpointFacts* facts) {
  VerifiedFile f;
  f.name = name;
  f.kind = VerifiedFileKind::kCheckpoint;
  f.first_sequence = f.last_sequence = sequence;
  auto file = fs->OpenReadable(env::JoinPath(dir, name));
  if (!file.ok() && file.status().code() == StatusCode::kNotFound) return std::nullopt;
  if (!file.ok()) {
    f.status = file.status();
    return f;
  }
  Result<std::uint64_t> size = (*file)->Size();
  if (size.ok()) f.bytes = *size;
  checkpoint::Header h;
  std::uint64_t bad = 0;
  Status s = checkpoint::VerifyCheckpointFile(**file, &h, &bad);
  if (s.ok() && h.sequence != sequence) {
    s = CorruptionError(
        base::StrCat("checkpoint: its header says sequence ", h.sequence, ", its name ", sequence));
    bad = 0;
  }
  if (s.ok()) {
    f.format_version = h.version;
    facts->valid = true;
    facts->header = h;
  } else if (s.code() == StatusCode::kCorruption) {
    f.first_bad_offset = bad;
  }
  f.status = std::move(s);
  return f;
}

// Checks one segment file as recovery reads it, with nothing covered: any
// damage is reported. nullopt if it was removed after the listing.
// `started`: SEGMENTS named this segment (or a later one) before the
// listing, so its start completed (header synced).
std::optional<VerifiedFile> CheckSegment(env::FileSystem* fs, const std::string& dir, const std::string& name,
                                         std::uint64_t number, bool last, bool started, SegmentFacts* facts) {
  VerifiedFile f;
  f.name = name;
  f.kind = VerifiedFileKind::kWalSegment;
  Result<std::vector<std::byte>> bytes = wal::ReadWholeFile(fs, env::JoinPath(dir, name));
  if (!bytes.ok() && bytes.status().code() == StatusCode::kNotFound) return std::nullopt;
  if (!bytes.ok()) {
    f.status = bytes.status();
    return f;
  }
  f.bytes = bytes->size();
  wal::SegmentScan scan;
  Status s = wal::ScanSegment(
      *bytes, [](SequenceNumber, SequenceNumber, std::span<const std::byte>) { return Status::Ok(); }, &scan);
  if (!s.ok()) {
    if (s.code() == StatusCode::kCorruption) f.first_bad_offset = scan.bad_offset;
    f.status = std::move(s);
    return f;
  }
  if (!scan.header_valid) {
    // No longer than a header and not intact: a creation a crash
    // interrupted, which Open removes if it is the last segment.
    f.tail_bytes = bytes->size();
    f.first_bad_offset = 0;
    if (!last)
      f.status = CorruptionError("WAL segment header damaged, and later segments exist");
    else if (started)
      f.status = CorruptionError("WAL segment header damaged, and SEGMENTS shows its start completed");
    return f;
  }
  f.format_version = scan.header.format_version;
  f.first_sequence = scan.header.first_sequence;
  f.last_sequence = scan.next_sequence - 1;
  if (scan.header.segment_number != number) {
    f.first_bad_offset = 0;
    f.status = CorruptionError(base::StrCat("WAL segment: its header says segment ",
                                            scan.header.segment_number, ", its name ", number));
    return f;
  }
  if (scan.tail_bytes > 0) {
    f.tail_bytes = scan.tail_bytes;
    f.first_bad_offset = scan.valid_end;
    if (!last) {
      f.status = CorruptionError(base::StrCat("WAL segment: damaged or cut record at offset ", scan.valid_end,
                                              ", and later segments exist"));
      return f;
    }
  }
  facts->valid = true;
  facts->uuid = scan.header.uuid;
  facts->first = scan.header.first_sequence;
  facts->next = scan.next_sequence;
  facts->valid_end = scan.valid_end;
  return f;
}

VerifiedFile MissingSegment(std::uint64_t number, std::string why) {
  VerifiedFile f;
  f.name = wal::SegmentFileName(number);
  f.kind = VerifiedFileKind::kWalSegment;
  f.status = CorruptionError(base::StrCat("WAL segment missing: ", why));
  return f;
}

void Fail(VerifiedFile& f, Status s) {
  if (f.status.ok()) f.status = std::move(s);
}

class Verifier {
 public:
  Verifier(env::FileSystem* fs, const std::string& dir, const VerifyOptions& options)
      : fs_(fs), dir_(dir), options_(options) {}

  Result<VerifyReport> Run() {
    if (dir_.empty()) return InvalidArgumentError("VerifyDirectory: the directory path is empty");
    // Read before the listing: a segment it names had completed its start
    // before the listing saw it (a running writer records a segment only
    // then). Errors are CheckRecordedNewest's to report.
    Result<std::optional<std::uint64_t>> recorded = graphdir::ReadNewestSegment(fs_, dir_);
    const std::uint64_t started_up_to = recorded.ok() && recorded->has_value() ? **recorded : 0;
    QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
    QUIVER_ASSIGN_OR_RETURN(graphdir::DirState state, graphdir::Inspect(fs_, dir_));
    VerifyReport report;
    if (state.kind == graphdir::DirKind::kForeign ||
        (state.kind == graphdir::DirKind::kEmpty && !state.identity)) {
      report.status = NotFoundError(
          state.kind == graphdir::DirKind::kForeign
              ? base::StrCat(dir_, " holds no graph: ", state.foreign_name, " is not a file Quiver writes")
              : base::StrCat(dir_, " holds no graph: no identity file, WAL segment or checkpoint"));
      return report;
    }
    if (state.identity) CheckRecord(graphdir::kIdentityFileName, graphdir::CheckIdentity(fs_, dir_), &report);
    // An import's rollback record: Open refuses a damaged one.
    CheckRecord(graphdir::kImportJournalFileName, graphdir::ReadImportJournal(fs_, dir_).status(), &report);
    std::map<std::uint64_t, std::string> checkpoint_names, segment_names;
    for (const std::string& name : names) {
      if (auto seq = checkpoint::ParseCheckpointFileName(name)) checkpoint_names[*seq] = name;
      if (auto n = wal::ParseSegmentFileName(name)) segment_names[*n] = name;
    }
    for (const auto& [seq, name] : checkpoint_names) {
      CheckpointFacts facts;
      std::optional<VerifiedFile> f = CheckCheckpoint(fs_, dir_, name, seq, &facts);
      if (!f) continue;
      Report(*f);
      checkpoints_.emplace_back(std::move(*f), facts);
    }
    const std::uint64_t last_number = segment_names.empty() ? 0 : segment_names.rbegin()->first;
    for (const auto& [number, name] : segment_names) {
      SegmentFacts facts;
      std::optional<VerifiedFile> f =
          CheckSegment(fs_, dir_, name, number, number == last_number, number <= started_up_to, &facts);
      if (!f) continue;
      Report(*f);
      segments_.emplace(number, std::make_pair(std::move(*f), facts));
    }
    QUIVER_RETURN_IF_ERROR(CheckChain(names, &report));
    for (auto& [f, facts] : checkpoints_) report.files.push_back(std::move(f));
    for (auto& [number, entry] : segments_) report.files.push_back(std::move(entry.first));
    for (const VerifiedFile& f : report.files) {
      if (!f.status.ok()) {
        report.status = Named(f.name, f.status);
        break;
      }
    }
    return report;
  }

 private:
  void Report(const VerifiedFile& f) const {
    if (options_.progress) options_.progress(f);
  }

  // Adds QUIVER, IMPORT or SEGMENTS to the report if `s`, its check, failed.
  void CheckRecord(const char* name, Status s, VerifyReport* report) const {
    if (s.ok()) return;
    VerifiedFile f;
    f.name = name;
    f.kind = VerifiedFileKind::kDirectoryRecord;
    f.status = std::move(s);
    if (auto file = fs_->OpenReadable(env::JoinPath(dir_, name)); file.ok())
      if (Result<std::uint64_t> size = (*file)->Size(); size.ok()) f.bytes = *size;
    Report(f);
    report->files.push_back(std::move(f));
  }

  Status CheckChain(const std::vector<std::string>& names, VerifyReport* report) {
    // The graph's identity: the UUID most of its valid files carry, so that
    // a stray file of another graph (a backup's checkpoint copied in, newer
    // than the graph's own) is the one reported, whatever its sequence. A
    // tie goes to the newest valid segment's UUID (the log the writer
    // appends to), else to the newest valid checkpoint's.
    std::map<wal::Uuid, std::size_t> votes;
    std::optional<wal::Uuid> tie_break;
    for (auto& [f, facts] : checkpoints_)
      if (facts.valid) {
        ++votes[facts.header.uuid];
        tie_break = facts.header.uuid;
      }
    for (auto& [number, entry] : segments_)
      if (entry.second.valid) {
        ++votes[entry.second.uuid];
        tie_break = entry.second.uuid;
      }
    std::optional<wal::Uuid> uuid = tie_break;
    for (const auto& [candidate, count] : votes)
      if (count > votes.at(*uuid)) uuid = candidate;
    for (auto& [f, facts] : checkpoints_)
      if (facts.valid && facts.header.uuid != *uuid) {
        Fail(f, CorruptionError("checkpoint belongs to another graph (its UUID differs)"));
        facts.valid = false;
      }
    for (auto& [number, entry] : segments_)
      if (entry.second.valid && entry.second.uuid != *uuid) {
        Fail(entry.first, CorruptionError("WAL segment belongs to another graph (its UUID differs)"));
        entry.second.valid = false;
      }
    // The newest checkpoint left valid (of this graph).
    const CheckpointFacts* newest = nullptr;
    for (auto& [f, facts] : checkpoints_)
      if (facts.valid) newest = &facts;
    const SequenceNumber base = newest != nullptr ? newest->header.sequence : 0;
    CheckSegmentChain(base);
    CheckCheckpointPositions();
    return CheckRecordedNewest(names, report);
  }

  // Numbering without gaps, each segment continuing the one before, the
  // log reaching back to `base` + 1 (the newest valid checkpoint's next).
  void CheckSegmentChain(SequenceNumber base) {
    if (segments_.empty()) return;
    std::vector<std::pair<std::uint64_t, VerifiedFile>> missing;
    const std::uint64_t first_number = segments_.begin()->first;
    const SegmentFacts& first = segments_.begin()->second.second;
    if (first.valid && first.first > base + 1) {
      std::string why = base == 0 ? std::string("with no valid checkpoint the log must start at sequence 1")
                                  : base::StrCat("the newest valid checkpoint holds up to sequence ", base);
      why = base::StrCat(why, ", but the first segment present starts at sequence ", first.first);
      if (first_number > 1) {
        missing.emplace_back(first_number - 1, MissingSegment(first_number - 1, why));
      } else {
        Fail(segments_.begin()->second.first, CorruptionError(why));
      }
    }
    for (auto it = segments_.begin(); std::next(it) != segments_.end(); ++it) {
      auto next = std::next(it);
      const std::uint64_t a = it->first, b = next->first;
      if (b != a + 1) {
        for (std::uint64_t k = a + 1; k < b && k <= a + kMaxMissingListed; ++k)
          missing.emplace_back(k, MissingSegment(k, base::StrCat("segments ", a, " and ", b,
                                                                 " are present, the ones between are not")));
        continue;
      }
      const SegmentFacts& pa = it->second.second;
      const SegmentFacts& pb = next->second.second;
      if (pa.valid && pb.valid && pb.first != pa.next)
        Fail(next->second.first,
             CorruptionError(base::StrCat("WAL segment starts at sequence ", pb.first, ", but segment ", a,
                                          " ends at sequence ", pa.next - 1)));
    }
    for (auto& [number, f] : missing) segments_.emplace(number, std::make_pair(std::move(f), SegmentFacts{}));
  }

  // Each valid checkpoint's recorded log position lies in a segment that
  // holds (or ends just before) the sequence after the checkpoint's.
  void CheckCheckpointPositions() {
    for (auto& [f, facts] : checkpoints_) {
      if (!facts.valid || facts.header.wal_segment == 0) continue;
      auto it = segments_.find(facts.header.wal_segment);
      if (it == segments_.end() || !it->second.second.valid) continue;
      const SegmentFacts& s = it->second.second;
      const SequenceNumber after = facts.header.sequence + 1;
      if (s.first > after || s.next < after || facts.header.wal_offset > s.valid_end ||
          facts.header.wal_offset < wal::kSegmentHeaderBytes)
        Fail(f, CorruptionError(base::StrCat("checkpoint records that the log continues in segment ",
                                             facts.header.wal_segment, " at offset ", facts.header.wal_offset,
                                             ", but that segment holds sequences ", s.first, " to ",
                                             s.next - 1, " and ends at offset ", s.valid_end)));
    }
  }

  // SEGMENTS names the newest segment ever started: it must still be there
  // (or a later one, or a copy salvage set aside).
  Status CheckRecordedNewest(const std::vector<std::string>& names, VerifyReport* report) {
    QUIVER_ASSIGN_OR_RETURN(std::optional<std::uint64_t> recorded, graphdir::ReadNewestSegment(fs_, dir_));
    if (!recorded) {
      // Missing is fine (a graph that never rotated); present but unreadable
      // (a wrong magic or CRC) leaves a removed newest segment undetectable.
      // Open takes it for a write a crash tore and goes on; Verify says so.
      if (std::find(names.begin(), names.end(), graphdir::kSegmentsFileName) != names.end())
        CheckRecord(graphdir::kSegmentsFileName,
                    CorruptionError("damaged (wrong magic, size or CRC): whether the newest WAL segment "
                                    "is present cannot be checked; Open ignores it as torn by a crash"),
                    report);
      return Status::Ok();
    }
    auto highest_in = [](const std::vector<std::string>& listing) {
      std::uint64_t highest = 0;
      for (const std::string& name : listing) {
        std::string_view stem = graphdir::SalvagedStem(name).value_or(name);
        if (auto n = wal::ParseSegmentFileName(stem)) highest = std::max(highest, *n);
      }
      return highest;
    };
    std::uint64_t highest = highest_in(names);
    if (highest >= *recorded) return Status::Ok();
    // A running writer may have started a segment since the listing (it
    // records it in SEGMENTS after creating it): look again before calling
    // it missing. Rotation never removes a segment.
    QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> again, fs_->ListDir(dir_));
    highest = highest_in(again);
    if (highest >= *recorded) return Status::Ok();
    for (std::uint64_t k =
             std::max(highest + 1, *recorded > kMaxMissingListed ? *recorded - kMaxMissingListed : 1);
         k <= *recorded; ++k)
      segments_.emplace(
          k, std::make_pair(MissingSegment(k, base::StrCat("SEGMENTS records segment ", *recorded,
                                                           " as started, and no segment from ", highest + 1,
                                                           " on is present")),
                            SegmentFacts{}));
    return Status::Ok();
  }

  env::FileSystem* fs_;
  const std::string& dir_;
  const VerifyOptions& options_;
  std::vector<std::pair<VerifiedFile, CheckpointFacts>> checkpoints_;  // by sequence
  std::map<std::uint64_t, std::pair<VerifiedFile, SegmentFacts>> segments_;
};

}  // namespace

Result<VerifyReport> VerifyGraphDirectory(env::FileSystem* fs, const std::string& dir,
                                          const VerifyOptions& options) {
  return Verifier(fs, dir, options).Run();
}

}  // namespace quiver
