// WriteBatch: a value that records graph mutations to be committed together.
//
// Recording does no I/O, takes no lock and checks nothing; Graph::Write
// validates the whole batch against the newest version and applies it
// all-or-nothing. A vertex added in a batch can be used by later operations
// of the same batch through the `NewVertex` handle AddVertex returns, so a
// batch can create a vertex and its edges together.
//
// Example:
//   quiver::WriteBatch batch;
//   quiver::NewVertex ada = batch.AddVertex("Person", {{"name", "Ada"}});
//   batch.AddEdge("KNOWS", ada, quiver::VertexId(7));
//   auto info = graph->Write(std::move(batch));  // info->vertices[0] is Ada's id
//
// Upserts find an element by a unique key or create it; expectations make a
// batch conditional on the state it is applied to (optimistic concurrency):
//   quiver::WriteBatch b;
//   quiver::NewVertex london = b.UpsertVertex("City", {{"name", "London"}}, {{"pop", 9}});
//   b.ExpectProperty(quiver::VertexId(7), "visits", 41);  // else Aborted, nothing applied
//   b.SetProperty(quiver::VertexId(7), "visits", 42);
//   b.AddEdge("VISITED", quiver::VertexId(7), london);
// docs/writes.md is the guide to both.
//
// Memory and reuse: recording appends to a few arrays (32 bytes per
// operation, plus the properties it carries; each distinct name is stored
// once per batch). reserve() sizes them up front. Clear() forgets the
// operations but keeps the memory, for refilling the same batch. Graph::Write
// takes the batch by value, so a batch kept for reuse is written as a copy:
//   graph->Write(std::move(batch));  // hands the buffers to the writer;
//                                    // `batch` is left empty, reusable,
//                                    // without capacity
//   graph->Write(batch);             // commits a copy; `batch` keeps its
//                                    // contents and buffers: Clear() to refill
// For a loop of writes of known size, a fresh batch per write with reserve()
// and std::move records as fast as refilling a kept one, without the copy
// (docs/impl.md, "Recording a batch").
//
// Out of memory, recording (and copying a batch) throws std::bad_alloc, as
// the standard containers it appends to do, and the batch holds nothing of
// the call that threw (status.h: the calls with no status to return).
//
// Thread safety: a WriteBatch is a plain value; use one from one thread at a
// time.
#ifndef QUIVER_WRITE_BATCH_H_
#define QUIVER_WRITE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/ids.h"
#include "quiver/value.h"

namespace quiver {

namespace internal {
class WriteBatchInternal;
}  // namespace internal

// A handle on a vertex added earlier in the same batch. It is only
// meaningful to the batch that returned it, and to the copies (and copies
// of copies) made of that batch after it was returned (WriteBatch's copy
// constructor states the rule); using it in any other batch fails that
// batch with InvalidArgument. `batch_tag` names the batch: 64 bits, drawn
// from one process-wide counter that never hands out a tag twice (it would
// take centuries to wrap), and never 0, which a default handle holds.
struct NewVertex {
  std::uint64_t batch_tag = 0;
  std::uint32_t index = 0;
};

// A handle on an edge added earlier in the same batch; the same rules as
// NewVertex.
struct NewEdge {
  std::uint64_t batch_tag = 0;
  std::uint32_t index = 0;
};

// Names a vertex: either a committed one by id or one added in this batch.
class VertexRef {
 public:
  VertexRef(VertexId id) : id_(id.value()) {}                            // NOLINT
  VertexRef(NewVertex v) : id_(v.index), tag_(v.batch_tag | kNewBit) {}  // NOLINT
  bool is_new() const { return (tag_ & kNewBit) != 0; }
  std::uint64_t raw() const { return id_; }
  std::uint64_t batch_tag() const { return tag_ & ~kNewBit; }

 private:
  // Tags count up from 1 and never reach bit 63, which says "new": 16
  // bytes, so a ref travels in two registers.
  static constexpr std::uint64_t kNewBit = std::uint64_t{1} << 63;
  std::uint64_t id_;
  std::uint64_t tag_ = 0;
};

// Names an edge: either a committed one by id or one added in this batch.
class EdgeRef {
 public:
  EdgeRef(EdgeId id) : id_(id.value()) {}                            // NOLINT
  EdgeRef(NewEdge e) : id_(e.index), tag_(e.batch_tag | kNewBit) {}  // NOLINT
  bool is_new() const { return (tag_ & kNewBit) != 0; }
  std::uint64_t raw() const { return id_; }
  std::uint64_t batch_tag() const { return tag_ & ~kNewBit; }

 private:
  // Tags count up from 1 and never reach bit 63, which says "new": 16
  // bytes, so a ref travels in two registers.
  static constexpr std::uint64_t kNewBit = std::uint64_t{1} << 63;
  std::uint64_t id_;
  std::uint64_t tag_ = 0;
};

// What an upsert that finds its element does to the element's properties.
enum class UpsertMode : std::uint8_t {
  // Sets the given properties; the others stay.
  kMerge = 0,
  // The element ends with exactly the keys and the given properties.
  kReplace = 1,
};

class WriteBatch {
 public:
  WriteBatch();
  // A copy holds the same operations, and every handle valid in the
  // original at the time of the copy is valid in the copy (so the handles
  // of a batch kept for reuse and written as `Write(batch)` still name its
  // vertices when more operations are recorded in it or in a copy of it).
  // From then on the two are separate batches: a handle either returns
  // later is valid only in the batch that returned it (and in its own later
  // copies), and using it in the other fails that batch with
  // InvalidArgument, even though both number their new vertices from the
  // same point. (The copy draws a tag of its own and remembers the tag and
  // the AddVertex / AddEdge counts of the batch it was copied from.)
  // Assigning a copy is the same: afterwards the target accepts the
  // handles the source accepted (so `saved = b; ...; b = saved` keeps the
  // handles from before the save), and no others.
  WriteBatch(const WriteBatch&);
  WriteBatch& operator=(const WriteBatch&);
  // Moves the operations and their buffers; handles valid in the moved-from
  // batch follow them and are valid in the target. The moved-from batch is
  // left empty and valid, as after Clear() but without capacity, and can be
  // refilled; the handles it returned before are invalid in it.
  WriteBatch(WriteBatch&&) noexcept;
  WriteBatch& operator=(WriteBatch&&) noexcept;
  ~WriteBatch();

  // Makes room for `ops` operations and `properties` properties in all (like
  // std::vector::reserve: never shrinks), so recording that many does not
  // reallocate those two arrays (the table of distinct names a batch keeps
  // still grows with each new label, type or key). Every call that records
  // counts as one operation; each
  // property an operation carries (and each key of an upsert or
  // ExpectKeyFree) counts as one property. A hint: room that cannot be had
  // (out of memory, or beyond what a vector can hold) is not made, and the
  // batch grows as it records instead.
  void reserve(std::size_t ops, std::size_t properties = 0);

  // Adds a vertex with one label and the given properties. Returns a handle
  // for later operations of this batch; its committed id is in
  // CommitInfo::vertices, in the order of the AddVertex calls.
  NewVertex AddVertex(std::string_view label, std::span<const Property> properties = {});
  NewVertex AddVertex(std::string_view label, std::initializer_list<Property> properties);

  // Adds an edge of `type` from `source` to `target`. Parallel edges and
  // self-loops are allowed. Its committed id is in CommitInfo::edges.
  NewEdge AddEdge(std::string_view type, VertexRef source, VertexRef target,
                  std::span<const Property> properties = {});
  NewEdge AddEdge(std::string_view type, VertexRef source, VertexRef target,
                  std::initializer_list<Property> properties);

  // Sets (adds or replaces) one property of a vertex or an edge. All the
  // sets and removals of one element's properties in a batch are applied
  // together, in their order, its property block built once: O(k log k) for
  // k of them, whatever other operations come between them.
  void SetProperty(VertexRef vertex, std::string_view key, PropertyValue value);
  void SetProperty(EdgeRef edge, std::string_view key, PropertyValue value);

  // Removes one property; removing an absent key is not an error.
  void RemoveProperty(VertexRef vertex, std::string_view key);
  void RemoveProperty(EdgeRef edge, std::string_view key);

  // Removes an edge. Removing it twice, or removing an edge whose endpoint
  // this batch already removed, fails the batch with NotFound.
  void RemoveEdge(EdgeRef edge);

  // Removes a vertex and every edge incident to it.
  void RemoveVertex(VertexRef vertex);

  // --- Upserts

  // Finds the vertex of `label` whose properties `keys` hold these values,
  // through a ready unique index on `label` whose keys are exactly those
  // (in any order), or adds one holding `keys` and `properties`. A vertex
  // found gets `properties` as `mode` says (its keys keep their values).
  // Returns a handle like AddVertex's, usable by later operations of the
  // batch; CommitInfo::vertices holds its id (found or new) at the
  // handle's index, and CommitInfo::vertex_found says which it was.
  //
  // The vertex is looked up in the state the batch is applied to (after the
  // batches before it in its group) and among the batch's earlier upserts:
  // two upserts of one key in a batch name one vertex (the second merges
  // or replaces onto the first's result). Other operations of the batch do
  // not move the lookup: an AddVertex of the same key, before or after,
  // fails the batch with AlreadyExists like two adds would, and an upsert
  // that finds a vertex the batch removed earlier fails with NotFound.
  //
  // Fails the batch with FailedPrecondition when no ready unique index of
  // `label` covers exactly `keys`; InvalidArgument for an empty, repeated,
  // null or vector key value, a value of a type the index does not take, or
  // a property that is also one of the keys; and, before any lookup (so
  // whether it would find or add), for an empty or non-UTF-8 `label` or a
  // property key given twice in `properties`.
  //
  // Example:
  //   graph->CreateIndex({.name = "city_name", .label = "City", .keys = {"name"},
  //                       .kind = quiver::IndexKind::kUnique});
  //   quiver::WriteBatch b;
  //   quiver::NewVertex city = b.UpsertVertex("City", {{"name", "London"}}, {{"pop", 9}});
  //   b.AddEdge("LIVES_IN", quiver::VertexId(7), city);
  //   auto info = graph->Write(std::move(b));  // info->vertices[city.index]: London's id
  NewVertex UpsertVertex(std::string_view label, std::span<const Property> keys,
                         std::span<const Property> properties = {}, UpsertMode mode = UpsertMode::kMerge);
  NewVertex UpsertVertex(std::string_view label, std::initializer_list<Property> keys,
                         std::initializer_list<Property> properties = {},
                         UpsertMode mode = UpsertMode::kMerge);

  // Finds the edge of `type` from `source` to `target` through the type's
  // ready edge-endpoint constraint (IndexKind::kUniqueEndpoints, which
  // allows at most one such edge), or adds one with `properties`. An edge
  // found gets `properties` as `mode` says (kReplace: it ends with exactly
  // them). Returns a handle like AddEdge's, usable by later operations of
  // the batch; CommitInfo::edges holds its id (found or new) at the handle's
  // index, and CommitInfo::edge_found says which it was.
  //
  // Looked up like UpsertVertex: in the state the batch is applied to and
  // among the batch's earlier upserts, so two upserts of one (type, source,
  // target) in a batch name one edge. An AddEdge of the same pair, before
  // or after, fails the batch with AlreadyExists like two adds would; an
  // upsert that finds an edge the batch removed earlier fails with NotFound.
  // An endpoint may be a vertex the batch adds (then no committed edge can
  // match). Fails the batch with FailedPrecondition when the type has no
  // ready edge-endpoint constraint; before that, with InvalidArgument for an
  // empty or non-UTF-8 `type` or a property key given twice (whether the
  // upsert would find the edge or add it).
  //
  // Example:
  //   graph->CreateIndex({.name = "knows_once", .element = quiver::ElementKind::kEdge,
  //                       .label = "KNOWS", .kind = quiver::IndexKind::kUniqueEndpoints});
  //   quiver::WriteBatch b;
  //   quiver::NewEdge k = b.UpsertEdge("KNOWS", quiver::VertexId(1), quiver::VertexId(2), {{"since", 2020}});
  //   b.SetProperty(k, "seen", 3);  // on the edge found or added
  //   auto info = graph->Write(std::move(b));  // info->edges[k.index]; info->edge_found[k.index]
  NewEdge UpsertEdge(std::string_view type, VertexRef source, VertexRef target,
                     std::span<const Property> properties = {}, UpsertMode mode = UpsertMode::kMerge);
  NewEdge UpsertEdge(std::string_view type, VertexRef source, VertexRef target,
                     std::initializer_list<Property> properties, UpsertMode mode = UpsertMode::kMerge);

  // --- Expectations (conditional writes)
  //
  // Each is checked when the batch is validated, against the state the
  // batch is applied to (after the batches before it in its group; never
  // against the batch's own operations, wherever the expectation stands in
  // it). If one does not hold, the batch fails with Aborted, whose message
  // names the first failed one by its operation index and says what was
  // found; nothing of the batch is applied, and the other batches of its
  // group are unaffected. Expectations name committed elements only, and
  // are not logged: only what a batch changes is.
  //
  // Example: a counter incremented by many threads without losing one.
  //   for (;;) {
  //     quiver::Snapshot s = graph->GetSnapshot();
  //     std::int64_t n = *s.GetProperty(counter, "n")->as_int64();
  //     quiver::WriteBatch b;
  //     b.ExpectProperty(counter, "n", n);
  //     b.SetProperty(counter, "n", n + 1);
  //     auto r = graph->Write(std::move(b));
  //     if (r.ok() || r.status().code() != quiver::StatusCode::kAborted) break;
  //   }

  // Expects the element to exist and hold `key` with a value equal to
  // `value` (same type and value; a null value means the key holds null).
  void ExpectProperty(VertexId vertex, std::string_view key, PropertyValue value);
  void ExpectProperty(EdgeId edge, std::string_view key, PropertyValue value);

  // Expects the element to exist and not hold `key`.
  void ExpectNoProperty(VertexId vertex, std::string_view key);
  void ExpectNoProperty(EdgeId edge, std::string_view key);

  // Expects the element to exist (be live) / not to exist.
  void ExpectExists(VertexId vertex);
  void ExpectExists(EdgeId edge);
  void ExpectMissing(VertexId vertex);
  void ExpectMissing(EdgeId edge);

  // Expects no vertex of `label` to hold these key values, judged through a
  // ready unique index of `label` on exactly those keys (FailedPrecondition
  // without one, as for UpsertVertex).
  void ExpectKeyFree(std::string_view label, std::span<const Property> keys);
  void ExpectKeyFree(std::string_view label, std::initializer_list<Property> keys);

  // The number of recorded operations.
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  // How many AddVertex (and UpsertVertex) / AddEdge (and UpsertEdge) calls
  // the batch holds.
  std::size_t added_vertices() const { return added_vertices_; }
  std::size_t added_edges() const { return added_edges_; }

  // Forgets every operation; every handle valid in the batch before becomes
  // invalid (using one in the refilled batch fails it with InvalidArgument),
  // its own and those it had from the batch it was copied from. Keeps the
  // memory the batch has grown or reserved, for the next operations; to give
  // it back, assign an empty batch (`batch = quiver::WriteBatch()`).
  void Clear();

 private:
  friend class internal::WriteBatchInternal;
  struct OpRecord;  // write/write_batch_internal.h
  struct Rare;      // the fields few operations have, out of line
  struct Origin;    // a batch this one is a copy of, and its counts then

  std::uint64_t tag_;
  std::uint32_t added_vertices_ = 0;
  std::uint32_t added_edges_ = 0;
  std::uint32_t upserts_ = 0;       // UpsertVertex and UpsertEdge calls
  std::uint32_t expectations_ = 0;  // Expect* calls
  std::size_t counted_ops_ = 0;     // what Limits::max_batch_ops counts
  std::vector<OpRecord> ops_;
  std::vector<Property> properties_;  // the properties and values ops refer to
  std::vector<Rare> rare_;            // what index lifecycle ops carry
  // The batch's name table: every distinct label, edge type and key an
  // operation names, stored once; operations hold its index.
  std::string names_;                      // the names back to back
  std::vector<std::size_t> name_ends_;     // name i ends at name_ends_[i] in names_
  std::vector<std::uint32_t> name_slots_;  // open-addressing hash of name index + 1, once names are many
  std::uint32_t last_name_ = 0;            // index + 1 of the name interned last (0: none)
  // The batches this one was copied from, oldest first: a handle of theirs
  // is this batch's own if its index was below their count at the copy.
  // Empty unless the batch is a copy.
  std::vector<Origin> origins_;
};

}  // namespace quiver

#endif  // QUIVER_WRITE_BATCH_H_
