// What the path searches share: argument checks, the forward Dijkstra that
// Yen's spur searches and AllShortestPaths run, and path assembly.
#ifndef QUIVER_TRAVERSAL_PATHS_H_
#define QUIVER_TRAVERSAL_PATHS_H_

#include <cstdint>
#include <vector>

#include "quiver/traversal.h"
#include "traversal/context.h"

namespace quiver::traversal {

// Checks a path call's arguments (snapshot, budget, both ends live,
// default_weight), resolves its edge types into m.types and its weight into
// *rule, and returns the view to search.
Result<GraphView> Prepare(const Snapshot& snap, const PathSpec& spec, VertexId source, VertexId target,
                          TraversalContext::Impl& m, WeightRule* rule);

// The path through `meet`: side 0's parents back to the source, side 1's on
// to the target (side 1 may be unmarked: then meet is the target).
void BuildPath(const GraphView& view, const TraversalContext::Impl& m, std::uint64_t meet, Path* path);

// Sets path->cost to the sum of its edges' weights, in path order.
Status PathCost(const GraphView& view, const WeightRule& rule, Path* path);

// Dijkstra on side 0 from `s` along spec.direction, skipping vertices
// m.Banned() and edges in m.banned_edges (if `use_bans`). Stops once `t` is
// settled, or, with `settle_ties`, once every vertex no farther than `t` is.
// Returns whether `t` was reached; false also on a budget stop or a bad
// weight (in *error). Starts a new generation. Distances start at `start`
// at `s`: Yen's spur searches start at their root path's cost, so that each
// distance is the sum PathCost makes of the whole path (from the source, in
// path order), and the path chosen is the cheapest by the cost reported.
bool ForwardDijkstra(const GraphView& view, const PathSpec& spec, const WeightRule& rule,
                     TraversalContext::Impl& m, BudgetClock& clock, std::uint64_t s, std::uint64_t t,
                     bool use_bans, bool settle_ties, Status* error, double start = 0);

}  // namespace quiver::traversal

#endif  // QUIVER_TRAVERSAL_PATHS_H_
