#include "graphs.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <thread>

#include "timing.h"
#include "utilisation.h"

namespace quiver::capacity {
namespace {

// A fixed bijection of [0, n) for n < 2^32: r -> (r * a + b) mod n with gcd(a, n) = 1.
class AffinePermutation {
 public:
  AffinePermutation(std::uint64_t n, std::uint64_t a, std::uint64_t b) : n_(n), b_(b % n) {
    a %= n;
    if (a == 0) a = 1;
    while (std::gcd(a, n) != 1) a = (a + 1) % n == 0 ? 1 : a + 1;
    a_ = a;
  }
  std::uint64_t operator()(std::uint64_t r) const {
    return (r * a_ + b_) % n_;  // r, a_ < n_ < 2^32: no overflow
  }

 private:
  std::uint64_t n_;
  std::uint64_t a_ = 1;
  std::uint64_t b_;
};

// Rank in [0, n) with probability ~ 1/(rank + 1): log-uniform over [1, n + 1).
std::uint64_t ZipfRank(Rng& rng, double log_n1, std::uint64_t n) {
  const auto r = static_cast<std::uint64_t>(std::exp(rng.Unit() * log_n1)) - 1;
  return std::min(r, n - 1);
}

}  // namespace

std::string Shape::label() const {
  std::string s = std::to_string(vertices) + "x" + std::to_string(out_degree);
  if (targets == Targets::kPowerLaw) s += "-power-law";
  return s;
}

Json Shape::ToJson() const {
  Json j;
  j["label"] = label();
  j["vertices"] = vertices;
  j["outDegree"] = out_degree;
  j["edges"] = edges();
  j["targets"] = targets == Targets::kUniform ? "uniform" : "power-law";
  return j;
}

void AddShapeEdges(Graph& graph, const Shape& shape, VertexId first) {
  const std::uint64_t n = shape.vertices;
  const std::uint64_t base = first.value();
  Rng rng(kSeed ^ (n * 131 + shape.out_degree));
  if (shape.targets == Targets::kUniform) {
    const std::uint64_t d = shape.out_degree;
    AddEdges(graph, shape.edges(),
             [&](std::uint64_t i) { return std::pair(base + i / d, base + rng.Uniform(n)); });
    return;
  }
  const double log_n1 = std::log(static_cast<double>(n) + 1);
  const AffinePermutation sources(n, 0x9E3779B97F4A7C15ULL, 12345);
  const AffinePermutation targets(n, 0xC2B2AE3D27D4EB4FULL, 67890);
  AddEdges(graph, shape.edges(), [&](std::uint64_t) {
    const std::uint64_t s = sources(ZipfRank(rng, log_n1, n));
    const std::uint64_t t = targets(ZipfRank(rng, log_n1, n));
    return std::pair(base + s, base + t);
  });
}

Options BenchOptions() {
  Options o;
  o.compaction.after_changes = 0;
  return o;
}

BuiltGraph BuildVolatile(const Shape& shape) {
  BuiltGraph b;
  b.graph = ValueOrDie(Graph::OpenInMemory(BenchOptions()), "OpenInMemory");
  std::uint64_t t0 = NowNs();
  b.first = AddVertices(*b.graph, shape.vertices);
  b.vertex_seconds = SecondsSince(t0);
  t0 = NowNs();
  AddShapeEdges(*b.graph, shape, b.first);
  b.edge_seconds = SecondsSince(t0);
  return b;
}

Csr BuildCsr(const Snapshot& snapshot, VertexId first, std::uint64_t n) {
  Csr csr;
  csr.first = first.value();
  csr.offsets.resize(n + 1);
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    csr.offsets[i] = total;
    total += snapshot.OutDegree(VertexId(csr.first + i));
  }
  csr.offsets[n] = total;
  csr.neighbours.resize(total);
  std::uint64_t k = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    for (const EdgeGroup& g : snapshot.OutEdges(VertexId(csr.first + i)))
      for (const EdgeEntry& e : g.entries) csr.neighbours[k++] = e.neighbor().value();
  }
  return csr;
}

std::uint64_t ParallelSum(std::uint64_t n, int threads,
                          const std::function<std::uint64_t(std::uint64_t, std::uint64_t)>& fn,
                          std::vector<std::uint64_t>* cpu_ns) {
  const std::uint64_t chunk =
      std::max<std::uint64_t>(256, n / (static_cast<std::uint64_t>(std::max(threads, 1)) * 16));
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> total{0};
  if (cpu_ns != nullptr) cpu_ns->resize(static_cast<std::size_t>(std::max(threads, 1)));
  auto worker = [&](int slot) {
    const std::uint64_t cpu0 = cpu_ns != nullptr ? ThreadCpuNs() : 0;
    std::uint64_t sum = 0;
    for (;;) {
      const std::uint64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) break;
      sum += fn(begin, std::min(n, begin + chunk));
    }
    total.fetch_add(sum, std::memory_order_relaxed);
    // Each slot is written by its own thread only; join() orders it before the caller reads it.
    if (cpu_ns != nullptr) (*cpu_ns)[static_cast<std::size_t>(slot)] += ThreadCpuNs() - cpu0;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : pool) t.join();
  return total.load();
}

std::uint64_t SweepQuiver(const Snapshot& snapshot, VertexId first, std::uint64_t n, int threads,
                          std::vector<std::uint64_t>* cpu_ns) {
  const std::uint64_t base = first.value();
  // Snapshot::ScanEdges: the bulk path, which walks storage leaf by leaf and
  // prefetches each batch of edge arrays before handing it out.
  return ParallelSum(
      n, threads,
      [&](std::uint64_t begin, std::uint64_t end) {
        std::uint64_t sum = 0;
        snapshot.ScanEdges(base + begin, base + end, Direction::kOut, [&sum](VertexId, const EdgeGroup& g) {
          for (const EdgeEntry& e : g.entries) sum += e.neighbor().value();
        });
        return sum;
      },
      cpu_ns);
}

std::uint64_t SweepCsr(const Csr& csr, int threads) {
  const std::uint64_t n = csr.offsets.size() - 1;
  const std::uint64_t* offsets = csr.offsets.data();
  const std::uint64_t* neighbours = csr.neighbours.data();
  return ParallelSum(n, threads, [&](std::uint64_t begin, std::uint64_t end) {
    std::uint64_t sum = 0;
    for (std::uint64_t i = begin; i < end; ++i)
      for (std::uint64_t k = offsets[i]; k < offsets[i + 1]; ++k) sum += neighbours[k];
    return sum;
  });
}

}  // namespace quiver::capacity
