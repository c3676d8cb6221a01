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

std::uint32_t IndexChecker::Touch(ElementKind kind, bool is_new, std::uint64_t ref, const WriteBatch& batch,
                                  const GraphRoots& g) {
  const int k = kind == ElementKind::kVertex ? 0 : 1;
  std::vector<std::uint32_t>& news = k == 0 ? new_vertex_elem_ : new_edge_elem_;
  if (is_new) {
    // Collect has passed the add (a batch names a new element only after
    // adding it), which recorded the element or kNone.
    if (ref < news.size()) return news[ref];
  } else if (auto it = committed_.find(KeyOf(kind, false, ref)); it != committed_.end()) {
    return it->second;
  }
  Elem e;
  e.kind = kind;
  e.is_new = is_new;
  e.ref = ref;
  if (is_new) {
    // Which add: the ref-th AddVertex (AddEdge) of the batch.
    const auto& ops = WriteBatchInternal::Ops(batch);
    e.add_op = (k == 0 ? vertex_adds_ : edge_adds_)[ref];
    const storage::InternTable* names = k == 0 ? g.labels : g.types;
    // Batches mostly add elements of one label: look its name up once.
    const std::string_view name = ops[e.add_op].name;
    if (last_names_[k] != names || name != last_name_[k]) {
      last_label_[k] = names->Find(name);
      last_name_[k] = name;
      last_names_[k] = names;
    }
    news.push_back(kNone);              // ref == news.size(): adds are touched in order
    if (!last_label_[k]) return kNone;  // a new name: no index can target it
    e.label = *last_label_[k];
  } else if (kind == ElementKind::kVertex) {
    const storage::VertexSlot* s = storage::FindVertex(g, ref);
    e.label = s->label;
    e.base = s->props;
  } else {
    e.label = storage::FindEdge(g, ref)->type;
    e.base = storage::EdgeProps(g, ref);
  }
  if (!g.catalog->HasIndexOn(kind, e.label)) return kNone;
  const auto at = static_cast<std::uint32_t>(elems_.size());
  if (is_new) {
    elems_.push_back(e);
    news.back() = at;
  } else {
    committed_.Reserve(1);
    elems_.push_back(e);
    committed_.try_emplace(KeyOf(kind, false, ref), at);
  }
  return at;
}

void IndexChecker::Collect(const WriteBatch& batch, const GraphRoots& g) {
  const auto& ops = WriteBatchInternal::Ops(batch);
  // Room up front for the committed elements the batch may touch (growing
  // step by step rehashes each about twice).
  std::size_t others = 0;
  for (const Op& op : ops) others += op.kind != OpKind::kAddVertex && op.kind != OpKind::kAddEdge;
  committed_.Reserve(others);
  std::uint64_t new_vertices = 0, new_edges = 0;
  for (std::uint32_t at = 0; at < ops.size(); ++at) {
    const Op& op = ops[at];
    ++work_;
    auto props = WriteBatchInternal::Props(batch, op);
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
        const std::uint32_t e = vertex ? Touch(ElementKind::kVertex, op.v1.is_new(), op.v1.raw(), batch, g)
                                       : Touch(ElementKind::kEdge, op.e.is_new(), op.e.raw(), batch, g);
        if (e == kNone) break;
        std::optional<std::uint32_t> key = g.keys->Find(set ? std::string_view(props[0].key) : op.name);
        if (!key) break;
        overrides_.push_back(Override{*key, set ? &props[0].value : nullptr, elems_[e].last_override});
        elems_[e].last_override = static_cast<std::uint32_t>(overrides_.size() - 1);
        break;
      }
      case OpKind::kRemoveVertex: {
        if (op.v1.is_new()) {
          removed_new_vertices_.insert(op.v1.raw());
        } else {
          removed_vertices_.insert(op.v1.raw());
        }
        const std::uint32_t e = Touch(ElementKind::kVertex, op.v1.is_new(), op.v1.raw(), batch, g);
        if (e != kNone) elems_[e].removed = true;
        break;
      }
      case OpKind::kRemoveEdge: {
        const std::uint32_t e = Touch(ElementKind::kEdge, op.e.is_new(), op.e.raw(), batch, g);
        if (e != kNone) elems_[e].removed = true;
        break;
      }
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
  for (Elem& e : elems_) {
    if (e.kind != ElementKind::kEdge || e.removed) continue;
    if (e.is_new) {
      const Op& add = WriteBatchInternal::Ops(batch)[e.add_op];
      e.removed = gone(add.v1) || gone(add.v2);
    } else {
      e.removed = CommittedEdgeGoes(e.ref, g);
    }
  }
}

std::optional<PropertyView> IndexChecker::FinalValue(const Elem& e, const index::IndexDef& def, std::size_t j,
                                                     const WriteBatch& batch) const {
  const std::uint32_t key = def.key_ids[j];
  for (std::uint32_t o = e.last_override; o != kNone; o = overrides_[o].previous) {
    if (overrides_[o].key != key) continue;
    if (overrides_[o].value == nullptr) return std::nullopt;
    return storage::ViewOf(*overrides_[o].value);
  }
  if (!e.is_new) return storage::GetProperty(e.base, key);
  // A key id names one interned name, the index's key j: compare names.
  const Op& add = WriteBatchInternal::Ops(batch)[e.add_op];
  for (const Property& p : WriteBatchInternal::Props(batch, add))
    if (p.key == def.keys[j]) return storage::ViewOf(p.value);
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
    std::optional<PropertyView> v = FinalValue(e, def, i, *batch_);
    out += (i == 0 ? "" : ", ") + (v ? index::DescribeValue(*v) : std::string("missing"));
  }
  return def.key_ids.size() == 1 ? out : "(" + out + ")";
}

std::optional<std::string_view> IndexChecker::KeyFor(const Elem& e, std::uint32_t index) const {
  for (std::uint32_t k = e.keys_begin; k < e.keys_begin + e.keys_count; ++k)
    if (keys_[k].index == index) return std::string_view(key_bytes_).substr(keys_[k].offset, keys_[k].size);
  return std::nullopt;
}

Status IndexChecker::Check(const WriteBatch& batch, const GraphRoots& g) {
  work_ = 0;
  if (g.catalog->indexes().empty()) return Status::Ok();
  batch_ = &batch;
  elems_.clear();
  committed_.clear();
  new_vertex_elem_.clear();
  new_edge_elem_.clear();
  overrides_.clear();
  keys_.clear();
  key_bytes_.clear();
  removed_vertices_.clear();
  removed_new_vertices_.clear();
  vertex_adds_.clear();
  edge_adds_.clear();
  last_names_[0] = last_names_[1] = nullptr;
  Collect(batch, g);
  const std::vector<index::PropertyIndex>& indexes = g.catalog->indexes();
  for (Elem& e : elems_) {
    if (e.removed) continue;
    e.keys_begin = static_cast<std::uint32_t>(keys_.size());
    // Records key_ as e's final key for the unique index (or edge-endpoint
    // constraint) at catalog position i.
    auto add_key = [&](std::uint32_t i) {
      keys_.push_back(FinalKey{i, static_cast<std::uint32_t>(key_bytes_.size()),
                               static_cast<std::uint32_t>(key_.size())});
      key_bytes_ += key_;
    };
    for (std::uint32_t i : g.catalog->IndexesOn(e.kind, e.label)) {
      ++work_;
      const index::IndexDef& def = *indexes[i].def;
      if (def.kind == IndexKind::kUniqueEndpoints) {
        if (indexes[i].built) {
          auto [source, target] = Endpoints(e, g);
          index::EndpointKey(source, target, &key_);
          add_key(i);
        }
        continue;
      }
      std::size_t bad = 0;
      auto value = [&](std::size_t j) { return FinalValue(e, def, j, batch); };
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
          if (index::IsUniqueKind(def.kind) && indexes[i].built) add_key(i);
          break;
      }
    }
    e.keys_count = static_cast<std::uint32_t>(keys_.size()) - e.keys_begin;
  }
  return CheckUniqueness(g);
}

Status IndexChecker::CheckUniqueness(const GraphRoots& g) {
  if (keys_.empty()) return Status::Ok();
  const std::vector<index::PropertyIndex>& indexes = g.catalog->indexes();
  // Views into key_bytes_, which is complete.
  in_batch_.clear();
  in_batch_.Reserve(keys_.size());
  for (std::uint32_t at = 0; at < elems_.size(); ++at) {
    const Elem& e = elems_[at];
    if (e.removed) continue;
    // e's keys are those of the label's ready unique indexes, in IndexesOn order.
    for (std::uint32_t k = e.keys_begin; k < e.keys_begin + e.keys_count; ++k) {
      ++work_;
      const std::uint32_t i = keys_[k].index;
      const index::IndexDef& def = *indexes[i].def;
      const std::string_view key = std::string_view(key_bytes_).substr(keys_[k].offset, keys_[k].size);
      auto [it, inserted] = in_batch_.try_emplace(std::make_pair(i, key), at);
      if (!inserted) {
        return AlreadyExistsError(base::StrCat(index::DescribeIndex(def), ": ", index::KeyWord(def), " ",
                                               FinalKeyText(e, def, g), " would be held by both ",
                                               Describe(elems_[it->second], g), " and ", Describe(e, g)));
      }
      std::uint64_t holder;
      if (!index::IndexTree::Contains(indexes[i].root, key, &holder)) continue;
      if (!e.is_new && holder == e.ref) continue;
      // The holder keeps the key unless this batch removes it or moves it.
      if (auto h = committed_.find(KeyOf(def.element, false, holder)); h != committed_.end()) {
        const Elem& held = elems_[h->second];
        if (held.removed) continue;
        const std::optional<std::string_view> now = KeyFor(held, i);
        if (!now || *now != key) continue;
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
