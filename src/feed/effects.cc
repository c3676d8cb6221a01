#include "feed/effects.h"

#include "storage/adjacency.h"
#include "storage/prop_block.h"
#include "write/write_batch_internal.h"

namespace quiver::feed {

namespace {

using internal::WriteBatchInternal;
using Op = WriteBatchInternal::Op;

std::vector<Property> PropertiesOf(const storage::GraphRoots& g, const storage::PropBlock* b) {
  std::vector<Property> out;
  if (b == nullptr) return out;
  const std::uint32_t n = storage::PropCount(b);
  out.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    storage::PropInput p = storage::PropAt(b, i);
    out.push_back(Property{std::string(g.keys->Name(p.key)), p.value.ToValue()});
  }
  return out;
}

std::optional<PropertyValue> ValueOf(const storage::GraphRoots& g, const storage::PropBlock* b,
                                     const std::string& key) {
  if (b == nullptr) return std::nullopt;
  std::optional<std::uint32_t> id = g.keys->Find(key);
  if (!id) return std::nullopt;
  std::optional<PropertyView> v = storage::GetProperty(b, *id);
  if (!v) return std::nullopt;
  return v->ToValue();
}

bool Same(const std::optional<PropertyValue>& a, const std::optional<PropertyValue>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || IdenticalValues(storage::ViewOf(*a), *b);
}

std::size_t BytesOf(const PropertyValue& v) {
  const PropertyView view = storage::ViewOf(v);
  if (auto s = view.as_string()) return s->size();
  if (auto s = view.as_bytes()) return s->size();
  if (auto s = view.as_float_vector()) return s->size() * sizeof(float);
  if (auto s = view.as_string_list()) return s->size() * sizeof(std::string) + s->text_bytes();
  return 0;
}

std::size_t BytesOf(const std::vector<Property>& props) {
  std::size_t n = 0;
  for (const Property& p : props) n += sizeof(Property) + p.key.size() + BytesOf(p.value);
  return n;
}

}  // namespace

void EffectsRecorder::RecordEdge(const storage::GraphRoots& g, std::uint64_t id) {
  if (removed_edges_.count(id) != 0) return;
  const storage::EdgeSlot* e = storage::FindEdge(g, id);
  if (e == nullptr) return;  // validation passed, so this does not happen
  removed_edges_.emplace(id, EdgeRecord{EdgeId(id), std::string(g.types->Name(e->type)), VertexId(e->src()),
                                        VertexId(e->dst()), PropertiesOf(g, storage::EdgeProps(g, id))});
}

void EffectsRecorder::Before(const WriteBatch& plain, const storage::GraphRoots& g) {
  vertex_old_.clear();
  edge_old_.clear();
  removed_vertices_.clear();
  removed_edges_.clear();
  if (WriteBatchInternal::IsIndexBatch(plain)) return;
  for (const Op& op : WriteBatchInternal::Ops(plain)) {
    switch (op.kind) {
      case OpKind::kSetVertexProperty:
      case OpKind::kRemoveVertexProperty: {
        if (op.v1.is_new()) break;
        Key key{op.v1.raw(), op.kind == OpKind::kSetVertexProperty
                                 ? WriteBatchInternal::Props(plain, op)[0].key
                                 : op.name};
        if (vertex_old_.count(key) != 0) break;
        const storage::VertexSlot* v = storage::FindVertex(g, key.first);
        std::optional<PropertyValue> old = v == nullptr ? std::nullopt : ValueOf(g, v->props, key.second);
        vertex_old_.emplace(std::move(key), std::move(old));
        break;
      }
      case OpKind::kSetEdgeProperty:
      case OpKind::kRemoveEdgeProperty: {
        if (op.e.is_new()) break;
        Key key{op.e.raw(),
                op.kind == OpKind::kSetEdgeProperty ? WriteBatchInternal::Props(plain, op)[0].key : op.name};
        if (edge_old_.count(key) != 0) break;
        std::optional<PropertyValue> old = storage::FindEdge(g, key.first) == nullptr
                                               ? std::nullopt
                                               : ValueOf(g, storage::EdgeProps(g, key.first), key.second);
        edge_old_.emplace(std::move(key), std::move(old));
        break;
      }
      case OpKind::kRemoveEdge:
        if (!op.e.is_new()) RecordEdge(g, op.e.raw());
        break;
      case OpKind::kRemoveVertex: {
        if (op.v1.is_new()) break;
        const std::uint64_t id = op.v1.raw();
        const storage::VertexSlot* v = storage::FindVertex(g, id);
        if (v == nullptr || removed_vertices_.count(id) != 0) break;
        removed_vertices_.emplace(
            id, VertexRecord{VertexId(id), std::string(g.labels->Name(v->label)), PropertiesOf(g, v->props)});
        // Its edges go with it (those the batch added are not in g: they
        // were created and removed by the batch, so they do not appear).
        for (std::uintptr_t head : {v->out_head, v->in_head}) {
          const std::uint32_t degree = head == v->out_head ? v->out_degree : v->in_degree;
          for (std::size_t i = 0; i < storage::GroupCount(head); ++i)
            for (const EdgeEntry& entry : storage::GroupAt(head, degree, i).entries)
              RecordEdge(g, entry.edge().value());
        }
        break;
      }
      default: break;
    }
  }
}

std::shared_ptr<const ChangeBatch> EffectsRecorder::Finish(const WriteBatch& plain,
                                                           const storage::GraphRoots& g,
                                                           SequenceNumber sequence,
                                                           std::uint64_t first_vertex,
                                                           std::uint64_t first_edge) {
  auto out = std::make_shared<ChangeBatch>();
  ChangeBatch& c = *out;
  c.sequence = sequence;
  std::size_t bytes = sizeof(ChangeBatch);
  if (WriteBatchInternal::IsIndexBatch(plain)) {
    const Op& op = WriteBatchInternal::Ops(plain)[0];
    c.index_change = op.kind == OpKind::kDefineIndex  ? IndexChange::kDeclared
                     : op.kind == OpKind::kIndexReady ? IndexChange::kReady
                                                      : IndexChange::kDropped;
    c.index_name = op.index->spec.name;
    c.bytes = bytes + c.index_name.size();
    return out;
  }
  for (std::uint64_t id = first_vertex; id < g.vertex_limit; ++id) {
    const storage::VertexSlot* v = storage::FindVertex(g, id);
    if (v == nullptr) continue;  // created and removed by the batch
    c.created_vertices.push_back(
        VertexRecord{VertexId(id), std::string(g.labels->Name(v->label)), PropertiesOf(g, v->props)});
  }
  for (std::uint64_t id = first_edge; id < g.edge_limit; ++id) {
    const storage::EdgeSlot* e = storage::FindEdge(g, id);
    if (e == nullptr) continue;
    c.created_edges.push_back(EdgeRecord{EdgeId(id), std::string(g.types->Name(e->type)), VertexId(e->src()),
                                         VertexId(e->dst()), PropertiesOf(g, storage::EdgeProps(g, id))});
  }
  for (auto& [id, record] : removed_vertices_) c.removed_vertices.push_back(std::move(record));
  for (auto& [id, record] : removed_edges_) c.removed_edges.push_back(std::move(record));
  for (auto& [key, old] : vertex_old_) {
    const storage::VertexSlot* v = storage::FindVertex(g, key.first);
    if (v == nullptr) continue;  // removed by the batch: removed_vertices has it as it was
    std::optional<PropertyValue> now = ValueOf(g, v->props, key.second);
    if (Same(old, now)) continue;
    c.vertex_property_changes.push_back(
        VertexPropertyChange{VertexId(key.first), key.second, std::move(old), std::move(now)});
  }
  for (auto& [key, old] : edge_old_) {
    if (storage::FindEdge(g, key.first) == nullptr) continue;
    std::optional<PropertyValue> now = ValueOf(g, storage::EdgeProps(g, key.first), key.second);
    if (Same(old, now)) continue;
    c.edge_property_changes.push_back(
        EdgePropertyChange{EdgeId(key.first), key.second, std::move(old), std::move(now)});
  }
  for (const VertexRecord& r : c.created_vertices)
    bytes += sizeof(r) + r.label.size() + BytesOf(r.properties);
  for (const VertexRecord& r : c.removed_vertices)
    bytes += sizeof(r) + r.label.size() + BytesOf(r.properties);
  for (const EdgeRecord& r : c.created_edges) bytes += sizeof(r) + r.type.size() + BytesOf(r.properties);
  for (const EdgeRecord& r : c.removed_edges) bytes += sizeof(r) + r.type.size() + BytesOf(r.properties);
  for (const VertexPropertyChange& p : c.vertex_property_changes)
    bytes += sizeof(p) + p.key.size() + (p.old_value ? BytesOf(*p.old_value) : 0) +
             (p.new_value ? BytesOf(*p.new_value) : 0);
  for (const EdgePropertyChange& p : c.edge_property_changes)
    bytes += sizeof(p) + p.key.size() + (p.old_value ? BytesOf(*p.old_value) : 0) +
             (p.new_value ? BytesOf(*p.new_value) : 0);
  c.bytes = bytes;
  vertex_old_.clear();
  edge_old_.clear();
  removed_vertices_.clear();
  removed_edges_.clear();
  return out;
}

}  // namespace quiver::feed
