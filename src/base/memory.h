// MemoryAccount: the allocator every engine structure goes through.
//
// Blocks come from mimalloc; the account adds each block's usable size (the
// allocator's own figure, bin rounding included) on allocation and subtracts
// it on free, so GetMemoryStats reports what the structures really occupy.
//
// Thread safety: Allocate and Free may be called from any thread; the
// counters are relaxed atomics (exact once all threads have synchronised).
//
// Tests can make allocations fail (ArmAllocationFaults): Allocate consults
// ShouldFailAllocation, and so does the test binaries' operator new, so
// every allocation of the armed thread counts, engine block or not. Tests
// can also watch every Free (SetFreeObserver), e.g. to check that no block
// is freed under a lock the writer needs.
#ifndef QUIVER_BASE_MEMORY_H_
#define QUIVER_BASE_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

namespace quiver::base {

class MemoryAccount {
 public:
  // Returns at least `bytes` bytes aligned to 16; throws std::bad_alloc
  // when the allocator fails.
  void* Allocate(std::size_t bytes);
  // Allocate for a size GoodAllocationSize returned (the whole bin): the
  // same block and the same count, but for small blocks from mimalloc, whose
  // usable size is then exactly `bytes`, without asking the allocator for
  // it (mi_usable_size was 3 % of a checkpoint load's CPU: one call per
  // adjacency array).
  void* AllocateGood(std::size_t bytes);
  // Frees a block from Allocate or AllocateGood; null is ignored.
  void Free(void* p);
  // Bytes currently allocated through this account.
  std::int64_t allocated_bytes() const { return allocated_.load(std::memory_order_relaxed); }
  // Moves `other`'s count into this account: blocks a worker allocated
  // through a private account (no shared counter to contend on) become
  // this account's, to be freed through it. `other` must be quiescent.
  void Absorb(MemoryAccount& other) {
    allocated_.fetch_add(other.allocated_.exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
  }

 private:
  std::atomic<std::int64_t> allocated_{0};
};

// Room for `capacity()` values of a trivially copyable `T` in one block of a
// MemoryAccount: working memory that counts in the account (and so in
// MemoryStats) while held and fails like any engine block. The values are
// left unwritten (no value-initialisation). Give it back with Release while
// the account is alive (the destructor releases too).
//
//   AccountBuffer<Entry> buf;
//   buf.Reserve(account, n);  // throws std::bad_alloc
//   Entry* p = buf.data();    // p[0 .. n) are the caller's to write
//   buf.Release();
template <typename T>
class AccountBuffer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  static_assert(alignof(T) <= 16);

 public:
  AccountBuffer() = default;
  ~AccountBuffer() { Release(); }
  AccountBuffer(const AccountBuffer&) = delete;
  AccountBuffer& operator=(const AccountBuffer&) = delete;

  // Room for at least `n` values from `account`; the values held are
  // dropped. On std::bad_alloc the buffer holds nothing.
  void Reserve(MemoryAccount* account, std::size_t n) {
    if (n <= capacity_ && account == account_) return;
    Release();
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_alloc();
    data_ = static_cast<T*>(account->Allocate(n * sizeof(T)));
    account_ = account;
    capacity_ = n;
  }
  void Release() {
    if (data_ != nullptr) account_->Free(data_);
    data_ = nullptr;
    capacity_ = 0;
  }
  void swap(AccountBuffer& other) noexcept {
    std::swap(account_, other.account_);
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }
  T* data() const { return data_; }
  std::size_t capacity() const { return capacity_; }

 private:
  MemoryAccount* account_ = nullptr;
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// --- Allocation failure injection (tests)

enum class AllocationFaultMode {
  kOnce,        // only the n-th allocation fails
  kFromThenOn,  // the n-th and every later one fail
};

// Arms failure injection for `thread`: counting from 1 at this call, its
// n-th allocation (MemoryAccount::Allocate, or an operator new that asks
// ShouldFailAllocation) fails with std::bad_alloc, and in kFromThenOn mode
// every later one too. Other threads are never affected. One arming at a
// time, from one test thread.
void ArmAllocationFaults(std::thread::id thread, std::uint64_t n, AllocationFaultMode mode);
// Disarms; returns how many allocations of the armed thread were counted.
std::uint64_t DisarmAllocationFaults();
// True if the calling thread's current allocation must fail. One relaxed
// load when nothing is armed.
bool ShouldFailAllocation();

// --- Free observation (tests)

// Called with each block MemoryAccount::Free is about to free, on the
// freeing thread. Must not allocate or free through an account.
using FreeObserver = void (*)(void* block);
// Installs `fn` for every account (null: none, the default). One relaxed
// load per Free when none is installed. Install and remove it while no
// other thread frees, or accept that a racing Free may miss the change.
void SetFreeObserver(FreeObserver fn);

// The usable size of a block from MemoryAccount::Allocate.
std::size_t UsableSize(void* p);

// The size the allocator would really hand out for a request of `bytes`.
std::size_t GoodAllocationSize(std::size_t bytes);

}  // namespace quiver::base

#endif  // QUIVER_BASE_MEMORY_H_
