// CsvReader: see csv_reader.h. The parser restarts a record from its first
// byte when the buffer ends inside it (after reading the next chunk), so
// the state between calls is only where the next record starts.
#include "import/csv_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "base/strings.h"
#include "base/utf8.h"
#include "import/csv_classify.h"
#include "import/gzip_file.h"

namespace quiver::import {

Status PositionError(StatusCode code, std::string_view path, std::uint64_t line, std::uint64_t column,
                     std::string_view reason) {
  return Status(code, base::StrCat(path, ":", line, ":", column, ": ", reason));
}

Result<std::unique_ptr<CsvReader>> CsvReader::Open(env::FileSystem* fs, const std::string& path,
                                                   CsvDialect dialect) {
  Result<std::unique_ptr<env::ReadableFile>> file = fs->OpenReadable(path);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound) {
      return PositionError(StatusCode::kNotFound, path, 0, 0, "no such file");
    }
    return PositionError(file.status().code(), path, 0, 0, file.status().message());
  }
  Result<std::uint64_t> size = (*file)->Size();
  if (!size.ok()) return PositionError(size.status().code(), path, 0, 0, size.status().message());
  // A gzip file is read through zlib; its end is where the decompressed
  // bytes end (a short read), not a size known up front.
  Result<bool> compressed = IsGzip(**file);
  if (!compressed.ok())
    return PositionError(compressed.status().code(), path, 0, 0, compressed.status().message());
  if (*compressed) {
    auto gzip = std::make_unique<GzipFile>(std::move(*file));
    const GzipFile* raw = gzip.get();
    std::unique_ptr<CsvReader> r(new CsvReader(std::move(gzip), path, dialect, UINT64_MAX));
    r->gzip_ = raw;
    r->disk_size_ = *size;
    return r;
  }
  std::unique_ptr<CsvReader> r(new CsvReader(std::move(*file), path, dialect, *size));
  r->disk_size_ = *size;
  return r;
}

// The caller's bytes are read in place, whole: nothing is read, so Parse
// never asks for more and Fill is never called. (Copying each block, once
// by the caller and again a chunk at a time, and the page faults of the
// copies, were a third of the splitter's time on quiver-csv-probe.)
std::unique_ptr<CsvReader> CsvReader::OverBytes(std::string path, std::string_view bytes, CsvDialect dialect,
                                                std::uint64_t first_line) {
  const std::uint64_t size = bytes.size();
  std::unique_ptr<CsvReader> r(new CsvReader(nullptr, std::move(path), dialect, size));
  r->data_ = bytes.data();
  r->size_ = bytes.size();
  r->file_offset_ = size;
  r->line_ = first_line;
  return r;
}

CsvReader::CsvReader(std::unique_ptr<env::ReadableFile> file, std::string path, CsvDialect dialect,
                     std::uint64_t size)
    : file_(std::move(file)), path_(std::move(path)), dialect_(dialect), file_size_(size) {
  const auto d = static_cast<unsigned char>(dialect.delimiter);
  bad_dialect_ = d >= 0x80 || d == '\r' || (dialect.quoting && (d == '"' || d == '\n'));
}

Status CsvReader::Fill() {
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    buf_base_ += pos_;
    pos_ = 0;
  }
  block_ = kNoBlock;  // the classified block has moved
  // A record longer than the buffer: grow the chunk so that re-parsing it
  // from its start stays linear overall.
  if (buf_.size() >= chunk_) chunk_ *= 2;
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(chunk_, file_size_ - file_offset_));
  const std::size_t old = buf_.size();
  buf_.resize(old + want);
  Result<std::size_t> got =
      file_->ReadAt(file_offset_, std::as_writable_bytes(std::span<char>(buf_.data() + old, want)));
  if (!got.ok()) {
    buf_.resize(old);
    data_ = buf_.data();
    size_ = buf_.size();
    return PositionError(got.status().code(), path_, line_, 0, got.status().message());
  }
  buf_.resize(old + *got);
  data_ = buf_.data();
  size_ = buf_.size();
  file_offset_ += *got;
  if (*got < want) file_size_ = file_offset_;  // the file shrank: its end is here
  return Status::Ok();
}

std::uint64_t CsvReader::file_bytes_read() const {
  return gzip_ != nullptr ? gzip_->compressed_bytes_read() : consumed_;
}

Status CsvReader::ErrorAt(std::size_t pos, std::uint64_t line, std::size_t line_start,
                          std::string_view reason) const {
  return PositionError(StatusCode::kInvalidArgument, path_, line, buf_base_ + pos - line_start + 1, reason);
}

Result<bool> CsvReader::Next() {
  if (!error_.ok()) return error_;
  Result<bool> more = NextRecord();
  if (!more.ok()) {
    error_ = more.status();
    field_count_ = 0;  // no half-read record is shown
  }
  return more;
}

Result<bool> CsvReader::NextRecord() {
  if (bad_dialect_)
    return PositionError(
        StatusCode::kInvalidArgument, path_, 0, 0,
        "the delimiter must be ASCII and not '\\r', and with quoting not '\"' or a line break");
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(Step step, Parse());
    if (step == Step::kEnd) return false;
    if (step == Step::kRecord) break;
    QUIVER_RETURN_IF_ERROR(Fill());
  }
  for (const ArenaField& a : arena_fields_)
    fields_[a.field].text = std::string_view(arena_.data() + a.offset, a.size);
  if (!base::IsAscii(raw_)) QUIVER_RETURN_IF_ERROR(CheckUtf8());
  return true;
}

Status CsvReader::CheckUtf8() {
  // The fields are the record's bytes cut at ASCII delimiters and quotes,
  // so a valid record has valid fields: one check of the record (Next has
  // found it is not all ASCII), and the fields one by one only to say where
  // the damage is.
  if (base::IsValidUtf8(raw_)) return Status::Ok();
  for (const CsvField& f : fields()) {
    if (!base::IsValidUtf8(f.text)) {
      return PositionError(StatusCode::kInvalidArgument, path_, f.line, f.column, "invalid UTF-8");
    }
  }
  return Status::Ok();
}

namespace {

// The 64-byte block at b + p, classified (bit i: b[p + i] is delim, '\n'
// or quote); a block cut short by n is classified from a zeroed copy, so
// no load reads past the buffer, and its bits past n are clear.
std::uint64_t ClassifyAt(const char* b, std::size_t p, std::size_t n, const CsvDialect& d) {
  const char delim = d.delimiter;
  const char quote = d.quoting ? '"' : '\n';
  if (n - p >= kCsvBlock) return ClassifyBlock(b + p, delim, '\n', quote);
  char tail[kCsvBlock] = {};
  std::memcpy(tail, b + p, n - p);
  return ClassifyBlock(tail, delim, '\n', quote) & ((std::uint64_t{1} << (n - p)) - 1);
}

// The first position at or after p in b[0, n) holding the delimiter,
// '\n' or (quoting) '"'; n if none. (*block, *bits) is the block classified last, reused
// while p is inside it: a field costs a shift and a count of zeros, and a
// block is classified where the walk first needs one (loads need no
// alignment).
inline std::size_t NextSpecial(const char* b, std::size_t p, std::size_t n, const CsvDialect& d,
                               std::size_t* block, std::uint64_t* bits) {
  while (true) {
    if (p - *block < kCsvBlock) {
      const std::uint64_t m = *bits & (~std::uint64_t{0} << (p - *block));
      if (m != 0) return *block + static_cast<std::size_t>(std::countr_zero(m));
      p = *block + kCsvBlock;
    }
    if (p >= n) return n;
    *block = p;
    *bits = ClassifyAt(b, p, n, d);
  }
}

}  // namespace

// Reads a quoted field whose opening quote is at *p, walking only the
// quotes and line breaks (delimiters inside are skipped). A field without
// a doubled quote is a view of the buffer; one with is copied to the arena
// a run at a time.
Result<CsvReader::Step> CsvReader::ParseQuoted(std::size_t* p, std::uint64_t* line, std::size_t* line_start,
                                               bool eof) {
  const std::size_t n = size_;
  const char* const b = data_;
  const std::size_t quote = *p;
  const std::uint64_t quote_line = *line;
  const std::size_t quote_line_start = *line_start;
  const std::size_t arena_start = arena_.size();
  bool escaped = false;
  std::size_t i = quote + 1;
  std::size_t run = i;  // start of the text not yet copied to the arena
  while (true) {
    i = NextSpecial(b, i, n, dialect_, &block_, &block_bits_);
    if (i == n) {
      if (!eof) return Step::kNeedMore;
      return ErrorAt(quote, quote_line, quote_line_start, "unterminated quoted field");
    }
    if (b[i] == '"') {
      if (i + 1 == n && !eof) return Step::kNeedMore;
      if (i + 1 < n && b[i + 1] == '"') {
        arena_.append(b + run, i + 1 - run);  // through one of the two quotes
        escaped = true;
        i += 2;
        run = i;
        continue;
      }
      break;
    }
    if (b[i] == '\n') {
      ++*line;
      *line_start = buf_base_ + i + 1;
    }
    ++i;
  }
  if (escaped) {
    arena_.append(b + run, i - run);
    arena_fields_.push_back({field_count_ - 1, arena_start, arena_.size() - arena_start});
  } else {
    fields_[field_count_ - 1].text = std::string_view(b + quote + 1, i - quote - 1);
  }
  *p = i + 1;
  return Step::kRecord;
}

// The quoted field opening at *p, and what follows it: on kRecord, *p is
// past the delimiter after it (*last false) or at the end of the record
// (*last true). Out of Parse's loop, so the loop's state stays in
// registers.
Result<CsvReader::Step> CsvReader::QuotedField(std::size_t* p, std::uint64_t* line,
                                               std::uint64_t* column_base, bool* last) {
  const bool eof = file_offset_ >= file_size_;
  const std::size_t n = size_;
  const char* const b = data_;
  std::size_t ls = buf_base_ + 1 - *column_base;
  QUIVER_ASSIGN_OR_RETURN(Step s, ParseQuoted(p, line, &ls, eof));
  *column_base = buf_base_ + 1 - ls;
  if (s != Step::kRecord) return s;
  const std::size_t q = *p;
  if (q == n && !eof) return Step::kNeedMore;
  if (q < n && b[q] == dialect_.delimiter) {
    *p = q + 1;
    *last = false;
    return Step::kRecord;
  }
  if (q < n && b[q] == '\r' && q + 1 == n && !eof) return Step::kNeedMore;
  const bool eol = q == n || b[q] == '\n' || (b[q] == '\r' && q + 1 < n && b[q + 1] == '\n');
  if (!eol) return ErrorAt(q, *line, ls, "unexpected character after a closing quote");
  *last = true;
  return Step::kRecord;
}

Result<CsvReader::Step> CsvReader::Parse() {
  const bool eof = file_offset_ >= file_size_;
  const std::size_t n = size_;
  const char* const b = data_;
  const char delim = dialect_.delimiter;
  std::size_t p = pos_;
  std::uint64_t line = line_;
  std::size_t ls = line_start_;
  // Skip empty lines. Those skipped are consumed before more is read, so
  // that a run of them is never kept whole in the buffer.
  auto need_more = [&] {
    pos_ = p;
    line_ = line;
    line_start_ = ls;
    consumed_ = buf_base_ + p;
    return Step::kNeedMore;
  };
  while (true) {
    if (p == n) {
      if (!eof) return need_more();
      return Step::kEnd;
    }
    const bool crlf = b[p] == '\r' && p + 1 < n && b[p + 1] == '\n';
    if (b[p] == '\r' && p + 1 == n && !eof) return need_more();
    if (b[p] != '\n' && !crlf) break;
    p += crlf ? 2 : 1;
    ++line;
    ls = buf_base_ + p;
  }
  arena_.clear();
  arena_fields_.clear();
  // The walk keeps its state in locals: a store of a field through a
  // pointer could otherwise be any member, and each would be read again.
  // What only a rare path needs (the end of the file, the dialect's quote)
  // is read from the members there.
  std::size_t block = block_;
  std::uint64_t bits = block_bits_;
  CsvField* out = fields_.data();
  std::size_t cap = fields_.size();
  std::size_t count = 0;
  const std::size_t record_start = p;
  const std::uint64_t record_line = line;
  std::size_t record_end = 0;
  std::uint64_t column_base = buf_base_ + 1 - ls;  // b[i] is at column i + column_base
  if (delim == '\n' && !dialect_.quoting) {
    // One field a line (JSON Lines), often long: the line break, found by
    // memchr.
    const void* nl = std::memchr(b + p, '\n', n - p);
    const std::size_t e = nl == nullptr ? n : static_cast<std::size_t>(static_cast<const char*>(nl) - b);
    if (e == n && !eof) return Step::kNeedMore;
    record_end = e > p && b[e - 1] == '\r' ? e - 1 : e;
    if (cap == 0) fields_.resize(16);
    fields_[0] = {std::string_view(b + p, record_end - p), false, line, p + column_base};
    count = 1;
  } else {
    while (true) {
      if (count == cap) {
        cap = std::max<std::size_t>(16, cap * 2);
        fields_.resize(cap);
        out = fields_.data();
      }
      const std::size_t start = p;
      p = NextSpecial(b, p, n, dialect_, &block, &bits);
      if (p == n) {  // the end of the buffer ends the field
        if (file_offset_ < file_size_) return Step::kNeedMore;
        const std::size_t end = p > start && b[p - 1] == '\r' ? p - 1 : p;
        out[count++] = {std::string_view(b + start, end - start), false, line, start + column_base};
        record_end = end;
        break;
      }
      // A line break first: with one field a line it is also the delimiter.
      const char c = b[p];
      if (c == '\n') {
        const std::size_t end = p > start && b[p - 1] == '\r' ? p - 1 : p;
        out[count++] = {std::string_view(b + start, end - start), false, line, start + column_base};
        record_end = end;
        break;
      }
      if (c == delim) {
        out[count++] = {std::string_view(b + start, p - start), false, line, start + column_base};
        ++p;
        continue;
      }
      // A quote (only found with quoting on): a quoted field if it starts one.
      if (p != start) return ErrorAt(p, line, buf_base_ + 1 - column_base, "quote inside an unquoted field");
      out[count++] = {{}, true, line, start + column_base};
      field_count_ = count;
      block_ = block;
      block_bits_ = bits;
      std::size_t qp = p;
      std::uint64_t qline = line, qcolumn_base = column_base;
      bool last = false;
      QUIVER_ASSIGN_OR_RETURN(Step s, QuotedField(&qp, &qline, &qcolumn_base, &last));
      if (s != Step::kRecord) return s;
      p = qp, line = qline, column_base = qcolumn_base;
      block = block_;
      bits = block_bits_;
      if (last) {
        record_end = p;
        break;
      }
    }
  }
  ls = buf_base_ + 1 - column_base;
  block_ = block;
  block_bits_ = bits;
  field_count_ = count;
  record_line_ = record_line;
  end_line_ = line;
  end_column_ = buf_base_ + record_end - ls + 1;
  raw_ = std::string_view(b + record_start, record_end - record_start);
  raw_offset_ = buf_base_ + record_start;
  // Past the line break.
  p = record_end;
  if (p < n && b[p] == '\r') ++p;
  if (p < n && b[p] == '\n') {
    ++p;
    ++line;
    ls = buf_base_ + p;
  }
  pos_ = p;
  line_ = line;
  line_start_ = ls;
  consumed_ = buf_base_ + p;
  return Step::kRecord;
}

}  // namespace quiver::import
