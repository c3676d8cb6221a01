// BatchProcessor: validates a WriteBatch against the version being built,
// then applies it. Validation reads only; Apply cannot fail on valid input
// (except for memory exhaustion), which is what makes a batch
// all-or-nothing (invariant 2) without an undo log.
//
// Rules (docs/impl.md lists them with their status codes): names non-empty,
// valid UTF-8 and within Limits::max_string_bytes; string values valid
// UTF-8; doubles and vector elements finite; sizes within Limits; every id
// names an element live at that point of the batch; batch-local handles come
// from this batch and from an earlier operation.
//
// Thread safety: one instance per writer thread.
#ifndef QUIVER_WRITE_BATCH_PROCESSOR_H_
#define QUIVER_WRITE_BATCH_PROCESSOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "base/safe_hash.h"
#include "base/strings.h"
#include "index/maintainer.h"
#include "quiver/graph.h"
#include "quiver/options.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"
#include "storage/adjacency.h"
#include "storage/elements.h"
#include "storage/retire_list.h"
#include "write/index_checks.h"
#include "write/resolver.h"
#include "write/write_batch_internal.h"

namespace quiver {

// For tests only: false makes every BatchProcessor keep the leaves it
// empties, so a test can hold a twin graph that never reclaims beside one
// that does (set it around a Write: the commit reads it while applying).
inline std::atomic<bool> g_reclaim_removed_leaves{true};

class BatchProcessor {
 public:
  explicit BatchProcessor(const Limits& limits) : limits_(limits) {}

  // Recovery: batches come from the log, where they were valid when
  // committed. Index constraints (types, lengths, uniqueness) are not
  // checked again, and building indexes are not tracked.
  void set_replay(bool on) {
    replay_ = on;
    maintainer_.set_tracking(!on);
  }

  // OK if `batch` can be applied to `g` as it is now. A batch with upserts
  // or expectations is first resolved into a plain batch (resolver.h),
  // which is validated; then its expectations are checked (Aborted).
  Status Validate(const WriteBatch& batch, const storage::GraphRoots& g);

  // Applies a batch that Validate accepted against this same `g` (the last
  // one validated, if it needed resolving: its plain batch), filling the new
  // ids into `info`. Throws std::bad_alloc on memory exhaustion, leaving `g`
  // partially changed: the caller rolls the group back
  // (VersionChain::RollBack frees exactly the blocks in ctx.blocks).
  void Apply(const WriteBatch& batch, storage::GraphRoots& g, storage::MutationContext& ctx,
             CommitInfo* info);

  // After Validate accepted `batch`: the plain batch Apply will apply
  // (`batch` itself, or what it was resolved into).
  const WriteBatch& Plain(const WriteBatch& batch) const {
    return internal::WriteBatchInternal::NeedsResolving(batch) ? resolver_.plain() : batch;
  }

  // After Apply of a batch that needed resolving: its plain batch, which is
  // what the WAL records.
  WriteBatch TakeResolved() { return resolver_.TakePlain(); }

  // After the group's version was published (true) or rolled back (false):
  // index contents installed by the group's kIndexReady batches now belong
  // to the version, or stay with their builder to be freed; the ids
  // recorded for building indexes the group dropped or published are
  // forgotten, or kept, and those the group recorded are kept, or forgotten.
  void EndGroup(bool published);

  // How many entries the last kIndexReady batch's catch-up changed (recorded
  // elements whose key differs from the one the built tree holds).
  std::uint64_t TEST_last_catch_up_changes() const { return last_catch_up_changes_; }
  // How many recorded elements it read (those changed after the state the
  // built tree holds for them).
  std::uint64_t TEST_last_catch_up_visits() const { return last_catch_up_visits_; }

  // Bytes held by the property changes' scratch lists now.
  std::size_t TEST_prop_changes_bytes() const {
    return prop_changes_.capacity() * sizeof(storage::PropChange) +
           prop_links_.capacity() * sizeof(PropLink) + prop_ops_.capacity() * sizeof(std::uint32_t) +
           prop_last_.capacity() * sizeof(std::pair<ElemKey, std::uint32_t>);
  }
  // Bytes held by the adjacency sort buffers (FlushAdds) now.
  std::size_t TEST_sort_buffer_bytes() const {
    return (adds_.capacity() + adds_scratch_.capacity()) * sizeof(storage::EntryAdd);
  }

 private:
  // A key naming an element during validation: kind, new-in-batch, id/index.
  using ElemKey = std::uint64_t;
  struct ElemProps {
    std::int64_t count = 0;
    std::int64_t entry_bytes = 0;  // storage::PropEntryBytes summed
    base::SafeFlatHashMap<std::string, std::int64_t, base::StringHash, base::StringEq>
        keys;  // touched keys: the entry bytes of the value now, -1 if absent
  };

  Status ValidatePlain(const WriteBatch& batch, const storage::GraphRoots& g);
  void ApplyPlain(const WriteBatch& batch, storage::GraphRoots& g, storage::MutationContext& ctx,
                  CommitInfo* info);
  void Reset();
  Status CheckName(std::string_view what, std::string_view name) const;
  Status CheckValue(std::string_view key, const PropertyValue& v) const;
  // A string list: at most max_list_elements elements, each a string value
  // (max_string_bytes, valid UTF-8), its packed size within
  // max_property_bytes_per_element.
  Status CheckStringList(std::string_view key, const StringListView& list) const;
  Status CheckProperties(std::span<const Property> props) const;
  // InvalidArgument if a property key appears twice in `props`.
  static Status CheckDistinctKeys(std::span<const Property> props);
  // The names of a batch's upserts and the distinctness of their property
  // keys, before they are resolved: what resolution alone would judge by
  // the graph's state (a bad type or label matches no index:
  // FailedPrecondition; a key given twice is refused only when the upsert
  // adds) gets the status the plain operations give it, whether the upsert
  // will find or add. Also the key and value of each property expectation
  // (compared, never applied: bad input there is InvalidArgument or
  // OutOfRange, never the Aborted of an expectation that does not hold).
  Status CheckUpserts(const WriteBatch& batch) const;
  // `slot`, if given, receives the committed vertex's slot (null for a new one).
  Status CheckVertex(const WriteBatch& batch, VertexRef ref, const storage::GraphRoots& g,
                     const storage::VertexSlot** slot = nullptr) const;
  // The common AddEdge, judged without building a Status: both endpoints
  // committed and live, the batch removes no vertex, and each endpoint's
  // degree plus every edge of the batch stays within Limits::max_degree
  // (CheckDegree's test that needs no count). False: check it in full.
  bool CommittedEndpointsFit(const WriteBatch& batch, const internal::WriteBatchInternal::Op& op,
                             const storage::GraphRoots& g) const;
  // Limits::max_degree, for one more edge at `ref` in one direction.
  Status CheckDegree(const WriteBatch& batch, VertexRef ref, const storage::VertexSlot* slot, bool out);
  Status CheckEdge(const WriteBatch& batch, EdgeRef ref, const storage::GraphRoots& g) const;
  bool VertexRemovedInBatch(VertexRef ref) const;
  // Follows an element's property count and bytes through the batch;
  // `value` is null for a removal.
  void TrackPropertyChange(const WriteBatch& batch, ElemKey elem, bool is_edge, std::uint64_t id,
                           std::string_view key, const PropertyValue* value, const storage::GraphRoots& g);
  // Limits::max_properties_per_element and max_property_bytes_per_element,
  // on the counts and bytes after the batch.
  Status CheckPropertyCounts(const WriteBatch& batch) const;
  // Remembers a new element whose add alone passes
  // max_property_bytes_per_element (for CheckPropertyCounts).
  void NoteNewElementBytes(ElemKey elem, std::span<const Property> props);

  std::uint64_t ResolveVertex(VertexRef ref) const;
  std::uint64_t ResolveEdge(EdgeRef ref) const;
  storage::PropBlock* BuildBlock(std::span<const Property> props, storage::GraphRoots& g,
                                 storage::MutationContext& ctx);
  void RemoveEdgeInternal(std::uint64_t edge, std::uint64_t skip_vertex, storage::GraphRoots& g,
                          storage::MutationContext& ctx);
  void RemoveVertexInternal(std::uint64_t v, storage::GraphRoots& g, storage::MutationContext& ctx);
  // Removes the adjacency entries queued by RemoveEdgeInternal: per vertex
  // and group, one pass over its array.
  void FlushRemovals(storage::GraphRoots& g, storage::MutationContext& ctx);
  // Replaces each leaf the batch emptied with the shared leaf of removed
  // slots (RadixTable::ReclaimIfRemoved). Last in a batch: nothing after it
  // writes a slot the batch removed.
  void ReclaimLeaves(storage::GraphRoots& g, storage::MutationContext& ctx);
  // Appends the adjacency entries queued by AddEdge: sorted by vertex and
  // direction (stable, so each array gets its entries in edge id order, as
  // one append per edge would), then per vertex, direction and type one
  // AppendEntries, which replaces the array at most once. Allocates nothing
  // but account blocks (the scratch half of the sort buffers, arrays).
  void FlushAdds(storage::GraphRoots& g, storage::MutationContext& ctx);
  // Overwrites `key` (present) of `block` with `value` in place, unseen,
  // if the block is private, no index covers the key and the value fits.
  bool SetInPlace(index::ElementKind kind, std::uint32_t label, storage::PropBlock* block, std::uint32_t key,
                  const PropertyView& value, const storage::GraphRoots& g,
                  const storage::MutationContext& ctx) const;
  // Sets or removes one property of the element whose block is `block`:
  // in place if the group allocated the block and the value fits, else a
  // new block (the old one freed if private, retired if published).
  // `value` null removes the key (which must be present).
  void ChangeProperty(index::ElementKind kind, std::uint64_t id, std::uint32_t label,
                      storage::PropBlock*& block, std::uint32_t key, const PropertyView* value,
                      storage::GraphRoots& g, storage::MutationContext& ctx);
  // All the sets and removals of properties of one element in a batch are
  // applied together, at the element's last one, as one new block
  // (storage::WithChanges) and one change shown to the index maintainer: k
  // changes to one element cost O(k log k), where a block per change cost
  // O(k^2) (Engine II 1.1; 32,000 new keys on one vertex took 29 s), whether
  // they follow one another or other operations come between them (each of
  // `v.a, w.x, v.b, w.x, ...` rebuilt v's block). Nothing between them reads
  // the element's properties: in a valid batch the only other operation on
  // it, its removal (or its endpoint's), comes after them, and validation
  // already judged the batch's final state. One change alone takes
  // ChangeProperty. Changes that only set keys the block holds go in place
  // one by one while the block is private to the group, the value fits and
  // no index covers the key; from the first that cannot, the rest are built
  // as one block.
  static bool IsPropertyChange(OpKind kind);
  static bool IsVertexPropertyChange(OpKind kind);  // a set or removal of a vertex's
  // Fills prop_links_ for the batch's `changes` property changes; leaves it
  // empty if no element has two of them.
  void LinkPropertyChanges(const WriteBatch& batch, std::size_t changes);
  // Applies the changes of the element whose last change is
  // prop_links_[last] (the links chain them).
  void ApplyPropertyChanges(const WriteBatch& batch, std::uint32_t last, storage::GraphRoots& g,
                            storage::MutationContext& ctx);
  // The one step every property change of an existing element goes
  // through: shows the old and the new block to the index maintainer, then
  // retires the old block (freed at once if private) and stores the new.
  void ReplaceBlock(index::ElementKind kind, std::uint64_t id, std::uint32_t label, storage::PropBlock*& slot,
                    storage::PropBlock* next, storage::GraphRoots& g, storage::MutationContext& ctx);

  // Index lifecycle batches (one op each).
  Status ValidateIndexOp(const IndexOp& op, OpKind kind, const storage::GraphRoots& g);
  Status ValidateReady(const IndexOp& op, const index::PropertyIndex& p, const storage::GraphRoots& g) const;
  void ApplyIndexOp(const IndexOp& op, OpKind kind, storage::GraphRoots& g, storage::MutationContext& ctx);
  void ApplyReady(const IndexOp& op, storage::GraphRoots& g, storage::MutationContext& ctx);

  Limits limits_;
  bool replay_ = false;
  Resolver resolver_;
  // While validating a resolved batch: the original op index of each op.
  const std::vector<std::uint32_t>* origin_ = nullptr;
  index::IndexMaintainer maintainer_;
  IndexChecker index_checker_;
  // Index contents the current group installed, and the building indexes
  // it dropped or published, whose recorded ids go once it is published
  // (see EndGroup).
  std::vector<std::shared_ptr<index::BuiltIndex>> installed_;
  std::vector<SequenceNumber> dropped_;
  std::uint64_t last_catch_up_changes_ = 0;
  std::uint64_t last_catch_up_visits_ = 0;

  // Validation scratch, reset per batch. The hash tables are base::Safe*:
  // out of memory they throw and stay as they were, so the next batch can
  // reset them (Abseil's own are left unusable).
  std::uint32_t new_vertices_ = 0;
  std::uint32_t new_edges_ = 0;
  base::SafeFlatHashSet<std::uint64_t> removed_vertices_;
  base::SafeFlatHashSet<std::uint64_t> removed_edges_;
  std::vector<bool> new_vertex_removed_;
  std::vector<bool> new_edge_removed_;
  std::vector<std::uint32_t> new_vertex_op_;  // op index of each AddVertex
  std::vector<std::uint32_t> new_edge_op_;    // op index of each AddEdge
  base::SafeFlatHashMap<ElemKey, ElemProps> elem_props_;
  // New elements whose adds alone pass max_property_bytes_per_element: the
  // batch fails unless later operations bring them back under it.
  std::vector<std::pair<ElemKey, std::uint64_t>> heavy_new_elems_;
  // Edges the batch adds per vertex and direction; kept only once the batch
  // could pass Limits::max_degree at some vertex.
  base::SafeFlatHashMap<ElemKey, std::array<std::uint64_t, 2>> degree_added_;

  // Apply scratch.
  std::vector<std::uint64_t> new_vertex_ids_;
  std::vector<std::uint64_t> new_edge_ids_;
  std::vector<storage::PropInput> prop_inputs_;
  // ApplyPropertyChanges' list; a longer one is released after its use.
  static constexpr std::size_t kKeptPropChanges = 4096;
  std::vector<storage::PropChange> prop_changes_;
  // One per property change of the batch being applied, in batch order:
  // its operation's place, the previous change of the same element (its
  // index here, kNoOp if none) and whether a later one exists. Released
  // after a batch of more than kKeptPropChanges changes, as prop_last_
  // (the last change seen per element while linking).
  static constexpr std::uint32_t kNoOp = ~std::uint32_t{0};
  struct PropLink {
    std::uint32_t op = 0;
    std::uint32_t prev = kNoOp;
    bool later = false;
  };
  std::vector<PropLink> prop_links_;
  base::SafeFlatHashMap<ElemKey, std::uint32_t> prop_last_;
  std::vector<std::uint32_t> prop_ops_;  // one element's changes, in batch order
  // An adjacency entry to remove at the end of the batch.
  struct Removal {
    std::uint64_t vertex;
    std::uint64_t edge;
    std::uint32_t type;
    bool out;  // from the vertex's out-edges (else its in-edges)
  };
  std::vector<Removal> removals_;
  std::vector<std::uint64_t> edges_;  // FlushRemovals scratch
  // The leaves (id >> 6) in which the batch removed vertices and edges:
  // those that end the batch with every slot removed are reclaimed
  // (ReclaimLeaves).
  std::vector<std::uint64_t> removed_vertex_leaves_;
  std::vector<std::uint64_t> removed_edge_leaves_;
  std::vector<std::uint64_t> cleared_edge_prop_leaves_;  // the same for edge property blocks
  // Adjacency entries to add at the end of the batch (or before a vertex
  // removal, which walks adjacency): key = vertex * 2 + (1 for in-edges).
  // The buffers are blocks of the graph's memory account, sized to the
  // batch (two entries per AddEdge) and given back when ApplyPlain ends or
  // throws: a batch's 64 B per edge count in MemoryStats while it is
  // applied, and a failed batch keeps none of them.
  base::AccountBuffer<storage::EntryAdd> adds_;
  std::size_t adds_count_ = 0;
  base::AccountBuffer<storage::EntryAdd> adds_scratch_;  // FlushAdds' sort and type split
};

}  // namespace quiver

#endif  // QUIVER_WRITE_BATCH_PROCESSOR_H_
