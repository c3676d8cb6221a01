// Version and VersionChain: publication of immutable graph versions and the
// reclamation of memory no version can reach any more.
//
// Invariants kept here (numbered as in DESIGN.md):
//  1. No byte reachable from a published version is ever written again: the
//     writer builds version N+1 in blocks born in its own epoch, or past the
//     counts of N (see radix_table.h, adjacency.h), and only then publishes.
//  3. Versions are published in sequence order, one publication per commit
//     group: Publish is called by the writer thread alone, with increasing
//     sequence numbers.
//
// Acquisition (Acquire) is lock-free with a split reference count: the head
// word packs the current version's pointer (low 48 bits) with a count of
// acquisitions in flight (high 16 bits). A reader bumps the packed count
// (which pins the pointer it read), takes a real reference on the version,
// then hands the in-flight count back; if the head moved meanwhile, the
// writer has already folded the in-flight count into the old version's
// reference count and the reader gives that unit back there instead. So a
// version's count reaches zero only when no snapshot holds it and nobody can
// acquire it; zero is final.
//
// Reclamation proof sketch: version N+1's retire list holds the blocks that
// N reaches and N+1 does not. Only versions <= N can reach them. Versions are
// kept in a list in sequence order; the sweep frees the retire list of
// version k+1 when version k is the oldest remaining and has no references,
// then unlinks k. A version becomes sweepable only once the thread that
// dropped its last reference has marked it dead under the chain's mutex, so
// the thread that finds every version swept knows no other thread is still
// on its way into the chain, and may delete it. Releasing the last reference
// of a version may wait for a sweep in progress; acquiring never waits. By induction every version older than
// k is gone, so no live version can reach those blocks.
//
// Thread safety: Acquire/Release from any thread; Publish, NewVersion,
// Discard and head() from the writer thread only; Shutdown once, after the
// writer has stopped.
#ifndef QUIVER_STORAGE_VERSION_H_
#define QUIVER_STORAGE_VERSION_H_

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "base/memory.h"
#include "base/mutex.h"
#include "storage/elements.h"
#include "storage/retire_list.h"

namespace quiver::storage {

class VersionChain;

}  // namespace quiver::storage

namespace quiver::internal {

class Version {
 public:
  storage::GraphRoots roots;

 private:
  friend class storage::VersionChain;
  std::atomic<std::int64_t> refs_{1};
  Version* newer_ = nullptr;     // guarded by the chain's mutex
  bool dead_ = false;            // guarded by the chain's mutex; set by the thread that released it last
  storage::RetireList retired_;  // blocks unlinked by this version's publication
  storage::VersionChain* chain_ = nullptr;

 public:
  storage::VersionChain* chain() const { return chain_; }
};

}  // namespace quiver::internal

namespace quiver::storage {

using internal::Version;

struct ChainStats {
  std::uint64_t live_versions = 0;
  std::uint64_t retired_bytes = 0;
};

class VersionChain {
 public:
  // Creates a chain holding one empty version (sequence 0), referenced by
  // the owner. Delete it only through Shutdown.
  VersionChain();
  VersionChain(const VersionChain&) = delete;
  VersionChain& operator=(const VersionChain&) = delete;

  base::MemoryAccount* account() { return &account_; }

  // A new reference on the current version. Lock-free.
  const Version* Acquire();
  // Drops a reference from Acquire.
  void Release(const Version* v);

  // Writer: the current version (the owner's reference keeps it alive).
  const Version* head() const { return writer_head_; }
  // Writer: a version to build, starting as a copy of head(); its blocks
  // retired during the build go to `ctx->retired` (set here).
  Version* NewVersion(MutationContext* ctx);
  // Writer: makes `v` (from NewVersion) current.
  void Publish(Version* v);
  // Writer: forgets a version from NewVersion that changed nothing.
  void Discard(Version* v);
  // Writer: gives up a version from NewVersion that is half-built and will
  // never be published (an I/O or memory failure poisoned the graph). Its
  // blocks are freed with the chain: the final sweep destroys what the
  // abandoned version reaches plus what it retired, instead of the head.
  // At most once per chain.
  void Abandon(Version* v);

  // The owner is done: drops its reference on the head. The chain deletes
  // itself once every version is released.
  void Shutdown();

  ChainStats Stats();

 private:
  ~VersionChain() = default;
  static constexpr int kCountShift = 48;
  static constexpr std::uint64_t kPointerMask = (std::uint64_t{1} << kCountShift) - 1;

  // Marks `v` dead and frees what no live version can reach; may delete
  // the chain, so callers touch nothing of it afterwards.
  void OnDead(Version* v);

  base::MemoryAccount account_;
  std::atomic<std::uint64_t> head_word_;  // Version* | in-flight acquisitions << 48
  const Version* writer_head_;            // writer thread only

  base::Mutex mu_;
  Version* oldest_ ABSL_GUARDED_BY(mu_);
  Version* newest_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  Version* abandoned_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_VERSION_H_
