#include "index/index_query.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "base/strings.h"
#include "index/index_keys.h"
#include "index/key_codec.h"

namespace quiver::index {
namespace {

std::string What(ElementKind kind, std::string_view label, std::string_view key) {
  return base::StrCat(kind == ElementKind::kVertex ? "" : "edge type ", label, ".", key);
}

int Rank(const PropertyIndex& p, std::optional<ValueType> value_type) {
  const bool takes = !p.def->type || !value_type || *p.def->type == *value_type;
  int kind = 2;
  switch (p.def->kind) {
    case IndexKind::kUnique: kind = 0; break;
    case IndexKind::kExact: kind = 1; break;
    case IndexKind::kOrdered: kind = 2; break;
    case IndexKind::kUniqueEndpoints: kind = 3; break;  // answers no property query (Answers)
  }
  return (takes ? 0 : 10) + kind;
}

bool Answers(const IndexDef& def, std::string_view key, Need need) {
  if (def.keys.size() != 1 || def.keys[0] != key) return false;
  switch (need) {
    case Need::kEquality: return true;
    case Need::kUnique: return def.kind == IndexKind::kUnique;
    case Need::kOrdered: return def.kind == IndexKind::kOrdered;
  }
  return false;
}

// The smallest string greater than every string starting with `s`; false
// if there is none (all 0xFF).
bool Successor(std::string* s) {
  while (!s->empty() && static_cast<unsigned char>(s->back()) == 0xFF) s->pop_back();
  if (s->empty()) return false;
  s->back() = static_cast<char>(static_cast<unsigned char>(s->back()) + 1);
  return true;
}

struct Bounds {
  std::string lo_key, hi_key;
  Bound lo, hi;
  bool empty = false;
};

// An infinite double bound as the largest finite one with the same values
// on its side: lo -inf = [-max, ..., lo +inf = (max, ..., hi +inf = ..., max],
// hi -inf = ..., -max).
RangeBound Finite(const RangeBound& b, bool is_lo) {
  std::optional<double> d = b.value.as_double();
  if (!d || !std::isinf(*d)) return b;
  const double max = std::numeric_limits<double>::max();
  if (*d < 0) return RangeBound{-max, is_lo};
  return RangeBound{max, !is_lo};
}

Status Resolve(const PropertyIndex& p, const IndexRange& r, Bounds* b) {
  const IndexDef& def = *p.def;
  const bool composite = def.keys.size() > 1;
  if (r.prefix) {
    if (r.lo || r.hi) return InvalidArgumentError("a range takes a prefix or bounds, not both");
    if (def.type && *def.type != ValueType::kString)
      return InvalidArgumentError(base::StrCat(DescribeIndex(def), " holds ", ValueTypeName(*def.type),
                                               " values; a prefix matches strings only"));
    KeyRange keys = StringPrefixRange(*r.prefix);
    b->lo_key = std::move(keys.lo);
    b->hi_key = std::move(keys.hi);
    b->lo = Bound::Inclusive(b->lo_key);
    b->hi = Bound::Exclusive(b->hi_key);
    return Status::Ok();
  }
  if (r.lo) {
    RangeBound lo = Finite(*r.lo, true);
    QUIVER_RETURN_IF_ERROR(BoundKey(def, lo.value, &b->lo_key));
    bool inclusive = lo.inclusive;
    if (composite && !inclusive) {
      if (!Successor(&b->lo_key)) b->empty = true;
      inclusive = true;
    }
    b->lo = Bound{b->lo_key, inclusive, false};
  }
  if (r.hi) {
    RangeBound hi = Finite(*r.hi, false);
    QUIVER_RETURN_IF_ERROR(BoundKey(def, hi.value, &b->hi_key));
    bool inclusive = hi.inclusive, unbounded = false;
    if (composite && inclusive) {
      unbounded = !Successor(&b->hi_key);
      inclusive = false;
    }
    b->hi = Bound{b->hi_key, inclusive, unbounded};
  }
  return Status::Ok();
}

}  // namespace

Result<const PropertyIndex*> PickIndex(const storage::GraphRoots& g, ElementKind kind, std::string_view label,
                                       std::string_view key, Need need, std::optional<ValueType> value_type) {
  const PropertyIndex* best = nullptr;
  const PropertyIndex* building = nullptr;
  for (const PropertyIndex& p : g.catalog->indexes()) {
    if (p.def->element != kind || p.def->label != label || !Answers(*p.def, key, need)) continue;
    if (p.state != IndexState::kReady || !p.built) {
      building = &p;
      continue;
    }
    if (best == nullptr || Rank(p, value_type) < Rank(*best, value_type)) best = &p;
  }
  if (best != nullptr) return best;
  if (building != nullptr)
    return FailedPreconditionError(base::StrCat(
        DescribeIndex(*building->def), " is still being built; it answers once CreateIndex returns"));
  const char* what = need == Need::kUnique    ? "no unique index on "
                     : need == Need::kOrdered ? "no ordered index on "
                                              : "no index on ";
  return FailedPreconditionError(base::StrCat(what, What(kind, label, key)));
}

Result<const PropertyIndex*> IndexByName(const storage::GraphRoots& g, ElementKind kind,
                                         std::string_view name, Need need) {
  const PropertyIndex* p = g.catalog->Find(name);
  if (p == nullptr) return NotFoundError(base::StrCat("no index named '", name, "'"));
  if (p->def->element != kind)
    return InvalidArgumentError(base::StrCat(DescribeIndex(*p->def), " holds ",
                                             p->def->element == ElementKind::kVertex ? "vertices" : "edges",
                                             ", not ", kind == ElementKind::kVertex ? "vertices" : "edges"));
  if (p->state != IndexState::kReady || !p->built)
    return FailedPreconditionError(
        base::StrCat(DescribeIndex(*p->def), " is still being built; it answers once CreateIndex returns"));
  if (p->def->kind == IndexKind::kUniqueEndpoints)
    return InvalidArgumentError(
        base::StrCat(DescribeIndex(*p->def), " holds no property values; it answers no property lookup"));
  if (need == Need::kUnique && p->def->kind != IndexKind::kUnique)
    return FailedPreconditionError(base::StrCat(DescribeIndex(*p->def), " is not unique"));
  if (need == Need::kOrdered && p->def->kind != IndexKind::kOrdered)
    return FailedPreconditionError(base::StrCat(DescribeIndex(*p->def), " is not ordered"));
  return p;
}

Status Lookup(const PropertyIndex& p, std::span<const PropertyValue> values, std::size_t limit,
              std::vector<std::uint64_t>* ids) {
  std::string key;
  QUIVER_RETURN_IF_ERROR(LookupKey(*p.def, values, &key));
  IndexTree::Cursor c(p.root);
  for (c.Seek(Bound{key, true, false}); c.Valid() && ids->size() < limit && c.key() == key; c.Next())
    ids->push_back(c.id());
  return Status::Ok();
}

template <typename Id>
Status Range(const PropertyIndex& p, const IndexRange& range, std::vector<Id>* ids) {
  static_assert(sizeof(Id) == sizeof(std::uint64_t) && std::is_trivially_copyable_v<Id>);
  Bounds b;
  QUIVER_RETURN_IF_ERROR(Resolve(p, range, &b));
  if (b.empty || range.limit == 0) return Status::Ok();
  // The range's size (two rank descents, O(log n)) bounds the scan, so no
  // key is compared on the way and the output is allocated once; the
  // cursor hands over the ids a leaf at a time.
  const std::uint64_t n = std::min<std::uint64_t>(IndexTree::CountRange(p.root, b.lo, b.hi), range.limit);
  if (n == 0) return Status::Ok();
  ids->reserve(ids->size() + n);
  IndexTree::Cursor c(p.root);
  if (range.descending) {
    c.SeekLast(b.hi);
  } else {
    c.Seek(b.lo);
  }
  constexpr std::size_t kChunk = 512;
  std::uint64_t chunk[kChunk];
  for (std::uint64_t done = 0; done < n;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, n - done));
    const std::size_t got = range.descending ? c.PrevIds(chunk, want) : c.NextIds(chunk, want);
    if (got == 0) return InternalError("an index holds fewer entries in a range than it counts");
    // Id is one uint64 (below): the chunk's bytes are the ids' (one
    // memcpy, where a loop of emplace_back checked the capacity per id).
    const std::size_t at = ids->size();
    ids->resize(at + got);
    std::memcpy(static_cast<void*>(ids->data() + at), chunk, got * sizeof(std::uint64_t));
    done += got;
  }
  return Status::Ok();
}

template Status Range(const PropertyIndex&, const IndexRange&, std::vector<VertexId>*);
template Status Range(const PropertyIndex&, const IndexRange&, std::vector<EdgeId>*);

Result<std::uint64_t> CountRange(const PropertyIndex& p, const IndexRange& range) {
  Bounds b;
  QUIVER_RETURN_IF_ERROR(Resolve(p, range, &b));
  if (b.empty) return std::uint64_t{0};
  return IndexTree::CountRange(p.root, b.lo, b.hi);
}

}  // namespace quiver::index
