// The change feed under concurrency (concurrency binary, also under TSan):
// writers commit random batches while consumers read the feed. Each
// consumer starts from a snapshot and applies every batch's effects to a
// model of it, checking that sequences follow one another, that every
// removed element and old value is what the model holds (so applying batch
// s to the state at s - 1 is checked for every s), and, wherever a
// snapshot of that sequence was taken meanwhile, that the model equals it.
// The batches seen are exactly the committed ones: each sequence a writer
// was given, with the vertices it created.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "change_feed_model.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

using test_util::FeedModel;

// Snapshots taken while the writers run, by sequence (every one: the
// graphs here are small, and a snapshot pins only what later versions changed).
class SnapshotShelf {
 public:
  void Take(Graph& g) {
    auto s = std::make_shared<Snapshot>(g.GetSnapshot());
    std::lock_guard<std::mutex> lock(mu_);
    const SequenceNumber seq = s->sequence();
    shelf_.emplace(seq, std::move(s));
  }
  std::shared_ptr<Snapshot> Find(SequenceNumber seq) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = shelf_.find(seq);
    return it == shelf_.end() ? nullptr : it->second;
  }

 private:
  std::mutex mu_;
  std::map<SequenceNumber, std::shared_ptr<Snapshot>> shelf_;
};

// One random batch of 1 to 4 operations on what `s` holds. Some fail
// (another writer removed an element meanwhile): failed batches commit nothing.
WriteBatch RandomBatch(const Snapshot& s, std::mt19937_64& rng) {
  WriteBatch b;
  auto pick_vertex = [&]() -> std::optional<VertexId> {
    if (s.vertex_id_limit() == 0) return std::nullopt;
    for (int i = 0; i < 4; ++i) {
      VertexId v(rng() % s.vertex_id_limit());
      if (s.HasVertex(v)) return v;
    }
    return std::nullopt;
  };
  auto pick_edge = [&]() -> std::optional<EdgeId> {
    if (s.edge_id_limit() == 0) return std::nullopt;
    for (int i = 0; i < 4; ++i) {
      EdgeId e(rng() % s.edge_id_limit());
      if (s.HasEdge(e)) return e;
    }
    return std::nullopt;
  };
  static const char* const kKeys[] = {"a", "b", "s"};
  auto value = [&]() -> PropertyValue {
    switch (rng() % 3) {
      case 0: return PropertyValue(static_cast<std::int64_t>(rng() % 5));
      case 1: return PropertyValue(static_cast<double>(rng() % 5) / 2);
      default: return PropertyValue(std::string(1 + rng() % 3, static_cast<char>('x' + rng() % 3)));
    }
  };
  const int ops = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < ops; ++i) {
    const auto kind = rng() % 16;
    if (kind < 4) {
      NewVertex n = b.AddVertex(rng() % 2 ? "P" : "Q", {{kKeys[rng() % 3], value()}});
      if (auto v = pick_vertex(); v && rng() % 2) b.AddEdge("E", n, *v, {{"w", value()}});
    } else if (kind < 7) {
      auto u = pick_vertex(), v = pick_vertex();
      if (u && v) b.AddEdge(rng() % 2 ? "E" : "F", *u, *v);
    } else if (kind < 11) {
      if (auto v = pick_vertex()) b.SetProperty(*v, kKeys[rng() % 3], value());
    } else if (kind < 12) {
      if (auto v = pick_vertex()) b.RemoveProperty(*v, kKeys[rng() % 3]);
    } else if (kind < 13) {
      if (auto e = pick_edge()) b.SetProperty(*e, "w", value());
    } else if (kind < 14) {
      if (auto e = pick_edge()) b.RemoveEdge(*e);
    } else if (kind < 15) {
      if (auto v = pick_vertex()) b.RemoveVertex(*v);
    } else if (auto e = pick_edge()) {
      b.RemoveProperty(*e, "w");
    }
  }
  return b;
}

struct Committed {
  std::mutex mu;
  std::map<SequenceNumber, std::vector<VertexId>> vertices;  // by sequence: the ids a writer was given
};

// Each writer shelves a snapshot after every fourth commit of its own, so
// consumers meet snapshots of sequences they pass through.
void RunWriters(Graph& g, int writers, int batches, Committed* committed, SnapshotShelf* shelf = nullptr) {
  std::vector<std::thread> threads;
  for (int t = 0; t < writers; ++t) {
    threads.emplace_back([&g, t, batches, committed, shelf] {
      std::mt19937_64 rng(1000 + t);
      for (int i = 0; i < batches; ++i) {
        WriteBatch b = RandomBatch(g.GetSnapshot(), rng);
        if (b.empty()) continue;
        Result<CommitInfo> r = g.Write(std::move(b));
        if (!r.ok()) continue;  // NotFound: another writer removed an element first
        if (shelf != nullptr && i % 4 == 0) shelf->Take(g);
        std::lock_guard<std::mutex> lock(committed->mu);
        committed->vertices[r->sequence] = r->vertices;
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(ConcurrencyChangeFeedTest, ConsumersSeeEveryCommittedBatchInOrderWithItsEffects) {
  constexpr int kWriters = 3, kBatches = 300, kConsumers = 2;
  Options options;
  options.change_feed.max_retained_batches = 1 << 16;  // nobody falls behind here
  auto g = Graph::OpenInMemory(options).value();
  {
    WriteBatch seed;
    for (int i = 0; i < 20; ++i) seed.AddVertex("P", {{"a", std::int64_t{i}}});
    ASSERT_TRUE(g->Write(std::move(seed)).ok());
  }
  SnapshotShelf shelf;
  Committed committed;
  std::atomic<bool> writers_done{false};
  std::atomic<SequenceNumber> final_sequence{0};
  struct Outcome {
    std::string error;
    std::uint64_t batches = 0, snapshot_checks = 0;
    std::map<SequenceNumber, std::vector<VertexId>> created;
  };
  std::vector<Outcome> outcomes(kConsumers);
  std::vector<std::thread> consumers;
  std::atomic<int> subscribed{0};
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&, c] {
      Outcome& out = outcomes[c];
      Snapshot start = g->GetSnapshot();
      FeedModel model = FeedModel::Of(start);
      auto sub = g->Subscribe(start.sequence() + 1);
      subscribed.fetch_add(1);
      if (!sub.ok()) {
        out.error = sub.status().ToString();
        return;
      }
      for (;;) {
        auto next = (*sub)->Next(std::chrono::milliseconds(20));
        if (!next.ok()) {
          out.error = next.status().ToString();
          return;
        }
        if (*next == nullptr) {
          if (writers_done.load() && model.sequence == final_sequence.load()) return;
          continue;
        }
        const ChangeBatch& b = **next;
        if (std::string e = model.Apply(b); !e.empty()) {
          out.error = "batch " + std::to_string(b.sequence) + ": " + e;
          return;
        }
        ++out.batches;
        for (const VertexRecord& v : b.created_vertices) out.created[b.sequence].push_back(v.id);
        if (auto snap = shelf.Find(b.sequence)) {
          ++out.snapshot_checks;
          if (!(FeedModel::Of(*snap) == model)) {
            out.error = "the model after batch " + std::to_string(b.sequence) + " differs from its snapshot";
            return;
          }
        }
      }
    });
  }
  while (subscribed.load() < kConsumers) std::this_thread::yield();
  std::atomic<bool> stop_shelf{false};
  std::thread shelver([&] {
    while (!stop_shelf.load()) {
      shelf.Take(*g);
      std::this_thread::yield();
    }
  });
  RunWriters(*g, kWriters, kBatches, &committed, &shelf);
  final_sequence.store(g->GetSnapshot().sequence());
  writers_done.store(true);
  for (std::thread& t : consumers) t.join();
  stop_shelf.store(true);
  shelver.join();

  const FeedModel final_state = FeedModel::Of(g->GetSnapshot());
  for (int c = 0; c < kConsumers; ++c) {
    SCOPED_TRACE("consumer " + std::to_string(c));
    EXPECT_EQ(outcomes[c].error, "");
    // Exactly the committed batches: each sequence a writer was given, with
    // the vertices it created (none removed by the batch itself here).
    for (const auto& [seq, ids] : committed.vertices) {
      auto it = outcomes[c].created.find(seq);
      const std::vector<VertexId> seen =
          it == outcomes[c].created.end() ? std::vector<VertexId>{} : it->second;
      if (seen != ids) {
        ADD_FAILURE() << "batch " << seq << " created other vertices than its writer was told";
        break;
      }
    }
    EXPECT_GT(outcomes[c].snapshot_checks, 0u);
    std::cout << "consumer " << c << ": " << outcomes[c].batches << " batches, "
              << outcomes[c].snapshot_checks << " checked against a snapshot\n";
  }
  EXPECT_GT(committed.vertices.size(), 0u);
}

// A consumer that falls behind (a window of 16 batches) is told so, with a
// sequence to resume from, and resumes, from there or from a snapshot;
// every run of batches it reads is still checked against its model.
TEST(ConcurrencyChangeFeedTest, ALaggingConsumerIsCutOffAndResumes) {
  constexpr int kWriters = 2, kBatches = 300;
  Options options;
  options.change_feed.max_retained_batches = 16;
  auto g = Graph::OpenInMemory(options).value();
  {
    WriteBatch seed;
    for (int i = 0; i < 20; ++i) seed.AddVertex("P", {{"a", std::int64_t{i}}});
    ASSERT_TRUE(g->Write(std::move(seed)).ok());
  }
  Committed committed;
  std::atomic<bool> writers_done{false};
  std::string error;
  std::uint64_t cut_off = 0, batches = 0;
  std::thread consumer([&] {
    std::unique_ptr<ChangeSubscription> sub;
    FeedModel model;
    auto restart = [&]() -> bool {
      for (;;) {
        Snapshot s = g->GetSnapshot();
        auto r = g->Subscribe(s.sequence() + 1);
        if (r.ok()) {
          model = FeedModel::Of(s);
          sub = std::move(*r);
          return true;
        }
        if (r.status().code() != StatusCode::kOutOfRange) {
          error = r.status().ToString();
          return false;
        }
      }
    };
    if (!restart()) return;
    for (int i = 0;; ++i) {
      auto next = sub->Next(std::chrono::milliseconds(20));
      if (!next.ok()) {
        if (next.status().code() != StatusCode::kResourceExhausted ||
            next.status().message().find("fell behind at sequence " + std::to_string(model.sequence + 1)) ==
                std::string::npos) {
          error = next.status().ToString();
          return;
        }
        ++cut_off;
        if (!restart()) return;
        continue;
      }
      if (*next == nullptr) {
        if (writers_done.load() && model.sequence == g->GetSnapshot().sequence()) return;
        continue;
      }
      if (std::string e = model.Apply(**next); !e.empty()) {
        error = e;
        return;
      }
      ++batches;
      // A slow consumer: a full comparison with the current state now and then.
      if (i % 8 == 0) (void)FeedModel::Of(g->GetSnapshot());
    }
  });
  RunWriters(*g, kWriters, kBatches, &committed);
  writers_done.store(true);
  consumer.join();
  EXPECT_EQ(error, "");
  EXPECT_GT(committed.vertices.size(), 0u);
  std::cout << "lagging consumer: " << batches << " of " << committed.vertices.size() << " batches, cut off "
            << cut_off << " times\n";
}

// A consumer far behind a durable graph catches up from its log (checkpoint
// and WAL, feed/log_replay.h) while a writer commits and background
// checkpoints remove files, falling behind the small window and resuming
// from the log again: every batch once, in order, each consistent with the
// state before it, and the model equals the graph at the end.
TEST(ConcurrencyChangeFeedTest, CatchUpFromTheLogWhileAWriterCommits) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("quiver_feed_catch_up_" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  Options options;
  options.change_feed.max_retained_batches = 16;
  options.durable.wal_segment_bytes = 64 << 10;
  options.durable.checkpoint_wal_bytes = 512 << 10;  // background checkpoints remove files meanwhile
  auto g = Graph::Open(options, dir).value();
  std::mt19937_64 rng(5);
  for (int i = 0; i < 300; ++i) g->Write(RandomBatch(g->GetSnapshot(), rng)).status().IgnoreError();

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::mt19937_64 wrng(9);
    const std::uint64_t commits = test_util::EnvOr("QUIVER_CONCURRENT_COMMITS", 150) * 4;
    for (std::uint64_t i = 0; i < commits && !stop.load(); ++i)
      g->Write(RandomBatch(g->GetSnapshot(), wrng), WriteOptions{.sync = i % 2 == 0}).status().IgnoreError();
    stop.store(true);
  });
  // From the state before the first batch the log still holds.
  FeedModel model;
  SequenceNumber next = 1;
  if (auto first = g->Subscribe(1); !first.ok()) {
    ASSERT_EQ(first.status().code(), StatusCode::kOutOfRange) << first.status().ToString();
    Snapshot s = g->GetSnapshot();
    model = FeedModel::Of(s);
    next = s.sequence() + 1;
  }
  int subscriptions = 0, restarts = 0;
  std::unique_ptr<ChangeSubscription> sub;
  std::string failure;
  for (;;) {
    // The writer is done and every batch it committed was read.
    if (stop.load() && next > g->GetSnapshot().sequence()) break;
    if (sub == nullptr) {
      auto s = g->Subscribe(next);
      if (!s.ok() && s.status().code() == StatusCode::kOutOfRange) {
        // So far behind that checkpoints removed the log it needs: start
        // again from a snapshot (rare; counted).
        Snapshot snap = g->GetSnapshot();
        model = FeedModel::Of(snap);
        next = snap.sequence() + 1;
        ++restarts;
        continue;
      }
      if (!s.ok()) {
        failure = s.status().ToString();
        break;
      }
      sub = *std::move(s);
      ++subscriptions;
    }
    auto r = sub->Next(std::chrono::milliseconds(50));
    if (!r.ok()) {
      if (r.status().code() != StatusCode::kResourceExhausted) {
        failure = r.status().ToString();
        break;
      }
      sub.reset();  // fell behind the window: resume from the log
      continue;
    }
    if (*r == nullptr) continue;
    failure = model.Apply(**r);
    if (!failure.empty()) break;
    next = (*r)->sequence + 1;
  }
  stop.store(true);
  writer.join();
  ASSERT_EQ(failure, "");
  ASSERT_EQ(next, g->GetSnapshot().sequence() + 1);
  EXPECT_EQ(model, FeedModel::Of(g->GetSnapshot()));
  std::cout << "[          ] caught up to sequence " << next - 1 << " with " << subscriptions
            << " subscriptions, " << restarts << " restarts from a snapshot\n";
  sub.reset();
  ASSERT_TRUE(g->Close().ok());
  g.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace quiver
