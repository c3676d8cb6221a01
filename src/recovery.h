// Recover: rebuilds a durable graph's state from its directory at Open.
//
//   1. fail with Unimplemented, before changing anything, if a segment or
//      checkpoint is of a format version this build does not read; remove
//      stale *.tmp files (interrupted checkpoints and rewrites) and finish
//      or remove an interrupted salvage copy;
//   2. load the newest checkpoint that passes every check, else the one
//      before it (Corruption if checkpoints exist and none is valid);
//   3. replay the WAL groups after the checkpoint's sequence, through the
//      same validation and apply code as the original commits, checking each
//      batch gets the sequence number and ids the log recorded (damage in
//      groups the checkpoint holds is skipped and counted);
//   4. write every segment that held a replayed group again (a synced copy
//      renamed over it: what was read may have been in the page cache
//      only), cut a torn tail of the last segment and remove a last segment
//      whose header never became durable;
//   5. build the indexes whose contents the version lacks (declared or made
//      ready in the replayed log; a loaded checkpoint's ready indexes are
//      built by the loader); one whose data violates it stays unbuilt and
//      is named in indexes_to_drop;
//   6. publish the result as one version.
// Every step is idempotent, so a crash during recovery leaves a directory
// the next Open recovers the same way.
#ifndef QUIVER_RECOVERY_H_
#define QUIVER_RECOVERY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/file_system.h"
#include "graph_dir.h"
#include "quiver/graph.h"
#include "quiver/options.h"
#include "storage/version.h"
#include "wal/batch_codec.h"
#include "wal/wal_format.h"
#include "write/batch_processor.h"

namespace quiver {

struct RecoveredState {
  storage::VersionChain* chain = nullptr;  // holds the recovered version; caller owns (Shutdown)
  wal::Uuid uuid{};
  std::uint64_t next_segment = 1;  // number for the first new segment
  // The last segment, if it survived with a valid header: appends continue
  // in it at `last_segment_size` (its valid end). 0 if there is none.
  std::uint64_t last_segment = 0;
  std::uint64_t last_segment_size = 0;
  std::uint64_t wal_bytes_read = 0;  // valid WAL bytes (for the checkpoint trigger)
  // First sequence of every segment with an intact header, by number: what
  // checkpoint cleanup needs to know which segments a checkpoint covers.
  std::map<std::uint64_t, SequenceNumber> segment_first;
  SequenceNumber last_checkpoint = 0;  // newest valid checkpoint's sequence
  std::uint64_t epoch = 0;             // last epoch used while building
  // The chain's allocated bytes when replay ended, before the version was
  // published: what recovery held at its end, blocks that replay superseded
  // included (tests report it).
  std::int64_t replay_end_allocated_bytes = 0;
  OpenStats stats;
  // Indexes the log declared whose data violates them: (name, declared).
  // Open drops each with a logged commit before it returns.
  std::vector<std::pair<std::string, SequenceNumber>> indexes_to_drop;
  // The rollback record of an import cut short (graph_dir.h, IMPORT): Open
  // undoes that import before it returns.
  std::optional<graphdir::ImportJournal> import_journal;
};

// Out of memory anywhere in recovery (the checkpoint's load, the index
// builds at open, the log's replay) answers ResourceExhausted
// (OpenOutOfMemory), never an exception; the half-built state is then not
// freed (recovery.cc says why).
Result<RecoveredState> Recover(env::FileSystem* fs, const std::string& dir, const Options& options);

// Open's answer when memory runs out: built as the library loads, so that
// giving it allocates nothing.
const Status& OpenOutOfMemory();

// Limits for replay: everything the log holds was valid when committed,
// even if the application has lowered its limits since.
Limits ReplayLimits();

// Private blocks replay (recovery's, the change feed's) tracks before it
// lets them count as published: about 16 MiB of record. Past it, the
// blocks so far are copied when changed, the originals freed then.
inline constexpr std::size_t kMaxTrackedReplayBlocks = std::size_t{1} << 20;

// Whether a logged batch (from a segment of `format_version`) replays onto
// `g`: it follows g's sequence and ids and validates. Corruption otherwise.
// `processor` is in replay mode (set_replay).
Status CheckLoggedBatch(BatchProcessor& processor, const wal::LoggedBatch& lb, std::uint32_t format_version,
                        const storage::GraphRoots& g);

// Replays one logged batch (from a segment of `format_version`) onto `g` as
// recovery does: CheckLoggedBatch, then it is applied and g's sequence
// advances. Recovery and the change feed's catch-up
// from the log (feed/log_replay.h) both replay through this.
Status ReplayLoggedBatch(BatchProcessor& processor, const wal::LoggedBatch& lb, std::uint32_t format_version,
                         storage::GraphRoots& g, storage::MutationContext& ctx);

// A new random graph id (RFC 4122 version 4).
wal::Uuid NewGraphUuid();

}  // namespace quiver

#endif  // QUIVER_RECOVERY_H_
