// Snapshot and its ranges: the read side of the public API, answered from
// one pinned version's roots. Nothing here locks or allocates.
#include "quiver/snapshot.h"

#include "index/catalog.h"
#include "storage/adjacency.h"
#include "storage/elements.h"
#include "storage/prop_block.h"
#include "storage/version.h"

namespace quiver {

using storage::FindEdge;
using storage::FindVertex;
using storage::GraphRoots;
using storage::VertexSlot;

namespace {

// What a snapshot that pins no version reads: an empty graph. Never
// destroyed, so such snapshots may be read at any time, even during exit.
const GraphRoots& EmptyRoots() {
  static const GraphRoots* const empty = [] {
    auto* g = new GraphRoots();
    g->labels = new storage::InternTable(0);
    g->types = new storage::InternTable(0);
    g->keys = new storage::InternTable(0);
    g->catalog = new index::Catalog(0);
    return g;
  }();
  return *empty;
}

// Built before main, so no read of an empty snapshot allocates (out of
// memory there would have thrown std::bad_alloc out of a read; review
// finding). A failed allocation this early ends the process before it
// starts; a snapshot read during another file's static initialisation
// still builds it on first use.
[[maybe_unused]] const GraphRoots& kEmptyRootsBuiltAtStart = EmptyRoots();

const GraphRoots& Roots(const internal::Version* v) { return v != nullptr ? v->roots : EmptyRoots(); }

// The name of `id`, or "" if the table has no such id.
std::string_view NameOf(const storage::InternTable* table, std::uint32_t id) {
  return id < table->size() ? table->Name(id) : std::string_view();
}

std::optional<PropertyView> Lookup(const storage::PropBlock* block, std::optional<std::uint32_t> key) {
  if (!key) return std::nullopt;
  return storage::GetProperty(block, *key);
}

std::uint64_t NextLiveVertex(const GraphRoots& g, std::uint64_t pos, std::uint64_t end) {
  end = std::min(end, g.vertex_limit);
  while (pos < end) {
    // Walk one leaf at a time rather than one lookup per id.
    const auto* leaf = storage::VertexTable::FindLeaf(g.vertices, pos);
    std::uint64_t leaf_end = std::min(end, (pos | (storage::VertexTable::kLeafSize - 1)) + 1);
    for (; pos < leaf_end; ++pos) {
      const VertexSlot& s = leaf->slots[pos & (storage::VertexTable::kLeafSize - 1)];
      if (s.label != storage::kDeadLabel) return pos;
    }
  }
  return end;
}

std::uint64_t NextLiveEdge(const GraphRoots& g, std::uint64_t pos, std::uint64_t end) {
  end = std::min(end, g.edge_limit);
  while (pos < end) {
    const auto* leaf = storage::EdgeTable::FindLeaf(g.edges, pos);
    std::uint64_t leaf_end = std::min(end, (pos | (storage::EdgeTable::kLeafSize - 1)) + 1);
    for (; pos < leaf_end; ++pos) {
      const storage::EdgeSlot& s = leaf->slots[pos & (storage::EdgeTable::kLeafSize - 1)];
      if (s.type != storage::kDeadType) return pos;
    }
  }
  return end;
}

}  // namespace

// --- Ranges

std::size_t Adjacency::group_count() const {
  return storage::GroupCount(reinterpret_cast<std::uintptr_t>(head_));
}

EdgeGroup Adjacency::group(std::size_t i) const {
  return storage::GroupAt(reinterpret_cast<std::uintptr_t>(head_), degree_, i);
}

std::size_t PropertyRange::size() const {
  return storage::PropCount(static_cast<const storage::PropBlock*>(block_));
}

PropertyRange::Entry PropertyRange::operator[](std::size_t i) const {
  storage::PropInput p =
      storage::PropAt(static_cast<const storage::PropBlock*>(block_), static_cast<std::uint32_t>(i));
  return Entry{PropertyKeyId(p.key), p.value};
}

template <>
std::uint64_t IdRange<VertexId>::Next(std::uint64_t pos) const {
  return NextLiveVertex(Roots(v_), pos, end_);
}

template <>
std::uint64_t IdRange<EdgeId>::Next(std::uint64_t pos) const {
  return NextLiveEdge(Roots(v_), pos, end_);
}

// --- Label-set iteration

namespace internal {

std::size_t FillFromSet(const void* set, std::uint64_t from, std::uint64_t* out, std::size_t max) {
  return index::IdSet::Fill(*static_cast<const index::IdSetRoot*>(set), from, out, max);
}

}  // namespace internal

// --- Snapshot

Snapshot& Snapshot::operator=(Snapshot&& other) noexcept {
  if (this != &other) {
    if (v_ != nullptr) v_->chain()->ReleasePin({v_, slot_});
    v_ = std::exchange(other.v_, nullptr);
    slot_ = other.slot_;
  }
  return *this;
}

Snapshot::~Snapshot() {
  if (v_ != nullptr) v_->chain()->ReleasePin({v_, slot_});
}

SequenceNumber Snapshot::sequence() const { return Roots(v_).sequence; }
std::uint64_t Snapshot::vertex_count() const { return Roots(v_).live_vertices; }
std::uint64_t Snapshot::edge_count() const { return Roots(v_).live_edges; }
std::uint64_t Snapshot::vertex_id_limit() const { return Roots(v_).vertex_limit; }
std::uint64_t Snapshot::edge_id_limit() const { return Roots(v_).edge_limit; }

bool Snapshot::HasVertex(VertexId v) const { return storage::FindVertex(Roots(v_), v.value()) != nullptr; }

std::optional<LabelId> Snapshot::LabelOf(VertexId v) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  if (s == nullptr) return std::nullopt;
  return LabelId(s->label);
}

std::span<const EdgeEntry> Snapshot::Edges(VertexId v, Direction d, EdgeTypeId type) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  if (s == nullptr) return {};
  return d == Direction::kOut ? storage::FindGroup(s->out_head, s->out_degree, type.value())
                              : storage::FindGroup(s->in_head, s->in_degree, type.value());
}
std::span<const EdgeEntry> Snapshot::OutEdges(VertexId v, EdgeTypeId type) const {
  return Edges(v, Direction::kOut, type);
}
std::span<const EdgeEntry> Snapshot::InEdges(VertexId v, EdgeTypeId type) const {
  return Edges(v, Direction::kIn, type);
}

Adjacency Snapshot::Edges(VertexId v, Direction d) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  if (s == nullptr) return Adjacency();
  return d == Direction::kOut ? Adjacency(reinterpret_cast<const void*>(s->out_head), s->out_degree)
                              : Adjacency(reinterpret_cast<const void*>(s->in_head), s->in_degree);
}
Adjacency Snapshot::OutEdges(VertexId v) const { return Edges(v, Direction::kOut); }
Adjacency Snapshot::InEdges(VertexId v) const { return Edges(v, Direction::kIn); }

std::size_t Snapshot::OutDegree(VertexId v) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  return s == nullptr ? 0 : s->out_degree;
}
std::size_t Snapshot::InDegree(VertexId v) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  return s == nullptr ? 0 : s->in_degree;
}

bool Snapshot::HasEdge(EdgeId e) const { return storage::FindEdge(Roots(v_), e.value()) != nullptr; }

std::optional<EdgeInfo> Snapshot::GetEdge(EdgeId e) const {
  const storage::EdgeSlot* s = storage::FindEdge(Roots(v_), e.value());
  if (s == nullptr) return std::nullopt;
  return EdgeInfo{EdgeTypeId(s->type), VertexId(s->src()), VertexId(s->dst())};
}

std::optional<PropertyView> Snapshot::GetProperty(VertexId v, PropertyKeyId key) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  if (s == nullptr) return std::nullopt;
  return storage::GetProperty(s->props, key.value());
}
std::optional<PropertyView> Snapshot::GetProperty(VertexId v, std::string_view key) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  if (s == nullptr) return std::nullopt;
  return Lookup(s->props, Roots(v_).keys->Find(key));
}
std::optional<PropertyView> Snapshot::GetProperty(EdgeId e, PropertyKeyId key) const {
  if (storage::FindEdge(Roots(v_), e.value()) == nullptr) return std::nullopt;
  return storage::GetProperty(storage::EdgeProps(Roots(v_), e.value()), key.value());
}
std::optional<PropertyView> Snapshot::GetProperty(EdgeId e, std::string_view key) const {
  if (storage::FindEdge(Roots(v_), e.value()) == nullptr) return std::nullopt;
  return Lookup(storage::EdgeProps(Roots(v_), e.value()), Roots(v_).keys->Find(key));
}

PropertyRange Snapshot::Properties(VertexId v) const {
  const VertexSlot* s = storage::FindVertex(Roots(v_), v.value());
  return PropertyRange(s == nullptr ? nullptr : s->props);
}
PropertyRange Snapshot::Properties(EdgeId e) const {
  if (storage::FindEdge(Roots(v_), e.value()) == nullptr) return PropertyRange();
  return PropertyRange(storage::EdgeProps(Roots(v_), e.value()));
}

std::size_t Snapshot::ScanBatch(ScanCursor* cursor, std::uint64_t end, Direction d, ScannedGroup* out,
                                std::size_t max) const {
  const GraphRoots& g = Roots(v_);
  end = std::min(end, g.vertex_limit);
  std::size_t n = 0;
  std::uint64_t pos = cursor->vertex;
  while (pos < end && n < max) {
    const auto* leaf = storage::VertexTable::FindLeaf(g.vertices, pos);
    std::uint64_t leaf_end = std::min(end, (pos | (storage::VertexTable::kLeafSize - 1)) + 1);
    for (; pos < leaf_end && n < max; ++pos) {
      const VertexSlot& slot = leaf->slots[pos & (storage::VertexTable::kLeafSize - 1)];
      if (slot.label == storage::kDeadLabel) continue;
      const std::uintptr_t head = d == Direction::kOut ? slot.out_head : slot.in_head;
      if (head == 0) continue;
      const std::uint32_t degree = d == Direction::kOut ? slot.out_degree : slot.in_degree;
      // A single group's type and entries come from its head word
      // (adjacency.h), so collecting it reads nothing of its array; the
      // prefetch starts its first two lines, which the consumer reads after
      // the whole batch is collected. (A look-ahead that also prefetched
      // the next batch's arrays was deleted: GCC removed it from every -O2
      // build, and kept it made the sweep 12-18 % slower at 5M-100M edges.)
      auto collect = [&](const EdgeGroup& group) {
        const char* p = reinterpret_cast<const char*>(group.entries.data());
        __builtin_prefetch(p);
        __builtin_prefetch(p + 64);
        out[n++] = ScannedGroup{VertexId(pos), group};
      };
      // The one-group case, nearly every vertex, skips the group loop.
      if (!storage::IsDir(head)) {
        collect(storage::GroupAt(head, degree, 0));
        continue;
      }
      std::size_t groups = storage::GroupCount(head);
      std::uint32_t gi = pos == cursor->vertex ? cursor->group : 0;
      for (; gi < groups && n < max; ++gi) collect(storage::GroupAt(head, degree, gi));
      if (gi < groups) {  // the batch is full part-way through this vertex
        *cursor = ScanCursor{pos, gi};
        return n;
      }
    }
  }
  *cursor = ScanCursor{pos, 0};
  return n;
}

VertexRange Snapshot::Vertices() const { return VertexRange(v_, 0, Roots(v_).vertex_limit); }
VertexRange Snapshot::Vertices(LabelId label) const {
  const index::IdSetRoot* set = Roots(v_).catalog->Set(index::ElementKind::kVertex, label.value());
  if (set == nullptr || set->count == 0) return VertexRange(v_, 0, 0);
  return VertexRange(v_, 0, Roots(v_).vertex_limit, set);
}
VertexRange Snapshot::Vertices(std::uint64_t begin, std::uint64_t end) const {
  std::uint64_t limit = Roots(v_).vertex_limit;
  return VertexRange(v_, std::min(begin, limit), std::min(end, limit));
}
EdgeRange Snapshot::Edges() const { return EdgeRange(v_, 0, Roots(v_).edge_limit); }
EdgeRange Snapshot::Edges(std::uint64_t begin, std::uint64_t end) const {
  std::uint64_t limit = Roots(v_).edge_limit;
  return EdgeRange(v_, std::min(begin, limit), std::min(end, limit));
}
EdgeRange Snapshot::Edges(EdgeTypeId type) const {
  const index::IdSetRoot* set = Roots(v_).catalog->Set(index::ElementKind::kEdge, type.value());
  if (set == nullptr || set->count == 0) return EdgeRange(v_, 0, 0);
  return EdgeRange(v_, 0, Roots(v_).edge_limit, set);
}

std::optional<LabelId> Snapshot::FindLabel(std::string_view name) const {
  auto id = Roots(v_).labels->Find(name);
  return id ? std::optional<LabelId>(LabelId(*id)) : std::nullopt;
}
std::optional<EdgeTypeId> Snapshot::FindEdgeType(std::string_view name) const {
  auto id = Roots(v_).types->Find(name);
  return id ? std::optional<EdgeTypeId>(EdgeTypeId(*id)) : std::nullopt;
}
std::optional<PropertyKeyId> Snapshot::FindPropertyKey(std::string_view name) const {
  auto id = Roots(v_).keys->Find(name);
  return id ? std::optional<PropertyKeyId>(PropertyKeyId(*id)) : std::nullopt;
}
std::string_view Snapshot::LabelName(LabelId id) const { return NameOf(Roots(v_).labels, id.value()); }
std::string_view Snapshot::EdgeTypeName(EdgeTypeId id) const { return NameOf(Roots(v_).types, id.value()); }
std::string_view Snapshot::PropertyKeyName(PropertyKeyId id) const {
  return NameOf(Roots(v_).keys, id.value());
}

}  // namespace quiver
