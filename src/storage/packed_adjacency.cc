#include "storage/packed_adjacency.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace quiver::storage {
namespace {

std::uintptr_t& HeadOf(VertexSlot* s, bool out) { return out ? s->out_head : s->in_head; }

// Retires `block`, the block of direction `out` of `slot`'s leaf, unless a
// vertex of the leaf other than `slot` still has a packed head in that
// direction. A leaf's heads all point into its one block (see the header),
// so looking for any packed head is enough; slots past the table's count
// hold zeroes or the heads of vertices a rolled-back group appended, never
// packed ones (only the loader packs).
void RetireIfUnused(const VertexSlot* slot, std::uint64_t v, bool out, void* block, MutationContext& ctx) {
  const VertexSlot* first = slot - (v & (VertexTable::kLeafSize - 1));
  for (std::size_t i = 0; i < VertexTable::kLeafSize; ++i) {
    if (first + i == slot) continue;
    if (IsPacked(out ? first[i].out_head : first[i].in_head)) return;
  }
  ctx.Retire(block);
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
  if (!FitsPackedHead(block, 0) || !FitsPackedHead(block + total - 1, 0)) {
    ctx.FreeUnlinked(block);  // beyond 2^48: the leaf keeps arrays
    return 0;
  }
  const std::uint64_t spare = std::min<std::uint64_t>(bytes / sizeof(EdgeEntry) - total, 0x10000 - total);
  std::uint64_t at = 0, k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if ((mask >> i & 1) == 0) continue;
    VertexSlot& s = slots[i];
    HeadOf(&s, out) = PackedHead(block + at, types[i]);
    (out ? s.out_degree : s.in_degree) = counts[i];
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
  const std::uint32_t degree = out ? slot->out_degree : slot->in_degree;
  // Validation bounds degree + extra (the vertex's new degree) by
  // kMaxDegreeCeiling, as for AppendEntries.
  const std::uint32_t capacity = extra == 0 ? degree : std::max(degree + extra, degree + 1 + degree / 8);
  EdgeArray* a = NewEdgeArray(ArrayType(head), capacity, ctx);
  std::memcpy(static_cast<void*>(a->entries()), SingleEntries(head), std::size_t{degree} * sizeof(EdgeEntry));
  void* block = PackedBlock(*slot, out);
  const std::uintptr_t packed = head;
  head = ArrayHead(a);
  try {
    RetireIfUnused(slot, v, out, block, ctx);
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
    RetireIfUnused(slot, v, out, block, ctx);
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
