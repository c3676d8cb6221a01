#include "storage/packed_adjacency.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "base/memory.h"

namespace quiver::storage {
namespace {

std::uintptr_t& HeadOf(VertexSlot* s, bool out) { return out ? s->out_head : s->in_head; }
std::uint32_t& DegreeOf(VertexSlot* s, bool out) { return out ? s->out_degree : s->in_degree; }

// Lets go of `block`, the block of direction `out` of `slot`'s leaf, which
// `slot` no longer reads (its head has just changed). The block is retired
// once no vertex of the leaf reads it; and once the leaf's other packed
// vertices read less than half of it, they move out too (arrays of their
// exact size) and it is retired: otherwise one vertex never written would
// keep a whole block alive, removed vertices' entries included, until the
// graph is loaded again. That copy is O(their entries), at most the entries
// that already left the block, so moving out stays amortised O(degree). A
// leaf's heads all point into its one block (see the header); slots past
// the table's count hold zeroes or the heads of vertices a rolled-back group
// appended, never packed ones (the loader and the compactor pack only slots
// below it). Throws std::bad_alloc
// having changed nothing.
void LetGoOfBlock(VertexSlot* slot, std::uint64_t v, bool out, void* block, MutationContext& ctx) {
  VertexSlot* first = slot - (v & (VertexTable::kLeafSize - 1));
  VertexSlot* rest[VertexTable::kLeafSize];
  std::size_t k = 0;
  std::uint64_t live = 0;
  for (std::size_t i = 0; i < VertexTable::kLeafSize; ++i) {
    if (first + i == slot || !IsPacked(HeadOf(first + i, out))) continue;
    rest[k++] = first + i;
    live += DegreeOf(first + i, out);
  }
  if (k != 0 && live * 2 * sizeof(EdgeEntry) >= base::UsableSize(block)) return;
  EdgeArray* arrays[VertexTable::kLeafSize];
  std::size_t made = 0;
  try {
    for (; made < k; ++made) arrays[made] = NewEdgeArray(DegreeOf(rest[made], out), ctx);
    ctx.retired->Reserve(1);  // so the Retire below cannot throw
  } catch (...) {
    while (made > 0) ctx.FreeUnlinked(arrays[--made]);
    throw;
  }
  for (std::size_t j = 0; j < k; ++j) {  // nothing throws from here on
    std::uintptr_t& head = HeadOf(rest[j], out);
    const std::uint32_t degree = DegreeOf(rest[j], out);
    std::memcpy(static_cast<void*>(arrays[j]->entries()), SingleEntries(head),
                std::size_t{degree} * sizeof(EdgeEntry));
    head = ArrayHead(arrays[j], ArrayType(head));  // a packed head's type fits
  }
  // Last: a block the compactor made in this group is private, and Retire
  // frees it at once (review, stop 42: retired before the copies above, it
  // was read after it was freed).
  ctx.Retire(block);
}

}  // namespace

void* PackedBlock(const VertexSlot& slot, bool out) {
  const std::uintptr_t head = out ? slot.out_head : slot.in_head;
  const std::uint16_t at = out ? slot.out_packed_at : slot.in_packed_at;
  return const_cast<EdgeEntry*>(SingleEntries(head) - at);
}

namespace {

// A block for `total` entries (the whole allocator bin), or null (nothing
// kept) when it lies beyond 2^48 and so cannot be named by a packed head.
// Throws std::bad_alloc.
EdgeEntry* NewPackedBlock(std::uint64_t total, std::size_t* bytes, MutationContext& ctx) {
  *bytes = base::GoodAllocationSize(total * sizeof(EdgeEntry));
  auto* block = static_cast<EdgeEntry*>(ctx.AllocateGood(*bytes));
  if (!FitsPackedHead(block, 0) || !FitsPackedHead(block + *bytes / sizeof(EdgeEntry) - 1, 0)) {
    ctx.FreeUnlinked(block);  // beyond 2^48: the leaf keeps arrays
    return nullptr;
  }
  return block;
}

// Gives each vertex of `mask` (slot i of `slots`, counts[i] entries of type
// types[i]) its packed head, degree and offset in `block` (`bytes` long,
// `total` entries wanted), in id order, and sets cursors[i] to where its
// entries go. The whole allocator bin is taken, and its slack spread
// between the vertices rather than left at the block's end: a sweep reads a
// leaf's blocks one after the other in the allocator's order, and a hole of
// 512 bytes after each (an 8 KiB bin holding 7.5 KiB of entries) made the
// hardware prefetcher lose the stream at every block (a sweep 1.4x slower
// than over the same entries with a hole of a few bytes after each vertex,
// as arrays have). Offsets stay within 16 bits. Never throws.
void Place(VertexSlot* slots, std::size_t n, bool out, std::uint64_t mask, const std::uint32_t* counts,
           const std::uint32_t* types, std::uint64_t total, EdgeEntry* block, std::size_t bytes,
           EdgeEntry** cursors) {
  const std::uint64_t packed = static_cast<std::uint64_t>(std::popcount(mask));
  const std::uint64_t spare = std::min<std::uint64_t>(bytes / sizeof(EdgeEntry) - total, 0x10000 - total);
  std::uint64_t at = 0, k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if ((mask >> i & 1) == 0) continue;
    VertexSlot& s = slots[i];
    HeadOf(&s, out) = PackedHead(block + at, types[i]);
    DegreeOf(&s, out) = counts[i];
    (out ? s.out_packed_at : s.in_packed_at) = static_cast<std::uint16_t>(at);
    cursors[i] = block + at;
    at += counts[i] + spare * (k + 1) / packed - spare * k / packed;
    ++k;
  }
}

// Whether the group `head` of `degree` entries can live in a packed block:
// one group (an array's or a packed head carries its type, which then fits)
// of at most kMaxPackedDegree entries.
bool Packable(std::uintptr_t head, std::uint32_t degree) {
  return head != 0 && !IsDir(head) && degree != 0 && degree <= kMaxPackedDegree;
}

}  // namespace

std::uint64_t PackLeaf(VertexSlot* slots, std::size_t n, bool out, const std::uint32_t* counts,
                       const std::uint32_t* types, EdgeEntry** cursors, MutationContext& ctx) {
  std::uint64_t mask = 0, total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (counts[i] == 0 || counts[i] > kMaxPackedDegree || types[i] > kMaxTypeInHead) continue;
    mask |= std::uint64_t{1} << i;
    total += counts[i];
  }
  if (mask == 0) return 0;
  std::size_t bytes = 0;
  EdgeEntry* block = NewPackedBlock(total, &bytes, ctx);
  if (block == nullptr) return 0;
  Place(slots, n, out, mask, counts, types, total, block, bytes, cursors);
  return mask;
}

std::uint64_t RepackEntries(const VertexSlot* slots, std::size_t n, bool out) {
  std::uint64_t entries = 0;
  bool array = false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uintptr_t head = out ? slots[i].out_head : slots[i].in_head;
    const std::uint32_t degree = out ? slots[i].out_degree : slots[i].in_degree;
    if (!Packable(head, degree)) continue;
    entries += degree;
    array = array || !IsPacked(head);
  }
  return array ? entries : 0;
}

std::uint64_t RepackLeaf(VertexSlot* slots, std::size_t n, bool out, MutationContext& ctx) {
  std::uint64_t mask = 0, total = 0;
  std::uint32_t counts[VertexTable::kLeafSize], types[VertexTable::kLeafSize];
  const EdgeEntry* from[VertexTable::kLeafSize];
  EdgeArray* arrays[VertexTable::kLeafSize];
  std::size_t array_count = 0;
  void* old_block = nullptr;  // every packed head of the leaf points into it (see the header)
  for (std::size_t i = 0; i < n; ++i) {
    const std::uintptr_t head = HeadOf(slots + i, out);
    const std::uint32_t degree = DegreeOf(slots + i, out);
    if (!Packable(head, degree)) continue;
    mask |= std::uint64_t{1} << i;
    total += counts[i] = degree;
    types[i] = ArrayType(head);
    from[i] = SingleEntries(head);
    if (IsPacked(head)) {
      old_block = PackedBlock(slots[i], out);
    } else {
      arrays[array_count++] = AsMutableArray(head);
    }
  }
  if (array_count == 0) return 0;  // every packable vertex is packed already
  std::size_t bytes = 0;
  EdgeEntry* block = NewPackedBlock(total, &bytes, ctx);
  if (block == nullptr) return 0;
  try {
    // Every retire below then records without growing the list (a private
    // array is freed instead): nothing throws once the heads change.
    ctx.retired->Reserve(array_count + 1);
  } catch (...) {
    ctx.FreeUnlinked(block);
    throw;
  }
  EdgeEntry* cursors[VertexTable::kLeafSize];
  Place(slots, n, out, mask, counts, types, total, block, bytes, cursors);
  for (std::size_t i = 0; i < n; ++i)
    if ((mask >> i & 1) != 0)
      std::memcpy(static_cast<void*>(cursors[i]), from[i], std::size_t{counts[i]} * sizeof(EdgeEntry));
  for (std::size_t j = 0; j < array_count; ++j) ctx.Retire(arrays[j]);
  ctx.Retire(old_block);
  return total;
}

bool RepackLeaves(GraphRoots& g, std::uint64_t end, RepackProgress* progress, MutationContext& ctx) {
  constexpr std::uint64_t kLeaf = VertexTable::kLeafSize;
  const std::uint64_t stop = std::min(end, g.vertex_limit);
  std::uint64_t& at = progress->next;
  at &= ~(kLeaf - 1);
  // The step's leaves first, each with what it needs, so the bounds count
  // both directions (review, stop 42: counting the out direction alone let
  // a step repack any number of in-only leaves).
  struct Planned {
    std::uint64_t first;
    bool dir[2];  // [0] out, [1] in
  };
  std::vector<Planned> plan;
  std::uint64_t entries = 0, visited = 0;
  for (; at < stop && entries < progress->step_entries && visited < progress->step_leaves;
       at += kLeaf, ++visited) {
    const VertexTable::Leaf* leaf = VertexTable::FindLeaf(g.vertices, at);
    if (leaf == nullptr) continue;
    // Slots at or past the table's count are never read (see LetGoOfBlock).
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kLeaf, g.vertex_limit - at));
    const std::uint64_t out = RepackEntries(leaf->slots, n, true), in = RepackEntries(leaf->slots, n, false);
    if (out + in == 0) continue;
    plan.push_back({at, {out != 0, in != 0}});
    entries += out + in;
  }
  // Then the out direction of every planned leaf, then the in direction: a
  // sweep reads one direction's blocks leaf after leaf, and blocks
  // allocated one after the other lie one after the other (the allocator's
  // bins), as the loader's do. A leaf's two directions packed in turn
  // interleaved them, and a compacted graph swept no faster than the
  // arrays it replaced (0.25 of the raw CSR, against 0.46 after a load;
  // 500,000 x 10, one thread).
  for (const int d : {0, 1}) {
    for (const Planned& p : plan) {
      if (!p.dir[d]) continue;
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kLeaf, g.vertex_limit - p.first));
      VertexSlot* slots = VertexTable::Mutable(g.vertices, p.first, ctx);  // copied once, then its own
      if (const std::uint64_t moved = RepackLeaf(slots, n, d == 0, ctx); moved != 0) {
        progress->entries += moved;
        ++progress->blocks;
      }
    }
  }
  if (at >= stop) at = end;  // done: past the last leaf, or the table ends before `end`
  return !plan.empty();      // a planned leaf was copied, whatever RepackLeaf found
}

void Unpack(VertexSlot* slot, std::uint64_t v, bool out, std::uint32_t extra, MutationContext& ctx) {
  std::uintptr_t& head = HeadOf(slot, out);
  if (!IsPacked(head)) return;
  const std::uint32_t degree = DegreeOf(slot, out);
  EdgeArray* a = NewEdgeArray(extra == 0 ? degree : GrownCapacity(degree, extra), ctx);
  std::memcpy(static_cast<void*>(a->entries()), SingleEntries(head), std::size_t{degree} * sizeof(EdgeEntry));
  void* block = PackedBlock(*slot, out);
  const std::uintptr_t packed = head;
  head = ArrayHead(a, ArrayType(packed));  // a packed head's type fits
  try {
    LetGoOfBlock(slot, v, out, block, ctx);
  } catch (...) {
    head = packed;
    ctx.FreeUnlinked(a);
    throw;
  }
}

void ReleasePacked(VertexSlot* slot, std::uint64_t v, bool out, MutationContext& ctx) {
  std::uintptr_t& head = HeadOf(slot, out);
  if (!IsPacked(head)) return;
  void* block = PackedBlock(*slot, out);
  const std::uintptr_t packed = head;
  head = 0;
  try {
    LetGoOfBlock(slot, v, out, block, ctx);
  } catch (...) {
    head = packed;
    throw;
  }
}

void PackedBlockFreer::Visit(const VertexSlot& slot) {
  for (bool out : {true, false}) {
    if (!IsPacked(out ? slot.out_head : slot.in_head)) continue;
    void* block = PackedBlock(slot, out);
    void*& last = last_[out ? 0 : 1];
    if (block == last) continue;
    account_->Free(block);
    last = block;
  }
}

}  // namespace quiver::storage
