#include "index/catalog.h"

#include <memory>

namespace quiver::index {

IndexSpec IndexDef::Spec() const {
  return IndexSpec{
      .name = name, .element = element, .label = label, .keys = keys, .kind = kind, .type = type};
}

const IdSetRoot* Catalog::Set(ElementKind kind, std::uint32_t label) const {
  const std::vector<IdSetRoot>& sets = Sets(kind);
  return label < sets.size() ? &sets[label] : nullptr;
}

IdSetRoot& Catalog::MutableSet(ElementKind kind, std::uint32_t label) {
  std::vector<IdSetRoot>& sets = Sets(kind);
  // In size_t: label + 1 in 32 bits would wrap to 0 for the dead label's
  // id, which no caller passes (review: a resize to 0, then a write past
  // the end, if one ever did).
  if (label >= sets.size()) sets.resize(std::size_t{label} + 1);
  return sets[label];
}

std::uint64_t Catalog::KeyCount(ElementKind kind, std::uint32_t key) const {
  const std::vector<std::uint64_t>& counts = Counts(kind);
  return key < counts.size() ? counts[key] : 0;
}

void Catalog::AddKeyCount(ElementKind kind, std::uint32_t key, std::int64_t delta) {
  std::vector<std::uint64_t>& counts = Counts(kind);
  if (key >= counts.size()) counts.resize(std::size_t{key} + 1, 0);
  counts[key] += static_cast<std::uint64_t>(delta);
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
  const auto& on = kind == ElementKind::kVertex ? vertex_indexes_on_ : edge_indexes_on_;
  if (label >= on.size()) return {};
  return on[label];
}

// O(indexes + the largest indexed label id): only when an index comes or goes.
void Catalog::IndexesChanged() {
  vertex_indexes_on_.clear();
  edge_indexes_on_.clear();
  for (std::uint32_t i = 0; i < indexes_.size(); ++i) {
    const IndexDef& def = *indexes_[i].def;
    auto& on = def.element == ElementKind::kVertex ? vertex_indexes_on_ : edge_indexes_on_;
    if (def.label_id >= on.size()) on.resize(std::size_t{def.label_id} + 1);
    on[def.label_id].push_back(i);
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
  for (IdSetRoot& r : c->label_sets_) IdSet::Destroy(r, account);
  for (IdSetRoot& r : c->type_sets_) IdSet::Destroy(r, account);
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
