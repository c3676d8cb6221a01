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
#include <memory>
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
  // While set (`held` non-null), Free leaves alone every block that
  // held(context, block) is true of: freeing a graph that may reach a
  // block twice, or not at all, frees such blocks afterwards from a record
  // of them, once each (VersionChain::Abandon). Set and cleared by the one
  // thread that frees through the account meanwhile.
  void HoldFrees(bool (*held)(const void* context, const void* block), const void* context) {
    held_ = held;
    held_context_ = context;
  }

 private:
  std::atomic<std::int64_t> allocated_{0};
  bool (*held_)(const void*, const void*) = nullptr;
  const void* held_context_ = nullptr;
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

// --- Huge pages

// Whether engine memory is asked for on huge pages: mimalloc's large OS
// pages option, which Quiver turns on before main unless the environment
// sets MIMALLOC_LARGE_OS_PAGES (0 turns it off) or the system keeps hugetlb
// pages (ChooseAllocatorSettings). mimalloc then advises its segments of
// whole 2 MiB MADV_HUGEPAGE, and where the kernel serves transparent huge
// pages ("madvise" or "always" in /sys/kernel/mm/transparent_hugepage/
// enabled) a fresh 2 MiB costs one page fault instead of 512. On the
// reference VM a 4 KiB fault costs about 11 us, so a 100M-edge load spent
// most of its time in them. The option is the process's: Debian's mimalloc
// serves every malloc of the process. MappedArray users pass this as their
// `huge_pages`. Always false in the builds that do not use mimalloc (the
// sanitizer presets).
bool EngineMemoryOnHugePages();

// Whether MemoryAccount::Free discards large blocks in steps
// (DiscardPagesInSteps): not when mimalloc may hand out hugetlb pages,
// which a 2 MiB step could split.
bool StepDiscardsEngineBlocks();

// What the process finds at start, and what Quiver makes of it: pure, for
// tests; the library applies it once (base/memory.cc).
struct AllocatorInputs {
  bool environment_sets_large_pages = false;  // MIMALLOC_LARGE_OS_PAGES is set, to anything
  bool large_pages_enabled = false;           // mimalloc's option as the environment left it
  bool system_has_hugetlb_pages = false;      // a hugetlb pool, reserved or on overcommit
  bool reserves_huge_pages = false;           // MIMALLOC_RESERVE_HUGE_OS_PAGES(_AT)
};
struct AllocatorSettings {
  bool enable_large_pages = false;  // Quiver turns mimalloc's large OS pages on
  bool huge_pages = false;          // then: EngineMemoryOnHugePages
  bool step_discards = true;        // then: StepDiscardsEngineBlocks
};
AllocatorSettings ChooseAllocatorSettings(const AllocatorInputs& in);

// --- Giving large blocks back without stalling other threads

// A scratch array this large or larger has its pages discarded in steps
// before it is freed (SteppedReleaseAllocator).
inline constexpr std::size_t kStepDiscardMinBytes = std::size_t{4} << 20;
// An engine block this large or larger does too (MemoryAccount::Free):
// mimalloc keeps smaller blocks in its segments, reused warm, and gives
// back only larger ones with one munmap each.
inline constexpr std::size_t kAccountDiscardMinBytes = std::size_t{32} << 20;
// One step: its length and its alignment (a transparent huge page's, so
// that no step splits one).
inline constexpr std::size_t kDiscardStepBytes = std::size_t{2} << 20;

// Discards the pages of [p, p + bytes) that lie in whole kDiscardStepBytes
// aligned steps (MADV_DONTNEED), one step at a time; those bytes read zero
// afterwards, the ones outside keep their values. Call it on a block about
// to be freed. Blocks below kStepDiscardMinBytes are left alone.
//
// Why: the allocator gives a large block back with one munmap, which zaps
// every page holding the process's mmap lock, and a thread that maps memory
// meanwhile (the writer, when mimalloc takes a fresh segment) waits for all
// of it: 21 ms for 320 MB on the reference VM, and commits beside an index
// build stalled 6-31 ms when the build freed its sort arrays. Each madvise
// holds the lock for one step, a waiting mapper goes between two, and the
// munmap that follows finds at most the two partial steps at the ends.
// Aligned steps also keep clear of a kernel bug (5.18 to 6.7) that rounded
// a hugetlb range's end up to its huge page; MemoryAccount::Free does not
// discard when mimalloc may use hugetlb pages (StepDiscardsEngineBlocks).
void DiscardPagesInSteps(void* p, std::size_t bytes);

// Tests: `fn` (null for none) is called with each range DiscardPagesInSteps
// is given (at or above the threshold), before it discards.
void SetDiscardObserverForTesting(void (*fn)(void* p, std::size_t bytes));

// A std allocator whose large blocks are given back with
// DiscardPagesInSteps: for the scratch arrays of work that runs beside the
// writer (index builds, sorts), off the writer's thread. Memory comes from
// operator new.
template <typename T>
struct SteppedReleaseAllocator {
  using value_type = T;
  SteppedReleaseAllocator() = default;
  template <typename U>
  SteppedReleaseAllocator(const SteppedReleaseAllocator<U>&) {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) >= kStepDiscardMinBytes) DiscardPagesInSteps(p, n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const SteppedReleaseAllocator<U>&) const {
    return true;
  }
};

// --- Large arrays on their own mapping

// MappedArray's block: `*mapped` says which of the two ways it came from.
void* AllocateMappedArrayBytes(std::size_t bytes, bool huge_pages, bool* mapped);
void FreeMappedArrayBytes(void* p, std::size_t bytes, bool mapped);

// A zero-filled array of `size()` trivially copyable values, tens of
// megabytes or more of working memory: its own anonymous mapping, aligned
// to 2 MiB, whose pages take memory only where written. With `huge_pages`
// it is advised MADV_HUGEPAGE before its first touch, so that where the
// kernel serves transparent huge pages (the "madvise" mode Debian ships)
// it takes one page fault per 2 MiB instead of 512 (a 4 KiB fault cost
// about 11 us on the reference VM), and a random read misses the TLB far
// less: a 40 MB table spans 10,240 small pages and 20 huge ones, and the
// L2 TLB holds about 2,000 entries. (Only for an array that will be
// written densely: a write then takes a whole 2 MiB page.) Users: an
// import's id map, read at random; the checkpoint loader's routing
// buffers, written once in full. Below kStepDiscardMinBytes it is zeroed
// memory from calloc. Given back with DiscardPagesInSteps, then munmap
// (see there why). Not counted in a MemoryAccount: working memory. Throws
// std::bad_alloc (and fails under ArmAllocationFaults like an engine
// block). Under AddressSanitizer the mapping's tail past size() is
// poisoned.
//
//   MappedArray<std::uint32_t> t(n, /*huge_pages=*/true);  // t[0 .. n) are zero
//   t[i] = v;
template <typename T>
class MappedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  MappedArray() = default;
  explicit MappedArray(std::size_t n, bool huge_pages = false) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T) / 2) throw std::bad_alloc();
    data_ = static_cast<T*>(AllocateMappedArrayBytes(n * sizeof(T), huge_pages, &mapped_));
    size_ = n;
  }
  ~MappedArray() { FreeMappedArrayBytes(data_, size_ * sizeof(T), mapped_); }
  MappedArray(MappedArray&& other) noexcept { swap(other); }
  MappedArray& operator=(MappedArray&& other) noexcept {
    MappedArray(std::move(other)).swap(*this);
    return *this;
  }
  void swap(MappedArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(mapped_, other.mapped_);
  }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
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
