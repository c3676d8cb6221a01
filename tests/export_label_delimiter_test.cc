// Review of the string-list value (fe11c3b), aside F6 (low, pre-existing,
// found while checking the array delimiter the commit introduced; failed
// before its fix, stop 45: CSV export refuses such a label): a
// label holding ';' is legal through the API (CheckName: non-empty, valid
// UTF-8, within max_string_bytes) and CSV export writes it as it is, but
// CSV import refuses it as "more than one label" (row_builder.cc BuildLabel
// tests a hard-coded ';', not ImportOptions::array_delimiter). Export
// promises that "importing them into an empty graph (with the same
// delimiters) gives an identical graph" and refuses with FailedPrecondition
// only a list of one empty string. Either export refuses such a label
// (FailedPrecondition naming it), or the round trip holds.
#include <string>

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

TEST(ListRevLabelDelimiterTest, ALabelHoldingTheListDelimiterRoundTripsOrExportRefuses) {
  env::SimFileSystem fs;
  auto g1 = Graph::OpenInMemory().value();
  {
    WriteBatch b;
    b.AddVertex("A;B", {{"tags", StringList{"x", "y"}}});
    Result<CommitInfo> w = g1->Write(std::move(b));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
  }
  const Snapshot s1 = g1->GetSnapshot();
  Result<ExportStats> x = import::RunExport(&fs, s1, "/out", {});
  if (!x.ok()) {
    EXPECT_EQ(x.status().code(), StatusCode::kFailedPrecondition) << x.status().ToString();
    return;
  }
  auto g2 = Graph::OpenInMemory().value();
  Result<ImportStats> r = RunImport(fs, *g2, {.vertices = {{x->files[0], ""}}, .edges = {{x->files[1], ""}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Canonical(g2->GetSnapshot()), Canonical(s1));
}

// Review of the exporter change (stop 45; failed before JSON Lines import
// took a "label" as one label, ;s and all): CSV export now refuses a vertex
// label holding ';' and tells the user to "export as JSON Lines". But the
// JSON Lines import goes through the same RowBuilder::BuildLabel
// (row_builder.cc:70, a hard-coded ';' for vertex files, called from the
// JSON Lines path at row_builder.cc:407), so the JSON Lines export of such a
// label is written and then refused on import ("more than one label"),
// while include/quiver/import.h promises that importing the JSON Lines
// files "gives an identical graph". Expected: JSON Lines export either
// refuses the label with FailedPrecondition (writing no file), or the
// round trip holds (the JSON Lines import takes the label as one label).
TEST(FixRevLabelDelimiterTest, JsonlExportOfALabelHoldingSemicolonRoundTripsOrIsRefused) {
  env::SimFileSystem fs;
  auto g1 = Graph::OpenInMemory().value();
  {
    WriteBatch b;
    const NewVertex a = b.AddVertex("A;B", {{"n", std::int64_t{1}}});
    const NewVertex c = b.AddVertex("C", {{"n", std::int64_t{2}}});
    b.AddEdge("E", a, c);
    Result<CommitInfo> w = g1->Write(std::move(b));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
  }
  const Snapshot s1 = g1->GetSnapshot();
  // The CSV export refuses and points at JSON Lines.
  Result<ExportStats> csv = import::RunExport(&fs, s1, "/csv", {});
  ASSERT_FALSE(csv.ok());
  EXPECT_EQ(csv.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(csv.status().ToString().find("JSON Lines"), std::string::npos);

  auto g2 = Graph::OpenInMemory().value();
  testing_import::ExpectJsonlRoundTripOrRefusal(fs, s1, "/out", *g2,
                                                "the JSON Lines export CSV points at does not read back");
}

}  // namespace
}  // namespace quiver
