// RetireList, GroupBlocks and MutationContext: how a commit group hands
// superseded memory to reclamation, and how it knows which blocks are its own.
//
// While the writer builds version N+1 it never frees a block that version N
// can reach; it records the block in N+1's retire list instead. The list is
// freed once no snapshot of a version <= N remains (see version.h).
//
// Blocks allocated while the group is built are private to it: no published
// version can reach them, so the writer changes them in place and frees them
// at once when they are superseded (this is what keeps a group O(changed
// elements) rather than O(operations x element size)). Radix nodes, group
// directories and intern tables carry their birth epoch; every other block
// is recognised through the group's GroupBlocks, which records every block
// the group allocated. The same record is what a failed group frees on
// rollback: exactly the private blocks, never a published one (the retire
// list holds only published blocks and is dropped unfreed).
#ifndef QUIVER_STORAGE_RETIRE_LIST_H_
#define QUIVER_STORAGE_RETIRE_LIST_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "base/reserve.h"
#include "base/safe_hash.h"

namespace quiver::storage {

// While one lives on a thread, RetireList::FreeAll on that thread frees in
// slices of kPacedFreeEntries retire-list entries and rests after each as
// long as the slice's frees took (kPacedFreeRest at least): for the backlog
// an online index build's pinned snapshot held back, which CreateIndex
// releases off the writer's thread.
//
// Why: mimalloc hands a block freed by another thread back to its owner
// (the writer) on a list the owner walks, a cache miss per block, at its
// next allocation slow path, and the first free into each full page queues
// that page for the owner at once. Freed in one burst, the ~100K blocks of
// a 10M-entry build's backlog made one of the writer's commits wait 10-25
// ms (docs/impl.md, "Online index builds"); paced, each slow path finds
// only what was freed since the last. Only the thread that frees the
// backlog paces it: when an older snapshot than the build's is still held,
// that snapshot's release frees the backlog, unpaced.
inline constexpr std::size_t kPacedFreeEntries = 256;
inline constexpr std::chrono::microseconds kPacedFreeRest{20};

// The pacing state of one thread. A slice runs across retire lists (a
// backlog is thousands of versions' lists, most of a few entries) and
// counts only time spent freeing, not the time between two FreeAll calls.
struct FreePacer {
  bool on = false;
  std::size_t in_slice = 0;                    // entries freed since the last rest
  std::chrono::steady_clock::duration busy{};  // time those frees took
};
inline thread_local FreePacer this_thread_free_pacer;

class ScopedPacedFrees {
 public:
  // The outermost scope starts a fresh slice.
  ScopedPacedFrees() : was_(std::exchange(this_thread_free_pacer.on, true)) {
    if (!was_) {
      this_thread_free_pacer.in_slice = 0;
      this_thread_free_pacer.busy = {};
    }
  }
  ~ScopedPacedFrees() { this_thread_free_pacer.on = was_; }
  ScopedPacedFrees(const ScopedPacedFrees&) = delete;
  ScopedPacedFrees& operator=(const ScopedPacedFrees&) = delete;

 private:
  bool was_;
};

class RetireList {
 public:
  using FreeFn = void (*)(void* block, base::MemoryAccount* account);

  RetireList() = default;
  // Moves the entries; the free-now setting stays with each list.
  RetireList(RetireList&& other) noexcept
      : entries_(std::move(other.entries_)), bytes_(std::exchange(other.bytes_, 0)) {}
  RetireList& operator=(RetireList&& other) noexcept {
    entries_ = std::move(other.entries_);
    bytes_ = std::exchange(other.bytes_, 0);
    return *this;
  }

  // Frees blocks from MemoryAccount::Allocate.
  static void FreeBlock(void* block, base::MemoryAccount* account) { account->Free(block); }

  // May throw std::bad_alloc (the list grows); `block` is then not recorded.
  // In free-now mode frees `block` at once and never throws.
  void Add(void* block, FreeFn fn = &FreeBlock) {
    if (block == nullptr) return;
    if (free_now_ != nullptr) {
      fn(block, free_now_);
      return;
    }
    entries_.push_back({block, fn});
    if (fn == &FreeBlock) bytes_ += base::UsableSize(block);
  }
  // Makes room for `more` entries, so that the next `more` Adds cannot
  // throw. May throw std::bad_alloc (nothing is then recorded). Grows the
  // list geometrically, as Add does: std::vector::reserve gives exactly
  // what it is asked, and a caller reserving a few entries at a time (a
  // compaction step, leaf by leaf) would copy the whole list each time.
  void Reserve(std::size_t more) {
    if (free_now_ == nullptr) base::ReserveAmortized(entries_, entries_.size() + more);
  }
  // Free-now mode (`account` non-null; null turns it off): Add frees each
  // block through `account` at once instead of recording it. Only for a
  // version no reader can ever see (replay's, recovery.cc and
  // feed/log_replay.cc), where nothing needs a superseded block to outlive
  // the batch: every unlink is then followed by a retire that cannot throw,
  // so a batch that throws part-way leaves no block both linked and
  // retired, and none unlinked and unrecorded (VersionChain::Abandon frees
  // such a version whole). Replay also holds no superseded block until its
  // end.
  void FreeOnAdd(base::MemoryAccount* account) { free_now_ = account; }
  bool empty() const { return entries_.empty(); }
  // Allocator bytes of the blocks freed by FreeBlock (others not counted);
  // kept as the list grows, so reading it costs nothing.
  std::size_t bytes() const { return bytes_; }
  std::size_t size() const { return entries_.size(); }

  // Frees every entry; the list is empty afterwards. Paced on a thread
  // that holds a ScopedPacedFrees.
  void FreeAll(base::MemoryAccount* account) {
    FreePacer& pacer = this_thread_free_pacer;
    if (!pacer.on) {
      for (const Entry& e : entries_) e.fn(e.block, account);
    } else {
      auto since = std::chrono::steady_clock::now();
      for (const Entry& e : entries_) {
        e.fn(e.block, account);
        if (++pacer.in_slice < kPacedFreeEntries) continue;
        const auto now = std::chrono::steady_clock::now();
        pacer.busy += now - since;
        std::this_thread::sleep_for(
            std::max<std::chrono::steady_clock::duration>(pacer.busy, kPacedFreeRest));
        pacer.in_slice = 0;
        pacer.busy = {};
        since = std::chrono::steady_clock::now();
      }
      pacer.busy += std::chrono::steady_clock::now() - since;
    }
    Forget();
  }
  // Empties the list without freeing anything (a rolled-back group: its
  // entries are published blocks that the head still reaches).
  void Forget() {
    entries_.clear();
    entries_.shrink_to_fit();
    bytes_ = 0;
  }

 private:
  struct Entry {
    void* block;
    FreeFn fn;
  };
  std::vector<Entry> entries_;
  std::size_t bytes_ = 0;
  base::MemoryAccount* free_now_ = nullptr;  // free-now mode (FreeOnAdd)
};

// The blocks a commit group has allocated and not yet freed: private to the
// group until its version is published.
class GroupBlocks {
 public:
  // May throw std::bad_alloc; `block` is then not recorded, and the record
  // is as it was (base::SafeFlatHashSet), so a rollback can still free it.
  void Add(void* block) { blocks_.insert(block); }
  // Records that `link`, a child pointer inside a published node past what
  // any published version reads, was set to a private block (RadixTable::
  // Append). Rollback resets it to null, so no published node is left
  // pointing at a freed block. May throw std::bad_alloc before recording.
  void AddLink(void** link) { links_.push_back(link); }
  // Forgets `block`; false if it is not the group's.
  bool Remove(void* block) { return blocks_.erase(block) != 0; }
  bool Contains(const void* block) const { return blocks_.contains(const_cast<void*>(block)); }
  std::size_t size() const { return blocks_.size(); }
  // Room for `n` more blocks without growing. Throws std::bad_alloc,
  // leaving the record as it was.
  void Reserve(std::size_t n) { blocks_.Reserve(n); }
  // Rollback: unhooks every recorded link, then frees every recorded block.
  void FreeAll(base::MemoryAccount* account) {
    for (void** link : links_) *link = nullptr;
    FreeBlocks(account);
  }
  // Frees every recorded block, leaving the links alone (they may lie in
  // blocks already freed: an abandoned version's, VersionChain::Abandon).
  void FreeBlocks(base::MemoryAccount* account) {
    for (void* b : blocks_) account->Free(b);
    Clear();
  }
  bool empty() const { return blocks_.size() == 0; }
  // For MemoryAccount::HoldFrees: whether `p` is one of `self`'s blocks.
  static bool Holds(const void* self, const void* p) {
    return static_cast<const GroupBlocks*>(self)->Contains(p);
  }
  // Publication: the blocks now belong to the version.
  void Clear() {
    blocks_.clear();
    links_.clear();
  }

 private:
  base::SafeFlatHashSet<void*> blocks_;
  std::vector<void**> links_;
};

// What every mutation of a version under construction needs.
struct MutationContext {
  std::uint64_t epoch;           // nodes, directories and tables born in it are private to the group
  base::MemoryAccount* account;  // where new blocks come from
  RetireList* retired;           // where superseded published blocks go
  // The group's private blocks, or null when nothing is tracked (the
  // checkpoint loader and recovery: a failure there frees the whole chain,
  // and every untracked block counts as published, so it is copied, never
  // edited in place).
  GroupBlocks* blocks = nullptr;

  // A block of at least `bytes` from `account`, recorded as private. Throws
  // std::bad_alloc, leaking nothing.
  void* Allocate(std::size_t bytes) { return Record(account->Allocate(bytes)); }
  // Allocate for a size base::GoodAllocationSize returned (AllocateGood).
  void* AllocateGood(std::size_t bytes) { return Record(account->AllocateGood(bytes)); }
  // Records a block just allocated as private (freeing it if that throws).
  void* Record(void* p) {
    if (blocks != nullptr) {
      try {
        blocks->Add(p);
      } catch (...) {
        account->Free(p);
        throw;
      }
    }
    return p;
  }
  // Frees `block`, which this context just allocated and nothing reaches
  // yet (an operation undone part-way, say because its retire threw).
  // Never throws.
  void FreeUnlinked(void* block) {
    if (blocks != nullptr) blocks->Remove(block);
    account->Free(block);
  }
  // True if `block` was allocated by this group (and may be written).
  bool IsPrivate(const void* block) const { return blocks != nullptr && blocks->Contains(block); }
  // `block` (from Allocate, or published) is no longer reachable from the
  // version being built: a private block is freed now, a published one
  // retired. May throw std::bad_alloc before changing anything.
  void Retire(void* block) {
    if (block == nullptr) return;
    if (blocks != nullptr && blocks->Remove(block)) {
      account->Free(block);
      return;
    }
    retired->Add(block);
  }
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_RETIRE_LIST_H_
