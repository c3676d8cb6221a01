// IndexChecker: the index constraints of one data batch, checked in
// validation against the version being built (so the batches before it in
// its group count), with nothing applied:
//   - a value of another type than a declared-type index of the element's
//     label takes: InvalidArgument;
//   - an element whose key would encode to more than kMaxKeyBytes:
//     InvalidArgument;
//   - a unique index or edge-endpoint constraint (ready) whose key (for the
//     constraint: an edge's (source, target)) two elements would hold after the
//     batch: AlreadyExists naming the index, the key and both ids. Either
//     both are in the batch, or one holds the key in the version and the
//     batch neither removes it nor moves it to another key (so removing an
//     element and adding another with its key in one batch is fine).
// Everything is judged on each touched element's state after the whole
// batch: O(touched elements x indexes of their label x log n).
//
// Thread safety: one instance per BatchProcessor (the writer thread).
#ifndef QUIVER_WRITE_INDEX_CHECKS_H_
#define QUIVER_WRITE_INDEX_CHECKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/safe_hash.h"
#include "index/catalog.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"
#include "storage/elements.h"

namespace quiver {

// An element a batch touches, as one 64-bit key: bit 63 set for an edge, bit
// 62 set for an element the batch itself creates (the rest is its batch-local
// number), otherwise the id. Batch validation and the index checks key their
// per-element state this way.
inline constexpr std::uint64_t kEdgeBit = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kNewBit = std::uint64_t{1} << 62;

class IndexChecker {
 public:
  // Requires `batch` to have passed the structural checks against `g`.
  Status Check(const WriteBatch& batch, const storage::GraphRoots& g);

  // The batch operations and (element, index) pairs the last Check visited:
  // tests hold it to O(operations + touched elements x indexes of their
  // label), whatever the batch's size and the other labels' indexes.
  std::uint64_t work() const { return work_; }

 private:
  // One element the batch touches, of a label or type with indexes.
  struct Elem {
    index::ElementKind kind = index::ElementKind::kVertex;
    bool is_new = false;
    std::uint64_t ref = 0;  // committed id, or the index of its add in the batch
    std::uint32_t label = 0;
    const storage::PropBlock* base = nullptr;  // committed properties
    std::uint32_t add_op = 0;                  // new elements: the AddVertex/AddEdge op
    bool removed = false;
    // Keys the batch set (value) or removed (null) after the add, last wins.
    base::SafeFlatHashMap<std::uint32_t, const PropertyValue*> overrides;
    // Per index of the label (by position in the catalog): the final key,
    // if indexed.
    base::SafeFlatHashMap<std::size_t, std::string> keys;
  };
  using ElemKey = std::uint64_t;

  void Collect(const WriteBatch& batch, const storage::GraphRoots& g);
  Elem* Touch(index::ElementKind kind, bool is_new, std::uint64_t ref, const WriteBatch& batch,
              const storage::GraphRoots& g);
  std::optional<PropertyView> FinalValue(const Elem& e, std::uint32_t key, const WriteBatch& batch,
                                         const storage::GraphRoots& g) const;
  // Edges removed with an endpoint the batch removes.
  void MarkOrphanedEdges(const WriteBatch& batch, const storage::GraphRoots& g);
  bool CommittedEdgeGoes(std::uint64_t edge, const storage::GraphRoots& g) const;
  // The id the element has (or will get) in the committed version.
  std::uint64_t IdOf(const Elem& e, const storage::GraphRoots& g) const;
  std::string Describe(const Elem& e, const storage::GraphRoots& g) const;
  // An edge's final (source, target) ids (a new vertex's: the id it will get).
  std::pair<std::uint64_t, std::uint64_t> Endpoints(const Elem& e, const storage::GraphRoots& g) const;
  // The element's final values of the index's keys, for messages.
  std::string FinalKeyText(const Elem& e, const index::IndexDef& def, const storage::GraphRoots& g) const;
  Status CheckUniqueness(const storage::GraphRoots& g);

  const WriteBatch* batch_ = nullptr;  // during Check
  // The hash tables are base::Safe*: out of memory they throw and stay as
  // they were, so the next Check can reset them.
  base::SafeFlatHashMap<ElemKey, Elem> elems_;
  std::vector<ElemKey> order_;  // elems_ keys in first-touch order (deterministic messages)
  base::SafeFlatHashSet<std::uint64_t> removed_vertices_;  // committed
  base::SafeFlatHashSet<std::uint64_t> removed_new_vertices_;
  std::vector<std::uint32_t> vertex_adds_, edge_adds_;  // op index of each AddVertex / AddEdge
  std::string key_;
  std::uint64_t work_ = 0;
};

}  // namespace quiver

#endif  // QUIVER_WRITE_INDEX_CHECKS_H_
