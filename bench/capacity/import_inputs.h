// The import family's input files and the raw ceilings measured on them (import_family.cc times the
// engine beside these). Files are written with write(2) through a 1 MiB buffer and read with read(2)
// in 1 MiB chunks, on one thread. Every generator is seeded (kSeed), so a vertex count gives the
// same bytes on every run and machine; each keeps a few of the rows it wrote so that an import of
// the files can be checked against them. A failed read or write of an input stops the bench.
//
// EVLP (WriteEvlpInputs, V vertices):
//   graph.v  V lines, the ids 0..V-1 in a shuffled order (Fisher-Yates), so the file is not sorted
//   graph.e  10 lines "source target" per vertex, the sources in graph.v's order, each target a
//            uniformly random id; no weights
// CSV (WriteCsvInputs, V vertices; Neo4j-style headers, docs/import-export.md):
//   vertices.csv  "id:ID,name,age:int,score:double": the ids as graph.v's, a name of 6-12 lowercase
//                 letters, an age of 18-97, a score of 0-999.999 in steps of 0.001
//   edges.csv     ":START_ID,:END_ID,:TYPE,since:int": 10 per vertex as graph.e's, type KNOWS,
//                 since 1970-2025
// JSON Lines (WriteJsonlInputs, V vertices): the CSV files' rows as JSON objects, ids as strings:
//   vertices.jsonl  {"id":"17","properties":{"name":"abcdef","age":30,"score":12.5}}
//   edges.jsonl     {"start":"17","end":"4","type":"KNOWS","properties":{"since":1999}}
#ifndef QUIVER_BENCH_CAPACITY_IMPORT_INPUTS_H_
#define QUIVER_BENCH_CAPACITY_IMPORT_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "figure.h"

namespace quiver::capacity {

// Out-edges per vertex of both formats' files.
inline constexpr std::uint64_t kImportOutDegree = 10;
// Passes of each raw ceiling; the fastest is kept.
inline constexpr int kImportCeilingPasses = 3;

// One generated edge: its position in the edge file (from 0), its endpoints' ids and (CSV) since.
struct EdgeSample {
  std::uint64_t position;
  std::int64_t source, target, since;
};

// One generated CSV vertex: its position in the vertex file (from 0) and its fields.
struct VertexSample {
  std::uint64_t position;
  std::int64_t id, age;
  std::string name;
  double score;
};

// The files written for one import and what checking an import of them needs.
struct ImportInputs {
  std::string dir;
  std::vector<std::string> vertex_files, edge_files;
  std::uint64_t vertices = 0, edges = 0;
  std::uint64_t bytes = 0;         // of every file
  std::uint64_t endpoint_sum = 0;  // EVLP: of every edge line's two ids
  std::uint64_t int_sum = 0;       // JSON Lines: of every age and since
  std::vector<EdgeSample> edge_samples;
  std::vector<VertexSample> vertex_samples;  // CSV only
};

// Stops the bench: `what` went wrong in the import family (its inputs, raw ceilings or checks).
[[noreturn]] void ImportFail(const std::string& what);

// Writes the EVLP (CSV) files of `vertices` vertices into `dir`, which must exist.
ImportInputs WriteEvlpInputs(const std::string& dir, std::uint64_t vertices);
ImportInputs WriteCsvInputs(const std::string& dir, std::uint64_t vertices);
ImportInputs WriteJsonlInputs(const std::string& dir, std::uint64_t vertices);

// The raw ceilings: each runs kImportCeilingPasses times and returns the fastest pass's seconds.

// Seconds to read every file of `in` with read(2) in 1 MiB chunks.
double ReadInputSeconds(const ImportInputs& in);

// Seconds to read the EVLP edge files of `in` in 1 MiB chunks and parse each line's two integers
// with std::from_chars, summing them. Stops the bench unless the count and the sum are the
// generated ones.
double ParseEvlpSeconds(const ImportInputs& in);

// Seconds to read the CSV files of `in` in 1 MiB chunks counting ',' and '\n'. Stops the bench
// unless every line has 4 fields and each file a header and one line per row.
double SplitCsvSeconds(const ImportInputs& in);

// Seconds to read the JSON Lines files of `in` in 1 MiB chunks of whole lines and parse every line
// with simdjson's on-demand document stream (iterate_many), reading every member's value. Stops the
// bench unless the count of objects and the sum of the int values are the generated ones.
double ParseJsonlSeconds(const ImportInputs& in);

// Seconds to write `bytes` to a fresh file in `dir` with write(2) in 1 MiB chunks and then one
// fdatasync (one pass; the file is removed after), or the null pattern naming the call that failed.
Json SequentialWriteSeconds(const std::string& dir, std::uint64_t bytes);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_IMPORT_INPUTS_H_
