// CRC-32C (Castagnoli), the checksum of every WAL record and checkpoint
// block. Uses the SSE4.2 instruction where the CPU has it, a table
// otherwise; both give identical results.
#ifndef QUIVER_BASE_CRC32C_H_
#define QUIVER_BASE_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace quiver::base {

// Extends `crc` (the value returned for the bytes before) over `data`.
// Crc32c(0, all bytes) is the standard CRC-32C: Crc32c("123456789") == 0xE3069283.
std::uint32_t Crc32cExtend(std::uint32_t crc, const void* data, std::size_t n);

inline std::uint32_t Crc32c(const void* data, std::size_t n) { return Crc32cExtend(0, data, n); }
inline std::uint32_t Crc32c(std::span<const std::byte> data) {
  return Crc32cExtend(0, data.data(), data.size());
}

}  // namespace quiver::base

#endif  // QUIVER_BASE_CRC32C_H_
