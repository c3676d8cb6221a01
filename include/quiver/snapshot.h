// Snapshot: a read-only handle on one committed version of the whole graph.
//
// A snapshot sees exactly the batches with sequence numbers 1..sequence() and
// nothing later, for as long as the handle lives. Acquiring one is O(1) and
// lock-free; holding one never blocks the writer, and the writer never blocks
// it. Memory that later versions no longer use is freed once the last
// snapshot that can reach it is released, so long-lived snapshots pin memory
// under churn: release them when done.
//
// Everything a snapshot returns (spans, views, string_views) points into the
// version it pins and stays valid until the snapshot is destroyed or moved
// from. A snapshot may outlive the Graph that produced it.
//
// Example:
//   quiver::Snapshot snap = graph->GetSnapshot();
//   auto knows = snap.FindEdgeType("KNOWS");
//   for (const quiver::EdgeEntry& e : snap.OutEdges(v, *knows)) Visit(e.neighbor());
//
// Thread safety: a Snapshot is move-only; its const methods may be called
// from any number of threads at once.
#ifndef QUIVER_SNAPSHOT_H_
#define QUIVER_SNAPSHOT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "quiver/ids.h"
#include "quiver/index.h"
#include "quiver/status.h"
#include "quiver/value.h"

namespace quiver {

namespace internal {
class Version;
}  // namespace internal

static_assert(std::endian::native == std::endian::little, "Quiver's entry layout assumes little-endian");

// One adjacency entry: the edge and the vertex at its other end, stored
// inline (12 bytes: two 48-bit ids) so a hop never touches an edge record.
class EdgeEntry {
 public:
  EdgeId edge() const {
    std::uint64_t v;
    std::memcpy(&v, bytes_, 8);
    return EdgeId(v & kMaxElementId);
  }
  VertexId neighbor() const {
    std::uint64_t v;
    std::memcpy(&v, bytes_ + 4, 8);
    return VertexId(v >> 16);
  }

 private:
  unsigned char bytes_[12];
};
static_assert(sizeof(EdgeEntry) == 12);

enum class Direction : std::uint8_t { kOut = 0, kIn = 1 };

// The edges of one vertex, of one type, in one direction: contiguous.
struct EdgeGroup {
  EdgeTypeId type;
  std::span<const EdgeEntry> entries;
};

// All edge groups of one vertex in one direction (one group per edge type).
// A std::ranges::forward_range of EdgeGroup (iterators yield values), valid
// while the snapshot it came from lives, and so are its iterators (also once
// the Adjacency object itself is gone); a default one is empty.
class Adjacency {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = EdgeGroup;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = EdgeGroup;
    using iterator_concept = std::forward_iterator_tag;
    iterator() = default;
    iterator(const Adjacency* a, std::size_t i) : head_(a->head_), degree_(a->degree_), i_(i) {}
    EdgeGroup operator*() const { return Adjacency(head_, degree_).group(i_); }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++i_;
      return t;
    }
    friend bool operator==(const iterator& x, const iterator& y) { return x.i_ == y.i_; }

   private:
    // The range's own fields, not a pointer to it: an iterator stays valid
    // while the snapshot lives, after the Adjacency object is gone.
    const void* head_ = nullptr;
    std::uint32_t degree_ = 0;
    std::size_t i_ = 0;
  };

  Adjacency() = default;
  // Total entries over all groups.
  std::size_t degree() const { return degree_; }
  std::size_t group_count() const;
  // Requires i < group_count().
  EdgeGroup group(std::size_t i) const;
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, group_count()); }

 private:
  friend class Snapshot;
  Adjacency(const void* head, std::uint32_t degree) : head_(head), degree_(degree) {}
  const void* head_ = nullptr;  // internal adjacency head (tagged)
  std::uint32_t degree_ = 0;
};

// An edge's type and endpoints.
struct EdgeInfo {
  EdgeTypeId type;
  VertexId source;
  VertexId target;
};

// The properties of one element, in ascending key-id order. A
// std::ranges::forward_range and sized_range of Entry (iterators yield
// values), valid while the snapshot it came from lives, and so are its
// iterators; a default one is empty.
class PropertyRange {
 public:
  struct Entry {
    PropertyKeyId key;
    PropertyView value;
  };
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Entry;
    using iterator_concept = std::forward_iterator_tag;
    iterator() = default;
    iterator(const PropertyRange* r, std::size_t i) : block_(r->block_), i_(i) {}
    Entry operator*() const { return PropertyRange(block_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++i_;
      return t;
    }
    friend bool operator==(const iterator& x, const iterator& y) { return x.i_ == y.i_; }

   private:
    const void* block_ = nullptr;  // the range's, as Adjacency's iterator keeps its fields
    std::size_t i_ = 0;
  };

  PropertyRange() = default;
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  // Requires i < size().
  Entry operator[](std::size_t i) const;
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, size()); }

 private:
  friend class Snapshot;
  explicit PropertyRange(const void* block) : block_(block) {}
  const void* block_ = nullptr;
};

namespace internal {

// Label-set iteration (storage/snapshot.cc): fills `out` with up to `max`
// ids of the set `set` (an engine index root) that are >= `from`, in order;
// returns how many.
std::size_t FillFromSet(const void* set, std::uint64_t from, std::uint64_t* out, std::size_t max);

}  // namespace internal

// Iterates the live element ids of a snapshot in ascending order: all of
// them, those in an id range (a sweep of the table), or those of one label
// (vertices) or one type (edges), read from the label's set in time
// proportional to its size (a batch of ids per seek into the set). A
// std::ranges::forward_range of ids (iterators yield values; std::ranges
// algorithms and views work on it), valid while the snapshot it came from
// lives, and so are its iterators (also once the range object is gone).
template <typename Id>
class IdRange {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Id;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Id;
    using iterator_concept = std::forward_iterator_tag;
    iterator() = default;
    iterator(const IdRange* r, std::uint64_t pos) : v_(r->v_), end_(r->end_), set_(r->set_), pos_(pos) {}
    Id operator*() const { return Id(pos_); }
    iterator& operator++() {
      if (set_ == nullptr) {
        pos_ = IdRange(v_, pos_ + 1, end_).Next(pos_ + 1);
      } else if (++i_ < n_) {
        pos_ = batch_[i_];
      } else {
        Fill(pos_ + 1);
      }
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const iterator& x, const iterator& y) { return x.pos_ == y.pos_; }

   private:
    friend class IdRange;
    static constexpr std::size_t kBatch = 16;
    // The next batch of the set from `from` on; pos_ = its first id, or the end.
    void Fill(std::uint64_t from) {
      n_ = static_cast<std::uint32_t>(internal::FillFromSet(set_, from, batch_, kBatch));
      i_ = 0;
      pos_ = n_ > 0 ? batch_[0] : end_;
    }

    // The range's own fields, not a pointer to it: an iterator stays valid
    // while the snapshot lives, after the IdRange object is gone.
    const internal::Version* v_ = nullptr;
    std::uint64_t end_ = 0;
    const void* set_ = nullptr;
    std::uint64_t pos_ = 0;
    std::uint32_t i_ = 0;  // set iteration: pos_ == batch_[i_]
    std::uint32_t n_ = 0;
    std::uint64_t batch_[kBatch] = {};
  };

  iterator begin() const {
    iterator it(this, end_);
    if (set_ == nullptr) {
      it.pos_ = Next(begin_);
    } else {
      it.Fill(0);
    }
    return it;
  }
  iterator end() const { return iterator(this, end_); }

 private:
  friend class Snapshot;
  IdRange(const internal::Version* v, std::uint64_t begin, std::uint64_t end, const void* set = nullptr)
      : v_(v), begin_(begin), end_(end), set_(set) {}
  // The first live id >= pos, or end_ (table sweeps).
  std::uint64_t Next(std::uint64_t pos) const;

  const internal::Version* v_ = nullptr;
  std::uint64_t begin_ = 0;
  std::uint64_t end_ = 0;
  const void* set_ = nullptr;  // the label's (type's) set, if iterating one
};

using VertexRange = IdRange<VertexId>;
using EdgeRange = IdRange<EdgeId>;
template <>
std::uint64_t IdRange<VertexId>::Next(std::uint64_t pos) const;
template <>
std::uint64_t IdRange<EdgeId>::Next(std::uint64_t pos) const;

class Snapshot {
 public:
  // Pins no version: reads as an empty graph at sequence 0 (no elements, no
  // names), and valid() is false. So is a moved-from snapshot.
  Snapshot() = default;
  Snapshot(Snapshot&& other) noexcept : v_(std::exchange(other.v_, nullptr)), slot_(other.slot_) {}
  Snapshot& operator=(Snapshot&& other) noexcept;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  ~Snapshot();

  // False for a default-constructed or moved-from snapshot.
  bool valid() const { return v_ != nullptr; }

  // The sequence number of the newest batch this snapshot contains.
  SequenceNumber sequence() const;

  // Live element counts.
  std::uint64_t vertex_count() const;
  std::uint64_t edge_count() const;
  // One past the highest vertex / edge id assigned in this version: ids in
  // [0, limit) are live or removed, ids at or above it do not exist yet.
  std::uint64_t vertex_id_limit() const;
  std::uint64_t edge_id_limit() const;

  // --- Vertices
  bool HasVertex(VertexId v) const;
  // The vertex's label; nullopt if `v` is not a live vertex.
  std::optional<LabelId> LabelOf(VertexId v) const;
  // Edges of `v` of one type in one direction; empty if `v` is not live or
  // has none.
  std::span<const EdgeEntry> OutEdges(VertexId v, EdgeTypeId type) const;
  std::span<const EdgeEntry> InEdges(VertexId v, EdgeTypeId type) const;
  std::span<const EdgeEntry> Edges(VertexId v, Direction d, EdgeTypeId type) const;
  // Edges of `v` across all types in one direction.
  Adjacency OutEdges(VertexId v) const;
  Adjacency InEdges(VertexId v) const;
  Adjacency Edges(VertexId v, Direction d) const;
  std::size_t OutDegree(VertexId v) const;
  std::size_t InDegree(VertexId v) const;

  // --- Edges
  bool HasEdge(EdgeId e) const;
  std::optional<EdgeInfo> GetEdge(EdgeId e) const;

  // --- Properties (nullopt: element not live or key not set)
  std::optional<PropertyView> GetProperty(VertexId v, PropertyKeyId key) const;
  std::optional<PropertyView> GetProperty(VertexId v, std::string_view key) const;
  std::optional<PropertyView> GetProperty(EdgeId e, PropertyKeyId key) const;
  std::optional<PropertyView> GetProperty(EdgeId e, std::string_view key) const;
  PropertyRange Properties(VertexId v) const;
  PropertyRange Properties(EdgeId e) const;

  // --- Iteration over live elements, ascending id.
  VertexRange Vertices() const;
  // The vertices of one label, from its set: time proportional to their
  // number, not the graph's.
  VertexRange Vertices(LabelId label) const;
  // Live vertices with ids in [begin, end): for splitting a scan over threads.
  VertexRange Vertices(std::uint64_t begin, std::uint64_t end) const;
  EdgeRange Edges() const;
  // The edges of one type, from its set (time proportional to their number).
  EdgeRange Edges(EdgeTypeId type) const;
  // Live edges with ids in [begin, end): for splitting a scan over threads.
  EdgeRange Edges(std::uint64_t begin, std::uint64_t end) const;

  // --- Labels, edge types and property keys, with counts.

  // Live vertices of `label` / edges of `type`; 0 for an unknown id. O(1).
  //   std::uint64_t persons = snap.CountVertices(*snap.FindLabel("Person"));
  std::uint64_t CountVertices(LabelId label) const;
  std::uint64_t CountEdges(EdgeTypeId type) const;
  // The labels (edge types) with at least one live vertex (edge), in id
  // order, with their counts. O(labels). Like PropertyKeys() and Indexes(),
  // it builds a vector of names: out of memory it throws std::bad_alloc
  // (status.h).
  //   for (const quiver::LabelCount& l : snap.Labels()) std::cout << l.name << " " << l.vertices;
  std::vector<LabelCount> Labels() const;
  std::vector<EdgeTypeCount> EdgeTypes() const;
  // The property keys some live element holds, in id order, with how many
  // vertices and edges hold each (whatever the value, null included).
  std::vector<PropertyKeyCount> PropertyKeys() const;

  // --- Property indexes (include/quiver/index.h). Every answer equals a
  // full scan of this snapshot: ids of the live elements of the label whose
  // key equals `value` (same type; doubles compare by value, -0.0 == 0.0).
  // Elements whose key is missing or null are never found. Errors, common
  // to all: FailedPrecondition if no ready index answers the question ("no
  // index on Person.name"; an index still being built does not answer);
  // InvalidArgument for a null or float vector value, a NaN, or a value of
  // another type than the index declares; ResourceExhausted when memory
  // runs out (the result's ids, a key's encoding), never an exception.

  // The indexes of this snapshot, in declaration order, with state and
  // entry count.
  std::vector<IndexInfo> Indexes() const;

  // Ids of the `label` vertices whose `key` equals `value`, ascending,
  // through a single-key index on (label, key) (one that takes values of
  // value's type, if there are several).
  //   auto adas = snap.FindVertices("Person", "name", "Ada");
  //   if (adas.ok()) for (quiver::VertexId v : *adas) Use(v);
  Result<std::vector<VertexId>> FindVertices(std::string_view label, std::string_view key,
                                             const PropertyValue& value) const;
  Result<std::vector<EdgeId>> FindEdges(std::string_view type, std::string_view key,
                                        const PropertyValue& value) const;
  // The one `label` vertex whose `key` equals `value`, through a unique
  // index on (label, key); nullopt if none.
  //   std::optional<quiver::VertexId> ada = snap.FindVertex("Person", "name", "Ada").value();
  Result<std::optional<VertexId>> FindVertex(std::string_view label, std::string_view key,
                                             const PropertyValue& value) const;
  Result<std::optional<EdgeId>> FindEdge(std::string_view type, std::string_view key,
                                         const PropertyValue& value) const;
  // Lookups through the index named `index`, one value per key of the
  // index, in its key order: the way to use a composite index. NotFound for
  // an unknown index, InvalidArgument for an index of edges (vertices), a
  // wrong number of values; FindVertexByIndex needs a unique index.
  //   std::vector<quiver::PropertyValue> key = {"Ada", "Lovelace"};
  //   auto ids = snap.FindVerticesByIndex("person_full_name", key);
  Result<std::vector<VertexId>> FindVerticesByIndex(std::string_view index,
                                                    std::span<const PropertyValue> values) const;
  Result<std::vector<EdgeId>> FindEdgesByIndex(std::string_view index,
                                               std::span<const PropertyValue> values) const;
  Result<std::optional<VertexId>> FindVertexByIndex(std::string_view index,
                                                    std::span<const PropertyValue> values) const;
  Result<std::optional<EdgeId>> FindEdgeByIndex(std::string_view index,
                                                std::span<const PropertyValue> values) const;

  // Ids of the `label` vertices whose `key` lies in `range`, in value order
  // (then id order; both reversed if range.descending), at most range.limit,
  // through a single-key ordered index on (label, key). InvalidArgument for
  // a bound or prefix of a type the index does not hold, a NaN bound, or a
  // prefix together with a bound. Infinite double bounds are allowed.
  //   quiver::IndexRange r{.lo = quiver::RangeBound{18}, .hi = quiver::RangeBound{65, false}};
  //   auto adults = snap.VerticesInRange("Person", "age", r);
  Result<std::vector<VertexId>> VerticesInRange(std::string_view label, std::string_view key,
                                                const IndexRange& range) const;
  Result<std::vector<EdgeId>> EdgesInRange(std::string_view type, std::string_view key,
                                           const IndexRange& range) const;
  // How many ids VerticesInRange would return without a limit: O(log n).
  //   std::uint64_t n = snap.CountVerticesInRange("Person", "age", r).value();
  Result<std::uint64_t> CountVerticesInRange(std::string_view label, std::string_view key,
                                             const IndexRange& range) const;
  Result<std::uint64_t> CountEdgesInRange(std::string_view type, std::string_view key,
                                          const IndexRange& range) const;
  // The same through the ordered index named `index`, which may be
  // composite: the elements in the index (every key present) whose first
  // key lies in `range`, ordered by the whole key, then by id. NotFound for
  // an unknown index, FailedPrecondition for one that is not ordered.
  //   auto by_city = snap.VerticesInRangeByIndex("city_then_age", {.prefix = "Lon"});
  Result<std::vector<VertexId>> VerticesInRangeByIndex(std::string_view index, const IndexRange& range) const;
  Result<std::vector<EdgeId>> EdgesInRangeByIndex(std::string_view index, const IndexRange& range) const;
  Result<std::uint64_t> CountVerticesInRangeByIndex(std::string_view index, const IndexRange& range) const;
  Result<std::uint64_t> CountEdgesInRangeByIndex(std::string_view index, const IndexRange& range) const;

  // --- Bulk scans: the fast path for whole-graph sweeps.

  // One edge group met by ScanEdges.
  struct ScannedGroup {
    VertexId vertex;
    EdgeGroup group;
  };

  // Calls fn(VertexId vertex, const EdgeGroup& group) for every edge group
  // in direction `d` of every live vertex with an id in [begin, end), in id
  // order (a vertex without edges in that direction is skipped). It walks
  // storage leaf by leaf and prefetches the edge arrays of a batch of
  // vertices before handing them out, so a sweep is bounded by memory
  // bandwidth rather than by one cache miss per vertex. Split [0,
  // vertex_id_limit()) into ranges to sweep on several threads.
  template <typename Fn>
  void ScanEdges(std::uint64_t begin, std::uint64_t end, Direction d, Fn&& fn) const {
    ScannedGroup batch[kScanBatch];
    ScanCursor cursor{begin, 0};
    while (true) {
      std::size_t n = ScanBatch(&cursor, end, d, batch, kScanBatch);
      if (n == 0) return;
      for (std::size_t i = 0; i < n; ++i) fn(batch[i].vertex, batch[i].group);
    }
  }

  // --- Names. Find* return nullopt for a name this version has never seen;
  // *Name return "" for an id this version does not know (every name is
  // non-empty, so "" means unknown).
  std::optional<LabelId> FindLabel(std::string_view name) const;
  std::optional<EdgeTypeId> FindEdgeType(std::string_view name) const;
  std::optional<PropertyKeyId> FindPropertyKey(std::string_view name) const;
  std::string_view LabelName(LabelId id) const;
  std::string_view EdgeTypeName(EdgeTypeId id) const;
  std::string_view PropertyKeyName(PropertyKeyId id) const;

 private:
  friend class SnapshotInternal;
  static constexpr std::size_t kScanBatch = 32;
  struct ScanCursor {
    std::uint64_t vertex;
    std::uint32_t group;  // next group of `vertex` (a vertex may span batches)
  };
  // Fills up to `max` groups from `*cursor` on, advancing it; 0 at the end.
  std::size_t ScanBatch(ScanCursor* cursor, std::uint64_t end, Direction d, ScannedGroup* out,
                        std::size_t max) const;

  Snapshot(const internal::Version* v, std::uint32_t slot) : v_(v), slot_(slot) {}
  const internal::Version* v_ = nullptr;
  std::uint32_t slot_ = 0;  // the engine's reader slot holding the pin (storage/version.h)
};

}  // namespace quiver

#endif  // QUIVER_SNAPSHOT_H_
