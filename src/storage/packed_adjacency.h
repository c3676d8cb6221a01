// Packed adjacency: the entries of a vertex leaf's single-group vertices,
// one direction, back to back in id order in one immutable block, so a
// sweep of the leaf reads one contiguous run (a CSR's access pattern) and
// the leaf's arrays cost no headers and no allocator slack.
//
// Layout. A packed vertex's head points at its first entry inside the block
// (adjacency.h, tag 3, type in bits 48-63) and its slot records where that
// is in the block (VertexSlot::*_packed_at, in entries), so the writer can
// find the block from any of its vertices. Readers need neither: a packed
// group reads like an array whose entries start at the head's address.
// Every packed head of one (leaf, direction) points into the same block,
// and no block is shared between leaves.
//
// Who packs. The checkpoint loader packs every leaf it builds (PackLeaf);
// a bulk import builds through the loader. The compactor (Graph::Compact)
// repacks, on the writer, the leaves whose vertices hold arrays (RepackLeaf).
// Vertices of several edge types, a type id above 65,535 or a degree above
// kMaxPackedDegree keep arrays.
//
// Writes (invariant 1: nothing published is written again). A vertex whose
// packed group changes (an append, a removal, the vertex's removal) moves
// out: Unpack copies its entries into an array of its own, O(degree) as
// for any published array; ReleasePacked just drops the head. The block is
// retired in the version whose leaf drops its last packed head of that
// direction (the rest move out once they read less than half of it), and
// freed by the epoch rule like any retired block. A rolled-back group
// needs nothing new: its leaf copy and the arrays it made are private
// blocks, and its retire list is forgotten; the block itself was never
// touched. DestroyGraph frees each block once, through its leaf.
//
// Thread safety: writer thread only (and the loader's workers, each on
// leaves of its own).
#ifndef QUIVER_STORAGE_PACKED_ADJACENCY_H_
#define QUIVER_STORAGE_PACKED_ADJACENCY_H_

#include <cstddef>
#include <cstdint>

#include "storage/adjacency.h"
#include "storage/elements.h"

namespace quiver::storage {

// Vertices of a higher degree keep arrays: theirs are long runs already,
// and a block keeps a moved-out vertex's entries until its whole leaf has
// moved out, so a hub would pin the most. 64 vertices of this degree put
// every offset within a slot's 16 bits.
inline constexpr std::uint32_t kMaxPackedDegree = 1024;
static_assert(VertexTable::kLeafSize * std::uint64_t{kMaxPackedDegree} <= 0x10000);

// The block a packed head of `slot` in direction `out` lies in.
void* PackedBlock(const VertexSlot& slot, bool out);

// Packs one direction of one leaf being built by the checkpoint loader:
// `slots[0, n)` are the leaf's slots (n <= 64), vertex i will hold
// `counts[i]` entries, all of edge type `types[i]` (a type above 65,535
// means none or several). Gives every packable vertex (a count in [1,
// kMaxPackedDegree], one type that fits the head) its packed head, degree
// and offset, and sets `cursors[i]` to where its entries go; leaves the
// others alone. Returns the mask of the vertices it packed (bit i). Throws
// std::bad_alloc having changed nothing.
std::uint64_t PackLeaf(VertexSlot* slots, std::size_t n, bool out, const std::uint32_t* counts,
                       const std::uint32_t* types, EdgeEntry** cursors, MutationContext& ctx);

// The compactor (Graph::Compact), on the writer. Random inserts leave each
// vertex's arrays wherever the allocator had room; repacking a leaf moves
// them back into one block in id order, the layout a loaded checkpoint has.
//
// The entries RepackLeaf would move in direction `out` of the leaf
// slots[0, n): those of every packable vertex (one group of at most
// kMaxPackedDegree entries), or 0 when none of them holds an array.
std::uint64_t RepackEntries(const VertexSlot* slots, std::size_t n, bool out);

// Repacks direction `out` of one leaf of the version being built: `slots`
// is the leaf's writable copy and n its slots below the table's count.
// Every packable vertex (see RepackEntries), whether it holds an array or is
// packed already, gets its entries in one new block laid out as PackLeaf
// lays it; the arrays and the leaf's old block are retired (freed at once
// when the group made them). Returns the entries moved, 0 when nothing was
// to do (or the block would lie beyond 2^48). O(entries of the leaf).
// Throws std::bad_alloc having changed nothing.
std::uint64_t RepackLeaf(VertexSlot* slots, std::size_t n, bool out, MutationContext& ctx);

// One Graph::Compact step's bounds: a quarter million entries copied or
// 4,096 leaves looked at, about 10 ms of the writer at the ~27M entries/s
// quiver-sweep-probe measured (500,000 x 10; stop 42 called it a
// millisecond or two). A write queued behind a step waits that long.
inline constexpr std::uint64_t kRepackEntriesPerCall = std::uint64_t{1} << 18;
inline constexpr std::uint64_t kRepackLeavesPerCall = 4096;
// The background compactor's (Options::compaction), which runs unasked
// beside the application's writes: about 1.2 ms a step. The price: each
// step packs its leaves' out-directions, then their in-directions, so
// smaller steps interleave out- and in-blocks more finely: 500,000 x 10
// compacted in steps of these bounds swept at 0.36-0.38 of the raw CSR,
// against 0.40-0.43 with Compact's (docs/impl.md, "Background compaction").
inline constexpr std::uint64_t kBackgroundRepackEntries = std::uint64_t{1} << 15;
inline constexpr std::uint64_t kBackgroundRepackLeaves = 512;

// Where a compaction stands, carried from one call to the next, and each
// call's bounds (a call ends at the first leaf that reaches either: the
// entries both directions of its leaves will move, or the leaves looked at).
struct RepackProgress {
  std::uint64_t next = 0;     // the first vertex id not visited yet
  std::uint64_t blocks = 0;   // (leaf, direction) blocks made
  std::uint64_t entries = 0;  // entries moved into them
  std::uint64_t step_entries = kRepackEntriesPerCall;
  std::uint64_t step_leaves = kRepackLeavesPerCall;
};

// Repacks the leaves from progress->next on, below `end` (and the table's
// count), that need it, until a bound of the call is reached; advances
// *progress. True if the version changed. Throws std::bad_alloc: the
// leaves repacked before then are in the version being built, which the
// group then rolls back whole, and *progress is not to be trusted.
bool RepackLeaves(GraphRoots& g, std::uint64_t end, RepackProgress* progress, MutationContext& ctx);

// If direction `out` of vertex `v` (its writable slot in the version being
// built) is packed: gives it an array of its own holding the same entries
// with room for `extra` more (at least the next size class beyond them, as
// AppendEntries would grow; 0: exactly its entries). Then, if no other
// vertex of the leaf reads the block in that direction, the block is
// retired; if the others read less than half of it, they move out too
// (arrays of their exact size) and it is retired, so that deleting most of
// a loaded graph gives its adjacency back. Throws std::bad_alloc having
// changed nothing.
void Unpack(VertexSlot* slot, std::uint64_t v, bool out, std::uint32_t extra, MutationContext& ctx);

// For a vertex being removed: clears a packed head of direction `out`
// (nothing is copied) and lets go of the block as Unpack does. Throws
// std::bad_alloc having changed nothing.
void ReleasePacked(VertexSlot* slot, std::uint64_t v, bool out, MutationContext& ctx);

// Frees, once each, the blocks of the packed heads met by calling this for
// every slot of a table in id order (DestroyGraph). Only for the last
// version alive.
class PackedBlockFreer {
 public:
  explicit PackedBlockFreer(base::MemoryAccount* account) : account_(account) {}
  void Visit(const VertexSlot& slot);

 private:
  base::MemoryAccount* account_;
  void* last_[2] = {nullptr, nullptr};  // per direction: a leaf's heads come together
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_PACKED_ADJACENCY_H_
