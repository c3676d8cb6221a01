#include "graph_dir.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/strings.h"
#include "checkpoint/checkpoint_format.h"
#include "wal/wal_format.h"

namespace quiver::graphdir {
namespace {

constexpr char kMagic[] = "QUIVERDB";  // 8 bytes, no terminator on disk
constexpr std::string_view kSalvagedSuffix = ".salvaged";
constexpr std::string_view kPrefixSuffix = ".prefix";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsDataFile(std::string_view name) {
  return checkpoint::ParseCheckpointFileName(name).has_value() || wal::ParseSegmentFileName(name).has_value();
}

constexpr char kSegmentsMagic[] = "QVRSEGMT";  // 8 bytes, no terminator on disk

void PutU32(std::string* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint32_t GetU32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::uint64_t GetU64(const char* p) { return GetU32(p) | (std::uint64_t{GetU32(p + 4)} << 32); }

// Writes `name` whole or not at all: `name`.tmp, fdatasync, rename,
// directory fsync.
Status WriteSynced(env::FileSystem* fs, const std::string& dir, const char* name, const std::string& bytes) {
  const std::string path = env::JoinPath(dir, name);
  const std::string tmp = path + std::string(kTmpSuffix);
  QUIVER_ASSIGN_OR_RETURN(auto file, fs->OpenWritable(tmp, env::OpenMode::kTruncate));
  QUIVER_RETURN_IF_ERROR(file->Append(env::AsBytes(bytes)));
  QUIVER_RETURN_IF_ERROR(file->Sync());
  QUIVER_RETURN_IF_ERROR(file->Close());
  QUIVER_RETURN_IF_ERROR(fs->Rename(tmp, path));
  return fs->SyncDir(dir);
}

}  // namespace

std::string ParentDir(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path == "/" || path == "." || path.empty()) return "";
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  std::string parent = path.substr(0, slash);
  while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
  return parent.empty() ? "/" : parent;
}

bool IsOwnTempFile(std::string_view name) {
  if (!EndsWith(name, kTmpSuffix)) return false;
  std::string_view base = name.substr(0, name.size() - kTmpSuffix.size());
  // Checkpoints and the identity file are written as *.tmp and renamed; so
  // are WAL segments that Open rewrites after replaying them.
  return base == kIdentityFileName || base == kImportJournalFileName || IsDataFile(base);
}

std::optional<std::string_view> SalvagedStem(std::string_view name) {
  // A later salvage never overwrites an earlier one's file: it adds ".<k>".
  const std::size_t digits = name.size() - std::min(name.size(), name.find_last_not_of("0123456789") + 1);
  if (digits > 0 && digits < name.size() && name[name.size() - digits - 1] == '.')
    name = name.substr(0, name.size() - digits - 1);
  if (!EndsWith(name, kSalvagedSuffix)) return std::nullopt;
  std::string_view stem = name.substr(0, name.size() - kSalvagedSuffix.size());
  if (!IsDataFile(stem)) return std::nullopt;
  return stem;
}

bool IsPrefixCopy(std::string_view name) {
  return EndsWith(name, kPrefixSuffix) &&
         wal::ParseSegmentFileName(name.substr(0, name.size() - kPrefixSuffix.size())).has_value();
}

bool IsOwnFile(std::string_view name) {
  return name == kIdentityFileName || name == kLockFileName || name == kSegmentsFileName ||
         name == kImportJournalFileName || IsOwnTempFile(name) || IsDataFile(name) || SalvagedStem(name) ||
         IsPrefixCopy(name);
}

namespace {

// The first bytes of `path` (fewer if the file is shorter).
Result<std::vector<std::byte>> ReadHead(env::FileSystem* fs, const std::string& path, std::size_t n) {
  QUIVER_ASSIGN_OR_RETURN(auto file, fs->OpenReadable(path));
  std::vector<std::byte> head(n);
  QUIVER_ASSIGN_OR_RETURN(std::size_t got, file->ReadAt(0, head));
  head.resize(got);
  return head;
}

// Whether data file `name` starts with a Quiver header: intact (magic and
// CRC) or of a newer format.
Result<bool> HasQuiverHeader(env::FileSystem* fs, const std::string& dir, std::string_view name) {
  const bool segment = wal::ParseSegmentFileName(name).has_value();
  QUIVER_ASSIGN_OR_RETURN(
      std::vector<std::byte> head,
      ReadHead(fs, env::JoinPath(dir, name), std::max(wal::kSegmentHeaderBytes, checkpoint::kHeaderBytes)));
  if (segment) return wal::DecodeSegmentHeader(head).has_value() || wal::NewerFormatVersion(head).has_value();
  return checkpoint::HeaderIsIntact(head) || checkpoint::NewerFormatVersion(head).has_value();
}

}  // namespace

Result<DirState> Inspect(env::FileSystem* fs, const std::string& dir) {
  Result<std::vector<std::string>> names = fs->ListDir(dir);
  if (!names.ok() && names.status().code() == StatusCode::kNotFound) {
    // ENOENT for the directory itself, or for one of its ancestors.
    return DirState{DirKind::kMissing, false, {}};
  }
  QUIVER_RETURN_IF_ERROR(names.status());
  DirState state{DirKind::kEmpty, false, {}};
  bool started = false;  // a WAL segment or checkpoint, or SEGMENTS: a graph's files
  std::vector<std::string_view> data;
  for (const std::string& name : *names) {
    state.identity |= name == kIdentityFileName;
    if (IsDataFile(name)) data.push_back(name);
    started |= IsDataFile(name) || SalvagedStem(name).has_value() || name == kSegmentsFileName;
    // lost+found is what a fresh ext* file system holds at its root: a
    // graph may live at a mount point.
    if (!IsOwnFile(name) && name != "lost+found" && state.foreign_name.empty()) state.foreign_name = name;
  }
  if (state.identity) {
    // QUIVER alone is a creation that stopped before its first segment was
    // recorded: nothing was ever committed there.
    state.kind = started ? DirKind::kGraph : DirKind::kEmpty;
    state.foreign_name.clear();
    return state;
  }
  if (!started) {
    if (!state.foreign_name.empty()) state.kind = DirKind::kForeign;
    return state;
  }
  if (state.foreign_name.empty()) {
    state.kind = DirKind::kLegacy;
    return state;
  }
  // Quiver's data files beside somebody else's: a graph of an older Quiver
  // (no identity file) if a data file really is Quiver's; else a stranger's
  // directory whose file names merely look like ours.
  for (std::string_view name : data) {
    QUIVER_ASSIGN_OR_RETURN(bool ours, HasQuiverHeader(fs, dir, name));
    if (ours) {
      state.kind = DirKind::kLegacy;
      state.foreign_name.clear();
      return state;
    }
  }
  state.kind = DirKind::kForeign;
  return state;
}

Status CheckFormatVersions(env::FileSystem* fs, const std::string& dir,
                           const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const bool segment = wal::ParseSegmentFileName(name).has_value();
    if (!segment && !checkpoint::ParseCheckpointFileName(name)) continue;
    const std::string path = env::JoinPath(dir, name);
    QUIVER_ASSIGN_OR_RETURN(std::vector<std::byte> head,
                            ReadHead(fs, path, std::max(wal::kSegmentHeaderBytes, checkpoint::kHeaderBytes)));
    const std::optional<std::uint32_t> newer =
        segment ? wal::NewerFormatVersion(head) : checkpoint::NewerFormatVersion(head);
    if (newer)
      return segment ? wal::UnknownVersionError(path, *newer, wal::kOldestFormatVersion, wal::kFormatVersion)
                     : wal::UnknownVersionError(path, *newer, checkpoint::kOldestFormatVersion,
                                                checkpoint::kFormatVersion);
  }
  return Status::Ok();
}

Status CreateDirDurably(env::FileSystem* fs, const std::string& dir, bool sync_parents) {
  // The missing ancestors, innermost first.
  std::vector<std::string> missing;
  for (std::string p = dir; !p.empty(); p = ParentDir(p)) {
    QUIVER_ASSIGN_OR_RETURN(bool exists, fs->Exists(p));
    if (exists) break;
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    QUIVER_RETURN_IF_ERROR(fs->CreateDir(*it));
    if (sync_parents) QUIVER_RETURN_IF_ERROR(fs->SyncDir(ParentDir(*it)));
  }
  return Status::Ok();
}

Status SyncAncestors(env::FileSystem* fs, const std::string& dir) {
  for (std::string p = ParentDir(dir); !p.empty(); p = ParentDir(p)) QUIVER_RETURN_IF_ERROR(fs->SyncDir(p));
  return Status::Ok();
}

std::string EncodeIdentity(std::uint32_t version) {
  std::string out(kMagic, 8);
  PutU32(&out, version);
  PutU32(&out, base::Crc32c(out.data(), out.size()));
  return out;
}

Result<bool> CheckEmptyOrMissing(env::FileSystem* fs, const std::string& dir, std::string_view what,
                                 std::string_view rule, std::span<const std::string> allowed) {
  QUIVER_ASSIGN_OR_RETURN(bool exists, fs->Exists(dir));
  if (!exists) return false;
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  for (const std::string& name : names) {
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    return FailedPreconditionError(
        base::StrCat(what, ": ", dir, " is not empty (it holds \"", name, "\"); ", rule));
  }
  return true;
}

RemoveUnlessDone::RemoveUnlessDone(env::FileSystem* fs, const std::string& dir,
                                   std::uint64_t checkpoint_sequence, bool with_identity)
    : fs_(fs), dir_(dir) {
  const std::string checkpoint = env::JoinPath(dir, checkpoint::CheckpointFileName(checkpoint_sequence));
  paths_ = {checkpoint, checkpoint + std::string(kTmpSuffix)};
  if (!with_identity) return;
  const std::string identity = env::JoinPath(dir, kIdentityFileName);
  paths_.insert(paths_.begin(), {identity, identity + std::string(kTmpSuffix)});
}

RemoveUnlessDone::~RemoveUnlessDone() {
  if (done_) return;
  bool removed = false;
  for (const std::string& p : paths_) {
    try {
      removed |= fs_->Remove(p).ok();
    } catch (...) {
    }
  }
  // A removal not made durable could be undone by a power loss: a synced
  // checkpoint coming back would be adopted as a graph the caller was told
  // failed.
  if (!removed) return;
  try {
    fs_->SyncDir(dir_).IgnoreError();
  } catch (...) {
  }
}

Status WriteIdentity(env::FileSystem* fs, const std::string& dir) {
  return WriteSynced(fs, dir, kIdentityFileName, EncodeIdentity());
}

Status CheckIdentity(env::FileSystem* fs, const std::string& dir) {
  const std::string path = env::JoinPath(dir, kIdentityFileName);
  QUIVER_ASSIGN_OR_RETURN(auto file, fs->OpenReadable(path));
  char buf[kIdentityBytes + 1];
  QUIVER_ASSIGN_OR_RETURN(std::size_t n, file->ReadAt(0, std::as_writable_bytes(std::span<char>(buf))));
  // The version first, from the magic and the version field alone: a newer
  // identity file may be longer or laid out otherwise after them. As for
  // the WAL (wal::NewerFormatVersion), a version above wal::
  // kMaxFormatVersion is damage, and so is this build's layout whose CRC
  // matches once the version is put back (a flipped version bit).
  if (n >= 12 && std::memcmp(buf, kMagic, 8) == 0) {
    const std::uint32_t version = GetU32(buf + 8);
    const bool flipped =
        n >= kIdentityBytes && GetU32(buf + 12) == GetU32(EncodeIdentity(kDirFormatVersion).data() + 12);
    if (version > kDirFormatVersion && version <= wal::kMaxFormatVersion && !flipped)
      return UnimplementedError(base::StrCat("graph directory written by a newer Quiver (directory format ",
                                             version, ", this build reads up to ", kDirFormatVersion,
                                             "): ", path, "; nothing in the directory was changed"));
  }
  if (n != kIdentityBytes || std::memcmp(buf, kMagic, 8) != 0 || GetU32(buf + 12) != base::Crc32c(buf, 12))
    return CorruptionError(base::StrCat("damaged identity file (expected ", kIdentityBytes,
                                        " bytes starting \"QUIVERDB\" with a valid CRC): ", path));
  const std::uint32_t version = GetU32(buf + 8);
  if (version == 0 || version > kDirFormatVersion)
    return CorruptionError(base::StrCat("identity file names directory format ", version, ": ", path));
  return Status::Ok();
}

std::string EncodeSegments(std::uint64_t segment) {
  std::string out(kSegmentsMagic, 8);
  PutU32(&out, static_cast<std::uint32_t>(segment));
  PutU32(&out, static_cast<std::uint32_t>(segment >> 32));
  PutU32(&out, base::Crc32c(out.data(), out.size()));
  return out;
}

Status RecordNewestSegment(env::FileSystem* fs, const std::string& dir, std::uint64_t segment) {
  const std::string bytes = EncodeSegments(segment);
  QUIVER_ASSIGN_OR_RETURN(
      auto file, fs->OpenWritable(env::JoinPath(dir, kSegmentsFileName), env::OpenMode::kCreateOrOpen));
  const bool created = file->Size() == 0;
  // One write inside one sector: a crash leaves the old or the new record.
  QUIVER_RETURN_IF_ERROR(file->WriteAt(0, env::AsBytes(bytes)));
  QUIVER_RETURN_IF_ERROR(file->Sync());
  QUIVER_RETURN_IF_ERROR(file->Close());
  return created ? fs->SyncDir(dir) : Status::Ok();
}

Result<std::optional<std::uint64_t>> ReadNewestSegment(env::FileSystem* fs, const std::string& dir) {
  auto file = fs->OpenReadable(env::JoinPath(dir, kSegmentsFileName));
  if (!file.ok() && file.status().code() == StatusCode::kNotFound) return std::optional<std::uint64_t>();
  QUIVER_RETURN_IF_ERROR(file.status());
  char buf[kSegmentsBytes];
  QUIVER_ASSIGN_OR_RETURN(std::size_t n,
                          (*file)->ReadAt(0, std::as_writable_bytes(std::span<char>(buf, kSegmentsBytes))));
  if (n != kSegmentsBytes || std::memcmp(buf, kSegmentsMagic, 8) != 0 ||
      GetU32(buf + 16) != base::Crc32c(buf, 16))
    return std::optional<std::uint64_t>();
  return std::optional<std::uint64_t>(GetU64(buf + 8));
}

Status CheckNewestSegment(env::FileSystem* fs, const std::string& dir) {
  QUIVER_ASSIGN_OR_RETURN(std::optional<std::uint64_t> newest, ReadNewestSegment(fs, dir));
  if (!newest) return Status::Ok();
  const std::uint64_t recorded = *newest;
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  for (const std::string& name : names) {
    std::string_view stem = SalvagedStem(name).value_or(name);
    if (auto number = wal::ParseSegmentFileName(stem); number && *number >= recorded) return Status::Ok();
  }
  return CorruptionError(base::StrCat("WAL segment ", wal::SegmentFileName(recorded), " is missing from ",
                                      dir,
                                      ": SEGMENTS records it as the newest segment started, and no later one "
                                      "exists; the commits it held would be lost. Restore it, or remove "
                                      "SEGMENTS to open without them"));
}

namespace {

constexpr char kImportJournalMagic[] = "QVRIMPRT";  // 8 bytes, no terminator on disk

}  // namespace

std::string EncodeImportJournal(const ImportJournal& journal) {
  std::vector<std::byte> out;
  base::ByteWriter w(&out);
  w.PutBytes(kImportJournalMagic, 8);
  w.PutU32(kImportJournalVersion);
  w.PutU64(journal.vertex_limit);
  w.PutU64(journal.edge_limit);
  w.PutVarint(journal.indexes.size());
  for (const std::string& name : journal.indexes) w.PutString(name);
  w.PutU32(base::Crc32c(out.data(), out.size()));
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

Result<ImportJournal> DecodeImportJournal(std::string_view bytes, const std::string& path) {
  auto damaged = [&path](std::string_view why) {
    return CorruptionError(base::StrCat("import rollback record ", path, " is damaged (", why,
                                        "): what the cut-short import wrote cannot be told apart"));
  };
  if (bytes.size() >= 12 && std::memcmp(bytes.data(), kImportJournalMagic, 8) == 0) {
    const std::uint32_t version = GetU32(bytes.data() + 8);
    // Newer only if intact as it is: a flipped version bit, or any other
    // damage, is Corruption.
    const bool intact = bytes.size() >= 16 && GetU32(bytes.data() + bytes.size() - 4) ==
                                                  base::Crc32c(bytes.data(), bytes.size() - 4);
    if (version > kImportJournalVersion && intact)
      return UnimplementedError(base::StrCat("import rollback record ", path,
                                             " written by a newer Quiver (version ", version,
                                             ", this build reads ", kImportJournalVersion, ")"));
  }
  if (bytes.size() < 12 + 4 || std::memcmp(bytes.data(), kImportJournalMagic, 8) != 0)
    return damaged("no header");
  const std::size_t body = bytes.size() - 4;
  if (GetU32(bytes.data() + body) != base::Crc32c(bytes.data(), body)) return damaged("CRC mismatch");
  base::ByteReader r(std::as_bytes(std::span<const char>(bytes.data(), body)).subspan(8));
  std::uint32_t version = 0;
  ImportJournal j;
  std::uint64_t count = 0;
  if (!r.GetU32(&version) || version != kImportJournalVersion || !r.GetU64(&j.vertex_limit) ||
      !r.GetU64(&j.edge_limit) || !r.GetVarint(&count) || count > r.remaining())
    return damaged("bad fields");
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string_view name;
    if (!r.GetString(&name)) return damaged("bad index name");
    j.indexes.emplace_back(name);
  }
  if (r.remaining() != 0) return damaged("trailing bytes");
  return j;
}

Status WriteImportJournal(env::FileSystem* fs, const std::string& dir, const ImportJournal& journal) {
  return WriteSynced(fs, dir, kImportJournalFileName, EncodeImportJournal(journal));
}

Result<std::optional<ImportJournal>> ReadImportJournal(env::FileSystem* fs, const std::string& dir) {
  const std::string path = env::JoinPath(dir, kImportJournalFileName);
  Result<std::unique_ptr<env::ReadableFile>> file = fs->OpenReadable(path);
  if (!file.ok() && file.status().code() == StatusCode::kNotFound) return std::optional<ImportJournal>();
  QUIVER_RETURN_IF_ERROR(file.status());
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, (*file)->Size());
  if (size > kMaxImportJournalBytes)
    return CorruptionError(base::StrCat("import rollback record ", path, " is damaged (", size, " bytes)"));
  std::string bytes(size, '\0');
  QUIVER_ASSIGN_OR_RETURN(std::size_t n,
                          (*file)->ReadAt(0, std::as_writable_bytes(std::span<char>(bytes.data(), size))));
  bytes.resize(n);
  QUIVER_ASSIGN_OR_RETURN(ImportJournal j, DecodeImportJournal(bytes, path));
  return std::optional<ImportJournal>(std::move(j));
}

Status RemoveImportJournal(env::FileSystem* fs, const std::string& dir) {
  Status s = fs->Remove(env::JoinPath(dir, kImportJournalFileName));
  if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
  return fs->SyncDir(dir);
}

}  // namespace quiver::graphdir
