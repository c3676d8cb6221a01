// Export of one snapshot to files (quiver::Export, include/quiver/import.h):
// CSV in the typed-header convention the importer reads (vertices.csv,
// edges.csv), or EVLP (graph.v, graph.e). Reads only the snapshot, so the
// graph keeps committing meanwhile.
//
// CSV columns: `:ID` (the Quiver vertex id; not kept as a property when
// imported), `:LABEL`, then one `key:type` column per property key and
// value type in use, in key-id order. A cell is empty (unquoted) when the
// element does not hold that key with that type; an empty string, vector
// or bytes value is written as "".
//
// Example:
//   QUIVER_ASSIGN_OR_RETURN(ExportStats s, RunExport(fs, snap, "out", {}));
#ifndef QUIVER_IMPORT_EXPORTER_H_
#define QUIVER_IMPORT_EXPORTER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "env/file_system.h"
#include "quiver/import.h"
#include "quiver/snapshot.h"

namespace quiver::import {

// How an export cuts its work and bounds the text in flight (exporter.cc).
// Tests shrink it to reach every path with a small graph.
struct ExportTuning {
  std::uint64_t chunk_ids = 4096;                     // element ids per chunk
  std::size_t spill_bytes = std::size_t{1} << 20;     // a worker writes its chunk's text past this
  std::size_t pending_bytes = std::size_t{16} << 20;  // finished chunks' text waiting, at most
  std::uint64_t ring = 32;                            // finished chunks waiting, at most
};

// The status of an export that ran out of memory (built before main).
const Status& ExportOutOfMemory();

Result<ExportStats> RunExport(env::FileSystem* fs, const Snapshot& snap, const std::string& dir,
                              const ExportOptions& options, const ExportTuning& tuning = {});

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_EXPORTER_H_
