// IndexTree's reads: Cursor, CountRange, Contains. They only load: any
// number of threads may run them against published roots.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

#include "base/prefetch.h"
#include "index/index_tree.h"
#include "index/tree_node.h"

namespace quiver::index {
namespace {

using tree::kInner;
using tree::kLeaf;
using tree::Shape;

constexpr std::uint64_t kAfterAllIds = std::numeric_limits<std::uint64_t>::max();

// The number of entries < (key, id).
std::uint64_t Rank(const Shape& s, const IndexRoot& root, std::string_view key, std::uint64_t id) {
  if (root.node == nullptr) return 0;
  std::uint64_t rank = 0;
  const void* n = root.node;
  for (std::uint32_t l = 0; l < root.height; ++l) {
    const std::uint32_t i = tree::ChildFor(s, n, key, id);
    for (std::uint32_t j = 0; j < i; ++j) rank += tree::ChildCount(s, n, j);
    n = tree::Child(s, n, i);
  }
  return rank + tree::LowerBound(s, n, key, id);
}

}  // namespace

std::uint64_t IndexTree::CountRange(const IndexRoot& root, const Bound& lo, const Bound& hi) {
  const Shape s = tree::ShapeOf(root);
  const std::uint64_t begin = lo.unbounded ? 0 : Rank(s, root, lo.key, lo.inclusive ? 0 : kAfterAllIds);
  const std::uint64_t end =
      hi.unbounded ? root.count : Rank(s, root, hi.key, hi.inclusive ? kAfterAllIds : 0);
  return end > begin ? end - begin : 0;
}

bool IndexTree::Contains(const IndexRoot& root, std::string_view key, std::uint64_t* first_id) {
  if (root.node == nullptr) return false;
  // The common case without a Cursor: the first entry >= (key, 0) is in
  // the leaf the descent reaches; else it is the next leaf's first.
  const Shape s = tree::ShapeOf(root);
  const void* n = root.node;
  for (std::uint32_t l = 0; l < root.height; ++l) n = tree::Child(s, n, tree::ChildFor(s, n, key, 0));
  const std::uint32_t pos = tree::LowerBound(s, n, key, 0);
  std::uint64_t id;
  if (pos < tree::Count(n)) {
    if (!tree::KeyEquals(s, kLeaf, n, pos, key)) return false;
    id = tree::Id(s, kLeaf, n, pos);
  } else {
    Cursor c(root);
    c.SeekEntry(key, 0);
    if (!c.Valid() || c.key() != key) return false;
    id = c.id();
  }
  if (first_id != nullptr) *first_id = id;
  return true;
}

bool IndexTree::ContainsEntry(const IndexRoot& root, std::string_view key, std::uint64_t id) {
  Cursor c(root);
  c.SeekEntry(key, id);
  return c.Valid() && c.id() == id && c.key() == key;
}

// ---- Cursor

IndexTree::Cursor::Cursor(const IndexRoot& root) : root_(root), shape_(tree::ShapeOf(root)) {}

void IndexTree::Cursor::SeekEntry(std::string_view key, std::uint64_t id) {
  valid_ = root_.node != nullptr;
  if (!valid_) return;
  const void* n = root_.node;
  for (std::uint32_t l = 0; l < root_.height; ++l) {
    nodes_[l] = n;
    index_[l] = tree::ChildFor(shape_, n, key, id);
    n = tree::Child(shape_, n, index_[l]);
  }
  EnterLeaf(n, tree::LowerBound(shape_, n, key, id));
  if (pos_ == count_) StepLeaf(/*forward=*/true);
}

void IndexTree::Cursor::Seek(const Bound& lo) {
  if (lo.unbounded) {
    valid_ = root_.node != nullptr;
    if (valid_) Descend(0, /*leftmost=*/true);
    return;
  }
  SeekEntry(lo.key, lo.inclusive ? 0 : kAfterAllIds);
}

void IndexTree::Cursor::SeekLast(const Bound& hi) {
  if (hi.unbounded) {
    valid_ = root_.node != nullptr;
    if (valid_) Descend(0, /*leftmost=*/false);
    return;
  }
  // The entry before the first one above the bound.
  SeekEntry(hi.key, hi.inclusive ? kAfterAllIds : 0);
  if (Valid()) {
    Prev();
  } else {
    SeekLast(Bound{});
  }
}

std::string_view IndexTree::Cursor::VariableKey() const {
  return tree::Key(shape_, kLeaf, nodes_[root_.height], pos_);
}

std::uint64_t IndexTree::Cursor::VariableId() const {
  return tree::Id(shape_, kLeaf, nodes_[root_.height], pos_);
}

void IndexTree::Cursor::StepLeaf(bool forward) {
  for (int l = static_cast<int>(root_.height) - 1; l >= 0; --l) {
    if (forward ? index_[l] + 1 < tree::Count(nodes_[l]) : index_[l] > 0) {
      index_[l] = forward ? index_[l] + 1 : index_[l] - 1;
      Descend(l + 1, /*leftmost=*/forward);
      return;
    }
  }
  valid_ = false;
}

void IndexTree::Cursor::Descend(int from_level, bool leftmost) {
  const auto h = static_cast<int>(root_.height);
  const void* n =
      from_level == 0 ? root_.node : tree::Child(shape_, nodes_[from_level - 1], index_[from_level - 1]);
  for (int l = from_level; l < h; ++l) {
    nodes_[l] = n;
    index_[l] = leftmost ? 0 : tree::Count(n) - 1;
    n = tree::Child(shape_, n, index_[l]);
  }
  EnterLeaf(n, leftmost ? 0 : tree::Count(n) - 1);
}

std::size_t IndexTree::Cursor::NextIds(std::uint64_t* out, std::size_t max) {
  std::size_t n = 0;
  while (valid_ && n < max) {
    const auto take = static_cast<std::uint32_t>(std::min<std::size_t>(max - n, count_ - pos_));
    CopyIds(pos_, pos_ + take, out + n);
    n += take;
    pos_ += take;
    if (pos_ == count_) {
      StepLeaf(/*forward=*/true);
      // The leaf after the new one starts loading while this one is read:
      // its header and the start of its ids (the rest the hardware
      // streams in), when the parent is on the path.
      const int parent = static_cast<int>(root_.height) - 1;
      if (valid_ && parent >= 0 && leaf_keys_ != nullptr &&
          index_[parent] + 1 < tree::Count(nodes_[parent])) {
        const auto* next = static_cast<const char*>(tree::Child(shape_, nodes_[parent], index_[parent] + 1));
        base::Prefetch(next);
        base::Prefetch(next + shape_.ids_off[kLeaf]);
        base::Prefetch(next + shape_.ids_off[kLeaf] + 64);
      }
    }
  }
  return n;
}

std::size_t IndexTree::Cursor::PrevIds(std::uint64_t* out, std::size_t max) {
  std::size_t n = 0;
  while (valid_ && n < max) {
    const auto take = static_cast<std::uint32_t>(std::min<std::size_t>(max - n, pos_ + 1));
    CopyIdsReversed(pos_ + 1 - take, pos_ + 1, out + n);
    n += take;
    if (take == pos_ + 1) {
      StepLeaf(/*forward=*/false);
    } else {
      pos_ -= take;
    }
  }
  return n;
}

namespace {

constexpr std::uint64_t kIdMask = (std::uint64_t{1} << 48) - 1;

// Entry i's 6 id bytes read as 8: entry i + 1's two first bytes come
// along, so only while entry i + 1 exists does the load stay in the array.
inline std::uint64_t WideId(const unsigned char* ids, std::uint32_t i) {
  std::uint64_t v;
  std::memcpy(&v, ids + static_cast<std::size_t>(i) * 6, 8);
  return v & kIdMask;
}

}  // namespace

void IndexTree::Cursor::CopyIds(std::uint32_t from, std::uint32_t to, std::uint64_t* out) const {
  if (leaf_keys_ == nullptr) {
    const void* leaf = nodes_[root_.height];
    for (std::uint32_t i = from; i < to; ++i) *out++ = tree::Id(shape_, kLeaf, leaf, i);
    return;
  }
  const std::uint32_t wide_end = std::min(to, count_ - 1);
  std::uint32_t i = from;
  for (; i < wide_end; ++i) *out++ = WideId(leaf_ids_, i);
  for (; i < to; ++i) *out++ = base::Load48(leaf_ids_ + static_cast<std::size_t>(i) * 6);
}

void IndexTree::Cursor::CopyIdsReversed(std::uint32_t from, std::uint32_t to, std::uint64_t* out) const {
  if (leaf_keys_ == nullptr) {
    const void* leaf = nodes_[root_.height];
    for (std::uint32_t i = to; i > from; --i) *out++ = tree::Id(shape_, kLeaf, leaf, i - 1);
    return;
  }
  std::uint32_t i = to;
  for (; i > from && i == count_; --i) *out++ = base::Load48(leaf_ids_ + static_cast<std::size_t>(i - 1) * 6);
  for (; i > from; --i) *out++ = WideId(leaf_ids_, i - 1);
}

void IndexTree::Cursor::EnterLeaf(const void* leaf, std::uint32_t pos) {
  nodes_[root_.height] = leaf;
  pos_ = pos;
  count_ = tree::Count(leaf);
  if (shape_.fixed()) {
    leaf_keys_ = tree::Base(leaf) + shape_.keys_off[kLeaf];
    leaf_ids_ = tree::Base(leaf) + shape_.ids_off[kLeaf];
  }
}

}  // namespace quiver::index
