// GzipFile: a gzip-compressed file read as the bytes it holds, through
// zlib, for the import's readers (CsvReader opens a file whose first two
// bytes are gzip's magic through it). Reads must be sequential: ReadAt
// takes the offset the previous read ended at (CsvReader reads so). It
// decompresses every member of a file of several (as `cat a.gz b.gz`
// makes). Its size is unknown until the end: Size() is Unimplemented, and
// a read shorter than asked means the end.
//
// Errors: InvalidArgument "truncated gzip file (...)" when the compressed
// bytes end inside a member, "invalid gzip data (<zlib's reason>)" for
// bytes that do not decompress or fail gzip's CRC; the I/O status of the
// underlying file as it is.
//
// Example:
//   if (IsGzip(fs, path).value()) file = std::make_unique<GzipFile>(std::move(file));
#ifndef QUIVER_IMPORT_GZIP_FILE_H_
#define QUIVER_IMPORT_GZIP_FILE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "env/file_system.h"
#include "quiver/status.h"

namespace quiver::import {

// Whether `file` (or the file at `path`) starts with gzip's magic bytes (1f 8b).
Result<bool> IsGzip(const env::ReadableFile& file);
Result<bool> IsGzip(env::FileSystem* fs, const std::string& path);

class GzipFile final : public env::ReadableFile {
 public:
  explicit GzipFile(std::unique_ptr<env::ReadableFile> compressed);
  ~GzipFile() override;
  GzipFile(const GzipFile&) = delete;
  GzipFile& operator=(const GzipFile&) = delete;

  // `offset` must be where the previous read ended (0 first); else
  // InvalidArgument.
  Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> buf) const override;
  Result<std::uint64_t> Size() const override;

  // Compressed bytes read so far (for progress).
  std::uint64_t compressed_bytes_read() const;

 private:
  struct State;  // zlib's stream and the compressed input buffer
  std::unique_ptr<State> state_;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_GZIP_FILE_H_
