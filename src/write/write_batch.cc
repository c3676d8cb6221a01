// WriteBatch: recording only. Validation happens on the writer thread.
//
// Recording appends a 32-byte OpRecord (write_batch_internal.h) and, for
// the properties an operation carries, their Property values to one list.
// Labels, edge types and the keys of removals are interned in the batch's
// name table: a batch that names one edge type 100,000 times stores it once,
// and finding it again is one comparison with the name interned last.
#include "quiver/write_batch.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <utility>

#include "write/write_batch_internal.h"

namespace quiver {
namespace {

using internal::WriteBatchInternal;
using Record = WriteBatchInternal::Record;

// Each batch gets a distinct tag so a NewVertex/NewEdge handle from one
// batch is recognised as foreign in another. 0 is never used.
std::uint32_t NextTag() {
  static std::atomic<std::uint32_t> next{1};
  std::uint32_t t = next.fetch_add(1, std::memory_order_relaxed);
  return t == 0 ? next.fetch_add(1, std::memory_order_relaxed) : t;
}

// Up to this many names, a lookup scans them; past it, it probes a hash
// table of at least four slots per name (so probes stay short).
constexpr std::size_t kScannedNames = 8;

std::size_t HashOf(std::string_view name) { return std::hash<std::string_view>{}(name); }

}  // namespace

// --- The name table

namespace internal {

std::uint32_t WriteBatchInternal::InternName(WriteBatch& b, std::string_view name) {
  // The common case: the same label or type as the operation before.
  if (b.last_name_ != 0 && Name(b, b.last_name_ - 1) == name) return b.last_name_ - 1;
  const auto count = static_cast<std::uint32_t>(b.name_ends_.size());
  std::uint32_t id = Record::kNoName;
  if (b.name_slots_.empty()) {
    for (std::uint32_t i = 0; i < count && id == Record::kNoName; ++i)
      if (Name(b, i) == name) id = i;
  } else {
    const std::size_t mask = b.name_slots_.size() - 1;
    for (std::size_t s = HashOf(name) & mask; b.name_slots_[s] != 0; s = (s + 1) & mask) {
      if (Name(b, b.name_slots_[s] - 1) == name) {
        id = b.name_slots_[s] - 1;
        break;
      }
    }
  }
  if (id == Record::kNoName) {
    // Everything that allocates comes before anything that would leave the
    // table half-changed: out of memory, the batch is as it was (a name's
    // bytes without its end would shift every later name).
    id = count;
    const bool hashed = count + 1 > kScannedNames;
    if (hashed && b.name_slots_.size() < 4 * (std::size_t{count} + 1)) {
      // (Re)build: every name so far, into twice the slots (at least 64).
      std::vector<std::uint32_t> slots(std::max<std::size_t>(64, 2 * b.name_slots_.size()), 0);
      b.name_slots_.swap(slots);
      for (std::uint32_t i = 0; i < count; ++i) Slot(b, Name(b, i)) = i + 1;
    }
    b.name_ends_.reserve(std::size_t{count} + 1);
    b.names_.append(name);
    b.name_ends_.push_back(b.names_.size());
    if (hashed) Slot(b, name) = id + 1;
  }
  b.last_name_ = id + 1;
  return id;
}

std::uint32_t& WriteBatchInternal::Slot(WriteBatch& b, std::string_view name) {
  const std::size_t mask = b.name_slots_.size() - 1;
  std::size_t s = HashOf(name) & mask;
  while (b.name_slots_[s] != 0) s = (s + 1) & mask;
  return b.name_slots_[s];
}

// --- Appending records

// The properties are copied before the record is added, and taken back if
// adding it fails: out of memory, the batch records nothing (a record
// pointing past its properties would be read on the writer thread).
Record& WriteBatchInternal::Append(WriteBatch& b, OpKind kind, std::uint32_t name,
                                   std::span<const Property> props, std::span<const Property> more) {
  const std::size_t begin = b.properties_.size();
  try {
    if (!props.empty()) b.properties_.insert(b.properties_.end(), props.begin(), props.end());
    if (!more.empty()) b.properties_.insert(b.properties_.end(), more.begin(), more.end());
    Record& r =
        b.ops_.emplace_back(Record{.kind = kind,
                                   .refs = SlotBits(kind),
                                   .name = name,
                                   .prop_begin = static_cast<std::uint32_t>(begin),
                                   .prop_count = static_cast<std::uint32_t>(props.size() + more.size())});
    b.counted_ops_ += 1 + props.size() + more.size();
    return r;
  } catch (...) {
    b.properties_.erase(b.properties_.begin() + static_cast<std::ptrdiff_t>(begin), b.properties_.end());
    throw;
  }
}

Record& WriteBatchInternal::AppendWithProperty(WriteBatch& b, OpKind kind, Property p) {
  b.properties_.push_back(std::move(p));
  try {
    Record& r = b.ops_.emplace_back(Record{.kind = kind,
                                           .refs = SlotBits(kind),
                                           .prop_begin = static_cast<std::uint32_t>(b.properties_.size() - 1),
                                           .prop_count = 1});
    b.counted_ops_ += 1;
    return r;
  } catch (...) {
    b.properties_.pop_back();
    throw;
  }
}

void WriteBatchInternal::AppendSharedIndexOp(WriteBatch& b, OpKind kind, std::shared_ptr<const IndexOp> op) {
  Append(b, kind, Record::kNoName, {}).a = b.rare_.size();
  b.rare_.push_back(WriteBatch::Rare{std::move(op)});
}

void WriteBatchInternal::AppendOp(WriteBatch& b, const Op& op, std::span<const Property> props) {
  const bool add = op.kind == OpKind::kAddVertex || op.kind == OpKind::kAddEdge;
  const std::uint32_t name = HasName(op.kind, op.flag) ? InternName(b, op.name) : Record::kNoName;
  Record& r = Append(b, op.kind, name, props);
  if (!add) b.counted_ops_ -= props.size();
  r.flag = op.flag;
  if (HasEdgeRef(op.kind)) {
    r.a = op.e.raw();
    r.refs |= RefBits(b, op.e, 0);
  } else {
    r.a = op.v1.raw();
    r.refs |= RefBits(b, op.v1, 0);
  }
  if (HasTwoVertexRefs(op.kind)) {
    r.b = op.v2.raw();
    r.refs |= RefBits(b, op.v2, 2);
  }
  if (HasKeyCount(op.kind)) r.b = op.key_count;
  if (op.kind == OpKind::kAddVertex) ++b.added_vertices_;
  if (op.kind == OpKind::kAddEdge) ++b.added_edges_;
}

}  // namespace internal

// --- WriteBatch

WriteBatch::WriteBatch() : tag_(NextTag()) {}
WriteBatch::WriteBatch(const WriteBatch&) = default;
// Copy, then move in: out of memory, the target is unchanged (a member-wise
// copy could stop with ops that name entries of a table not copied yet).
WriteBatch& WriteBatch::operator=(const WriteBatch& o) {
  if (this != &o) {
    WriteBatch copy(o);
    *this = std::move(copy);
  }
  return *this;
}

WriteBatch::WriteBatch(WriteBatch&& o) noexcept
    : tag_(o.tag_),
      added_vertices_(o.added_vertices_),
      added_edges_(o.added_edges_),
      upserts_(o.upserts_),
      expectations_(o.expectations_),
      counted_ops_(o.counted_ops_),
      ops_(std::move(o.ops_)),
      properties_(std::move(o.properties_)),
      rare_(std::move(o.rare_)),
      names_(std::move(o.names_)),
      name_ends_(std::move(o.name_ends_)),
      name_slots_(std::move(o.name_slots_)),
      last_name_(o.last_name_) {
  o.Clear();
}

WriteBatch& WriteBatch::operator=(WriteBatch&& o) noexcept {
  if (this == &o) return *this;
  tag_ = o.tag_;
  added_vertices_ = o.added_vertices_;
  added_edges_ = o.added_edges_;
  upserts_ = o.upserts_;
  expectations_ = o.expectations_;
  counted_ops_ = o.counted_ops_;
  ops_ = std::move(o.ops_);
  properties_ = std::move(o.properties_);
  rare_ = std::move(o.rare_);
  names_ = std::move(o.names_);
  name_ends_ = std::move(o.name_ends_);
  name_slots_ = std::move(o.name_slots_);
  last_name_ = o.last_name_;
  std::string().swap(o.names_);  // a string's move may hand it this batch's old buffer
  o.Clear();
  return *this;
}

WriteBatch::~WriteBatch() = default;

void WriteBatch::reserve(std::size_t ops, std::size_t properties) {
  ops_.reserve(ops);
  properties_.reserve(properties);
}

NewVertex WriteBatch::AddVertex(std::string_view label, std::span<const Property> properties) {
  WriteBatchInternal::Append(*this, OpKind::kAddVertex, WriteBatchInternal::InternName(*this, label),
                             properties);
  return NewVertex{tag_, added_vertices_++};
}

NewVertex WriteBatch::AddVertex(std::string_view label, std::initializer_list<Property> properties) {
  return AddVertex(label, std::span<const Property>(properties.begin(), properties.size()));
}

NewEdge WriteBatch::AddEdge(std::string_view type, VertexRef source, VertexRef target,
                            std::span<const Property> properties) {
  Record& op = WriteBatchInternal::Append(*this, OpKind::kAddEdge,
                                          WriteBatchInternal::InternName(*this, type), properties);
  op.a = source.raw();
  op.b = target.raw();
  op.refs |= WriteBatchInternal::RefBits(*this, source, 0) | WriteBatchInternal::RefBits(*this, target, 2);
  return NewEdge{tag_, added_edges_++};
}

NewEdge WriteBatch::AddEdge(std::string_view type, VertexRef source, VertexRef target,
                            std::initializer_list<Property> properties) {
  return AddEdge(type, source, target, std::span<const Property>(properties.begin(), properties.size()));
}

namespace {

// Appends an operation on one element (slot a) with no name and no
// properties.
template <typename Ref>
Record& AppendOn(WriteBatch& b, OpKind kind, Ref ref) {
  Record& op = WriteBatchInternal::Append(b, kind, Record::kNoName, {});
  op.a = ref.raw();
  op.refs |= WriteBatchInternal::RefBits(b, ref, 0);
  return op;
}

}  // namespace

void WriteBatch::SetProperty(VertexRef vertex, std::string_view key, PropertyValue value) {
  Record& op = WriteBatchInternal::AppendWithProperty(*this, OpKind::kSetVertexProperty,
                                                      Property{std::string(key), std::move(value)});
  op.a = vertex.raw();
  op.refs |= WriteBatchInternal::RefBits(*this, vertex, 0);
}

void WriteBatch::SetProperty(EdgeRef edge, std::string_view key, PropertyValue value) {
  Record& op = WriteBatchInternal::AppendWithProperty(*this, OpKind::kSetEdgeProperty,
                                                      Property{std::string(key), std::move(value)});
  op.a = edge.raw();
  op.refs |= WriteBatchInternal::RefBits(*this, edge, 0);
}

void WriteBatch::RemoveProperty(VertexRef vertex, std::string_view key) {
  AppendOn(*this, OpKind::kRemoveVertexProperty, vertex).name = WriteBatchInternal::InternName(*this, key);
}

void WriteBatch::RemoveProperty(EdgeRef edge, std::string_view key) {
  AppendOn(*this, OpKind::kRemoveEdgeProperty, edge).name = WriteBatchInternal::InternName(*this, key);
}

void WriteBatch::RemoveEdge(EdgeRef edge) { AppendOn(*this, OpKind::kRemoveEdge, edge); }

void WriteBatch::RemoveVertex(VertexRef vertex) { AppendOn(*this, OpKind::kRemoveVertex, vertex); }

NewVertex WriteBatch::UpsertVertex(std::string_view label, std::span<const Property> keys,
                                   std::span<const Property> properties, UpsertMode mode) {
  Record& op = WriteBatchInternal::Append(*this, OpKind::kUpsertVertex,
                                          WriteBatchInternal::InternName(*this, label), keys, properties);
  op.b = keys.size();
  op.flag = static_cast<std::uint8_t>(mode);
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
  Record& op = WriteBatchInternal::Append(*this, OpKind::kUpsertEdge,
                                          WriteBatchInternal::InternName(*this, type), properties);
  op.a = source.raw();
  op.b = target.raw();
  op.refs |= WriteBatchInternal::RefBits(*this, source, 0) | WriteBatchInternal::RefBits(*this, target, 2);
  op.flag = static_cast<std::uint8_t>(mode);
  ++upserts_;
  return NewEdge{tag_, added_edges_++};
}

NewEdge WriteBatch::UpsertEdge(std::string_view type, VertexRef source, VertexRef target,
                               std::initializer_list<Property> properties, UpsertMode mode) {
  return UpsertEdge(type, source, target, std::span<const Property>(properties.begin(), properties.size()),
                    mode);
}

void WriteBatch::ExpectProperty(VertexId vertex, std::string_view key, PropertyValue value) {
  Record& op = WriteBatchInternal::AppendWithProperty(*this, OpKind::kExpectVertexProperty,
                                                      Property{std::string(key), std::move(value)});
  op.a = VertexRef(vertex).raw();
  op.refs |= WriteBatchInternal::RefBits(*this, VertexRef(vertex), 0);
  op.flag = 1;
  ++expectations_;
}

void WriteBatch::ExpectProperty(EdgeId edge, std::string_view key, PropertyValue value) {
  Record& op = WriteBatchInternal::AppendWithProperty(*this, OpKind::kExpectEdgeProperty,
                                                      Property{std::string(key), std::move(value)});
  op.a = EdgeRef(edge).raw();
  op.refs |= WriteBatchInternal::RefBits(*this, EdgeRef(edge), 0);
  op.flag = 1;
  ++expectations_;
}

void WriteBatch::ExpectNoProperty(VertexId vertex, std::string_view key) {
  AppendOn(*this, OpKind::kExpectVertexProperty, VertexRef(vertex)).name =
      WriteBatchInternal::InternName(*this, key);
  ++expectations_;
}

void WriteBatch::ExpectNoProperty(EdgeId edge, std::string_view key) {
  AppendOn(*this, OpKind::kExpectEdgeProperty, EdgeRef(edge)).name =
      WriteBatchInternal::InternName(*this, key);
  ++expectations_;
}

void WriteBatch::ExpectExists(VertexId vertex) {
  AppendOn(*this, OpKind::kExpectVertex, VertexRef(vertex)).flag = 1;
  ++expectations_;
}

void WriteBatch::ExpectExists(EdgeId edge) {
  AppendOn(*this, OpKind::kExpectEdge, EdgeRef(edge)).flag = 1;
  ++expectations_;
}

void WriteBatch::ExpectMissing(VertexId vertex) {
  AppendOn(*this, OpKind::kExpectVertex, VertexRef(vertex));
  ++expectations_;
}

void WriteBatch::ExpectMissing(EdgeId edge) {
  AppendOn(*this, OpKind::kExpectEdge, EdgeRef(edge));
  ++expectations_;
}

void WriteBatch::ExpectKeyFree(std::string_view label, std::span<const Property> keys) {
  WriteBatchInternal::Append(*this, OpKind::kExpectKeyFree, WriteBatchInternal::InternName(*this, label),
                             keys)
      .b = keys.size();
  ++expectations_;
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
  // Op records hold no heap memory of their own: the names are in the
  // batch's table, counted once here.
  std::size_t n = sizeof(WriteBatch) + b.ops_.capacity() * sizeof(WriteBatch::OpRecord) +
                  b.properties_.capacity() * sizeof(Property) +
                  b.rare_.capacity() * sizeof(WriteBatch::Rare) + StringHeapBytes(b.names_) +
                  b.name_ends_.capacity() * sizeof(std::size_t) +
                  b.name_slots_.capacity() * sizeof(std::uint32_t);
  for (const Property& p : b.properties_) n += StringHeapBytes(p.key) + ValueHeapBytes(p.value);
  return n;
}

}  // namespace internal

void WriteBatch::Clear() {
  ops_.clear();
  properties_.clear();
  rare_.clear();
  names_.clear();
  name_ends_.clear();
  name_slots_.clear();
  last_name_ = 0;
  added_vertices_ = 0;
  added_edges_ = 0;
  counted_ops_ = 0;
  upserts_ = 0;
  expectations_ = 0;
  tag_ = NextTag();
}

}  // namespace quiver
