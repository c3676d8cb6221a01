#include "base/memory.h"

#include <sys/mman.h>

#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

// QUIVER_USE_MIMALLOC=0 (the sanitizer presets) routes engine blocks through
// malloc so AddressSanitizer sees every one; the accounting is the same.
#if !defined(QUIVER_USE_MIMALLOC) || QUIVER_USE_MIMALLOC
#include <mimalloc.h>
#define QUIVER_MALLOC(n) mi_malloc(n)
#define QUIVER_FREE(p) mi_free(p)
#define QUIVER_USABLE_SIZE(p) mi_usable_size(p)
#define QUIVER_GOOD_SIZE(n) mi_good_size(n)
#else
#include <malloc.h>

#include <cstdlib>
#define QUIVER_MALLOC(n) std::malloc(n)
#define QUIVER_FREE(p) std::free(p)
#define QUIVER_USABLE_SIZE(p) malloc_usable_size(p)
#define QUIVER_GOOD_SIZE(n) (((n) + 15) & ~std::size_t{15})
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

namespace quiver::base {
namespace {

// Failure injection. `armed` is read first (acquire), so the other fields
// are those of the current arming; they are atomics because a thread that
// read a stale `armed` may still read them while a test re-arms.
std::atomic<bool> fault_armed{false};
std::atomic<std::thread::id> fault_thread{};
std::atomic<std::uint64_t> fault_count{0};
std::atomic<std::uint64_t> fault_at{0};
std::atomic<bool> fault_persistent{false};

std::atomic<FreeObserver> free_observer{nullptr};
std::atomic<void (*)(void*, std::size_t)> discard_observer{nullptr};

#if !defined(QUIVER_USE_MIMALLOC) || QUIVER_USE_MIMALLOC
// Whether the system keeps hugetlb pages, reserved or on overcommit, in its
// default pool or the 2 MiB one (which mimalloc's MAP_HUGETLB asks for).
bool SystemHasHugetlbPages() {
  for (const char* path : {"/proc/sys/vm/nr_hugepages", "/proc/sys/vm/nr_overcommit_hugepages",
                           "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
                           "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_overcommit_hugepages"}) {
    std::FILE* f = std::fopen(path, "r");
    if (f == nullptr) continue;
    unsigned long long n = 0;
    const bool read = std::fscanf(f, "%llu", &n) == 1;
    std::fclose(f);
    if (read && n > 0) return true;
  }
  return false;
}

// The settings, chosen and applied once: before main (the initializer
// below), or at the first call if something asks earlier.
const AllocatorSettings& Settings() {
  static const AllocatorSettings settings = [] {
    AllocatorInputs in;
    in.environment_sets_large_pages = std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr;
    in.large_pages_enabled = mi_option_is_enabled(mi_option_large_os_pages);
    in.reserves_huge_pages = mi_option_get(mi_option_reserve_huge_os_pages) > 0 ||
                             mi_option_get(mi_option_reserve_huge_os_pages_at) >= 0;
    in.system_has_hugetlb_pages = SystemHasHugetlbPages();
    const AllocatorSettings s = ChooseAllocatorSettings(in);
    if (s.enable_large_pages) mi_option_enable(mi_option_large_os_pages);
    return s;
  }();
  return settings;
}

[[maybe_unused]] const bool settings_applied_before_main = (Settings(), true);
#else
// Engine blocks come from malloc: nothing to choose (no huge pages asked
// for, discards in steps).
const AllocatorSettings& Settings() {
  static const AllocatorSettings none;
  return none;
}
#endif

}  // namespace

AllocatorSettings ChooseAllocatorSettings(const AllocatorInputs& in) {
  AllocatorSettings s;
  // With a hugetlb pool, mimalloc's large pages would come from it first
  // (MAP_HUGETLB): pinned, drained from what the system reserved for
  // others, and where a cgroup allows none, a SIGBUS at first touch. So
  // only where the system keeps none.
  s.enable_large_pages =
      !in.environment_sets_large_pages && !in.system_has_hugetlb_pages && !in.reserves_huge_pages;
  s.huge_pages = s.enable_large_pages || in.large_pages_enabled;
  // A 2 MiB step could split a 1 GiB hugetlb page (mimalloc's reserved
  // pages, or a system whose default size it is) or, on the kernels with the
  // hugetlb bug (memory.h), overrun one. Transparent huge pages are split
  // safely, and steps are aligned to them.
  s.step_discards = !in.reserves_huge_pages && !(s.huge_pages && in.system_has_hugetlb_pages);
  return s;
}

bool StepDiscardsEngineBlocks() { return Settings().step_discards; }

bool EngineMemoryOnHugePages() { return Settings().huge_pages; }

void SetFreeObserver(FreeObserver fn) { free_observer.store(fn, std::memory_order_release); }

void ArmAllocationFaults(std::thread::id thread, std::uint64_t n, AllocationFaultMode mode) {
  fault_armed.store(false, std::memory_order_release);
  fault_thread.store(thread, std::memory_order_relaxed);
  fault_count.store(0, std::memory_order_relaxed);
  fault_at.store(n, std::memory_order_relaxed);
  fault_persistent.store(mode == AllocationFaultMode::kFromThenOn, std::memory_order_relaxed);
  fault_armed.store(true, std::memory_order_release);
}

std::uint64_t DisarmAllocationFaults() {
  fault_armed.store(false, std::memory_order_release);
  return fault_count.load(std::memory_order_relaxed);
}

bool ShouldFailAllocation() {
  if (!fault_armed.load(std::memory_order_acquire)) return false;
  if (fault_thread.load(std::memory_order_relaxed) != std::this_thread::get_id()) return false;
  std::uint64_t c = fault_count.fetch_add(1, std::memory_order_relaxed) + 1;
  std::uint64_t at = fault_at.load(std::memory_order_relaxed);
  return fault_persistent.load(std::memory_order_relaxed) ? c >= at : c == at;
}

void* MemoryAccount::Allocate(std::size_t bytes) {
  if (ShouldFailAllocation()) throw std::bad_alloc();
  void* p = QUIVER_MALLOC(bytes);
  if (p == nullptr) throw std::bad_alloc();
  allocated_.fetch_add(static_cast<std::int64_t>(QUIVER_USABLE_SIZE(p)), std::memory_order_relaxed);
  return p;
}

void* MemoryAccount::AllocateGood(std::size_t bytes) {
#if !defined(QUIVER_USE_MIMALLOC) || QUIVER_USE_MIMALLOC
  // A small bin's good size is its block size, and a block's usable size is
  // its bin's block size (mimalloc 2; the assert checks it in Debug).
  if (bytes <= MI_SMALL_SIZE_MAX) {
    assert(mi_good_size(bytes) == bytes);
    if (ShouldFailAllocation()) throw std::bad_alloc();
    void* p = mi_malloc_small(bytes);
    if (p == nullptr) throw std::bad_alloc();
    assert(mi_usable_size(p) == bytes);
    allocated_.fetch_add(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
    return p;
  }
#endif
  return Allocate(bytes);
}

void MemoryAccount::Free(void* p) {
  if (p == nullptr) return;
  if (held_ != nullptr && held_(held_context_, p)) return;
  if (FreeObserver observe = free_observer.load(std::memory_order_relaxed); observe != nullptr) observe(p);
  const std::size_t bytes = QUIVER_USABLE_SIZE(p);
  allocated_.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
  if (bytes >= kAccountDiscardMinBytes && StepDiscardsEngineBlocks()) DiscardPagesInSteps(p, bytes);
  QUIVER_FREE(p);
}

void SetDiscardObserverForTesting(void (*fn)(void* p, std::size_t bytes)) {
  discard_observer.store(fn, std::memory_order_release);
}

void DiscardPagesInSteps(void* p, std::size_t bytes) {
  if (bytes < kStepDiscardMinBytes) return;
  if (auto* observe = discard_observer.load(std::memory_order_acquire)) observe(p, bytes);
  constexpr std::uintptr_t kStep = kDiscardStepBytes;
  const std::uintptr_t start = (reinterpret_cast<std::uintptr_t>(p) + kStep - 1) & ~(kStep - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kStep - 1);
  for (std::uintptr_t at = start; at < end; at += kStep) {
    // Advice only: a failure leaves the pages to the free that follows.
    (void)madvise(reinterpret_cast<void*>(at), kStep, MADV_DONTNEED);
  }
}

void* AllocateMappedArrayBytes(std::size_t bytes, bool huge_pages, bool* mapped) {
  if (ShouldFailAllocation()) throw std::bad_alloc();
  *mapped = false;
  if (bytes == 0) return nullptr;
  if (bytes < kStepDiscardMinBytes) {
    void* p = std::calloc(1, bytes);  // not operator new: one failure point, counted once
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  // Map one huge page more than needed and keep the 2 MiB-aligned part: the
  // kernel backs an aligned, advised range with huge pages at first touch
  // (anonymous memory reads zero).
  constexpr std::size_t kAlign = kDiscardStepBytes;
  const std::size_t length = (bytes + kAlign - 1) / kAlign * kAlign;
  void* raw = mmap(nullptr, length + kAlign, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kAlign - 1) & ~std::uintptr_t{kAlign - 1};
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t tail = start + length + kAlign - (aligned + length);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
#ifdef MADV_HUGEPAGE
  if (huge_pages) (void)madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // advice only
#endif
  ASAN_POISON_MEMORY_REGION(reinterpret_cast<void*>(aligned + bytes), length - bytes);
  *mapped = true;
  return reinterpret_cast<void*>(aligned);
}

void FreeMappedArrayBytes(void* p, std::size_t bytes, bool mapped) {
  if (p == nullptr) return;
  if (!mapped) {
    std::free(p);
    return;
  }
  constexpr std::size_t kAlign = kDiscardStepBytes;
  const std::size_t length = (bytes + kAlign - 1) / kAlign * kAlign;
  ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(p) + bytes, length - bytes);
  DiscardPagesInSteps(p, length);
  munmap(p, length);
}

std::size_t UsableSize(void* p) { return QUIVER_USABLE_SIZE(p); }

std::size_t GoodAllocationSize(std::size_t bytes) { return QUIVER_GOOD_SIZE(bytes); }

}  // namespace quiver::base
