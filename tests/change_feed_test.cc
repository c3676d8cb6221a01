// The change feed (quiver/change_feed.h): each operation's effects, the
// subscription points (now, a snapshot, a retained sequence), falling
// behind and resuming, the bounds, bad resume points, Close.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "change_feed_model.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

using namespace std::chrono_literals;
using test_util::FeedModel;

std::shared_ptr<const ChangeBatch> NextOf(ChangeSubscription& sub) {
  auto r = sub.TryNext();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

CommitInfo Commit(Graph& g, WriteBatch b) {
  Result<CommitInfo> r = g.Write(std::move(b));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : CommitInfo{};
}

TEST(ChangeFeedTest, EveryKindOfEffect) {
  auto g = Graph::OpenInMemory().value();
  WriteBatch setup;
  NewVertex a = setup.AddVertex("P", {{"name", "a"}, {"n", std::int64_t{1}}});
  NewVertex b = setup.AddVertex("P", {{"name", "b"}});
  NewVertex c = setup.AddVertex("Q");
  setup.AddEdge("E", a, b, {{"w", 1.5}});
  setup.AddEdge("E", b, c);
  setup.AddEdge("L", b, b);  // a self-loop
  setup.AddEdge("E", c, a);
  CommitInfo s0 = Commit(*g, std::move(setup));
  const VertexId va = s0.vertices[0], vb = s0.vertices[1], vc = s0.vertices[2];
  const EdgeId ab = s0.edges[0], bc = s0.edges[1], bb = s0.edges[2], ca = s0.edges[3];

  Snapshot before = g->GetSnapshot();
  FeedModel model = FeedModel::Of(before);
  auto sub = g->Subscribe(before.sequence() + 1).value();
  EXPECT_EQ(sub->next_sequence(), before.sequence() + 1);
  EXPECT_EQ(NextOf(*sub), nullptr);  // nothing committed yet

  WriteBatch w;
  w.SetProperty(va, "n", std::int64_t{2});  // changed
  w.SetProperty(va, "name", "a");           // the same value: not listed
  w.SetProperty(va, "new", true);           // absent before
  w.RemoveProperty(va, "missing");          // absent before and after: not listed
  w.SetProperty(ab, "w", 2.5);              // an edge property
  w.SetProperty(ca, "x", std::int64_t{7});  // then its edge goes with vc below
  w.RemoveEdge(bc);                         // removed first, then again with its vertex
  w.RemoveVertex(vb);                       // takes ab, bb (self-loop) with it
  NewVertex d = w.AddVertex("R", {{"k", "v"}});
  NewVertex gone = w.AddVertex("R");
  w.AddEdge("E", d, va, {{"w", std::int64_t{3}}});
  w.AddEdge("E", gone, va);
  w.RemoveVertex(gone);  // created and removed: not listed, nor its edge
  w.RemoveVertex(vc);    // takes ca
  CommitInfo s1 = Commit(*g, std::move(w));

  std::shared_ptr<const ChangeBatch> batch = NextOf(*sub);
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->sequence, s1.sequence);
  EXPECT_EQ(batch->index_change, IndexChange::kNone);
  ASSERT_EQ(batch->created_vertices.size(), 1u);
  EXPECT_EQ(batch->created_vertices[0].id, s1.vertices[0]);
  EXPECT_EQ(batch->created_vertices[0].label, "R");
  ASSERT_EQ(batch->created_vertices[0].properties.size(), 1u);
  EXPECT_EQ(batch->created_vertices[0].properties[0].key, "k");
  ASSERT_EQ(batch->created_edges.size(), 1u);
  EXPECT_EQ(batch->created_edges[0].source, s1.vertices[0]);
  EXPECT_EQ(batch->created_edges[0].target, va);
  ASSERT_EQ(batch->removed_vertices.size(), 2u);
  EXPECT_EQ(batch->removed_vertices[0].id, vb);
  EXPECT_EQ(batch->removed_vertices[0].label, "P");
  EXPECT_EQ(batch->removed_vertices[1].id, vc);
  std::vector<EdgeId> removed;
  for (const EdgeRecord& e : batch->removed_edges) removed.push_back(e.id);
  EXPECT_EQ(removed, (std::vector<EdgeId>{ab, bc, bb, ca}));
  // Removed edges are as they were before the batch (ab's old weight, ca without x).
  EXPECT_EQ(batch->removed_edges[0].properties.size(), 1u);
  EXPECT_EQ(batch->removed_edges[0].properties[0].value, PropertyValue(1.5));
  EXPECT_TRUE(batch->removed_edges[3].properties.empty());
  ASSERT_EQ(batch->vertex_property_changes.size(), 2u);
  EXPECT_EQ(batch->vertex_property_changes[0].key, "n");
  EXPECT_EQ(batch->vertex_property_changes[0].old_value, PropertyValue(std::int64_t{1}));
  EXPECT_EQ(batch->vertex_property_changes[0].new_value, PropertyValue(std::int64_t{2}));
  EXPECT_EQ(batch->vertex_property_changes[1].key, "new");
  EXPECT_EQ(batch->vertex_property_changes[1].old_value, std::nullopt);
  EXPECT_TRUE(batch->edge_property_changes.empty());  // ab and ca were removed
  EXPECT_GT(batch->bytes, 0u);
  EXPECT_EQ(model.Apply(*batch), "");
  EXPECT_EQ(model, FeedModel::Of(g->GetSnapshot()));

  // A removal of a property, and one of an edge property.
  WriteBatch r;
  r.RemoveProperty(va, "new");
  r.SetProperty(batch->created_edges[0].id, "w", std::int64_t{4});
  Commit(*g, std::move(r));
  batch = NextOf(*sub);
  ASSERT_NE(batch, nullptr);
  ASSERT_EQ(batch->vertex_property_changes.size(), 1u);
  EXPECT_EQ(batch->vertex_property_changes[0].new_value, std::nullopt);
  ASSERT_EQ(batch->edge_property_changes.size(), 1u);
  EXPECT_EQ(batch->edge_property_changes[0].old_value, PropertyValue(std::int64_t{3}));
  EXPECT_EQ(model.Apply(*batch), "");
  EXPECT_EQ(model, FeedModel::Of(g->GetSnapshot()));
}

TEST(ChangeFeedTest, FailedAndEmptyBatchesTakeNoPlaceUpsertsShowTheirEffects) {
  auto g = Graph::OpenInMemory().value();
  ASSERT_TRUE(g->CreateIndex({.name = "k", .label = "K", .keys = {"k"}, .kind = IndexKind::kUnique}).ok());
  auto sub = g->Subscribe().value();
  const SequenceNumber first = sub->next_sequence();
  EXPECT_EQ(first, g->GetSnapshot().sequence() + 1);
  WriteBatch bad;
  bad.RemoveVertex(VertexId(12345));
  EXPECT_FALSE(g->Write(std::move(bad)).ok());
  EXPECT_TRUE(g->Write(WriteBatch()).ok());
  WriteBatch up;
  up.UpsertVertex("K", {{"k", "x"}}, {{"v", std::int64_t{1}}});
  CommitInfo added = Commit(*g, std::move(up));
  WriteBatch up2;
  up2.UpsertVertex("K", {{"k", "x"}}, {{"v", std::int64_t{2}}});
  Commit(*g, std::move(up2));
  WriteBatch same;  // finds the vertex and sets the value it holds: a batch with no effects
  same.UpsertVertex("K", {{"k", "x"}}, {{"v", std::int64_t{2}}});
  const SequenceNumber same_sequence = Commit(*g, std::move(same)).sequence;
  WriteBatch found;  // finds the vertex and sets nothing: commits like an empty batch, no sequence
  found.UpsertVertex("K", {{"k", "x"}});
  EXPECT_EQ(Commit(*g, std::move(found)).sequence, same_sequence);

  auto b1 = NextOf(*sub);
  ASSERT_NE(b1, nullptr);
  EXPECT_EQ(b1->sequence, first);
  EXPECT_EQ(b1->sequence, added.sequence);
  ASSERT_EQ(b1->created_vertices.size(), 1u);
  auto b2 = NextOf(*sub);
  ASSERT_NE(b2, nullptr);
  EXPECT_EQ(b2->sequence, first + 1);
  ASSERT_EQ(b2->vertex_property_changes.size(), 1u);
  EXPECT_EQ(b2->vertex_property_changes[0].old_value, PropertyValue(std::int64_t{1}));
  EXPECT_EQ(b2->vertex_property_changes[0].new_value, PropertyValue(std::int64_t{2}));
  auto b3 = NextOf(*sub);
  ASSERT_NE(b3, nullptr);
  EXPECT_EQ(b3->sequence, same_sequence);
  EXPECT_TRUE(b3->vertex_property_changes.empty());
  EXPECT_TRUE(b3->created_vertices.empty());
  EXPECT_EQ(NextOf(*sub), nullptr);
}

TEST(ChangeFeedTest, IndexLifecycleCommitsAreBatchesWithoutElementEffects) {
  auto g = Graph::OpenInMemory().value();
  auto sub = g->Subscribe().value();
  ASSERT_TRUE(g->CreateIndex({.name = "by_n", .label = "P", .keys = {"n"}}).ok());
  ASSERT_TRUE(g->DropIndex("by_n").ok());
  std::vector<IndexChange> seen;
  while (auto b = NextOf(*sub)) {
    EXPECT_EQ(b->index_name, "by_n");
    EXPECT_TRUE(b->created_vertices.empty());
    seen.push_back(b->index_change);
  }
  EXPECT_EQ(seen,
            (std::vector<IndexChange>{IndexChange::kDeclared, IndexChange::kReady, IndexChange::kDropped}));
}

TEST(ChangeFeedTest, SubscribeFromARetainedSequenceWhileAnotherSubscriptionKeepsIt) {
  auto g = Graph::OpenInMemory().value();
  auto keeper = g->Subscribe().value();
  const SequenceNumber from = keeper->next_sequence();
  for (int i = 0; i < 5; ++i) {
    WriteBatch b;
    b.AddVertex("P", {{"i", std::int64_t{i}}});
    Commit(*g, std::move(b));
  }
  auto late = g->Subscribe(from + 2).value();
  auto b = NextOf(*late);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->sequence, from + 2);
  EXPECT_EQ(b, [&] {  // consumers share one batch
    NextOf(*keeper);
    NextOf(*keeper);
    return NextOf(*keeper);
  }());
}

TEST(ChangeFeedTest, BadResumePointsGetAPreciseStatusAndChangeNothing) {
  auto g = Graph::OpenInMemory().value();
  for (int i = 0; i < 3; ++i) {
    WriteBatch b;
    b.AddVertex("P");
    Commit(*g, std::move(b));
  }
  const SequenceNumber seq = g->GetSnapshot().sequence();
  auto zero = g->Subscribe(0);
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  auto future = g->Subscribe(seq + 2);
  EXPECT_EQ(future.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(future.status().message().find("past the next one to commit (" + std::to_string(seq + 1) + ")"),
            std::string::npos)
      << future.status().ToString();
  // Nothing was retained before a subscription opened.
  auto old = g->Subscribe(seq);
  EXPECT_EQ(old.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(old.status().message().find("sequence " + std::to_string(seq) + " is not retained"),
            std::string::npos)
      << old.status().ToString();
  EXPECT_EQ(g->GetSnapshot().sequence(), seq);

  // With a window of 2 batches, resuming before it names it.
  Options options;
  options.change_feed.max_retained_batches = 2;
  auto h = Graph::OpenInMemory(options).value();
  auto keeper = h->Subscribe().value();
  for (int i = 0; i < 4; ++i) {
    WriteBatch b;
    b.AddVertex("P");
    Commit(*h, std::move(b));
  }
  auto evicted = h->Subscribe(1);
  EXPECT_EQ(evicted.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(evicted.status().message().find("sequence 1 is no longer retained; it holds 3 to 4"),
            std::string::npos)
      << evicted.status().ToString();
  EXPECT_EQ(h->GetSnapshot().sequence(), 4u);
  // The keeper fell behind: told where to resume; resuming there works.
  auto lag = keeper->TryNext();
  EXPECT_EQ(lag.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(lag.status().message().find("fell behind at sequence 1"), std::string::npos);
  EXPECT_NE(lag.status().message().find("resume from 3 to 4"), std::string::npos) << lag.status().ToString();
  EXPECT_EQ(keeper->TryNext().status().code(), StatusCode::kResourceExhausted);  // it stays so
  auto resumed = h->Subscribe(3).value();
  EXPECT_EQ(NextOf(*resumed)->sequence, 3u);
  EXPECT_EQ(NextOf(*resumed)->sequence, 4u);

  Options zero_bound;
  zero_bound.change_feed.max_retained_batches = 0;
  EXPECT_EQ(Graph::OpenInMemory(zero_bound).status().code(), StatusCode::kInvalidArgument);
  zero_bound = Options{};
  zero_bound.change_feed.max_retained_bytes = 0;
  EXPECT_EQ(Graph::OpenInMemory(zero_bound).status().code(), StatusCode::kInvalidArgument);
}

TEST(ChangeFeedTest, TheByteBoundKeepsAtLeastTheNewestBatch) {
  Options options;
  options.change_feed.max_retained_bytes = 1;
  auto g = Graph::OpenInMemory(options).value();
  auto sub = g->Subscribe().value();
  for (int i = 0; i < 3; ++i) {
    WriteBatch b;
    b.AddVertex("P", {{"s", std::string(100, 'x')}});
    Commit(*g, std::move(b));
  }
  auto lag = sub->TryNext();
  EXPECT_EQ(lag.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(lag.status().message().find("resume from 3 to 3"), std::string::npos) << lag.status().ToString();
}

TEST(ChangeFeedTest, NothingIsRetainedOnceTheLastSubscriptionCloses) {
  auto g = Graph::OpenInMemory().value();
  auto sub = g->Subscribe().value();
  const SequenceNumber from = sub->next_sequence();
  WriteBatch b;
  b.AddVertex("P");
  Commit(*g, std::move(b));
  sub.reset();
  EXPECT_EQ(g->Subscribe(from).status().code(), StatusCode::kOutOfRange);
  // A new subscription from now sees the next batch.
  auto again = g->Subscribe().value();
  WriteBatch c;
  c.AddVertex("P");
  CommitInfo info = Commit(*g, std::move(c));
  EXPECT_EQ(NextOf(*again)->sequence, info.sequence);
}

TEST(ChangeFeedTest, CloseWakesAWaitingNextAndGraphCloseEndsTheFeed) {
  auto g = Graph::OpenInMemory().value();
  auto sub = g->Subscribe().value();
  Status waited;
  std::thread consumer([&] { waited = sub->Next(std::chrono::milliseconds::max()).status(); });
  sub->Close();
  consumer.join();
  EXPECT_EQ(waited.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(sub->TryNext().status().code(), StatusCode::kFailedPrecondition);

  auto other = g->Subscribe().value();
  WriteBatch b;
  b.AddVertex("P");
  Commit(*g, std::move(b));
  Status ended;
  std::thread drainer([&] {
    for (;;) {
      auto r = other->Next(std::chrono::hours(1));
      if (!r.ok()) {
        ended = r.status();
        return;
      }
    }
  });
  ASSERT_TRUE(g->Close().ok());
  drainer.join();
  EXPECT_EQ(ended.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ended.message().find("the graph is closed"), std::string::npos);
  EXPECT_EQ(g->Subscribe().status().code(), StatusCode::kFailedPrecondition);
}

TEST(ChangeFeedTest, DurableGraphFeedsSyncedAndUnsyncedWrites) {
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("quiver_change_feed_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed())))
          .string();
  std::filesystem::remove_all(dir);
  {
    auto g = Graph::Open(Options{}, dir).value();
    Snapshot s = g->GetSnapshot();
    FeedModel model = FeedModel::Of(s);
    auto sub = g->Subscribe(s.sequence() + 1).value();
    WriteBatch a;
    NewVertex v = a.AddVertex("P", {{"n", std::int64_t{1}}});
    a.AddEdge("E", v, v);
    CommitInfo info = Commit(*g, std::move(a));
    WriteBatch b;
    b.SetProperty(info.vertices[0], "n", std::int64_t{2});
    ASSERT_TRUE(g->Write(std::move(b), WriteOptions{.sync = false}).ok());
    for (int i = 0; i < 2; ++i) {
      auto batch = NextOf(*sub);
      ASSERT_NE(batch, nullptr);
      EXPECT_EQ(model.Apply(*batch), "");
    }
    EXPECT_EQ(model, FeedModel::Of(g->GetSnapshot()));
    ASSERT_TRUE(g->Close().ok());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace quiver
