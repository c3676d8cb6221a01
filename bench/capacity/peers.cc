#include "peers.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "graphs.h"
#include "timing.h"

#ifdef QUIVER_BENCH_HAVE_BOOST_GRAPH
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dijkstra_shortest_paths_no_color_map.hpp>
#include <boost/graph/incremental_components.hpp>
#include <boost/graph/page_rank.hpp>
#include <boost/pending/disjoint_sets.hpp>
#include <boost/property_map/property_map.hpp>
#endif
#ifdef QUIVER_BENCH_HAVE_IGRAPH
#include <igraph.h>
#endif

namespace quiver::capacity {
namespace {

constexpr std::int64_t kUnreached = std::numeric_limits<std::int64_t>::max();

// The median of `repeats` timed calls of fn.
template <typename Fn>
double MedianSeconds(int repeats, Fn&& fn) {
  std::vector<double> s;
  for (int i = 0; i < repeats; ++i) {
    const std::uint64_t t0 = NowNs();
    fn();
    s.push_back(SecondsSince(t0));
  }
  return QuantileD(s, 0.5);
}

// Dies unless `labels` partitions the vertices exactly as `want` does.
template <typename Label>
void CheckPartition(const std::vector<Label>& labels, const std::vector<std::uint32_t>& want,
                    const char* who) {
  std::vector<std::uint64_t> seen(want.size(), ~std::uint64_t{0});
  std::vector<std::uint64_t> back(want.size(), ~std::uint64_t{0});
  for (std::size_t v = 0; v < want.size(); ++v) {
    const auto l = static_cast<std::uint64_t>(labels[v]);
    if (l >= want.size()) Die(who, InternalError("a component label is out of range"));
    if (seen[l] == ~std::uint64_t{0}) seen[l] = want[v];
    if (back[want[v]] == ~std::uint64_t{0}) back[want[v]] = l;
    if (seen[l] != want[v] || back[want[v]] != l)
      Die(who, InternalError("its components differ from the raw CSR's"));
  }
}

[[maybe_unused]] PeerTime Missing(const char* library, const char* function, const char* why) {
  return PeerTime{library, function, std::nullopt, why, ""};
}

}  // namespace

#ifdef QUIVER_BENCH_HAVE_BOOST_GRAPH
struct Peers::Boost {
  struct EdgeWeight {
    double w;
  };
  using Graph = boost::compressed_sparse_row_graph<boost::bidirectionalS, boost::no_property, EdgeWeight,
                                                   boost::no_property, std::uint32_t, std::uint32_t>;
  Graph graph;
  explicit Boost(const RawGraph& g) : graph(Make(g)) {}
  static Graph Make(const RawGraph& g) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    std::vector<EdgeWeight> weights;
    edges.reserve(g.out.targets.size());
    weights.reserve(g.out.targets.size());
    for (std::uint32_t v = 0; v < g.n; ++v) {
      const auto t = g.out.Neighbors(v);
      const auto w = g.out.Weights(v);
      for (std::size_t i = 0; i < t.size(); ++i) {
        edges.emplace_back(v, t[i]);
        weights.push_back(EdgeWeight{w[i]});
      }
    }
    return Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), weights.begin(), g.n);
  }
};
#else
struct Peers::Boost {};
#endif

#ifdef QUIVER_BENCH_HAVE_IGRAPH
struct Peers::Igraph {
  igraph_t graph;
  explicit Igraph(const RawGraph& g) {
    igraph_vector_int_t edges;
    if (igraph_vector_int_init(&edges, static_cast<igraph_integer_t>(2 * g.out.targets.size())) !=
        IGRAPH_SUCCESS)
      Die("igraph", InternalError("igraph_vector_int_init failed"));
    igraph_integer_t k = 0;
    for (std::uint32_t v = 0; v < g.n; ++v) {
      for (std::uint32_t t : g.out.Neighbors(v)) {
        VECTOR(edges)[k++] = v;
        VECTOR(edges)[k++] = t;
      }
    }
    if (igraph_create(&graph, &edges, g.n, IGRAPH_DIRECTED) != IGRAPH_SUCCESS)
      Die("igraph", InternalError("igraph_create failed"));
    igraph_vector_int_destroy(&edges);
  }
  ~Igraph() { igraph_destroy(&graph); }
};
#else
struct Peers::Igraph {};
#endif

Peers::Peers(const RawGraph& g) : g_(g) {
#ifdef QUIVER_BENCH_HAVE_BOOST_GRAPH
  boost_ = std::make_unique<Boost>(g);
#endif
#ifdef QUIVER_BENCH_HAVE_IGRAPH
  igraph_set_error_handler(igraph_error_handler_printignore);
  igraph_ = std::make_unique<Igraph>(g);
#endif
}

Peers::~Peers() = default;

std::vector<PeerTime> Peers::Run(PeerKernel kernel, int iterations, std::uint32_t source, int repeats) {
  std::vector<PeerTime> out;
  const RawGraph& g = g_;
  [[maybe_unused]] static constexpr const char* kNoBoost =
      "not measured (Boost.Graph headers were not found when quiver-bench was built; "
      "scripts/install-deps.sh installs libboost-graph-dev)";
  [[maybe_unused]] static constexpr const char* kNoIgraph =
      "not measured (igraph was not found when quiver-bench was built; "
      "scripts/install-deps.sh installs libigraph-dev)";
  (void)g;
  (void)source;
  (void)iterations;
  (void)repeats;
  switch (kernel) {
    case PeerKernel::kPageRank: {
#ifdef QUIVER_BENCH_HAVE_BOOST_GRAPH
      std::vector<double> rank(g.n), rank2(g.n);
      const auto& bg = boost_->graph;
      const auto index = boost::get(boost::vertex_index, bg);
      const double s = MedianSeconds(repeats, [&] {
        boost::graph::page_rank(bg, boost::make_iterator_property_map(rank.begin(), index),
                                boost::graph::n_iterations(static_cast<std::size_t>(iterations)), 0.85, g.n,
                                boost::make_iterator_property_map(rank2.begin(), index));
      });
      out.push_back(PeerTime{"boostGraph", "boost::graph::page_rank (n_iterations)", s, "",
                             "spreads no sink mass and adds (1 - d) rather than (1 - d) / V per vertex"});
#else
      out.push_back(Missing("boostGraph", "boost::graph::page_rank (n_iterations)", kNoBoost));
#endif
      break;
    }
    case PeerKernel::kBfs: {
      const std::vector<std::int64_t> want = RawBfs(g, source, 1);
#ifdef QUIVER_BENCH_HAVE_BOOST_GRAPH
      {
        const auto& bg = boost_->graph;
        std::vector<std::int64_t> dist(g.n);
        const double s = MedianSeconds(repeats, [&] {
          std::fill(dist.begin(), dist.end(), kUnreached);
          dist[source] = 0;
          auto dmap = boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, bg));
          boost::breadth_first_search(
              bg, source,
              boost::visitor(boost::make_bfs_visitor(boost::record_distances(dmap, boost::on_tree_edge()))));
        });
        if (dist != want) Die("Boost.Graph BFS", InternalError("its depths differ from the raw CSR's"));
        out.push_back(PeerTime{"boostGraph", "boost::breadth_first_search (record_distances)", s, "", ""});
      }
#else
      out.push_back(Missing("boostGraph", "boost::breadth_first_search (record_distances)", kNoBoost));
#endif
#ifdef QUIVER_BENCH_HAVE_IGRAPH
      {
        igraph_vector_int_t order, layers;
        igraph_vector_int_init(&order, 0);
        igraph_vector_int_init(&layers, 0);
        bool ok = true;
        const double s = MedianSeconds(repeats, [&] {
          ok &= igraph_bfs_simple(&igraph_->graph, source, IGRAPH_OUT, &order, &layers, nullptr) ==
                IGRAPH_SUCCESS;
        });
        std::int64_t reached = 0, deepest = 0;
        for (std::int64_t d : want) {
          if (d == kUnreached) continue;
          ++reached;
          deepest = std::max(deepest, d);
        }
        if (!ok || igraph_vector_int_size(&order) != reached ||
            igraph_vector_int_size(&layers) != deepest + 2)
          Die("igraph BFS", InternalError("it reached other vertices or levels than the raw CSR BFS"));
        igraph_vector_int_destroy(&order);
        igraph_vector_int_destroy(&layers);
        out.push_back(PeerTime{"igraph", "igraph_bfs_simple (IGRAPH_OUT)", s, "", ""});
      }
#else
      out.push_back(Missing("igraph", "igraph_bfs_simple (IGRAPH_OUT)", kNoIgraph));
#endif
      break;
    }
    case PeerKernel::kWcc: {
      const std::vector<std::uint32_t> want = RawWcc(g, 1);
#ifdef QUIVER_BENCH_HAVE_BOOST_GRAPH
      {
        const auto& bg = boost_->graph;
        std::vector<std::uint32_t> rank(g.n), parent(g.n);
        const auto id = boost::typed_identity_property_map<std::uint32_t>();
        auto rank_map = boost::make_iterator_property_map(rank.begin(), id);
        auto parent_map = boost::make_iterator_property_map(parent.begin(), id);
        boost::disjoint_sets<decltype(rank_map), decltype(parent_map)> ds(rank_map, parent_map);
        const double s = MedianSeconds(repeats, [&] {
          boost::initialize_incremental_components(bg, ds);
          boost::incremental_components(bg, ds);
        });
        std::vector<std::uint32_t> label(g.n);
        for (std::uint32_t v = 0; v < g.n; ++v) label[v] = ds.find_set(v);
        CheckPartition(label, want, "Boost.Graph WCC");
        out.push_back(
            PeerTime{"boostGraph", "boost::incremental_components (disjoint_sets)", s, "",
                     "boost::connected_components needs an undirected graph; incremental_components "
                     "is its union-find over a directed one"});
      }
#else
      out.push_back(Missing("boostGraph", "boost::incremental_components (disjoint_sets)", kNoBoost));
#endif
#ifdef QUIVER_BENCH_HAVE_IGRAPH
      {
        igraph_vector_int_t membership;
        igraph_vector_int_init(&membership, 0);
        igraph_integer_t count = 0;
        bool ok = true;
        const double s = MedianSeconds(repeats, [&] {
          ok &= igraph_connected_components(&igraph_->graph, &membership, nullptr, &count, IGRAPH_WEAK) ==
                IGRAPH_SUCCESS;
        });
        if (!ok) Die("igraph WCC", InternalError("igraph_connected_components failed"));
        std::vector<igraph_integer_t> label(VECTOR(membership), VECTOR(membership) + g.n);
        CheckPartition(label, want, "igraph WCC");
        igraph_vector_int_destroy(&membership);
        out.push_back(PeerTime{"igraph", "igraph_connected_components (IGRAPH_WEAK)", s, "", ""});
      }
#else
      out.push_back(Missing("igraph", "igraph_connected_components (IGRAPH_WEAK)", kNoIgraph));
#endif
      break;
    }
    case PeerKernel::kLcc: {
#ifdef QUIVER_BENCH_HAVE_IGRAPH
      igraph_vector_t result;
      igraph_vector_init(&result, 0);
      bool ok = true;
      const double s = MedianSeconds(repeats, [&] {
        ok &= igraph_transitivity_local_undirected(&igraph_->graph, &result, igraph_vss_all(),
                                                   IGRAPH_TRANSITIVITY_ZERO) == IGRAPH_SUCCESS;
      });
      igraph_vector_destroy(&result);
      if (!ok) Die("igraph LCC", InternalError("igraph_transitivity_local_undirected failed"));
      out.push_back(PeerTime{"igraph", "igraph_transitivity_local_undirected", s, "",
                             "reads the graph as undirected, where Graphalytics LCC counts directed links"});
#else
      out.push_back(Missing("igraph", "igraph_transitivity_local_undirected", kNoIgraph));
#endif
      break;
    }
    case PeerKernel::kSssp: {
#ifdef QUIVER_BENCH_HAVE_BOOST_GRAPH
      const std::vector<double> want = RawSssp(g, source, 1);
      const auto& bg = boost_->graph;
      std::vector<double> dist(g.n);
      const double s = MedianSeconds(repeats, [&] {
        boost::dijkstra_shortest_paths_no_color_map(
            bg, source,
            boost::distance_map(
                boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, bg)))
                .weight_map(boost::get(&Boost::EdgeWeight::w, bg))
                .distance_inf(std::numeric_limits<double>::infinity()));
      });
      if (dist != want) Die("Boost.Graph SSSP", InternalError("its distances differ from the raw CSR's"));
      out.push_back(PeerTime{"boostGraph", "boost::dijkstra_shortest_paths_no_color_map", s, "", ""});
#else
      out.push_back(Missing("boostGraph", "boost::dijkstra_shortest_paths_no_color_map", kNoBoost));
#endif
      break;
    }
  }
  return out;
}

}  // namespace quiver::capacity
