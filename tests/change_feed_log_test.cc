// The change feed's resume from a durable graph's log (feed/log_replay.h):
// a batch read back from the checkpoint and WAL equals the one a live
// subscription delivered; a subscription catches up from the log and goes
// on with the live window without a gap or a repeat, across a reopen
// (concurrency_change_feed_test.cc: while a writer commits); resume points the files no longer hold get
// OutOfRange and change nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "change_feed_model.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

using namespace std::chrono_literals;
using test_util::FeedModel;

class ChangeFeedLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("quiver_feed_log_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

// Every field of a batch, in order: equal strings, equal batches.
std::string Describe(const ChangeBatch& b) {
  std::string out = "seq " + std::to_string(b.sequence) + " index " +
                    std::to_string(static_cast<int>(b.index_change)) + " " + b.index_name + "\n";
  // The tests' values are int64, double and string.
  auto value = [](const std::optional<PropertyValue>& v) {
    if (!v) return std::string("-");
    if (auto i = v->as_int64()) return "i" + std::to_string(*i);
    if (auto d = v->as_double()) return "d" + std::to_string(*d);
    if (auto t = v->as_string()) return "s" + std::string(*t);
    return "type" + std::to_string(static_cast<int>(v->type()));
  };
  auto props = [&](const std::vector<Property>& ps) {
    std::string s;
    for (const Property& p : ps) s += " " + p.key + "=" + value(p.value);
    return s;
  };
  for (const VertexRecord& r : b.created_vertices)
    out += "+v " + std::to_string(r.id.value()) + " " + r.label + props(r.properties) + "\n";
  for (const EdgeRecord& r : b.created_edges)
    out += "+e " + std::to_string(r.id.value()) + " " + r.type + " " + std::to_string(r.source.value()) +
           ">" + std::to_string(r.target.value()) + props(r.properties) + "\n";
  for (const VertexRecord& r : b.removed_vertices)
    out += "-v " + std::to_string(r.id.value()) + " " + r.label + props(r.properties) + "\n";
  for (const EdgeRecord& r : b.removed_edges)
    out += "-e " + std::to_string(r.id.value()) + " " + r.type + " " + std::to_string(r.source.value()) +
           ">" + std::to_string(r.target.value()) + props(r.properties) + "\n";
  for (const VertexPropertyChange& c : b.vertex_property_changes)
    out += "~v " + std::to_string(c.id.value()) + " " + c.key + " " + value(c.old_value) + " " +
           value(c.new_value) + "\n";
  for (const EdgePropertyChange& c : b.edge_property_changes)
    out += "~e " + std::to_string(c.id.value()) + " " + c.key + " " + value(c.old_value) + " " +
           value(c.new_value) + "\n";
  return out;
}

// A random batch over the graph as it is: vertices and edges added and
// removed, properties set and removed (of several types).
WriteBatch RandomBatch(const Snapshot& s, std::mt19937_64& rng) {
  std::vector<VertexId> vs;
  for (VertexId v : s.Vertices()) vs.push_back(v);
  std::vector<EdgeId> es;
  for (EdgeId e : s.Edges()) es.push_back(e);
  WriteBatch b;
  std::vector<NewVertex> added;
  const int ops = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < ops; ++i) {
    switch (rng() % 7) {
      case 0:
      case 1:
        added.push_back(b.AddVertex(rng() % 2 ? "P" : "Q", {{"n", static_cast<std::int64_t>(rng() % 100)}}));
        break;
      case 2:
        if (!added.empty() && !vs.empty())
          b.AddEdge("E", added[rng() % added.size()], vs[rng() % vs.size()], {{"w", 0.5 * (rng() % 8)}});
        else if (vs.size() >= 2)
          b.AddEdge("F", vs[rng() % vs.size()], vs[rng() % vs.size()]);
        break;
      case 3:
        if (!vs.empty()) b.SetProperty(vs[rng() % vs.size()], "name", "v" + std::to_string(rng() % 50));
        break;
      case 4:
        if (!vs.empty()) b.RemoveProperty(vs[rng() % vs.size()], "n");
        break;
      case 5:
        if (!es.empty()) b.SetProperty(es[rng() % es.size()], "w", static_cast<std::int64_t>(rng() % 9));
        break;
      case 6:
        if (vs.size() > 20 && rng() % 2) {
          b.RemoveVertex(vs[rng() % vs.size()]);
          return b;  // nothing else may name it
        }
        if (!es.empty()) {
          b.RemoveEdge(es[rng() % es.size()]);
          return b;
        }
        break;
    }
  }
  return b;
}

// Reads every batch up to `upto` from `sub`, waiting for each.
std::vector<std::shared_ptr<const ChangeBatch>> ReadUpTo(ChangeSubscription& sub, SequenceNumber upto) {
  std::vector<std::shared_ptr<const ChangeBatch>> out;
  while (sub.next_sequence() <= upto) {
    auto r = sub.Next(5s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || *r == nullptr) break;
    out.push_back(*r);
  }
  return out;
}

TEST_F(ChangeFeedLogTest, BatchesFromTheLogEqualWhatALiveSubscriptionDelivered) {
  Options options;
  options.change_feed.max_retained_batches = 4;  // the window holds almost nothing
  auto g = Graph::Open(options, dir_).value();
  auto live = g->Subscribe(1).value();
  std::vector<std::string> seen(1);  // seen[s]: batch s as delivered live
  std::mt19937_64 rng(7);
  auto commit = [&](int n) {
    for (int i = 0; i < n; ++i) {
      WriteBatch b = RandomBatch(g->GetSnapshot(), rng);
      Result<CommitInfo> r = g->Write(std::move(b), WriteOptions{.sync = rng() % 3 != 0});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (rng() % 40 == 0) {
        ASSERT_TRUE(
            g->CreateIndex(
                 IndexSpec{.name = "by_name" + std::to_string(seen.size()), .label = "P", .keys = {"name"}})
                .ok());
      }
      for (;;) {
        auto next = live->TryNext();
        ASSERT_TRUE(next.ok()) << next.status().ToString();
        if (*next == nullptr) break;
        ASSERT_EQ((*next)->sequence, seen.size());
        seen.push_back(Describe(**next));
      }
    }
  };
  commit(120);
  ASSERT_TRUE(g->Checkpoint().ok());
  commit(120);
  SequenceNumber last = g->GetSnapshot().sequence();
  ASSERT_EQ(seen.size(), last + 1);

  for (SequenceNumber from :
       {SequenceNumber{1}, SequenceNumber{2}, SequenceNumber{60}, last / 2 + 3, last - 1}) {
    SCOPED_TRACE("from " + std::to_string(from));
    auto sub = g->Subscribe(from);
    ASSERT_TRUE(sub.ok()) << sub.status().ToString();
    EXPECT_EQ((*sub)->next_sequence(), from);
    auto batches = ReadUpTo(**sub, last);
    ASSERT_EQ(batches.size(), last - from + 1);
    for (const auto& b : batches) ASSERT_EQ(Describe(*b), seen[b->sequence]);
    // Then the live window, without a gap or a repeat.
    commit(3);
    const SequenceNumber now = g->GetSnapshot().sequence();
    auto more = ReadUpTo(**sub, now);
    ASSERT_EQ(more.size(), now - last);
    for (const auto& b : more) ASSERT_EQ(Describe(*b), seen[b->sequence]);
    last = g->GetSnapshot().sequence();
  }
  ASSERT_TRUE(g->Close().ok());
}

TEST_F(ChangeFeedLogTest, AfterAReopenEveryBatchComesFromTheLogAndRebuildsTheGraph) {
  std::mt19937_64 rng(11);
  SequenceNumber last = 0;
  {
    auto g = Graph::Open(Options{}, dir_).value();
    for (int i = 0; i < 150; ++i) {
      if (i == 90) {
        ASSERT_TRUE(g->Checkpoint().ok());
      }
      ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng)).ok());
    }
    last = g->GetSnapshot().sequence();
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = Graph::Open(Options{}, dir_).value();
  auto sub = g->Subscribe(1);
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  FeedModel model;  // the empty graph, sequence 0
  for (const auto& b : ReadUpTo(**sub, last)) ASSERT_EQ(model.Apply(*b), "") << "batch " << b->sequence;
  EXPECT_EQ(model, FeedModel::Of(g->GetSnapshot()));
  // New commits follow from the window.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng)).ok());
  for (const auto& b : ReadUpTo(**sub, last + 5)) ASSERT_EQ(model.Apply(*b), "") << "batch " << b->sequence;
  EXPECT_EQ(model, FeedModel::Of(g->GetSnapshot()));
  ASSERT_TRUE(g->Close().ok());
}

TEST_F(ChangeFeedLogTest, ResumePointsTheFilesNoLongerHoldAreOutOfRangeAndChangeNothing) {
  Options options;
  options.durable.wal_segment_bytes = 8 << 10;  // many segments, so cleanup removes some
  options.durable.checkpoint_wal_bytes = 0;     // checkpoints only when asked
  auto g = Graph::Open(options, dir_).value();
  std::mt19937_64 rng(3);
  auto commit = [&](int n) {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng)).ok());
  };
  commit(100);
  ASSERT_TRUE(g->Checkpoint().ok());
  const SequenceNumber first_checkpoint = g->GetDurabilityStats().last_checkpoint_sequence;
  commit(100);
  ASSERT_TRUE(g->Checkpoint().ok());
  const SequenceNumber second_checkpoint = g->GetDurabilityStats().last_checkpoint_sequence;
  commit(100);
  ASSERT_TRUE(g->Checkpoint().ok());  // the first checkpoint and the log it needed are gone
  commit(20);
  const SequenceNumber last = g->GetSnapshot().sequence();

  ASSERT_GT(first_checkpoint, 0u);
  auto gone = g->Subscribe(first_checkpoint);
  ASSERT_EQ(gone.status().code(), StatusCode::kOutOfRange) << gone.status().ToString();
  EXPECT_NE(gone.status().message().find("is no longer in the log"), std::string::npos)
      << gone.status().ToString();
  EXPECT_EQ(g->GetSnapshot().sequence(), last);

  // From just after the oldest checkpoint kept: rebuilt from it.
  auto kept = g->Subscribe(second_checkpoint + 1);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  auto batches = ReadUpTo(**kept, last);
  ASSERT_EQ(batches.size(), last - second_checkpoint);
  EXPECT_EQ(batches.front()->sequence, second_checkpoint + 1);
  EXPECT_EQ(batches.back()->sequence, last);
  EXPECT_EQ(g->GetSnapshot().sequence(), last);
  ASSERT_TRUE(g->Close().ok());
}

}  // namespace
}  // namespace quiver
