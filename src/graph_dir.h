// GraphDir: what a durable graph's directory holds, and the decisions Open
// makes about a directory before it reads a byte of graph data: is it a
// graph, a new graph, or somebody else's directory?
//
// A graph directory holds only the files docs/directory.md lists: the
// identity file QUIVER, LOCK, WAL segments wal-<n>.log, checkpoints
// checkpoint-<seq>.qck, SEGMENTS, IMPORT while an atomic import runs, and
// names derived from those (QUIVER.tmp, IMPORT.tmp,
// checkpoint-<seq>.qck.tmp and wal-<n>.log.tmp while written; salvage's
// wal-<n>.log.prefix copy; wal-<n>.log.salvaged[.<k>] after a salvage). The identity file is written and
// synced when the graph is created, before its first WAL segment, so a
// directory that holds anything else and no identity file is not a graph
// and Open refuses it rather than adopting or cleaning it.
//
// Identity file bytes (16, little-endian):
//   magic   8 bytes "QUIVERDB"
//   version u32      directory format version (kDirFormatVersion)
//   crc     u32      CRC-32C of the 12 bytes before it
//
// Thread safety: free functions; the callers hold the directory's LOCK or
// are about to take it.
#ifndef QUIVER_GRAPH_DIR_H_
#define QUIVER_GRAPH_DIR_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "env/file_system.h"
#include "quiver/status.h"

namespace quiver::graphdir {

inline constexpr char kIdentityFileName[] = "QUIVER";
inline constexpr char kLockFileName[] = "LOCK";
// What a file is written under before it is renamed into place.
inline constexpr std::string_view kTmpSuffix = ".tmp";
// Version 1: the layout docs/directory.md describes. Never reuse a number.
inline constexpr std::uint32_t kDirFormatVersion = 1;
inline constexpr std::size_t kIdentityBytes = 16;

// What Inspect found.
enum class DirKind {
  kMissing,  // no such directory
  kEmpty,    // exists and holds no graph: nothing of Quiver's but its own
             // transient files, or an identity file whose creation stopped
             // before the first WAL segment was recorded (no commit was ever
             // acknowledged there)
  kGraph,    // holds an identity file and a graph's files
  kLegacy,   // WAL segments or checkpoints with a Quiver header but no
             // identity file: made by a Quiver from before the identity
             // file; Open adopts it (unrelated files beside them are kept)
  kForeign,  // holds a file Quiver never writes, and neither an identity
             // file nor a data file with a Quiver header
};

struct DirState {
  DirKind kind = DirKind::kMissing;
  bool identity = false;     // QUIVER is present (kGraph, or kEmpty after a stopped creation)
  std::string foreign_name;  // kForeign: the first file Quiver did not write
};

// For a file salvage set aside, "<segment or checkpoint>.salvaged" or
// "<...>.salvaged.<k>" (a later salvage never overwrites an earlier one's
// file), the name it had; nullopt for any other name.
std::optional<std::string_view> SalvagedStem(std::string_view name);

// Whether `name` is a file Quiver may write in a graph directory.
bool IsOwnFile(std::string_view name);
// Whether `name` is one of Quiver's own temporary files: the only names
// Open ever removes without being told to.
bool IsOwnTempFile(std::string_view name);

// The directory holding `path`: "." for a bare name, "/" for "/x"; empty
// for "/" and "." themselves. Trailing slashes are ignored.
std::string ParentDir(std::string path);

// Whether `name` is salvage's copy of a segment's valid prefix
// ("<segment>.prefix"), which recovery finishes or removes.
bool IsPrefixCopy(std::string_view name);

// Lists `dir` and classifies it; reads only the first bytes of data files,
// and only when the directory also holds files Quiver did not write (to
// tell a graph of an older Quiver from a stranger's directory). Errors
// other than a missing directory (not a directory, permission denied) come
// back as the file system reported them.
Result<DirState> Inspect(env::FileSystem* fs, const std::string& dir);

// Unimplemented if any WAL segment or checkpoint in `names` (the listing of
// `dir`) is of a newer format version, judged from its magic and version
// field alone (wal::NewerFormatVersion, checkpoint::NewerFormatVersion).
// Reads headers only; changes nothing. Open runs it before it takes LOCK
// or changes anything, so such a file is never truncated, removed,
// salvaged or skipped.
Status CheckFormatVersions(env::FileSystem* fs, const std::string& dir,
                           const std::vector<std::string>& names);

// Creates `dir` and every missing ancestor, top down, and after each
// creation fsyncs the parent it was created in, so that the new names
// survive power loss. With `sync_parents` false the syncs are skipped: a
// negative control for tests only.
Status CreateDirDurably(env::FileSystem* fs, const std::string& dir, bool sync_parents = true);

// Fsyncs every ancestor of `dir`, innermost first, up to the root ("/",
// or "." for a relative path), so that every name on the path to `dir` is
// durable even if an earlier, interrupted Open created some of them and
// died before syncing their parents. A few fsyncs; used only while a graph
// is being created.
Status SyncAncestors(env::FileSystem* fs, const std::string& dir);

// Whether `dir` may receive a new graph written whole into it (a backup, a
// bulk import): true if it exists and holds nothing but `allowed` names,
// false if it does not exist; FailedPrecondition naming the first other
// entry ("<what>: DIR is not empty (it holds "NAME"); <rule>"), else the
// file system's error.
Result<bool> CheckEmptyOrMissing(env::FileSystem* fs, const std::string& dir, std::string_view what,
                                 std::string_view rule, std::span<const std::string> allowed = {});

// The files a whole-graph write (a backup, a bulk import) may leave in its
// new directory: the identity file and a checkpoint, each with its .tmp.
// Unless Done() is
// called, the destructor removes them and then fsyncs the directory (best
// effort, never throwing), so a write cut short leaves the directory as
// empty as it was found, also after a power loss, and can be retried.
class RemoveUnlessDone {
 public:
  // `with_identity`: the identity file is one of the files written (a
  // new graph's), removed too; false when it was there before.
  RemoveUnlessDone(env::FileSystem* fs, const std::string& dir, std::uint64_t checkpoint_sequence,
                   bool with_identity = true);
  ~RemoveUnlessDone();
  RemoveUnlessDone(const RemoveUnlessDone&) = delete;
  RemoveUnlessDone& operator=(const RemoveUnlessDone&) = delete;
  void Done() { done_ = true; }

 private:
  env::FileSystem* const fs_;
  const std::string dir_;
  std::vector<std::string> paths_;
  bool done_ = false;
};

// Writes the identity file: QUIVER.tmp, fdatasync, rename, directory fsync.
Status WriteIdentity(env::FileSystem* fs, const std::string& dir);
// Reads and checks the identity file: Unimplemented if a newer Quiver wrote
// it (judged from its magic and version field alone, before any other
// check, so a newer layout of the file is recognised too), Corruption if
// damaged.
Status CheckIdentity(env::FileSystem* fs, const std::string& dir);

// SEGMENTS, the record of the newest WAL segment started, so that Open can
// tell a newest segment deleted by hand from one never written. Rewritten
// in place (one sector, fdatasync) after each new segment is durable and
// before anything in it is acknowledged. 20 bytes, little-endian:
//   magic   8 bytes "QVRSEGMT"
//   segment u64      number of the newest segment started
//   crc     u32      CRC-32C of the 16 bytes before it
inline constexpr char kSegmentsFileName[] = "SEGMENTS";
inline constexpr std::size_t kSegmentsBytes = 20;

// Records `segment` as the newest segment started (creating SEGMENTS and
// syncing the directory the first time).
Status RecordNewestSegment(env::FileSystem* fs, const std::string& dir, std::uint64_t segment);
// Corruption if SEGMENTS names a segment that is not on disk while no
// higher-numbered segment is either (and it was not set aside as
// *.salvaged): the newest segment was removed. OK if SEGMENTS is missing or
// torn (a crash while it was rewritten: the segment it named is durable).
Status CheckNewestSegment(env::FileSystem* fs, const std::string& dir);
// The segment SEGMENTS names: every segment up to it was durably started
// (header synced, name synced). nullopt if SEGMENTS is missing or torn.
Result<std::optional<std::uint64_t>> ReadNewestSegment(env::FileSystem* fs, const std::string& dir);
std::string EncodeSegments(std::uint64_t segment);

// IMPORT, the rollback record of an import into a populated graph
// (ImportOptions::atomic, include/quiver/import.h): written durably before
// the import's first write and removed durably once the import is durable
// or undone. While it exists, every vertex id at or above vertex_limit and
// every edge id at or above edge_limit belongs to the import (no other
// write runs meanwhile), so Open undoes a cut-short import by removing
// them and dropping the indexes it names (those the import may create).
// Little-endian:
//   magic         8 bytes "QVRIMPRT"
//   version       u32      kImportJournalVersion
//   vertex_limit  u64
//   edge_limit    u64
//   index_count   varint, then each name as varint length + UTF-8 bytes
//   crc           u32      CRC-32C of every byte before it
inline constexpr char kImportJournalFileName[] = "IMPORT";
inline constexpr std::uint32_t kImportJournalVersion = 1;
// A bigger record is damage (BeginImport refuses to write one).
inline constexpr std::uint64_t kMaxImportJournalBytes = std::uint64_t{64} << 20;

struct ImportJournal {
  std::uint64_t vertex_limit = 0;
  std::uint64_t edge_limit = 0;
  std::vector<std::string> indexes;
};

std::string EncodeImportJournal(const ImportJournal& journal);
// Corruption if `bytes` are not a whole, intact journal; Unimplemented if a
// newer Quiver wrote it (judged from the magic and version alone).
Result<ImportJournal> DecodeImportJournal(std::string_view bytes, const std::string& path);
// IMPORT.tmp, fdatasync, rename, directory fsync.
Status WriteImportJournal(env::FileSystem* fs, const std::string& dir, const ImportJournal& journal);
// nullopt if there is none.
Result<std::optional<ImportJournal>> ReadImportJournal(env::FileSystem* fs, const std::string& dir);
// Removes IMPORT and syncs the directory (OK if it is already gone).
Status RemoveImportJournal(env::FileSystem* fs, const std::string& dir);

// The identity file's bytes (exposed for golden tests).
std::string EncodeIdentity(std::uint32_t version = kDirFormatVersion);

}  // namespace quiver::graphdir

#endif  // QUIVER_GRAPH_DIR_H_
