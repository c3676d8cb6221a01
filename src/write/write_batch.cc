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

#include "base/reserve.h"
#include "write/write_batch_internal.h"

namespace quiver {
namespace {

using internal::WriteBatchInternal;
using Record = WriteBatchInternal::Record;

// Each batch gets a distinct tag so a NewVertex/NewEdge handle from one
// batch is recognised as foreign in another; a batch draws one when made,
// copied or cleared, and so on each move (the moved-from side's Clear), some
// five per Write(std::move(batch)). 64 bits, so the counter never wraps in
// practice: at a billion draws a second it would take 580 years. (32 bits
// wrapped in about 14 minutes at a million writes a second, and a handle of
// a live batch that had drawn the same tag was then taken as another's own.)
// 0 is never used: it is a default handle's tag and a foreign one's, decoded.
std::atomic<std::uint64_t> g_next_tag{1};
// A ref keeps its "new" flag in the tag's bit 63 (never a tag's) to stay
// 16 bytes: passed in registers, not memory (24 bytes cost recording ~20 %).
static_assert(sizeof(VertexRef) == 16 && sizeof(EdgeRef) == 16);

std::uint64_t NextTag() {
  std::uint64_t t = g_next_tag.fetch_add(1, std::memory_order_relaxed);
  return t == 0 ? g_next_tag.fetch_add(1, std::memory_order_relaxed) : t;
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
    // Room for this name's end before its bytes go in (amortized: a batch
    // of many names stays linear).
    base::ReserveAmortized(b.name_ends_, std::max<std::size_t>(4, std::size_t{count} + 1));
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

// --- Tags and origins

void WriteBatchInternal::TEST_SkipTagsTo(std::uint64_t next) {
  std::uint64_t now = g_next_tag.load(std::memory_order_relaxed);
  while (now < next && !g_next_tag.compare_exchange_weak(now, next, std::memory_order_relaxed)) {
  }
}

// Scanned newest first: a handle used in a copy most likely came from the
// batch it was copied from. The list is as long as the chain of copies
// (one entry for a batch written as Write(batch)).
bool WriteBatchInternal::FromOrigin(const WriteBatch& b, std::uint64_t tag, std::uint64_t index, bool edge) {
  for (auto o = b.origins_.rbegin(); o != b.origins_.rend(); ++o)
    if (o->tag == tag) return index < (edge ? o->edges : o->vertices);
  return false;
}

std::vector<WriteBatch::Origin> WriteBatchInternal::OriginsOfCopy(const WriteBatch& b) {
  // Whether `b` returned handles under its own tag: since it was made (a
  // copy's own handles start at its newest origin's counts). Without, its
  // entry would name no handle, and `b = f(b)` round trips through copies
  // would grow the list (and each copy's cost) without end.
  const bool returned_handles = b.origins_.empty() ? b.added_vertices_ != 0 || b.added_edges_ != 0
                                                   : b.added_vertices_ != b.origins_.back().vertices ||
                                                         b.added_edges_ != b.origins_.back().edges;
  std::vector<WriteBatch::Origin> origins;
  if (b.origins_.empty() && !returned_handles) return origins;
  origins.reserve(b.origins_.size() + 1);
  origins.assign(b.origins_.begin(), b.origins_.end());
  if (returned_handles) origins.push_back({b.tag_, b.added_vertices_, b.added_edges_});
  return origins;
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

// The copy's own tag is what tells a handle it returns from one the
// original returns after the copy: both count from the same index. Handles
// from before the copy stay valid through origins_.
WriteBatch::WriteBatch(const WriteBatch& o)
    : tag_(NextTag()),
      added_vertices_(o.added_vertices_),
      added_edges_(o.added_edges_),
      upserts_(o.upserts_),
      expectations_(o.expectations_),
      counted_ops_(o.counted_ops_),
      ops_(o.ops_),
      properties_(o.properties_),
      rare_(o.rare_),
      names_(o.names_),
      name_ends_(o.name_ends_),
      name_slots_(o.name_slots_),
      last_name_(o.last_name_),
      origins_(WriteBatchInternal::OriginsOfCopy(o)) {}

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
      last_name_(o.last_name_),
      origins_(std::move(o.origins_)) {
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
  origins_ = std::move(o.origins_);
  std::string().swap(o.names_);  // a string's move may hand it this batch's old buffer
  o.Clear();
  return *this;
}

WriteBatch::~WriteBatch() = default;

void WriteBatch::reserve(std::size_t ops, std::size_t properties) {
  // A hint: what cannot be had is not made (std::length_error beyond
  // max_size(), std::bad_alloc out of memory).
  try {
    if (ops <= ops_.max_size()) ops_.reserve(ops);
    if (properties <= properties_.max_size()) properties_.reserve(properties);
  } catch (const std::bad_alloc&) {
  }
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

// An index operation's definition, held through a shared_ptr (counted
// whole by each batch that shares it). The contents CreateIndex built
// (IndexOp::built) are not: they are charged to the graph's memory account,
// and the CreateIndex call waiting on the batch holds them anyway.
std::size_t IndexOpBytes(const IndexOp& op) {
  const IndexSpec& s = op.spec;
  std::size_t n = sizeof(IndexOp) + StringHeapBytes(s.name) + StringHeapBytes(s.label) +
                  s.keys.capacity() * sizeof(std::string);
  for (const std::string& k : s.keys) n += StringHeapBytes(k);
  return n;
}

}  // namespace

std::size_t WriteBatchInternal::ApproximateBytes(const WriteBatch& b) {
  // Op records hold no heap memory of their own: the names are in the
  // batch's table, counted once here.
  std::size_t n =
      sizeof(WriteBatch) + b.ops_.capacity() * sizeof(WriteBatch::OpRecord) +
      b.properties_.capacity() * sizeof(Property) + b.rare_.capacity() * sizeof(WriteBatch::Rare) +
      StringHeapBytes(b.names_) + b.name_ends_.capacity() * sizeof(std::size_t) +
      b.name_slots_.capacity() * sizeof(std::uint32_t) + b.origins_.capacity() * sizeof(WriteBatch::Origin);
  // By capacity: a value moved in (SetProperty(v, k, std::move(buffer)))
  // keeps its whole buffer, however short the value.
  for (const Property& p : b.properties_) n += StringHeapBytes(p.key) + p.value.heap_bytes();
  for (const WriteBatch::Rare& r : b.rare_)
    if (r.index != nullptr) n += IndexOpBytes(*r.index);
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
  origins_.clear();
  tag_ = NextTag();
}

}  // namespace quiver
