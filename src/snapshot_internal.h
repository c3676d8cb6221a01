// SnapshotInternal: the engine's side door into a public Snapshot handle.
//
// Snapshot keeps its version pointer private so the public header stays
// std-only. Engine subsystems that read a snapshot's storage directly (the
// graph implementation that makes snapshots, traversal that walks adjacency
// in place) go through this class, the one friend Snapshot declares.
#ifndef QUIVER_SNAPSHOT_INTERNAL_H_
#define QUIVER_SNAPSHOT_INTERNAL_H_

#include "quiver/snapshot.h"
#include "storage/version.h"

namespace quiver {

class SnapshotInternal {
 public:
  // A handle holding `pin` (from VersionChain::AcquirePin), handed over.
  static Snapshot Make(storage::ReaderPin pin) { return Snapshot(pin.version, pin.slot); }
  // The version `snap` pins; requires snap.valid().
  static const internal::Version* VersionOf(const Snapshot& snap) { return snap.v_; }
  // The storage roots `snap` reads; requires snap.valid().
  static const storage::GraphRoots& Roots(const Snapshot& snap) { return snap.v_->roots; }
};

}  // namespace quiver

#endif  // QUIVER_SNAPSHOT_INTERNAL_H_
