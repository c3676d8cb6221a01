#include "import/input_blocks.h"

#include <algorithm>
#include <chrono>
#include <span>

#include "base/strings.h"

namespace quiver::import {
namespace {

constexpr std::size_t kProbeBytes = std::size_t{64} << 10;

}  // namespace

Result<std::vector<InputBlock>> PlanBlocks(env::FileSystem* fs, const std::string& path,
                                           std::uint64_t block_bytes) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::ReadableFile> file, fs->OpenReadable(path));
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file->Size());
  std::vector<InputBlock> blocks;
  std::string probe(kProbeBytes, '\0');
  std::uint64_t start = 0;
  while (start < size) {
    // The cut: just past the first line break at or after start + block_bytes.
    std::uint64_t at = std::min(size, start + std::max<std::uint64_t>(block_bytes, 1));
    std::uint64_t cut = size;
    while (at < size) {
      QUIVER_ASSIGN_OR_RETURN(
          std::size_t got,
          file->ReadAt(at, std::as_writable_bytes(std::span<char>(probe.data(), probe.size()))));
      if (got == 0) break;
      const std::string_view seen(probe.data(), got);
      const std::size_t nl = seen.find('\n');
      if (nl != std::string_view::npos) {
        cut = at + nl + 1;
        break;
      }
      at += got;
    }
    blocks.push_back({start, cut - start});
    start = cut;
  }
  return blocks;
}

Result<std::string> ReadBlock(env::FileSystem* fs, const std::string& path, const InputBlock& block) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::ReadableFile> file, fs->OpenReadable(path));
  std::string bytes(static_cast<std::size_t>(block.length), '\0');
  QUIVER_ASSIGN_OR_RETURN(
      std::size_t got,
      file->ReadAt(block.offset, std::as_writable_bytes(std::span<char>(bytes.data(), bytes.size()))));
  if (got != bytes.size())
    return InternalError(base::StrCat(path, ": the file changed during the import (shorter than it was)"));
  return bytes;
}

std::uint64_t CountLines(std::string_view bytes) {
  return static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
}

void LineBases::Publish(std::size_t i, std::uint64_t lines) {
  base::MutexLock lock(&mu_);
  counts_[i] = lines;
  published_.SignalAll();
}

void LineBases::Fail(std::size_t i) {
  base::MutexLock lock(&mu_);
  counts_[i] = kFailed;
  published_.SignalAll();
}

std::optional<std::uint64_t> LineBases::Wait(std::size_t i, const std::function<bool()>& abandoned) {
  base::MutexLock lock(&mu_);
  // starts_[k] is known for k <= starts_.size() - 1; extend it up to i.
  while (starts_.size() <= i) {
    const std::size_t k = starts_.size() - 1;
    const std::uint64_t count = counts_[k];
    if (count == kFailed) return std::nullopt;
    if (count != kUnknown) {
      starts_.push_back(starts_.back() + count);
      continue;
    }
    if (!published_.WaitFor(std::chrono::milliseconds(5)) && abandoned()) return std::nullopt;
  }
  return starts_[i];
}

}  // namespace quiver::import
