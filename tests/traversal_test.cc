// Traversal on snapshots, checked against the reference model in
// traversal_test_graph.h on random multigraphs (self-loops, parallel edges,
// isolated and removed vertices, removed edges, zero weights, disconnected
// parts), plus budgets and bad input.
#include "quiver/traversal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>

#include "gtest/gtest.h"
#include "topk_test_util.h"
#include "traversal/context.h"
#include "traversal_test_graph.h"

// Specs are aggregates with defaults, written with designated initializers;
// GCC 12 flags every member such an initializer leaves to its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace quiver {
namespace {

using traversal_test::BuildRandom;
using traversal_test::RefGraph;

constexpr TraversalDirection kDirections[] = {TraversalDirection::kOut, TraversalDirection::kIn,
                                              TraversalDirection::kBoth};

std::vector<std::uint64_t> LiveVertices(const RefGraph& g) {
  std::vector<std::uint64_t> out;
  for (const auto& [v, l] : g.label) out.push_back(v);
  return out;
}

TEST(TraversalTest, ExpandMatchesReferenceBfs) {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    RefGraph g = BuildRandom(seed, 2 + seed % 30, static_cast<int>(seed * 3 % 90));
    Snapshot snap = g.graph->GetSnapshot();
    TraversalContext ctx;
    std::mt19937 rng(seed);
    std::vector<std::uint64_t> live = LiveVertices(g);
    if (live.empty()) continue;
    for (int q = 0; q < 10; ++q) {
      ExpandSpec spec;
      std::vector<std::uint64_t> seeds;
      for (int i = 0, n = 1 + static_cast<int>(rng() % 3); i < n; ++i)
        seeds.push_back(live[rng() % live.size()]);
      for (std::uint64_t s : seeds) spec.seeds.push_back(VertexId(s));
      spec.direction = kDirections[rng() % 3];
      if (rng() % 2) spec.edge_types = {rng() % 2 ? "A" : "B"};
      spec.max_depth = rng() % 5;
      spec.min_depth = static_cast<std::uint32_t>(rng() % (spec.max_depth + 1));
      bool label_filter = rng() % 3 == 0, pred_filter = rng() % 3 == 0;
      if (label_filter) spec.vertex_labels = {"P"};
      if (pred_filter) spec.vertex_predicates = {{"x", CompareOp::kLt, std::int64_t{6}}};
      auto admit = [&](std::uint64_t v) {
        return (!label_filter || g.label.at(v) == "P") && (!pred_filter || g.x.at(v) < 6);
      };
      std::map<std::uint64_t, std::uint32_t> want =
          traversal_test::RefBfs(g, seeds, spec.direction, spec.edge_types, spec.max_depth, admit);
      std::vector<Visit> got;
      TraversalStats stats;
      ASSERT_TRUE(Expand(snap, spec, ctx, &got, &stats).ok());
      EXPECT_EQ(stats.stopped_by, StopReason::kCompleted);
      std::map<std::uint64_t, std::uint32_t> got_map;
      std::uint32_t last_depth = 0;
      for (const Visit& v : got) {
        EXPECT_TRUE(got_map.emplace(v.vertex.value(), v.depth).second) << "reported twice";
        EXPECT_GE(v.depth, last_depth);
        last_depth = v.depth;
        if (v.depth > 0) {  // the parent edge joins parent and vertex along the direction
          auto info = snap.GetEdge(v.parent_edge);
          ASSERT_TRUE(info.has_value());
          bool fwd = info->source == v.parent && info->target == v.vertex;
          bool bwd = info->source == v.vertex && info->target == v.parent;
          EXPECT_TRUE(spec.direction == TraversalDirection::kOut  ? fwd
                      : spec.direction == TraversalDirection::kIn ? bwd
                                                                  : (fwd || bwd));
          Path p;
          ASSERT_TRUE(PathTo(snap, ctx, v.vertex, &p).ok());
          EXPECT_EQ(p.edges.size(), v.depth);
        }
      }
      std::map<std::uint64_t, std::uint32_t> want_reported;
      for (auto [v, d] : want)
        if (d >= spec.min_depth) want_reported[v] = d;
      EXPECT_EQ(got_map, want_reported) << "seed " << seed << " query " << q;
    }
  }
}

TEST(TraversalTest, ExpandWithoutDeduplicationCountsWalks) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    RefGraph g = BuildRandom(seed, 2 + seed % 8, static_cast<int>(seed % 20));
    Snapshot snap = g.graph->GetSnapshot();
    TraversalContext ctx;
    std::vector<std::uint64_t> live = LiveVertices(g);
    for (TraversalDirection d : kDirections) {
      ExpandSpec spec{.seeds = {VertexId(live[0])}, .direction = d, .min_depth = 0, .max_depth = 3};
      spec.deduplicate = false;
      // The reference counts walks of each length by dynamic programming.
      std::map<std::uint64_t, std::uint64_t> walks{{live[0], 1}};
      std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t> want{{{live[0], 0}, 1}};
      for (std::uint32_t depth = 1; depth <= 3; ++depth) {
        std::map<std::uint64_t, std::uint64_t> next;
        for (auto [v, c] : walks)
          for (auto [e, n] : g.Adj(v, d, {})) next[n] += c;
        for (auto [v, c] : next) want[{v, depth}] += c;
        walks = next;
      }
      std::vector<Visit> got;
      ASSERT_TRUE(Expand(snap, spec, ctx, &got).ok());
      std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t> got_map;
      for (const Visit& v : got) ++got_map[{v.vertex.value(), v.depth}];
      EXPECT_EQ(got_map, want);
    }
  }
}

TEST(TraversalTest, ExpandEdgeFiltersAndCallbacks) {
  RefGraph g = BuildRandom(7, 30, 120, false);
  Snapshot snap = g.graph->GetSnapshot();
  TraversalContext ctx;
  std::vector<std::uint64_t> live = LiveVertices(g);
  ExpandSpec spec{.seeds = {VertexId(live[0])}, .max_depth = 4};
  spec.edge_predicates = {{"w", CompareOp::kGe, 2.0}};
  spec.vertex_filter = [](VertexId v) { return v.value() % 5 != 3; };
  auto admit = [](std::uint64_t v) { return v % 5 != 3; };
  // Reference: drop edges without w >= 2 from a copy of the model.
  RefGraph filtered;
  filtered.label = g.label;
  for (const auto& e : g.edges)
    if (e.weight && *e.weight >= 2) filtered.edges.push_back(e);
  auto want = traversal_test::RefBfs(filtered, {live[0]}, spec.direction, {}, 4, admit);
  std::vector<Visit> got;
  ASSERT_TRUE(Expand(snap, spec, ctx, &got).ok());
  EXPECT_EQ(got.size() + 1, want.size());  // the seed is not reported (min_depth 1)
  // The same as an edge callable, and streaming with an early stop.
  spec.edge_predicates.clear();
  spec.edge_filter = [&](EdgeId e, VertexId, VertexId) {
    auto w = snap.GetProperty(e, "w");
    return w && ((w->type() == ValueType::kDouble && w->as_double() >= 2) ||
                 (w->type() == ValueType::kInt64 && w->as_int64() >= 2));
  };
  std::vector<Visit> got2;
  ASSERT_TRUE(Expand(snap, spec, ctx, &got2).ok());
  EXPECT_EQ(got2.size(), got.size());
  int seen = 0;
  TraversalStats stats;
  Status s = Expand(
      snap, spec, ctx, [&](const Visit&) { return ++seen < 2; }, &stats);
  if (got.size() >= 2) {
    EXPECT_TRUE(s.ok());
    EXPECT_EQ(seen, 2);
    EXPECT_EQ(stats.stopped_by, StopReason::kCallback);
  }
}

TEST(TraversalTest, ShortestPathMatchesReference) {
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    RefGraph g = BuildRandom(seed, 2 + seed % 40, static_cast<int>(seed * 7 % 150));
    Snapshot snap = g.graph->GetSnapshot();
    TraversalContext ctx;
    std::mt19937 rng(seed);
    std::vector<std::uint64_t> live = LiveVertices(g);
    for (int q = 0; q < 12; ++q) {
      std::uint64_t s = live[rng() % live.size()], t = live[rng() % live.size()];
      PathSpec spec{.direction = kDirections[rng() % 3]};
      const bool weighted = rng() % 2 == 0;
      if (weighted) spec.weight_key = "w", spec.default_weight = 2.5;
      Path p;
      bool found = false;
      ASSERT_TRUE(ShortestPath(snap, VertexId(s), VertexId(t), spec, ctx, &p, &found).ok());
      double want = traversal_test::RefDistance(g, s, t, spec.direction, {}, weighted, spec.default_weight);
      ASSERT_EQ(found, !std::isinf(want)) << "seed " << seed << " " << s << "->" << t;
      if (!found) continue;
      traversal_test::ExpectValidPath(g, p, s, t, spec.direction, weighted, spec.default_weight);
      EXPECT_DOUBLE_EQ(p.cost, want) << "seed " << seed << " " << s << "->" << t;
    }
  }
}

TEST(TraversalTest, KShortestPathsMatchBruteForce) {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    RefGraph g = BuildRandom(seed, 3 + seed % 6, static_cast<int>(4 + seed % 14));
    Snapshot snap = g.graph->GetSnapshot();
    TraversalContext ctx;
    std::mt19937 rng(seed);
    std::vector<std::uint64_t> live = LiveVertices(g);
    for (int q = 0; q < 6; ++q) {
      std::uint64_t s = live[rng() % live.size()], t = live[rng() % live.size()];
      if (s == t) continue;
      PathSpec spec{.direction = kDirections[rng() % 3]};
      const bool weighted = rng() % 2 == 0;
      if (weighted) spec.weight_key = "w";
      auto all = traversal_test::RefSimplePaths(g, s, t, spec.direction, weighted, 1.0);
      std::sort(all.begin(), all.end());
      const std::size_t k = 1 + rng() % 6;
      std::vector<Path> got;
      ASSERT_TRUE(KShortestPaths(snap, VertexId(s), VertexId(t), k, spec, ctx, &got).ok());
      ASSERT_EQ(got.size(), std::min(k, all.size())) << "seed " << seed;
      std::set<std::vector<EdgeId>> distinct;
      for (std::size_t i = 0; i < got.size(); ++i) {
        traversal_test::ExpectValidPath(g, got[i], s, t, spec.direction, weighted, 1.0);
        std::set<VertexId> vs(got[i].vertices.begin(), got[i].vertices.end());
        EXPECT_EQ(vs.size(), got[i].vertices.size()) << "not loopless";
        EXPECT_DOUBLE_EQ(got[i].cost, all[i].first) << "seed " << seed << " path " << i;
        distinct.insert(got[i].edges);
      }
      EXPECT_EQ(distinct.size(), got.size());
    }
  }
}

TEST(TraversalTest, AllShortestPathsMatchBruteForce) {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    RefGraph g = BuildRandom(seed + 100, 3 + seed % 7, static_cast<int>(6 + seed % 16));
    Snapshot snap = g.graph->GetSnapshot();
    TraversalContext ctx;
    std::mt19937 rng(seed);
    std::vector<std::uint64_t> live = LiveVertices(g);
    for (int q = 0; q < 6; ++q) {
      std::uint64_t s = live[rng() % live.size()], t = live[rng() % live.size()];
      PathSpec spec{.direction = kDirections[rng() % 3]};
      const bool weighted = rng() % 2 == 0;
      if (weighted) spec.weight_key = "w";
      auto all = traversal_test::RefSimplePaths(g, s, t, spec.direction, weighted, 1.0);
      std::set<std::vector<std::uint64_t>> want;
      double best = std::numeric_limits<double>::infinity();
      for (auto& [c, p] : all) best = std::min(best, c);
      for (auto& [c, p] : all)
        if (c == best) want.insert(p);
      const std::size_t cap = 1 + rng() % 8;
      std::vector<Path> got;
      bool truncated = false;
      ASSERT_TRUE(AllShortestPaths(snap, VertexId(s), VertexId(t), cap, spec, ctx, &got, &truncated).ok());
      EXPECT_EQ(got.size(), std::min(cap, want.size())) << "seed " << seed;
      EXPECT_EQ(truncated, want.size() > cap);
      for (const Path& p : got) {
        traversal_test::ExpectValidPath(g, p, s, t, spec.direction, weighted, 1.0);
        std::vector<std::uint64_t> ids;
        for (EdgeId e : p.edges) ids.push_back(e.value());
        EXPECT_TRUE(want.count(ids)) << "seed " << seed;
      }
    }
  }
}

TEST(TraversalTest, TopKMatchesSortedReference) {
  RefGraph g = BuildRandom(11, 12, 300, false);
  Snapshot snap = g.graph->GetSnapshot();
  TraversalContext ctx;
  for (std::uint64_t v : LiveVertices(g)) {
    for (bool descending : {true, false}) {
      for (auto of : {TopKSpec::Of::kEdge, TopKSpec::Of::kNeighbor}) {
        TopKSpec spec{
            .key = of == TopKSpec::Of::kEdge ? "w" : "x", .of = of, .descending = descending, .k = 5};
        std::vector<std::tuple<double, std::uint64_t>> ref;  // (sort key, edge id)
        for (auto [e, n] : g.Adj(v, TraversalDirection::kOut, {})) {
          std::optional<double> score =
              of == TopKSpec::Of::kEdge ? e->weight : std::optional<double>(static_cast<double>(g.x.at(n)));
          if (score) ref.emplace_back(descending ? -*score : *score, e->id);
        }
        std::sort(ref.begin(), ref.end());
        std::vector<Neighbor> got;
        ASSERT_TRUE(TopKNeighbors(snap, VertexId(v), spec, ctx, &got).ok());
        ASSERT_EQ(got.size(), std::min<std::size_t>(5, ref.size()));
        for (std::size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i].edge.value(), std::get<1>(ref[i]));
          EXPECT_EQ(got[i].score, descending ? -std::get<0>(ref[i]) : std::get<0>(ref[i]));
        }
      }
    }
  }
}

// The best entries are kept in a sorted array up to k = 32 and in a heap
// above; both are checked against a sort of the entries examined, on
// vertices of a few hundred entries with many tied scores (ties go to the
// smaller edge id), in every direction, and under a max_edges budget (the
// best of the entries examined before the stop, in adjacency order).
TEST(TraversalTest, TopKMatchesReferenceForEveryKeptSizeAndBudget) {
  RefGraph g = BuildRandom(5, 4, 700);
  Snapshot snap = g.graph->GetSnapshot();
  std::map<std::uint64_t, const traversal_test::RefEdge*> by_id;
  for (const traversal_test::RefEdge& e : g.edges) by_id[e.id] = &e;
  const std::optional<EdgeTypeId> type_a = snap.FindEdgeType("A");
  ASSERT_TRUE(type_a);
  TraversalContext ctx;
  for (std::uint64_t v : LiveVertices(g)) {
    for (TraversalDirection d : kDirections) {
      for (bool only_a : {false, true}) {
        // (edge, neighbour) in the order the call examines them: out-groups, then in-groups.
        std::vector<std::pair<std::uint64_t, std::uint64_t>> entries;
        for (bool out : {true, false}) {
          if (out ? d == TraversalDirection::kIn : d == TraversalDirection::kOut) continue;
          for (const EdgeGroup& group : out ? snap.OutEdges(VertexId(v)) : snap.InEdges(VertexId(v))) {
            if (only_a && group.type != *type_a) continue;
            for (const EdgeEntry& e : group.entries) {
              // In kBoth a self-loop is one entry: its in-list copy is passed over.
              if (!out && d == TraversalDirection::kBoth && e.neighbor().value() == v) continue;
              entries.emplace_back(e.edge().value(), e.neighbor().value());
            }
          }
        }
        ASSERT_GT(entries.size(), 64u);
        for (auto of : {TopKSpec::Of::kEdge, TopKSpec::Of::kNeighbor}) {
          for (bool descending : {true, false}) {
            for (std::size_t k : {1, 7, 20, 32, 33, 64, 1000}) {
              for (std::uint64_t max_edges :
                   {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{45}, std::uint64_t{150}}) {
                const std::size_t examined =
                    max_edges == 0 ? entries.size() : std::min<std::size_t>(max_edges, entries.size());
                // (sort key, edge id, neighbour, score)
                test_util::TopKReference ref;
                for (std::size_t i = 0; i < examined; ++i) {
                  const auto [e, n] = entries[i];
                  const std::optional<double> score =
                      of == TopKSpec::Of::kEdge ? by_id.at(e)->weight
                                                : std::optional<double>(static_cast<double>(g.x.at(n)));
                  if (score) ref.emplace_back(descending ? -*score : *score, e, n, *score);
                }
                std::sort(ref.begin(), ref.end());
                TopKSpec spec{.direction = d,
                              .key = of == TopKSpec::Of::kEdge ? "w" : "x",
                              .of = of,
                              .descending = descending,
                              .k = k};
                if (only_a) spec.edge_types = {"A"};
                if (max_edges != 0) spec.budget.max_edges = max_edges;
                std::vector<Neighbor> got;
                TraversalStats stats;
                const Status s = TopKNeighbors(snap, VertexId(v), spec, ctx, &got, &stats);
                const std::string where = "v " + std::to_string(v) + " k " + std::to_string(k) + " budget " +
                                          std::to_string(max_edges) + " descending " +
                                          std::to_string(descending);
                EXPECT_EQ(stats.edges_examined, examined) << where;
                ASSERT_NO_FATAL_FAILURE(
                    test_util::ExpectTopKIsTheReference(s, examined < entries.size(), got, ref, k, where));
              }
            }
          }
        }
      }
    }
  }
}

TEST(TraversalTest, BudgetsStopWithPartialResults) {
  RefGraph g = BuildRandom(3, 200, 1500, false);
  Snapshot snap = g.graph->GetSnapshot();
  TraversalContext ctx;
  ExpandSpec spec{
      .seeds = {VertexId(g.vertices[0])}, .direction = TraversalDirection::kBoth, .max_depth = 10};
  std::vector<Visit> all;
  ASSERT_TRUE(Expand(snap, spec, ctx, &all).ok());
  ASSERT_GT(all.size(), 20u);

  spec.budget.max_vertices = 10;
  std::vector<Visit> got;
  TraversalStats stats;
  Status s = Expand(snap, spec, ctx, &got, &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(stats.stopped_by, StopReason::kMaxVertices);
  EXPECT_EQ(stats.vertices_visited, 10u);
  EXPECT_EQ(got.size(), 9u);  // the seed counts, but min_depth 1 does not report it
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].vertex, all[i].vertex);

  spec.budget = Budget{.max_edges = 50};
  s = Expand(snap, spec, ctx, &got, &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(stats.stopped_by, StopReason::kMaxEdges);
  EXPECT_EQ(stats.edges_examined, 50u);

  spec.budget = Budget{.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1)};
  s = Expand(snap, spec, ctx, &got, &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(stats.stopped_by, StopReason::kDeadline);
  EXPECT_TRUE(got.empty());

  CancellationToken cancel;
  spec.budget = Budget{.cancel = &cancel};
  int n = 0;
  s = Expand(
      snap, spec, ctx,
      [&](const Visit&) {
        if (++n == 5) cancel.Cancel();
        return true;
      },
      &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(stats.stopped_by, StopReason::kCancelled);
  EXPECT_LT(static_cast<std::size_t>(n), all.size());

  // A path search stopped early returns no path. Two edges can mark at most
  // one vertex per side, so no path of three hops or more can be found.
  Path p;
  bool found = true;
  PathSpec ps{.direction = TraversalDirection::kBoth};
  VertexId far;
  for (std::uint64_t v : g.vertices) {
    ASSERT_TRUE(ShortestPath(snap, VertexId(g.vertices[0]), VertexId(v), ps, ctx, &p, &found).ok());
    if (found && p.edges.size() >= 3) far = VertexId(v);
  }
  ASSERT_NE(far, VertexId(0));
  ps.budget.max_edges = 2;
  s = ShortestPath(snap, VertexId(g.vertices[0]), far, ps, ctx, &p, &found, &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(found);
  EXPECT_TRUE(p.vertices.empty());
  EXPECT_EQ(stats.stopped_by, StopReason::kMaxEdges);

  // Yen keeps the paths it proved before the budget ran out.
  std::vector<Path> paths;
  ps.budget = Budget{};
  ASSERT_TRUE(
      KShortestPaths(snap, VertexId(g.vertices[0]), VertexId(g.vertices[199]), 10, ps, ctx, &paths, &stats)
          .ok());
  ASSERT_EQ(paths.size(), 10u);
  const std::uint64_t edges_for_ten = stats.edges_examined;
  ps.budget = Budget{.max_edges = edges_for_ten / 2};
  std::vector<Path> partial;
  s = KShortestPaths(snap, VertexId(g.vertices[0]), VertexId(g.vertices[199]), 10, ps, ctx, &partial, &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  ASSERT_LT(partial.size(), 10u);
  for (std::size_t i = 0; i < partial.size(); ++i) EXPECT_EQ(partial[i].edges, paths[i].edges);
}

TEST(TraversalTest, BadInputIsRejectedPrecisely) {
  RefGraph g = BuildRandom(5, 20, 60);
  Snapshot snap = g.graph->GetSnapshot();
  TraversalContext ctx;
  std::uint64_t removed = 0;
  for (std::uint64_t v : g.vertices)
    if (!g.Live(v)) removed = v;
  ASSERT_FALSE(g.Live(removed));
  std::uint64_t live = LiveVertices(g)[0];
  std::vector<Visit> visits{Visit{}};

  // A removed or never-assigned seed: NotFound, output empty.
  Status s = Expand(snap, ExpandSpec{.seeds = {VertexId(removed)}}, ctx, &visits);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_TRUE(visits.empty());
  EXPECT_EQ(Expand(snap, ExpandSpec{.seeds = {VertexId(1u << 30)}}, ctx, &visits).code(),
            StatusCode::kNotFound);
  // min_depth > max_depth, zero budgets.
  EXPECT_EQ(Expand(snap, ExpandSpec{.seeds = {VertexId(live)}, .min_depth = 3, .max_depth = 2}, ctx, &visits)
                .code(),
            StatusCode::kInvalidArgument);
  ExpandSpec zero{.seeds = {VertexId(live)}};
  zero.budget.max_edges = 0;
  EXPECT_EQ(Expand(snap, zero, ctx, &visits).code(), StatusCode::kInvalidArgument);
  zero.budget = Budget{.max_vertices = 0};
  EXPECT_EQ(Expand(snap, zero, ctx, &visits).code(), StatusCode::kInvalidArgument);
  // Unknown names match nothing: an empty answer, not an error.
  ExpandSpec unknown{.seeds = {VertexId(live)}, .edge_types = {"NO_SUCH_TYPE"}, .max_depth = 3};
  ASSERT_TRUE(Expand(snap, unknown, ctx, &visits).ok());
  EXPECT_TRUE(visits.empty());
  unknown = ExpandSpec{.seeds = {VertexId(live)}, .max_depth = 3, .vertex_labels = {"NoSuchLabel"}};
  ASSERT_TRUE(Expand(snap, unknown, ctx, &visits).ok());
  EXPECT_TRUE(visits.empty());
  unknown = ExpandSpec{.seeds = {VertexId(live)}, .max_depth = 3};
  unknown.vertex_predicates = {{"no_such_key", CompareOp::kNe, std::int64_t{1}}};
  ASSERT_TRUE(Expand(snap, unknown, ctx, &visits).ok());
  EXPECT_TRUE(visits.empty());
  std::vector<Neighbor> top{Neighbor{}};
  ASSERT_TRUE(TopKNeighbors(snap, VertexId(live), TopKSpec{.key = "no_such_key"}, ctx, &top).ok());
  EXPECT_TRUE(top.empty());

  // k = 0, max_paths = 0, removed endpoints.
  EXPECT_EQ(TopKNeighbors(snap, VertexId(live), TopKSpec{.key = "w", .k = 0}, ctx, &top).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(TopKNeighbors(snap, VertexId(removed), TopKSpec{.key = "w"}, ctx, &top).code(),
            StatusCode::kNotFound);
  std::vector<Path> paths;
  EXPECT_EQ(KShortestPaths(snap, VertexId(live), VertexId(live), 0, {}, ctx, &paths).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(AllShortestPaths(snap, VertexId(live), VertexId(live), 0, {}, ctx, &paths).code(),
            StatusCode::kInvalidArgument);
  Path p;
  EXPECT_EQ(ShortestPath(snap, VertexId(live), VertexId(removed), {}, ctx, &p).code(), StatusCode::kNotFound);
  EXPECT_EQ(ShortestPath(snap, VertexId(removed), VertexId(live), {}, ctx, &p).code(), StatusCode::kNotFound);
  EXPECT_EQ(
      ShortestPath(snap, VertexId(live), VertexId(live), {.weight_key = "w", .default_weight = -1}, ctx, &p)
          .code(),
      StatusCode::kInvalidArgument);
  // PathTo after a call that was not a deduplicating Expand.
  EXPECT_EQ(PathTo(snap, ctx, VertexId(live), &p).code(), StatusCode::kFailedPrecondition);
}

TEST(TraversalTest, InvalidWeightsNameTheEdge) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  NewVertex a = b.AddVertex("P"), m = b.AddVertex("P"), z = b.AddVertex("P");
  b.AddEdge("R", a, m, {{"w", 1.0}});
  b.AddEdge("R", m, z, {{"w", -2.0}});
  b.AddEdge("S", a, z, {{"w", "heavy"}});
  b.AddEdge("S", z, a, {{"w", std::int64_t{0}}});
  CommitInfo info = graph->Write(std::move(b)).value();
  Snapshot snap = graph->GetSnapshot();
  TraversalContext ctx;
  VertexId va = info.vertices[0], vz = info.vertices[2];
  Path p{{va}, {}, 5};
  Status s = ShortestPath(snap, va, vz, {.edge_types = {"R"}, .weight_key = "w"}, ctx, &p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("edge " + std::to_string(info.edges[1].value())), std::string_view::npos)
      << s.ToString();
  EXPECT_TRUE(p.vertices.empty());
  s = ShortestPath(snap, va, vz, {.edge_types = {"S"}, .weight_key = "w"}, ctx, &p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("edge " + std::to_string(info.edges[2].value())), std::string_view::npos)
      << s.ToString();
  std::vector<Path> paths;
  EXPECT_EQ(KShortestPaths(snap, va, vz, 3, {.weight_key = "w"}, ctx, &paths).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(paths.empty());
  std::vector<Neighbor> top;
  EXPECT_EQ(TopKNeighbors(snap, va, {.key = "w"}, ctx, &top).code(), StatusCode::kInvalidArgument);
  // Unweighted, the same graph is fine; a zero weight is a valid weight.
  ASSERT_TRUE(ShortestPath(snap, va, vz, {}, ctx, &p).ok());
  EXPECT_EQ(p.cost, 1);
  bool found = false;
  ASSERT_TRUE(ShortestPath(snap, vz, va, {.edge_types = {"S"}, .weight_key = "w"}, ctx, &p, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(p.cost, 0);
}

// Regression: int64 scores were ranked as doubles, so 2^53 and 2^53 + 1 tied
// and the smaller edge id won.
TEST(TraversalTest, TopKRanksInt64ScoresExactly) {
  auto graph = Graph::OpenInMemory().value();
  constexpr std::int64_t kTwo53 = std::int64_t{1} << 53;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  WriteBatch b;
  NewVertex a = b.AddVertex("P"), x = b.AddVertex("P"), y = b.AddVertex("P");
  b.AddEdge("D", a, x, {{"w", kTwo53}});  // descending: the later edge must win
  b.AddEdge("D", a, y, {{"w", kTwo53 + 1}});
  b.AddEdge("A", a, x, {{"w", kTwo53 + 1}});  // ascending: the later edge must win
  b.AddEdge("A", a, y, {{"w", kTwo53}});
  b.AddEdge("M", a, x, {{"w", 9007199254740992.0}});  // mixed: double 2^53 < int64 2^53 + 1
  b.AddEdge("M", a, y, {{"w", kTwo53 + 1}});
  b.AddEdge("N", a, x, {{"w", kMax}});  // mixed: int64 max < double 2^63
  b.AddEdge("N", a, y, {{"w", 9223372036854775808.0}});
  CommitInfo info = graph->Write(std::move(b)).value();
  Snapshot snap = graph->GetSnapshot();
  TraversalContext ctx;
  std::vector<Neighbor> top;
  const VertexId va = info.vertices[0];
  ASSERT_TRUE(TopKNeighbors(snap, va, {.edge_types = {"D"}, .key = "w", .k = 1}, ctx, &top).ok());
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].edge, info.edges[1]);
  ASSERT_TRUE(
      TopKNeighbors(snap, va, {.edge_types = {"A"}, .key = "w", .descending = false, .k = 1}, ctx, &top)
          .ok());
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].edge, info.edges[3]);
  ASSERT_TRUE(TopKNeighbors(snap, va, {.edge_types = {"M"}, .key = "w", .k = 1}, ctx, &top).ok());
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].edge, info.edges[5]);
  ASSERT_TRUE(
      TopKNeighbors(snap, va, {.edge_types = {"M"}, .key = "w", .descending = false, .k = 1}, ctx, &top)
          .ok());
  EXPECT_EQ(top[0].edge, info.edges[4]);
  ASSERT_TRUE(TopKNeighbors(snap, va, {.edge_types = {"N"}, .key = "w", .k = 2}, ctx, &top).ok());
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].edge, info.edges[7]);
  EXPECT_EQ(top[1].edge, info.edges[6]);
}

// Regression: the deadline was polled every 64th vertex expanded, not at
// each one as Budget documents. The sink sleeps past the deadline; the next
// vertex expanded must see it (no wall-clock time is asserted).
TEST(TraversalTest, DeadlineIsPolledAtEachVertexExpanded) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> chain;
  for (int i = 0; i < 10; ++i) chain.push_back(b.AddVertex("P"));
  for (int i = 0; i + 1 < 10; ++i) b.AddEdge("R", chain[i], chain[i + 1]);
  CommitInfo info = graph->Write(std::move(b)).value();
  Snapshot snap = graph->GetSnapshot();
  TraversalContext ctx;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  ExpandSpec spec{.seeds = {info.vertices[0]}, .max_depth = 20};
  spec.budget.deadline = deadline;
  int visits = 0;
  TraversalStats stats;
  Status s = Expand(
      snap, spec, ctx,
      [&](const Visit&) {
        ++visits;
        std::this_thread::sleep_until(deadline + std::chrono::milliseconds(1));
        return true;
      },
      &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(stats.stopped_by, StopReason::kDeadline);
  EXPECT_LE(visits, 1);
}

// Regression: bidirectional Dijkstra reported no path when the cost
// overflowed to +infinity, while Yen and AllShortestPaths found it.
TEST(TraversalTest, PathsWhoseCostOverflowsAgree) {
  for (int hops : {2, 3, 4}) {
    auto graph = Graph::OpenInMemory().value();
    WriteBatch b;
    std::vector<NewVertex> chain;
    for (int i = 0; i <= hops; ++i) chain.push_back(b.AddVertex("P"));
    for (int i = 0; i < hops; ++i) b.AddEdge("R", chain[i], chain[i + 1], {{"w", 1e308}});
    CommitInfo info = graph->Write(std::move(b)).value();
    Snapshot snap = graph->GetSnapshot();
    TraversalContext ctx;
    const VertexId s = info.vertices.front(), t = info.vertices.back();
    const PathSpec spec{.weight_key = "w"};
    Path p;
    bool found = false;
    ASSERT_TRUE(ShortestPath(snap, s, t, spec, ctx, &p, &found).ok());
    EXPECT_TRUE(found) << hops;
    EXPECT_EQ(p.edges, info.edges) << hops;
    EXPECT_EQ(p.cost, std::numeric_limits<double>::infinity());
    std::vector<Path> paths;
    ASSERT_TRUE(KShortestPaths(snap, s, t, 1, spec, ctx, &paths).ok());
    ASSERT_EQ(paths.size(), 1u);
    EXPECT_EQ(paths[0].cost, std::numeric_limits<double>::infinity());
    ASSERT_TRUE(AllShortestPaths(snap, s, t, 4, spec, ctx, &paths).ok());
    ASSERT_EQ(paths.size(), 1u);
    EXPECT_EQ(paths[0].edges, info.edges);
  }
}

// Top-K ranks by one 128-bit key built from the score's bits, the rounding
// remainder and the edge id: the key must order scores as numbers (negative
// below positive, -0 tied with +0, the largest magnitudes at the ends, int64 against
// double exactly) and break ties by the smaller edge id, both ways.
TEST(TraversalTest, TopKOrdersScoresAsNumbersWithTiesByEdgeId) {
  if (std::numeric_limits<long double>::digits < 64) GTEST_SKIP() << "the reference needs a 64-bit mantissa";
  constexpr double kHuge = std::numeric_limits<double>::max();  // the write path refuses infinities
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kTwo53 = std::int64_t{1} << 53;
  const double below[] = {-kHuge, -1e300, -9007199254740992.0, -2.5, -1.0, -0.0, -0.0};
  const double above[] = {0.0, 0.0, 1.0, 1.0, 2.5, 1e300, 9007199254740992.0, 9223372036854775808.0, kHuge};
  const std::int64_t ints[] = {kMin, -1, 0, 1, kTwo53, kTwo53 + 1, kMax, 1, -kTwo53 - 1};
  std::vector<PropertyValue> scores(std::begin(below), std::end(below));
  scores.insert(scores.end(), std::begin(above), std::end(above));
  scores.insert(scores.end(), std::begin(ints), std::end(ints));
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  NewVertex hub = b.AddVertex("P");
  std::vector<NewVertex> ends;
  for (std::size_t i = 0; i < scores.size() + 2; ++i) ends.push_back(b.AddVertex("P"));
  // A fixed shuffle, so edge ids and scores are not in the same order.
  std::vector<std::size_t> order(scores.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  for (std::size_t i : order) b.AddEdge("R", hub, ends[i], {{"w", scores[i]}});
  b.AddEdge("R", hub, ends[scores.size()]);                                // no score: skipped
  b.AddEdge("R", hub, ends[scores.size() + 1], {{"w", PropertyValue()}});  // null: skipped
  CommitInfo info = graph->Write(std::move(b)).value();
  Snapshot snap = graph->GetSnapshot();
  // (exact value, edge id, vertex, score as reported)
  std::vector<std::tuple<long double, std::uint64_t, std::uint64_t, double>> ref;
  for (std::size_t j = 0; j < order.size(); ++j) {
    const PropertyValue& v = scores[order[j]];
    const long double exact = v.type() == ValueType::kInt64 ? static_cast<long double>(*v.as_int64())
                                                            : static_cast<long double>(*v.as_double());
    const double reported =
        v.type() == ValueType::kInt64 ? static_cast<double>(*v.as_int64()) : *v.as_double();
    ref.emplace_back(exact, info.edges[j].value(), info.vertices[1 + order[j]].value(), reported);
  }
  TraversalContext ctx;
  for (bool descending : {true, false}) {
    std::sort(ref.begin(), ref.end(), [&](const auto& x, const auto& y) {
      if (std::get<0>(x) != std::get<0>(y))
        return descending ? std::get<0>(x) > std::get<0>(y) : std::get<0>(x) < std::get<0>(y);
      return std::get<1>(x) < std::get<1>(y);
    });
    for (std::size_t k = 1; k <= ref.size() + 1; ++k) {
      std::vector<Neighbor> got;
      ASSERT_TRUE(
          TopKNeighbors(snap, info.vertices[0], {.key = "w", .descending = descending, .k = k}, ctx, &got)
              .ok());
      ASSERT_EQ(got.size(), std::min(k, ref.size())) << k;
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].edge.value(), std::get<1>(ref[i]))
            << "descending " << descending << " k " << k << " #" << i;
        EXPECT_EQ(got[i].vertex.value(), std::get<2>(ref[i]));
        EXPECT_EQ(got[i].score, std::get<3>(ref[i]));
        EXPECT_EQ(std::signbit(got[i].score), std::signbit(std::get<3>(ref[i])));
      }
    }
  }
}

// A bidirectional BFS counts each vertex it visits once: the vertex where
// the sides meet was counted by the side that marked it first, not again at
// the meeting (it was counted twice, so a budget of exactly the vertices a
// path needs stopped short of it). The path runs through the meeting edge
// whichever side found it (side 0 in the chain, side 1 in the fork: the
// smaller frontier grows).
TEST(TraversalTest, ShortestPathCountsItsWorkUpToTheMeeting) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> v;
  for (int i = 0; i < 7; ++i) v.push_back(b.AddVertex("P"));
  b.AddEdge("R", v[0], v[1]);  // the chain 0 -> 1 -> 2
  b.AddEdge("R", v[1], v[2]);
  b.AddEdge("R", v[3], v[4]);  // the fork 3 -> {4, 5}, 4 -> 6
  b.AddEdge("R", v[3], v[5]);
  b.AddEdge("R", v[4], v[6]);
  CommitInfo info = graph->Write(std::move(b)).value();
  const std::vector<VertexId>& id = info.vertices;
  const std::vector<EdgeId>& e = info.edges;
  Snapshot snap = graph->GetSnapshot();
  TraversalContext ctx;
  Path p;
  bool found = false;
  TraversalStats stats;
  // Chain: both ends (2), side 0 marks 1 (3), then meets 2 over 1 -> 2.
  ASSERT_TRUE(ShortestPath(snap, id[0], id[2], {}, ctx, &p, &found, &stats).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(p.vertices, (std::vector<VertexId>{id[0], id[1], id[2]}));
  EXPECT_EQ(p.edges, (std::vector<EdgeId>{e[0], e[1]}));
  EXPECT_EQ(p.cost, 2);
  EXPECT_EQ(stats.vertices_visited, 3u);
  EXPECT_EQ(stats.edges_examined, 2u);
  ASSERT_TRUE(
      ShortestPath(snap, id[0], id[2], {.budget = {.max_vertices = 3}}, ctx, &p, &found, &stats).ok());
  EXPECT_TRUE(found);
  // The same for the bidirectional Dijkstra (no edge has "w": each weighs 1):
  // side 0 marks 1 (3), then reaches 2, which side 1 marked.
  ASSERT_TRUE(ShortestPath(snap, id[0], id[2], {.weight_key = "w", .budget = {.max_vertices = 3}}, ctx, &p,
                           &found, &stats)
                  .ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(p.vertices, (std::vector<VertexId>{id[0], id[1], id[2]}));
  EXPECT_EQ(stats.vertices_visited, 3u);
  // Against the direction: side 0 walks in-edges.
  ASSERT_TRUE(
      ShortestPath(snap, id[2], id[0], {.direction = TraversalDirection::kIn}, ctx, &p, &found, &stats).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(p.vertices, (std::vector<VertexId>{id[2], id[1], id[0]}));
  EXPECT_EQ(p.edges, (std::vector<EdgeId>{e[1], e[0]}));
  // Fork: side 0 marks 4 and 5 (4 visited), side 1 (smaller) meets 4 over
  // 4 -> 6.
  ASSERT_TRUE(ShortestPath(snap, id[3], id[6], {}, ctx, &p, &found, &stats).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(p.vertices, (std::vector<VertexId>{id[3], id[4], id[6]}));
  EXPECT_EQ(p.edges, (std::vector<EdgeId>{e[2], e[4]}));
  EXPECT_EQ(stats.vertices_visited, 4u);
  EXPECT_EQ(stats.edges_examined, 3u);
  ASSERT_TRUE(
      ShortestPath(snap, id[3], id[6], {.budget = {.max_vertices = 4}}, ctx, &p, &found, &stats).ok());
  EXPECT_TRUE(found);
  // One vertex fewer: the meeting is not reached, so there is no path.
  Status s = ShortestPath(snap, id[3], id[6], {.budget = {.max_vertices = 3}}, ctx, &p, &found, &stats);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(found);
  EXPECT_TRUE(p.vertices.empty());
  EXPECT_EQ(stats.stopped_by, StopReason::kMaxVertices);
  // No path: 2 reaches nothing.
  ASSERT_TRUE(ShortestPath(snap, id[2], id[0], {}, ctx, &p, &found, &stats).ok());
  EXPECT_FALSE(found);
  // From a vertex to itself every path call visits that one vertex (review:
  // KShortestPaths reported 0).
  ASSERT_TRUE(ShortestPath(snap, id[1], id[1], {}, ctx, &p, &found, &stats).ok());
  EXPECT_EQ(stats.vertices_visited, 1u);
  std::vector<Path> paths;
  ASSERT_TRUE(KShortestPaths(snap, id[1], id[1], 2, {}, ctx, &paths, &stats).ok());
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(stats.vertices_visited, 1u);
  ASSERT_TRUE(AllShortestPaths(snap, id[1], id[1], 2, {}, ctx, &paths, nullptr, &stats).ok());
  EXPECT_EQ(stats.vertices_visited, 1u);
}

// The context's 32-bit generation wraps: the arrays are wiped then, or
// stamps of 2^32 queries ago (or never-written zeros) would look current. A
// bidirectional BFS takes two generations at once; every query around the
// wrap must answer as on a fresh context.
TEST(TraversalTest, QueriesAroundTheGenerationWrapMatchAFreshContext) {
  RefGraph g = BuildRandom(5, 60, 240, false);
  Snapshot snap = g.graph->GetSnapshot();
  std::mt19937 rng(5);
  for (std::uint32_t before : {0xFFFFFFFCu, 0xFFFFFFFDu, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
    TraversalContext ctx;
    Path p, want;
    bool found = false, want_found = false;
    // Fill the arrays with stamps first.
    ASSERT_TRUE(ShortestPath(snap, VertexId(g.vertices[0]), VertexId(g.vertices[1]), {}, ctx, &p).ok());
    ctx.impl().generation = before;
    for (int q = 0; q < 8; ++q) {
      const VertexId s(g.vertices[rng() % g.vertices.size()]), t(g.vertices[rng() % g.vertices.size()]);
      PathSpec spec{.direction = kDirections[q % 3]};
      if (q % 4 == 3) spec.weight_key = "w";
      TraversalContext fresh;
      ASSERT_TRUE(ShortestPath(snap, s, t, spec, ctx, &p, &found).ok());
      ASSERT_TRUE(ShortestPath(snap, s, t, spec, fresh, &want, &want_found).ok());
      EXPECT_EQ(found, want_found) << before << " query " << q;
      EXPECT_EQ(p.edges, want.edges) << before << " query " << q;
      std::vector<Visit> visits, want_visits;
      const ExpandSpec expand{.seeds = {s}, .max_depth = 3};
      ASSERT_TRUE(Expand(snap, expand, ctx, &visits).ok());
      ASSERT_TRUE(Expand(snap, expand, fresh, &want_visits).ok());
      ASSERT_EQ(visits.size(), want_visits.size()) << before << " query " << q;
      for (std::size_t i = 0; i < visits.size(); ++i) EXPECT_EQ(visits[i].vertex, want_visits[i].vertex);
    }
  }
}

}  // namespace
}  // namespace quiver
