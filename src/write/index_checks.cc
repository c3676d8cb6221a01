#include "write/index_checks.h"

#include "base/strings.h"
#include "index/index_build.h"
#include "index/index_keys.h"
#include "storage/prop_block.h"
#include "write/write_batch_internal.h"

namespace quiver {

using index::ElementKind;
using internal::WriteBatchInternal;
using storage::GraphRoots;
using Op = WriteBatchInternal::Op;

namespace {

std::uint64_t KeyOf(ElementKind kind, bool is_new, std::uint64_t ref) {
  return (kind == ElementKind::kEdge ? kEdgeBit : 0) | (is_new ? kNewBit : 0) | ref;
}

}  // namespace

IndexChecker::Elem* IndexChecker::Touch(ElementKind kind, bool is_new, std::uint64_t ref,
                                        const WriteBatch& batch, const GraphRoots& g) {
  const ElemKey k = KeyOf(kind, is_new, ref);
  if (auto it = elems_.find(k); it != elems_.end()) return &it->second;
  Elem e;
  e.kind = kind;
  e.is_new = is_new;
  e.ref = ref;
  if (is_new) {
    // Which add: the ref-th AddVertex (AddEdge) of the batch, which Collect
    // has passed (a batch names a new element only after adding it).
    const auto& ops = WriteBatchInternal::Ops(batch);
    e.add_op = (kind == ElementKind::kVertex ? vertex_adds_ : edge_adds_)[ref];
    const storage::InternTable* names = kind == ElementKind::kVertex ? g.labels : g.types;
    std::optional<std::uint32_t> label = names->Find(ops[e.add_op].name);
    if (!label) return nullptr;  // a new name: no index can target it
    e.label = *label;
  } else if (kind == ElementKind::kVertex) {
    const storage::VertexSlot* s = storage::FindVertex(g, ref);
    e.label = s->label;
    e.base = s->props;
  } else {
    e.label = storage::FindEdge(g, ref)->type;
    e.base = storage::EdgeProps(g, ref);
  }
  if (!g.catalog->HasIndexOn(kind, e.label)) return nullptr;
  order_.push_back(k);
  return &elems_.try_emplace(k, std::move(e)).first->second;
}

void IndexChecker::Collect(const WriteBatch& batch, const GraphRoots& g) {
  const auto& ops = WriteBatchInternal::Ops(batch);
  std::uint64_t new_vertices = 0, new_edges = 0;
  for (const Op& op : ops) {
    ++work_;
    auto props = WriteBatchInternal::Props(batch, op);
    const auto at = static_cast<std::uint32_t>(&op - ops.data());
    switch (op.kind) {
      case OpKind::kAddVertex:
        vertex_adds_.push_back(at);
        Touch(ElementKind::kVertex, true, new_vertices++, batch, g);
        break;
      case OpKind::kAddEdge:
        edge_adds_.push_back(at);
        Touch(ElementKind::kEdge, true, new_edges++, batch, g);
        break;
      case OpKind::kSetVertexProperty:
      case OpKind::kRemoveVertexProperty:
      case OpKind::kSetEdgeProperty:
      case OpKind::kRemoveEdgeProperty: {
        const bool vertex = op.kind == OpKind::kSetVertexProperty || op.kind == OpKind::kRemoveVertexProperty;
        const bool set = op.kind == OpKind::kSetVertexProperty || op.kind == OpKind::kSetEdgeProperty;
        Elem* e = vertex ? Touch(ElementKind::kVertex, op.v1.is_new(), op.v1.raw(), batch, g)
                         : Touch(ElementKind::kEdge, op.e.is_new(), op.e.raw(), batch, g);
        if (e == nullptr) break;
        std::optional<std::uint32_t> key = g.keys->Find(set ? std::string_view(props[0].key) : op.name);
        if (key) e->overrides[*key] = set ? &props[0].value : nullptr;
        break;
      }
      case OpKind::kRemoveVertex:
        if (op.v1.is_new()) {
          removed_new_vertices_.insert(op.v1.raw());
        } else {
          removed_vertices_.insert(op.v1.raw());
        }
        if (Elem* e = Touch(ElementKind::kVertex, op.v1.is_new(), op.v1.raw(), batch, g)) e->removed = true;
        break;
      case OpKind::kRemoveEdge:
        if (Elem* e = Touch(ElementKind::kEdge, op.e.is_new(), op.e.raw(), batch, g)) e->removed = true;
        break;
      default: break;
    }
  }
  MarkOrphanedEdges(batch, g);
}

bool IndexChecker::CommittedEdgeGoes(std::uint64_t edge, const GraphRoots& g) const {
  if (removed_vertices_.empty()) return false;
  const storage::EdgeSlot* s = storage::FindEdge(g, edge);
  return s != nullptr && (removed_vertices_.contains(s->src()) || removed_vertices_.contains(s->dst()));
}

void IndexChecker::MarkOrphanedEdges(const WriteBatch& batch, const GraphRoots& g) {
  if (removed_vertices_.empty() && removed_new_vertices_.empty()) return;
  auto gone = [&](VertexRef r) {
    return r.is_new() ? removed_new_vertices_.contains(r.raw()) : removed_vertices_.contains(r.raw());
  };
  for (auto& [k, e] : elems_) {
    if (e.kind != ElementKind::kEdge || e.removed) continue;
    if (e.is_new) {
      const Op& add = WriteBatchInternal::Ops(batch)[e.add_op];
      e.removed = gone(add.v1) || gone(add.v2);
    } else {
      e.removed = CommittedEdgeGoes(e.ref, g);
    }
  }
}

std::optional<PropertyView> IndexChecker::FinalValue(const Elem& e, std::uint32_t key,
                                                     const WriteBatch& batch, const GraphRoots& g) const {
  if (auto it = e.overrides.find(key); it != e.overrides.end()) {
    if (it->second == nullptr) return std::nullopt;
    return storage::ViewOf(*it->second);
  }
  if (!e.is_new) return storage::GetProperty(e.base, key);
  const Op& add = WriteBatchInternal::Ops(batch)[e.add_op];
  for (const Property& p : WriteBatchInternal::Props(batch, add)) {
    std::optional<std::uint32_t> id = g.keys->Find(p.key);
    if (id && *id == key) return storage::ViewOf(p.value);
  }
  return std::nullopt;
}

std::uint64_t IndexChecker::IdOf(const Elem& e, const GraphRoots& g) const {
  if (!e.is_new) return e.ref;
  return e.ref + (e.kind == ElementKind::kVertex ? g.vertex_limit : g.edge_limit);
}

std::string IndexChecker::Describe(const Elem& e, const GraphRoots& g) const {
  return base::StrCat(index::DescribeElement(e.kind, IdOf(e, g)), e.is_new ? " (added by this batch)" : "");
}

std::pair<std::uint64_t, std::uint64_t> IndexChecker::Endpoints(const Elem& e, const GraphRoots& g) const {
  if (!e.is_new) {
    const storage::EdgeSlot* s = storage::FindEdge(g, e.ref);
    return {s->src(), s->dst()};
  }
  const Op& add = WriteBatchInternal::Ops(*batch_)[e.add_op];
  // A new vertex gets the id limit plus its index among the batch's adds.
  auto id = [&](VertexRef r) { return r.is_new() ? g.vertex_limit + r.raw() : r.raw(); };
  return {id(add.v1), id(add.v2)};
}

std::string IndexChecker::FinalKeyText(const Elem& e, const index::IndexDef& def, const GraphRoots& g) const {
  if (def.kind == IndexKind::kUniqueEndpoints) {
    auto [source, target] = Endpoints(e, g);
    return index::DescribePair(source, target);
  }
  std::string out;
  for (std::size_t i = 0; i < def.key_ids.size(); ++i) {
    std::optional<PropertyView> v = FinalValue(e, def.key_ids[i], *batch_, g);
    out += (i == 0 ? "" : ", ") + (v ? index::DescribeValue(*v) : std::string("missing"));
  }
  return def.key_ids.size() == 1 ? out : "(" + out + ")";
}

Status IndexChecker::Check(const WriteBatch& batch, const GraphRoots& g) {
  work_ = 0;
  if (g.catalog->indexes().empty()) return Status::Ok();
  batch_ = &batch;
  elems_.clear();
  order_.clear();
  removed_vertices_.clear();
  removed_new_vertices_.clear();
  vertex_adds_.clear();
  edge_adds_.clear();
  Collect(batch, g);
  const std::vector<index::PropertyIndex>& indexes = g.catalog->indexes();
  for (ElemKey k : order_) {
    Elem& e = elems_.at(k);
    if (e.removed) continue;
    for (std::uint32_t i : g.catalog->IndexesOn(e.kind, e.label)) {
      ++work_;
      const index::IndexDef& def = *indexes[i].def;
      if (def.kind == IndexKind::kUniqueEndpoints) {
        if (indexes[i].built) {
          auto [source, target] = Endpoints(e, g);
          index::EndpointKey(source, target, &key_);
          e.keys.try_emplace(i, std::string(key_));
        }
        continue;
      }
      std::size_t bad = 0;
      auto value = [&](std::size_t j) { return FinalValue(e, def.key_ids[j], batch, g); };
      switch (index::MakeKey(def, value, &key_, &bad)) {
        case index::KeyStatus::kNotIndexed: break;
        case index::KeyStatus::kWrongType: {
          PropertyView v = *value(bad);
          return InvalidArgumentError(base::StrCat(Describe(e, g), ": '", def.keys[bad], "' would hold ",
                                                   ValueTypeName(v.type()), " ", index::DescribeValue(v),
                                                   "; ", index::DescribeIndex(def), " takes only ",
                                                   ValueTypeName(*def.type), " values"));
        }
        case index::KeyStatus::kTooLong:
          return InvalidArgumentError(base::StrCat(Describe(e, g), ": its key for ",
                                                   index::DescribeIndex(def), " would be ", key_.size(),
                                                   " bytes encoded; the limit is ", index::kMaxKeyBytes));
        case index::KeyStatus::kIndexed:
          if (index::IsUniqueKind(def.kind) && indexes[i].built) e.keys.try_emplace(i, std::string(key_));
          break;
      }
    }
  }
  return CheckUniqueness(g);
}

Status IndexChecker::CheckUniqueness(const GraphRoots& g) {
  const std::vector<index::PropertyIndex>& indexes = g.catalog->indexes();
  // (index position, key) -> the first element of the batch to hold it.
  base::SafeFlatHashMap<std::pair<std::uint32_t, std::string_view>, const Elem*> in_batch;
  for (ElemKey k : order_) {
    const Elem& e = elems_.at(k);
    if (e.removed) continue;
    // e.keys holds the keys of the label's ready unique indexes only.
    for (std::uint32_t i : g.catalog->IndexesOn(e.kind, e.label)) {
      ++work_;
      const index::IndexDef& def = *indexes[i].def;
      auto key = e.keys.find(i);
      if (key == e.keys.end()) continue;
      auto [it, inserted] = in_batch.try_emplace(std::make_pair(i, std::string_view(key->second)), &e);
      if (!inserted) {
        return AlreadyExistsError(base::StrCat(index::DescribeIndex(def), ": ", index::KeyWord(def), " ",
                                               FinalKeyText(e, def, g), " would be held by both ",
                                               Describe(*it->second, g), " and ", Describe(e, g)));
      }
      std::uint64_t holder;
      if (!index::IndexTree::Contains(indexes[i].root, key->second, &holder)) continue;
      if (!e.is_new && holder == e.ref) continue;
      // The holder keeps the key unless this batch removes it or moves it.
      if (auto h = elems_.find(KeyOf(def.element, false, holder)); h != elems_.end()) {
        if (h->second.removed || !h->second.keys.contains(i) || h->second.keys.at(i) != key->second) continue;
      } else if (def.element == ElementKind::kEdge && CommittedEdgeGoes(holder, g)) {
        continue;
      }
      return AlreadyExistsError(base::StrCat(index::DescribeIndex(def), ": ", index::KeyWord(def), " ",
                                             index::DescribeKeyOf(g, def, holder), " is held by ",
                                             index::DescribeElement(def.element, holder), "; ",
                                             Describe(e, g), " would hold it too"));
    }
  }
  return Status::Ok();
}

}  // namespace quiver
