// In-node operations of IndexTree (layouts in tree_node.h). Fixed layouts
// move whole array runs with memmove; variable layouts move slots and write
// records into the gap between the slot array and the records.
#include "index/tree_node.h"

#include <cassert>
#include <limits>

#include "base/prefetch.h"
#include "index/key_codec.h"

namespace quiver::index::tree {
namespace {

constexpr std::uint32_t FixedEntryBytes(Kind k, std::uint32_t w) {
  return k == kLeaf ? w + 6 : 8 + 8 + w + 6;
}

// The first i in [lo, lo + n) for which less(i) is false (less is
// monotone: true then false).
template <typename Less>
std::uint32_t Partition(std::uint32_t lo, std::uint32_t n, Less less) {
  while (n > 0) {
    const std::uint32_t half = n / 2;
    if (less(lo + half)) {
      lo += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return lo;
}

// Partition over a fixed layout's entries, with one 16-way step first for
// large runs: the 15 sampled keys lie on distinct cache lines, which are
// prefetched together, so a cold node costs two rounds of memory latency
// (the samples, then the lines of the chosen 1/16) instead of one per
// binary-search probe. `keys` has `stride` bytes per entry; `lines` are
// arrays indexed like the entries whose lines the final run needs too
// (ids, and children for inner nodes), with their entry sizes.
struct Lines {
  const unsigned char* base[3];
  std::uint32_t size[3];
  int n;
};

template <typename Less>
std::uint32_t WidePartition(const unsigned char* keys, std::uint32_t stride, const Lines& lines,
                            std::uint32_t lo, std::uint32_t n, Less less) {
  if (n >= config::kWideSearchMin) {
    const std::uint32_t step = n / 16;
    for (std::uint32_t j = 1; j < 16; ++j) base::Prefetch(keys + (lo + j * step) * stride);
    // The samples are in order: a binary search over them (4 comparisons,
    // not 15) while the prefetches are in flight.
    const std::uint32_t below = Partition(1, 15, [&](std::uint32_t j) { return less(lo + j * step); }) - 1;
    // The answer lies in [first, end]: sample `below` is below, sample below+1 is not.
    const std::uint32_t first = below == 0 ? lo : lo + below * step + 1;
    const std::uint32_t end = below == 15 ? lo + n : lo + (below + 1) * step;
    for (int a = 0; a < lines.n; ++a) {
      for (std::uint32_t b = first * lines.size[a]; b < end * lines.size[a] + lines.size[a]; b += 64) {
        base::Prefetch(lines.base[a] + b);
      }
    }
    lo = first;
    n = end - first;
  }
  return Partition(lo, n, less);
}

// Partition without branches on the comparison (a conditional move per
// step): random keys mispredict half the steps of a branching search.
template <typename Less>
std::uint32_t BranchlessPartition(std::uint32_t lo, std::uint32_t n, Less less) {
  if (n == 0) return lo;
  while (n > 1) {
    const std::uint32_t half = n / 2;
    lo = less(lo + half - 1) ? lo + half : lo;
    n -= half;
  }
  return lo + (less(lo) ? 1 : 0);
}

// Prefetches the lines of entries [first, last] of an array of `size`-byte
// entries, a run of at most max_count / 16 + 1 <= 10 entries of up to 8
// bytes: at most 3 lines, on which its first, middle and last bytes lie.
void PrefetchRun(const unsigned char* base, std::uint32_t size, std::uint32_t first, std::uint32_t last) {
  const unsigned char* from = base + first * size;
  const unsigned char* to = base + last * size + size - 1;
  base::Prefetch(from);
  base::Prefetch(from + (to - from) / 2);
  base::Prefetch(to);
}

// Search for 8-byte keys: each key is one big-endian integer, and the
// search compares keys alone (no id loaded, no branch on the outcome)
// until it meets a run of keys equal to the target's, which only then is
// searched by id. The 16-way step and its prefetches are WidePartition's.
[[gnu::noinline]] std::uint32_t Search8(const Shape& s, Kind k, const void* n, std::uint32_t lo,
                                        std::uint32_t count, std::string_view key, std::uint64_t id,
                                        bool strict) {
  const unsigned char* keys = Base(n) + s.keys_off[k];
  const unsigned char* ids = Base(n) + s.ids_off[k];
  const std::uint64_t t = LoadBigEndian64(key.data());
  auto key_below = [&](std::uint32_t i) { return LoadBigEndian64(keys + i * 8) < t; };
  const std::uint32_t end = lo + count;
  std::uint32_t first = lo;
  std::uint32_t run = count;
  if (count >= config::kWideSearchMin) {
    const std::uint32_t step = count / 16;
    // Unrolled: 15 address adds and prefetches, no loop counter.
    const unsigned char* sample = keys + lo * 8;
    const std::size_t stride = std::size_t{step} * 8;
#pragma GCC unroll 15
    for (std::uint32_t j = 1; j < 16; ++j) base::Prefetch(sample += stride);
    const std::uint32_t below =
        BranchlessPartition(1, 15, [&](std::uint32_t j) { return key_below(lo + j * step); }) - 1;
    first = below == 0 ? lo : lo + below * step + 1;
    const std::uint32_t last = below == 15 ? end : lo + (below + 1) * step;
    PrefetchRun(keys, 8, first, last);
    PrefetchRun(ids, 6, first, last);
    if (k == kInner) PrefetchRun(Base(n) + s.children_off, 8, first, last);
    run = last - first;
  }
  const std::uint32_t i = BranchlessPartition(first, run, key_below);
  if (i == end || LoadBigEndian64(keys + i * 8) != t) return i;
  // Entries [i, end) hold keys >= t, the first ones equal to it: the ids
  // order that run.
  return Partition(i, end - i, [&](std::uint32_t x) {
    if (LoadBigEndian64(keys + x * 8) != t) return false;
    const std::uint64_t e = base::Load48(ids + x * 6);
    return strict ? e < id : e <= id;
  });
}

// The first i in [lo, lo + n) whose entry is not below (key, id) (strict)
// or above it (!strict); 8-byte keys take Search8.
std::uint32_t Search(const Shape& s, Kind k, const void* n, std::uint32_t lo, std::uint32_t count,
                     std::string_view key, std::uint64_t id, bool strict) {
  if (s.width == 8) return Search8(s, k, n, lo, count, key, id, strict);
  const unsigned char* keys = Base(n) + s.keys_off[k];
  const unsigned char* ids = Base(n) + s.ids_off[k];
  // below(i): entry i < target (strict) or entry i <= target (!strict).
  auto id_below = [&](std::uint32_t i) {
    const std::uint64_t e = base::Load48(ids + i * 6);
    return strict ? e < id : e <= id;
  };
  if (s.fixed()) {
    const auto w = static_cast<std::uint32_t>(s.width);
    if (w == 0) {
      // The lines the final run reads: ids, and an inner node's child pointers.
      const Lines lines{{ids, Base(n) + s.children_off, nullptr}, {6, 8, 0}, k == kLeaf ? 1 : 2};
      return WidePartition(ids, 6, lines, lo, count, id_below);
    }
    return Partition(lo, count, [&](std::uint32_t i) {
      const int c = std::memcmp(keys + i * w, key.data(), w);
      return c != 0 ? c < 0 : id_below(i);
    });
  }
  return Partition(lo, count, [&](std::uint32_t i) {
    const int c = CompareEntries(Key(s, k, n, i), Id(s, k, n, i), key, id);
    return strict ? c < 0 : c <= 0;
  });
}

void FixedShift(const Shape& s, Kind k, void* n, std::uint32_t i, bool open) {
  const std::uint32_t count = Count(n);
  const std::uint32_t from = open ? i : i + 1;
  const std::uint32_t to = open ? i + 1 : i;
  const std::uint32_t moved = count - from;
  const auto w = static_cast<std::uint32_t>(s.width);
  unsigned char* b = Base(n);
  std::memmove(b + s.keys_off[k] + to * w, b + s.keys_off[k] + from * w, moved * w);
  std::memmove(b + s.ids_off[k] + to * 6, b + s.ids_off[k] + from * 6, moved * 6);
  if (k == kInner) {
    std::memmove(b + sizeof(Header) + to * 8, b + sizeof(Header) + from * 8, moved * 8);
    std::memmove(b + s.children_off + to * 8, b + s.children_off + from * 8, moved * 8);
  }
}

void FixedWrite(const Shape& s, Kind k, void* n, std::uint32_t i, const Entry& e) {
  unsigned char* b = Base(n);
  if (s.width > 0)
    std::memcpy(b + s.keys_off[k] + i * static_cast<std::uint32_t>(s.width), e.key.data(), e.key.size());
  base::Store48(b + s.ids_off[k] + i * 6, e.id);
  if (k == kInner) {
    StoreU64(b + sizeof(Header) + i * 8, e.count);
    SetChild(s, n, i, e.child);
  }
}

// Writes a variable record below the heap and returns its offset; requires
// the gap to hold it.
std::uint16_t VarWriteRecord(void* n, std::string_view key, std::uint64_t id) {
  Header* h = Hdr(n);
  h->heap = static_cast<std::uint16_t>(h->heap - RecordBytes(key.size()));
  unsigned char* rec = Base(n) + h->heap;
  StoreU16(rec, static_cast<std::uint16_t>(key.size()));
  if (!key.empty()) std::memcpy(rec + 2, key.data(), key.size());
  base::Store48(rec + 2 + key.size(), id);
  return h->heap;
}

void VarWriteSlot(Kind k, void* n, std::uint32_t i, std::uint16_t off, const Entry& e) {
  unsigned char* slot = Base(n) + sizeof(Header) + i * kVarSlotBytes[k];
  if (k == kLeaf) return StoreU16(slot, off);
  std::memcpy(slot, &e.child, sizeof(e.child));
  StoreU64(slot + 8, (std::uint64_t{off} << 48) | e.count);
}

void VarInsertAt(const Shape& s, Kind k, void* n, std::uint32_t i, const Entry& e) {
  const std::uint32_t slot = kVarSlotBytes[k];
  const std::uint32_t slots_end = sizeof(Header) + (Count(n) + 1) * slot;
  if (Hdr(n)->heap < slots_end + RecordBytes(e.key.size())) {  // compact: the garbage becomes the gap
    const Range all{n, 0, Count(n)};
    Assemble(s, k, Scratch(2), {&all, 1}, Hdr(n)->birth);
    CopyNode(s, k, n, Scratch(2));
  }
  const std::uint16_t off = VarWriteRecord(n, e.key, e.id);
  unsigned char* slots = Base(n) + sizeof(Header);
  std::memmove(slots + (i + 1) * slot, slots + i * slot, (Count(n) - i) * slot);
  VarWriteSlot(k, n, i, off, e);
}

void VarEraseAt(Kind k, void* n, std::uint32_t i) {
  const unsigned char* rec = Base(n) + VarOffset(k, n, i);
  Hdr(n)->garbage = static_cast<std::uint16_t>(Hdr(n)->garbage + RecordBytes(LoadU16(rec)));
  const std::uint32_t slot = kVarSlotBytes[k];
  unsigned char* slots = Base(n) + sizeof(Header);
  std::memmove(slots + i * slot, slots + (i + 1) * slot, (Count(n) - i - 1) * slot);
}

void FixedAppendRange(const Shape& s, Kind k, void* out, const Range& r) {
  const std::uint32_t at = Count(out);
  const std::uint32_t m = r.to - r.from;
  const auto w = static_cast<std::uint32_t>(s.width);
  unsigned char* o = Base(out);
  const unsigned char* b = Base(r.node);
  std::memcpy(o + s.keys_off[k] + at * w, b + s.keys_off[k] + r.from * w, m * w);
  std::memcpy(o + s.ids_off[k] + at * 6, b + s.ids_off[k] + r.from * 6, m * 6);
  if (k == kInner) {
    std::memcpy(o + sizeof(Header) + at * 8, b + sizeof(Header) + r.from * 8, m * 8);
    std::memcpy(o + s.children_off + at * 8, b + s.children_off + r.from * 8, m * 8);
  }
}

void VarAppendRange(Kind k, void* out, const Range& r) {
  for (std::uint32_t i = r.from; i < r.to; ++i) {
    const unsigned char* rec = Base(r.node) + VarOffset(k, r.node, i);
    const std::uint32_t bytes = RecordBytes(LoadU16(rec));
    Header* h = Hdr(out);
    h->heap = static_cast<std::uint16_t>(h->heap - bytes);
    std::memcpy(Base(out) + h->heap, rec, bytes);
    const std::uint32_t slot = kVarSlotBytes[k];
    std::memcpy(Base(out) + sizeof(Header) + (Count(out) + i - r.from) * slot,
                Base(r.node) + sizeof(Header) + i * slot, slot);
    if (k == kInner) {
      unsigned char* p = Base(out) + sizeof(Header) + (Count(out) + i - r.from) * slot + 8;
      StoreU64(p, (LoadU64(p) & kMaxCount) | (std::uint64_t{h->heap} << 48));
    } else {
      StoreU16(Base(out) + sizeof(Header) + (Count(out) + i - r.from) * slot, h->heap);
    }
  }
}

constexpr Shape ComputeShape(std::int32_t width, std::uint32_t max_fanout) {
  Shape s;
  s.width = width;
  const std::uint32_t fanout = max_fanout != 0 ? max_fanout : std::numeric_limits<std::uint16_t>::max();
  const std::uint32_t leaf_bytes = width < 0    ? config::kVariableLeafBytes
                                   : width == 0 ? config::kLabelSetLeafBytes
                                                : config::kLeafBytes;
  const std::uint32_t bytes[2] = {config::kInnerBytes, leaf_bytes};
  for (Kind k : {kInner, kLeaf}) {
    if (s.fixed()) {
      const std::uint32_t entry = FixedEntryBytes(k, static_cast<std::uint32_t>(s.width));
      s.max_count[k] = std::min<std::uint32_t>(fanout, (bytes[k] - sizeof(Header)) / entry);
      s.node_bytes[k] = sizeof(Header) + s.max_count[k] * entry;
    } else {
      s.max_count[k] = fanout;
      s.node_bytes[k] = bytes[k];
    }
  }
  if (s.fixed()) {
    const auto w = static_cast<std::uint32_t>(s.width);
    s.keys_off[kLeaf] = sizeof(Header);
    s.ids_off[kLeaf] = sizeof(Header) + s.max_count[kLeaf] * w;
    s.children_off = sizeof(Header) + s.max_count[kInner] * 8;
    s.keys_off[kInner] = s.children_off + s.max_count[kInner] * 8;
    s.ids_off[kInner] = s.keys_off[kInner] + s.max_count[kInner] * w;
  }
  return s;
}

static_assert(sizeof(Header) + 3 * (kVarSlotBytes[kInner] + RecordBytes(kMaxKeyBytes)) <=
              config::kInnerBytes);
static_assert(sizeof(Header) + 3 * (kVarSlotBytes[kLeaf] + RecordBytes(kMaxKeyBytes)) <=
              config::kVariableLeafBytes);

}  // namespace

Shape ShapeOf(const IndexRoot& root) {
  assert(root.max_fanout == 0 || root.max_fanout >= 4);
  // The production shapes, computed once at compile time.
  static constexpr Shape kVariable = ComputeShape(-1, 0);
  static constexpr Shape kLabelSet = ComputeShape(0, 0);
  static constexpr Shape kEightBytes = ComputeShape(8, 0);
  if (root.max_fanout == 0) {
    switch (root.key_width) {
      case -1: return kVariable;
      case 0: return kLabelSet;
      case 8: return kEightBytes;
      default: break;
    }
  }
  return ComputeShape(root.key_width, root.max_fanout);
}

std::uint64_t Total(const Shape& s, Kind k, const void* n) {
  if (k == kLeaf) return Count(n);
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < Count(n); ++i) total += ChildCount(s, n, i);
  return total;
}

// Both dispatch 8-byte keys to Search8 themselves: called through Search,
// whose generic paths keep more registers live, each search paid their
// saves and restores too.
std::uint32_t LowerBound(const Shape& s, const void* n, std::string_view key, std::uint64_t id) {
  if (s.width == 8) return Search8(s, kLeaf, n, 0, Count(n), key, id, /*strict=*/true);
  return Search(s, kLeaf, n, 0, Count(n), key, id, /*strict=*/true);
}

std::uint32_t ChildFor(const Shape& s, const void* n, std::string_view key, std::uint64_t id) {
  // The first separator above (key, id), searched among 1..count-1.
  if (s.width == 8) return Search8(s, kInner, n, 1, Count(n) - 1, key, id, /*strict=*/false) - 1;
  return Search(s, kInner, n, 1, Count(n) - 1, key, id, /*strict=*/false) - 1;
}

Load LoadOf(const Shape& s, Kind k, const void* n) {
  if (s.fixed()) return {Count(n), 0};
  const Header* h = Hdr(n);
  return {h->count, h->count * kVarSlotBytes[k] + (s.node_bytes[k] - h->heap - h->garbage)};
}

Load EntryLoad(const Shape& s, Kind k, std::size_t key_size) {
  if (s.fixed()) return {1, 0};
  return {1, kVarSlotBytes[k] + RecordBytes(key_size)};
}

bool HasRoomForAny(const Shape& s, Kind k, const void* n) {
  const std::size_t largest = s.fixed() ? static_cast<std::size_t>(s.width) : kMaxKeyBytes;
  return Fits(s, k, LoadOf(s, k, n) + EntryLoad(s, k, largest));
}

void InitNode(const Shape& s, Kind k, void* n, std::uint64_t birth) {
  Header* h = Hdr(n);
  h->birth = birth;
  h->count = 0;
  h->heap = static_cast<std::uint16_t>(s.node_bytes[k]);
  h->garbage = 0;
  h->reserved = 0;
}

void InsertAt(const Shape& s, Kind k, void* n, std::uint32_t i, const Entry& e) {
  if (s.fixed()) {
    if (i < Count(n)) FixedShift(s, k, n, i, /*open=*/true);  // an append moves nothing
    FixedWrite(s, k, n, i, e);
  } else {
    VarInsertAt(s, k, n, i, e);
  }
  ++Hdr(n)->count;
}

void EraseAt(const Shape& s, Kind k, void* n, std::uint32_t i) {
  if (s.fixed()) {
    FixedShift(s, k, n, i, /*open=*/false);
  } else {
    VarEraseAt(k, n, i);
  }
  --Hdr(n)->count;
}

void SetSeparator(const Shape& s, void* n, std::uint32_t i, std::string_view key, std::uint64_t id) {
  unsigned char* b = Base(n);
  if (!key.empty())
    std::memcpy(b + s.keys_off[kInner] + i * static_cast<std::uint32_t>(s.width), key.data(), key.size());
  base::Store48(b + s.ids_off[kInner] + i * 6, id);
}

void Assemble(const Shape& s, Kind k, void* out, std::span<const Range> ranges, std::uint64_t birth) {
  InitNode(s, k, out, birth);
  for (const Range& r : ranges) {
    if (s.fixed()) {
      FixedAppendRange(s, k, out, r);
    } else {
      VarAppendRange(k, out, r);
    }
    Hdr(out)->count = static_cast<std::uint16_t>(Count(out) + r.to - r.from);
  }
}

void* Scratch(int slot) {
  alignas(16) thread_local unsigned char buffers[3][kMaxNodeBytes];
  return buffers[slot];
}

}  // namespace quiver::index::tree
