// CsvReader (import/csv_reader.h) against a byte-at-a-time reference on
// random text: fields of every length around the eight-byte steps of the
// reader's field scan, with the delimiter, line breaks and quotes at every
// offset, quoted fields holding delimiters, line breaks and doubled quotes,
// and a quote inside an unquoted field (an error at its line and column).
#include "import/csv_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace quiver::csv_reader_test {
namespace {

using Records = std::vector<std::vector<std::string>>;

// The reference: the dialect as csv_reader.h states it, for text without
// '\r'. Returns the records, or sets *error to "<line>:<column>: <reason>".
Records Reference(const std::string& t, char delim, std::string* error) {
  Records out;
  std::size_t p = 0, line = 1, line_start = 0;
  while (p < t.size()) {
    if (t[p] == '\n') {  // an empty line
      ++p, ++line, line_start = p;
      continue;
    }
    std::vector<std::string> record;
    while (true) {
      std::string field;
      if (t[p] == '"') {
        ++p;
        while (true) {
          if (p == t.size()) {
            *error = "unterminated";
            return out;
          }
          if (t[p] == '"' && p + 1 < t.size() && t[p + 1] == '"') {
            field += '"';
            p += 2;
          } else if (t[p] == '"') {
            ++p;
            break;
          } else {
            if (t[p] == '\n') ++line, line_start = p + 1;
            field += t[p++];
          }
        }
      } else {
        while (p < t.size() && t[p] != delim && t[p] != '\n') {
          if (t[p] == '"') {
            *error = std::to_string(line) + ":" + std::to_string(p - line_start + 1) +
                     ": quote inside an unquoted field";
            return out;
          }
          field += t[p++];
        }
      }
      record.push_back(field);
      if (p < t.size() && t[p] == delim) {
        ++p;
        continue;
      }
      break;
    }
    out.push_back(record);
    if (p < t.size() && t[p] == '\n') ++p, ++line, line_start = p;
  }
  return out;
}

Records Read(const std::string& t, char delim, std::string* error) {
  auto r = import::CsvReader::OverBytes("r.csv", t, import::CsvDialect{delim, true}, 1);
  Records out;
  while (true) {
    Result<bool> more = r->Next();
    if (!more.ok()) {
      *error = more.status().message();
      return out;
    }
    if (!*more) return out;
    std::vector<std::string> record;
    for (const import::CsvField& f : r->fields()) record.emplace_back(f.text);
    out.push_back(record);
  }
}

TEST(CsvReaderTest, SplitsLikeTheByteByByteReferenceAtEveryOffset) {
  std::mt19937_64 rng(20261205);
  int errors = 0, cases = 0;
  for (char delim : {',', '\t', '|'}) {
    for (int round = 0; round < 3000; ++round) {
      std::string t;
      const int records = 1 + static_cast<int>(rng() % 4);
      const bool bad = rng() % 5 == 0;
      const int bad_record = static_cast<int>(rng() % records);
      for (int r = 0; r < records; ++r) {
        const int fields = 1 + static_cast<int>(rng() % 5);
        for (int f = 0; f < fields; ++f) {
          if (f > 0) t += delim;
          const int len = static_cast<int>(rng() % 20);  // across the 8-byte steps
          if (rng() % 6 == 0) {                          // quoted, with what needs quoting
            t += '"';
            for (int i = 0; i < len; ++i) {
              const char* specials[] = {",", "\t", "|", "\n", "\"\""};
              t += rng() % 4 == 0 ? std::string(specials[rng() % 5]) : std::string(1, 'a' + rng() % 26);
            }
            t += '"';
            continue;
          }
          for (int i = 0; i < len; ++i) t += static_cast<char>('a' + rng() % 26);
          if (bad && r == bad_record && f == fields - 1 && len > 0) t.insert(t.size() - rng() % len, 1, '"');
        }
        t += rng() % 8 == 0 ? "\n\n" : "\n";  // now and then an empty line
      }
      if (rng() % 4 == 0) t.pop_back();  // the last record without its line break
      std::string want_error, got_error;
      const Records want = Reference(t, delim, &want_error);
      const Records got = Read(t, delim, &got_error);
      ++cases;
      if (!want_error.empty()) {
        ++errors;
        EXPECT_NE(got_error.find(want_error), std::string::npos)
            << "text: " << t << "\nwant " << want_error << "\ngot " << got_error;
        continue;
      }
      ASSERT_EQ(got_error, "") << t;
      ASSERT_EQ(got, want) << "text: " << t;
    }
  }
  EXPECT_GT(errors, cases / 10) << "the cases include quotes inside unquoted fields";
}

}  // namespace
}  // namespace quiver::csv_reader_test
