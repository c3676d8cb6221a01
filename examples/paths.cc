// Finds the cheapest route between two cities, and who is within two hops.
//
// Builds a small road graph in memory, then on one snapshot:
//   - the fewest-hops route (bidirectional BFS),
//   - the shortest route by the "km" edge property (bidirectional Dijkstra),
//   - every city within two hops of the start (k-hop expansion).
// Uses only the public API; exits non-zero if anything fails.
#include <cstdio>
#include <string>
#include <vector>

#include "quiver/quiver.h"
#include "quiver/traversal.h"

namespace {

int Fail(const quiver::Status& s) {
  std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
  return 1;
}

void PrintPath(const quiver::Snapshot& snap, const char* what, const quiver::Path& path) {
  std::printf("%s (cost %g):", what, path.cost);
  for (quiver::VertexId v : path.vertices) {
    std::optional<quiver::PropertyView> name = snap.GetProperty(v, "name");
    std::printf(" %s", name ? std::string(name->as_string().value_or("?")).c_str() : "?");
  }
  std::printf("\n");
}

}  // namespace

int main() {
  auto opened = quiver::Graph::OpenInMemory();
  if (!opened.ok()) return Fail(opened.status());
  std::unique_ptr<quiver::Graph> graph = std::move(opened).value();

  // Roads are one-way edges of type ROAD with a length in km.
  quiver::WriteBatch batch;
  const char* names[] = {"Aachen", "Bonn", "Cologne", "Dortmund", "Essen"};
  std::vector<quiver::NewVertex> city;
  for (const char* n : names) city.push_back(batch.AddVertex("City", {{"name", n}}));
  auto road = [&](int a, int b, double km) { batch.AddEdge("ROAD", city[a], city[b], {{"km", km}}); };
  road(0, 2, 70);  // Aachen -> Cologne
  road(2, 3, 95);  // Cologne -> Dortmund
  road(0, 1, 90);  // Aachen -> Bonn
  road(1, 4, 40);  // Bonn -> Essen
  road(4, 3, 35);  // Essen -> Dortmund
  road(2, 4, 10);  // Cologne -> Essen
  auto committed = graph->Write(std::move(batch));
  if (!committed.ok()) return Fail(committed.status());
  const quiver::VertexId aachen = committed->vertices[0], dortmund = committed->vertices[3];

  quiver::Snapshot snap = graph->GetSnapshot();
  quiver::TraversalContext ctx;  // reuse it: repeated queries allocate nothing
  quiver::Path path;
  bool found = false;

  quiver::PathSpec hops;
  hops.edge_types = {"ROAD"};
  quiver::Status s = quiver::ShortestPath(snap, aachen, dortmund, hops, ctx, &path, &found);
  if (!s.ok()) return Fail(s);
  if (!found || path.cost != 2) return Fail(quiver::InternalError("expected a two-hop route"));
  PrintPath(snap, "fewest hops", path);

  quiver::PathSpec km = hops;
  km.weight_key = "km";
  s = quiver::ShortestPath(snap, aachen, dortmund, km, ctx, &path, &found);
  if (!s.ok()) return Fail(s);
  if (!found || path.cost != 115) return Fail(quiver::InternalError("expected the 115 km route"));
  PrintPath(snap, "shortest by km", path);

  quiver::ExpandSpec near;
  near.seeds = {aachen};
  near.max_depth = 2;
  std::vector<quiver::Visit> visits;
  s = quiver::Expand(snap, near, ctx, &visits);
  if (!s.ok()) return Fail(s);
  std::printf("within two hops of Aachen: %zu cities\n", visits.size());
  return visits.size() == 4 ? 0 : Fail(quiver::InternalError("expected four cities within two hops"));
}
