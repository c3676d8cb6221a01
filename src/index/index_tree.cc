// IndexTree's writes: Insert, Erase, Retire, Destroy.
//
// Copy-on-write (DESIGN.md invariant 1): a node is private to the group
// being built exactly when its header's birth is ctx.epoch; only private
// nodes are written. An operation first finds its path read-only, then
// copies every published node on the path (Privatize: copy, hang the copy
// in the private parent, retire the original), then edits private nodes.
//
// Failure (std::bad_alloc from ctx.Allocate or ctx.Retire) never touches a
// published node, and the tree stays well formed at every throw point:
//  - a copy is hung before its original is retired, so a throwing Retire
//    leaves the original reachable only from published versions;
//  - an insert allocates every node its splits may need (NodePool) before
//    changing anything, so the splits themselves cannot fail;
//  - an erase's merges privatize a sibling before writing, one level at a
//    time, each level leaving a valid tree.
// Every private node is thus reachable from the root or freed, and with
// ctx.blocks set the group's rollback frees exactly the private ones.
#include "index/index_tree.h"

#include <cassert>

#include "index/key_codec.h"
#include "index/tree_node.h"

namespace quiver::index {
namespace {

using tree::Entry;
using tree::Kind;
using tree::kInner;
using tree::kLeaf;
using tree::Load;
using tree::Shape;
using tree::UpEntry;

// A root-to-leaf path: nodes[0] the root, nodes[height] the leaf; index[l]
// is the child taken in nodes[l], index[height] the entry position.
struct Path {
  void* nodes[tree::kMaxHeight + 1];
  std::uint32_t index[tree::kMaxHeight + 1];
  std::uint32_t height;

  Kind KindAt(std::uint32_t level) const { return level == height ? kLeaf : kInner; }
};

// Finds the leaf position of (key, id); true if the entry is there.
//
// The last entry of each node is compared first: ids (and keys such as
// timestamps) rise, so most inserts land past it, and one comparison per
// level answers those where a search took log2(count). Only writes pay it:
// lookups search as before (a cold node's last line would be one more miss
// before the search's own prefetches).
bool FindPath(const Shape& s, const IndexRoot& root, std::string_view key, std::uint64_t id, Path* p) {
  p->height = root.height;
  void* n = root.node;
  for (std::uint32_t l = 0; l < root.height; ++l) {
    p->nodes[l] = n;
    // ChildFor searches separators 1..count-1 for the first above the entry.
    const std::uint32_t count = tree::Count(n);
    const bool past_last = count > 1 && tree::CompareEntryAt(s, kInner, n, count - 1, key, id) <= 0;
    p->index[l] = past_last ? count - 1 : tree::ChildFor(s, n, key, id);
    n = tree::Child(s, n, p->index[l]);
  }
  p->nodes[root.height] = n;
  const std::uint32_t count = tree::Count(n);
  const bool past_last = count > 0 && tree::CompareEntryAt(s, kLeaf, n, count - 1, key, id) < 0;
  const std::uint32_t pos = past_last ? count : tree::LowerBound(s, n, key, id);
  p->index[root.height] = pos;
  return pos < count && tree::KeyEquals(s, kLeaf, n, pos, key) && tree::Id(s, kLeaf, n, pos) == id;
}

bool IsPrivate(const void* n, const storage::MutationContext& ctx) {
  return tree::Hdr(n)->birth == ctx.epoch;
}

// Frees a node born in this epoch (no published version reaches it).
void FreePrivate(void* n, storage::MutationContext& ctx) {
  if (ctx.blocks != nullptr) ctx.blocks->Remove(n);
  ctx.account->Free(n);
}

// ctx.Retire for a node born before this epoch: straight to the retire
// list, without the lookup in the group's block set (ctx.blocks) that
// Retire makes first and that always missed here (every node the group
// allocates is born in ctx.epoch). Were such a node in ctx.blocks after
// all, it would still be freed once: by the retire list after publication
// (which forgets ctx.blocks unfreed), or by the rollback (which drops the
// retire list unfreed).
void RetirePublished(void* n, storage::MutationContext& ctx) {
  assert(!IsPrivate(n, ctx));
  ctx.retired->Add(n);
}

// A node no longer reachable from the tree being built.
void Discard(void* n, storage::MutationContext& ctx) {
  if (IsPrivate(n, ctx)) {
    FreePrivate(n, ctx);
  } else {
    RetirePublished(n, ctx);
  }
}

void* NewNode(const Shape& s, Kind k, storage::MutationContext& ctx) {
  void* n = ctx.Allocate(s.node_bytes[k]);
  tree::InitNode(s, k, n, ctx.epoch);
  return n;
}

// A private copy of published `n`; the caller hangs it, then retires `n`.
void* CopyNode(const Shape& s, Kind k, const void* n, storage::MutationContext& ctx) {
  void* copy = ctx.Allocate(s.node_bytes[k]);
  std::memcpy(copy, n, s.node_bytes[k]);
  tree::Hdr(copy)->birth = ctx.epoch;
  return copy;
}

// Makes the path's node at `level` private; its parent must be private.
void Privatize(IndexRoot& root, const Shape& s, Path& p, std::uint32_t level, storage::MutationContext& ctx) {
  void* n = p.nodes[level];
  if (IsPrivate(n, ctx)) return;
  void* copy = CopyNode(s, p.KindAt(level), n, ctx);
  if (level == 0) {
    root.node = copy;
    root.birth = ctx.epoch;
  } else {
    tree::SetChild(s, p.nodes[level - 1], p.index[level - 1], copy);
  }
  p.nodes[level] = copy;
  RetirePublished(n, ctx);
}

void PrivatizePath(IndexRoot& root, const Shape& s, Path& p, storage::MutationContext& ctx) {
  for (std::uint32_t l = 0; l <= p.height; ++l) Privatize(root, s, p, l, ctx);
}

// Child j of private inner node `parent`, made private.
void* PrivatizeChild(const Shape& s, Kind k, void* parent, std::uint32_t j, storage::MutationContext& ctx) {
  void* n = tree::Child(s, parent, j);
  if (IsPrivate(n, ctx)) return n;
  void* copy = CopyNode(s, k, n, ctx);
  tree::SetChild(s, parent, j, copy);
  RetirePublished(n, ctx);
  return copy;
}

// Adds `delta` to the counts the path's inner nodes keep for levels [0, last].
void AdjustCounts(const Shape& s, const Path& p, int last, std::int64_t delta) {
  for (int l = 0; l <= last; ++l) {
    const std::uint64_t c = tree::ChildCount(s, p.nodes[l], p.index[l]);
    tree::SetChildCount(s, p.nodes[l], p.index[l], c + static_cast<std::uint64_t>(delta));
  }
}

// ---- Insert

// What an insert does at the leaf, decided before anything is written.
enum class LeafAction { kInPlace, kToLeft, kToRight, kSplit, kAppend };

struct InsertPlan {
  LeafAction action = LeafAction::kInPlace;
  std::uint32_t new_nodes = 0;  // upper bound on the nodes the splits allocate
};

// Whether sibling `n` (a fixed-width leaf) has room enough to take entries
// from a full neighbour: at least 1/kRedistributeFreeDivisor of it free.
bool CanTakeEntries(const Shape& s, const void* n) {
  const std::uint32_t free = s.max_count[kLeaf] - tree::Count(n);
  return free * tree::config::kRedistributeFreeDivisor >= s.max_count[kLeaf] && free >= 2;
}

bool IsAppend(const Path& p) {
  if (p.index[p.height] != tree::Count(p.nodes[p.height])) return false;
  for (std::uint32_t l = 0; l < p.height; ++l) {
    if (p.index[l] + 1 != tree::Count(p.nodes[l])) return false;
  }
  return true;
}

InsertPlan PlanInsert(const Shape& s, const Path& p, std::string_view key) {
  const void* leaf = p.nodes[p.height];
  if (tree::Fits(s, kLeaf, tree::LoadOf(s, kLeaf, leaf) + tree::EntryLoad(s, kLeaf, key.size()))) return {};
  InsertPlan plan{LeafAction::kSplit, 1};
  if (IsAppend(p)) {
    plan.action = LeafAction::kAppend;
  } else if (s.fixed() && p.height > 0) {
    const void* parent = p.nodes[p.height - 1];
    const std::uint32_t i = p.index[p.height - 1];
    if (i > 0 && CanTakeEntries(s, tree::Child(s, parent, i - 1))) return {LeafAction::kToLeft, 0};
    if (i + 1 < tree::Count(parent) && CanTakeEntries(s, tree::Child(s, parent, i + 1))) {
      return {LeafAction::kToRight, 0};
    }
  }
  // Each full ancestor may split too; a full root adds a new root.
  int l = static_cast<int>(p.height) - 1;
  for (; l >= 0 && !tree::HasRoomForAny(s, kInner, p.nodes[l]); --l) ++plan.new_nodes;
  if (l < 0) ++plan.new_nodes;
  return plan;
}

// The nodes an insert's splits take, allocated up front; the ones left
// over are freed when the pool goes.
class NodePool {
 public:
  NodePool(const Shape& s, storage::MutationContext& ctx) : s_(s), ctx_(ctx) {}
  ~NodePool() {
    for (std::uint32_t i = 0; i < size_; ++i) FreePrivate(nodes_[i], ctx_);
  }
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  // Allocates the `n` nodes of a split that starts at a leaf (PlanInsert):
  // the leaf's new half, taken first, then inner nodes, each of its own
  // kind's size (in 8-byte-key trees a leaf is half an inner node).
  void Fill(std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const Kind k = i + 1 == n ? kLeaf : kInner;  // taken last to first
      nodes_[size_] = ctx_.Allocate(s_.node_bytes[k]);
      kinds_[size_++] = k;
    }
  }
  void* Take(Kind k) {
    assert(size_ > 0 && kinds_[size_ - 1] == k);
    void* n = nodes_[--size_];
    tree::InitNode(s_, k, n, ctx_.epoch);
    return n;
  }

 private:
  const Shape& s_;
  storage::MutationContext& ctx_;
  void* nodes_[tree::kMaxHeight + 2];
  Kind kinds_[tree::kMaxHeight + 2];
  std::uint32_t size_ = 0;
};

// Appends to `out` the ranges of a and b (in that order) covering the
// positions [from, to) of their concatenation.
std::uint32_t Slice(const void* a, const void* b, std::uint32_t from, std::uint32_t to, tree::Range out[2]) {
  const std::uint32_t na = tree::Count(a);
  std::uint32_t n = 0;
  if (from < na) out[n++] = {a, from, std::min(to, na)};
  if (to > na) out[n++] = {b, std::max(from, na) - na, to - na};
  return n;
}

// The entry at position j of the concatenation of a and b.
std::size_t KeySizeAt(const Shape& s, Kind k, const void* a, const void* b, std::uint32_t j) {
  const std::uint32_t na = tree::Count(a);
  return j < na ? tree::Key(s, k, a, j).size() : tree::Key(s, k, b, j - na).size();
}

// Where to cut the concatenation of a and b with `e` at position q, so that
// both halves fit and neither is much fuller than the other: returns the
// size of the left half.
std::uint32_t BalancedCut(const Shape& s, Kind k, const void* a, const void* b, std::uint32_t q,
                          const Entry& e) {
  const std::uint32_t total = tree::Count(a) + tree::Count(b) + 1;
  if (s.fixed()) return total / 2;
  auto entry_load = [&](std::uint32_t j) {  // j: position in the combined sequence
    const std::size_t key = j == q ? e.key.size() : KeySizeAt(s, k, a, b, j < q ? j : j - 1);
    return tree::EntryLoad(s, k, key);
  };
  Load all;
  for (std::uint32_t j = 0; j < total; ++j) all = all + entry_load(j);
  Load left;
  std::uint32_t best = 1;
  std::uint64_t best_score = ~std::uint64_t{0};
  for (std::uint32_t m = 1; m < total; ++m) {
    left = left + entry_load(m - 1);
    const Load right{all.count - left.count, all.bytes - left.bytes};
    if (!tree::Fits(s, k, left) || !tree::Fits(s, k, right)) continue;
    const std::uint64_t score =
        std::max(left.bytes, right.bytes) * std::uint64_t{65536} + std::max(left.count, right.count);
    if (score < best_score) best_score = score, best = m;
  }
  return best;
}

// Rewrites private nodes a and b as the concatenation of their entries with
// `e` inserted at position q, cut after the first m entries.
void Redistribute(const Shape& s, Kind k, void* a, void* b, std::uint32_t q, const Entry& e, std::uint32_t m,
                  std::uint64_t birth) {
  const std::uint32_t total = tree::Count(a) + tree::Count(b);  // without e
  const std::uint32_t cut = q < m ? m - 1 : m;                  // the cut in the old sequence
  tree::Range ranges[2];
  tree::Assemble(s, k, tree::Scratch(0), {ranges, Slice(a, b, 0, cut, ranges)}, birth);
  tree::Assemble(s, k, tree::Scratch(1), {ranges, Slice(a, b, cut, total, ranges)}, birth);
  if (q < m) {
    tree::InsertAt(s, k, tree::Scratch(0), q, e);
  } else {
    tree::InsertAt(s, k, tree::Scratch(1), q - m, e);
  }
  tree::CopyNode(s, k, a, tree::Scratch(0));
  tree::CopyNode(s, k, b, tree::Scratch(1));
}

// Fixed-width leaves: a full leaf hands entries to a sibling with room.
void InsertRedistributing(const Shape& s, Path& p, const Entry& e, bool to_left,
                          storage::MutationContext& ctx) {
  void* parent = p.nodes[p.height - 1];
  const std::uint32_t i = p.index[p.height - 1];
  const std::uint32_t left_i = to_left ? i - 1 : i;
  void* sibling = PrivatizeChild(s, kLeaf, parent, to_left ? i - 1 : i + 1, ctx);
  void* a = to_left ? sibling : p.nodes[p.height];
  void* b = to_left ? p.nodes[p.height] : sibling;
  const std::uint32_t q = (to_left ? tree::Count(a) : 0) + p.index[p.height];
  Redistribute(s, kLeaf, a, b, q, e, BalancedCut(s, kLeaf, a, b, q, e), ctx.epoch);
  tree::SetChildCount(s, parent, left_i, tree::Count(a));
  tree::SetChildCount(s, parent, left_i + 1, tree::Count(b));
  tree::SetSeparator(s, parent, left_i + 1, tree::Key(s, kLeaf, b, 0), tree::Id(s, kLeaf, b, 0));
  AdjustCounts(s, p, static_cast<int>(p.height) - 2, 1);
}

// Splits the path's node at `level` (private) with `e` going in at q; the
// new right half comes from the pool. Returns what the parent must add.
Entry SplitNode(const Shape& s, Path& p, std::uint32_t level, std::uint32_t q, const Entry& e, bool append,
                NodePool& pool, std::uint64_t birth) {
  const Kind k = p.KindAt(level);
  void* left = p.nodes[level];
  void* right = pool.Take(k);
  const std::uint32_t m = append ? tree::Count(left) : BalancedCut(s, k, left, right, q, e);
  Redistribute(s, k, left, right, q, e, m, birth);
  return UpEntry(s, k, right);
}

void InsertSplitting(IndexRoot& root, const Shape& s, Path& p, const Entry& e, bool append, NodePool& pool,
                     std::uint64_t birth) {
  Entry up = SplitNode(s, p, p.height, p.index[p.height], e, append, pool, birth);
  for (int l = static_cast<int>(p.height) - 1; l >= 0; --l) {
    void* n = p.nodes[l];
    const std::uint32_t i = p.index[l];
    tree::SetChildCount(s, n, i, tree::Total(s, p.KindAt(l + 1), p.nodes[l + 1]));
    if (tree::Fits(s, kInner, tree::LoadOf(s, kInner, n) + tree::EntryLoad(s, kInner, up.key.size()))) {
      tree::InsertAt(s, kInner, n, i + 1, up);
      AdjustCounts(s, p, l - 1, 1);
      return;
    }
    up = SplitNode(s, p, static_cast<std::uint32_t>(l), i + 1, up, append, pool, birth);
  }
  // The root split: a new root above the two halves.
  void* old_root = p.nodes[0];
  void* new_root = pool.Take(kInner);
  const Entry first = UpEntry(s, p.KindAt(0), old_root);
  tree::InsertAt(s, kInner, new_root, 0, first);
  tree::InsertAt(s, kInner, new_root, 1, up);
  root.node = new_root;
  root.birth = birth;
  ++root.height;
}

// ---- Erase

// Removes the empty private child i of private inner node `parent`.
void RemoveEmptyChild(const Shape& s, void* parent, std::uint32_t i, storage::MutationContext& ctx) {
  void* x = tree::Child(s, parent, i);
  // Separator 0 stays: it is the one the grandparent holds for `parent` (a
  // larger one would misplace entries if `parent` merged later), so the
  // first child's removal drops separator 1 instead.
  std::uint32_t gone = i;
  if (i == 0 && tree::Count(parent) > 1) {
    tree::SetChild(s, parent, 0, tree::Child(s, parent, 1));
    tree::SetChildCount(s, parent, 0, tree::ChildCount(s, parent, 1));
    gone = 1;
  }
  tree::EraseAt(s, kInner, parent, gone);
  FreePrivate(x, ctx);
}

// Merges children i and i + 1 of private inner node `parent` into child i.
void MergeChildren(const Shape& s, Kind k, void* parent, std::uint32_t i, storage::MutationContext& ctx) {
  void* a = PrivatizeChild(s, k, parent, i, ctx);
  void* b = tree::Child(s, parent, i + 1);
  const tree::Range both[2] = {{a, 0, tree::Count(a)}, {b, 0, tree::Count(b)}};
  tree::Assemble(s, k, tree::Scratch(0), both, ctx.epoch);
  tree::CopyNode(s, k, a, tree::Scratch(0));
  tree::SetChildCount(s, parent, i, tree::ChildCount(s, parent, i) + tree::ChildCount(s, parent, i + 1));
  tree::EraseAt(s, kInner, parent, i + 1);
  Discard(b, ctx);
}

// After the path's node at `level` (> 0, private) shrank: removes it if
// empty, else merges it with an adjacent sibling (the left one first) when
// one of the two is under a quarter full and both fit in one node. True
// if the parent lost a child.
bool MergeAt(const Shape& s, Path& p, std::uint32_t level, storage::MutationContext& ctx) {
  const Kind k = p.KindAt(level);
  void* parent = p.nodes[level - 1];
  const std::uint32_t i = p.index[level - 1];
  const Load lx = tree::LoadOf(s, k, p.nodes[level]);
  if (lx.count == 0) {
    RemoveEmptyChild(s, parent, i, ctx);
    return true;
  }
  auto mergeable = [&](std::uint32_t j) {
    const Load ls = tree::LoadOf(s, k, tree::Child(s, parent, j));
    return (tree::Underfull(s, k, lx) || tree::Underfull(s, k, ls)) && tree::Fits(s, k, lx + ls);
  };
  if (i > 0 && mergeable(i - 1)) {
    MergeChildren(s, k, parent, i - 1, ctx);
  } else if (i + 1 < tree::Count(parent) && mergeable(i + 1)) {
    MergeChildren(s, k, parent, i, ctx);
  } else {
    return false;
  }
  return true;
}

// After an erase: an empty tree has no root; a root with one child hands
// the root over to the child.
void ShrinkRoot(IndexRoot& root, const Shape& s, storage::MutationContext& ctx) {
  if (root.count == 0) {
    Discard(root.node, ctx);
    root.node = nullptr;
    root.birth = 0;
    root.height = 0;
    return;
  }
  while (root.height > 0 && tree::Count(root.node) == 1) {
    void* child = tree::Child(s, root.node, 0);
    Discard(root.node, ctx);
    root.node = child;
    root.birth = tree::Hdr(child)->birth;
    --root.height;
  }
}

// ---- Whole trees

template <typename Fn>
void ForEachNode(const Shape& s, void* n, std::uint32_t height, Fn& fn) {
  if (height > 0) {
    for (std::uint32_t i = 0; i < tree::Count(n); ++i) ForEachNode(s, tree::Child(s, n, i), height - 1, fn);
  }
  fn(n);
}

void CheckKey(const IndexRoot& root, std::string_view key) {
  assert(root.key_width < 0 ? key.size() <= kMaxKeyBytes
                            : key.size() == static_cast<std::size_t>(root.key_width));
  (void)root;
  (void)key;
}

}  // namespace

bool IndexTree::Insert(IndexRoot& root, std::string_view key, std::uint64_t id,
                       storage::MutationContext& ctx) {
  CheckKey(root, key);
  const Shape s = tree::ShapeOf(root);
  const Entry e{key, id};
  if (root.node == nullptr) {
    void* leaf = NewNode(s, kLeaf, ctx);
    tree::InsertAt(s, kLeaf, leaf, 0, e);
    root.node = leaf;
    root.birth = ctx.epoch;
    root.height = 0;
    root.count = 1;
    return true;
  }
  Path p;
  if (FindPath(s, root, key, id, &p)) return false;
  const InsertPlan plan = PlanInsert(s, p, key);
  PrivatizePath(root, s, p, ctx);
  NodePool pool(s, ctx);
  pool.Fill(plan.new_nodes);
  // From here on nothing allocates or throws, but the sibling copy below.
  switch (plan.action) {
    case LeafAction::kInPlace:
      tree::InsertAt(s, kLeaf, p.nodes[p.height], p.index[p.height], e);
      AdjustCounts(s, p, static_cast<int>(p.height) - 1, 1);
      break;
    case LeafAction::kToLeft:
    case LeafAction::kToRight: InsertRedistributing(s, p, e, plan.action == LeafAction::kToLeft, ctx); break;
    case LeafAction::kSplit:
    case LeafAction::kAppend:
      InsertSplitting(root, s, p, e, plan.action == LeafAction::kAppend, pool, ctx.epoch);
      break;
  }
  ++root.count;
  return true;
}

bool IndexTree::Erase(IndexRoot& root, std::string_view key, std::uint64_t id,
                      storage::MutationContext& ctx) {
  CheckKey(root, key);
  if (root.node == nullptr) return false;
  const Shape s = tree::ShapeOf(root);
  Path p;
  if (!FindPath(s, root, key, id, &p)) return false;
  PrivatizePath(root, s, p, ctx);
  tree::EraseAt(s, kLeaf, p.nodes[p.height], p.index[p.height]);
  AdjustCounts(s, p, static_cast<int>(p.height) - 1, -1);
  --root.count;
  for (std::uint32_t l = p.height; l > 0 && MergeAt(s, p, l, ctx); --l) {
  }
  ShrinkRoot(root, s, ctx);
  return true;
}

void IndexTree::Retire(IndexRoot& root, storage::MutationContext& ctx) {
  if (root.node != nullptr) {
    auto retire = [&ctx](void* n) { Discard(n, ctx); };
    ForEachNode(tree::ShapeOf(root), root.node, root.height, retire);
  }
  root = IndexRoot{.key_width = root.key_width, .max_fanout = root.max_fanout};
}

void IndexTree::Destroy(IndexRoot& root, base::MemoryAccount* account) {
  if (root.node != nullptr) {
    auto free = [account](void* n) { account->Free(n); };
    ForEachNode(tree::ShapeOf(root), root.node, root.height, free);
  }
  root = IndexRoot{.key_width = root.key_width, .max_fanout = root.max_fanout};
}

std::uint64_t IndexTree::MemoryBytes(const IndexRoot& root) {
  std::uint64_t bytes = 0;
  if (root.node != nullptr) {
    auto add = [&bytes](void* n) { bytes += base::UsableSize(n); };
    ForEachNode(tree::ShapeOf(root), root.node, root.height, add);
  }
  return bytes;
}

}  // namespace quiver::index
