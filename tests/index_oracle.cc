// The brute-force side: every element of the index's label (type) whose
// keys all hold indexable values becomes an entry (key tuple, id); entries
// sorted by key, then id, are what an ordered scan must return, and runs of
// equal keys are what an equality lookup must return. The value order is
// index.h's, written out here again rather than taken from the engine.
#include "index_oracle.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

namespace quiver::test {
namespace {

struct Entry {
  std::vector<PropertyValue> key;
  std::uint64_t id = 0;
};

// index.h's order: by type (bool < int64 < double < string < bytes, which
// is the ValueType numbering), then by value; -0.0 equals 0.0.
int CompareValues(const PropertyValue& a, const PropertyValue& b) {
  if (a.type() != b.type()) return a.type() < b.type() ? -1 : 1;
  auto three = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (a.type()) {
    case ValueType::kBool: return three(*a.as_bool(), *b.as_bool());
    case ValueType::kInt64: return three(*a.as_int64(), *b.as_int64());
    case ValueType::kDouble: return three(*a.as_double(), *b.as_double());  // -0.0 == 0.0
    case ValueType::kString: {
      const int c = a.as_string()->compare(*b.as_string());  // unsigned bytes (char_traits)
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case ValueType::kBytes: {
      std::span<const std::byte> x = *a.as_bytes(), y = *b.as_bytes();
      const std::size_t n = std::min(x.size(), y.size());
      const int c = n == 0 ? 0 : std::memcmp(x.data(), y.data(), n);  // empty spans may hold null
      if (c != 0) return c < 0 ? -1 : 1;
      return three(x.size(), y.size());
    }
    default: return 0;  // null and vectors are never indexed
  }
}

int CompareKeys(const std::vector<PropertyValue>& a, const std::vector<PropertyValue>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (int c = CompareValues(a[i], b[i]); c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

bool Indexable(const PropertyView& v, const IndexSpec& spec) {
  if (v.is_null() || v.type() == ValueType::kFloatVector || v.type() == ValueType::kStringList) return false;
  return !spec.type || v.type() == *spec.type;
}

// The entries of `spec` in `s`, sorted by key then id.
template <typename Id>
std::vector<Entry> ScanEntries(const Snapshot& s, const IndexSpec& spec, bool edges) {
  std::vector<Entry> out;
  auto add = [&](Id id) {
    Entry e;
    for (const std::string& key : spec.keys) {
      std::optional<PropertyView> v = s.GetProperty(id, key);
      if (!v || !Indexable(*v, spec)) return;
      e.key.push_back(v->ToValue());
    }
    e.id = id.value();
    out.push_back(std::move(e));
  };
  if (edges) {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      if (std::optional<EdgeTypeId> t = s.FindEdgeType(spec.label))
        for (EdgeId e : s.Edges(*t)) add(e);
    }
  } else {
    if constexpr (std::is_same_v<Id, VertexId>) {
      if (std::optional<LabelId> l = s.FindLabel(spec.label))
        for (VertexId v : s.Vertices(*l)) add(v);
    }
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    const int c = CompareKeys(a.key, b.key);
    return c != 0 ? c < 0 : a.id < b.id;
  });
  return out;
}

std::string Ids(const std::vector<std::uint64_t>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size() && i < 6; ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  if (ids.size() > 6) s += " ... (" + std::to_string(ids.size()) + ")";
  return s + "]";
}

template <typename Id>
std::vector<std::uint64_t> Raw(const std::vector<Id>& ids) {
  std::vector<std::uint64_t> out;
  out.reserve(ids.size());
  for (Id id : ids) out.push_back(id.value());
  return out;
}

// Whether v lies on the right side of a bound.
bool AboveLo(const PropertyValue& v, const RangeBound& lo) {
  const int c = CompareValues(v, lo.value);
  return c > 0 || (c == 0 && lo.inclusive);
}
bool BelowHi(const PropertyValue& v, const RangeBound& hi) {
  const int c = CompareValues(v, hi.value);
  return c < 0 || (c == 0 && hi.inclusive);
}

// The length of the UTF-8 sequence a lead byte starts (1 if not a lead).
std::size_t Utf8Length(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

class IndexChecker {
 public:
  IndexChecker(const Snapshot& s, bool corrupt) : s_(s), corrupt_(corrupt) {}

  IndexOracleResult Run() {
    for (const IndexInfo& info : s_.Indexes()) {
      if (info.state != IndexState::kReady) continue;  // queries ignore it
      if (info.spec.element == ElementKind::kEdge) {
        Check<EdgeId>(info, true);
      } else {
        Check<VertexId>(info, false);
      }
    }
    return std::move(out_);
  }

 private:
  void Mismatch(const std::string& index, const std::string& what) {
    ++out_.mismatches;
    if (out_.messages.size() < 20) out_.messages.push_back("index " + index + ": " + what);
  }

  // One answer compared with the scan's.
  void Compare(const std::string& index, const std::string& query, const Status& status,
               const std::vector<std::uint64_t>& got, const std::vector<std::uint64_t>& want) {
    ++out_.checks;
    if (!status.ok()) {
      Mismatch(index, query + " failed: " + status.ToString());
    } else if (got != want) {
      Mismatch(index, query + " returned " + Ids(got) + ", the scan " + Ids(want));
    }
  }

  template <typename Id>
  Result<std::vector<Id>> Find(const std::string& name, std::span<const PropertyValue> values) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.FindEdgesByIndex(name, values);
    } else {
      return s_.FindVerticesByIndex(name, values);
    }
  }
  template <typename Id>
  Result<std::optional<Id>> FindOne(const std::string& name, std::span<const PropertyValue> values) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.FindEdgeByIndex(name, values);
    } else {
      return s_.FindVertexByIndex(name, values);
    }
  }
  template <typename Id>
  Result<std::vector<Id>> InRange(const std::string& name, const IndexRange& r) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.EdgesInRangeByIndex(name, r);
    } else {
      return s_.VerticesInRangeByIndex(name, r);
    }
  }
  template <typename Id>
  Result<std::uint64_t> CountInRange(const std::string& name, const IndexRange& r) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.CountEdgesInRangeByIndex(name, r);
    } else {
      return s_.CountVerticesInRangeByIndex(name, r);
    }
  }

  // The (label, key) forms, which a single-key index answers too.
  template <typename Id>
  Result<std::vector<Id>> FindByKey(const IndexSpec& spec, const PropertyValue& value) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.FindEdges(spec.label, spec.keys[0], value);
    } else {
      return s_.FindVertices(spec.label, spec.keys[0], value);
    }
  }
  template <typename Id>
  Result<std::optional<Id>> FindOneByKey(const IndexSpec& spec, const PropertyValue& value) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.FindEdge(spec.label, spec.keys[0], value);
    } else {
      return s_.FindVertex(spec.label, spec.keys[0], value);
    }
  }
  template <typename Id>
  Result<std::vector<Id>> InRangeByKey(const IndexSpec& spec, const IndexRange& r) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.EdgesInRange(spec.label, spec.keys[0], r);
    } else {
      return s_.VerticesInRange(spec.label, spec.keys[0], r);
    }
  }
  template <typename Id>
  Result<std::uint64_t> CountInRangeByKey(const IndexSpec& spec, const IndexRange& r) const {
    if constexpr (std::is_same_v<Id, EdgeId>) {
      return s_.CountEdgesInRange(spec.label, spec.keys[0], r);
    } else {
      return s_.CountVerticesInRange(spec.label, spec.keys[0], r);
    }
  }

  template <typename Id>
  void Lookup(const IndexSpec& spec, const std::vector<PropertyValue>& key,
              const std::vector<std::uint64_t>& want, const std::string& what) {
    Result<std::vector<Id>> all = Find<Id>(spec.name, key);
    Compare(spec.name, "lookup of " + what, all.status(), all.ok() ? Raw(*all) : std::vector<std::uint64_t>{},
            want);
    if (spec.kind != IndexKind::kUnique) {
      if (spec.keys.size() == 1) {
        Result<std::vector<Id>> by_key = FindByKey<Id>(spec, key[0]);
        Compare(spec.name, "lookup by label and key of " + what, by_key.status(),
                by_key.ok() ? Raw(*by_key) : std::vector<std::uint64_t>{}, want);
      }
      return;
    }
    Result<std::optional<Id>> one = FindOne<Id>(spec.name, key);
    std::vector<std::uint64_t> got;
    if (one.ok() && *one) got.push_back((*one)->value());
    // A unique index answers at most one id; the scan must agree.
    Compare(spec.name, "unique lookup of " + what, one.status(), got,
            want.size() <= 1 ? want : std::vector<std::uint64_t>{});
    if (spec.keys.size() != 1) return;
    Result<std::vector<Id>> by_key = FindByKey<Id>(spec, key[0]);
    Compare(spec.name, "lookup by label and key of " + what, by_key.status(),
            by_key.ok() ? Raw(*by_key) : std::vector<std::uint64_t>{}, want);
    Result<std::optional<Id>> one_by_key = FindOneByKey<Id>(spec, key[0]);
    got.clear();
    if (one_by_key.ok() && *one_by_key) got.push_back((*one_by_key)->value());
    Compare(spec.name, "unique lookup by label and key of " + what, one_by_key.status(), got,
            want.size() <= 1 ? want : std::vector<std::uint64_t>{});
  }

  template <typename Id>
  void Scan(const IndexSpec& spec, const IndexRange& r, const std::vector<Entry>& entries,
            const std::string& what) {
    std::vector<std::uint64_t> want;
    for (const Entry& e : entries) {
      const PropertyValue& first = e.key[0];
      if (r.lo && !AboveLo(first, *r.lo)) continue;
      if (r.hi && !BelowHi(first, *r.hi)) continue;
      if (r.prefix) {
        std::optional<std::string_view> str = first.as_string();
        if (!str || !str->starts_with(*r.prefix)) continue;
      }
      want.push_back(e.id);
    }
    const std::uint64_t count = want.size();
    if (r.descending) std::reverse(want.begin(), want.end());
    if (want.size() > r.limit) want.resize(r.limit);
    Result<std::vector<Id>> got = InRange<Id>(spec.name, r);
    Compare(spec.name, what, got.status(), got.ok() ? Raw(*got) : std::vector<std::uint64_t>{}, want);
    Result<std::uint64_t> n = CountInRange<Id>(spec.name, r);
    Compare(spec.name, "count of " + what, n.status(), {n.ok() ? *n : 0}, {count});
    if (spec.keys.size() != 1) return;
    Result<std::vector<Id>> by_key = InRangeByKey<Id>(spec, r);
    Compare(spec.name, what + " by label and key", by_key.status(),
            by_key.ok() ? Raw(*by_key) : std::vector<std::uint64_t>{}, want);
    Result<std::uint64_t> n_by_key = CountInRangeByKey<Id>(spec, r);
    Compare(spec.name, "count of " + what + " by label and key", n_by_key.status(),
            {n_by_key.ok() ? *n_by_key : 0}, {count});
  }

  // An edge-endpoint constraint holds no property values: one entry per
  // edge of its type, and the data never repeats a pair; every property
  // query on it is InvalidArgument.
  void CheckEndpoints(const IndexInfo& info) {
    const IndexSpec& spec = info.spec;
    std::vector<std::pair<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t>> edges;
    if (std::optional<EdgeTypeId> t = s_.FindEdgeType(spec.label)) {
      for (EdgeId e : s_.Edges(*t)) {
        const std::optional<EdgeInfo> edge = s_.GetEdge(e);
        edges.push_back({{edge->source.value(), edge->target.value()}, e.value()});
      }
    }
    std::sort(edges.begin(), edges.end());
    if (corrupt_ && !edges.empty()) {
      auto lowest = std::min_element(edges.begin(), edges.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
      edges.erase(lowest);
    }
    Compare(spec.name, "entry count", Status::Ok(), {info.entries}, {edges.size()});
    for (std::size_t i = 1; i < edges.size(); ++i)
      if (edges[i].first == edges[i - 1].first)
        Mismatch(spec.name, "the data holds the pair (" + std::to_string(edges[i].first.first) + " -> " +
                                std::to_string(edges[i].first.second) + ") twice " +
                                Ids({edges[i - 1].second, edges[i].second}));
    ++out_.checks;
    const Status query = s_.FindEdgesByIndex(spec.name, {}).status();
    if (query.code() != StatusCode::kInvalidArgument)
      Mismatch(spec.name, "a property query answered " + query.ToString() + ", not InvalidArgument");
  }

  template <typename Id>
  void Check(const IndexInfo& info, bool edges) {
    const IndexSpec& spec = info.spec;
    if (spec.kind == IndexKind::kUniqueEndpoints) {
      if (edges) CheckEndpoints(info);
      return;
    }
    std::vector<Entry> entries = ScanEntries<Id>(s_, spec, edges);
    if (corrupt_ && !entries.empty()) {
      auto lowest = std::min_element(entries.begin(), entries.end(),
                                     [](const Entry& a, const Entry& b) { return a.id < b.id; });
      entries.erase(lowest);
    }
    Compare(spec.name, "entry count", Status::Ok(), {info.entries}, {entries.size()});
    // Every key present, through the equality lookups.
    for (std::size_t i = 0; i < entries.size();) {
      std::size_t j = i;
      std::vector<std::uint64_t> ids;
      while (j < entries.size() && CompareKeys(entries[j].key, entries[i].key) == 0)
        ids.push_back(entries[j++].id);
      if (spec.kind == IndexKind::kUnique && ids.size() > 1)
        Mismatch(spec.name, "the data holds one key " + std::to_string(ids.size()) + " times " + Ids(ids));
      Lookup<Id>(spec, entries[i].key, ids, "a key present");
      i = j;
    }
    // Absent keys: a value no key of the loop holds, alone and after a
    // present prefix (composite indexes).
    // Of the declared type, if any (a bool index may hold both values: no
    // absent key is asked of it).
    const PropertyValue absent = spec.type == ValueType::kInt64    ? PropertyValue(std::int64_t{-777'777'777})
                                 : spec.type == ValueType::kDouble ? PropertyValue(-777'777.125)
                                 : spec.type == ValueType::kBytes
                                     ? PropertyValue(Bytes{std::byte{1}, std::byte{0x7f}})
                                     : PropertyValue(
                                           "\x01"
                                           "absent");
    if (spec.type != ValueType::kBool) {
      Lookup<Id>(spec, std::vector<PropertyValue>(spec.keys.size(), absent), {}, "an absent key");
      if (!entries.empty() && spec.keys.size() > 1) {
        std::vector<PropertyValue> key = entries[entries.size() / 2].key;
        key.back() = absent;
        Lookup<Id>(spec, key, {}, "a present prefix and an absent last key");
      }
    }
    if (spec.kind != IndexKind::kOrdered) return;
    Scan<Id>(spec, {}, entries, "the full scan");
    Scan<Id>(spec, {.descending = true}, entries, "the full scan, descending");
    if (entries.empty()) return;
    const PropertyValue& a = entries[entries.size() / 4].key[0];
    const PropertyValue& b = entries[(3 * entries.size()) / 4].key[0];
    Scan<Id>(spec, {.lo = RangeBound{a, true}, .hi = RangeBound{b, false}}, entries, "the range [q1, q3)");
    Scan<Id>(spec, {.lo = RangeBound{a, false}, .descending = true, .limit = 7}, entries,
             "the range (q1, ..), descending, limit 7");
    Scan<Id>(spec, {.hi = RangeBound{b, true}, .limit = 5}, entries, "the range (.., q3], limit 5");
    for (const Entry& e : entries) {
      std::optional<std::string_view> str = e.key[0].as_string();
      if (!str || str->empty()) continue;
      const std::size_t n = std::min(str->size(), Utf8Length(static_cast<unsigned char>((*str)[0])));
      Scan<Id>(spec, {.prefix = std::string(str->substr(0, n))}, entries, "a prefix scan");
      break;
    }
  }

  const Snapshot& s_;
  const bool corrupt_;
  IndexOracleResult out_;
};

}  // namespace

IndexOracleResult CheckIndexAnswers(const Snapshot& snapshot, bool corrupt_expected) {
  return IndexChecker(snapshot, corrupt_expected).Run();
}

}  // namespace quiver::test
