// Single-source shortest paths by parallel delta-stepping (Meyer and Sanders,
// J. Algorithms 2003), in the shape of the GAP benchmark suite's kernel:
// vertices wait in bins of width delta by tentative distance; a round expands
// the lowest non-empty bin from a shared frontier, each worker pushing what it
// improves into bins of its own; a worker then keeps expanding its own copy
// of the current bin while that stays small, and the workers agree on the
// next bin at a barrier.
//
// It is a template over the graph so that quiver::Sssp (on a Projection) and
// the capacity bench's raw CSR ceiling run the same code: Graph provides
// `std::uint32_t vertex_count()`, `std::uint64_t edge_count()` and
// `OutNeighbors(v)` / `OutWeights(v)` spans (weights finite and >= 0).
//
// Why the answer is exact and the same on every thread count: the distance
// of a path is its weights summed from the source in path order, each sum
// rounded; that is monotone in each prefix, so the least such sum over all
// paths is a fixed point every label-correcting order reaches, Dijkstra's
// included. A vertex is re-pushed whenever its distance drops, and expanded
// with its distance of the moment, so every vertex is expanded at its final
// distance; `expanded` (the distance it was last expanded at) only skips
// repeats, never a needed expansion. Bins order the work and nothing else, so
// the floating-point rounding of a bin index cannot change an answer.
//
// Memory: 16 bytes per vertex (distance, last-expanded distance); per worker a
// ring of 4,096 bins (96 KiB empty); and the entries waiting in bins, one per
// distance decrease (4 bytes in the window, 16 past it), bins keeping their
// capacity while the run lasts. On graphs whose weights are spread evenly a
// vertex's distance drops about twice (2.0 per vertex on 200,000 x 10
// uniform); a distance can drop once per path reaching it in the worst case.
//
// Thread safety: runs its own threads; the graph must not change meanwhile.
#ifndef QUIVER_ANALYTICS_DELTA_STEPPING_H_
#define QUIVER_ANALYTICS_DELTA_STEPPING_H_

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <new>
#include <optional>
#include <thread>
#include <vector>

namespace quiver::analytics {

enum class DeltaSteppingEnd { kDone, kCancelled, kOutOfMemory };

// What a run did, for tests and tuning.
struct DeltaSteppingStats {
  std::uint64_t rounds = 0;        // barrier rounds (bins taken through the shared frontier)
  std::uint64_t window_moves = 0;  // rebases: every bin of the window was empty
  std::uint64_t waited = 0;        // entries put past the window
  std::uint64_t unwaited = 0;      // entries taken back from past the window (each at most once)
  // Waiting entries read while the window moves (taken back or left): each
  // move reads what it takes back plus at most three more per worker, so
  // this stays near `unwaited` unless a move rescans what it leaves.
  std::uint64_t overflow_reads = 0;
};

// The bin width: the mean weight (from at most 4,096 evenly spaced entries)
// over the mean out-degree, so a bin holds about one hop's worth of edges.
// When that is not a positive finite number (the sample saw only zeros, or
// the division overflowed), the largest weight over the mean degree (at most
// the largest double), and 1 when every weight is 0.
template <class Graph>
double DeltaFor(const Graph& g) {
  const std::uint64_t entries = g.edge_count();
  if (g.vertex_count() == 0 || entries == 0) return 1.0;
  const double* weights = g.OutWeights(0).data();  // every entry's weight, contiguous
  const double degree = static_cast<double>(entries) / static_cast<double>(g.vertex_count());
  const std::uint64_t step = std::max<std::uint64_t>(1, entries / 4096);
  double mean = 0;
  std::uint64_t taken = 0;
  for (std::uint64_t i = 0; i < entries; i += step) ++taken;
  for (std::uint64_t i = 0; i < entries; i += step) mean += weights[i] / static_cast<double>(taken);
  if (const double delta = mean / degree; std::isfinite(delta) && delta > 0) return delta;
  double largest = 0;
  for (std::uint64_t i = 0; i < entries; ++i) largest = std::max(largest, weights[i]);
  const double delta = std::min(largest / degree, std::numeric_limits<double>::max());
  return delta > 0 ? delta : 1.0;
}

// Fills *dist (resized to vertex_count(); +infinity where unreachable) from
// `source` on `threads` threads (at most one per 1,024 vertices; a thread
// that cannot be started is done without). On the calling thread, once a
// round and every 4,096 expansions of a worker, `progress` (may be empty) is
// called with the expansions counted so far and `stop` polled: true ends the
// run as kCancelled, every worker stopping within 4,096 expansions. Out of
// memory ends as kOutOfMemory; an exception a callback throws is rethrown
// once every thread has stopped.
template <class Graph>
DeltaSteppingEnd DeltaStepping(const Graph& g, std::uint32_t source, unsigned threads,
                               const std::function<bool()>& stop,
                               const std::function<void(std::uint64_t)>& progress, std::vector<double>* dist,
                               DeltaSteppingStats* stats = nullptr) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // Bins [base, base + kWindow) live in each worker's ring; later ones wait
  // in its overflow list until every bin of the window is empty.
  constexpr std::uint64_t kWindow = 4096;
  constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
  // Bins past this hold every larger distance together (worked through
  // label-correcting, in no order): an index never nears 2^64.
  constexpr std::uint64_t kMaxBin = std::uint64_t{1} << 62;
  // A worker goes on expanding its own lowest bins, without a barrier, while
  // the next holds fewer than kLocalBin entries (GAP's threshold, for the
  // current bin) and lies within kLocalAhead bins of the current one: a long
  // path of small bins (a chain, a road) then costs few rounds. Any order of
  // expansion gives the same answer; this bound keeps the wasted work small.
  constexpr std::size_t kLocalBin = 1000;
  constexpr std::uint64_t kLocalAhead = 1024;
  constexpr std::uint64_t kClaim = 64;        // frontier entries a worker claims at once
  constexpr std::uint64_t kPollEvery = 4096;  // expansions between two polls of `stop`

  const std::uint32_t n = g.vertex_count();
  std::vector<double> expanded;
  try {
    dist->assign(n, kInf);
    expanded.assign(n, kInf);
  } catch (const std::bad_alloc&) {
    return DeltaSteppingEnd::kOutOfMemory;
  }
  if (source >= n) return DeltaSteppingEnd::kDone;
  const double delta = DeltaFor(g);
  // No more workers than blocks of 1,024 vertices: a barrier a round costs
  // each of them, and a small graph has little to split.
  threads = static_cast<unsigned>(std::clamp<std::uint64_t>(threads, 1, (std::uint64_t{n} + 1023) / 1024));

  struct Worker {
    std::vector<std::vector<std::uint32_t>> ring;
    std::uint64_t occupied[kWindow / 64] = {};  // bit i: ring[i] is not empty
    // Entries of bins past the window, a min-heap by the bin they were
    // pushed for: a move of the window takes only what it covers.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> overflow;
    std::uint64_t offset = 0;  // where its part of the next frontier goes
    std::uint64_t waited = 0, unwaited = 0, reads = 0;
    // The waiting entry with the lowest bin (the overflow is not empty).
    const std::pair<std::uint64_t, std::uint32_t>& Front() {
      ++reads;
      return overflow.front();
    }
    void Wait(std::uint64_t b, std::uint32_t v) {
      ++waited;
      overflow.emplace_back(b, v);
      std::push_heap(overflow.begin(), overflow.end(), std::greater<>());
    }
    void Unwait() {
      ++unwaited;
      std::pop_heap(overflow.begin(), overflow.end(), std::greater<>());
      overflow.pop_back();
    }
    void Push(std::uint64_t b, std::uint32_t v) {
      ring[b % kWindow].push_back(v);
      occupied[(b % kWindow) / 64] |= std::uint64_t{1} << (b % 64);
    }
    void Clear(std::uint64_t b) {
      ring[b % kWindow].clear();
      occupied[(b % kWindow) / 64] &= ~(std::uint64_t{1} << (b % 64));
    }
    // The lowest non-empty bin, if any: bins below `cur` are all empty, so
    // the first set bit at or after cur's slot, going round, is it.
    std::uint64_t Lowest(std::uint64_t cur) const {
      const std::uint64_t start = cur % kWindow;
      for (std::uint64_t k = 0; k <= kWindow / 64; ++k) {
        const std::uint64_t word = (start / 64 + k) % (kWindow / 64);
        std::uint64_t bits = occupied[word];
        if (k == 0) bits &= ~std::uint64_t{0} << (start % 64);
        if (k == kWindow / 64) bits &= ~(~std::uint64_t{0} << (start % 64));
        if (bits != 0) {
          const std::uint64_t slot = word * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
          return cur + (slot + kWindow - start) % kWindow;
        }
      }
      return kNone;
    }
  };
  std::vector<Worker> workers;
  std::vector<std::uint32_t> frontier;
  try {
    workers.resize(threads);
    for (Worker& w : workers) w.ring.resize(kWindow);
    frontier.push_back(source);
  } catch (const std::bad_alloc&) {
    return DeltaSteppingEnd::kOutOfMemory;
  }
  (*dist)[source] = 0;

  // Shared between rounds; written by the barrier's completion (one thread,
  // all others waiting) or atomically.
  std::uint64_t base = 0, cur = 0, frontier_size = 1, rounds = 0, window_moves = 0;
  std::atomic<std::uint64_t> next_bin{kNone}, claim{0}, tail{0}, expansions{0};
  std::atomic<bool> any_overflow{false}, failed{false}, stop_requested{false};
  std::exception_ptr thrown;  // by a callback: rethrown on the calling thread
  bool done = false, cancelled = false, rebase = false;
  int phase = 0;  // which barrier of the round the completion closes

  double* d = dist->data();
  double* ex = expanded.data();
  auto dist_of = [&](std::uint32_t v) {
    return std::atomic_ref<double>(d[v]).load(std::memory_order_relaxed);
  };
  auto bin_of = [&](double x) -> std::uint64_t {
    const double q = x / delta;
    return q < static_cast<double>(kMaxBin) ? static_cast<std::uint64_t>(q) : kMaxBin;
  };
  auto stale = [&](std::uint32_t v) {  // v was expanded at its distance already
    return std::atomic_ref<double>(ex[v]).load(std::memory_order_relaxed) == dist_of(v);
  };
  // Expands u at its current distance unless it was already expanded at it.
  // kShared: other workers read and lower the same distances.
  auto expand = [&]<bool kShared>(Worker& w, std::uint32_t u) {
    const double du = kShared ? dist_of(u) : d[u];
    if constexpr (kShared) {
      // A load and a store, not an exchange: a locked instruction per vertex
      // would stall the loads behind it. Two workers may then both expand u
      // at du (wasted, harmless); none skips a distance nobody expands at,
      // since whoever stored du read it as u's distance and expands at it.
      std::atomic_ref<double> e(ex[u]);
      if (e.load(std::memory_order_relaxed) == du) return;
      e.store(du, std::memory_order_relaxed);
    } else {
      if (ex[u] == du) return;
      ex[u] = du;
    }
    const auto nbrs = g.OutNeighbors(u);
    const auto weights = g.OutWeights(u);
    for (std::size_t i = 0; i < nbrs.size(); ++i) {
      const double nd = du + weights[i];
      if constexpr (kShared) {
        std::atomic_ref<double> dv(d[nbrs[i]]);
        double old = dv.load(std::memory_order_relaxed);
        while (nd < old && !dv.compare_exchange_weak(old, nd, std::memory_order_relaxed)) {
        }
        if (!(nd < old)) continue;
      } else {
        if (!(nd < d[nbrs[i]])) continue;
        d[nbrs[i]] = nd;
      }
      const std::uint64_t b = std::max(cur, bin_of(nd));
      if (b < base + kWindow)
        w.Push(b, nbrs[i]);
      else
        w.Wait(b, nbrs[i]);
    }
  };
  const bool shared = threads > 1;
  auto expand_one = [&](Worker& w, std::uint32_t u) {
    if (shared)
      expand.template operator()<true>(w, u);
    else
      expand.template operator()<false>(w, u);
  };
  auto complete = [&]() noexcept {
    switch (phase) {
      case 0:  // after expanding: pick the next bin, or rebase, or finish
        ++rounds;
        if (failed.load()) {
          done = true;
        } else if (stop_requested.load()) {
          done = cancelled = true;
        } else if (const std::uint64_t b = next_bin.exchange(kNone); b != kNone) {
          cur = b;
          rebase = false;
        } else if (any_overflow.load()) {
          rebase = true;
        } else {
          done = true;
        }
        any_overflow = false;
        phase = rebase ? 1 : 2;
        break;
      case 1:  // after the overflow minimum: the new window
        if (const std::uint64_t b = next_bin.exchange(kNone); b != kNone) {
          base = cur = b;
          ++window_moves;
        } else {
          done = true;  // every waiting entry was stale
        }
        phase = 2;
        break;
      case 2:  // after reserving: make room for the frontier
        try {
          if (frontier.size() < tail.load()) frontier.resize(tail.load());
        } catch (const std::bad_alloc&) {
          failed = true;
          done = true;
        }
        phase = 3;
        break;
      case 3:  // after copying
        frontier_size = tail.exchange(0);
        claim = 0;
        phase = 0;
        break;
    }
  };
  std::optional<std::barrier<decltype(complete)>> barrier;
  try {
    barrier.emplace(static_cast<std::ptrdiff_t>(threads), complete);
  } catch (const std::bad_alloc&) {
    return DeltaSteppingEnd::kOutOfMemory;
  }
  std::barrier<decltype(complete)>& sync = *barrier;

  auto body = [&](unsigned id) {
    Worker& w = workers[id];
    bool out = false;  // this worker failed and dropped out
    auto work = [&](auto&& fn) {
      try {
        fn();
      } catch (const std::bad_alloc&) {
        failed = true;
        out = true;
      } catch (...) {
        thrown = std::current_exception();  // only the calling thread runs callbacks
        failed = true;
        out = true;
      }
      if (out) sync.arrive_and_drop();
    };
    while (true) {
      // Phase 0: expand the frontier, then the worker's own small bins.
      work([&] {
        std::uint64_t since_poll = 0;
        // Counts an expansion; every kPollEvery, reports and polls (the
        // calling thread) and reads the stop flag (every worker).
        auto poll = [&] {
          if (++since_poll < kPollEvery) return false;
          since_poll = 0;
          const std::uint64_t total =
              expansions.fetch_add(kPollEvery, std::memory_order_relaxed) + kPollEvery;
          if (id == 0) {
            if (progress) progress(total);
            if (stop && stop()) stop_requested = true;
          }
          return stop_requested.load(std::memory_order_relaxed);
        };
        bool stopping = false;
        for (std::uint64_t i; !stopping && (i = claim.fetch_add(kClaim)) < frontier_size;)
          for (std::uint64_t k = i; k < std::min(frontier_size, i + kClaim) && !stopping; ++k) {
            expand_one(w, frontier[k]);
            stopping = poll();
          }
        std::vector<std::uint32_t> batch;
        for (std::uint64_t b = w.Lowest(cur); !stopping && b != kNone && b <= cur + kLocalAhead;
             b = w.Lowest(cur)) {
          if (w.ring[b % kWindow].size() >= kLocalBin) break;
          batch.swap(w.ring[b % kWindow]);
          w.Clear(b);
          for (std::size_t k = 0; k < batch.size() && !stopping; ++k) {
            expand_one(w, batch[k]);
            stopping = poll();
          }
          batch.clear();
        }
        // The expansions since the last poll count too: a worker that made
        // fewer than kPollEvery in every round was never counted, and the
        // round's report below stayed at 0 through a whole run (a chain of
        // 40,000 vertices crossing between two workers' bins, under load:
        // SsspReportsAndCancelsWithinOneBin saw no report past 8,192).
        expansions.fetch_add(since_poll, std::memory_order_relaxed);
        const std::uint64_t b = w.Lowest(cur);
        std::uint64_t seen = next_bin.load();
        while (b < seen && !next_bin.compare_exchange_weak(seen, b)) {
        }
        if (!w.overflow.empty()) any_overflow = true;
        if (id == 0) {  // the calling thread reports and polls once a round too
          if (progress) progress(expansions.load(std::memory_order_relaxed));
          if (stop && stop()) stop_requested = true;
        }
      });
      if (out) return;
      sync.arrive_and_wait();
      if (done) return;
      if (rebase) {
        // Phase 1: the lowest bin among live waiting entries, then refill.
        work([&] {
          while (!w.overflow.empty() && stale(w.Front().second)) w.Unwait();
        });
        if (out) return;
        const std::uint64_t low = w.overflow.empty() ? kNone : w.Front().first;
        std::uint64_t seen = next_bin.load();
        while (low < seen && !next_bin.compare_exchange_weak(seen, low)) {
        }
        sync.arrive_and_wait();
        if (done) return;
        work([&] {
          while (!w.overflow.empty() && w.Front().first < base + kWindow) {
            const std::uint32_t v = w.overflow.front().second;
            w.Unwait();
            if (!stale(v)) w.Push(std::max(base, bin_of(dist_of(v))), v);
          }
        });
        if (out) return;
      }
      // Phase 2: reserve room for this worker's part of the current bin.
      std::vector<std::uint32_t>& mine = w.ring[cur % kWindow];
      w.offset = tail.fetch_add(mine.size());
      sync.arrive_and_wait();
      if (done) return;
      // Phase 3: copy it into the shared frontier.
      std::copy(mine.begin(), mine.end(), frontier.begin() + static_cast<std::ptrdiff_t>(w.offset));
      w.Clear(cur);
      sync.arrive_and_wait();
    }
  };

  std::vector<std::thread> pool;
  try {
    pool.reserve(threads - 1);
  } catch (const std::bad_alloc&) {
  }
  for (unsigned id = 1; id < threads; ++id) {
    try {
      pool.emplace_back(body, id);
    } catch (...) {
      sync.arrive_and_drop();  // stands in for the worker that did not start
    }
  }
  body(0);
  for (std::thread& t : pool) t.join();
  // The last round's report above is read while other workers may still be
  // adding their final expansions (before the barrier): report the total
  // once more, now that every worker has stopped.
  if (progress && !thrown && !failed.load() && !cancelled) {
    try {
      progress(expansions.load());
    } catch (...) {
      thrown = std::current_exception();  // as a callback's throw in a round
    }
  }
  if (stats != nullptr) {
    *stats = {.rounds = rounds, .window_moves = window_moves};
    for (const Worker& w : workers) {
      stats->waited += w.waited;
      stats->unwaited += w.unwaited;
      stats->overflow_reads += w.reads;
    }
  }
  if (thrown) std::rethrow_exception(thrown);
  if (failed.load()) return DeltaSteppingEnd::kOutOfMemory;
  return cancelled ? DeltaSteppingEnd::kCancelled : DeltaSteppingEnd::kDone;
}

}  // namespace quiver::analytics

#endif  // QUIVER_ANALYTICS_DELTA_STEPPING_H_
