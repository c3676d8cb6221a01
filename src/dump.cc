#include "dump.h"

#include <cstdint>
#include <map>
#include <new>
#include <optional>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "checkpoint/checkpoint_dump.h"
#include "checkpoint/checkpoint_format.h"
#include "graph_dir.h"
#include "wal/wal_dump.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

namespace quiver {
namespace {

enum class FileKind { kCheckpoint, kSegment };

Status Named(std::string_view name, const Status& s) {
  return s.ok() ? s : Status(s.code(), base::StrCat(name, ": ", s.message()));
}

// Prints what `name`, a file of `kind` at `path`, holds, after a blank
// line if `*printed` (a file was printed before). Returns its status named
// after it, or nullopt if it does not exist (removed after the listing).
std::optional<Status> DumpOne(env::FileSystem* fs, const std::string& path, std::string_view name,
                              FileKind kind, const DumpOptions& options, const DumpLineFn& out,
                              bool* printed) {
  auto title = [&](std::uint64_t bytes) {
    if (*printed) out("");
    *printed = true;
    out(base::StrCat(name, " (", bytes, " bytes)"));
  };
  auto failed = [&](const Status& s) -> std::optional<Status> {
    if (s.code() == StatusCode::kNotFound) return std::nullopt;
    if (*printed) out("");
    *printed = true;
    out(name);
    out(base::StrCat("  ! ", s.message()));
    return Named(name, s);
  };
  if (kind == FileKind::kSegment) {
    // Whole, as recovery and Verify read a segment (at most
    // wal_segment_bytes plus a record).
    Result<std::vector<std::byte>> bytes = wal::ReadWholeFile(fs, path);
    if (!bytes.ok()) return failed(bytes.status());
    title(bytes->size());
    return Named(name, wal::DumpSegment(*bytes, options, out));
  }
  Result<std::unique_ptr<env::ReadableFile>> file = fs->OpenReadable(path);
  if (!file.ok()) return failed(file.status());
  Result<std::uint64_t> size = (*file)->Size();
  if (!size.ok()) return failed(size.status());
  title(*size);
  return Named(name, checkpoint::DumpCheckpoint(**file, options, out));
}

std::optional<FileKind> KindOf(std::string_view name) {
  if (checkpoint::ParseCheckpointFileName(name)) return FileKind::kCheckpoint;
  if (wal::ParseSegmentFileName(name)) return FileKind::kSegment;
  return std::nullopt;
}

}  // namespace

Status DumpGraphDirectory(env::FileSystem* fs, const std::string& dir, const DumpOptions& options,
                          const DumpLineFn& out) {
  if (dir.empty()) return InvalidArgumentError("DumpDirectory: the directory path is empty");
  if (!out) return InvalidArgumentError("DumpDirectory: no output function");
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  QUIVER_ASSIGN_OR_RETURN(graphdir::DirState state, graphdir::Inspect(fs, dir));
  // As VerifyDirectory decides it: nothing to dump is no success.
  if (state.kind == graphdir::DirKind::kForeign)
    return NotFoundError(
        base::StrCat(dir, " holds no graph: ", state.foreign_name, " is not a file Quiver writes"));
  if (state.kind == graphdir::DirKind::kEmpty && !state.identity)
    return NotFoundError(base::StrCat(dir, " holds no graph: no identity file, WAL segment or checkpoint"));
  std::map<std::uint64_t, std::string> checkpoints, segments;
  for (const std::string& name : names) {
    if (auto seq = checkpoint::ParseCheckpointFileName(name)) checkpoints[*seq] = name;
    if (auto n = wal::ParseSegmentFileName(name)) segments[*n] = name;
  }
  Status first;
  bool printed = false;
  auto dump = [&](const std::string& name, FileKind kind) {
    std::optional<Status> s = DumpOne(fs, env::JoinPath(dir, name), name, kind, options, out, &printed);
    if (s && first.ok()) first = *s;
  };
  if (options.checkpoint)
    for (const auto& [seq, name] : checkpoints) dump(name, FileKind::kCheckpoint);
  if (options.wal)
    for (const auto& [number, name] : segments) dump(name, FileKind::kSegment);
  return first;
}

Status DumpGraphFile(env::FileSystem* fs, const std::string& path, const DumpOptions& options,
                     const DumpLineFn& out) {
  if (!out) return InvalidArgumentError("DumpFile: no output function");
  std::string_view name = path;
  if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos)
    name.remove_prefix(slash + 1);
  const std::optional<FileKind> kind = KindOf(name);
  if (!kind)
    return InvalidArgumentError(base::StrCat("DumpFile: ", path,
                                             " is named neither as a WAL segment (wal-<n>.log) nor as a "
                                             "checkpoint (checkpoint-<sequence>.qck)"));
  bool printed = false;
  std::optional<Status> s = DumpOne(fs, path, name, *kind, options, out, &printed);
  if (!s) return NotFoundError(base::StrCat(path, ": no such file"));
  return *s;
}

// A hostile file can claim more bytes than memory holds (a segment is read
// whole, as Verify reads it): ResourceExhausted, never an exception.
Status DumpDirectory(std::string_view dir, const DumpOptions& options, const DumpLineFn& out) {
  try {
    return DumpGraphDirectory(env::PosixFileSystem(), std::string(dir), options, out);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(
        base::StrCat("dump ", dir, ": out of memory (a file too large to read whole)"));
  }
}

Status DumpFile(std::string_view path, const DumpOptions& options, const DumpLineFn& out) {
  try {
    return DumpGraphFile(env::PosixFileSystem(), std::string(path), options, out);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(
        base::StrCat("dump ", path, ": out of memory (a file too large to read whole)"));
  }
}

}  // namespace quiver
