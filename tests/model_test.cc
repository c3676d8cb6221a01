// Randomized test of the engine against a trivially correct model graph (the
// LevelDB ModelDB idea, STYLE.md habit 13).
//
// The model is a pair of std::maps: vertices (label, properties) and edges
// (type, source, target, properties); adjacency is derived by scanning edges
// in id order, which equals Quiver's insertion order per (vertex, direction,
// type) because removals preserve the order of the rest and ids only grow.
//
// Each random batch (1-20 operations) is applied to a copy of the model as it
// is generated, so every valid operation is valid at its position in the
// batch and every new id is predicted. About 10% of batches carry one
// deliberately invalid operation (dead id, double removal, NaN/Inf, bad
// UTF-8); those must fail whole with the predicted code and change nothing.
// After every batch the newest snapshot is compared with the model element by
// element. A few older snapshots are kept with copies of the model at their
// sequence and re-verified later. Bursts of WriteAsync batches (with an
// invalid one among them) let the writer drain several into one group.
//
// Indexes: every ~40 batches the test creates an index with a random spec
// (vertex or edge, one or two keys, exact/unique/ordered, a declared type or
// any) or drops one, predicting from the model whether CreateIndex fails
// (a repeated name; data of another type; a repeated unique key). Three
// keys keep one type ("age" int64, "score" double, "name" string; or null)
// so typed indexes on them can exist; unique keys draw from small pools now
// and then so batches collide. A batch whose final state would repeat a
// unique key must fail with AlreadyExists, and one that writes a value of
// another type than an index declares (its last op) with InvalidArgument.
// After every version, every index's answers (finds, ranges with random
// bounds, directions and limits, counts, string prefixes) are compared with
// a brute-force scan of the model, and so are the label and type counts
// and the property key counts.
//
// Environment: QUIVER_TEST_SEED (default: random, printed), QUIVER_MODEL_BATCHES
// (default 2000: about 25 s under ASan; the seed differs from run to run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "quiver/graph.h"
#include "test_util.h"

namespace quiver {
namespace {

using test_util::Render;

// ---------------------------------------------------------------- the model

using PropMap = std::map<std::string, PropertyValue, std::less<>>;

struct MVertex {
  std::string label;
  PropMap props;
};

struct MEdge {
  std::string type;
  std::uint64_t src = 0;
  std::uint64_t dst = 0;
  PropMap props;
};

struct Model {
  std::vector<IndexSpec> indexes;  // ready, in creation order
  std::map<std::uint64_t, MVertex> vertices;
  std::map<std::uint64_t, MEdge> edges;
  std::uint64_t vertex_limit = 0;
  std::uint64_t edge_limit = 0;
  SequenceNumber sequence = 0;

  std::uint64_t AddVertex(const std::string& label, PropMap props) {
    std::uint64_t id = vertex_limit++;
    vertices[id] = MVertex{label, std::move(props)};
    return id;
  }
  std::uint64_t AddEdge(const std::string& type, std::uint64_t src, std::uint64_t dst, PropMap props) {
    std::uint64_t id = edge_limit++;
    edges[id] = MEdge{type, src, dst, std::move(props)};
    return id;
  }
  void RemoveVertex(std::uint64_t id) {
    for (auto it = edges.begin(); it != edges.end();) {
      if (it->second.src == id || it->second.dst == id) {
        it = edges.erase(it);
      } else {
        ++it;
      }
    }
    vertices.erase(id);
  }
};

using AdjList = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // (edge, neighbour)

std::string RenderAdj(const AdjList& l) {
  std::string out;
  for (auto [e, n] : l) out += "(" + std::to_string(e) + "," + std::to_string(n) + ")";
  return out;
}

std::string RenderModelProps(const PropMap& props) {
  std::map<std::string, std::string> r;
  for (const auto& [k, v] : props) r[k] = Render(v);
  return test_util::RenderProperties(r);
}

// Compares an element's stored properties with the model's; "" if equal.
// Allocation-free unless they differ.
template <typename Id>
std::string DiffProps(const Snapshot& s, Id id, const PropMap& model) {
  std::size_t n = 0;
  std::optional<std::uint32_t> last;
  bool same = true;
  for (const PropertyRange::Entry& e : s.Properties(id)) {
    ++n;
    if (last && e.key.value() <= *last) return "PropertyRange not in ascending key id order";
    last = e.key.value();
    auto it = model.find(s.PropertyKeyName(e.key));
    if (it == model.end() || !test_util::SameValue(e.value, it->second)) {
      same = false;
      break;
    }
  }
  if (same && n == model.size()) {
    // Spot-check the lookups by name and by key id on one property.
    if (!model.empty()) {
      const auto& [k, v] = *model.begin();
      std::optional<PropertyView> by_name = s.GetProperty(id, k);
      if (!by_name || !test_util::SameValue(*by_name, v)) return "GetProperty(" + k + ") disagrees";
      std::optional<PropertyKeyId> key = s.FindPropertyKey(k);
      if (!key) return "FindPropertyKey(" + k + ") is nullopt";
      std::optional<PropertyView> by_id = s.GetProperty(id, *key);
      if (!by_id || !test_util::SameValue(*by_id, v)) return "GetProperty(id of " + k + ") disagrees";
    }
    return "";
  }
  return "properties " + test_util::RenderProperties(test_util::PropertyMap(s, id)) + " vs model " +
         RenderModelProps(model);
}

// ------------------------------------------------- indexes, by brute force

// The documented value order (include/quiver/index.h): by type (bool < int64
// < double < string < bytes), then by value (-0.0 == 0.0; strings and bytes
// by unsigned byte).
int TypeRank(ValueType t) {
  switch (t) {
    case ValueType::kBool: return 1;
    case ValueType::kInt64: return 2;
    case ValueType::kDouble: return 3;
    case ValueType::kString: return 4;
    case ValueType::kBytes: return 5;
    default: return 9;
  }
}

int CompareValues(const PropertyValue& a, const PropertyValue& b) {
  if (a.type() != b.type()) return TypeRank(a.type()) < TypeRank(b.type()) ? -1 : 1;
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (a.type()) {
    case ValueType::kBool: return cmp(*a.as_bool(), *b.as_bool());
    case ValueType::kInt64: return cmp(*a.as_int64(), *b.as_int64());
    case ValueType::kDouble: return cmp(*a.as_double(), *b.as_double());
    case ValueType::kString: {
      int c = a.as_string()->compare(*b.as_string());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case ValueType::kBytes: {
      auto x = *a.as_bytes(), y = *b.as_bytes();
      std::string xs(reinterpret_cast<const char*>(x.data()), x.size());
      std::string ys(reinterpret_cast<const char*>(y.data()), y.size());
      int c = xs.compare(ys);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default: return 0;
  }
}

using KeyTuple = std::vector<PropertyValue>;

int CompareTuples(const KeyTuple& a, const KeyTuple& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (int c = CompareValues(a[i], b[i]); c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// The element's key for `spec`, if it is in the index (every key present,
// not null, not a vector or a string list). Not for edge-endpoint
// constraints (EndpointTuple).
std::optional<KeyTuple> IndexedKey(const PropMap& props, const IndexSpec& spec) {
  KeyTuple key;
  for (const std::string& k : spec.keys) {
    auto it = props.find(k);
    if (it == props.end() || it->second.is_null() || it->second.type() == ValueType::kFloatVector ||
        it->second.type() == ValueType::kStringList)
      return std::nullopt;
    key.push_back(it->second);
  }
  return key;
}

// An edge-endpoint constraint's key: (source, target).
KeyTuple EndpointTuple(std::uint64_t src, std::uint64_t dst) {
  return {PropertyValue(static_cast<std::int64_t>(src)), PropertyValue(static_cast<std::int64_t>(dst))};
}

// (key, id) of every element in the index, sorted as the index sorts.
std::vector<std::pair<KeyTuple, std::uint64_t>> IndexEntries(const Model& m, const IndexSpec& spec) {
  std::vector<std::pair<KeyTuple, std::uint64_t>> out;
  if (spec.kind == IndexKind::kUniqueEndpoints) {
    for (const auto& [id, e] : m.edges)
      if (e.type == spec.label) out.emplace_back(EndpointTuple(e.src, e.dst), id);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      int c = CompareTuples(a.first, b.first);
      return c != 0 ? c < 0 : a.second < b.second;
    });
    return out;
  }
  auto add = [&](std::uint64_t id, const std::string& label, const PropMap& props) {
    if (label != spec.label) return;
    if (auto key = IndexedKey(props, spec)) out.emplace_back(std::move(*key), id);
  };
  if (spec.element == ElementKind::kVertex) {
    for (const auto& [id, v] : m.vertices) add(id, v.label, v.props);
  } else {
    for (const auto& [id, e] : m.edges) add(id, e.type, e.props);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    int c = CompareTuples(a.first, b.first);
    return c != 0 ? c < 0 : a.second < b.second;
  });
  return out;
}

// Why CreateIndex(spec) must fail on `m`, if it must: a value of another
// type than declared (InvalidArgument), else a repeated unique key
// (AlreadyExists).
std::optional<StatusCode> CreateFailure(const Model& m, const IndexSpec& spec, std::string* why = nullptr) {
  auto check_types = [&](const std::string& label, const PropMap& props) {
    if (label != spec.label || !spec.type) return false;
    for (const std::string& k : spec.keys) {
      auto it = props.find(k);
      if (it != props.end() && !it->second.is_null() && it->second.type() != *spec.type) return true;
    }
    return false;
  };
  if (spec.element == ElementKind::kVertex) {
    for (const auto& [id, v] : m.vertices)
      if (check_types(v.label, v.props)) return StatusCode::kInvalidArgument;
  } else {
    for (const auto& [id, e] : m.edges)
      if (check_types(e.type, e.props)) return StatusCode::kInvalidArgument;
  }
  if (spec.kind != IndexKind::kUnique && spec.kind != IndexKind::kUniqueEndpoints) return std::nullopt;
  auto entries = IndexEntries(m, spec);
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (CompareTuples(entries[i - 1].first, entries[i].first) != 0) continue;
    if (why != nullptr)
      *why = "index " + spec.name + ": ids " + std::to_string(entries[i - 1].second) + " and " +
             std::to_string(entries[i].second) + " share a key";
    return StatusCode::kAlreadyExists;
  }
  return std::nullopt;
}

// Why a batch that passes the structural checks must fail on its final
// state `after`: a value of another type than a declared-type index takes
// (InvalidArgument), else a repeated unique key (AlreadyExists).
std::optional<StatusCode> BatchIndexFailure(const Model& after, std::string* why = nullptr) {
  for (const IndexSpec& spec : after.indexes)
    if (auto f = CreateFailure(after, spec); f == StatusCode::kInvalidArgument) return f;
  for (const IndexSpec& spec : after.indexes)
    if (auto f = CreateFailure(after, spec, why)) return f;
  return std::nullopt;
}

std::string RenderIds(const std::vector<std::uint64_t>& ids) {
  std::string out;
  for (std::uint64_t id : ids) out += std::to_string(id) + ",";
  return out;
}

std::string RenderKey(const KeyTuple& k) {
  std::string out;
  for (const PropertyValue& v : k) out += Render(v) + ";";
  return out;
}

template <typename Id>
std::vector<std::uint64_t> RawIds(const std::vector<Id>& ids) {
  std::vector<std::uint64_t> out;
  for (Id id : ids) out.push_back(id.value());
  return out;
}

// Compares one index's answers with the brute-force scan; "" if equal.
std::string DiffIndex(const Snapshot& s, const Model& m, const IndexSpec& spec, const IndexInfo& info,
                      std::mt19937_64& rng) {
  const std::string where = "index " + spec.name + ": ";
  const bool vertices = spec.element == ElementKind::kVertex;
  const auto entries = IndexEntries(m, spec);
  if (info.state != IndexState::kReady) return where + "not ready";
  if (info.entries != entries.size())
    return where + "entries " + std::to_string(info.entries) + " vs model " + std::to_string(entries.size());
  // An edge-endpoint constraint answers no property query: its entry count
  // (above), the batches it refuses and the upserts through it are checked.
  if (spec.kind == IndexKind::kUniqueEndpoints) return "";
  auto pick = [&]() -> const KeyTuple& {
    return entries[std::uniform_int_distribution<std::size_t>(0, entries.size() - 1)(rng)].first;
  };
  // Equality: a few present keys and one absent.
  std::vector<KeyTuple> probes;
  for (int i = 0; i < 3 && !entries.empty(); ++i) probes.push_back(pick());
  KeyTuple absent;
  for (std::size_t i = 0; i < spec.keys.size(); ++i) {
    const ValueType t = spec.type.value_or(ValueType::kInt64);
    absent.push_back(t == ValueType::kInt64    ? PropertyValue(std::int64_t{987654321})
                     : t == ValueType::kDouble ? PropertyValue(-123.25)
                     : t == ValueType::kString ? PropertyValue("absent-key")
                     : t == ValueType::kBool   ? PropertyValue(true)
                                               : PropertyValue(Bytes{std::byte{7}, std::byte{7}}));
  }
  probes.push_back(absent);
  for (const KeyTuple& probe : probes) {
    std::vector<std::uint64_t> want;
    for (const auto& [k, id] : entries)
      if (CompareTuples(k, probe) == 0) want.push_back(id);
    std::sort(want.begin(), want.end());
    auto find = [&]() -> Result<std::vector<std::uint64_t>> {
      if (vertices) {
        auto r = spec.keys.size() == 1 ? s.FindVertices(spec.label, spec.keys[0], probe[0])
                                       : s.FindVerticesByIndex(spec.name, probe);
        if (!r.ok()) return r.status();
        return RawIds(*r);
      }
      auto r = spec.keys.size() == 1 ? s.FindEdges(spec.label, spec.keys[0], probe[0])
                                     : s.FindEdgesByIndex(spec.name, probe);
      if (!r.ok()) return r.status();
      return RawIds(*r);
    };
    Result<std::vector<std::uint64_t>> got = find();
    if (!got.ok()) return where + "find " + RenderKey(probe) + ": " + got.status().ToString();
    if (*got != want)
      return where + "find " + RenderKey(probe) + ": " + RenderIds(*got) + " vs model " + RenderIds(want);
    if (spec.kind == IndexKind::kUnique) {
      std::optional<std::uint64_t> one;
      if (vertices) {
        auto r = spec.keys.size() == 1 ? s.FindVertex(spec.label, spec.keys[0], probe[0])
                                       : s.FindVertexByIndex(spec.name, probe);
        if (!r.ok()) return where + "FindVertex: " + r.status().ToString();
        if (*r) one = (*r)->value();
      } else {
        auto r = spec.keys.size() == 1 ? s.FindEdge(spec.label, spec.keys[0], probe[0])
                                       : s.FindEdgeByIndex(spec.name, probe);
        if (!r.ok()) return where + "FindEdge: " + r.status().ToString();
        if (*r) one = (*r)->value();
      }
      if (one != (want.empty() ? std::nullopt : std::optional<std::uint64_t>(want[0])))
        return where + "find one " + RenderKey(probe) + " differs";
    }
  }
  if (spec.kind != IndexKind::kOrdered) return "";
  // Ranges on the first key, and prefixes of strings.
  for (int round = 0; round < 4; ++round) {
    IndexRange r;
    auto bound = [&]() -> std::optional<RangeBound> {
      if (entries.empty() || std::uniform_int_distribution<int>(0, 3)(rng) == 0) return std::nullopt;
      return RangeBound{pick()[0], std::uniform_int_distribution<int>(0, 1)(rng) == 0};
    };
    std::optional<std::string> prefix;
    // One entry picked once: a second pick may be another entry, of another
    // type in an index of any type.
    if (const PropertyValue* first = round == 3 && !entries.empty() ? &pick()[0] : nullptr;
        first != nullptr && first->type() == ValueType::kString) {
      const std::string str(*first->as_string());
      prefix = str.substr(0, std::uniform_int_distribution<std::size_t>(0, str.size())(rng));
    }
    if (prefix) {
      r.prefix = *prefix;
    } else {
      r.lo = bound();
      r.hi = bound();
    }
    r.descending = std::uniform_int_distribution<int>(0, 1)(rng) == 0;
    if (std::uniform_int_distribution<int>(0, 1)(rng) == 0)
      r.limit = std::uniform_int_distribution<std::size_t>(0, 4)(rng);
    std::vector<std::uint64_t> want;
    for (const auto& [k, id] : entries) {
      const PropertyValue& v = k[0];
      bool in = true;
      if (r.prefix) {
        in = v.type() == ValueType::kString && v.as_string()->substr(0, r.prefix->size()) == *r.prefix;
      } else {
        if (r.lo)
          in = in &&
               (r.lo->inclusive ? CompareValues(v, r.lo->value) >= 0 : CompareValues(v, r.lo->value) > 0);
        if (r.hi)
          in = in &&
               (r.hi->inclusive ? CompareValues(v, r.hi->value) <= 0 : CompareValues(v, r.hi->value) < 0);
      }
      if (in) want.push_back(id);
    }
    const std::uint64_t want_count = want.size();
    if (r.descending) std::reverse(want.begin(), want.end());
    if (want.size() > r.limit) want.resize(r.limit);
    // A single-key index answers for (label, key); any through its name.
    const bool by_name = spec.keys.size() > 1 || std::uniform_int_distribution<int>(0, 3)(rng) == 0;
    std::vector<std::uint64_t> got_ids;
    if (vertices) {
      auto got =
          by_name ? s.VerticesInRangeByIndex(spec.name, r) : s.VerticesInRange(spec.label, spec.keys[0], r);
      if (!got.ok()) return where + "range: " + got.status().ToString();
      got_ids = RawIds(*got);
    } else {
      auto e = by_name ? s.EdgesInRangeByIndex(spec.name, r) : s.EdgesInRange(spec.label, spec.keys[0], r);
      if (!e.ok()) return where + "range: " + e.status().ToString();
      got_ids = RawIds(*e);
    }
    const std::string what = std::string(r.prefix ? "prefix '" + *r.prefix + "'" : "range") +
                             (r.lo ? " lo " + Render(r.lo->value) + (r.lo->inclusive ? "]" : ")") : "") +
                             (r.hi ? " hi " + Render(r.hi->value) + (r.hi->inclusive ? "]" : ")") : "") +
                             (r.descending ? " desc" : "") + " limit " + std::to_string(r.limit);
    if (got_ids != want) return where + what + ": " + RenderIds(got_ids) + " vs model " + RenderIds(want);
    auto count = vertices ? (by_name ? s.CountVerticesInRangeByIndex(spec.name, r)
                                     : s.CountVerticesInRange(spec.label, spec.keys[0], r))
                          : (by_name ? s.CountEdgesInRangeByIndex(spec.name, r)
                                     : s.CountEdgesInRange(spec.label, spec.keys[0], r));
    if (!count.ok() || *count != want_count)
      return where + what + " count " + (count.ok() ? std::to_string(*count) : count.status().ToString()) +
             " vs model " + std::to_string(want_count);
  }
  return "";
}

// The indexes, the label and type counts and the key counts; "" if equal.
std::string DiffIndexes(const Snapshot& s, const Model& m) {
  // Labels, types, keys with counts.
  std::map<std::string, std::uint64_t> labels, types;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> keys;
  for (const auto& [id, v] : m.vertices) {
    ++labels[v.label];
    for (const auto& [k, value] : v.props) ++keys[k].first;
  }
  for (const auto& [id, e] : m.edges) {
    ++types[e.type];
    for (const auto& [k, value] : e.props) ++keys[k].second;
  }
  std::map<std::string, std::uint64_t> got_labels, got_types;
  for (const LabelCount& l : s.Labels()) {
    got_labels[std::string(l.name)] = l.vertices;
    if (s.CountVertices(l.label) != l.vertices) return "CountVertices disagrees with Labels()";
  }
  for (const EdgeTypeCount& t : s.EdgeTypes()) {
    got_types[std::string(t.name)] = t.edges;
    if (s.CountEdges(t.type) != t.edges) return "CountEdges disagrees with EdgeTypes()";
  }
  if (got_labels != labels) return "Labels() differs from the model";
  if (got_types != types) return "EdgeTypes() differs from the model";
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> got_keys;
  for (const PropertyKeyCount& k : s.PropertyKeys()) got_keys[std::string(k.name)] = {k.vertices, k.edges};
  if (got_keys != keys) return "PropertyKeys() differs from the model";

  std::vector<IndexInfo> infos = s.Indexes();
  if (infos.size() != m.indexes.size())
    return "Indexes() lists " + std::to_string(infos.size()) + ", model " + std::to_string(m.indexes.size());
  std::mt19937_64 rng(m.sequence * 7919 + m.vertex_limit);
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const IndexSpec& want = m.indexes[i];
    const IndexSpec& got = infos[i].spec;
    if (got.name != want.name || got.label != want.label || got.keys != want.keys || got.kind != want.kind ||
        got.type != want.type || got.element != want.element)
      return "Indexes()[" + std::to_string(i) + "] is " + got.name + ", model " + want.name;
    if (std::string err = DiffIndex(s, m, want, infos[i], rng); !err.empty()) return err;
  }
  return "";
}

// Compares `s` with `m`; returns "" if equal, else the first difference.
std::string Diff(const Snapshot& s, const Model& m) {
  auto num = [](auto x) { return std::to_string(x); };
  if (s.sequence() != m.sequence) return "sequence " + num(s.sequence()) + " vs model " + num(m.sequence);
  if (s.vertex_count() != m.vertices.size()) {
    return "vertex_count " + num(s.vertex_count()) + " vs model " + num(m.vertices.size());
  }
  if (s.edge_count() != m.edges.size()) {
    return "edge_count " + num(s.edge_count()) + " vs model " + num(m.edges.size());
  }
  if (s.vertex_id_limit() != m.vertex_limit) {
    return "vertex_id_limit " + num(s.vertex_id_limit()) + " vs model " + num(m.vertex_limit);
  }
  if (s.edge_id_limit() != m.edge_limit) {
    return "edge_id_limit " + num(s.edge_id_limit()) + " vs model " + num(m.edge_limit);
  }

  // Live ids, ascending.
  {
    auto mit = m.vertices.begin();
    for (VertexId v : s.Vertices()) {
      if (mit == m.vertices.end() || mit->first != v.value())
        return "Vertices() has unexpected " + num(v.value());
      ++mit;
    }
    if (mit != m.vertices.end()) return "Vertices() misses " + num(mit->first);
    auto eit = m.edges.begin();
    for (EdgeId e : s.Edges()) {
      if (eit == m.edges.end() || eit->first != e.value()) return "Edges() has unexpected " + num(e.value());
      ++eit;
    }
    if (eit != m.edges.end()) return "Edges() misses " + num(eit->first);
  }

  // Name ids of the model's labels and types.
  std::map<std::string, std::uint32_t, std::less<>> type_ids;
  std::map<std::string, std::uint32_t, std::less<>> label_ids;
  for (const auto& [id, e] : m.edges) {
    if (type_ids.count(e.type)) continue;
    std::optional<EdgeTypeId> t = s.FindEdgeType(e.type);
    if (!t) return "FindEdgeType(" + e.type + ") is nullopt";
    if (s.EdgeTypeName(*t) != e.type) return "EdgeTypeName(FindEdgeType(" + e.type + ")) differs";
    type_ids[e.type] = t->value();
  }
  for (const auto& [id, v] : m.vertices) {
    if (label_ids.count(v.label)) continue;
    std::optional<LabelId> l = s.FindLabel(v.label);
    if (!l) return "FindLabel(" + v.label + ") is nullopt";
    if (s.LabelName(*l) != v.label) return "LabelName(FindLabel(" + v.label + ")) differs";
    label_ids[v.label] = l->value();
  }

  // Derived adjacency: (vertex, type id) -> entries in edge id order.
  using GroupKey = std::pair<std::uint64_t, std::uint32_t>;
  std::map<GroupKey, AdjList> out, in;
  std::map<std::uint32_t, std::vector<std::uint64_t>> edges_by_type;
  for (const auto& [id, e] : m.edges) {
    std::uint32_t t = type_ids[e.type];
    out[{e.src, t}].emplace_back(id, e.dst);
    in[{e.dst, t}].emplace_back(id, e.src);
    edges_by_type[t].push_back(id);
  }
  std::map<std::uint32_t, std::vector<std::uint64_t>> vertices_by_label;
  for (const auto& [id, v] : m.vertices) vertices_by_label[label_ids[v.label]].push_back(id);

  // One direction of one vertex: groups (membership, not order), per-type
  // spans and the degree.
  auto diff_adjacency = [&](VertexId v, Direction d,
                            const std::map<GroupKey, AdjList>& model) -> std::string {
    const char* dir = d == Direction::kOut ? "out" : "in";
    auto first = model.lower_bound({v.value(), 0});
    std::size_t model_groups = 0, model_degree = 0;
    for (auto it = first; it != model.end() && it->first.first == v.value(); ++it) {
      ++model_groups;
      model_degree += it->second.size();
      std::span<const EdgeEntry> span = s.Edges(v, d, EdgeTypeId(it->first.second));
      AdjList got;
      for (const EdgeEntry& e : span) got.emplace_back(e.edge().value(), e.neighbor().value());
      if (got != it->second) {
        return std::string(dir) + " edges of type " +
               std::string(s.EdgeTypeName(EdgeTypeId(it->first.second))) + ": " + RenderAdj(got) +
               " vs model " + RenderAdj(it->second);
      }
    }
    Adjacency adj = s.Edges(v, d);
    std::size_t groups = 0, degree = 0;
    std::set<std::uint32_t> seen_types;
    for (EdgeGroup g : adj) {
      degree += g.entries.size();
      if (g.entries.empty()) continue;  // an emptied group may linger; it shows nothing
      ++groups;
      if (!seen_types.insert(g.type.value()).second) return std::string(dir) + ": two groups of one type";
      auto it = model.find({v.value(), g.type.value()});
      if (it == model.end())
        return std::string(dir) + ": unexpected group " + std::string(s.EdgeTypeName(g.type));
      if (g.entries.size() != it->second.size() ||
          g.entries.front().edge().value() != it->second.front().first) {
        return std::string(dir) + ": group " + std::string(s.EdgeTypeName(g.type)) + " differs from its span";
      }
    }
    if (groups != model_groups)
      return std::string(dir) + ": " + num(groups) + " groups vs model " + num(model_groups);
    if (degree != model_degree || adj.degree() != model_degree) {
      return std::string(dir) + " degree " + num(adj.degree()) + " vs model " + num(model_degree);
    }
    std::size_t direct = d == Direction::kOut ? s.OutDegree(v) : s.InDegree(v);
    if (direct != model_degree)
      return std::string(dir) + "Degree() " + num(direct) + " vs model " + num(model_degree);
    return "";
  };

  for (const auto& [id, mv] : m.vertices) {
    VertexId v(id);
    std::string where = "vertex " + num(id) + ": ";
    if (!s.HasVertex(v)) return where + "HasVertex false";
    std::optional<LabelId> label = s.LabelOf(v);
    if (!label) return where + "no label";
    if (label->value() != label_ids[mv.label]) {
      return where + "label '" + std::string(s.LabelName(*label)) + "' vs model '" + mv.label + "'";
    }
    std::string err = DiffProps(s, v, mv.props);
    if (err.empty()) err = diff_adjacency(v, Direction::kOut, out);
    if (err.empty()) err = diff_adjacency(v, Direction::kIn, in);
    if (!err.empty()) return where + err;
  }

  for (const auto& [id, me] : m.edges) {
    EdgeId e(id);
    std::string where = "edge " + num(id) + ": ";
    if (!s.HasEdge(e)) return where + "HasEdge false";
    std::optional<EdgeInfo> info = s.GetEdge(e);
    if (!info) return where + "GetEdge nullopt";
    if (info->type.value() != type_ids[me.type])
      return where + "type " + std::string(s.EdgeTypeName(info->type));
    if (info->source.value() != me.src || info->target.value() != me.dst) {
      return where + "endpoints " + num(info->source.value()) + "->" + num(info->target.value()) +
             " vs model " + num(me.src) + "->" + num(me.dst);
    }
    std::string err = DiffProps(s, e, me.props);
    if (!err.empty()) return where + err;
  }

  // Filtered iteration.
  for (const auto& [label, ids] : vertices_by_label) {
    std::vector<std::uint64_t> got;
    for (VertexId v : s.Vertices(LabelId(label))) got.push_back(v.value());
    if (got != ids) return "Vertices(" + std::string(s.LabelName(LabelId(label))) + ") differs";
  }
  for (const auto& [type, ids] : edges_by_type) {
    std::vector<std::uint64_t> got;
    for (EdgeId e : s.Edges(EdgeTypeId(type))) got.push_back(e.value());
    if (got != ids) return "Edges(" + std::string(s.EdgeTypeName(EdgeTypeId(type))) + ") differs";
  }
  return DiffIndexes(s, m);
}

// ------------------------------------------------------------ the generator

const std::vector<std::string> kLabels = {"Person", "City", "Thing", "Ünïcödé", "L"};
const std::vector<std::string> kTypes = {"KNOWS", "LIKES", "LOCATED_IN", "自己"};
const std::vector<std::string> kKeys = {"name",   "age",  "score", "tag", "data", "vec",
                                        "κλειδί", "名前", "flag",  "x",   "y",    "z"};
const std::vector<std::string> kBadUtf8 = {
    "\x80", "a\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "ab\xE2\x82", "\xF8\x88\x80\x80\x80", "\xFF"};

// What one generated batch should do.
struct Expectation {
  std::optional<StatusCode> error;  // nullopt: must commit
  std::string invalid_op;           // description of the invalid op, if any
  std::vector<VertexId> vertices;   // predicted CommitInfo
  std::vector<bool> found;          // CommitInfo::vertex_found
  std::vector<EdgeId> edges;
  std::vector<bool> edge_found;  // CommitInfo::edge_found
  Model after;                   // the model if it commits
};

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  // Generates one batch against `model`; `invalid` asks for one invalid op.
  WriteBatch Next(const Model& model, bool invalid, Expectation* exp) {
    work_ = model;
    new_v_.clear();
    new_e_.clear();
    exp->error.reset();
    exp->invalid_op.clear();
    exp->vertices.clear();
    exp->found.clear();
    base_ = &model;
    upserted_.clear();
    upserted_edges_.clear();
    plain_ops_ = 0;
    failing_expectation_ = false;
    exp->edges.clear();
    WriteBatch b;
    const int n = Uniform(1, 20);
    // A value of the wrong type for a typed index goes last, so that no
    // later operation of the batch overwrites it (validation judges the
    // batch's final state).
    const bool wrong_type = invalid && Chance(0.2) && TypedIndex() != nullptr;
    const int invalid_at = invalid && !wrong_type ? Uniform(0, n - 1) : -1;
    for (int i = 0; i < n; ++i) {
      if (i == invalid_at) {
        Invalid(b, exp);
      } else {
        Valid(b, exp);
      }
    }
    if (wrong_type) WrongType(b, exp);
    // A batch that would change nothing (only expectations, or upserts
    // that found their vertex with nothing to set) commits without a
    // sequence number; keep every generated batch a change.
    if (plain_ops_ == 0) DoAddVertex(b, exp);
    // A batch valid op by op may still break a unique index.
    if (!exp->error) {
      std::string why;
      if (std::optional<StatusCode> f = BatchIndexFailure(work_, &why)) {
        exp->error = f;
        exp->invalid_op = "index constraint" + (why.empty() ? "" : " (" + why + ")");
      }
    }
    // Expectations are checked last, once everything else passed.
    if (failing_expectation_) ++failing_expectations;
    if (!exp->error && failing_expectation_) {
      exp->error = StatusCode::kAborted;
      exp->invalid_op = "a failing expectation";
    }
    exp->after = std::move(work_);
    return b;
  }

  // How many upserts found a vertex / added one, and how many expectations
  // were generated failing.
  std::uint64_t upserts_found = 0, upserts_added = 0, failing_expectations = 0;
  std::uint64_t edge_upserts_found = 0, edge_upserts_added = 0;  // of those, edge upserts

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Uniform(0, static_cast<int>(v.size()) - 1)];
  }

 private:
  static constexpr std::size_t kTargetVertices = 250;

  VertexRef VRef(std::uint64_t id) {
    auto it = new_v_.find(id);
    if (it != new_v_.end()) return it->second;
    return VertexId(id);
  }
  EdgeRef ERef(std::uint64_t id) {
    auto it = new_e_.find(id);
    if (it != new_e_.end()) return it->second;
    return EdgeId(id);
  }
  std::optional<std::uint64_t> LiveVertex() {
    if (work_.vertices.empty()) return std::nullopt;
    auto it = work_.vertices.begin();
    std::advance(it, Uniform(0, static_cast<int>(work_.vertices.size()) - 1));
    return it->first;
  }
  std::optional<std::uint64_t> LiveEdge() {
    if (work_.edges.empty()) return std::nullopt;
    auto it = work_.edges.begin();
    std::advance(it, Uniform(0, static_cast<int>(work_.edges.size()) - 1));
    return it->first;
  }
  // An id that names no live vertex: a removed one, or one far past every id
  // this batch could be assigned.
  std::uint64_t DeadVertex() {
    for (int tries = 0; tries < 8 && work_.vertex_limit > 0; ++tries) {
      std::uint64_t id = static_cast<std::uint64_t>(Uniform(0, static_cast<int>(work_.vertex_limit) - 1));
      if (!work_.vertices.count(id)) return id;
    }
    return work_.vertex_limit + 1'000'000 + static_cast<std::uint64_t>(Uniform(0, 1000));
  }
  std::uint64_t DeadEdge() {
    for (int tries = 0; tries < 8 && work_.edge_limit > 0; ++tries) {
      std::uint64_t id = static_cast<std::uint64_t>(Uniform(0, static_cast<int>(work_.edge_limit) - 1));
      if (!work_.edges.count(id)) return id;
    }
    return work_.edge_limit + 1'000'000 + static_cast<std::uint64_t>(Uniform(0, 1000));
  }

  std::string RandomUtf8(int max_len) {
    static const std::vector<std::string> kPieces = {"a", "b",  "z", " ",    std::string("\0", 1), "é", "ß",
                                                     "€", "名", "🎉", "\x7F", "\xF4\x8F\xBF\xBF"};
    std::string s;
    int len = Uniform(0, max_len);
    for (int i = 0; i < len; ++i) s += Pick(kPieces);
    return s;
  }

  PropertyValue RandomValue() {
    int kind = Uniform(0, 99);
    if (kind < 5) return PropertyValue();
    if (kind < 15) return PropertyValue(Chance(0.5));
    if (kind < 40) {
      if (Chance(0.1)) {
        return PropertyValue(Chance(0.5) ? std::numeric_limits<std::int64_t>::min()
                                         : std::numeric_limits<std::int64_t>::max());
      }
      return PropertyValue(std::uniform_int_distribution<std::int64_t>(-1'000'000, 1'000'000)(rng_));
    }
    if (kind < 60) {
      switch (Uniform(0, 5)) {
        case 0: return PropertyValue(-0.0);
        case 1: return PropertyValue(std::numeric_limits<double>::denorm_min() * Uniform(1, 100));
        case 2: return PropertyValue(std::numeric_limits<double>::max());
        default: return PropertyValue(std::uniform_real_distribution<double>(-1e6, 1e6)(rng_));
      }
    }
    if (kind < 80) return PropertyValue(RandomUtf8(12));
    if (kind < 90) {
      Bytes b(static_cast<std::size_t>(Uniform(0, 24)));
      for (std::byte& x : b) x = static_cast<std::byte>(Uniform(0, 255));
      return PropertyValue(std::move(b));
    }
    if (kind < 95) {
      StringList list(static_cast<std::size_t>(Uniform(0, 4)));
      for (std::string& s : list) s = RandomUtf8(Uniform(0, 6));
      return PropertyValue(std::move(list));
    }
    FloatVector v(static_cast<std::size_t>(Uniform(0, 8)));
    for (float& x : v) x = std::uniform_real_distribution<float>(-10, 10)(rng_);
    if (!v.empty() && Chance(0.2)) v[0] = -0.0f;
    return PropertyValue(std::move(v));
  }

  // A value for `key` of an element of `label` (kind `kind`): "age",
  // "score" and "name" keep one type (or null), so typed indexes on them can
  // exist; a key some unique index covers draws from a small pool now and
  // then, so batches collide.
  PropertyValue ValueFor(const std::string& key, const std::string& label, ElementKind kind) {
    bool unique = false;
    for (const IndexSpec& spec : work_.indexes)
      if (spec.kind == IndexKind::kUnique && spec.element == kind && spec.label == label &&
          std::find(spec.keys.begin(), spec.keys.end(), key) != spec.keys.end())
        unique = true;
    const bool pooled = unique && Chance(0.3);
    if (Chance(0.08)) return PropertyValue();
    if (key == "age") return PropertyValue(std::int64_t{pooled ? Uniform(1, 3) : Uniform(-1000, 1000)});
    if (key == "score")
      return PropertyValue(pooled ? 0.5 * Uniform(1, 3)
                                  : std::uniform_real_distribution<double>(-1e3, 1e3)(rng_));
    if (key == "name") return PropertyValue(pooled ? "p" + std::to_string(Uniform(1, 3)) : RandomUtf8(6));
    if (pooled) return PropertyValue(std::int64_t{Uniform(1, 3)});
    return RandomValue();
  }

  // 0-4 properties with distinct keys.
  std::vector<Property> RandomProps(int max, const std::string& label, ElementKind kind) {
    std::vector<Property> out;
    std::set<std::string> used;
    int n = Uniform(0, max);
    for (int i = 0; i < n; ++i) {
      const std::string& k = Pick(kKeys);
      if (!used.insert(k).second) continue;
      out.push_back({k, ValueFor(k, label, kind)});
    }
    return out;
  }
  static PropMap ToMap(const std::vector<Property>& props) {
    PropMap m;
    for (const Property& p : props) m[p.key] = p.value;
    return m;
  }

  void DoAddVertex(WriteBatch& b, Expectation* exp) {
    std::string label = Pick(kLabels);
    std::vector<Property> props = RandomProps(4, label, ElementKind::kVertex);
    NewVertex h = b.AddVertex(label, props);
    std::uint64_t id = work_.AddVertex(label, ToMap(props));
    new_v_[id] = h;
    exp->vertices.push_back(VertexId(id));
    exp->found.push_back(false);
    ++plain_ops_;
  }

  // The unique vertex indexes of the model.
  std::vector<const IndexSpec*> UniqueVertexIndexes() const {
    std::vector<const IndexSpec*> out;
    for (const IndexSpec& spec : work_.indexes)
      if (spec.kind == IndexKind::kUnique && spec.element == ElementKind::kVertex) out.push_back(&spec);
    return out;
  }

  // Key values for `spec`: a vertex's of the batch's starting state, or
  // fresh ones; nullopt if they are not a valid lookup key.
  std::optional<std::vector<Property>> KeysFor(const IndexSpec& spec) {
    std::vector<Property> keys;
    if (Chance(0.6) && !base_->vertices.empty()) {
      auto it = base_->vertices.begin();
      std::advance(it, Uniform(0, static_cast<int>(base_->vertices.size()) - 1));
      if (it->second.label == spec.label && IndexedKey(it->second.props, spec))
        for (const std::string& k : spec.keys) keys.push_back({k, it->second.props.at(k)});
    }
    if (keys.empty())
      for (const std::string& k : spec.keys)
        keys.push_back({k, ValueFor(k, spec.label, ElementKind::kVertex)});
    for (const Property& p : keys)
      if (p.value.is_null() || p.value.type() == ValueType::kFloatVector ||
          p.value.type() == ValueType::kStringList || (spec.type && p.value.type() != *spec.type))
        return std::nullopt;
    if (keys.size() > 1 && Chance(0.5)) std::reverse(keys.begin(), keys.end());  // any order
    return keys;
  }

  // The vertex of the batch's starting state holding `key` in `spec`.
  std::optional<std::uint64_t> BaseHolder(const IndexSpec& spec, const KeyTuple& key) const {
    for (const auto& [id, v] : base_->vertices) {
      if (v.label != spec.label) continue;
      if (auto t = IndexedKey(v.props, spec); t && CompareTuples(*t, key) == 0) return id;
    }
    return std::nullopt;
  }

  // An upsert through a random unique vertex index; false if none fits.
  bool DoUpsert(WriteBatch& b, Expectation* exp) {
    std::vector<const IndexSpec*> unique = UniqueVertexIndexes();
    if (unique.empty()) return false;
    const IndexSpec* picked =
        unique[static_cast<std::size_t>(Uniform(0, static_cast<int>(unique.size()) - 1))];
    // The engine resolves an upsert through the first ready unique index
    // of its label over exactly its keys (Resolver::CoveringIndex): two
    // such indexes (seed 2951553913 made ix3 and ix11 on L(y)) name one
    // vertex for one key, so resolve through that one too.
    auto same_keys = [](const IndexSpec& x, const IndexSpec& y) {
      return x.label == y.label && x.keys.size() == y.keys.size() &&
             std::all_of(x.keys.begin(), x.keys.end(), [&y](const std::string& k) {
               return std::find(y.keys.begin(), y.keys.end(), k) != y.keys.end();
             });
    };
    for (const IndexSpec* u : unique) {
      if (same_keys(*u, *picked)) {
        picked = u;
        break;
      }
    }
    const IndexSpec& spec = *picked;
    std::optional<std::vector<Property>> keys = KeysFor(spec);
    if (!keys) return false;
    const KeyTuple tuple = *IndexedKey(ToMap(*keys), spec);
    // Resolution: the batch's earlier upserts, then the starting state.
    std::optional<std::uint64_t> target;
    bool found = false;
    for (const Upserted& u : upserted_)
      if (u.index == spec.name && CompareTuples(u.key, tuple) == 0) {
        target = u.id;
        found = u.found;
      }
    const bool repeat = target.has_value();
    if (!target) {
      target = BaseHolder(spec, tuple);
      found = target.has_value();
    }
    if (target && !work_.vertices.count(*target)) return false;  // removed earlier: NotFound
    std::vector<Property> props;
    for (Property& p : RandomProps(3, spec.label, ElementKind::kVertex))
      if (std::find(spec.keys.begin(), spec.keys.end(), p.key) == spec.keys.end())
        props.push_back(std::move(p));
    const bool replace = Chance(0.3);
    NewVertex h =
        b.UpsertVertex(spec.label, *keys, props, replace ? UpsertMode::kReplace : UpsertMode::kMerge);
    if (!target) {
      std::vector<Property> all = *keys;
      all.insert(all.end(), props.begin(), props.end());
      const std::uint64_t id = work_.AddVertex(spec.label, ToMap(all));
      new_v_[id] = h;
      exp->vertices.push_back(VertexId(id));
      exp->found.push_back(false);
      upserted_.push_back({spec.name, tuple, id, false});
      ++plain_ops_;
      ++upserts_added;
      return true;
    }
    PropMap& now = work_.vertices.at(*target).props;
    if (replace) {
      PropMap kept;
      for (const Property& k : *keys)
        if (auto it = now.find(k.key); it != now.end()) kept.insert(*it);
      if (kept.size() != now.size()) ++plain_ops_;
      now = std::move(kept);
    }
    // Keys keep their value when it is the same key (the engine sets them
    // again only when the batch touched them, to the same key).
    for (const Property& k : *keys)
      if (auto it = now.find(k.key); it == now.end() || CompareValues(it->second, k.value) != 0) {
        now[k.key] = k.value;
        ++plain_ops_;
      }
    for (const Property& p : props) now[p.key] = p.value;
    if (!props.empty()) ++plain_ops_;
    exp->vertices.push_back(VertexId(*target));
    exp->found.push_back(found);
    ++upserts_found;
    if (!repeat) upserted_.push_back({spec.name, tuple, *target, found});
    return true;
  }

  // An edge upsert through a random edge-endpoint constraint, between two
  // vertices of the batch's starting state that are still live; false if
  // none fits (or the edge it would find was removed earlier: NotFound,
  // left to the unit tests).
  bool DoUpsertEdge(WriteBatch& b, Expectation* exp) {
    std::vector<const IndexSpec*> constraints;
    for (const IndexSpec& spec : work_.indexes)
      if (spec.kind == IndexKind::kUniqueEndpoints) constraints.push_back(&spec);
    if (constraints.empty() || base_->vertices.empty()) return false;
    const IndexSpec& spec =
        *constraints[static_cast<std::size_t>(Uniform(0, static_cast<int>(constraints.size()) - 1))];
    std::uint64_t src = 0, dst = 0;
    // Half the time the pair of an edge of the type in the starting state.
    std::vector<const MEdge*> of_type;
    for (const auto& [id, e] : base_->edges)
      if (e.type == spec.label) of_type.push_back(&e);
    if (!of_type.empty() && Chance(0.5)) {
      const MEdge& e = *of_type[static_cast<std::size_t>(Uniform(0, static_cast<int>(of_type.size()) - 1))];
      src = e.src;
      dst = e.dst;
    } else {
      auto pick = [&] {
        auto it = base_->vertices.begin();
        std::advance(it, Uniform(0, static_cast<int>(base_->vertices.size()) - 1));
        return it->first;
      };
      src = pick();
      dst = Chance(0.1) ? src : pick();
    }
    if (!work_.vertices.count(src) || !work_.vertices.count(dst)) return false;  // removed earlier
    // Resolution: the batch's earlier upserts, then the starting state.
    std::optional<std::uint64_t> target;
    bool found = false;
    for (const UpsertedEdge& u : upserted_edges_)
      if (u.type == spec.label && u.src == src && u.dst == dst) {
        target = u.id;
        found = u.found;
      }
    const bool repeat = target.has_value();
    if (!target)
      for (const auto& [id, e] : base_->edges)
        if (e.type == spec.label && e.src == src && e.dst == dst) {
          target = id;
          found = true;
          break;
        }
    if (target && !work_.edges.count(*target)) return false;  // removed earlier: NotFound
    std::vector<Property> props = RandomProps(3, spec.label, ElementKind::kEdge);
    const bool replace = Chance(0.3);
    NewEdge h = b.UpsertEdge(spec.label, VertexId(src), VertexId(dst), props,
                             replace ? UpsertMode::kReplace : UpsertMode::kMerge);
    if (!target) {
      const std::uint64_t id = work_.AddEdge(spec.label, src, dst, ToMap(props));
      new_e_[id] = h;
      exp->edges.push_back(EdgeId(id));
      exp->edge_found.push_back(false);
      upserted_edges_.push_back({spec.label, src, dst, id, false});
      ++plain_ops_;
      ++upserts_added;
      ++edge_upserts_added;
      return true;
    }
    PropMap& now = work_.edges.at(*target).props;
    if (replace) {
      PropMap kept;
      for (const Property& p : props)
        if (auto it = now.find(p.key); it != now.end()) kept.insert(*it);
      if (kept.size() != now.size()) ++plain_ops_;
      now = std::move(kept);
    }
    for (const Property& p : props) now[p.key] = p.value;
    if (!props.empty()) ++plain_ops_;
    exp->edges.push_back(EdgeId(*target));
    exp->edge_found.push_back(found);
    ++upserts_found;
    ++edge_upserts_found;
    if (!repeat) upserted_edges_.push_back({spec.label, src, dst, *target, found});
    return true;
  }

  // One expectation against the batch's starting state; fails on purpose
  // now and then (the batch must then abort, unless something else fails
  // first).
  void DoExpect(WriteBatch& b) {
    const bool fail = Chance(0.15);
    const PropertyValue never("\x01never");
    auto base_vertex = [&]() -> std::optional<std::uint64_t> {
      if (base_->vertices.empty()) return std::nullopt;
      auto it = base_->vertices.begin();
      std::advance(it, Uniform(0, static_cast<int>(base_->vertices.size()) - 1));
      return it->first;
    };
    const std::uint64_t dead = base_->vertex_limit + 1'000'000;
    switch (Uniform(0, 3)) {
      case 0: {
        std::optional<std::uint64_t> v = base_vertex();
        if (!v) break;
        const PropMap& props = base_->vertices.at(*v).props;
        const std::string key = !props.empty() && Chance(0.7) ? props.begin()->first : Pick(kKeys);
        auto it = props.find(key);
        if (it == props.end()) {
          fail ? b.ExpectProperty(VertexId(*v), key, 1) : b.ExpectNoProperty(VertexId(*v), key);
        } else {
          fail ? b.ExpectProperty(VertexId(*v), key, never) : b.ExpectProperty(VertexId(*v), key, it->second);
        }
        failing_expectation_ |= fail;
        return;
      }
      case 1: {
        if (base_->edges.empty()) break;
        auto it = base_->edges.begin();
        std::advance(it, Uniform(0, static_cast<int>(base_->edges.size()) - 1));
        const EdgeId e(it->first);
        if (it->second.props.empty()) {
          fail ? b.ExpectProperty(e, "x", never) : b.ExpectNoProperty(e, "x");
        } else {
          const auto& [key, value] = *it->second.props.begin();
          fail ? b.ExpectNoProperty(e, key) : b.ExpectProperty(e, key, value);
        }
        failing_expectation_ |= fail;
        return;
      }
      case 2: {
        std::optional<std::uint64_t> v = base_vertex();
        if (!v) break;
        if (Chance(0.5)) {
          fail ? b.ExpectMissing(VertexId(*v)) : b.ExpectExists(VertexId(*v));
        } else {
          fail ? b.ExpectExists(VertexId(dead)) : b.ExpectMissing(VertexId(dead));
        }
        failing_expectation_ |= fail;
        return;
      }
      default: {
        std::vector<const IndexSpec*> unique = UniqueVertexIndexes();
        if (unique.empty()) break;
        const IndexSpec& spec =
            *unique[static_cast<std::size_t>(Uniform(0, static_cast<int>(unique.size()) - 1))];
        std::optional<std::vector<Property>> keys = KeysFor(spec);
        if (!keys) break;
        b.ExpectKeyFree(spec.label, *keys);
        failing_expectation_ |= BaseHolder(spec, *IndexedKey(ToMap(*keys), spec)).has_value();
        return;
      }
    }
    b.ExpectMissing(VertexId(dead));
  }

  void Valid(WriteBatch& b, Expectation* exp) {
    if (work_.vertices.size() < 3) return DoAddVertex(b, exp);
    const bool many_v = work_.vertices.size() > kTargetVertices;
    const bool many_e = work_.edges.size() > 2 * kTargetVertices;
    const int weights[] = {
        many_v ? 6 : 20,   // 0 add vertex
        many_e ? 10 : 25,  // 1 add edge
        15,                // 2 set vertex property
        10,                // 3 set edge property
        5,                 // 4 remove vertex property
        4,                 // 5 remove edge property
        many_e ? 20 : 6,   // 6 remove edge
        many_v ? 12 : 3,   // 7 remove vertex
        many_v
            ? 3
            : 8,  // 8 upsert vertex or edge (if a unique vertex index or an edge-endpoint constraint exists)
        5,        // 9 an expectation
        4,        // 10 a run of property sets and removals on one element
    };
    std::discrete_distribution<int> dist(std::begin(weights), std::end(weights));
    int op = dist(rng_);
    if ((op == 3 || op == 5 || op == 6) && work_.edges.empty()) op = 1;
    if ((op >= 1 && op <= 7) || op == 10) ++plain_ops_;  // DoAddVertex and DoUpsert count their own
    switch (op) {
      case 0: return DoAddVertex(b, exp);
      case 8:
        if (Chance(0.4) ? !DoUpsertEdge(b, exp) && !DoUpsert(b, exp)
                        : !DoUpsert(b, exp) && !DoUpsertEdge(b, exp))
          DoAddVertex(b, exp);
        return;
      case 9: return DoExpect(b);
      case 10: return DoPropertyRun(b);
      case 1: {
        std::uint64_t src = *LiveVertex();
        std::uint64_t dst = *LiveVertex();
        if (Chance(0.1)) dst = src;                 // self-loop
        if (Chance(0.1) && !work_.edges.empty()) {  // parallel to an existing edge
          const MEdge& other = work_.edges.at(*LiveEdge());
          src = other.src;
          dst = other.dst;
        }
        std::string type = Pick(kTypes);
        std::vector<Property> props = RandomProps(3, type, ElementKind::kEdge);
        NewEdge h = b.AddEdge(type, VRef(src), VRef(dst), props);
        std::uint64_t id = work_.AddEdge(type, src, dst, ToMap(props));
        new_e_[id] = h;
        exp->edges.push_back(EdgeId(id));
        exp->edge_found.push_back(false);
        return;
      }
      case 2: {
        std::uint64_t v = *LiveVertex();
        std::string key = Pick(kKeys);
        PropertyValue value = ValueFor(key, work_.vertices[v].label, ElementKind::kVertex);
        b.SetProperty(VRef(v), key, value);
        work_.vertices[v].props[key] = std::move(value);
        return;
      }
      case 3: {
        std::uint64_t e = *LiveEdge();
        std::string key = Pick(kKeys);
        PropertyValue value = ValueFor(key, work_.edges[e].type, ElementKind::kEdge);
        b.SetProperty(ERef(e), key, value);
        work_.edges[e].props[key] = std::move(value);
        return;
      }
      case 4: {
        std::uint64_t v = *LiveVertex();
        auto& props = work_.vertices[v].props;
        std::string key = (!props.empty() && Chance(0.7)) ? props.begin()->first : Pick(kKeys);
        b.RemoveProperty(VRef(v), key);
        props.erase(key);
        return;
      }
      case 5: {
        std::uint64_t e = *LiveEdge();
        auto& props = work_.edges[e].props;
        std::string key = (!props.empty() && Chance(0.7)) ? props.rbegin()->first : Pick(kKeys);
        b.RemoveProperty(ERef(e), key);
        props.erase(key);
        return;
      }
      case 6: {
        std::uint64_t e = *LiveEdge();
        b.RemoveEdge(ERef(e));
        work_.edges.erase(e);
        return;
      }
      default: {
        std::uint64_t v = *LiveVertex();
        b.RemoveVertex(VRef(v));
        work_.RemoveVertex(v);
        return;
      }
    }
  }

  // Several changes to one element's properties, which the engine applies
  // together as one new block at the element's last change
  // (BatchProcessor::ApplyPropertyChanges): sets and removals of a few
  // keys, so a key is often set twice, set then removed, or removed while
  // absent; often with sets of other vertices' properties between them.
  void DoPropertyRun(WriteBatch& b) {
    const bool vertex = work_.edges.empty() || Chance(0.6);
    const std::uint64_t id = vertex ? *LiveVertex() : *LiveEdge();
    auto& props = vertex ? work_.vertices[id].props : work_.edges[id].props;
    const std::string& owner = vertex ? work_.vertices[id].label : work_.edges[id].type;
    const int n = 2 + static_cast<int>(rng_() % 8);
    const bool interleaved = Chance(0.5);
    for (int i = 0; i < n; ++i) {
      if (interleaved && i > 0) {
        const std::uint64_t other = *LiveVertex();
        MVertex& w = work_.vertices[other];
        std::string key = Pick(kKeys);
        PropertyValue value = ValueFor(key, w.label, ElementKind::kVertex);
        b.SetProperty(VRef(other), key, value);
        w.props[key] = std::move(value);
      }
      std::string key = Pick(kKeys);
      if (Chance(0.3)) {
        if (vertex) {
          b.RemoveProperty(VRef(id), key);
        } else {
          b.RemoveProperty(ERef(id), key);
        }
        props.erase(key);
        continue;
      }
      PropertyValue value = ValueFor(key, owner, vertex ? ElementKind::kVertex : ElementKind::kEdge);
      if (vertex) {
        b.SetProperty(VRef(id), key, value);
      } else {
        b.SetProperty(ERef(id), key, value);
      }
      props[key] = std::move(value);
    }
  }

  void Fail(Expectation* exp, StatusCode code, std::string what) {
    exp->error = code;
    exp->invalid_op = std::move(what);
  }

  // Records one invalid operation. The operation itself changes nothing in
  // work_, except the valid first half of a double removal.
  void Invalid(WriteBatch& b, Expectation* exp) {
    ++plain_ops_;
    const StatusCode kNF = StatusCode::kNotFound;
    const StatusCode kIA = StatusCode::kInvalidArgument;
    int kind = Uniform(0, 11);
    if ((kind == 2 || kind == 5 || kind == 6 || kind == 7 || kind == 9) && work_.vertices.empty()) kind = 0;
    if ((kind == 3 || kind == 10) && work_.edges.empty()) kind = 1;
    switch (kind) {
      case 0: {
        std::uint64_t id = DeadVertex();
        b.RemoveVertex(VertexId(id));
        return Fail(exp, kNF, "RemoveVertex(dead " + std::to_string(id) + ")");
      }
      case 1: {
        std::uint64_t id = DeadEdge();
        b.RemoveEdge(EdgeId(id));
        return Fail(exp, kNF, "RemoveEdge(dead " + std::to_string(id) + ")");
      }
      case 2: {
        std::uint64_t v = *LiveVertex();
        b.RemoveVertex(VRef(v));
        VertexRef ref = VRef(v);
        work_.RemoveVertex(v);
        b.RemoveVertex(ref);
        return Fail(exp, kNF, "RemoveVertex twice " + std::to_string(v));
      }
      case 3: {
        std::uint64_t e = *LiveEdge();
        b.RemoveEdge(ERef(e));
        EdgeRef ref = ERef(e);
        work_.edges.erase(e);
        b.RemoveEdge(ref);
        return Fail(exp, kNF, "RemoveEdge twice " + std::to_string(e));
      }
      case 4: {
        std::uint64_t dead = DeadVertex();
        if (work_.vertices.empty()) {
          b.AddEdge(Pick(kTypes), VertexId(dead), VertexId(dead));
        } else if (Chance(0.5)) {
          b.AddEdge(Pick(kTypes), VertexId(dead), VRef(*LiveVertex()));
        } else {
          b.AddEdge(Pick(kTypes), VRef(*LiveVertex()), VertexId(dead));
        }
        return Fail(exp, kNF, "AddEdge with dead endpoint " + std::to_string(dead));
      }
      case 5: {
        // Endpoint removed earlier in this batch.
        std::uint64_t v = *LiveVertex();
        b.RemoveVertex(VRef(v));
        VertexRef ref = VRef(v);
        work_.RemoveVertex(v);
        std::optional<std::uint64_t> other = LiveVertex();
        b.AddEdge(Pick(kTypes), other ? VRef(*other) : ref, ref);
        return Fail(exp, kNF, "AddEdge to vertex removed in batch " + std::to_string(v));
      }
      case 6:
        if (Chance(0.5)) {
          b.SetProperty(VertexId(DeadVertex()), Pick(kKeys), RandomValue());
          return Fail(exp, kNF, "SetProperty on dead vertex");
        } else {
          b.SetProperty(EdgeId(DeadEdge()), Pick(kKeys), RandomValue());
          return Fail(exp, kNF, "SetProperty on dead edge");
        }
      case 7: {
        const double bad[] = {std::nan(""), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity()};
        double x = bad[Uniform(0, 2)];
        if (Chance(0.5)) {
          b.SetProperty(VRef(*LiveVertex()), Pick(kKeys), x);
        } else {
          b.AddVertex(Pick(kLabels), {{Pick(kKeys), x}});
        }
        return Fail(exp, kIA, "non-finite double");
      }
      case 8: {
        FloatVector v = {1.0f, 2.0f, 3.0f};
        v[Uniform(0, 2)] = Chance(0.5) ? std::nanf("") : std::numeric_limits<float>::infinity();
        b.AddVertex(Pick(kLabels), {{"vec", v}});
        return Fail(exp, kIA, "non-finite float in vector");
      }
      case 9: {
        const std::string& bad = Pick(kBadUtf8);
        switch (Uniform(0, 3)) {
          case 0: b.AddVertex(bad); break;
          case 1: b.AddEdge(bad, VRef(*LiveVertex()), VRef(*LiveVertex())); break;
          case 2: b.SetProperty(VRef(*LiveVertex()), bad, 1); break;
          default: b.SetProperty(VRef(*LiveVertex()), Pick(kKeys), "ok" + bad); break;
        }
        return Fail(exp, kIA, "bad UTF-8");
      }
      case 10: {
        // Edge whose endpoint this batch removed earlier.
        std::uint64_t e = *LiveEdge();
        const MEdge edge = work_.edges.at(e);
        EdgeRef eref = ERef(e);
        std::uint64_t v = Chance(0.5) ? edge.src : edge.dst;
        b.RemoveVertex(VRef(v));
        work_.RemoveVertex(v);
        b.RemoveEdge(eref);
        return Fail(exp, kNF, "RemoveEdge after its endpoint was removed");
      }
      default: {
        // Duplicate key in an add's property list.
        std::string key = Pick(kKeys);
        b.AddVertex(Pick(kLabels), {{key, 1}, {key, 2}});
        return Fail(exp, kIA, "duplicate key in AddVertex");
      }
    }
  }

  const IndexSpec* TypedIndex() {
    std::vector<const IndexSpec*> typed;
    for (const IndexSpec& spec : work_.indexes)
      if (spec.type && (spec.element == ElementKind::kVertex || work_.vertices.size() >= 1))
        typed.push_back(&spec);
    return typed.empty() ? nullptr
                         : typed[static_cast<std::size_t>(Uniform(0, static_cast<int>(typed.size()) - 1))];
  }

  // Adds an element of a typed index's label whose key holds another type.
  void WrongType(WriteBatch& b, Expectation* exp) {
    const IndexSpec& spec = *TypedIndex();
    PropertyValue wrong =
        *spec.type == ValueType::kString ? PropertyValue(std::int64_t{7}) : PropertyValue("seven");
    std::vector<Property> props = {{spec.keys[0], wrong}};
    if (spec.element == ElementKind::kVertex) {
      b.AddVertex(spec.label, props);
    } else {
      b.AddEdge(spec.label, VRef(*LiveVertex()), VRef(*LiveVertex()), props);
    }
    Fail(exp, StatusCode::kInvalidArgument, "wrong type for index " + spec.name);
  }

  std::mt19937_64 rng_;
  Model work_;
  std::map<std::uint64_t, NewVertex> new_v_;
  std::map<std::uint64_t, NewEdge> new_e_;
  // This batch's upserts so far (their index, key and vertex).
  struct Upserted {
    std::string index;
    KeyTuple key;
    std::uint64_t id;
    bool found;
  };
  const Model* base_ = nullptr;  // the state the batch starts from
  std::vector<Upserted> upserted_;
  // This batch's edge upserts so far (their type, pair and edge).
  struct UpsertedEdge {
    std::string type;
    std::uint64_t src, dst, id;
    bool found;
  };
  std::vector<UpsertedEdge> upserted_edges_;
  // Operations the resolved batch surely holds (an upsert may add more).
  int plain_ops_ = 0;
  bool failing_expectation_ = false;
};

// Checks a write's result against its expectation; returns "" if it matches.
std::string CheckResult(const Result<CommitInfo>& r, const Expectation& exp, SequenceNumber expected_seq) {
  if (exp.error) {
    if (r.ok()) return "batch with invalid op (" + exp.invalid_op + ") committed";
    if (r.status().code() != *exp.error) {
      return "invalid op (" + exp.invalid_op + "): got " + r.status().ToString() + ", expected " +
             std::string(StatusCodeName(*exp.error));
    }
    if (r.status().message().empty()) return "empty error message";
    return "";
  }
  if (!r.ok()) return "valid batch failed: " + r.status().ToString();
  if (r->sequence != expected_seq) {
    return "sequence " + std::to_string(r->sequence) + ", expected " + std::to_string(expected_seq);
  }
  if (r->vertices != exp.vertices) return "CommitInfo.vertices differ from the predicted ids";
  if (r->vertex_found != exp.found) return "CommitInfo.vertex_found differs from the prediction";
  if (r->edges != exp.edges) return "CommitInfo.edges differ from the predicted ids";
  if (r->edge_found != exp.edge_found) return "CommitInfo.edge_found differs from the prediction";
  return "";
}

// One index operation: creates an index with a random spec (sometimes a
// name in use) or drops one (sometimes an unknown name), and checks the
// status and the sequence numbers it took against the model's prediction;
// updates the model. Returns "" if the graph did as predicted.
std::string IndexStep(Graph& graph, Generator& gen, Model& model, int* counter) {
  static const std::vector<std::string> kIndexKeys = {"name", "age", "score", "tag", "x", "y"};
  const SequenceNumber before = graph.GetSnapshot().sequence();
  if (before != model.sequence) return "graph and model out of step before an index step";
  if (!model.indexes.empty() && gen.Chance(model.indexes.size() > 8 ? 0.7 : 0.35)) {
    const bool known = gen.Chance(0.8);
    std::string name = known ? gen.Pick(model.indexes).name : "unknown" + std::to_string((*counter)++);
    Status s = graph.DropIndex(name);
    if (known != s.ok() || (!known && s.code() != StatusCode::kNotFound))
      return "DropIndex(" + name + "): " + s.ToString();
    if (known) {
      model.indexes.erase(std::find_if(model.indexes.begin(), model.indexes.end(),
                                       [&](const IndexSpec& x) { return x.name == name; }));
      ++model.sequence;
    }
  } else {
    IndexSpec spec;
    spec.element = gen.Chance(0.7) ? ElementKind::kVertex : ElementKind::kEdge;
    spec.label = spec.element == ElementKind::kVertex ? gen.Pick(kLabels) : gen.Pick(kTypes);
    spec.keys.push_back(gen.Pick(kIndexKeys));
    if (gen.Chance(0.2)) {
      std::string second = gen.Pick(kIndexKeys);
      if (second != spec.keys[0]) spec.keys.push_back(second);
    }
    spec.kind = static_cast<IndexKind>(gen.Uniform(0, 2));
    if (spec.element == ElementKind::kEdge && gen.Chance(0.3)) {  // an edge-endpoint constraint
      spec.kind = IndexKind::kUniqueEndpoints;
      spec.keys.clear();
    }
    if (spec.keys.size() == 1) {
      const std::string& k = spec.keys[0];
      const std::optional<ValueType> own = k == "name"    ? std::optional<ValueType>(ValueType::kString)
                                           : k == "age"   ? std::optional<ValueType>(ValueType::kInt64)
                                           : k == "score" ? std::optional<ValueType>(ValueType::kDouble)
                                                          : std::nullopt;
      if (own && gen.Chance(0.6)) spec.type = own;
      if (gen.Chance(0.1)) spec.type = ValueType::kBool;  // usually contradicted by the data
    }
    const bool reuse = !model.indexes.empty() && gen.Chance(0.15);
    spec.name = reuse ? gen.Pick(model.indexes).name : "ix" + std::to_string((*counter)++);
    Status s = graph.CreateIndex(spec);
    std::optional<StatusCode> want;
    SequenceNumber commits = 2;  // the declaration, then the ready or the drop
    if (reuse) {
      want = StatusCode::kAlreadyExists;
      commits = 0;
    } else {
      want = CreateFailure(model, spec);
    }
    if (want ? s.code() != *want : !s.ok())
      return "CreateIndex(" + spec.name + " on " + spec.label + "): " + s.ToString() + ", expected " +
             (want ? std::string(StatusCodeName(*want)) : "OK");
    if (!s.ok() && s.message().empty()) return "empty error message";
    if (s.ok()) model.indexes.push_back(spec);
    model.sequence += commits;
  }
  if (graph.GetSnapshot().sequence() != model.sequence)
    return "an index step took " + std::to_string(graph.GetSnapshot().sequence() - before) +
           " sequence numbers";
  return "";
}

struct HeldSnapshot {
  Snapshot snapshot;
  Model model;
};

TEST(ModelTest, RandomBatchesMatchTheModel) {
  const std::uint64_t seed = test_util::EnvOr("QUIVER_TEST_SEED", std::random_device{}());
  const std::uint64_t batches = test_util::EnvOr("QUIVER_MODEL_BATCHES", 2000);
  std::cout << "model test seed: " << seed << " (QUIVER_TEST_SEED=" << seed
            << " reproduces), batches: " << batches << std::endl;
  SCOPED_TRACE("QUIVER_TEST_SEED=" + std::to_string(seed));

  Result<std::unique_ptr<Graph>> opened = Graph::OpenInMemory();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Graph> graph = std::move(opened).value();
  Generator gen(seed);
  Model model;
  std::vector<HeldSnapshot> held;
  constexpr std::size_t kHeld = 4;
  std::uint64_t committed = 0, rejected = 0, async_groups = 0, held_checks = 0;

  std::uint64_t next_fill = 10, next_check = 250, next_index = 20;
  std::uint64_t index_steps = 0;
  int index_counter = 0;
  std::uint64_t i = 0;
  while (i < batches) {
    SCOPED_TRACE("batch " + std::to_string(i));
    if (i >= next_index) {
      next_index = i + 40;
      ++index_steps;
      std::string err = IndexStep(*graph, gen, model, &index_counter);
      ASSERT_EQ(err, "") << "index step " << index_steps;
      ASSERT_EQ(Diff(graph->GetSnapshot(), model), "") << "after index step " << index_steps;
    }
    if (i % 97 == 50) {
      // A burst of WriteAsync batches with one invalid among them, submitted
      // before waiting so the writer can drain several into one group.
      const int k = gen.Uniform(3, 8);
      const int bad = gen.Uniform(0, k - 1);
      std::vector<Expectation> exps(static_cast<std::size_t>(k));
      std::vector<std::future<Result<CommitInfo>>> futures;
      Model running = model;
      for (int j = 0; j < k; ++j) {
        WriteBatch b = gen.Next(running, j == bad, &exps[j]);
        if (!exps[j].error) running = exps[j].after;
        futures.push_back(graph->WriteAsync(std::move(b)));
      }
      for (int j = 0; j < k; ++j) {
        Result<CommitInfo> r = futures[j].get();
        std::string err = CheckResult(r, exps[j], model.sequence + 1);
        ASSERT_EQ(err, "") << "async burst member " << j << " of " << k;
        if (!exps[j].error) {
          const SequenceNumber seq = model.sequence + 1;
          model = std::move(exps[j].after);
          model.sequence = seq;
          ++committed;
        } else {
          ++rejected;
        }
      }
      ++async_groups;
      i += static_cast<std::uint64_t>(k);
    } else {
      Expectation exp;
      WriteBatch b = gen.Next(model, gen.Chance(0.1), &exp);
      Result<CommitInfo> r = graph->Write(std::move(b));
      std::string err = CheckResult(r, exp, model.sequence + 1);
      ASSERT_EQ(err, "");
      if (!exp.error) {
        const SequenceNumber seq = model.sequence + 1;
        model = std::move(exp.after);
        model.sequence = seq;
        ++committed;
      } else {
        ++rejected;
      }
      ++i;
    }

    Snapshot s = graph->GetSnapshot();
    std::string diff = Diff(s, model);
    ASSERT_EQ(diff, "") << "newest snapshot differs from the model";

    if (held.size() < kHeld && i >= next_fill) {
      held.push_back({std::move(s), model});
      next_fill += 37;
    } else if (i >= next_check) {
      next_check += 250;
      for (const HeldSnapshot& h : held) {
        std::string old = Diff(h.snapshot, h.model);
        ASSERT_EQ(old, "") << "older snapshot at sequence " << h.model.sequence << " changed";
        ++held_checks;
      }
      if (held.empty()) continue;
      // Replace one held snapshot with the newest, so held ages vary.
      std::size_t slot = static_cast<std::size_t>(gen.Uniform(0, static_cast<int>(held.size()) - 1));
      held[slot] = HeldSnapshot{std::move(s), model};
    }
  }
  for (const HeldSnapshot& h : held) {
    std::string old = Diff(h.snapshot, h.model);
    ASSERT_EQ(old, "") << "older snapshot at sequence " << h.model.sequence << " changed";
    ++held_checks;
  }
  EXPECT_GT(committed, 0u);
  EXPECT_GT(gen.upserts_found + gen.upserts_added, 0u);
  std::cout << "model test: " << committed << " batches committed, " << rejected << " rejected as expected, "
            << async_groups << " async bursts, " << held_checks << " old-snapshot checks, " << index_steps
            << " index steps (" << model.indexes.size() << " indexes at the end); " << gen.upserts_found
            << " upserts found, " << gen.upserts_added << " added (edges: " << gen.edge_upserts_found
            << " found, " << gen.edge_upserts_added << " added), " << gen.failing_expectations
            << " batches with a failing expectation; final graph " << model.vertices.size() << " vertices, "
            << model.edges.size() << " edges" << std::endl;
}

}  // namespace
}  // namespace quiver
