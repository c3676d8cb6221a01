#include "storage/packed_adjacency.h"

#include <algorithm>
#include <cstring>

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
// appended, never packed ones (only the loader packs). Throws std::bad_alloc
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
    ctx.Retire(block);
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
}

}  // namespace

void* PackedBlock(const VertexSlot& slot, bool out) {
  const std::uintptr_t head = out ? slot.out_head : slot.in_head;
  const std::uint16_t at = out ? slot.out_packed_at : slot.in_packed_at;
  return const_cast<EdgeEntry*>(SingleEntries(head) - at);
}

std::uint64_t PackLeaf(VertexSlot* slots, std::size_t n, bool out, const std::uint32_t* counts,
                       const std::uint32_t* types, EdgeEntry** cursors, MutationContext& ctx) {
  std::uint64_t mask = 0, total = 0, packed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (counts[i] == 0 || counts[i] > kMaxPackedDegree || types[i] > kMaxTypeInHead) continue;
    mask |= std::uint64_t{1} << i;
    total += counts[i];
    ++packed;
  }
  if (mask == 0) return 0;
  // The whole allocator bin is taken, and its slack spread between the
  // vertices rather than left at the block's end: a sweep reads a leaf's
  // blocks one after the other in the allocator's order, and a hole of
  // 512 bytes after each (an 8 KiB bin holding 7.5 KiB of entries) made
  // the hardware prefetcher lose the stream at every block (a sweep 1.4x
  // slower than over the same entries with a hole of a few bytes after
  // each vertex, as arrays have). Offsets stay within 16 bits.
  const std::size_t bytes = base::GoodAllocationSize(total * sizeof(EdgeEntry));
  auto* block = static_cast<EdgeEntry*>(ctx.AllocateGood(bytes));
  if (!FitsPackedHead(block, 0) || !FitsPackedHead(block + bytes / sizeof(EdgeEntry) - 1, 0)) {
    ctx.FreeUnlinked(block);  // beyond 2^48: the leaf keeps arrays
    return 0;
  }
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
  return mask;
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
