// Catalog: everything a version knows about indexes, held by the version
// beside its tables (GraphRoots::catalog).
//
//   - a label set per vertex label and a type set per edge type (IdSet:
//     chunks of ids as sorted arrays or bitmaps), so
//     Snapshot::Vertices(label) costs the label's size and
//     CountVertices(label) is O(1);
//   - per property key, how many live vertices and edges hold it;
//   - the property indexes: each an immutable definition (IndexDef, shared
//     by every catalog that lists it) and its tree.
//
// Copy-on-write like the intern tables: a published catalog is never
// written. The first change of a commit group clones it (OwnCatalog:
// O((labels + types + keys) / 256 + indexes): the per-label, per-type and
// per-key values are CowArrays, shared page by page) and the old object is
// retired;
// later changes of the group go to the private clone. A clone shares every
// tree and set with the original (roots are copied by value); trees and
// sets copy their own blocks on write (index_tree.h, id_set.h). Retiring a
// catalog frees the object, never its trees or sets.
//
// Thread safety: const methods on a published catalog from any thread; the
// rest only on a private clone, on the writer thread.
#ifndef QUIVER_INDEX_CATALOG_H_
#define QUIVER_INDEX_CATALOG_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "index/cow_array.h"
#include "index/id_set.h"
#include "index/index_tree.h"
#include "quiver/ids.h"
#include "quiver/index.h"
#include "storage/retire_list.h"

namespace quiver::index {

// The public enums, under the names the engine uses.
using ::quiver::ElementKind;
using ::quiver::IndexKind;
using ::quiver::IndexState;

// True for the kinds that allow one element per key (a property key, or an
// edge's (source, target)): validation checks them, upserts find through them.
inline bool IsUniqueKind(IndexKind k) { return k == IndexKind::kUnique || k == IndexKind::kUniqueEndpoints; }

// One index's definition, with its names resolved to ids (interned when it
// was declared, so they exist in every version that lists it).
struct IndexDef {
  std::string name;
  ElementKind element = ElementKind::kVertex;
  std::string label;
  std::uint32_t label_id = 0;  // label, or edge type, id
  std::vector<std::string> keys;
  std::vector<std::uint32_t> key_ids;
  IndexKind kind = IndexKind::kExact;
  std::optional<ValueType> type;
  // The sequence number of the batch that declared it: with the name, the
  // index's identity (a name may be reused after a drop).
  SequenceNumber declared = 0;
  // The tree's key width: 8 for one int64 or double key, else -1 (variable).
  std::int32_t key_width = -1;

  IndexSpec Spec() const;
};

struct PropertyIndex {
  std::shared_ptr<const IndexDef> def;
  IndexState state = IndexState::kBuilding;
  // The entries; empty while building. A ready index whose contents are
  // still to be built (recovery only: see `built`) is also empty.
  IndexRoot root;
  // False while the tree does not hold the index's contents: the writer
  // does not maintain it then. Only recovery leaves a ready index unbuilt,
  // until the end of the log's replay.
  bool built = false;
};

class Catalog {
 public:
  explicit Catalog(std::uint64_t birth) : birth_(birth) {}
  std::uint64_t birth() const { return birth_; }

  // --- Label and type sets (null if none was ever made).
  const IdSetRoot* Set(ElementKind kind, std::uint32_t label) const;
  // Creates the set if needed. Private catalogs only.
  IdSetRoot& MutableSet(ElementKind kind, std::uint32_t label);
  std::size_t SetCount(ElementKind kind) const { return Sets(kind).size(); }

  // --- Property key counts (elements holding the key).
  std::uint64_t KeyCount(ElementKind kind, std::uint32_t key) const;
  // Adds `delta` (+1 or -1). Private catalogs only.
  void AddKeyCount(ElementKind kind, std::uint32_t key, std::int64_t delta);
  std::size_t KeyCountSize(ElementKind kind) const { return Counts(kind).size(); }

  // --- Property indexes, in declaration order.
  const std::vector<PropertyIndex>& indexes() const { return indexes_; }
  // For changing an index in place; AddIndex and RemoveIndex add and remove.
  std::vector<PropertyIndex>& mutable_indexes() { return indexes_; }
  // Appends `p`. Private catalogs only.
  void AddIndex(PropertyIndex p);
  // Removes indexes()[i] (its tree is the caller's). Private catalogs only.
  void RemoveIndex(std::size_t i);
  // The positions in indexes() of the indexes on (kind, label), ascending:
  // what per-element work iterates, so that it does not grow with the
  // other labels' indexes.
  std::span<const std::uint32_t> IndexesOn(ElementKind kind, std::uint32_t label) const;
  // The index named `name`, or null.
  const PropertyIndex* Find(std::string_view name) const;
  PropertyIndex* MutableFind(std::string_view name);
  // True if some index (any state) holds elements of (kind, label).
  bool HasIndexOn(ElementKind kind, std::uint32_t label) const { return !IndexesOn(kind, label).empty(); }

  // A private copy for epoch `birth` (trees shared).
  Catalog* Clone(std::uint64_t birth) const;

  // Frees every tree and the catalog now: only when no version can reach
  // them (the last version dies).
  static void Destroy(Catalog* c, base::MemoryAccount* account);
  // Retire-list deleter: the object only; its trees live on in its clone.
  static void Delete(void* c, base::MemoryAccount*) { delete static_cast<Catalog*>(c); }

 private:
  CowArray<IdSetRoot>& Sets(ElementKind k) { return k == ElementKind::kVertex ? label_sets_ : type_sets_; }
  const CowArray<IdSetRoot>& Sets(ElementKind k) const {
    return k == ElementKind::kVertex ? label_sets_ : type_sets_;
  }
  CowArray<std::uint64_t>& Counts(ElementKind k) {
    return k == ElementKind::kVertex ? vertex_key_counts_ : edge_key_counts_;
  }
  const CowArray<std::uint64_t>& Counts(ElementKind k) const {
    return k == ElementKind::kVertex ? vertex_key_counts_ : edge_key_counts_;
  }

  std::uint64_t birth_;
  CowArray<IdSetRoot> label_sets_;  // by label id
  CowArray<IdSetRoot> type_sets_;   // by edge type id
  CowArray<std::uint64_t> vertex_key_counts_;
  CowArray<std::uint64_t> edge_key_counts_;
  std::vector<PropertyIndex> indexes_;
  // IndexesOn: (label or type id, the positions of its indexes), sorted by
  // id, only for ids with an index (a dense vector was O(largest indexed
  // id) per clone); rebuilt by AddIndex and RemoveIndex.
  using IndexesByLabel = std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>>;
  IndexesByLabel vertex_indexes_on_, edge_indexes_on_;
  void IndexesChanged();
};

// Returns a catalog the writer may change in epoch ctx.epoch: `*c` itself if
// born in it, else a clone that replaces it (the original is retired).
// Throws std::bad_alloc, leaving `*c` unchanged.
Catalog* OwnCatalog(Catalog*& c, storage::MutationContext& ctx);

}  // namespace quiver::index

#endif  // QUIVER_INDEX_CATALOG_H_
