// Fast lines: EVLP lines parsed in one pass over their bytes, without
// CsvReader and RowBuilder, for the import's hot paths (parallel_input.cc,
// bulk_writer.cc). A parser takes only the plain form of a line and gives
// what RowBuilder would have built from it; any other line goes to the
// generic path, which gives its exact row, rejection or error. So the two
// can never disagree on a line the fast parser takes (ImportParallelTest
// feeds both every odd form).
//
// Example:
//   ForEachLine<FastVertex>(bytes, first_line, ParseFastVertex,
//                           [&](const FastVertex& v) { map.PrefetchNumber(v.id); },
//                           [&](const FastVertex& v) -> Status { ... },
//                           [&](std::string_view line, std::uint64_t line_no) -> Status { ... });
#ifndef QUIVER_IMPORT_FAST_LINES_H_
#define QUIVER_IMPORT_FAST_LINES_H_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "quiver/status.h"

namespace quiver::import {

// The 1 to 19 decimal digits at *p (after a '-' if `negative`) as an
// int64, advancing *p past them: what std::from_chars gives, or false for
// no digit, 20 or more, or a value outside int64 (the generic path then
// gives the exact error).
inline bool ParseFastInt(const char** p, const char* end, bool negative, std::int64_t* out) {
  const char* digits = *p;
  const char* q = digits;
  std::uint64_t v = 0;
  while (q != end && static_cast<unsigned char>(*q - '0') < 10) {
    if (q - digits == 19) return false;
    v = v * 10 + static_cast<std::uint64_t>(*q++ - '0');  // 19 digits fit in a uint64
  }
  if (q == digits) return false;
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  if (v > limit) return false;
  *out = negative ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  *p = q;
  return true;
}

// One EVLP edge line the fast parser took: what RowBuilder would have
// built from it.
struct FastEdge {
  std::string_view text;  // the line, with its '\n'
  std::int64_t source = 0;
  std::int64_t target = 0;
  double weight = 0;
  bool has_weight = false;
  std::uint64_t line = 0;
};

// Parses one plain EVLP edge line at `p` the way CsvReader + RowBuilder
// would for a file of `columns` columns, in one pass over its bytes: an
// optional '-' and 1 to 19 digits per endpoint within int64 (ParseFastInt),
// single spaces, and for 3 columns a finite double in from_chars' own
// form; then '\n', "\r\n" or the end. On success returns where the line
// ends (at its '\n', or `end`); on anything else (a '+', a tab, an empty
// field, a long number, a '\r' inside, non-ASCII) returns null, and the
// generic path reads the line and gives its exact row, rejection or error.
inline const char* ParseFastEdge(const char* p, const char* end, std::size_t columns, FastEdge* e) {
  std::int64_t ends[2];
  for (int k = 0; k < 2; ++k) {
    const bool negative = p != end && *p == '-';
    p += negative;
    if (!ParseFastInt(&p, end, negative, &ends[k])) return nullptr;
    if (k == 0) {
      if (p == end || *p != ' ') return nullptr;
      ++p;
    }
  }
  e->source = ends[0];
  e->target = ends[1];
  e->has_weight = columns == 3;
  if (e->has_weight) {
    if (p == end || *p != ' ') return nullptr;
    ++p;
    if (p == end || *p == '+' || *p == ' ' || *p == '\t') return nullptr;
    auto [stop, ec] = std::from_chars(p, end, e->weight);
    if (ec != std::errc() || !std::isfinite(e->weight)) return nullptr;
    p = stop;
  }
  if (p != end && *p == '\r' && p + 1 != end && p[1] == '\n') ++p;
  if (p != end && *p != '\n') return nullptr;
  return p;
}

// One EVLP vertex line the fast parser took: its id.
struct FastVertex {
  std::string_view text;  // the line, with its '\n'
  std::int64_t id = 0;
  std::uint64_t line = 0;
};

// Parses one plain EVLP vertex line at `p` (an optional '-' and 1 to 19
// digits, then '\n', "\r\n" or the end), as ParseFastEdge does an edge
// line: the generic path reads anything else.
inline const char* ParseFastVertex(const char* p, const char* end, FastVertex* v) {
  const bool negative = p != end && *p == '-';
  p += negative;
  if (!ParseFastInt(&p, end, negative, &v->id)) return nullptr;
  if (p != end && *p == '\r' && p + 1 != end && p[1] == '\n') ++p;
  if (p != end && *p != '\n') return nullptr;
  return p;
}

// A fast line's record as CsvReader::raw() gives it: without its line break.
inline std::string_view WithoutLineBreak(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

// Walks the lines of `bytes` (a block whose first line is `first_line`).
// Each line `parse` takes (returning where it ends, at its '\n' or the
// end; null if it does not) goes to `fast` (in batches, so that
// `prefetch` can start loading what each will read); any other line, with
// its '\n', to `slow`. Both are called in line order; empty lines are
// skipped as CsvReader skips them. The first non-OK status stops the walk.
template <typename Line, typename Parse, typename Prefetch, typename Fast, typename Slow>
Status ForEachLine(std::string_view bytes, std::uint64_t first_line, Parse parse, Prefetch prefetch,
                   Fast fast, Slow slow) {
  constexpr std::size_t kBatch = 64;
  Line batch[kBatch];
  std::size_t pending = 0;
  auto flush = [&]() -> Status {
    for (std::size_t i = 0; i < pending; ++i) QUIVER_RETURN_IF_ERROR(fast(batch[i]));
    pending = 0;
    return Status::Ok();
  };
  std::uint64_t line_no = first_line;
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  while (p != end) {
    const char* line_start = p;
    if (*p == '\n' || (*p == '\r' && p + 1 != end && p[1] == '\n')) {  // an empty line: skipped
      p += *p == '\n' ? 1 : 2;
      ++line_no;
      continue;
    }
    Line& e = batch[pending];
    const char* stop = parse(p, end, &e);
    if (stop != nullptr) {
      p = stop == end ? end : stop + 1;
      e.line = line_no;
      e.text = std::string_view(line_start, static_cast<std::size_t>(p - line_start));
      prefetch(e);
      if (++pending == kBatch) QUIVER_RETURN_IF_ERROR(flush());
    } else {
      const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      p = nl == nullptr ? end : static_cast<const char*>(nl) + 1;
      QUIVER_RETURN_IF_ERROR(flush());
      QUIVER_RETURN_IF_ERROR(
          slow(std::string_view(line_start, static_cast<std::size_t>(p - line_start)), line_no));
    }
    ++line_no;
  }
  return flush();
}

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_FAST_LINES_H_
