// quiver-endpoint-probe: what the edge-endpoint constraint (IndexKind::kUniqueEndpoints) costs
// AddEdge, and what the design it was chosen over (scanning the source's adjacency group of the
// type for the target, per added edge) would cost at a hub.
//
//   quiver-endpoint-probe
//
// Two loads into an in-memory graph of 200,000 vertices, in batches of 1,000 AddEdge (one
// Write each): "random", about 1M distinct random pairs; "hub", vertex 0 to every other vertex.
// Each load runs three times in three configurations: no index on the type (the ceiling), a
// unique index on a property the edges never hold (the batch validation's per-edge work alone),
// and the constraint. Medians of the three runs, and their ratios. After the hub load without
// the constraint, one scan of the hub's group for an absent target is timed (200 scans): the
// check the scan design would make for each edge added from the hub at that degree.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "quiver/quiver.h"

namespace {

using quiver::EdgeId;
using quiver::ElementKind;
using quiver::IndexKind;
using quiver::VertexId;
using quiver::WriteBatch;
using Clock = std::chrono::steady_clock;
using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

enum class Config { kNone, kOtherIndex, kConstraint };

// Loads `pairs` as KNOWS edges; returns the seconds the adds took. With `scan_ns`, also times
// one scan of vertex 0's KNOWS group afterwards.
double Load(Config config, const Pairs& pairs, std::uint64_t vertices, double* scan_ns) {
  auto g = quiver::Graph::OpenInMemory().value();
  WriteBatch v;
  for (std::uint64_t i = 0; i < vertices; ++i) v.AddVertex("P");
  if (!g->Write(std::move(v)).ok()) std::abort();
  WriteBatch t;  // the type exists before the index names it
  t.AddEdge("KNOWS", VertexId(0), VertexId(0));
  if (!g->Write(std::move(t)).ok()) std::abort();
  WriteBatch r;
  r.RemoveEdge(EdgeId(0));
  if (!g->Write(std::move(r)).ok()) std::abort();
  if (config == Config::kConstraint && !g->CreateIndex({.name = "k",
                                                        .element = ElementKind::kEdge,
                                                        .label = "KNOWS",
                                                        .kind = IndexKind::kUniqueEndpoints})
                                            .ok())
    std::abort();
  if (config == Config::kOtherIndex && !g->CreateIndex({.name = "k",
                                                        .element = ElementKind::kEdge,
                                                        .label = "KNOWS",
                                                        .keys = {"absent"},
                                                        .kind = IndexKind::kUnique})
                                            .ok())
    std::abort();
  const auto start = Clock::now();
  for (std::size_t i = 0; i < pairs.size(); i += 1000) {
    WriteBatch b;
    for (std::size_t j = i; j < std::min(pairs.size(), i + 1000); ++j)
      b.AddEdge("KNOWS", VertexId(pairs[j].first), VertexId(pairs[j].second));
    if (!g->Write(std::move(b)).ok()) std::abort();
  }
  const double seconds = Seconds(start);
  if (scan_ns != nullptr) {
    quiver::Snapshot snap = g->GetSnapshot();
    const quiver::EdgeTypeId knows = *snap.FindEdgeType("KNOWS");
    constexpr int kScans = 200;
    std::uint64_t hits = 0;
    const auto scan_start = Clock::now();
    for (int s = 0; s < kScans; ++s)
      for (const quiver::EdgeEntry& e : snap.OutEdges(VertexId(0), knows))
        hits += e.neighbor().value() == vertices;
    *scan_ns = Seconds(scan_start) * 1e9 / kScans;
    if (hits != 0) std::abort();  // the target is absent
  }
  return seconds;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  constexpr std::uint64_t kVertices = 200000, kRandomEdges = 1000000;
  std::mt19937_64 rng(7);
  Pairs random, hub;
  for (std::uint64_t i = 0; i < kRandomEdges; ++i) random.emplace_back(rng() % kVertices, rng() % kVertices);
  std::sort(random.begin(), random.end());
  random.erase(std::unique(random.begin(), random.end()), random.end());
  std::shuffle(random.begin(), random.end(), rng);
  for (std::uint64_t t = 1; t < kVertices; ++t) hub.emplace_back(0, t);
  for (const auto& [name, pairs] : {std::pair<std::string, const Pairs*>{"random", &random}, {"hub", &hub}}) {
    std::vector<double> none, other, constraint, scan;
    for (int run = 0; run < 3; ++run) {
      double ns = 0;
      none.push_back(Load(Config::kNone, *pairs, kVertices, name == "hub" ? &ns : nullptr));
      other.push_back(Load(Config::kOtherIndex, *pairs, kVertices, nullptr));
      constraint.push_back(Load(Config::kConstraint, *pairs, kVertices, nullptr));
      scan.push_back(ns);
    }
    const double n = static_cast<double>(pairs->size());
    std::printf(
        "%s: %zu edges; no index %.3f s (%.0f ns/edge), unique index they never enter %.3f s (x%.2f), "
        "constraint %.3f s (%.0f ns/edge, x%.2f of no index, x%.2f of the other index)\n",
        name.c_str(), pairs->size(), Median(none), Median(none) * 1e9 / n, Median(other),
        Median(other) / Median(none), Median(constraint), Median(constraint) * 1e9 / n,
        Median(constraint) / Median(none), Median(constraint) / Median(other));
    if (name == "hub")
      std::printf("hub: one scan of the hub's group at degree %zu: %.0f ns\n", pairs->size(), Median(scan));
  }
  return 0;
}
