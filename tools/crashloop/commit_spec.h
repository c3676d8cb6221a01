// CommitSpec: the contents of one crash-loop commit, a pure function of
// (seed, commit id), so the child that writes a commit and the parent that
// checks it after a crash agree on it without exchanging more than the id.
//
// A commit of count k is one WriteBatch: a marker vertex labelled "commit"
// with properties id=<commit id> and count=<k> (sometimes also a "pad"
// string or, rarely, a "big" bytes value over one WAL fragment), then k-1
// elements. Each element is a vertex or an edge between two vertices of the
// same commit, and carries commit=<commit id>, idx=<its position 1..k-1> and
// up to three random values of every property type. Nothing refers to data
// outside the commit, so every batch validates against any state, and the
// order in which commits land does not change their contents.
//
// Example:
//   CommitSpec spec = MakeCommitSpec(seed, id);
//   Result<CommitInfo> r = graph->Write(BuildBatch(spec));
//
// Thread safety: plain functions of their arguments.
#ifndef QUIVER_TOOLS_CRASHLOOP_COMMIT_SPEC_H_
#define QUIVER_TOOLS_CRASHLOOP_COMMIT_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/value.h"
#include "quiver/write_batch.h"

namespace quiver::crashloop {

inline constexpr std::string_view kMarkerLabel = "commit";
inline constexpr std::string_view kIdKey = "id";          // marker: the commit id
inline constexpr std::string_view kCountKey = "count";    // marker: k, elements including the marker
inline constexpr std::string_view kCommitKey = "commit";  // other elements: their commit id
inline constexpr std::string_view kIdxKey = "idx";        // other elements: position 1..k-1

// One element of a commit after its marker.
struct ElementSpec {
  bool is_edge = false;
  std::string name;  // vertex label or edge type
  // Edges only: positions of the endpoints in the commit (0 is the marker;
  // any other position names an earlier vertex element).
  std::uint32_t source = 0;
  std::uint32_t target = 0;
  std::vector<Property> properties;  // commit, idx, then the random ones; keys distinct
};

struct CommitSpec {
  std::uint64_t id = 0;
  std::vector<Property> marker_properties;  // id, count, maybe pad / big
  std::vector<ElementSpec> elements;        // positions 1..k-1
  // k: every element of the commit, the marker included.
  std::uint64_t count() const { return elements.size() + 1; }
};

// The commit numbered `commit_id` of a run seeded with `seed`.
CommitSpec MakeCommitSpec(std::uint64_t seed, std::uint64_t commit_id);

// The batch that writes `spec`: the marker first, then the elements in
// position order (so CommitInfo::vertices[0] is the marker).
WriteBatch BuildBatch(const CommitSpec& spec);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_COMMIT_SPEC_H_
