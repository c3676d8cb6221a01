// An independent reader of a graph directory, for the durability tests: it
// rebuilds the acknowledged state (vertices, edges, labels, types,
// properties, removals, the sequence number) from the files alone, without
// Graph::Open and without any of the engine's format code. It is written
// from docs/wal_format.md and docs/checkpoint_format.md only (its own
// CRC-32C, varints, record scanner, group decoder, replay and checkpoint
// parser), so where it and the engine agree, the documented format and the
// engine agree; where the docs were silent or wrong, the docs were fixed.
//
// It reads but never writes: the torn tail the engine would truncate is
// only skipped. It is strict where the docs are (CRCs, reserved bytes,
// sequence continuity, id limits, Corruption for damage followed by
// committed data), and it picks the newest checkpoint that passes every
// check, else the newest valid one before it, else (every checkpoint
// damaged) the log alone if it starts at sequence 1, as recovery does.
//
// Example:
//   Result<ReaderState> files = test::ReadGraphDirectory(dir);   // before Open changes them
//   auto graph = Graph::Open(options, dir);
//   if (auto diff = test::CompareWithSnapshot(*files, (*graph)->GetSnapshot())) FAIL() << *diff;
//
// Used by tests/independent_reader_test.cc, tests/durability_test.cc (on the
// simulated file system, through ReadGraphFiles) and quiver-crashloop's
// verifier. Thread safety: plain functions.
#ifndef QUIVER_TESTS_INDEPENDENT_READER_H_
#define QUIVER_TESTS_INDEPENDENT_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "quiver/snapshot.h"
#include "quiver/status.h"

namespace quiver::test {

// A property value: its type number (the format's: 0 null ... 6 float
// vector, 7 string list) and its payload bytes without the length prefix
// (1 byte for a bool, 8 little-endian bytes for int64 and double, the bytes
// of a string or bytes value, 4 bytes per float of a vector, and for a
// string list each element's length as 8 little-endian bytes then its
// bytes).
struct ReaderValue {
  std::uint8_t type = 0;
  std::string bytes;
  friend bool operator==(const ReaderValue&, const ReaderValue&) = default;
};

// One vertex or edge id. Removed ids stay (ids are never reused), not live.
struct ReaderElement {
  bool live = false;
  std::string name;          // the vertex's label or the edge's type
  std::uint64_t source = 0;  // edges only
  std::uint64_t target = 0;  // edges only
  std::map<std::string, ReaderValue> properties;
};

struct ReaderState {
  std::uint64_t sequence = 0;
  std::vector<ReaderElement> vertices;  // index = vertex id; size = the id limit
  std::vector<ReaderElement> edges;     // index = edge id
  // Names in id order: the order of first use (docs/wal_format.md, replay rules).
  std::vector<std::string> labels;
  std::vector<std::string> types;
  std::vector<std::string> keys;

  // How the state was found.
  std::uint64_t checkpoint_sequence = 0;  // 0: none loaded
  bool used_previous_checkpoint = false;  // the newest one failed its checks
  std::uint64_t groups_replayed = 0;
  std::uint64_t tail_bytes = 0;  // torn tail of the last segment, skipped
};

// The directory's files: sorted names, and a reader of one whole file.
struct DirectoryFiles {
  std::vector<std::string> names;
  std::function<Result<std::string>(const std::string& name)> read;
};

// Reads `dir` on the real file system (std::filesystem and std::ifstream).
Result<ReaderState> ReadGraphDirectory(const std::string& dir);
// Reads whatever `files` serves (a simulated file system in the tests).
Result<ReaderState> ReadGraphFiles(const DirectoryFiles& files);

// nullopt if `snapshot` holds exactly `state` (sequence, id limits, every
// element's liveness, label or type, endpoints and properties, every
// adjacency list in order, name numbering); else the first difference.
std::optional<std::string> CompareWithSnapshot(const ReaderState& state, const Snapshot& snapshot);

// CRC-32C (Castagnoli, reflected 0x82F63B78, init and final XOR ~0).
std::uint32_t Crc32c(std::uint32_t crc, const void* data, std::size_t n);

}  // namespace quiver::test

#endif  // QUIVER_TESTS_INDEPENDENT_READER_H_
