// JSON Lines import and export (DataFormat::kJsonl): values come in with
// the types the format promises, a graph holding every value type survives
// export then import bit for bit, and edge files parsed on several threads in small blocks
// give what one thread gives. The bad-input table is in
// import_bad_input_test.cc; the bulk path's equivalence in import_bulk_test.cc.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import/exporter.h"
#include "import/importer.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver {
namespace {

using testing_import::Canonical;
using testing_import::GetFile;
using testing_import::PutFile;
using testing_import::RunImport;

ImportOptions Jsonl() {
  ImportOptions o;
  o.format = DataFormat::kJsonl;
  return o;
}

TEST(ImportJsonlTest, ValuesComeInWithTheirTypes) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/v.jsonl",
          "{\"id\": \"a\", \"label\": \"P\", \"properties\": {\"s\": \"x\\\"y\\\\z\\n\\u00e9\", \"i\": "
          "-9223372036854775808, "
          "\"d\": 1.0, \"e\": 2e3, \"b\": false, \"n\": null, \"v\": [0.1, -2, 3e-5], \"empty\": [], "
          "\"raw\": {\"bytes\": \"00FF10\"}, \"blank\": \"\"}}\r\n"
          "\n"
          "   {\"properties\": {}, \"id\": \"b\"}   \n");
  PutFile(fs, "/in/e.jsonl",
          "{\"start\": \"a\", \"end\": \"b\", \"type\": \"R\", \"properties\": {\"w\": 5}}\n");
  auto g = Graph::OpenInMemory().value();
  Result<ImportStats> r =
      RunImport(fs, *g, {.vertices = {{"/in/v.jsonl", "Q"}}, .edges = {{"/in/e.jsonl", ""}}}, Jsonl());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vertices, 2u);
  EXPECT_EQ(r->edges, 1u);
  const Snapshot s = g->GetSnapshot();
  const VertexId a(0), b(1);
  EXPECT_EQ(s.LabelName(*s.LabelOf(a)), "P");
  EXPECT_EQ(s.LabelName(*s.LabelOf(b)), "Q");  // the file's label
  EXPECT_EQ(*s.GetProperty(a, "id")->as_string(), "a");
  EXPECT_EQ(*s.GetProperty(a, "s")->as_string(), "x\"y\\z\n\xc3\xa9");
  EXPECT_EQ(*s.GetProperty(a, "i")->as_int64(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(s.GetProperty(a, "d")->type(), ValueType::kDouble);  // 1.0 stays a double
  EXPECT_EQ(*s.GetProperty(a, "e")->as_double(), 2000.0);
  EXPECT_EQ(*s.GetProperty(a, "b")->as_bool(), false);
  EXPECT_FALSE(s.GetProperty(a, "n").has_value());  // null: unset
  const std::vector<float> v(s.GetProperty(a, "v")->as_float_vector()->begin(),
                             s.GetProperty(a, "v")->as_float_vector()->end());
  EXPECT_EQ(v, (std::vector<float>{0.1f, -2.0f, 3e-5f}));
  EXPECT_TRUE(s.GetProperty(a, "empty")->as_float_vector()->empty());
  EXPECT_EQ(s.GetProperty(a, "raw")->as_bytes()->size(), 3u);
  EXPECT_EQ(*s.GetProperty(a, "blank")->as_string(), "");
  const EdgeInfo e = *s.GetEdge(EdgeId(0));
  EXPECT_EQ(e.source, a);
  EXPECT_EQ(e.target, b);
  EXPECT_EQ(*s.GetProperty(EdgeId(0), "w")->as_int64(), 5);

  // A number id file keeps int64 ids, and "7" (a string elsewhere) finds 7.
  PutFile(fs, "/in/n.jsonl", "{\"id\": 7}\n{\"id\": -3}\n");
  PutFile(fs, "/in/ne.jsonl", "{\"start\": \"7\", \"end\": -3}\n");
  auto h = Graph::OpenInMemory().value();
  r = RunImport(fs, *h, {.vertices = {{"/in/n.jsonl", "N"}}, .edges = {{"/in/ne.jsonl", "R"}}}, Jsonl());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*h->GetSnapshot().GetProperty(VertexId(0), "id")->as_int64(), 7);
  EXPECT_EQ(h->GetSnapshot().GetEdge(EdgeId(0))->target, VertexId(1));
}

// A graph with every value type, and strings JSON must escape.
void FillEveryValue(Graph& g) {
  WriteBatch b;
  auto x = b.AddVertex("Person", {{"name", "Ada \"A\" \\ \t\x01\n\xc3\xa9\xe2\x82\xac"},
                                  {"n", std::int64_t{-42}},
                                  {"one", 1.0},
                                  {"neg_zero", -0.0},
                                  {"tiny", 5e-324},
                                  {"big", 1.7976931348623157e308},
                                  {"ok", true},
                                  {"v", FloatVector{0.1f, -1e-30f, 3.4028235e38f, 0.0f}},
                                  {"nothing", FloatVector{}},
                                  {"raw", Bytes{std::byte{0}, std::byte{255}}},
                                  {"empty", ""},
                                  {"tags", StringList{"math", "a\"b\\c\n", "\xc3\xa9", ""}},
                                  {"no_tags", StringList{}},
                                  {"one_blank", StringList{""}}});
  auto y = b.AddVertex("City", {{"name", "London"}});
  b.AddVertex("City", {});
  b.AddEdge("LIVES_IN", x, y, {{"since", std::int64_t{1833}}, {"w", 0.5}});
  b.AddEdge("LIVES_IN", y, y, {});
  ASSERT_TRUE(g.Write(std::move(b)).ok());
}

// Review: simdjson 3.0.1 read numbers of 19 or more significant digits as
// 0; the value comes from the digits, as CSV reads them.
TEST(ImportJsonlTest, LongNumbersReadAsCsvReadsThem) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/v.jsonl",
          "{\"id\": 1, \"properties\": {\"a\": 3.14159265358979323846, \"b\": 1.234567890123456789, "
          "\"c\": 100000000000000000000.0, \"d\": -9223372036854775807, \"e\": 0.1000000000000000000001, "
          "\"v\": [3.14159265358979323846]}}\n");
  auto g = Graph::OpenInMemory().value();
  Result<ImportStats> r = RunImport(fs, *g, {.vertices = {{"/in/v.jsonl", "V"}}}, Jsonl());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Snapshot s = g->GetSnapshot();
  EXPECT_EQ(*s.GetProperty(VertexId(0), "a")->as_double(), 3.141592653589793);
  EXPECT_EQ(*s.GetProperty(VertexId(0), "b")->as_double(), 1.2345678901234568);
  EXPECT_EQ(*s.GetProperty(VertexId(0), "c")->as_double(), 1e20);
  EXPECT_EQ(*s.GetProperty(VertexId(0), "d")->as_int64(), -9223372036854775807);
  EXPECT_EQ(*s.GetProperty(VertexId(0), "e")->as_double(), 0.1);
  EXPECT_EQ((*s.GetProperty(VertexId(0), "v")->as_float_vector())[0], 3.14159265f);
}

// Review: a row without a label, in a file without one, is rejected at the
// row (not at 0:0, not in CSV's words).
TEST(ImportJsonlTest, ARowWithoutLabelOrTypeInAFileWithoutOneIsRejectedAtTheRow) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/v.jsonl", "{\"id\": 1, \"label\": \"A\"}\n{\"id\": 2, \"label\": \"\"}\n");
  PutFile(fs, "/in/e.jsonl", "{\"start\": 1, \"end\": 1, \"type\": \"K\"}\n{\"start\": 1, \"end\": 1}\n");
  auto g = Graph::OpenInMemory().value();
  Result<ImportStats> r = RunImport(fs, *g, {.vertices = {{"/in/v.jsonl", ""}}}, Jsonl());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 17), "/in/v.jsonl:2:20:") << r.status().ToString();
  EXPECT_NE(r.status().message().find("no \"label\""), std::string::npos) << r.status().ToString();
  PutFile(fs, "/in/v.jsonl", "{\"id\": 1}\n");
  r = RunImport(fs, *g, {.vertices = {{"/in/v.jsonl", "A"}}, .edges = {{"/in/e.jsonl", ""}}}, Jsonl());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 16), "/in/e.jsonl:2:1:") << r.status().ToString();
  EXPECT_NE(r.status().message().find("no \"type\""), std::string::npos) << r.status().ToString();
  EXPECT_EQ(g->GetSnapshot().sequence(), 0u);
}

// Review: ids of one label kept under one key must have one type across
// files too, and with id indexes no vertex may hold the id key from its
// properties; both paths refuse such input alike, before writing anything.
TEST(ImportJsonlTest, IdKeysTheUniqueIndexCouldNotHoldAreRefusedOnBothPaths) {
  struct Case {
    const char* name;
    std::vector<std::string> files;
    bool needs_index;
    std::string where, reason;
  };
  const std::vector<Case> cases = {
      {"a number id file then a string id file",
       {"{\"id\": 1}\n", "{\"id\": \"a\"}\n"},
       false,
       "/in/f1:1:8: ",
       "a string id, but the V ids kept as 'id' are ints in an earlier file"},
      {"the same through labels named in the rows",
       {"{\"id\": 1, \"label\": \"W\"}\n", "{\"id\": \"z\", \"label\": \"W\"}\n"},
       false,
       "/in/f1:1:8: ",
       "a string id, but the W ids kept as 'id' are ints"},
      {"an id key from the properties",
       {"{\"id\": 1}\n{\"properties\": {\"id\": 2}}\n"},
       true,
       "/in/f0:2:1: ",
       "a V holds 'id' from an ordinary column or property, but that key keeps the V ids"},
      {"an id key from the properties, the same value",
       {"{\"id\": 5}\n{\"properties\": {\"id\": 5}}\n"},
       true,
       "/in/f0:2:1: ",
       "from an ordinary column or property"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    ImportSpec spec;
    for (std::size_t i = 0; i < c.files.size(); ++i) {
      PutFile(fs, "/in/f" + std::to_string(i), c.files[i]);
      spec.vertices.push_back({"/in/f" + std::to_string(i), "V"});
    }
    ImportOptions o = Jsonl();
    o.create_id_indexes = true;
    auto g = Graph::OpenInMemory().value();
    Result<ImportStats> batched = RunImport(fs, *g, spec, o);
    ASSERT_FALSE(batched.ok());
    EXPECT_EQ(batched.status().code(), StatusCode::kInvalidArgument) << batched.status().ToString();
    EXPECT_EQ(batched.status().message().substr(0, c.where.size()), c.where) << batched.status().ToString();
    EXPECT_NE(batched.status().message().find(c.reason), std::string::npos) << batched.status().ToString();
    EXPECT_EQ(g->GetSnapshot().sequence(), 0u);
    EXPECT_TRUE(g->GetSnapshot().Indexes().empty());
    import::Importer bulk(&fs, std::string("/g"), spec, o);
    Result<ImportStats> b = bulk.Run();
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.status().ToString(), batched.status().ToString());
    // Without the index, an id key among the properties is an ordinary property.
    if (c.needs_index) {
      o.create_id_indexes = false;
      auto h = Graph::OpenInMemory().value();
      EXPECT_TRUE(RunImport(fs, *h, spec, o).ok());
    }
  }
}

// Arrays of strings are string lists, arrays of numbers float vectors (the
// first element decides; `[]` is an empty float vector), and
// {"strings": [...]} is a string list of any length.
TEST(ImportJsonlTest, StringArraysAreStringLists) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/v.jsonl",
          "{\"id\": \"a\", \"label\": \"P\", \"properties\": {\"tags\": [\"math\", \"po\\u00e9t\", \"\"], "
          "\"none\": {\"strings\": []}, \"some\": {\"strings\": [\"x;y\"]}, \"blank\": [\"\"], "
          "\"floats\": [], \"one\": [\"solo\"]}}\n");
  auto g = Graph::OpenInMemory().value();
  Result<ImportStats> r = RunImport(fs, *g, {.vertices = {{"/in/v.jsonl", ""}}}, Jsonl());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Snapshot s = g->GetSnapshot();
  auto list = [&](const char* key) {
    std::optional<PropertyView> v = s.GetProperty(VertexId(0), key);
    EXPECT_TRUE(v.has_value()) << key;
    if (!v || !v->as_string_list()) return StringList{"<not a list>"};
    return v->as_string_list()->ToList();
  };
  EXPECT_EQ(list("tags"), (StringList{"math", "po\xc3\xa9t", ""}));
  EXPECT_EQ(list("none"), StringList{});
  EXPECT_EQ(list("some"), StringList{"x;y"});
  EXPECT_EQ(list("blank"), StringList{""});
  EXPECT_EQ(list("one"), StringList{"solo"});
  EXPECT_EQ(s.GetProperty(VertexId(0), "floats")->type(), ValueType::kFloatVector);
}

TEST(ImportJsonlTest, EveryValueSurvivesExportThenImport) {
  auto g = Graph::OpenInMemory().value();
  FillEveryValue(*g);
  env::SimFileSystem fs;
  ExportOptions eo;
  eo.format = DataFormat::kJsonl;
  Result<ExportStats> x = import::RunExport(&fs, g->GetSnapshot(), "/out", eo);
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(x->files, (std::vector<std::string>{"/out/vertices.jsonl", "/out/edges.jsonl"}));
  const std::string vertices = GetFile(fs, "/out/vertices.jsonl");
  EXPECT_NE(vertices.find("\"one\":1.0"), std::string::npos) << vertices;
  EXPECT_NE(vertices.find("\"raw\":{\"bytes\":\"00ff\"}"), std::string::npos) << vertices;
  // A string list is an array of strings; the empty one has the object form
  // (`[]` reads back as an empty float vector).
  EXPECT_NE(vertices.find("\"tags\":[\"math\",\"a\\\"b\\\\c\\n\",\"\xc3\xa9\",\"\"]"), std::string::npos)
      << vertices;
  EXPECT_NE(vertices.find("\"no_tags\":{\"strings\":[]}"), std::string::npos) << vertices;
  EXPECT_NE(vertices.find("\"one_blank\":[\"\"]"), std::string::npos) << vertices;
  EXPECT_NE(vertices.find("\"nothing\":[]"), std::string::npos) << vertices;
  EXPECT_NE(vertices.find("{\"id\":1,\"label\":\"City\",\"properties\":{\"name\":\"London\"}}"),
            std::string::npos)
      << vertices;

  // No vertex holds "id": the Quiver ids were written, so they are not kept.
  ImportOptions io = Jsonl();
  io.jsonl_id_key = "";
  auto h = Graph::OpenInMemory().value();
  Result<ImportStats> r =
      RunImport(fs, *h, {.vertices = {{"/out/vertices.jsonl", ""}}, .edges = {{"/out/edges.jsonl", ""}}}, io);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Canonical(h->GetSnapshot()), Canonical(g->GetSnapshot()));
}

TEST(ImportJsonlTest, KeptIdsRoundTripAndTheSecondExportIsTheSameBytes) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(
      fs, "/in/v.jsonl",
      "{\"id\": \"u9\", \"label\": \"U\", \"properties\": {\"k\": 1}}\n{\"id\": \"u1\", \"label\": \"U\"}\n");
  PutFile(fs, "/in/e.jsonl", "{\"start\": \"u1\", \"end\": \"u9\", \"type\": \"F\"}\n");
  const ImportSpec spec{.vertices = {{"/in/v.jsonl", ""}}, .edges = {{"/in/e.jsonl", ""}}};
  auto g = Graph::OpenInMemory().value();
  ASSERT_TRUE(RunImport(fs, *g, spec, Jsonl()).ok());
  ExportOptions eo;
  eo.format = DataFormat::kJsonl;
  ASSERT_TRUE(import::RunExport(&fs, g->GetSnapshot(), "/a", eo).ok());
  // The ids written are the kept ones, not repeated among the properties.
  EXPECT_EQ(GetFile(fs, "/a/vertices.jsonl"),
            "{\"id\":\"u9\",\"label\":\"U\",\"properties\":{\"k\":1}}\n"
            "{\"id\":\"u1\",\"label\":\"U\",\"properties\":{}}\n");
  EXPECT_EQ(GetFile(fs, "/a/edges.jsonl"),
            "{\"start\":\"u1\",\"end\":\"u9\",\"type\":\"F\",\"properties\":{}}\n");
  auto h = Graph::OpenInMemory().value();
  ASSERT_TRUE(
      RunImport(fs, *h, {.vertices = {{"/a/vertices.jsonl", ""}}, .edges = {{"/a/edges.jsonl", ""}}}, Jsonl())
          .ok());
  EXPECT_EQ(Canonical(h->GetSnapshot()), Canonical(g->GetSnapshot()));
  ASSERT_TRUE(import::RunExport(&fs, h->GetSnapshot(), "/b", eo).ok());
  EXPECT_EQ(GetFile(fs, "/b/vertices.jsonl"), GetFile(fs, "/a/vertices.jsonl"));
  EXPECT_EQ(GetFile(fs, "/b/edges.jsonl"), GetFile(fs, "/a/edges.jsonl"));
}

TEST(ImportJsonlTest, EdgesOnSeveralThreadsInSmallBlocksGiveWhatOneThreadGives) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  std::string vertices, edges;
  for (int i = 0; i < 200; ++i) vertices += "{\"id\": " + std::to_string(i) + "}\n";
  for (int i = 0; i < 2000; ++i) {
    edges += "{\"start\": " + std::to_string(i % 200) + ", \"end\": " + std::to_string((i * 7) % 200) +
             ", \"properties\": {\"i\": " + std::to_string(i) + "}}\n";
    if (i % 501 == 3) edges += "{\"start\": 1, \"end\": 999}\n";  // rejected
    if (i % 333 == 5) edges += "\n";
  }
  PutFile(fs, "/in/v.jsonl", vertices);
  PutFile(fs, "/in/e.jsonl", edges);
  const ImportSpec spec{.vertices = {{"/in/v.jsonl", "V"}}, .edges = {{"/in/e.jsonl", "E"}}};
  std::string expected;
  for (std::uint32_t threads : {1u, 3u}) {
    for (std::uint64_t block : {std::uint64_t{1}, std::uint64_t{700}, std::uint64_t{4} << 20}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, blocks of " + std::to_string(block));
      ImportOptions o = Jsonl();
      o.threads = threads;
      o.skip_bad_rows = 100;
      const std::string dir = "/g" + std::to_string(threads) + "-" + std::to_string(block);
      import::Importer importer(&fs, dir, spec, o);
      importer.SetBlockBytesForTesting(block);
      Result<ImportStats> r = importer.Run();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->edges, 2000u);
      ASSERT_EQ(r->rejected.size(), 4u);
      EXPECT_EQ(r->rejected[0].line, 5u);  // after 4 edges
      EXPECT_EQ(r->rejected[0].reason, "unknown :END_ID '999'");
      Options open;
      open.writer.spin_microseconds = 0;
      open.create_if_missing = false;
      auto g = GraphImpl::OpenDurable(open, dir, &fs);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      const std::string got = Canonical((*g)->GetSnapshot());
      if (expected.empty()) expected = got;
      EXPECT_EQ(got, expected);
    }
  }
}

}  // namespace
}  // namespace quiver
