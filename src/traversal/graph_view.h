// GraphView: traversal's direct, allocation-free reads of one snapshot's
// storage — vertex slots, adjacency groups filtered by edge type, edge
// endpoints and property blocks — plus the resolved forms of a spec's names
// (TypeFilter, ResolvedPredicate).
//
// Reading slots directly saves the public API's repeated id lookups: one
// radix lookup per vertex expanded yields its label, both adjacency heads and
// its properties.
//
// Thread safety: a GraphView only reads a published version; any number may
// exist at once.
#ifndef QUIVER_TRAVERSAL_GRAPH_VIEW_H_
#define QUIVER_TRAVERSAL_GRAPH_VIEW_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/prefetch.h"
#include "quiver/snapshot.h"
#include "quiver/traversal.h"
#include "snapshot_internal.h"
#include "storage/adjacency.h"
#include "storage/elements.h"
#include "storage/prop_block.h"

namespace quiver::traversal {

// The edge types a spec selects: all, or the listed ones this snapshot knows
// (possibly none).
struct TypeFilter {
  bool all = true;
  std::vector<std::uint32_t> ids;
  bool Matches(std::uint32_t type) const {
    if (all) return true;
    for (std::uint32_t t : ids)
      if (t == type) return true;
    return false;
  }
};

// A PropertyPredicate with its key resolved (nullopt: this snapshot has never
// seen the key, so the predicate is false everywhere).
struct ResolvedPredicate {
  std::optional<std::uint32_t> key;
  CompareOp op = CompareOp::kEq;
  const PropertyValue* value = nullptr;
};

// True if `block` satisfies `p` (see PropertyPredicate for the rules).
bool Evaluate(const storage::PropBlock* block, const ResolvedPredicate& p);
inline bool EvaluateAll(const storage::PropBlock* block, const std::vector<ResolvedPredicate>& ps) {
  for (const ResolvedPredicate& p : ps)
    if (!Evaluate(block, p)) return false;
  return true;
}

// The storage direction(s) a traversal direction reads.
inline bool ReadsOut(TraversalDirection d) { return d != TraversalDirection::kIn; }
inline bool ReadsIn(TraversalDirection d) { return d != TraversalDirection::kOut; }
inline TraversalDirection Reverse(TraversalDirection d) {
  if (d == TraversalDirection::kOut) return TraversalDirection::kIn;
  if (d == TraversalDirection::kIn) return TraversalDirection::kOut;
  return d;
}

class GraphView {
 public:
  explicit GraphView(const Snapshot& snap) : g_(&SnapshotInternal::Roots(snap)) {}

  const storage::GraphRoots& roots() const { return *g_; }
  std::uint64_t vertex_limit() const { return g_->vertex_limit; }
  // The live slot of vertex `v`, or null.
  const storage::VertexSlot* Vertex(std::uint64_t v) const { return storage::FindVertex(*g_, v); }
  // The live slot of edge `e`, or null.
  const storage::EdgeSlot* Edge(std::uint64_t e) const { return storage::FindEdge(*g_, e); }
  // The property block of an edge known to be live (null: none).
  const storage::PropBlock* EdgeProps(std::uint64_t e) const { return storage::EdgeProps(*g_, e); }

  // Prefetching, for searches that know which vertices they will expand
  // next: a hop is a slot load, then an adjacency-array load that depends on
  // it, so a search that starts both a few vertices ahead overlaps their
  // cache misses instead of paying them one after another.
  //
  // Starts loading the slot of vertex `v` (< vertex_limit()); reads nothing
  // itself but the inner nodes of the table, which stay cached.
  void PrefetchSlot(std::uint64_t v) const {
    const storage::VertexSlot* s = storage::VertexTable::Find(g_->vertices, v);
    if (s == nullptr) return;
    const char* p = reinterpret_cast<const char*>(s);
    base::Prefetch(p);
    base::Prefetch(p + sizeof(storage::VertexSlot) - 1);
  }
  // Starts loading the first lines of the adjacency of `v` that a search in
  // direction `d` reads (its slot should be cached by now: PrefetchSlot).
  void PrefetchAdjacency(std::uint64_t v, TraversalDirection d) const {
    const storage::VertexSlot* s = storage::VertexTable::Find(g_->vertices, v);
    if (s == nullptr || s->label == storage::kDeadLabel) return;
    if (ReadsOut(d)) PrefetchHead(s->out_head, s->out_degree);
    if (ReadsIn(d)) PrefetchHead(s->in_head, s->in_degree);
  }

  // Calls fn(const EdgeEntry&, bool out) for each entry of `slot` in the
  // direction(s) of `d` whose type passes `types`, until fn returns false.
  // Returns false if fn stopped it.
  template <typename Fn>
  static bool ForEachEntry(const storage::VertexSlot* slot, TraversalDirection d, const TypeFilter& types,
                           Fn&& fn) {
    if (ReadsOut(d) && !ForEachIn(slot->out_head, slot->out_degree, types, true, fn)) return false;
    if (ReadsIn(d) && !ForEachIn(slot->in_head, slot->in_degree, types, false, fn)) return false;
    return true;
  }

 private:
  static void PrefetchHead(std::uintptr_t head, std::uint32_t degree) {
    if (head == 0) return;
    const char* p = static_cast<const char*>(storage::HeadBlock(head));
    base::Prefetch(p);
    // One group: its entries start at the address (an array or a packed
    // run, no header); a directory is read first.
    if (storage::IsDir(head)) return;
    const std::size_t bytes = std::min<std::size_t>(12 * std::size_t{degree}, 256);
    for (std::size_t off = 64; off < bytes; off += 64) base::Prefetch(p + off);
  }

  template <typename Fn>
  static bool ForEachIn(std::uintptr_t head, std::uint32_t degree, const TypeFilter& types, bool out,
                        Fn& fn) {
    std::size_t groups = storage::GroupCount(head);
    for (std::size_t i = 0; i < groups; ++i) {
      EdgeGroup g = storage::GroupAt(head, degree, i);
      if (!types.Matches(g.type.value())) continue;
      for (const EdgeEntry& e : g.entries)
        if (!fn(e, out)) return false;
    }
    return true;
  }

  const storage::GraphRoots* g_;
};

// Reads the property blocks of live edges through the sparse edge-property
// table, remembering the last leaf it walked to: edges added together have
// neighbouring ids, so a vertex's edges mostly share a few leaves, and each
// lookup is then one load instead of a walk from the root.
class PropertyCursor {
 public:
  explicit PropertyCursor(const GraphView& view) : g_(&view.roots()) {}

  // The property block of live edge `e` (null: none).
  const storage::PropBlock* Block(std::uint64_t e) {
    storage::PropBlock* const* slot = Slot(e);
    return slot == nullptr ? nullptr : *slot;
  }
  // Starts loading the table slot of edge `e`.
  void PrefetchSlot(std::uint64_t e) {
    if (storage::PropBlock* const* slot = Slot(e)) base::Prefetch(slot);
  }

 private:
  using Table = storage::EdgePropTable;
  storage::PropBlock* const* Slot(std::uint64_t e) {
    const std::uint64_t key = e >> Table::kLeafBits;
    if (key != leaf_key_) {
      leaf_key_ = key;
      leaf_ = Table::FindLeaf(g_->edge_props, e);
    }
    return leaf_ == nullptr ? nullptr : &leaf_->slots[e & (Table::kLeafSize - 1)];
  }

  const storage::GraphRoots* g_;
  std::uint64_t leaf_key_ = ~std::uint64_t{0};
  const Table::Leaf* leaf_ = nullptr;
};

}  // namespace quiver::traversal

#endif  // QUIVER_TRAVERSAL_GRAPH_VIEW_H_
