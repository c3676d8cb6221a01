// The element tables of one version and the slot layouts they hold.
//
//   VertexSlot (40 bytes): label, degrees, adjacency heads (and where a
//                          packed head lies in its leaf's block) per
//                          direction, property block.
//   EdgeSlot   (16 bytes): source and target (48-bit each) and the type.
//   Edge properties live in a sparse table of their own, so the ~90% of
//   edges that carry none pay nothing for them.
//
// A removed element keeps its id (ids are never reused) and its slot, with a
// dead marker, until all 64 slots of its leaf are removed: the leaf is then
// replaced by one leaf of removed slots shared by every table of its kind
// (RadixTable::ReclaimIfRemoved), so a graph that keeps adding and removing
// elements keeps the memory of about what is live, not of every id ever
// assigned.
//
// Thread safety: the read functions here may run on any thread against a
// published GraphRoots.
#ifndef QUIVER_STORAGE_ELEMENTS_H_
#define QUIVER_STORAGE_ELEMENTS_H_

#include <cstdint>

#include "base/packed.h"
#include "quiver/ids.h"
#include "storage/intern_table.h"
#include "storage/prop_block.h"
#include "storage/radix_table.h"

namespace quiver::index {
class Catalog;  // index/catalog.h: label sets, key counts, property indexes
}  // namespace quiver::index

namespace quiver::storage {

inline constexpr std::uint32_t kDeadLabel = 0xFFFFFFFFu;
inline constexpr std::uint32_t kDeadType = 0xFFFFFFFFu;

struct VertexSlot {
  std::uint32_t label;  // kDeadLabel once removed
  std::uint32_t out_degree;
  std::uint32_t in_degree;
  // Where a packed head's entries start in its leaf's block, in entries
  // (storage/packed_adjacency.h); meaningless for any other head.
  std::uint16_t out_packed_at;
  std::uint16_t in_packed_at;
  std::uintptr_t out_head;  // see adjacency.h
  std::uintptr_t in_head;
  PropBlock* props;
};
static_assert(sizeof(VertexSlot) == 40);

struct EdgeSlot {
  unsigned char source[6];
  unsigned char target[6];
  std::uint32_t type;  // kDeadType once removed
  std::uint64_t src() const { return base::Load48(source); }
  std::uint64_t dst() const { return base::Load48(target); }
};
static_assert(sizeof(EdgeSlot) == 16);

// A removed slot as the tables' shared leaves of removed slots hold it (what
// removing a vertex leaves, and what the checkpoint loader writes for a
// removed edge: the endpoints are not kept).
template <>
struct RemovedSlot<VertexSlot> {
  static VertexSlot Value() {
    VertexSlot s{};
    s.label = kDeadLabel;
    return s;
  }
  static bool Is(const VertexSlot& s) { return s.label == kDeadLabel; }
};
template <>
struct RemovedSlot<EdgeSlot> {
  static EdgeSlot Value() {
    EdgeSlot s{};
    s.type = kDeadType;
    return s;
  }
  static bool Is(const EdgeSlot& s) { return s.type == kDeadType; }
};

using VertexTable = RadixTable<VertexSlot>;
using EdgeTable = RadixTable<EdgeSlot>;
using EdgePropTable = RadixTable<PropBlock*>;

// The state of the graph at one version: everything a snapshot reads.
struct GraphRoots {
  SequenceNumber sequence = 0;
  std::uint64_t vertex_limit = 0;  // next vertex id
  std::uint64_t edge_limit = 0;    // next edge id
  std::uint64_t live_vertices = 0;
  std::uint64_t live_edges = 0;
  TableRoot vertices;
  TableRoot edges;
  TableRoot edge_props;  // sparse
  InternTable* labels = nullptr;
  InternTable* types = nullptr;
  InternTable* keys = nullptr;
  // Durable mode: where the WAL record of the group after this version
  // starts (segment number, byte offset; the offset may be the segment's
  // end, then that group starts the next segment). Set by the writer once
  // the version's group is logged, and by recovery; 0, 0 when not known.
  // Storage never reads them; a checkpoint of the version records them
  // (checkpoint/checkpoint_format.h).
  std::uint64_t log_segment = 0;
  std::uint64_t log_offset = 0;
  // Never null in a version (copy-on-write like the intern tables). Storage
  // holds it by pointer only; index/ maintains it.
  index::Catalog* catalog = nullptr;
};

// The live vertex slot of `id`, or null.
inline const VertexSlot* FindVertex(const GraphRoots& g, std::uint64_t id) {
  if (id >= g.vertex_limit) return nullptr;
  const VertexSlot* s = VertexTable::Find(g.vertices, id);
  return (s != nullptr && s->label != kDeadLabel) ? s : nullptr;
}

// The live edge slot of `id`, or null.
inline const EdgeSlot* FindEdge(const GraphRoots& g, std::uint64_t id) {
  if (id >= g.edge_limit) return nullptr;
  const EdgeSlot* s = EdgeTable::Find(g.edges, id);
  return (s != nullptr && s->type != kDeadType) ? s : nullptr;
}

// The property block of a live edge (null if none).
inline const PropBlock* EdgeProps(const GraphRoots& g, std::uint64_t id) {
  PropBlock* const* p = EdgePropTable::Find(g.edge_props, id);
  return p == nullptr ? nullptr : *p;
}

// Frees everything reachable from `g`. Only for the last version alive.
void DestroyGraph(GraphRoots& g, base::MemoryAccount* account);

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_ELEMENTS_H_
