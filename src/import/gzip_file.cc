// GzipFile: see gzip_file.h.
#include "import/gzip_file.h"

#include <zlib.h>

#include <cstring>

#include "base/strings.h"

namespace quiver::import {

Result<bool> IsGzip(const env::ReadableFile& file) {
  std::byte magic[2] = {};
  QUIVER_ASSIGN_OR_RETURN(std::size_t n, file.ReadAt(0, magic));
  return n == 2 && magic[0] == std::byte{0x1f} && magic[1] == std::byte{0x8b};
}

Result<bool> IsGzip(env::FileSystem* fs, const std::string& path) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::ReadableFile> file, fs->OpenReadable(path));
  return IsGzip(*file);
}

struct GzipFile::State {
  std::unique_ptr<env::ReadableFile> file;
  z_stream zs{};
  bool ready = false;                   // inflateInit2 succeeded
  std::vector<unsigned char> in;        // compressed bytes read, not yet consumed
  std::uint64_t compressed_offset = 0;  // next compressed byte to read
  std::uint64_t offset = 0;             // next decompressed byte to hand out
  bool file_done = false;               // the compressed file is read to its end
  bool in_member = false;               // inside a member (its end not yet reached)
  bool done = false;                    // every member decompressed
};

GzipFile::GzipFile(std::unique_ptr<env::ReadableFile> compressed) : state_(std::make_unique<State>()) {
  state_->file = std::move(compressed);
  state_->in.resize(std::size_t{1} << 18);
  state_->zs.next_in = state_->in.data();
  state_->zs.avail_in = 0;
  // 16 + MAX_WBITS: a gzip wrapper, not zlib's.
  state_->ready = inflateInit2(&state_->zs, 16 + MAX_WBITS) == Z_OK;
}

GzipFile::~GzipFile() {
  if (state_->ready) inflateEnd(&state_->zs);
}

Result<std::uint64_t> GzipFile::Size() const {
  return UnimplementedError("a gzip file's decompressed size is known only at its end");
}

std::uint64_t GzipFile::compressed_bytes_read() const {
  return state_->compressed_offset - state_->zs.avail_in;
}

Result<std::size_t> GzipFile::ReadAt(std::uint64_t offset, std::span<std::byte> buf) const {
  State& s = *state_;
  if (!s.ready) return ResourceExhaustedError("gzip: zlib could not start (out of memory)");
  if (offset != s.offset)
    return InvalidArgumentError(base::StrCat("gzip: a read at ", offset, " after one that ended at ",
                                             s.offset, " (reads must be sequential)"));
  std::size_t got = 0;
  while (got < buf.size() && !s.done) {
    if (s.zs.avail_in == 0 && !s.file_done) {
      QUIVER_ASSIGN_OR_RETURN(std::size_t n,
                              s.file->ReadAt(s.compressed_offset, std::as_writable_bytes(std::span(s.in))));
      s.compressed_offset += n;
      s.zs.next_in = s.in.data();
      s.zs.avail_in = static_cast<uInt>(n);
      if (n == 0) s.file_done = true;
    }
    if (s.zs.avail_in == 0 && s.file_done) {
      if (s.in_member)
        return InvalidArgumentError("truncated gzip file (the compressed data ends inside a member)");
      s.done = true;
      break;
    }
    s.zs.next_out = reinterpret_cast<Bytef*>(buf.data() + got);
    s.zs.avail_out = static_cast<uInt>(std::min<std::size_t>(buf.size() - got, 1u << 30));
    const uInt before = s.zs.avail_out;
    s.in_member = true;
    const int rc = inflate(&s.zs, Z_NO_FLUSH);
    got += before - s.zs.avail_out;
    if (rc == Z_STREAM_END) {
      // A member ends; another may follow (concatenated gzip files).
      s.in_member = false;
      if (inflateReset(&s.zs) != Z_OK) return InternalError("gzip: inflateReset failed");
      continue;
    }
    if (rc == Z_BUF_ERROR) continue;  // needs more input (or more room: the loop gives both)
    if (rc != Z_OK)
      return InvalidArgumentError(
          base::StrCat("invalid gzip data (", s.zs.msg != nullptr ? s.zs.msg : zError(rc), ")"));
  }
  s.offset += got;
  return got;
}

}  // namespace quiver::import
