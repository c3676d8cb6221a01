// Concurrency tests (RELIABILITY.md 3.8), run under ThreadSanitizer and under
// ASan+UBSan in CI: producers committing through the group-commit queue while
// readers take, hold and check snapshots; Close() racing producers.
//
// Reader oracle: every batch stamps each element it creates with its
// producer and batch number and adds a "marker" vertex holding the count of
// those elements, and moves its producer's "progress" vertex to its batch
// number. A snapshot is consistent iff every marker's count matches the
// stamped elements (no partial batch), no stamped element lacks its marker,
// each producer's visible batches are a prefix 0..n-1 ending at its progress
// value, and the sequence number equals the number of batches visible.
//
// Environment: QUIVER_CONCURRENCY_ITERS scales the batches per producer
// (default 100); QUIVER_TEST_SEED fixes the random seed (default: random).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "quiver/graph.h"
#include "test_util.h"
#include "watchdog.h"

namespace quiver {
namespace {

constexpr int kProducers = 4;
constexpr int kReaders = 4;

std::uint64_t Iters() { return test_util::EnvOr("QUIVER_CONCURRENCY_ITERS", 100); }

std::uint64_t Seed() {
  static const std::uint64_t seed = [] {
    std::uint64_t s = test_util::EnvOr("QUIVER_TEST_SEED", std::random_device{}());
    std::cout << "concurrency test seed: " << s << " (QUIVER_TEST_SEED=" << s
              << " reproduces the batch shapes)" << std::endl;
    return s;
  }();
  return seed;
}

using test_util::Watchdog;

std::unique_ptr<Graph> NewGraph() {
  Result<std::unique_ptr<Graph>> g = Graph::OpenInMemory();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : nullptr;
}

// Creates one "progress" vertex per producer (ids 0..kProducers-1) in one
// batch (sequence 1).
bool AddProgressVertices(Graph& g) {
  WriteBatch b;
  for (int p = 0; p < kProducers; ++p) b.AddVertex("progress", {{"p", p}, {"last", -1}});
  Result<CommitInfo> r = g.Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok();
}

// One producer batch: k stamped items and edges, a marker, a progress move.
WriteBatch MakeBatch(int producer, std::int64_t batch, std::mt19937_64& rng) {
  WriteBatch b;
  const std::vector<Property> stamp = {{"p", producer}, {"b", batch}};
  std::vector<NewVertex> items;
  const int vertices = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int i = 0; i < vertices; ++i) items.push_back(b.AddVertex("item", stamp));
  const int edges = std::uniform_int_distribution<int>(0, 4)(rng);
  for (int i = 0; i < edges; ++i) {
    NewVertex from = items[std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng)];
    if (i % 2 == 0) {
      b.AddEdge("E", from, VertexId(static_cast<std::uint64_t>(producer)), stamp);  // to the progress vertex
    } else {
      NewVertex to = items[std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng)];
      b.AddEdge("E", from, to, stamp);
    }
  }
  b.AddVertex("marker", {{"p", producer}, {"b", batch}, {"count", vertices + edges}});
  b.SetProperty(VertexId(static_cast<std::uint64_t>(producer)), "last", batch);
  return b;
}

// The reader oracle; returns "" if `s` is consistent.
std::string CheckSnapshot(const Snapshot& s) {
  auto kp = s.FindPropertyKey("p");
  auto kb = s.FindPropertyKey("b");
  auto kcount = s.FindPropertyKey("count");
  auto klast = s.FindPropertyKey("last");
  auto progress = s.FindLabel("progress");
  if (!kp || !klast || !progress)
    return "setup batch not visible at sequence " + std::to_string(s.sequence());
  auto marker = s.FindLabel("marker");
  auto item = s.FindLabel("item");

  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> expected;  // (p,b) -> count
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> seen;
  std::map<std::int64_t, std::int64_t> last;
  auto stamp_of = [&](auto id) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
    if (!kb) return std::nullopt;
    auto p = s.GetProperty(id, *kp);
    auto b = s.GetProperty(id, *kb);
    if (!p || !b || p->type() != ValueType::kInt64 || b->type() != ValueType::kInt64) return std::nullopt;
    return std::make_pair(*p->as_int64(), *b->as_int64());
  };
  for (VertexId v : s.Vertices()) {
    std::optional<LabelId> label = s.LabelOf(v);
    if (!label) return "live vertex without label";
    if (*label == *progress) {
      auto p = s.GetProperty(v, *kp);
      auto l = s.GetProperty(v, *klast);
      if (!p || !l) return "progress vertex without p/last";
      last[p->as_int64().value_or(-1)] = l->as_int64().value_or(-1);
    } else if (marker && *label == *marker) {
      auto st = stamp_of(v);
      auto c = kcount ? s.GetProperty(v, *kcount) : std::nullopt;
      if (!st || !c) return "marker without p/b/count";
      if (!expected.emplace(*st, c->as_int64().value_or(-1)).second) return "duplicate marker";
    } else if (item && *label == *item) {
      auto st = stamp_of(v);
      if (!st) return "item without stamp";
      ++seen[*st];
    } else {
      return "unexpected label " + std::string(s.LabelName(*label));
    }
  }
  for (EdgeId e : s.Edges()) {
    auto st = stamp_of(e);
    if (!st) return "edge without stamp";
    ++seen[*st];
    std::optional<EdgeInfo> info = s.GetEdge(e);
    if (!info || !s.HasVertex(info->source) || !s.HasVertex(info->target)) return "edge with dead endpoint";
  }
  for (const auto& [key, count] : expected) {
    auto it = seen.find(key);
    std::int64_t got = it == seen.end() ? 0 : it->second;
    if (got != count) {
      return "partial batch p=" + std::to_string(key.first) + " b=" + std::to_string(key.second) + ": " +
             std::to_string(got) + " of " + std::to_string(count) + " elements visible";
    }
  }
  for (const auto& [key, count] : seen) {
    if (!expected.count(key)) {
      return "element of batch p=" + std::to_string(key.first) + " b=" + std::to_string(key.second) +
             " visible without its marker";
    }
  }
  std::map<std::int64_t, std::int64_t> per_producer;  // p -> number of batches visible
  for (const auto& [key, count] : expected) {
    std::int64_t& n = per_producer[key.first];
    if (key.second != n) {
      return "producer " + std::to_string(key.first) + " batches not a prefix: saw " +
             std::to_string(key.second) + " where " + std::to_string(n) + " was next";
    }
    ++n;
  }
  for (int p = 0; p < kProducers; ++p) {
    std::int64_t n = per_producer.count(p) ? per_producer[p] : 0;
    if (last[p] != n - 1) {
      return "producer " + std::to_string(p) + " progress " + std::to_string(last[p]) + " but " +
             std::to_string(n) + " batches visible";
    }
  }
  if (s.sequence() != 1 + expected.size()) {
    return "sequence " + std::to_string(s.sequence()) + " but " + std::to_string(expected.size()) +
           " batches (+1 setup) visible";
  }
  return "";
}

// Structural self-consistency of a snapshot: every edge's endpoints are live
// and list it, and degrees add up to the edge count.
std::string CheckStructure(const Snapshot& s) {
  std::uint64_t out_total = 0, in_total = 0, vertices = 0;
  for (VertexId v : s.Vertices()) {
    ++vertices;
    out_total += s.OutDegree(v);
    in_total += s.InDegree(v);
  }
  if (vertices != s.vertex_count()) return "vertex_count disagrees with Vertices()";
  std::uint64_t edges = 0;
  for (EdgeId e : s.Edges()) {
    ++edges;
    std::optional<EdgeInfo> info = s.GetEdge(e);
    if (!info) return "GetEdge failed for a listed edge";
    bool found = false;
    for (const EdgeEntry& entry : s.OutEdges(info->source, info->type)) {
      if (entry.edge() == e) {
        found = entry.neighbor() == info->target;
        break;
      }
    }
    if (!found) return "edge " + std::to_string(e.value()) + " missing from its source's adjacency";
  }
  if (edges != s.edge_count()) return "edge_count disagrees with Edges()";
  if (out_total != edges || in_total != edges) return "degrees do not add up to the edge count";
  return "";
}

// Runs `readers` threads calling `body(reader_index)` until `stop`; each
// returns its first error ("" if none).
struct ReaderPool {
  std::atomic<bool> stop{false};
  std::vector<std::string> errors;
  std::vector<std::uint64_t> iterations;
  std::vector<std::thread> threads;

  template <typename Body>
  void Start(int n, Body body) {
    errors.assign(static_cast<std::size_t>(n), "");
    iterations.assign(static_cast<std::size_t>(n), 0);
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([this, r, body] {
        while (!stop.load(std::memory_order_acquire)) {
          std::string err = body(r);
          ++iterations[static_cast<std::size_t>(r)];
          if (!err.empty()) {
            errors[static_cast<std::size_t>(r)] = err;
            return;
          }
          std::this_thread::yield();  // on 2 cores, leave the writer room to run
        }
      });
    }
  }
  void Stop() {
    stop.store(true, std::memory_order_release);
    for (std::thread& t : threads) t.join();
    threads.clear();
  }
};

TEST(ConcurrencyTest, ReadersSeeWholeBatchesInOrder) {
  Watchdog watchdog(std::chrono::seconds(120));
  const std::uint64_t iters = Iters();
  const std::uint64_t seed = Seed();
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  ASSERT_TRUE(AddProgressVertices(*graph));

  std::vector<SequenceNumber> last_seq(kReaders, 0);
  ReaderPool readers;
  readers.Start(kReaders, [&](int r) -> std::string {
    Snapshot s = graph->GetSnapshot();
    if (s.sequence() < last_seq[static_cast<std::size_t>(r)]) {
      return "sequence went backwards: " + std::to_string(s.sequence()) + " after " +
             std::to_string(last_seq[static_cast<std::size_t>(r)]);
    }
    last_seq[static_cast<std::size_t>(r)] = s.sequence();
    return CheckSnapshot(s);
  });

  std::vector<std::string> producer_errors(kProducers);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(p));
      SequenceNumber prev = 0;
      for (std::uint64_t b = 0; b < iters; ++b) {
        Result<CommitInfo> r = graph->Write(MakeBatch(p, static_cast<std::int64_t>(b), rng));
        if (!r.ok()) {
          producer_errors[p] = "batch " + std::to_string(b) + ": " + r.status().ToString();
          return;
        }
        if (r->sequence <= prev) {
          producer_errors[p] = "sequence not increasing for one producer";
          return;
        }
        prev = r->sequence;
        // The writer's own next snapshot contains the batch.
        if (graph->GetSnapshot().sequence() < r->sequence) {
          producer_errors[p] = "snapshot after Write does not contain the batch";
          return;
        }
      }
    });
  }
  for (std::thread& t : producers) t.join();
  readers.Stop();

  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(producer_errors[p], "") << "producer " << p;
  std::uint64_t reads = 0;
  std::size_t violations = 0;
  for (int r = 0; r < kReaders; ++r) {
    EXPECT_EQ(readers.errors[r], "") << "reader " << r;
    violations += readers.errors[r].empty() ? 0 : 1;
    reads += readers.iterations[r];
  }
  Snapshot final_snapshot = graph->GetSnapshot();
  EXPECT_EQ(CheckSnapshot(final_snapshot), "");
  EXPECT_EQ(CheckStructure(final_snapshot), "");
  EXPECT_EQ(final_snapshot.sequence(), 1 + kProducers * iters);
  std::cout << "concurrency: " << kProducers << " producers x " << iters << " batches, " << kReaders
            << " readers, " << reads << " snapshot checks, reader violations: " << violations << std::endl;
}

// Producers that also overwrite and remove earlier elements; readers hold
// each snapshot across many commits and verify it is byte-for-byte what it
// was when taken.
TEST(ConcurrencyTest, HeldSnapshotsAreNeverTorn) {
  Watchdog watchdog(std::chrono::seconds(120));
  const std::uint64_t iters = Iters();
  const std::uint64_t seed = Seed();
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);

  std::atomic<bool> producers_done{false};
  std::vector<std::uint64_t> held_checks(kReaders, 0);
  ReaderPool readers;
  readers.Start(kReaders, [&](int r) -> std::string {
    Snapshot s = graph->GetSnapshot();
    const std::uint64_t before = test_util::Fingerprint(s);
    std::string err = CheckStructure(s);
    if (!err.empty()) return "fresh snapshot: " + err;
    // Hold it while at least 20 more batches commit (or the producers end).
    const SequenceNumber start = s.sequence();
    while (!producers_done.load(std::memory_order_acquire) && graph->GetSnapshot().sequence() < start + 20) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (s.sequence() != start) return "held snapshot changed its sequence";
    err = CheckStructure(s);
    if (!err.empty()) return "held snapshot: " + err;
    if (test_util::Fingerprint(s) != before) return "held snapshot changed after later commits (torn read)";
    ++held_checks[static_cast<std::size_t>(r)];
    return "";
  });

  std::vector<std::string> producer_errors(kProducers);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937_64 rng(seed * 31 + static_cast<std::uint64_t>(p));
      std::vector<VertexId> mine;
      std::vector<EdgeId> my_edges;
      auto pick = [&](auto& v) { return std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng); };
      for (std::uint64_t b = 0; b < iters; ++b) {
        WriteBatch batch;
        std::vector<NewVertex> fresh;
        for (int i = 0; i < 3; ++i) {
          fresh.push_back(
              batch.AddVertex("item", {{"p", p},
                                       {"b", static_cast<std::int64_t>(b)},
                                       {"pad", std::string(static_cast<std::size_t>(b % 40), 'x')}}));
        }
        batch.AddEdge("E", fresh[0], fresh[1], {{"w", static_cast<double>(b)}});
        if (!mine.empty()) {
          batch.AddEdge("F", fresh[2], mine[pick(mine)]);
          batch.SetProperty(mine[pick(mine)], "b", -static_cast<std::int64_t>(b));
        }
        std::optional<std::size_t> removed_edge;
        if (my_edges.size() > 4) {
          removed_edge = pick(my_edges);
          batch.RemoveEdge(my_edges[*removed_edge]);
        }
        std::optional<std::size_t> removed_vertex;
        if (mine.size() > 30 && b % 3 == 0) {
          removed_vertex = pick(mine);
          batch.RemoveVertex(mine[*removed_vertex]);
        }
        Result<CommitInfo> r = graph->Write(std::move(batch));
        if (!r.ok()) {
          producer_errors[p] = "batch " + std::to_string(b) + ": " + r.status().ToString();
          return;
        }
        if (removed_edge) my_edges.erase(my_edges.begin() + static_cast<std::ptrdiff_t>(*removed_edge));
        if (removed_vertex) {
          // Its incident edges went with it; forget any we tracked.
          const VertexId gone = mine[*removed_vertex];
          mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(*removed_vertex));
          Snapshot s = graph->GetSnapshot();
          std::erase_if(my_edges, [&](EdgeId e) { return !s.HasEdge(e); });
          (void)gone;
        }
        for (VertexId v : r->vertices) mine.push_back(v);
        my_edges.push_back(r->edges[0]);  // the E edge; F edges may be removed with vertices
      }
    });
  }
  for (std::thread& t : producers) t.join();
  producers_done.store(true, std::memory_order_release);
  readers.Stop();

  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(producer_errors[p], "") << "producer " << p;
  std::uint64_t checks = 0;
  for (int r = 0; r < kReaders; ++r) {
    EXPECT_EQ(readers.errors[r], "") << "reader " << r;
    checks += held_checks[r];
  }
  EXPECT_EQ(CheckStructure(graph->GetSnapshot()), "");
  EXPECT_EQ(graph->GetSnapshot().sequence(), kProducers * iters);
  std::cout << "held-snapshot checks: " << checks << std::endl;
}

// Close() while producers (Write and WriteAsync) and readers are running:
// every write gets success or FailedPrecondition, nothing hangs or crashes,
// and afterwards exactly the acknowledged batches are visible.
TEST(ConcurrencyTest, CloseRacesProducers) {
  Watchdog watchdog(std::chrono::seconds(120));
  const std::uint64_t seed = Seed();
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  ASSERT_TRUE(AddProgressVertices(*graph));

  // Acknowledged batch numbers per producer, in order.
  std::vector<std::vector<std::int64_t>> acked(kProducers);
  std::vector<std::string> producer_errors(kProducers);
  std::atomic<std::uint64_t> total_acked{0};
  std::atomic<int> producers_finished{0};
  std::vector<std::thread> producers;
  const std::uint64_t close_after = std::min<std::uint64_t>(Iters(), 100);
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937_64 rng(seed * 7 + static_cast<std::uint64_t>(p));
      auto check = [&](std::int64_t b, const Result<CommitInfo>& r) {
        if (r.ok()) {
          acked[p].push_back(b);
          total_acked.fetch_add(1, std::memory_order_relaxed);
          return true;
        }
        if (r.status().code() != StatusCode::kFailedPrecondition) {
          producer_errors[p] = "batch " + std::to_string(b) + ": " + r.status().ToString();
        }
        return false;
      };
      if (p % 2 == 0) {
        for (std::int64_t b = 0;; ++b) {
          if (!check(b, graph->Write(MakeBatch(p, b, rng)))) break;
        }
      } else {
        // Keep up to 8 batches in flight. A batch after a refused one is
        // never sent, so the acknowledged set stays a prefix.
        std::vector<std::pair<std::int64_t, std::future<Result<CommitInfo>>>> in_flight;
        bool refused = false;
        for (std::int64_t b = 0; !refused; ++b) {
          in_flight.emplace_back(b, graph->WriteAsync(MakeBatch(p, b, rng)));
          if (in_flight.size() >= 8) {
            for (auto& [n, f] : in_flight) {
              if (!check(n, f.get())) refused = true;
            }
            in_flight.clear();
          }
        }
        for (auto& [n, f] : in_flight) check(n, f.get());
      }
      producers_finished.fetch_add(1, std::memory_order_release);
    });
  }
  std::vector<SequenceNumber> last_seq(kReaders, 0);
  ReaderPool readers;
  readers.Start(2, [&](int r) -> std::string {
    Snapshot s = graph->GetSnapshot();
    if (s.sequence() < last_seq[static_cast<std::size_t>(r)]) return "sequence went backwards";
    last_seq[static_cast<std::size_t>(r)] = s.sequence();
    return CheckSnapshot(s);
  });

  while (total_acked.load(std::memory_order_relaxed) < close_after &&
         producers_finished.load(std::memory_order_acquire) < kProducers) {
    std::this_thread::yield();
  }
  // Two racing Close() calls: both succeed.
  Status close_a, close_b;
  std::thread closer([&] { close_a = graph->Close(); });
  close_b = graph->Close();
  closer.join();
  EXPECT_TRUE(close_a.ok()) << close_a.ToString();
  EXPECT_TRUE(close_b.ok()) << close_b.ToString();
  for (std::thread& t : producers) t.join();
  readers.Stop();

  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(producer_errors[p], "") << "producer " << p;
  for (int r = 0; r < 2; ++r) EXPECT_EQ(readers.errors[r], "") << "reader " << r;

  // Exactly the acknowledged batches are visible, and the graph is closed.
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(CheckSnapshot(s), "");
  std::map<std::int64_t, std::set<std::int64_t>> visible;
  auto kp = s.FindPropertyKey("p");
  auto kb = s.FindPropertyKey("b");
  auto marker = s.FindLabel("marker");
  ASSERT_TRUE(kp && kb && marker);
  for (VertexId v : s.Vertices(*marker)) {
    visible[s.GetProperty(v, *kp)->as_int64().value_or(-1)].insert(
        s.GetProperty(v, *kb)->as_int64().value_or(-1));
  }
  std::uint64_t acked_total = 0;
  for (int p = 0; p < kProducers; ++p) {
    std::set<std::int64_t> acked_set(acked[p].begin(), acked[p].end());
    EXPECT_EQ(visible[p], acked_set) << "producer " << p;
    acked_total += acked[p].size();
  }
  EXPECT_EQ(s.sequence(), 1 + acked_total);
  WriteBatch late;
  late.AddVertex("late");
  EXPECT_EQ(graph->Write(std::move(late)).status().code(), StatusCode::kFailedPrecondition);
  std::cout << "close race: " << acked_total << " batches acknowledged before Close" << std::endl;
}

// Producers are woken once per commit group, on the group they expected to
// join when they queued. With groups bounded to one or two batches most of
// them are cut off into a later group and must still be woken; spinning
// off, very short (1 us) and the default.
TEST(ConcurrencyTest, ProducersCutOffByGroupBoundsAreWoken) {
  Watchdog watchdog(std::chrono::seconds(120));
  constexpr int kThreads = 8;
  for (std::size_t group_batches : {1, 2}) {
    for (std::uint32_t spin : {0u, 1u, 50u}) {
      Options o;
      o.writer.max_group_batches = group_batches;
      o.writer.spin_microseconds = spin;
      Result<std::unique_ptr<Graph>> g = Graph::OpenInMemory(o);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      Graph& graph = **g;
      std::atomic<std::uint64_t> failures{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          for (std::uint64_t i = 0; i < Iters(); ++i) {
            WriteBatch b;
            b.AddVertex("v", {{"t", t}});
            // Every fourth write is asynchronous: it shares groups with the
            // sleepers but is completed through its future.
            Result<CommitInfo> r =
                i % 4 == 3 ? graph.WriteAsync(std::move(b)).get() : graph.Write(std::move(b));
            if (!r.ok()) failures.fetch_add(1);
          }
        });
      }
      for (std::thread& t : threads) t.join();
      EXPECT_EQ(failures.load(), 0u);
      EXPECT_EQ(graph.GetSnapshot().sequence(), kThreads * Iters())
          << "group bound " << group_batches << ", spin " << spin;
      EXPECT_TRUE(graph.Close().ok());
    }
  }
}

// Snapshots taken on many threads and released in any order, while the
// writer commits, never disturb each other or the memory accounting.
TEST(ConcurrencyTest, SnapshotChurnAcrossThreads) {
  Watchdog watchdog(std::chrono::seconds(120));
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  ASSERT_TRUE(AddProgressVertices(*graph));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::mt19937_64 rng(Seed());
    for (std::uint64_t b = 0; b < Iters(); ++b) {
      Result<CommitInfo> r = graph->Write(MakeBatch(0, static_cast<std::int64_t>(b), rng));
      EXPECT_TRUE(r.ok()) << r.status().ToString();
    }
    done.store(true, std::memory_order_release);
  });
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kReaders);
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Snapshot> held;
      std::mt19937 rng(static_cast<unsigned>(t));
      while (!done.load(std::memory_order_acquire)) {
        std::this_thread::yield();
        held.push_back(graph->GetSnapshot());
        if (held.size() > 16 || rng() % 3 == 0) {
          std::size_t i = rng() % held.size();
          // Move out, verify, release.
          Snapshot s = std::move(held[i]);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
          if (!s.valid()) {
            errors[t] = "moved snapshot invalid";
            return;
          }
          (void)graph->GetMemoryStats();
          if (s.vertex_count() < static_cast<std::uint64_t>(kProducers)) {
            errors[t] = "snapshot lost the setup vertices";
            return;
          }
        }
      }
    });
  }
  writer.join();
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kReaders; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  MemoryStats m = test_util::SettledMemoryStats(*graph);
  EXPECT_EQ(m.live_versions, 1u);
  EXPECT_EQ(m.retired_bytes, 0u);
}

// Engine II 1.3: the reader that drops the last reference to a version full
// of retired blocks frees them without holding anything the writer needs.
// A snapshot is pinned while every vertex's property block is replaced many
// times (each replacement retires a block and its leaf), then released on
// one thread while a committer keeps committing and another thread polls
// GetMemoryStats. Checked: every commit succeeds and is seen, the stats
// never go wrong (a double subtraction would wrap retired_bytes), and at the
// end nothing is retired, one version is live and the allocator bytes equal
// those before the churn (the churn leaves every block the same size), so
// no block was lost or freed twice (ASan/TSan watch the frees themselves).
// The longest commit during the release is printed, not asserted.
// QUIVER_RELEASE_CHURN_BLOCKS scales the churn (default 200,000 blocks).
TEST(ConcurrencyTest, ReleasingAChurnedSnapshotNeverBlocksTheWriter) {
  Watchdog watchdog(std::chrono::seconds(600));
  constexpr int kVertices = 10'000;
  const std::uint64_t blocks = test_util::EnvOr("QUIVER_RELEASE_CHURN_BLOCKS", 200'000);
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  {
    WriteBatch b;
    for (int i = 0; i < kVertices; ++i) b.AddVertex("V", {{"p", std::int64_t{0}}});
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  const MemoryStats baseline = test_util::SettledMemoryStats(*graph);
  Snapshot held = graph->GetSnapshot();
  std::int64_t round = 0;
  for (std::uint64_t done = 0; done < blocks; done += kVertices) {
    ++round;
    WriteBatch b;
    for (int i = 0; i < kVertices; ++i) b.SetProperty(VertexId(i), "p", round);
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  const MemoryStats pinned = graph->GetMemoryStats();
  ASSERT_GT(pinned.retired_bytes, 0u);
  ASSERT_GE(pinned.live_versions, 2u);

  std::atomic<bool> released{false};
  std::atomic<bool> stop{false};
  std::string committer_error, poller_error;
  std::int64_t last_value = 0;
  std::uint64_t longest_during_release_us = 0, commits_during_release = 0;
  std::thread committer([&] {
    int after_release = 0;
    for (std::int64_t k = 1; after_release < 50; ++k) {
      bool during = !released.load(std::memory_order_acquire);
      WriteBatch b;
      b.SetProperty(VertexId(static_cast<std::uint64_t>(k) % kVertices), "q", k);
      auto start = std::chrono::steady_clock::now();
      Result<CommitInfo> r = graph->Write(std::move(b));
      auto us = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
              .count());
      if (!r.ok()) {
        committer_error = r.status().ToString();
        return;
      }
      if (during) {
        longest_during_release_us = std::max(longest_during_release_us, us);
        ++commits_during_release;
      } else {
        ++after_release;
      }
      last_value = k;
    }
  });
  std::thread poller([&] {
    std::uint64_t polls = 0;
    while (!stop.load(std::memory_order_acquire)) {
      MemoryStats m = graph->GetMemoryStats();
      ++polls;
      if (m.retired_bytes > (std::uint64_t{1} << 50) || m.live_versions > (std::uint64_t{1} << 50)) {
        poller_error = "stats wrapped: retired " + std::to_string(m.retired_bytes) + ", live " +
                       std::to_string(m.live_versions);
        return;
      }
      if (m.allocated_bytes == 0) {
        poller_error = "allocated bytes read as 0";
        return;
      }
    }
    std::cout << "[          ] stats polled " << polls << " times\n";
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the committer is going
  auto release_start = std::chrono::steady_clock::now();
  held = Snapshot();  // frees every retired block, on this thread
  auto release_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - release_start)
          .count();
  released.store(true, std::memory_order_release);
  committer.join();
  stop.store(true, std::memory_order_release);
  poller.join();
  EXPECT_EQ(committer_error, "");
  EXPECT_EQ(poller_error, "");
  std::cout << "[          ] released " << pinned.retired_bytes << " retired bytes in " << release_us
            << " us; " << commits_during_release << " commits meanwhile, the longest "
            << longest_during_release_us << " us\n";

  // Everything committed is visible, and memory is back where it was.
  Snapshot now = graph->GetSnapshot();
  auto q = now.GetProperty(VertexId(static_cast<std::uint64_t>(last_value) % kVertices), "q");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->as_int64(), last_value);
  EXPECT_EQ(now.GetProperty(VertexId(0), "p")->as_int64(), round);
  now = Snapshot();
  // Undo the committer's "q" properties so the blocks are the churn's size.
  {
    WriteBatch b;
    for (int i = 0; i < kVertices; ++i)
      if (graph->GetSnapshot().GetProperty(VertexId(i), "q")) b.RemoveProperty(VertexId(i), "q");
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  MemoryStats m = test_util::SettledMemoryStats(*graph);
  EXPECT_EQ(m.live_versions, 1u);
  EXPECT_EQ(m.retired_bytes, 0u);
  EXPECT_EQ(m.allocated_bytes, baseline.allocated_bytes);
}

// Engine II 3: snapshot acquisition through per-thread reader slots
// (storage/version.h). Many threads acquire and release snapshots as fast as
// they can, hold a few, and hand some to a neighbour that releases them on
// another thread, while one writer commits batches that each replace every
// watched vertex's property block (so each commit retires blocks that older
// snapshots still reach). Every snapshot, fresh or held, must read one
// version: all watched values equal, equal to the batch the sequence number
// says, never older than the thread's previous fresh snapshot, and unchanged
// while held. At the end every slot has let go: one live version, nothing
// retired.
TEST(ConcurrencyTest, SnapshotSlotsStayConsistentUnderAcquireReleaseStorms) {
  Watchdog watchdog(std::chrono::seconds(300));
  constexpr int kWatched = 32;
  constexpr int kStormThreads = 6;
  auto graph = NewGraph();
  ASSERT_NE(graph, nullptr);
  SequenceNumber base = 0;
  {
    WriteBatch b;
    for (int i = 0; i < kWatched; ++i) b.AddVertex("W", {{"v", std::int64_t{0}}});
    Result<CommitInfo> r = graph->Write(std::move(b));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    base = r->sequence;
  }
  // Returns "" if `s` reads one version; its batch number in *round.
  auto check = [&](const Snapshot& s, std::int64_t* round) -> std::string {
    std::optional<std::int64_t> first;
    for (int i = 0; i < kWatched; ++i) {
      std::optional<PropertyView> p = s.GetProperty(VertexId(static_cast<std::uint64_t>(i)), "v");
      std::optional<std::int64_t> x = p ? p->as_int64() : std::nullopt;
      if (!x) return "watched vertex " + std::to_string(i) + " has no value";
      if (!first) first = x;
      if (*x != *first)
        return "torn: vertex 0 reads " + std::to_string(*first) + ", vertex " + std::to_string(i) +
               " reads " + std::to_string(*x);
    }
    if (static_cast<std::int64_t>(s.sequence() - base) != *first)
      return "sequence " + std::to_string(s.sequence()) + " with batch " + std::to_string(*first);
    *round = *first;
    return "";
  };

  const std::uint64_t batches = Iters() * 4;
  std::atomic<bool> done{false};
  // The writer starts once every storm thread runs: a fast writer could
  // otherwise finish before a thread took its first snapshot.
  std::atomic<int> started{0};
  std::string writer_error;
  std::thread writer([&] {
    while (started.load(std::memory_order_acquire) < kStormThreads) std::this_thread::yield();
    for (std::uint64_t b = 1; b <= batches; ++b) {
      WriteBatch batch;
      for (int i = 0; i < kWatched; ++i)
        batch.SetProperty(VertexId(static_cast<std::uint64_t>(i)), "v", static_cast<std::int64_t>(b));
      Result<CommitInfo> r = graph->Write(std::move(batch));
      if (!r.ok()) {
        writer_error = r.status().ToString();
        break;
      }
    }
    done.store(true, std::memory_order_release);
  });

  // handoff[t]: snapshots thread t gives to thread t+1 to release.
  std::vector<std::mutex> handoff_mu(kStormThreads);
  std::vector<std::vector<Snapshot>> handoff(kStormThreads);
  std::vector<std::string> errors(kStormThreads);
  std::vector<std::uint64_t> acquisitions(kStormThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kStormThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(Seed()) + static_cast<unsigned>(t));
      struct Held {
        Snapshot snap;
        std::int64_t round;
      };
      std::vector<Held> held;
      std::int64_t last_fresh = 0;
      auto fail = [&](const std::string& what) { errors[static_cast<std::size_t>(t)] = what; };
      {  // one acquisition before the writer may start, however the threads are scheduled
        Snapshot first = graph->GetSnapshot();
        ++acquisitions[static_cast<std::size_t>(t)];
        started.fetch_add(1, std::memory_order_release);
        if (!first.valid()) return fail("invalid snapshot");
      }
      while (!done.load(std::memory_order_acquire)) {
        // A burst of acquire+release pairs: the path the slots make cheap.
        for (int i = 0; i < 64; ++i) {
          Snapshot s = graph->GetSnapshot();
          ++acquisitions[static_cast<std::size_t>(t)];
          if (!s.valid()) return fail("invalid snapshot");
        }
        Snapshot s = graph->GetSnapshot();
        std::int64_t round = 0;
        std::string err = check(s, &round);
        if (!err.empty()) return fail("fresh: " + err);
        if (round < last_fresh) return fail("went back from batch " + std::to_string(last_fresh));
        last_fresh = round;
        switch (rng() % 4) {
          case 0: held.push_back({std::move(s), round}); break;
          case 1: {
            std::lock_guard<std::mutex> lock(handoff_mu[static_cast<std::size_t>((t + 1) % kStormThreads)]);
            handoff[static_cast<std::size_t>((t + 1) % kStormThreads)].push_back(std::move(s));
            break;
          }
          default: break;  // released here
        }
        if (held.size() > 4 || (!held.empty() && rng() % 2 == 0)) {
          std::size_t i = rng() % held.size();
          err = check(held[i].snap, &round);
          if (!err.empty()) return fail("held: " + err);
          if (round != held[i].round) return fail("held snapshot changed batch");
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
        std::vector<Snapshot> mine;
        {
          std::lock_guard<std::mutex> lock(handoff_mu[static_cast<std::size_t>(t)]);
          mine.swap(handoff[static_cast<std::size_t>(t)]);
        }
        for (const Snapshot& h : mine) {
          err = check(h, &round);
          if (!err.empty()) return fail("handed over: " + err);
        }
        // `mine` is released here, on a thread other than the acquirer's.
      }
    });
  }
  writer.join();
  for (std::thread& t : threads) t.join();
  handoff.clear();
  EXPECT_EQ(writer_error, "");
  for (int t = 0; t < kStormThreads; ++t) {
    EXPECT_EQ(errors[static_cast<std::size_t>(t)], "") << "thread " << t;
    EXPECT_GT(acquisitions[static_cast<std::size_t>(t)], 0u) << "thread " << t;
  }
  Snapshot last = graph->GetSnapshot();
  std::int64_t round = 0;
  EXPECT_EQ(check(last, &round), "");
  EXPECT_EQ(round, static_cast<std::int64_t>(batches));
  last = Snapshot();
  MemoryStats m = test_util::SettledMemoryStats(*graph);
  EXPECT_EQ(m.live_versions, 1u);
  EXPECT_EQ(m.retired_bytes, 0u);
}

}  // namespace
}  // namespace quiver
