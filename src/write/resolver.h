// Resolver: turns a batch that holds upserts or expectations into the plain
// batch (adds, sets, removes) that the writer validates, applies and logs.
//
// Each UpsertVertex is looked up, in op order, through the ready unique
// index of its label whose keys are exactly the upsert's, in the version
// being built (so the batches before it in its group count) and among the
// batch's earlier upserts of the same index and key. It becomes:
//   - not found: an AddVertex of the keys and the properties;
//   - found (vertex X, committed or added by an earlier upsert): merge, a
//     SetProperty per property; replace, first a RemoveProperty per key X
//     may hold that is neither a key nor a property (its committed keys and
//     every key the batch set on it before). The keys themselves are set
//     again only if an earlier operation of the batch set them on X.
// Later operations naming the upsert's handle name X (a committed id, or
// the new vertex's index in the plain batch).
//
// Each UpsertEdge likewise, through the ready edge-endpoint constraint
// (kUniqueEndpoints) of its type, keyed by its two endpoints as the plain
// batch names them (committed ids, or new vertices' indexes; a pair with a
// new vertex can only repeat an earlier upsert of the batch). It becomes an
// AddEdge, or SetEdgeProperty operations (replace: first a
// RemoveEdgeProperty per key the edge may hold that is not a property) on
// edge X; later operations naming its handle name X. Expectations are set aside
// and checked against the same version once the plain batch validated.
//
// The plain batch is what the WAL records: replaying it against the state
// the original was applied to assigns the same ids and reaches the same
// state, with no lookup to redo (docs/wal_format.md, "Upserts and
// expectations").
//
// Thread safety: one instance per BatchProcessor (the writer thread).
#ifndef QUIVER_WRITE_RESOLVER_H_
#define QUIVER_WRITE_RESOLVER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/safe_hash.h"
#include "base/strings.h"
#include "index/catalog.h"
#include "quiver/graph.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"
#include "storage/elements.h"
#include "write/write_batch_internal.h"

namespace quiver {

// Prefixes a failure with the operation it came from: "operation <index>: ...".
// OK stays OK.
Status AtOp(std::size_t index, const Status& s);

class Resolver {
 public:
  // Builds the plain batch for `batch` (which must NeedsResolving) against
  // `g`. FailedPrecondition for an upsert (or ExpectKeyFree) no ready unique
  // index (edge-endpoint constraint) covers; InvalidArgument for bad keys or handles; NotFound for an
  // upsert that finds a vertex the batch removed earlier. Messages start
  // with the operation's index in `batch`.
  Status Resolve(const WriteBatch& batch, const storage::GraphRoots& g);

  // The plain batch, valid until the next Resolve.
  const WriteBatch& plain() const { return plain_; }
  WriteBatch TakePlain() { return std::move(plain_); }
  // For each operation of the plain batch, the index of the operation of
  // the original it came from (for messages).
  const std::vector<std::uint32_t>& origin() const { return origin_; }

  // Checks the expectations against `g` (the version the batch is applied
  // to): Aborted naming the first that fails, its index and what was found.
  Status CheckExpectations(const storage::GraphRoots& g) const;

  // Turns the CommitInfo of the plain batch into the original's: one vertex
  // per AddVertex or UpsertVertex handle, with vertex_found, and one edge
  // per AddEdge or UpsertEdge handle, with edge_found.
  void FixInfo(CommitInfo* info) const;

 private:
  // Where a vertex handle of the original batch points.
  struct Target {
    bool committed = false;
    std::uint64_t id = 0;  // committed id, or index among the plain batch's adds
    bool found = false;    // an upsert that found a vertex existing before the batch
  };
  using TargetKey = std::uint64_t;  // committed id, or kNew | plain index
  static constexpr std::uint64_t kNew = std::uint64_t{1} << 63;
  static TargetKey KeyOf(const Target& t) { return t.committed ? t.id : (kNew | t.id); }

  Status UpsertEdge(std::uint32_t op_index, const internal::WriteBatchInternal::Op& op,
                    const WriteBatch& batch, const storage::GraphRoots& g);
  Status Upsert(std::uint32_t op_index, const internal::WriteBatchInternal::Op& op, const WriteBatch& batch,
                const storage::GraphRoots& g);
  // The upsert's (or ExpectKeyFree's) index and encoded key.
  Status CoveringIndex(std::string_view label, std::span<const Property> keys, const storage::GraphRoots& g,
                       const index::PropertyIndex** found, std::string* key) const;
  Result<VertexRef> MapVertex(VertexRef r) const;
  Result<EdgeRef> MapEdge(EdgeRef e) const;
  static EdgeRef EdgeRefOf(const Target& t, std::uint64_t tag);
  void TouchEdge(EdgeRef mapped, std::string_view key);
  void Emit(std::uint32_t origin, internal::WriteBatchInternal::Op op, std::span<const Property> props);
  void EmitSet(std::uint32_t origin, const Target& t, const Property& p);
  void Touch(VertexRef mapped, std::string_view key);
  static VertexRef RefOf(const Target& t, std::uint64_t tag);

  const WriteBatch* batch_ = nullptr;
  WriteBatch plain_;
  std::vector<std::uint32_t> origin_;
  std::vector<Target> targets_;       // per vertex handle of the original
  std::vector<Target> edge_targets_;  // per edge handle of the original
  std::uint32_t plain_new_vertices_ = 0;
  std::uint32_t plain_new_edges_ = 0;
  // The hash tables are base::Safe*: out of memory they throw and stay as
  // they were, so the next Resolve can reset them.
  // (index name, encoded key) of each upsert so far -> its handle's target.
  base::SafeFlatHashMap<std::string, Target> upserted_;
  // Keys the batch set on each vertex so far (for replace and key re-sets):
  // the (vertex, key) pairs, and per vertex its keys as a list (the newest
  // in touched_head_, each linking to the one before in touched_list_). The
  // keys are views of the original batch's names, which outlive Resolve.
  void AddTouched(TargetKey t, std::string_view key);
  bool Touched(TargetKey t, std::string_view key) const { return touched_.contains(std::make_pair(t, key)); }
  base::SafeFlatHashSet<std::pair<TargetKey, std::string_view>> touched_;
  base::SafeFlatHashMap<TargetKey, std::uint32_t> touched_head_;
  std::vector<std::pair<std::string_view, std::uint32_t>> touched_list_;  // (key, the vertex's previous)
  base::SafeFlatHashSet<TargetKey> removed_;
  // The same for edges (edge targets), as one set of keys per edge (the
  // vertex tables' flat layout is not applied to edges yet).
  using Keys = base::SafeFlatHashSet<std::string, base::StringHash, base::StringEq>;
  // Adds `key` to `keys` (built first, so a failure leaves `keys` as it was).
  static void AddKey(Keys& keys, std::string_view key) {
    if (!keys.contains(key)) keys.insert(std::string(key));
  }
  base::SafeFlatHashMap<TargetKey, Keys> edge_touched_;
  base::SafeFlatHashSet<TargetKey> removed_edges_;
  std::vector<std::uint32_t> expectations_;  // op indexes in the original
  std::string key_;
};

}  // namespace quiver

#endif  // QUIVER_WRITE_RESOLVER_H_
