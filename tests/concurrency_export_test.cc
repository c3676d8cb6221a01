// Export's workers under ThreadSanitizer: chunks formatted on 2, 4 and 8
// threads hand their text to one file in order (through the ring of
// finished chunks, and mid-chunk spills), while a writer keeps committing;
// the files equal one thread's export of the same snapshot. Built into the
// concurrency binary, so the tsan stage runs it.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "env/sim_file_system.h"
#include "import/exporter.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

std::string Contents(env::FileSystem& fs, const std::string& path) {
  auto file = fs.OpenReadable(path).value();
  std::string text(file->Size().value(), '\0');
  EXPECT_EQ(file->ReadAt(0, std::as_writable_bytes(std::span(text))).value(), text.size());
  return text;
}

TEST(ConcurrencyExportTest, WorkersWriteWhatOneThreadWritesWhileWritesGoOn) {
  auto graph = Graph::OpenInMemory().value();
  {
    WriteBatch b;
    std::vector<NewVertex> vs;
    for (int i = 0; i < 3000; ++i)
      vs.push_back(b.AddVertex("V", {{"id", std::int64_t{10 * i}}, {"name", std::string(i % 40, 'n')}}));
    for (int i = 0; i < 9000; ++i)
      b.AddEdge("E", vs[(i * 7) % 3000], vs[(i * 11) % 3000], {{"weight", 0.5 * i}});
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  const Snapshot snap = graph->GetSnapshot();
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      WriteBatch b;
      b.AddVertex("V", {{"id", std::int64_t{-1 - i}}});
      if (!graph->Write(std::move(b)).ok()) {
        ADD_FAILURE() << "a write failed";
        return;
      }
    }
  });
  // Stops and joins the writer however the test body returns.
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Joiner() {
      stop = true;
      t.join();
    }
  } joiner{stop, writer};
  env::SimFileSystem fs;
  const import::ExportTuning small{.chunk_ids = 50, .spill_bytes = 512, .pending_bytes = 4096, .ring = 6};
  int n = 0;
  for (DataFormat format : {DataFormat::kCsv, DataFormat::kEvlp, DataFormat::kJsonl}) {
    const auto want =
        import::RunExport(&fs, snap, "/ref" + std::to_string(n++), {.format = format, .threads = 1});
    ASSERT_TRUE(want.ok());
    for (std::uint32_t threads : {2u, 4u, 8u}) {
      SCOPED_TRACE(threads);
      const auto got = import::RunExport(&fs, snap, "/out" + std::to_string(n++),
                                         {.format = format, .threads = threads}, small);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(got->vertices, want->vertices);
      EXPECT_EQ(got->edges, want->edges);
      for (std::size_t f = 0; f < 2; ++f)
        EXPECT_EQ(Contents(fs, got->files[f]), Contents(fs, want->files[f]));
    }
  }
}

}  // namespace
}  // namespace quiver
