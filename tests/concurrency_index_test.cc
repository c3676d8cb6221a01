// Indexes under concurrency (also meant for ThreadSanitizer): readers check
// every ready index's answers against a scan of the same snapshot while
// writers commit and another thread creates and drops indexes, so online
// builds catch up from writes made while they ran.
//
// Writers change "k" (int64 in 0..99) on random Person vertices, add Persons
// with a fresh "uid" (unique by construction: drawn from a shared counter)
// and remove some. The index thread creates an ordered int64 index on k and
// a unique index on uid, lets readers use them, drops them, and starts
// again. A reader takes a snapshot and, for every index ready in it,
// compares equality lookups, ranges (both directions, with limits) and
// counts with a scan of that snapshot's Persons; and the label count with
// the scan. No timing is asserted: the workload is a fixed number of
// operations.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

using test_util::EnvOr;

std::vector<std::uint64_t> Raw(const std::vector<VertexId>& ids) {
  std::vector<std::uint64_t> out;
  for (VertexId v : ids) out.push_back(v.value());
  return out;
}

// Checks the indexes of one snapshot against a scan of it; "" if all agree.
std::string CheckSnapshot(const Snapshot& s, std::mt19937_64& rng) {
  std::optional<LabelId> person = s.FindLabel("Person");
  if (!person) return "";
  std::optional<PropertyKeyId> k = s.FindPropertyKey("k"), uid = s.FindPropertyKey("uid");
  // The scan: (k, id) and (uid, id) of every Person.
  std::vector<std::pair<std::int64_t, std::uint64_t>> ks, uids;
  std::uint64_t persons = 0;
  for (VertexId v : s.Vertices(*person)) {
    ++persons;
    if (k)
      if (auto x = s.GetProperty(v, *k); x && x->as_int64()) ks.emplace_back(*x->as_int64(), v.value());
    if (uid)
      if (auto x = s.GetProperty(v, *uid); x && x->as_int64()) uids.emplace_back(*x->as_int64(), v.value());
  }
  if (persons != s.CountVertices(*person))
    return "CountVertices " + std::to_string(s.CountVertices(*person)) + " vs scan " +
           std::to_string(persons);
  std::sort(ks.begin(), ks.end());
  for (const IndexInfo& info : s.Indexes()) {
    if (info.state != IndexState::kReady) continue;
    if (info.spec.keys[0] == "k") {
      if (info.entries != ks.size())
        return "k entries " + std::to_string(info.entries) + " vs scan " + std::to_string(ks.size());
      const std::int64_t lo = std::uniform_int_distribution<std::int64_t>(0, 99)(rng);
      const std::int64_t hi = lo + std::uniform_int_distribution<std::int64_t>(0, 20)(rng);
      std::vector<std::uint64_t> want_eq, want_range;
      for (auto [value, id] : ks) {
        if (value == lo) want_eq.push_back(id);
        if (value >= lo && value <= hi) want_range.push_back(id);
      }
      auto eq = s.FindVertices("Person", "k", lo);
      if (!eq.ok() || Raw(*eq) != want_eq) return "FindVertices(k) disagrees with the scan";
      auto range = s.VerticesInRange("Person", "k", {.lo = RangeBound{lo}, .hi = RangeBound{hi}});
      if (!range.ok() || Raw(*range) != want_range) return "VerticesInRange(k) disagrees with the scan";
      auto down = s.VerticesInRange(
          "Person", "k", {.lo = RangeBound{lo}, .hi = RangeBound{hi}, .descending = true, .limit = 5});
      std::vector<std::uint64_t> want_down(want_range.rbegin(), want_range.rend());
      if (want_down.size() > 5) want_down.resize(5);
      if (!down.ok() || Raw(*down) != want_down)
        return "descending VerticesInRange(k) disagrees with the scan";
      auto count = s.CountVerticesInRange("Person", "k", {.lo = RangeBound{lo}, .hi = RangeBound{hi}});
      if (!count.ok() || *count != want_range.size())
        return "CountVerticesInRange(k) disagrees with the scan";
    } else if (info.spec.keys[0] == "uid") {
      if (info.entries != uids.size())
        return "uid entries " + std::to_string(info.entries) + " vs scan " + std::to_string(uids.size());
      for (int probe = 0; probe < 4 && !uids.empty(); ++probe) {
        auto [value, id] = uids[std::uniform_int_distribution<std::size_t>(0, uids.size() - 1)(rng)];
        auto one = s.FindVertex("Person", "uid", value);
        if (!one.ok() || *one != VertexId(id)) return "FindVertex(uid) disagrees with the scan";
      }
    }
  }
  return "";
}

TEST(ConcurrencyIndexTest, ReadersAgreeWithScansWhileIndexesComeAndGo) {
  const int kWriters = 2, kReaders = 2;
  const std::uint64_t batches = EnvOr("QUIVER_INDEX_CONCURRENCY_BATCHES", 300);
  const std::uint64_t cycles = EnvOr("QUIVER_INDEX_CONCURRENCY_CYCLES", 3);
  auto graph = Graph::OpenInMemory().value();
  std::atomic<std::int64_t> next_uid{0};
  {
    WriteBatch b;
    for (int i = 0; i < 2000; ++i) b.AddVertex("Person", {{"k", i % 100}, {"uid", next_uid.fetch_add(1)}});
    ASSERT_TRUE(graph->Write(std::move(b)).ok());
  }
  std::atomic<int> writers_left{kWriters};
  std::atomic<bool> indexes_done{false};
  std::atomic<std::uint64_t> checks{0}, failed_writes{0};
  std::mutex mu;
  std::string first_violation;
  auto violation = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    if (first_violation.empty()) first_violation = what;
  };

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(w));
      for (std::uint64_t i = 0; i < batches; ++i) {
        Snapshot s = graph->GetSnapshot();
        const std::uint64_t limit = s.vertex_id_limit();
        WriteBatch b;
        for (int op = 0; op < 8; ++op) {
          const std::uint64_t v = std::uniform_int_distribution<std::uint64_t>(0, limit - 1)(rng);
          if (!s.HasVertex(VertexId(v))) continue;
          b.SetProperty(VertexId(v), "k", std::uniform_int_distribution<std::int64_t>(0, 99)(rng));
        }
        b.AddVertex("Person", {{"k", static_cast<std::int64_t>(i % 100)}, {"uid", next_uid.fetch_add(1)}});
        if (i % 5 == 0) {
          const std::uint64_t v = std::uniform_int_distribution<std::uint64_t>(0, limit - 1)(rng);
          if (s.HasVertex(VertexId(v))) b.RemoveVertex(VertexId(v));
        }
        // Another writer may have removed a vertex this batch names: that
        // batch fails alone with NotFound, which is fine here.
        Result<CommitInfo> r = graph->Write(std::move(b));
        if (!r.ok() && r.status().code() != StatusCode::kNotFound)
          violation("write: " + r.status().ToString());
        if (!r.ok()) failed_writes.fetch_add(1);
      }
      writers_left.fetch_sub(1);
    });
  }
  threads.emplace_back([&] {
    for (std::uint64_t c = 0; c < cycles; ++c) {
      Status a = graph->CreateIndex({.name = "k",
                                     .label = "Person",
                                     .keys = {"k"},
                                     .kind = IndexKind::kOrdered,
                                     .type = ValueType::kInt64});
      Status u =
          graph->CreateIndex({.name = "uid", .label = "Person", .keys = {"uid"}, .kind = IndexKind::kUnique});
      if (!a.ok() || !u.ok()) violation("CreateIndex: " + a.ToString() + " / " + u.ToString());
      std::this_thread::yield();
      if (c + 1 < cycles) {
        Status d1 = graph->DropIndex("k"), d2 = graph->DropIndex("uid");
        if (!d1.ok() || !d2.ok()) violation("DropIndex: " + d1.ToString() + " / " + d2.ToString());
      }
    }
    indexes_done.store(true);
  });
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937_64 rng(2000 + static_cast<std::uint64_t>(r));
      while (writers_left.load() > 0 || !indexes_done.load()) {
        Snapshot s = graph->GetSnapshot();
        std::string err = CheckSnapshot(s, rng);
        if (!err.empty()) violation("sequence " + std::to_string(s.sequence()) + ": " + err);
        checks.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // The final state, with both indexes ready.
  std::mt19937_64 rng(7);
  Snapshot last = graph->GetSnapshot();
  EXPECT_EQ(CheckSnapshot(last, rng), "");
  EXPECT_EQ(last.Indexes().size(), 2u);
  EXPECT_EQ(first_violation, "");
  std::cout << "index concurrency: " << checks.load() << " snapshot checks, " << failed_writes.load()
            << " writes refused (NotFound races), final sequence " << last.sequence() << std::endl;
}

}  // namespace
}  // namespace quiver
