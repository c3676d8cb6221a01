// CsvReader (import/csv_reader.h) against a byte-at-a-time reference on
// random text: fields of every length around the reader's 64-byte blocks,
// with the delimiter, line breaks ("\n" and "\r\n") and quotes at every
// offset, quoted fields holding delimiters, line breaks and doubled quotes,
// multi-byte UTF-8, and the errors (a quote inside an unquoted field,
// invalid UTF-8) at their line and column; the same text cut at every
// offset by the reader's chunk boundary; the block classifier's SSE2 and
// portable forms against each other.
#include "import/csv_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "csv_test_util.h"
#include "env/sim_file_system.h"
#include "import/csv_classify.h"

namespace quiver::csv_reader_test {
namespace {

using testing_csv::Records;

// The reader's first chunk (CsvReader::Fill).
constexpr std::size_t kChunk = std::size_t{1} << 20;

std::string Position(std::size_t line, std::size_t column) {
  return std::to_string(line) + ":" + std::to_string(column) + ": ";
}

// The reference: the dialect as csv_reader.h states it, a byte at a time,
// for text whose lines end in "\n" or "\r\n". Returns the records, or sets
// *error to "<line>:<column>: <reason>" (a record's structure is checked
// before its UTF-8, as the reader does).
Records Reference(const std::string& t, char delim, std::string* error, std::size_t first_line = 1) {
  Records out;
  std::size_t p = 0, line = first_line, line_start = 0;
  auto at_eol = [&t](std::size_t i) {
    return i == t.size() || t[i] == '\n' || (t[i] == '\r' && i + 1 < t.size() && t[i + 1] == '\n');
  };
  while (p < t.size()) {
    if (t[p] == '\n' || (t[p] == '\r' && p + 1 < t.size() && t[p + 1] == '\n')) {  // an empty line
      p += t[p] == '\r' ? 2 : 1;
      ++line, line_start = p;
      continue;
    }
    std::vector<std::string> record;
    std::vector<std::string> where;  // each field's "<line>:<column>: "
    while (true) {
      std::string field;
      where.push_back(Position(line, p - line_start + 1));
      if (t[p] == '"') {
        const std::string quote_at = where.back();
        ++p;
        while (true) {
          if (p == t.size()) {
            *error = quote_at + "unterminated";
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
        if (!(p < t.size() && t[p] == delim) && !at_eol(p)) {
          *error = Position(line, p - line_start + 1) + "unexpected character after a closing quote";
          return out;
        }
      } else {
        while (p < t.size() && t[p] != delim && t[p] != '\n') {
          if (t[p] == '"') {
            *error = Position(line, p - line_start + 1) + "quote inside an unquoted field";
            return out;
          }
          field += t[p++];
        }
        if ((p == t.size() || t[p] == '\n') && !field.empty() && field.back() == '\r') field.pop_back();
      }
      record.push_back(field);
      if (p < t.size() && t[p] == delim) {
        ++p;
        continue;
      }
      break;
    }
    for (std::size_t f = 0; f < record.size(); ++f) {
      if (!base::IsValidUtf8(record[f])) {
        *error = where[f] + "invalid UTF-8";
        return out;
      }
    }
    out.push_back(record);
    if (p < t.size() && t[p] == '\r') ++p;
    if (p < t.size() && t[p] == '\n') ++p, ++line, line_start = p;
  }
  return out;
}

using testing_csv::ReadAll;

Records Read(const std::string& t, char delim, std::string* error) {
  auto r = import::CsvReader::OverBytes("r.csv", t, import::CsvDialect{delim, true}, 1);
  return ReadAll(r.get(), error);
}

// What random text holds.
struct TextShape {
  int max_len = 20;        // characters a field
  bool crlf = false;       // some lines end in "\r\n"
  bool non_ascii = false;  // some characters are 2-4 UTF-8 bytes
  bool bad_utf8 = false;   // now and then an invalid byte in a field
  bool bad_quotes = true;  // now and then a quote inside an unquoted field
};

std::string RandomText(std::mt19937_64& rng, char delim, const TextShape& shape) {
  std::string t;
  const int records = 1 + static_cast<int>(rng() % 4);
  const bool bad = rng() % 5 == 0;
  const int bad_record = static_cast<int>(rng() % records);
  const char* wide[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
  const char* invalid[] = {"\xFF", "\x80", "\xC3", "\xE2\x82", "\xED\xA0\x80", "\xC0\xAF"};
  auto character = [&]() -> std::string {
    if (shape.non_ascii && rng() % 8 == 0) return wide[rng() % 3];
    return std::string(1, static_cast<char>('a' + rng() % 26));
  };
  for (int r = 0; r < records; ++r) {
    const int fields = 1 + static_cast<int>(rng() % 5);
    for (int f = 0; f < fields; ++f) {
      if (f > 0) t += delim;
      const int len = static_cast<int>(rng() % (shape.max_len + 1));
      std::string field;
      if (rng() % 6 == 0) {  // quoted, with what needs quoting
        field += '"';
        for (int i = 0; i < len; ++i) {
          const char* specials[] = {",", "\t", "|", "\n", "\"\"", "\r\n"};
          field += rng() % 4 == 0 ? std::string(specials[rng() % (shape.crlf ? 6 : 5)]) : character();
        }
        field += '"';
      } else {
        for (int i = 0; i < len; ++i) field += character();
        if (shape.bad_quotes && bad && r == bad_record && f == fields - 1 && len > 0)
          field.insert(field.size() - rng() % len, 1, '"');
      }
      if (shape.bad_utf8 && bad && r == bad_record && f == fields - 1)
        field.insert(field.empty() ? 0 : 1 + rng() % field.size(), invalid[rng() % 6]);
      t += field;
    }
    const char* eol = shape.crlf && rng() % 2 == 0 ? "\r\n" : "\n";
    t += eol;
    if (rng() % 8 == 0) t += eol;  // now and then an empty line
  }
  if (rng() % 4 == 0) t.pop_back();  // the last record without its line break (or half of it)
  return t;
}

// Reads `t` and holds the records or the error against the reference's.
// Returns whether the reference found an error.
bool Check(const std::string& t, char delim) {
  std::string want_error, got_error;
  const Records want = Reference(t, delim, &want_error);
  const Records got = Read(t, delim, &got_error);
  if (!want_error.empty()) {
    EXPECT_NE(got_error.find(want_error), std::string::npos)
        << "text: " << t << "\nwant " << want_error << "\ngot " << got_error;
    return true;
  }
  EXPECT_EQ(got_error, "") << t;
  EXPECT_EQ(got, want) << "text: " << t;
  return false;
}

TEST(CsvReaderTest, SplitsLikeTheByteByByteReferenceAtEveryOffset) {
  std::mt19937_64 rng(20261205);
  int errors = 0, cases = 0;
  for (char delim : {',', '\t', '|'}) {
    for (int round = 0; round < 3000; ++round) {
      errors += Check(RandomText(rng, delim, TextShape{}), delim) ? 1 : 0;
      ++cases;
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(errors, cases / 10) << "the cases include quotes inside unquoted fields";
}

TEST(CsvReaderTest, FieldsAcrossBlocksWithCrlfAndUtf8LikeTheReference) {
  std::mt19937_64 rng(20261206);
  int errors = 0, cases = 0;
  for (char delim : {',', '\t'}) {
    for (const int max_len : {40, 90, 200}) {
      for (int round = 0; round < 800; ++round) {
        TextShape shape;
        shape.max_len = max_len;
        shape.crlf = rng() % 2 == 0;
        shape.non_ascii = rng() % 2 == 0;
        shape.bad_utf8 = rng() % 2 == 0;
        shape.bad_quotes = !shape.bad_utf8;
        errors += Check(RandomText(rng, delim, shape), delim) ? 1 : 0;
        ++cases;
        if (HasFailure()) return;
      }
    }
  }
  EXPECT_GT(errors, cases / 20) << "the cases include errors";
}

TEST(CsvReaderTest, InvalidUtf8AtEveryPositionOfABlock) {
  for (std::size_t at = 0; at < 140; ++at) {
    for (const char* bad : {"\xFF", "\x80", "\xC3", "\xF0\x9F\x98"}) {
      std::string field(150, 'x');
      field.replace(at, 1, bad);
      const std::string t = "id,name\n1," + field + ",z\n";
      std::string error;
      Read(t, ',', &error);
      EXPECT_EQ(error, "r.csv:2:3: invalid UTF-8") << at;
      // Quoted, and in the first field.
      Read("\"" + field + "\",z\n", ',', &error);
      EXPECT_EQ(error, "r.csv:1:1: invalid UTF-8") << at;
    }
    // A valid multi-byte character at every offset, across a block.
    std::string field(150, 'x');
    field.replace(at, 1, "\xF0\x9F\x98\x80");
    std::string error;
    const Records got = Read("a," + field + "\n", ',', &error);
    EXPECT_EQ(error, "") << at;
    EXPECT_EQ(got, (Records{{"a", field}})) << at;
  }
}

// Text starts after `kChunk - shift` empty lines of a file, so the
// reader's first chunk ends `shift` bytes into it: every byte of each text
// at the end of a chunk.
TEST(CsvReaderTest, ChunkBoundaryAtEveryByte) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/d").ok());
  std::mt19937_64 rng(20261207);
  std::vector<std::string> texts = {"a,b\n",        "\"q\",x\n",           "x,\"a\"\"b\"\n",
                                    "a\r\nb\r\n",   "\"a\nb\",c\r\n",      "\xC3\xA9,\xE2\x82\xAC\n",
                                    "a,\"\"\"\"\n", "\"\",\"x\"\r\n\r\nq", "a,b\"c\n",
                                    "\"a\"b\n"};
  TextShape shape;
  shape.max_len = 12;
  shape.crlf = true;
  shape.non_ascii = true;
  shape.bad_utf8 = true;
  for (int i = 0; i < 6; ++i) texts.push_back(RandomText(rng, ',', shape));
  for (const std::string& t : texts) {
    for (std::size_t shift = 1; shift <= t.size(); ++shift) {
      const std::size_t blank = kChunk - shift;
      std::string want_error, got_error;
      const Records want = Reference(t, ',', &want_error, 1 + blank);
      ASSERT_TRUE(fs.WriteFileForTest("/d/c.csv", std::string(blank, '\n') + t).ok());
      auto r = import::CsvReader::Open(&fs, "/d/c.csv", {});
      ASSERT_TRUE(r.ok());
      const Records got = ReadAll(r->get(), &got_error);
      if (!want_error.empty()) {
        EXPECT_NE(got_error.find(want_error), std::string::npos)
            << t << " shift " << shift << ": " << got_error;
      } else {
        EXPECT_EQ(got_error, "") << t << " shift " << shift;
        EXPECT_EQ(got, want) << t << " shift " << shift;
      }
      if (HasFailure()) return;
    }
  }
}

// Fields longer than a chunk, through the FileSystem seam: the reader
// grows its chunk and reads them whole, positions counted across chunks.
TEST(CsvReaderTest, FieldsLongerThanAChunkFromAFile) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/d").ok());
  const std::string plain(3 * kChunk + 17, 'p');
  std::string quoted_text;  // unescaped
  std::string quoted = "\"";
  for (std::size_t i = 0; quoted_text.size() < 2 * kChunk + 5; ++i) {
    const char* piece = i % 1000 == 999 ? "\"" : (i % 777 == 0 ? "\n" : "q,");
    quoted_text += piece;
    quoted += piece[0] == '"' ? "\"\"" : piece;
  }
  quoted += '"';
  std::string text = "1," + plain + "," + quoted + "\r\n2,\xC3\xA9\n";
  ASSERT_TRUE(fs.WriteFileForTest("/d/long.csv", text).ok());
  auto r = import::CsvReader::Open(&fs, "/d/long.csv", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string error;
  const Records got = ReadAll(r->get(), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (std::vector<std::string>{"1", plain, quoted_text}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"2", "\xC3\xA9"}));
  // The second record's line: after the line breaks inside the quoted field.
  const std::size_t breaks = static_cast<std::size_t>(std::count(quoted.begin(), quoted.end(), '\n'));
  EXPECT_EQ((*r)->line(), 2 + breaks);
  // An error past the long fields has its place.
  text += "3,\"x\"y\n";
  ASSERT_TRUE(fs.WriteFileForTest("/d/long.csv", text).ok());
  auto again = import::CsvReader::Open(&fs, "/d/long.csv", {});
  ASSERT_TRUE(again.ok());
  ReadAll(again->get(), &error);
  EXPECT_EQ(error,
            "/d/long.csv:" + std::to_string(3 + breaks) + ":6: unexpected character after a closing quote");
}

// Quoting off: '"' is an ordinary character (EVLP), and with '\n' as the
// delimiter a line is one field (JSON Lines), also across 64-byte blocks.
TEST(CsvReaderTest, QuotingOffAndOneFieldALine) {
  const std::string long_json = "{\"k\": \"" + std::string(150, 'v') + "\", \"q\": \"a,b\"}";
  const std::string t = "a \"b c\"\n\n" + long_json + "\r\n";
  auto evlp = import::CsvReader::OverBytes("e.txt", t, import::CsvDialect{' ', false}, 1);
  std::string error;
  EXPECT_EQ(ReadAll(evlp.get(), &error),
            (Records{{"a", "\"b", "c\""},
                     {"{\"k\":", "\"" + std::string(150, 'v') + "\",", "\"q\":", "\"a,b\"}"}}));
  EXPECT_EQ(error, "");
  auto jsonl = import::CsvReader::OverBytes("j.jsonl", t, import::CsvDialect{'\n', false}, 1);
  EXPECT_EQ(ReadAll(jsonl.get(), &error), (Records{{"a \"b c\""}, {long_json}}));
  EXPECT_EQ(error, "");
  EXPECT_EQ(jsonl->line(), 3u);
}

TEST(CsvReaderTest, ClassifierFormsAgree) {
  std::mt19937_64 rng(20261208);
  const char set[] = {',', '\n', '"', '\r', '\t', 'a', '\0', '\x80', '\xFF', '\x7F', '\x01'};
  for (int round = 0; round < 20000; ++round) {
    char block[import::kCsvBlock];
    for (char& c : block) c = rng() % 3 == 0 ? static_cast<char>(rng()) : set[rng() % sizeof set];
    const char a = set[rng() % sizeof set], b = set[rng() % sizeof set], c = set[rng() % sizeof set];
    std::uint64_t want = 0;
    for (std::size_t i = 0; i < import::kCsvBlock; ++i)
      if (block[i] == a || block[i] == b || block[i] == c) want |= std::uint64_t{1} << i;
    ASSERT_EQ(import::ClassifyBlockScalar(block, a, b, c), want) << round;
#if QUIVER_CSV_SSE2
    ASSERT_EQ(import::ClassifyBlockSse2(block, a, b, c), want) << round;
#endif
  }
}

TEST(CsvReaderTest, IsAsciiAtEveryLengthAndPosition) {
  for (std::size_t n = 0; n < 70; ++n) {
    EXPECT_TRUE(base::IsAscii(std::string(n, '\x7F'))) << n;
    for (std::size_t at = 0; at < n; ++at) {
      std::string s(n, 'a');
      s[at] = '\x80';
      EXPECT_FALSE(base::IsAscii(s)) << n << " " << at;
    }
  }
}

}  // namespace
}  // namespace quiver::csv_reader_test
