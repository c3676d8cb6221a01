// Out-of-line helpers of test_util.h. This file is built once, as the
// library quiver_test_util, at -O2 whatever the test binaries' options: the
// asan preset compiles test code at -O0 to keep CI's build short, and Dump
// and Fingerprint walk whole graphs inside the longest tests' inner loops
// (two thirds of an allocation-failure sweep's time at -O0).
#include "test_util.h"

#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quiver::test_util {

std::string Hex(const void* data, std::size_t n) {
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

std::string Render(const PropertyView& v) {
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
    case ValueType::kStringList: {
      std::string out = "l" + std::to_string(v.as_string_list()->size()) + ":";
      const StringListView list =
          *v.as_string_list();  // named: a temporary optional would die before the loop
      for (std::string_view s : list) out += Hex(s.data(), s.size()) + ",";
      return out;
    }
  }
  return "?";
}

PropertyView View(const PropertyValue& v) {
  switch (v.type()) {
    case ValueType::kNull: return PropertyView();
    case ValueType::kBool: return PropertyView(*v.as_bool());
    case ValueType::kInt64: return PropertyView(*v.as_int64());
    case ValueType::kDouble: return PropertyView(*v.as_double());
    case ValueType::kString: return PropertyView(std::string_view(*v.as_string()));
    case ValueType::kBytes: return PropertyView(std::span<const std::byte>(*v.as_bytes()));
    case ValueType::kFloatVector: return PropertyView(std::span<const float>(*v.as_float_vector()));
    case ValueType::kStringList: return PropertyView(*v.as_string_list());
  }
  return PropertyView();
}

std::string Render(const PropertyValue& v) { return Render(View(v)); }

std::string RenderProperties(const std::map<std::string, std::string>& props) {
  std::string out = "{";
  for (const auto& [k, v] : props) out += k + "=" + v + ";";
  return out + "}";
}

std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> AdjacencyMap(const Snapshot& s,
                                                                                         VertexId v,
                                                                                         Direction d) {
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> out;
  for (EdgeGroup g : s.Edges(v, d)) {
    auto& list = out[std::string(s.EdgeTypeName(g.type))];
    for (const EdgeEntry& e : g.entries) list.emplace_back(e.edge().value(), e.neighbor().value());
  }
  return out;
}

std::string RenderAdjacency(
    const std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>>& adj) {
  std::string out = "[";
  for (const auto& [type, list] : adj) {
    out += type + ":";
    for (auto [e, n] : list) out += "(" + std::to_string(e) + "," + std::to_string(n) + ")";
    out += ";";
  }
  return out + "]";
}

std::string Dump(const Snapshot& s, const std::vector<std::string>& probe_names) {
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

std::uint64_t Fingerprint(const Snapshot& s) {
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

}  // namespace quiver::test_util
