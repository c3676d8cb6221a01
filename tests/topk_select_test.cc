// TopKNeighbors' selection (top_k.cc): the branch-free quickselect of the
// k-th best score word against a sort, and whole calls on vertices of a
// degree that makes the ranking select more than once (past k + max(k, 256)
// entries), against a stable sort of the entries examined.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "quiver/quiver.h"
#include "topk_test_util.h"
#include "traversal/context.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace quiver {
namespace {

// kHugeInts: int64 scores near 2^60 that round to a handful of doubles, so
// entries tie on their score word and rank by the exact remainder.
// kNearbyUlps: doubles a few ulps apart, whose score words differ only in
// the low bits the final sort's network replaces by the entry's place.
enum class SelectPattern {
  kRandom,
  kFewValues,
  kAllEqual,
  kAscending,
  kDescending,
  kOrganPipe,
  kSawtooth,
  kHugeInts,
  kNearbyUlps
};

std::vector<std::uint64_t> SelectWords(SelectPattern p, std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint64_t> h(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (p) {
      case SelectPattern::kRandom: h[i] = rng(); break;
      case SelectPattern::kFewValues: h[i] = rng() % 3 * (std::uint64_t{1} << 62); break;
      case SelectPattern::kAllEqual: h[i] = 42; break;
      case SelectPattern::kAscending: h[i] = i; break;
      case SelectPattern::kDescending: h[i] = n - i; break;
      case SelectPattern::kOrganPipe: h[i] = std::min(i, n - i); break;
      case SelectPattern::kSawtooth: h[i] = i % 17; break;
      case SelectPattern::kHugeInts: h[i] = (std::uint64_t{1} << 60) + i * 37 % 1000; break;
      case SelectPattern::kNearbyUlps: h[i] = (std::uint64_t{1} << 62) + rng() % 64; break;
    }
  }
  return h;
}

TEST(TopKSelectTest, KthBestWordIsTheSortsOnEveryPatternAndRank) {
  std::mt19937_64 rng(11);
  for (std::size_t n : {1u, 2u, 31u, 32u, 33u, 64u, 100u, 257u, 1000u, 4099u}) {
    for (SelectPattern p : {SelectPattern::kRandom, SelectPattern::kFewValues, SelectPattern::kAllEqual,
                            SelectPattern::kAscending, SelectPattern::kDescending, SelectPattern::kOrganPipe,
                            SelectPattern::kSawtooth, SelectPattern::kHugeInts, SelectPattern::kNearbyUlps}) {
      const std::vector<std::uint64_t> words = SelectWords(p, n, rng);
      std::vector<std::uint64_t> sorted = words;
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      for (std::size_t k : {std::size_t{1}, std::size_t{2}, n / 3, n / 2, n - 1, n}) {
        if (k < 1 || k > n) continue;
        std::vector<std::uint64_t> h = words, tmp(2 * n);
        EXPECT_EQ(traversal::KthBestWord(h.data(), n, k, tmp.data()), sorted[k - 1])
            << "n " << n << " pattern " << static_cast<int>(p) << " k " << k;
      }
    }
  }
}

// A hub of `degree` out-edges whose "w" follows `pattern`, and the entries
// in the order TopKNeighbors examines them.
struct SelectHub {
  std::unique_ptr<Graph> graph;
  VertexId hub;
  // edge, neighbour, score (NaN: none), exact score (int64 scores exceed
  // a double's 53 bits; an x86 long double holds 64)
  std::vector<std::tuple<std::uint64_t, std::uint64_t, double, long double>> entries;
};

SelectHub SelectHubGraph(SelectPattern pattern, std::size_t degree, std::mt19937_64& rng) {
  SelectHub f;
  f.graph = Graph::OpenInMemory().value();
  WriteBatch b;
  const NewVertex hub = b.AddVertex("H");
  std::vector<NewVertex> others;
  for (int i = 0; i < 50; ++i) others.push_back(b.AddVertex("V"));
  for (std::size_t i = 0; i < degree; ++i) {
    PropertyValue w;
    switch (pattern) {
      case SelectPattern::kRandom: w = static_cast<double>(rng() % 1'000'000) / 1e3 - 500; break;
      case SelectPattern::kFewValues:  // ties across types: 1 == 1.0, -0.0 == +0.0
        w = i % 4 == 0   ? PropertyValue(std::int64_t{1})
            : i % 4 == 1 ? PropertyValue(1.0)
            : i % 4 == 2 ? PropertyValue(-0.0)
                         : PropertyValue(0.0);
        break;
      case SelectPattern::kAllEqual: w = 7.5; break;
      case SelectPattern::kAscending: w = static_cast<std::int64_t>(i); break;
      case SelectPattern::kDescending: w = -static_cast<double>(i); break;
      case SelectPattern::kOrganPipe: w = static_cast<double>(std::min(i, degree - i)); break;
      case SelectPattern::kSawtooth: w = static_cast<std::int64_t>(i % 17); break;
      case SelectPattern::kHugeInts:
        w = static_cast<std::int64_t>((std::uint64_t{1} << 60) + i * 37 % 1000);
        break;
      case SelectPattern::kNearbyUlps: w = 1.0 + static_cast<double>(rng() % 64) * 0x1p-52; break;
    }
    if (i % 29 == 5) {
      b.AddEdge("E", hub, others[rng() % others.size()]);  // no score: skipped
    } else {
      b.AddEdge("E", hub, others[rng() % others.size()], {{"w", w}});
    }
  }
  const CommitInfo info = f.graph->Write(std::move(b)).value();
  f.hub = info.vertices[0];
  const Snapshot snap = f.graph->GetSnapshot();
  for (const EdgeGroup& g : snap.OutEdges(f.hub))
    for (const EdgeEntry& e : g.entries) {
      double s = std::nan("");
      long double exact = 0;
      if (auto v = snap.GetProperty(e.edge(), "w")) {
        if (auto x = v->as_int64()) s = static_cast<double>(*x), exact = static_cast<long double>(*x);
        if (auto x = v->as_double()) s = *x, exact = *x;
      }
      f.entries.emplace_back(e.edge().value(), e.neighbor().value(), s, exact + 0.0L);
    }
  return f;
}

// Degrees past k + max(k, 256) select while entries are still coming, and raise
// the bar later entries must reach; each call is checked against a stable
// sort of what it examined, with budgets that stop it before, at and after
// a selection.
TEST(TopKSelectTest, HighDegreeHubsMatchAStableSortAtEveryK) {
  std::mt19937_64 rng(12);
  constexpr std::size_t kDegree = 1500;
  for (SelectPattern p : {SelectPattern::kRandom, SelectPattern::kFewValues, SelectPattern::kAllEqual,
                          SelectPattern::kAscending, SelectPattern::kDescending, SelectPattern::kOrganPipe,
                          SelectPattern::kSawtooth, SelectPattern::kHugeInts, SelectPattern::kNearbyUlps}) {
    const SelectHub f = SelectHubGraph(p, kDegree, rng);
    const Snapshot snap = f.graph->GetSnapshot();
    TraversalContext ctx;
    for (bool descending : {true, false}) {
      for (std::size_t k : {1u, 7u, 20u, 100u, 255u, 256u, 257u, 600u, 1400u, 1499u, 1500u, 4000u}) {
        for (std::uint64_t max_edges : {0u, 276u, 277u, 300u, 1000u}) {
          const std::size_t examined = max_edges == 0 ? kDegree : std::min<std::size_t>(max_edges, kDegree);
          std::vector<std::tuple<long double, std::uint64_t, std::uint64_t, double>> order;
          for (std::size_t i = 0; i < examined; ++i) {
            const auto& [e, n, s, exact] = f.entries[i];
            if (!std::isnan(s)) order.emplace_back(descending ? -exact : exact, e, n, s);
          }
          std::sort(order.begin(), order.end());  // exact key, then edge id
          test_util::TopKReference ref;
          for (const auto& [key, e, n, s] : order) ref.emplace_back(0.0, e, n, s);
          TopKSpec spec{.key = "w", .descending = descending, .k = k};
          if (max_edges != 0) spec.budget.max_edges = max_edges;
          std::vector<Neighbor> got;
          const Status s = TopKNeighbors(snap, f.hub, spec, ctx, &got);
          const std::string where = "pattern " + std::to_string(static_cast<int>(p)) + " desc " +
                                    std::to_string(descending) + " k " + std::to_string(k) + " max_edges " +
                                    std::to_string(max_edges);
          ASSERT_NO_FATAL_FAILURE(
              test_util::ExpectTopKIsTheReference(s, examined < kDegree, got, ref, k, where));
        }
      }
    }
  }
}

// A group the budget holds whole is counted at once (BudgetClock::Edges),
// and one that a deadline, a token or a budget ending inside it could stop
// entry by entry; a score that is not a number stops either after the
// entry that holds it, and the stats count the same entries.
TEST(TopKSelectTest, AStringScoreStopsTheCountAtItsEntryWhateverTheBudget) {
  auto graph = Graph::OpenInMemory().value();
  WriteBatch b;
  const NewVertex hub = b.AddVertex("H");
  const NewVertex other = b.AddVertex("V");
  for (int i = 0; i < 10; ++i) {
    if (i == 3) {
      b.AddEdge("E", hub, other, {{"w", std::string("three")}});
    } else {
      b.AddEdge("E", hub, other, {{"w", static_cast<double>(i)}});
    }
  }
  const CommitInfo info = graph->Write(std::move(b)).value();
  const Snapshot snap = graph->GetSnapshot();
  TraversalContext ctx;
  const CancellationToken token;
  struct Case {
    const char* name;
    Budget budget;
    StatusCode code;
    std::uint64_t examined;
  };
  const Case cases[] = {
      {"no budget", {}, StatusCode::kInvalidArgument, 4},
      {"room for the group", {.max_edges = 10}, StatusCode::kInvalidArgument, 4},
      {"a budget ending past the string", {.max_edges = 5}, StatusCode::kInvalidArgument, 4},
      {"a budget ending before it", {.max_edges = 3}, StatusCode::kResourceExhausted, 3},
      {"a deadline",
       {.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1)},
       StatusCode::kInvalidArgument,
       4},
      {"a token", {.cancel = &token}, StatusCode::kInvalidArgument, 4},
  };
  std::vector<Neighbor> got;
  TraversalStats stats;
  auto top_k = [&](const Snapshot& at, const Case& c) {
    TopKSpec spec{.key = "w", .k = 20};
    spec.budget = c.budget;
    return TopKNeighbors(at, info.vertices[0], spec, ctx, &got, &stats);
  };
  for (const Case& c : cases) {
    const Status s = top_k(snap, c);
    EXPECT_EQ(s.code(), c.code) << c.name << ": " << s.ToString();
    EXPECT_EQ(stats.edges_examined, c.examined) << c.name;
  }
  // With the string gone, every entry is counted and all ten rank.
  WriteBatch fix;
  fix.SetProperty(EdgeRef(info.edges[3]), "w", 3.0);
  ASSERT_TRUE(graph->Write(std::move(fix)).ok());
  const Snapshot fixed = graph->GetSnapshot();
  for (const Case& c : cases) {
    const Status s = top_k(fixed, c);
    const bool cut = c.budget.max_edges < 10;
    EXPECT_EQ(s.ok(), !cut) << c.name;
    EXPECT_EQ(stats.edges_examined, cut ? c.budget.max_edges : 10) << c.name;
    EXPECT_EQ(got.size(), cut ? c.budget.max_edges : 10) << c.name;
  }
}

}  // namespace
}  // namespace quiver
