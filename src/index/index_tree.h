// IndexTree: a persistent (copy-on-write, structurally shared) B+tree of
// index entries, the structure behind property indexes (label and type sets
// are IdSets, id_set.h).
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

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/memory.h"
#include "base/packed.h"
#include "index/tree_shape.h"
#include "storage/retire_list.h"

namespace quiver::index {

// The root of one tree, held by value in the version (like TableRoot).
// key_width: -1 for variable-length keys, or a fixed width >= 0 (8 for an
// int64 or double index, key_codec.h FixedKeyWidth; 0 for a tree of ids
// alone, which the tests use): fixed trees store keys inline with no
// length, which is what keeps an int64 entry near 16 bytes. Set once, by
// Builder or the first Insert's caller, as is max_fanout.
struct IndexRoot {
  void* node = nullptr;
  std::uint64_t birth = 0;      // the epoch `node` was born in
  std::uint64_t count = 0;      // entries
  std::uint32_t height = 0;     // 0: `node` is a leaf
  std::int32_t key_width = -1;  // -1 variable-length, else the fixed key size in bytes
  // Tests only: at most this many entries per leaf and children per inner
  // node (>= 4), so that a few thousand entries grow a tree of height 3-4.
  // 0 (production): as many as the node size holds.
  std::uint32_t max_fanout = 0;
};

// One end of a range. Unbounded: no limit on that side. Mind the default:
// Bound{} and Bound{key} are unbounded; say Bound::Inclusive(key) or
// Bound::Exclusive(key). In a fixed-width tree a bound's key has key_width
// bytes.
struct Bound {
  std::string_view key;
  bool inclusive = true;
  bool unbounded = true;

  static Bound Inclusive(std::string_view k) { return {k, true, false}; }
  static Bound Exclusive(std::string_view k) { return {k, false, false}; }
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
  // Whether the entry (key, id) is in the tree (a label set's membership test).
  static bool ContainsEntry(const IndexRoot& root, std::string_view key, std::uint64_t id);

  // Every node of `root` goes to ctx.Retire (dropping an index in a
  // version); root becomes empty.
  static void Retire(IndexRoot& root, storage::MutationContext& ctx);
  // Frees every node now: only when no version can reach them (the last
  // version, or a tree that was never published).
  static void Destroy(IndexRoot& root, base::MemoryAccount* account);
  // Allocator bytes of the tree's nodes.
  static std::uint64_t MemoryBytes(const IndexRoot& root);

  // Walks entries in order. A cursor reads a published root and holds no
  // lock; it stays valid while the version holding the root lives. A new
  // cursor is not Valid until a Seek.
  class Cursor {
   public:
    explicit Cursor(const IndexRoot& root);
    // Positions at the first entry >= bound (> if !inclusive); for an
    // unbounded bound, the first entry.
    void Seek(const Bound& lo);
    // Positions at the last entry <= bound (< if !inclusive); for an
    // unbounded bound, the last entry.
    void SeekLast(const Bound& hi);
    // Positions at the first entry >= (key, id): resumes a scan after the
    // last entry seen (pass its id + 1), or seeks within one key's ids.
    void SeekEntry(std::string_view key, std::uint64_t id);
    bool Valid() const { return valid_; }
    // Valid until the cursor moves. Requires Valid().
    std::string_view key() const {
      if (leaf_keys_ == nullptr) return VariableKey();
      const auto w = static_cast<std::uint32_t>(shape_.width);
      return {reinterpret_cast<const char*>(leaf_keys_) + pos_ * w, w};
    }
    std::uint64_t id() const {
      return leaf_keys_ == nullptr ? VariableId() : base::Load48(leaf_ids_ + pos_ * 6);
    }
    // Require Valid(); the cursor is invalid after the last (first) entry.
    void Next() {
      if (++pos_ == count_) StepLeaf(/*forward=*/true);
    }
    void Prev() {
      if (pos_ == 0) {
        StepLeaf(/*forward=*/false);
      } else {
        --pos_;
      }
    }
    // Batch reads for scans: the ids of up to `max` entries from the
    // current one on (NextIds: ascending; PrevIds: descending), written to
    // `out`, the cursor moved past them (invalid past the last or first
    // entry). Returns how many; fewer than `max` only at the tree's end.
    // A leaf's ids are decoded in one loop, and nothing is compared: the
    // caller bounds a range by its count (CountRange).
    std::size_t NextIds(std::uint64_t* out, std::size_t max);
    std::size_t PrevIds(std::uint64_t* out, std::size_t max);

   private:
    static constexpr int kMaxLevels = 41;  // tree::kMaxHeight + 1

    // Moves to the neighbouring leaf's first (forward) or last entry, or
    // becomes invalid.
    void StepLeaf(bool forward);
    // Fills the path below `from_level` with the leftmost or rightmost nodes.
    void Descend(int from_level, bool leftmost);
    void EnterLeaf(const void* leaf, std::uint32_t pos);
    // Writes the ids of entries [from, to) of the current leaf to `out`,
    // ascending or (reversed) descending.
    void CopyIds(std::uint32_t from, std::uint32_t to, std::uint64_t* out) const;
    void CopyIdsReversed(std::uint32_t from, std::uint32_t to, std::uint64_t* out) const;
    std::string_view VariableKey() const;
    std::uint64_t VariableId() const;

    IndexRoot root_;
    tree::Shape shape_;
    // The path: nodes_[0] the root, nodes_[height] the leaf; index_[l] the
    // child taken in nodes_[l] (l < height).
    const void* nodes_[kMaxLevels];
    std::uint32_t index_[kMaxLevels];
    // The position in the leaf nodes_[height], and for fixed-width trees
    // the leaf's key and id arrays (leaf_keys_ null: variable width).
    const unsigned char* leaf_keys_ = nullptr;
    const unsigned char* leaf_ids_ = nullptr;
    std::uint32_t pos_ = 0;
    std::uint32_t count_ = 0;
    bool valid_ = false;
  };

  // Builds a tree from entries added in strictly increasing (key, id)
  // order, with full leaves: the checkpoint loader and an index build use
  // it. Nodes come from ctx.Allocate and are born in ctx.epoch. A Builder
  // destroyed before Finish frees what it built.
  class Builder {
   public:
    Builder(std::int32_t key_width, storage::MutationContext& ctx);
    // `shape` gives key_width and max_fanout (tests); its other fields are ignored.
    Builder(const IndexRoot& shape, storage::MutationContext& ctx);
    ~Builder();
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;

    // Requires (key, id) above the previous entry, key.size() == key_width
    // for a fixed-width tree. Throws std::bad_alloc (the entry is then not
    // added; the Builder stays usable or destructible).
    void Add(std::string_view key, std::uint64_t id);
    // Hangs `leaf`, a non-empty leaf of this shape born in ctx.epoch (a
    // LeafRun's), whose entries are all above those added before. A
    // Builder takes either leaves or entries, never both. The leaf is the
    // Builder's once this returns; if it throws std::bad_alloc, the
    // caller's still.
    void AddLeaf(void* leaf);
    IndexRoot Finish();

   private:
    static constexpr int kMaxLevels = 41;

    // Hangs the full node open_[level] under level + 1 and opens `fresh`
    // (null: a new node) in its place.
    void Close(int level, void* fresh = nullptr);
    void* NewNode(int level);

    IndexRoot root_;
    tree::Shape shape_;
    storage::MutationContext* ctx_;
    void* open_[kMaxLevels] = {};  // the rightmost node of each level, [0] the leaf
    int levels_ = 0;               // open_[0, levels_) are set
  };

  // Leaves of consecutive sorted entries, not yet hung in a tree: the
  // checkpoint loader fills the leaves of each block of stored entries on
  // a worker thread, then hangs them in order with Builder::AddLeaf. Every
  // leaf is full but the last. The leaves not taken are freed with the run.
  class LeafRun {
   public:
    // `shape` gives key_width and max_fanout.
    LeafRun(const IndexRoot& shape, storage::MutationContext& ctx);
    ~LeafRun();
    LeafRun(const LeafRun&) = delete;
    LeafRun& operator=(const LeafRun&) = delete;

    // As Builder::Add. Throws std::bad_alloc (the entry is then not added).
    void Add(std::string_view key, std::uint64_t id);
    // Fixed-width trees: `n` entries, keys n * key_width bytes at `keys`,
    // ids 6 bytes each (little-endian) at `ids`, copied a leaf's share at a
    // time. Throws std::bad_alloc (then a prefix of them is added).
    void AddFixed(const unsigned char* keys, const unsigned char* ids, std::size_t n);
    // The leaves so far, in order; the caller may take them (setting each
    // to null once it owns it).
    std::vector<void*>& leaves() { return leaves_; }
    std::uint64_t count() const { return count_; }

   private:
    // The last leaf if it has room for one more entry of `key_size` bytes,
    // else a new one appended.
    void* OpenLeaf(std::size_t key_size);

    tree::Shape shape_;
    storage::MutationContext* ctx_;
    std::vector<void*> leaves_;
    std::uint64_t count_ = 0;
  };
};

}  // namespace quiver::index

#endif  // QUIVER_INDEX_INDEX_TREE_H_
