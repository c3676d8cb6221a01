#include "commit_index.h"

#include <bit>
#include <cstring>
#include <optional>

namespace quiver::crashloop {
namespace {

// The element has exactly `expected` (keys are distinct in a spec).
template <typename Id>
bool SameProperties(const Snapshot& s, Id id, const std::vector<Property>& expected) {
  if (s.Properties(id).size() != expected.size()) return false;
  for (const Property& p : expected) {
    std::optional<PropertyView> v = s.GetProperty(id, p.key);
    if (!v || !IdenticalValues(*v, p.value)) return false;
  }
  return true;
}

template <typename Id>
std::optional<std::int64_t> IntProperty(const Snapshot& s, Id id, std::optional<PropertyKeyId> key) {
  if (!key) return std::nullopt;
  std::optional<PropertyView> v = s.GetProperty(id, *key);
  if (!v || v->type() != ValueType::kInt64) return std::nullopt;
  return v->as_int64();
}

// Position (idx) of a non-marker element, if valid for `spec`.
template <typename Id>
std::optional<std::uint32_t> PositionOf(const Snapshot& s, Id id, const CommitSpec& spec) {
  std::optional<std::int64_t> idx = IntProperty(s, id, s.FindPropertyKey(kIdxKey));
  if (!idx || *idx < 1 || static_cast<std::uint64_t>(*idx) >= spec.count()) return std::nullopt;
  return static_cast<std::uint32_t>(*idx);
}

// Checks the vertices and records each one's id by position (0: marker).
bool CheckVertices(const Snapshot& s, const CommitSpec& spec, const FoundCommit& found,
                   std::vector<std::optional<VertexId>>* by_position, std::string* why) {
  for (VertexId v : found.vertices) {
    std::optional<std::uint32_t> pos = PositionOf(s, v, spec);
    const ElementSpec* e = pos ? &spec.elements[*pos - 1] : nullptr;
    if (e == nullptr || e->is_edge || (*by_position)[*pos]) {
      *why = "vertex " + std::to_string(v.value()) + " has a bad or repeated idx";
      return false;
    }
    std::optional<LabelId> label = s.LabelOf(v);
    if (!label || s.LabelName(*label) != e->name || !SameProperties(s, v, e->properties)) {
      *why = "vertex " + std::to_string(v.value()) + " (idx " + std::to_string(*pos) + ") differs";
      return false;
    }
    (*by_position)[*pos] = v;
  }
  return true;
}

bool CheckEdges(const Snapshot& s, const CommitSpec& spec, const FoundCommit& found,
                const std::vector<std::optional<VertexId>>& by_position, std::string* why) {
  std::vector<bool> seen(spec.count());
  for (EdgeId e : found.edges) {
    std::optional<std::uint32_t> pos = PositionOf(s, e, spec);
    const ElementSpec* es = pos ? &spec.elements[*pos - 1] : nullptr;
    if (es == nullptr || !es->is_edge || seen[*pos]) {
      *why = "edge " + std::to_string(e.value()) + " has a bad or repeated idx";
      return false;
    }
    seen[*pos] = true;
    std::optional<EdgeInfo> info = s.GetEdge(e);
    if (!info || s.EdgeTypeName(info->type) != es->name || by_position[es->source] != info->source ||
        by_position[es->target] != info->target || !SameProperties(s, e, es->properties)) {
      *why = "edge " + std::to_string(e.value()) + " (idx " + std::to_string(*pos) + ") differs";
      return false;
    }
  }
  return true;
}

}  // namespace

CommitIndex IndexCommits(const Snapshot& s) {
  CommitIndex index;
  const std::optional<LabelId> marker_label = s.FindLabel(kMarkerLabel);
  const std::optional<PropertyKeyId> id_key = s.FindPropertyKey(kIdKey);
  const std::optional<PropertyKeyId> commit_key = s.FindPropertyKey(kCommitKey);
  const std::optional<LabelId> key_label = s.FindLabel(kKeyLabel);
  const std::optional<PropertyKeyId> key_key = s.FindPropertyKey(kKeyKey);
  for (VertexId v : s.Vertices()) {
    if (key_label && s.LabelOf(v) == key_label) {
      if (std::optional<std::int64_t> k = IntProperty(s, v, key_key)) {
        index.keys[*k].push_back(v);
      } else {
        ++index.strays;
      }
    } else if (marker_label && s.LabelOf(v) == marker_label) {
      std::optional<std::int64_t> id = IntProperty(s, v, id_key);
      if (!id) {
        ++index.strays;
        continue;
      }
      index.commits[static_cast<std::uint64_t>(*id)].markers.push_back(v);
      index.markers_in_order.push_back(static_cast<std::uint64_t>(*id));
    } else if (std::optional<std::int64_t> id = IntProperty(s, v, commit_key)) {
      index.commits[static_cast<std::uint64_t>(*id)].vertices.push_back(v);
    } else {
      ++index.strays;
    }
  }
  for (EdgeId e : s.Edges()) {
    if (std::optional<std::int64_t> id = IntProperty(s, e, commit_key)) {
      index.commits[static_cast<std::uint64_t>(*id)].edges.push_back(e);
    } else {
      ++index.strays;
    }
  }
  return index;
}

CommitState CheckCommit(const Snapshot& s, const CommitSpec& spec, const FoundCommit& found,
                        std::string* why) {
  const std::uint64_t elements = found.vertices.size() + found.edges.size();
  if (found.markers.empty()) {
    if (elements == 0) return CommitState::kAbsent;
    *why =
        std::to_string(elements) + " of " + std::to_string(spec.count() - 1) + " elements without the marker";
    return CommitState::kPartial;
  }
  if (found.markers.size() > 1) {
    *why = std::to_string(found.markers.size()) + " markers";
    return CommitState::kWrong;
  }
  if (elements != spec.count() - 1) {
    *why = "marker and " + std::to_string(elements) + " of " + std::to_string(spec.count() - 1) + " elements";
    return CommitState::kPartial;
  }
  if (!SameProperties(s, found.markers[0], spec.marker_properties)) {
    *why = "marker properties differ";
    return CommitState::kWrong;
  }
  std::vector<std::optional<VertexId>> by_position(spec.count());
  by_position[0] = found.markers[0];
  if (!CheckVertices(s, spec, found, &by_position, why) || !CheckEdges(s, spec, found, by_position, why))
    return CommitState::kWrong;
  return CommitState::kWhole;
}

}  // namespace quiver::crashloop
