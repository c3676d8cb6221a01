// Index types: what an application declares (IndexSpec) to find elements by
// property value without a scan, what it asks (IndexRange), and what a
// snapshot reports (IndexInfo, and the label, type and key counts).
//
// Indexes live in the graph's versions beside the data: a snapshot sees its
// indexes exactly as they were at its sequence number, and every answer
// equals what a full scan of that snapshot would give. The queries are
// Snapshot methods (snapshot.h); Graph::CreateIndex / DropIndex (graph.h)
// declare and drop indexes as commits. docs/indexes.md is the user guide.
//
// Every struct here is a plain aggregate whose fields all have defaults, so
// designated initializers may name any subset of them.
//
// Example:
//   graph->CreateIndex({.name = "person_name", .label = "Person", .keys = {"name"},
//                       .kind = quiver::IndexKind::kUnique, .type = quiver::ValueType::kString});
//   quiver::Snapshot snap = graph->GetSnapshot();
//   auto ada = snap.FindVertex("Person", "name", "Ada");  // Result<std::optional<VertexId>>
//
// Which values are indexed. An element is in an index when it has the
// index's label (vertices) or type (edges) and every key of the index holds
// an indexable value: any type but null and float vectors. A key that is
// missing, or holds null (or, in an index of no declared type, a vector),
// keeps the element out of the index and out of every answer it gives. In
// an index with a declared type, a value of another type (vectors included;
// null is allowed and not indexed) fails the write with InvalidArgument.
//
// Value order (ordered indexes, and the order of results): values of one
// type in their natural order (int64 and double numerically, -0.0 equal to
// 0.0; strings and bytes by unsigned byte, which for UTF-8 is code point
// order; false < true); values of different types, in an index of no
// declared type, by type: bool < int64 < double < string < bytes (so the
// int64 5 and the double 5.0 are different keys). Doubles in the graph are
// finite, so NaN and infinities never occur.
#ifndef QUIVER_INDEX_H_
#define QUIVER_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/ids.h"
#include "quiver/value.h"

namespace quiver {

// Which elements an index holds. Persisted: never renumber.
enum class ElementKind : std::uint8_t {
  kVertex = 0,
  kEdge = 1,
};

// What an index answers. Persisted: never renumber.
enum class IndexKind : std::uint8_t {
  // Equality lookups: FindVertices / FindEdges.
  kExact = 0,
  // Equality lookups, and a constraint: no two elements of the label (type)
  // hold the same key. A batch that would break it fails with AlreadyExists;
  // FindVertex / FindEdge answer through it.
  kUnique = 1,
  // Equality lookups, and range scans and counts in value order
  // (VerticesInRange, CountVerticesInRange and the edge forms).
  kOrdered = 2,
  // The edge-endpoint constraint: at most one edge of the type from one
  // vertex to another (an ordered pair: A->B and B->A are two pairs; a
  // self-loop A->A is one). Only with ElementKind::kEdge, no keys and no
  // type: it is keyed by the edges' (source, target), not by properties. A
  // batch that would leave two edges of the type between one pair fails with
  // AlreadyExists naming the pair and both edges, wherever they come from
  // (committed, AddEdge, UpsertEdge); WriteBatch::UpsertEdge finds edges
  // through it. Declared, listed, dropped and made durable like the others.
  //
  // Example:
  //   graph->CreateIndex({.name = "knows_once", .element = quiver::ElementKind::kEdge,
  //                       .label = "KNOWS", .kind = quiver::IndexKind::kUniqueEndpoints});
  kUniqueEndpoints = 3,
};

// A property index to create (Graph::CreateIndex).
struct IndexSpec {
  // Unique among the graph's indexes; non-empty, valid UTF-8.
  std::string name{};
  ElementKind element = ElementKind::kVertex;
  // The vertex label, or for ElementKind::kEdge the edge type, whose
  // elements the index holds. Need not exist yet.
  std::string label{};
  // The property keys, in order: one key, or several for a composite index
  // (an element is indexed only when it holds every one). Distinct,
  // non-empty; at most kMaxIndexKeys. Empty for kUniqueEndpoints.
  std::vector<std::string> keys{};
  IndexKind kind = IndexKind::kExact;
  // The type every key's values must have (not kFloatVector, kStringList or kNull), or
  // nullopt for any indexable type. A single-key int64 or double index
  // stores its keys in 8 bytes (the most compact form). nullopt for
  // kUniqueEndpoints.
  std::optional<ValueType> type = std::nullopt;
};

inline constexpr std::size_t kMaxIndexKeys = 16;

enum class IndexState : std::uint8_t {
  // Declared, its contents not yet built (CreateIndex is running, or the
  // graph was opened after a crash interrupted it). Queries ignore it.
  kBuilding = 0,
  // Complete in the snapshot that lists it.
  kReady = 1,
};

// One index as a snapshot sees it (Snapshot::Indexes).
struct IndexInfo {
  IndexSpec spec{};
  IndexState state = IndexState::kBuilding;
  // Elements in the index (0 while building).
  std::uint64_t entries = 0;
  // The sequence number of the commit that declared it.
  SequenceNumber declared = 0;
};

// One end of a range: `value` itself is in the range when `inclusive`.
struct RangeBound {
  PropertyValue value{};
  bool inclusive = true;
};

// A range scan over an ordered index, on its first key.
//
// Example: the 10 latest orders of 2024 (an ordered int64 index on "ts"):
//   quiver::IndexRange r{.lo = quiver::RangeBound{1704067200},
//                        .hi = quiver::RangeBound{1735689600, /*inclusive=*/false},
//                        .descending = true, .limit = 10};
struct IndexRange {
  // nullopt: no bound on that side.
  std::optional<RangeBound> lo = std::nullopt;
  std::optional<RangeBound> hi = std::nullopt;
  // Only strings that start with these bytes (lo and hi must be unset).
  std::optional<std::string> prefix = std::nullopt;
  // Results in descending value order (ids descending within one value).
  bool descending = false;
  // Most ids returned (counts ignore it).
  std::size_t limit = std::numeric_limits<std::size_t>::max();
};

// The live vertices of one label (Snapshot::Labels).
struct LabelCount {
  LabelId label{};
  std::string_view name{};  // valid while the snapshot lives
  std::uint64_t vertices = 0;
};

// The live edges of one type (Snapshot::EdgeTypes).
struct EdgeTypeCount {
  EdgeTypeId type{};
  std::string_view name{};  // valid while the snapshot lives
  std::uint64_t edges = 0;
};

// The live elements holding one property key, whatever its value
// (Snapshot::PropertyKeys).
struct PropertyKeyCount {
  PropertyKeyId key{};
  std::string_view name{};  // valid while the snapshot lives
  std::uint64_t vertices = 0;
  std::uint64_t edges = 0;
};

}  // namespace quiver

#endif  // QUIVER_INDEX_H_
