#include "checkpoint/checkpoint_reader.h"

#include <cstring>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/strings.h"
#include "storage/adjacency.h"
#include "storage/prop_block.h"
#include "wal/value_codec.h"

namespace quiver::checkpoint {
namespace {

using storage::GraphRoots;

Status Bad(std::string_view what) { return CorruptionError(base::StrCat("checkpoint: ", what)); }

class Loader {
 public:
  Loader(GraphRoots& g, storage::MutationContext& ctx, const Header& h) : g_(g), ctx_(ctx), h_(h) {}

  Status Block(BlockKind kind, std::span<const std::byte> payload) {
    base::ByteReader r(payload);
    if (kind == BlockKind::kEnd) return End(r);
    std::uint64_t first, count;
    if (!r.GetVarint(&first) || !r.GetVarint(&count) || count > payload.size())
      return Bad("bad block header");
    for (std::uint64_t i = 0; i < count; ++i) QUIVER_RETURN_IF_ERROR(Element(kind, first + i, r));
    if (r.remaining() != 0) return Bad("trailing bytes in block");
    return Status::Ok();
  }

  Status Finish() const {
    if (!ended_) return Bad("missing end block");
    if (g_.vertex_limit != h_.vertex_limit || g_.edge_limit != h_.edge_limit)
      return Bad("element count mismatch");
    return Status::Ok();
  }

  std::uint64_t blocks = 0;

 private:
  Status Element(BlockKind kind, std::uint64_t id, base::ByteReader& r) {
    switch (kind) {
      case BlockKind::kLabels: return Name(g_.labels, id, r);
      case BlockKind::kEdgeTypes: return Name(g_.types, id, r);
      case BlockKind::kPropertyKeys: return Name(g_.keys, id, r);
      case BlockKind::kVertices: return Vertex(id, r);
      case BlockKind::kEdges: return Edge(id, r);
      case BlockKind::kEnd: break;
    }
    return Bad("unknown block kind");
  }

  Status Name(storage::InternTable* table, std::uint64_t id, base::ByteReader& r) {
    std::string_view name;
    if (id != table->size() || !r.GetString(&name) || name.empty()) return Bad("bad name");
    if (table->Intern(name) != id) return Bad("duplicate name");
    return Status::Ok();
  }

  Status Props(base::ByteReader& r, storage::PropBlock** out) {
    std::uint64_t n;
    if (!r.GetVarint(&n) || n > r.remaining()) return Bad("bad property count");
    values_.resize(n);
    inputs_.clear();
    std::uint64_t prev_key = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t key;
      if (!r.GetVarint(&key) || key >= g_.keys->size() || (i > 0 && key <= prev_key) ||
          !wal::DecodeValue(r, &values_[i]))
        return Bad("bad property");
      prev_key = key;
      inputs_.push_back(storage::PropInput{static_cast<std::uint32_t>(key), storage::ViewOf(values_[i])});
    }
    *out = storage::BuildPropBlock(inputs_, ctx_.account);
    return Status::Ok();
  }

  Status Vertex(std::uint64_t id, base::ByteReader& r) {
    std::uint8_t live;
    if (id != g_.vertex_limit || id >= h_.vertex_limit || !r.GetU8(&live) || live > 1)
      return Bad("bad vertex");
    storage::VertexSlot slot{storage::kDeadLabel, 0, 0, 0, 0, 0, nullptr};
    if (live == 1) {
      std::uint64_t label;
      if (!r.GetVarint(&label) || label >= g_.labels->size()) return Bad("bad vertex label");
      slot.label = static_cast<std::uint32_t>(label);
      QUIVER_RETURN_IF_ERROR(Props(r, &slot.props));
      ++g_.live_vertices;
    }
    storage::VertexTable::Append(g_.vertices, id, slot, ctx_);
    ++g_.vertex_limit;
    return Status::Ok();
  }

  Status Edge(std::uint64_t id, base::ByteReader& r) {
    std::uint8_t live;
    if (id != g_.edge_limit || id >= h_.edge_limit || !r.GetU8(&live) || live > 1) return Bad("bad edge");
    storage::EdgeSlot slot{};
    slot.type = storage::kDeadType;
    if (live == 0) {
      storage::EdgeTable::Append(g_.edges, id, slot, ctx_);
      ++g_.edge_limit;
      return Status::Ok();
    }
    std::uint64_t type, src, dst;
    if (!r.GetVarint(&type) || type >= g_.types->size() || !r.GetVarint(&src) || !r.GetVarint(&dst) ||
        storage::FindVertex(g_, src) == nullptr || storage::FindVertex(g_, dst) == nullptr)
      return Bad("bad edge endpoints or type");
    storage::PropBlock* props = nullptr;
    QUIVER_RETURN_IF_ERROR(Props(r, &props));
    slot.type = static_cast<std::uint32_t>(type);
    base::Store48(slot.source, src);
    base::Store48(slot.target, dst);
    storage::EdgeTable::Append(g_.edges, id, slot, ctx_);
    ++g_.edge_limit;
    ++g_.live_edges;
    if (props != nullptr) *storage::EdgePropTable::MutableSparse(g_.edge_props, id, ctx_) = props;
    // Edges arrive in id order, which is each adjacency array's order.
    storage::VertexSlot* s = storage::VertexTable::Mutable(g_.vertices, src, ctx_);
    storage::AppendEntry(s->out_head, s->out_degree, slot.type, id, dst, ctx_);
    storage::VertexSlot* t = storage::VertexTable::Mutable(g_.vertices, dst, ctx_);
    storage::AppendEntry(t->in_head, t->in_degree, slot.type, id, src, ctx_);
    return Status::Ok();
  }

  Status End(base::ByteReader& r) {
    std::uint64_t live_vertices, live_edges, blocks_before;
    if (!r.GetVarint(&live_vertices) || !r.GetVarint(&live_edges) || !r.GetVarint(&blocks_before) ||
        r.remaining() != 0 || live_vertices != g_.live_vertices || live_edges != g_.live_edges ||
        blocks_before != blocks)
      return Bad("end block disagrees with the content");
    ended_ = true;
    return Status::Ok();
  }

  GraphRoots& g_;
  storage::MutationContext& ctx_;
  const Header& h_;
  bool ended_ = false;
  std::vector<PropertyValue> values_;
  std::vector<storage::PropInput> inputs_;
};

Status ParseHeader(std::span<const std::byte> file, Header* h) {
  if (file.size() < kHeaderBytes) return Bad("shorter than its header");
  const std::byte* p = file.data();
  auto get = [p](std::size_t at, auto* v) { std::memcpy(v, p + at, sizeof(*v)); };
  std::uint64_t magic;
  std::uint32_t version, header_bytes, crc;
  get(0, &magic);
  get(8, &version);
  get(12, &header_bytes);
  get(60, &crc);
  if (magic != kMagic) return Bad("bad magic");
  if (version != kFormatVersion) return Bad(base::StrCat("unknown format version ", version));
  if (header_bytes != kHeaderBytes || crc != base::Crc32c(p, 60)) return Bad("header damaged");
  std::memcpy(h->uuid.data(), p + 16, 16);
  get(32, &h->sequence);
  get(40, &h->vertex_limit);
  get(48, &h->edge_limit);
  if (h->vertex_limit > kMaxElementId || h->edge_limit > kMaxElementId)
    return Bad("impossible element counts");
  return Status::Ok();
}

}  // namespace

Status LoadCheckpoint(std::span<const std::byte> file, GraphRoots& roots, storage::MutationContext& ctx,
                      Header* header) {
  QUIVER_RETURN_IF_ERROR(ParseHeader(file, header));
  roots.sequence = header->sequence;
  Loader loader(roots, ctx, *header);
  std::size_t pos = kHeaderBytes;
  std::uint8_t last_kind = 0;
  while (pos < file.size()) {
    if (file.size() - pos < kBlockHeaderBytes) return Bad("truncated block header");
    const std::byte* h = file.data() + pos;
    auto kind = static_cast<std::uint8_t>(h[0]);
    std::uint32_t length, crc;
    std::memcpy(&length, h + 4, 4);
    std::memcpy(&crc, h + 8, 4);
    std::uint32_t reserved;
    std::memcpy(&reserved, h + 12, 4);  // outside the CRC, so it must be exactly zero
    if (kind < 1 || kind > 6 || kind < last_kind || h[1] != std::byte{0} || h[2] != std::byte{0} ||
        h[3] != std::byte{0} || reserved != 0 || length > file.size() - pos - kBlockHeaderBytes)
      return Bad(base::StrCat("bad block header at offset ", pos));
    auto payload = file.subspan(pos + kBlockHeaderBytes, length);
    if (base::Crc32cExtend(base::Crc32c(h, 8), payload.data(), payload.size()) != crc)
      return Bad(base::StrCat("block at offset ", pos, " fails its checksum"));
    if (last_kind == static_cast<std::uint8_t>(BlockKind::kEnd)) return Bad("data after the end block");
    QUIVER_RETURN_IF_ERROR(loader.Block(static_cast<BlockKind>(kind), payload));
    ++loader.blocks;
    last_kind = kind;
    pos += kBlockHeaderBytes + length;
  }
  return loader.Finish();
}

}  // namespace quiver::checkpoint
