// Review of the string-list value (fe11c3b), finding F1 (failed before its
// fix, stop 45: export refuses such a list): a list longer than
// the *default* Limits::max_list_elements.
//
// A graph opened with a raised Limits::max_list_elements (options.h allows up
// to kMaxPropertyBytesCeiling / 4) accepts and stores such a list. Export
// (CSV and JSON Lines) writes it without complaint, but every import path
// refuses it: ParseFieldValue / JsonArray call CheckListLength, which
// compares against Limits{}.max_list_elements (65,536), whatever the target
// graph's limits are (field_value.cc CheckListLength, row_builder.cc
// JsonArray). include/quiver/import.h promises for Export that "importing
// them into an empty graph (with the same delimiters) gives an identical
// graph" (CSV) and "importing them with the same jsonl_id_key gives an
// identical graph" (JSON Lines), and export already refuses, with
// FailedPrecondition, the one other list it knows cannot be read back (a
// list of one empty string). Either fix makes this test pass: export
// refuses the list with FailedPrecondition naming element and key, or
// Import(graph) bounds lists by the graph's own limits (the bulk path keeps
// its default) and the round trip is identical.
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "gtest/gtest.h"
#include "import/exporter.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver {
namespace {

using testing_import::Canonical;
using testing_import::RunImport;

// One element past the default limit is enough; the graph allows more.
constexpr std::size_t kListRevElements = 65'537;

Options ListRevRaisedListLimit() {
  Options o;
  o.limits.max_list_elements = 100'000;
  return o;
}

std::unique_ptr<Graph> ListRevGraphWithALongList() {
  auto g = Graph::OpenInMemory(ListRevRaisedListLimit()).value();
  WriteBatch b;
  NewVertex a = b.AddVertex("Person", {{"tags", StringList(kListRevElements, "t")}, {"name", "Ada"}});
  b.AddEdge("KNOWS", a, a, {{"via", StringList(kListRevElements, "")}});
  Result<CommitInfo> r = g->Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return g;
}

TEST(ListRevExportLimitTest, CsvExportOfALongListReadsBackOrIsRefused) {
  env::SimFileSystem fs;
  auto g1 = ListRevGraphWithALongList();
  const Snapshot s1 = g1->GetSnapshot();
  ASSERT_EQ(s1.GetProperty(VertexId(0), "tags")->as_string_list()->size(), kListRevElements);
  Result<ExportStats> x = import::RunExport(&fs, s1, "/out", {});
  if (!x.ok()) {
    // The fix that refuses at export: the status of the [""] case.
    EXPECT_EQ(x.status().code(), StatusCode::kFailedPrecondition) << x.status().ToString();
    EXPECT_FALSE(fs.Exists("/out/vertices.csv").value());
    return;
  }
  // The files were written: the documented round trip must hold.
  auto g2 = Graph::OpenInMemory(ListRevRaisedListLimit()).value();
  Result<ImportStats> r = RunImport(fs, *g2, {.vertices = {{x->files[0], ""}}, .edges = {{x->files[1], ""}}});
  ASSERT_TRUE(r.ok()) << "export wrote a list no import reads back: " << r.status().ToString();
  EXPECT_EQ(Canonical(g2->GetSnapshot()), Canonical(s1));
}

TEST(ListRevExportLimitTest, JsonlExportOfALongListReadsBackOrIsRefused) {
  env::SimFileSystem fs;
  auto g1 = ListRevGraphWithALongList();
  const Snapshot s1 = g1->GetSnapshot();
  auto g2 = Graph::OpenInMemory(ListRevRaisedListLimit()).value();
  testing_import::ExpectJsonlRoundTripOrRefusal(fs, s1, "/out", *g2,
                                                "export wrote a list no import reads back");
}

}  // namespace
}  // namespace quiver
