// Snapshot's label counts and index queries (include/quiver/snapshot.h),
// answered from the version's catalog (index/catalog.h). Nothing locks.
#include <new>

#include "index/catalog.h"
#include "index/index_query.h"
#include "quiver/snapshot.h"
#include "storage/intern_table.h"
#include "storage/version.h"

namespace quiver {

using index::ElementKind;
using index::Need;
using index::PropertyIndex;

namespace {

// The roots of an empty graph: no elements, no names, no indexes. Built
// once and never freed (like a static), so a default snapshot's questions
// take the same path, and get the same answers, as an empty graph's.
const storage::GraphRoots& EmptyIndexRoots() {
  static const storage::GraphRoots* const roots = [] {
    auto* r = new storage::GraphRoots();
    r->labels = new storage::InternTable(0);
    r->types = new storage::InternTable(0);
    r->keys = new storage::InternTable(0);
    r->catalog = new index::Catalog(0);
    return r;
  }();
  return *roots;
}

// Never null: a default snapshot reads as an empty graph.
const storage::GraphRoots* RootsOf(const internal::Version* v) {
  return v == nullptr ? &EmptyIndexRoots() : &v->roots;
}

// An index query's answer when memory runs out (its result, a key's
// encoding): built as the library loads, so that giving it allocates
// nothing.
const Status& QueryOutOfMemory() {
  static const Status* const s = new Status(
      internal::ImmortalStatus(StatusCode::kResourceExhausted, "index query: out of memory for its answer"));
  return *s;
}
[[maybe_unused]] const bool query_out_of_memory_built = (QueryOutOfMemory(), true);

// fn()'s answer, or ResourceExhausted if it ran out of memory.
template <typename Fn>
auto Guarded(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return QueryOutOfMemory();
  }
}

template <typename Id>
std::vector<Id> ToIds(const std::vector<std::uint64_t>& raw) {
  std::vector<Id> out;
  out.reserve(raw.size());
  for (std::uint64_t id : raw) out.emplace_back(id);
  return out;
}

template <typename Id>
Result<std::vector<Id>> Find(const storage::GraphRoots* g, ElementKind kind, std::string_view label,
                             std::string_view key, const PropertyValue& value) {
  QUIVER_ASSIGN_OR_RETURN(const PropertyIndex* p,
                          index::PickIndex(*g, kind, label, key, Need::kEquality, value.type()));
  std::vector<std::uint64_t> ids;
  QUIVER_RETURN_IF_ERROR(index::Lookup(*p, std::span<const PropertyValue>(&value, 1), SIZE_MAX, &ids));
  return ToIds<Id>(ids);
}

template <typename Id>
Result<std::optional<Id>> FindOne(const storage::GraphRoots* g, ElementKind kind, std::string_view label,
                                  std::string_view key, const PropertyValue& value) {
  QUIVER_ASSIGN_OR_RETURN(const PropertyIndex* p,
                          index::PickIndex(*g, kind, label, key, Need::kUnique, value.type()));
  std::vector<std::uint64_t> ids;
  QUIVER_RETURN_IF_ERROR(index::Lookup(*p, std::span<const PropertyValue>(&value, 1), 1, &ids));
  if (ids.empty()) return std::optional<Id>();
  return std::optional<Id>(Id(ids[0]));
}

template <typename Id>
Result<std::vector<Id>> FindBy(const storage::GraphRoots* g, ElementKind kind, std::string_view name,
                               std::span<const PropertyValue> values) {
  QUIVER_ASSIGN_OR_RETURN(const PropertyIndex* p, index::IndexByName(*g, kind, name, Need::kEquality));
  std::vector<std::uint64_t> ids;
  QUIVER_RETURN_IF_ERROR(index::Lookup(*p, values, SIZE_MAX, &ids));
  return ToIds<Id>(ids);
}

template <typename Id>
Result<std::optional<Id>> FindOneBy(const storage::GraphRoots* g, ElementKind kind, std::string_view name,
                                    std::span<const PropertyValue> values) {
  QUIVER_ASSIGN_OR_RETURN(const PropertyIndex* p, index::IndexByName(*g, kind, name, Need::kUnique));
  std::vector<std::uint64_t> ids;
  QUIVER_RETURN_IF_ERROR(index::Lookup(*p, values, 1, &ids));
  if (ids.empty()) return std::optional<Id>();
  return std::optional<Id>(Id(ids[0]));
}

// The type of the range's values, to pick among indexes of one key.
std::optional<ValueType> RangeType(const IndexRange& r) {
  if (r.lo) return r.lo->value.type();
  if (r.hi) return r.hi->value.type();
  if (r.prefix) return ValueType::kString;
  return std::nullopt;
}

// The ordered index for a range: single-key on (label, key), or by name
// when `label` is null.
Result<const PropertyIndex*> OrderedIndex(const storage::GraphRoots* g, ElementKind kind,
                                          const std::string_view* label, std::string_view key_or_name,
                                          const IndexRange& range) {
  if (label == nullptr) return index::IndexByName(*g, kind, key_or_name, Need::kOrdered);
  return index::PickIndex(*g, kind, *label, key_or_name, Need::kOrdered, RangeType(range));
}

template <typename Id>
Result<std::vector<Id>> InRange(const storage::GraphRoots* g, ElementKind kind, const std::string_view* label,
                                std::string_view key_or_name, const IndexRange& range) {
  QUIVER_ASSIGN_OR_RETURN(const PropertyIndex* p, OrderedIndex(g, kind, label, key_or_name, range));
  std::vector<Id> ids;
  QUIVER_RETURN_IF_ERROR(index::Range(*p, range, &ids));
  return ids;
}

Result<std::uint64_t> CountInRange(const storage::GraphRoots* g, ElementKind kind,
                                   const std::string_view* label, std::string_view key_or_name,
                                   const IndexRange& range) {
  QUIVER_ASSIGN_OR_RETURN(const PropertyIndex* p, OrderedIndex(g, kind, label, key_or_name, range));
  return index::CountRange(*p, range);
}

std::uint64_t SetCount(const storage::GraphRoots* g, ElementKind kind, std::uint32_t label) {
  const index::IdSetRoot* set = g->catalog->Set(kind, label);
  return set == nullptr ? 0 : set->count;
}

}  // namespace

std::uint64_t Snapshot::CountVertices(LabelId label) const {
  return SetCount(RootsOf(v_), ElementKind::kVertex, label.value());
}
std::uint64_t Snapshot::CountEdges(EdgeTypeId type) const {
  return SetCount(RootsOf(v_), ElementKind::kEdge, type.value());
}

std::vector<LabelCount> Snapshot::Labels() const {
  std::vector<LabelCount> out;
  const storage::GraphRoots* g = RootsOf(v_);
  for (std::uint32_t i = 0; i < g->catalog->SetCount(ElementKind::kVertex); ++i)
    if (std::uint64_t n = SetCount(g, ElementKind::kVertex, i); n > 0)
      out.push_back(LabelCount{LabelId(i), g->labels->Name(i), n});
  return out;
}

std::vector<EdgeTypeCount> Snapshot::EdgeTypes() const {
  std::vector<EdgeTypeCount> out;
  const storage::GraphRoots* g = RootsOf(v_);
  for (std::uint32_t i = 0; i < g->catalog->SetCount(ElementKind::kEdge); ++i)
    if (std::uint64_t n = SetCount(g, ElementKind::kEdge, i); n > 0)
      out.push_back(EdgeTypeCount{EdgeTypeId(i), g->types->Name(i), n});
  return out;
}

std::vector<PropertyKeyCount> Snapshot::PropertyKeys() const {
  std::vector<PropertyKeyCount> out;
  const storage::GraphRoots* g = RootsOf(v_);
  const index::Catalog& c = *g->catalog;
  const std::size_t n = std::max(c.KeyCountSize(ElementKind::kVertex), c.KeyCountSize(ElementKind::kEdge));
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint64_t v = c.KeyCount(ElementKind::kVertex, k), e = c.KeyCount(ElementKind::kEdge, k);
    if (v + e > 0) out.push_back(PropertyKeyCount{PropertyKeyId(k), g->keys->Name(k), v, e});
  }
  return out;
}

std::vector<IndexInfo> Snapshot::Indexes() const {
  std::vector<IndexInfo> out;
  const storage::GraphRoots* g = RootsOf(v_);
  for (const PropertyIndex& p : g->catalog->indexes()) {
    const bool ready = p.state == IndexState::kReady && p.built;
    out.push_back(IndexInfo{p.def->Spec(), ready ? IndexState::kReady : IndexState::kBuilding,
                            ready ? p.root.count : 0, p.def->declared});
  }
  return out;
}

Result<std::vector<VertexId>> Snapshot::FindVertices(std::string_view label, std::string_view key,
                                                     const PropertyValue& value) const {
  return Guarded([&] { return Find<VertexId>(RootsOf(v_), ElementKind::kVertex, label, key, value); });
}
Result<std::vector<EdgeId>> Snapshot::FindEdges(std::string_view type, std::string_view key,
                                                const PropertyValue& value) const {
  return Guarded([&] { return Find<EdgeId>(RootsOf(v_), ElementKind::kEdge, type, key, value); });
}
Result<std::optional<VertexId>> Snapshot::FindVertex(std::string_view label, std::string_view key,
                                                     const PropertyValue& value) const {
  return Guarded([&] { return FindOne<VertexId>(RootsOf(v_), ElementKind::kVertex, label, key, value); });
}
Result<std::optional<EdgeId>> Snapshot::FindEdge(std::string_view type, std::string_view key,
                                                 const PropertyValue& value) const {
  return Guarded([&] { return FindOne<EdgeId>(RootsOf(v_), ElementKind::kEdge, type, key, value); });
}
Result<std::vector<VertexId>> Snapshot::FindVerticesByIndex(std::string_view index,
                                                            std::span<const PropertyValue> values) const {
  return Guarded([&] { return FindBy<VertexId>(RootsOf(v_), ElementKind::kVertex, index, values); });
}
Result<std::vector<EdgeId>> Snapshot::FindEdgesByIndex(std::string_view index,
                                                       std::span<const PropertyValue> values) const {
  return Guarded([&] { return FindBy<EdgeId>(RootsOf(v_), ElementKind::kEdge, index, values); });
}
Result<std::optional<VertexId>> Snapshot::FindVertexByIndex(std::string_view index,
                                                            std::span<const PropertyValue> values) const {
  return Guarded([&] { return FindOneBy<VertexId>(RootsOf(v_), ElementKind::kVertex, index, values); });
}
Result<std::optional<EdgeId>> Snapshot::FindEdgeByIndex(std::string_view index,
                                                        std::span<const PropertyValue> values) const {
  return Guarded([&] { return FindOneBy<EdgeId>(RootsOf(v_), ElementKind::kEdge, index, values); });
}
Result<std::vector<VertexId>> Snapshot::VerticesInRange(std::string_view label, std::string_view key,
                                                        const IndexRange& range) const {
  return Guarded([&] { return InRange<VertexId>(RootsOf(v_), ElementKind::kVertex, &label, key, range); });
}
Result<std::vector<EdgeId>> Snapshot::EdgesInRange(std::string_view type, std::string_view key,
                                                   const IndexRange& range) const {
  return Guarded([&] { return InRange<EdgeId>(RootsOf(v_), ElementKind::kEdge, &type, key, range); });
}
Result<std::uint64_t> Snapshot::CountVerticesInRange(std::string_view label, std::string_view key,
                                                     const IndexRange& range) const {
  return Guarded([&] { return CountInRange(RootsOf(v_), ElementKind::kVertex, &label, key, range); });
}
Result<std::uint64_t> Snapshot::CountEdgesInRange(std::string_view type, std::string_view key,
                                                  const IndexRange& range) const {
  return Guarded([&] { return CountInRange(RootsOf(v_), ElementKind::kEdge, &type, key, range); });
}
Result<std::vector<VertexId>> Snapshot::VerticesInRangeByIndex(std::string_view index,
                                                               const IndexRange& range) const {
  return Guarded([&] { return InRange<VertexId>(RootsOf(v_), ElementKind::kVertex, nullptr, index, range); });
}
Result<std::vector<EdgeId>> Snapshot::EdgesInRangeByIndex(std::string_view index,
                                                          const IndexRange& range) const {
  return Guarded([&] { return InRange<EdgeId>(RootsOf(v_), ElementKind::kEdge, nullptr, index, range); });
}
Result<std::uint64_t> Snapshot::CountVerticesInRangeByIndex(std::string_view index,
                                                            const IndexRange& range) const {
  return Guarded([&] { return CountInRange(RootsOf(v_), ElementKind::kVertex, nullptr, index, range); });
}
Result<std::uint64_t> Snapshot::CountEdgesInRangeByIndex(std::string_view index,
                                                         const IndexRange& range) const {
  return Guarded([&] { return CountInRange(RootsOf(v_), ElementKind::kEdge, nullptr, index, range); });
}

}  // namespace quiver
