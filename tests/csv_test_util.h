// Helpers of the CSV reader's tests (csv_reader_test.cc and its review
// tests): every record a reader gives, as text.
#ifndef QUIVER_TESTS_CSV_TEST_UTIL_H_
#define QUIVER_TESTS_CSV_TEST_UTIL_H_

#include <string>
#include <vector>

#include "import/csv_reader.h"

namespace quiver::testing_csv {

using Records = std::vector<std::vector<std::string>>;

// The records until the end or the first error (its message in *error).
inline Records ReadAll(import::CsvReader* r, std::string* error) {
  Records out;
  while (true) {
    Result<bool> more = r->Next();
    if (!more.ok()) {
      *error = std::string(more.status().message());
      return out;
    }
    if (!*more) return out;
    std::vector<std::string> record;
    for (const import::CsvField& f : r->fields()) record.emplace_back(f.text);
    out.push_back(record);
  }
}

}  // namespace quiver::testing_csv

#endif  // QUIVER_TESTS_CSV_TEST_UTIL_H_
