// WriteBatchInternal: the engine's view of a WriteBatch's recorded
// operations. Keeps the public header small (LevelDB's pattern).
#ifndef QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_
#define QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "quiver/write_batch.h"

namespace quiver {

enum class OpKind : std::uint8_t {
  kAddVertex,
  kAddEdge,
  kSetVertexProperty,
  kSetEdgeProperty,
  kRemoveVertexProperty,
  kRemoveEdgeProperty,
  kRemoveEdge,
  kRemoveVertex,
};

// One recorded operation. Which fields matter depends on `kind`:
//   kAddVertex:            name = label, props
//   kAddEdge:              name = type, v1 = source, v2 = target, props
//   kSet*Property:         v1 or e, props = exactly one (key, value)
//   kRemove*Property:      v1 or e, name = key
//   kRemoveEdge:           e
//   kRemoveVertex:         v1
struct WriteBatch::Op {
  OpKind kind;
  VertexRef v1{VertexId(0)};
  VertexRef v2{VertexId(0)};
  EdgeRef e{EdgeId(0)};
  std::string name;
  std::uint32_t prop_begin = 0;
  std::uint32_t prop_count = 0;
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
};

}  // namespace internal
}  // namespace quiver

#endif  // QUIVER_WRITE_WRITE_BATCH_INTERNAL_H_
