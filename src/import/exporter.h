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

#include <string>

#include "env/file_system.h"
#include "quiver/import.h"
#include "quiver/snapshot.h"

namespace quiver::import {

Result<ExportStats> RunExport(env::FileSystem* fs, const Snapshot& snap, const std::string& dir,
                              const ExportOptions& options);

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_EXPORTER_H_
