#include "checkpoint/checkpoint_format.h"

#include <cstring>

#include "base/crc32c.h"
#include "base/strings.h"

namespace quiver::checkpoint {

std::optional<std::uint32_t> IntactHeaderVersion(std::span<const std::byte> in) {
  if (in.size() < kHeaderBytes) return std::nullopt;
  std::uint64_t magic;
  std::uint32_t version, crc;
  std::memcpy(&magic, in.data(), 8);
  std::memcpy(&version, in.data() + 8, 4);
  std::memcpy(&crc, in.data() + 60, 4);
  if (magic != kMagic || crc != base::Crc32c(in.data(), 60)) return std::nullopt;
  return version;
}

std::string CheckpointFileName(std::uint64_t sequence) {
  return base::NumberedFileName("checkpoint-", sequence, ".qck");
}

std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view name) {
  return base::ParseNumberedFileName(name, "checkpoint-", ".qck");
}

}  // namespace quiver::checkpoint
