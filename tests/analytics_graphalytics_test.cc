// Runs the six Graphalytics kernels on the 14 official LDBC validation graphs
// (tests/data/graphalytics, Apache-2.0, see its README) and checks every
// output under the specification's validation rules: BFS and CDLP exact, WCC
// up to renaming of components, PR / LCC / SSSP within relative 1e-4 (so 0
// needs exactly 0 and infinity only matches infinity), and the output's
// vertex set equal to the graph's.
//
// Each graph is loaded into a Quiver graph three ways, so the mapping from
// Quiver's multigraph to the Graphalytics model is tested too:
//   kPlain   the vertices in ascending Graphalytics id, then the edges;
//   kHoles   a removed vertex (with a removed edge) before every real one, so
//            the projection's ids have holes and start far from 0;
//   kDecoys  live vertices of another label and edges of another type
//            interleaved, left out by the spec's labels and types.
// Vertices are added in ascending Graphalytics id, so VertexId order is
// Graphalytics id order and CDLP's "smallest label" means the same in both.
// Every kernel runs on 1, 2 and 3 threads and must return identical bits.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "quiver/analytics.h"
#include "quiver/graph.h"

namespace quiver {
namespace {

const std::filesystem::path kDataDir = std::filesystem::path(QUIVER_TEST_DATA_DIR) / "graphalytics";

struct EvlpGraph {
  std::string name;
  bool directed = true;
  std::map<std::string, std::string> props;  // "bfs.source-vertex" -> "1"
  std::vector<std::int64_t> vertices;        // ascending
  struct Edge {
    std::int64_t src, dst;
    std::optional<double> weight;
  };
  std::vector<Edge> edges;
};

std::vector<std::string> Lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// A small EVLP reader: NAME.v, NAME.e, NAME.properties.
EvlpGraph ReadEvlp(const std::string& name) {
  EvlpGraph g;
  g.name = name;
  for (const std::string& line : Lines(kDataDir / (name + ".properties"))) {
    if (line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    key.erase(key.find_last_not_of(' ') + 1);
    value.erase(0, value.find_first_not_of(' '));
    const std::string prefix = "graph." + name + ".";
    if (key.rfind(prefix, 0) == 0) g.props[key.substr(prefix.size())] = value;
  }
  g.directed = g.props.at("directed") == "true";
  for (const std::string& line : Lines(kDataDir / (name + ".v"))) g.vertices.push_back(std::stoll(line));
  std::sort(g.vertices.begin(), g.vertices.end());
  for (const std::string& line : Lines(kDataDir / (name + ".e"))) {
    std::istringstream s(line);
    EvlpGraph::Edge e{};
    s >> e.src >> e.dst;
    double w;
    if (s >> w) e.weight = w;
    g.edges.push_back(e);
  }
  return g;
}

// The expected output NAME-ALG, as strings (parsed per rule).
std::map<std::int64_t, std::string> ReadExpected(const std::string& name, const std::string& alg) {
  std::map<std::int64_t, std::string> out;
  for (const std::string& line : Lines(kDataDir / (name + "-" + alg))) {
    std::istringstream s(line);
    std::int64_t v;
    std::string value;
    s >> v >> value;
    out[v] = value;
  }
  return out;
}

enum class Loading { kPlain, kHoles, kDecoys };

// A graph loaded into Quiver with the map from VertexId back to the
// Graphalytics id.
struct Loaded {
  std::unique_ptr<Graph> graph;
  std::map<std::uint64_t, std::int64_t> gid;  // VertexId -> Graphalytics id
  std::map<std::int64_t, VertexId> qid;
};

Loaded Load(const EvlpGraph& g, Loading how) {
  Loaded l;
  l.graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> real, extra;
  for (std::size_t i = 0; i < g.vertices.size(); ++i) {
    if (how != Loading::kPlain) extra.push_back(b.AddVertex(how == Loading::kHoles ? "Hole" : "Decoy"));
    real.push_back(b.AddVertex("V"));
  }
  std::map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < g.vertices.size(); ++i) index[g.vertices[i]] = i;
  for (std::size_t k = 0; k < g.edges.size(); ++k) {
    const auto& e = g.edges[k];
    std::vector<Property> props;
    if (e.weight) props.push_back({"weight", *e.weight});
    const std::size_t s = index.at(e.src), d = index.at(e.dst);
    if (how != Loading::kPlain) {
      // An edge to a hole / decoy vertex, and for decoys a parallel edge of
      // another type: all must stay out of the projection.
      b.AddEdge("E", real[s], extra[d], props);
      if (how == Loading::kDecoys) b.AddEdge("OTHER", real[s], real[d], {{"weight", "not a number"}});
    }
    b.AddEdge("E", real[s], real[d], props);
  }
  CommitInfo info = l.graph->Write(std::move(b)).value();
  WriteBatch removal;
  for (std::size_t i = 0; i < g.vertices.size(); ++i) {
    const VertexId v = info.vertices[how == Loading::kPlain ? i : 2 * i + 1];
    l.gid[v.value()] = g.vertices[i];
    l.qid[g.vertices[i]] = v;
    if (how == Loading::kHoles) removal.RemoveVertex(info.vertices[2 * i]);
  }
  if (!removal.empty()) {
    EXPECT_TRUE(l.graph->Write(std::move(removal)).ok());
  }
  return l;
}

// Checks the vertex set, then each value under `rule`.
template <typename T, typename Rule>
void CheckEach(const EvlpGraph& g, const Loaded& l, const Projection& p, const std::vector<T>& got,
               const std::map<std::int64_t, std::string>& expected, Rule rule) {
  ASSERT_EQ(got.size(), p.vertex_count());
  ASSERT_EQ(expected.size(), g.vertices.size());
  ASSERT_EQ(p.vertex_count(), g.vertices.size());
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i) {
    const std::int64_t gid = l.gid.at(p.ToVertexId(i).value());
    ASSERT_TRUE(expected.count(gid)) << gid;
    rule(gid, got[i], expected.at(gid));
  }
}

void CheckRelative(std::int64_t v, double got, const std::string& want_text) {
  const double want = std::strtod(want_text.c_str(), nullptr);
  if (std::isinf(want)) {
    EXPECT_EQ(got, want) << "vertex " << v;
  } else {
    EXPECT_LE(std::fabs(want - got), 1e-4 * std::fabs(want))
        << "vertex " << v << ": " << got << " vs " << want;
  }
}

// Runs `kernel(run)` on 1, 2 and 3 threads; all must agree bit for bit.
template <typename Kernel>
auto OnThreads(Kernel&& kernel) {
  auto one = kernel(RunOptions{.threads = 1});
  EXPECT_TRUE(one.ok()) << one.status().ToString();
  for (std::uint32_t t : {2u, 3u}) {
    auto other = kernel(RunOptions{.threads = t});
    EXPECT_TRUE(other.ok());
    if (one.ok() && other.ok()) {
      EXPECT_TRUE(*one == *other) << "threads " << t;
    }
  }
  return std::move(one).value();
}

void RunGraph(const std::string& name, Loading how) {
  SCOPED_TRACE(name);
  const EvlpGraph g = ReadEvlp(name);
  const Loaded l = Load(g, how);
  Snapshot snap = l.graph->GetSnapshot();
  ProjectionSpec spec{.undirected = !g.directed, .threads = 2};
  if (how == Loading::kDecoys) {
    spec.vertex_labels = {"V"};
    spec.edge_types = {"E"};
  }
  const bool weighted = !g.edges.empty() && g.edges[0].weight.has_value();
  if (weighted) spec.weight_property = "weight";
  Result<Projection> pr = Project(snap, spec);
  ASSERT_TRUE(pr.ok()) << pr.status().ToString();
  const Projection& p = *pr;
  snap = Snapshot();  // the projection outlives its snapshot
  int checked = 0;
  auto has = [&](const char* alg) { return std::filesystem::exists(kDataDir / (name + "-" + alg)); };
  if (has("BFS")) {
    const VertexId src = l.qid.at(std::stoll(g.props.at("bfs.source-vertex")));
    auto got = OnThreads([&](const RunOptions& r) { return Bfs(p, src, r); });
    CheckEach(
        g, l, p, got, ReadExpected(name, "BFS"),
        [](std::int64_t v, std::int64_t d, const std::string& want) { EXPECT_EQ(d, std::stoll(want)) << v; });
    ++checked;
  }
  if (has("CDLP")) {
    const auto iterations = static_cast<std::uint32_t>(std::stoul(g.props.at("cdlp.max-iterations")));
    auto got = OnThreads([&](const RunOptions& r) { return Cdlp(p, iterations, r); });
    CheckEach(g, l, p, got, ReadExpected(name, "CDLP"),
              [&](std::int64_t v, VertexId label, const std::string& want) {
                EXPECT_EQ(l.gid.at(label.value()), std::stoll(want)) << v;
              });
    ++checked;
  }
  if (has("WCC")) {
    auto got = OnThreads([&](const RunOptions& r) { return Wcc(p, r); });
    // Equivalence: a bijection between our labels and the reference's.
    std::map<std::uint64_t, std::string> ours_to_ref;
    std::map<std::string, std::uint64_t> ref_to_ours;
    CheckEach(g, l, p, got, ReadExpected(name, "WCC"),
              [&](std::int64_t v, VertexId c, const std::string& want) {
                auto [a, new_a] = ours_to_ref.emplace(c.value(), want);
                auto [b, new_b] = ref_to_ours.emplace(want, c.value());
                EXPECT_EQ(a->second, want) << v;
                EXPECT_EQ(b->second, c.value()) << v;
              });
    ++checked;
  }
  if (has("PR")) {
    PageRankOptions o{.iterations = static_cast<std::uint32_t>(std::stoul(g.props.at("pr.num-iterations"))),
                      .damping = std::stod(g.props.at("pr.damping-factor"))};
    auto got = OnThreads([&](const RunOptions& r) { return PageRank(p, o, r); });
    CheckEach(g, l, p, got, ReadExpected(name, "PR"), CheckRelative);
    ++checked;
  }
  if (has("LCC")) {
    auto got = OnThreads([&](const RunOptions& r) { return Lcc(p, r); });
    CheckEach(g, l, p, got, ReadExpected(name, "LCC"), CheckRelative);
    ++checked;
  }
  if (has("SSSP")) {
    ASSERT_TRUE(weighted);
    const VertexId src = l.qid.at(std::stoll(g.props.at("sssp.source-vertex")));
    auto got = OnThreads([&](const RunOptions& r) { return Sssp(p, src, r); });
    CheckEach(g, l, p, got, ReadExpected(name, "SSSP"), CheckRelative);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

class GraphalyticsTest : public ::testing::TestWithParam<std::tuple<std::string, Loading>> {};

TEST_P(GraphalyticsTest, MatchesReferenceOutputs) {
  RunGraph(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(
    Official, GraphalyticsTest,
    ::testing::Combine(::testing::Values("example-directed", "example-undirected", "test-bfs-directed",
                                         "test-bfs-undirected", "test-cdlp-directed", "test-cdlp-undirected",
                                         "test-lcc-directed", "test-lcc-undirected", "test-pr-directed",
                                         "test-pr-undirected", "test-sssp-directed", "test-sssp-undirected",
                                         "test-wcc-directed", "test-wcc-undirected"),
                       ::testing::Values(Loading::kPlain, Loading::kHoles, Loading::kDecoys)),
    [](const auto& param_info) {
      std::string n = std::get<0>(param_info.param);
      std::replace(n.begin(), n.end(), '-', '_');
      const Loading how = std::get<1>(param_info.param);
      return n + (how == Loading::kPlain ? "_plain" : how == Loading::kHoles ? "_holes" : "_decoys");
    });

// Every graph file of the folder is one of the 14 above: none is skipped.
TEST(GraphalyticsDataTest, FourteenGraphsWithOutputs) {
  int graphs = 0, outputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDataDir)) {
    const std::string f = entry.path().filename().string();
    if (entry.path().extension() == ".v") ++graphs;
    for (const char* alg : {"-BFS", "-CDLP", "-LCC", "-PR", "-SSSP", "-WCC"})
      if (f.size() > std::strlen(alg) && f.compare(f.size() - std::strlen(alg), std::string::npos, alg) == 0)
        ++outputs;
  }
  EXPECT_EQ(graphs, 14);
  EXPECT_EQ(outputs, 24);
  EXPECT_TRUE(std::filesystem::exists(kDataDir / "LICENSE.txt"));
  EXPECT_TRUE(std::filesystem::exists(kDataDir / "NOTICE.txt"));
}

}  // namespace
}  // namespace quiver
