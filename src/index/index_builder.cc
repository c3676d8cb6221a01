// IndexTree::Builder: a tree from sorted entries, bottom-up, every node
// full but the last of each level.
//
// The Builder keeps the rightmost, still open node of each level. An entry
// goes into the open leaf; when it is full the leaf is closed: hung under
// the open node one level up (closing that one first if it is full too)
// and replaced by a fresh leaf. Nodes are allocated before anything hangs
// them, so a throwing allocation leaves every built node reachable from the
// open nodes, which the destructor frees.
#include <algorithm>
#include <cassert>
#include <cstring>

#include "index/index_tree.h"
#include "index/tree_node.h"

namespace quiver::index {
namespace {

using tree::Entry;
using tree::Kind;
using tree::kInner;
using tree::kLeaf;
using tree::UpEntry;

Kind KindOf(int level) { return level == 0 ? kLeaf : kInner; }

void FreeNode(void* n, storage::MutationContext& ctx) {
  if (ctx.blocks != nullptr) ctx.blocks->Remove(n);
  ctx.account->Free(n);
}

void FreeSubtree(const tree::Shape& s, void* n, int level, storage::MutationContext& ctx) {
  if (level > 0) {
    for (std::uint32_t i = 0; i < tree::Count(n); ++i) FreeSubtree(s, tree::Child(s, n, i), level - 1, ctx);
  }
  FreeNode(n, ctx);
}

bool HasRoomFor(const tree::Shape& s, Kind k, const void* n, std::size_t key_size) {
  return tree::Fits(s, k, tree::LoadOf(s, k, n) + tree::EntryLoad(s, k, key_size));
}

}  // namespace

IndexTree::Builder::Builder(std::int32_t key_width, storage::MutationContext& ctx)
    : Builder(IndexRoot{.key_width = key_width}, ctx) {}

IndexTree::Builder::Builder(const IndexRoot& shape, storage::MutationContext& ctx) : ctx_(&ctx) {
  root_.key_width = shape.key_width;
  root_.max_fanout = shape.max_fanout;
  shape_ = tree::ShapeOf(root_);
}

IndexTree::Builder::~Builder() {
  for (int l = 0; l < levels_; ++l) {
    if (open_[l] != nullptr) FreeSubtree(shape_, open_[l], l, *ctx_);
  }
}

void* IndexTree::Builder::NewNode(int level) {
  void* n = ctx_->Allocate(shape_.node_bytes[KindOf(level)]);
  tree::InitNode(shape_, KindOf(level), n, ctx_->epoch);
  return n;
}

void IndexTree::Builder::Add(std::string_view key, std::uint64_t id) {
  if (levels_ == 0) {
    open_[0] = NewNode(0);
    levels_ = 1;
  }
  void* leaf = open_[0];
  [[maybe_unused]] const std::uint32_t count = tree::Count(leaf);
  assert(count == 0 || tree::CompareEntries(tree::Key(shape_, kLeaf, leaf, count - 1),
                                            tree::Id(shape_, kLeaf, leaf, count - 1), key, id) < 0);
  if (shape_.fixed()) {
    // Fixed-width keys (label and type sets, numeric keys): the entry goes
    // at the end of the leaf, so write it in place; InsertAt's general
    // shift and writer, out of line, were most of a label set's build.
    std::uint32_t at = tree::Count(leaf);
    if (at >= shape_.max_count[kLeaf]) {
      Close(0);
      leaf = open_[0];
      at = 0;
    }
    unsigned char* b = tree::Base(leaf);
    if (shape_.width > 0)
      std::memcpy(b + shape_.keys_off[kLeaf] + at * static_cast<std::uint32_t>(shape_.width), key.data(),
                  key.size());
    base::Store48(b + shape_.ids_off[kLeaf] + at * 6, id);
    tree::Hdr(leaf)->count = static_cast<std::uint16_t>(at + 1);
    ++root_.count;
    return;
  }
  if (!HasRoomFor(shape_, kLeaf, leaf, key.size())) {
    Close(0);
    leaf = open_[0];
  }
  tree::InsertAt(shape_, kLeaf, leaf, tree::Count(leaf), Entry{key, id});
  ++root_.count;
}

void IndexTree::Builder::AddLeaf(void* leaf) {
  assert(tree::Count(leaf) > 0);
  if (levels_ == 0) {
    open_[0] = leaf;
    levels_ = 1;
  } else {
    assert(tree::CompareEntries(tree::Key(shape_, kLeaf, open_[0], tree::Count(open_[0]) - 1),
                                tree::Id(shape_, kLeaf, open_[0], tree::Count(open_[0]) - 1),
                                tree::Key(shape_, kLeaf, leaf, 0), tree::Id(shape_, kLeaf, leaf, 0)) < 0);
    Close(0, leaf);
  }
  root_.count += tree::Count(leaf);
}

void IndexTree::Builder::Close(int level, void* fresh) {
  assert(level + 2 < kMaxLevels);
  void* full = open_[level];
  const std::size_t sep_size = tree::Key(shape_, KindOf(level), full, 0).size();
  if (level + 1 == levels_) {
    open_[level + 1] = NewNode(level + 1);
    ++levels_;
  } else if (!HasRoomFor(shape_, kInner, open_[level + 1], sep_size)) {
    Close(level + 1);
  }
  // Everything that can throw is behind: `fresh`, if given, is hung below.
  if (fresh == nullptr) fresh = NewNode(level);
  void* parent = open_[level + 1];
  tree::InsertAt(shape_, kInner, parent, tree::Count(parent), UpEntry(shape_, KindOf(level), full));
  open_[level] = fresh;
}

IndexRoot IndexTree::Builder::Finish() {
  for (int l = 0; l + 1 < levels_; ++l) {
    void* n = open_[l];
    if (tree::Count(n) == 0) {  // a fresh node whose first entry never came (an Add threw)
      FreeNode(n, *ctx_);
    } else {
      if (!HasRoomFor(shape_, kInner, open_[l + 1], tree::Key(shape_, KindOf(l), n, 0).size())) Close(l + 1);
      void* parent = open_[l + 1];
      tree::InsertAt(shape_, kInner, parent, tree::Count(parent), UpEntry(shape_, KindOf(l), n));
    }
    open_[l] = nullptr;
  }
  IndexRoot result = root_;
  if (levels_ > 0) {
    void* top = open_[levels_ - 1];
    int height = levels_ - 1;
    open_[levels_ - 1] = nullptr;
    while (height > 0 && tree::Count(top) == 1) {  // a root needs two children
      void* child = tree::Child(shape_, top, 0);
      FreeNode(top, *ctx_);
      top = child;
      --height;
    }
    if (tree::Count(top) == 0) {
      FreeNode(top, *ctx_);
      top = nullptr;
      height = 0;
    }
    result.node = top;
    result.height = static_cast<std::uint32_t>(height);
    result.birth = top != nullptr ? ctx_->epoch : 0;
  }
  levels_ = 0;
  root_.count = 0;
  return result;
}

// LeafRun.

IndexTree::LeafRun::LeafRun(const IndexRoot& shape, storage::MutationContext& ctx) : ctx_(&ctx) {
  IndexRoot root;
  root.key_width = shape.key_width;
  root.max_fanout = shape.max_fanout;
  shape_ = tree::ShapeOf(root);
}

IndexTree::LeafRun::~LeafRun() {
  for (void* leaf : leaves_)
    if (leaf != nullptr) FreeNode(leaf, *ctx_);
}

void* IndexTree::LeafRun::OpenLeaf(std::size_t key_size) {
  if (!leaves_.empty() && HasRoomFor(shape_, kLeaf, leaves_.back(), key_size)) return leaves_.back();
  // Room first: once the node is allocated, nothing throws before it is listed.
  if (leaves_.size() == leaves_.capacity()) leaves_.reserve(std::max<std::size_t>(16, 2 * leaves_.size()));
  void* leaf = ctx_->Allocate(shape_.node_bytes[kLeaf]);
  tree::InitNode(shape_, kLeaf, leaf, ctx_->epoch);
  leaves_.push_back(leaf);
  return leaf;
}

void IndexTree::LeafRun::Add(std::string_view key, std::uint64_t id) {
  void* leaf = OpenLeaf(key.size());
  tree::InsertAt(shape_, kLeaf, leaf, tree::Count(leaf), Entry{key, id});
  ++count_;
}

void IndexTree::LeafRun::AddFixed(const unsigned char* keys, const unsigned char* ids, std::size_t n) {
  assert(shape_.fixed());
  const auto w = static_cast<std::uint32_t>(shape_.width);
  const std::uint32_t max = shape_.max_count[kLeaf];
  while (n > 0) {
    void* leaf = OpenLeaf(static_cast<std::size_t>(w));
    const std::uint32_t at = tree::Count(leaf);
    const auto m = static_cast<std::uint32_t>(std::min<std::size_t>(n, max - at));
    unsigned char* b = tree::Base(leaf);
    if (w > 0) std::memcpy(b + shape_.keys_off[kLeaf] + at * w, keys, std::size_t{m} * w);
    std::memcpy(b + shape_.ids_off[kLeaf] + at * 6, ids, std::size_t{m} * 6);
    tree::Hdr(leaf)->count = static_cast<std::uint16_t>(at + m);
    count_ += m;
    keys += std::size_t{m} * w;
    ids += std::size_t{m} * 6;
    n -= m;
  }
}

}  // namespace quiver::index
