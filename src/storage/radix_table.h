// RadixTable<Slot>: a persistent (copy-on-write, structurally shared) array
// of fixed-size slots indexed by a dense 48-bit id.
//
// Shape: leaves of 64 slots under inner nodes of 64 children; a root of
// height h covers ids [0, 64^(h+1)). A lookup is h+1 dependent loads, and
// the inner levels of a million-element table (16K leaves) fit in L2.
//
// Three kinds of write, all by the single writer on a version being built:
//  - Append(id == count): writes the slot in place, creating nodes on the
//    path as needed. The bytes written lie past every published version's
//    count, so no published version can reach them (invariant 1 holds).
//  - Mutable(id < count): copies every node on the path that is not born in
//    the current epoch (path copying) and retires the originals; returns the
//    writable slot in the private leaf.
//  - MutableSparse(id): like Mutable, but for tables without a count (a null
//    child reads as "all zero slots"); creates missing nodes.
//
// Thread safety: Find may run on any number of threads against published
// roots; the write methods belong to the writer thread alone.
#ifndef QUIVER_STORAGE_RADIX_TABLE_H_
#define QUIVER_STORAGE_RADIX_TABLE_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/memory.h"
#include "storage/retire_list.h"

namespace quiver::storage {

struct TableRoot {
  void* node = nullptr;
  std::uint32_t height = 0;  // 0: node is a leaf
};

template <typename Slot>
class RadixTable {
  static_assert(std::is_trivially_copyable_v<Slot>);

 public:
  static constexpr int kLeafBits = 6;
  static constexpr int kInnerBits = 6;
  static constexpr std::uint64_t kLeafSize = std::uint64_t{1} << kLeafBits;
  static constexpr std::uint64_t kInnerSize = std::uint64_t{1} << kInnerBits;

  struct Leaf {
    std::uint64_t birth;
    Slot slots[kLeafSize];
  };
  struct Inner {
    std::uint64_t birth;
    void* children[kInnerSize];
  };

  // The slot for `id`, or null if a sparse table has no node on its path.
  // Requires id to be below the version's count for counted tables.
  static const Slot* Find(const TableRoot& root, std::uint64_t id) {
    const void* node = root.node;
    if (node == nullptr || (id >> (kLeafBits + kInnerBits * root.height)) != 0) return nullptr;
    for (std::uint32_t h = root.height; h > 0; --h) {
      unsigned shift = kLeafBits + kInnerBits * (h - 1);
      node = static_cast<const Inner*>(node)->children[(id >> shift) & (kInnerSize - 1)];
      if (node == nullptr) return nullptr;
    }
    return &static_cast<const Leaf*>(node)->slots[id & (kLeafSize - 1)];
  }

  // The leaf holding `id` and the first id it covers; null as for Find.
  static const Leaf* FindLeaf(const TableRoot& root, std::uint64_t id) {
    const Slot* s = Find(root, id);
    if (s == nullptr) return nullptr;
    return reinterpret_cast<const Leaf*>(reinterpret_cast<const char*>(s - (id & (kLeafSize - 1))) -
                                         offsetof(Leaf, slots));
  }

  // Writes `value` at `id`, which must equal the table's count (append).
  static void Append(TableRoot& root, std::uint64_t id, const Slot& value, MutationContext& ctx) {
    GrowToCover(root, id, ctx);
    void** link = &root.node;
    for (std::uint32_t h = root.height; h > 0; --h) {
      if (*link == nullptr) *link = NewInner(ctx);
      unsigned shift = kLeafBits + kInnerBits * (h - 1);
      link = &static_cast<Inner*>(*link)->children[(id >> shift) & (kInnerSize - 1)];
    }
    if (*link == nullptr) *link = NewLeaf(ctx);
    static_cast<Leaf*>(*link)->slots[id & (kLeafSize - 1)] = value;
  }

  // A writable slot for an existing `id` (< count), copying published nodes
  // on its path.
  static Slot* Mutable(TableRoot& root, std::uint64_t id, MutationContext& ctx) {
    void** link = &root.node;
    for (std::uint32_t h = root.height; h > 0; --h) {
      Inner* inner = OwnInner(link, ctx);
      unsigned shift = kLeafBits + kInnerBits * (h - 1);
      link = &inner->children[(id >> shift) & (kInnerSize - 1)];
    }
    return &OwnLeaf(link, ctx)->slots[id & (kLeafSize - 1)];
  }

  // A writable slot for any `id` of a sparse table (missing nodes created,
  // zero-filled).
  static Slot* MutableSparse(TableRoot& root, std::uint64_t id, MutationContext& ctx) {
    GrowToCover(root, id, ctx);
    void** link = &root.node;
    for (std::uint32_t h = root.height; h > 0; --h) {
      if (*link == nullptr) *link = NewInner(ctx);
      Inner* inner = OwnInner(link, ctx);
      unsigned shift = kLeafBits + kInnerBits * (h - 1);
      link = &inner->children[(id >> shift) & (kInnerSize - 1)];
    }
    if (*link == nullptr) *link = NewLeaf(ctx);
    return &OwnLeaf(link, ctx)->slots[id & (kLeafSize - 1)];
  }

  // Calls fn(slot) for every slot of ids [0, count) (counted tables) and then
  // frees every node. Used only when the last version dies.
  template <typename Fn>
  static void Destroy(TableRoot& root, std::uint64_t count, base::MemoryAccount* account, Fn&& fn) {
    DestroyNode(root.node, root.height, 0, count, account, fn);
    root = TableRoot{};
  }

 private:
  static void GrowToCover(TableRoot& root, std::uint64_t id, MutationContext& ctx) {
    if (root.node == nullptr) {
      root.height = 0;
      while ((id >> (kLeafBits + kInnerBits * root.height)) != 0) ++root.height;
      return;
    }
    while ((id >> (kLeafBits + kInnerBits * root.height)) != 0) {
      // A new root above the old one. The old root stays shared; published
      // versions keep pointing at it directly.
      Inner* up = NewInner(ctx);
      up->children[0] = root.node;
      root.node = up;
      ++root.height;
    }
  }

  static Inner* NewInner(MutationContext& ctx) {
    auto* n = static_cast<Inner*>(ctx.account->Allocate(sizeof(Inner)));
    std::memset(static_cast<void*>(n), 0, sizeof(Inner));
    n->birth = ctx.epoch;
    return n;
  }
  static Leaf* NewLeaf(MutationContext& ctx) {
    auto* n = static_cast<Leaf*>(ctx.account->Allocate(sizeof(Leaf)));
    std::memset(static_cast<void*>(n), 0, sizeof(Leaf));
    n->birth = ctx.epoch;
    return n;
  }

  // Copy-on-write of one node in place of *link.
  template <typename Node>
  static Node* Own(void** link, MutationContext& ctx) {
    auto* n = static_cast<Node*>(*link);
    if (n->birth == ctx.epoch) return n;
    auto* copy = static_cast<Node*>(ctx.account->Allocate(sizeof(Node)));
    std::memcpy(static_cast<void*>(copy), n, sizeof(Node));
    copy->birth = ctx.epoch;
    ctx.retired->Add(n);
    *link = copy;
    return copy;
  }
  static Inner* OwnInner(void** link, MutationContext& ctx) { return Own<Inner>(link, ctx); }
  static Leaf* OwnLeaf(void** link, MutationContext& ctx) { return Own<Leaf>(link, ctx); }

  template <typename Fn>
  static void DestroyNode(void* node, std::uint32_t height, std::uint64_t first, std::uint64_t count,
                          base::MemoryAccount* account, Fn& fn) {
    if (node == nullptr) return;
    if (height == 0) {
      auto* leaf = static_cast<Leaf*>(node);
      for (std::uint64_t i = 0; i < kLeafSize && first + i < count; ++i) fn(leaf->slots[i]);
    } else {
      auto* inner = static_cast<Inner*>(node);
      std::uint64_t span = std::uint64_t{1} << (kLeafBits + kInnerBits * (height - 1));
      for (std::uint64_t i = 0; i < kInnerSize; ++i)
        DestroyNode(inner->children[i], height - 1, first + i * span, count, account, fn);
    }
    account->Free(node);
  }
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_RADIX_TABLE_H_
