// Ranks the pages of a tiny web and keeps the ranks in the graph.
//
// Builds a small link graph in memory, then:
//   - finds the fewest-clicks route between two pages (bidirectional BFS on a snapshot),
//   - projects the links into an immutable CSR and runs PageRank on it (10 iterations),
//   - writes each page's rank back as the vertex property "rank" (one batched write helper),
//   - reads one rank back from a fresh snapshot, as any later query would.
// Uses only the public API; exits non-zero if anything fails.
#include <cstdio>
#include <string>
#include <vector>

#include "quiver/analytics.h"
#include "quiver/quiver.h"
#include "quiver/traversal.h"

namespace {

int Fail(const quiver::Status& s) {
  std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
  return 1;
}

std::string NameOf(const quiver::Snapshot& snap, quiver::VertexId v) {
  std::optional<quiver::PropertyView> name = snap.GetProperty(v, "name");
  return name ? std::string(name->as_string().value_or("?")) : "?";
}

}  // namespace

int main() {
  auto opened = quiver::Graph::OpenInMemory();
  if (!opened.ok()) return Fail(opened.status());
  std::unique_ptr<quiver::Graph> graph = std::move(opened).value();

  // Pages link to pages: edges of type LINKS.
  quiver::WriteBatch batch;
  const char* names[] = {"home", "about", "blog", "post-1", "post-2", "contact"};
  std::vector<quiver::NewVertex> page;
  for (const char* n : names) page.push_back(batch.AddVertex("Page", {{"name", n}}));
  auto link = [&](int a, int b) { batch.AddEdge("LINKS", page[a], page[b]); };
  link(0, 1);  // home -> about
  link(0, 2);  // home -> blog
  link(2, 3);  // blog -> post-1
  link(2, 4);  // blog -> post-2
  link(3, 4);  // post-1 -> post-2
  link(4, 0);  // post-2 -> home
  link(1, 5);  // about -> contact
  link(5, 0);  // contact -> home
  auto committed = graph->Write(std::move(batch));
  if (!committed.ok()) return Fail(committed.status());
  const quiver::VertexId home = committed->vertices[0], post2 = committed->vertices[4];

  quiver::Snapshot snap = graph->GetSnapshot();

  // The fewest clicks from home to post-2.
  quiver::TraversalContext ctx;
  quiver::Path path;
  bool found = false;
  quiver::PathSpec links;
  links.edge_types = {"LINKS"};
  quiver::Status s = quiver::ShortestPath(snap, home, post2, links, ctx, &path, &found);
  if (!s.ok()) return Fail(s);
  if (!found) return Fail(quiver::InternalError("no route from home to post-2"));
  std::printf("fewest clicks (%g):", path.cost);
  for (quiver::VertexId v : path.vertices) std::printf(" %s", NameOf(snap, v).c_str());
  std::printf("\n");

  // PageRank on a projection of the LINKS edges. The projection owns its arrays: the snapshot can
  // go once it is built.
  auto projection = quiver::Project(snap, {.edge_types = {"LINKS"}});
  if (!projection.ok()) return Fail(projection.status());
  snap = quiver::Snapshot();
  auto rank = quiver::PageRank(*projection, {.iterations = 10});
  if (!rank.ok()) return Fail(rank.status());

  // Ranks back into the graph, as the property "rank" of every projected page.
  auto written = quiver::WriteVertexProperty(*graph, *projection, "rank", *rank);
  if (!written.ok()) return Fail(written.status());
  std::printf("wrote %llu ranks\n", static_cast<unsigned long long>(*written));

  // Any later snapshot sees them.
  snap = graph->GetSnapshot();
  for (std::uint32_t i = 0; i < projection->vertex_count(); ++i) {
    const quiver::VertexId v = projection->ToVertexId(i);
    std::optional<quiver::PropertyView> r = snap.GetProperty(v, "rank");
    if (!r || !r->as_double()) return Fail(quiver::InternalError("a rank was not written back"));
    std::printf("  %-8s %.4f\n", NameOf(snap, v).c_str(), *r->as_double());
  }
  std::optional<quiver::PropertyView> home_rank = snap.GetProperty(home, "rank");
  if (!home_rank || *home_rank->as_double() != (*rank)[*projection->ToDense(home)])
    return Fail(quiver::InternalError("the rank read back differs from the one computed"));
  return 0;
}
