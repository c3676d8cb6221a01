// fuzz_import: a vertex file and an edge file, in one of the three import
// formats, through both import paths: quiver::Import into an in-memory graph
// (rows through batches) and the bulk path that writes a new graph's first
// checkpoint (import::Importer with a directory), on a SimFileSystem.
//
// Input: byte 0 picks the format (bits 0-1: CSV, EVLP, JSON Lines; 3 reads
// as CSV with ';' as the delimiter), bit 2 skips every bad row instead of
// failing, bit 3 asks for id indexes, bits 4-5 the threads (1-4) and bit 6
// parses edge files in blocks of 64 bytes; byte 1 is where the rest splits
// into the vertex file and the edge file (as a fraction of its length).
//
// Checks beyond "no crash, no UB, no leak":
//  - both paths succeed or fail alike: the same status code and message;
//  - a failure of the bulk path leaves no graph (only LOCK, if anything);
//  - on success they give the same vertex and edge counts, the same
//    rejected rows, and the same graph (every id, label, type and typed
//    property, compared bit for bit), and the new graph passes Verify.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "fuzz_util.h"
#include "graph_impl.h"
#include "import/importer.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"
#include "verify.h"

namespace quiver::fuzz {
namespace {

void PutBytes(env::FileSystem& fs, const std::string& path, const std::string& content) {
  auto f = fs.OpenWritable(path, env::OpenMode::kTruncate);
  QUIVER_FUZZ_CHECK(f.ok(), f.status().ToString());
  QUIVER_FUZZ_CHECK((*f)->Append(env::AsBytes(content)).ok(), "append");
  QUIVER_FUZZ_CHECK((*f)->Close().ok(), "close");
}

std::string Rejected(const ImportStats& s) {
  std::string out;
  for (const ImportRowError& e : s.rejected)
    out += e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + " " + e.reason + "\n";
  return out;
}

void Run(const std::uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  const std::uint8_t mode = in.Byte();
  const std::uint8_t split = in.Byte();
  const std::string rest(reinterpret_cast<const char*>(data) + std::min<std::size_t>(size, 2),
                         size - std::min<std::size_t>(size, 2));
  const std::size_t cut = rest.size() * split / 256;

  ImportOptions options;
  switch (mode & 3) {
    case 0: options.format = DataFormat::kCsv; break;
    case 1: options.format = DataFormat::kEvlp; break;
    case 2: options.format = DataFormat::kJsonl; break;
    default: options.format = DataFormat::kCsv; options.delimiter = ';';
  }
  if ((mode & 4) != 0) options.skip_bad_rows = SIZE_MAX;
  options.create_id_indexes = (mode & 8) != 0;
  options.threads = 1 + ((mode >> 4) & 3);
  options.batch_ops = 7;  // several batches even for small inputs

  env::SimFileSystem fs;
  QUIVER_FUZZ_CHECK(fs.CreateDir("/in").ok(), "mkdir");
  PutBytes(fs, "/in/v", rest.substr(0, cut));
  PutBytes(fs, "/in/e", rest.substr(cut));
  const bool evlp = options.format == DataFormat::kEvlp;
  ImportSpec spec{.vertices = {{"/in/v", evlp ? "V" : "L"}}, .edges = {{"/in/e", evlp ? "E" : "T"}}};

  auto graph = Graph::OpenInMemory().value();
  Result<ImportStats> batched = [&] {
    import::Importer importer(&fs, *graph, spec, options);
    return importer.Run();
  }();
  Result<ImportStats> bulk = [&] {
    import::Importer importer(&fs, std::string("/g"), spec, options);
    if ((mode & 64) != 0) importer.SetBlockBytesForTesting(64);
    return importer.Run();
  }();
  if (Verbose()) {
    std::fprintf(stderr, "format %d: %s\n", mode & 3,
                 batched.ok() ? ("ok, " + std::to_string(batched->vertices) + " vertices, " +
                                 std::to_string(batched->edges) + " edges")
                                    .c_str()
                              : batched.status().ToString().c_str());
  }
  QUIVER_FUZZ_CHECK(batched.ok() == bulk.ok(),
                    "batches: " + batched.status().ToString() + "; bulk: " + bulk.status().ToString());
  if (!batched.ok()) {
    QUIVER_FUZZ_CHECK(batched.status().code() == bulk.status().code() &&
                          batched.status().message() == bulk.status().message(),
                      "batches: " + batched.status().ToString() + "; bulk: " + bulk.status().ToString());
    QUIVER_FUZZ_CHECK(graph->GetSnapshot().sequence() == 0, "a failed import wrote");
    Result<bool> exists = fs.Exists("/g");
    if (exists.ok() && *exists) {
      const std::vector<std::string> left = fs.ListDir("/g").value();
      QUIVER_FUZZ_CHECK(left.empty() || left == std::vector<std::string>{"LOCK"},
                        "a failed bulk import left files");
    }
    return;
  }
  QUIVER_FUZZ_CHECK(batched->vertices == bulk->vertices && batched->edges == bulk->edges, "counts differ");
  QUIVER_FUZZ_CHECK(Rejected(*batched) == Rejected(*bulk),
                    "rejected rows differ:\n" + Rejected(*batched) + "---\n" + Rejected(*bulk));
  Result<VerifyReport> report = VerifyGraphDirectory(&fs, "/g");
  QUIVER_FUZZ_CHECK(report.ok() && report->ok(),
                    report.ok() ? report->status.ToString() : report.status().ToString());
  Options open;
  open.writer.spin_microseconds = 0;
  open.create_if_missing = false;
  auto g = GraphImpl::OpenDurable(open, "/g", &fs);
  QUIVER_FUZZ_CHECK(g.ok(), g.status().ToString());
  const std::string want = testing_import::Canonical(graph->GetSnapshot());
  const std::string got = testing_import::Canonical((*g)->GetSnapshot());
  QUIVER_FUZZ_CHECK(want == got, "graphs differ:\n" + want + "---\n" + got);
}

}  // namespace
}  // namespace quiver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  quiver::fuzz::Run(data, size);
  return 0;
}
