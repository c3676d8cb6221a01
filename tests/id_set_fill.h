// Every id of an IdSet read back through IdSet::Fill, in batches of
// `batch`: what the IdSet tests compare with their models.
#ifndef QUIVER_TESTS_ID_SET_FILL_H_
#define QUIVER_TESTS_ID_SET_FILL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/id_set.h"

namespace quiver::index {

inline std::vector<std::uint64_t> FillAllIds(const IdSetRoot& root, std::size_t batch) {
  std::vector<std::uint64_t> out, buf(batch);
  std::uint64_t from = 0;
  while (const std::size_t n = IdSet::Fill(root, from, buf.data(), batch)) {
    out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    from = buf[n - 1] + 1;
    if (n < batch) break;
  }
  return out;
}

}  // namespace quiver::index

#endif  // QUIVER_TESTS_ID_SET_FILL_H_
