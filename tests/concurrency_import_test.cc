// The parallel parsing of an import under ThreadSanitizer: an EVLP edge
// file cut into many small blocks, validated and then encoded into a new
// graph's checkpoint on 4 threads, gives what one thread gives. Built into
// the concurrency binary, so the tsan stage runs it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "import/importer.h"
#include "import_test_util.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

std::string ImportAndDump(env::SimFileSystem& fs, const std::string& dir, std::uint32_t threads) {
  ImportOptions o;
  o.format = DataFormat::kEvlp;
  o.threads = threads;
  o.skip_bad_rows = 1'000;
  const ImportSpec spec{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
  import::Importer importer(&fs, dir, spec, o);
  importer.SetBlockBytesForTesting(512);
  Result<ImportStats> r = importer.Run();
  if (!r.ok()) return r.status().ToString();
  std::string out = std::to_string(r->rejected.size()) + " rejected\n";
  Options open;
  open.create_if_missing = false;
  auto g = GraphImpl::OpenDurable(open, dir, &fs);
  if (!g.ok()) return g.status().ToString();
  return out + testing_import::Canonical((*g)->GetSnapshot());
}

TEST(ConcurrencyImportTest, ParallelParsingGivesWhatOneThreadGives) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  std::string vertices, edges;
  for (int i = 0; i < 2'000; ++i) vertices += std::to_string(i * 3) + "\n";
  for (int i = 0; i < 20'000; ++i) {
    const int b = i % 97 == 5 ? 1 : ((i * 31) % 2'000) * 3;  // 1 names no vertex: rejected
    edges +=
        std::to_string((i % 2'000) * 3) + " " + std::to_string(b) + " " + std::to_string(i % 10) + ".5\n";
  }
  testing_import::PutFile(fs, "/in/g.v", vertices);
  testing_import::PutFile(fs, "/in/g.e", edges);
  const std::string one = ImportAndDump(fs, "/one", 1);
  ASSERT_EQ(one.substr(0, 13), "207 rejected\n") << one.substr(0, 200);
  EXPECT_EQ(ImportAndDump(fs, "/four", 4), one);
}

}  // namespace
}  // namespace quiver
