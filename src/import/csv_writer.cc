// CsvWriter: see csv_writer.h.
#include "import/csv_writer.h"

#include <utility>

namespace quiver::import {

namespace {
constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
}  // namespace

void AppendCsvField(std::string* out, std::string_view text, char delimiter, bool quote_empty) {
  bool quote = text.empty() && quote_empty;
  for (char c : text) {
    if (c == delimiter || c == '"' || c == '\n' || c == '\r') {
      quote = true;
      break;
    }
  }
  if (!quote) {
    out->append(text);
    return;
  }
  out->push_back('"');
  for (char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

Result<std::unique_ptr<CsvWriter>> CsvWriter::Create(env::FileSystem* fs, const std::string& path,
                                                     env::OpenMode mode) {
  // Everything that allocates comes before the file exists: an export that
  // runs out of memory here leaves no file behind.
  std::unique_ptr<CsvWriter> w(new CsvWriter(nullptr));
  w->buf_.reserve(kFlushBytes);
  QUIVER_ASSIGN_OR_RETURN(w->file_, fs->OpenWritable(path, mode));
  return w;
}

Status CsvWriter::Write(std::string_view text) {
  if (buf_.size() + text.size() <= buf_.capacity()) {
    buf_.append(text);
    return MaybeFlush();
  }
  if (!buf_.empty()) QUIVER_RETURN_IF_ERROR(file_->Append(env::AsBytes(buf_)));
  buf_.clear();
  return file_->Append(env::AsBytes(text));
}

Status CsvWriter::MaybeFlush() {
  if (buf_.size() < kFlushBytes) return Status::Ok();
  QUIVER_RETURN_IF_ERROR(file_->Append(env::AsBytes(buf_)));
  buf_.clear();
  return Status::Ok();
}

Status CsvWriter::Finish() {
  if (!buf_.empty()) QUIVER_RETURN_IF_ERROR(file_->Append(env::AsBytes(buf_)));
  buf_.clear();
  QUIVER_RETURN_IF_ERROR(file_->Sync());
  return file_->Close();
}

}  // namespace quiver::import
