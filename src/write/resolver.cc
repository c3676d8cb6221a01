#include "write/resolver.h"

#include <algorithm>

#include "base/strings.h"
#include "index/index_build.h"
#include "index/index_keys.h"
#include "storage/prop_block.h"

namespace quiver {

using internal::WriteBatchInternal;
using storage::GraphRoots;
using Op = internal::WriteBatchInternal::Op;

// Batch validation and the resolver report failures the same way.
Status AtOp(std::size_t index, const Status& s) {
  if (s.ok()) return s;
  return Status(s.code(), base::StrCat("operation ", index, ": ", s.message()));
}

namespace {

std::string KeyNames(std::span<const Property> keys) {
  std::string out;
  for (const Property& p : keys) out += (out.empty() ? "" : ", ") + p.key;
  return out;
}

std::string KeyValues(std::span<const Property> keys) {
  std::string out;
  for (const Property& p : keys)
    out += base::StrCat(out.empty() ? "" : ", ", p.key, "=", index::DescribeValue(storage::ViewOf(p.value)));
  return out;
}

}  // namespace

VertexRef Resolver::RefOf(const Target& t, std::uint64_t tag) {
  if (t.committed) return VertexId(t.id);
  return NewVertex{tag, static_cast<std::uint32_t>(t.id)};
}

Result<VertexRef> Resolver::MapVertex(VertexRef r) const {
  // Foreign handles pass unchanged: the plain batch's validation refuses
  // them (no handle outside it carries its tag).
  if (!r.is_new() || r.batch_tag() != WriteBatchInternal::Tag(*batch_)) return r;
  if (r.raw() >= targets_.size())
    return InvalidArgumentError(
        base::StrCat("new vertex #", r.raw(), " has not been added by this point of the batch"));
  return RefOf(targets_[r.raw()], WriteBatchInternal::Tag(plain_));
}

EdgeRef Resolver::EdgeRefOf(const Target& t, std::uint64_t tag) {
  if (t.committed) return EdgeId(t.id);
  return NewEdge{tag, static_cast<std::uint32_t>(t.id)};
}

Result<EdgeRef> Resolver::MapEdge(EdgeRef e) const {
  if (!e.is_new() || e.batch_tag() != WriteBatchInternal::Tag(*batch_)) return e;
  if (e.raw() >= edge_targets_.size())
    return InvalidArgumentError(
        base::StrCat("new edge #", e.raw(), " has not been added by this point of the batch"));
  return EdgeRefOf(edge_targets_[e.raw()], WriteBatchInternal::Tag(plain_));
}

void Resolver::TouchEdge(EdgeRef mapped, std::string_view key) {
  if (mapped.is_new() && mapped.batch_tag() != WriteBatchInternal::Tag(plain_)) return;
  AddKey(edge_touched_[mapped.is_new() ? (kNew | mapped.raw()) : mapped.raw()], key);
}

void Resolver::Emit(std::uint32_t origin, Op op, std::span<const Property> props) {
  WriteBatchInternal::AppendOp(plain_, op, props);
  origin_.push_back(origin);
}

void Resolver::EmitSet(std::uint32_t origin, const Target& t, const Property& p) {
  Op op;
  op.kind = OpKind::kSetVertexProperty;
  op.v1 = RefOf(t, WriteBatchInternal::Tag(plain_));
  Emit(origin, std::move(op), std::span<const Property>(&p, 1));
  AddTouched(KeyOf(t), p.key);
}

void Resolver::AddTouched(TargetKey t, std::string_view key) {
  auto pair = std::make_pair(t, key);
  if (touched_.contains(pair)) return;
  touched_head_.Reserve(1);
  touched_list_.emplace_back(key, ~std::uint32_t{0});
  touched_.insert(pair);
  auto [it, inserted] = touched_head_.try_emplace(t, ~std::uint32_t{0});
  touched_list_.back().second = it->second;
  it->second = static_cast<std::uint32_t>(touched_list_.size() - 1);
}

void Resolver::Touch(VertexRef mapped, std::string_view key) {
  if (mapped.is_new() && mapped.batch_tag() != WriteBatchInternal::Tag(plain_)) return;
  AddTouched(mapped.is_new() ? (kNew | mapped.raw()) : mapped.raw(), key);
}

Status Resolver::Resolve(const WriteBatch& batch, const GraphRoots& g) {
  batch_ = &batch;
  plain_.Clear();
  origin_.clear();
  targets_.clear();
  edge_targets_.clear();
  plain_new_vertices_ = 0;
  plain_new_edges_ = 0;
  upserted_.clear();
  touched_.clear();
  touched_head_.clear();
  touched_list_.clear();
  removed_.clear();
  edge_touched_.clear();
  removed_edges_.clear();
  expectations_.clear();
  const auto& ops = WriteBatchInternal::Ops(batch);
  // Room for the whole batch up front: growing the tables step by step
  // rehashed them about twice per entry.
  std::size_t upserts = 0, touches = 0;
  for (const Op& op : ops) {
    upserts += op.kind == OpKind::kUpsertVertex;
    touches +=
        op.prop_count + (op.kind == OpKind::kSetVertexProperty || op.kind == OpKind::kRemoveVertexProperty);
  }
  upserted_.Reserve(upserts);
  touched_.Reserve(touches);
  touched_head_.Reserve(ops.size());
  touched_list_.reserve(touches);
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    auto props = WriteBatchInternal::Props(batch, op);
    Op copy = op;
    switch (op.kind) {
      case OpKind::kUpsertVertex: QUIVER_RETURN_IF_ERROR(Upsert(i, op, batch, g)); continue;
      case OpKind::kUpsertEdge: QUIVER_RETURN_IF_ERROR(UpsertEdge(i, op, batch, g)); continue;
      case OpKind::kExpectVertexProperty:
      case OpKind::kExpectEdgeProperty:
      case OpKind::kExpectVertex:
      case OpKind::kExpectEdge:
      case OpKind::kExpectKeyFree: expectations_.push_back(i); continue;
      case OpKind::kDefineIndex:
      case OpKind::kIndexReady:
      case OpKind::kDropIndex:
        return AtOp(i, InvalidArgumentError("an index operation must be alone in its batch"));
      case OpKind::kAddVertex:
        targets_.push_back(Target{false, plain_new_vertices_++, false});
        for (const Property& p : props) AddTouched(kNew | targets_.back().id, p.key);
        break;
      case OpKind::kAddEdge: {
        Result<VertexRef> s = MapVertex(op.v1);
        if (!s.ok()) return AtOp(i, s.status());
        Result<VertexRef> t = MapVertex(op.v2);
        if (!t.ok()) return AtOp(i, t.status());
        copy.v1 = *s;
        copy.v2 = *t;
        edge_targets_.push_back(Target{false, plain_new_edges_++, false});
        for (const Property& p : props) AddKey(edge_touched_[kNew | edge_targets_.back().id], p.key);
        break;
      }
      case OpKind::kSetVertexProperty:
      case OpKind::kRemoveVertexProperty:
      case OpKind::kRemoveVertex: {
        Result<VertexRef> v = MapVertex(op.v1);
        if (!v.ok()) return AtOp(i, v.status());
        copy.v1 = *v;
        // A key the batch set or removed: an upsert that finds this vertex
        // sets its keys again, and replace removes what it set.
        if (op.kind == OpKind::kSetVertexProperty) Touch(*v, props[0].key);
        if (op.kind == OpKind::kRemoveVertexProperty) Touch(*v, op.name);
        if (op.kind == OpKind::kRemoveVertex &&
            (!v->is_new() || v->batch_tag() == WriteBatchInternal::Tag(plain_)))
          removed_.insert(v->is_new() ? (kNew | v->raw()) : v->raw());
        break;
      }
      case OpKind::kSetEdgeProperty:
      case OpKind::kRemoveEdgeProperty:
      case OpKind::kRemoveEdge: {
        Result<EdgeRef> e = MapEdge(op.e);
        if (!e.ok()) return AtOp(i, e.status());
        copy.e = *e;
        if (op.kind == OpKind::kSetEdgeProperty) TouchEdge(*e, props[0].key);
        if (op.kind == OpKind::kRemoveEdgeProperty) TouchEdge(*e, op.name);
        if (op.kind == OpKind::kRemoveEdge &&
            (!e->is_new() || e->batch_tag() == WriteBatchInternal::Tag(plain_)))
          removed_edges_.insert(e->is_new() ? (kNew | e->raw()) : e->raw());
        break;
      }
    }
    Emit(i, std::move(copy), props);
  }
  return Status::Ok();
}

Status Resolver::CoveringIndex(std::string_view label, std::span<const Property> keys, const GraphRoots& g,
                               const index::PropertyIndex** found, std::string* key) const {
  if (keys.empty()) return InvalidArgumentError("an upsert or key expectation needs at least one key");
  for (std::size_t a = 0; a < keys.size(); ++a) {
    if (keys[a].key.empty()) return InvalidArgumentError("property key is empty");
    for (std::size_t b = a + 1; b < keys.size(); ++b)
      if (keys[a].key == keys[b].key)
        return InvalidArgumentError(base::StrCat("duplicate property key '", keys[a].key, "'"));
  }
  *found = nullptr;
  for (const index::PropertyIndex& p : g.catalog->indexes()) {
    const index::IndexDef& def = *p.def;
    if (def.element != ElementKind::kVertex || def.label != label || def.kind != IndexKind::kUnique ||
        p.state != IndexState::kReady || !p.built || def.keys.size() != keys.size())
      continue;
    const bool covers = std::all_of(keys.begin(), keys.end(), [&](const Property& k) {
      return std::find(def.keys.begin(), def.keys.end(), k.key) != def.keys.end();
    });
    if (covers) {
      *found = &p;
      break;
    }
  }
  if (*found == nullptr)
    return FailedPreconditionError(base::StrCat("no ready unique index of label '", label,
                                                "' covers exactly the keys (", KeyNames(keys), ")"));
  // The values in the index's key order (LookupKey's checks, with no copy
  // of the values: the counts match, and each key is there once).
  const index::IndexDef& def = *(*found)->def;
  key->clear();
  for (const std::string& k : def.keys)
    for (const Property& p : keys)
      if (p.key == k) QUIVER_RETURN_IF_ERROR(index::BoundKey(def, p.value, key));
  return Status::Ok();
}

Status Resolver::Upsert(std::uint32_t i, const Op& op, const WriteBatch& batch, const GraphRoots& g) {
  auto all = WriteBatchInternal::Props(batch, op);
  auto keys = all.first(op.key_count);
  auto props = all.subspan(op.key_count);
  for (const Property& p : props)
    for (const Property& k : keys)
      if (p.key == k.key)
        return AtOp(
            i, InvalidArgumentError(base::StrCat("upsert: property '", p.key, "' is also one of its keys")));
  const index::PropertyIndex* idx = nullptr;
  QUIVER_RETURN_IF_ERROR(AtOp(i, CoveringIndex(op.name, keys, g, &idx, &key_)));
  std::string slot = base::StrCat(idx->def->name, std::string_view("\0", 1), key_);
  Target t;
  std::uint64_t holder = 0;
  const auto repeat = upserted_.find(slot);
  if (repeat != upserted_.end()) {
    t = repeat->second;  // a repeat names the first upsert's vertex (found if that one was)
  } else if (index::IndexTree::Contains(idx->root, key_, &holder)) {
    t = Target{true, holder, true};
  } else {
    // Not found: add it, keys first.
    Op add;
    add.kind = OpKind::kAddVertex;
    add.name = op.name;
    Emit(i, std::move(add), all);
    t = Target{false, plain_new_vertices_++, false};
    for (const Property& p : all) AddTouched(KeyOf(t), p.key);
    upserted_.try_emplace(std::move(slot), t);
    targets_.push_back(t);
    return Status::Ok();
  }
  if (removed_.contains(KeyOf(t)))
    return AtOp(i,
                NotFoundError(base::StrCat(
                    "upsert: the key (", KeyValues(keys), ") of label '", op.name, "' is held by ",
                    t.committed ? base::StrCat("vertex ", t.id) : std::string("a vertex added by this batch"),
                    ", which this batch removed earlier")));
  if (repeat == upserted_.end()) upserted_.try_emplace(std::move(slot), t);
  targets_.push_back(t);
  if (op.flag == static_cast<std::uint8_t>(UpsertMode::kReplace)) {
    // Every key the vertex may hold now that stays out of the result.
    std::vector<std::string> gone;
    auto keep = [&](std::string_view k) {
      auto named = [&](const Property& p) { return p.key == k; };
      return std::any_of(all.begin(), all.end(), named);
    };
    if (t.committed) {
      const storage::PropBlock* block = storage::FindVertex(g, t.id)->props;
      for (std::uint32_t j = 0; j < storage::PropCount(block); ++j) {
        std::string_view name = g.keys->Name(storage::PropAt(block, j).key);
        if (!keep(name)) gone.emplace_back(name);
      }
    }
    if (auto head = touched_head_.find(KeyOf(t)); head != touched_head_.end()) {
      for (std::uint32_t n = head->second; n != ~std::uint32_t{0}; n = touched_list_[n].second) {
        const std::string_view k = touched_list_[n].first;
        if (!keep(k) && std::find(gone.begin(), gone.end(), k) == gone.end()) gone.emplace_back(k);
      }
    }
    std::sort(gone.begin(), gone.end());  // a deterministic plain batch
    for (std::string& k : gone) {
      Op rm;
      rm.kind = OpKind::kRemoveVertexProperty;
      rm.v1 = RefOf(t, WriteBatchInternal::Tag(plain_));
      rm.name = k;
      Emit(i, std::move(rm), {});
    }
  }
  for (const Property& k : keys)
    if (Touched(KeyOf(t), k.key)) EmitSet(i, t, k);
  for (const Property& p : props) EmitSet(i, t, p);
  return Status::Ok();
}

Status Resolver::UpsertEdge(std::uint32_t i, const Op& op, const WriteBatch& batch, const GraphRoots& g) {
  auto props = WriteBatchInternal::Props(batch, op);
  Result<VertexRef> source = MapVertex(op.v1);
  if (!source.ok()) return AtOp(i, source.status());
  Result<VertexRef> target = MapVertex(op.v2);
  if (!target.ok()) return AtOp(i, target.status());
  const std::uint64_t plain_tag = WriteBatchInternal::Tag(plain_);
  const index::PropertyIndex* idx = nullptr;
  for (const index::PropertyIndex& p : g.catalog->indexes()) {
    const index::IndexDef& def = *p.def;
    if (def.element == ElementKind::kEdge && def.kind == IndexKind::kUniqueEndpoints &&
        def.label == op.name && p.state == IndexState::kReady && p.built) {
      idx = &p;
      break;
    }
  }
  if (idx == nullptr)
    return AtOp(
        i, FailedPreconditionError(base::StrCat(
               "upsert: edge type '", op.name,
               "' has no ready edge-endpoint constraint (IndexKind::kUniqueEndpoints) to find edges by")));
  auto foreign = [&](VertexRef r) { return r.is_new() && r.batch_tag() != plain_tag; };
  auto describe = [](VertexRef r) {
    return r.is_new() ? base::StrCat("new vertex #", r.raw()) : base::StrCat(r.raw());
  };
  Target t;
  bool found = false;   // t names an edge: committed, or an earlier upsert's
  bool repeat = false;  // ... an earlier upsert's
  std::string slot;
  if (!foreign(*source) && !foreign(*target)) {
    // The pair as the plain batch names it: committed ids, or kNew | index
    // (for two committed vertices, the constraint's key).
    auto ref_key = [](VertexRef r) { return r.is_new() ? (kNew | r.raw()) : r.raw(); };
    index::EndpointKey(ref_key(*source), ref_key(*target), &key_);
    for (VertexRef r : {*source, *target})
      if (removed_.contains(ref_key(r)))
        return AtOp(i, NotFoundError(base::StrCat("upsert: endpoint ", describe(r), " of the edge of type '",
                                                  op.name, "' was removed earlier by this batch")));
    slot = base::StrCat(idx->def->name, std::string_view("\0", 1), key_);
    std::uint64_t holder = 0;
    if (const auto it = upserted_.find(slot); it != upserted_.end()) {
      t = it->second;
      found = repeat = true;
    } else if (!source->is_new() && !target->is_new() &&
               index::IndexTree::Contains(idx->root, key_, &holder)) {
      t = Target{true, holder, true};
      found = true;
    }
  }
  if (!found) {
    // Not found (or a foreign handle, which the plain batch's validation
    // refuses): add it.
    Op add;
    add.kind = OpKind::kAddEdge;
    add.name = op.name;
    add.v1 = *source;
    add.v2 = *target;
    Emit(i, std::move(add), props);
    t = Target{false, plain_new_edges_++, false};
    for (const Property& p : props) AddKey(edge_touched_[KeyOf(t)], p.key);
    if (!slot.empty()) upserted_.try_emplace(std::move(slot), t);
    edge_targets_.push_back(t);
    return Status::Ok();
  }
  if (removed_edges_.contains(KeyOf(t)))
    return AtOp(
        i, NotFoundError(base::StrCat(
               "upsert: the edge of type '", op.name, "' from ", describe(*source), " to ", describe(*target),
               " is ", t.committed ? base::StrCat("edge ", t.id) : std::string("an edge added by this batch"),
               ", which this batch removed earlier")));
  if (!repeat) upserted_.try_emplace(std::move(slot), t);
  edge_targets_.push_back(t);
  const EdgeRef ref = EdgeRefOf(t, plain_tag);
  if (op.flag == static_cast<std::uint8_t>(UpsertMode::kReplace)) {
    std::vector<std::string> gone;
    auto keep = [&](std::string_view k) {
      return std::any_of(props.begin(), props.end(), [&](const Property& p) { return p.key == k; });
    };
    if (t.committed) {
      const storage::PropBlock* block = storage::EdgeProps(g, t.id);
      for (std::uint32_t j = 0; j < storage::PropCount(block); ++j) {
        std::string_view name = g.keys->Name(storage::PropAt(block, j).key);
        if (!keep(name)) gone.emplace_back(name);
      }
    }
    for (const std::string& k : edge_touched_[KeyOf(t)])
      if (!keep(k) && std::find(gone.begin(), gone.end(), k) == gone.end()) gone.push_back(k);
    std::sort(gone.begin(), gone.end());  // a deterministic plain batch
    for (std::string& k : gone) {
      Op rm;
      rm.kind = OpKind::kRemoveEdgeProperty;
      rm.e = ref;
      rm.name = k;
      Emit(i, std::move(rm), {});
    }
  }
  for (const Property& p : props) {
    Op set;
    set.kind = OpKind::kSetEdgeProperty;
    set.e = ref;
    Emit(i, std::move(set), std::span<const Property>(&p, 1));
    AddKey(edge_touched_[KeyOf(t)], p.key);
  }
  return Status::Ok();
}

Status Resolver::CheckExpectations(const GraphRoots& g) const {
  const auto& ops = WriteBatchInternal::Ops(*batch_);
  for (std::size_t n = 0; n < expectations_.size(); ++n) {
    const std::uint32_t i = expectations_[n];
    const Op& op = ops[i];
    auto props = WriteBatchInternal::Props(*batch_, op);
    auto fail = [&](std::string_view what) {
      return AbortedError(base::StrCat("expectation ", n, " (operation ", i, "): ", what));
    };
    switch (op.kind) {
      case OpKind::kExpectVertexProperty:
      case OpKind::kExpectEdgeProperty: {
        const bool vertex = op.kind == OpKind::kExpectVertexProperty;
        const std::uint64_t id = vertex ? op.v1.raw() : op.e.raw();
        const std::string elem = base::StrCat(vertex ? "vertex " : "edge ", id);
        const std::string_view key = op.flag ? std::string_view(props[0].key) : std::string_view(op.name);
        const std::string wanted =
            op.flag ? base::StrCat("'", key, "' = ", index::DescribeValue(storage::ViewOf(props[0].value)))
                    : base::StrCat("no '", key, "'");
        const storage::PropBlock* block = nullptr;
        if (vertex) {
          const storage::VertexSlot* s = storage::FindVertex(g, id);
          if (s == nullptr) return fail(base::StrCat(elem, " does not exist; expected ", wanted));
          block = s->props;
        } else {
          if (storage::FindEdge(g, id) == nullptr)
            return fail(base::StrCat(elem, " does not exist; expected ", wanted));
          block = storage::EdgeProps(g, id);
        }
        std::optional<std::uint32_t> key_id = g.keys->Find(key);
        std::optional<PropertyView> now = key_id ? storage::GetProperty(block, *key_id) : std::nullopt;
        const bool holds = op.flag ? (now && *now == props[0].value) : !now;
        if (!holds)
          return fail(base::StrCat(elem, " has ",
                                   now ? base::StrCat("'", key, "' = ", index::DescribeValue(*now))
                                       : base::StrCat("no '", key, "'"),
                                   "; expected ", wanted));
        break;
      }
      case OpKind::kExpectVertex:
      case OpKind::kExpectEdge: {
        const bool vertex = op.kind == OpKind::kExpectVertex;
        const std::uint64_t id = vertex ? op.v1.raw() : op.e.raw();
        const bool exists =
            vertex ? storage::FindVertex(g, id) != nullptr : storage::FindEdge(g, id) != nullptr;
        if (exists != (op.flag != 0))
          return fail(base::StrCat(vertex ? "vertex " : "edge ", id, exists ? " exists" : " does not exist",
                                   "; expected it ", op.flag ? "to exist" : "not to exist"));
        break;
      }
      case OpKind::kExpectKeyFree: {
        const index::PropertyIndex* idx = nullptr;
        std::string key;
        QUIVER_RETURN_IF_ERROR(AtOp(i, CoveringIndex(op.name, props, g, &idx, &key)));
        std::uint64_t holder = 0;
        if (index::IndexTree::Contains(idx->root, key, &holder))
          return fail(base::StrCat("the key (", KeyValues(props), ") of ", index::DescribeIndex(*idx->def),
                                   " is held by vertex ", holder, "; expected it free"));
        break;
      }
      default: break;
    }
  }
  return Status::Ok();
}

void Resolver::FixInfo(CommitInfo* info) const {
  std::vector<VertexId> added = std::move(info->vertices);
  info->vertices.clear();
  info->vertex_found.clear();
  info->vertices.reserve(targets_.size());
  info->vertex_found.reserve(targets_.size());
  for (const Target& t : targets_) {
    info->vertices.push_back(t.committed ? VertexId(t.id) : added[t.id]);
    info->vertex_found.push_back(t.found);
  }
  std::vector<EdgeId> added_edges = std::move(info->edges);
  info->edges.clear();
  info->edge_found.clear();
  info->edges.reserve(edge_targets_.size());
  info->edge_found.reserve(edge_targets_.size());
  for (const Target& t : edge_targets_) {
    info->edges.push_back(t.committed ? EdgeId(t.id) : added_edges[t.id]);
    info->edge_found.push_back(t.found);
  }
}

}  // namespace quiver
