// A first tour of Quiver's public API: build a small graph of people and
// cities in one batch, read it back through a snapshot, remove a vertex, and
// see that a snapshot taken before the removal still shows the old graph.
//
// Run: build/release/examples/quiver_example_basic
// Exits 0 if every read returned what the example expects, 1 otherwise.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quiver/quiver.h"

namespace {

int failures = 0;

// Records a failed expectation; the example keeps going so it reports all.
void Expect(bool ok, std::string_view what) {
  if (!ok) {
    std::fprintf(stderr, "UNEXPECTED: %.*s\n", static_cast<int>(what.size()), what.data());
    ++failures;
  }
}

// The ids the first batch produced, by role.
struct People {
  quiver::VertexId ada, grace, alan;
  quiver::VertexId london, new_york;
};

// Builds the whole graph in one batch: vertices and their edges together,
// the edges naming the new vertices through the handles AddVertex returned.
quiver::Result<People> BuildGraph(quiver::Graph& graph) {
  quiver::WriteBatch batch;
  quiver::NewVertex ada = batch.AddVertex("Person", {{"name", "Ada"}, {"born", 1815}});
  quiver::NewVertex grace = batch.AddVertex("Person", {{"name", "Grace"}, {"born", 1906}});
  quiver::NewVertex alan = batch.AddVertex("Person", {{"name", "Alan"}, {"born", 1912}});
  quiver::NewVertex london = batch.AddVertex("City", {{"name", "London"}});
  quiver::NewVertex new_york = batch.AddVertex("City", {{"name", "New York"}});
  batch.AddEdge("KNOWS", ada, alan, {{"since", 1936}});
  batch.AddEdge("KNOWS", ada, grace, {{"since", 1944}});
  batch.AddEdge("KNOWS", grace, alan, {{"since", 1950}});
  batch.AddEdge("LIVES_IN", ada, london);
  batch.AddEdge("LIVES_IN", alan, london);
  batch.AddEdge("LIVES_IN", grace, new_york, {{"borough", "Manhattan"}});

  QUIVER_ASSIGN_OR_RETURN(quiver::CommitInfo info, graph.Write(std::move(batch)));
  std::printf("committed batch %" PRIu64 ": %zu vertices, %zu edges\n", info.sequence, info.vertices.size(),
              info.edges.size());
  if (info.vertices.size() != 5) return quiver::InternalError("expected 5 vertex ids");
  return People{info.vertices[0], info.vertices[1], info.vertices[2], info.vertices[3], info.vertices[4]};
}

std::string NameOf(const quiver::Snapshot& snap, quiver::VertexId v) {
  std::optional<quiver::PropertyView> name = snap.GetProperty(v, "name");
  // as_string() is nullopt for a value of any other type: no type test needed.
  return std::string(name ? name->as_string().value_or("?") : "?");
}

// The names of v's neighbours over out-edges of one type, in adjacency order.
std::vector<std::string> Neighbours(const quiver::Snapshot& snap, quiver::VertexId v, std::string_view type) {
  std::vector<std::string> names;
  std::optional<quiver::EdgeTypeId> type_id = snap.FindEdgeType(type);
  if (!type_id) return names;
  for (const quiver::EdgeEntry& e : snap.OutEdges(v, *type_id)) names.push_back(NameOf(snap, e.neighbor()));
  return names;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "nobody" : out;
}

std::size_t CountLabel(const quiver::Snapshot& snap, std::string_view label) {
  std::optional<quiver::LabelId> id = snap.FindLabel(label);
  if (!id) return 0;
  std::size_t n = 0;
  for (quiver::VertexId v : snap.Vertices(*id)) {
    static_cast<void>(v);
    ++n;
  }
  return n;
}

// Reads the graph as the first batch left it.
void ReadFirstVersion(const quiver::Snapshot& snap, const People& p) {
  std::printf("snapshot at sequence %" PRIu64 ": %" PRIu64 " vertices (%zu Person, %zu City), %" PRIu64
              " edges\n",
              snap.sequence(), snap.vertex_count(), CountLabel(snap, "Person"), CountLabel(snap, "City"),
              snap.edge_count());
  Expect(snap.vertex_count() == 5 && snap.edge_count() == 6, "5 vertices and 6 edges after batch 1");
  Expect(CountLabel(snap, "Person") == 3 && CountLabel(snap, "City") == 2, "3 people and 2 cities");

  std::vector<std::string> ada_knows = Neighbours(snap, p.ada, "KNOWS");
  std::printf("  Ada knows %s; lives in %s\n", Join(ada_knows).c_str(),
              Join(Neighbours(snap, p.ada, "LIVES_IN")).c_str());
  Expect(ada_knows.size() == 2, "Ada knows two people");

  std::optional<quiver::PropertyView> born = snap.GetProperty(p.grace, "born");
  Expect(born && born->as_int64() == 1906, "Grace's born property is 1906");
  std::optional<quiver::EdgeTypeId> lives_in = snap.FindEdgeType("LIVES_IN");
  Expect(lives_in && snap.InEdges(p.london, *lives_in).size() == 2, "two people live in London");
  Expect(snap.InDegree(p.alan) == 2, "Alan has two incoming edges");
  std::printf("  %zu people live in London; Alan is known by %zu\n",
              lives_in ? snap.InEdges(p.london, *lives_in).size() : 0, snap.InDegree(p.alan));
}

quiver::Status RemoveAlan(quiver::Graph& graph, const People& p) {
  quiver::WriteBatch batch;
  batch.RemoveVertex(p.alan);  // also removes the three edges that touch Alan
  QUIVER_ASSIGN_OR_RETURN(quiver::CommitInfo info, graph.Write(std::move(batch)));
  std::printf("committed batch %" PRIu64 ": removed Alan and his edges\n", info.sequence);
  return quiver::Status::Ok();
}

void ReadSecondVersion(const quiver::Snapshot& now, const quiver::Snapshot& before, const People& p) {
  std::printf("new snapshot: %" PRIu64 " vertices, %" PRIu64 " edges; Ada knows %s\n", now.vertex_count(),
              now.edge_count(), Join(Neighbours(now, p.ada, "KNOWS")).c_str());
  Expect(!now.HasVertex(p.alan), "Alan is gone from the new snapshot");
  Expect(now.vertex_count() == 4 && now.edge_count() == 3, "4 vertices and 3 edges after batch 2");
  Expect(Neighbours(now, p.ada, "KNOWS").size() == 1, "Ada knows one person now");

  std::printf("old snapshot (sequence %" PRIu64 ") still sees %" PRIu64 " vertices, %" PRIu64
              " edges; Ada knows %s\n",
              before.sequence(), before.vertex_count(), before.edge_count(),
              Join(Neighbours(before, p.ada, "KNOWS")).c_str());
  Expect(before.HasVertex(p.alan) && NameOf(before, p.alan) == "Alan", "the old snapshot still has Alan");
  Expect(before.vertex_count() == 5 && before.edge_count() == 6, "the old snapshot's counts are unchanged");
}

int Run() {
  quiver::Result<std::unique_ptr<quiver::Graph>> opened = quiver::Graph::OpenInMemory();
  if (!opened.ok()) {
    std::fprintf(stderr, "open failed: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<quiver::Graph> graph = std::move(opened).value();

  quiver::Result<People> people = BuildGraph(*graph);
  if (!people.ok()) {
    std::fprintf(stderr, "first batch failed: %s\n", people.status().ToString().c_str());
    return 1;
  }
  quiver::Snapshot before = graph->GetSnapshot();
  ReadFirstVersion(before, *people);

  if (quiver::Status s = RemoveAlan(*graph, *people); !s.ok()) {
    std::fprintf(stderr, "second batch failed: %s\n", s.ToString().c_str());
    return 1;
  }
  ReadSecondVersion(graph->GetSnapshot(), before, *people);

  Expect(graph->Close().ok(), "Close succeeds");
  if (failures != 0) {
    std::fprintf(stderr, "%d unexpected result(s)\n", failures);
    return 1;
  }
  std::printf("all reads matched\n");
  return 0;
}

}  // namespace

int main() { return Run(); }
