// The checkpoint's index definitions block (kind 7, format version 2 on):
// the property indexes of the version, never their contents (the loader
// rebuilds them, and the label and type sets, from the tables).
//
//   payload := first_id:varint = 0  count:varint  IndexDef{count}
//   IndexDef := name:Str element:u8 (0 vertex, 1 edge) label_id:varint
//               kind:u8 (0 exact, 1 unique, 2 ordered; 3 edge-endpoint constraint,
//                        format version 3 on) type:u8 (ValueType, 0xFF any)
//               key_count:varint key_id:varint{key_count}
//               declared:varint (the sequence number of its DefineIndex batch)
//               state:u8 (0 building, 1 ready)
//
// Label and key ids refer to the names blocks before it; the block comes
// right after the property keys block and before the vertices, and is
// absent when the version has no property index.
#ifndef QUIVER_CHECKPOINT_INDEX_BLOCK_H_
#define QUIVER_CHECKPOINT_INDEX_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/coding.h"
#include "index/catalog.h"
#include "quiver/status.h"
#include "storage/elements.h"
#include "storage/retire_list.h"

namespace quiver::checkpoint {

// The payload of the block for `catalog`'s indexes (first_id and count included).
// The payload of the index definitions block listing `indexes` (a
// catalog's, or the definitions a bulk import declares), in that order.
std::vector<std::byte> EncodeIndexBlock(std::span<const index::PropertyIndex> indexes);
inline std::vector<std::byte> EncodeIndexBlock(const index::Catalog& catalog) {
  return EncodeIndexBlock(catalog.indexes());
}

// One definition as the block stores it, its ids not yet resolved.
struct IndexDefRecord {
  std::string_view name;  // a view into the block
  ElementKind element = ElementKind::kVertex;
  std::uint64_t label_id = 0;  // a label, or for an edge index an edge type
  IndexKind kind = IndexKind::kExact;
  std::optional<ValueType> type;
  std::vector<std::uint64_t> key_ids;
  SequenceNumber declared = 0;
  bool ready = false;
};

// Reads one IndexDef from `r` of a checkpoint of `format_version`:
// Corruption for truncated input, an unknown element, kind, type or state,
// or a kind that format version does not have (3 before version 3). Checks
// nothing that needs the names blocks (DecodeIndexBlock does).
Status ReadIndexDef(base::ByteReader& r, std::uint32_t format_version, IndexDefRecord* def);

// Decodes `count` definitions from `r` (after the prefix) of a checkpoint
// of `format_version` into g.catalog, each unbuilt: Corruption for an
// unknown element, kind or type, a kind that format version does not have
// (3 before version 3), an id no names block defined, a spec CheckSpec
// refuses, or a repeated name.
Status DecodeIndexBlock(base::ByteReader& r, std::uint64_t count, std::uint32_t format_version,
                        storage::GraphRoots& g, storage::MutationContext& ctx);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_INDEX_BLOCK_H_
