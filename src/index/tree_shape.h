// tree::Shape: the sizes, capacities and array offsets of one IndexTree's
// nodes, derived from its root (tree_node.h ShapeOf). Its own header so that
// IndexTree::Cursor can keep one without index_tree.h seeing the layouts.
#ifndef QUIVER_INDEX_TREE_SHAPE_H_
#define QUIVER_INDEX_TREE_SHAPE_H_

#include <cstdint>

namespace quiver::index::tree {

// Arrays are indexed by node kind: [0] inner nodes, [1] leaves.
struct Shape {
  std::int32_t width = -1;  // key_width: -1 variable
  std::uint32_t node_bytes[2] = {0, 0};
  std::uint32_t max_count[2] = {0, 0};
  // Fixed layouts: array offsets from the node start.
  std::uint32_t keys_off[2] = {0, 0};
  std::uint32_t ids_off[2] = {0, 0};
  std::uint32_t children_off = 0;  // fixed inner nodes

  constexpr bool fixed() const { return width >= 0; }
};

}  // namespace quiver::index::tree

#endif  // QUIVER_INDEX_TREE_SHAPE_H_
