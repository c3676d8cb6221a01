#include "import/input_blocks.h"

#include <algorithm>
#include <chrono>
#include <cstring>
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

Result<std::vector<InputBlock>> PlanQuotedBlocks(env::FileSystem* fs, const std::string& path,
                                                 std::uint64_t start, std::uint64_t block_bytes) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::ReadableFile> file, fs->OpenReadable(path));
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file->Size());
  std::vector<InputBlock> blocks;
  std::string chunk(std::size_t{1} << 20, '\0');
  const std::uint64_t step = std::max<std::uint64_t>(block_bytes, 1);
  std::uint64_t block_start = start;
  std::uint64_t at = start;
  bool quoted = false;  // an odd number of quotes since the last cut
  while (at < size) {
    QUIVER_ASSIGN_OR_RETURN(
        std::size_t got,
        file->ReadAt(at, std::as_writable_bytes(std::span<char>(chunk.data(), chunk.size()))));
    if (got == 0) break;
    const char* p = chunk.data();
    const char* end = p + got;
    while (p < end) {
      if (quoted) {
        // Inside quotes: only the next quote matters.
        const void* q = std::memchr(p, '"', static_cast<std::size_t>(end - p));
        if (q == nullptr) break;
        p = static_cast<const char*>(q) + 1;
        quoted = false;
        continue;
      }
      // Outside: the next quote, or a line break far enough on to cut at.
      const auto offset = [&](const char* c) { return at + static_cast<std::uint64_t>(c - chunk.data()); };
      const std::uint64_t want = block_start + step;
      const char* from = p;
      if (offset(p) < want)
        from = p + std::min<std::uint64_t>(want - offset(p), static_cast<std::uint64_t>(end - p));
      const void* q = std::memchr(p, '"', static_cast<std::size_t>(end - p));
      const char* quote = q == nullptr ? end : static_cast<const char*>(q);
      if (from < quote) {
        const void* nl = std::memchr(from, '\n', static_cast<std::size_t>(quote - from));
        if (nl != nullptr) {
          const std::uint64_t cut = offset(static_cast<const char*>(nl)) + 1;
          blocks.push_back({block_start, cut - block_start});
          block_start = cut;
          p = static_cast<const char*>(nl) + 1;
          continue;
        }
      }
      if (quote == end) break;
      p = quote + 1;
      quoted = true;
    }
    at += got;
  }
  if (block_start < size) blocks.push_back({block_start, size - block_start});
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
