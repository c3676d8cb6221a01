// Prefetch: start loading the cache line at `p` for a read soon.
//
// Why not __builtin_prefetch alone: GCC 12 at -O2 deletes some prefetches
// outright. An inline member function that prefetches through a pointer
// loaded from `this` under a condition (IdMap::PrefetchNumber) compiled to
// a bare `ret`, so the import's id lookups ran with no prefetch at all
// (found in the disassembly, not by any test). An asm statement is never
// deleted. `p` must point into an object (a prefetch never faults, but
// forming the operand reads its address only).
//
//   for (...) base::Prefetch(&table[next_index]);
#ifndef QUIVER_BASE_PREFETCH_H_
#define QUIVER_BASE_PREFETCH_H_

namespace quiver::base {

inline void Prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace quiver::base

#endif  // QUIVER_BASE_PREFETCH_H_
