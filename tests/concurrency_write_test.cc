// Conditional writes under contention (concurrency binary, also under
// TSan): threads doing read-modify-write of one counter with ExpectProperty,
// retrying on Aborted, lose no increment; upserts of shared keys from many
// threads make one vertex per key.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "quiver/quiver.h"

namespace quiver {
namespace {

TEST(ConcurrencyWriteTest, CounterWithExpectLosesNoIncrement) {
  constexpr int kThreads = 8;
  constexpr int kIncrements = 200;
  auto g = Graph::OpenInMemory().value();
  WriteBatch init;
  init.AddVertex("Counter", {{"n", std::int64_t{0}}});
  const VertexId counter = g->Write(std::move(init)).value().vertices[0];
  std::atomic<std::uint64_t> aborted{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        while (true) {
          Snapshot s = g->GetSnapshot();
          const std::int64_t n = *s.GetProperty(counter, "n")->as_int64();
          WriteBatch b;
          b.ExpectProperty(counter, "n", n);
          b.SetProperty(counter, "n", n + 1);
          Result<CommitInfo> r = g->Write(std::move(b));
          if (r.ok()) break;
          if (r.status().code() != StatusCode::kAborted) {
            failed.fetch_add(1);
            return;
          }
          aborted.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(*g->GetSnapshot().GetProperty(counter, "n")->as_int64(), kThreads * kIncrements);
  std::cout << "counter: " << kThreads * kIncrements << " increments by " << kThreads << " threads, "
            << aborted.load() << " aborted attempts retried\n";
}

TEST(ConcurrencyWriteTest, ConcurrentUpsertsOfSharedKeysMakeOneVertexEach) {
  constexpr int kThreads = 8;
  constexpr int kKeys = 50;
  auto g = Graph::OpenInMemory().value();
  ASSERT_TRUE(g->CreateIndex({.name = "k", .label = "K", .keys = {"k"}, .kind = IndexKind::kUnique}).ok());
  std::vector<std::thread> threads;
  std::vector<std::vector<VertexId>> seen(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kKeys; ++k) {
        WriteBatch b;
        b.UpsertVertex("K", {{"k", (k * 7 + t) % kKeys}}, {{"by", t}});
        Result<CommitInfo> r = g->Write(std::move(b));
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        seen[t].push_back(r->vertices[0]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  Snapshot s = g->GetSnapshot();
  EXPECT_EQ(s.CountVertices(*s.FindLabel("K")), static_cast<std::uint64_t>(kKeys));
  for (int t = 0; t < kThreads; ++t)
    for (int k = 0; k < kKeys; ++k)
      EXPECT_EQ(seen[t][k], s.FindVertex("K", "k", (k * 7 + t) % kKeys).value());
}

}  // namespace
}  // namespace quiver
