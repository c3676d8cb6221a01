// A model of a whole graph (every element with its name, endpoints and
// properties) that a change feed's batches are applied to, checking each
// against the state it claims to change: the change feed tests' oracle.
// Uses only the public API.
#ifndef QUIVER_TESTS_CHANGE_FEED_MODEL_H_
#define QUIVER_TESTS_CHANGE_FEED_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "quiver/change_feed.h"
#include "quiver/snapshot.h"

namespace quiver::test_util {

struct FeedElement {
  std::string name;  // label or type
  std::uint64_t source = 0, target = 0;
  std::map<std::string, PropertyValue> props;
  friend bool operator==(const FeedElement&, const FeedElement&) = default;
};

struct FeedModel {
  SequenceNumber sequence = 0;
  std::map<std::uint64_t, FeedElement> vertices;
  std::map<std::uint64_t, FeedElement> edges;
  friend bool operator==(const FeedModel&, const FeedModel&) = default;

  static FeedModel Of(const Snapshot& s) {
    FeedModel m;
    m.sequence = s.sequence();
    for (VertexId v : s.Vertices()) {
      FeedElement& e = m.vertices[v.value()];
      e.name = std::string(s.LabelName(*s.LabelOf(v)));
      for (const PropertyRange::Entry& p : s.Properties(v))
        e.props[std::string(s.PropertyKeyName(p.key))] = p.value.ToValue();
    }
    for (EdgeId id : s.Edges()) {
      FeedElement& e = m.edges[id.value()];
      EdgeInfo info = *s.GetEdge(id);
      e.name = std::string(s.EdgeTypeName(info.type));
      e.source = info.source.value();
      e.target = info.target.value();
      for (const PropertyRange::Entry& p : s.Properties(id))
        e.props[std::string(s.PropertyKeyName(p.key))] = p.value.ToValue();
    }
    return m;
  }

  // Applies `b`; "" if every effect matched the model's state (the batch
  // follows the model's sequence, removed elements and old values are as
  // the model has them, created ids are new), else the first mismatch.
  std::string Apply(const ChangeBatch& b) {
    if (b.sequence != sequence + 1)
      return "sequence " + std::to_string(b.sequence) + " after " + std::to_string(sequence);
    sequence = b.sequence;
    for (const EdgeRecord& r : b.removed_edges) {
      auto it = edges.find(r.id.value());
      if (it == edges.end() || it->second != Edge(r))
        return "removed edge " + std::to_string(r.id.value()) + " differs";
      edges.erase(it);
    }
    for (const VertexRecord& r : b.removed_vertices) {
      auto it = vertices.find(r.id.value());
      if (it == vertices.end() || it->second != Vertex(r))
        return "removed vertex " + std::to_string(r.id.value()) + " differs";
      vertices.erase(it);
    }
    for (const VertexRecord& r : b.created_vertices)
      if (!vertices.emplace(r.id.value(), Vertex(r)).second)
        return "created vertex " + std::to_string(r.id.value()) + " existed";
    for (const EdgeRecord& r : b.created_edges) {
      if (vertices.count(r.source.value()) == 0 || vertices.count(r.target.value()) == 0)
        return "created edge " + std::to_string(r.id.value()) + " has a missing endpoint";
      if (!edges.emplace(r.id.value(), Edge(r)).second)
        return "created edge " + std::to_string(r.id.value()) + " existed";
    }
    for (const VertexPropertyChange& c : b.vertex_property_changes)
      if (std::string e = Change(vertices, c.id.value(), c.key, c.old_value, c.new_value); !e.empty())
        return "vertex " + e;
    for (const EdgePropertyChange& c : b.edge_property_changes)
      if (std::string e = Change(edges, c.id.value(), c.key, c.old_value, c.new_value); !e.empty())
        return "edge " + e;
    return "";
  }

 private:
  static FeedElement Vertex(const VertexRecord& r) {
    FeedElement e{r.label, 0, 0, {}};
    for (const Property& p : r.properties) e.props[p.key] = p.value;
    return e;
  }
  static FeedElement Edge(const EdgeRecord& r) {
    FeedElement e{r.type, r.source.value(), r.target.value(), {}};
    for (const Property& p : r.properties) e.props[p.key] = p.value;
    return e;
  }
  static std::string Change(std::map<std::uint64_t, FeedElement>& elems, std::uint64_t id,
                            const std::string& key, const std::optional<PropertyValue>& old_value,
                            const std::optional<PropertyValue>& new_value) {
    auto it = elems.find(id);
    if (it == elems.end()) return std::to_string(id) + " changed but absent";
    auto p = it->second.props.find(key);
    std::optional<PropertyValue> now;
    if (p != it->second.props.end()) now = p->second;
    if (now != old_value) return std::to_string(id) + " key " + key + ": old value differs";
    if (old_value == new_value) return std::to_string(id) + " key " + key + ": listed but unchanged";
    if (new_value)
      it->second.props[key] = *new_value;
    else
      it->second.props.erase(key);
    return "";
  }
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_CHANGE_FEED_MODEL_H_
