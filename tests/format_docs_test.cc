// The format documents against the code (review of the string-list value,
// stop 45; failed before the documents were corrected).
//
// Review of the string-list value (fe11c3b) and the format bumps around it,
// finding F3: the format documents' header tables name a format version this
// build does not write.
//
// docs/checkpoint_format.md's header table says
//   | 8 | 4 | format_version | 4 (this build also reads 1, 2 and 3); ...
// while checkpoint::kFormatVersion is 5 (the same document says "this build
// writes format 5 and reads formats 1 to 5" further down, and its worked
// example shows `05 00 00 00`). The WAL document's row is right (5, reads 1
// to 4), but src/wal/wal_format.h's grammar comment still says
// `format_version:u32 = 4` and `Group := Record+ GroupPadding? (versions 3, 4)`
// (version 5 segments are padded too). DESIGN.md: "Every byte format is
// written down in docs/ (grammar + worked example)"; an independent reader
// (tests/independent_reader.cc is one) starts at that table.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "checkpoint/checkpoint_format.h"
#include "gtest/gtest.h"
#include "wal/wal_format.h"

namespace quiver {
namespace {

const std::filesystem::path kListRevSourceDir = std::filesystem::path(QUIVER_TESTS_SOURCE_DIR).parent_path();

std::string ListRevReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The `format_version` row of a document's header table: its meaning cell.
std::string ListRevFormatVersionRow(const std::string& doc) {
  const std::string row = "| 8 | 4 | format_version | ";
  const std::size_t at = doc.find(row);
  if (at == std::string::npos) return "<no format_version row>";
  const std::size_t end = doc.find('\n', at);
  return doc.substr(at + row.size(), end - at - row.size());
}

TEST(ListRevFormatDocsTest, HeaderTablesNameTheVersionThisBuildWrites) {
  for (auto [name, version] : {std::pair{"checkpoint_format.md", checkpoint::kFormatVersion},
                               {"wal_format.md", wal::kFormatVersion}}) {
    SCOPED_TRACE(name);
    const std::string doc = ListRevReadFile(kListRevSourceDir / "docs" / name);
    ASSERT_FALSE(doc.empty());
    const std::string cell = ListRevFormatVersionRow(doc);
    EXPECT_EQ(cell.rfind(std::to_string(version) + " (", 0), 0u) << cell;
  }
}

TEST(ListRevFormatDocsTest, WalFormatHeaderGrammarNamesTheVersionThisBuildWrites) {
  const std::string header = ListRevReadFile(kListRevSourceDir / "src" / "wal" / "wal_format.h");
  ASSERT_FALSE(header.empty());
  EXPECT_NE(header.find("format_version:u32 = " + std::to_string(wal::kFormatVersion)), std::string::npos);
}

}  // namespace
}  // namespace quiver
