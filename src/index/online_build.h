// BuiltIndex: the contents of an index built from a pinned snapshot while
// the writer keeps committing (Graph::CreateIndex), on their way to the
// writer, which catches them up and publishes them (a kIndexReady batch).
//
// The protocol (DESIGN.md: build from a pinned snapshot, catch up, publish):
//  1. a kDefineIndex batch declares the index, state kBuilding: queries
//     ignore it, the writer does not maintain it but records the id of every
//     element of its label that a later batch touches (IndexMaintainer);
//  2. the caller's thread pins a snapshot S at or after the declaration and
//     builds the tree from S (collect, sort, check, IndexTree::Builder),
//     with nodes born in epoch 0, which no commit group ever uses, so the
//     writer never writes them in place;
//  3. a kIndexReady batch hands the tree to the writer, which validates the
//     catch-up (for a unique index: no recorded element's new key collides)
//     and applies it: for each recorded id, the key in S is erased and the
//     key in the version being built inserted. The index is published
//     ready, complete, in that one version.
// Every element not recorded was last changed at or before S, so its key in
// S is its key now; every recorded one is fixed from S (old) and the head
// (new); an id recorded before S is fixed to the same effect.
//
// Ownership: the tree belongs to this object until the version holding it
// is published (then `published` is set and the nodes are the version's);
// otherwise (the batch failed, or its group was rolled back) the destructor
// frees it whole. Catching up copies nodes on write and never writes the
// original ones, so the original tree stays whole either way.
//
// Thread safety: built on the caller's thread; from the kIndexReady batch on
// the writer thread only reads `roots()` and `root`, and sets `published`.
#ifndef QUIVER_INDEX_ONLINE_BUILD_H_
#define QUIVER_INDEX_ONLINE_BUILD_H_

#include <atomic>

#include "index/index_tree.h"
#include "storage/version.h"

namespace quiver::index {

struct BuiltIndex {
  // Takes over one reference on `version`.
  BuiltIndex(storage::VersionChain* chain, const storage::Version* version)
      : chain_(chain), version_(version) {}
  BuiltIndex(const BuiltIndex&) = delete;
  BuiltIndex& operator=(const BuiltIndex&) = delete;
  ~BuiltIndex() {
    if (!published.load(std::memory_order_acquire)) IndexTree::Destroy(root, chain_->account());
    chain_->Release(version_);
  }

  // The snapshot the tree was built from.
  const storage::GraphRoots& roots() const { return version_->roots; }

  IndexRoot root;
  std::atomic<bool> published{false};

 private:
  storage::VersionChain* chain_;
  const storage::Version* version_;
};

}  // namespace quiver::index

#endif  // QUIVER_INDEX_ONLINE_BUILD_H_
