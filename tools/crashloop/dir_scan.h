// What a graph directory holds on disk: file counts for the crash loop's
// phase detection (an interrupted checkpoint leaves a *.tmp), its size
// bound, and the check that a checkpoint truncated the WAL.
//
// Reads through env::PosixFileSystem and the WAL's own header decoder.
// Thread safety: plain functions.
#ifndef QUIVER_TOOLS_CRASHLOOP_DIR_SCAN_H_
#define QUIVER_TOOLS_CRASHLOOP_DIR_SCAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quiver/ids.h"
#include "quiver/status.h"

namespace quiver::crashloop {

struct DirScan {
  std::vector<std::uint64_t> segments;      // WAL segment numbers, ascending
  std::vector<SequenceNumber> checkpoints;  // checkpoint files' sequences, ascending
  std::uint64_t tmp_files = 0;              // *.tmp: a checkpoint being written
  std::uint64_t bytes = 0;                  // all files
};

Result<DirScan> ScanDir(const std::string& dir);

// What docs/durability.md promises once a process that wrote a checkpoint
// (at Open or later) has closed the graph: "the newest and the previous
// one are kept; WAL segments whose every record is covered by the previous
// checkpoint are removed". So: at most two checkpoint files, no *.tmp, and
// at most one segment starting at or below previous + 1 (the segment that
// holds previous + 1 itself), previous being the older of the two files
// (0 if there is one). Returns what is left over, or nullopt if the
// directory is truncated.
std::optional<std::string> CheckTruncated(const std::string& dir);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_DIR_SCAN_H_
