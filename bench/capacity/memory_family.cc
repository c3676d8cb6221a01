// memory: the bytes a bare vertex and an edge cost, and what a whole graph retains.
//
// Per shape, in a fresh volatile graph: a reading before anything is added (so the engine's fixed
// cost is excluded), one after the vertices, one after the edges. A reading is
// Graph::GetMemoryStats().allocated_bytes (the allocator's usable block sizes, bin rounding and
// the adjacency arrays' spare capacity included, blocks retired and not yet freed included) and,
// beside it, the process's resident set (/proc/self/statm):
//   bytesPerVertex = (after vertices - before) / V
//   bytesPerEdge   = (after edges - after vertices) / E   (edge slot and both adjacency entries)
//   retainedBytes  = after edges - before
// The resident-set deltas are a cross-check only: the allocator reuses memory freed by earlier
// shapes, so a delta can be small or negative (then it is reported as not measured, with why).
// The efficiency ratio compares with a floor computed, not measured: a raw CSR in both directions
// with 8-byte offsets and entries holding an 8-byte neighbour id and an 8-byte edge id
// (16 B per vertex, 32 B per edge).
#include <string>

#include "families.h"
#include "timing.h"

namespace quiver::capacity {
namespace {

constexpr double kFloorBytesPerVertex = 16;
constexpr double kFloorBytesPerEdge = 32;

struct Reading {
  double allocated = 0;
  double retired = 0;
  double resident = 0;
};

Reading Read(const Graph& graph) {
  const MemoryStats m = graph.GetMemoryStats();
  return {static_cast<double>(m.allocated_bytes), static_cast<double>(m.retired_bytes),
          static_cast<double>(ResidentBytes())};
}

constexpr const char* kRssReuse =
    "the resident set did not grow: the allocator reused memory that earlier shapes freed";

Json MemoryRow(const Shape& shape, const Reading& base, const Reading& after_v, const Reading& after_e,
               const BuiltGraph& built) {
  const auto v = static_cast<double>(shape.vertices);
  const auto e = static_cast<double>(shape.edges());
  Json row;
  row["shape"] = shape.ToJson();
  row["bytesPerVertex"] = Positive((after_v.allocated - base.allocated) / v, "no allocation was counted");
  row["bytesPerEdge"] = Positive((after_e.allocated - after_v.allocated) / e, "no allocation was counted");
  row["retainedBytes"] = Positive(after_e.allocated - base.allocated, "no allocation was counted");
  row["retiredBytesAtReading"] = after_e.retired;
  Json rss;
  rss["bytesPerVertex"] = Positive((after_v.resident - base.resident) / v, kRssReuse);
  rss["bytesPerEdge"] = Positive((after_e.resident - after_v.resident) / e, kRssReuse);
  rss["retainedBytes"] = Positive(after_e.resident - base.resident, kRssReuse);
  row["residentSet"] = rss;
  row["buildVerticesPerSecond"] = Positive(v / built.vertex_seconds, "no time elapsed");
  row["buildEdgesPerSecond"] = Positive(e / built.edge_seconds, "no time elapsed");
  row["efficiency"] =
      Efficiency(row["bytesPerEdge"], kFloorBytesPerEdge, "/ceilings/memoryFloor/bytesPerEdge",
                 "memoryFloor.bytesPerEdge / bytesPerEdge", RatioKind::kCeilingOverFigure);
  row["vertexEfficiency"] =
      Efficiency(row["bytesPerVertex"], kFloorBytesPerVertex, "/ceilings/memoryFloor/bytesPerVertex",
                 "memoryFloor.bytesPerVertex / bytesPerVertex", RatioKind::kCeilingOverFigure);
  return row;
}

bool TraversalWants(const Context& ctx, const Shape& shape) {
  if (!ctx.Selected("traversal")) return false;
  for (const Shape& s : ctx.profile.traversal)
    if (s == shape) return true;
  return false;
}

}  // namespace

Json MemoryFloor() {
  Json j;
  j["bytesPerVertex"] = kFloorBytesPerVertex;
  j["bytesPerEdge"] = kFloorBytesPerEdge;
  j["definition"] =
      "computed, not measured: a raw CSR in both directions, 8-byte offsets per vertex and direction, "
      "entries of an "
      "8-byte neighbour id and an 8-byte edge id";
  return j;
}

void PlanMemory(Context& ctx) {
  for (const Shape& s : ctx.profile.memory)
    ctx.progress.Plan("memory", s.label(), EstimateBuildSeconds(s.vertices, s.edges()));
}

Json RunMemory(Context& ctx) {
  Json rows = Json::array();
  for (const Shape& shape : ctx.profile.memory) {
    ctx.progress.Start("memory", shape.label());
    BuiltGraph built;
    built.graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory");
    const Reading base = Read(*built.graph);
    std::uint64_t t0 = NowNs();
    built.first = AddVertices(*built.graph, shape.vertices);
    built.vertex_seconds = SecondsSince(t0);
    const Reading after_v = Read(*built.graph);
    ctx.progress.Note("vertices added; adding edges");
    t0 = NowNs();
    AddShapeEdges(*built.graph, shape, built.first);
    built.edge_seconds = SecondsSince(t0);
    const Reading after_e = Read(*built.graph);
    rows.push_back(MemoryRow(shape, base, after_v, after_e, built));
    const Json& row = rows.back();
    ctx.progress.Note(row["bytesPerVertex"].dump() + " B/vertex, " + row["bytesPerEdge"].dump() + " B/edge");
    if (TraversalWants(ctx, shape)) ctx.shared.emplace_back(shape, std::move(built));
  }
  ctx.progress.Done();
  return rows;
}

}  // namespace quiver::capacity
