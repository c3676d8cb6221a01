// PageRank, personalised PageRank, CDLP and LCC: kernels that compute each
// vertex's value from its neighbours'.
//
// Determinism: every value is computed by one worker from its neighbours in
// the projection's fixed (sorted) order, and the one global sum (the sink
// mass of PageRank) is reduced per fixed block of kBlock vertices, then over
// the blocks in index order. Neither order depends on the thread count, so
// the doubles are bit-identical on every thread count.
#include <algorithm>
#include <cmath>
#include <functional>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analytics/lcc.h"
#include "analytics/parallel_loop.h"
#include "base/small_sort.h"
#include "quiver/analytics.h"

namespace quiver {

using analytics::kBlock;
using analytics::KernelCancelled;
using analytics::ParallelBlocks;
using analytics::Step;
using analytics::ThreadsFor;

namespace {

// Lcc's answer to running out of memory, built before main: making it must
// not allocate.
const Status& LccOutOfMemory() {
  static const Status* const s =
      new Status(internal::ImmortalStatus(StatusCode::kResourceExhausted, "Lcc: out of memory"));
  return *s;
}
[[maybe_unused]] const bool lcc_out_of_memory_built = (LccOutOfMemory(), true);

// Out-degrees, counted from the in adjacency when the out one was not built.
std::vector<std::uint64_t> OutDegrees(const Projection& p) {
  std::vector<std::uint64_t> deg(p.vertex_count(), 0);
  for (std::uint32_t v = 0; v < p.vertex_count(); ++v) {
    if (p.has_out()) {
      deg[v] = p.OutDegree(v);
    } else {
      for (std::uint32_t u : p.InNeighbors(v)) ++deg[u];
    }
  }
  return deg;
}

// The shared PageRank iteration. `teleport` is null for the uniform 1/V
// distribution, else the (normalised) personalisation vector; it also
// receives the sink mass and is the start vector.
Result<std::vector<double>> RankIterations(const Projection& p, const std::vector<double>* teleport,
                                           const PageRankOptions& options, const RunOptions& run) {
  const char* name = teleport ? "PersonalizedPageRank" : "PageRank";
  if (!p.has_in())
    return FailedPreconditionError(std::string(name) +
                                   ": the projection has no in adjacency (ProjectionSpec::in)");
  if (!(options.damping >= 0.0 && options.damping <= 1.0))
    return InvalidArgumentError(std::string(name) + ": damping must be in [0, 1]");
  const std::uint32_t n = p.vertex_count();
  const unsigned threads = ThreadsFor(run);
  const double d = options.damping;
  const std::vector<std::uint64_t> outdeg = OutDegrees(p);
  std::vector<double> rank = teleport ? *teleport : std::vector<double>(n, n ? 1.0 / n : 0.0);
  std::vector<double> next(n), contrib(n);
  std::vector<double> block_sink((n + kBlock - 1) / kBlock);
  for (std::uint32_t it = 0; it < options.iterations; ++it) {
    if (!Step(run, "pagerank iteration", it, options.iterations)) return KernelCancelled(name);
    bool ok = ParallelBlocks(run, threads, n, "pagerank contributions",
                             [&](unsigned, std::uint64_t b, std::uint64_t begin, std::uint64_t end) {
                               double sink = 0;
                               for (std::uint64_t v = begin; v < end; ++v) {
                                 if (outdeg[v] == 0) sink += rank[v];
                                 contrib[v] = outdeg[v] ? rank[v] / static_cast<double>(outdeg[v]) : 0.0;
                               }
                               block_sink[b] = sink;
                             });
    if (!ok) return KernelCancelled(name);
    double sink = 0;
    for (double s : block_sink) sink += s;
    const double uniform = n ? ((1.0 - d) + d * sink) / n : 0.0;
    ok = ParallelBlocks(run, threads, n, "pagerank pull",
                        [&](unsigned, std::uint64_t, std::uint64_t begin, std::uint64_t end) {
                          for (std::uint64_t v = begin; v < end; ++v) {
                            double sum = 0;
                            for (std::uint32_t u : p.InNeighbors(static_cast<std::uint32_t>(v)))
                              sum += contrib[u];
                            next[v] = teleport ? ((1.0 - d) + d * sink) * (*teleport)[v] + d * sum
                                               : uniform + d * sum;
                          }
                        });
    if (!ok) return KernelCancelled(name);
    rank.swap(next);
  }
  return rank;
}

}  // namespace

Result<std::vector<double>> PageRank(const Projection& p, const PageRankOptions& options,
                                     const RunOptions& run) {
  return RankIterations(p, nullptr, options, run);
}

Result<std::vector<double>> PersonalizedPageRank(const Projection& p,
                                                 std::span<const std::pair<VertexId, double>> seeds,
                                                 const PageRankOptions& options, const RunOptions& run) {
  if (seeds.empty()) return InvalidArgumentError("PersonalizedPageRank: no seeds");
  std::vector<double> teleport(p.vertex_count(), 0.0);
  double max = 0;
  for (const auto& [v, w] : seeds) {
    if (!std::isfinite(w) || w < 0)
      return InvalidArgumentError("PersonalizedPageRank: seed " + std::to_string(v.value()) +
                                  " has a negative, NaN or infinite weight");
    if (!p.ToDense(v))
      return NotFoundError("PersonalizedPageRank: seed " + std::to_string(v.value()) +
                           " is not in the projection");
    max = std::max(max, w);
  }
  if (!(max > 0)) return InvalidArgumentError("PersonalizedPageRank: the seed weights sum to 0");
  // Finite weights can sum to infinity (two of 1e308): scaled by the largest
  // first, each is at most 1 and the sum at most the number of seeds.
  double total = 0;
  for (const auto& [v, w] : seeds) {
    teleport[*p.ToDense(v)] += w / max;
    total += w / max;
  }
  for (double& t : teleport) t /= total;
  return RankIterations(p, &teleport, options, run);
}

Result<std::vector<VertexId>> Cdlp(const Projection& p, std::uint32_t iterations, const RunOptions& run) {
  if (!p.has_out() || !p.has_in())
    return FailedPreconditionError("Cdlp: the projection needs out and in adjacency");
  const std::uint32_t n = p.vertex_count();
  const unsigned threads = ThreadsFor(run);
  // Labels are dense ids: dense order is VertexId order, so "smallest label"
  // means the same in both, and the result maps back at the end.
  std::vector<std::uint32_t> label(n), next(n);
  for (std::uint32_t v = 0; v < n; ++v) label[v] = v;
  std::vector<std::vector<std::uint32_t>> scratch(threads);
  for (std::uint32_t it = 0; it < iterations; ++it) {
    if (!Step(run, "cdlp iteration", it, iterations)) return KernelCancelled("Cdlp");
    const bool ok = ParallelBlocks(
        run, threads, n, "cdlp", [&](unsigned w, std::uint64_t, std::uint64_t begin, std::uint64_t end) {
          std::vector<std::uint32_t>& seen = scratch[w];
          const std::uint32_t* const labels = label.data();
          for (std::uint64_t i = begin; i < end; ++i) {
            const auto v = static_cast<std::uint32_t>(i);
            // Sized once and filled through plain pointers: with push_back
            // each label load waited behind a reload of the vector's end
            // (the store might have changed it), so fewer loads overlapped.
            const std::span<const std::uint32_t> out = p.OutNeighbors(v);
            const std::span<const std::uint32_t> in =
                p.undirected() ? std::span<const std::uint32_t>() : p.InNeighbors(v);
            if (out.empty() && in.empty()) {
              next[v] = labels[v];
              continue;
            }
            seen.resize(out.size() + in.size());
            std::uint32_t* at = seen.data();
            for (std::uint32_t u : out) *at++ = labels[u];
            for (std::uint32_t u : in) *at++ = labels[u];
            // Up to 32 labels by a sorting network (base/small_sort.h):
            // std::sort of a vertex's labels was nearly all of CDLP's time.
            base::SortU32(seen.data(), seen.size());
            std::uint32_t best = seen[0];
            std::size_t best_count = 0;
            for (std::size_t j = 0; j < seen.size();) {
              std::size_t k = j;
              while (k < seen.size() && seen[k] == seen[j]) ++k;
              if (k - j > best_count) {  // strictly more: ties keep the smaller label
                best_count = k - j;
                best = seen[j];
              }
              j = k;
            }
            next[v] = best;
          }
        });
    if (!ok) return KernelCancelled("Cdlp");
    label.swap(next);
  }
  std::vector<VertexId> out(n);
  for (std::uint32_t v = 0; v < n; ++v) out[v] = p.ToVertexId(label[v]);
  return out;
}

Result<std::vector<double>> Lcc(const Projection& p, const RunOptions& run) {
  if (!p.has_out() || !p.has_in())
    return FailedPreconditionError("Lcc: the projection needs out and in adjacency");
  // No more workers than blocks (ParallelBlocks runs no more): each costs
  // three bitmaps of the vertices.
  const auto threads = static_cast<unsigned>(std::min<std::uint64_t>(
      ThreadsFor(run), std::max<std::uint64_t>(1, (std::uint64_t{p.vertex_count()} + kBlock - 1) / kBlock)));
  auto for_blocks = [&](std::string_view phase, std::uint64_t n,
                        const std::function<void(unsigned, std::uint64_t, std::uint64_t)>& fn) {
    return ParallelBlocks(run, threads, n, phase,
                          [&](unsigned w, std::uint64_t, std::uint64_t b, std::uint64_t e) { fn(w, b, e); });
  };
  std::vector<double> lcc;
  try {
    if (!analytics::LocalClustering(p, p.undirected(), threads, for_blocks, &lcc))
      return KernelCancelled("Lcc");
  } catch (const std::bad_alloc&) {
    return LccOutOfMemory();
  }
  return lcc;
}

}  // namespace quiver
