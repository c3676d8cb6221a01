#include "index/catalog.h"

namespace quiver::index {

IndexSpec IndexDef::Spec() const {
  return IndexSpec{
      .name = name, .element = element, .label = label, .keys = keys, .kind = kind, .type = type};
}

const IndexRoot* Catalog::Set(ElementKind kind, std::uint32_t label) const {
  const std::vector<IndexRoot>& sets = Sets(kind);
  return label < sets.size() ? &sets[label] : nullptr;
}

IndexRoot& Catalog::MutableSet(ElementKind kind, std::uint32_t label) {
  std::vector<IndexRoot>& sets = Sets(kind);
  if (label >= sets.size()) {
    IndexRoot empty;
    empty.key_width = 0;  // ids only
    sets.resize(label + 1, empty);
  }
  return sets[label];
}

std::uint64_t Catalog::KeyCount(ElementKind kind, std::uint32_t key) const {
  const std::vector<std::uint64_t>& counts = Counts(kind);
  return key < counts.size() ? counts[key] : 0;
}

void Catalog::AddKeyCount(ElementKind kind, std::uint32_t key, std::int64_t delta) {
  std::vector<std::uint64_t>& counts = Counts(kind);
  if (key >= counts.size()) counts.resize(key + 1, 0);
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

bool Catalog::HasIndexOn(ElementKind kind, std::uint32_t label) const {
  for (const PropertyIndex& p : indexes_)
    if (p.def->element == kind && p.def->label_id == label) return true;
  return false;
}

Catalog* Catalog::Clone(std::uint64_t birth) const {
  auto* c = new Catalog(birth);
  c->label_sets_ = label_sets_;
  c->type_sets_ = type_sets_;
  c->vertex_key_counts_ = vertex_key_counts_;
  c->edge_key_counts_ = edge_key_counts_;
  c->indexes_ = indexes_;
  return c;
}

void Catalog::Destroy(Catalog* c, base::MemoryAccount* account) {
  if (c == nullptr) return;
  for (IndexRoot& r : c->label_sets_) IndexTree::Destroy(r, account);
  for (IndexRoot& r : c->type_sets_) IndexTree::Destroy(r, account);
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
