// EffectsRecorder: computes one committed batch's ChangeBatch on the
// committing thread, from the version being built just before and just
// after the batch is applied (quiver/change_feed.h says what the effects
// are). Used only while a change feed subscription is open.
//
// Before(plain, g) runs after Validate and before Apply, against the state
// the batch applies to: it copies what the batch is about to overwrite (the
// old values of the properties it sets or removes on elements that existed,
// and the elements it removes, with every edge of a removed vertex). After
// Apply, Finish(plain, g, ...) reads the new state: the elements created
// (ids from the limits before the batch up to the new limits) and the new
// values, and keeps only net changes. Cost: O(what the batch touches plus
// the edges of the vertices it removes), copies included.
//
// Thread safety: one instance, used by whichever thread commits (one at a time).
#ifndef QUIVER_FEED_EFFECTS_H_
#define QUIVER_FEED_EFFECTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "quiver/change_feed.h"
#include "quiver/write_batch.h"
#include "storage/elements.h"

namespace quiver::feed {

class EffectsRecorder {
 public:
  // `plain`: the batch as applied (resolved, if it held upserts or
  // expectations). May throw std::bad_alloc (the group is then rolled back).
  void Before(const WriteBatch& plain, const storage::GraphRoots& g);
  // The batch's effects; `first_vertex` / `first_edge` are g's vertex and
  // edge limits before the batch. May throw std::bad_alloc.
  std::shared_ptr<const ChangeBatch> Finish(const WriteBatch& plain, const storage::GraphRoots& g,
                                            SequenceNumber sequence, std::uint64_t first_vertex,
                                            std::uint64_t first_edge);

 private:
  using Key = std::pair<std::uint64_t, std::string>;  // element id, property key
  void RecordEdge(const storage::GraphRoots& g, std::uint64_t id);

  std::map<Key, std::optional<PropertyValue>> vertex_old_;
  std::map<Key, std::optional<PropertyValue>> edge_old_;
  std::map<std::uint64_t, VertexRecord> removed_vertices_;
  std::map<std::uint64_t, EdgeRecord> removed_edges_;
};

}  // namespace quiver::feed

#endif  // QUIVER_FEED_EFFECTS_H_
