// Projections and kernels checked against trivially correct reference
// implementations written here, on random multigraphs: two labels, two edge
// types, self-loops, parallel edges, zero and integer weights, isolated
// vertices, several components, and a prefix of removed vertices plus
// scattered removals so ids have holes and start far from 0. Each random case
// picks a spec (labels, types, directed or undirected, self-loop and
// parallel-edge rules), builds the reference multigraph from the snapshot's
// public edge list, and compares the projection entry by entry and every
// kernel's output; integer outputs exactly, floating ones within 1e-9
// relative (the reference sums in another order). Then thread-count
// determinism, cancellation, progress, write-back and every bad input.
#include "quiver/analytics.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <initializer_list>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "alloc_hook.h"
#include "analytics/delta_stepping.h"
#include "analytics_oom_util.h"
#include "base/memory.h"
#include "gtest/gtest.h"
#include "quiver/graph.h"

namespace quiver {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A random graph in a Quiver graph.
std::unique_ptr<Graph> RandomGraph(std::mt19937_64& rng, int vertices, int edges) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch pre;  // a block of vertices removed at once: live ids start far from 0
  const int prefix = static_cast<int>(rng() % 3000);
  for (int i = 0; i < prefix; ++i) pre.AddVertex("A");
  CommitInfo pre_info = graph->Write(std::move(pre)).value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < vertices; ++i) vs.push_back(b.AddVertex(rng() % 3 ? "A" : "B"));
  for (int i = 0; i < edges; ++i) {
    const int s = static_cast<int>(rng() % vertices);
    // Mostly within a window, so the graph has several components and isolated vertices.
    int d = static_cast<int>((s + rng() % 6) % vertices);
    if (rng() % 10 == 0) d = s;  // self-loops
    std::vector<Property> props;
    const int w = static_cast<int>(rng() % 4);
    if (w == 1) props.push_back({"w", std::int64_t(rng() % 5)});  // zero weights included
    if (w >= 2) props.push_back({"w", static_cast<double>(rng() % 1000) / 100.0});
    if (w == 0) props.push_back({"w", 1.5});
    const NewEdge e = b.AddEdge(rng() % 4 ? "T" : "U", vs[s], vs[d], props);
    if (rng() % 8 == 0) b.AddEdge(rng() % 4 ? "T" : "U", vs[s], vs[d], props);  // a parallel edge
    (void)e;
  }
  CommitInfo info = graph->Write(std::move(b)).value();
  WriteBatch removal;
  for (VertexId v : pre_info.vertices) removal.RemoveVertex(v);
  for (VertexId v : info.vertices)
    if (rng() % 12 == 0) removal.RemoveVertex(v);
  if (!removal.empty()) {
    EXPECT_TRUE(graph->Write(std::move(removal)).ok());
  }
  return graph;
}

// The reference multigraph: what the spec says the projection holds, built
// from the snapshot's public edge list with maps and plain loops.
struct Model {
  std::vector<VertexId> ids;                                                       // ascending
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, double>>> out, in;  // by VertexId
};

Model BuildModel(const Snapshot& snap, const ProjectionSpec& spec) {
  Model m;
  std::set<std::uint64_t> keep;
  for (VertexId v : snap.Vertices()) {
    const std::string_view label = snap.LabelName(*snap.LabelOf(v));
    if (!spec.vertex_labels.empty() &&
        std::find(spec.vertex_labels.begin(), spec.vertex_labels.end(), label) == spec.vertex_labels.end())
      continue;
    keep.insert(v.value());
    m.ids.push_back(v);
    m.out[v.value()];
    m.in[v.value()];
  }
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<double>> arcs;
  for (EdgeId e : snap.Edges()) {
    const EdgeInfo info = *snap.GetEdge(e);
    const std::string_view type = snap.EdgeTypeName(info.type);
    if (!spec.edge_types.empty() &&
        std::find(spec.edge_types.begin(), spec.edge_types.end(), type) == spec.edge_types.end())
      continue;
    const std::uint64_t s = info.source.value(), t = info.target.value();
    if (!keep.count(s) || !keep.count(t)) continue;
    if (s == t && spec.self_loops == SelfLoops::kDrop) continue;
    double w = 0;
    if (!spec.weight_property.empty()) {
      const PropertyView v = *snap.GetProperty(e, spec.weight_property);
      w = v.type() == ValueType::kInt64 ? static_cast<double>(*v.as_int64()) : *v.as_double();
    }
    arcs[{s, t}].push_back(w);
    if (spec.undirected && s != t) arcs[{t, s}].push_back(w);
  }
  for (auto& [pair, ws] : arcs) {
    std::sort(ws.begin(), ws.end());
    if (spec.parallel_edges == ParallelEdges::kDrop) ws.resize(1);
    if (spec.parallel_edges == ParallelEdges::kMerge) {
      double sum = 0;
      for (double w : ws) sum += w;
      ws = {sum};
    }
    for (double w : ws) {
      m.out[pair.first].push_back({pair.second, w});
      if (!spec.undirected) m.in[pair.second].push_back({pair.first, w});
    }
  }
  if (spec.undirected) m.in = m.out;
  for (auto* side : {&m.out, &m.in})
    for (auto& [v, list] : *side) std::sort(list.begin(), list.end());
  return m;
}

void ExpectNear(double got, double want, const std::string& what) {
  if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what;
  } else {
    EXPECT_LE(std::fabs(got - want), 1e-9 * std::max(1.0, std::fabs(want)))
        << what << ": " << got << " vs " << want;
  }
}

// --- Reference kernels (on the model, by VertexId) ---------------------------

std::map<std::uint64_t, std::int64_t> RefBfs(const Model& m, std::uint64_t s) {
  std::map<std::uint64_t, std::int64_t> d;
  for (VertexId v : m.ids) d[v.value()] = kUnreachableDepth;
  std::deque<std::uint64_t> q{s};
  d[s] = 0;
  while (!q.empty()) {
    const std::uint64_t v = q.front();
    q.pop_front();
    for (auto [u, w] : m.out.at(v))
      if (d[u] == kUnreachableDepth) d[u] = d[v] + 1, q.push_back(u);
  }
  return d;
}

std::map<std::uint64_t, double> RefPageRank(const Model& m, int iterations, double damping,
                                            const std::map<std::uint64_t, double>* teleport) {
  const double n = static_cast<double>(m.ids.size());
  std::map<std::uint64_t, double> r;
  for (VertexId v : m.ids) r[v.value()] = teleport ? teleport->at(v.value()) : 1.0 / n;
  for (int it = 0; it < iterations; ++it) {
    double sink = 0;
    std::map<std::uint64_t, double> next;
    for (VertexId v : m.ids) {
      next[v.value()] = 0;
      if (m.out.at(v.value()).empty()) sink += r[v.value()];
    }
    for (VertexId v : m.ids)  // push: another summation order than the kernel's pull
      for (auto [u, w] : m.out.at(v.value()))
        next[u] += damping * r[v.value()] / static_cast<double>(m.out.at(v.value()).size());
    for (VertexId v : m.ids) {
      const double share = teleport ? teleport->at(v.value()) : 1.0 / n;
      next[v.value()] += ((1 - damping) + damping * sink) * share;
    }
    r = next;
  }
  return r;
}

std::map<std::uint64_t, std::uint64_t> RefWcc(const Model& m) {
  std::map<std::uint64_t, std::uint64_t> comp;
  for (VertexId start : m.ids) {  // ascending: the first vertex met labels its component
    if (comp.count(start.value())) continue;
    std::deque<std::uint64_t> q{start.value()};
    comp[start.value()] = start.value();
    while (!q.empty()) {
      const std::uint64_t v = q.front();
      q.pop_front();
      for (const auto* side : {&m.out, &m.in})
        for (auto [u, w] : side->at(v))
          if (!comp.count(u)) comp[u] = start.value(), q.push_back(u);
    }
  }
  return comp;
}

std::map<std::uint64_t, std::uint64_t> RefCdlp(const Model& m, bool undirected, int iterations) {
  std::map<std::uint64_t, std::uint64_t> label;
  for (VertexId v : m.ids) label[v.value()] = v.value();
  for (int it = 0; it < iterations; ++it) {
    std::map<std::uint64_t, std::uint64_t> next;
    for (VertexId v : m.ids) {
      std::map<std::uint64_t, int> freq;
      for (auto [u, w] : m.out.at(v.value())) ++freq[label[u]];
      if (!undirected)
        for (auto [u, w] : m.in.at(v.value())) ++freq[label[u]];
      std::uint64_t best = label[v.value()];
      int best_count = 0;
      for (auto [l, c] : freq)
        if (c > best_count) best = l, best_count = c;
      next[v.value()] = best;
    }
    label = next;
  }
  return label;
}

std::set<std::uint64_t> SimpleNeighbours(const Model& m, std::uint64_t v) {
  std::set<std::uint64_t> n;
  for (const auto* side : {&m.out, &m.in})
    for (auto [u, w] : side->at(v))
      if (u != v) n.insert(u);
  return n;
}

std::map<std::uint64_t, double> RefLcc(const Model& m) {
  std::map<std::uint64_t, double> lcc;
  for (VertexId vid : m.ids) {
    const std::set<std::uint64_t> n = SimpleNeighbours(m, vid.value());
    double links = 0;
    for (std::uint64_t u : n) {
      std::set<std::uint64_t> targets;
      for (auto [x, w] : m.out.at(u)) targets.insert(x);
      for (std::uint64_t x : targets)
        if (x != u && n.count(x)) ++links;
    }
    const double d = static_cast<double>(n.size());
    lcc[vid.value()] = n.size() < 2 ? 0.0 : links / (d * (d - 1));
  }
  return lcc;
}

std::map<std::uint64_t, double> RefSssp(const Model& m, std::uint64_t s) {  // Bellman-Ford
  std::map<std::uint64_t, double> d;
  for (VertexId v : m.ids) d[v.value()] = kInf;
  d[s] = 0;
  for (std::size_t round = 0; round < m.ids.size(); ++round) {
    bool changed = false;
    for (const auto& [v, list] : m.out)
      for (auto [u, w] : list)
        if (d[v] + w < d[u]) d[u] = d[v] + w, changed = true;
    if (!changed) break;
  }
  return d;
}

std::uint64_t RefTriangles(const Model& m) {
  std::uint64_t count = 0;
  for (VertexId a : m.ids) {
    const auto na = SimpleNeighbours(m, a.value());
    for (std::uint64_t b : na) {
      if (b <= a.value()) continue;
      const auto nb = SimpleNeighbours(m, b);
      for (std::uint64_t c : nb)
        if (c > b && na.count(c)) ++count;
    }
  }
  return count;
}

std::map<std::uint64_t, std::uint32_t> RefCores(const Model& m) {
  std::map<std::uint64_t, std::uint32_t> core;
  std::map<std::uint64_t, std::set<std::uint64_t>> adj;
  for (VertexId v : m.ids) adj[v.value()] = SimpleNeighbours(m, v.value()), core[v.value()] = 0;
  for (std::uint32_t k = 1;; ++k) {  // the k-core: repeatedly drop vertices of degree < k
    bool removed = true;
    while (removed) {
      removed = false;
      for (auto it = adj.begin(); it != adj.end();) {
        if (it->second.size() < k) {
          for (std::uint64_t u : it->second) adj[u].erase(it->first);
          it = adj.erase(it);
          removed = true;
        } else {
          ++it;
        }
      }
    }
    if (adj.empty()) return core;
    for (const auto& [v, n] : adj) core[v] = k;
  }
}

// --- The randomized comparison ------------------------------------------------

ProjectionSpec RandomSpec(std::mt19937_64& rng) {
  ProjectionSpec spec;
  if (rng() % 3 == 0) spec.vertex_labels = {"A"};
  if (rng() % 3 == 0) spec.edge_types = {"T"};
  spec.undirected = rng() % 2 == 0;
  spec.weight_property = "w";
  spec.self_loops = rng() % 2 ? SelfLoops::kKeep : SelfLoops::kDrop;
  spec.parallel_edges = static_cast<ParallelEdges>(rng() % 3);
  spec.threads = static_cast<std::uint32_t>(1 + rng() % 3);
  return spec;
}

void CheckProjection(const Projection& p, const Model& m) {
  ASSERT_EQ(p.vertex_count(), m.ids.size());
  std::uint64_t entries = 0;
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i) {
    const VertexId v = m.ids[i];
    ASSERT_EQ(p.ToVertexId(i), v);
    ASSERT_EQ(p.ToDense(v), i);
    for (bool out : {true, false}) {
      const auto& want = (out ? m.out : m.in).at(v.value());
      auto nbrs = out ? p.OutNeighbors(i) : p.InNeighbors(i);
      auto ws = out ? p.OutWeights(i) : p.InWeights(i);
      ASSERT_EQ(nbrs.size(), want.size()) << v.value();
      for (std::size_t j = 0; j < want.size(); ++j) {
        EXPECT_EQ(p.ToVertexId(nbrs[j]).value(), want[j].first);
        EXPECT_EQ(ws[j], want[j].second);
      }
      if (out) entries += want.size();
    }
  }
  EXPECT_EQ(p.edge_count(), entries);
  EXPECT_FALSE(p.ToDense(VertexId(0)).has_value() && m.ids.front() != VertexId(0));
}

void CheckKernels(const Projection& p, const Model& m, bool undirected, std::mt19937_64& rng) {
  const RunOptions run{.threads = static_cast<std::uint32_t>(1 + rng() % 3)};
  const VertexId src = m.ids[rng() % m.ids.size()];
  auto bfs = Bfs(p, src, run).value();
  auto ref_bfs = RefBfs(m, src.value());
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i) EXPECT_EQ(bfs[i], ref_bfs.at(m.ids[i].value()));

  auto pr = PageRank(p, {.iterations = 7, .damping = 0.85}, run).value();
  auto ref_pr = RefPageRank(m, 7, 0.85, nullptr);
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i) ExpectNear(pr[i], ref_pr.at(m.ids[i].value()), "pr");

  std::vector<std::pair<VertexId, double>> seeds{{src, 2.0}, {m.ids[rng() % m.ids.size()], 1.0}};
  std::map<std::uint64_t, double> teleport;
  for (VertexId v : m.ids) teleport[v.value()] = 0;
  for (auto [v, w] : seeds) teleport[v.value()] += w / 3.0;
  auto ppr = PersonalizedPageRank(p, seeds, {.iterations = 5, .damping = 0.7}, run).value();
  auto ref_ppr = RefPageRank(m, 5, 0.7, &teleport);
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i)
    ExpectNear(ppr[i], ref_ppr.at(m.ids[i].value()), "ppr");

  auto wcc = Wcc(p, run).value();
  auto ref_wcc = RefWcc(m);
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i)
    EXPECT_EQ(wcc[i].value(), ref_wcc.at(m.ids[i].value()));

  auto cdlp = Cdlp(p, 4, run).value();
  auto ref_cdlp = RefCdlp(m, undirected, 4);
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i)
    EXPECT_EQ(cdlp[i].value(), ref_cdlp.at(m.ids[i].value()));

  auto lcc = Lcc(p, run).value();
  auto ref_lcc = RefLcc(m);
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i)
    ExpectNear(lcc[i], ref_lcc.at(m.ids[i].value()), "lcc");

  auto sssp = Sssp(p, src, run).value();
  auto ref_sssp = RefSssp(m, src.value());
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i)
    ExpectNear(sssp[i], ref_sssp.at(m.ids[i].value()), "sssp");

  EXPECT_EQ(TriangleCount(p, run).value(), RefTriangles(m));
  auto cores = CoreNumbers(p, run).value();
  auto ref_cores = RefCores(m);
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i) EXPECT_EQ(cores[i], ref_cores.at(m.ids[i].value()));
}

TEST(AnalyticsTest, RandomGraphsMatchReferenceKernels) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    auto graph = RandomGraph(rng, 20 + static_cast<int>(rng() % 60), static_cast<int>(rng() % 200));
    Snapshot snap = graph->GetSnapshot();
    const ProjectionSpec spec = RandomSpec(rng);
    auto p = Project(snap, spec);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const Model m = BuildModel(snap, spec);
    if (m.ids.empty()) continue;
    CheckProjection(*p, m);
    CheckKernels(*p, m, spec.undirected, rng);
  }
}

// The unweighted build has paths of its own: a copy loop when ids are the
// identity and no loop rule applies, a sorting network per list
// (base/small_sort.h), and in adjacency read from storage's in-arrays rather
// than transposed from the out CSR. Lists from 0 to 40 entries (the networks
// serve up to 16), added in shuffled order so storage holds them unsorted,
// with self-loops and parallel edges; every spec shape on 1 to 3 threads,
// against the model.
TEST(AnalyticsTest, UnweightedProjectionsMatchTheModel) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    auto graph = Graph::OpenInMemory().value();
    WriteBatch vb;
    const int n = 90;
    for (int i = 0; i < n; ++i) vb.AddVertex(rng() % 4 ? "A" : "B");
    const std::vector<VertexId> ids = graph->Write(std::move(vb)).value().vertices;
    std::vector<std::pair<int, int>> arcs;
    for (int s = 0; s < n; ++s) {
      const int degree = (s * 7 + static_cast<int>(seed)) % 41;
      for (int k = 0; k < degree; ++k) {
        int t = static_cast<int>(rng() % n);
        if (rng() % 12 == 0) t = s;  // self-loops
        arcs.push_back({s, t});
        if (rng() % 9 == 0) arcs.push_back({s, t});  // parallel edges
      }
    }
    std::shuffle(arcs.begin(), arcs.end(), rng);
    WriteBatch eb;
    for (const auto& [s, t] : arcs) eb.AddEdge(rng() % 5 ? "T" : "U", ids[s], ids[t]);
    ASSERT_TRUE(graph->Write(std::move(eb)).ok());
    if (seed % 2 == 0) {  // holes: the dense ids are no longer the identity
      WriteBatch removal;
      for (int i = 0; i < n; i += 11) removal.RemoveVertex(ids[i]);
      ASSERT_TRUE(graph->Write(std::move(removal)).ok());
    }
    const Snapshot snap = graph->GetSnapshot();
    for (int round = 0; round < 24; ++round) {
      SCOPED_TRACE(round);
      ProjectionSpec spec = RandomSpec(rng);
      spec.weight_property.clear();
      spec.out = round % 3 != 1;
      spec.in = round % 3 != 0;
      auto p = Project(snap, spec);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      const Model m = BuildModel(snap, spec);
      ASSERT_EQ(p->vertex_count(), m.ids.size());
      std::uint64_t entries = 0;
      for (std::uint32_t i = 0; i < p->vertex_count(); ++i) {
        const VertexId v = m.ids[i];
        for (bool out : {true, false}) {
          const bool built = spec.undirected || (out ? spec.out : spec.in);
          if (!built) continue;
          const auto& want = (out ? m.out : m.in).at(v.value());
          auto nbrs = out ? p->OutNeighbors(i) : p->InNeighbors(i);
          ASSERT_EQ(nbrs.size(), want.size()) << v.value() << (out ? " out" : " in");
          for (std::size_t j = 0; j < want.size(); ++j)
            ASSERT_EQ(p->ToVertexId(nbrs[j]).value(), want[j].first);
          if (out) entries += want.size();
        }
      }
      if (spec.undirected || spec.out) {
        EXPECT_EQ(p->edge_count(), entries);
      }
    }
  }
}

// Lcc of the directed and the undirected projection of `snap`, on each
// thread count, against the reference; returns how many of the values it
// compared exceed 0.2.
std::size_t ExpectLccMatchesReference(const Snapshot& snap,
                                      std::initializer_list<std::uint32_t> thread_counts) {
  std::size_t clustered = 0;
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected);
    const ProjectionSpec spec{.undirected = undirected};
    auto p = Project(snap, spec).value();
    const Model m = BuildModel(snap, spec);
    const auto ref = RefLcc(m);
    for (std::uint32_t threads : thread_counts) {
      SCOPED_TRACE(threads);
      const auto lcc = Lcc(p, {.threads = threads}).value();
      for (std::uint32_t i = 0; i < p.vertex_count(); ++i) {
        ExpectNear(lcc[i], ref.at(m.ids[i].value()), "lcc");
        clustered += lcc[i] > 0.2;
      }
    }
  }
  return clustered;
}

// LCC on hubs of 200-400 neighbours (in and out, parallel edges, both
// directions, self-loops, their neighbours linked among themselves) beside
// ordinary vertices, against the reference, directed and undirected, on one
// and three threads.
TEST(AnalyticsTest, LccOnHubsAndOrdinaryVerticesMatchesTheReference) {
  std::mt19937_64 rng(77);
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 1000; ++i) vs.push_back(b.AddVertex("A"));
  for (int hub : {0, 1, 2, 3}) {
    const int degree = 200 + 60 * hub;  // 200, 260, 320, 380
    for (int k = 0; k < degree; ++k) {
      const int u = 10 + static_cast<int>(rng() % 990);
      if (rng() % 2) {
        b.AddEdge("T", vs[hub], vs[u]);
      } else {
        b.AddEdge("T", vs[u], vs[hub]);
      }
      if (rng() % 5 == 0) b.AddEdge("T", vs[hub], vs[u]);  // parallel, or both directions
    }
  }
  for (int i = 0; i < 6000; ++i) {
    const int s = 10 + static_cast<int>(rng() % 990);
    const int d = rng() % 20 == 0 ? s : 10 + static_cast<int>(rng() % 990);
    b.AddEdge("T", vs[s], vs[d]);
    if (rng() % 8 == 0) b.AddEdge("T", vs[s], vs[d]);
  }
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  ExpectLccMatchesReference(graph->GetSnapshot(), {1u, 3u});
}

// LCC counts each triangle once, at its lowest corner, and adds to the
// other two corners from whichever worker found it. A ring lattice (each
// vertex joined to the next six, in a random direction, sometimes both)
// closes triangles across the 4,096-vertex blocks, so several workers add
// to the same vertices: every thread count must give the reference.
TEST(AnalyticsTest, LccTrianglesAcrossBlocksMatchTheReference) {
  std::mt19937_64 rng(91);
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  constexpr int kLatticeVertices = 3 * 4096 + 500;
  std::vector<NewVertex> vs;
  for (int i = 0; i < kLatticeVertices; ++i) vs.push_back(b.AddVertex("V"));
  for (int i = 0; i < kLatticeVertices; ++i) {
    for (int k = 1; k <= 6; ++k) {
      const int j = (i + k) % kLatticeVertices;
      const std::uint64_t r = rng() % 8;
      if (r < 3) {
        b.AddEdge("E", vs[i], vs[j]);
      } else if (r < 6) {
        b.AddEdge("E", vs[j], vs[i]);
      } else if (r == 6) {
        b.AddEdge("E", vs[i], vs[j]);
        b.AddEdge("E", vs[j], vs[i]);
      }
    }
    if (rng() % 4 == 0) b.AddEdge("E", vs[i], vs[rng() % vs.size()]);
  }
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  const std::size_t clustered = ExpectLccMatchesReference(graph->GetSnapshot(), {1u, 2u, 3u});
  EXPECT_GT(clustered, 2u * 3u * kLatticeVertices / 2);  // the lattice really is full of triangles
}

// Without in adjacency BFS cannot go bottom-up and WCC cannot skip the giant
// component's edges; the answers must not change.
TEST(AnalyticsTest, BfsAndWccWithoutInAdjacencyAgree) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    auto graph = RandomGraph(rng, 20 + static_cast<int>(rng() % 60), static_cast<int>(rng() % 300));
    Snapshot snap = graph->GetSnapshot();
    const RunOptions run{.threads = static_cast<std::uint32_t>(1 + rng() % 3)};
    auto both = Project(snap, {.threads = 2}).value();
    auto out_only = Project(snap, {.in = false, .threads = 2}).value();
    ASSERT_TRUE(both.has_in());
    ASSERT_FALSE(out_only.has_in());
    if (both.vertex_count() == 0) continue;
    EXPECT_TRUE(Wcc(both, run).value() == Wcc(out_only, run).value());
    for (int i = 0; i < 4; ++i) {
      const VertexId src = both.ToVertexId(static_cast<std::uint32_t>(rng() % both.vertex_count()));
      EXPECT_TRUE(Bfs(both, src, run).value() == Bfs(out_only, src, run).value());
    }
  }
}

// Dijkstra on the projection's own arrays: the answer Sssp must give to the bit.
std::vector<double> DijkstraOn(const Projection& p, std::uint32_t s) {
  std::vector<double> dist(p.vertex_count(), kInf);
  using Item = std::pair<double, std::uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  dist[s] = 0;
  heap.push({0.0, s});
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d > dist[v]) continue;
    for (std::size_t i = 0; i < p.OutNeighbors(v).size(); ++i) {
      const double nd = d + p.OutWeights(v)[i];
      const std::uint32_t w = p.OutNeighbors(v)[i];
      if (nd < dist[w]) dist[w] = nd, heap.push({nd, w});
    }
  }
  return dist;
}

// A graph for delta-stepping's bins: 20,000 edges of weights from 0 to 1
// over three orders of magnitude; a chain of 600 edges of weight 5, entered
// only from vertex 0; and 5 edges from vertex 0 of weights 1,000 .. 5,000,
// each followed by one more edge.
// The bin width (the mean weight over the mean out-degree) comes to about
// 0.18, so the window of 4,096 bins spans about 740: the chain and the far
// edges run past it, entries wait in the overflow, and the window moves.
std::unique_ptr<Graph> SpreadWeightGraph(std::mt19937_64& rng) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 3610; ++i) vs.push_back(b.AddVertex("V"));
  for (int i = 0; i < 20000; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    double w = 0;  // kind 5 and 6: zero
    if (kind < 5) w = static_cast<double>(rng() % 1000) / 1e6;
    if (kind >= 7) w = static_cast<double>(rng() % 1000) / 1e3;
    b.AddEdge("E", vs[rng() % 3000], vs[rng() % 3000], {{"w", w}});
  }
  b.AddEdge("E", vs[0], vs[3000], {{"w", 1.0}});
  // Straight from vertex 0 to distances 200..3140: one expansion fills the
  // overflow with entries of many windows at once.
  for (int k = 0; k < 5; ++k) {
    b.AddEdge("E", vs[0], vs[3600 + k], {{"w", 1000.0 * (k + 1)}});
    b.AddEdge("E", vs[3600 + k], vs[3605 + k], {{"w", 1.0}});  // reached only once that is expanded
  }
  for (int i = 3000; i + 1 < 3600; ++i) {
    b.AddEdge("E", vs[i], vs[i + 1], {{"w", 5.0 + static_cast<double>(i % 7) * 1e-3}});
    if (i % 50 == 0) b.AddEdge("E", vs[i], vs[rng() % 3000], {{"w", 0.5}});  // back into the rest
  }
  EXPECT_TRUE(graph->Write(std::move(b)).ok());
  return graph;
}

TEST(AnalyticsTest, SsspIsDijkstraToTheBitOnEveryThreadCount) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    auto graph = SpreadWeightGraph(rng);
    Snapshot snap = graph->GetSnapshot();
    auto p = Project(snap, {.in = false, .weight_property = "w", .threads = 2}).value();
    for (const std::uint32_t src : {0u, static_cast<std::uint32_t>(rng() % 3000)}) {
      const std::vector<double> want = DijkstraOn(p, src);
      if (src == 0) {
        EXPECT_GT(want[3599], 2990.0);  // the chain's end
        EXPECT_EQ(want[3609], 5001.0);  // past the farthest edge from 0
      }
      for (std::uint32_t t : {1u, 2u, 3u, 8u})
        EXPECT_TRUE(Sssp(p, p.ToVertexId(src), {.threads = t}).value() == want) << t;
    }
  }
}

TEST(AnalyticsTest, OutOfMemoryIsAStatusOrTheExactAnswer) {
  std::mt19937_64 rng(5);
  auto graph = SpreadWeightGraph(rng);
  Snapshot snap = graph->GetSnapshot();
  auto p = Project(snap, {.weight_property = "w", .threads = 1}).value();
  const VertexId src = p.ToVertexId(0);
  test_util::ExpectOutOfMemoryIsAStatusOrTheAnswer(DijkstraOn(p, 0),
                                                   [&](const RunOptions& run) { return Sssp(p, src, run); });
  test_util::ExpectOutOfMemoryIsAStatusOrTheAnswer(Bfs(p, src).value(),
                                                   [&](const RunOptions& run) { return Bfs(p, src, run); });
  test_util::ExpectOutOfMemoryIsAStatusOrTheAnswer(Wcc(p).value(),
                                                   [&](const RunOptions& run) { return Wcc(p, run); });
  test_util::ExpectOutOfMemoryIsAStatusOrTheAnswer(Lcc(p).value(),
                                                   [&](const RunOptions& run) { return Lcc(p, run); });
}

// Review findings: a distance past 2^62 bin widths, and weights the bin
// width's sample never sees, ended in a loop that never returned; a window
// move rescanned every waiting entry (quadratic); a long path of small bins
// took a barrier round per bin; and `stop` was polled once a round only.
std::unique_ptr<Graph> WeightedGraph(const std::vector<std::tuple<int, int, double>>& edges, int vertices) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < vertices; ++i) vs.push_back(b.AddVertex("V"));
  for (auto [from, to, w] : edges) b.AddEdge("E", vs[from], vs[to], {{"w", w}});
  EXPECT_TRUE(graph->Write(std::move(b)).ok());
  return graph;
}

analytics::DeltaSteppingStats CheckDeltaStepping(const Graph& graph, std::uint32_t source, unsigned threads) {
  Snapshot snap = graph.GetSnapshot();
  auto p = Project(snap, {.in = false, .weight_property = "w", .threads = 1}).value();
  std::vector<double> dist;
  analytics::DeltaSteppingStats stats;
  EXPECT_EQ(analytics::DeltaStepping(p, source, threads, {}, {}, &dist, &stats),
            analytics::DeltaSteppingEnd::kDone);
  EXPECT_TRUE(dist == DijkstraOn(p, source));
  EXPECT_TRUE(Sssp(p, p.ToVertexId(source), {.threads = threads}).value() == dist);
  // Every entry put past the window comes back (none is left behind), and a
  // move of the window reads only what it takes back plus a few entries per
  // worker: a move that rescanned the waiting entries it leaves would read
  // them again on every move. (A small graph runs on fewer workers; the
  // bound uses the number asked for.)
  EXPECT_EQ(stats.unwaited, stats.waited);
  EXPECT_LE(stats.overflow_reads, stats.unwaited + 3 * threads * (stats.window_moves + 1));
  return stats;
}

TEST(AnalyticsTest, SsspEndsOnHugeAndUnsampledWeights) {
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE(threads);
    // The bin width overflows to infinity: 1e308 over a mean degree of 1/2.
    CheckDeltaStepping(*WeightedGraph({{0, 1, 1e308}}, 2), 0, threads);
    // 1e300 past 4,000 edges of 1e-3: far beyond 2^62 bins of width ~1e-3.
    std::vector<std::tuple<int, int, double>> edges;
    for (int i = 1; i <= 4000; ++i) edges.push_back({0, i, 1e-3});
    edges.push_back({0, 4001, 1e300});
    edges.push_back({4001, 4002, 1e290});
    edges.push_back({4002, 4003, 1.0});
    CheckDeltaStepping(*WeightedGraph(edges, 4004), 0, threads);
    // Every sampled entry (every second one) weighs 0, the others 1e19.
    edges.clear();
    for (int i = 1; i <= 8192; ++i) edges.push_back({0, i, i % 2 == 1 ? 0.0 : 1e19});
    CheckDeltaStepping(*WeightedGraph(edges, 8193), 0, threads);
  }
}

TEST(AnalyticsTest, SsspTakesEachWaitingEntryBackOnce) {
  // A star whose sampled entries (every second) weigh 1e-3 and the others
  // 1,000 x i: the bins are ~1e-3 wide and each distance lies in a window of
  // its own, so the window moves about 4,500 times.
  std::vector<std::tuple<int, int, double>> edges;
  for (int i = 0; i < 9000; ++i) edges.push_back({0, i + 1, i % 2 == 0 ? 1e-3 : 1000.0 * i});
  auto graph = WeightedGraph(edges, 9001);
  for (unsigned threads : {1u, 2u}) {
    const analytics::DeltaSteppingStats stats = CheckDeltaStepping(*graph, 0, threads);
    EXPECT_GT(stats.window_moves, 4000u);
    // The source relaxes each of the 9,000 edges once, and each improvement
    // waits at most once: an entry taken back is never put back to wait.
    EXPECT_LE(stats.waited, 9000u);
  }
}

TEST(AnalyticsTest, SsspWalksALongPathOfSmallBinsInFewRounds) {
  std::vector<std::tuple<int, int, double>> edges;
  for (int i = 0; i + 1 < 20000; ++i) edges.push_back({i, i + 1, 1.0});
  auto graph = WeightedGraph(edges, 20000);
  for (unsigned threads : {1u, 2u, 8u}) {
    const analytics::DeltaSteppingStats stats = CheckDeltaStepping(*graph, 0, threads);
    EXPECT_LT(stats.rounds, 200u) << threads;  // 20,000 bins of one vertex each, 1,024 ahead at a time
  }
}

// A path of small bins: each round a worker expands fewer than 4,096
// vertices, so reports that counted only a worker's whole polls said 0
// through the whole run, and a cancel asked for at 8,192 never came (the
// cause of a flaky SsspReportsAndCancelsWithinOneBin under load).
TEST(AnalyticsTest, SsspReportsCountEveryExpansion) {
  std::vector<std::tuple<int, int, double>> edges;
  for (int i = 0; i + 1 < 20000; ++i) edges.push_back({i, i + 1, 1.0});
  auto graph = WeightedGraph(edges, 20000);
  Snapshot snap = graph->GetSnapshot();
  auto p = Project(snap, {.in = false, .weight_property = "w"}).value();
  for (unsigned threads : {1u, 2u}) {
    std::uint64_t most = 0;
    const RunOptions watch{.threads = threads,
                           .progress = [&](const Progress& pr) { most = std::max(most, pr.done); }};
    ASSERT_TRUE(Sssp(p, p.ToVertexId(0), watch).ok());
    EXPECT_GE(most, 19999u) << threads << " threads: the last report counts every expansion";
    std::atomic<bool> cancel{false};
    const RunOptions run{.threads = threads,
                         .progress =
                             [&](const Progress& pr) {
                               if (pr.done >= 8192) cancel = true;
                             },
                         .cancel = &cancel};
    EXPECT_EQ(Sssp(p, p.ToVertexId(0), run).status().code(), StatusCode::kCancelled) << threads;
  }
}

TEST(AnalyticsTest, SsspReportsAndCancelsWithinOneBin) {
  // 0 -> 1 weighs 1e12 and is sampled, so the bins are ~2.4e8 wide and the
  // whole chain from vertex 1 lies in bin 0.
  std::vector<std::tuple<int, int, double>> edges{{0, 1, 1e12}};
  for (int i = 1; i + 1 < 40000; ++i) edges.push_back({i, i + 1, 1.0});
  auto graph = WeightedGraph(edges, 40000);
  Snapshot snap = graph->GetSnapshot();
  auto p = Project(snap, {.in = false, .weight_property = "w"}).value();
  int reports = 0;
  ASSERT_TRUE(Sssp(p, p.ToVertexId(1), {.threads = 1, .progress = [&](const Progress&) { ++reports; }}).ok());
  EXPECT_GE(reports, 40000 / 4096);
  std::atomic<bool> cancel{false};
  std::uint64_t last = 0;
  const RunOptions run{.threads = 2,
                       .progress =
                           [&](const Progress& pr) {
                             last = pr.done;
                             if (pr.done >= 8192) cancel = true;
                           },
                       .cancel = &cancel};
  EXPECT_EQ(Sssp(p, p.ToVertexId(1), run).status().code(), StatusCode::kCancelled);
  EXPECT_LT(last, 40000u);
}

// Large enough for many blocks (4096 vertices each), so threads really split work.
TEST(AnalyticsTest, ResultsAreIdenticalOnEveryThreadCount) {
  std::mt19937_64 rng(7);
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 12000; ++i) vs.push_back(b.AddVertex("V"));
  for (int i = 0; i < 48000; ++i)
    b.AddEdge("E", vs[rng() % vs.size()], vs[rng() % vs.size()],
              {{"w", static_cast<double>(rng() % 100) / 7}});
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  Snapshot snap = graph->GetSnapshot();
  auto base = Project(snap, {.weight_property = "w", .threads = 1}).value();
  for (std::uint32_t t : {2u, 3u, 4u}) {
    auto p = Project(snap, {.weight_property = "w", .threads = t}).value();
    ASSERT_EQ(p.edge_count(), base.edge_count());
    for (std::uint32_t v = 0; v < p.vertex_count(); v += 97) {
      EXPECT_TRUE(std::ranges::equal(p.OutNeighbors(v), base.OutNeighbors(v)));
      EXPECT_TRUE(std::ranges::equal(p.InWeights(v), base.InWeights(v)));
    }
  }
  const RunOptions one{.threads = 1};
  const auto pr1 = PageRank(base, {.iterations = 10}, one).value();
  const auto ppr1 =
      PersonalizedPageRank(base, std::vector<std::pair<VertexId, double>>{{VertexId(3), 1.0}}, {}, one)
          .value();
  const auto lcc1 = Lcc(base, one).value();
  const auto cdlp1 = Cdlp(base, 5, one).value();
  const auto wcc1 = Wcc(base, one).value();
  const auto bfs1 = Bfs(base, VertexId(5), one).value();
  const auto tri1 = TriangleCount(base, one).value();
  const auto core1 = CoreNumbers(base, one).value();
  const auto sssp1 = Sssp(base, VertexId(5), one).value();
  for (std::uint32_t t : {2u, 3u, 8u}) {
    const RunOptions run{.threads = t};
    EXPECT_TRUE(PageRank(base, {.iterations = 10}, run).value() == pr1);  // bit-identical doubles
    EXPECT_TRUE(
        PersonalizedPageRank(base, std::vector<std::pair<VertexId, double>>{{VertexId(3), 1.0}}, {}, run)
            .value() == ppr1);
    EXPECT_TRUE(Lcc(base, run).value() == lcc1);
    EXPECT_TRUE(Cdlp(base, 5, run).value() == cdlp1);
    EXPECT_TRUE(Wcc(base, run).value() == wcc1);
    EXPECT_TRUE(Bfs(base, VertexId(5), run).value() == bfs1);
    EXPECT_EQ(TriangleCount(base, run).value(), tri1);
    EXPECT_TRUE(CoreNumbers(base, run).value() == core1);
    EXPECT_TRUE(Sssp(base, VertexId(5), run).value() == sssp1);
  }
}

// Pins the documented order of a multigraph's repeated neighbours: by weight,
// not by edge id (the projection sorts each list by (neighbour, weight)).
TEST(AnalyticsTest, RepeatedNeighboursComeInWeightOrder) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  auto a = b.AddVertex("V"), c = b.AddVertex("V");
  b.AddEdge("E", a, c, {{"w", 5.0}});
  b.AddEdge("E", a, c, {{"w", 2.0}});
  b.AddEdge("E", a, c, {{"w", 3}});
  ASSERT_TRUE(graph->Write(std::move(b)).ok());
  for (std::uint32_t t : {1u, 2u}) {
    auto p = Project(graph->GetSnapshot(), {.weight_property = "w", .threads = t}).value();
    EXPECT_TRUE(std::ranges::equal(p.OutWeights(0), std::vector<double>{2.0, 3.0, 5.0}));
    EXPECT_TRUE(std::ranges::equal(p.InWeights(1), std::vector<double>{2.0, 3.0, 5.0}));
  }
}

}  // namespace
}  // namespace quiver
