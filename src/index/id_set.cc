#include "index/id_set.h"

#include <algorithm>
#include <cstring>

namespace quiver::index {

namespace {

using Table = storage::RadixTable<IdChunk>;
using storage::MutationContext;

constexpr std::size_t kWords = IdSet::kBitmapBytes / 8;
constexpr std::uint64_t kOffsetMask = IdSet::kChunkIds - 1;

const std::uint64_t* Words(const void* d) { return static_cast<const std::uint64_t*>(d); }
std::uint64_t* Words(void* d) { return static_cast<std::uint64_t*>(d); }
bool HasBit(const void* bitmap, std::uint32_t off) { return (Words(bitmap)[off >> 6] >> (off & 63)) & 1; }
void SetBit(std::uint64_t* words, std::uint32_t off) { words[off >> 6] |= std::uint64_t{1} << (off & 63); }

// One sorted array block as its owner keeps it: a chunk's u16 offsets
// (IdChunk) or a small set's u64 ids (IdSetRoot). `max`: the most entries
// the form holds.
template <typename T>
struct SortedArray {
  void** data;
  std::uint64_t* birth;
  std::uint32_t* capacity;
  std::uint64_t count;
  std::uint32_t max;

  T* begin() const { return static_cast<T*>(*data); }
  T* end() const { return begin() + count; }
};

// Room for `entries` in an array block of T: the allocator's bin for them,
// never more than `max` entries.
template <typename T>
std::size_t ArrayBytes(std::size_t entries, std::uint32_t max) {
  return std::min(base::GoodAllocationSize(std::max<std::size_t>(entries, 1) * sizeof(T)),
                  std::size_t{max} * sizeof(T));
}

// Puts `d` (just allocated, private, room for `capacity`) in place of the
// owner's block, retiring the old one. If the retire throws, `d` is freed
// and nothing changes.
void Replace(void** data, std::uint64_t* birth, std::uint32_t* capacity, void* d, std::uint32_t new_capacity,
             MutationContext& ctx) {
  try {
    ctx.Retire(*data);
  } catch (...) {
    ctx.FreeUnlinked(d);
    throw;
  }
  *data = d;
  *birth = ctx.epoch;
  *capacity = new_capacity;
}

// Inserts `v` (not present) into a sorted array with room for one more
// under `a.max`: in place in a block of this epoch with room; else into a
// copy, sized to what it needs when the block is published, or doubled when
// it is the group's own (more adds to it are likely in this group).
template <typename T>
void ArrayInsert(const SortedArray<T>& a, T v, MutationContext& ctx) {
  T* p = a.begin();
  const std::size_t pos = static_cast<std::size_t>(std::lower_bound(p, a.end(), v) - p);
  if (*a.data != nullptr && *a.birth == ctx.epoch && a.count < *a.capacity) {
    std::memmove(p + pos + 1, p + pos, (a.count - pos) * sizeof(T));
    p[pos] = v;
    return;
  }
  std::size_t want = a.count + 1;
  if (*a.data != nullptr && *a.birth == ctx.epoch)
    want = std::max<std::size_t>(want, std::size_t{*a.capacity} * 2);
  const std::size_t bytes = ArrayBytes<T>(want, a.max);
  T* q = static_cast<T*>(ctx.AllocateGood(bytes));
  if (pos > 0) std::memcpy(q, p, pos * sizeof(T));
  q[pos] = v;
  if (a.count > pos) std::memcpy(q + pos + 1, p + pos, (a.count - pos) * sizeof(T));
  Replace(a.data, a.birth, a.capacity, q, static_cast<std::uint32_t>(bytes / sizeof(T)), ctx);
}

// Removes `v` (present, and not the only entry) from a sorted array: in place in
// a block of this epoch, else into a right-sized copy.
template <typename T>
void ArrayErase(const SortedArray<T>& a, T v, MutationContext& ctx) {
  T* p = a.begin();
  const std::size_t pos = static_cast<std::size_t>(std::lower_bound(p, a.end(), v) - p);
  if (*a.birth == ctx.epoch) {
    std::memmove(p + pos, p + pos + 1, (a.count - pos - 1) * sizeof(T));
    return;
  }
  const std::size_t bytes = ArrayBytes<T>(a.count - 1, a.max);
  T* q = static_cast<T*>(ctx.AllocateGood(bytes));
  std::memcpy(q, p, pos * sizeof(T));
  std::memcpy(q + pos, p + pos + 1, (a.count - pos - 1) * sizeof(T));
  Replace(a.data, a.birth, a.capacity, q, static_cast<std::uint32_t>(bytes / sizeof(T)), ctx);
}

SortedArray<std::uint16_t> ChunkArray(IdChunk& s) {
  return {&s.data, &s.birth, &s.capacity, s.count, IdSet::kArrayMax};
}
SortedArray<std::uint64_t> SmallArray(IdSetRoot& r) {
  return {&r.small, &r.small_birth, &r.small_capacity, r.count, IdSet::kSmallMax};
}
const std::uint64_t* SmallIds(const IdSetRoot& r) { return static_cast<const std::uint64_t*>(r.small); }

// The bitmap of `s`, copied first unless born in this epoch.
std::uint64_t* OwnBitmap(IdChunk& s, MutationContext& ctx) {
  if (s.birth != ctx.epoch) {
    void* d = ctx.Allocate(IdSet::kBitmapBytes);
    std::memcpy(d, s.data, IdSet::kBitmapBytes);
    Replace(&s.data, &s.birth, &s.capacity, d, 0, ctx);
  }
  return Words(s.data);
}

// The ids of words [from, to) of a bitmap as sorted offsets into `out`,
// except `skip` (pass a value above every offset to keep them all);
// returns how many.
std::uint32_t BitmapToArray(const std::uint64_t* words, std::uint32_t from, std::uint32_t to,
                            std::uint32_t skip, std::uint16_t* out) {
  std::uint32_t n = 0;
  for (std::uint32_t w = from; w < to; ++w) {
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      const std::uint32_t off = w * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits));
      if (off != skip) out[n++] = static_cast<std::uint16_t>(off);
    }
  }
  return n;
}

// The first chunk at or after `c` that holds ids, in the subtree `node` of
// height `h` whose first chunk is `first`; its number goes to *at.
const IdChunk* NextIn(const void* node, std::uint32_t h, std::uint64_t first, std::uint64_t c,
                      std::uint64_t* at) {
  if (h == 0) {
    const auto* leaf = static_cast<const Table::Leaf*>(node);
    for (std::uint64_t i = c > first ? c - first : 0; i < Table::kLeafSize; ++i) {
      if (leaf->slots[i].data != nullptr) {
        *at = first + i;
        return &leaf->slots[i];
      }
    }
    return nullptr;
  }
  const unsigned shift = Table::kLeafBits + Table::kInnerBits * (h - 1);
  const auto* inner = static_cast<const Table::Inner*>(node);
  for (std::uint64_t i = c > first ? (c - first) >> shift : 0; i < Table::kInnerSize; ++i) {
    if (inner->children[i] == nullptr) continue;
    if (const IdChunk* s = NextIn(inner->children[i], h - 1, first + (i << shift), c, at)) return s;
  }
  return nullptr;
}

const IdChunk* NextChunk(const storage::TableRoot& dir, std::uint64_t c, std::uint64_t* at) {
  if (dir.node == nullptr || (c >> (Table::kLeafBits + Table::kInnerBits * dir.height)) != 0) return nullptr;
  return NextIn(dir.node, dir.height, 0, c, at);
}

// Calls fn(block) for every chunk block and directory node of the subtree.
template <typename Fn>
void ForEachBlockIn(void* node, std::uint32_t h, Fn& fn) {
  if (node == nullptr) return;
  if (h == 0) {
    for (IdChunk& s : static_cast<Table::Leaf*>(node)->slots)
      if (s.data != nullptr) fn(s.data);
  } else {
    for (void* child : static_cast<Table::Inner*>(node)->children) ForEachBlockIn(child, h - 1, fn);
  }
  fn(node);
}

// Every block of `root`, either form.
template <typename Fn>
void ForEachBlock(const IdSetRoot& root, Fn&& fn) {
  if (root.small != nullptr) fn(root.small);
  ForEachBlockIn(root.dir.node, root.dir.height, fn);
}

// Adds `id` (not present) to a chunked set, or to an empty one as chunked.
void InsertChunked(IdSetRoot& root, std::uint64_t id, MutationContext& ctx) {
  const auto off = static_cast<std::uint16_t>(id & kOffsetMask);
  IdChunk& s = *Table::MutableSparse(root.dir, id >> IdSet::kChunkBits, ctx);
  if (s.capacity == 0 && s.data != nullptr) {
    SetBit(OwnBitmap(s, ctx), off);
  } else if (s.count == IdSet::kArrayMax) {
    // The array would outgrow a bitmap: it becomes one.
    void* d = ctx.Allocate(IdSet::kBitmapBytes);
    std::memset(d, 0, IdSet::kBitmapBytes);
    const auto* a = static_cast<const std::uint16_t*>(s.data);
    for (std::uint32_t i = 0; i < s.count; ++i) SetBit(Words(d), a[i]);
    SetBit(Words(d), off);
    Replace(&s.data, &s.birth, &s.capacity, d, 0, ctx);
  } else {
    ArrayInsert(ChunkArray(s), off, ctx);
  }
  ++s.count;
  ++root.count;
}

// A small set of kSmallMax ids becomes chunked: a new directory of private
// chunks, the small block retired. If this throws, the set is as it was.
void SmallToChunked(IdSetRoot& root, MutationContext& ctx) {
  IdSetRoot big;
  try {
    for (std::uint64_t i = 0; i < root.count; ++i) InsertChunked(big, SmallIds(root)[i], ctx);
    ctx.Retire(root.small);
  } catch (...) {
    ForEachBlock(big, [&ctx](void* p) { ctx.FreeUnlinked(p); });
    throw;
  }
  root.dir = big.dir;
  root.small = nullptr;
  root.small_birth = 0;
  root.small_capacity = 0;
}

// Removes offset `off` (present) from chunk `s`, which holds at least one
// more: an array loses the entry, a bitmap its bit, or becomes an array
// below kArrayBackAt.
void EraseFromChunk(IdChunk& s, std::uint16_t off, MutationContext& ctx) {
  if (s.capacity != 0) {
    ArrayErase(ChunkArray(s), off, ctx);
  } else if (s.count - 1 < IdSet::kArrayBackAt) {
    // Few enough ids left for an array again.
    const std::size_t bytes = ArrayBytes<std::uint16_t>(s.count - 1, IdSet::kArrayMax);
    void* d = ctx.AllocateGood(bytes);
    BitmapToArray(Words(s.data), 0, kWords, off, static_cast<std::uint16_t*>(d));
    Replace(&s.data, &s.birth, &s.capacity, d, static_cast<std::uint32_t>(bytes / 2), ctx);
  } else {
    OwnBitmap(s, ctx)[off >> 6] &= ~(std::uint64_t{1} << (off & 63));
  }
  --s.count;
}

// A chunked set of at most kSmallBackAt ids becomes small: its ids copied
// into a new small block, every chunk and directory node retired. If this
// throws, the set is as it was.
void ChunkedToSmall(IdSetRoot& root, MutationContext& ctx) {
  std::vector<void*> blocks;
  auto collect = [&blocks](void* p) { blocks.push_back(p); };
  ForEachBlockIn(root.dir.node, root.dir.height, collect);
  // No ids left: no small block either (an empty set holds no block).
  const std::size_t bytes = root.count == 0 ? 0 : ArrayBytes<std::uint64_t>(root.count, IdSet::kSmallMax);
  auto* d = bytes == 0 ? nullptr : static_cast<std::uint64_t*>(ctx.AllocateGood(bytes));
  IdSet::Fill(root, 0, d, root.count);
  try {
    ctx.retired->Reserve(blocks.size());  // the Retires below cannot throw
  } catch (...) {
    ctx.FreeUnlinked(d);
    throw;
  }
  for (void* p : blocks) ctx.Retire(p);
  root.dir = storage::TableRoot{};
  root.small = d;
  root.small_birth = d == nullptr ? 0 : ctx.epoch;
  root.small_capacity = static_cast<std::uint32_t>(bytes / sizeof(std::uint64_t));
}

}  // namespace

bool IdSet::Contains(const IdSetRoot& root, std::uint64_t id) {
  if (root.small != nullptr) return std::binary_search(SmallIds(root), SmallIds(root) + root.count, id);
  const IdChunk* s = Table::Find(root.dir, id >> kChunkBits);
  if (s == nullptr || s->data == nullptr) return false;
  const auto off = static_cast<std::uint32_t>(id & kOffsetMask);
  if (s->capacity == 0) return HasBit(s->data, off);
  const auto* a = static_cast<const std::uint16_t*>(s->data);
  return std::binary_search(a, a + s->count, static_cast<std::uint16_t>(off));
}

bool IdSet::Insert(IdSetRoot& root, std::uint64_t id, MutationContext& ctx) {
  if (Contains(root, id)) return false;
  if (root.dir.node == nullptr) {
    if (root.count < kSmallMax) {
      ArrayInsert(SmallArray(root), id, ctx);
      ++root.count;
      return true;
    }
    SmallToChunked(root, ctx);
  }
  InsertChunked(root, id, ctx);
  return true;
}

bool IdSet::Erase(IdSetRoot& root, std::uint64_t id, MutationContext& ctx) {
  if (!Contains(root, id)) return false;
  if (root.small != nullptr) {
    if (root.count == 1) {
      ctx.Retire(root.small);
      root = IdSetRoot{};
      return true;
    }
    ArrayErase(SmallArray(root), id, ctx);
    --root.count;
    return true;
  }
  const std::uint64_t chunk = id >> kChunkBits;
  const auto off = static_cast<std::uint16_t>(id & kOffsetMask);
  IdChunk& s = *Table::MutableSparse(root.dir, chunk, ctx);
  if (s.count == 1) {
    ctx.Retire(s.data);
    s = IdChunk{};
    --root.count;
    Table::ReclaimIfEmpty(root.dir, chunk, ctx);  // may unlink the leaf `s` was in
  } else {
    EraseFromChunk(s, off, ctx);
    --root.count;
  }
  if (root.count <= kSmallBackAt && root.dir.node != nullptr) ChunkedToSmall(root, ctx);
  return true;
}

std::size_t IdSet::Fill(const IdSetRoot& root, std::uint64_t from, std::uint64_t* out, std::size_t max) {
  if (root.small != nullptr) {
    const std::uint64_t* end = SmallIds(root) + root.count;
    const std::uint64_t* p = std::lower_bound(SmallIds(root), end, from);
    const std::size_t n = std::min(max, static_cast<std::size_t>(end - p));
    std::copy(p, p + n, out);
    return n;
  }
  std::size_t n = 0;
  std::uint64_t c = from >> kChunkBits;
  auto off = static_cast<std::uint32_t>(from & kOffsetMask);
  while (n < max) {
    std::uint64_t at = 0;
    const IdChunk* s = NextChunk(root.dir, c, &at);
    if (s == nullptr) break;
    if (at != c) off = 0;
    const std::uint64_t base = at << kChunkBits;
    if (s->capacity == 0) {
      const std::uint64_t* w = Words(s->data);
      for (std::uint32_t wi = off >> 6; wi < kWords && n < max; ++wi) {
        std::uint64_t bits = w[wi];
        if (wi == off >> 6) bits &= ~std::uint64_t{0} << (off & 63);
        for (; bits != 0 && n < max; bits &= bits - 1)
          out[n++] = base + wi * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
      }
    } else {
      const auto* a = static_cast<const std::uint16_t*>(s->data);
      for (auto i = static_cast<std::uint32_t>(std::lower_bound(a, a + s->count, off) - a);
           i < s->count && n < max; ++i)
        out[n++] = base + a[i];
    }
    c = at + 1;
    off = 0;
  }
  return n;
}

void IdSet::Destroy(IdSetRoot& root, base::MemoryAccount* account) {
  ForEachBlock(root, [account](void* p) { account->Free(p); });
  root = IdSetRoot{};
}

std::uint64_t IdSet::MemoryBytes(const IdSetRoot& root) {
  std::uint64_t bytes = 0;
  ForEachBlock(root, [&bytes](void* p) { bytes += base::UsableSize(p); });
  return bytes;
}

IdSet::Builder::~Builder() {
  ForEachBlock(root_, [this](void* p) { ctx_->FreeUnlinked(p); });
}

void IdSet::Builder::StartChunks() {
  words_ = std::make_unique<std::uint64_t[]>(kWords);  // zeroed
  for (std::uint64_t id : pending_) AddToChunk(id);
  pending_.clear();
  pending_.shrink_to_fit();
}

void IdSet::Builder::Close() {
  IdChunk& s = *Table::MutableSparse(root_.dir, chunk_, *ctx_);
  const std::uint32_t to = high_word_ + 1;
  if (open_count_ > kArrayMax) {
    void* d = ctx_->Allocate(kBitmapBytes);
    std::memcpy(d, words_.get(), kBitmapBytes);
    s = IdChunk{d, ctx_->epoch, open_count_, 0};
  } else {
    const std::size_t bytes = ArrayBytes<std::uint16_t>(open_count_, kArrayMax);
    void* d = ctx_->AllocateGood(bytes);
    BitmapToArray(words_.get(), low_word_, to, ~std::uint32_t{0}, static_cast<std::uint16_t*>(d));
    s = IdChunk{d, ctx_->epoch, open_count_, static_cast<std::uint32_t>(bytes / 2)};
  }
  root_.count += open_count_;
  // Only the words this chunk touched hold bits.
  std::memset(words_.get() + low_word_, 0, (to - low_word_) * sizeof(std::uint64_t));
  open_count_ = 0;
}

IdSetRoot IdSet::Builder::Finish() {
  if (words_ == nullptr) {
    if (!pending_.empty()) {
      const std::size_t bytes = ArrayBytes<std::uint64_t>(pending_.size(), kSmallMax);
      auto* d = static_cast<std::uint64_t*>(ctx_->AllocateGood(bytes));
      std::copy(pending_.begin(), pending_.end(), d);
      root_.small = d;
      root_.small_birth = ctx_->epoch;
      root_.small_capacity = static_cast<std::uint32_t>(bytes / sizeof(std::uint64_t));
      root_.count = pending_.size();
    }
  } else if (open_count_ > 0) {
    Close();
  }
  // The build's scratch goes now: BuildSets keeps every label's Builder
  // until the last is done.
  pending_ = std::vector<std::uint64_t>();
  words_.reset();
  IdSetRoot out = root_;
  root_ = IdSetRoot{};
  return out;
}

}  // namespace quiver::index
