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
//  2b. unless the index is unique, the same thread pins a later version L
//     and inserts, in place (the tree is still private), the entries of the
//     elements L has from S's table end (`split`) on: those added while the
//     build ran, the bulk of what a busy writer changes meanwhile. The tree
//     now holds each element's key in S below `split` and in L from it on
//     (StateOf); the writer, which never stopped recording, is left with
//     what changed during this step alone;
//  3. a kIndexReady batch hands the tree to the writer, which validates the
//     catch-up (for a unique index: no recorded element's new key collides)
//     and applies it: for each recorded id, the key in the tree's state
//     (StateOf) is erased and the key in the version being built inserted. The index is published
//     ready, complete, in that one version.
// Every element not recorded was last changed at or before S (or, from
// `split` on, L), so its key there is its key now; every recorded one is
// fixed from that state (old) and the head (new); an id recorded before S
// or L is fixed to the same effect. The writer's share, and the time the
// publishing group holds it, is O(changes recorded) x one tree path copy;
// step 2b makes those changes few for a writer that adds elements.
//
// Ownership: the tree belongs to this object until the version holding it
// is published (then `published` is set and the nodes are the version's);
// otherwise (the batch failed, or its group was rolled back) the destructor
// frees it whole. Catching up copies nodes on write and never writes the
// original ones, so the original tree stays whole either way.
//
// Thread safety: built on a thread of CreateIndex's; from the kIndexReady
// batch on the writer thread only reads `roots()`, StateOf and `root`, and
// sets `published`; ReleaseVersions only once nobody reads the versions.
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
  // Pins the chain's current version. Through make_shared, the pin is taken
  // only once the object's memory is: a failed allocation pins nothing.
  explicit BuiltIndex(storage::VersionChain* chain) : BuiltIndex(chain, chain->Acquire()) {}
  BuiltIndex(const BuiltIndex&) = delete;
  BuiltIndex& operator=(const BuiltIndex&) = delete;
  ~BuiltIndex() {
    if (!published.load(std::memory_order_acquire)) IndexTree::Destroy(root, chain_->account());
    ReleaseVersions();
  }

  // Gives back the pinned versions (once; the destructor calls it too).
  // Every block the writer retired since S is held back by S and freed by
  // the thread that gives back the last reference, so CreateIndex calls
  // this itself, on a thread of the build's, once the kIndexReady batch is
  // through (and the writer reads the versions no more) rather than leave
  // it to whichever thread drops the object last: maybe the writer, in a
  // commit that other commits wait for.
  void ReleaseVersions() {
    if (released_.exchange(true, std::memory_order_acq_rel)) return;
    if (later_ != nullptr) chain_->Release(later_);
    chain_->Release(version_);
  }

  // The snapshot the tree was built from.
  const storage::GraphRoots& roots() const { return version_->roots; }

  // Step 2b: takes over one reference on `later`, whose state the tree holds
  // for ids from `split` (S's table end) on. Once only.
  void SetLater(const storage::Version* later, std::uint64_t split) {
    later_ = later;
    split_ = split;
  }
  // The version whose state of element `id` the tree holds.
  const storage::GraphRoots& StateOf(std::uint64_t id) const {
    return later_ != nullptr && id >= split_ ? later_->roots : version_->roots;
  }

  IndexRoot root;
  std::atomic<bool> published{false};

 private:
  storage::VersionChain* chain_;
  const storage::Version* version_;
  const storage::Version* later_ = nullptr;
  std::atomic<bool> released_{false};
  std::uint64_t split_ = 0;
};

}  // namespace quiver::index

#endif  // QUIVER_INDEX_ONLINE_BUILD_H_
