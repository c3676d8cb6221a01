// WriteBatch: recording only. Validation happens on the writer thread.
#include "quiver/write_batch.h"

#include <atomic>

#include "write/write_batch_internal.h"

namespace quiver {
namespace {

// Each batch gets a distinct tag so a NewVertex/NewEdge handle from one
// batch is recognised as foreign in another. 0 is never used.
std::uint32_t NextTag() {
  static std::atomic<std::uint32_t> next{1};
  std::uint32_t t = next.fetch_add(1, std::memory_order_relaxed);
  return t == 0 ? next.fetch_add(1, std::memory_order_relaxed) : t;
}

}  // namespace

WriteBatch::WriteBatch() : tag_(NextTag()) {}
WriteBatch::WriteBatch(const WriteBatch&) = default;
WriteBatch& WriteBatch::operator=(const WriteBatch&) = default;
WriteBatch::WriteBatch(WriteBatch&&) noexcept = default;
WriteBatch& WriteBatch::operator=(WriteBatch&&) noexcept = default;
WriteBatch::~WriteBatch() = default;

NewVertex WriteBatch::AddVertex(std::string_view label, std::span<const Property> properties) {
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kAddVertex;
  op.name.assign(label);
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = static_cast<std::uint32_t>(properties.size());
  properties_.insert(properties_.end(), properties.begin(), properties.end());
  counted_ops_ += 1 + properties.size();
  return NewVertex{tag_, added_vertices_++};
}

NewVertex WriteBatch::AddVertex(std::string_view label, std::initializer_list<Property> properties) {
  return AddVertex(label, std::span<const Property>(properties.begin(), properties.size()));
}

NewEdge WriteBatch::AddEdge(std::string_view type, VertexRef source, VertexRef target,
                            std::span<const Property> properties) {
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kAddEdge;
  op.name.assign(type);
  op.v1 = source;
  op.v2 = target;
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = static_cast<std::uint32_t>(properties.size());
  properties_.insert(properties_.end(), properties.begin(), properties.end());
  counted_ops_ += 1 + properties.size();
  return NewEdge{tag_, added_edges_++};
}

NewEdge WriteBatch::AddEdge(std::string_view type, VertexRef source, VertexRef target,
                            std::initializer_list<Property> properties) {
  return AddEdge(type, source, target, std::span<const Property>(properties.begin(), properties.size()));
}

void WriteBatch::SetProperty(VertexRef vertex, std::string_view key, PropertyValue value) {
  ++counted_ops_;
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kSetVertexProperty;
  op.v1 = vertex;
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = 1;
  properties_.push_back(Property{std::string(key), std::move(value)});
}

void WriteBatch::SetProperty(EdgeRef edge, std::string_view key, PropertyValue value) {
  ++counted_ops_;
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kSetEdgeProperty;
  op.e = edge;
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = 1;
  properties_.push_back(Property{std::string(key), std::move(value)});
}

void WriteBatch::RemoveProperty(VertexRef vertex, std::string_view key) {
  ++counted_ops_;
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kRemoveVertexProperty;
  op.v1 = vertex;
  op.name.assign(key);
}

void WriteBatch::RemoveProperty(EdgeRef edge, std::string_view key) {
  ++counted_ops_;
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kRemoveEdgeProperty;
  op.e = edge;
  op.name.assign(key);
}

void WriteBatch::RemoveEdge(EdgeRef edge) {
  ++counted_ops_;
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kRemoveEdge;
  op.e = edge;
}

void WriteBatch::RemoveVertex(VertexRef vertex) {
  ++counted_ops_;
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kRemoveVertex;
  op.v1 = vertex;
}

NewVertex WriteBatch::UpsertVertex(std::string_view label, std::span<const Property> keys,
                                   std::span<const Property> properties, UpsertMode mode) {
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kUpsertVertex;
  op.name.assign(label);
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.key_count = static_cast<std::uint32_t>(keys.size());
  op.prop_count = static_cast<std::uint32_t>(keys.size() + properties.size());
  op.flag = static_cast<std::uint8_t>(mode);
  properties_.insert(properties_.end(), keys.begin(), keys.end());
  properties_.insert(properties_.end(), properties.begin(), properties.end());
  counted_ops_ += 1 + keys.size() + properties.size();
  ++upserts_;
  return NewVertex{tag_, added_vertices_++};
}

NewVertex WriteBatch::UpsertVertex(std::string_view label, std::initializer_list<Property> keys,
                                   std::initializer_list<Property> properties, UpsertMode mode) {
  return UpsertVertex(label, std::span<const Property>(keys.begin(), keys.size()),
                      std::span<const Property>(properties.begin(), properties.size()), mode);
}

NewEdge WriteBatch::UpsertEdge(std::string_view type, VertexRef source, VertexRef target,
                               std::span<const Property> properties, UpsertMode mode) {
  Op& op = ops_.emplace_back();
  op.kind = OpKind::kUpsertEdge;
  op.name.assign(type);
  op.v1 = source;
  op.v2 = target;
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = static_cast<std::uint32_t>(properties.size());
  op.flag = static_cast<std::uint8_t>(mode);
  properties_.insert(properties_.end(), properties.begin(), properties.end());
  counted_ops_ += 1 + properties.size();
  ++upserts_;
  return NewEdge{tag_, added_edges_++};
}

NewEdge WriteBatch::UpsertEdge(std::string_view type, VertexRef source, VertexRef target,
                               std::initializer_list<Property> properties, UpsertMode mode) {
  return UpsertEdge(type, source, target, std::span<const Property>(properties.begin(), properties.size()),
                    mode);
}

void WriteBatch::ExpectProperty(VertexId vertex, std::string_view key, PropertyValue value) {
  Op& op = internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectVertexProperty);
  op.v1 = vertex;
  op.flag = 1;
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = 1;
  properties_.push_back(Property{std::string(key), std::move(value)});
}

void WriteBatch::ExpectProperty(EdgeId edge, std::string_view key, PropertyValue value) {
  Op& op = internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectEdgeProperty);
  op.e = edge;
  op.flag = 1;
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = 1;
  properties_.push_back(Property{std::string(key), std::move(value)});
}

void WriteBatch::ExpectNoProperty(VertexId vertex, std::string_view key) {
  Op& op = internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectVertexProperty);
  op.v1 = vertex;
  op.name.assign(key);
}

void WriteBatch::ExpectNoProperty(EdgeId edge, std::string_view key) {
  Op& op = internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectEdgeProperty);
  op.e = edge;
  op.name.assign(key);
}

void WriteBatch::ExpectExists(VertexId vertex) {
  Op& op = internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectVertex);
  op.v1 = vertex;
  op.flag = 1;
}

void WriteBatch::ExpectExists(EdgeId edge) {
  Op& op = internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectEdge);
  op.e = edge;
  op.flag = 1;
}

void WriteBatch::ExpectMissing(VertexId vertex) {
  internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectVertex).v1 = vertex;
}

void WriteBatch::ExpectMissing(EdgeId edge) {
  internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectEdge).e = edge;
}

void WriteBatch::ExpectKeyFree(std::string_view label, std::span<const Property> keys) {
  Op& op = internal::WriteBatchInternal::AddExpectation(*this, OpKind::kExpectKeyFree);
  op.name.assign(label);
  op.prop_begin = static_cast<std::uint32_t>(properties_.size());
  op.prop_count = static_cast<std::uint32_t>(keys.size());
  op.key_count = op.prop_count;
  properties_.insert(properties_.end(), keys.begin(), keys.end());
  counted_ops_ += keys.size();
}

void WriteBatch::ExpectKeyFree(std::string_view label, std::initializer_list<Property> keys) {
  ExpectKeyFree(label, std::span<const Property>(keys.begin(), keys.size()));
}

std::size_t WriteBatch::size() const { return ops_.size(); }

namespace internal {
namespace {

// Heap bytes of a string: none while it fits in the string itself.
std::size_t StringHeapBytes(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

std::size_t ValueHeapBytes(const PropertyValue& v) {
  if (auto s = v.as_string()) return s->size() > std::string().capacity() ? s->size() + 1 : 0;
  if (auto b = v.as_bytes()) return b->size();
  if (auto f = v.as_float_vector()) return f->size_bytes();
  if (auto l = v.as_string_list()) {
    std::size_t n = l->size() * sizeof(std::string);
    for (std::string_view e : *l) n += e.size() > std::string().capacity() ? e.size() + 1 : 0;
    return n;
  }
  return 0;
}

}  // namespace

std::size_t WriteBatchInternal::ApproximateBytes(const WriteBatch& b) {
  std::size_t n =
      sizeof(WriteBatch) + b.ops_.capacity() * sizeof(Op) + b.properties_.capacity() * sizeof(Property);
  for (const Op& op : b.ops_) n += StringHeapBytes(op.name);
  for (const Property& p : b.properties_) n += StringHeapBytes(p.key) + ValueHeapBytes(p.value);
  return n;
}

}  // namespace internal

void WriteBatch::Clear() {
  ops_.clear();
  properties_.clear();
  added_vertices_ = 0;
  added_edges_ = 0;
  counted_ops_ = 0;
  upserts_ = 0;
  expectations_ = 0;
  tag_ = NextTag();
}

}  // namespace quiver
