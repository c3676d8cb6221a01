// quiver::Export on several threads: the files are byte for byte those of
// one thread for every thread count and chunking (holes, empty chunks,
// chunks that spill mid-way, a full ring of finished chunks); the text in
// flight stays bounded whatever the rows hold; running out of memory is a
// status that leaves no file behind.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "env/fault_file_system.h"
#include "env/file_system.h"
#include "env/sim_file_system.h"
#include "gtest/gtest.h"
#include "import/exporter.h"
#include "import/field_value.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver {
namespace {

using import::ExportTuning;
using testing_import::GetFile;

constexpr DataFormat kFormats[] = {DataFormat::kCsv, DataFormat::kEvlp, DataFormat::kJsonl};

// ~2,000 vertices of two labels and ~6,000 edges of two types with every
// value type, text that needs quoting and escaping, a distinct int64 "id"
// and a "weight" on every edge (so EVLP writes both); then a run of 500
// vertices removed with their edges (chunks with nothing live) and every
// seventh of the rest (holes).
std::unique_ptr<Graph> MixedGraph() {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 2000; ++i) {
    std::vector<Property> props = {{"id", std::int64_t{1000000 + 3 * i}}};
    if (i % 2 == 0) props.push_back({"name", "v\"" + std::to_string(i) + ",\n" + std::string(i % 50, 'x')});
    if (i % 3 == 0) props.push_back({"score", 0.1 * i});
    if (i % 5 == 0) props.push_back({"flag", i % 10 == 0});
    if (i % 7 == 0) props.push_back({"vec", std::vector<float>{1.5f, -2.0f, static_cast<float>(i)}});
    if (i % 11 == 0 && i % 3 != 0) props.push_back({"score", "text " + std::to_string(i)});  // a second type
    vs.push_back(b.AddVertex(i % 4 == 0 ? "Person" : "City, \"big\"", props));
  }
  for (int i = 0; i < 6000; ++i) {
    std::vector<Property> props = {
        {"weight", i % 9 == 0 ? PropertyValue(std::int64_t{i}) : PropertyValue(0.25 * i)}};
    if (i % 4 == 0) props.push_back({"note", std::string("e\t") + std::to_string(i)});
    b.AddEdge(i % 3 == 0 ? "KNOWS" : "LIVES_IN", vs[(i * 7) % 2000], vs[(i * 13 + 5) % 2000], props);
  }
  EXPECT_TRUE(graph->Write(std::move(b)).ok());
  WriteBatch r;
  Snapshot snap = graph->GetSnapshot();
  std::uint64_t i = 0;
  for (VertexId v : snap.Vertices()) {
    if ((i >= 700 && i < 1200) || i % 7 == 3) r.RemoveVertex(v);
    ++i;
  }
  EXPECT_TRUE(graph->Write(std::move(r)).ok());
  return graph;
}

struct Files {
  std::vector<std::string> contents;
  ExportStats stats;
};

Files ExportInto(env::SimFileSystem& fs, const Snapshot& snap, const std::string& dir,
                 const ExportOptions& options, const ExportTuning& tuning) {
  Result<ExportStats> r = import::RunExport(&fs, snap, dir, options, tuning);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  Files f;
  if (!r.ok()) return f;
  f.stats = *r;
  for (const std::string& path : r->files) f.contents.push_back(GetFile(fs, path));
  return f;
}

TEST(ExportTest, FilesAreTheSameOnEveryThreadCountAndChunking) {
  auto graph = MixedGraph();
  const Snapshot snap = graph->GetSnapshot();
  const ExportTuning tunings[] = {
      {},
      {.chunk_ids = 7, .spill_bytes = 64, .pending_bytes = 256, .ring = 4},
      {.chunk_ids = 1, .spill_bytes = 1, .pending_bytes = 0, .ring = 1},
      {.chunk_ids = 97,
       .spill_bytes = std::size_t{1} << 20,
       .pending_bytes = std::size_t{1} << 20,
       .ring = 2},
      {.chunk_ids = 300, .spill_bytes = 4096, .pending_bytes = 100000, .ring = 64},
  };
  env::SimFileSystem fs;
  int n = 0;
  for (DataFormat format : kFormats) {
    const Files want =
        ExportInto(fs, snap, "/ref" + std::to_string(n++), {.format = format, .threads = 1}, {});
    ASSERT_EQ(want.contents.size(), 2u);
    EXPECT_GT(want.stats.vertices, 1000u);
    EXPECT_GT(want.stats.edges, 1000u);
    for (std::uint32_t threads : {1u, 2u, 3u, 8u}) {
      for (const ExportTuning& t : tunings) {
        SCOPED_TRACE(testing::Message() << "format " << static_cast<int>(format) << ", threads " << threads
                                        << ", chunk " << t.chunk_ids << ", spill " << t.spill_bytes);
        const Files got =
            ExportInto(fs, snap, "/out" + std::to_string(n++), {.format = format, .threads = threads}, t);
        EXPECT_EQ(got.stats.vertices, want.stats.vertices);
        EXPECT_EQ(got.stats.edges, want.stats.edges);
        EXPECT_TRUE(got.contents == want.contents);
      }
    }
  }
}

// ExportOptions::progress: "vertices" then "edges", each from 0 rows and 0
// bytes up to its live elements and its file's rows (the CSV header line is
// not counted), never back, on the calling thread only, whatever the threads
// and chunking.
TEST(ExportTest, ProgressClimbsToEachFilesRowsAndBytes) {
  auto graph = MixedGraph();
  const Snapshot snap = graph->GetSnapshot();
  env::SimFileSystem fs;
  int n = 0;
  for (DataFormat format : kFormats) {
    for (std::uint32_t threads : {1u, 3u}) {
      SCOPED_TRACE(testing::Message() << "format " << static_cast<int>(format) << ", threads " << threads);
      std::vector<ExportProgress> seen;
      std::vector<std::string> phases;
      bool other_thread = false;
      const std::thread::id caller = std::this_thread::get_id();
      ExportOptions options{.format = format, .threads = threads};
      options.progress = [&](const ExportProgress& p) {
        if (std::this_thread::get_id() != caller) other_thread = true;
        seen.push_back(p);
        if (phases.empty() || phases.back() != p.phase) phases.emplace_back(p.phase);
      };
      const Files got = ExportInto(fs, snap, "/progress" + std::to_string(n++), options,
                                   {.chunk_ids = 97, .spill_bytes = 512, .pending_bytes = 4096, .ring = 4});
      ASSERT_EQ(got.contents.size(), 2u);
      EXPECT_FALSE(other_thread);
      EXPECT_EQ(phases, (std::vector<std::string>{"vertices", "edges"}));
      const std::uint64_t rows[] = {got.stats.vertices, got.stats.edges};
      for (int file = 0; file < 2; ++file) {
        const std::string& text = got.contents[file];
        const std::uint64_t header = format == DataFormat::kCsv ? text.find('\n') + 1 : 0;
        std::uint64_t last_rows = 0, last_bytes = 0, reports = 0;
        for (const ExportProgress& p : seen) {
          if (p.phase != phases[file]) continue;
          if (reports++ == 0) {
            EXPECT_EQ(p.rows_done, 0u);
            EXPECT_EQ(p.bytes_written, 0u);
          }
          EXPECT_EQ(p.rows_total, rows[file]);
          EXPECT_GE(p.rows_done, last_rows);
          EXPECT_GE(p.bytes_written, last_bytes);
          last_rows = p.rows_done;
          last_bytes = p.bytes_written;
        }
        // Its start and end, and on one thread one per chunk of 97 ids
        // (elsewhere those the calling thread happened to format).
        EXPECT_GE(reports, threads == 1 ? 20u : 2u) << phases[file];
        EXPECT_EQ(last_rows, rows[file]) << phases[file];
        EXPECT_EQ(last_bytes, text.size() - header) << phases[file];
      }
    }
  }
}

TEST(ExportTest, EdgeRangesSplitTheEdgesByIdWithoutGapsOrRepeats) {
  auto graph = MixedGraph();
  const Snapshot snap = graph->GetSnapshot();
  std::vector<EdgeId> all, split;
  for (EdgeId e : snap.Edges()) all.push_back(e);
  for (std::uint64_t b = 0; b < snap.edge_id_limit() + 100; b += 333) {
    for (EdgeId e : snap.Edges(b, b + 333)) {
      EXPECT_GE(e.value(), b);
      EXPECT_LT(e.value(), b + 333);
      split.push_back(e);
    }
  }
  EXPECT_EQ(split, all);
  EXPECT_EQ(snap.Edges(snap.edge_id_limit(), snap.edge_id_limit() + 5).begin(),
            snap.Edges(snap.edge_id_limit(), snap.edge_id_limit() + 5).end());
}

TEST(ExportTest, TooManyThreadsOrAnEmptyTuningIsInvalid) {
  auto graph = MixedGraph();
  env::SimFileSystem fs;
  Result<ExportStats> r =
      import::RunExport(&fs, graph->GetSnapshot(), "/out", {.threads = kMaxExportThreads + 1}, {});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = import::RunExport(&fs, graph->GetSnapshot(), "/out", {}, {.chunk_ids = 0});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs.Exists("/out").value());  // refused before anything was created
}

// 1,000 vertices of 64 KiB each: 64 MB of text in one chunk of the default
// 4,096 ids. An export that formatted a whole chunk before writing it would
// hold all of it; this one holds about 2 MiB per worker and 16 MiB waiting.
// With a chunk per vertex, four workers really run, and the finished chunks
// waiting for their turn are bounded by their room (4 MiB here), not by the
// ring (1,000 slots: 64 MB).
TEST(ExportTest, TextInFlightIsBoundedWhateverTheRowsHold) {
  auto graph = Graph::OpenInMemory().value();
  for (int part = 0; part < 10; ++part) {
    WriteBatch b;
    for (int i = 0; i < 100; ++i)
      b.AddVertex("V", {{"blob", std::string(64 << 10, static_cast<char>('a' + i % 26))}});
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  const Snapshot snap = graph->GetSnapshot();
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("quiver-export-bound-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  struct Case {
    std::uint32_t threads;
    ExportTuning tuning;
    std::int64_t bound;
  };
  const Case cases[] = {
      {1, {}, std::int64_t{32} << 20},
      {2, {}, std::int64_t{32} << 20},
      {4,
       {.chunk_ids = 1, .spill_bytes = 256 << 10, .pending_bytes = 4 << 20, .ring = 1000},
       std::int64_t{16} << 20},
  };
  int n = 0;
  for (DataFormat format : {DataFormat::kCsv, DataFormat::kJsonl}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << "format " << static_cast<int>(format) << ", threads " << c.threads);
      const std::string dir = (root / std::to_string(n++)).string();
      std::int64_t peak = 0;
      {
        test_util::ScopedLiveHeapTracking tracking;
        Result<ExportStats> r = import::RunExport(env::PosixFileSystem(), snap, dir,
                                                  {.format = format, .threads = c.threads}, c.tuning);
        peak = tracking.PeakGrowth();
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        EXPECT_EQ(r->vertices, 1000u);
      }
      EXPECT_GT(std::filesystem::file_size(std::filesystem::path(dir) /
                                           (format == DataFormat::kCsv ? "vertices.csv" : "vertices.jsonl")),
                std::uintmax_t{64'000'000});
      EXPECT_LT(peak, c.bound) << "bytes held at the peak";
      std::filesystem::remove_all(dir);
    }
  }
  std::filesystem::remove_all(root);
}

// Every file operation fails in turn (once), on whichever worker holds the
// turn: a status, no file left behind, no worker left waiting.
TEST(ExportTest, AnIoErrorAnywhereIsAStatusAndLeavesNoFile) {
  // Several MiB per file, so the file's 1 MiB buffer is written out while
  // the workers run, by whichever holds the turn.
  auto graph = Graph::OpenInMemory().value();
  {
    WriteBatch b;
    std::vector<NewVertex> vs;
    for (int i = 0; i < 3000; ++i)
      vs.push_back(b.AddVertex("V", {{"id", std::int64_t{i}}, {"blob", std::string(1000, 'a' + i % 26)}}));
    for (int i = 0; i < 90000; ++i) b.AddEdge("E", vs[i % 3000], vs[(i * 7) % 3000], {{"weight", 1.5 * i}});
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  const Snapshot snap = graph->GetSnapshot();
  const ExportTuning small{.chunk_ids = 512, .spill_bytes = 16384, .pending_bytes = 65536, .ring = 4};
  int dirs = 0;
  for (DataFormat format : kFormats) {
    for (std::uint32_t threads : {3u}) {  // one thread: the out-of-memory test's paths
      env::SimFileSystem base;
      env::FaultFileSystem fs(&base);
      bool succeeded = false;
      std::uint64_t failures = 0;
      for (std::uint64_t at = 1; !succeeded && at < 100000; ++at) {
        SCOPED_TRACE(testing::Message()
                     << "format " << static_cast<int>(format) << ", threads " << threads << ", at " << at);
        const std::string dir = "/out" + std::to_string(dirs++);
        ASSERT_TRUE(base.CreateDir(dir).ok());
        fs.SetFault({.ops = env::FaultOp::kWrite | env::FaultOp::kSync | env::FaultOp::kSyncDir |
                            env::FaultOp::kOpen | env::FaultOp::kCreateDir,
                     .mode = env::FaultMode::kOnce,
                     .at = at});
        Result<ExportStats> r =
            import::RunExport(&fs, snap, dir, {.format = format, .threads = threads}, small);
        fs.ClearFault();
        if (r.ok()) {
          succeeded = true;
          continue;
        }
        ++failures;
        EXPECT_NE(r.status().code(), StatusCode::kCancelled) << "the first failure is the one reported";
        EXPECT_TRUE(base.ListDir(dir).value().empty()) << "files left behind";
      }
      EXPECT_TRUE(succeeded);
      EXPECT_GE(failures, 8u);  // the opens, the appends (one or more per file while workers run), the syncs
    }
  }
}

TEST(ExportTest, FieldTypeOfIsTheTypeFormatFieldValueWrites) {
  const std::byte bytes[] = {std::byte{1}};
  const float floats[] = {1.0f};
  const PropertyView values[] = {PropertyView(true),
                                 PropertyView(std::int64_t{-3}),
                                 PropertyView(2.5),
                                 PropertyView(std::string_view("s")),
                                 PropertyView(std::span<const std::byte>(bytes)),
                                 PropertyView(std::span<const float>(floats))};
  std::string text;
  for (const PropertyView& v : values)
    EXPECT_EQ(import::FieldTypeOf(v.type()), import::FormatFieldValue(v, &text));
}

// Every allocation of the calling thread fails in turn (once, and from then
// on): the export answers OK with the right files, or ResourceExhausted with
// no file left behind; it never throws.
TEST(ExportTest, OutOfMemoryIsAStatusAndLeavesNoFile) {
  auto graph = Graph::OpenInMemory().value();
  {
    WriteBatch b;
    std::vector<NewVertex> vs;
    for (int i = 0; i < 40; ++i)
      vs.push_back(b.AddVertex(i % 2 ? "A" : "B", {{"id", std::int64_t{i}}, {"s", "x"}}));
    for (int i = 0; i < 80; ++i) b.AddEdge("E", vs[i % 40], vs[(i * 3) % 40], {{"weight", 1.0 * i}});
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  const Snapshot snap = graph->GetSnapshot();
  const ExportTuning small{.chunk_ids = 8, .spill_bytes = 100, .pending_bytes = 300, .ring = 3};
  int dirs = 0;
  for (DataFormat format : kFormats) {
    env::SimFileSystem fs;
    const Files want = ExportInto(fs, snap, "/ref", {.format = format, .threads = 1}, small);
    for (base::AllocationFaultMode mode :
         {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
      for (std::uint32_t threads : {1u, 2u}) {
        bool succeeded = false;
        for (std::uint64_t at = 1; !succeeded && at < 100000; ++at) {
          SCOPED_TRACE(testing::Message()
                       << "format " << static_cast<int>(format) << ", mode " << static_cast<int>(mode)
                       << ", threads " << threads << ", at " << at);
          const std::string dir = "/out" + std::to_string(dirs++);
          ASSERT_TRUE(fs.CreateDir(dir).ok());
          Result<ExportStats> r = InternalError("not run");
          {
            test_util::ScopedOperatorNewFaults faults;
            base::ArmAllocationFaults(std::this_thread::get_id(), at, mode);
            try {
              r = import::RunExport(&fs, snap, dir, {.format = format, .threads = threads}, small);
            } catch (...) {
              base::DisarmAllocationFaults();
              FAIL() << "Export threw";
            }
            base::DisarmAllocationFaults();
          }
          if (r.ok()) {
            succeeded = true;
            ASSERT_EQ(r->files.size(), 2u);
            EXPECT_EQ(GetFile(fs, r->files[0]), want.contents[0]);
            EXPECT_EQ(GetFile(fs, r->files[1]), want.contents[1]);
            continue;
          }
          ASSERT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
          if (mode == base::AllocationFaultMode::kOnce) {
            // Removing the files may itself run out of memory from then on.
            EXPECT_TRUE(fs.ListDir(dir).value().empty()) << "files left behind";
          }
        }
        EXPECT_TRUE(succeeded);
      }
    }
  }
}

}  // namespace
}  // namespace quiver
