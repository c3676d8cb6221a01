// ReserveAmortized: room for at least `need` elements in a vector or string,
// grown by doubling.
//
// std::vector::reserve and std::string::reserve (libstdc++) allocate exactly
// what they are asked for. Code that reserves before each append, so that
// the append itself cannot throw, would then copy the whole array at every
// item: quadratic (a batch of 65,540 names moved 17 GB this way). Call this
// instead; it allocates only when `need` passes the capacity, and then at
// least twice the old capacity, so n single appends cost O(n).
//
// May throw std::bad_alloc (or std::length_error past max_size()); the
// container is then unchanged.
#ifndef QUIVER_BASE_RESERVE_H_
#define QUIVER_BASE_RESERVE_H_

#include <algorithm>
#include <cstddef>

namespace quiver::base {

template <typename Container>
void ReserveAmortized(Container& c, std::size_t need) {
  if (need > c.capacity()) c.reserve(std::max(need, 2 * c.capacity()));
}

}  // namespace quiver::base

#endif  // QUIVER_BASE_RESERVE_H_
