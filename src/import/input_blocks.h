// InputBlocks: cuts an input file into blocks of whole lines, so that
// several threads can parse one file (issue 11 §2: parallel parsing).
//
// PlanBlocks reads only a little at each cut: from every multiple of
// `block_bytes` it looks for the next line break and cuts just past it. So
// the plan costs one small read per block, and every block but the last
// ends with '\n'. This is correct only for files in which a line break
// always ends a record: EVLP and JSON Lines.
//
// PlanQuotedBlocks does the same for CSV, whose quoted fields may hold line
// breaks: it reads the whole file once (memchr for quotes and line breaks,
// memory speed) and cuts only at a line break after an even number of
// quotes, where a record ends (a doubled quote inside a field counts two).
// Up to the first quoting error the cuts are where one thread's reader ends
// records; that error is reported by the block holding it, whose start is
// still a record boundary, and the blocks after it are dropped unread.
//
// The blocks' first line numbers are not known until the lines before
// them are counted. LineBases hands them over: the thread parsing block i
// counts its lines first, publishes the count, and then waits for the
// counts of the blocks before it (published moments earlier, since blocks
// are claimed in order), so every error message carries its true line.
//
// Example:
//   QUIVER_ASSIGN_OR_RETURN(std::vector<InputBlock> blocks, PlanBlocks(fs, path, 4 << 20));
//   LineBases bases(blocks.size());
//   // on the thread parsing block i:
//   bases.Publish(i, CountLines(bytes));
//   std::optional<std::uint64_t> first_line = bases.Wait(i, [] { return false; });  // nullopt: an earlier
//   block failed
#ifndef QUIVER_IMPORT_INPUT_BLOCKS_H_
#define QUIVER_IMPORT_INPUT_BLOCKS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "env/file_system.h"
#include "quiver/status.h"

namespace quiver::import {

struct InputBlock {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// The blocks of `path`, in order, covering the whole file; none for an
// empty file.
Result<std::vector<InputBlock>> PlanBlocks(env::FileSystem* fs, const std::string& path,
                                           std::uint64_t block_bytes);

// The blocks of `path` from byte `start` on (past a CSV header), cut only
// where a record ends (see the top of this file).
Result<std::vector<InputBlock>> PlanQuotedBlocks(env::FileSystem* fs, const std::string& path,
                                                 std::uint64_t start, std::uint64_t block_bytes);

// Reads `block` of `path` whole. InternalError ("changed") if the file is
// shorter than the plan.
Result<std::string> ReadBlock(env::FileSystem* fs, const std::string& path, const InputBlock& block);

// The line breaks in `bytes`: how far a block moves the line number of the
// block after it (every block but the last ends with one).
std::uint64_t CountLines(std::string_view bytes);

class LineBases {
 public:
  // `first_line`: the line block 0 starts on (past a header: not 1).
  explicit LineBases(std::size_t blocks, std::uint64_t first_line = 1)
      : counts_(blocks, kUnknown), starts_{first_line} {}

  // Block `i` holds `lines` lines. Every block claimed must publish, or
  // fail (Fail), or the blocks after it wait forever.
  void Publish(std::size_t i, std::uint64_t lines);
  // Block `i` could not count its lines: the blocks after it give up.
  void Fail(std::size_t i);
  // The line number (from 1) block `i` starts on, once every block before
  // it has published; nullopt if one of them failed, or if `abandoned()`
  // turns true meanwhile (polled every few milliseconds while waiting: a
  // block may be claimed and then dropped before its reader ever ran).
  std::optional<std::uint64_t> Wait(std::size_t i, const std::function<bool()>& abandoned);

 private:
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
  static constexpr std::uint64_t kFailed = kUnknown - 1;
  base::Mutex mu_;
  base::CondVar published_{&mu_};
  std::vector<std::uint64_t> counts_ ABSL_GUARDED_BY(mu_);
  // starts_[k]: the first line of block k, for the blocks whose earlier
  // blocks have all published (each Wait extends it; amortised O(1)).
  std::vector<std::uint64_t> starts_ ABSL_GUARDED_BY(mu_);
};

// Publishes block `i`'s line count to `bases`, or on destruction without
// Publish (an early return) its failure: exactly once either way.
class PublishOnce {
 public:
  PublishOnce(LineBases& bases, std::size_t i) : bases_(bases), i_(i) {}
  ~PublishOnce() {
    if (!done_) bases_.Fail(i_);
  }
  PublishOnce(const PublishOnce&) = delete;
  PublishOnce& operator=(const PublishOnce&) = delete;
  void Publish(std::uint64_t lines) {
    bases_.Publish(i_, lines);
    done_ = true;
  }

 private:
  LineBases& bases_;
  const std::size_t i_;
  bool done_ = false;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_INPUT_BLOCKS_H_
