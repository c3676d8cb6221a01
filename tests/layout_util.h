// Test helpers that read a snapshot's adjacency layout (internal headers).
#ifndef QUIVER_TESTS_LAYOUT_UTIL_H_
#define QUIVER_TESTS_LAYOUT_UTIL_H_

#include <cstdint>

#include "quiver/snapshot.h"
#include "snapshot_internal.h"
#include "storage/packed_adjacency.h"

namespace quiver::test_util {

// The degrees of the packed heads of `snap`, both directions: the entries
// that live in packed blocks.
inline std::uint64_t PackedEntries(const Snapshot& snap) {
  const storage::GraphRoots& g = SnapshotInternal::Roots(snap);
  std::uint64_t n = 0;
  for (std::uint64_t v = 0; v < g.vertex_limit; ++v) {
    const storage::VertexSlot* s = storage::FindVertex(g, v);
    if (s == nullptr) continue;
    if (storage::IsPacked(s->out_head)) n += s->out_degree;
    if (storage::IsPacked(s->in_head)) n += s->in_degree;
  }
  return n;
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_LAYOUT_UTIL_H_
