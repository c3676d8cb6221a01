// IndexMaintainer: what the writer calls for every change of an element, so
// that the version's label sets, key counts and property indexes follow the
// data in the same version (DESIGN.md, "Indexes and the change feed").
//
// BatchProcessor::Apply funnels every add, remove and property change of a
// vertex or an edge through one step that knows the element's property
// block before and after the change (ElementChange), and calls OnChange
// there, before the old block is freed or retired. OnChange diffs the two:
// label (type) set membership on add and remove, key counts for keys that
// appear or disappear, and for each index of the element's label the old
// and the new key (erase and insert only when they differ): O(properties of
// the element + changed entries x log n).
//
// One exception keeps the common case cheap: a value overwritten in place
// in a block private to the group (BatchProcessor::SetInPlace) is not
// shown, because the key is present before and after (no count changes)
// and no index covers it: NeedsOldBlock says when that holds. The change
// feed needs no such step: feed::EffectsRecorder copies the old values a
// batch changes before it is applied and compares them with the result.
//
// Online builds: while an index is being built (state kBuilding), changes of
// its label's elements are not applied to it; their ids are recorded
// instead (Tracked), for the build's catch-up when it is published. An id
// first recorded by a group that is rolled back is forgotten (EndGroup): the
// next group hands that id out again, maybe to an element of another label.
//
// Thread safety: the writer thread (or recovery) only.
#ifndef QUIVER_INDEX_MAINTAINER_H_
#define QUIVER_INDEX_MAINTAINER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/safe_hash.h"
#include "index/catalog.h"
#include "storage/elements.h"
#include "storage/retire_list.h"

namespace quiver::index {

// One element's state before and after one change.
struct ElementChange {
  ElementKind kind = ElementKind::kVertex;
  std::uint64_t id = 0;
  std::uint32_t label = 0;                     // vertex label or edge type
  const storage::PropBlock* before = nullptr;  // null: no properties, or added
  const storage::PropBlock* after = nullptr;   // null: no properties, or removed
  bool added = false;                          // did not exist before
  bool removed = false;                        // does not exist after
  // Edges added or removed: the endpoints (what kUniqueEndpoints indexes).
  std::uint64_t source = 0, target = 0;
};

// Recorded ids of a building index, each with the sequence number of the
// newest batch recorded to change it (or a larger one: a rolled-back
// group's number stays, and is handed out again), so that the catch-up can
// pass over ids the built tree already holds as they are now.
using TrackedIds = base::SafeFlatHashMap<std::uint64_t, SequenceNumber>;

class IndexMaintainer {
 public:
  // Recovery: building indexes are not tracked (they are built once the
  // log is replayed).
  void set_tracking(bool on) { tracking_ = on; }

  // False if overwriting `key` of an element of (kind, label) in place,
  // unseen, keeps every derived structure right: no index of that label
  // covers the key.
  bool NeedsOldBlock(const storage::GraphRoots& g, ElementKind kind, std::uint32_t label,
                     std::uint32_t key) const;

  // Applies one change to g.catalog (cloned on its first change in the
  // group). Throws std::bad_alloc (the group rolls back).
  void OnChange(const ElementChange& c, storage::GraphRoots& g, storage::MutationContext& ctx);

  // What is recorded so far for that index, or null.
  const TrackedIds* Tracked(SequenceNumber declared) const {
    auto it = tracked_.find(declared);
    return it == tracked_.end() ? nullptr : &it->second;
  }
  // Forgets what was recorded for a dropped or published index.
  void Forget(SequenceNumber declared) { tracked_.erase(declared); }

  // After the group's version was published (true) or rolled back (false):
  // the ids the group was the first to record are kept, or forgotten.
  void EndGroup(bool published);

 private:
  // Key counts: +1 for keys only `after` has, -1 for keys only `before` has.
  void CountKeys(const ElementChange& c, Catalog*& cat, storage::GraphRoots& g,
                 storage::MutationContext& ctx);
  void UpdateIndex(const ElementChange& c, PropertyIndex& p, storage::MutationContext& ctx);
  Catalog* Own(storage::GraphRoots& g, storage::MutationContext& ctx);
  void Track(SequenceNumber declared, std::uint64_t id, SequenceNumber changed);

  bool tracking_ = true;
  // Kept across groups; base::Safe*, so a group that runs out of memory
  // while it records leaves them usable (and EndGroup forgets its ids).
  base::SafeFlatHashMap<SequenceNumber, TrackedIds> tracked_;
  // (index, id) pairs the open group added to tracked_.
  std::vector<std::pair<SequenceNumber, std::uint64_t>> recorded_;
  std::string old_key_, new_key_;  // scratch
};

}  // namespace quiver::index

#endif  // QUIVER_INDEX_MAINTAINER_H_
