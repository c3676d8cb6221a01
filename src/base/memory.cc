#include "base/memory.h"

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

namespace quiver::base {

void* MemoryAccount::Allocate(std::size_t bytes) {
  void* p = QUIVER_MALLOC(bytes);
  if (p == nullptr) throw std::bad_alloc();
  allocated_.fetch_add(static_cast<std::int64_t>(QUIVER_USABLE_SIZE(p)), std::memory_order_relaxed);
  return p;
}

void MemoryAccount::Free(void* p) {
  if (p == nullptr) return;
  allocated_.fetch_sub(static_cast<std::int64_t>(QUIVER_USABLE_SIZE(p)), std::memory_order_relaxed);
  QUIVER_FREE(p);
}

std::size_t UsableSize(void* p) { return QUIVER_USABLE_SIZE(p); }

std::size_t GoodAllocationSize(std::size_t bytes) { return QUIVER_GOOD_SIZE(bytes); }

}  // namespace quiver::base
