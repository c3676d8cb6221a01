// quiver::Import / quiver::Export: the CSV and EVLP formats, id indexes,
// round trips (import -> export -> import gives an identical graph), export
// from a snapshot while writes continue, and the official LDBC Graphalytics
// example graphs (tests/data/graphalytics).
#include "quiver/import.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "env/fault_file_system.h"
#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import_test_util.h"
#include "quiver/graph.h"

namespace quiver {
namespace {

using testing_import::Canonical;
using testing_import::GetFile;
using testing_import::PutFile;
using testing_import::RunImport;

std::unique_ptr<Graph> NewImportGraph() { return Graph::OpenInMemory().value(); }

Result<ExportStats> RunExport(env::FileSystem& fs, const Snapshot& s, const std::string& dir,
                              const ExportOptions& options = {}) {
  return import::RunExport(&fs, s, dir, options);
}

class ImportTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs_.CreateDir("/in").ok()); }
  env::SimFileSystem fs_;
};

TEST_F(ImportTest, TypedCsvWithQuotingGroupsAndDelimiter) {
  PutFile(fs_, "/in/people.csv",
          "uid:ID(P)|:LABEL|name|age:long|score:double|active:boolean|e:float[]|raw:bytes|skip:IGNORE\n"
          "p1|Person|\"Ada \"\"the first\"\" Lovelace\"|36|0.5|true|1;2.5|00ff|x\n"
          "p2||\"multi|line\nname\"|-7|1e3|FALSE|\"\"|\"\"|y\n"
          "p3|Robot|||||||\n");
  PutFile(fs_, "/in/cities.csv", "id:ID(C)|name\nc1|London\n");
  PutFile(fs_, "/in/edges.csv", ":START_ID(P)|:END_ID(C)|:TYPE|since:int\np1|c1|LIVES_IN|1833\np2|c1||\n");
  ImportSpec spec;
  spec.vertices = {{"/in/people.csv", "Human"}};
  spec.edges = {{"/in/edges.csv", "VISITS"}};
  auto g = NewImportGraph();
  ImportOptions options;
  options.delimiter = '|';
  Result<ImportStats> r = RunImport(fs_, *g, spec, options);
  ASSERT_FALSE(r.ok());  // c1 is in no file of this import
  EXPECT_EQ(r.status().message().substr(0, 18), "/in/edges.csv:2:4:");
  EXPECT_EQ(g->GetSnapshot().sequence(), 0u);
  ImportSpec both = spec;
  both.vertices.push_back({"/in/cities.csv", "City"});
  r = RunImport(fs_, *g, both, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vertices, 4u);
  EXPECT_EQ(r->edges, 2u);
  EXPECT_TRUE(r->rejected.empty());

  const Snapshot s = g->GetSnapshot();
  const VertexId p1(0), p2(1), p3(2), c1(3);
  EXPECT_EQ(s.LabelName(*s.LabelOf(p1)), "Person");
  EXPECT_EQ(s.LabelName(*s.LabelOf(p2)), "Human");  // empty :LABEL: the file's label
  EXPECT_EQ(s.LabelName(*s.LabelOf(p3)), "Robot");
  EXPECT_EQ(s.LabelName(*s.LabelOf(c1)), "City");
  EXPECT_EQ(*s.GetProperty(p1, "uid")->as_string(), "p1");
  EXPECT_EQ(*s.GetProperty(p1, "name")->as_string(), "Ada \"the first\" Lovelace");
  EXPECT_EQ(*s.GetProperty(p1, "age")->as_int64(), 36);
  EXPECT_EQ(*s.GetProperty(p1, "score")->as_double(), 0.5);
  EXPECT_EQ(*s.GetProperty(p1, "active")->as_bool(), true);
  auto e = *s.GetProperty(p1, "e")->as_float_vector();
  EXPECT_EQ(std::vector<float>(e.begin(), e.end()), (std::vector<float>{1.0f, 2.5f}));
  auto raw = *s.GetProperty(p1, "raw")->as_bytes();
  ASSERT_EQ(raw.size(), 2u);
  EXPECT_EQ(std::to_integer<int>(raw[1]), 255);
  EXPECT_FALSE(s.GetProperty(p1, "skip").has_value());
  EXPECT_EQ(*s.GetProperty(p2, "name")->as_string(), "multi|line\nname");
  EXPECT_EQ(*s.GetProperty(p2, "age")->as_int64(), -7);
  EXPECT_EQ(*s.GetProperty(p2, "score")->as_double(), 1000.0);
  EXPECT_EQ(*s.GetProperty(p2, "active")->as_bool(), false);
  EXPECT_TRUE(s.GetProperty(p2, "e")->as_float_vector()->empty());  // quoted empty: empty vector
  EXPECT_TRUE(s.GetProperty(p2, "raw")->as_bytes()->empty());
  EXPECT_EQ(s.Properties(p3).size(), 1u);  // unquoted empty: unset (only uid)
  ASSERT_EQ(s.edge_count(), 2u);
  EXPECT_EQ(s.EdgeTypeName(s.GetEdge(EdgeId(0))->type), "LIVES_IN");
  EXPECT_EQ(s.EdgeTypeName(s.GetEdge(EdgeId(1))->type), "VISITS");  // empty :TYPE: the file's type
  EXPECT_EQ(s.GetEdge(EdgeId(1))->source, p2);
  EXPECT_EQ(s.GetEdge(EdgeId(1))->target, c1);
  EXPECT_EQ(*s.GetProperty(EdgeId(0), "since")->as_int64(), 1833);
}

TEST_F(ImportTest, IdIndexesResolveExternalIds) {
  PutFile(fs_, "/in/v.csv", "id:ID,:LABEL,name\na,Person,Ada\nb,Person,Bob\nl,City,London\n");
  auto g = NewImportGraph();
  ImportOptions options;
  options.create_id_indexes = true;
  Result<ImportStats> r = RunImport(fs_, *g, {.vertices = {{"/in/v.csv", ""}}}, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->indexes_created, (std::vector<std::string>{"Person.id", "City.id"}));
  const Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.FindVertex("Person", "id", "b").value(), VertexId(1));
  EXPECT_EQ(s.FindVertex("City", "id", "l").value(), VertexId(2));
  // A second import into the populated graph: reuses the indexes, and an id
  // already taken is caught before anything is written.
  PutFile(fs_, "/in/more.csv", "id:ID,:LABEL\nc,Person\n");
  r = RunImport(fs_, *g, {.vertices = {{"/in/more.csv", ""}}}, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->indexes_created.empty());
  EXPECT_EQ(g->GetSnapshot().FindVertex("Person", "id", "c").value(), VertexId(3));
  const SequenceNumber before = g->GetSnapshot().sequence();
  PutFile(fs_, "/in/again.csv", "id:ID,:LABEL\nd,Person\na,Person\n");
  r = RunImport(fs_, *g, {.vertices = {{"/in/again.csv", ""}}}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 18), "/in/again.csv:3:1:");
  EXPECT_EQ(g->GetSnapshot().sequence(), before);
}

TEST_F(ImportTest, ManyBatchesAndRecordsAcrossReadChunks) {
  // More than one 1 MiB read chunk, with quoted multi-line fields and
  // doubled quotes, so records straddle chunk ends at every offset kind.
  std::string v = "id:ID,text,n:int\n";
  std::string e = ":START_ID,:END_ID,:TYPE\n";
  const int n = 30000;
  for (int i = 0; i < n; ++i) {
    v += "v" + std::to_string(i) + ",\"line one " + std::to_string(i) + "\n\"\"two\"\", " +
         std::string(static_cast<std::size_t>(i % 17), 'x') + "\"," + std::to_string(i) + "\r\n";
    e += "v" + std::to_string(i) + ",v" + std::to_string((i * 7 + 1) % n) + ",NEXT\n";
  }
  ASSERT_GT(v.size(), std::size_t{1} << 20);  // more than one read chunk
  PutFile(fs_, "/in/v.csv", v);
  PutFile(fs_, "/in/e.csv", e);
  auto g = NewImportGraph();
  ImportOptions options;
  options.batch_ops = 1000;
  Result<ImportStats> r =
      RunImport(fs_, *g, {.vertices = {{"/in/v.csv", "V"}}, .edges = {{"/in/e.csv", ""}}}, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vertices, static_cast<std::uint64_t>(n));
  EXPECT_EQ(r->edges, static_cast<std::uint64_t>(n));
  EXPECT_GT(r->batches, 100u);
  const Snapshot s = g->GetSnapshot();
  for (int i : {0, 1, 12345, n - 1}) {
    const VertexId id(static_cast<std::uint64_t>(i));
    EXPECT_EQ(
        *s.GetProperty(id, "text")->as_string(),
        "line one " + std::to_string(i) + "\n\"two\", " + std::string(static_cast<std::size_t>(i % 17), 'x'));
    EXPECT_EQ(*s.GetProperty(id, "n")->as_int64(), i);
    ASSERT_EQ(s.OutDegree(id), 1u);
    EXPECT_EQ((*s.OutEdges(id).begin()).entries[0].neighbor().value(),
              static_cast<std::uint64_t>((i * 7 + 1) % n));
  }
}

// A graph with every value type and the awkward values: -0.0, extremes,
// strings with delimiters, quotes, newlines and non-ASCII text, empty
// strings / vectors / bytes, one key holding two types, self-loops and
// parallel edges.
void BuildAwkwardGraph(Graph& g) {
  WriteBatch b;
  NewVertex a = b.AddVertex("Person", {{"name", "Ada, \"the\"\nfirst"},
                                       {"age", std::numeric_limits<std::int64_t>::min()},
                                       {"score", -0.0},
                                       {"ok", true},
                                       {"emb", FloatVector{1.5f, -0.0f, 3.4e38f}},
                                       {"raw", Bytes{std::byte{0}, std::byte{0xab}}}});
  NewVertex z = b.AddVertex("Person", {{"name", ""},
                                       {"age", "forty"},
                                       {"score", 1e-300},
                                       {"ok", false},
                                       {"emb", FloatVector{}},
                                       {"raw", Bytes{}}});
  NewVertex c = b.AddVertex("Ort, \"Zürich\"", {});
  NewVertex d = b.AddVertex("Person", {{"name", " spaced "}, {"score", 0.1}});
  b.AddEdge("KNOWS", a, z, {{"since", 1833}, {"w", 0.25}});
  b.AddEdge("KNOWS", a, z, {});
  b.AddEdge("SELF", c, c, {{"note", "x;y|z"}});
  b.AddEdge("KNOWS", d, a, {{"since", "long ago"}});
  ASSERT_TRUE(g.Write(std::move(b)).ok());
}

TEST_F(ImportTest, CsvRoundTripIsIdentical) {
  auto g1 = NewImportGraph();
  BuildAwkwardGraph(*g1);
  const Snapshot s1 = g1->GetSnapshot();
  for (char delimiter : {',', '|', ';'}) {
    SCOPED_TRACE(std::string(1, delimiter));
    const std::string dir = std::string("/out") + (delimiter == ',' ? "c" : delimiter == '|' ? "p" : "s");
    Result<ExportStats> x = RunExport(fs_, s1, dir, {.delimiter = delimiter});
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    EXPECT_EQ(x->vertices, 4u);
    EXPECT_EQ(x->edges, 4u);
    auto g2 = NewImportGraph();
    Result<ImportStats> r = RunImport(
        fs_, *g2, {.vertices = {{x->files[0], ""}}, .edges = {{x->files[1], ""}}}, {.delimiter = delimiter});
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << GetFile(fs_, x->files[0]);
    EXPECT_EQ(Canonical(g2->GetSnapshot()), Canonical(s1));
    // And once more: export of the re-imported graph gives the same bytes.
    Result<ExportStats> x2 = RunExport(fs_, g2->GetSnapshot(), dir + "2", {.delimiter = delimiter});
    ASSERT_TRUE(x2.ok());
    EXPECT_EQ(GetFile(fs_, x2->files[0]), GetFile(fs_, x->files[0]));
    EXPECT_EQ(GetFile(fs_, x2->files[1]), GetFile(fs_, x->files[1]));
  }
}

// string[] columns (issue 11): elements split at the array delimiter, a
// backslash escaping the delimiter and itself (and kept before anything
// else), the empty text the empty list, an unquoted empty field no
// property at all.
TEST_F(ImportTest, StringArrayColumnsSplitAtTheArrayDelimiter) {
  PutFile(fs_, "/in/v.csv",
          "id:ID,:LABEL,tags:string[],e:float[]\n"
          "p1,Person,math;poet,1;2\n"
          "p2,Person,a\\;b;C:\\dir;\\\\x;,\n"
          "p3,Person,\"\",\"\"\n"
          "p4,Person,,\n"
          "p5,Person,\"x,y;\xc3\xa9\",\n");
  auto g = NewImportGraph();
  Result<ImportStats> r = RunImport(fs_, *g, {.vertices = {{"/in/v.csv", ""}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Snapshot s = g->GetSnapshot();
  auto tags = [&](std::uint64_t v) -> std::optional<StringList> {
    std::optional<PropertyView> p = s.GetProperty(VertexId(v), "tags");
    if (!p) return std::nullopt;
    EXPECT_EQ(p->type(), ValueType::kStringList);
    return p->as_string_list() ? p->as_string_list()->ToList() : StringList{"<not a list>"};
  };
  EXPECT_EQ(tags(0), (StringList{"math", "poet"}));
  EXPECT_EQ(tags(1), (StringList{"a;b", "C:\\dir", "\\x", ""}));
  EXPECT_EQ(tags(2), StringList{});
  EXPECT_EQ(tags(3), std::nullopt);
  EXPECT_EQ(tags(4), (StringList{"x,y", "\xc3\xa9"}));
  EXPECT_EQ(s.GetProperty(VertexId(2), "e")->as_float_vector()->size(), 0u);

  // Another array delimiter: ';' is then text, and float[] splits at it too.
  PutFile(fs_, "/in/w.csv", "id:ID,:LABEL,tags:string[],e:float[]\nq1,Person,a;b|c,1|2.5\n");
  auto h = NewImportGraph();
  r = RunImport(fs_, *h, {.vertices = {{"/in/w.csv", ""}}}, {.array_delimiter = '|'});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(h->GetSnapshot().GetProperty(VertexId(0), "tags")->as_string_list()->ToList(),
            (StringList{"a;b", "c"}));
  EXPECT_EQ(h->GetSnapshot().GetProperty(VertexId(0), "e")->as_float_vector()->size(), 2u);
}

// A graph of string lists whose elements hold the delimiters, the escape,
// quotes, line breaks and UTF-8 goes through CSV export and import
// identically, for several (field, array) delimiter pairs, the two equal
// among them; and the second export is the same bytes.
TEST_F(ImportTest, StringListCsvRoundTripIsIdentical) {
  auto g1 = NewImportGraph();
  {
    WriteBatch b;
    NewVertex a = b.AddVertex(
        "Person", {{"tags", StringList{"a;b", "c,d", "e|f", "back\\slash\\", "\\;"}}, {"name", "Ada"}});
    NewVertex c =
        b.AddVertex("Person", {{"tags", StringList{}}, {"quote", StringList{"\"q\"", "line\nbreak"}}});
    b.AddVertex("Person",
                {{"tags", StringList{"", ""}}, {"utf8", StringList{"\xc3\xa9t\xc3\xa9", "\xe2\x82\xac"}}});
    b.AddVertex("Person", {{"tags", "a string, not a list"}});
    b.AddEdge("KNOWS", a, c, {{"via", StringList{"x", "", "y"}}});
    ASSERT_TRUE(g1->Write(std::move(b)).ok());
  }
  const Snapshot s1 = g1->GetSnapshot();
  int n = 0;
  for (auto [d, ad] : {std::pair{',', ';'}, {'|', ','}, {',', ','}, {';', ';'}, {'\t', '|'}}) {
    SCOPED_TRACE(std::string(1, d) + " " + std::string(1, ad));
    const std::string dir = "/out" + std::to_string(n++);
    Result<ExportStats> x = RunExport(fs_, s1, dir, {.delimiter = d, .array_delimiter = ad});
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    auto g2 = NewImportGraph();
    Result<ImportStats> r =
        RunImport(fs_, *g2, {.vertices = {{x->files[0], ""}}, .edges = {{x->files[1], ""}}},
                  {.delimiter = d, .array_delimiter = ad});
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << GetFile(fs_, x->files[0]);
    EXPECT_EQ(Canonical(g2->GetSnapshot()), Canonical(s1)) << GetFile(fs_, x->files[0]);
    Result<ExportStats> x2 =
        RunExport(fs_, g2->GetSnapshot(), dir + "b", {.delimiter = d, .array_delimiter = ad});
    ASSERT_TRUE(x2.ok());
    EXPECT_EQ(GetFile(fs_, x2->files[0]), GetFile(fs_, x->files[0]));
    EXPECT_EQ(GetFile(fs_, x2->files[1]), GetFile(fs_, x->files[1]));
  }
  // The text itself, with the defaults: a column per (key, type), every
  // backslash and ';' of an element escaped, the empty list a quoted
  // empty field.
  Result<ExportStats> x = RunExport(fs_, s1, "/plain");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(GetFile(fs_, "/plain/vertices.csv"),
            ":ID,:LABEL,tags:string,tags:string[],name:string,quote:string[],utf8:string[]\n"
            "0,Person,,\"a\\;b;c,d;e|f;back\\\\slash\\\\;\\\\\\;\",Ada,,\n"
            "1,Person,,\"\",,\"\"\"q\"\";line\nbreak\",\n"
            "2,Person,,;,,,\xc3\xa9t\xc3\xa9;\xe2\x82\xac\n"
            "3,Person,\"a string, not a list\",,,,\n");
}

// A list of one empty string has no CSV text of its own (its text, "", is
// the empty list's): CSV export refuses it, naming the element and key,
// and leaves no file; JSON Lines writes it.
TEST_F(ImportTest, CsvExportRefusesAListOfOneEmptyString) {
  auto g = NewImportGraph();
  WriteBatch b;
  NewVertex a = b.AddVertex("Person", {{"tags", StringList{"ok"}}});
  b.AddEdge("KNOWS", a, a, {{"via", StringList{""}}});
  ASSERT_TRUE(g->Write(std::move(b)).ok());
  Result<ExportStats> x = RunExport(fs_, g->GetSnapshot(), "/refused");
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().code(), StatusCode::kFailedPrecondition) << x.status().ToString();
  EXPECT_NE(x.status().message().find("edge 0's via is a string list of one empty string"),
            std::string_view::npos)
      << x.status().ToString();
  EXPECT_FALSE(fs_.Exists("/refused/vertices.csv").value());
  EXPECT_FALSE(fs_.Exists("/refused/edges.csv").value());
  Result<ExportStats> j = RunExport(fs_, g->GetSnapshot(), "/jsonl", {.format = DataFormat::kJsonl});
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_NE(GetFile(fs_, "/jsonl/edges.jsonl").find("\"via\":[\"\"]"), std::string::npos);
}

TEST_F(ImportTest, ImportExportImportRoundTripFromCsvInput) {
  PutFile(fs_, "/in/v.csv",
          "id:ID,:LABEL,name,age:int\na,Person,Ada,36\nb,Person,\"Bob, Jr.\",\nc,City,London,\n");
  PutFile(fs_, "/in/e.csv",
          ":START_ID,:END_ID,:TYPE,km:double\na,c,LIVES_IN,2.5\nb,c,LIVES_IN,\na,b,KNOWS,\n");
  auto g1 = NewImportGraph();
  ASSERT_TRUE(RunImport(fs_, *g1, {.vertices = {{"/in/v.csv", ""}}, .edges = {{"/in/e.csv", ""}}}).ok());
  Result<ExportStats> x = RunExport(fs_, g1->GetSnapshot(), "/out");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(GetFile(fs_, "/out/vertices.csv"),
            ":ID,:LABEL,id:string,name:string,age:int\n"
            "0,Person,a,Ada,36\n"
            "1,Person,b,\"Bob, Jr.\",\n"
            "2,City,c,London,\n");
  EXPECT_EQ(GetFile(fs_, "/out/edges.csv"),
            ":START_ID,:END_ID,:TYPE,km:double\n0,2,LIVES_IN,2.5\n1,2,LIVES_IN,\n0,1,KNOWS,\n");
  auto g2 = NewImportGraph();
  ASSERT_TRUE(RunImport(fs_, *g2, {.vertices = {{x->files[0], ""}}, .edges = {{x->files[1], ""}}}).ok());
  EXPECT_EQ(Canonical(g2->GetSnapshot()), Canonical(g1->GetSnapshot()));
}

TEST_F(ImportTest, ExportRefusesToOverwrite) {
  auto g = NewImportGraph();
  BuildAwkwardGraph(*g);
  ASSERT_TRUE(fs_.CreateDir("/out").ok());
  PutFile(fs_, "/out/edges.csv", "mine");
  Result<ExportStats> x = RunExport(fs_, g->GetSnapshot(), "/out");
  EXPECT_EQ(x.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(GetFile(fs_, "/out/edges.csv"), "mine");
  EXPECT_FALSE(fs_.Exists("/out/vertices.csv").value());  // the partial export is removed
}

TEST_F(ImportTest, ExportReadsOneSnapshotWhileWritesContinue) {
  auto g = NewImportGraph();
  BuildAwkwardGraph(*g);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    int i = 0;
    while (!stop.load()) {
      WriteBatch b;
      NewVertex v = b.AddVertex("Busy", {{"i", i++}});
      b.AddEdge("LOOP", v, v, {});
      ASSERT_TRUE(g->Write(std::move(b)).ok());
    }
  });
  // Let some writes land, then export while more keep coming.
  while (g->GetSnapshot().vertex_count() < 200) std::this_thread::yield();
  const Snapshot s = g->GetSnapshot();
  Result<ExportStats> x = RunExport(fs_, s, "/out");
  const std::uint64_t later = g->GetSnapshot().sequence();
  stop = true;
  writer.join();
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(x->vertices, s.vertex_count());
  EXPECT_EQ(x->edges, s.edge_count());
  EXPECT_GE(later, s.sequence());
  auto g2 = NewImportGraph();
  ASSERT_TRUE(RunImport(fs_, *g2, {.vertices = {{x->files[0], ""}}, .edges = {{x->files[1], ""}}}).ok());
  EXPECT_EQ(Canonical(g2->GetSnapshot()), Canonical(s));
}

// A write that fails in the second pass (here the WAL sync of the third
// batch): the batches before it stay, and the error says how many.
TEST_F(ImportTest, WriteFailureMidwayReportsWhatCommitted) {
  std::string v = "id:ID\n";
  for (int i = 0; i < 10; ++i) v += "v" + std::to_string(i) + "\n";
  PutFile(fs_, "/in/v.csv", v);
  env::SimFileSystem disk;
  env::FaultFileSystem fault(&disk);
  auto g = GraphImpl::OpenDurable(Options{}, "/g", &fault).value();
  // WAL syncs: the segment's header, its first zero-fill (format 3, just
  // before the first group), then one per batch: the 4th is the 3rd batch's.
  fault.SetFault(env::FaultSpec{.ops = env::FaultOp::kSync, .at = 4, .path_contains = "wal-"});
  ImportOptions options;
  options.batch_ops = 4;  // two vertices (with their id property) per batch
  options.batches_in_flight = 1;
  options.atomic = false;
  Result<ImportStats> r = RunImport(fs_, *g, {.vertices = {{"/in/v.csv", "V"}}}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDurabilityUnknown) << r.status().ToString();
  EXPECT_NE(
      r.status().message().find("import stopped after 2 batches committed (4 vertices, 0 edges; they stay)"),
      std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 4u);
}

// The same failure in an atomic import (the default): the WAL failure
// poisons the graph, so the undo cannot be written either; the rollback
// record stays, and the next Open undoes the import.
TEST_F(ImportTest, WriteFailureMidwayInAnAtomicImportIsUndoneByTheNextOpen) {
  std::string v = "id:ID\n";
  for (int i = 0; i < 10; ++i) v += "v" + std::to_string(i) + "\n";
  PutFile(fs_, "/in/v.csv", v);
  env::SimFileSystem disk;
  env::FaultFileSystem fault(&disk);
  {
    auto g = GraphImpl::OpenDurable(Options{}, "/g", &fault).value();
    fault.SetFault(env::FaultSpec{.ops = env::FaultOp::kSync, .at = 4, .path_contains = "wal-"});
    ImportOptions options;
    options.batch_ops = 4;
    options.batches_in_flight = 1;
    Result<ImportStats> r = RunImport(fs_, *g, {.vertices = {{"/in/v.csv", "V"}}}, options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDurabilityUnknown) << r.status().ToString();
    EXPECT_NE(r.status().message().find("import stopped after 2 batches committed (4 vertices, 0 edges)"),
              std::string::npos)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find("the graph refuses writes, and the next Open undoes the import"),
              std::string::npos)
        << r.status().ToString();
    EXPECT_TRUE(disk.Exists("/g/IMPORT").value());
  }
  auto g = GraphImpl::OpenDurable(Options{}, "/g", &disk).value();
  EXPECT_TRUE(g->GetOpenStats().import_undone);
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 0u);
  EXPECT_FALSE(disk.Exists("/g/IMPORT").value());
}

// --- LDBC Graphalytics EVLP, from the vendored official test graphs.

const std::filesystem::path kGraphalytics = std::filesystem::path(QUIVER_TEST_DATA_DIR) / "graphalytics";

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string ReadReal(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct GraphalyticsCase {
  const char* name;
  std::uint64_t vertices;
  std::uint64_t edges;
};

class ImportGraphalyticsTest : public ::testing::TestWithParam<GraphalyticsCase> {};

TEST_P(ImportGraphalyticsTest, LoadsWithItsCountsAndExportsTheSameFiles) {
  const GraphalyticsCase& c = GetParam();
  const std::string base = (kGraphalytics / c.name).string();
  auto g = NewImportGraph();
  // The public API, on the real files.
  Result<ImportStats> r = Import(*g, {.vertices = {{base + ".v", "V"}}, .edges = {{base + ".e", "E"}}},
                                 {.format = DataFormat::kEvlp, .create_id_indexes = true});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vertices, c.vertices);
  EXPECT_EQ(r->edges, c.edges);
  const Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.vertex_count(), c.vertices);
  EXPECT_EQ(s.edge_count(), c.edges);
  // Ids are kept, and resolvable through the index: the file's first id
  // is the first vertex.
  const std::int64_t first_id = std::stoll(ReadReal(base + ".v"));
  std::optional<VertexId> first = s.FindVertex("V", "id", first_id).value();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, VertexId(0));

  env::SimFileSystem out;
  Result<ExportStats> x = import::RunExport(&out, s, "/out", {.format = DataFormat::kEvlp});
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(SortedLines(GetFile(out, "/out/graph.v")), SortedLines(ReadReal(base + ".v")));
  EXPECT_EQ(SortedLines(GetFile(out, "/out/graph.e")), SortedLines(ReadReal(base + ".e")));
}

INSTANTIATE_TEST_SUITE_P(Official, ImportGraphalyticsTest,
                         ::testing::Values(GraphalyticsCase{"example-directed", 10, 17},
                                           GraphalyticsCase{"example-undirected", 9, 12}),
                         [](const ::testing::TestParamInfo<GraphalyticsCase>& i) {
                           std::string n = i.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST_F(ImportTest, EvlpWithoutWeightsAndWithoutKeptIds) {
  PutFile(fs_, "/in/g.v", "10\n20\n30\n");
  PutFile(fs_, "/in/g.e", "10 20\n20 30\n30 10\n");
  auto g = NewImportGraph();
  ImportOptions options;
  options.format = DataFormat::kEvlp;
  options.evlp_id_key = "";
  Result<ImportStats> r =
      RunImport(fs_, *g, {.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}}, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.edge_count(), 3u);
  EXPECT_TRUE(s.Properties(VertexId(0)).empty());
  EXPECT_TRUE(s.Properties(EdgeId(0)).empty());
  EXPECT_EQ(s.GetEdge(EdgeId(2))->source, VertexId(2));
  // No ids kept: the export numbers vertices by their Quiver ids.
  Result<ExportStats> x = RunExport(fs_, s, "/out", {.format = DataFormat::kEvlp});
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(GetFile(fs_, "/out/graph.v"), "0\n1\n2\n");
  EXPECT_EQ(GetFile(fs_, "/out/graph.e"), "0 1\n1 2\n2 0\n");
}

// EVLP export writes the kept int64 ids only when every vertex has a
// distinct one; distinctness is checked with a bitmap over a small range
// and a hash set over a wide one, with the same answers.
TEST_F(ImportTest, EvlpExportKeepsIdsOnlyWhenDistinct) {
  struct Case {
    const char* name;
    std::vector<std::int64_t> ids;
    std::string vertices;  // graph.v
  };
  const std::vector<Case> cases = {
      {"dense, distinct", {5, 3, 4}, "5\n3\n4\n"},
      {"dense, a repeat", {5, 3, 5}, "0\n1\n2\n"},
      {"wide, distinct",
       {-(std::int64_t{1} << 50), 7, std::int64_t{1} << 60},
       "-1125899906842624\n7\n1152921504606846976\n"},
      {"wide, a repeat", {std::int64_t{1} << 60, 7, std::int64_t{1} << 60}, "0\n1\n2\n"},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto g = NewImportGraph();
    WriteBatch b;
    for (std::int64_t id : c.ids) b.AddVertex("V", {{"id", id}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    const std::string dir = "/evlp" + std::to_string(n++);
    ASSERT_TRUE(RunExport(fs_, g->GetSnapshot(), dir, {.format = DataFormat::kEvlp}).ok());
    EXPECT_EQ(GetFile(fs_, dir + "/graph.v"), c.vertices);
  }
}

// A CSV header in its own file (ImportFile::header, Neo4j's
// header.csv,part1.csv,...): its parts hold rows only, may be empty, and
// give the graph that one file holding the header and every row gives,
// through batches and in bulk. Positions in a part count from its line 1;
// errors of the header name the header file.
TEST_F(ImportTest, HeaderInItsOwnFile) {
  const std::string vheader = "id:ID(P),:LABEL,name,age:int\n";
  const std::string part1 = "p1,Person,Ada,36\np2,,\"Bob\nB\",7\n", part3 = "p3,Robot,R,1\n";
  const std::string eheader = ":START_ID(P),:END_ID(P),:TYPE,w:double\n",
                    epart = "p1,p2,KNOWS,0.5\np3,p1,,1\n";
  PutFile(fs_, "/in/ph.csv", vheader);
  PutFile(fs_, "/in/p1.csv", part1);
  PutFile(fs_, "/in/p2.csv", "");
  PutFile(fs_, "/in/p3.csv", part3);
  PutFile(fs_, "/in/eh.csv", eheader + "p9,p9,IGNORED,1\n");  // the header file's rows are not read
  PutFile(fs_, "/in/e1.csv", epart);
  PutFile(fs_, "/in/people.csv", vheader + part1 + part3);
  PutFile(fs_, "/in/edges.csv", eheader + epart);
  const ImportSpec parts{.vertices = {{"/in/p1.csv", "Human", "/in/ph.csv"},
                                      {"/in/p2.csv", "Human", "/in/ph.csv"},
                                      {"/in/p3.csv", "Human", "/in/ph.csv"}},
                         .edges = {{"/in/e1.csv", "LIKES", "/in/eh.csv"}}};
  const ImportSpec whole{.vertices = {{"/in/people.csv", "Human"}}, .edges = {{"/in/edges.csv", "LIKES"}}};
  for (std::uint32_t threads : {1u, 2u}) {
    ImportOptions options;
    options.threads = threads;
    auto want = NewImportGraph();
    ASSERT_TRUE(RunImport(fs_, *want, whole, options).ok());
    auto got = NewImportGraph();
    Result<ImportStats> r = RunImport(fs_, *got, parts, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->vertices, 3u);
    EXPECT_EQ(r->edges, 2u);
    EXPECT_EQ(Canonical(got->GetSnapshot()), Canonical(want->GetSnapshot()));
    EXPECT_NE(Canonical(got->GetSnapshot()).find("LIKES"), std::string::npos);
    const std::string dir = "/bulk" + std::to_string(threads);
    import::Importer bulk(&fs_, dir, parts, options);
    ASSERT_TRUE(bulk.Run().ok());
    auto opened = GraphImpl::OpenDurable(Options{}, dir, &fs_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_EQ(Canonical((*opened)->GetSnapshot()), Canonical(want->GetSnapshot()));
  }

  struct Bad {
    const char* name;
    ImportFile file;
    DataFormat format;
    StatusCode code;
    std::string message;
  };
  PutFile(fs_, "/in/bad-part.csv", "p4,Person,D,x\n");
  PutFile(fs_, "/in/bad-header.csv", "id:ID,age:foo\n");
  PutFile(fs_, "/in/no-label-header.csv", "id:ID,name\n");
  PutFile(fs_, "/in/blank.csv", "\n\n");
  const std::vector<Bad> bad = {
      {"a bad row of a part",
       {"/in/bad-part.csv", "", "/in/ph.csv"},
       DataFormat::kCsv,
       StatusCode::kInvalidArgument,
       "/in/bad-part.csv:1:13: 'x' is not an int (column age)"},
      {"a missing header file",
       {"/in/p1.csv", "", "/in/none.csv"},
       DataFormat::kCsv,
       StatusCode::kNotFound,
       "/in/none.csv:0:0: no such file"},
      {"an empty header file",
       {"/in/p1.csv", "", "/in/blank.csv"},
       DataFormat::kCsv,
       StatusCode::kInvalidArgument,
       "/in/blank.csv:1:1: empty header file"},
      {"a bad header",
       {"/in/p1.csv", "", "/in/bad-header.csv"},
       DataFormat::kCsv,
       StatusCode::kInvalidArgument,
       "/in/bad-header.csv:1:7: unknown header type 'foo'"},
      {"no label anywhere",
       {"/in/p1.csv", "", "/in/no-label-header.csv"},
       DataFormat::kCsv,
       StatusCode::kInvalidArgument,
       "/in/no-label-header.csv:1:1: no :LABEL column"},
      {"a header with EVLP",
       {"/in/p1.csv", "V", "/in/ph.csv"},
       DataFormat::kEvlp,
       StatusCode::kInvalidArgument,
       "ImportFile::header of /in/p1.csv: a header file is for CSV only"},
      {"a header with JSON Lines",
       {"/in/p1.csv", "V", "/in/ph.csv"},
       DataFormat::kJsonl,
       StatusCode::kInvalidArgument,
       "ImportFile::header of /in/p1.csv: a header file is for CSV only"},
      // Review finding: its header line would be read as a row.
      {"the file itself, spelled otherwise",
       {"/in/people.csv", "", "/in//people.csv"},
       DataFormat::kCsv,
       StatusCode::kInvalidArgument,
       "ImportFile::header of /in/people.csv is the file itself"},
      {"the file itself as its header",
       {"/in/people.csv", "", "/in/people.csv"},
       DataFormat::kCsv,
       StatusCode::kInvalidArgument,
       "ImportFile::header of /in/people.csv is the file itself"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.name);
    auto g = NewImportGraph();
    ImportOptions options;
    options.format = b.format;
    Result<ImportStats> r = RunImport(fs_, *g, {.vertices = {b.file}}, options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), b.code) << r.status().ToString();
    EXPECT_EQ(r.status().message().substr(0, b.message.size()), b.message) << r.status().ToString();
    EXPECT_EQ(g->GetSnapshot().sequence(), 0u);
  }
}

}  // namespace
}  // namespace quiver
