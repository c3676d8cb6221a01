#include "index/catalog.h"

#include <algorithm>
#include <memory>

namespace quiver::index {

IndexSpec IndexDef::Spec() const {
  return IndexSpec{
      .name = name, .element = element, .label = label, .keys = keys, .kind = kind, .type = type};
}

const IdSetRoot* Catalog::Set(ElementKind kind, std::uint32_t label) const { return Sets(kind).Find(label); }

IdSetRoot& Catalog::MutableSet(ElementKind kind, std::uint32_t label) {
  return Sets(kind).Mutable(label, birth_);
}

std::uint64_t Catalog::KeyCount(ElementKind kind, std::uint32_t key) const {
  const std::uint64_t* n = Counts(kind).Find(key);
  return n != nullptr ? *n : 0;
}

void Catalog::AddKeyCount(ElementKind kind, std::uint32_t key, std::int64_t delta) {
  Counts(kind).Mutable(key, birth_) += static_cast<std::uint64_t>(delta);
}

const PropertyIndex* Catalog::Find(std::string_view name) const {
  for (const PropertyIndex& p : indexes_)
    if (p.def->name == name) return &p;
  return nullptr;
}

PropertyIndex* Catalog::MutableFind(std::string_view name) {
  for (PropertyIndex& p : indexes_)
    if (p.def->name == name) return &p;
  return nullptr;
}

void Catalog::AddIndex(PropertyIndex p) {
  indexes_.push_back(std::move(p));
  IndexesChanged();
}

void Catalog::RemoveIndex(std::size_t i) {
  indexes_.erase(indexes_.begin() + static_cast<std::ptrdiff_t>(i));
  IndexesChanged();
}

std::span<const std::uint32_t> Catalog::IndexesOn(ElementKind kind, std::uint32_t label) const {
  const IndexesByLabel& on = kind == ElementKind::kVertex ? vertex_indexes_on_ : edge_indexes_on_;
  const auto it = std::lower_bound(on.begin(), on.end(), label,
                                   [](const auto& entry, std::uint32_t l) { return entry.first < l; });
  if (it == on.end() || it->first != label) return {};
  return it->second;
}

// O(indexes log indexes): only when an index comes or goes.
void Catalog::IndexesChanged() {
  vertex_indexes_on_.clear();
  edge_indexes_on_.clear();
  for (std::uint32_t i = 0; i < indexes_.size(); ++i) {
    const IndexDef& def = *indexes_[i].def;
    IndexesByLabel& on = def.element == ElementKind::kVertex ? vertex_indexes_on_ : edge_indexes_on_;
    auto it = std::lower_bound(on.begin(), on.end(), def.label_id,
                               [](const auto& entry, std::uint32_t l) { return entry.first < l; });
    if (it == on.end() || it->first != def.label_id) it = on.insert(it, {def.label_id, {}});
    it->second.push_back(i);  // ascending: i grows
  }
}

Catalog* Catalog::Clone(std::uint64_t birth) const {
  // Owned until whole: a copy that runs out of memory frees the clone.
  auto c = std::make_unique<Catalog>(birth);
  c->label_sets_ = label_sets_;
  c->type_sets_ = type_sets_;
  c->vertex_key_counts_ = vertex_key_counts_;
  c->edge_key_counts_ = edge_key_counts_;
  c->indexes_ = indexes_;
  c->vertex_indexes_on_ = vertex_indexes_on_;
  c->edge_indexes_on_ = edge_indexes_on_;
  return c.release();
}

void Catalog::Destroy(Catalog* c, base::MemoryAccount* account) {
  if (c == nullptr) return;
  c->label_sets_.ForEachOwned([&](IdSetRoot& r) { IdSet::Destroy(r, account); });
  c->type_sets_.ForEachOwned([&](IdSetRoot& r) { IdSet::Destroy(r, account); });
  for (PropertyIndex& p : c->indexes_) IndexTree::Destroy(p.root, account);
  delete c;
}

Catalog* OwnCatalog(Catalog*& c, storage::MutationContext& ctx) {
  if (c->birth() == ctx.epoch) return c;
  Catalog* copy = c->Clone(ctx.epoch);
  try {
    ctx.retired->Add(c, &Catalog::Delete);
  } catch (...) {
    delete copy;
    throw;
  }
  c = copy;
  return copy;
}

}  // namespace quiver::index
