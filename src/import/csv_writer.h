// CsvWriter: a text file written through the FileSystem seam in large
// appends, and the quoting rule export and the reject report share.
//
// Example:
//   QUIVER_ASSIGN_OR_RETURN(auto w, CsvWriter::Create(fs, "out/vertices.csv", env::OpenMode::kCreateNew));
//   AppendCsvField(w->buffer(), "a,b", ',', false);  // "\"a,b\""
//   w->buffer()->push_back('\n');
//   QUIVER_RETURN_IF_ERROR(w->Finish());  // flushes and syncs
#ifndef QUIVER_IMPORT_CSV_WRITER_H_
#define QUIVER_IMPORT_CSV_WRITER_H_

#include <memory>
#include <string>
#include <string_view>

#include "env/file_system.h"
#include "quiver/status.h"

namespace quiver::import {

// Appends `text` as one field: quoted (with quotes doubled) when it is
// empty and `quote_empty`, or holds the delimiter, a quote, '\r' or '\n'.
void AppendCsvField(std::string* out, std::string_view text, char delimiter, bool quote_empty);

class CsvWriter {
 public:
  static Result<std::unique_ptr<CsvWriter>> Create(env::FileSystem* fs, const std::string& path,
                                                   env::OpenMode mode);
  // Append text here; MaybeFlush writes it out once it is large.
  std::string* buffer() { return &buf_; }
  Status MaybeFlush();
  // Writes `text` after what is buffered: copied into the buffer while it
  // fits in the room Create reserved (no allocation), else written out.
  Status Write(std::string_view text);
  // Writes the rest, syncs and closes.
  Status Finish();

 private:
  explicit CsvWriter(std::unique_ptr<env::WritableFile> file) : file_(std::move(file)) {}
  std::unique_ptr<env::WritableFile> file_;
  std::string buf_;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_CSV_WRITER_H_
