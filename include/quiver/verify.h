// Verify: a scrub of a durable graph's files. VerifyDirectory reads every
// checkpoint and WAL segment of a graph directory, checks every CRC, the
// framing and the format versions of each file, and the replay chain that
// ties them together; it reports per file and changes nothing (no lock, no
// file created, written, truncated, renamed or removed). Graph::Verify does
// the same for an open graph's directory while it runs.
//
// The replay chain (docs/durability.md, "Verify"):
//  - every file belongs to one graph (the UUID in its header);
//  - WAL segment numbers are consecutive, and each segment starts at the
//    sequence after the last one of the segment before it;
//  - the log reaches back to the newest valid checkpoint (its first segment
//    starts at or before the checkpoint's sequence + 1; at sequence 1 with
//    no valid checkpoint);
//  - each checkpoint's recorded WAL position lies in a segment holding the
//    sequence after the checkpoint's;
//  - the newest segment recorded as started (the SEGMENTS file) exists.
// A missing segment is reported as a file of its own (bytes 0).
//
// Example:
//   quiver::Result<quiver::VerifyReport> r = quiver::VerifyDirectory("/var/lib/myapp/graph");
//   if (r.ok() && !r->status.ok())
//     for (const quiver::VerifiedFile& f : r->files)
//       if (!f.status.ok()) std::fprintf(stderr, "%s: %s\n", f.name.c_str(), f.status.ToString().c_str());
//
// Thread safety: VerifyDirectory may be called from any thread, on any
// directory, also one a graph has open (see its comment).
#ifndef QUIVER_VERIFY_H_
#define QUIVER_VERIFY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/ids.h"
#include "quiver/status.h"

namespace quiver {

// What a verified file is.
enum class VerifiedFileKind : std::uint8_t {
  kCheckpoint = 0,  // checkpoint-<sequence>.qck
  kWalSegment = 1,  // wal-<number>.log
  // QUIVER (the identity file), IMPORT (an atomic import's rollback
  // record) or SEGMENTS (the newest segment started), listed only when
  // damaged or of a newer format: Open refuses the first two, and without
  // the third the check that the newest segment is present cannot be made.
  kDirectoryRecord = 2,
};

// One file of a graph directory, as Verify found it.
struct VerifiedFile {
  std::string name;  // the file's name in the directory
  VerifiedFileKind kind = VerifiedFileKind::kWalSegment;
  std::uint64_t bytes = 0;  // the file's size (0 for a missing segment)
  // OK, or what is wrong: Corruption (a CRC, the framing, a header, a
  // segment missing or out of place in the replay chain, a file of another
  // graph), Unimplemented (a format this build does not read), or the I/O
  // error that stopped reading it.
  Status status;
  // Where the damage lies, for a status Corruption found inside the file:
  // the offset of the header (0), block or record that failed a check. For
  // an OK last segment with a torn tail: where the tail starts. nullopt
  // otherwise (a whole file missing or out of place, an OK file).
  std::optional<std::uint64_t> first_bad_offset;
  std::uint32_t format_version = 0;  // from the header; 0 if unreadable
  // A checkpoint: its sequence, twice. A segment: the sequence its header
  // says it starts at, and the last sequence of its last complete group
  // (first - 1 if it holds none).
  SequenceNumber first_sequence = 0;
  SequenceNumber last_sequence = 0;
  // The last segment: bytes after its last complete group, a tail a crash
  // tore (or a record being appended right now), which Open cuts: not an
  // error there. Any other segment with such bytes is Corruption.
  std::uint64_t tail_bytes = 0;
};

// What Verify found.
struct VerifyReport {
  // QUIVER and SEGMENTS if found wrong, the checkpoints by sequence, then
  // the segments by number (a missing one in its place).
  std::vector<VerifiedFile> files;
  // OK if every file is OK and together they form one graph's replay chain;
  // else the first problem, prefixed with its file's name.
  Status status;
  bool ok() const { return status.ok(); }
};

struct VerifyOptions {
  // Called once per file, in report order, as soon as the file is checked
  // (the chain checks, which need every file, may still change its status
  // in the final report). Default: none.
  //
  // Under Graph::Verify the callback runs while that graph's checkpoint
  // lock is held (so no checkpoint removes a file being read): it must not
  // call Checkpoint, Verify or Close on the same graph (they wait
  // for that lock: the call never returns), and while it runs the graph's
  // checkpoints, background ones included, wait. Keep it short; collect
  // what you need and act after Verify returns. Under VerifyDirectory no
  // lock is held.
  std::function<void(const VerifiedFile&)> progress = {};
};

// Reads every checkpoint and WAL segment in `dir` and checks them as the top
// of this file says, without opening the graph: it takes no lock and
// changes nothing, so it may run while another process has the graph open.
// A file removed between the listing and its reading (a checkpoint's
// cleanup) is left out; if a checkpoint's cleanup removes files meanwhile
// the chain may look broken: run it again. It does not load the graph, so
// it checks what the files say, not that every reference inside a
// checkpoint resolves (Open does that). QUIVER and SEGMENTS are checked
// (their magic, version and CRC) and listed only if found wrong; other
// names (LOCK, *.tmp, *.salvaged) are not listed. A directory holding no
// graph (empty, or only files Quiver did not write) gives a report with
// status NotFound: there is nothing to vouch for. Returns the report (its
// status says whether all is well), or the error listing `dir` gave
// (NotFound if it does not exist), InvalidArgument for an empty path.
//
// Example:
//   auto report = quiver::VerifyDirectory("/var/lib/myapp/graph").value();
//   bool healthy = report.ok();
Result<VerifyReport> VerifyDirectory(std::string_view dir, const VerifyOptions& options = {});

}  // namespace quiver

#endif  // QUIVER_VERIFY_H_
