// CommitIndex: a recovered graph regrouped by crash-loop commit, and the
// check of one commit's elements against its generated contents.
//
// Thread safety: plain values and functions; the snapshot is only read.
#ifndef QUIVER_TOOLS_CRASHLOOP_COMMIT_INDEX_H_
#define QUIVER_TOOLS_CRASHLOOP_COMMIT_INDEX_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "commit_spec.h"
#include "quiver/ids.h"
#include "quiver/snapshot.h"

namespace quiver::crashloop {

// The elements of one commit id found in the graph.
struct FoundCommit {
  std::vector<VertexId> markers;  // normally one
  std::vector<VertexId> vertices;
  std::vector<EdgeId> edges;
};

struct CommitIndex {
  std::map<std::uint64_t, FoundCommit> commits;
  // Commit ids of the markers in ascending vertex id: marker k (1-based) is
  // the commit with sequence k.
  std::vector<std::uint64_t> markers_in_order;
  // The upserted Key vertices, by their key k.
  std::map<std::int64_t, std::vector<VertexId>> keys;
  // Elements that carry no commit id (or a marker without an id, or a Key
  // vertex without an int64 k).
  std::uint64_t strays = 0;
};

CommitIndex IndexCommits(const Snapshot& snapshot);

enum class CommitState {
  kAbsent,   // nothing of it
  kWhole,    // exactly its generated contents
  kPartial,  // some of its elements, not all
  kWrong,    // all of them present, but something differs (or a duplicate marker)
};

// Compares what was found of `spec.id` with `spec`; on anything but
// kAbsent / kWhole, `why` says what differs.
CommitState CheckCommit(const Snapshot& snapshot, const CommitSpec& spec, const FoundCommit& found,
                        std::string* why);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_COMMIT_INDEX_H_
