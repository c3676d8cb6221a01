// EncodeChunk: walks the radix tables leaf by leaf and writes elements
// straight into the chunk's buffer.
//
// Why not one FindVertex per id, as the first writer did: that is a radix
// walk per element, and a push_back per encoded byte; the checkpoint of a
// large graph spent most of its CPU there. Here a chunk costs one walk per 64
// ids, and each element's fixed part is written through a raw pointer into
// room reserved beforehand. Properties go through wal::EncodeValue (the one
// definition of the value encoding) into a scratch vector and are copied.
#include "checkpoint/chunk_encoder.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "base/coding.h"
#include "base/crc32c.h"
#include "storage/prop_block.h"
#include "wal/value_codec.h"

namespace quiver::checkpoint {
namespace {

constexpr std::size_t kMaxVarintBytes = 10;
// A block's prefix before its elements: header, first_id and count.
constexpr std::size_t kMaxPrefixBytes = kBlockHeaderBytes + 2 * kMaxVarintBytes;
// An element's fixed part: marker, label or type, two endpoints, and a
// property count of zero.
constexpr std::size_t kMaxFixedBytes = 1 + 3 * kMaxVarintBytes + 1;
constexpr std::uint64_t kLeafMask = storage::VertexTable::kLeafSize - 1;
static_assert(storage::EdgeTable::kLeafSize == storage::VertexTable::kLeafSize);

std::byte* PutVarint(std::byte* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::byte>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::byte>(v);
  return p;
}

// Writes the 16-byte block header for `payload` at `at`, its CRC
// continuing `seed`.
void PutBlockHeader(std::byte* at, BlockKind kind, std::span<const std::byte> payload, std::uint32_t seed) {
  std::memset(at, 0, kBlockHeaderBytes);
  at[0] = static_cast<std::byte>(kind);
  auto length = static_cast<std::uint32_t>(payload.size());
  std::memcpy(at + 4, &length, 4);
  const std::uint32_t crc = BlockCrc(seed, at, payload);
  std::memcpy(at + 8, &crc, 4);
}

Status CheckPayloadSize(std::size_t n) {
  if (n > UINT32_MAX) return ResourceExhaustedError("checkpoint: one element encodes to over 4 GiB");
  return Status::Ok();
}

}  // namespace

// Lays out the blocks of one chunk in out->bytes. Each block starts with
// kMaxPrefixBytes of room; when it closes, its header and varint prefix are
// written right-aligned in that room, just before the elements.
class BlockBuilder {
 public:
  BlockBuilder(BlockKind kind, std::uint32_t seed, EncodedChunk* out) : kind_(kind), seed_(seed), out_(out) {
    Restart();
  }

  // Forgets the blocks laid out so far (none may be open), keeping the
  // buffer.
  void Restart() {
    out_->blocks.clear();
    out_->block_bytes = 0;
    len_ = 0;
  }

  // Starts element `id`, opening a block if none is open.
  void BeginElement(std::uint64_t id) {
    if (count_ != 0) return;
    first_id_ = id;
    Reserve(kMaxPrefixBytes);
    len_ += kMaxPrefixBytes;
    elements_start_ = len_;
  }
  // Room for `n` more bytes; valid until the next Reserve or Append.
  std::byte* Reserve(std::size_t n) {
    if (len_ + n > out_->bytes.size())
      out_->bytes.resize(std::max({len_ + n, 2 * out_->bytes.size(), kMinBytes}));
    return out_->bytes.data() + len_;
  }
  // Marks the bytes up to `end` (inside the last Reserve) as written.
  void Commit(const std::byte* end) { len_ = static_cast<std::size_t>(end - out_->bytes.data()); }
  void Append(std::span<const std::byte> data) {
    std::memcpy(Reserve(data.size()), data.data(), data.size());
    len_ += data.size();
  }
  // Ends the element; closes the block once it holds kTargetBlockBytes.
  Status EndElement() {
    ++count_;
    if (len_ - elements_start_ >= kTargetBlockBytes) return Close();
    return Status::Ok();
  }
  // Closes the open block, if any.
  Status Close() {
    if (count_ == 0) return Status::Ok();
    std::byte prefix[2 * kMaxVarintBytes];
    const auto prefix_len =
        static_cast<std::size_t>(PutVarint(PutVarint(prefix, first_id_), count_) - prefix);
    const std::size_t payload_start = elements_start_ - prefix_len;
    const std::size_t payload_len = len_ - payload_start;
    QUIVER_RETURN_IF_ERROR(CheckPayloadSize(payload_len));
    std::byte* base = out_->bytes.data();
    std::memcpy(base + payload_start, prefix, prefix_len);
    PutBlockHeader(base + payload_start - kBlockHeaderBytes, kind_, {base + payload_start, payload_len},
                   seed_);
    out_->blocks.push_back({payload_start - kBlockHeaderBytes, kBlockHeaderBytes + payload_len});
    out_->block_bytes += kBlockHeaderBytes + payload_len;
    count_ = 0;
    return Status::Ok();
  }

  // Writes `props` (Props of the grammar) after the fixed part ending at `p`.
  void PutProps(std::byte* p, const storage::PropBlock* props) {
    const std::uint32_t n = storage::PropCount(props);
    if (n == 0) {
      *p++ = std::byte{0};
      Commit(p);
      return;
    }
    Commit(p);
    scratch_.clear();
    base::ByteWriter w(&scratch_);
    w.PutVarint(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      storage::PropInput prop = storage::PropAt(props, i);
      w.PutVarint(prop.key);
      wal::EncodeValue(w, prop.value);
    }
    Append(scratch_);
  }
  // The same for properties given as (key id, value), keys increasing.
  void PutProps(std::byte* p, std::span<const KeyedValue> props) {
    if (props.empty()) {
      *p++ = std::byte{0};
      Commit(p);
      return;
    }
    Commit(p);
    scratch_.clear();
    base::ByteWriter w(&scratch_);
    w.PutVarint(props.size());
    for (const KeyedValue& prop : props) {
      w.PutVarint(prop.key);
      wal::EncodeValue(w, prop.value);
    }
    Append(scratch_);
  }

 private:
  static constexpr std::size_t kMinBytes = std::size_t{64} << 10;

  const BlockKind kind_;
  const std::uint32_t seed_;
  EncodedChunk* const out_;
  std::vector<std::byte> scratch_;
  std::size_t len_ = 0;
  std::size_t elements_start_ = 0;
  std::uint64_t first_id_ = 0;
  std::uint64_t count_ = 0;
};

namespace {

Status EncodeVertices(const storage::GraphRoots& g, const Chunk& c, BlockBuilder& b) {
  for (std::uint64_t id = c.begin; id < c.end;) {
    const storage::VertexTable::Leaf* leaf = storage::VertexTable::FindLeaf(g.vertices, id);
    const std::uint64_t leaf_end = std::min(c.end, (id | kLeafMask) + 1);
    for (; id < leaf_end; ++id) {
      const storage::VertexSlot* v = leaf == nullptr ? nullptr : &leaf->slots[id & kLeafMask];
      b.BeginElement(id);
      std::byte* p = b.Reserve(kMaxFixedBytes);
      if (v == nullptr || v->label == storage::kDeadLabel) {
        *p++ = std::byte{0};
        b.Commit(p);
      } else {
        *p++ = std::byte{1};
        p = PutVarint(p, v->label);
        b.PutProps(p, v->props);
      }
      QUIVER_RETURN_IF_ERROR(b.EndElement());
    }
  }
  return b.Close();
}

Status EncodeEdges(const storage::GraphRoots& g, const Chunk& c, BlockBuilder& b) {
  for (std::uint64_t id = c.begin; id < c.end;) {
    const storage::EdgeTable::Leaf* leaf = storage::EdgeTable::FindLeaf(g.edges, id);
    // Sparse: a missing leaf means no edge in it has properties.
    const storage::EdgePropTable::Leaf* props = storage::EdgePropTable::FindLeaf(g.edge_props, id);
    const std::uint64_t leaf_end = std::min(c.end, (id | kLeafMask) + 1);
    for (; id < leaf_end; ++id) {
      const storage::EdgeSlot* e = leaf == nullptr ? nullptr : &leaf->slots[id & kLeafMask];
      b.BeginElement(id);
      std::byte* p = b.Reserve(kMaxFixedBytes);
      if (e == nullptr || e->type == storage::kDeadType) {
        *p++ = std::byte{0};
        b.Commit(p);
      } else {
        *p++ = std::byte{1};
        p = PutVarint(p, e->type);
        p = PutVarint(p, e->src());
        p = PutVarint(p, e->dst());
        b.PutProps(p, props == nullptr ? nullptr : props->slots[id & kLeafMask]);
      }
      QUIVER_RETURN_IF_ERROR(b.EndElement());
    }
  }
  return b.Close();
}

}  // namespace

ElementStream::ElementStream(BlockKind kind, std::uint32_t seed, EncodedChunk* out, std::uint64_t first_id)
    : builder_(std::make_unique<BlockBuilder>(kind, seed, out)), next_id_(first_id) {}

ElementStream::~ElementStream() = default;

Status ElementStream::Vertex(std::uint32_t label, std::span<const KeyedValue> props) {
  builder_->BeginElement(next_id_++);
  std::byte* p = builder_->Reserve(kMaxFixedBytes);
  *p++ = std::byte{1};
  builder_->PutProps(PutVarint(p, label), props);
  return builder_->EndElement();
}

Status ElementStream::Edge(std::uint32_t type, std::uint64_t source, std::uint64_t target,
                           std::span<const KeyedValue> props) {
  builder_->BeginElement(next_id_++);
  std::byte* p = builder_->Reserve(kMaxFixedBytes);
  *p++ = std::byte{1};
  p = PutVarint(p, type);
  p = PutVarint(p, source);
  builder_->PutProps(PutVarint(p, target), props);
  return builder_->EndElement();
}

Status ElementStream::Close() { return builder_->Close(); }

void ElementStream::Restart() { builder_->Restart(); }

Status EncodeChunk(const storage::GraphRoots& g, const Chunk& chunk, std::uint32_t seed, EncodedChunk* out) {
  BlockBuilder b(chunk.kind, seed, out);
  return chunk.kind == BlockKind::kVertices ? EncodeVertices(g, chunk, b) : EncodeEdges(g, chunk, b);
}

namespace {

template <typename NameAt>
Status EncodeNameList(BlockKind kind, std::uint32_t count, NameAt name_at, std::uint32_t seed,
                      EncodedChunk* out) {
  BlockBuilder b(kind, seed, out);
  for (std::uint32_t id = 0; id < count; ++id) {
    const std::string_view name = name_at(id);
    b.BeginElement(id);
    std::byte* p = PutVarint(b.Reserve(kMaxVarintBytes + name.size()), name.size());
    std::memcpy(p, name.data(), name.size());
    b.Commit(p + name.size());
    QUIVER_RETURN_IF_ERROR(b.EndElement());
  }
  return b.Close();
}

}  // namespace

Status EncodeNames(BlockKind kind, const storage::InternTable& table, std::uint32_t seed, EncodedChunk* out) {
  return EncodeNameList(
      kind, table.size(), [&](std::uint32_t id) { return table.Name(id); }, seed, out);
}

Status EncodeNames(BlockKind kind, std::span<const std::string> names, std::uint32_t seed,
                   EncodedChunk* out) {
  if (names.size() > UINT32_MAX) return ResourceExhaustedError("checkpoint: over 2^32 names of one kind");
  return EncodeNameList(
      kind, static_cast<std::uint32_t>(names.size()),
      [&](std::uint32_t id) { return std::string_view(names[id]); }, seed, out);
}

Status AppendBlock(BlockKind kind, std::span<const std::byte> payload, std::uint32_t seed,
                   std::vector<std::byte>* out) {
  QUIVER_RETURN_IF_ERROR(CheckPayloadSize(payload.size()));
  const std::size_t at = out->size();
  out->resize(at + kBlockHeaderBytes + payload.size());
  std::memcpy(out->data() + at + kBlockHeaderBytes, payload.data(), payload.size());
  PutBlockHeader(out->data() + at, kind, {out->data() + at + kBlockHeaderBytes, payload.size()}, seed);
  return Status::Ok();
}

}  // namespace quiver::checkpoint
