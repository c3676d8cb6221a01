// Helpers shared by Quiver's tests: exact value rendering and comparison, and
// a structural dump of a whole snapshot (a fingerprint two snapshots can be
// compared by). Uses only the public API.
#ifndef QUIVER_TESTS_TEST_UTIL_H_
#define QUIVER_TESTS_TEST_UTIL_H_

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "quiver/graph.h"
#include "quiver/snapshot.h"
#include "quiver/value.h"

namespace quiver::test_util {

inline std::string Hex(const void* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 15]);
  }
  return out;
}

// Renders a stored value exactly: doubles and floats by their bit patterns,
// strings and bytes in hex, so two renderings are equal iff the values are
// bitwise identical (and of the same type).
inline std::string Render(const PropertyView& v) {
  switch (v.type()) {
    case ValueType::kNull: return "null";
    case ValueType::kBool: return *v.as_bool() ? "b:true" : "b:false";
    case ValueType::kInt64: return "i:" + std::to_string(*v.as_int64());
    case ValueType::kDouble: {
      double d = *v.as_double();
      return "d:" + Hex(&d, sizeof d);
    }
    case ValueType::kString: {
      std::string_view s = *v.as_string();
      return "s:" + Hex(s.data(), s.size());
    }
    case ValueType::kBytes: {
      auto b = *v.as_bytes();
      return "x:" + Hex(b.data(), b.size());
    }
    case ValueType::kFloatVector: {
      auto f = *v.as_float_vector();
      return "f" + std::to_string(f.size()) + ":" + Hex(f.data(), f.size_bytes());
    }
  }
  return "?";
}

inline PropertyView View(const PropertyValue& v) {
  switch (v.type()) {
    case ValueType::kNull: return PropertyView();
    case ValueType::kBool: return PropertyView(*v.as_bool());
    case ValueType::kInt64: return PropertyView(*v.as_int64());
    case ValueType::kDouble: return PropertyView(*v.as_double());
    case ValueType::kString: return PropertyView(std::string_view(*v.as_string()));
    case ValueType::kBytes: return PropertyView(std::span<const std::byte>(*v.as_bytes()));
    case ValueType::kFloatVector: return PropertyView(std::span<const float>(*v.as_float_vector()));
  }
  return PropertyView();
}

inline std::string Render(const PropertyValue& v) { return Render(View(v)); }

// Bitwise identity of type and payload (unlike operator==, -0.0 != 0.0).
// Allocates nothing, so model comparisons can call it for every value.
inline bool SameValue(const PropertyView& a, const PropertyValue& b) { return IdenticalValues(a, b); }

// Properties of one element as name -> rendered value.
template <typename Id>
std::map<std::string, std::string> PropertyMap(const Snapshot& s, Id id) {
  std::map<std::string, std::string> out;
  for (const PropertyRange::Entry& e : s.Properties(id)) {
    out[std::string(s.PropertyKeyName(e.key))] = Render(e.value);
  }
  return out;
}

inline std::string RenderProperties(const std::map<std::string, std::string>& props) {
  std::string out = "{";
  for (const auto& [k, v] : props) out += k + "=" + v + ";";
  return out + "}";
}

// One direction of a vertex's adjacency: type name -> (edge, neighbour) list
// in stored order. Group order is not part of the contract, so groups are
// keyed by type name.
inline std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> AdjacencyMap(
    const Snapshot& s, VertexId v, Direction d) {
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> out;
  for (EdgeGroup g : s.Edges(v, d)) {
    auto& list = out[std::string(s.EdgeTypeName(g.type))];
    for (const EdgeEntry& e : g.entries) list.emplace_back(e.edge().value(), e.neighbor().value());
  }
  return out;
}

inline std::string RenderAdjacency(
    const std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>>& adj) {
  std::string out = "[";
  for (const auto& [type, list] : adj) {
    out += type + ":";
    for (auto [e, n] : list) out += "(" + std::to_string(e) + "," + std::to_string(n) + ")";
    out += ";";
  }
  return out + "]";
}

// A structural fingerprint of everything a snapshot shows: sequence, counts,
// id limits, every live vertex (label, properties, adjacency both ways) and
// every live edge (type, endpoints, properties), plus whether each name in
// `probe_names` is known as a label / edge type / property key.
inline std::string Dump(const Snapshot& s, const std::vector<std::string>& probe_names = {}) {
  std::string out;
  out += "seq=" + std::to_string(s.sequence());
  out += " V=" + std::to_string(s.vertex_count()) + " E=" + std::to_string(s.edge_count());
  out += " Vlim=" + std::to_string(s.vertex_id_limit()) + " Elim=" + std::to_string(s.edge_id_limit());
  out += "\n";
  for (VertexId v : s.Vertices()) {
    std::optional<LabelId> label = s.LabelOf(v);
    out += "v" + std::to_string(v.value()) + " " + (label ? std::string(s.LabelName(*label)) : "<none>");
    out += " " + RenderProperties(PropertyMap(s, v));
    out += " out=" + RenderAdjacency(AdjacencyMap(s, v, Direction::kOut));
    out += " in=" + RenderAdjacency(AdjacencyMap(s, v, Direction::kIn));
    out += " deg=" + std::to_string(s.OutDegree(v)) + "/" + std::to_string(s.InDegree(v));
    out += "\n";
  }
  for (EdgeId e : s.Edges()) {
    std::optional<EdgeInfo> info = s.GetEdge(e);
    out += "e" + std::to_string(e.value());
    if (info) {
      out += " " + std::string(s.EdgeTypeName(info->type)) + " " + std::to_string(info->source.value()) +
             "->" + std::to_string(info->target.value());
    } else {
      out += " <missing>";
    }
    out += " " + RenderProperties(PropertyMap(s, e));
    out += "\n";
  }
  for (const std::string& name : probe_names) {
    out += "name '" + name + "' L=" + (s.FindLabel(name) ? "y" : "n") +
           " T=" + (s.FindEdgeType(name) ? "y" : "n") + " K=" + (s.FindPropertyKey(name) ? "y" : "n") + "\n";
  }
  return out;
}

// GetMemoryStats() once reclamation has caught up: polls (for up to five
// seconds) until nothing is retired and only the current version is live, so
// a reclamation step that runs on the writer thread just after a caller was
// acknowledged is not mistaken for a leak. Returns the last stats read.
inline MemoryStats SettledMemoryStats(const Graph& graph) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  MemoryStats m = graph.GetMemoryStats();
  while ((m.retired_bytes != 0 || m.live_versions != 1) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    m = graph.GetMemoryStats();
  }
  return m;
}

// A 64-bit FNV-1a hash over the same content as Dump (without the probe
// names), computed without allocating: cheap enough for readers that
// fingerprint whole snapshots under ThreadSanitizer.
class Fingerprinter {
 public:
  void Add(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 1099511628211ULL;
  }
  void Add(std::uint64_t x) { Add(&x, sizeof x); }
  void Add(std::string_view s) {
    Add(s.size());
    Add(s.data(), s.size());
  }
  void Add(const PropertyView& v) {
    Add(static_cast<std::uint64_t>(v.type()));
    switch (v.type()) {
      case ValueType::kNull: break;
      case ValueType::kBool: Add((*v.as_bool()) ? 1 : 0); break;
      case ValueType::kInt64: Add(static_cast<std::uint64_t>(*v.as_int64())); break;
      case ValueType::kDouble: Add(std::bit_cast<std::uint64_t>(*v.as_double())); break;
      case ValueType::kString: Add(*v.as_string()); break;
      case ValueType::kBytes:
        Add(v.as_bytes()->size());
        Add(v.as_bytes()->data(), v.as_bytes()->size());
        break;
      case ValueType::kFloatVector:
        Add(v.as_float_vector()->size());
        Add(v.as_float_vector()->data(), v.as_float_vector()->size_bytes());
        break;
    }
  }
  std::uint64_t hash() const { return h_; }

 private:
  std::uint64_t h_ = 14695981039346656037ULL;
};

inline std::uint64_t Fingerprint(const Snapshot& s) {
  Fingerprinter f;
  f.Add(s.sequence());
  f.Add(s.vertex_count());
  f.Add(s.edge_count());
  f.Add(s.vertex_id_limit());
  f.Add(s.edge_id_limit());
  for (VertexId v : s.Vertices()) {
    f.Add(v.value());
    std::optional<LabelId> label = s.LabelOf(v);
    f.Add(label ? s.LabelName(*label) : std::string_view("<none>"));
    for (const PropertyRange::Entry& e : s.Properties(v)) {
      f.Add(e.key.value());
      f.Add(e.value);
    }
    for (Direction d : {Direction::kOut, Direction::kIn}) {
      Adjacency adj = s.Edges(v, d);
      f.Add(adj.degree());
      for (EdgeGroup g : adj) {
        f.Add(g.type.value());
        for (const EdgeEntry& e : g.entries) {
          f.Add(e.edge().value());
          f.Add(e.neighbor().value());
        }
      }
    }
  }
  for (EdgeId e : s.Edges()) {
    f.Add(e.value());
    std::optional<EdgeInfo> info = s.GetEdge(e);
    if (info) {
      f.Add(info->type.value());
      f.Add(info->source.value());
      f.Add(info->target.value());
    }
    for (const PropertyRange::Entry& p : s.Properties(e)) {
      f.Add(p.key.value());
      f.Add(p.value);
    }
  }
  return f.hash();
}

// Reads a positive integer from the environment, or returns `fallback`.
inline std::uint64_t EnvOr(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  unsigned long long parsed = std::strtoull(v, &end, 10);
  if (end == v) return fallback;
  return parsed;
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_TEST_UTIL_H_
