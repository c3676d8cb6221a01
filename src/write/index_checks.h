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
// The key of the vertex or edge an operation names. Validation and the
// apply's linking of property changes (BatchProcessor) must key alike.
inline std::uint64_t BatchElementKey(VertexRef ref) { return (ref.is_new() ? kNewBit : 0) | ref.raw(); }
inline std::uint64_t BatchElementKey(EdgeRef ref) {
  return kEdgeBit | (ref.is_new() ? kNewBit : 0) | ref.raw();
}

class IndexChecker {
 public:
  // Requires `batch` to have passed the structural checks against `g`.
  Status Check(const WriteBatch& batch, const storage::GraphRoots& g);

  // The batch operations and (element, index) pairs the last Check visited:
  // tests hold it to O(operations + touched elements x indexes of their
  // label), whatever the batch's size and the other labels' indexes.
  std::uint64_t work() const { return work_; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  // One element the batch touches, of a label or type with indexes. Kept in
  // a vector in first-touch order (deterministic messages); no per-element
  // allocation: its overrides and keys live in the checker's shared lists.
  struct Elem {
    index::ElementKind kind = index::ElementKind::kVertex;
    bool is_new = false;
    bool removed = false;
    std::uint64_t ref = 0;  // committed id, or the index of its add in the batch
    std::uint32_t label = 0;
    const storage::PropBlock* base = nullptr;  // committed properties
    std::uint32_t add_op = 0;                  // new elements: the AddVertex/AddEdge op
    // The newest of the keys the batch set (value) or removed (null) after
    // the add, in overrides_ (each links to the one before); kNone if none.
    std::uint32_t last_override = kNone;
    // Its final keys of the label's ready unique indexes: keys_[keys_begin,
    // keys_begin + keys_count).
    std::uint32_t keys_begin = 0;
    std::uint32_t keys_count = 0;
  };
  struct Override {
    std::uint32_t key;
    const PropertyValue* value;  // null: removed
    std::uint32_t previous;      // the element's override before this one, or kNone
  };
  // One element's final key for the unique index at catalog position `index`:
  // key_bytes_[offset, offset + size).
  struct FinalKey {
    std::uint32_t index;
    std::uint32_t offset;
    std::uint32_t size;
  };
  using ElemKey = std::uint64_t;

  void Collect(const WriteBatch& batch, const storage::GraphRoots& g);
  // The element's position in elems_, or kNone for one of a label (type)
  // without indexes.
  std::uint32_t Touch(index::ElementKind kind, bool is_new, std::uint64_t ref, const WriteBatch& batch,
                      const storage::GraphRoots& g);
  std::optional<PropertyView> FinalValue(const Elem& e, const index::IndexDef& def, std::size_t j,
                                         const WriteBatch& batch) const;
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
  // The element's final key for the unique index at `index`, if it has one.
  std::optional<std::string_view> KeyFor(const Elem& e, std::uint32_t index) const;
  Status CheckUniqueness(const storage::GraphRoots& g);

  const WriteBatch* batch_ = nullptr;  // during Check
  std::vector<Elem> elems_;            // in first-touch order
  // Committed elements' positions in elems_ (new ones: new_*_elem_). The
  // hash tables are base::Safe*: out of memory they throw and stay as they
  // were, so the next Check can reset them.
  base::SafeFlatHashMap<ElemKey, std::uint32_t> committed_;
  std::vector<std::uint32_t> new_vertex_elem_, new_edge_elem_;  // by batch-local number; kNone: none
  std::vector<Override> overrides_;
  std::vector<FinalKey> keys_;
  std::string key_bytes_;
  // (index position, key) -> the first element of the batch to hold it.
  base::SafeFlatHashMap<std::pair<std::uint32_t, std::string_view>, std::uint32_t> in_batch_;
  base::SafeFlatHashSet<std::uint64_t> removed_vertices_;  // committed
  base::SafeFlatHashSet<std::uint64_t> removed_new_vertices_;
  std::vector<std::uint32_t> vertex_adds_, edge_adds_;  // op index of each AddVertex / AddEdge
  // The label (type) of the last new element looked up, by name.
  std::string_view last_name_[2];
  std::optional<std::uint32_t> last_label_[2];
  const storage::InternTable* last_names_[2] = {nullptr, nullptr};
  std::string key_;
  std::uint64_t work_ = 0;
};

}  // namespace quiver

#endif  // QUIVER_WRITE_INDEX_CHECKS_H_
