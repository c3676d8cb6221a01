// WriteBatchInternal: the engine's view of a WriteBatch's recorded
// operations. Keeps the public header small (LevelDB's pattern).
#ifndef QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_
#define QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
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

// One recorded operation. Which fields matter depends on `kind`:
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
struct WriteBatch::Op {
  OpKind kind;
  VertexRef v1{VertexId(0)};
  VertexRef v2{VertexId(0)};
  EdgeRef e{EdgeId(0)};
  std::string name;
  std::uint32_t prop_begin = 0;
  std::uint32_t prop_count = 0;
  std::uint32_t key_count = 0;
  std::uint8_t flag = 0;
  std::shared_ptr<const IndexOp> index;
};

namespace internal {

class WriteBatchInternal {
 public:
  using Op = WriteBatch::Op;
  static const std::vector<Op>& Ops(const WriteBatch& b) { return b.ops_; }
  static std::span<const Property> Props(const WriteBatch& b, const Op& op) {
    return {b.properties_.data() + op.prop_begin, op.prop_count};
  }
  static std::uint32_t Tag(const WriteBatch& b) { return b.tag_; }
  // Operations counted against Limits::max_batch_ops: one per op plus one
  // per property an op carries.
  static std::size_t CountedOps(const WriteBatch& b) { return b.counted_ops_; }
  // About the memory the batch holds: its vectors, and the strings and
  // payloads they point to (allocator overhead aside). What the commit
  // queue's byte bound counts (WriterOptions::max_queued_bytes).
  static std::size_t ApproximateBytes(const WriteBatch& b);

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
  static void AppendSharedIndexOp(WriteBatch& b, OpKind kind, std::shared_ptr<const IndexOp> op) {
    b.ops_.emplace_back().kind = kind;
    b.ops_.back().index = std::move(op);
    ++b.counted_ops_;
  }
  // True if `b` holds upserts or expectations (the writer resolves them).
  static bool NeedsResolving(const WriteBatch& b) { return b.upserts_ != 0 || b.expectations_ != 0; }
  // Appends a property to `b`'s property list (the resolver's rewriting).
  static std::uint32_t AddProps(WriteBatch& b, std::span<const Property> props) {
    auto begin = static_cast<std::uint32_t>(b.properties_.size());
    b.properties_.insert(b.properties_.end(), props.begin(), props.end());
    return begin;
  }
  // Appends an expectation (the public Expect* calls).
  static Op& AddExpectation(WriteBatch& b, OpKind kind) {
    ++b.counted_ops_;
    ++b.expectations_;
    Op& op = b.ops_.emplace_back();
    op.kind = kind;
    return op;
  }
  // Appends an operation to `b`, counting it (and `props` properties) as
  // the public calls do.
  static Op& AppendOp(WriteBatch& b, OpKind kind, std::size_t props) {
    b.counted_ops_ += 1 + props;
    if (kind == OpKind::kAddVertex) ++b.added_vertices_;
    if (kind == OpKind::kAddEdge) ++b.added_edges_;
    Op& op = b.ops_.emplace_back();
    op.kind = kind;
    return op;
  }
  // True if `b` is one index lifecycle operation.
  static bool IsIndexBatch(const WriteBatch& b) { return b.ops_.size() == 1 && b.ops_[0].index != nullptr; }
  // True if some operation of `b` is an index lifecycle operation.
  static bool HasIndexOp(const WriteBatch& b) {
    for (const Op& op : b.ops_)
      if (op.index != nullptr) return true;
    return false;
  }
};

}  // namespace internal
}  // namespace quiver

#endif  // QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_
