#include "checkpoint/checkpoint_format.h"

#include <cstring>

#include "base/crc32c.h"
#include "base/strings.h"

namespace quiver::checkpoint {

std::optional<std::uint32_t> NewerFormatVersion(std::span<const std::byte> in) {
  if (in.size() < 12) return std::nullopt;
  std::uint64_t magic;
  std::uint32_t version;
  std::memcpy(&magic, in.data(), 8);
  std::memcpy(&version, in.data() + 8, 4);
  if (magic != kMagic || version <= kFormatVersion || version > wal::kMaxFormatVersion) return std::nullopt;
  if (in.size() >= kHeaderBytes) {
    std::byte known[kHeaderBytes];
    std::memcpy(known, in.data(), kHeaderBytes);
    std::memcpy(known + 8, &kFormatVersion, 4);
    std::uint32_t crc;
    std::memcpy(&crc, known + 60, 4);
    if (crc == base::Crc32c(known, 60)) return std::nullopt;
  }
  return version;
}

bool HeaderIsIntact(std::span<const std::byte> in) {
  if (in.size() < kHeaderBytes) return false;
  std::uint64_t magic;
  std::uint32_t version, header_bytes, crc;
  std::memcpy(&magic, in.data(), 8);
  std::memcpy(&version, in.data() + 8, 4);
  std::memcpy(&header_bytes, in.data() + 12, 4);
  std::memcpy(&crc, in.data() + 60, 4);
  return magic == kMagic && version == kFormatVersion && header_bytes == kHeaderBytes &&
         crc == base::Crc32c(in.data(), 60);
}

std::string CheckpointFileName(std::uint64_t sequence) {
  return base::NumberedFileName("checkpoint-", sequence, ".qck");
}

std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view name) {
  return base::ParseNumberedFileName(name, "checkpoint-", ".qck");
}

}  // namespace quiver::checkpoint
