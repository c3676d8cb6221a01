#include "index/id_set.h"

#include <algorithm>
#include <cstring>

namespace quiver::index {

namespace {

using Table = storage::RadixTable<IdChunk>;
using storage::MutationContext;

constexpr std::size_t kWords = IdSet::kBitmapBytes / 8;
constexpr std::uint64_t kOffsetMask = IdSet::kChunkIds - 1;

std::uint16_t* Array(void* d) { return static_cast<std::uint16_t*>(d); }
const std::uint16_t* Array(const void* d) { return static_cast<const std::uint16_t*>(d); }
std::uint64_t* Words(void* d) { return static_cast<std::uint64_t*>(d); }
const std::uint64_t* Words(const void* d) { return static_cast<const std::uint64_t*>(d); }

bool HasBit(const void* bitmap, std::uint32_t off) { return (Words(bitmap)[off >> 6] >> (off & 63)) & 1; }

// Room for `entries` ids in an array block: the allocator's bin for them,
// never more than kArrayMax entries.
std::size_t ArrayBytes(std::size_t entries) {
  return std::min(base::GoodAllocationSize(std::max<std::size_t>(entries, 1) * 2),
                  std::size_t{IdSet::kArrayMax} * 2);
}

// Puts `d` (just allocated, private, with `capacity`) in place of the
// chunk's block, retiring the old one. If the retire throws, `d` is freed
// and nothing changes.
void Replace(IdChunk& s, void* d, std::uint32_t capacity, MutationContext& ctx) {
  try {
    ctx.Retire(s.data);
  } catch (...) {
    ctx.FreeUnlinked(d);
    throw;
  }
  s.data = d;
  s.birth = ctx.epoch;
  s.capacity = capacity;
}

// The bitmap of `s`, copied first unless born in this epoch.
std::uint64_t* OwnBitmap(IdChunk& s, MutationContext& ctx) {
  if (s.birth != ctx.epoch) {
    void* d = ctx.Allocate(IdSet::kBitmapBytes);
    std::memcpy(d, s.data, IdSet::kBitmapBytes);
    Replace(s, d, 0, ctx);
  }
  return Words(s.data);
}

// The ids of bitmap `words` as sorted offsets into `out`, except `skip`
// (pass a value above every offset to keep them all); returns how many.
std::uint32_t BitmapToArray(const std::uint64_t* words, std::uint32_t skip, std::uint16_t* out) {
  std::uint32_t n = 0;
  for (std::size_t w = 0; w < kWords; ++w) {
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      const auto off = static_cast<std::uint32_t>(w * 64 + static_cast<unsigned>(__builtin_ctzll(bits)));
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

template <typename Fn>
void ForEachBlock(const storage::TableRoot& dir, Fn&& fn) {
  ForEachBlockIn(dir.node, dir.height, fn);
}

}  // namespace

bool IdSet::Contains(const IdSetRoot& root, std::uint64_t id) {
  const IdChunk* s = Table::Find(root.dir, id >> kChunkBits);
  if (s == nullptr || s->data == nullptr) return false;
  const auto off = static_cast<std::uint32_t>(id & kOffsetMask);
  if (s->capacity == 0) return HasBit(s->data, off);
  const std::uint16_t* a = Array(s->data);
  return std::binary_search(a, a + s->count, static_cast<std::uint16_t>(off));
}

bool IdSet::Insert(IdSetRoot& root, std::uint64_t id, MutationContext& ctx) {
  if (Contains(root, id)) return false;
  const auto off = static_cast<std::uint16_t>(id & kOffsetMask);
  IdChunk& s = *Table::MutableSparse(root.dir, id >> kChunkBits, ctx);
  if (s.data == nullptr) {
    const std::size_t bytes = ArrayBytes(1);
    void* d = ctx.AllocateGood(bytes);
    Array(d)[0] = off;
    s = IdChunk{d, ctx.epoch, 1, static_cast<std::uint32_t>(bytes / 2)};
  } else if (s.capacity == 0) {
    OwnBitmap(s, ctx)[off >> 6] |= std::uint64_t{1} << (off & 63);
    ++s.count;
  } else if (s.count == kArrayMax) {
    // The array would outgrow a bitmap: it becomes one.
    void* d = ctx.Allocate(kBitmapBytes);
    std::memset(d, 0, kBitmapBytes);
    std::uint64_t* w = Words(d);
    const std::uint16_t* a = Array(s.data);
    for (std::uint32_t i = 0; i < s.count; ++i) w[a[i] >> 6] |= std::uint64_t{1} << (a[i] & 63);
    w[off >> 6] |= std::uint64_t{1} << (off & 63);
    Replace(s, d, 0, ctx);
    ++s.count;
  } else {
    std::uint16_t* a = Array(s.data);
    const auto pos = static_cast<std::uint32_t>(std::lower_bound(a, a + s.count, off) - a);
    if (s.birth == ctx.epoch && s.count < s.capacity) {
      std::memmove(a + pos + 1, a + pos, (s.count - pos) * 2);
      a[pos] = off;
    } else {
      // A published array is copied to the size it needs; the group's own,
      // full, doubles (more adds to it are likely in this group).
      std::size_t want = s.count + 1;
      if (s.birth == ctx.epoch) want = std::max<std::size_t>(want, std::size_t{s.capacity} * 2);
      const std::size_t bytes = ArrayBytes(want);
      void* d = ctx.AllocateGood(bytes);
      std::uint16_t* b = Array(d);
      std::memcpy(b, a, pos * 2);
      b[pos] = off;
      std::memcpy(b + pos + 1, a + pos, (s.count - pos) * 2);
      Replace(s, d, static_cast<std::uint32_t>(bytes / 2), ctx);
    }
    ++s.count;
  }
  ++root.count;
  return true;
}

bool IdSet::Erase(IdSetRoot& root, std::uint64_t id, MutationContext& ctx) {
  if (!Contains(root, id)) return false;
  const std::uint64_t chunk = id >> kChunkBits;
  const auto off = static_cast<std::uint16_t>(id & kOffsetMask);
  IdChunk& s = *Table::MutableSparse(root.dir, chunk, ctx);
  if (s.count == 1) {
    ctx.Retire(s.data);
    s = IdChunk{};
    --root.count;
    Table::ReclaimIfEmpty(root.dir, chunk, ctx);
    return true;
  }
  if (s.capacity == 0) {
    if (s.count - 1 < kArrayBackAt) {
      // Few enough ids left for an array again.
      const std::size_t bytes = ArrayBytes(s.count - 1);
      void* d = ctx.AllocateGood(bytes);
      BitmapToArray(Words(s.data), off, Array(d));
      Replace(s, d, static_cast<std::uint32_t>(bytes / 2), ctx);
    } else {
      OwnBitmap(s, ctx)[off >> 6] &= ~(std::uint64_t{1} << (off & 63));
    }
  } else {
    std::uint16_t* a = Array(s.data);
    const auto pos = static_cast<std::uint32_t>(std::lower_bound(a, a + s.count, off) - a);
    if (s.birth == ctx.epoch) {
      std::memmove(a + pos, a + pos + 1, (s.count - pos - 1) * 2);
    } else {
      const std::size_t bytes = ArrayBytes(s.count - 1);
      void* d = ctx.AllocateGood(bytes);
      std::uint16_t* b = Array(d);
      std::memcpy(b, a, pos * 2);
      std::memcpy(b + pos, a + pos + 1, (s.count - pos - 1) * 2);
      Replace(s, d, static_cast<std::uint32_t>(bytes / 2), ctx);
    }
  }
  --s.count;
  --root.count;
  return true;
}

std::size_t IdSet::Fill(const IdSetRoot& root, std::uint64_t from, std::uint64_t* out, std::size_t max) {
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
      const std::uint16_t* a = Array(s->data);
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
  ForEachBlock(root.dir, [account](void* p) { account->Free(p); });
  root = IdSetRoot{};
}

std::uint64_t IdSet::MemoryBytes(const IdSetRoot& root) {
  std::uint64_t bytes = 0;
  ForEachBlock(root.dir, [&bytes](void* p) { bytes += base::UsableSize(p); });
  return bytes;
}

IdSet::Builder::~Builder() {
  ForEachBlock(root_.dir, [this](void* p) { ctx_->FreeUnlinked(p); });
}

void IdSet::Builder::Close() {
  IdChunk& s = *Table::MutableSparse(root_.dir, chunk_, *ctx_);
  if (open_count_ > kArrayMax) {
    void* d = ctx_->Allocate(kBitmapBytes);
    std::memcpy(d, words_, kBitmapBytes);
    s = IdChunk{d, ctx_->epoch, open_count_, 0};
  } else {
    const std::size_t bytes = ArrayBytes(open_count_);
    void* d = ctx_->AllocateGood(bytes);
    BitmapToArray(words_, ~std::uint32_t{0}, Array(d));
    s = IdChunk{d, ctx_->epoch, open_count_, static_cast<std::uint32_t>(bytes / 2)};
  }
  root_.count += open_count_;
  std::memset(words_, 0, sizeof(words_));
  open_count_ = 0;
}

IdSetRoot IdSet::Builder::Finish() {
  if (open_count_ > 0) Close();
  IdSetRoot out = root_;
  root_ = IdSetRoot{};
  return out;
}

}  // namespace quiver::index
