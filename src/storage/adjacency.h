// Adjacency storage: per (vertex, direction, edge type) one contiguous array
// of 12-byte entries (edge id, neighbour id), with the neighbour inline so a
// hop never dereferences an edge record.
//
// A vertex slot holds, per direction, a tagged head word and the total
// degree (bits 0-1 are the tag):
//   head == 0                      no edges
//   head == type << 48 | EdgeArray* | 2
//                                  one group in an array of its own; its
//                                  count is the slot's degree and its type
//                                  is in the top 16 bits
//   head == GroupDir* | 1          groups in a directory, which holds each
//                                  group's array, count and type: several
//                                  groups, or one whose type (>= 2^16) does
//                                  not fit the word
//   head == type << 48 | first entry | 3
//                                  one group packed in its leaf's block
//                                  (storage/packed_adjacency.h); the slot's
//                                  degree is its count
// An array has no header: the block is its entries, from its first byte
// (12 bytes each), and its capacity is what the allocator made usable
// (ArrayCapacity). Its type lives in the head word or the directory, its
// count in the slot or the directory. So a vertex with one edge type keeps
// no directory, and a reader learns a single group's type and where its
// entries start from the slot alone: a sweep can start loading them
// (prefetch) before it has read a byte of them. Arrays and directories are
// at least 8-byte aligned, so bits 0-2 of their addresses are free for
// tags; a packed group's entries are 4-byte aligned, which leaves bits 0-1.
// Addresses must lie below 2^48, as the version chain's words require
// (storage/version.h): NewEdgeArray fails an allocation above (bad_alloc),
// so an allocator that tags pointers in their top bits (HWASan, AArch64
// MTE heap tagging without mimalloc) is not supported.
//
// (Until stop 41 an array began with an 8-byte header, its type and
// capacity: 8 bytes per array, 1.6 bytes per edge at degree 10.)
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

// An array of adjacency entries: the block holds nothing else (no header).
struct EdgeArray {
  EdgeEntry* entries() { return reinterpret_cast<EdgeEntry*>(this); }
  const EdgeEntry* entries() const { return reinterpret_cast<const EdgeEntry*>(this); }
};

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
inline constexpr std::uintptr_t kAddressMask = ((std::uintptr_t{1} << 48) - 1) & ~kTagMask;
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
  return reinterpret_cast<const EdgeArray*>(head & kAddressMask);
}
inline EdgeArray* AsMutableArray(std::uintptr_t head) { return const_cast<EdgeArray*>(AsArray(head)); }
// The type of a single-group head (array or packed).
inline std::uint32_t ArrayType(std::uintptr_t head) { return static_cast<std::uint32_t>(head >> 48); }
// The first entry of a single-group head (array or packed): its address.
inline const EdgeEntry* SingleEntries(std::uintptr_t head) {
  return reinterpret_cast<const EdgeEntry*>(head & kAddressMask);
}
// True if a group of `type` can be a single-group head; else it needs a
// directory. (An array's address always fits: NewEdgeArray.)
inline bool FitsHead(std::uint32_t type) { return type <= kMaxTypeInHead; }
// The head of a vertex whose one group of `type` is the array `a`.
// Requires FitsHead(type).
inline std::uintptr_t ArrayHead(const EdgeArray* a, std::uint32_t type) {
  return std::uintptr_t{type} << 48 | reinterpret_cast<std::uintptr_t>(a) | kTypedTag;
}
// True if a group of `type` whose entries start at `first` can have a packed
// head (PackedHead).
inline bool FitsPackedHead(const EdgeEntry* first, std::uint32_t type) {
  return FitsHead(type) && (reinterpret_cast<std::uintptr_t>(first) & ~kAddressMask) == 0;
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
  return SingleEntries(head);
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

// The room a group of `count` entries grows to for `n` more: all of them,
// at least 1/8 spare (the next size class up, so appends cost amortised
// O(1) copies with slack bounded by one allocator bin), and at least two
// entries more than it holds. The two: below ~10 entries mimalloc's bins are
// 8-16 bytes apart, about one entry, so growing to the next bin meant a copy
// at nearly every append of one entry to a published array (0.80 copies
// per entry for in-arrays of Poisson(10) degrees, each appended to by a
// batch of its own; 0.52 with the two, for 0.13 B more slack per entry:
// docs/impl.md, "Batch edge inserts"). Validation keeps count + n within
// kMaxDegreeCeiling, so it fits 32 bits.
inline std::uint32_t GrownCapacity(std::uint32_t count, std::uint32_t n) {
  const std::uint32_t least = count + (count / 8 > 1 ? 1 + count / 8 : 2);
  return count + n > least ? count + n : least;
}

// A new array with room for at least `min_capacity` entries (filled to the
// allocator's bin: ArrayCapacity gives the room it has). Its entries are
// unwritten.
EdgeArray* NewEdgeArray(std::uint32_t min_capacity, MutationContext& ctx);

// The entries array `a` has room for: what the allocator made usable of its
// block, in whole entries (the block has no header to keep it in). One
// lookup in the allocator's page metadata; the writer asks only when it
// appends to an array, never a reader.
std::uint32_t ArrayCapacity(const EdgeArray* a);

// The head of a vertex whose one group, of `type`, is the array `a` holding
// `count` entries: ArrayHead when the type fits the word, else a directory
// of that one group. Throws std::bad_alloc (the directory) having
// changed nothing; `a` is then still the caller's.
std::uintptr_t SingleGroupHead(EdgeArray* a, std::uint32_t count, std::uint32_t type, MutationContext& ctx);

// Writes one entry's bytes. Inline: the checkpoint loader stores every
// entry of the graph through it (out of line it was 4 % of a load's CPU).
inline void StoreEntry(EdgeEntry* e, std::uint64_t edge, std::uint64_t neighbor) {
  auto* p = reinterpret_cast<unsigned char*>(e);
  base::Store48(p, edge);
  base::Store48(p + 6, neighbor);
}

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_ADJACENCY_H_
