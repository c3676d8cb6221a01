// Version and VersionChain: publication of immutable graph versions and the
// reclamation of memory no version can reach any more.
//
// Invariants kept here (numbered as in DESIGN.md):
//  1. No byte reachable from a published version is ever written again: the
//     writer builds version N+1 in blocks private to its group (born in its
//     epoch, or recorded in its GroupBlocks: retire_list.h), or past the
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
// Reclamation. Local invariants (cited in version.cc):
//  version.1 Version N+1's retire list holds exactly the published blocks
//      that N reaches and N+1 does not. (Blocks private to the group that
//      built N+1 are never on it: they are freed when superseded, or on
//      rollback, through the group's GroupBlocks; see retire_list.h.)
//  version.2 Versions sit in a list in sequence order. A version is marked
//      dead, under the chain's mutex, by the thread that dropped its last
//      reference; zero references is final (see Acquisition above).
//  version.3 The retire list of version k+1 is detached (spliced out of the
//      chain, O(1)) only while k is the oldest listed version and dead;
//      k is unlinked in the same critical section.
// Proof that no live version reaches a freed block: a block on k+1's list
// is reachable only from versions <= k (version.1, and published versions
// never change). When the list is detached, k is the oldest listed and dead,
// and every version older than k was unlinked earlier under the same rule,
// so all of them are dead (version.2: dead is final). The detaching thread
// owns the list from then on and frees it after dropping the mutex: nobody
// else can reach it, so freeing needs no lock.
//
// Readers never block the writer for longer than a few pointer moves: the
// mutex guards only linking (Publish), marking and detaching; memory is
// freed outside it. A thread freeing detached lists counts itself in
// sweeping_, and the chain is deleted only by the thread that finds every
// version unlinked after Shutdown and no sweep in progress, so no thread is
// still freeing through account_ when it goes. Statistics are counters kept
// at Publish and at free, read without the mutex. Both are checked by
// structure: the mutex records its holder and how often it was taken
// (TEST_ hooks), and a test counts the frees made while it is held.
//
// Thread safety: Acquire/Release/Stats from any thread; Publish, NewVersion,
// Discard, RollBack and head() from the writer thread only; Shutdown once,
// after the writer has stopped.
#ifndef QUIVER_STORAGE_VERSION_H_
#define QUIVER_STORAGE_VERSION_H_

#include <atomic>
#include <cstdint>
#include <thread>

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
  bool destroy_ = false;         // once detached: free everything roots reach (the last version)
  storage::RetireList retired_;  // blocks unlinked by this version's publication (version.1)
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
  // Writer: undoes a version from NewVersion built with `ctx` (ctx.blocks
  // set), half-built or not: frees exactly the group's private blocks and
  // private intern tables, forgets its retire list (those blocks are the
  // head's, still in use) and deletes `v`. The head is untouched, and the
  // next group may build on it. Allocates nothing, never throws.
  void RollBack(Version* v, MutationContext& ctx);
  // Writer: gives up a version from NewVersion that is half-built and will
  // never be published, built without a GroupBlocks (recovery). Its
  // blocks are freed with the chain: the final sweep destroys what the
  // abandoned version reaches plus what it retired, instead of the head.
  // At most once per chain.
  void Abandon(Version* v);

  // The owner is done: drops its reference on the head. The chain deletes
  // itself once every version is released.
  void Shutdown();

  // Counters: lock-free, never waits.
  ChainStats Stats() const;

  // Test hooks. Whether the calling thread holds the chain's mutex (so a
  // test can count blocks freed under it), and how many times the mutex
  // has been taken (so a test can check that a call takes it not at all).
  bool TEST_HeldByThisThread() const {
    return holder_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }
  std::uint64_t TEST_lock_count() const { return lock_count_.load(std::memory_order_relaxed); }

 private:
  // Takes mu_ and records the holder for the test hooks above: two relaxed
  // stores, next to a lock taken once per publication and per dead version.
  class ABSL_SCOPED_LOCKABLE ChainLock {
   public:
    explicit ChainLock(VersionChain* chain) ABSL_EXCLUSIVE_LOCK_FUNCTION(chain->mu_) : chain_(chain) {
      chain_->mu_.Lock();
      chain_->holder_.store(std::this_thread::get_id(), std::memory_order_relaxed);
      chain_->lock_count_.fetch_add(1, std::memory_order_relaxed);
    }
    ~ChainLock() ABSL_UNLOCK_FUNCTION() {
      chain_->holder_.store(std::thread::id(), std::memory_order_relaxed);
      chain_->mu_.Unlock();
    }
    ChainLock(const ChainLock&) = delete;
    ChainLock& operator=(const ChainLock&) = delete;

   private:
    VersionChain* const chain_;
  };

  ~VersionChain() = default;
  static constexpr int kCountShift = 48;
  static constexpr std::uint64_t kPointerMask = (std::uint64_t{1} << kCountShift) - 1;

  // Marks `v` dead, detaches what no live version can reach and frees it
  // outside the mutex; may delete the chain, so callers touch nothing of it
  // afterwards.
  void OnDead(Version* v);
  // Under mu_: unlinks dead versions from the old end (version.3); returns
  // them linked through newer_, each holding the list to free.
  Version* DetachDead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees what DetachDead returned. No lock held.
  void FreeDetached(Version* garbage);

  base::MemoryAccount account_;
  std::atomic<std::uint64_t> head_word_;  // Version* | in-flight acquisitions << 48
  const Version* writer_head_;            // writer thread only

  // Statistics: bytes on published retire lists not yet freed, versions
  // not yet marked dead.
  std::atomic<std::uint64_t> retired_bytes_{0};
  std::atomic<std::uint64_t> live_versions_{1};

  base::Mutex mu_;
  std::atomic<std::thread::id> holder_{};     // test hook: who holds mu_
  std::atomic<std::uint64_t> lock_count_{0};  // test hook: times mu_ was taken
  Version* oldest_ ABSL_GUARDED_BY(mu_);
  Version* newest_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  Version* abandoned_ ABSL_GUARDED_BY(mu_) = nullptr;
  int sweeping_ ABSL_GUARDED_BY(mu_) = 0;  // threads freeing detached versions
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_VERSION_H_
