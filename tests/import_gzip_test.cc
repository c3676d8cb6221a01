// Gzip input to import (src/import/gzip_file.h): a compressed file in any
// format gives the graph its plain text gives, on both paths and any thread
// count (it is read on one thread); several members read as their
// concatenation; positions are those of the decompressed text; a truncated
// or damaged file is an error that changes nothing; progress counts the
// compressed bytes, up to the file's size.

#include <string>
#include <vector>

#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver {
namespace {

using testing_import::Canonical;
using testing_import::Gzip;
using testing_import::PutFile;
using testing_import::RunImport;

struct Files {
  std::string vertices, edges;
  DataFormat format;
};

std::vector<Files> Formats() {
  std::string evlp_v, evlp_e, jv, je, cv = "id:ID,n:int\n", ce = ":START_ID,:END_ID,:TYPE,w:double\n";
  for (int i = 0; i < 3000; ++i) {
    evlp_v += std::to_string(i) + "\n";
    jv += "{\"id\": " + std::to_string(i) + ", \"properties\": {\"n\": " + std::to_string(i) + "}}\n";
    cv += "v" + std::to_string(i) + "," + std::to_string(i) + "\n";
  }
  for (int i = 0; i < 30000; ++i) {
    const std::string a = std::to_string(i % 3000), b = std::to_string((i * 7) % 3000);
    evlp_e += a + " " + b + " 0.5\n";
    je += "{\"start\": " + a + ", \"end\": " + b + "}\n";
    ce += "v" + a + ",v" + b + ",R," + std::to_string(i) + ".25\n";
  }
  return {{cv, ce, DataFormat::kCsv}, {evlp_v, evlp_e, DataFormat::kEvlp}, {jv, je, DataFormat::kJsonl}};
}

Options OpenOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.create_if_missing = false;
  return o;
}

TEST(ImportGzipTest, ACompressedFileGivesThePlainFilesGraphOnBothPaths) {
  for (const Files& f : Formats()) {
    SCOPED_TRACE(static_cast<int>(f.format));
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    PutFile(fs, "/in/v", f.vertices);
    PutFile(fs, "/in/e", f.edges);
    // The edges in two members, as `cat a.gz b.gz` makes them.
    const std::size_t half = f.edges.find('\n', f.edges.size() / 2) + 1;
    PutFile(fs, "/in/v.gz", Gzip(f.vertices));
    PutFile(fs, "/in/e.gz", Gzip(f.edges.substr(0, half)) + Gzip(f.edges.substr(half)));
    ImportOptions o;
    o.format = f.format;
    o.threads = 3;
    auto plain = Graph::OpenInMemory().value();
    ASSERT_TRUE(RunImport(fs, *plain, {.vertices = {{"/in/v", "V"}}, .edges = {{"/in/e", "E"}}}, o).ok());
    const ImportSpec gz{.vertices = {{"/in/v.gz", "V"}}, .edges = {{"/in/e.gz", "E"}}};
    auto batched = Graph::OpenInMemory().value();
    Result<ImportStats> r = RunImport(fs, *batched, gz, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->edges, 30000u);
    EXPECT_EQ(Canonical(batched->GetSnapshot()), Canonical(plain->GetSnapshot()));
    import::Importer bulk(&fs, std::string("/g"), gz, o);
    r = bulk.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto g = GraphImpl::OpenDurable(OpenOptions(), "/g", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(Canonical((*g)->GetSnapshot()), Canonical(plain->GetSnapshot()));
  }
}

TEST(ImportGzipTest, BadRowsAreReportedAtTheirDecompressedPosition) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/v.csv.gz", Gzip("id:ID,age:int\np1,1\np2,x\n"));
  auto g = Graph::OpenInMemory().value();
  Result<ImportStats> r = RunImport(fs, *g, {.vertices = {{"/in/v.csv.gz", "P"}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "/in/v.csv.gz:3:4: 'x' is not an int (column age)");
}

TEST(ImportGzipTest, ATruncatedOrDamagedFileIsAnErrorThatChangesNothing) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + "\n";
  const std::string gz = Gzip(text);
  struct Case {
    const char* name;
    std::string bytes;
    std::string reason;
  };
  std::string damaged = gz;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x5a);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] = static_cast<char>(bad_crc[bad_crc.size() - 6] ^ 1);  // the CRC-32 trailer
  const std::vector<Case> cases = {
      {"cut in the middle", gz.substr(0, gz.size() / 2), "truncated gzip file"},
      {"cut before its trailer", gz.substr(0, gz.size() - 4), "truncated gzip file"},
      {"header only", gz.substr(0, 10), "truncated gzip file"},
      {"a damaged byte", damaged, "invalid gzip data ("},
      {"a wrong CRC", bad_crc, "invalid gzip data (incorrect data check)"},
      {"garbage after a member", gz + "xyz", "invalid gzip data ("},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    PutFile(fs, "/in/g.v.gz", c.bytes);
    const ImportSpec spec{.vertices = {{"/in/g.v.gz", "V"}}};
    ImportOptions o;
    o.format = DataFormat::kEvlp;
    auto g = Graph::OpenInMemory().value();
    Result<ImportStats> r = RunImport(fs, *g, spec, o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_EQ(r.status().message().substr(0, 11), "/in/g.v.gz:") << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.reason), std::string::npos) << r.status().ToString();
    EXPECT_EQ(g->GetSnapshot().sequence(), 0u);
    import::Importer bulk(&fs, std::string("/g"), spec, o);
    EXPECT_FALSE(bulk.Run().ok());
    const std::vector<std::string> left = fs.ListDir("/g").value_or(std::vector<std::string>{});
    EXPECT_TRUE(left.empty() || left == std::vector<std::string>{"LOCK"});
  }
}

TEST(ImportGzipTest, ProgressCountsCompressedBytesUpToTheFileSize) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  std::string text;
  for (int i = 0; i < 300000; ++i) text += std::to_string(i) + "\n";
  const std::string gz = Gzip(text);
  PutFile(fs, "/in/g.v.gz", gz);
  std::uint64_t last = 0, reports = 0;
  ImportOptions o;
  o.format = DataFormat::kEvlp;
  o.progress = [&](const ImportProgress& p) {
    EXPECT_EQ(p.bytes_total, gz.size());
    EXPECT_LE(p.bytes_done, p.bytes_total);
    last = p.bytes_done;
    ++reports;
  };
  auto g = Graph::OpenInMemory().value();
  Result<ImportStats> r = RunImport(fs, *g, {.vertices = {{"/in/g.v.gz", "V"}}}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(last, gz.size());
  EXPECT_GE(reports, 8u);  // 4 row reports per pass, besides the starts and ends
}

}  // namespace
}  // namespace quiver
