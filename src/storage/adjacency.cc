#include "storage/adjacency.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "base/packed.h"
#include "quiver/options.h"

namespace quiver::storage {
namespace {

// Validation keeps every degree within Limits::max_degree, at most
// kMaxDegreeCeiling, so a group's count, the growth target in AppendToGroup
// and the capacity CapacityFor returns (rounded up by the allocator by far
// less than the margin here) all fit their 32 bits.
static_assert(kMaxDegreeCeiling + 1 + kMaxDegreeCeiling / 8 <= 0xFFFFFFFFu - (1u << 28));

// The capacity of the smallest allocation that holds `n` entries, filled to
// the allocator's bin so its rounding becomes usable slack, not waste.
std::uint32_t CapacityFor(std::uint32_t n) {
  std::size_t bytes = base::GoodAllocationSize(sizeof(EdgeArray) + std::size_t{n} * sizeof(EdgeEntry));
  return static_cast<std::uint32_t>((bytes - sizeof(EdgeArray)) / sizeof(EdgeEntry));
}

// Appends to one group given its array and count; may replace the array.
void AppendToGroup(EdgeArray*& array, std::uint32_t count, std::uint64_t edge, std::uint64_t neighbor,
                   MutationContext& ctx) {
  if (count == array->capacity) {
    // Next size class up: amortised O(1) copies per append with slack
    // bounded by one allocator bin.
    EdgeArray* grown = NewEdgeArray(array->type, count + 1 + count / 8, ctx);
    std::memcpy(grown->entries(), array->entries(), std::size_t{count} * sizeof(EdgeEntry));
    ctx.retired->Add(array);
    array = grown;
  }
  StoreEntry(array->entries() + count, edge, neighbor);
}

GroupDir* NewDir(std::uint32_t capacity, MutationContext& ctx) {
  auto* d = static_cast<GroupDir*>(ctx.account->Allocate(sizeof(GroupDir) + capacity * sizeof(GroupEntry)));
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
  if (d->birth == ctx.epoch) {
    ctx.account->Free(d);  // private to this group: nobody else can reach it
  } else {
    ctx.retired->Add(d);
  }
  head = reinterpret_cast<std::uintptr_t>(copy) | 1;
  return copy;
}

// Copies `count` entries of `array` without the one at `index`; null if none remain.
EdgeArray* WithoutEntry(const EdgeArray* array, std::uint32_t count, std::uint32_t index,
                        MutationContext& ctx) {
  if (count == 1) return nullptr;
  EdgeArray* a = NewEdgeArray(array->type, count - 1, ctx);
  std::memcpy(a->entries(), array->entries(), std::size_t{index} * sizeof(EdgeEntry));
  std::memcpy(a->entries() + index, array->entries() + index + 1,
              std::size_t{count - index - 1} * sizeof(EdgeEntry));
  return a;
}

std::int64_t IndexOf(const EdgeArray* array, std::uint32_t count, std::uint64_t edge) {
  const EdgeEntry* e = array->entries();
  for (std::uint32_t i = 0; i < count; ++i)
    if (e[i].edge().value() == edge) return i;
  return -1;
}

}  // namespace

EdgeArray* NewEdgeArray(std::uint32_t type, std::uint32_t min_capacity, MutationContext& ctx) {
  std::uint32_t cap = CapacityFor(min_capacity);
  auto* a = static_cast<EdgeArray*>(
      ctx.account->Allocate(sizeof(EdgeArray) + std::size_t{cap} * sizeof(EdgeEntry)));
  a->type = type;
  a->capacity = cap;
  return a;
}

void StoreEntry(EdgeEntry* e, std::uint64_t edge, std::uint64_t neighbor) {
  auto* p = reinterpret_cast<unsigned char*>(e);
  base::Store48(p, edge);
  base::Store48(p + 6, neighbor);
}

void AppendEntry(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type, std::uint64_t edge,
                 std::uint64_t neighbor, MutationContext& ctx) {
  if (head == 0) {
    EdgeArray* a = NewEdgeArray(type, 1, ctx);
    StoreEntry(a->entries(), edge, neighbor);
    head = reinterpret_cast<std::uintptr_t>(a);
    degree = 1;
    return;
  }
  if (!IsDir(head)) {
    auto* a = reinterpret_cast<EdgeArray*>(head);
    if (a->type == type) {
      AppendToGroup(a, degree, edge, neighbor, ctx);
      head = reinterpret_cast<std::uintptr_t>(a);
      ++degree;
      return;
    }
    // A second edge type: the vertex gets a directory.
    GroupDir* d = NewDir(4, ctx);
    d->groups()[0] = GroupEntry{a, degree, a->type};
    d->size = 1;
    head = reinterpret_cast<std::uintptr_t>(d) | 1;
  }
  GroupDir* d = OwnDir(head, 1, ctx);
  GroupEntry* g = d->groups();
  for (std::uint32_t i = 0; i < d->size; ++i) {
    if (g[i].type != type) continue;
    AppendToGroup(g[i].array, g[i].count, edge, neighbor, ctx);
    ++g[i].count;
    ++degree;
    return;
  }
  EdgeArray* a = NewEdgeArray(type, 1, ctx);
  StoreEntry(a->entries(), edge, neighbor);
  g[d->size++] = GroupEntry{a, 1, type};
  ++degree;
}

bool RemoveEntry(std::uintptr_t& head, std::uint32_t& degree, std::uint32_t type, std::uint64_t edge,
                 MutationContext& ctx) {
  if (head == 0) return false;
  if (!IsDir(head)) {
    const EdgeArray* a = AsArray(head);
    if (a->type != type) return false;
    std::int64_t i = IndexOf(a, degree, edge);
    if (i < 0) return false;
    EdgeArray* rest = WithoutEntry(a, degree, static_cast<std::uint32_t>(i), ctx);
    ctx.retired->Add(const_cast<EdgeArray*>(a));
    head = reinterpret_cast<std::uintptr_t>(rest);
    --degree;
    return true;
  }
  GroupDir* d = OwnDir(head, 0, ctx);
  GroupEntry* g = d->groups();
  for (std::uint32_t gi = 0; gi < d->size; ++gi) {
    if (g[gi].type != type) continue;
    std::int64_t i = IndexOf(g[gi].array, g[gi].count, edge);
    if (i < 0) return false;
    EdgeArray* rest = WithoutEntry(g[gi].array, g[gi].count, static_cast<std::uint32_t>(i), ctx);
    ctx.retired->Add(g[gi].array);
    --degree;
    if (rest != nullptr) {
      g[gi].array = rest;
      --g[gi].count;
      return true;
    }
    g[gi] = g[--d->size];  // the group is empty: drop it
    if (d->size == 1) {
      // Back to one group: no directory needed. `d` is private to this epoch.
      head = reinterpret_cast<std::uintptr_t>(g[0].array);
      ctx.account->Free(d);
    }
    return true;
  }
  return false;
}

void RetireAdjacency(std::uintptr_t head, MutationContext& ctx) {
  if (head == 0) return;
  if (!IsDir(head)) {
    ctx.retired->Add(reinterpret_cast<void*>(head));
    return;
  }
  auto* d = const_cast<GroupDir*>(AsDir(head));
  for (std::uint32_t i = 0; i < d->size; ++i) ctx.retired->Add(d->groups()[i].array);
  if (d->birth == ctx.epoch) {
    ctx.account->Free(d);
  } else {
    ctx.retired->Add(d);
  }
}

void FreeAdjacency(std::uintptr_t head, base::MemoryAccount* account) {
  if (head == 0) return;
  if (!IsDir(head)) {
    account->Free(reinterpret_cast<void*>(head));
    return;
  }
  auto* d = const_cast<GroupDir*>(AsDir(head));
  for (std::uint32_t i = 0; i < d->size; ++i) account->Free(d->groups()[i].array);
  account->Free(d);
}

}  // namespace quiver::storage
