// WriteBatchInternal: the engine's view of a WriteBatch's recorded
// operations, and how a batch stores them (WriteBatch::OpRecord, 32 bytes,
// names interned per batch). Keeps the public header small (LevelDB's
// pattern): the engine reads decoded operations (internal::BatchOp) and
// never the records.
#ifndef QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_
#define QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "quiver/index.h"
#include "quiver/write_batch.h"

namespace quiver {

namespace index {
struct BuiltIndex;  // index/online_build.h
}  // namespace index

enum class OpKind : std::uint8_t {
  kAddVertex,
  kAddEdge,
  kSetVertexProperty,
  kSetEdgeProperty,
  kRemoveVertexProperty,
  kRemoveEdgeProperty,
  kRemoveEdge,
  kRemoveVertex,
  // Index lifecycle (Graph::CreateIndex / DropIndex), always alone in a batch.
  kDefineIndex,
  kIndexReady,
  kDropIndex,
  // Upserts and expectations: resolved by the writer (write/resolver.h)
  // into the operations above before validation; never logged.
  kUpsertVertex,
  kUpsertEdge,
  kExpectVertexProperty,
  kExpectEdgeProperty,
  kExpectVertex,
  kExpectEdge,
  kExpectKeyFree,
};

// What an index lifecycle operation carries.
struct IndexOp {
  IndexSpec spec;  // kDefineIndex: the definition; the others: spec.name only
  // kIndexReady, kDropIndex: the sequence number of the batch that declared
  // the index (0 in a drop: whichever index has the name).
  SequenceNumber declared = 0;
  // kIndexReady from CreateIndex: the contents built from a snapshot (null
  // when replayed from the log: recovery builds them itself).
  std::shared_ptr<index::BuiltIndex> built;
};

// How a batch stores one operation: 32 bytes, so a 100,000-edge batch's op
// array is 3.2 MB. The fields that only some kinds use share slots:
//   a      v1 or e (a committed id, or the index of a handle of this batch);
//          for an index lifecycle op, its entry in the batch's rare_ list
//   b      v2 (kAddEdge, kUpsertEdge) or key_count (kUpsertVertex,
//          kExpectKeyFree)
//   name   index in the batch's name table, or kNoName
//   refs   which of a and b are handles (kANew, kBNew) and whether the
//          handle came from another batch (kAForeign, kBForeign): the tag
//          itself is not kept, only whether the handle was the batch's own
//          when recorded (its tag, or one of its origins' below their counts;
//          WriteBatch::Origin), which cannot go stale: the contents change
//          only together with the tag and the origins (Clear, and the
//          moved-from side of a move); the moved-to side keeps all three; a
//          copy keeps the contents and draws a tag, and an own handle
//          decodes with whichever tag the batch holding the record has. The high bits
//          say what a and b hold (a copy of what the kind implies, so that
//          decoding looks at one byte): kAIsEdge, kBIsVertex, kIsIndex
// The engine reads operations decoded (internal::BatchOp below).
struct WriteBatch::OpRecord {
  static constexpr std::uint32_t kNoName = ~std::uint32_t{0};
  static constexpr std::uint8_t kANew = 1, kAForeign = 2, kBNew = 4, kBForeign = 8;
  static constexpr std::uint8_t kAIsEdge = 16, kBIsVertex = 32, kIsIndex = 64;

  OpKind kind;
  std::uint8_t flag = 0;
  std::uint8_t refs = 0;
  std::uint32_t name = kNoName;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::uint32_t prop_begin = 0;
  std::uint32_t prop_count = 0;
};

// The fields of index lifecycle operations (rare: always alone in a batch).
struct WriteBatch::Rare {
  std::shared_ptr<const IndexOp> index;
};

// A batch that this one is a copy of (directly, or through copies), as it
// was at the copy: its handles of index below these counts name the same
// vertices and edges here. A copy lists its original's origins, then the
// original itself (left out when it had returned no handles).
struct WriteBatch::Origin {
  std::uint64_t tag;
  std::uint32_t vertices;  // added_vertices_ at the copy
  std::uint32_t edges;     // added_edges_ at the copy
};

namespace internal {

// One recorded operation, decoded. Which fields matter depends on `kind`:
//   kAddVertex:            name = label, props
//   kAddEdge:              name = type, v1 = source, v2 = target, props
//   kSet*Property:         v1 or e, props = exactly one (key, value)
//   kRemove*Property:      v1 or e, name = key
//   kRemoveEdge:           e
//   kRemoveVertex:         v1
//   kDefineIndex, kIndexReady, kDropIndex: index
//   kUpsertVertex:         name = label, props = key_count keys, then the
//                          properties; flag = UpsertMode
//   kUpsertEdge:           name = type, v1 = source, v2 = target, props;
//                          flag = UpsertMode
//   kExpect*Property:      v1 or e; props = one (key, value) when flag is 1
//                          (equals), else name = key (absent)
//   kExpectVertex, kExpectEdge: v1 or e; flag 1 = exists, 0 = missing
//   kExpectKeyFree:        name = label, props = the keys
// `name` and `index` point into the batch: valid while it is unchanged.
struct BatchOp {
  OpKind kind = OpKind::kAddVertex;
  VertexRef v1{VertexId(0)};
  VertexRef v2{VertexId(0)};
  EdgeRef e{EdgeId(0)};
  std::string_view name;
  std::uint32_t prop_begin = 0;
  std::uint32_t prop_count = 0;
  std::uint32_t key_count = 0;
  std::uint8_t flag = 0;
  const IndexOp* index = nullptr;
};

// Which slot of an OpRecord holds what, by kind.
constexpr bool IsIndexKind(OpKind k) {
  return k == OpKind::kDefineIndex || k == OpKind::kIndexReady || k == OpKind::kDropIndex;
}
constexpr bool HasEdgeRef(OpKind k) {
  return k == OpKind::kSetEdgeProperty || k == OpKind::kRemoveEdgeProperty || k == OpKind::kRemoveEdge ||
         k == OpKind::kExpectEdgeProperty || k == OpKind::kExpectEdge;
}
constexpr bool HasTwoVertexRefs(OpKind k) { return k == OpKind::kAddEdge || k == OpKind::kUpsertEdge; }
constexpr bool HasKeyCount(OpKind k) { return k == OpKind::kUpsertVertex || k == OpKind::kExpectKeyFree; }
constexpr bool HasName(OpKind k, std::uint8_t flag) {
  switch (k) {
    case OpKind::kAddVertex:
    case OpKind::kAddEdge:
    case OpKind::kRemoveVertexProperty:
    case OpKind::kRemoveEdgeProperty:
    case OpKind::kUpsertVertex:
    case OpKind::kUpsertEdge:
    case OpKind::kExpectKeyFree: return true;
    case OpKind::kExpectVertexProperty:
    case OpKind::kExpectEdgeProperty: return flag == 0;
    default: return false;
  }
}

class WriteBatchInternal {
 public:
  using Op = BatchOp;
  using Record = WriteBatch::OpRecord;
  static_assert(sizeof(Record) == 32);

  // A batch's operations, decoded one at a time as they are read: indexing
  // and iteration yield BatchOp values (bind them to `const Op&` or copy).
  class OpList {
   public:
    class Iterator {
     public:
      Iterator(const WriteBatch* b, const Record* r) : b_(b), r_(r) {}
      Op operator*() const { return Decode(*b_, *r_); }
      Iterator& operator++() {
        ++r_;
        return *this;
      }
      bool operator==(const Iterator& o) const { return r_ == o.r_; }

     private:
      const WriteBatch* b_;
      const Record* r_;
    };
    explicit OpList(const WriteBatch& b) : b_(&b) {}
    std::size_t size() const { return b_->ops_.size(); }
    bool empty() const { return b_->ops_.empty(); }
    Op operator[](std::size_t i) const { return Decode(*b_, b_->ops_[i]); }
    Iterator begin() const { return Iterator(b_, b_->ops_.data()); }
    Iterator end() const { return Iterator(b_, b_->ops_.data() + b_->ops_.size()); }

   private:
    const WriteBatch* b_;
  };

  static OpList Ops(const WriteBatch& b) { return OpList(b); }
  // Op i's endpoints when it is an AddEdge between two committed vertices,
  // read from its record without decoding it (validation's prefetch).
  static bool CommittedEdgeEndpoints(const WriteBatch& b, std::size_t i, std::uint64_t* source,
                                     std::uint64_t* target) {
    const Record& r = b.ops_[i];
    if (r.kind != OpKind::kAddEdge || (r.refs & (Record::kANew | Record::kBNew)) != 0) return false;
    *source = r.a;
    *target = r.b;
    return true;
  }
  static std::span<const Property> Props(const WriteBatch& b, const Op& op) {
    return {b.properties_.data() + op.prop_begin, op.prop_count};
  }
  static std::uint64_t Tag(const WriteBatch& b) { return b.tag_; }
  // Test hook: the next tag drawn (by any batch) is `next`, which must not
  // be below the counter (tags are never handed out twice).
  static void TEST_SkipTagsTo(std::uint64_t next);
  // Operations counted against Limits::max_batch_ops: one per op plus one
  // per property an op carries.
  static std::size_t CountedOps(const WriteBatch& b) { return b.counted_ops_; }
  // About the memory the batch holds: its vectors, and the strings and
  // payloads they point to, by capacity (a value moved in keeps the buffer
  // it had), and the definitions index operations carry (allocator overhead
  // aside). What the commit queue's byte bound counts
  // (WriterOptions::max_queued_bytes).
  static std::size_t ApproximateBytes(const WriteBatch& b);

  // Name `id` of `b`'s name table.
  static std::string_view Name(const WriteBatch& b, std::uint32_t id) {
    const std::size_t begin = id == 0 ? 0 : b.name_ends_[id - 1];
    return std::string_view(b.names_.data() + begin, b.name_ends_[id] - begin);
  }
  // The refs bits that say what slots a and b of an op of `kind` hold.
  static constexpr std::uint8_t SlotBits(OpKind kind) {
    return (IsIndexKind(kind) ? Record::kIsIndex : 0) | (HasEdgeRef(kind) ? Record::kAIsEdge : 0) |
           (HasTwoVertexRefs(kind) ? Record::kBIsVertex : 0);
  }
  // The index of `name` in `b`'s name table, added if new.
  static std::uint32_t InternName(WriteBatch& b, std::string_view name);
  // How many distinct names `b` holds.
  static std::size_t NameCount(const WriteBatch& b) { return b.name_ends_.size(); }

  // Decoding is on the writer's path, several times per op (validation,
  // apply, the WAL encoder): it reads the record's refs byte, not the kind.
  static Op Decode(const WriteBatch& b, const Record& r) {
    Op op;
    op.kind = r.kind;
    op.flag = r.flag;
    op.prop_begin = r.prop_begin;
    op.prop_count = r.prop_count;
    if (r.name != Record::kNoName) op.name = Name(b, r.name);
    const std::uint8_t bits = r.refs;
    if (bits & Record::kIsIndex) {
      op.index = b.rare_[r.a].index.get();
      return op;
    }
    const std::uint64_t tag_a = (bits & Record::kAForeign) ? 0 : b.tag_;
    const auto index_a = static_cast<std::uint32_t>(r.a);
    if (bits & Record::kAIsEdge) {
      op.e = (bits & Record::kANew) ? EdgeRef(NewEdge{tag_a, index_a}) : EdgeRef(EdgeId(r.a));
    } else {
      op.v1 = (bits & Record::kANew) ? VertexRef(NewVertex{tag_a, index_a}) : VertexRef(VertexId(r.a));
    }
    if (bits & Record::kBIsVertex) {
      const std::uint64_t tag_b = (bits & Record::kBForeign) ? 0 : b.tag_;
      op.v2 = (bits & Record::kBNew) ? VertexRef(NewVertex{tag_b, static_cast<std::uint32_t>(r.b)})
                                     : VertexRef(VertexId(r.b));
    } else {
      op.key_count = static_cast<std::uint32_t>(r.b);  // 0 in the kinds without keys
    }
    return op;
  }

  // A batch holding one index lifecycle operation.
  static WriteBatch IndexBatch(OpKind kind, IndexOp op) {
    WriteBatch b;
    AppendIndexOp(b, kind, std::move(op));
    return b;
  }
  // Appends an index lifecycle operation (the WAL decoder; validation
  // refuses it beside other operations).
  static void AppendIndexOp(WriteBatch& b, OpKind kind, IndexOp op) {
    AppendSharedIndexOp(b, kind, std::make_shared<const IndexOp>(std::move(op)));
  }
  // The same, sharing `op`: who made it may still change it until the batch
  // is queued (CreateIndex's drop, made before the sequence it names).
  static void AppendSharedIndexOp(WriteBatch& b, OpKind kind, std::shared_ptr<const IndexOp> op);
  // True if `b` holds upserts or expectations (the writer resolves them).
  static bool NeedsResolving(const WriteBatch& b) { return b.upserts_ != 0 || b.expectations_ != 0; }
  // Appends `op` carrying `props` (the resolver's rewriting; any `op`
  // fields the kind does not use are ignored), counting it as the public
  // calls do: one, plus its properties for an add.
  static void AppendOp(WriteBatch& b, const Op& op, std::span<const Property> props);
  // True if `b` is one index lifecycle operation.
  static bool IsIndexBatch(const WriteBatch& b) { return b.ops_.size() == 1 && !b.rare_.empty(); }
  // True if some operation of `b` is an index lifecycle operation.
  static bool HasIndexOp(const WriteBatch& b) { return !b.rare_.empty(); }

  // Recording (write_batch.cc): appends an op of `kind` naming `name`
  // (kNoName for none) with `props`, counted as one op plus one per
  // property, and returns it for the caller to fill in.
  // Out of memory, both leave `b` as it was.
  static Record& Append(WriteBatch& b, OpKind kind, std::uint32_t name, std::span<const Property> props,
                        std::span<const Property> more = {});
  // A record carrying the one property `p` (SetProperty, ExpectProperty),
  // with no name; its refs are the caller's to set.
  static Record& AppendWithProperty(WriteBatch& b, OpKind kind, Property p);
  // The refs bits for `r` in slot a (shift 0) or b (shift 2) of a record of
  // `b`, to or into the record's.
  template <typename Ref>
  static std::uint8_t RefBits(const WriteBatch& b, Ref r, int shift) {
    if (!r.is_new()) return 0;
    const std::uint8_t bits = IsOwn(b, r) ? Record::kANew : Record::kANew | Record::kAForeign;
    return static_cast<std::uint8_t>(bits << shift);
  }
  // True if handle `r` names one of `b`'s new elements: it has `b`'s tag,
  // or the tag of a batch `b` is a copy of and an index that batch had
  // reached at the copy (a later one names an element that batch added
  // after the copy, which `b` does not have).
  template <typename Ref>
  static bool IsOwn(const WriteBatch& b, Ref r) {
    if (r.batch_tag() == b.tag_) return true;
    return !b.origins_.empty() && FromOrigin(b, r.batch_tag(), r.raw(), std::is_same_v<Ref, EdgeRef>);
  }
  // The origins of a copy of `b`: `b`'s, then `b` itself if it has
  // returned handles.
  static std::vector<WriteBatch::Origin> OriginsOfCopy(const WriteBatch& b);

 private:
  // The empty slot of `b`'s name hash that `name` probes to.
  static std::uint32_t& Slot(WriteBatch& b, std::string_view name);
  // A handle from another batch decodes with tag 0, which no batch has.
  static std::uint64_t HandleTag(const WriteBatch& b, bool foreign) { return foreign ? 0 : b.tag_; }
  static bool FromOrigin(const WriteBatch& b, std::uint64_t tag, std::uint64_t index, bool edge);
  // A handle's index fits 32 bits: recording stored a NewVertex/NewEdge's.
  static std::uint32_t Index(std::uint64_t raw) { return static_cast<std::uint32_t>(raw); }
  static VertexRef VertexRefOf(const WriteBatch& b, std::uint64_t raw, bool is_new, bool foreign) {
    if (!is_new) return VertexId(raw);
    return NewVertex{HandleTag(b, foreign), Index(raw)};
  }
};

}  // namespace internal
}  // namespace quiver

#endif  // QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_
