#include "dir_scan.h"

#include <algorithm>
#include <cstddef>

#include "checkpoint/checkpoint_format.h"
#include "env/file_system.h"
#include "wal/wal_format.h"

namespace quiver::crashloop {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The first sequence of a segment from its header; nullopt if unreadable.
std::optional<SequenceNumber> FirstSequence(const std::string& dir, std::uint64_t segment) {
  auto file = env::PosixFileSystem()->OpenReadable(env::JoinPath(dir, wal::SegmentFileName(segment)));
  if (!file.ok()) return std::nullopt;
  std::byte header[wal::kSegmentHeaderBytes];
  Result<std::size_t> n = (*file)->ReadAt(0, header);
  if (!n.ok()) return std::nullopt;
  auto h = wal::DecodeSegmentHeader(std::span<const std::byte>(header, *n));
  if (!h) return std::nullopt;
  return h->first_sequence;
}

}  // namespace

Result<DirScan> ScanDir(const std::string& dir) {
  env::FileSystem* fs = env::PosixFileSystem();
  QUIVER_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  DirScan scan;
  for (const std::string& name : names) {
    if (auto n = wal::ParseSegmentFileName(name)) scan.segments.push_back(*n);
    if (auto seq = checkpoint::ParseCheckpointFileName(name)) scan.checkpoints.push_back(*seq);
    if (EndsWith(name, ".tmp")) ++scan.tmp_files;
    auto file = fs->OpenReadable(env::JoinPath(dir, name));
    if (!file.ok()) continue;  // a directory or a file removed meanwhile
    if (Result<std::uint64_t> size = (*file)->Size(); size.ok()) scan.bytes += *size;
  }
  std::sort(scan.segments.begin(), scan.segments.end());
  std::sort(scan.checkpoints.begin(), scan.checkpoints.end());
  return scan;
}

std::optional<std::string> CheckTruncated(const std::string& dir) {
  Result<DirScan> scan = ScanDir(dir);
  if (!scan.ok()) return "cannot list the directory: " + scan.status().ToString();
  if (scan->checkpoints.size() > 2 || scan->tmp_files > 0)
    return std::to_string(scan->checkpoints.size()) + " checkpoints and " + std::to_string(scan->tmp_files) +
           " *.tmp files after a checkpoint";
  const SequenceNumber previous = scan->checkpoints.size() == 2 ? scan->checkpoints[0] : 0;
  std::uint64_t covered = 0;
  for (std::uint64_t segment : scan->segments) {
    std::optional<SequenceNumber> first = FirstSequence(dir, segment);
    if (!first) return "WAL segment " + std::to_string(segment) + " has no valid header";
    if (*first <= previous + 1) ++covered;
  }
  if (covered > 1)
    return std::to_string(covered) + " WAL segments start at or below sequence " +
           std::to_string(previous + 1) + " next to the checkpoints " + std::to_string(previous) + " and " +
           std::to_string(scan->checkpoints.back()) + " (at most 1 may)";
  return std::nullopt;
}

}  // namespace quiver::crashloop
