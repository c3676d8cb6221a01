// Version and VersionChain: publication of immutable graph versions and the
// reclamation of memory no version can reach any more.
//
// Invariants kept here (numbered as in DESIGN.md):
//  1. No byte reachable from a published version is ever written again: the
//     writer builds version N+1 in blocks private to its group (born in its
//     epoch, or recorded in its GroupBlocks: retire_list.h), or past the
//     counts of N (see radix_table.h, adjacency.h), and only then publishes.
//  3. Versions are published in sequence order, one publication per commit
//     group: Publish is called by the writer's role holder alone, with
//     increasing sequence numbers, except that a group that changes only the
//     layout (a Graph::Compact step: no batch, the same contents) publishes
//     with its predecessor's number.
//
// Acquisition. A version's reference count (refs_) counts *units*: the
// owner's on the head, one per direct reference, one per reader slot that
// holds the version. Snapshots take no unit of their own on the fast path:
// they pin a reader slot (below). Zero units is final, and a version is
// reclaimed only then (version.2).
//
// Direct references (Acquire/Release; internal callers, and the slow path
// of AcquirePin) use a split count: the head word packs the current
// version's pointer (low 48 bits) with a count of acquisitions in flight
// (high 16 bits). A reader bumps the packed count (which pins the pointer it
// read), takes a unit on the version, then hands the in-flight count back;
// if the head moved meanwhile, the writer counts the reader in the
// in-flight count it folds into the old version's count, and the reader
// gives back its own unit instead. So nobody takes a unit on a version with
// zero units.
//  version.7 Between Publish's exchange of the head word and its fold, the
//      old head's count carries a bias (kFoldBias, more than the in-flight
//      count can hold), added before the exchange and taken off by the fold.
// The interleaving version.7 closes: the exchange and the fold are two steps; a
// reader that sees the head moved cannot tell whether the fold is done.
// Without the bias, with v the head holding only the owner's unit:
//   reader: bumps the in-flight count (v, 1); v.refs 1 -> 2
//   writer: exchanges the head word to v' (reads in-flight 1); then works
//           on (head pointer, RetireSlots) before folding
//   reader: sees the head moved, gives back its own unit: v.refs 2 -> 1,
//           and returns v, owning a unit the fold has not added yet
//   reader: releases that unit (directly, or as the last unpin of a stale
//           slot it installed v in; likewise if a slot's unit of v is
//           dropped by RetireSlots): v.refs 1 -> 0, v marked dead and freed
//   writer: folds in-flight 1 and drops the owner's unit: v.refs 0 + 1 - 1
//           = 0 again, so v is marked dead a second time (live_versions one
//           too low) through freed memory.
// (The window predates reader slots, as two adjacent statements; the head
// pointer store and the slot scan now between them made it wide enough for
// the storm test to hit it at 500 iterations. The test hooks below park a
// reader and the writer at exactly these steps, so a unit test replays the
// interleaving deterministically.)
// With the bias the reader's release cannot take the count to zero: between
// the exchange and the fold the count is the units granted so far plus the
// bias, and at most in-flight of them are spent before being granted. The
// reader that sees the moved head has the bias ordered before its own
// writes to the count (the writer adds it before its release exchange; the
// reader's load is acquire), and anyone it hands the unit to is ordered
// after it. The fold grants exactly the in-flight units and removes the
// bias and the owner's unit in one step, so the count is exact again from
// then on, and zero only when every unit is given back.
//
// Reader slots (AcquirePin/ReleasePin; snapshots). A shared count makes
// every acquire and release a write to one cache line, so two threads
// taking snapshots at once slowed each other ~10x. Instead the chain keeps
// a small array of reader slots, each on its own cache lines; a thread
// always uses the same slot (a per-thread ticket modulo the slot count), so
// threads up to the slot count share nothing on the fast path. A slot is
// one atomic word: a version pointer (48 bits), a stale bit, and a pin
// count (15 bits). Acquiring reads the published head pointer (a line only
// Publish writes) and, if the thread's slot holds that version, adds a pin
// with one CAS on the slot word; releasing removes the pin with one CAS on
// the same word. Everything else (the slot holds another version, the pin
// count is full) takes a direct reference and then tries to install it in
// the slot; if the slot is pinned on an older version, the snapshot keeps
// the direct reference (ReaderPin::slot == kNoSlot). So while one snapshot
// of an older version stays pinned in a slot, every later acquire on that
// slot's threads takes the slow path (two writes to lines the writer also
// writes), until that snapshot is released: a thread that keeps a
// long-lived snapshot should take its short-lived ones on another thread
// (review finding, left as is: re-slotting would need a second word per
// slot). Local invariants:
//  version.4 A slot word holding version v owns exactly one unit of v. Only
//      the thread whose CAS takes the word away from v (emptying it, or
//      installing another version) gets that unit, and drops it.
//  version.5 A slot's version changes only while its pin count is zero.
//      Hence while a snapshot's pin on slot s is counted, s holds the
//      snapshot's version and its unit keeps that version alive.
//  version.6 No superseded version stays in a slot unless pinned: after
//      Publish(v) returns, every slot holding a version other than v has
//      pins > 0 and the stale bit set, or is installed by an acquire still
//      in progress, which marks it stale itself before returning if v is
//      already published. The last unpin of a stale slot empties it and
//      drops its unit (version.4). So a slot delays no reclamation beyond
//      the snapshots pinning it.
// Proof of version.6. Publish stores the new head pointer, then scans every
// slot: a slot holding an older version with no pins is emptied (CAS), one
// with pins is marked stale (CAS). An install is a CAS on the slot word
// followed by a load of the head pointer. Store/CAS and the loads after
// them are sequentially consistent, so either the scan sees the install
// (and empties or marks the slot), or the installer sees the new head (and
// marks the slot stale while its own pin keeps the word's version fixed,
// version.5). A stale word never loses its bit except by being emptied: a
// pin or unpin CAS copies the bit, the scan and installs skip or never see
// a stale word with zero pins, because the CAS that would take the last pin
// from a stale word empties it instead. The fast path needs no check: its
// CAS succeeds only if the word still holds the head it read, so the
// snapshot is of a version that was the head during the call, and the
// scan that follows any later publication sees the pin. Shutdown runs the
// same scan with no head, so every slot is emptied or left stale, and the
// last unpin of each drops the unit that lets the chain delete itself.
// Lifetime: a thread touches a slot only while it holds a pin there or is
// the writer; both keep a version, and so the chain, alive (the chain is
// deleted only when every version is dead, see below).
//
// Layout: the head pointer readers load is alone on its lines; each slot is
// alone on its lines; the writer's own fields (head word, statistics,
// mutex, account) follow on lines of their own. kReaderLine is 128 bytes
// because x86 prefetches lines in adjacent pairs.
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
// so all of them are dead (version.2: dead is final; a slot holds a unit,
// version.4, so no version held by a slot is dead). The detaching thread
// owns the list from then on and frees it after dropping the mutex: nobody
// else can reach it, so freeing needs no lock.
//
// Readers never block the writer for longer than a few pointer moves: the
// mutex guards only linking (Publish), marking and detaching; memory is
// freed outside it, and at most kDetachChunk versions are detached per hold
// of the mutex. One thread sweeps at a time (sweeping_): it detaches a
// chunk, frees it without the mutex, and takes the mutex again for the
// next, until the oldest version is live. A version that dies while a sweep
// is under way is only marked: the sweeper's next look finds it, as its
// last look and its leaving (sweeping_ back to 0) are one critical section.
// So a reader that releases a snapshot held across a million versions
// frees them all on its own thread, a chunk per hold, and the writer's
// Publish and fold wait for one chunk's pointer moves at most (found by
// review: the whole backlog was detached in one hold). The sweeper also
// frees what dies while it sweeps (the writer's folds, other readers'
// releases), so a Release may return only once freeing has caught up with
// the writer: freeing a version costs less than publishing it, so it does,
// but not in a bound fixed when the Release began (review, left as is: a
// sweep capped at its start would leave later deaths to the writer). The chain is
// deleted only by the sweeper that finds every version unlinked after
// Shutdown, so no thread is still freeing through account_ when it goes. Statistics are counters kept
// at Publish and at free, read without the mutex. Both are checked by
// structure: the mutex records its holder and how often it was taken
// (TEST_ hooks), and a test counts the frees made while it is held.
//
// Thread safety: Acquire/Release/AcquirePin/ReleasePin/Stats from any
// thread (a pin may be released on another thread than took it); Publish, NewVersion,
// Discard, RollBack and head() from the writer thread only; Shutdown once,
// after the writer has stopped.
#ifndef QUIVER_STORAGE_VERSION_H_
#define QUIVER_STORAGE_VERSION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

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
  // An abandoned version's private blocks (Abandon): freed once each when
  // it is destroyed, whether it still reaches them or not.
  storage::GroupBlocks tracked_;

 public:
  storage::VersionChain* chain() const { return chain_; }
};

}  // namespace quiver::internal

namespace quiver::storage {

using internal::Version;

// A snapshot's claim on a version: a pin on reader slot `slot`, or a direct
// reference (slot == kNoSlot). Give it back with ReleasePin, on any thread.
struct ReaderPin {
  static constexpr std::uint32_t kNoSlot = UINT32_MAX;
  const Version* version = nullptr;
  std::uint32_t slot = kNoSlot;
};

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
  // A number no other chain of this process has had, nor will: with a
  // version's sequence number it names that version's contents, where its
  // address may be reused by a later version once it is freed.
  std::uint64_t id() const { return id_; }

  // A new direct reference on the current version. Lock-free; writes the
  // shared head word, so for rare, internal use (snapshots use AcquirePin).
  const Version* Acquire();
  // Drops a reference from Acquire.
  void Release(const Version* v);

  // A claim on the current version through the calling thread's reader
  // slot: lock-free, and on the fast path one CAS on a line no other thread
  // of the first slot-count threads writes.
  ReaderPin AcquirePin();
  // Gives back a claim from AcquirePin, on any thread.
  void ReleasePin(ReaderPin pin);

  // Writer: the current version (the owner's reference keeps it alive).
  const Version* head() const { return writer_head_; }
  // Writer: a version to build, starting as a copy of head(); its blocks
  // retired during the build go to `ctx->retired` (set here).
  Version* NewVersion(MutationContext* ctx);
  // Writer: makes `v` (from NewVersion) current. `same_contents`: `v`
  // changes only the layout (a Graph::Compact step), and keeps the current
  // version's sequence number (invariant 3); otherwise its number is higher.
  void Publish(Version* v, bool same_contents = false);
  // Writer: forgets a version from NewVersion that changed nothing.
  void Discard(Version* v);
  // Writer: undoes a version from NewVersion built with `ctx` (ctx.blocks
  // set), half-built or not: frees exactly the group's private blocks and
  // private intern tables, forgets its retire list (those blocks are the
  // head's, still in use) and deletes `v`. The head is untouched, and the
  // next group may build on it. Allocates nothing, never throws.
  void RollBack(Version* v, MutationContext& ctx);
  // Writer: gives up a version from NewVersion that will never be
  // published, whole or half-built: replay's (recovery, the change feed's
  // catch-up), which edits one version in place and has no rollback. Its
  // blocks are freed with the chain: the final sweep destroys what the
  // abandoned version reaches plus what it retired, instead of the head.
  // `tracked` is the record of the blocks replay allocated and still uses
  // (its ctx.blocks), taken over here: the sweep frees each of them once,
  // after the rest, whether the version still reaches it or not (a batch
  // that threw part-way can leave a block built for a place it never
  // reached, or a private block linked twice). Such a version must have
  // retired in free-now mode (RetireList::FreeOnAdd) while a batch could
  // throw. At most once per chain; never throws.
  void Abandon(Version* v, GroupBlocks tracked = {});

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
  // How many AcquirePin calls took a direct reference (the slow path), so a
  // test can check that repeated pins of an unchanged head take none.
  std::uint64_t TEST_slow_pins() const { return slow_pins_.load(std::memory_order_relaxed); }
  // The reader slot the calling thread pins, and the number of slots.
  std::uint32_t TEST_ThisThreadSlot() const;
  std::uint32_t TEST_slot_count() const { return slot_mask_ + 1; }
  // The most pins one slot word counts; more snapshots on it take direct
  // references.
  static std::uint64_t TEST_max_pins() { return kMaxPins; }
  // Address ranges of the fields readers write on the fast path (the
  // slots), of the head pointer they read, and of the fields the writer
  // writes, so a test can check they share no cache line.
  struct FieldSpan {
    const void* begin;
    std::size_t bytes;
  };
  std::vector<FieldSpan> TEST_ReaderWrittenFields() const;
  FieldSpan TEST_HeadPointerField() const { return {&head_, sizeof(head_)}; }
  std::vector<FieldSpan> TEST_WriterWrittenFields() const;
  // Called, if set, inside the two steps version.7 is about: in Acquire
  // after the reader has taken its unit and before it checks whether the
  // head moved, and in Publish after the head word's exchange (and the slot
  // scan) and before the fold. A test parks a reader and the writer there
  // to replay the interleaving deterministically. Set before any thread
  // uses the chain; never in production (one well-predicted branch each).
  void TEST_SetAcquireHook(std::function<void()> hook) { test_acquire_hook_ = std::move(hook); }
  void TEST_SetFoldHook(std::function<void()> hook) { test_fold_hook_ = std::move(hook); }
  // Called by the sweeping thread after it freed a chunk, before it looks
  // for the next (no lock held).
  void TEST_SetSweepHook(std::function<void()> hook) { test_sweep_hook_ = std::move(hook); }
  // The most versions one hold of the mutex has detached.
  std::uint64_t TEST_max_detached() {
    ChainLock lock(this);
    return max_detached_;
  }
  // Sweeps started (a thread found dead versions to detach with no sweep
  // under way).
  std::uint64_t TEST_sweeps() {
    ChainLock lock(this);
    return sweeps_;
  }
  static constexpr std::size_t kDetachChunk = 256;

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
  // Added to the old head's count for the span of a publication, more than
  // the in-flight count can hold (16 bits), so that count stays positive
  // (version.7).
  static constexpr std::int64_t kFoldBias = std::int64_t{1} << 32;

  // Reader slots. Word: Version* (bits 0-47) | stale (bit 48) | pins << 49.
  static constexpr std::size_t kReaderLine = 128;
  static constexpr std::uint32_t kMaxSlots = 64;
  static constexpr std::uint64_t kStaleBit = std::uint64_t{1} << 48;
  static constexpr int kPinShift = 49;
  static constexpr std::uint64_t kPinUnit = std::uint64_t{1} << kPinShift;
  static constexpr std::uint64_t kMaxPins = (std::uint64_t{1} << (64 - kPinShift)) - 1;
  struct alignas(kReaderLine) ReaderSlot {
    std::atomic<std::uint64_t> word{0};
  };
  static const Version* SlotVersion(std::uint64_t w) {
    return reinterpret_cast<const Version*>(w & kPointerMask);
  }
  static std::uint64_t Pins(std::uint64_t w) { return w >> kPinShift; }

  // AcquirePin when the fast path does not apply.
  ReaderPin AcquirePinSlow(std::uint32_t s);
  // Writer (Publish, Shutdown): empties every slot holding a version other
  // than `head` with no pins and marks the pinned ones stale (version.6).
  void RetireSlots(const Version* head);

  // Marks `v` dead, detaches what no live version can reach and frees it
  // outside the mutex; may delete the chain, so callers touch nothing of it
  // afterwards.
  void OnDead(Version* v);
  // Under mu_: unlinks up to kDetachChunk dead versions from the old end
  // (version.3); returns them linked through newer_, each holding the list
  // to free.
  Version* DetachDead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees what DetachDead returned. No lock held.
  void FreeDetached(Version* garbage);

  // Read by every AcquirePin: head_ is written only by Publish and
  // Shutdown, slot_mask_ (slot count - 1) only at construction.
  alignas(kReaderLine) std::atomic<const Version*> head_;
  const std::uint32_t slot_mask_;
  // Written by readers on the fast path: slot s by the threads whose ticket
  // is s modulo the slot count.
  alignas(kReaderLine) ReaderSlot slots_[kMaxSlots];

  // Written by the writer (and, for head_word_, by slow-path acquires).
  alignas(kReaderLine) std::atomic<std::uint64_t> head_word_;  // Version* | in-flight acquisitions << 48
  const Version* writer_head_;                                 // writer thread only
  base::MemoryAccount account_;
  const std::uint64_t id_;
  std::atomic<std::uint64_t> slow_pins_{0};  // test hook: AcquirePin calls that took the slow path
  std::function<void()> test_acquire_hook_;  // test hooks (TEST_SetAcquireHook, TEST_SetFoldHook)
  std::function<void()> test_fold_hook_;

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
  int sweeping_ ABSL_GUARDED_BY(mu_) = 0;                // 1 while a thread sweeps, else 0
  std::uint64_t max_detached_ ABSL_GUARDED_BY(mu_) = 0;  // test hook: most versions detached in one hold
  std::uint64_t sweeps_ ABSL_GUARDED_BY(mu_) = 0;        // test hook: sweeps started
  std::function<void()> test_sweep_hook_;                // test hook: between a sweep's chunks
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_VERSION_H_
