// A random multigraph written through batches, and a trivially correct
// reference model of it (an edge list) with plain BFS, Dijkstra and
// simple-path enumeration: what the traversal tests check Quiver against.
#ifndef QUIVER_TESTS_TRAVERSAL_TEST_GRAPH_H_
#define QUIVER_TESTS_TRAVERSAL_TEST_GRAPH_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "quiver/graph.h"
#include "quiver/traversal.h"
#include "quiver/write_batch.h"

namespace quiver::traversal_test {

struct RefEdge {
  std::uint64_t id, src, dst;
  std::string type;
  std::optional<double> weight;  // property "w"; nullopt: missing
  bool live = true;
};

struct RefGraph {
  std::unique_ptr<Graph> graph;
  std::vector<std::uint64_t> vertices;         // every id ever added
  std::map<std::uint64_t, std::string> label;  // live vertices
  std::map<std::uint64_t, std::int64_t> x;     // vertex property "x"
  std::vector<RefEdge> edges;

  bool Live(std::uint64_t v) const { return label.count(v) != 0; }

  // Live edges leaving `v` along `d` that pass `types` (empty: all): (edge, neighbour).
  std::vector<std::pair<const RefEdge*, std::uint64_t>> Adj(std::uint64_t v, TraversalDirection d,
                                                            const std::vector<std::string>& types) const {
    std::vector<std::pair<const RefEdge*, std::uint64_t>> out;
    for (const RefEdge& e : edges) {
      if (!e.live) continue;
      if (!types.empty() && std::find(types.begin(), types.end(), e.type) == types.end()) continue;
      if (d != TraversalDirection::kIn && e.src == v) out.emplace_back(&e, e.dst);
      if (d != TraversalDirection::kOut && e.dst == v) out.emplace_back(&e, e.src);
    }
    return out;
  }
};

// `n` vertices (labels P/Q, property x), `m` edges (types A/B, self-loops
// and parallel edges likely on small n, weights 0..4 in halves or missing),
// then a second batch removing some vertices and edges.
inline RefGraph BuildRandom(std::uint32_t seed, int n, int m, bool removals = true) {
  std::mt19937 rng(seed);
  RefGraph g;
  g.graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> nv;
  std::vector<std::string> labels;
  std::vector<std::int64_t> xs;
  for (int i = 0; i < n; ++i) {
    labels.push_back(rng() % 3 == 0 ? "Q" : "P");
    xs.push_back(static_cast<std::int64_t>(rng() % 10));
    nv.push_back(b.AddVertex(labels.back(), {{"x", xs.back()}}));
  }
  struct Pending {
    int s, t;
    std::string type;
    std::optional<double> w;
  };
  std::vector<Pending> pend;
  for (int i = 0; i < m && n > 0; ++i) {
    Pending p{static_cast<int>(rng() % n), static_cast<int>(rng() % n), rng() % 4 == 0 ? "B" : "A", {}};
    if (rng() % 8 != 0) p.w = static_cast<double>(rng() % 9) / 2.0;
    if (p.w) {
      if (rng() % 2 == 0)
        b.AddEdge(p.type, nv[p.s], nv[p.t], {{"w", *p.w}});
      else if (*p.w == static_cast<double>(static_cast<std::int64_t>(*p.w)))
        b.AddEdge(p.type, nv[p.s], nv[p.t], {{"w", static_cast<std::int64_t>(*p.w)}});
      else
        b.AddEdge(p.type, nv[p.s], nv[p.t], {{"w", *p.w}});
    } else {
      b.AddEdge(p.type, nv[p.s], nv[p.t]);
    }
    pend.push_back(p);
  }
  CommitInfo info = g.graph->Write(std::move(b)).value();
  for (int i = 0; i < n; ++i) {
    std::uint64_t id = info.vertices[i].value();
    g.vertices.push_back(id);
    g.label[id] = labels[i];
    g.x[id] = xs[i];
  }
  for (std::size_t i = 0; i < pend.size(); ++i)
    g.edges.push_back(RefEdge{info.edges[i].value(), g.vertices[pend[i].s], g.vertices[pend[i].t],
                              pend[i].type, pend[i].w});
  if (!removals || n == 0) return g;
  WriteBatch r;
  std::set<std::uint64_t> gone;
  for (int i = 0; i < n / 10; ++i) gone.insert(g.vertices[rng() % n]);
  for (std::uint64_t v : gone) r.RemoveVertex(VertexId(v));
  for (RefEdge& e : g.edges) {
    if (gone.count(e.src) || gone.count(e.dst)) {
      e.live = false;
    } else if (rng() % 10 == 0) {
      r.RemoveEdge(EdgeId(e.id));
      e.live = false;
    }
  }
  for (std::uint64_t v : gone) g.label.erase(v);
  EXPECT_TRUE(g.graph->Write(std::move(r)).ok());
  return g;
}

// Plain BFS depths from `seeds` (no filters but types).
inline std::map<std::uint64_t, std::uint32_t> RefBfs(const RefGraph& g,
                                                     const std::vector<std::uint64_t>& seeds,
                                                     TraversalDirection d,
                                                     const std::vector<std::string>& types,
                                                     std::uint32_t max_depth,
                                                     const std::function<bool(std::uint64_t)>& admit) {
  std::map<std::uint64_t, std::uint32_t> depth;
  std::queue<std::uint64_t> q;
  for (std::uint64_t s : seeds)
    if (!depth.count(s)) depth[s] = 0, q.push(s);
  while (!q.empty()) {
    std::uint64_t v = q.front();
    q.pop();
    if (depth[v] >= max_depth) continue;
    for (auto [e, n] : g.Adj(v, d, types)) {
      if (depth.count(n) || !admit(n)) continue;
      depth[n] = depth[v] + 1;
      q.push(n);
    }
  }
  return depth;
}

inline double RefWeight(const RefEdge& e, bool weighted, double def) {
  if (!weighted) return 1.0;
  return e.weight ? *e.weight : def;
}

// Plain Dijkstra distance from s to t; infinity if unreachable.
inline double RefDistance(const RefGraph& g, std::uint64_t s, std::uint64_t t, TraversalDirection d,
                          const std::vector<std::string>& types, bool weighted, double def) {
  std::map<std::uint64_t, double> dist;
  using Item = std::pair<double, std::uint64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> pq;
  dist[s] = 0;
  pq.push({0, s});
  while (!pq.empty()) {
    auto [dv, v] = pq.top();
    pq.pop();
    if (dv > dist[v]) continue;
    if (v == t) return dv;
    for (auto [e, n] : g.Adj(v, d, types)) {
      double nd = dv + RefWeight(*e, weighted, def);
      if (!dist.count(n) || nd < dist[n]) dist[n] = nd, pq.push({nd, n});
    }
  }
  return std::numeric_limits<double>::infinity();
}

// Every simple path s -> t as (cost, edge ids).
inline std::vector<std::pair<double, std::vector<std::uint64_t>>> RefSimplePaths(
    const RefGraph& g, std::uint64_t s, std::uint64_t t, TraversalDirection d, bool weighted, double def) {
  std::vector<std::pair<double, std::vector<std::uint64_t>>> out;
  std::set<std::uint64_t> on_path{s};
  std::vector<std::uint64_t> edges;
  std::function<void(std::uint64_t, double)> dfs = [&](std::uint64_t v, double cost) {
    if (v == t) {
      out.emplace_back(cost, edges);
      return;
    }
    for (auto [e, n] : g.Adj(v, d, {})) {
      if (on_path.count(n)) continue;
      on_path.insert(n);
      edges.push_back(e->id);
      dfs(n, cost + RefWeight(*e, weighted, def));
      edges.pop_back();
      on_path.erase(n);
    }
  };
  dfs(s, 0);
  return out;
}

// Checks that `p` is a path s -> t of live edges along `d` whose weights sum
// to p.cost; returns the reference's cost of it.
inline void ExpectValidPath(const RefGraph& g, const Path& p, std::uint64_t s, std::uint64_t t,
                            TraversalDirection d, bool weighted, double def) {
  ASSERT_FALSE(p.vertices.empty());
  ASSERT_EQ(p.edges.size() + 1, p.vertices.size());
  EXPECT_EQ(p.vertices.front().value(), s);
  EXPECT_EQ(p.vertices.back().value(), t);
  double cost = 0;
  for (std::size_t i = 0; i < p.edges.size(); ++i) {
    const RefEdge* e = nullptr;
    for (const RefEdge& r : g.edges)
      if (r.id == p.edges[i].value()) e = &r;
    ASSERT_TRUE(e != nullptr && e->live);
    std::uint64_t a = p.vertices[i].value(), b = p.vertices[i + 1].value();
    bool fwd = e->src == a && e->dst == b, bwd = e->src == b && e->dst == a;
    const bool ok = d == TraversalDirection::kOut ? fwd : d == TraversalDirection::kIn ? bwd : (fwd || bwd);
    EXPECT_TRUE(ok) << "edge " << e->id << " does not join path vertices " << a << " and " << b;
    cost += RefWeight(*e, weighted, def);
  }
  EXPECT_DOUBLE_EQ(cost, p.cost);
}

}  // namespace quiver::traversal_test

#endif  // QUIVER_TESTS_TRAVERSAL_TEST_GRAPH_H_
