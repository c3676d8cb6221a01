// Adjacency storage: per (vertex, direction, edge type) one contiguous array
// of 12-byte entries (edge id, neighbour id), with the neighbour inline so a
// hop never dereferences an edge record.
//
// A vertex slot holds, per direction, a tagged head word and the total
// degree (bits 0-1 are the tag):
//   head == 0                      no edges
//   head == type << 48 | EdgeArray* | 2
//                                  one group; its count is the slot's degree
//                                  and its type is in the top 16 bits
//   head == EdgeArray*             one group whose type (>= 2^16) or address
//                                  (>= 2^48) does not fit beside the other:
//                                  the type is read from the array's header
//   head == GroupDir* | 1          several groups; the directory holds each
//                                  group's array, count and type
//   head == type << 48 | first entry | 3
//                                  one group packed in its leaf's block
//                                  (storage/packed_adjacency.h): the entries
//                                  start at the address (4-byte aligned, no
//                                  header); the slot's degree is their count
// A vertex with one edge type keeps no directory, and a reader learns a
// single group's type and where its entries start from the slot alone: a
// sweep can start loading them (prefetch) before it has read a byte of them.
// Arrays and directories are at least 8-byte aligned, so bits 0-2 of their
// addresses are free for tags; a packed group's entries are 4-byte aligned,
// which leaves bits 0-1.
//
// Growth and publication: an append writes the entry past the count every
// published version sees, then the new version publishes a larger count, so
// older versions never see it (invariant 1). A full array is copied into the
// next allocator size class (slack stays within one bin, ~12-25%) and the old
// one retired; a removal copies into a right-sized array. Arrays the group
// being built allocated itself (MutationContext::IsPrivate) are edited in
// place and freed, not retired, when outgrown; directories are copied on
// write unless born in the current epoch. So a group that removes k entries
// of one vertex copies its array at most once (RemoveEntries takes them all).
// A packed group is never written: the mutators below require a head that is
// not packed, and the writer first gives such a vertex an array of its own
// (storage::Unpack).
//
// Thread safety: readers call the const functions on published heads from
// any thread; mutators run on the writer thread against a version being built.
#ifndef QUIVER_STORAGE_ADJACENCY_H_
#define QUIVER_STORAGE_ADJACENCY_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/packed.h"
#include "quiver/snapshot.h"
#include "storage/retire_list.h"

namespace quiver::storage {

struct EdgeArray {
  std::uint32_t type;
  std::uint32_t capacity;
  // followed by `capacity` EdgeEntry (12 bytes each)
  EdgeEntry* entries() { return reinterpret_cast<EdgeEntry*>(this + 1); }
  const EdgeEntry* entries() const { return reinterpret_cast<const EdgeEntry*>(this + 1); }
};
static_assert(sizeof(EdgeArray) == 8);

struct GroupEntry {
  EdgeArray* array;
  std::uint32_t count;
  std::uint32_t type;
};

struct GroupDir {
  std::uint64_t birth;
  std::uint32_t size;
  std::uint32_t capacity;
  GroupEntry* groups() { return reinterpret_cast<GroupEntry*>(this + 1); }
  const GroupEntry* groups() const { return reinterpret_cast<const GroupEntry*>(this + 1); }
};

inline constexpr std::uintptr_t kDirTag = 1;
inline constexpr std::uintptr_t kTypedTag = 2;
inline constexpr std::uintptr_t kPackedTag = kDirTag | kTypedTag;
inline constexpr std::uintptr_t kTagMask = 3;
inline constexpr std::uintptr_t kTypedAddressMask = ((std::uintptr_t{1} << 48) - 1) & ~std::uintptr_t{7};
inline constexpr std::uintptr_t kPackedAddressMask = ((std::uintptr_t{1} << 48) - 1) & ~kTagMask;
inline constexpr std::uint32_t kMaxTypeInHead = 0xFFFFu;
static_assert(sizeof(std::uintptr_t) == 8, "the head word packs a type beside a 48-bit address");

inline bool IsDir(std::uintptr_t head) { return (head & kTagMask) == kDirTag; }
inline bool IsPacked(std::uintptr_t head) { return (head & kTagMask) == kPackedTag; }
inline const GroupDir* AsDir(std::uintptr_t head) {
  return reinterpret_cast<const GroupDir*>(head & ~kDirTag);
}
// Requires a single-group head that is an array (non-zero, neither a
// directory nor packed).
inline const EdgeArray* AsArray(std::uintptr_t head) {
  return reinterpret_cast<const EdgeArray*>((head & kTypedTag) != 0 ? head & kTypedAddressMask : head);
}
inline EdgeArray* AsMutableArray(std::uintptr_t head) { return const_cast<EdgeArray*>(AsArray(head)); }
// The type of a single-group head (array or packed): from the head word when
// it carries it.
inline std::uint32_t ArrayType(std::uintptr_t head) {
  return (head & kTypedTag) != 0 ? static_cast<std::uint32_t>(head >> 48) : AsArray(head)->type;
}
// The first entry of a single-group head (array or packed). A head with its
// type in the word is a typed array (tag 2: the entries follow the 8-byte
// header) or packed (tag 3: they start at the address), so bit 0 alone
// picks the offset, without a branch.
inline const EdgeEntry* SingleEntries(std::uintptr_t head) {
  if ((head & kTypedTag) != 0)
    return reinterpret_cast<const EdgeEntry*>((head & kPackedAddressMask) + ((~head & kDirTag) << 3));
  return AsArray(head)->entries();
}
static_assert(sizeof(EdgeArray) == 8, "SingleEntries skips the header as 1 << 3");
// The head of a vertex whose one group is `a` (with its type in the word
// when both fit).
inline std::uintptr_t ArrayHead(const EdgeArray* a) {
  const auto address = reinterpret_cast<std::uintptr_t>(a);
  if (a->type > kMaxTypeInHead || (address & ~kTypedAddressMask) != 0) return address;
  return std::uintptr_t{a->type} << 48 | address | kTypedTag;
}
// True if a group of `type` whose entries start at `first` can have a packed
// head (PackedHead).
inline bool FitsPackedHead(const EdgeEntry* first, std::uint32_t type) {
  const auto address = reinterpret_cast<std::uintptr_t>(first);
  return type <= kMaxTypeInHead && (address & ~kPackedAddressMask) == 0;
}
// The head of a vertex whose one group of `type` is packed at `first`.
// Requires FitsPackedHead(first, type).
inline std::uintptr_t PackedHead(const EdgeEntry* first, std::uint32_t type) {
  return std::uintptr_t{type} << 48 | reinterpret_cast<std::uintptr_t>(first) | kPackedTag;
}
// The address of the first block a head points to (array or directory; a
// packed group's first entry), for prefetching; null for no edges.
inline const void* HeadBlock(std::uintptr_t head) {
  if (head == 0) return nullptr;
  if (IsDir(head)) return AsDir(head);
  if (IsPacked(head)) return SingleEntries(head);
  return AsArray(head);
}

// --- Reads (any thread, published heads)

// Inline: these sit on every read path (lookups, hops, sweeps).

// The entries of group `type`; empty if absent.
inline std::span<const EdgeEntry> FindGroup(std::uintptr_t head, std::uint32_t degree, std::uint32_t type) {
  if (head == 0) return {};
  if (!IsDir(head)) {
    if (ArrayType(head) != type) return {};
    return {SingleEntries(head), degree};
  }
  const GroupDir* d = AsDir(head);
  const GroupEntry* g = d->groups();
  for (std::uint32_t i = 0; i < d->size; ++i)
    if (g[i].type == type) return {g[i].array->entries(), g[i].count};
  return {};
}

inline std::size_t GroupCount(std::uintptr_t head) {
  if (head == 0) return 0;
  return IsDir(head) ? AsDir(head)->size : 1;
}

// Requires i < GroupCount(head).
inline EdgeGroup GroupAt(std::uintptr_t head, std::uint32_t degree, std::size_t i) {
  if (!IsDir(head)) return EdgeGroup{EdgeTypeId(ArrayType(head)), {SingleEntries(head), degree}};
  const GroupEntry& g = AsDir(head)->groups()[i];
  return EdgeGroup{EdgeTypeId(g.type), {g.array->entries(), g.count}};
}

// --- Writes (writer thread, heads of a slot in a version being built)
//
// AppendEntry, AppendEntries, RemoveEntries and RetireAdjacency require a
// head that is not packed (storage::Unpack first).

// One adjacency entry to add: `edge` with `neighbor`, to group `type` of
// one direction of one vertex. `key` names that vertex and direction for the
// writer's sort (BatchProcessor: vertex * 2 + 1 for in-edges); the functions
// here ignore it.
struct EntryAdd {
  std::uint64_t key;
  std::uint64_t edge;
  std::uint64_t neighbor;
  std::uint32_t type;
};

// Appends (edge, neighbor) to group `type`, creating the group if needed.
void AppendEntry(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type, std::uint64_t edge,
                 std::uint64_t neighbor, MutationContext& ctx);
// Appends every entry of `adds` (all of group `type`), in their order, to
// that group, creating it if needed. The group's array is replaced at most
// once, by one that holds them all (at least 1/8 spare beyond its old count,
// as a single append would leave): k appends cost O(count + k), where k calls
// of AppendEntry could copy a growing array O(log k) times.
void AppendEntries(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type,
                   std::span<const EntryAdd> adds, MutationContext& ctx);
// Removes from group `type` every entry whose edge is in `sorted_edges`
// (ascending, distinct), keeping the order of the rest; returns how many it
// removed. One pass over the group whatever the number of edges: an array
// this group allocated is compacted in place, a published one copied once.
std::uint32_t RemoveEntries(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type,
                            std::span<const std::uint64_t> sorted_edges, MutationContext& ctx);
// Retires every block of a head (the vertex is being removed). If this
// throws std::bad_alloc, part of the head may be retired: the group must
// then be rolled back, not published.
void RetireAdjacency(std::uintptr_t head, MutationContext& ctx);
// Frees every block of a head (the last version is being destroyed); a
// packed head frees nothing (its leaf's block is freed once, by
// DestroyGraph).
void FreeAdjacency(std::uintptr_t head, base::MemoryAccount* account);

// The room a group of `count` entries grows to for `n` more: all of them
// and at least the next size class up (1/8 spare), so appends cost
// amortised O(1) copies with slack bounded by one allocator bin.
// Validation keeps count + n within kMaxDegreeCeiling, so it fits 32 bits.
inline std::uint32_t GrownCapacity(std::uint32_t count, std::uint32_t n) {
  return count + n > count + 1 + count / 8 ? count + n : count + 1 + count / 8;
}

// A new array for group `type` with room for at least `min_capacity`
// entries (filled to the allocator's bin). Its entries are unwritten.
EdgeArray* NewEdgeArray(std::uint32_t type, std::uint32_t min_capacity, MutationContext& ctx);

// Writes one entry's bytes. Inline: the checkpoint loader stores every
// entry of the graph through it (out of line it was 4 % of a load's CPU).
inline void StoreEntry(EdgeEntry* e, std::uint64_t edge, std::uint64_t neighbor) {
  auto* p = reinterpret_cast<unsigned char*>(e);
  base::Store48(p, edge);
  base::Store48(p + 6, neighbor);
}

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_ADJACENCY_H_
