// Importing an LDBC Graphalytics dataset through its NAME.properties file
// (ImportSpec::graphalytics, src/import/graphalytics_properties.h): the
// vendored validation graphs give what their .v / .e files give with the
// equivalent options, and a bad properties file fails with its position
// and imports nothing.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import/importer.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver {
namespace {

using testing_import::Canonical;
using testing_import::PutFile;

std::string ReadRealFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The vendored datasets' names (NAME of NAME.properties), sorted.
std::vector<std::string> VendoredDatasets() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(QUIVER_TEST_DATA_DIR "/graphalytics")) {
    if (entry.path().extension() == ".properties") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Copies a vendored dataset's three files into `fs` under /in.
void CopyDataset(env::SimFileSystem& fs, const std::string& name) {
  const std::filesystem::path dir = QUIVER_TEST_DATA_DIR "/graphalytics";
  for (const char* ext : {".properties", ".v", ".e"})
    PutFile(fs, "/in/" + name + ext, ReadRealFile(dir / (name + ext)));
}

ImportOptions Evlp() {
  ImportOptions o;
  o.format = DataFormat::kEvlp;
  o.threads = 1;
  return o;
}

// The graph an import through batches gives, or its error.
std::string ImportedGraph(env::SimFileSystem& fs, const ImportSpec& spec, const ImportOptions& options,
                          ImportStats* stats = nullptr) {
  std::unique_ptr<Graph> g = Graph::OpenInMemory().value();
  import::Importer importer(&fs, *g, spec, options);
  Result<ImportStats> r = importer.Run();
  if (!r.ok()) {
    EXPECT_EQ(g->GetSnapshot().vertex_count(), 0u);  // nothing imported
    return r.status().ToString();
  }
  if (stats != nullptr) *stats = *r;
  return Canonical(g->GetSnapshot());
}

ImportSpec DatasetSpec(const std::string& properties) {
  ImportSpec spec;
  spec.graphalytics = {.properties = properties, .vertex_label = "V", .edge_type = "E"};
  return spec;
}

TEST(ImportGraphalyticsTest, PropertiesGiveWhatTheFilesGive) {
  const std::vector<std::string> names = VendoredDatasets();
  ASSERT_EQ(names.size(), 14u);
  int compared = 0, weighted = 0, undirected = 0;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    CopyDataset(fs, name);
    ImportStats stats;
    const std::string via_properties =
        ImportedGraph(fs, DatasetSpec("/in/" + name + ".properties"), Evlp(), &stats);
    // Two of the official files name the .v file as the edge file too (the
    // test graphs' own README notes one): refused, at the line that does.
    if (name == "test-wcc-directed" || name == "test-sssp-undirected") {
      EXPECT_EQ(via_properties,
                "InvalidArgument: /in/" + name + ".properties:3:" +
                    std::to_string(std::string("graph." + name + ".edge-file = ").size() + 1) +
                    ": the edge file is the vertex file (graph." + name + ".vertex-file, line 2)");
      continue;
    }
    const ImportSpec files{.vertices = {{"/in/" + name + ".v", "V"}}, .edges = {{"/in/" + name + ".e", "E"}}};
    const std::string via_files = ImportedGraph(fs, files, Evlp());
    EXPECT_EQ(via_properties, via_files);
    EXPECT_EQ(via_properties.find("Invalid"), std::string::npos);
    EXPECT_EQ(stats.directed, name.ends_with("-directed"));
    EXPECT_GT(stats.edges, 0u);
    ++compared;
    if (via_properties.find("weight=double:") != std::string::npos) ++weighted;
    if (!stats.directed) ++undirected;
  }
  EXPECT_EQ(compared, 12);
  EXPECT_EQ(weighted, 3);  // example-directed, example-undirected, test-sssp-directed
  EXPECT_GT(undirected, 0);
}

// The edge property keeps the name the .properties gives it, in place of
// ImportOptions::evlp_weight_key; both paths give the same graph.
TEST(ImportGraphalyticsTest, TheEdgePropertyTakesTheDeclaredNameOnBothPaths) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  CopyDataset(fs, "example-undirected");
  std::string text = ReadRealFile(QUIVER_TEST_DATA_DIR "/graphalytics/example-undirected.properties");
  const std::string from = "edge-properties.names = weight";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "edge-properties.names = cost");
  PutFile(fs, "/in/example-undirected.properties", text);
  ImportOptions o = Evlp();
  o.evlp_weight_key = "w";  // not used for the dataset's file
  o.create_id_indexes = true;
  ImportStats stats;
  const std::string got = ImportedGraph(fs, DatasetSpec("/in/example-undirected.properties"), o, &stats);
  EXPECT_FALSE(stats.directed);
  EXPECT_NE(got.find("cost=double:"), std::string::npos) << got.substr(0, 300);
  EXPECT_EQ(got.find("w=double"), std::string::npos);
  ImportOptions files_options = o;
  files_options.evlp_weight_key = "cost";
  const ImportSpec files{.vertices = {{"/in/example-undirected.v", "V"}},
                         .edges = {{"/in/example-undirected.e", "E"}}};
  EXPECT_EQ(got, ImportedGraph(fs, files, files_options));

  import::Importer bulk(&fs, std::string("/db"), DatasetSpec("/in/example-undirected.properties"), o);
  Result<ImportStats> r = bulk.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->directed);
  Options open;
  open.create_if_missing = false;
  auto g = GraphImpl::OpenDurable(open, "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Canonical((*g)->GetSnapshot()), got);
}

// The Java .properties forms the reader takes: ':' or '=' or white space
// between key and value, comments, continuation lines, paths relative to
// the file's directory; other keys are ignored.
TEST(ImportGraphalyticsTest, PropertiesSyntax) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  ASSERT_TRUE(fs.CreateDir("/in/data").ok());
  PutFile(fs, "/in/data/g.v", "1\n2\n3\n");
  PutFile(fs, "/in/data/g.e", "1 2 0.5\n2 3 1.5\n");
  PutFile(fs, "/in/g.properties",
          "! a comment\n"
          "   # another\n"
          "graph.g.vertex-file : data/g.v\n"
          "graph.g.edge-file=\\\n"
          "      data/g.e\n"
          "graph.g.directed   TRUE  \r\n"
          "graph.g.edge-properties.names = len\n"
          "graph.g.edge-properties.types = real\n"
          "graph.g.algorithms = bfs, \\\n  cdlp\n"
          "graph.other.directed = maybe\n");
  ImportStats stats;
  const std::string got = ImportedGraph(fs, DatasetSpec("/in/g.properties"), Evlp(), &stats);
  EXPECT_TRUE(stats.directed);
  EXPECT_EQ(stats.vertices, 3u);
  EXPECT_EQ(stats.edges, 2u);
  EXPECT_NE(got.find("len=double:"), std::string::npos) << got;
}

// Every bad properties file fails with its position and imports nothing,
// through batches and into a new graph (no directory made).
TEST(ImportGraphalyticsTest, BadPropertiesFilesImportNothing) {
  const std::string v = "graph.g.vertex-file = g.v\n";
  const std::string e = "graph.g.edge-file = g.e\n";
  const std::string d = "graph.g.directed = false\n";
  struct Case {
    const char* name;
    std::string properties;  // "" : no file
    std::string edges;       // g.e
    std::string want;        // the status
    DataFormat format = DataFormat::kEvlp;
  };
  const std::vector<Case> cases = {
      {"missing file", "", "1 2\n", "NotFound: /in/g.properties:0:0: no such file"},
      {"no vertex file", e + d, "1 2\n",
       "InvalidArgument: /in/g.properties: no graph.g.vertex-file (a Graphalytics dataset's .properties "
       "names "
       "its vertex and edge files and whether it is directed)"},
      {"no directed", v + e, "1 2\n", "InvalidArgument: /in/g.properties: no graph.g.directed"},
      {"directed neither", v + e + "graph.g.directed = maybe\n", "1 2\n",
       "InvalidArgument: /in/g.properties:3:20: 'maybe' is not true or false"},
      {"repeated key", v + e + d + d, "1 2\n",
       "InvalidArgument: /in/g.properties:4:1: repeated key graph.g.directed (first at line 3)"},
      {"unknown type", v + e + d + "graph.g.edge-properties.names = w\ngraph.g.edge-properties.types = int\n",
       "1 2 3\n",
       "InvalidArgument: /in/g.properties:5:33: unknown edge property type 'int' (an EVLP weight is read as "
       "a "
       "double: 'real')"},
      {"names without types", v + e + d + "graph.g.edge-properties.names = w\n", "1 2 3\n",
       "InvalidArgument: /in/g.properties:4:33: 1 edge property names but 0 types"},
      {"two edge properties",
       v + e + d + "graph.g.edge-properties.names = w, x\ngraph.g.edge-properties.types = real, real\n",
       "1 2 3 4\n",
       "Unimplemented: /in/g.properties:4:33: 2 edge properties; an EVLP edge line holds at most one"},
      {"an empty name",
       v + e + d + "graph.g.edge-properties.names = ,\ngraph.g.edge-properties.types = real,\n", "1 2 3\n",
       "InvalidArgument: /in/g.properties:4:33: an edge property name is empty or not valid UTF-8"},
      {"vertex properties", v + e + d + "graph.g.vertex-properties.names = color\n", "1 2\n",
       "Unimplemented: /in/g.properties:4:35: vertex properties are not imported"},
      {"missing vertex file", "graph.g.vertex-file = nope.v\n" + e + d, "1 2\n",
       "NotFound: /in/g.properties:1:23: no such file: /in/nope.v"},
      {"empty edge file name", v + "graph.g.edge-file =\n" + d, "1 2\n",
       "InvalidArgument: /in/g.properties:2:20: empty graph.g.edge-file"},
      {"the edge file is the vertex file", v + "graph.g.edge-file = g.v\n" + d, "1 2\n",
       "InvalidArgument: /in/g.properties:2:21: the edge file is the vertex file (graph.g.vertex-file, line "
       "1)"},
      {"weights not declared", v + e + d, "1 2 0.5\n",
       "InvalidArgument: /in/g.e:1:1: 3 fields, but /in/g.properties declares no edge property (2 fields a "
       "line)"},
      {"weights declared, none there",
       v + e + d + "graph.g.edge-properties.names = w\ngraph.g.edge-properties.types = real\n", "1 2\n",
       "InvalidArgument: /in/g.e:1:1: 2 fields, but /in/g.properties:4 declares one edge property (3 fields "
       "a "
       "line)"},
      {"not EVLP", v + e + d, "1 2\n",
       "InvalidArgument: ImportSpec::graphalytics (/in/g.properties) is an EVLP dataset: "
       "ImportOptions::format must be kEvlp",
       DataFormat::kCsv},
  };
  int dirs = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    PutFile(fs, "/in/g.v", "1\n2\n3\n");
    PutFile(fs, "/in/g.e", c.edges);
    if (!c.properties.empty()) PutFile(fs, "/in/g.properties", c.properties);
    ImportOptions o = Evlp();
    o.format = c.format;
    const std::string got = ImportedGraph(fs, DatasetSpec("/in/g.properties"), o);
    EXPECT_TRUE(got.starts_with(c.want)) << got;
    const std::string dir = "/db" + std::to_string(dirs++);
    import::Importer bulk(&fs, dir, DatasetSpec("/in/g.properties"), o);
    Result<ImportStats> r = bulk.Run();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().ToString(), got);
    EXPECT_FALSE(fs.Exists(dir).value());
  }
}

}  // namespace
}  // namespace quiver
