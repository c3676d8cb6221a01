#include "storage/adjacency.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/memory.h"
#include "base/packed.h"
#include "quiver/options.h"

namespace quiver::storage {
namespace {

// A packed group lies in a block published versions read: writing it would
// break invariant 1 without a trace, so a mutator given one stops the
// process in every build type (the writer unpacks first: storage::Unpack).
void RequireNotPacked(std::uintptr_t head) {
  if (IsPacked(head)) {
    std::fputs("quiver: internal error: a packed adjacency group reached a mutator\n", stderr);
    std::abort();
  }
}

// Validation keeps every degree within Limits::max_degree, at most
// kMaxDegreeCeiling, so a group's count, the growth target (GrownCapacity)
// and the capacity NewEdgeArray gives (rounded up by the allocator by far
// less than the margin here) all fit their 32 bits.
static_assert(kMaxDegreeCeiling + 1 + kMaxDegreeCeiling / 8 <= 0xFFFFFFFFu - (1u << 28));

// Appends `adds` to one group given its array and count; may replace the
// array, once.
void AppendToGroup(EdgeArray*& array, std::uint32_t count, std::span<const EntryAdd> adds,
                   MutationContext& ctx) {
  const auto n = static_cast<std::uint32_t>(adds.size());
  if (ArrayCapacity(array) - count < n) {
    EdgeArray* grown = NewEdgeArray(GrownCapacity(count, n), ctx);
    std::memcpy(grown->entries(), array->entries(), std::size_t{count} * sizeof(EdgeEntry));
    try {
      ctx.Retire(array);  // freed now if this group allocated it
    } catch (...) {
      // The retire list could not grow: `array` stays, `grown` goes (the
      // checkpoint loader tracks no blocks, so nothing else would free it).
      ctx.FreeUnlinked(grown);
      throw;
    }
    array = grown;
  }
  EdgeEntry* out = array->entries() + count;
  for (std::uint32_t i = 0; i < n; ++i) StoreEntry(out + i, adds[i].edge, adds[i].neighbor);
}

// A new array holding exactly `adds` (filled to the allocator's bin).
EdgeArray* ArrayOf(std::span<const EntryAdd> adds, MutationContext& ctx) {
  const auto n = static_cast<std::uint32_t>(adds.size());
  EdgeArray* a = NewEdgeArray(n, ctx);
  for (std::uint32_t i = 0; i < n; ++i) StoreEntry(a->entries() + i, adds[i].edge, adds[i].neighbor);
  return a;
}

GroupDir* NewDir(std::uint32_t capacity, MutationContext& ctx) {
  auto* d = static_cast<GroupDir*>(ctx.Allocate(sizeof(GroupDir) + capacity * sizeof(GroupEntry)));
  d->birth = ctx.epoch;
  d->size = 0;
  d->capacity = capacity;
  return d;
}

// A directory the writer may change: the given one if born in this epoch,
// else a copy (the original is retired). `extra` reserves room for growth.
GroupDir* OwnDir(std::uintptr_t& head, std::uint32_t extra, MutationContext& ctx) {
  auto* d = const_cast<GroupDir*>(AsDir(head));
  if (d->birth == ctx.epoch && d->size + extra <= d->capacity) return d;
  GroupDir* copy = NewDir(std::max(d->capacity, d->size + extra), ctx);
  copy->size = d->size;
  std::memcpy(copy->groups(), d->groups(), d->size * sizeof(GroupEntry));
  try {
    ctx.Retire(d);  // freed now if private to this group
  } catch (...) {
    ctx.FreeUnlinked(copy);  // as in AppendToGroup
    throw;
  }
  head = reinterpret_cast<std::uintptr_t>(copy) | 1;
  return copy;
}

bool Listed(std::span<const std::uint64_t> sorted, std::uint64_t edge) {
  return std::binary_search(sorted.begin(), sorted.end(), edge);
}

// The group `array` of `count` entries without the entries whose edge is in
// `sorted`; sets `*kept` to the entries left. A private array is compacted
// in place; a published one is copied into a right-sized array and retired.
// Null when nothing remains. One pass: O(count log |sorted|).
EdgeArray* FilterGroup(EdgeArray* array, std::uint32_t count, std::span<const std::uint64_t> sorted,
                       std::uint32_t* kept, MutationContext& ctx) {
  const EdgeEntry* in = array->entries();
  std::uint32_t left = 0;
  for (std::uint32_t i = 0; i < count; ++i) left += Listed(sorted, in[i].edge().value()) ? 0 : 1;
  *kept = left;
  if (left == count) return array;
  if (left == 0) {
    ctx.Retire(array);
    return nullptr;
  }
  EdgeArray* out = ctx.IsPrivate(array) ? array : NewEdgeArray(left, ctx);
  EdgeEntry* o = out->entries();
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (Listed(sorted, in[i].edge().value())) continue;
    if (o + n != in + i) std::memcpy(o + n, in + i, sizeof(EdgeEntry));  // order is kept
    ++n;
  }
  if (out != array) ctx.Retire(array);  // cannot throw past here for a private array
  return out;
}

}  // namespace

EdgeArray* NewEdgeArray(std::uint32_t min_capacity, MutationContext& ctx) {
  // The smallest allocation that holds `min_capacity` entries, filled to the
  // allocator's bin so its rounding becomes usable slack, not waste
  // (ArrayCapacity reads it back from the allocator).
  const std::size_t bytes =
      base::GoodAllocationSize(std::max<std::size_t>(min_capacity, 1) * sizeof(EdgeEntry));
  void* p = ctx.AllocateGood(bytes);
  if ((reinterpret_cast<std::uintptr_t>(p) & ~kAddressMask & ~kTagMask) != 0) {
    // Beyond the 48 bits a head word keeps beside its type: fails as an
    // allocation (ResourceExhausted to the batch). No untagged Linux x86-64
    // or AArch64 allocation is there unless mmap was asked for it
    // (adjacency.h: tagged pointers are not supported).
    ctx.FreeUnlinked(p);
    throw std::bad_alloc();
  }
  return static_cast<EdgeArray*>(p);
}

std::uint32_t ArrayCapacity(const EdgeArray* a) {
  const std::size_t entries = base::UsableSize(const_cast<EdgeArray*>(a)) / sizeof(EdgeEntry);
  return entries > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<std::uint32_t>(entries);
}

std::uintptr_t SingleGroupHead(EdgeArray* a, std::uint32_t count, std::uint32_t type, MutationContext& ctx) {
  if (FitsHead(type)) return ArrayHead(a, type);
  GroupDir* d = NewDir(2, ctx);  // room for a second type without a copy
  d->groups()[0] = GroupEntry{a, count, type};
  d->size = 1;
  return reinterpret_cast<std::uintptr_t>(d) | kDirTag;
}

void AppendEntry(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type, std::uint64_t edge,
                 std::uint64_t neighbor, MutationContext& ctx) {
  const EntryAdd one{0, edge, neighbor, type};
  AppendEntries(head, degree, type, {&one, 1}, ctx);
}

void AppendEntries(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type,
                   std::span<const EntryAdd> adds, MutationContext& ctx) {
  RequireNotPacked(head);
  if (adds.empty()) return;
  const auto n = static_cast<std::uint32_t>(adds.size());
  if (head == 0) {
    EdgeArray* a = ArrayOf(adds, ctx);
    try {
      head = SingleGroupHead(a, n, type, ctx);
    } catch (...) {
      ctx.FreeUnlinked(a);
      throw;
    }
    degree = n;
    return;
  }
  if (!IsDir(head)) {
    EdgeArray* a = AsMutableArray(head);
    const std::uint32_t had = ArrayType(head);
    if (had == type) {
      AppendToGroup(a, degree, adds, ctx);
      head = ArrayHead(a, type);  // the head held `type`, so it fits
      degree += n;
      return;
    }
    // A second edge type: the vertex gets a directory.
    GroupDir* d = NewDir(4, ctx);
    d->groups()[0] = GroupEntry{a, degree, had};
    d->size = 1;
    head = reinterpret_cast<std::uintptr_t>(d) | 1;
  }
  GroupDir* d = OwnDir(head, 1, ctx);
  GroupEntry* g = d->groups();
  for (std::uint32_t i = 0; i < d->size; ++i) {
    if (g[i].type != type) continue;
    AppendToGroup(g[i].array, g[i].count, adds, ctx);
    g[i].count += n;
    degree += n;
    return;
  }
  EdgeArray* a = ArrayOf(adds, ctx);
  g[d->size++] = GroupEntry{a, n, type};
  degree += n;
}

std::uint32_t RemoveEntries(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type,
                            std::span<const std::uint64_t> sorted_edges, MutationContext& ctx) {
  RequireNotPacked(head);
  if (head == 0 || sorted_edges.empty()) return 0;
  std::uint32_t kept = 0;
  if (!IsDir(head)) {
    if (ArrayType(head) != type) return 0;
    EdgeArray* rest = FilterGroup(AsMutableArray(head), degree, sorted_edges, &kept, ctx);
    std::uint32_t removed = degree - kept;
    head = rest == nullptr ? 0 : ArrayHead(rest, type);
    degree = kept;
    return removed;
  }
  const GroupDir* found = AsDir(head);
  std::uint32_t gi = 0;
  while (gi < found->size && found->groups()[gi].type != type) ++gi;
  if (gi == found->size) return 0;
  // Count first, so a directory is copied only when something changes.
  const GroupEntry& ge = found->groups()[gi];
  std::uint32_t present = 0;
  for (std::uint32_t i = 0; i < ge.count; ++i)
    present += Listed(sorted_edges, ge.array->entries()[i].edge().value());
  if (present == 0) return 0;
  GroupDir* d = OwnDir(head, 0, ctx);
  GroupEntry* g = d->groups();
  EdgeArray* rest = FilterGroup(g[gi].array, g[gi].count, sorted_edges, &kept, ctx);
  degree -= g[gi].count - kept;
  if (rest != nullptr) {
    g[gi].array = rest;
    g[gi].count = kept;
    return present;
  }
  g[gi] = g[--d->size];  // the group is empty: drop it
  if (d->size == 0) {
    // It was a directory's only group (a type that does not fit the head
    // word): no edges left, no directory. `d` is private (OwnDir).
    head = 0;
    ctx.Retire(d);
  } else if (d->size == 1 && FitsHead(g[0].type)) {
    // Back to one group: no directory needed. `d` is private (OwnDir).
    head = ArrayHead(g[0].array, g[0].type);
    ctx.Retire(d);
  }
  return present;
}

void RetireAdjacency(std::uintptr_t head, MutationContext& ctx) {
  RequireNotPacked(head);
  if (head == 0) return;
  if (!IsDir(head)) {
    ctx.Retire(AsMutableArray(head));
    return;
  }
  auto* d = const_cast<GroupDir*>(AsDir(head));
  for (std::uint32_t i = 0; i < d->size; ++i) ctx.Retire(d->groups()[i].array);
  ctx.Retire(d);
}

void FreeAdjacency(std::uintptr_t head, base::MemoryAccount* account) {
  if (head == 0 || IsPacked(head)) return;  // DestroyGraph frees the leaf's block
  if (!IsDir(head)) {
    account->Free(AsMutableArray(head));
    return;
  }
  auto* d = const_cast<GroupDir*>(AsDir(head));
  for (std::uint32_t i = 0; i < d->size; ++i) account->Free(d->groups()[i].array);
  account->Free(d);
}

}  // namespace quiver::storage
