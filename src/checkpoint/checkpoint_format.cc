#include "checkpoint/checkpoint_format.h"

#include "base/strings.h"

namespace quiver::checkpoint {

std::string CheckpointFileName(std::uint64_t sequence) {
  return base::NumberedFileName("checkpoint-", sequence, ".qck");
}

std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view name) {
  return base::ParseNumberedFileName(name, "checkpoint-", ".qck");
}

}  // namespace quiver::checkpoint
