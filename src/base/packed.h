// Little-endian 48-bit id packing: element ids are stored in six bytes in
// adjacency entries and edge records (ids never reach 2^48; see ids.h).
#ifndef QUIVER_BASE_PACKED_H_
#define QUIVER_BASE_PACKED_H_

#include <cstdint>
#include <cstring>

namespace quiver::base {

inline std::uint64_t Load48(const unsigned char* p) {
  std::uint32_t lo;
  std::uint16_t hi;
  std::memcpy(&lo, p, 4);
  std::memcpy(&hi, p + 4, 2);
  return lo | (std::uint64_t{hi} << 32);
}

inline void Store48(unsigned char* p, std::uint64_t v) {
  std::uint32_t lo = static_cast<std::uint32_t>(v);
  std::uint16_t hi = static_cast<std::uint16_t>(v >> 32);
  std::memcpy(p, &lo, 4);
  std::memcpy(p + 4, &hi, 2);
}

}  // namespace quiver::base

#endif  // QUIVER_BASE_PACKED_H_
