// Random batches for the durability tests: every operation kind (adds with
// batch-local references, property sets and removals on vertices and edges,
// edge removals, vertex removals with their incident edges, self-loops),
// every value type, and now and then a value over one WAL fragment
// (WalWriter::MaxFragment(): 64 KiB in the test binaries),
// so the group it lands in is written as several records. A batch is drawn
// against a snapshot and is valid on it; batches drawn against the same
// snapshot and committed together may conflict (the later one then fails
// alone with NotFound and is not logged), which the tests allow.
//
// Thread safety: RandomBatch is a plain function of its arguments.
#ifndef QUIVER_TESTS_RANDOM_WORKLOAD_H_
#define QUIVER_TESTS_RANDOM_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/durability_faults.h"
#include "quiver/quiver.h"
#include "wal/wal_writer.h"

namespace quiver::test_util {

struct RandomBatchOptions {
  int max_ops = 12;
  // One batch in this many carries a value larger than a WAL fragment (0: never).
  int big_value_one_in = 0;
  // If not 0, the batch opens with a marker vertex "Mark" {batch: marker}
  // that no batch ever refers to, so a recovered graph shows which batches
  // it holds, in commit order (marker ids ascend with sequence numbers).
  std::uint64_t marker = 0;
  // If not null, set to whether the batch carries a value over one fragment.
  bool* made_big = nullptr;
};

inline constexpr std::string_view kMarkerLabel = "Mark";

inline PropertyValue RandomValue(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0: return PropertyValue();
    case 1: return PropertyValue(rng() % 2 == 0);
    case 2: return PropertyValue(static_cast<std::int64_t>(rng()));
    case 3: return PropertyValue(rng() % 4 == 0 ? -0.0 : static_cast<double>(rng() % 100000) / 7.0);
    case 4: return PropertyValue(std::string(rng() % 24, static_cast<char>('a' + rng() % 26)));
    case 5: {
      std::vector<std::byte> b(rng() % 20);
      for (std::byte& x : b) x = static_cast<std::byte>(rng());
      return PropertyValue(std::move(b));
    }
    case 6: {
      std::vector<float> f(rng() % 6);
      for (float& x : f) x = static_cast<float>(rng() % 1000) / 3.0f;
      return PropertyValue(FloatVector(std::move(f)));
    }
    default: {
      // A log of format 2 (the negative control unpadded_wal writes one)
      // holds no lists: a string, or recovery would refuse the segment for
      // the list, not for the torn page the control is about.
      if (base::DurabilityFaultOn(&base::DurabilityFaults::unpadded_wal))
        return PropertyValue(std::string("tag"));
      // Empty lists, empty elements and multi-byte UTF-8 included.
      StringList list(rng() % 4);
      for (std::string& s : list) s = rng() % 3 == 0 ? "" : (rng() % 2 == 0 ? "\xc3\xa9t\xc3\xa9" : "tag");
      return PropertyValue(std::move(list));
    }
  }
}

inline std::string RandomKey(std::mt19937_64& rng) { return "k" + std::to_string(rng() % 9); }

inline std::vector<Property> RandomProps(std::mt19937_64& rng) {
  std::vector<Property> props;
  const int n = static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) props.push_back({"p" + std::to_string(i * 3 + rng() % 3), RandomValue(rng)});
  return props;
}

// A batch valid on `s`, drawn from `rng`.
inline WriteBatch RandomBatch(const Snapshot& s, std::mt19937_64& rng, const RandomBatchOptions& o = {}) {
  WriteBatch b;
  std::vector<VertexRef> vertices;
  std::vector<EdgeRef> edges;
  if (o.marker != 0) b.AddVertex(kMarkerLabel, {{"batch", static_cast<std::int64_t>(o.marker)}});
  // Up to 16 live elements of the snapshot to refer to, from random places
  // (never a marker).
  const std::optional<LabelId> marker_label = s.FindLabel(kMarkerLabel);
  for (int i = 0; i < 16 && s.vertex_id_limit() > 0; ++i)
    if (VertexId v(rng() % s.vertex_id_limit()); s.HasVertex(v) && s.LabelOf(v) != marker_label)
      vertices.push_back(v);
  std::vector<EdgeId> old_edges;
  for (int i = 0; i < 16 && s.edge_id_limit() > 0; ++i)
    if (EdgeId e(rng() % s.edge_id_limit()); s.HasEdge(e)) old_edges.push_back(e);
  for (EdgeId e : old_edges) edges.push_back(e);
  const char* const kLabels[] = {"Person", "City", "Thing"};
  const char* const kTypes[] = {"KNOWS", "LIKES", "IN"};
  const int ops = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(o.max_ops));
  std::vector<EdgeId> removed;
  for (int i = 0; i < ops; ++i) {
    const std::uint64_t r = rng() % 10;
    if (r < 3 || vertices.empty()) {
      vertices.push_back(b.AddVertex(kLabels[rng() % 3], RandomProps(rng)));
    } else if (r < 5) {
      VertexRef from = vertices[rng() % vertices.size()];
      VertexRef to = rng() % 8 == 0 ? from : vertices[rng() % vertices.size()];
      edges.push_back(b.AddEdge(kTypes[rng() % 3], from, to, RandomProps(rng)));
    } else if (r < 6) {
      b.SetProperty(vertices[rng() % vertices.size()], RandomKey(rng), RandomValue(rng));
    } else if (r < 7 && !edges.empty()) {
      b.SetProperty(edges[rng() % edges.size()], RandomKey(rng), RandomValue(rng));
    } else if (r < 8) {
      b.RemoveProperty(vertices[rng() % vertices.size()], RandomKey(rng));
      if (!edges.empty()) b.RemoveProperty(edges[rng() % edges.size()], "p" + std::to_string(rng() % 9));
    } else if (r < 9 && !old_edges.empty()) {
      // Removals come last among references to the element: stop using it.
      const std::size_t k = rng() % old_edges.size();
      b.RemoveEdge(old_edges[k]);
      std::erase_if(edges, [&](const EdgeRef& e) { return !e.is_new() && e.raw() == old_edges[k].value(); });
      old_edges.erase(old_edges.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  const bool big = o.big_value_one_in > 0 && rng() % static_cast<std::uint64_t>(o.big_value_one_in) == 0;
  if (o.made_big != nullptr) *o.made_big = big;
  if (big) {
    // Over one WAL fragment: the writer's, which test binaries set to 64 KiB
    // (test_environment.cc).
    const std::size_t fragment = wal::WalWriter::MaxFragment();
    b.AddVertex("Big", {{"blob", PropertyValue(std::vector<std::byte>(fragment + rng() % (fragment / 10)))}});
  }
  // A vertex removal ends the batch, so nothing after it names its edges.
  if (rng() % 4 == 0 && !vertices.empty()) b.RemoveVertex(vertices[rng() % vertices.size()]);
  return b;
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_RANDOM_WORKLOAD_H_
