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
//    writable slot in the private leaf. Births are kept in the parents, so a
//    birth written into a published inner node for a new child slot is, like
//    an append, past what any published version reads.
//  - MutableSparse(id): like Mutable, but for tables without a count (a null
//    child reads as "all zero slots"); creates missing nodes.
//
// Removed slots (counted tables whose Slot has a RemovedSlot<Slot>): a leaf
// whose 64 slots are all removed, and that lies wholly below the count, is
// replaced by one shared, immutable leaf of removed slots (ReclaimIfRemoved);
// an inner node whose children are all shared nodes is replaced in turn by
// the shared inner node of its height. Readers cannot tell: the shared
// nodes read exactly as the nodes they replace. A link to a shared node
// carries the birth kSharedBirth, which no epoch ever equals, so no group
// takes a shared node for its own: Mutable copies it like a published node
// but never retires it, and Destroy never frees it.
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
  std::uint64_t birth = 0;   // the epoch `node` was born in
};

// Specialised for a Slot type whose table reclaims removed slots:
//   static Slot Value();               the bytes of a removed slot
//   static bool Is(const Slot& slot);  whether `slot` is removed
template <typename Slot>
struct RemovedSlot;

template <typename Slot>
class RadixTable {
  static_assert(std::is_trivially_copyable_v<Slot>);

 public:
  static constexpr int kLeafBits = 6;
  static constexpr int kInnerBits = 6;
  static constexpr std::uint64_t kLeafSize = std::uint64_t{1} << kLeafBits;
  static constexpr std::uint64_t kInnerSize = std::uint64_t{1} << kInnerBits;

  // Nodes carry no header: a node's birth epoch lives in its parent (or in
  // the TableRoot), so a leaf is exactly 64 slots — 2,560 B of vertex slots,
  // 1,024 B of edge slots — each an allocator size class with no rounding.
  struct Leaf {
    Slot slots[kLeafSize];
  };
  struct Inner {
    void* children[kInnerSize];
    std::uint64_t births[kInnerSize];  // births[i]: the epoch children[i] was born in
  };

  // The birth of every link to a shared node of removed slots: never an
  // epoch (epochs count up from 0 and would take 2^64 groups to reach it).
  static constexpr std::uint64_t kSharedBirth = ~std::uint64_t{0};
  // Heights a root can have: 6 + 6 x 7 = 48 id bits.
  static constexpr std::uint32_t kMaxHeight = 7;

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
    return reinterpret_cast<const Leaf*>(s - (id & (kLeafSize - 1)));
  }

  // Writes `value` at `id`, which must equal the table's count (append).
  static void Append(TableRoot& root, std::uint64_t id, const Slot& value, MutationContext& ctx) {
    GrowToCover(root, id, ctx);
    Link link{&root.node, &root.birth};
    bool parent_private = true;  // the TableRoot belongs to the version being built
    for (std::uint32_t h = root.height; h > 0; --h) {
      if (*link.node == nullptr) SetNew(link, NewInner(ctx), parent_private, ctx);
      parent_private = *link.birth == ctx.epoch;
      link = Child(static_cast<Inner*>(*link.node), id, h);
    }
    if (*link.node == nullptr) SetNew(link, NewLeaf(ctx), parent_private, ctx);
    static_cast<Leaf*>(*link.node)->slots[id & (kLeafSize - 1)] = value;
  }

  // A writable slot for an existing `id` (< count), copying published nodes
  // on its path.
  static Slot* Mutable(TableRoot& root, std::uint64_t id, MutationContext& ctx) {
    Link link{&root.node, &root.birth};
    for (std::uint32_t h = root.height; h > 0; --h) link = Child(Own<Inner>(link, ctx), id, h);
    return &Own<Leaf>(link, ctx)->slots[id & (kLeafSize - 1)];
  }

  // A writable slot for any `id` of a sparse table (missing nodes created,
  // zero-filled).
  static Slot* MutableSparse(TableRoot& root, std::uint64_t id, MutationContext& ctx) {
    GrowToCover(root, id, ctx);
    Link link{&root.node, &root.birth};
    for (std::uint32_t h = root.height; h > 0; --h) {
      if (*link.node == nullptr) link.Set(NewInner(ctx), ctx.epoch);
      link = Child(Own<Inner>(link, ctx), id, h);
    }
    if (*link.node == nullptr) link.Set(NewLeaf(ctx), ctx.epoch);
    return &Own<Leaf>(link, ctx)->slots[id & (kLeafSize - 1)];
  }

  // If every slot of the leaf holding `id` is removed and the leaf lies
  // wholly below `count`, replaces it with the shared leaf of removed slots
  // (and, going up, each inner node wholly below `count` whose children are
  // all shared with the shared inner node of its height), retiring what it
  // replaces through `ctx`. Returns whether the leaf was replaced. Reads
  // before it writes: a leaf with a live slot costs a scan up to that slot
  // and changes nothing. May throw std::bad_alloc (path copying, retiring);
  // the table is then as valid as after any failed Mutable, with the leaf
  // possibly still in place.
  static bool ReclaimIfRemoved(TableRoot& root, std::uint64_t id, std::uint64_t count, MutationContext& ctx) {
    const std::uint64_t first = id & ~(kLeafSize - 1);
    if (first >= count || count - first < kLeafSize) return false;
    const Leaf* leaf = FindLeaf(root, first);
    const Shared& shared = SharedNodes();
    if (leaf == nullptr || leaf == &shared.leaf) return false;
    for (const Slot& slot : leaf->slots)
      if (!RemovedSlot<Slot>::Is(slot)) return false;
    // links[h]: where the node of height h on the path hangs.
    Link links[kMaxHeight + 1];
    links[root.height] = Link{&root.node, &root.birth};
    for (std::uint32_t h = root.height; h > 0; --h) links[h - 1] = Child(Own<Inner>(links[h], ctx), first, h);
    ctx.Retire(*links[0].node);
    links[0].Set(const_cast<Leaf*>(&shared.leaf), kSharedBirth);
    for (std::uint32_t h = 1; h <= root.height; ++h) {
      const std::uint64_t span = std::uint64_t{1} << (kLeafBits + kInnerBits * h);
      const std::uint64_t from = first & ~(span - 1);
      if (count - from < span) break;
      const auto* inner = static_cast<const Inner*>(*links[h].node);
      for (std::uint64_t birth : inner->births)
        if (birth != kSharedBirth) return true;
      ctx.Retire(*links[h].node);
      links[h].Set(const_cast<Inner*>(&shared.inner[h - 1]), kSharedBirth);
    }
    return true;
  }

  // Sparse tables: if every slot of the leaf holding `id` is zero (reads as
  // "nothing"), unlinks the leaf (and, going up, each inner node left with
  // no child), retiring what it unlinks through `ctx`. Returns whether the
  // leaf went. Throws like ReclaimIfRemoved.
  static bool ReclaimIfEmpty(TableRoot& root, std::uint64_t id, MutationContext& ctx) {
    const Leaf* leaf = FindLeaf(root, id);
    if (leaf == nullptr) return false;
    static constexpr Slot kZero{};
    for (const Slot& slot : leaf->slots)
      if (std::memcmp(&slot, &kZero, sizeof(Slot)) != 0) return false;
    Link links[kMaxHeight + 1];
    links[root.height] = Link{&root.node, &root.birth};
    for (std::uint32_t h = root.height; h > 0; --h) links[h - 1] = Child(Own<Inner>(links[h], ctx), id, h);
    for (std::uint32_t h = 0; h <= root.height; ++h) {
      if (h > 0) {
        const auto* inner = static_cast<const Inner*>(*links[h].node);
        for (const void* child : inner->children)
          if (child != nullptr) return true;
      }
      ctx.Retire(*links[h].node);
      links[h].Set(nullptr, 0);
    }
    return true;
  }

  // Whether `leaf` is the shared leaf of removed slots (tests and stats).
  static bool IsSharedLeaf(const Leaf* leaf) { return leaf == &SharedNodes().leaf; }

  // Creates, in an empty table, every node for ids [0, count), born in
  // ctx.epoch, in two steps, so the leaves (nearly all of the memory, and
  // its first touch) can be made on several threads: ReserveInner creates
  // the inner nodes, with no leaf under them (null links); ReserveLeaves
  // then creates leaves [from, to) of the LeafCount(count) and links them.
  // Calls for disjoint leaf ranges may run concurrently, each with its own
  // ctx (each writes only its own leaves' links). Slots below `count` are
  // left unwritten (the tail of the last leaf is zeroed): the caller must
  // write each of them, through BornSlot, before the table is read or
  // destroyed. Used by the checkpoint loader, whose workers then fill
  // disjoint id ranges concurrently.
  static std::uint64_t LeafCount(std::uint64_t count) { return (count + kLeafSize - 1) >> kLeafBits; }
  static void ReserveInner(TableRoot& root, std::uint64_t count, MutationContext& ctx) {
    if (count == 0) return;
    std::uint32_t height = 0;
    while (((count - 1) >> (kLeafBits + kInnerBits * height)) != 0) ++height;
    root.node = height == 0 ? nullptr : ReserveInnerNode(height, 0, count, ctx);
    root.height = height;
    root.birth = ctx.epoch;
  }
  static void ReserveLeaves(TableRoot& root, std::uint64_t count, std::uint64_t from, std::uint64_t to,
                            MutationContext& ctx) {
    for (std::uint64_t leaf = from; leaf < to; ++leaf) {
      const std::uint64_t first = leaf << kLeafBits;
      auto* n = static_cast<Leaf*>(ctx.Allocate(sizeof(Leaf)));
      if (count - first < kLeafSize) {
        std::memset(static_cast<void*>(&n->slots[count - first]), 0,
                    (kLeafSize - (count - first)) * sizeof(Slot));
      }
      Link link{&root.node, &root.birth};
      for (std::uint32_t h = root.height; h > 0; --h) link = Child(static_cast<Inner*>(*link.node), first, h);
      link.Set(n, ctx.epoch);
    }
  }

  // The writable slot of `id` in a table whose path to it was born in the
  // current epoch (after ReserveLeaves): no copying, so any number of threads may
  // write distinct slots at once.
  static Slot* BornSlot(TableRoot& root, std::uint64_t id) { return const_cast<Slot*>(Find(root, id)); }

  // Calls fn(slot) for every slot of ids [0, count) (counted tables) and then
  // frees every node. Used only when the last version dies.
  template <typename Fn>
  static void Destroy(TableRoot& root, std::uint64_t count, base::MemoryAccount* account, Fn&& fn) {
    DestroyNode(root.node, root.birth, root.height, 0, count, account, fn);
    root = TableRoot{};
  }

 private:
  // Where a node hangs: the pointer to it and its birth epoch, both in the
  // parent (or the TableRoot).
  struct Link {
    void** node;
    std::uint64_t* birth;
    void Set(void* n, std::uint64_t epoch) {
      *node = n;
      *birth = epoch;
    }
  };

  static Link Child(Inner* inner, std::uint64_t id, std::uint32_t height) {
    unsigned shift = kLeafBits + kInnerBits * (height - 1);
    std::uint64_t i = (id >> shift) & (kInnerSize - 1);
    return Link{&inner->children[i], &inner->births[i]};
  }

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
      up->births[0] = root.birth;
      root.node = up;
      root.birth = ctx.epoch;
      ++root.height;
    }
  }

  // Hangs a new node at `link`. In a published parent the link lies past
  // every published count; it is recorded so a rollback can unhook it.
  static void SetNew(Link link, void* node, bool parent_private, MutationContext& ctx) {
    if (!parent_private && ctx.blocks != nullptr) ctx.blocks->AddLink(link.node);
    link.Set(node, ctx.epoch);
  }

  static Inner* NewInner(MutationContext& ctx) {
    auto* n = static_cast<Inner*>(ctx.Allocate(sizeof(Inner)));
    std::memset(static_cast<void*>(n), 0, sizeof(Inner));
    return n;
  }
  static Leaf* NewLeaf(MutationContext& ctx) {
    auto* n = static_cast<Leaf*>(ctx.Allocate(sizeof(Leaf)));
    std::memset(static_cast<void*>(n), 0, sizeof(Leaf));
    return n;
  }

  // Copy-on-write of the node at `link`: itself if born in this epoch, else
  // a copy that replaces it (the original is retired; a shared node of
  // removed slots is not: it belongs to no version).
  template <typename Node>
  static Node* Own(Link link, MutationContext& ctx) {
    auto* n = static_cast<Node*>(*link.node);
    if (*link.birth == ctx.epoch) return n;
    auto* copy = static_cast<Node*>(ctx.Allocate(sizeof(Node)));
    std::memcpy(static_cast<void*>(copy), n, sizeof(Node));
    if (*link.birth != kSharedBirth) ctx.Retire(n);  // a throw leaves `copy` to the group's rollback
    link.Set(copy, ctx.epoch);
    return copy;
  }

  // The shared nodes of removed slots: a leaf of RemovedSlot<Slot>::Value(),
  // and per height h an inner node whose children are all the shared node
  // of height h - 1. Built on first use (only by a writer) and never freed
  // or written afterwards.
  struct Shared {
    Leaf leaf;
    Inner inner[kMaxHeight];
    Shared() {
      for (Slot& s : leaf.slots) s = RemovedSlot<Slot>::Value();
      for (std::uint32_t h = 0; h < kMaxHeight; ++h) {
        void* below = h == 0 ? static_cast<void*>(&leaf) : static_cast<void*>(&inner[h - 1]);
        for (std::uint64_t i = 0; i < kInnerSize; ++i) {
          inner[h].children[i] = below;
          inner[h].births[i] = kSharedBirth;
        }
      }
    }
  };
  static const Shared& SharedNodes() {
    static const Shared shared;
    return shared;
  }

  static void* ReserveInnerNode(std::uint32_t height, std::uint64_t first, std::uint64_t count,
                                MutationContext& ctx) {
    Inner* inner = NewInner(ctx);  // links zeroed: the leaves come from ReserveLeaves
    if (height == 1) return inner;
    const std::uint64_t span = std::uint64_t{1} << (kLeafBits + kInnerBits * (height - 1));
    for (std::uint64_t i = 0; i < kInnerSize && first + i * span < count; ++i) {
      inner->children[i] = ReserveInnerNode(height - 1, first + i * span, count, ctx);
      inner->births[i] = ctx.epoch;
    }
    return inner;
  }

  template <typename Fn>
  static void DestroyNode(void* node, std::uint64_t birth, std::uint32_t height, std::uint64_t first,
                          std::uint64_t count, base::MemoryAccount* account, Fn& fn) {
    if (node == nullptr || birth == kSharedBirth) return;  // a shared node holds only removed slots
    if (height == 0) {
      auto* leaf = static_cast<Leaf*>(node);
      for (std::uint64_t i = 0; i < kLeafSize && first + i < count; ++i) fn(leaf->slots[i]);
    } else {
      auto* inner = static_cast<Inner*>(node);
      std::uint64_t span = std::uint64_t{1} << (kLeafBits + kInnerBits * (height - 1));
      for (std::uint64_t i = 0; i < kInnerSize; ++i)
        DestroyNode(inner->children[i], inner->births[i], height - 1, first + i * span, count, account, fn);
    }
    account->Free(node);
  }
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_RADIX_TABLE_H_
