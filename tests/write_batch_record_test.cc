// Tests for how a WriteBatch stores what it records (write/write_batch_internal.h):
// the per-batch name table, the compact operation records as the engine
// decodes them, reserve(), and reusing one batch's memory across writes
// (Clear, copy, move). What the engine commits is checked through an
// in-memory graph, and once through the WAL of a durable one.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

using internal::WriteBatchInternal;
using Op = WriteBatchInternal::Op;

std::unique_ptr<Graph> RecordTestGraph() { return Graph::OpenInMemory().value(); }

// The names the batch's operations carry, in op order.
std::vector<std::string> OpNames(const WriteBatch& b) {
  std::vector<std::string> out;
  for (const Op& op : WriteBatchInternal::Ops(b)) out.emplace_back(op.name);
  return out;
}

TEST(WriteBatchRecordTest, OneNameRepeatedIsStoredOnce) {
  WriteBatch b;
  for (std::uint64_t i = 0; i < 10'000; ++i) b.AddEdge("KNOWS", VertexId(i), VertexId(i + 1));
  EXPECT_EQ(WriteBatchInternal::NameCount(b), 1u);
  for (const Op& op : WriteBatchInternal::Ops(b)) ASSERT_EQ(op.name, "KNOWS");
}

TEST(WriteBatchRecordTest, AlternatingNamesAreStoredOnceEach) {
  // Each lookup misses the one-name cache and finds the name in the table.
  WriteBatch b;
  for (int i = 0; i < 100; ++i) b.AddVertex(i % 2 == 0 ? "Person" : "City");
  EXPECT_EQ(WriteBatchInternal::NameCount(b), 2u);
  std::vector<std::string> names = OpNames(b);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(names[i], i % 2 == 0 ? "Person" : "City") << i;
}

TEST(WriteBatchRecordTest, ManyDistinctNamesAreInternedAndCommitted) {
  // Past the scanned few, names are found through the hash table, which
  // grows several times on the way to 3,000.
  constexpr int kNames = 3'000;
  WriteBatch b;
  std::vector<NewVertex> v;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < kNames; ++i) v.push_back(b.AddVertex("L" + std::to_string(i)));
  for (int i = 0; i < kNames; ++i) b.AddEdge("T" + std::to_string(i % 50), v[i], v[i + kNames]);
  for (int i = 0; i < kNames; i += 7)
    b.RemoveProperty(v[i], "L" + std::to_string(i));  // a label's name as a key
  EXPECT_EQ(WriteBatchInternal::NameCount(b), static_cast<std::size_t>(kNames + 50));

  auto graph = RecordTestGraph();
  Result<CommitInfo> info = graph->Write(b);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  Snapshot s = graph->GetSnapshot();
  ASSERT_EQ(s.Labels().size(), static_cast<std::size_t>(kNames));
  ASSERT_EQ(s.EdgeTypes().size(), 50u);
  for (int i = 0; i < 2 * kNames; ++i)
    ASSERT_EQ(s.LabelName(*s.LabelOf(info->vertices[i])), "L" + std::to_string(i % kNames)) << i;
  for (int i = 0; i < kNames; ++i)
    ASSERT_EQ(s.EdgeTypeName(s.GetEdge(info->edges[i])->type), "T" + std::to_string(i % 50)) << i;
}

TEST(WriteBatchRecordTest, NamesWithEmbeddedNulAreDistinct) {
  const std::string a_nul_b("a\0b", 3);
  const std::string a_nul_c("a\0c", 3);
  const std::string a_nul("a\0", 2);
  WriteBatch b;
  b.AddVertex(a_nul_b);
  b.AddVertex("a");
  b.AddVertex(a_nul_c);
  b.AddVertex(a_nul);
  b.AddVertex(a_nul_b);
  EXPECT_EQ(WriteBatchInternal::NameCount(b), 4u);
  EXPECT_EQ(OpNames(b), (std::vector<std::string>{a_nul_b, "a", a_nul_c, a_nul, a_nul_b}));

  auto graph = RecordTestGraph();
  Result<CommitInfo> info = graph->Write(std::move(b));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.Labels().size(), 4u);
  EXPECT_EQ(s.LabelName(*s.LabelOf(info->vertices[0])), a_nul_b);
  EXPECT_EQ(s.LabelName(*s.LabelOf(info->vertices[1])), "a");
  EXPECT_EQ(s.LabelName(*s.LabelOf(info->vertices[2])), a_nul_c);
  EXPECT_EQ(s.LabelName(*s.LabelOf(info->vertices[3])), a_nul);
  EXPECT_EQ(info->vertices[4].value(), info->vertices[0].value() + 4);
  EXPECT_EQ(s.LabelOf(info->vertices[4]), s.LabelOf(info->vertices[0]));
}

TEST(WriteBatchRecordTest, EmptyNameIsRecordedAndRefused) {
  // "" is a name like any other to the table; validation refuses it.
  WriteBatch b;
  b.AddVertex("");
  b.AddVertex("A");
  b.AddVertex("");
  EXPECT_EQ(OpNames(b), (std::vector<std::string>{"", "A", ""}));
  auto graph = RecordTestGraph();
  EXPECT_EQ(graph->Write(std::move(b)).status().code(), StatusCode::kInvalidArgument);
}

TEST(WriteBatchRecordTest, EveryKindDecodesAsRecorded) {
  WriteBatch b;
  WriteBatch other;
  const NewVertex foreign = other.AddVertex("X");
  const NewEdge foreign_edge = other.AddEdge("Y", foreign, foreign);
  const std::uint64_t big = (std::uint64_t{1} << 63) + 5;  // no bit of an id is taken for flags

  const NewVertex v = b.AddVertex("Person", {{"name", "Ada"}});
  const NewEdge e = b.AddEdge("KNOWS", v, VertexId(big), {{"since", 1833}, {"w", 0.5}});
  b.AddEdge("KNOWS", foreign, v);
  b.SetProperty(VertexId(3), "k", 1);
  b.SetProperty(foreign_edge, "k", 2);
  b.RemoveProperty(v, "gone");
  b.RemoveProperty(EdgeId(big), "gone2");
  b.RemoveEdge(e);
  b.RemoveVertex(foreign);
  b.UpsertVertex("City", {{"name", "London"}, {"cc", "uk"}}, {{"pop", 9}}, UpsertMode::kReplace);
  b.UpsertEdge("VISITED", VertexId(7), v, {{"n", 1}});
  b.ExpectProperty(VertexId(8), "visits", 41);
  b.ExpectNoProperty(EdgeId(9), "absent");
  b.ExpectExists(VertexId(10));
  b.ExpectMissing(EdgeId(11));
  b.ExpectKeyFree("City", {{"name", "Paris"}});

  const auto ops = WriteBatchInternal::Ops(b);
  ASSERT_EQ(ops.size(), 16u);
  const std::uint64_t tag = WriteBatchInternal::Tag(b);
  auto is_handle = [&](auto ref, std::uint64_t index) {
    return ref.is_new() && ref.batch_tag() == tag && ref.raw() == index;
  };
  auto is_foreign = [&](auto ref, std::uint64_t index) {
    return ref.is_new() && ref.batch_tag() != tag && ref.raw() == index;
  };
  auto is_id = [](auto ref, std::uint64_t id) { return !ref.is_new() && ref.raw() == id; };

  Op op = ops[0];
  EXPECT_EQ(op.kind, OpKind::kAddVertex);
  EXPECT_EQ(op.name, "Person");
  ASSERT_EQ(op.prop_count, 1u);
  EXPECT_EQ(WriteBatchInternal::Props(b, op)[0].key, "name");

  op = ops[1];
  EXPECT_EQ(op.kind, OpKind::kAddEdge);
  EXPECT_EQ(op.name, "KNOWS");
  EXPECT_TRUE(is_handle(op.v1, 0));
  EXPECT_TRUE(is_id(op.v2, big));
  ASSERT_EQ(op.prop_count, 2u);
  EXPECT_EQ(WriteBatchInternal::Props(b, op)[1].key, "w");

  op = ops[2];
  EXPECT_TRUE(is_foreign(op.v1, foreign.index));
  EXPECT_TRUE(is_handle(op.v2, 0));
  EXPECT_EQ(op.prop_count, 0u);

  op = ops[3];
  EXPECT_EQ(op.kind, OpKind::kSetVertexProperty);
  EXPECT_TRUE(is_id(op.v1, 3));
  ASSERT_EQ(op.prop_count, 1u);
  EXPECT_EQ(WriteBatchInternal::Props(b, op)[0].key, "k");

  op = ops[4];
  EXPECT_EQ(op.kind, OpKind::kSetEdgeProperty);
  EXPECT_TRUE(is_foreign(op.e, foreign_edge.index));

  op = ops[5];
  EXPECT_EQ(op.kind, OpKind::kRemoveVertexProperty);
  EXPECT_TRUE(is_handle(op.v1, 0));
  EXPECT_EQ(op.name, "gone");

  op = ops[6];
  EXPECT_EQ(op.kind, OpKind::kRemoveEdgeProperty);
  EXPECT_TRUE(is_id(op.e, big));
  EXPECT_EQ(op.name, "gone2");

  op = ops[7];
  EXPECT_EQ(op.kind, OpKind::kRemoveEdge);
  EXPECT_TRUE(is_handle(op.e, 0));

  op = ops[8];
  EXPECT_EQ(op.kind, OpKind::kRemoveVertex);
  EXPECT_TRUE(is_foreign(op.v1, foreign.index));

  op = ops[9];
  EXPECT_EQ(op.kind, OpKind::kUpsertVertex);
  EXPECT_EQ(op.name, "City");
  EXPECT_EQ(op.key_count, 2u);
  EXPECT_EQ(op.prop_count, 3u);
  EXPECT_EQ(op.flag, static_cast<std::uint8_t>(UpsertMode::kReplace));
  EXPECT_EQ(WriteBatchInternal::Props(b, op)[2].key, "pop");

  op = ops[10];
  EXPECT_EQ(op.kind, OpKind::kUpsertEdge);
  EXPECT_EQ(op.name, "VISITED");
  EXPECT_TRUE(is_id(op.v1, 7));
  EXPECT_TRUE(is_handle(op.v2, 0));
  EXPECT_EQ(op.flag, static_cast<std::uint8_t>(UpsertMode::kMerge));

  op = ops[11];
  EXPECT_EQ(op.kind, OpKind::kExpectVertexProperty);
  EXPECT_TRUE(is_id(op.v1, 8));
  EXPECT_EQ(op.flag, 1);
  EXPECT_EQ(WriteBatchInternal::Props(b, op)[0].key, "visits");

  op = ops[12];
  EXPECT_EQ(op.kind, OpKind::kExpectEdgeProperty);
  EXPECT_TRUE(is_id(op.e, 9));
  EXPECT_EQ(op.flag, 0);
  EXPECT_EQ(op.name, "absent");

  op = ops[13];
  EXPECT_EQ(op.kind, OpKind::kExpectVertex);
  EXPECT_TRUE(is_id(op.v1, 10));
  EXPECT_EQ(op.flag, 1);

  op = ops[14];
  EXPECT_EQ(op.kind, OpKind::kExpectEdge);
  EXPECT_TRUE(is_id(op.e, 11));
  EXPECT_EQ(op.flag, 0);

  op = ops[15];
  EXPECT_EQ(op.kind, OpKind::kExpectKeyFree);
  EXPECT_EQ(op.name, "City");
  EXPECT_EQ(op.key_count, 1u);
  EXPECT_EQ(op.prop_count, 1u);

  // What Limits::max_batch_ops counts is unchanged by the layout: one per
  // op, plus each property of adds and upserts and each key of upserts and
  // ExpectKeyFree.
  EXPECT_EQ(WriteBatchInternal::CountedOps(b), 16u + 1 + 2 + 3 + 1 + 1);
  EXPECT_EQ(b.added_vertices(), 2u);
  EXPECT_EQ(b.added_edges(), 3u);
}

TEST(WriteBatchRecordTest, ReserveThenClearKeepsHandlesCorrect) {
  WriteBatch b;
  b.reserve(1'000, 100);
  b.reserve(10);  // never shrinks
  std::vector<NewVertex> vs;
  for (std::uint32_t i = 0; i < 100; ++i) {
    vs.push_back(b.AddVertex("V", {{"i", static_cast<std::int64_t>(i)}}));
    ASSERT_EQ(vs.back().index, i);
  }
  for (std::uint32_t i = 0; i + 1 < 100; ++i) ASSERT_EQ(b.AddEdge("E", vs[i], vs[i + 1]).index, i);
  const std::uint64_t first_tag = vs[0].batch_tag;
  auto graph = RecordTestGraph();
  Result<CommitInfo> first = graph->Write(b);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  b.Clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(WriteBatchInternal::NameCount(b), 0u);
  b.reserve(1'000, 100);
  const NewVertex again = b.AddVertex("W");
  EXPECT_EQ(again.index, 0u);
  EXPECT_NE(again.batch_tag, first_tag);
  EXPECT_EQ(b.AddEdge("F", again, first->vertices[5]).index, 0u);
  Result<CommitInfo> second = graph->Write(b);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->vertices.size(), 1u);
  ASSERT_EQ(second->edges.size(), 1u);
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.vertex_count(), 101u);
  EXPECT_EQ(s.edge_count(), 100u);
  const EdgeInfo edge = *s.GetEdge(second->edges[0]);
  EXPECT_EQ(edge.source, second->vertices[0]);
  EXPECT_EQ(edge.target, first->vertices[5]);
  EXPECT_EQ(s.EdgeTypeName(edge.type), "F");

  // A handle from before the Clear names nothing in the refilled batch.
  b.Clear();
  b.AddVertex("W");
  b.AddEdge("F", vs[0], VertexId(0));
  EXPECT_EQ(graph->Write(std::move(b)).status().code(), StatusCode::kInvalidArgument);
}

// Records `n` vertices of label `label` and a chain of edges of type `type`
// between them, with a property on every tenth edge. Returns the first
// vertex's handle.
NewVertex RecordChain(WriteBatch& b, std::string_view label, std::string_view type, int n) {
  std::vector<NewVertex> v;
  for (int i = 0; i < n; ++i) v.push_back(b.AddVertex(label, {{"i", i}}));
  for (int i = 0; i + 1 < n; ++i) {
    NewEdge e = b.AddEdge(type, v[i], v[i + 1]);
    if (i % 10 == 0) b.SetProperty(e, "tenth", i);
  }
  return v[0];
}

TEST(WriteBatchRecordTest, AReusedBatchCommitsExactlyTheSecondContents) {
  // Reference: two fresh batches.
  auto reference = RecordTestGraph();
  {
    WriteBatch first;
    RecordChain(first, "A", "AA", 300);
    ASSERT_TRUE(reference->Write(std::move(first)).ok());
    WriteBatch second;
    RecordChain(second, "B", "BB", 120);
    second.RemoveProperty(VertexId(3), "i");
    ASSERT_TRUE(reference->Write(std::move(second)).ok());
  }
  const std::string expected = test_util::Dump(reference->GetSnapshot());

  // Reused through a copy: Write(b), Clear, refill.
  auto by_copy = RecordTestGraph();
  WriteBatch b;
  b.reserve(1'000, 500);
  RecordChain(b, "A", "AA", 300);
  ASSERT_TRUE(by_copy->Write(b).ok());
  b.Clear();
  RecordChain(b, "B", "BB", 120);
  b.RemoveProperty(VertexId(3), "i");
  Result<CommitInfo> info = by_copy->Write(b);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->vertices.size(), 120u);
  EXPECT_EQ(info->edges.size(), 119u);
  EXPECT_EQ(test_util::Dump(by_copy->GetSnapshot()), expected);

  // Reused after a move: the moved-from batch is empty, refilled without Clear.
  auto by_move = RecordTestGraph();
  WriteBatch m;
  RecordChain(m, "A", "AA", 300);
  ASSERT_TRUE(by_move->Write(std::move(m)).ok());
  EXPECT_TRUE(m.empty());  // NOLINT(bugprone-use-after-move): documented as empty and reusable
  EXPECT_EQ(m.added_vertices(), 0u);
  EXPECT_EQ(m.added_edges(), 0u);
  RecordChain(m, "B", "BB", 120);
  m.RemoveProperty(VertexId(3), "i");
  ASSERT_TRUE(by_move->Write(std::move(m)).ok());
  EXPECT_EQ(test_util::Dump(by_move->GetSnapshot()), expected);
}

TEST(WriteBatchRecordTest, AMovedFromBatchDoesNotShareHandlesWithItsTarget) {
  WriteBatch source;
  const NewVertex before = source.AddVertex("A");
  WriteBatch target(std::move(source));
  const NewVertex refilled = source.AddVertex("B");  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(refilled.index, 0u);
  EXPECT_NE(refilled.batch_tag, before.batch_tag);
  // The handle from before the move follows the operations into `target`.
  target.SetProperty(before, "k", 1);
  auto graph = RecordTestGraph();
  ASSERT_TRUE(graph->Write(std::move(target)).ok());
  // A handle of the refilled source is foreign to the target's contents.
  WriteBatch t2;
  t2.AddVertex("C");
  t2.SetProperty(refilled, "k", 1);
  EXPECT_EQ(graph->Write(std::move(t2)).status().code(), StatusCode::kInvalidArgument);
}

TEST(WriteBatchRecordTest, CopyAndMoveKeepNames) {
  // Enough names for the hash table, so its copy is exercised too.
  WriteBatch original;
  std::vector<NewVertex> v;
  for (int i = 0; i < 40; ++i) v.push_back(original.AddVertex("L" + std::to_string(i)));
  original.AddEdge("KNOWS", v[0], v[1]);
  const std::vector<std::string> names = OpNames(original);

  WriteBatch copy(original);
  WriteBatch assigned;
  assigned.AddVertex("Junk");
  assigned = original;
  EXPECT_EQ(OpNames(copy), names);
  EXPECT_EQ(OpNames(assigned), names);

  // Each goes on interning on its own: old names found, new ones added.
  copy.AddVertex("L7");
  copy.AddVertex("Mine");
  original.AddVertex("Theirs");
  original.AddVertex("L39");
  EXPECT_EQ(WriteBatchInternal::NameCount(copy), 42u);
  EXPECT_EQ(WriteBatchInternal::NameCount(original), 42u);
  EXPECT_EQ(OpNames(copy).back(), "Mine");
  EXPECT_EQ(OpNames(original).back(), "L39");
  EXPECT_EQ(OpNames(assigned), names);

  WriteBatch moved(std::move(copy));
  EXPECT_EQ(OpNames(moved).size(), names.size() + 2);
  EXPECT_EQ(OpNames(moved)[7], "L7");
  WriteBatch move_assigned;
  move_assigned.AddVertex("Junk");
  move_assigned = std::move(moved);
  EXPECT_EQ(OpNames(move_assigned)[names.size()], "L7");
  EXPECT_EQ(OpNames(move_assigned)[names.size() + 1], "Mine");
  move_assigned.AddVertex("L12");
  EXPECT_EQ(WriteBatchInternal::NameCount(move_assigned), 42u);

  // Moved-from batches are empty, with empty name tables.
  EXPECT_EQ(WriteBatchInternal::NameCount(copy), 0u);   // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(WriteBatchInternal::NameCount(moved), 0u);  // NOLINT(bugprone-use-after-move)
  copy.AddVertex("Fresh");
  EXPECT_EQ(OpNames(copy), std::vector<std::string>{"Fresh"});

  auto graph = RecordTestGraph();
  Result<CommitInfo> info = graph->Write(std::move(move_assigned));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  Snapshot s = graph->GetSnapshot();
  EXPECT_EQ(s.LabelName(*s.LabelOf(info->vertices[40])), "L7");
  EXPECT_EQ(s.LabelName(*s.LabelOf(info->vertices[41])), "Mine");
  EXPECT_EQ(s.LabelName(*s.LabelOf(info->vertices[42])), "L12");
}

TEST(WriteBatchRecordTest, AReusedBatchReplaysFromTheLog) {
  // The WAL encodes each batch from its records and names; a reused batch
  // (and the resolver's plain batch, rebuilt for every upsert batch) must
  // log exactly its own contents.
  env::SimFileSystem sim;
  Options o = test_util::SmallSegmentOptions();
  o.durable.wal_segment_bytes = 1 << 20;
  std::string expected;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &sim).value();
    ASSERT_TRUE(
        g->CreateIndex({.name = "city", .label = "City", .keys = {"name"}, .kind = IndexKind::kUnique}).ok());
    WriteBatch b;
    for (int round = 0; round < 3; ++round) {
      b.Clear();
      const NewVertex first =
          RecordChain(b, "R" + std::to_string(round), "E" + std::to_string(round % 2), 50);
      const NewVertex city = b.UpsertVertex("City", {{"name", "Paris"}}, {{"round", round}});
      b.AddEdge("IN", first, city);
      if (round > 0) b.RemoveProperty(VertexId(1), "i");
      ASSERT_TRUE(g->Write(b).ok());
    }
    expected = test_util::Dump(g->GetSnapshot());
    EXPECT_EQ(g->GetSnapshot().vertex_count(), 151u);
    ASSERT_TRUE(g->Close().ok());
  }
  auto reopened = GraphImpl::OpenDurable(o, "/db", &sim).value();
  EXPECT_EQ(test_util::Dump(reopened->GetSnapshot()), expected);
  EXPECT_TRUE(reopened->Close().ok());
}

}  // namespace
}  // namespace quiver
