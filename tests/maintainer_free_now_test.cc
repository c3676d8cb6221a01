// IndexMaintainer::OnChange with a retire list in free-now mode
// (RetireList::FreeOnAdd, replay's): owning the catalog replaces it, and
// the catalog replaced is freed at once, so the positions of a label's
// indexes must be read from the copy. Review of the free-now replay: the
// loop walked the replaced catalog's list, which ASan reports as a read
// of freed memory from the second index on. No replay reaches it (replay
// owns its catalog in its own epoch before any index exists), so this
// drives the maintainer directly.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/memory.h"
#include "index/catalog.h"
#include "index/maintainer.h"
#include "quiver/value.h"
#include "storage/elements.h"
#include "storage/prop_block.h"
#include "storage/retire_list.h"

namespace quiver::index {
namespace {

constexpr std::uint32_t kLabel = 7;

// A ready, built exact index of vertices of kLabel on property key `key`.
PropertyIndex ReadyIndex(const std::string& name, std::uint32_t key) {
  auto def = std::make_shared<IndexDef>();
  def->name = name;
  def->label = "L";
  def->label_id = kLabel;
  def->keys = {"k" + std::to_string(key)};
  def->key_ids = {key};
  def->kind = IndexKind::kExact;
  def->declared = 1;
  PropertyIndex p;
  p.def = std::move(def);
  p.state = IndexState::kReady;
  p.built = true;
  return p;
}

TEST(MaintainerFreeNowTest, OwningTheCatalogInTheLoopReadsPositionsFromTheCopy) {
  base::MemoryAccount account;
  storage::RetireList retired;
  retired.FreeOnAdd(&account);
  storage::MutationContext ctx{2, &account, &retired};
  storage::GraphRoots g;
  auto* published = new Catalog(1);  // born before the context's epoch: owning copies it
  published->AddIndex(ReadyIndex("a", 0));
  published->AddIndex(ReadyIndex("b", 1));
  ASSERT_EQ(published->IndexesOn(ElementKind::kVertex, kLabel).size(), 2u);
  g.catalog = published;
  // Both keys change value and none comes or goes: the key counts need no
  // catalog of their own, so the first index owns it inside the loop.
  const PropertyValue k0_before(1), k1_before(10), k0_after(2), k1_after(20);
  std::vector<storage::PropInput> before{{0, storage::ViewOf(k0_before)}, {1, storage::ViewOf(k1_before)}};
  std::vector<storage::PropInput> after{{0, storage::ViewOf(k0_after)}, {1, storage::ViewOf(k1_after)}};
  storage::PropBlock* before_block = storage::BuildPropBlock(before, &account);
  storage::PropBlock* after_block = storage::BuildPropBlock(after, &account);

  IndexMaintainer maintainer;
  maintainer.OnChange(ElementChange{ElementKind::kVertex, 5, kLabel, before_block, after_block}, g, ctx);

  // `published` was replaced by a copy of this epoch (and freed then).
  ASSERT_EQ(g.catalog->birth(), 2u);
  ASSERT_EQ(g.catalog->indexes().size(), 2u);
  EXPECT_EQ(g.catalog->indexes()[0].root.count, 1u);  // the new key of each
  EXPECT_EQ(g.catalog->indexes()[1].root.count, 1u);
  Catalog::Destroy(g.catalog, &account);
  account.Free(before_block);
  account.Free(after_block);
  EXPECT_EQ(account.allocated_bytes(), 0);
}

}  // namespace
}  // namespace quiver::index
