// Review tests for 3240cdb ("WriteBatch: copies draw their own tag, tags are
// 64 bits, byte estimate by capacity"): the copy rule (origins), 64-bit
// tags, PropertyValue::heap_bytes and ApproximateBytes.
//
// A test whose name ends in "Finding" fails on the reviewed code (see the
// report on branch batch-review); the others pin behaviour that holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/batch_codec.h"
#include "write/commit_queue.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

using internal::WriteBatchInternal;
using TagOp = WriteBatchInternal::Op;

std::unique_ptr<Graph> TagReviewGraph() { return Graph::OpenInMemory().value(); }

// Whether `b` takes `r` as one of its own new vertices: recorded in a copy
// of `b` and decoded back (an own handle decodes with the batch's tag, a
// foreign one with 0).
bool TagReviewOwnVertex(const WriteBatch& b, VertexRef r) {
  WriteBatch w = b;
  w.SetProperty(r, "probe", 1);
  const TagOp op = WriteBatchInternal::Ops(w)[w.size() - 1];
  return op.v1.is_new() && op.v1.batch_tag() == WriteBatchInternal::Tag(w);
}

bool TagReviewOwnEdge(const WriteBatch& b, EdgeRef r) {
  WriteBatch w = b;
  w.RemoveEdge(r);
  const TagOp op = WriteBatchInternal::Ops(w)[w.size() - 1];
  return op.e.is_new() && op.e.batch_tag() == WriteBatchInternal::Tag(w);
}

// What the graph says to `b` with the property of `v` set.
StatusCode TagReviewSetCode(Graph& g, const WriteBatch& b, VertexRef v) {
  WriteBatch w = b;
  w.SetProperty(v, "k", 7);
  return g.Write(std::move(w)).status().code();
}

// A by-value sink that hands the batch back: `b = TagReviewPassThrough(b)`.
WriteBatch TagReviewPassThrough(WriteBatch b) { return b; }

using test_util::ThrowsBadAllocAt;

// =====================================================================
// Findings (fail on the reviewed code)
// =====================================================================

// R1 (low: memory and time). Every copy appends the source's entry to the
// origins list, even when the source returned no handle of its own since it
// was itself copied (its entry then adds nothing: each handle it could
// accept below its counts is already covered by the entry before it). So a
// batch passed through a by-value sink and assigned back,
// `b = f(b)` (f takes a WriteBatch and returns it), gains one 16-byte entry
// per round trip, for ever: the list is as long as the batch's history of
// copies, not its contents, and each later copy copies all of it (quadratic
// over a loop), and ApproximateBytes (the queue bound) grows with it. The
// commit message's "one 16-byte entry for Write(batch)'s copy" holds only
// for a batch that is no copy itself. Skipping the entry when the source's
// counts equal its newest origin's (it returned nothing since) keeps this
// loop at one entry.
TEST(WriteBatchTagReviewTest, OriginsDoNotGrowWithCopiesThatAddNothingFinding) {
  WriteBatch b;
  const NewVertex v = b.AddVertex("A");
  const WriteBatch one_copy(b);  // one origin entry
  const std::size_t bound = WriteBatchInternal::ApproximateBytes(one_copy) + 1024;
  for (int i = 0; i < 4000; ++i) b = TagReviewPassThrough(b);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_TRUE(TagReviewOwnVertex(b, v));  // the rule itself holds
  EXPECT_LE(WriteBatchInternal::ApproximateBytes(b), bound)
      << "a one-op batch after 4000 round trips through a by-value sink";
}

// =====================================================================
// Pins (hold on the reviewed code)
// =====================================================================

// Chains of copies, Clear anywhere in the chain, self-assignment, and
// move-assignment into a copy.
TEST(WriteBatchTagReviewTest, HandlesThroughChainsOfCopiesClearAndAssignment) {
  auto graph = TagReviewGraph();
  WriteBatch a;
  const NewVertex a0 = a.AddVertex("A0");
  const NewEdge ae0 = a.AddEdge("E", a0, a0);
  WriteBatch b(a);
  const NewVertex b1 = b.AddVertex("B1");
  WriteBatch c(b);
  const NewVertex c2 = c.AddVertex("C2");
  const NewVertex a1 = a.AddVertex("A1");  // index 1, like b1
  // A copy of a copy: the first batch's handles up to the first copy, the
  // second's up to the second, its own.
  EXPECT_TRUE(TagReviewOwnVertex(c, a0));
  EXPECT_TRUE(TagReviewOwnEdge(c, ae0));
  EXPECT_TRUE(TagReviewOwnVertex(c, b1));
  EXPECT_TRUE(TagReviewOwnVertex(c, c2));
  EXPECT_FALSE(TagReviewOwnVertex(c, a1));
  EXPECT_EQ(TagReviewSetCode(*graph, c, a0), StatusCode::kOk);
  EXPECT_EQ(TagReviewSetCode(*graph, c, b1), StatusCode::kOk);
  EXPECT_EQ(TagReviewSetCode(*graph, c, a1), StatusCode::kInvalidArgument);
  // Clearing the middle of the chain changes nothing in its copy.
  b.Clear();
  EXPECT_TRUE(TagReviewOwnVertex(c, a0));
  EXPECT_TRUE(TagReviewOwnVertex(c, b1));
  EXPECT_FALSE(TagReviewOwnVertex(b, a0));
  EXPECT_FALSE(TagReviewOwnVertex(b, b1));
  // Self-assignment keeps the origins.
  WriteBatch& alias = c;
  c = alias;
  c = std::move(alias);
  EXPECT_TRUE(TagReviewOwnVertex(c, a0));
  EXPECT_TRUE(TagReviewOwnVertex(c, b1));
  EXPECT_TRUE(TagReviewOwnVertex(c, c2));
  // A copy of the cleared middle knows nothing of the chain.
  b.AddVertex("B-again");
  WriteBatch d(b);
  EXPECT_FALSE(TagReviewOwnVertex(d, a0));
  EXPECT_EQ(TagReviewSetCode(*graph, d, a0), StatusCode::kInvalidArgument);
  // Move-assigned into a copy: the copy takes the source's handles only.
  WriteBatch e(a);  // a0, a1 valid
  c = std::move(e);
  EXPECT_TRUE(TagReviewOwnVertex(c, a0));
  EXPECT_TRUE(TagReviewOwnVertex(c, a1));
  EXPECT_FALSE(TagReviewOwnVertex(c, b1));
  EXPECT_FALSE(TagReviewOwnVertex(c, c2));
  EXPECT_EQ(TagReviewSetCode(*graph, c, b1), StatusCode::kInvalidArgument);
  // Clearing the copy forgets the origins.
  c.Clear();
  c.AddVertex("X");
  c.AddVertex("Y");
  EXPECT_FALSE(TagReviewOwnVertex(c, a0));
  EXPECT_FALSE(TagReviewOwnVertex(c, a1));
  // Edge handles are judged by the edge count, vertex handles by the
  // vertex count: an edge index below the vertex count is not enough.
  WriteBatch many;
  for (int i = 0; i < 3; ++i) many.AddVertex("M");
  const NewEdge first_edge = many.AddEdge("E", VertexId(1), VertexId(2));
  WriteBatch many_copy(many);
  const NewEdge later_edge = many.AddEdge("E", VertexId(1), VertexId(2));  // index 1 < 3 vertices
  EXPECT_TRUE(TagReviewOwnEdge(many_copy, first_edge));
  EXPECT_FALSE(TagReviewOwnEdge(many_copy, later_edge));
  const NewVertex later_vertex = many.AddVertex("M");  // index 3
  EXPECT_FALSE(TagReviewOwnVertex(many_copy, later_vertex));
  // The moved-from side forgets them too.
  WriteBatch f(a);
  WriteBatch g = std::move(f);
  f.AddVertex("F0");  // NOLINT(bugprone-use-after-move): refilled
  f.AddVertex("F1");
  EXPECT_FALSE(TagReviewOwnVertex(f, a0));
  EXPECT_TRUE(TagReviewOwnVertex(g, a0));
}

// Rollback by assignment: `saved = b; ...; b = saved`. The handles from
// before `saved` stay valid in b (saved holds them), the later ones become
// invalid, and the batch keeps working. (The copy constructor's comment,
// "the target's own earlier handles become invalid in it", is too strong
// here: those from before the save stay valid, as they should.)
TEST(WriteBatchTagReviewTest, RollbackByAssigningASavedCopy) {
  auto graph = TagReviewGraph();
  WriteBatch b;
  const NewVertex kept = b.AddVertex("Kept");
  const WriteBatch saved = b;
  const NewVertex dropped = b.AddVertex("Dropped");
  b = saved;
  EXPECT_EQ(b.size(), 1u);
  EXPECT_TRUE(TagReviewOwnVertex(b, kept));
  EXPECT_FALSE(TagReviewOwnVertex(b, dropped));
  const NewVertex again = b.AddVertex("Again");  // index 1, like `dropped`
  EXPECT_EQ(again.index, dropped.index);
  EXPECT_EQ(TagReviewSetCode(*graph, b, dropped), StatusCode::kInvalidArgument);
  WriteBatch w = b;
  w.AddEdge("E", kept, again);
  Result<CommitInfo> r = graph->Write(std::move(w));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vertices.size(), 2u);
  EXPECT_EQ(r->edges.size(), 1u);
}

// The resolver maps handles by the decoded tag: an upsert's handle from
// before the copy resolves in the copy; one the original upserted after the
// copy is refused, not mapped onto the copy's upsert of the same index.
TEST(WriteBatchTagReviewTest, UpsertHandlesAcrossACopyThroughTheResolver) {
  auto graph = TagReviewGraph();
  ASSERT_TRUE(
      graph->CreateIndex({.name = "u", .label = "U", .keys = {"id"}, .kind = IndexKind::kUnique}).ok());
  ASSERT_TRUE(graph
                  ->CreateIndex({.name = "f_once",
                                 .element = ElementKind::kEdge,
                                 .label = "F",
                                 .kind = IndexKind::kUniqueEndpoints})
                  .ok());
  WriteBatch original;
  const NewVertex before = original.UpsertVertex("U", {{"id", 1}});
  WriteBatch copy(original);
  const NewVertex in_copy = copy.UpsertVertex("U", {{"id", 2}});
  const NewVertex in_original = original.UpsertVertex("U", {{"id", 3}});
  ASSERT_EQ(in_copy.index, in_original.index);
  WriteBatch ok = copy;
  ok.AddEdge("E", before, in_copy);
  ok.UpsertEdge("F", before, in_copy);
  Result<CommitInfo> r = graph->Write(std::move(ok));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  WriteBatch crossed = copy;
  crossed.AddEdge("E", before, in_original);
  EXPECT_EQ(graph->Write(std::move(crossed)).status().code(), StatusCode::kInvalidArgument);
  WriteBatch crossed_upsert = copy;
  crossed_upsert.UpsertEdge("F", in_original, before);
  EXPECT_EQ(graph->Write(std::move(crossed_upsert)).status().code(), StatusCode::kInvalidArgument);
  // Nothing of the refused batches committed: ids 1 and 2 only.
  EXPECT_EQ(graph->GetSnapshot().vertex_count(), 2u);
}

// The WAL stores a handle as index and bit: a copy's origin handles are
// logged as own, and decode as own in the decoded batch (whatever its tag).
TEST(WriteBatchTagReviewTest, OriginHandlesRoundTripThroughTheWalCodec) {
  WriteBatch original;
  const NewVertex v0 = original.AddVertex("A");
  const NewEdge e0 = original.AddEdge("E", v0, v0);
  WriteBatch copy(original);
  const NewVertex v1 = copy.AddVertex("B");
  copy.AddEdge("E", v0, v1);
  copy.SetProperty(e0, "w", 1);
  copy.SetProperty(v0, "x", 1);
  copy.RemoveProperty(v0, "x");
  std::vector<std::byte> bytes;
  wal::GroupEncoder enc(&bytes);
  enc.Begin(1);
  enc.Add(3, 10, 20, copy);
  Result<std::vector<wal::LoggedBatch>> d = wal::DecodeGroup(bytes);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 1u);
  const WriteBatch& back = (*d)[0].batch;
  ASSERT_EQ(back.size(), copy.size());
  const auto& ops = WriteBatchInternal::Ops(back);
  const std::uint64_t tag = WriteBatchInternal::Tag(back);
  EXPECT_NE(tag, WriteBatchInternal::Tag(copy));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TagOp& op = ops[i];
    for (VertexRef r : {op.v1, op.v2}) {
      if (r.is_new()) {
        EXPECT_EQ(r.batch_tag(), tag) << "op " << i;
      }
    }
    if (op.e.is_new()) {
      EXPECT_EQ(op.e.batch_tag(), tag) << "op " << i;
    }
  }
  auto graph = TagReviewGraph();
  WriteBatch replay = back;
  Result<CommitInfo> r = graph->Write(std::move(replay));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

// Out of memory while copying a batch with origins: the copy constructor
// throws bad_alloc, and copy assignment leaves the target as it was, its
// origins (and so the handles it accepts) included.
TEST(WriteBatchTagReviewTest, CopyOutOfMemoryKeepsTheTargetsOrigins) {
  WriteBatch source;
  for (int i = 0; i < 3; ++i)
    source.AddVertex("a label long enough for the heap " + std::to_string(i),
                     {{"a key long enough for the heap " + std::to_string(i), i}});
  WriteBatch grand;
  const NewVertex grand_v = grand.AddVertex("G");
  WriteBatch parent(grand);
  const NewVertex parent_v = parent.AddVertex("P");
  const WriteBatch chained_source(source);  // a source with an origin of its own
  int failures = 0;
  for (std::uint64_t n = 1; n < 1000; ++n) {
    WriteBatch target(parent);  // origins: grand, parent
    const std::uint64_t tag = WriteBatchInternal::Tag(target);
    const std::size_t bytes = WriteBatchInternal::ApproximateBytes(target);
    const bool threw = ThrowsBadAllocAt(n, [&] { target = chained_source; });
    if (!threw) break;
    ++failures;
    EXPECT_EQ(WriteBatchInternal::Tag(target), tag) << n;
    EXPECT_EQ(target.size(), 2u) << n;
    EXPECT_EQ(WriteBatchInternal::ApproximateBytes(target), bytes) << n;
    EXPECT_TRUE(TagReviewOwnVertex(target, grand_v)) << n;
    EXPECT_TRUE(TagReviewOwnVertex(target, parent_v)) << n;
  }
  EXPECT_GT(failures, 0);
  int ctor_failures = 0;
  for (std::uint64_t n = 1; n < 1000; ++n) {
    const bool threw = ThrowsBadAllocAt(n, [&] { WriteBatch c(chained_source); });
    if (!threw) break;
    ++ctor_failures;
  }
  EXPECT_GT(ctor_failures, 0);
}

// heap_bytes, type by type: by capacity, a list's array and its strings.
TEST(WriteBatchTagReviewTest, HeapBytesOfEveryType) {
  const std::size_t sso = std::string().capacity();
  EXPECT_EQ(PropertyValue().heap_bytes(), 0u);
  EXPECT_EQ(PropertyValue(true).heap_bytes(), 0u);
  EXPECT_EQ(PropertyValue(std::int64_t{1} << 60).heap_bytes(), 0u);
  EXPECT_EQ(PropertyValue(2.5).heap_bytes(), 0u);
  EXPECT_EQ(PropertyValue(std::string(sso, 's')).heap_bytes(), 0u);
  const std::string heap(sso + 1, 'h');
  EXPECT_EQ(PropertyValue(heap).heap_bytes(), heap.capacity() + 1);
  std::string reserved;
  reserved.reserve(1000);
  const std::size_t cap = reserved.capacity();
  EXPECT_EQ(PropertyValue(std::move(reserved)).heap_bytes(), cap + 1);  // empty, but a buffer
  Bytes bytes;
  bytes.reserve(333);
  EXPECT_EQ(PropertyValue(std::move(bytes)).heap_bytes(), 333u);
  FloatVector floats(7);
  floats.reserve(100);
  EXPECT_EQ(PropertyValue(std::move(floats)).heap_bytes(), 100 * sizeof(float));
  StringList list;
  list.reserve(10);
  list.emplace_back("short");
  list.emplace_back(heap);
  EXPECT_EQ(PropertyValue(std::move(list)).heap_bytes(), 10 * sizeof(std::string) + heap.size() + 1);
  // A copy holds only what it uses.
  std::string big;
  big.reserve(5000);
  big.assign(40, 'b');  // keeps the buffer (assigning a temporary would not)
  const PropertyValue moved(std::move(big));
  const PropertyValue copied(moved);  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_GE(moved.heap_bytes(), 5000u);
  EXPECT_EQ(copied.heap_bytes(), 41u);
}

// The queue takes a request's bytes at Push and gives the same back at
// Pop, whatever the batch's estimate; a move keeps the estimate, a copy
// (which shrinks every buffer to its size) never raises it.
TEST(WriteBatchTagReviewTest, ByteEstimateAcrossMoveCopyAndTheQueue) {
  WriteBatch b;
  const NewVertex v = b.AddVertex("A");
  std::string s;
  s.reserve(64 << 10);
  s = "x";
  b.SetProperty(v, "k", std::move(s));
  StringList list;
  list.reserve(1000);
  list.emplace_back(100, 'l');
  b.SetProperty(v, "l", std::move(list));
  WriteBatch c(b);
  const std::size_t before = WriteBatchInternal::ApproximateBytes(b);
  EXPECT_LT(WriteBatchInternal::ApproximateBytes(c), before);
  WriteBatch moved = std::move(b);
  EXPECT_EQ(WriteBatchInternal::ApproximateBytes(moved), before);
  auto* r = new WriteRequest(std::move(moved), /*async=*/false);
  EXPECT_EQ(r->bytes(), before);
  CommitQueue queue(16, 0, 1 << 20);
  ASSERT_TRUE(queue.Push(r).ok());
  EXPECT_EQ(queue.TEST_queued_bytes(), before);
  std::vector<WriteRequest*> group;
  ASSERT_TRUE(queue.PopGroup(&group, 8, 1'000'000));
  ASSERT_EQ(group.size(), 1u);
  EXPECT_EQ(queue.TEST_queued_bytes(), 0u);
  r->Complete(CommitInfo{});
  queue.FinishGroup();
  EXPECT_TRUE(queue.Wait(r).ok());
}

// Tags drawn from many threads at once (construction, copy, Clear, the
// moved-from side) are distinct and never 0.
TEST(WriteBatchTagReviewTest, TagsFromManyThreadsAreDistinct) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 2000;
  WriteBatch shared;
  shared.AddVertex("S");
  std::vector<std::vector<std::uint64_t>> tags(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        WriteBatch fresh;
        WriteBatch copy(shared);  // concurrent copies of one const batch
        WriteBatch moved = std::move(copy);
        tags[t].push_back(WriteBatchInternal::Tag(fresh));
        tags[t].push_back(WriteBatchInternal::Tag(moved));
        tags[t].push_back(WriteBatchInternal::Tag(copy));  // NOLINT(bugprone-use-after-move)
        fresh.Clear();
        tags[t].push_back(WriteBatchInternal::Tag(fresh));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  std::set<std::uint64_t> all;
  all.insert(WriteBatchInternal::Tag(shared));
  for (const auto& v : tags) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 1u + kThreads * kRounds * 4);
  EXPECT_EQ(all.count(0), 0u);
}

// A reused batch written as Write(batch) after each step keeps every handle
// it returned, steps apart; what the graph received is each step's copy.
TEST(WriteBatchTagReviewTest, ReusedBatchWrittenByCopyKeepsItsHandles) {
  auto graph = TagReviewGraph();
  WriteBatch b;
  std::vector<NewVertex> handles;
  for (int step = 0; step < 5; ++step) {
    handles.push_back(b.AddVertex("V"));
    for (const NewVertex& h : handles) b.SetProperty(h, "step", step);
    if (step > 0) b.AddEdge("E", handles[step - 1], handles[step]);
    Result<CommitInfo> r = graph->Write(b);
    ASSERT_TRUE(r.ok()) << step << ": " << r.status().ToString();
    auto f = graph->WriteAsync(b);
    Result<CommitInfo> ra = f.get();
    ASSERT_TRUE(ra.ok()) << step << ": " << ra.status().ToString();
  }
}

}  // namespace
}  // namespace quiver
