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

#include <cstdint>
#include <optional>
#include <vector>

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

}  // namespace quiver::traversal

#endif  // QUIVER_TRAVERSAL_GRAPH_VIEW_H_
