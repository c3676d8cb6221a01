// IndexTree: a persistent (copy-on-write, structurally shared) B+tree of
// index entries, the structure behind label sets and property indexes.
//
// An entry is (key, id): `key` an encoded key (key_codec.h; empty for a
// label set), `id` a 48-bit element id. Entries are unique and sorted by
// (key bytes under memcmp, id), so the ids of one key come out in id order.
// Inner nodes keep the entry count of each child, so Count and CountRange
// are O(log n) and the total is O(1).
//
// Writes follow the tables' rules (retire_list.h, DESIGN.md invariant 1):
// the writer edits in place only nodes born in the current epoch
// (ctx.epoch); any other node on the path is copied and the original
// retired through ctx.Retire; new nodes come from ctx.Allocate, so a
// rolled-back group frees them. A published root is never written.
//
// Thread safety: the const functions and Cursor may run on any number of
// threads against a published root; Insert/Erase/Builder/Retire belong to
// the writer thread alone.
#ifndef QUIVER_INDEX_INDEX_TREE_H_
#define QUIVER_INDEX_INDEX_TREE_H_

#include <cstdint>
#include <string_view>

#include "base/memory.h"
#include "storage/retire_list.h"

namespace quiver::index {

// The root of one tree, held by value in the version (like TableRoot).
// key_width: 0 for variable-length keys, or a fixed width (e.g. 8 for an
// int64 or double index, 0 bytes for a label set is also "fixed"): fixed
// trees store keys inline with no length, which is what keeps an int64
// entry near 16 bytes. Set once, by Builder or the first Insert's caller.
struct IndexRoot {
  void* node = nullptr;
  std::uint64_t birth = 0;  // the epoch `node` was born in
  std::uint64_t count = 0;  // entries
  std::uint32_t height = 0;
  std::int32_t key_width = -1;  // -1 variable-length, else the fixed key size in bytes
};

// One end of a range. Unbounded: no limit on that side.
struct Bound {
  std::string_view key;
  bool inclusive = true;
  bool unbounded = true;
};

class IndexTree {
 public:
  // Adds (key, id); false if it was already there. Requires key.size() ==
  // root.key_width for a fixed-width tree, <= kMaxKeyBytes otherwise.
  // Throws std::bad_alloc, leaving `root` unchanged or changed only in
  // private nodes (the group rolls back).
  static bool Insert(IndexRoot& root, std::string_view key, std::uint64_t id, storage::MutationContext& ctx);
  // Removes (key, id); false if it was not there.
  static bool Erase(IndexRoot& root, std::string_view key, std::uint64_t id, storage::MutationContext& ctx);

  // The number of entries with key in [lo, hi] (as the bounds say).
  static std::uint64_t CountRange(const IndexRoot& root, const Bound& lo, const Bound& hi);
  // Whether any entry has `key`; its smallest id if `first_id` is given.
  static bool Contains(const IndexRoot& root, std::string_view key, std::uint64_t* first_id = nullptr);

  // Every node of `root` goes to ctx.Retire (dropping an index in a
  // version); root becomes empty.
  static void Retire(IndexRoot& root, storage::MutationContext& ctx);
  // Frees every node now: only when no version can reach them (the last
  // version, or a tree that was never published).
  static void Destroy(IndexRoot& root, base::MemoryAccount* account);
  // Allocator bytes of the tree's nodes.
  static std::uint64_t MemoryBytes(const IndexRoot& root);

  // Walks entries in order. A cursor reads a published root and holds no
  // lock; it stays valid while the version holding the root lives.
  class Cursor {
   public:
    explicit Cursor(const IndexRoot& root);
    // Positions at the first entry >= bound (> if !inclusive); for an
    // unbounded bound, the first entry.
    void Seek(const Bound& lo);
    // Positions at the last entry <= bound (< if !inclusive); for an
    // unbounded bound, the last entry.
    void SeekLast(const Bound& hi);
    bool Valid() const;
    std::string_view key() const;  // valid until the cursor moves
    std::uint64_t id() const;
    void Next();
    void Prev();

   private:
    // implementation-defined: a path stack of (node, slot) of the tree's height
  };

  // Builds a tree from entries added in strictly increasing (key, id)
  // order, with full leaves: the checkpoint loader and an index build use
  // it. Nodes come from ctx.Allocate.
  class Builder {
   public:
    Builder(std::int32_t key_width, storage::MutationContext& ctx);
    void Add(std::string_view key, std::uint64_t id);
    IndexRoot Finish();
  };
};

}  // namespace quiver::index

#endif  // QUIVER_INDEX_INDEX_TREE_H_
