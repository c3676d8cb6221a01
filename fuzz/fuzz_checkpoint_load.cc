// fuzz_checkpoint_load: one checkpoint file (docs/checkpoint_format.md)
// through checkpoint::LoadCheckpoint, into a fresh version prepared the way
// recovery prepares one (src/recovery.cc, TryCheckpoint) and freed the way
// recovery frees a failed one (Abandon, then Shutdown).
//
// Input: the raw bytes of a checkpoint. An input whose header has bit 0 of
// byte 72 set (byte 56 for format 1: a reserved byte under the header CRC;
// the writer leaves it zero) is first "fixed up": the bit is cleared, and
// the header CRC, the CRC of every block whose length fits and the trailer
// are recomputed, so the fuzzer reaches the block parsers. Inputs with the bit clear are loaded as they are
// (the checksum paths).
//
// Checks beyond "no crash, no UB, no leak":
//  - a failed load returns Corruption (and frees everything: LeakSanitizer);
//  - a successful load passes CheckGraph: the live counts match the tables,
//    every live vertex's label and every live edge's type name a loaded name,
//    property keys are loaded names in strictly increasing order, every live
//    edge's endpoints are live, and the adjacency arrays are exactly the
//    edge table seen from each end (every entry names a live edge of the
//    group's type whose endpoint is this vertex and whose other end is the
//    entry's neighbour, in increasing edge order; the degrees are the entry
//    counts; out and in entries each number the live edges);
//  - writing the loaded state back (WriteCheckpoint on a SimFileSystem) and
//    loading that gives the same state, and writing that again gives the same
//    bytes;
//  - with a sanitizer's allocator hooks, the load allocates at most
//    kLoadBytesPerInputByte per input byte (plus a constant).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "base/crc32c.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/checkpoint_writer.h"
#include "env/sim_file_system.h"
#include "fuzz_util.h"
#include "quiver/snapshot.h"
#include "quiver/status.h"
#include "storage/adjacency.h"
#include "storage/elements.h"
#include "storage/intern_table.h"
#include "storage/prop_block.h"
#include "storage/version.h"
#include "test_util.h"

namespace quiver::fuzz {
namespace {

using storage::GraphRoots;

// A removed vertex is one input byte and a 40-byte slot in a 64-slot leaf:
// about 45 bytes per input byte. The densest growth is an index entries
// block (format 5) of one variable-width entry: 26 bytes framed, a 4 KiB
// leaf and its run's bookkeeping, about 165 bytes per input byte.
constexpr std::size_t kLoadBytesPerInputByte = 256;
constexpr std::size_t kLoadBytesConstant = std::size_t{64} << 10;

std::string U64(std::uint64_t v) { return std::to_string(v); }

// A version to load into, on a chain of its own; freed like a failed
// recovery attempt whether or not the load succeeded.
class LoadTarget {
 public:
  LoadTarget() : chain_(new storage::VersionChain()) {
    ctx_ = storage::MutationContext{1, nullptr, nullptr};
    version_ = chain_->NewVersion(&ctx_);
    storage::OwnInternTable(version_->roots.labels, ctx_);
    storage::OwnInternTable(version_->roots.types, ctx_);
    storage::OwnInternTable(version_->roots.keys, ctx_);
  }
  ~LoadTarget() {
    chain_->Abandon(version_);
    chain_->Shutdown();
  }
  LoadTarget(const LoadTarget&) = delete;
  LoadTarget& operator=(const LoadTarget&) = delete;

  Status Load(std::span<const std::byte> bytes, checkpoint::Header* header) {
    return checkpoint::LoadCheckpoint(bytes, version_->roots, ctx_, header);
  }
  const GraphRoots& roots() const { return version_->roots; }

 private:
  storage::VersionChain* chain_;
  storage::MutationContext ctx_{};
  storage::Version* version_ = nullptr;
};

void CheckProps(const storage::PropBlock* props, const GraphRoots& g, const std::string& where) {
  for (std::uint32_t i = 0; i < storage::PropCount(props); ++i) {
    storage::PropInput p = storage::PropAt(props, i);
    QUIVER_FUZZ_CHECK(p.key < g.keys->size(),
                      where + ": property key " + U64(p.key) + " of " + U64(g.keys->size()));
    QUIVER_FUZZ_CHECK(i == 0 || storage::PropAt(props, i - 1).key < p.key, where + ": keys out of order");
  }
}

// One direction of vertex `v`'s adjacency against the edge table; returns
// its entry count.
std::uint64_t CheckAdjacency(const GraphRoots& g, std::uint64_t v, std::uintptr_t head, std::uint32_t degree,
                             Direction dir) {
  const std::string where = "vertex " + U64(v) + (dir == Direction::kOut ? " out" : " in");
  std::uint64_t entries = 0;
  std::vector<std::uint32_t> types;
  for (std::size_t i = 0; i < storage::GroupCount(head); ++i) {
    EdgeGroup group = storage::GroupAt(head, degree, i);
    const std::uint32_t type = group.type.value();
    QUIVER_FUZZ_CHECK(!group.entries.empty(), where + ": empty group of type " + U64(type));
    for (std::uint32_t t : types) QUIVER_FUZZ_CHECK(t != type, where + ": two groups of type " + U64(type));
    types.push_back(type);
    std::uint64_t previous_edge = 0;
    for (std::size_t k = 0; k < group.entries.size(); ++k) {
      const std::uint64_t e = group.entries[k].edge().value();
      const std::uint64_t n = group.entries[k].neighbor().value();
      const storage::EdgeSlot* slot = storage::FindEdge(g, e);
      QUIVER_FUZZ_CHECK(slot != nullptr, where + ": entry names edge " + U64(e) + ", which is not live");
      const std::uint64_t self = dir == Direction::kOut ? slot->src() : slot->dst();
      const std::uint64_t other = dir == Direction::kOut ? slot->dst() : slot->src();
      QUIVER_FUZZ_CHECK(slot->type == type && self == v && other == n,
                        where + ": entry (" + U64(e) + ", " + U64(n) + ") disagrees with the edge table");
      QUIVER_FUZZ_CHECK(k == 0 || e > previous_edge, where + ": entries out of edge order");
      previous_edge = e;
    }
    entries += group.entries.size();
  }
  QUIVER_FUZZ_CHECK(entries == degree, where + ": degree " + U64(degree) + ", entries " + U64(entries));
  return entries;
}

void CheckGraph(const GraphRoots& g) {
  std::uint64_t live_vertices = 0, out_entries = 0, in_entries = 0;
  for (std::uint64_t v = 0; v < g.vertex_limit; ++v) {
    const storage::VertexSlot* slot = storage::VertexTable::Find(g.vertices, v);
    QUIVER_FUZZ_CHECK(slot != nullptr, "vertex slot " + U64(v) + " below the limit is missing");
    if (slot->label == storage::kDeadLabel) {
      QUIVER_FUZZ_CHECK(slot->out_head == 0 && slot->in_head == 0 && slot->out_degree == 0 &&
                            slot->in_degree == 0 && slot->props == nullptr,
                        "removed vertex " + U64(v) + " holds edges or properties");
      continue;
    }
    ++live_vertices;
    QUIVER_FUZZ_CHECK(slot->label < g.labels->size(), "vertex " + U64(v) + " label " + U64(slot->label));
    CheckProps(slot->props, g, "vertex " + U64(v));
    out_entries += CheckAdjacency(g, v, slot->out_head, slot->out_degree, Direction::kOut);
    in_entries += CheckAdjacency(g, v, slot->in_head, slot->in_degree, Direction::kIn);
  }
  std::uint64_t live_edges = 0;
  for (std::uint64_t e = 0; e < g.edge_limit; ++e) {
    const storage::EdgeSlot* slot = storage::EdgeTable::Find(g.edges, e);
    QUIVER_FUZZ_CHECK(slot != nullptr, "edge slot " + U64(e) + " below the limit is missing");
    if (slot->type == storage::kDeadType) {
      QUIVER_FUZZ_CHECK(storage::EdgeProps(g, e) == nullptr, "removed edge " + U64(e) + " has properties");
      continue;
    }
    ++live_edges;
    QUIVER_FUZZ_CHECK(slot->type < g.types->size(), "edge " + U64(e) + " type " + U64(slot->type));
    QUIVER_FUZZ_CHECK(
        storage::FindVertex(g, slot->src()) != nullptr && storage::FindVertex(g, slot->dst()) != nullptr,
        "edge " + U64(e) + " " + U64(slot->src()) + "->" + U64(slot->dst()) +
            " has an endpoint that is not live");
    CheckProps(storage::EdgeProps(g, e), g, "edge " + U64(e));
  }
  QUIVER_FUZZ_CHECK(live_vertices == g.live_vertices && live_edges == g.live_edges,
                    "live counts " + U64(g.live_vertices) + "/" + U64(g.live_edges) + ", tables hold " +
                        U64(live_vertices) + "/" + U64(live_edges));
  // Every entry names a distinct live edge (checked above, per group and
  // type), so equal totals make each direction a bijection with the edges.
  QUIVER_FUZZ_CHECK(out_entries == live_edges && in_entries == live_edges,
                    "adjacency holds " + U64(out_entries) + " out and " + U64(in_entries) +
                        " in entries for " + U64(live_edges) + " live edges");
}

std::string RenderProps(const storage::PropBlock* props) {
  std::string out = "{";
  for (std::uint32_t i = 0; i < storage::PropCount(props); ++i) {
    storage::PropInput p = storage::PropAt(props, i);
    out += U64(p.key) + "=" + test_util::Render(p.value) + ";";
  }
  return out + "}";
}

std::string RenderAdjacency(std::uintptr_t head, std::uint32_t degree) {
  std::string out = "[";
  for (std::size_t i = 0; i < storage::GroupCount(head); ++i) {
    EdgeGroup group = storage::GroupAt(head, degree, i);
    out += U64(group.type.value()) + ":";
    for (const EdgeEntry& e : group.entries)
      out += "(" + U64(e.edge().value()) + "," + U64(e.neighbor().value()) + ")";
  }
  return out + "]";
}

// Everything a checkpoint records, by id (ids survive a checkpoint).
std::string Dump(const GraphRoots& g) {
  std::string out = "seq=" + U64(g.sequence) + " V=" + U64(g.live_vertices) + "/" + U64(g.vertex_limit) +
                    " E=" + U64(g.live_edges) + "/" + U64(g.edge_limit) + "\n";
  const storage::InternTable* tables[] = {g.labels, g.types, g.keys};
  for (const storage::InternTable* t : tables) {
    for (std::uint32_t i = 0; i < t->size(); ++i) out += std::string(t->Name(i)) + ",";
    out += "\n";
  }
  for (std::uint64_t v = 0; v < g.vertex_limit; ++v) {
    const storage::VertexSlot* s = storage::FindVertex(g, v);
    if (s == nullptr) continue;
    out += "v" + U64(v) + " " + U64(s->label) + " " + RenderProps(s->props) + " out" +
           RenderAdjacency(s->out_head, s->out_degree) + " in" + RenderAdjacency(s->in_head, s->in_degree) +
           "\n";
  }
  for (std::uint64_t e = 0; e < g.edge_limit; ++e) {
    const storage::EdgeSlot* s = storage::FindEdge(g, e);
    if (s == nullptr) continue;
    out += "e" + U64(e) + " " + U64(s->type) + " " + U64(s->src()) + "->" + U64(s->dst()) + " " +
           RenderProps(storage::EdgeProps(g, e)) + "\n";
  }
  return out;
}

// The bytes WriteCheckpoint produces for `g`.
std::string Rewrite(const GraphRoots& g, const wal::Uuid& uuid) {
  env::SimFileSystem fs;
  checkpoint::WriteStats stats;
  Status s = fs.CreateDir("/ck");
  if (s.ok()) s = checkpoint::WriteCheckpoint(&fs, "/ck", uuid, g, &stats);
  QUIVER_FUZZ_CHECK(s.ok(), "writing a loaded checkpoint failed: " + s.ToString());
  Result<std::string> bytes = fs.ReadFileForTest("/ck/" + checkpoint::CheckpointFileName(g.sequence));
  QUIVER_FUZZ_CHECK(bytes.ok(), bytes.status().ToString());
  return *bytes;
}

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// The harness's flag: bit 0 of a reserved header byte under the CRC, which
// the writer leaves zero: byte 72 in formats 2 and 3, byte 56 in format 1.
std::size_t FixupFlagOffset(std::span<const std::byte> b) {
  std::uint32_t version = 0;
  if (b.size() >= 12) std::memcpy(&version, b.data() + 8, 4);
  return version == 1 ? 56 : 72;
}

// Clears the fixup flag and recomputes the header CRC, the CRC of each block
// whose length fits (its header bytes 0..7 and payload; in format 2
// continuing the header's CRC) and, in format 2, the trailer (the header's
// CRC continued over every block's crc field).
void FixChecksums(std::vector<std::byte>& b) {
  std::uint32_t version;
  std::memcpy(&version, b.data() + 8, 4);
  const std::size_t header = version == 1 ? checkpoint::kHeaderBytesV1 : checkpoint::kHeaderBytes;
  const std::size_t trailer = version == 1 ? 0 : checkpoint::kTrailerBytes;
  if (b.size() < header + trailer) return;
  b[FixupFlagOffset(b)] &= std::byte{0xFE};  // the harness's flag, not the reader's
  std::uint32_t crc = base::Crc32c(b.data(), header - 4);
  std::memcpy(b.data() + header - 4, &crc, 4);
  const std::uint32_t seed = version == 1 ? 0 : base::Crc32c(b.data(), header);
  std::uint32_t file_crc = seed;
  const std::size_t end = b.size() - trailer;
  std::size_t pos = header;
  while (end - pos >= checkpoint::kBlockHeaderBytes) {
    std::byte* h = b.data() + pos;
    std::uint32_t length;
    std::memcpy(&length, h + 4, 4);
    if (length > end - pos - checkpoint::kBlockHeaderBytes) return;
    crc = base::Crc32cExtend(base::Crc32cExtend(seed, h, 8), h + checkpoint::kBlockHeaderBytes, length);
    std::memcpy(h + 8, &crc, 4);
    file_crc = base::Crc32cExtend(file_crc, h + 8, 4);
    pos += checkpoint::kBlockHeaderBytes + length;
  }
  if (trailer != 0 && pos == end) std::memcpy(b.data() + end, &file_crc, 4);
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (size > 0) std::memcpy(bytes.data(), data, size);
  const bool fixup =
      size >= checkpoint::kHeaderBytes && (bytes[FixupFlagOffset(bytes)] & std::byte{1}) != std::byte{0};
  if (fixup) FixChecksums(bytes);

  LoadTarget target;
  checkpoint::Header header;
  Status s;
  {
    AllocMeter::Scope meter;
    s = target.Load(bytes, &header);
    AllocMeter::Totals used = meter.Take();
    if (Verbose())
      std::fprintf(stderr, "  fixup %d: %s; load held up to %zu bytes (%.1f x input; metered: %s)\n",
                   fixup ? 1 : 0, s.ToString().c_str(), used.peak,
                   size == 0 ? 0.0 : static_cast<double>(used.peak) / size,
                   AllocMeter::Available() ? "yes" : "no");
    QUIVER_FUZZ_CHECK(used.peak <= kLoadBytesPerInputByte * size + kLoadBytesConstant,
                      "loading " + U64(size) + " bytes held up to " + U64(used.peak) + " bytes (" +
                          (s.ok() ? "ok" : s.ToString()) + ")");
  }
  if (!s.ok()) {
    // Damage is Corruption; an intact header of another version is
    // Unimplemented (the file is left for a newer build).
    QUIVER_FUZZ_CHECK(s.code() == StatusCode::kCorruption || s.code() == StatusCode::kUnimplemented,
                      s.ToString());
    return;
  }
  const GraphRoots& g = target.roots();
  QUIVER_FUZZ_CHECK(g.sequence == header.sequence && g.vertex_limit == header.vertex_limit &&
                        g.edge_limit == header.edge_limit,
                    "loaded state disagrees with the header");
  CheckGraph(g);

  // Round trip: write, load, compare; write again, compare bytes.
  const std::string rewritten = Rewrite(g, header.uuid);
  LoadTarget again;
  checkpoint::Header header_again;
  Status s2 = again.Load(AsBytes(rewritten), &header_again);
  QUIVER_FUZZ_CHECK(s2.ok(), "a rewritten checkpoint does not load: " + s2.ToString());
  QUIVER_FUZZ_CHECK(header_again.uuid == header.uuid, "the rewritten checkpoint has another uuid");
  const std::string dump = Dump(g), dump_again = Dump(again.roots());
  QUIVER_FUZZ_CHECK(dump == dump_again,
                    "rewritten checkpoint loads differently:\n" + dump + "---\n" + dump_again);
  QUIVER_FUZZ_CHECK(Rewrite(again.roots(), header.uuid) == rewritten,
                    "checkpoint writing is not a fixed point");
}

}  // namespace
}  // namespace quiver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  quiver::fuzz::TestOneInput(data, size);
  return 0;
}
