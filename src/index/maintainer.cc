#include "index/maintainer.h"

#include <span>

#include "index/index_keys.h"
#include "storage/prop_block.h"

namespace quiver::index {

using storage::PropBlock;

bool IndexMaintainer::NeedsOldBlock(const storage::GraphRoots& g, ElementKind kind, std::uint32_t label,
                                    std::uint32_t key) const {
  for (std::uint32_t i : g.catalog->IndexesOn(kind, label)) {
    const PropertyIndex& p = g.catalog->indexes()[i];
    for (std::uint32_t k : p.def->key_ids)
      if (k == key) return true;
  }
  return false;
}

Catalog* IndexMaintainer::Own(storage::GraphRoots& g, storage::MutationContext& ctx) {
  return OwnCatalog(g.catalog, ctx);
}

void IndexMaintainer::OnChange(const ElementChange& c, storage::GraphRoots& g,
                               storage::MutationContext& ctx) {
  Catalog* cat = nullptr;  // g.catalog once owned
  if (c.added || c.removed) {
    cat = Own(g, ctx);
    IdSetRoot& set = cat->MutableSet(c.kind, c.label);
    if (c.added) {
      IdSet::Insert(set, c.id, ctx);
    } else {
      IdSet::Erase(set, c.id, ctx);
    }
  }
  CountKeys(c, cat, g, ctx);
  // Positions are stable within the group: indexes come and go only in
  // index batches, which change no element. Owning the catalog may replace
  // it, and in replay's free-now mode (RetireList::FreeOnAdd) free the one
  // replaced at once: the positions are then read from the copy.
  std::span<const std::uint32_t> on = g.catalog->IndexesOn(c.kind, c.label);
  auto own = [&] {
    const bool copies = g.catalog->birth() != ctx.epoch;
    cat = Own(g, ctx);
    if (copies) on = cat->IndexesOn(c.kind, c.label);
  };
  for (std::size_t j = 0; j < on.size(); ++j) {
    const std::uint32_t i = on[j];
    const PropertyIndex& p = g.catalog->indexes()[i];
    if (!p.built) {
      if (tracking_ && p.state == IndexState::kBuilding)
        Track(p.def->declared, c.id, g.sequence + 1);  // this batch's number
      continue;
    }
    if (p.def->kind == IndexKind::kUniqueEndpoints) {
      // Endpoints never change: only an add or a remove moves the entry.
      if (c.added == c.removed) continue;
      EndpointKey(c.source, c.target, &new_key_);
      own();
      IndexRoot& root = cat->mutable_indexes()[i].root;
      if (c.removed) {
        IndexTree::Erase(root, new_key_, c.id, ctx);
      } else {
        IndexTree::Insert(root, new_key_, c.id, ctx);
      }
      continue;
    }
    // Validation has checked types and lengths: a key is indexed or not.
    const bool had = c.before != nullptr && ElementKey(*p.def, c.before, &old_key_) == KeyStatus::kIndexed;
    const bool has = c.after != nullptr && ElementKey(*p.def, c.after, &new_key_) == KeyStatus::kIndexed;
    if (had == has && (!had || old_key_ == new_key_)) continue;
    own();
    IndexRoot& root = cat->mutable_indexes()[i].root;
    if (had) IndexTree::Erase(root, old_key_, c.id, ctx);
    if (has) IndexTree::Insert(root, new_key_, c.id, ctx);
  }
}

void IndexMaintainer::CountKeys(const ElementChange& c, Catalog*& cat, storage::GraphRoots& g,
                                storage::MutationContext& ctx) {
  const std::uint32_t nb = storage::PropCount(c.before), na = storage::PropCount(c.after);
  std::uint32_t i = 0, j = 0;
  auto add = [&](std::uint32_t key, std::int64_t delta) {
    if (cat == nullptr) cat = Own(g, ctx);
    cat->AddKeyCount(c.kind, key, delta);
  };
  // Both blocks list their keys in ascending id order.
  while (i < nb || j < na) {
    const std::uint32_t kb = i < nb ? storage::PropAt(c.before, i).key : UINT32_MAX;
    const std::uint32_t ka = j < na ? storage::PropAt(c.after, j).key : UINT32_MAX;
    if (i < nb && (j >= na || kb < ka)) {
      add(kb, -1);
      ++i;
    } else if (j < na && (i >= nb || ka < kb)) {
      add(ka, +1);
      ++j;
    } else {
      ++i;
      ++j;
    }
  }
}

void IndexMaintainer::Track(SequenceNumber declared, std::uint64_t id, SequenceNumber changed) {
  // Listed first, so that if the insert throws no recorded id is unlisted
  // (an id that was not inserted is erased harmlessly).
  recorded_.emplace_back(declared, id);
  auto [it, inserted] = tracked_[declared].try_emplace(id, changed);
  if (!inserted) {
    recorded_.pop_back();
    if (it->second < changed) it->second = changed;
  }
}

void IndexMaintainer::EndGroup(bool published) {
  if (!published) {
    for (const auto& [declared, id] : recorded_) {
      auto it = tracked_.find(declared);
      if (it == tracked_.end()) continue;
      it->second.erase(id);
      if (it->second.empty()) tracked_.erase(it);
    }
  }
  recorded_.clear();
}

}  // namespace quiver::index
