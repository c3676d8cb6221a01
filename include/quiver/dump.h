// Dump: a durable graph's files as human-readable text, one record per
// line, for debugging and for the format docs' examples (the `quiver dump`
// command prints it). Like LevelDB's DumpFile: it reads through the same
// readers and decoders as recovery and Verify, takes no lock and changes
// nothing, so it may run beside a graph that has the directory open; it
// reads each segment whole while the writer may be appending to the last
// one, so such a dump can show a damaged or torn last group that a second
// run does not (as VerifyDirectory can).
//
// What it prints, per file (docs/wal_format.md and docs/checkpoint_format.md
// each have a section with an example):
//  - a WAL segment: its header (format version, graph UUID, segment number,
//    first sequence); each commit group (offset, bytes, sequence range);
//    each batch (sequence, the ids its adds received) and, with `values`,
//    its operations one per line; then where the log ends: the zeroed end,
//    a torn tail, or nothing;
//  - a checkpoint: its header (format version, UUID, sequence, id limits,
//    where the log continues); each block (offset, kind, payload bytes,
//    ids, CRC); the names of the label, edge type and property key blocks
//    and the index definitions with their ids; with `values`, each vertex
//    and edge; the end block's totals and the trailer.
// Values are typed (42 is an int64, 42.0 a double, "42" a string; x'00ff'
// bytes, f32[1.0, 2.5] a float vector). Ids print as v<n> (vertices) and
// e<n> (edges); in a WAL batch a reference to an element the same batch
// added prints as the id it received, marked "(new)". Labels, types, keys
// and index names print bare when they are identifiers, else quoted.
// Nothing depends on the time or the machine: the same files always give
// the same text. (A graph's UUID is random, chosen when it was created, and
// printed as stored.)
//
// Damage: the text shows everything up to the first record that fails a
// check, then one line "! stopped at offset N: <why>", and the call returns
// Corruption. A file of a newer format version is not read past its
// version field: one line "! <the Unimplemented message>", and the call
// returns Unimplemented. Each file is judged alone, as the reader of that
// file judges it: a torn tail is shown, never an error; whether the files
// form one graph's replay chain (a tail in a segment that is not the last,
// a missing segment) is VerifyDirectory's question (verify.h).
//
// Example:
//   quiver::Status s = quiver::DumpDirectory("graph", {.values = false},
//                                            [](std::string_view line) { std::cout << line << '\n'; });
//
// The text of a segment (docs/wal_format.md's worked example):
//   wal-00000000000000000001.log (20480 bytes)
//     header: format 4, graph 0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0, segment 1, first sequence 1
//     group at 4096, 4096 bytes, sequence 1
//       batch 1: first vertex v0, first edge e0, 1 operation
//         add vertex v0 :Person {name: "Ada"}
//     ...
//     group at 16384, 4096 bytes, sequences 4..5
//       batch 4: first vertex v2, first edge e1, 1 operation
//         set v0.born = 1815
//       batch 5: first vertex v2, first edge e1, 1 operation
//         set e0.since = 1.5
//     end: 4 groups, the log ends at 20480, the end of the file
// and of a checkpoint:
//   checkpoint-00000000000000000005.qck (267 bytes)
//     header: format 3, graph 0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0, sequence 5, vertex limit 2, ...
//     block at 80: labels, id 0, 9 bytes, crc ok
//       label 0: Person
//     ...
//     block at 163: vertices, ids 0..1, 32 bytes, crc ok
//       v0 :Person {name: "Ada", born: 1815}
//       v1 :Person {name: "Grace"}
//     block at 211: edges, id 0, 17 bytes, crc ok
//       e0 :KNOWS v0 -> v1 {since: 1.5}
//     block at 244: end, 3 bytes, crc ok: 2 live vertices, 1 live edge, 5 blocks before it
//     trailer at 263: the file's crc over the header and every block's crc matches
//
// Thread safety: both functions may be called from any thread, on any
// directory or file; `out` is called on the caller's thread, in order.
#ifndef QUIVER_DUMP_H_
#define QUIVER_DUMP_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "quiver/status.h"

namespace quiver {

struct DumpOptions {
  // Dump the WAL segments (wal-<n>.log) of a directory. Default true.
  // DumpFile ignores it (the file's name says what it is).
  bool wal = true;
  // Dump the checkpoints (checkpoint-<sequence>.qck) of a directory.
  // Default true. DumpFile ignores it.
  bool checkpoint = true;
  // Print the records themselves: a batch's operations, a checkpoint's
  // vertices and edges. Default true; false prints only the framing (headers,
  // groups and batches, blocks, names, index definitions), a line or a few
  // per megabyte of file.
  bool values = true;
  // The most commit groups of a segment, or vertices and edges of a
  // checkpoint, printed per file; the rest are read and checked as before
  // and counted in one line ("... N more ..."). 0 (the default): all.
  std::uint64_t max_records = 0;
};

// Receives the dump one line at a time, without a line break. The view is
// valid only during the call.
using DumpLineFn = std::function<void(std::string_view line)>;

// Dumps every checkpoint (by sequence) and then every WAL segment (by
// number) of the graph directory `dir`, as the top of this file says, to
// `out`. Other files (QUIVER, SEGMENTS, LOCK, *.tmp) are not dumped; a file
// removed between the listing and its reading (a checkpoint's cleanup) is
// left out. Returns OK if every file dumped was read whole; else the first
// file's problem, its message prefixed with the file's name: Corruption
// (the text says where), Unimplemented (a newer format), or the I/O error
// that stopped the reading, every file still dumped. NotFound if `dir`
// does not exist or holds no graph (no identity file, segment or
// checkpoint, or a file Quiver did not write), InvalidArgument for an empty
// path.
Status DumpDirectory(std::string_view dir, const DumpOptions& options, const DumpLineFn& out);

// Dumps one file, a WAL segment or a checkpoint, told apart by its name
// (wal-<n>.log, checkpoint-<sequence>.qck; any directory in front), as
// DumpDirectory dumps it. InvalidArgument for any other name, NotFound if
// it does not exist; otherwise as DumpDirectory.
Status DumpFile(std::string_view path, const DumpOptions& options, const DumpLineFn& out);

}  // namespace quiver

#endif  // QUIVER_DUMP_H_
