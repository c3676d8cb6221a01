#include "wal/batch_codec.h"

#include <cstdlib>

#include "base/coding.h"
#include "base/strings.h"
#include "storage/prop_block.h"
#include "wal/value_codec.h"
#include "write/write_batch_internal.h"

namespace quiver::wal {
namespace {

using internal::WriteBatchInternal;
using Op = WriteBatchInternal::Op;

// Persisted op kinds: never renumber.
enum class WalOp : std::uint8_t {
  kAddVertex = 1,
  kAddEdge = 2,
  kSetVertexProperty = 3,
  kSetEdgeProperty = 4,
  kRemoveVertexProperty = 5,
  kRemoveEdgeProperty = 6,
  kRemoveEdge = 7,
  kRemoveVertex = 8,
  // Format version 2 on.
  kDefineIndex = 9,
  kIndexReady = 10,
  kDropIndex = 11,
};

// The declared type of an index of no declared type.
constexpr std::uint8_t kAnyType = 0xFF;

WalOp ToWal(OpKind k) {
  switch (k) {
    case OpKind::kAddVertex: return WalOp::kAddVertex;
    case OpKind::kAddEdge: return WalOp::kAddEdge;
    case OpKind::kSetVertexProperty: return WalOp::kSetVertexProperty;
    case OpKind::kSetEdgeProperty: return WalOp::kSetEdgeProperty;
    case OpKind::kRemoveVertexProperty: return WalOp::kRemoveVertexProperty;
    case OpKind::kRemoveEdgeProperty: return WalOp::kRemoveEdgeProperty;
    case OpKind::kRemoveEdge: return WalOp::kRemoveEdge;
    case OpKind::kRemoveVertex: return WalOp::kRemoveVertex;
    case OpKind::kDefineIndex: return WalOp::kDefineIndex;
    case OpKind::kIndexReady: return WalOp::kIndexReady;
    case OpKind::kDropIndex: return WalOp::kDropIndex;
    case OpKind::kUpsertVertex:
    case OpKind::kUpsertEdge:
    case OpKind::kExpectVertexProperty:
    case OpKind::kExpectEdgeProperty:
    case OpKind::kExpectVertex:
    case OpKind::kExpectEdge:
    case OpKind::kExpectKeyFree:
      // Never logged: the writer logs the plain batch it resolved them into
      // (write/resolver.h). Reaching here is a bug; a record with it would
      // not replay.
      std::abort();
  }
  return WalOp::kAddVertex;
}

template <typename Ref>
void PutRef(base::ByteWriter& w, Ref r) {
  w.PutVarint((r.raw() << 1) | (r.is_new() ? 1 : 0));
}

void PutProps(base::ByteWriter& w, std::span<const Property> props) {
  w.PutVarint(props.size());
  for (const Property& p : props) {
    w.PutString(p.key);
    EncodeValue(w, storage::ViewOf(p.value));
  }
}

// Decoding state for one batch.
class BatchDecoder {
 public:
  BatchDecoder(base::ByteReader& r, WriteBatch& b) : r_(r), b_(b), tag_(WriteBatchInternal::Tag(b)) {}

  bool Op() {
    std::uint8_t kind;
    if (!r_.GetU8(&kind)) return false;
    std::string_view name;
    switch (static_cast<WalOp>(kind)) {
      case WalOp::kAddVertex:
        if (!r_.GetString(&name) || !Props()) return false;
        b_.AddVertex(name, props_);
        return true;
      case WalOp::kAddEdge: {
        std::uint64_t s, t;
        if (!r_.GetString(&name) || !r_.GetVarint(&s) || !r_.GetVarint(&t) || !Props()) return false;
        b_.AddEdge(name, VRef(s), VRef(t), props_);
        return true;
      }
      case WalOp::kSetVertexProperty:
      case WalOp::kSetEdgeProperty: {
        std::uint64_t ref;
        PropertyValue value;
        if (!r_.GetVarint(&ref) || !r_.GetString(&name) || !DecodeValue(r_, &value)) return false;
        if (static_cast<WalOp>(kind) == WalOp::kSetVertexProperty) {
          b_.SetProperty(VRef(ref), name, std::move(value));
        } else {
          b_.SetProperty(ERef(ref), name, std::move(value));
        }
        return true;
      }
      case WalOp::kRemoveVertexProperty:
      case WalOp::kRemoveEdgeProperty: {
        std::uint64_t ref;
        if (!r_.GetVarint(&ref) || !r_.GetString(&name)) return false;
        if (static_cast<WalOp>(kind) == WalOp::kRemoveVertexProperty) {
          b_.RemoveProperty(VRef(ref), name);
        } else {
          b_.RemoveProperty(ERef(ref), name);
        }
        return true;
      }
      case WalOp::kRemoveEdge: {
        std::uint64_t ref;
        if (!r_.GetVarint(&ref)) return false;
        b_.RemoveEdge(ERef(ref));
        return true;
      }
      case WalOp::kRemoveVertex: {
        std::uint64_t ref;
        if (!r_.GetVarint(&ref)) return false;
        b_.RemoveVertex(VRef(ref));
        return true;
      }
      case WalOp::kDefineIndex: return DefineIndex();
      case WalOp::kIndexReady:
      case WalOp::kDropIndex: {
        IndexOp op;
        std::string_view index_name;
        if (!r_.GetString(&index_name) || !r_.GetVarint(&op.declared)) return false;
        op.spec.name = std::string(index_name);
        WriteBatchInternal::AppendIndexOp(
            b_, static_cast<WalOp>(kind) == WalOp::kIndexReady ? OpKind::kIndexReady : OpKind::kDropIndex,
            std::move(op));
        return true;
      }
    }
    return false;
  }

 private:
  // Batch-local indexes above 2^32 cannot come from a real batch; they are
  // clamped to an index replay validation rejects.
  VertexRef VRef(std::uint64_t raw) const {
    if (raw & 1)
      return NewVertex{tag_, static_cast<std::uint32_t>(std::min<std::uint64_t>(raw >> 1, UINT32_MAX))};
    return VertexId(raw >> 1);
  }
  EdgeRef ERef(std::uint64_t raw) const {
    if (raw & 1)
      return NewEdge{tag_, static_cast<std::uint32_t>(std::min<std::uint64_t>(raw >> 1, UINT32_MAX))};
    return EdgeId(raw >> 1);
  }
  bool DefineIndex() {
    IndexOp op;
    std::string_view text;
    std::uint8_t element, kind, type;
    std::uint64_t keys;
    if (!r_.GetString(&text)) return false;
    op.spec.name = std::string(text);
    if (!r_.GetU8(&element) || !r_.GetString(&text) || !r_.GetU8(&kind) || !r_.GetU8(&type) ||
        !r_.GetVarint(&keys) || keys > r_.remaining())
      return false;
    op.spec.element = static_cast<ElementKind>(element);
    op.spec.label = std::string(text);
    op.spec.kind = static_cast<IndexKind>(kind);
    if (type != kAnyType) op.spec.type = static_cast<ValueType>(type);
    for (std::uint64_t i = 0; i < keys; ++i) {
      if (!r_.GetString(&text)) return false;
      op.spec.keys.emplace_back(text);
    }
    WriteBatchInternal::AppendIndexOp(b_, OpKind::kDefineIndex, std::move(op));
    return true;
  }

  bool Props() {
    props_.clear();
    std::uint64_t n;
    if (!r_.GetVarint(&n) || n > r_.remaining()) return false;  // each property takes >= 2 bytes
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string_view key;
      PropertyValue value;
      if (!r_.GetString(&key) || !DecodeValue(r_, &value)) return false;
      props_.push_back(Property{std::string(key), std::move(value)});
    }
    return true;
  }

  base::ByteReader& r_;
  WriteBatch& b_;
  std::uint64_t tag_;
  std::vector<Property> props_;
};

}  // namespace

void GroupEncoder::Begin(std::size_t batch_count) {
  base::ByteWriter w(out_);
  w.PutVarint(batch_count);
}

void GroupEncoder::Add(SequenceNumber sequence, std::uint64_t first_vertex, std::uint64_t first_edge,
                       const WriteBatch& batch) {
  base::ByteWriter w(out_);
  w.PutU64(sequence);
  w.PutVarint(first_vertex);
  w.PutVarint(first_edge);
  const auto& ops = WriteBatchInternal::Ops(batch);
  w.PutVarint(ops.size());
  for (const Op& op : ops) {
    w.PutU8(static_cast<std::uint8_t>(ToWal(op.kind)));
    auto props = WriteBatchInternal::Props(batch, op);
    switch (op.kind) {
      case OpKind::kAddVertex:
        w.PutString(op.name);
        PutProps(w, props);
        break;
      case OpKind::kAddEdge:
        w.PutString(op.name);
        PutRef(w, op.v1);
        PutRef(w, op.v2);
        PutProps(w, props);
        break;
      case OpKind::kSetVertexProperty:
        PutRef(w, op.v1);
        w.PutString(props[0].key);
        EncodeValue(w, storage::ViewOf(props[0].value));
        break;
      case OpKind::kSetEdgeProperty:
        PutRef(w, op.e);
        w.PutString(props[0].key);
        EncodeValue(w, storage::ViewOf(props[0].value));
        break;
      case OpKind::kRemoveVertexProperty:
        PutRef(w, op.v1);
        w.PutString(op.name);
        break;
      case OpKind::kRemoveEdgeProperty:
        PutRef(w, op.e);
        w.PutString(op.name);
        break;
      case OpKind::kRemoveEdge: PutRef(w, op.e); break;
      case OpKind::kRemoveVertex: PutRef(w, op.v1); break;
      case OpKind::kDefineIndex: {
        const IndexSpec& spec = op.index->spec;
        w.PutString(spec.name);
        w.PutU8(static_cast<std::uint8_t>(spec.element));
        w.PutString(spec.label);
        w.PutU8(static_cast<std::uint8_t>(spec.kind));
        w.PutU8(spec.type ? static_cast<std::uint8_t>(*spec.type) : kAnyType);
        w.PutVarint(spec.keys.size());
        for (const std::string& k : spec.keys) w.PutString(k);
        break;
      }
      case OpKind::kIndexReady:
      case OpKind::kDropIndex:
        w.PutString(op.index->spec.name);
        w.PutVarint(op.index->declared);
        break;
      default: break;  // ToWal refused the rest
    }
  }
}

Result<std::vector<LoggedBatch>> DecodeGroup(std::span<const std::byte> payload) {
  base::ByteReader r(payload);
  std::uint64_t count;
  // Each batch takes at least 11 bytes: a bound that keeps a hostile count
  // from reserving memory the input cannot fill.
  if (!r.GetVarint(&count) || count > r.remaining() / 11 + 1)
    return CorruptionError("WAL group: bad batch count");
  std::vector<LoggedBatch> out;
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    LoggedBatch& lb = out.emplace_back();
    std::uint64_t ops;
    if (!r.GetU64(&lb.sequence) || !r.GetVarint(&lb.first_vertex) || !r.GetVarint(&lb.first_edge) ||
        !r.GetVarint(&ops) || ops > r.remaining())
      return CorruptionError(base::StrCat("WAL group: bad header of batch ", i));
    BatchDecoder d(r, lb.batch);
    for (std::uint64_t k = 0; k < ops; ++k)
      if (!d.Op()) return CorruptionError(base::StrCat("WAL group: bad operation ", k, " of batch ", i));
  }
  if (r.remaining() != 0) return CorruptionError("WAL group: trailing bytes");
  return out;
}

}  // namespace quiver::wal
