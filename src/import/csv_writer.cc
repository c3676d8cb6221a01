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
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::WritableFile> file, fs->OpenWritable(path, mode));
  return std::unique_ptr<CsvWriter>(new CsvWriter(std::move(file)));
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
