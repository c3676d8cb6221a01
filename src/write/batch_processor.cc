#include "write/batch_processor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>
#include <utility>

#include "base/prefetch.h"
#include "base/string_list.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "index/index_build.h"
#include "index/index_keys.h"
#include "index/online_build.h"
#include "storage/adjacency.h"
#include "storage/packed_adjacency.h"
#include "storage/prop_block.h"
#include "write/write_batch_internal.h"

namespace quiver {

using internal::WriteBatchInternal;
using storage::EdgePropTable;
using storage::EdgeSlot;
using storage::EdgeTable;
using storage::GraphRoots;
using storage::MutationContext;
using storage::PropBlock;
using storage::VertexSlot;
using storage::VertexTable;
using Op = WriteBatchInternal::Op;
using index::ElementKind;

namespace {

// Records that the batch removed `id` from the leaf it lies in (once per
// run of removals in one leaf).
void NoteRemoved(std::vector<std::uint64_t>& leaves, std::uint64_t id) {
  const std::uint64_t leaf = id >> VertexTable::kLeafBits;
  static_assert(VertexTable::kLeafBits == EdgeTable::kLeafBits);
  if (leaves.empty() || leaves.back() != leaf) leaves.push_back(leaf);
}

std::string Describe(VertexRef r) {
  return r.is_new() ? base::StrCat("new vertex #", r.raw()) : base::StrCat("vertex ", r.raw());
}
std::string Describe(EdgeRef r) {
  return r.is_new() ? base::StrCat("new edge #", r.raw()) : base::StrCat("edge ", r.raw());
}

// The bytes of a property block whose entries take `entry_bytes`.
std::uint64_t BlockBytes(std::int64_t entry_bytes) {
  return entry_bytes <= 0 ? 0 : storage::kPropBlockHeaderBytes + static_cast<std::uint64_t>(entry_bytes);
}

std::int64_t EntryBytes(std::span<const Property> props) {
  std::int64_t n = 0;
  for (const Property& p : props)
    n += static_cast<std::int64_t>(storage::PropEntryBytes(storage::ViewOf(p.value)));
  return n;
}

// Whether two names of one batch are equal. The batch stores each name once,
// so equal names mostly share their bytes: the pointers are compared before
// the bytes. (The sizes first: an empty name starts where the next one does.)
bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

std::uint32_t InternName(storage::InternTable*& table, std::string_view name, MutationContext& ctx) {
  if (auto id = table->Find(name)) return *id;
  return storage::OwnInternTable(table, ctx)->Intern(name);
}

}  // namespace

void BatchProcessor::Reset() {
  new_vertices_ = 0;
  new_edges_ = 0;
  removed_vertices_.clear();
  removed_edges_.clear();
  new_vertex_removed_.clear();
  new_edge_removed_.clear();
  new_vertex_op_.clear();
  new_edge_op_.clear();
  elem_props_.clear();
  heavy_new_elems_.clear();
  degree_added_.clear();
}

Status BatchProcessor::CheckName(std::string_view what, std::string_view name) const {
  if (name.empty()) return InvalidArgumentError(base::StrCat(what, " is empty"));
  if (name.size() > limits_.max_string_bytes)
    return OutOfRangeError(
        base::StrCat(what, " is ", name.size(), " bytes; the limit is ", limits_.max_string_bytes));
  if (!base::IsValidUtf8(name)) return InvalidArgumentError(base::StrCat(what, " is not valid UTF-8"));
  return Status::Ok();
}

Status BatchProcessor::CheckValue(std::string_view key, const PropertyValue& v) const {
  switch (v.type()) {
    case ValueType::kString:
      if (v.as_string()->size() > limits_.max_string_bytes)
        return OutOfRangeError(base::StrCat("string value of '", key, "' is ", v.as_string()->size(),
                                            " bytes; the limit is ", limits_.max_string_bytes));
      if (!base::IsValidUtf8(*v.as_string()))
        return InvalidArgumentError(base::StrCat("string value of '", key, "' is not valid UTF-8"));
      break;
    case ValueType::kBytes:
      if (v.as_bytes()->size() > limits_.max_string_bytes)
        return OutOfRangeError(base::StrCat("bytes value of '", key, "' is ", v.as_bytes()->size(),
                                            " bytes; the limit is ", limits_.max_string_bytes));
      break;
    case ValueType::kDouble:
      if (!std::isfinite(*v.as_double()))
        return InvalidArgumentError(base::StrCat("double value of '", key, "' is NaN or infinite"));
      break;
    case ValueType::kStringList: QUIVER_RETURN_IF_ERROR(CheckStringList(key, *v.as_string_list())); break;
    case ValueType::kFloatVector: {
      std::span<const float> f = *v.as_float_vector();
      if (f.size() > limits_.max_vector_dims)
        return OutOfRangeError(base::StrCat("vector value of '", key, "' has ", f.size(),
                                            " elements; the limit is ", limits_.max_vector_dims));
      for (std::size_t i = 0; i < f.size(); ++i)
        if (!std::isfinite(f[i]))
          return InvalidArgumentError(base::StrCat("vector value of '", key, "' has NaN or infinity at ", i));
      break;
    }
    default: break;
  }
  return Status::Ok();
}

Status BatchProcessor::CheckStringList(std::string_view key, const StringListView& list) const {
  // The count first: a long list is refused before its elements are read.
  if (list.size() > limits_.max_list_elements)
    return OutOfRangeError(base::StrCat("string list value of '", key, "' has ", list.size(),
                                        " elements; the limit is ", limits_.max_list_elements));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string_view s = list[i];
    if (s.size() > limits_.max_string_bytes)
      return OutOfRangeError(base::StrCat("string list value of '", key, "' has an element of ", s.size(),
                                          " bytes at ", i, "; the limit is ", limits_.max_string_bytes));
    if (!base::IsValidUtf8(s))
      return InvalidArgumentError(
          base::StrCat("string list value of '", key, "' has an element that is not valid UTF-8 at ", i));
  }
  // The whole list is one payload of the element's block (32-bit offsets).
  const std::size_t packed = base::PackedStringListBytes(list);
  if (packed > limits_.max_property_bytes_per_element)
    return OutOfRangeError(base::StrCat("string list value of '", key, "' takes ", packed,
                                        " bytes; the limit is ", limits_.max_property_bytes_per_element));
  return Status::Ok();
}

Status BatchProcessor::CheckProperties(std::span<const Property> props) const {
  for (const Property& p : props) {
    QUIVER_RETURN_IF_ERROR(CheckName("property key", p.key));
    QUIVER_RETURN_IF_ERROR(CheckValue(p.key, p.value));
  }
  return CheckDistinctKeys(props);
}

Status BatchProcessor::CheckDistinctKeys(std::span<const Property> props) {
  auto repeated = [](const Property& p) {
    return InvalidArgumentError(base::StrCat("duplicate property key '", p.key, "'"));
  };
  // A few properties, the common case: pairwise, no table.
  constexpr std::size_t kPairwise = 8;
  if (props.size() <= kPairwise) {
    for (std::size_t a = 1; a < props.size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        if (props[a].key == props[b].key) return repeated(props[a]);
    return Status::Ok();
  }
  base::SafeFlatHashSet<std::string_view, base::StringHash, base::StringEq> seen;
  seen.Reserve(props.size());
  for (const Property& p : props)
    if (!seen.insert(p.key).second) return repeated(p);
  return Status::Ok();
}

bool BatchProcessor::VertexRemovedInBatch(VertexRef ref) const {
  if (ref.is_new()) return new_vertex_removed_[ref.raw()];
  return !removed_vertices_.empty() && removed_vertices_.contains(ref.raw());
}

Status BatchProcessor::CheckVertex(const WriteBatch& batch, VertexRef ref, const GraphRoots& g,
                                   const VertexSlot** slot) const {
  if (ref.is_new()) {
    if (ref.batch_tag() != WriteBatchInternal::Tag(batch))
      return InvalidArgumentError(base::StrCat(Describe(ref), " is a handle from another batch"));
    if (ref.raw() >= new_vertices_)
      return InvalidArgumentError(
          base::StrCat(Describe(ref), " has not been added by this point of the batch"));
  } else if (const VertexSlot* found = storage::FindVertex(g, ref.raw()); found == nullptr) {
    return NotFoundError(base::StrCat(Describe(ref), " does not exist"));
  } else if (slot != nullptr) {
    *slot = found;
  }
  if (VertexRemovedInBatch(ref))
    return NotFoundError(base::StrCat(Describe(ref), " was removed earlier in this batch"));
  return Status::Ok();
}

bool BatchProcessor::CommittedEndpointsFit(const WriteBatch& batch, const Op& op, const GraphRoots& g) const {
  if (op.v1.is_new() || op.v2.is_new() || !removed_vertices_.empty() ||
      batch.added_edges() > limits_.max_degree)
    return false;
  const VertexSlot* source = storage::FindVertex(g, op.v1.raw());
  const VertexSlot* target = storage::FindVertex(g, op.v2.raw());
  if (source == nullptr || target == nullptr) return false;
  // CheckDegree's cheap test, which counts nothing when it passes.
  const std::uint64_t room = limits_.max_degree - batch.added_edges();
  return source->out_degree <= room && target->in_degree <= room;
}

Status BatchProcessor::CheckDegree(const WriteBatch& batch, VertexRef ref, const VertexSlot* slot, bool out) {
  const std::uint64_t base = slot == nullptr ? 0 : out ? slot->out_degree : slot->in_degree;
  // Cheap test first: unless this vertex plus every edge of the batch could
  // pass the limit, no count is needed.
  if (base + batch.added_edges() <= limits_.max_degree) return Status::Ok();
  const ElemKey key = BatchElementKey(ref);
  const std::uint64_t degree = base + ++degree_added_[key][out ? 0 : 1];
  if (degree <= limits_.max_degree) return Status::Ok();
  return OutOfRangeError(base::StrCat(Describe(ref), " would have ", degree, out ? " out-edges" : " in-edges",
                                      "; the limit is ", limits_.max_degree));
}

Status BatchProcessor::CheckEdge(const WriteBatch& batch, EdgeRef ref, const GraphRoots& g) const {
  const auto& ops = WriteBatchInternal::Ops(batch);
  bool endpoint_removed;
  if (ref.is_new()) {
    if (ref.batch_tag() != WriteBatchInternal::Tag(batch))
      return InvalidArgumentError(base::StrCat(Describe(ref), " is a handle from another batch"));
    if (ref.raw() >= new_edges_)
      return InvalidArgumentError(
          base::StrCat(Describe(ref), " has not been added by this point of the batch"));
    if (new_edge_removed_[ref.raw()])
      return NotFoundError(base::StrCat(Describe(ref), " was removed earlier in this batch"));
    const Op& add = ops[new_edge_op_[ref.raw()]];
    endpoint_removed = VertexRemovedInBatch(add.v1) || VertexRemovedInBatch(add.v2);
  } else {
    const EdgeSlot* e = storage::FindEdge(g, ref.raw());
    if (e == nullptr) return NotFoundError(base::StrCat(Describe(ref), " does not exist"));
    if (removed_edges_.contains(ref.raw()))
      return NotFoundError(base::StrCat(Describe(ref), " was removed earlier in this batch"));
    endpoint_removed = !removed_vertices_.empty() &&
                       (removed_vertices_.contains(e->src()) || removed_vertices_.contains(e->dst()));
  }
  if (endpoint_removed)
    return NotFoundError(base::StrCat(Describe(ref), " was removed with its endpoint earlier in this batch"));
  return Status::Ok();
}

void BatchProcessor::TrackPropertyChange(const WriteBatch& batch, ElemKey elem, bool is_edge,
                                         std::uint64_t id, std::string_view key, const PropertyValue* value,
                                         const GraphRoots& g) {
  const auto& ops = WriteBatchInternal::Ops(batch);
  bool is_new = (elem & kNewBit) != 0;
  const PropBlock* base = nullptr;
  Op add;
  if (is_new) {
    add = ops[is_edge ? new_edge_op_[id] : new_vertex_op_[id]];
  } else {
    base = is_edge ? storage::EdgeProps(g, id) : storage::FindVertex(g, id)->props;
  }
  auto [it, inserted] = elem_props_.try_emplace(elem);
  ElemProps& st = it->second;
  if (inserted) {
    st.count = is_new ? add.prop_count : storage::PropCount(base);
    st.entry_bytes =
        is_new ? EntryBytes(WriteBatchInternal::Props(batch, add))
               : static_cast<std::int64_t>(storage::PropBlockBytes(base)) -
                     static_cast<std::int64_t>(base == nullptr ? 0 : storage::kPropBlockHeaderBytes);
  }
  std::int64_t was = -1;  // entry bytes of the value before this operation
  auto k = st.keys.find(key);
  if (k != st.keys.end()) {
    was = k->second;
  } else if (is_new) {
    for (const Property& p : WriteBatchInternal::Props(batch, add))
      if (p.key == key) was = static_cast<std::int64_t>(storage::PropEntryBytes(storage::ViewOf(p.value)));
  } else if (auto key_id = g.keys->Find(key)) {
    if (auto v = storage::GetProperty(base, *key_id))
      was = static_cast<std::int64_t>(storage::PropEntryBytes(*v));
  }
  const std::int64_t now =
      value == nullptr ? -1 : static_cast<std::int64_t>(storage::PropEntryBytes(storage::ViewOf(*value)));
  if (k != st.keys.end()) {
    k->second = now;
  } else {
    st.keys.try_emplace(std::string(key), now);  // the name is built before the table is touched
  }
  st.count += (now >= 0 ? 1 : 0) - (was >= 0 ? 1 : 0);
  st.entry_bytes += std::max<std::int64_t>(now, 0) - std::max<std::int64_t>(was, 0);
}

Status BatchProcessor::CheckUpserts(const WriteBatch& batch) const {
  const auto& ops = WriteBatchInternal::Ops(batch);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::kExpectVertexProperty || op.kind == OpKind::kExpectEdgeProperty) {
      // Compared, never applied, so ValidatePlain never sees them; bad input
      // is InvalidArgument (or OutOfRange), not the Aborted of an
      // expectation that does not hold, which callers retry.
      auto props = WriteBatchInternal::Props(batch, op);
      const std::string_view key = op.flag ? std::string_view(props[0].key) : std::string_view(op.name);
      Status s = CheckName("property key", key);
      if (s.ok() && op.flag) s = CheckValue(key, props[0].value);
      if (!s.ok()) return AtOp(i, s);
      continue;
    }
    if (op.kind == OpKind::kExpectKeyFree) {  // the same for a key's label, names and values
      Status s = CheckName("label", op.name);
      for (const Property& p : WriteBatchInternal::Props(batch, op)) {
        if (s.ok()) s = CheckName("property key", p.key);
        if (s.ok()) s = CheckValue(p.key, p.value);
      }
      if (!s.ok()) return AtOp(i, s);
      continue;
    }
    if (op.kind != OpKind::kUpsertVertex && op.kind != OpKind::kUpsertEdge) continue;
    const bool vertex = op.kind == OpKind::kUpsertVertex;
    auto props = WriteBatchInternal::Props(batch, op);
    Status s = CheckName(vertex ? "label" : "edge type", op.name);
    if (s.ok() && op.flag > static_cast<std::uint8_t>(UpsertMode::kReplace))
      s = InvalidArgumentError(
          base::StrCat("upsert mode ", static_cast<unsigned>(op.flag), " is not an UpsertMode"));
    // Property names and values are checked where the plain batch carries
    // them, found or added (an add's list, or one SetProperty each); a key
    // given twice only when added. A vertex upsert's keys are the
    // resolver's (CoveringIndex: empty or repeated keys, key values).
    if (s.ok()) s = CheckDistinctKeys(vertex ? props.subspan(op.key_count) : props);
    if (!s.ok()) return AtOp(i, s);
  }
  return Status::Ok();
}

Status BatchProcessor::Validate(const WriteBatch& batch, const GraphRoots& g) {
  if (!WriteBatchInternal::NeedsResolving(batch)) return ValidatePlain(batch, g);
  QUIVER_RETURN_IF_ERROR(CheckUpserts(batch));
  QUIVER_RETURN_IF_ERROR(resolver_.Resolve(batch, g));
  origin_ = &resolver_.origin();
  Status s = ValidatePlain(resolver_.plain(), g);
  origin_ = nullptr;
  QUIVER_RETURN_IF_ERROR(s);
  return resolver_.CheckExpectations(g);
}

Status BatchProcessor::ValidatePlain(const WriteBatch& batch, const GraphRoots& g) {
  Reset();
  if (WriteBatchInternal::IsIndexBatch(batch)) {
    const Op& op = WriteBatchInternal::Ops(batch)[0];
    return ValidateIndexOp(*op.index, op.kind, g);
  }
  if (WriteBatchInternal::CountedOps(batch) > limits_.max_batch_ops)
    return OutOfRangeError(base::StrCat("batch has ", WriteBatchInternal::CountedOps(batch),
                                        " operations; the limit is ", limits_.max_batch_ops));
  if (g.vertex_limit + batch.added_vertices() > kMaxElementId ||
      g.edge_limit + batch.added_edges() > kMaxElementId)
    return ResourceExhaustedError("element id space exhausted");
  const auto& ops = WriteBatchInternal::Ops(batch);
  // An edge's endpoints are random vertices in a large graph: each check
  // would wait for its slot's cache line (and page walk) in turn. Prefetch
  // the slots of the edge kSlotAhead ops on, so those misses overlap. Find
  // reads only the table's inner nodes, which stay cached.
  constexpr std::size_t kSlotAhead = 16;
  auto prefetch_endpoints = [&batch, &ops, &g](std::size_t j) {
    std::uint64_t ends[2];
    if (j >= ops.size() || !WriteBatchInternal::CommittedEdgeEndpoints(batch, j, &ends[0], &ends[1])) return;
    for (std::uint64_t v : ends)
      if (v < g.vertex_limit) base::Prefetch(VertexTable::Find(g.vertices, v));
  };
  for (std::size_t j = 0; j < kSlotAhead; ++j) prefetch_endpoints(j);
  // The last edge type whose name passed CheckName.
  std::string_view checked_type;
  bool have_checked_type = false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    prefetch_endpoints(i + kSlotAhead);
    auto props = WriteBatchInternal::Props(batch, op);
    Status s;
    const VertexSlot* source = nullptr;
    const VertexSlot* target = nullptr;
    switch (op.kind) {
      case OpKind::kAddVertex:
        s = CheckName("label", op.name);
        if (s.ok()) s = CheckProperties(props);
        if (s.ok()) NoteNewElementBytes(kNewBit | new_vertices_, props);
        new_vertex_op_.push_back(static_cast<std::uint32_t>(i));
        new_vertex_removed_.push_back(false);
        ++new_vertices_;
        break;
      case OpKind::kAddEdge:
        // Most batches add one type or a few. A batch stores each name once,
        // so the same name is mostly the same bytes: compare the pointers first.
        if (!have_checked_type || !SameName(op.name, checked_type)) {
          s = CheckName("edge type", op.name);
          checked_type = op.name;
          have_checked_type = s.ok();
        }
        if (s.ok() && !CommittedEndpointsFit(batch, op, g)) {
          if (s.ok()) s = CheckVertex(batch, op.v1, g, &source);
          if (s.ok()) s = CheckVertex(batch, op.v2, g, &target);
          if (s.ok()) s = CheckDegree(batch, op.v1, source, /*out=*/true);
          if (s.ok()) s = CheckDegree(batch, op.v2, target, /*out=*/false);
        }
        if (s.ok() && !props.empty()) {
          s = CheckProperties(props);
          if (s.ok()) NoteNewElementBytes(kEdgeBit | kNewBit | new_edges_, props);
        }
        new_edge_op_.push_back(static_cast<std::uint32_t>(i));
        new_edge_removed_.push_back(false);
        ++new_edges_;
        break;
      case OpKind::kSetVertexProperty:
      case OpKind::kRemoveVertexProperty: {
        bool set = op.kind == OpKind::kSetVertexProperty;
        std::string_view key = set ? std::string_view(props[0].key) : std::string_view(op.name);
        s = CheckVertex(batch, op.v1, g);
        if (s.ok()) s = CheckName("property key", key);
        if (s.ok() && set) s = CheckValue(key, props[0].value);
        if (s.ok()) {
          TrackPropertyChange(batch, BatchElementKey(op.v1), false, op.v1.raw(), key,
                              set ? &props[0].value : nullptr, g);
        }
        break;
      }
      case OpKind::kSetEdgeProperty:
      case OpKind::kRemoveEdgeProperty: {
        bool set = op.kind == OpKind::kSetEdgeProperty;
        std::string_view key = set ? std::string_view(props[0].key) : std::string_view(op.name);
        s = CheckEdge(batch, op.e, g);
        if (s.ok()) s = CheckName("property key", key);
        if (s.ok() && set) s = CheckValue(key, props[0].value);
        if (s.ok()) {
          TrackPropertyChange(batch, BatchElementKey(op.e), true, op.e.raw(), key,
                              set ? &props[0].value : nullptr, g);
        }
        break;
      }
      case OpKind::kRemoveEdge:
        s = CheckEdge(batch, op.e, g);
        if (s.ok()) {
          if (op.e.is_new()) {
            new_edge_removed_[op.e.raw()] = true;
          } else {
            removed_edges_.insert(op.e.raw());
          }
        }
        break;
      case OpKind::kRemoveVertex:
        s = CheckVertex(batch, op.v1, g);
        if (s.ok()) {
          if (op.v1.is_new()) {
            new_vertex_removed_[op.v1.raw()] = true;
          } else {
            removed_vertices_.insert(op.v1.raw());
          }
        }
        break;
      case OpKind::kDefineIndex:
      case OpKind::kIndexReady:
      case OpKind::kDropIndex:
        s = InvalidArgumentError("an index operation must be alone in its batch");
        break;
      case OpKind::kUpsertVertex:
      case OpKind::kUpsertEdge:
      case OpKind::kExpectVertexProperty:
      case OpKind::kExpectEdgeProperty:
      case OpKind::kExpectVertex:
      case OpKind::kExpectEdge:
      case OpKind::kExpectKeyFree:
        s = InternalError("an upsert or expectation reached validation unresolved");
        break;
    }
    if (!s.ok()) return AtOp(origin_ != nullptr ? (*origin_)[i] : i, s);
  }
  QUIVER_RETURN_IF_ERROR(CheckPropertyCounts(batch));
  if (replay_) return Status::Ok();
  return index_checker_.Check(batch, g);
}

Status BatchProcessor::CheckPropertyCounts(const WriteBatch& batch) const {
  // Counted after the whole batch: a set that a later remove undoes is fine.
  const std::size_t limit = limits_.max_properties_per_element;
  auto too_many = [limit](std::uint64_t count, std::string_view what) {
    return OutOfRangeError(base::StrCat(what, " would have ", count, " properties; the limit is ", limit));
  };
  const std::size_t byte_limit = limits_.max_property_bytes_per_element;
  auto too_big = [byte_limit](std::uint64_t bytes, std::string_view what) {
    return OutOfRangeError(
        base::StrCat(what, "'s properties would take ", bytes, " bytes; the limit is ", byte_limit));
  };
  for (const auto& [elem, st] : elem_props_) {
    if (static_cast<std::uint64_t>(st.count) > limit)
      return too_many(st.count, (elem & kEdgeBit) ? "an edge" : "a vertex");
    if (BlockBytes(st.entry_bytes) > byte_limit)
      return too_big(BlockBytes(st.entry_bytes), (elem & kEdgeBit) ? "an edge" : "a vertex");
  }
  for (const auto& [elem, bytes] : heavy_new_elems_)
    if (!elem_props_.contains(elem)) return too_big(bytes, (elem & kEdgeBit) ? "a new edge" : "a new vertex");
  const auto& ops = WriteBatchInternal::Ops(batch);
  for (std::uint32_t i = 0; i < new_vertices_; ++i)
    if (ops[new_vertex_op_[i]].prop_count > limit && !elem_props_.contains(kNewBit | i))
      return too_many(ops[new_vertex_op_[i]].prop_count, "a new vertex");
  for (std::uint32_t i = 0; i < new_edges_; ++i)
    if (ops[new_edge_op_[i]].prop_count > limit && !elem_props_.contains(kEdgeBit | kNewBit | i))
      return too_many(ops[new_edge_op_[i]].prop_count, "a new edge");
  return Status::Ok();
}

void BatchProcessor::NoteNewElementBytes(ElemKey elem, std::span<const Property> props) {
  if (props.empty()) return;
  const std::uint64_t bytes = BlockBytes(EntryBytes(props));
  if (bytes > limits_.max_property_bytes_per_element) heavy_new_elems_.emplace_back(elem, bytes);
}

std::uint64_t BatchProcessor::ResolveVertex(VertexRef ref) const {
  return ref.is_new() ? new_vertex_ids_[ref.raw()] : ref.raw();
}

std::uint64_t BatchProcessor::ResolveEdge(EdgeRef ref) const {
  return ref.is_new() ? new_edge_ids_[ref.raw()] : ref.raw();
}

PropBlock* BatchProcessor::BuildBlock(std::span<const Property> props, GraphRoots& g, MutationContext& ctx) {
  if (props.empty()) return nullptr;
  prop_inputs_.clear();
  for (const Property& p : props)
    prop_inputs_.push_back(storage::PropInput{InternName(g.keys, p.key, ctx), storage::ViewOf(p.value)});
  return storage::BuildPropBlock(prop_inputs_, ctx);
}

void BatchProcessor::RemoveEdgeInternal(std::uint64_t edge, std::uint64_t skip_vertex, GraphRoots& g,
                                        MutationContext& ctx) {
  EdgeSlot* e = EdgeTable::Mutable(g.edges, edge, ctx);
  if (e->type == storage::kDeadType) return;  // a self-loop met twice while removing its vertex
  const PropBlock* props = storage::EdgeProps(g, edge);
  maintainer_.OnChange(index::ElementChange{ElementKind::kEdge, edge, e->type, props, nullptr, false, true,
                                            e->src(), e->dst()},
                       g, ctx);
  // The adjacency entries go at the end of the batch (FlushRemovals), all of
  // one array in one pass: removing k neighbours of a vertex of degree d
  // costs O(d + k log k), not O(k d).
  if (e->src() != skip_vertex) removals_.push_back(Removal{e->src(), edge, e->type, true});
  if (e->dst() != skip_vertex) removals_.push_back(Removal{e->dst(), edge, e->type, false});
  if (props != nullptr) {
    PropBlock** p = EdgePropTable::MutableSparse(g.edge_props, edge, ctx);
    ctx.Retire(*p);
    *p = nullptr;
    NoteRemoved(cleared_edge_prop_leaves_, edge);
  }
  e->type = storage::kDeadType;
  --g.live_edges;
  NoteRemoved(removed_edge_leaves_, edge);
}

void BatchProcessor::RemoveVertexInternal(std::uint64_t v, GraphRoots& g, MutationContext& ctx) {
  // The vertex's own arrays are retired whole, so only neighbours' arrays
  // change: the entries iterated here are never written during the loop.
  VertexSlot* slot = VertexTable::Mutable(g.vertices, v, ctx);
  const std::pair<std::uintptr_t, std::uint32_t> directions[] = {{slot->out_head, slot->out_degree},
                                                                 {slot->in_head, slot->in_degree}};
  for (auto [head, degree] : directions) {
    for (std::size_t gi = 0; gi < storage::GroupCount(head); ++gi) {
      EdgeGroup group = storage::GroupAt(head, degree, gi);
      for (const EdgeEntry& entry : group.entries) RemoveEdgeInternal(entry.edge().value(), v, g, ctx);
    }
  }
  // Removing the edges touched only the edge tables (the neighbours' entries
  // go at the end of the batch): `slot` is still valid. Its own arrays may
  // still hold entries of edges removed earlier in the batch; the flush
  // skips a dead vertex.
  maintainer_.OnChange(
      index::ElementChange{ElementKind::kVertex, v, slot->label, slot->props, nullptr, false, true}, g, ctx);
  storage::ReleasePacked(slot, v, true, ctx);
  storage::ReleasePacked(slot, v, false, ctx);
  storage::RetireAdjacency(slot->out_head, ctx);
  storage::RetireAdjacency(slot->in_head, ctx);
  ctx.Retire(slot->props);
  *slot = VertexSlot{};
  slot->label = storage::kDeadLabel;
  --g.live_vertices;
  NoteRemoved(removed_vertex_leaves_, v);
}

void BatchProcessor::ReclaimLeaves(GraphRoots& g, MutationContext& ctx) {
  const std::array<std::vector<std::uint64_t>*, 3> lists{&removed_vertex_leaves_, &removed_edge_leaves_,
                                                         &cleared_edge_prop_leaves_};
  if (g_reclaim_removed_leaves.load(std::memory_order_relaxed)) {
    for (auto* leaves : lists) {
      std::sort(leaves->begin(), leaves->end());
      leaves->erase(std::unique(leaves->begin(), leaves->end()), leaves->end());
    }
    for (std::uint64_t leaf : removed_vertex_leaves_)
      VertexTable::ReclaimIfRemoved(g.vertices, leaf << VertexTable::kLeafBits, g.vertex_limit, ctx);
    for (std::uint64_t leaf : removed_edge_leaves_)
      EdgeTable::ReclaimIfRemoved(g.edges, leaf << EdgeTable::kLeafBits, g.edge_limit, ctx);
    for (std::uint64_t leaf : cleared_edge_prop_leaves_)
      EdgePropTable::ReclaimIfEmpty(g.edge_props, leaf << EdgePropTable::kLeafBits, ctx);
  }
  for (auto* leaves : lists) leaves->clear();
}

void BatchProcessor::FlushRemovals(GraphRoots& g, MutationContext& ctx) {
  auto order = [](const Removal& r) { return std::tie(r.vertex, r.out, r.type, r.edge); };
  std::sort(removals_.begin(), removals_.end(),
            [&order](const Removal& a, const Removal& b) { return order(a) < order(b); });
  for (std::size_t i = 0; i < removals_.size();) {
    const std::uint64_t v = removals_[i].vertex;
    std::size_t end = i;
    while (end < removals_.size() && removals_[end].vertex == v) ++end;
    // A vertex removed later in the batch retired its arrays whole.
    VertexSlot* s = storage::FindVertex(g, v) != nullptr ? VertexTable::Mutable(g.vertices, v, ctx) : nullptr;
    while (s != nullptr && i < end) {
      const Removal& first = removals_[i];
      edges_.clear();
      for (; i < end && removals_[i].out == first.out && removals_[i].type == first.type; ++i)
        edges_.push_back(removals_[i].edge);
      storage::Unpack(s, v, first.out, 0, ctx);  // a packed group is never written
      if (first.out) {
        storage::RemoveEntries(s->out_head, s->out_degree, first.type, edges_, ctx);
      } else {
        storage::RemoveEntries(s->in_head, s->in_degree, first.type, edges_, ctx);
      }
    }
    i = end;
  }
  removals_.clear();
}

namespace {

// Sorts `adds[0 .. n)` by key, stably (entries of one key keep their order):
// a least-significant-digit radix sort over the bits in which the keys
// differ, 11 bits a pass (two passes for a million vertices), in place of a
// comparison sort's log n passes; an insertion sort below 64 entries.
// `scratch()` gives the second buffer (n entries). Returns where the sorted
// entries are: `adds` or that buffer. Allocates nothing itself.
template <typename Scratch>
storage::EntryAdd* SortByKey(storage::EntryAdd* adds, std::size_t n, Scratch&& scratch) {
  if (n < 64) {
    for (std::size_t i = 1; i < n; ++i) {
      const storage::EntryAdd a = adds[i];
      std::size_t j = i;
      for (; j > 0 && adds[j - 1].key > a.key; --j) adds[j] = adds[j - 1];
      adds[j] = a;
    }
    return adds;
  }
  std::uint64_t lo = adds[0].key, hi = adds[0].key;
  for (std::size_t i = 0; i < n; ++i) {
    lo = std::min(lo, adds[i].key);
    hi = std::max(hi, adds[i].key);
  }
  const std::uint64_t range = hi - lo;
  if (range == 0) return adds;
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  // size_t: a batch may hold 2^32 entries and more (kMaxBatchOpsCeiling).
  std::array<std::size_t, kBuckets> count;
  storage::EntryAdd* from = adds;
  storage::EntryAdd* to = scratch();
  for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += kBits) {
    count.fill(0);
    for (std::size_t i = 0; i < n; ++i) ++count[((from[i].key - lo) >> shift) & (kBuckets - 1)];
    std::size_t sum = 0;
    for (std::size_t& c : count) sum += std::exchange(c, sum);
    for (std::size_t i = 0; i < n; ++i) to[count[((from[i].key - lo) >> shift) & (kBuckets - 1)]++] = from[i];
    std::swap(from, to);
  }
  return from;
}

}  // namespace

void BatchProcessor::FlushAdds(GraphRoots& g, MutationContext& ctx) {
  const std::size_t n = adds_count_;
  if (n == 0) return;
  adds_count_ = 0;
  // The second buffer, the size of the first, allocated at most once per
  // batch (several flushes reuse it).
  auto scratch = [this, &ctx] {
    adds_scratch_.Reserve(ctx.account, adds_.capacity());
    return adds_scratch_.data();
  };
  if (SortByKey(adds_.data(), n, scratch) != adds_.data()) adds_.swap(adds_scratch_);
  storage::EntryAdd* const adds = adds_.data();
  // Where the run of (vertex, direction) entries starting at `i` ends.
  auto run_end = [adds, n](std::size_t i) {
    const std::uint64_t key = adds[i].key;
    while (++i < n && adds[i].key == key) {
    }
    return i;
  };
  // The entries go to random places: prefetch ahead, in two steps, the slot
  // of the run kRunSlotAhead further on, then (its slot now cached) the array
  // header and the append position of the run kRunArrayAhead further on, so
  // the misses of several runs overlap instead of following each other.
  // `slot_at` and `array_at` are the starts of those runs (n past the end).
  constexpr std::size_t kRunSlotAhead = 16, kRunArrayAhead = 8;
  auto slot_of = [&g](std::uint64_t key) { return VertexTable::Find(g.vertices, key >> 1); };
  std::size_t slot_at = 0, array_at = 0;
  for (std::size_t r = 0; r < kRunSlotAhead && slot_at < n; ++r) {
    __builtin_prefetch(slot_of(adds[slot_at].key));
    slot_at = run_end(slot_at);
  }
  for (std::size_t r = 0; r < kRunArrayAhead && array_at < n; ++r) array_at = run_end(array_at);
  VertexSlot* s = nullptr;
  std::uint64_t slot_vertex = ~std::uint64_t{0};
  for (std::size_t i = 0; i < n;) {
    if (slot_at < n) {
      __builtin_prefetch(slot_of(adds[slot_at].key));
      slot_at = run_end(slot_at);
    }
    if (array_at < n) {
      const std::uint64_t key = adds[array_at].key;
      const VertexSlot* ahead = slot_of(key);
      const std::uintptr_t head = ahead == nullptr ? 0 : (key & 1) != 0 ? ahead->in_head : ahead->out_head;
      if (head != 0) {
        __builtin_prefetch(storage::HeadBlock(head), 1);
        if (!storage::IsDir(head)) {
          const std::uint32_t degree = (key & 1) != 0 ? ahead->in_degree : ahead->out_degree;
          __builtin_prefetch(storage::SingleEntries(head) + degree, 1);
        }
      }
      array_at = run_end(array_at);
    }
    const std::uint64_t key = adds[i].key;
    const std::uint32_t first_type = adds[i].type;
    bool one_type = true;
    std::size_t end = i + 1;
    for (; end < n && adds[end].key == key; ++end) one_type &= adds[end].type == first_type;
    const std::uint64_t v = key >> 1;
    if (v != slot_vertex) {  // out- and in-entries of a vertex are neighbours in the order
      s = VertexTable::Mutable(g.vertices, v, ctx);
      slot_vertex = v;
    }
    std::uintptr_t& head = (key & 1) != 0 ? s->in_head : s->out_head;
    if (storage::IsPacked(head)) {
      // A packed group is never written: the vertex moves out to an array
      // with room for the run's entries of that group's type (others go to
      // groups of their own).
      const std::uint32_t type = storage::ArrayType(head);
      std::uint32_t same = 0;
      for (std::size_t j = i; j < end; ++j) same += adds[j].type == type ? 1 : 0;
      storage::Unpack(s, v, (key & 1) == 0, same, ctx);
    }
    std::uint32_t& degree = (key & 1) != 0 ? s->in_degree : s->out_degree;
    if (one_type) {
      storage::AppendEntries(head, degree, first_type, std::span<const storage::EntryAdd>(adds + i, end - i),
                             ctx);
      i = end;
      continue;
    }
    // Several edge types at one vertex: a group each, each in edge order,
    // the groups taken in order of first appearance (so a vertex's new
    // groups join its directory in the order one append per edge made them).
    // The run's entries not appended yet wait in the scratch buffer (free
    // again after the sort); each type's are gathered back into the run's
    // own place, which is read no more. O(entries x types of the vertex).
    storage::EntryAdd* rest = scratch() + i;
    std::copy(adds + i, adds + end, rest);
    std::size_t left = end - i;
    while (left > 0) {
      const std::uint32_t type = rest[0].type;
      std::size_t taken = 0, kept = 0;
      for (std::size_t j = 0; j < left; ++j) {
        if (rest[j].type == type) {
          adds[i + taken++] = rest[j];
        } else {
          rest[kept++] = rest[j];
        }
      }
      left = kept;
      storage::AppendEntries(head, degree, type, std::span<const storage::EntryAdd>(adds + i, taken), ctx);
    }
    i = end;
  }
}

bool BatchProcessor::SetInPlace(ElementKind kind, std::uint32_t label, PropBlock* block, std::uint32_t key,
                                const PropertyView& value, const GraphRoots& g,
                                const MutationContext& ctx) const {
  // In place, unseen, only where that keeps every index right (the key is
  // present before and after, and no index covers it).
  return ctx.IsPrivate(block) && !maintainer_.NeedsOldBlock(g, kind, label, key) &&
         storage::SetPropertyInPlace(block, key, value);
}

void BatchProcessor::ChangeProperty(ElementKind kind, std::uint64_t id, std::uint32_t label,
                                    PropBlock*& block, std::uint32_t key, const PropertyView* value,
                                    GraphRoots& g, MutationContext& ctx) {
  if (value != nullptr && SetInPlace(kind, label, block, key, *value, g, ctx)) return;
  PropBlock* next = value != nullptr ? storage::WithProperty(block, key, *value, ctx)
                                     : storage::WithoutProperty(block, key, ctx);
  ReplaceBlock(kind, id, label, block, next, g, ctx);
}

bool BatchProcessor::IsPropertyChange(OpKind kind) {
  return IsVertexPropertyChange(kind) || kind == OpKind::kSetEdgeProperty ||
         kind == OpKind::kRemoveEdgeProperty;
}

bool BatchProcessor::IsVertexPropertyChange(OpKind kind) {
  return kind == OpKind::kSetVertexProperty || kind == OpKind::kRemoveVertexProperty;
}

void BatchProcessor::LinkPropertyChanges(const WriteBatch& batch, std::size_t changes) {
  const auto ops = WriteBatchInternal::Ops(batch);
  // Validation keyed the batch's changed elements the same way: as many as
  // changes, no element has two, and each change is applied alone (which
  // is always right: linking only saves rebuilds).
  if (changes == 0 || elem_props_.size() >= changes) return;
  prop_links_.reserve(changes);
  prop_last_.Reserve(elem_props_.size());  // the elements validation counted
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op op = ops[i];
    if (!IsPropertyChange(op.kind)) continue;
    // Keyed as validation keys elements: a new element by its number in
    // the batch, which is what the operation names.
    const ElemKey elem = IsVertexPropertyChange(op.kind) ? BatchElementKey(op.v1) : BatchElementKey(op.e);
    const auto change = static_cast<std::uint32_t>(prop_links_.size());
    prop_links_.push_back(PropLink{static_cast<std::uint32_t>(i), kNoOp, false});
    auto [it, first] = prop_last_.try_emplace(elem, change);
    if (first) continue;
    prop_links_[change].prev = it->second;
    prop_links_[it->second].later = true;
    it->second = change;
  }
}

void BatchProcessor::ApplyPropertyChanges(const WriteBatch& batch, std::uint32_t last, GraphRoots& g,
                                          MutationContext& ctx) {
  const auto ops = WriteBatchInternal::Ops(batch);
  prop_ops_.clear();
  for (std::uint32_t c = last; c != kNoOp; c = prop_links_[c].prev) prop_ops_.push_back(prop_links_[c].op);
  std::reverse(prop_ops_.begin(), prop_ops_.end());
  const Op first = ops[prop_ops_.front()];
  const bool vertex = IsVertexPropertyChange(first.kind);
  const std::uint64_t id = vertex ? ResolveVertex(first.v1) : ResolveEdge(first.e);
  const PropBlock* current = vertex ? storage::FindVertex(g, id)->props : storage::EdgeProps(g, id);
  // The scratch list goes back to the allocator after a long run: its
  // length is bounded only by the batch's.
  struct ReleaseLongList {
    std::vector<storage::PropChange>& v;
    ~ReleaseLongList() {
      if (v.capacity() > kKeptPropChanges) std::vector<storage::PropChange>().swap(v);
    }
  } release{prop_changes_};
  prop_changes_.clear();
  bool sets = false, removes_present = false, overwrites_only = true;
  for (const std::uint32_t i : prop_ops_) {
    const Op op = ops[i];
    if (op.kind == OpKind::kSetVertexProperty || op.kind == OpKind::kSetEdgeProperty) {
      auto props = WriteBatchInternal::Props(batch, op);
      const std::uint32_t key = InternName(g.keys, props[0].key, ctx);
      prop_changes_.push_back(storage::PropChange{key, false, storage::ViewOf(props[0].value)});
      sets = true;
      overwrites_only = overwrites_only && storage::FindEntry(current, key) != nullptr;
    } else if (auto key = g.keys->Find(op.name)) {  // a key no element has is in no block
      prop_changes_.push_back(storage::PropChange{*key, true, PropertyView()});
      removes_present = removes_present || storage::FindEntry(current, *key) != nullptr;
      overwrites_only = false;
    } else {
      overwrites_only = false;
    }
  }
  if (!sets && !removes_present) return;  // removals of keys it lacks: nothing changes
  std::uint32_t label;
  PropBlock** slot;
  if (vertex) {
    VertexSlot* s = VertexTable::Mutable(g.vertices, id, ctx);
    label = s->label;
    slot = &s->props;
  } else {
    label = storage::FindEdge(g, id)->type;
    slot = EdgePropTable::MutableSparse(g.edge_props, id, ctx);
  }
  const ElementKind kind = vertex ? ElementKind::kVertex : ElementKind::kEdge;
  std::span<storage::PropChange> rest(prop_changes_);
  if (overwrites_only) {
    // Values of keys the block holds: one by one while each goes in place
    // (review: rebuilding here made many short runs on a large block the
    // group owns copy it per run); from the first that cannot (the block is
    // published, the value does not fit, or an index covers the key), the
    // rest as one new block (review: a change per rebuild was O(k x n)).
    std::size_t done = 0;
    while (done < rest.size() && SetInPlace(kind, label, *slot, rest[done].key, rest[done].value, g, ctx))
      ++done;
    rest = rest.subspan(done);
    if (rest.empty()) return;
  }
  bool changed = false;
  PropBlock* next = storage::WithChanges(*slot, rest, prop_inputs_, ctx, &changed);
  if (changed) ReplaceBlock(kind, id, label, *slot, next, g, ctx);
  if (!vertex && *slot == nullptr) NoteRemoved(cleared_edge_prop_leaves_, id);  // no property left
}

void BatchProcessor::ReplaceBlock(ElementKind kind, std::uint64_t id, std::uint32_t label, PropBlock*& slot,
                                  PropBlock* next, GraphRoots& g, MutationContext& ctx) {
  maintainer_.OnChange(index::ElementChange{kind, id, label, slot, next}, g, ctx);
  ctx.Retire(slot);  // a private block is freed now
  slot = next;
}

void BatchProcessor::Apply(const WriteBatch& batch, GraphRoots& g, MutationContext& ctx, CommitInfo* info) {
  if (!WriteBatchInternal::NeedsResolving(batch)) {
    ApplyPlain(batch, g, ctx, info);
    info->vertex_found.assign(info->vertices.size(), false);
    info->edge_found.assign(info->edges.size(), false);
    return;
  }
  ApplyPlain(resolver_.plain(), g, ctx, info);
  resolver_.FixInfo(info);
}

void BatchProcessor::ApplyPlain(const WriteBatch& batch, GraphRoots& g, MutationContext& ctx,
                                CommitInfo* info) {
  new_vertex_ids_.clear();
  new_edge_ids_.clear();
  removals_.clear();
  removed_vertex_leaves_.clear();
  removed_edge_leaves_.clear();
  cleared_edge_prop_leaves_.clear();
  adds_count_ = 0;
  if (WriteBatchInternal::IsIndexBatch(batch)) {
    const Op& op = WriteBatchInternal::Ops(batch)[0];
    ApplyIndexOp(*op.index, op.kind, g, ctx);
    return;
  }
  // The sort buffers live as long as this call, however it ends (a failed
  // batch keeps none), and hold exactly two entries per AddEdge.
  struct ReleaseSortBuffers {
    BatchProcessor* p;
    ~ReleaseSortBuffers() {
      p->adds_.Release();
      p->adds_scratch_.Release();
      p->adds_count_ = 0;
    }
  } release_sort_buffers{this};
  // The links of the property changes, one per change: a long list is not
  // kept after its batch (it is bounded only by the batch's length).
  struct ReleasePropLinks {
    BatchProcessor* p;
    ~ReleasePropLinks() {
      if (p->prop_links_.capacity() > kKeptPropChanges) {
        std::vector<PropLink>().swap(p->prop_links_);
        std::vector<std::uint32_t>().swap(p->prop_ops_);
      }
      p->prop_links_.clear();
      p->prop_last_.clear();
    }
  } release_prop_links{this};
  std::size_t added_edges = 0, property_changes = 0;
  for (const Op& op : WriteBatchInternal::Ops(batch)) {
    added_edges += op.kind == OpKind::kAddEdge;
    property_changes += IsPropertyChange(op.kind);
  }
  if (added_edges != 0) adds_.Reserve(ctx.account, 2 * added_edges);
  // The edge type of the last AddEdge: most batches add edges of one or a
  // few types, and comparing the name beats a hash lookup per edge.
  std::string_view last_type_name;
  std::uint32_t last_type = 0;
  bool have_last_type = false;
  const auto ops = WriteBatchInternal::Ops(batch);
  LinkPropertyChanges(batch, property_changes);
  std::uint32_t next_change = 0;  // the property changes' links, in batch order
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op op = ops[i];
    if (IsPropertyChange(op.kind) && !prop_links_.empty()) {
      const std::uint32_t change = next_change++;
      const PropLink link = prop_links_[change];
      if (link.later) {  // applied with the element's last change
        // Its key is interned here all the same: name ids are handed out in
        // the operations' order, as a replay by any release hands them out.
        if (op.kind == OpKind::kSetVertexProperty || op.kind == OpKind::kSetEdgeProperty)
          InternName(g.keys, WriteBatchInternal::Props(batch, op)[0].key, ctx);
        continue;
      }
      if (link.prev != kNoOp) {
        ApplyPropertyChanges(batch, change, g, ctx);
        continue;
      }
    }
    auto props = WriteBatchInternal::Props(batch, op);
    switch (op.kind) {
      case OpKind::kAddVertex: {
        VertexSlot slot{};
        slot.label = InternName(g.labels, op.name, ctx);
        slot.props = BuildBlock(props, g, ctx);
        std::uint64_t id = g.vertex_limit++;
        VertexTable::Append(g.vertices, id, slot, ctx);
        maintainer_.OnChange(
            index::ElementChange{ElementKind::kVertex, id, slot.label, nullptr, slot.props, true}, g, ctx);
        new_vertex_ids_.push_back(id);
        ++g.live_vertices;
        break;
      }
      case OpKind::kAddEdge: {
        if (!have_last_type || !SameName(op.name, last_type_name)) {
          last_type = InternName(g.types, op.name, ctx);
          last_type_name = op.name;
          have_last_type = true;
        }
        const std::uint32_t type = last_type;
        std::uint64_t src = ResolveVertex(op.v1);
        std::uint64_t dst = ResolveVertex(op.v2);
        std::uint64_t id = g.edge_limit++;
        EdgeSlot slot;
        base::Store48(slot.source, src);
        base::Store48(slot.target, dst);
        slot.type = type;
        EdgeTable::Append(g.edges, id, slot, ctx);
        PropBlock* block = BuildBlock(props, g, ctx);
        if (block != nullptr) *EdgePropTable::MutableSparse(g.edge_props, id, ctx) = block;
        maintainer_.OnChange(
            index::ElementChange{ElementKind::kEdge, id, type, nullptr, block, true, false, src, dst}, g,
            ctx);
        // The adjacency entries go at the end of the batch (FlushAdds).
        adds_.data()[adds_count_++] = storage::EntryAdd{src * 2, id, dst, type};
        adds_.data()[adds_count_++] = storage::EntryAdd{dst * 2 + 1, id, src, type};
        new_edge_ids_.push_back(id);
        ++g.live_edges;
        break;
      }
      case OpKind::kSetVertexProperty: {
        std::uint32_t key = InternName(g.keys, props[0].key, ctx);
        std::uint64_t v = ResolveVertex(op.v1);
        VertexSlot* s = VertexTable::Mutable(g.vertices, v, ctx);
        PropertyView value = storage::ViewOf(props[0].value);
        ChangeProperty(ElementKind::kVertex, v, s->label, s->props, key, &value, g, ctx);
        break;
      }
      case OpKind::kRemoveVertexProperty: {
        std::uint64_t v = ResolveVertex(op.v1);
        auto key = g.keys->Find(op.name);
        if (!key || !storage::GetProperty(storage::FindVertex(g, v)->props, *key)) break;
        VertexSlot* s = VertexTable::Mutable(g.vertices, v, ctx);
        ChangeProperty(ElementKind::kVertex, v, s->label, s->props, *key, nullptr, g, ctx);
        break;
      }
      case OpKind::kSetEdgeProperty: {
        std::uint32_t key = InternName(g.keys, props[0].key, ctx);
        std::uint64_t e = ResolveEdge(op.e);
        const std::uint32_t type = storage::FindEdge(g, e)->type;
        PropBlock** p = EdgePropTable::MutableSparse(g.edge_props, e, ctx);
        PropertyView value = storage::ViewOf(props[0].value);
        ChangeProperty(ElementKind::kEdge, e, type, *p, key, &value, g, ctx);
        break;
      }
      case OpKind::kRemoveEdgeProperty: {
        std::uint64_t e = ResolveEdge(op.e);
        auto key = g.keys->Find(op.name);
        if (!key || !storage::GetProperty(storage::EdgeProps(g, e), *key)) break;
        const std::uint32_t type = storage::FindEdge(g, e)->type;
        PropBlock** p = EdgePropTable::MutableSparse(g.edge_props, e, ctx);
        ChangeProperty(ElementKind::kEdge, e, type, *p, *key, nullptr, g, ctx);
        if (*p == nullptr) NoteRemoved(cleared_edge_prop_leaves_, e);  // its last property
        break;
      }
      case OpKind::kRemoveEdge: RemoveEdgeInternal(ResolveEdge(op.e), ~std::uint64_t{0}, g, ctx); break;
      case OpKind::kRemoveVertex:
        // It walks the adjacency of the vertex: the entries queued so far
        // must be in it.
        FlushAdds(g, ctx);
        RemoveVertexInternal(ResolveVertex(op.v1), g, ctx);
        break;
      case OpKind::kDefineIndex:
      case OpKind::kIndexReady:
      case OpKind::kDropIndex: break;  // only in index batches (IsIndexBatch)
      case OpKind::kUpsertVertex:
      case OpKind::kUpsertEdge:
      case OpKind::kExpectVertexProperty:
      case OpKind::kExpectEdgeProperty:
      case OpKind::kExpectVertex:
      case OpKind::kExpectEdge:
      case OpKind::kExpectKeyFree: break;  // resolved away (resolver.h)
    }
  }
  FlushAdds(g, ctx);
  FlushRemovals(g, ctx);
  ReclaimLeaves(g, ctx);
  info->vertices.reserve(new_vertex_ids_.size());
  for (std::uint64_t id : new_vertex_ids_) info->vertices.emplace_back(id);
  info->edges.reserve(new_edge_ids_.size());
  for (std::uint64_t id : new_edge_ids_) info->edges.emplace_back(id);
}

// --- Index lifecycle

Status BatchProcessor::ValidateIndexOp(const IndexOp& op, OpKind kind, const GraphRoots& g) {
  const index::Catalog& cat = *g.catalog;
  const std::string& name = op.spec.name;
  switch (kind) {
    case OpKind::kDefineIndex:
      QUIVER_RETURN_IF_ERROR(index::CheckSpec(op.spec, limits_.max_string_bytes));
      if (cat.Find(name) != nullptr)
        return AlreadyExistsError(base::StrCat("an index named '", name, "' already exists"));
      return Status::Ok();
    case OpKind::kIndexReady: {
      const index::PropertyIndex* p = cat.Find(name);
      if (p == nullptr || p->def->declared != op.declared || p->state != IndexState::kBuilding)
        return FailedPreconditionError(
            base::StrCat("index '", name, "' was dropped while it was being built; nothing was published"));
      return ValidateReady(op, *p, g);
    }
    case OpKind::kDropIndex: {
      const index::PropertyIndex* p = cat.Find(name);
      if (p == nullptr || (op.declared != 0 && p->def->declared != op.declared))
        return NotFoundError(base::StrCat("no index named '", name, "'"));
      return Status::Ok();
    }
    default: return InternalError("not an index operation");
  }
}

Status BatchProcessor::ValidateReady(const IndexOp& op, const index::PropertyIndex& p,
                                     const GraphRoots& g) const {
  const index::IndexDef& def = *p.def;
  if (op.built == nullptr || !index::IsUniqueKind(def.kind)) return Status::Ok();
  // The catch-up must not make two elements share a key: the recorded
  // elements' keys now, against each other and against the snapshot's
  // holders that were not recorded (their keys have not changed).
  const index::TrackedIds* ids = maintainer_.Tracked(def.declared);
  if (ids == nullptr) return Status::Ok();
  base::SafeFlatHashMap<std::string, std::uint64_t> now;
  std::string key;
  for (const auto& [id, changed] : *ids) {
    if (index::KeyIn(g, def, id, &key) != index::KeyStatus::kIndexed) continue;
    auto it = now.find(key);
    const bool inserted = it == now.end();
    if (inserted) it = now.try_emplace(std::string(key), id).first;
    std::uint64_t other = it->second;
    if (inserted) {
      std::uint64_t holder;
      if (!index::IndexTree::Contains(op.built->root, key, &holder) || holder == id || ids->contains(holder))
        continue;
      other = holder;
    }
    return AlreadyExistsError(base::StrCat(index::DescribeIndex(def), ": ", index::KeyWord(def), " ",
                                           index::DescribeKeyOf(g, def, id), " is held by both ",
                                           index::DescribeElement(def.element, other), " and ",
                                           index::DescribeElement(def.element, id)));
  }
  return Status::Ok();
}

void BatchProcessor::ApplyIndexOp(const IndexOp& op, OpKind kind, GraphRoots& g, MutationContext& ctx) {
  const IndexSpec& spec = op.spec;
  switch (kind) {
    case OpKind::kDefineIndex: {
      auto def = std::make_shared<index::IndexDef>();
      def->name = spec.name;
      def->element = spec.element;
      def->label = spec.label;
      // Interned now, so every version listing the index knows its names.
      def->label_id = InternName(spec.element == ElementKind::kVertex ? g.labels : g.types, spec.label, ctx);
      def->keys = spec.keys;
      for (const std::string& k : spec.keys) def->key_ids.push_back(InternName(g.keys, k, ctx));
      def->kind = spec.kind;
      def->type = spec.type;
      def->declared = g.sequence + 1;  // this batch's sequence number
      def->key_width = index::KeyWidthFor(spec);
      index::PropertyIndex p;
      p.def = std::move(def);
      p.root.key_width = p.def->key_width;
      index::OwnCatalog(g.catalog, ctx)->AddIndex(std::move(p));
      return;
    }
    case OpKind::kIndexReady: ApplyReady(op, g, ctx); return;
    case OpKind::kDropIndex: {
      index::Catalog* cat = index::OwnCatalog(g.catalog, ctx);
      std::vector<index::PropertyIndex>& indexes = cat->mutable_indexes();
      auto it = std::find_if(indexes.begin(), indexes.end(),
                             [&](const index::PropertyIndex& p) { return p.def->name == spec.name; });
      // What was recorded for a building index is forgotten only once the
      // drop is published: a rolled-back group keeps the index, still
      // building, and its catch-up needs every id recorded so far.
      if (maintainer_.Tracked(it->def->declared) != nullptr) dropped_.push_back(it->def->declared);
      if (it->built) index::IndexTree::Retire(it->root, ctx);
      cat->RemoveIndex(static_cast<std::size_t>(it - indexes.begin()));
      return;
    }
    default: return;
  }
}

void BatchProcessor::ApplyReady(const IndexOp& op, GraphRoots& g, MutationContext& ctx) {
  index::PropertyIndex& p = *index::OwnCatalog(g.catalog, ctx)->MutableFind(op.spec.name);
  p.state = IndexState::kReady;
  if (op.built == nullptr) return;  // replayed: recovery builds it at the end of the log
  // Catch up from the state the tree was built from. The built nodes are
  // born in epoch 0, which no group uses, so they are copied, never written.
  const index::IndexDef& def = *p.def;
  index::IndexRoot root = op.built->root;
  std::string old_key, new_key;
  last_catch_up_changes_ = 0;
  last_catch_up_visits_ = 0;
  // Recorded ids are all of the index's label (labels never change, and ids
  // recorded by rolled-back groups are forgotten); one that is not live in a
  // version has no properties there (PropsOf). They are read, not taken: if
  // this group is rolled back the next attempt needs them; they are
  // forgotten once it is published (dropped_, EndGroup).
  if (const index::TrackedIds* ids = maintainer_.Tracked(def.declared)) {
    for (const auto& [id, changed] : *ids) {
      // Not changed since the state the tree holds for it: nothing to read.
      const storage::GraphRoots& then = op.built->StateOf(id);
      if (changed <= then.sequence) continue;
      ++last_catch_up_visits_;
      const bool in_then = index::KeyIn(then, def, id, &old_key) == index::KeyStatus::kIndexed;
      const bool in_now = index::KeyIn(g, def, id, &new_key) == index::KeyStatus::kIndexed;
      if (in_then == in_now && (!in_then || old_key == new_key)) continue;
      ++last_catch_up_changes_;
      if (in_then) index::IndexTree::Erase(root, old_key, id, ctx);
      if (in_now) index::IndexTree::Insert(root, new_key, id, ctx);
    }
    dropped_.push_back(def.declared);
  }
  p.root = root;
  p.built = true;
  installed_.push_back(op.built);
}

void BatchProcessor::EndGroup(bool published) {
  if (published) {
    for (const auto& b : installed_) b->published.store(true, std::memory_order_release);
    for (SequenceNumber declared : dropped_) maintainer_.Forget(declared);
  }
  maintainer_.EndGroup(published);
  installed_.clear();
  dropped_.clear();
}

}  // namespace quiver
