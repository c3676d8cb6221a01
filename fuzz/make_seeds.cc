// fuzz_make_seeds: writes the generated part of the fuzz seed corpora, so
// that they can be regenerated after a format change (the files are
// committed under tests/fuzz/corpus/<target>/; crash reproducers live there
// too and are never regenerated).
//
//   fuzz_make_seeds <tests/golden dir> <tests/fuzz/corpus dir>
//
// wal_decode:      the golden segments (wal-small and wal-indexes, in format
//                  4 and as format 3 wrote them (*-v3), wal-indexes with the
//                  index operations of format version 2 on, wal-endpoints with
//                  an edge-endpoint constraint, format 4 on); a segment whose groups use every op
//                  kind and value type, one group of three batches; one group
//                  cut into first/middle/last fragments; torn and garbage
//                  tails; and "fixup" copies of each (byte 48 bit 0 set, see
//                  fuzz_wal_decode.cc).
//                  A larger segment: hundreds of vertices added and removed,
//                  hundreds of self-loops.
// checkpoint_load: the golden checkpoints (format 3: checkpoint-small,
//                  checkpoint-indexes with an index definitions block and
//                  checkpoint-endpoints with an edge-endpoint constraint;
//                  format 2 as that format wrote the first two (-v2); format
//                  1 under the format-1 seed's old name); a checkpoint of the
//                  workload above (removed elements, several edge types on a
//                  vertex, a self-loop, properties on edges); a larger one (5000
//                  vertex ids, 1000 self-loops on one vertex); fixup copies
//                  (byte 72 in formats 2 and 3, byte 56 in format 1). The
//                  format-1 seeds written before format 2 (workload.qck,
//                  large.qck) and the format-2 ones written before format 3
//                  (workload-v2.qck, large-v2.qck) stay in the corpus: those
//                  formats are still read. Format 5 (index entries blocks):
//                  checkpoint-indexes (a string key) and checkpoint-ordered
//                  (an int64 key) under -v5 names; the other seeds keep
//                  their earlier formats.
// recovery:        a few inputs of fixed pseudo-random bytes (std::mt19937,
//                  fixed seeds) and a few hand-written plans.
// Every file written is below 64 KiB. Deterministic: the same bytes each run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "quiver/quiver.h"
#include "wal/wal_format.h"

namespace quiver::fuzz {
namespace {

namespace fs = std::filesystem;
using format_test::kFixedUuid;
using format_test::LogBuilder;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "fuzz_make_seeds: %s\n", why.c_str());
  std::exit(1);
}

void Require(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) Die("cannot read " + p.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& p, const std::string& bytes) {
  if (bytes.size() >= std::size_t{64} << 10) Die(p.string() + " would be 64 KiB or more");
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Die("cannot write " + p.string());
  std::printf("wrote %s (%zu bytes)\n", p.string().c_str(), bytes.size());
}

// Writes `bytes` and a copy with bit 0 of byte `flag_offset` set.
void WriteWithFixup(const fs::path& dir, const std::string& name, const std::string& bytes,
                    std::size_t flag_offset) {
  WriteFile(dir / name, bytes);
  if (bytes.size() <= flag_offset) return;
  std::string flagged = bytes;
  flagged[flag_offset] = static_cast<char>(flagged[flag_offset] | 1);
  WriteFile(dir / ("fixup-" + name), flagged);
}

// Every op kind and value type, removals, a self-loop, several edge types on
// one vertex, and one group of three batches.
LogBuilder Workload() {
  LogBuilder log;
  auto group = [&log](const std::vector<WriteBatch>& batches) {
    Require(log.AddGroup(batches), "workload group");
  };
  WriteBatch b1;
  NewVertex a =
      b1.AddVertex("Person", {{"name", "Ada"}, {"born", 1815}, {"ok", true}, {"nothing", PropertyValue()}});
  NewVertex c = b1.AddVertex("City", {{"pi", 3.25}, {"raw", Bytes{std::byte{0}, std::byte{0xff}}}});
  b1.AddEdge("KNOWS", a, c, {{"w", 0.5}});
  b1.AddEdge("LIVES_IN", a, c);
  b1.AddEdge("SELF", a, a, {{"v", FloatVector{1.0f, -2.5f}}});
  group({b1});
  WriteBatch b2, b3, b4;
  NewVertex d = b2.AddVertex("Person", {{"name", "Grace"}});
  b2.AddEdge("KNOWS", d, VertexId(0));
  b3.SetProperty(VertexId(1), "pi", 3.5);
  b3.SetProperty(EdgeId(0), "w", 0.75);
  b4.RemoveProperty(VertexId(0), "nothing");
  b4.RemoveProperty(EdgeId(2), "v");
  group({b2, b3, b4});
  WriteBatch b5;
  b5.RemoveEdge(EdgeId(1));
  NewVertex e = b5.AddVertex("Temp");
  b5.AddEdge("KNOWS", e, VertexId(2));
  group({b5});
  WriteBatch b6;
  b6.RemoveVertex(VertexId(3));
  b6.AddVertex("Person", {{"name", std::string(300, 'x')}});
  group({b6});
  log.Finish();
  return log;
}

// Many elements: `vertices` vertices in one batch, most of them removed in
// the next, and `loops` self-loops of two types (some with a property) on the
// last one, so the radix tables grow inner levels and one adjacency array
// grows many times.
LogBuilder Large(std::uint64_t vertices, std::uint64_t removed, std::uint64_t loops) {
  LogBuilder log;
  WriteBatch adds;
  for (std::uint64_t i = 0; i < vertices; ++i) adds.AddVertex(i % 2 ? "V" : "W");
  Require(log.AddGroup({adds}), "large: adds");
  WriteBatch removes;
  for (std::uint64_t i = 0; i < removed; ++i) removes.RemoveVertex(VertexId(i));
  Require(log.AddGroup({removes}), "large: removes");
  WriteBatch edges;
  const VertexId last(vertices - 1);
  for (std::uint64_t i = 0; i < loops; ++i) {
    if (i % 10 == 0) {
      edges.AddEdge("LOOP", last, last, {{"i", static_cast<std::int64_t>(i)}});
    } else {
      edges.AddEdge(i % 3 ? "LOOP" : "SELF", last, last);
    }
  }
  Require(log.AddGroup({edges}), "large: edges");
  log.Finish();
  return log;
}

std::string SegmentOf(const LogBuilder& log) {
  env::SimFileSystem sim;
  auto bytes = format_test::WriteSegmentFile(sim, "/db", kFixedUuid, 1, 1, log.groups());
  Require(bytes.status(), "segment");
  return *bytes;
}

std::string CheckpointOf(const LogBuilder& log) {
  env::SimFileSystem sim;
  Require(format_test::WriteSegmentFile(sim, "/db", kFixedUuid, 1, 1, log.groups()).status(), "segment");
  auto bytes = format_test::WriteCheckpointFile(sim, "/db", kFixedUuid);
  Require(bytes.status(), "checkpoint");
  return *bytes;
}

// A segment holding the workload's first group cut into `pieces` fragments
// (first, middle..., last), as the writer does for groups over 1 MiB.
std::string FragmentedSegment(const LogBuilder& log, std::size_t pieces) {
  const format_test::LoggedGroup& g = log.groups().front();
  std::string out(wal::kSegmentHeaderBytes, '\0');
  wal::SegmentHeader header;
  header.uuid = kFixedUuid;
  header.segment_number = 1;
  header.first_sequence = 1;
  // Format version 2: records back to back, without the padding records
  // version 3 puts after the header and each group (which WriteSegmentFile
  // seeds write).
  header.format_version = 2;
  wal::EncodeSegmentHeader(header, std::span<std::byte, wal::kSegmentHeaderBytes>(
                                       reinterpret_cast<std::byte*>(out.data()), wal::kSegmentHeaderBytes));
  const std::size_t step = (g.payload.size() + pieces - 1) / pieces;
  for (std::size_t i = 0, at = 0; i < pieces; ++i, at += step) {
    std::span<const std::byte> piece(g.payload.data() + at, std::min(step, g.payload.size() - at));
    wal::RecordHeader h;
    h.type = i == 0            ? wal::RecordType::kFirst
             : i + 1 == pieces ? wal::RecordType::kLast
                               : wal::RecordType::kMiddle;
    h.first_sequence = g.first;
    h.last_sequence = g.last;
    std::byte rh[wal::kRecordHeaderBytes];
    wal::EncodeRecordHeader(h, piece, rh);
    out.append(reinterpret_cast<const char*>(rh), sizeof rh);
    out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    out.append(wal::PaddedLength(static_cast<std::uint32_t>(piece.size())) - piece.size(), '\0');
  }
  return out;
}

std::string RandomBytes(std::uint32_t seed, std::size_t n) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xFF);
  return out;
}

// A recovery plan (fuzz_recovery.cc): the fixed header, then steps.
std::string Plan(std::uint8_t segment_shift, bool checkpoint_on_close, std::uint16_t crash_at,
                 std::uint8_t policy, const std::string& steps) {
  std::string p;
  p += static_cast<char>(segment_shift);                // segment size 128 << n
  p += static_cast<char>(checkpoint_on_close ? 1 : 0);  // checkpoint_on_close
  p += static_cast<char>(0);                            // max_group_batches 1 (+ n % 8)
  p += static_cast<char>(crash_at >> 8);                // crash point, 2 bytes
  p += static_cast<char>(crash_at & 0xFF);              //
  p += static_cast<char>(policy);                       // policy
  p += std::string("\x12\x34\x56\x78", 4);              // crash seed
  p += static_cast<char>(3);                            // second crash
  p += static_cast<char>(1);                            // write after recovery
  return p + steps;
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <tests/golden dir> <tests/fuzz/corpus dir>\n", argv[0]);
    return 2;
  }
  const fs::path golden(argv[1]), corpus(argv[2]);
  for (const char* target : {"wal_decode", "checkpoint_load", "recovery"})
    fs::create_directories(corpus / target);

  const LogBuilder log = Workload();
  const fs::path wal = corpus / "wal_decode";
  WriteWithFixup(wal, "golden-wal-small.log", ReadFile(golden / "wal-small.log"), 48);
  WriteWithFixup(wal, "golden-wal-indexes.log", ReadFile(golden / "wal-indexes.log"), 48);
  WriteWithFixup(wal, "golden-wal-small-v3.log", ReadFile(golden / "wal-small-v3.log"), 48);
  WriteWithFixup(wal, "golden-wal-indexes-v3.log", ReadFile(golden / "wal-indexes-v3.log"), 48);
  WriteWithFixup(wal, "golden-wal-endpoints.log", ReadFile(golden / "wal-endpoints.log"), 48);
  const std::string segment = SegmentOf(log);
  WriteWithFixup(wal, "workload.log", segment, 48);
  WriteWithFixup(wal, "fragments.log", FragmentedSegment(log, 3), 48);
  WriteWithFixup(wal, "torn-tail.log", segment.substr(0, segment.size() - 21), 48);
  WriteWithFixup(wal, "garbage-tail.log", segment + RandomBytes(7, 200), 48);

  WriteWithFixup(wal, "large.log", SegmentOf(Large(600, 500, 300)), 48);

  const fs::path ckpt = corpus / "checkpoint_load";
  // The fixup flag's byte: 72 in formats 2 and 3, 56 in format 1.
  WriteWithFixup(ckpt, "golden-checkpoint-small-v3.qck", ReadFile(golden / "checkpoint-small.qck"), 72);
  WriteWithFixup(ckpt, "golden-checkpoint-small-v2.qck", ReadFile(golden / "checkpoint-small-v2.qck"), 72);
  WriteWithFixup(ckpt, "golden-checkpoint-small.qck", ReadFile(golden / "checkpoint-small-v1.qck"), 56);
  WriteWithFixup(ckpt, "golden-checkpoint-indexes-v3.qck", ReadFile(golden / "checkpoint-indexes.qck"), 72);
  WriteWithFixup(ckpt, "golden-checkpoint-indexes.qck", ReadFile(golden / "checkpoint-indexes-v2.qck"), 72);
  WriteWithFixup(ckpt, "golden-checkpoint-endpoints.qck", ReadFile(golden / "checkpoint-endpoints.qck"), 72);
  // Format 5: index entries blocks (kind 8), variable-width and fixed-width keys.
  WriteWithFixup(ckpt, "golden-checkpoint-indexes-v5.qck", ReadFile(golden / "checkpoint-indexes.qck"), 72);
  WriteWithFixup(ckpt, "golden-checkpoint-ordered-v5.qck", ReadFile(golden / "checkpoint-ordered.qck"), 72);
  WriteWithFixup(ckpt, "workload-v3.qck", CheckpointOf(log), 72);
  WriteWithFixup(ckpt, "large-v3.qck", CheckpointOf(Large(5000, 4000, 1000)), 72);

  const fs::path rec = corpus / "recovery";
  for (std::uint32_t i = 0; i < 4; ++i)
    WriteFile(rec / ("random-" + std::to_string(i) + ".bin"), RandomBytes(100 + i, std::size_t{64} << i));
  // Writes only, crash late, torn last write.
  WriteFile(rec / "writes-torn.bin", Plan(2, true, 90, 3, RandomBytes(200, 160)));
  // Writes, a checkpoint, a reopen, more writes; drop unsynced at op 60.
  std::string steps;
  for (int i = 0; i < 6; ++i) steps += std::string("\x00\x02\x00\x01\x00\x05\x01\x02", 8);
  steps += std::string("\x08\x09", 2);
  for (int i = 0; i < 6; ++i) steps += std::string("\x06\x02\x00\x03\x05\x00\x01\x00\x02\x00\x01", 11);
  WriteFile(rec / "checkpoint-reopen.bin", Plan(0, false, 60, 0, steps));
  return 0;
}

}  // namespace
}  // namespace quiver::fuzz

int main(int argc, char** argv) { return quiver::fuzz::Main(argc, argv); }
