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
// meaningful to the batch that returned it; using it in another batch fails
// that batch with InvalidArgument.
struct NewVertex {
  std::uint32_t batch_tag = 0;
  std::uint32_t index = 0;
};

// A handle on an edge added earlier in the same batch.
struct NewEdge {
  std::uint32_t batch_tag = 0;
  std::uint32_t index = 0;
};

// Names a vertex: either a committed one by id or one added in this batch.
class VertexRef {
 public:
  VertexRef(VertexId id) : id_(id.value()) {}                                 // NOLINT
  VertexRef(NewVertex v) : id_(v.index), tag_(v.batch_tag), is_new_(true) {}  // NOLINT
  bool is_new() const { return is_new_; }
  std::uint64_t raw() const { return id_; }
  std::uint32_t batch_tag() const { return tag_; }

 private:
  std::uint64_t id_;
  std::uint32_t tag_ = 0;
  bool is_new_ = false;
};

// Names an edge: either a committed one by id or one added in this batch.
class EdgeRef {
 public:
  EdgeRef(EdgeId id) : id_(id.value()) {}                                 // NOLINT
  EdgeRef(NewEdge e) : id_(e.index), tag_(e.batch_tag), is_new_(true) {}  // NOLINT
  bool is_new() const { return is_new_; }
  std::uint64_t raw() const { return id_; }
  std::uint32_t batch_tag() const { return tag_; }

 private:
  std::uint64_t id_;
  std::uint32_t tag_ = 0;
  bool is_new_ = false;
};

class WriteBatch {
 public:
  WriteBatch();
  WriteBatch(const WriteBatch&);
  WriteBatch& operator=(const WriteBatch&);
  WriteBatch(WriteBatch&&) noexcept;
  WriteBatch& operator=(WriteBatch&&) noexcept;
  ~WriteBatch();

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

  // Sets (adds or replaces) one property of a vertex or an edge.
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

  // The number of recorded operations.
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  // How many AddVertex / AddEdge calls the batch holds.
  std::size_t added_vertices() const { return added_vertices_; }
  std::size_t added_edges() const { return added_edges_; }

  // Forgets every operation; handles returned earlier become invalid.
  void Clear();

 private:
  friend class internal::WriteBatchInternal;
  struct Op;

  std::uint32_t tag_;
  std::uint32_t added_vertices_ = 0;
  std::uint32_t added_edges_ = 0;
  std::size_t counted_ops_ = 0;  // what Limits::max_batch_ops counts
  std::vector<Op> ops_;
  std::vector<Property> properties_;  // the properties and values ops refer to
};

}  // namespace quiver

#endif  // QUIVER_WRITE_BATCH_H_
