// The node layouts of IndexTree (index_tree.h): how a leaf holds entries
// and an inner node its children, for fixed-width and variable-width keys,
// and the in-node operations (search, insert, erase, assemble) the tree
// algorithms are written in. Internal to src/index.
//
// Every node starts with a 16-byte Header (birth epoch, count); the rest:
//
//   fixed leaf   keys[max][w] ids[max][6]           (w = key_width, may be 0)
//   fixed inner  counts[max]:u64 children[max]:ptr keys[max][w] ids[max][6]
//   var leaf     slots[count]:u16 ... free ... records   (records at the end)
//   var inner    slots[count]:{child:ptr, count:u48 | offset:u16} ... records
//   record       := key_len:u16 key[key_len] id[6]
//
// Keys are the encoded bytes (key_codec.h), ids 48-bit little-endian. A
// fixed node's arrays are sized for `max` entries, so entry i sits at a
// computed offset; a variable node's records are unordered, its slot array
// is in entry order, and erased records stay as garbage until the node is
// compacted (InsertAt compacts when the gap is too small).
//
// An inner node holds, for each child, the child pointer, the child's entry
// count, and a separator (key, id): separator i <= every entry of child i <
// separator i+1. Separator 0 is stored but never compared (it equals the
// separator the parent holds for this node).
//
// Thread safety: the reading functions may run on any thread against a
// published node; the writing ones only on a private node (index_tree.cc).
#ifndef QUIVER_INDEX_TREE_NODE_H_
#define QUIVER_INDEX_TREE_NODE_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "base/packed.h"
#include "index/index_tree.h"
#include "index/tree_shape.h"

namespace quiver::index::tree {

namespace config {
// Node sizes in bytes, all mimalloc size classes (no bin rounding); chosen
// by measurement (docs/impl.md "Index tree"). A 2 KiB leaf holds 145 int64
// entries: one 16-way search step and one more cache line find an entry,
// and a copy-on-write path copy stays small. Trees of ids alone (width 0;
// label sets were such trees until they became IdSets) keep 4 KiB leaves
// (680 ids). Inner nodes of 4 KiB (136 children of an
// int64 tree) keep trees shallow.
// Variable-width nodes of 4 KiB hold at least three keys of kMaxKeyBytes,
// which a split into two halves needs.
inline constexpr std::uint32_t kLeafBytes = 2048;
inline constexpr std::uint32_t kLabelSetLeafBytes = 4096;
inline constexpr std::uint32_t kVariableLeafBytes = 4096;
inline constexpr std::uint32_t kInnerBytes = 4096;
// A full fixed-width leaf moves entries to a sibling instead of splitting
// when the sibling has at least 1/kRedistributeFreeDivisor of its room free.
inline constexpr std::uint32_t kRedistributeFreeDivisor = 8;
// Searches of at least this many fixed-width entries start with a 16-way
// step (tree_node.cc WidePartition).
inline constexpr std::uint32_t kWideSearchMin = 48;
}  // namespace config

// The largest node any shape uses (test shapes included): the size of the
// per-thread scratch buffers.
inline constexpr std::uint32_t kMaxNodeBytes = 8192;
// Deeper than any tree of 2^48 entries with the default node sizes; test
// trees with a fan-out of 4 stay below it up to millions of entries.
inline constexpr int kMaxHeight = 40;
inline constexpr std::uint64_t kMaxCount = (std::uint64_t{1} << 48) - 1;

enum Kind : int { kInner = 0, kLeaf = 1 };

struct Header {
  std::uint64_t birth;    // the epoch the node was born in
  std::uint16_t count;    // entries (leaf) or children (inner)
  std::uint16_t heap;     // variable nodes: offset of the lowest record byte
  std::uint16_t garbage;  // variable nodes: bytes of erased records at or above `heap`
  std::uint16_t reserved;
};
static_assert(sizeof(Header) == 16);

// One entry as the in-node operations take it; child and count only for
// inner nodes.
struct Entry {
  std::string_view key;
  std::uint64_t id = 0;
  void* child = nullptr;
  std::uint64_t count = 0;
};

// How full a node is, or what one entry adds: the entry count and (for
// variable nodes) the bytes of slots and live records.
struct Load {
  std::uint32_t count = 0;
  std::uint32_t bytes = 0;
  Load operator+(Load o) const { return {count + o.count, bytes + o.bytes}; }
};

// A run [from, to) of one node's entries: the input of Assemble.
struct Range {
  const void* node;
  std::uint32_t from;
  std::uint32_t to;
};

// The shape of the tree `root` heads (its key width and max_fanout).
Shape ShapeOf(const IndexRoot& root);

// ---- Raw access

inline Header* Hdr(void* n) { return static_cast<Header*>(n); }
inline const Header* Hdr(const void* n) { return static_cast<const Header*>(n); }
inline std::uint32_t Count(const void* n) { return Hdr(n)->count; }
inline unsigned char* Base(void* n) { return static_cast<unsigned char*>(n); }
inline const unsigned char* Base(const void* n) { return static_cast<const unsigned char*>(n); }

inline std::uint16_t LoadU16(const unsigned char* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline void StoreU16(unsigned char* p, std::uint16_t v) { std::memcpy(p, &v, 2); }
inline std::uint64_t LoadU64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void StoreU64(unsigned char* p, std::uint64_t v) { std::memcpy(p, &v, 8); }
// An 8-byte key as one integer whose order is the key's memcmp order.
inline std::uint64_t LoadBigEndian64(const void* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

// Variable nodes: the slot of entry i and the record it points to.
inline constexpr std::uint32_t kVarSlotBytes[2] = {16, 2};  // inner, leaf
inline constexpr std::uint32_t RecordBytes(std::size_t key_size) {
  return 2 + static_cast<std::uint32_t>(key_size) + 6;
}
inline std::uint16_t VarOffset(Kind k, const void* n, std::uint32_t i) {
  const unsigned char* slot = Base(n) + sizeof(Header) + i * kVarSlotBytes[k];
  return k == kLeaf ? LoadU16(slot) : static_cast<std::uint16_t>(LoadU64(slot + 8) >> 48);
}

// ---- Entries

inline std::string_view Key(const Shape& s, Kind k, const void* n, std::uint32_t i) {
  if (s.fixed()) {
    return {reinterpret_cast<const char*>(Base(n) + s.keys_off[k] + i * static_cast<std::uint32_t>(s.width)),
            static_cast<std::size_t>(s.width)};
  }
  const unsigned char* rec = Base(n) + VarOffset(k, n, i);
  return {reinterpret_cast<const char*>(rec + 2), LoadU16(rec)};
}

inline std::uint64_t Id(const Shape& s, Kind k, const void* n, std::uint32_t i) {
  if (s.fixed()) return base::Load48(Base(n) + s.ids_off[k] + i * 6);
  const unsigned char* rec = Base(n) + VarOffset(k, n, i);
  return base::Load48(rec + 2 + LoadU16(rec));
}

inline void* Child(const Shape& s, const void* n, std::uint32_t i) {
  const unsigned char* p =
      s.fixed() ? Base(n) + s.children_off + i * 8 : Base(n) + sizeof(Header) + i * kVarSlotBytes[kInner];
  void* child;
  std::memcpy(&child, p, sizeof(child));
  return child;
}

inline std::uint64_t ChildCount(const Shape& s, const void* n, std::uint32_t i) {
  if (s.fixed()) return LoadU64(Base(n) + sizeof(Header) + i * 8);
  return LoadU64(Base(n) + sizeof(Header) + i * kVarSlotBytes[kInner] + 8) & kMaxCount;
}

inline void SetChild(const Shape& s, void* n, std::uint32_t i, void* child) {
  unsigned char* p =
      s.fixed() ? Base(n) + s.children_off + i * 8 : Base(n) + sizeof(Header) + i * kVarSlotBytes[kInner];
  std::memcpy(p, &child, sizeof(child));
}

inline void SetChildCount(const Shape& s, void* n, std::uint32_t i, std::uint64_t count) {
  if (s.fixed()) return StoreU64(Base(n) + sizeof(Header) + i * 8, count);
  unsigned char* p = Base(n) + sizeof(Header) + i * kVarSlotBytes[kInner] + 8;
  StoreU64(p, (LoadU64(p) & ~kMaxCount) | count);
}

inline Entry GetEntry(const Shape& s, Kind k, const void* n, std::uint32_t i) {
  Entry e{Key(s, k, n, i), Id(s, k, n, i)};
  if (k == kInner) {
    e.child = Child(s, n, i);
    e.count = ChildCount(s, n, i);
  }
  return e;
}

// The entries below a child: its count (leaf) or the sum of its children's.
std::uint64_t Total(const Shape& s, Kind k, const void* n);

// The entry a parent keeps for child `n`: its first entry (a leaf) or
// separator 0 (an inner node), its address and its total.
inline Entry UpEntry(const Shape& s, Kind k, void* n) {
  return {Key(s, k, n, 0), Id(s, k, n, 0), n, Total(s, k, n)};
}

// ---- Order

// memcmp order on keys (a proper prefix first), then ids.
inline int CompareEntries(std::string_view a_key, std::uint64_t a_id, std::string_view b_key,
                          std::uint64_t b_id) {
  const int c = a_key.compare(b_key);
  if (c != 0) return c;
  return a_id < b_id ? -1 : (a_id > b_id ? 1 : 0);
}

// CompareEntries(entry i of `n`, (key, id)); 8-byte keys are compared as
// integers (no memcmp call).
inline int CompareEntryAt(const Shape& s, Kind k, const void* n, std::uint32_t i, std::string_view key,
                          std::uint64_t id) {
  if (s.width == 8 && key.size() == 8) {
    const std::uint64_t a = LoadBigEndian64(Base(n) + s.keys_off[k] + i * 8);
    const std::uint64_t b = LoadBigEndian64(key.data());
    if (a != b) return a < b ? -1 : 1;
    const std::uint64_t e = Id(s, k, n, i);
    return e < id ? -1 : (e > id ? 1 : 0);
  }
  return CompareEntries(Key(s, k, n, i), Id(s, k, n, i), key, id);
}

// Whether entry i of `n` has key `key`.
inline bool KeyEquals(const Shape& s, Kind k, const void* n, std::uint32_t i, std::string_view key) {
  if (s.width == 8 && key.size() == 8) {
    return LoadU64(Base(n) + s.keys_off[k] + i * 8) ==
           LoadU64(reinterpret_cast<const unsigned char*>(key.data()));
  }
  return Key(s, k, n, i) == key;
}

// The number of entries of leaf `n` that are < (key, id).
std::uint32_t LowerBound(const Shape& s, const void* n, std::string_view key, std::uint64_t id);
// The child of inner node `n` whose subtree holds (key, id): the last i
// with i == 0 or separator i <= (key, id).
std::uint32_t ChildFor(const Shape& s, const void* n, std::string_view key, std::uint64_t id);

// ---- Capacity

Load LoadOf(const Shape& s, Kind k, const void* n);
Load EntryLoad(const Shape& s, Kind k, std::size_t key_size);
inline bool Fits(const Shape& s, Kind k, Load l) {
  return l.count <= s.max_count[k] && sizeof(Header) + l.bytes <= s.node_bytes[k];
}
// Below a quarter full: an erase merges such a node with a sibling it fits with.
inline bool Underfull(const Shape& s, Kind k, Load l) {
  return l.count * 4 < s.max_count[k] && (s.fixed() || (sizeof(Header) + l.bytes) * 4 < s.node_bytes[k]);
}
// Whether the entry with the largest key a tree of this shape can hold fits in `n`.
bool HasRoomForAny(const Shape& s, Kind k, const void* n);

// ---- Writing (private nodes only)

void InitNode(const Shape& s, Kind k, void* n, std::uint64_t birth);
// Inserts `e` as entry i; requires Fits(LoadOf(n) + EntryLoad(e.key)).
void InsertAt(const Shape& s, Kind k, void* n, std::uint32_t i, const Entry& e);
void EraseAt(const Shape& s, Kind k, void* n, std::uint32_t i);
// Fixed inner nodes: rewrites separator i (the entry's key and id).
void SetSeparator(const Shape& s, void* n, std::uint32_t i, std::string_view key, std::uint64_t id);

// Writes into `out` (node_bytes[k] bytes, not a source) a node holding the
// concatenation of `ranges`, which must fit; the birth is `birth`.
void Assemble(const Shape& s, Kind k, void* out, std::span<const Range> ranges, std::uint64_t birth);
// Per-thread buffers of kMaxNodeBytes for Assemble; slot < 3.
void* Scratch(int slot);
// Copies a node assembled in a scratch buffer over `dst`.
inline void CopyNode(const Shape& s, Kind k, void* dst, const void* src) {
  std::memcpy(dst, src, s.node_bytes[k]);
}

}  // namespace quiver::index::tree

#endif  // QUIVER_INDEX_TREE_NODE_H_
