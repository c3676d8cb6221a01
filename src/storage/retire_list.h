// RetireList and MutationContext: how a commit group hands superseded
// memory to reclamation.
//
// While the writer builds version N+1 it never frees a block that version N
// can reach; it records the block in N+1's retire list instead. The list is
// freed once no snapshot of a version <= N remains (see version.h).
//
// Blocks born during the group being built carry the group's epoch; they are
// reachable from no published version, so the writer may change them in
// place (this is what keeps a group O(changed elements) rather than
// O(changed operations)).
#ifndef QUIVER_STORAGE_RETIRE_LIST_H_
#define QUIVER_STORAGE_RETIRE_LIST_H_

#include <cstdint>
#include <vector>

#include "base/memory.h"

namespace quiver::storage {

class RetireList {
 public:
  using FreeFn = void (*)(void* block, base::MemoryAccount* account);

  // Frees blocks from MemoryAccount::Allocate.
  static void FreeBlock(void* block, base::MemoryAccount* account) { account->Free(block); }

  void Add(void* block, FreeFn fn = &FreeBlock) {
    if (block != nullptr) entries_.push_back({block, fn});
  }
  bool empty() const { return entries_.empty(); }
  // Allocator bytes of the blocks freed by FreeBlock (others not counted).
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const Entry& e : entries_)
      if (e.fn == &FreeBlock) n += base::UsableSize(e.block);
    return n;
  }
  std::size_t size() const { return entries_.size(); }

  // Frees every entry; the list is empty afterwards.
  void FreeAll(base::MemoryAccount* account) {
    for (const Entry& e : entries_) e.fn(e.block, account);
    entries_.clear();
    entries_.shrink_to_fit();
  }

 private:
  struct Entry {
    void* block;
    FreeFn fn;
  };
  std::vector<Entry> entries_;
};

// What every mutation of a version under construction needs.
struct MutationContext {
  std::uint64_t epoch;           // blocks with this birth epoch are private to the group
  base::MemoryAccount* account;  // where new blocks come from
  RetireList* retired;           // where superseded published blocks go
};

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_RETIRE_LIST_H_
