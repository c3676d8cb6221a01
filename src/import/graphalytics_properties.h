// GraphalyticsProperties: what an LDBC Graphalytics dataset's NAME.properties
// file says about its graph (ImportSpec::graphalytics): the vertex and edge
// files, whether the graph is directed, and the edge property. The import
// reads it before anything else and imports the files it names.
//
// Grammar (a subset of Java's .properties, what the Graphalytics files use):
//   file     := line*
//   line     := blank | comment | entry
//   comment  := ws* ('#' | '!') any*
//   entry    := ws* key ws* ('=' | ':')? ws* value ws*
//   key      := a run of characters other than ws, '=' and ':'
// A line ending in an odd number of '\' continues on the next one (its
// leading white space dropped). Backslash escapes are not interpreted. The
// keys read, for NAME the file's name without ".properties":
//   graph.NAME.vertex-file            required; relative to the file's directory
//   graph.NAME.edge-file              required; likewise
//   graph.NAME.directed               required; true | false (any case)
//   graph.NAME.edge-properties.names  at most one name (the weight)
//   graph.NAME.edge-properties.types  as many types; `real` (double) only
//   graph.NAME.vertex-properties.names  must be absent or empty
// Every other key (meta.*, algorithms, algorithm parameters) is ignored.
//
// Example (tests/data/graphalytics/example-directed.properties, in part):
//   graph.example-directed.vertex-file = example-directed.v
//   graph.example-directed.edge-file = example-directed.e
//   graph.example-directed.directed = true
//   graph.example-directed.edge-properties.names = weight
//   graph.example-directed.edge-properties.types = real
// gives {.vertex_file = "<dir>/example-directed.v", .edge_file =
// "<dir>/example-directed.e", .directed = true, .weight_key = "weight"}.
#ifndef QUIVER_IMPORT_GRAPHALYTICS_PROPERTIES_H_
#define QUIVER_IMPORT_GRAPHALYTICS_PROPERTIES_H_

#include <cstdint>
#include <string>

#include "env/file_system.h"
#include "quiver/status.h"

namespace quiver::import {

struct GraphalyticsProperties {
  std::string path;         // the .properties file, as given
  std::string vertex_file;  // resolved against path's directory
  std::string edge_file;
  bool directed = true;
  std::string weight_key;  // the edge property's name; "" if the file declares none
  // The lines that named them (for messages about the files).
  std::uint64_t vertex_file_line = 0;
  std::uint64_t edge_file_line = 0;
  std::uint64_t names_line = 0;  // 0 if no edge-properties.names
};

// Reads `path`. Errors, all naming `path`: NotFound for a missing
// properties file (line 0) or a vertex or edge file it names that does not
// exist (at the naming line and value); InvalidArgument at the line and
// column for a repeated key, a `directed` that is not true or false, an
// empty file name, the edge file naming the vertex file, names and types
// of different counts, an empty name, a type other than
// `real`; InvalidArgument without a line for a missing required key;
// Unimplemented for more than one edge property or any vertex property.
Result<GraphalyticsProperties> ReadGraphalyticsProperties(env::FileSystem* fs, const std::string& path);

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_GRAPHALYTICS_PROPERTIES_H_
