// CsvReader: splits a delimited text file into records and fields, reading
// it in chunks through the FileSystem seam, and knows where each field
// starts (line and byte column, both from 1) so every error can say so.
//
// Dialect: RFC 4180 with a chosen delimiter. A field that starts with '"'
// is quoted: it ends at the next lone '"', a doubled '""' stands for one
// quote, and delimiters and newlines inside it are data. Records end at
// '\n' or "\r\n". Empty lines are skipped. With quoting off (EVLP), '"' is
// an ordinary character. Every field must be valid UTF-8.
//
// A gzip-compressed file (its first bytes gzip's magic) is read through
// zlib (GzipFile): positions are those of the decompressed text.
//
// A delimiter that is not ASCII, '\r', or with quoting '"' or '\n', makes
// Next fail with InvalidArgument ("<path>:0:0: ...").
//
// Errors: a broken quote (unterminated, or text after the closing quote, or
// a quote inside an unquoted field) and invalid UTF-8 end the reading with
// InvalidArgument "<path>:<line>:<column>: <reason>". The reader is then
// done: fields() is empty and every later Next returns the same error.
//
// Example:
//   QUIVER_ASSIGN_OR_RETURN(auto r, CsvReader::Open(fs, "people.csv", {}));
//   while (true) {
//     QUIVER_ASSIGN_OR_RETURN(bool more, r->Next());
//     if (!more) break;
//     for (const CsvField& f : r->fields()) Use(f.text, f.line, f.column);
//   }
#ifndef QUIVER_IMPORT_CSV_READER_H_
#define QUIVER_IMPORT_CSV_READER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "env/file_system.h"
#include "quiver/status.h"

namespace quiver::import {

struct CsvDialect {
  char delimiter = ',';
  bool quoting = true;
};

struct CsvField {
  std::string_view text;  // unescaped; valid until the next Next()
  bool quoted = false;
  std::uint64_t line = 0;
  std::uint64_t column = 0;
};

// "<path>:<line>:<column>: <reason>" as an error of `code`.
Status PositionError(StatusCode code, std::string_view path, std::uint64_t line, std::uint64_t column,
                     std::string_view reason);

class CsvReader {
 public:
  // NotFound "<path>:0:0: no such file" if `path` does not exist.
  static Result<std::unique_ptr<CsvReader>> Open(env::FileSystem* fs, const std::string& path,
                                                 CsvDialect dialect);

  // A reader of `bytes`, one block of a file cut at line breaks
  // (input_blocks.h), whose first line is line `first_line` of `path`:
  // its positions and errors are those of the whole file. The reader reads
  // `bytes` in place (its fields and raw() are views of them): they must
  // outlive it.
  static std::unique_ptr<CsvReader> OverBytes(std::string path, std::string_view bytes, CsvDialect dialect,
                                              std::uint64_t first_line);
  // A temporary string would not outlive the reader.
  static std::unique_ptr<CsvReader> OverBytes(std::string path, std::string&& bytes, CsvDialect dialect,
                                              std::uint64_t first_line) = delete;

  // Reads the next record: true if there is one (fields(), line(), raw()
  // describe it), false at the end of the file.
  Result<bool> Next();

  std::span<const CsvField> fields() const { return {fields_.data(), field_count_}; }
  // The line the record starts on, and the end of the record: the line and
  // column just past its last field (for "too few columns").
  std::uint64_t line() const { return record_line_; }
  std::uint64_t end_line() const { return end_line_; }
  std::uint64_t end_column() const { return end_column_; }
  // The record's bytes as they are in the file, without the line break.
  std::string_view raw() const { return raw_; }
  // Where raw() starts in the file (decompressed), or in the bytes of a
  // reader OverBytes.
  std::uint64_t raw_offset() const { return raw_offset_; }
  const std::string& path() const { return path_; }
  // The file's size on disk (for a gzip file, compressed; for a reader
  // OverBytes, 0).
  std::uint64_t file_size() const { return disk_size_; }
  // Whether the file is read through zlib.
  bool compressed() const { return gzip_ != nullptr; }
  // Bytes consumed so far.
  std::uint64_t bytes_read() const { return consumed_; }
  // Bytes of the file read so far: bytes_read(), or for a gzip file the
  // compressed bytes zlib has taken (for progress against the file's size).
  std::uint64_t file_bytes_read() const;

 private:
  CsvReader(std::unique_ptr<env::ReadableFile> file, std::string path, CsvDialect dialect,
            std::uint64_t size);

  enum class Step { kRecord, kNeedMore, kEnd };
  // Parses one record at pos_ from the buffered bytes. kNeedMore: the
  // buffer ends inside it and the file has more.
  Result<Step> Parse();
  // Next without the sticky error.
  Result<bool> NextRecord();
  // Parses the quoted field whose opening quote is at *p into fields_ (a
  // view into data_, or into arena_ if it holds a doubled quote). On
  // kRecord *p is just past the closing quote.
  Result<Step> ParseQuoted(std::size_t* p, std::uint64_t* line, std::size_t* line_start, bool eof);
  // The quoted field opening at *p and what follows it: on kRecord, *p is
  // past the delimiter after it (*last false) or at the record's end
  // (*last true). *column_base is column - position on the current line.
  Result<Step> QuotedField(std::size_t* p, std::uint64_t* line, std::uint64_t* column_base, bool* last);
  // Appends the next chunk to the buffer, first dropping consumed bytes.
  Status Fill();
  Status ErrorAt(std::size_t pos, std::uint64_t line, std::size_t line_start, std::string_view reason) const;
  Status CheckUtf8();

  // A quoted field unescaped into arena_: its text is set once the record
  // is whole (arena_ may move while it grows).
  struct ArenaField {
    std::size_t field;
    std::size_t offset;
    std::size_t size;
  };
  // No block: p - kNoBlock is at least 64 for any position p of a buffer.
  static constexpr std::size_t kNoBlock = SIZE_MAX / 2;

  std::unique_ptr<env::ReadableFile> file_;
  const class GzipFile* gzip_ = nullptr;  // file_, if the file is gzip-compressed
  std::string path_;
  CsvDialect dialect_;
  // A delimiter the reader cannot tell from what it splits at: not ASCII
  // (it would cut UTF-8 sequences), '\r', or with quoting '"' or '\n'.
  // Next fails with InvalidArgument.
  bool bad_dialect_ = false;
  std::uint64_t file_size_;
  std::uint64_t disk_size_ = 0;
  std::uint64_t file_offset_ = 0;  // next byte of the file to read
  std::string buf_;                // bytes from the file, from buf_base_ on
  // The bytes Parse reads: buf_, or the caller's for a reader OverBytes.
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t buf_base_ = 0;    // file offset of buf_[0]
  std::size_t pos_ = 0;           // start of the next record in buf_
  std::uint64_t line_ = 1;        // line of buf_[pos_]
  std::uint64_t line_start_ = 0;  // file offset where line_ starts
  std::uint64_t consumed_ = 0;
  std::size_t chunk_ = std::size_t{1} << 20;

  // The 64 bytes of data_ from block_ classified: bit i of block_bits_ is
  // set if data_[block_ + i] is the delimiter, '\n' or (quoting) '"' and
  // inside the buffer. kNoBlock after Fill moves the buffer.
  std::size_t block_ = kNoBlock;
  std::uint64_t block_bits_ = 0;

  std::string arena_;  // unescaped quoted fields with a doubled quote
  std::vector<ArenaField> arena_fields_;
  // The record's fields are fields_[0, field_count_); fields_ only grows,
  // so Parse writes a field without a vector's bookkeeping.
  std::vector<CsvField> fields_;
  std::size_t field_count_ = 0;
  // The first error Next returned; returned again by every later call.
  Status error_;
  std::uint64_t record_line_ = 0;
  std::uint64_t end_line_ = 0;
  std::uint64_t end_column_ = 0;
  std::string_view raw_;
  std::uint64_t raw_offset_ = 0;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_CSV_READER_H_
