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

// Durable options for the operator-tool tests: no spinning, no automatic or
// closing checkpoint (so the log keeps a tail to replay), and 512-byte WAL
// segments, so a few groups make a rotation.
inline Options SmallSegmentOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  o.durable.wal_segment_bytes = 512;
  return o;
}

std::string Hex(const void* data, std::size_t n);

// Renders a stored value exactly: doubles and floats by their bit patterns,
// strings and bytes in hex, so two renderings are equal iff the values are
// bitwise identical (and of the same type).
std::string Render(const PropertyView& v);

PropertyView View(const PropertyValue& v);

std::string Render(const PropertyValue& v);

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

std::string RenderProperties(const std::map<std::string, std::string>& props);

// One direction of a vertex's adjacency: type name -> (edge, neighbour) list
// in stored order. Group order is not part of the contract, so groups are
// keyed by type name.
std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> AdjacencyMap(const Snapshot& s,
                                                                                         VertexId v,
                                                                                         Direction d);

std::string RenderAdjacency(
    const std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>>& adj);

// A structural fingerprint of everything a snapshot shows: sequence, counts,
// id limits, every live vertex (label, properties, adjacency both ways) and
// every live edge (type, endpoints, properties), plus whether each name in
// `probe_names` is known as a label / edge type / property key.
std::string Dump(const Snapshot& s, const std::vector<std::string>& probe_names = {});

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
      case ValueType::kStringList: {
        const StringListView list = *v.as_string_list();
        Add(list.size());
        for (std::string_view s : list) Add(s);
        break;
      }
    }
  }
  std::uint64_t hash() const { return h_; }

 private:
  std::uint64_t h_ = 14695981039346656037ULL;
};

std::uint64_t Fingerprint(const Snapshot& s);

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
