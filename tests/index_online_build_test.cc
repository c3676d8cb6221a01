// The online index build protocol (index/online_build.h) driven group by
// group on the writer's own pieces (VersionChain, BatchProcessor), so that a
// group can be rolled back at a chosen point, as an allocation failure or a
// failed WAL write would: the catch-up of a build must still see every
// change made since its snapshot.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "index/catalog.h"
#include "index/index_build.h"
#include "index/index_keys.h"
#include "index/index_query.h"
#include "index/online_build.h"
#include "storage/version.h"
#include "write/batch_processor.h"
#include "write/index_checks.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

using internal::WriteBatchInternal;

class Writer {
 public:
  Writer() : chain_(new storage::VersionChain), processor_(Limits{}) {}
  ~Writer() { chain_->Shutdown(); }

  storage::VersionChain* chain() { return chain_; }
  const BatchProcessor& processor() const { return processor_; }

  // One group of one batch; published if `publish`, else rolled back after
  // it was applied. Returns the batch's validation status.
  Status Group(const WriteBatch& b, bool publish = true) {
    storage::GroupBlocks blocks;
    storage::MutationContext ctx{++epoch_, nullptr, nullptr, &blocks};
    storage::Version* v = chain_->NewVersion(&ctx);
    Status s = processor_.Validate(b, v->roots);
    if (s.ok()) {
      CommitInfo info;
      processor_.Apply(b, v->roots, ctx, &info);
      ++v->roots.sequence;
    }
    if (s.ok() && publish) {
      chain_->Publish(v);
      processor_.EndGroup(true);
    } else {
      chain_->RollBack(v, ctx);
      processor_.EndGroup(false);
    }
    return s;
  }

  const storage::GraphRoots& head() { return chain_->head()->roots; }

  // The ids of the head's index `name` under the int64 `value`.
  std::vector<std::uint64_t> Find(const std::string& name, std::int64_t value) {
    const index::PropertyIndex* p = chain_->head()->roots.catalog->Find(name);
    std::vector<std::uint64_t> ids;
    if (p == nullptr) return ids;
    std::vector<PropertyValue> values = {value};
    EXPECT_TRUE(index::Lookup(*p, values, SIZE_MAX, &ids).ok());
    return ids;
  }

 private:
  storage::VersionChain* chain_;
  BatchProcessor processor_;
  std::uint64_t epoch_ = 0;
};

IndexSpec PersonK(IndexKind kind) {
  return IndexSpec{.name = "k",
                   .element = ElementKind::kVertex,
                   .label = "Person",
                   .keys = {"k"},
                   .kind = kind,
                   .type = std::nullopt};
}

WriteBatch IndexBatch(OpKind kind, const std::string& name, SequenceNumber declared, IndexSpec spec = {}) {
  IndexOp op;
  op.spec = std::move(spec);
  op.spec.name = name;
  op.declared = declared;
  return WriteBatchInternal::IndexBatch(kind, std::move(op));
}

// Builds `name` from the head as CreateIndex does (GraphImpl::BuildAndPublish).
std::shared_ptr<index::BuiltIndex> BuildFromHead(storage::VersionChain* chain, const std::string& name) {
  auto built = std::make_shared<index::BuiltIndex>(chain, chain->Acquire());
  const index::PropertyIndex* p = built->roots().catalog->Find(name);
  EXPECT_NE(p, nullptr);
  storage::GroupBlocks blocks;
  storage::RetireList unused;
  storage::MutationContext ctx{0, chain->account(), &unused, &blocks};
  EXPECT_TRUE(index::BuildIndex(built->roots(), *p->def, 1, ctx, &built->root).ok());
  blocks.Clear();
  unused.FreeAll(chain->account());
  return built;
}

// A DropIndex of a building index whose group is rolled back leaves the
// index building; its publication must still catch up the writes made
// before the failed drop (regression: the drop forgot them at apply time).
TEST(IndexOnlineBuildTest, RolledBackDropKeepsWhatTheCatchUpNeeds) {
  Writer w;
  WriteBatch people;
  people.AddVertex("Person", {{"k", 1}});
  people.AddVertex("Person", {{"k", 2}});
  ASSERT_TRUE(w.Group(people).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "k", 0, PersonK(IndexKind::kExact))).ok());
  const SequenceNumber declared = 2;
  std::shared_ptr<index::BuiltIndex> built = BuildFromHead(w.chain(), "k");
  // After the build's snapshot: vertex 0 moves from key 1 to key 5.
  WriteBatch move;
  move.SetProperty(VertexId(0), "k", 5);
  ASSERT_TRUE(w.Group(move).ok());
  // A drop that never becomes visible.
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDropIndex, "k", 0), /*publish=*/false).ok());
  IndexOp ready;
  ready.spec.name = "k";
  ready.declared = declared;
  ready.built = std::move(built);
  ASSERT_TRUE(w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, std::move(ready))).ok());
  EXPECT_EQ(w.Find("k", 5), std::vector<std::uint64_t>{0});
  EXPECT_EQ(w.Find("k", 1), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 2), std::vector<std::uint64_t>{1});
}

// The same protocol without the failure: the catch-up applies changes,
// additions and removals made after the snapshot.
TEST(IndexOnlineBuildTest, CatchUpAppliesEveryChangeSinceTheSnapshot) {
  Writer w;
  WriteBatch people;
  for (int i = 0; i < 4; ++i) people.AddVertex("Person", {{"k", i}});
  ASSERT_TRUE(w.Group(people).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "k", 0, PersonK(IndexKind::kUnique))).ok());
  std::shared_ptr<index::BuiltIndex> built = BuildFromHead(w.chain(), "k");
  WriteBatch after;
  after.SetProperty(VertexId(0), "k", 10);  // moved
  after.RemoveProperty(VertexId(1), "k");   // gone from the index
  after.RemoveVertex(VertexId(2));          // gone
  after.AddVertex("Person", {{"k", 2}});    // vertex 4 takes the removed vertex's key
  ASSERT_TRUE(w.Group(after).ok());
  IndexOp ready;
  ready.spec.name = "k";
  ready.declared = 2;
  ready.built = std::move(built);
  ASSERT_TRUE(w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, std::move(ready))).ok());
  EXPECT_EQ(w.Find("k", 10), std::vector<std::uint64_t>{0});
  EXPECT_EQ(w.Find("k", 0), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 1), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 2), std::vector<std::uint64_t>{4});
  EXPECT_EQ(w.Find("k", 3), std::vector<std::uint64_t>{3});
  EXPECT_EQ(w.chain()->head()->roots.catalog->Find("k")->root.count, 3u);
}

IndexOp ReadyOpFor(std::shared_ptr<index::BuiltIndex> built, SequenceNumber declared) {
  IndexOp ready;
  ready.spec.name = "k";
  ready.declared = declared;
  ready.built = std::move(built);
  return ready;
}

// Step 2b (index/online_build.h): the elements added after the build's
// snapshot go into the tree before it is handed to the writer, whose
// catch-up then changes only what changed after that step.
TEST(IndexOnlineBuildTest, ElementsAddedDuringTheBuildAreNotLeftToTheWriter) {
  Writer w;
  WriteBatch people;
  for (int i = 0; i < 4; ++i) people.AddVertex("Person", {{"k", i}});
  ASSERT_TRUE(w.Group(people).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "k", 0, PersonK(IndexKind::kExact))).ok());
  std::shared_ptr<index::BuiltIndex> built = BuildFromHead(w.chain(), "k");
  // While it was built: 50 vertices added (ids 4 ..) and vertex 0 moved.
  WriteBatch added;
  for (int i = 0; i < 50; ++i) added.AddVertex("Person", {{"k", 100 + i}});
  added.SetProperty(VertexId(0), "k", 7);
  ASSERT_TRUE(w.Group(added).ok());
  {
    const index::PropertyIndex* p = built->roots().catalog->Find("k");
    storage::GroupBlocks blocks;
    storage::RetireList unused;
    storage::MutationContext ctx{0, w.chain()->account(), &unused, &blocks};
    const storage::Version* later = w.chain()->Acquire();
    built->SetLater(later, built->roots().vertex_limit);
    ASSERT_TRUE(
        index::AddLaterElements(later->roots, *p->def, built->roots().vertex_limit, ctx, &built->root).ok());
    blocks.Clear();
    unused.FreeAll(w.chain()->account());
  }
  // After that step: one more vertex, one added one moved, one removed.
  WriteBatch more;
  more.AddVertex("Person", {{"k", 200}});
  more.SetProperty(VertexId(4), "k", 300);
  more.RemoveVertex(VertexId(5));
  ASSERT_TRUE(w.Group(more).ok());
  ASSERT_TRUE(w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ReadyOpFor(built, 2))).ok());
  // Vertex 0 (moved before step 2b, from the snapshot's state), and the
  // three changes after it; not the 50 additions.
  EXPECT_EQ(w.processor().TEST_last_catch_up_changes(), 4u);
  // And it read only those: not the 49 additions the tree holds as they are.
  EXPECT_EQ(w.processor().TEST_last_catch_up_visits(), 4u);
  EXPECT_EQ(w.Find("k", 7), std::vector<std::uint64_t>{0});
  EXPECT_EQ(w.Find("k", 0), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 200), std::vector<std::uint64_t>{54});
  EXPECT_EQ(w.Find("k", 300), std::vector<std::uint64_t>{4});
  EXPECT_EQ(w.Find("k", 100), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 101), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 149), std::vector<std::uint64_t>{53});
  EXPECT_EQ(w.chain()->head()->roots.catalog->Find("k")->root.count, 4u + 50u + 1u - 1u);
}

IndexOp ReadyOp(std::shared_ptr<index::BuiltIndex> built, SequenceNumber declared) {
  IndexOp ready;
  ready.spec.name = "k";
  ready.declared = declared;
  ready.built = std::move(built);
  return ready;
}

// Ids handed out in a rolled-back group are handed out again. A Person added
// (and recorded for the building index) in a group that is rolled back must
// not be caught up as the City that later gets its id (regression: the
// Person index held a City vertex).
TEST(IndexOnlineBuildTest, RolledBackAddIsNotCaughtUpUnderAReusedId) {
  Writer w;
  WriteBatch p;
  p.AddVertex("Person", {{"k", 1}});
  ASSERT_TRUE(w.Group(p).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "k", 0, PersonK(IndexKind::kExact))).ok());
  std::shared_ptr<index::BuiltIndex> built = BuildFromHead(w.chain(), "k");
  WriteBatch ghost;
  ghost.AddVertex("Person", {{"k", 7}});  // vertex 1, never published
  ASSERT_TRUE(w.Group(ghost, /*publish=*/false).ok());
  WriteBatch city;
  city.AddVertex("City", {{"k", 7}});  // vertex 1 again
  ASSERT_TRUE(w.Group(city).ok());
  ASSERT_TRUE(
      w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ReadyOp(std::move(built), 2))).ok());
  EXPECT_EQ(w.Find("k", 7), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 1), std::vector<std::uint64_t>{0});
}

// The unique variant: the reused id must not make the publication fail.
TEST(IndexOnlineBuildTest, RolledBackAddDoesNotFailAUniquePublication) {
  Writer w;
  WriteBatch p;
  p.AddVertex("Person", {{"k", 7}});
  ASSERT_TRUE(w.Group(p).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "k", 0, PersonK(IndexKind::kUnique))).ok());
  std::shared_ptr<index::BuiltIndex> built = BuildFromHead(w.chain(), "k");
  WriteBatch ghost;
  ghost.AddVertex("Person", {{"k", 8}});
  ASSERT_TRUE(w.Group(ghost, /*publish=*/false).ok());
  WriteBatch city;
  city.AddVertex("City", {{"k", 7}});  // vertex 1, of another label
  ASSERT_TRUE(w.Group(city).ok());
  Status s = w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ReadyOp(std::move(built), 2)));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(w.Find("k", 7), std::vector<std::uint64_t>{0});
}

// An edge-endpoint constraint built online: the edges added and removed
// while it was built are caught up at publication (the pairs are its keys),
// and a pair repeated meanwhile (unchecked while building) fails the
// publication naming the pair and both edges.
TEST(IndexOnlineBuildTest, EdgeEndpointConstraintCatchesUpAndRefusesARepeatedPair) {
  const IndexSpec knows{
      .name = "k", .element = ElementKind::kEdge, .label = "KNOWS", .kind = IndexKind::kUniqueEndpoints};
  auto holder = [](Writer& w, std::uint64_t src, std::uint64_t dst) -> std::int64_t {
    std::string key;
    index::EndpointKey(src, dst, &key);
    std::uint64_t id = 0;
    return index::IndexTree::Contains(w.head().catalog->Find("k")->root, key, &id)
               ? static_cast<std::int64_t>(id)
               : -1;
  };
  for (bool repeat : {false, true}) {
    SCOPED_TRACE(repeat ? "a repeated pair" : "caught up");
    Writer w;
    WriteBatch g;
    NewVertex a = g.AddVertex("Person"), b = g.AddVertex("Person"), c = g.AddVertex("Person");
    g.AddEdge("KNOWS", a, b);  // edge 0
    g.AddEdge("KNOWS", b, c);  // edge 1
    ASSERT_TRUE(w.Group(g).ok());
    ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "k", 0, knows)).ok());
    std::shared_ptr<index::BuiltIndex> built = BuildFromHead(w.chain(), "k");
    WriteBatch after;
    after.AddEdge("KNOWS", VertexId(0), VertexId(2));  // edge 2
    after.RemoveEdge(EdgeId(0));
    after.AddEdge("KNOWS", VertexId(0), VertexId(1));              // edge 3: the removed edge's pair
    if (repeat) after.AddEdge("KNOWS", VertexId(1), VertexId(2));  // edge 4: edge 1's pair
    ASSERT_TRUE(w.Group(after).ok());
    Status s = w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ReadyOp(std::move(built), 2)));
    if (repeat) {
      EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.ToString();
      for (const char* part : {"pair (1 -> 2)", "edge 1", "edge 4"})
        EXPECT_NE(s.message().find(part), std::string::npos) << s.ToString() << " lacks " << part;
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(w.head().catalog->Find("k")->root.count, 3u);
    EXPECT_EQ(holder(w, 0, 1), 3);
    EXPECT_EQ(holder(w, 1, 2), 1);
    EXPECT_EQ(holder(w, 0, 2), 2);
    EXPECT_EQ(holder(w, 1, 0), -1);
    // Ready: enforced from now on.
    WriteBatch dup;
    dup.AddEdge("KNOWS", VertexId(0), VertexId(2));
    EXPECT_EQ(w.Group(dup).code(), StatusCode::kAlreadyExists);
  }
}

// A publication whose group is rolled back leaves the index building; the
// next publication (from the same snapshot) must still catch up every
// change made after it (regression: the first one took the recorded ids).
TEST(IndexOnlineBuildTest, RolledBackPublicationKeepsWhatTheCatchUpNeeds) {
  Writer w;
  WriteBatch people;
  people.AddVertex("Person", {{"k", 1}});
  people.AddVertex("Person", {{"k", 2}});
  ASSERT_TRUE(w.Group(people).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "k", 0, PersonK(IndexKind::kExact))).ok());
  std::shared_ptr<index::BuiltIndex> first = BuildFromHead(w.chain(), "k");
  std::shared_ptr<index::BuiltIndex> second = BuildFromHead(w.chain(), "k");
  WriteBatch move;
  move.SetProperty(VertexId(0), "k", 5);
  ASSERT_TRUE(w.Group(move).ok());
  ASSERT_TRUE(w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ReadyOp(std::move(first), 2)),
                      /*publish=*/false)
                  .ok());
  ASSERT_TRUE(
      w.Group(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ReadyOp(std::move(second), 2))).ok());
  EXPECT_EQ(w.Find("k", 5), std::vector<std::uint64_t>{0});
  EXPECT_EQ(w.Find("k", 1), std::vector<std::uint64_t>{});
  EXPECT_EQ(w.Find("k", 2), std::vector<std::uint64_t>{1});
}

IndexSpec ExactOn(std::string name, std::string label) {
  return IndexSpec{.name = std::move(name),
                   .element = ElementKind::kVertex,
                   .label = std::move(label),
                   .keys = {"k"},
                   .kind = IndexKind::kExact,
                   .type = std::nullopt};
}

// The checks' work for a batch of `n` new Foo vertices, each then given a
// property, against the head.
std::uint64_t CheckWork(Writer& w, int n) {
  WriteBatch b;
  for (int i = 0; i < n; ++i) {
    NewVertex v = b.AddVertex("Foo", {{"k", i}});
    b.SetProperty(v, "j", i);
  }
  IndexChecker checker;
  EXPECT_TRUE(checker.Check(b, w.head()).ok());
  return checker.work();
}

// Regression: finding each new element's add scanned the batch from its
// start, N^2/2 operation visits for N adds, even of a label with no index.
TEST(IndexOnlineBuildTest, IndexChecksAreLinearInTheBatch) {
  Writer w;
  WriteBatch foo;
  foo.AddVertex("Foo");
  ASSERT_TRUE(w.Group(foo).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "bar", 0, ExactOn("bar", "Bar"))).ok());
  constexpr int kN = 20000;
  EXPECT_LE(CheckWork(w, kN), 4u * kN);  // 2N operations
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "foo", 0, ExactOn("foo", "Foo"))).ok());
  EXPECT_LE(CheckWork(w, kN), 6u * kN);  // 2N operations + N (element, index) pairs
}

// Regression: each touched element was checked against every index of the
// graph, not only those of its label.
TEST(IndexOnlineBuildTest, IndexChecksVisitOnlyTheElementsLabelsIndexes) {
  Writer w;
  WriteBatch foo;
  foo.AddVertex("Foo");
  ASSERT_TRUE(w.Group(foo).ok());
  ASSERT_TRUE(w.Group(IndexBatch(OpKind::kDefineIndex, "foo", 0, ExactOn("foo", "Foo"))).ok());
  for (int i = 0; i < 50; ++i) {
    const std::string name = "other" + std::to_string(i);
    ASSERT_TRUE(
        w.Group(IndexBatch(OpKind::kDefineIndex, name, 0, ExactOn(name, "Other" + std::to_string(i)))).ok());
  }
  constexpr int kN = 1000;
  EXPECT_LE(CheckWork(w, kN), 6u * kN);
}

}  // namespace
}  // namespace quiver
