// Uses an installed Quiver through its public API only: opens a volatile
// graph, commits one batch, reads it back through a snapshot. Exits 0 only if
// everything it read is what it wrote.
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "quiver/quiver.h"

namespace {

int Fail(const char* what) {
  std::fprintf(stderr, "package test: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  quiver::Result<std::unique_ptr<quiver::Graph>> opened = quiver::Graph::OpenInMemory();
  if (!opened.ok()) return Fail(opened.status().ToString().c_str());
  std::unique_ptr<quiver::Graph> graph = std::move(opened).value();

  quiver::WriteBatch batch;
  quiver::NewVertex a = batch.AddVertex("City", {{"name", "Aachen"}});
  quiver::NewVertex b = batch.AddVertex("City", {{"name", "Bonn"}});
  batch.AddEdge("ROAD", a, b, {{"km", 91}});
  quiver::Result<quiver::CommitInfo> committed = graph->Write(std::move(batch));
  if (!committed.ok()) return Fail(committed.status().ToString().c_str());
  if (committed->vertices.size() != 2 || committed->edges.size() != 1) return Fail("wrong ids in CommitInfo");

  quiver::Snapshot snap = graph->GetSnapshot();
  if (snap.sequence() < committed->sequence) return Fail("snapshot older than the commit");
  if (snap.vertex_count() != 2 || snap.edge_count() != 1) return Fail("wrong element counts");

  const quiver::VertexId aachen = committed->vertices[0];
  const quiver::VertexId bonn = committed->vertices[1];
  std::optional<quiver::EdgeTypeId> road = snap.FindEdgeType("ROAD");
  if (!road) return Fail("edge type ROAD not found");
  std::span<const quiver::EdgeEntry> out = snap.OutEdges(aachen, *road);
  if (out.size() != 1 || out[0].neighbor() != bonn || out[0].edge() != committed->edges[0]) {
    return Fail("wrong adjacency");
  }
  std::optional<quiver::PropertyView> name = snap.GetProperty(bonn, "name");
  if (!name || name->type() != quiver::ValueType::kString || name->as_string() != "Bonn") {
    return Fail("wrong vertex property");
  }
  std::optional<quiver::PropertyView> km = snap.GetProperty(committed->edges[0], "km");
  if (!km || km->type() != quiver::ValueType::kInt64 || km->as_int64() != 91) {
    return Fail("wrong edge property");
  }

  if (quiver::Status closed = graph->Close(); !closed.ok()) return Fail(closed.ToString().c_str());
  std::puts("package test: ok");
  return 0;
}
