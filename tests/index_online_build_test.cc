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
#include "index/index_query.h"
#include "index/online_build.h"
#include "storage/version.h"
#include "write/batch_processor.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

using internal::WriteBatchInternal;

class Writer {
 public:
  Writer() : chain_(new storage::VersionChain), processor_(Limits{}) {}
  ~Writer() { chain_->Shutdown(); }

  storage::VersionChain* chain() { return chain_; }

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

}  // namespace
}  // namespace quiver
