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
// Besides its elements, a commit may upsert "Key" vertices by a unique key
// (k, one of kKeySpace values shared by the whole run, so most upserts find
// a vertex an earlier commit made) and carry expectations whose outcome is
// fixed by the spec alone: kHolds expects what is always so (a vertex id far
// beyond any graph here is missing, a reserved key is free), kFails also
// expects that far vertex to exist, so the batch must fail with Aborted and
// leave nothing. Upserts set "last" = the commit id (and sometimes "val" or
// "tag"), merging or replacing: the state of every Key vertex is a function
// of which commits are present and their order, which the verifier replays.
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
inline constexpr std::string_view kKeyLabel = "Key";      // upserted vertices
inline constexpr std::string_view kKeyKey = "k";          // their unique key (int64)
inline constexpr std::string_view kLastKey = "last";      // the id of the last commit that upserted them
inline constexpr std::int64_t kKeySpace = 48;             // k is in [0, kKeySpace)
inline constexpr std::int64_t kFreeKey = -1;              // never upserted: ExpectKeyFree holds
// No graph of the loop comes near this many vertices.
inline constexpr std::uint64_t kFarVertex = std::uint64_t{1} << 40;

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

// One UpsertVertex("Key", {k}, properties, mode) of a commit.
struct UpsertSpec {
  std::int64_t k = 0;
  std::vector<Property> properties;  // last, maybe val / tag
  UpsertMode mode = UpsertMode::kMerge;
};

enum class Expectation : std::uint8_t {
  kNone,
  kHolds,  // ExpectMissing(far vertex), ExpectKeyFree(Key, k = kFreeKey): the batch commits
  kFails,  // those and ExpectExists(far vertex): the batch fails with Aborted, nothing applied
};

struct CommitSpec {
  std::uint64_t id = 0;
  std::vector<UpsertSpec> upserts;  // in batch order, after the marker
  Expectation expectation = Expectation::kNone;
  std::vector<Property> marker_properties;  // id, count, maybe pad / big
  std::vector<ElementSpec> elements;        // positions 1..k-1
  // k: every element of the commit, the marker included.
  std::uint64_t count() const { return elements.size() + 1; }
};

// The commit numbered `commit_id` of a run seeded with `seed`.
CommitSpec MakeCommitSpec(std::uint64_t seed, std::uint64_t commit_id);

// The batch that writes `spec`: the marker first, then the upserts, then
// the elements in position order (so CommitInfo::vertices[0] is the
// marker), then the expectations. Upserts need the ready unique index
// kKeyIndex (index_catalog.h) on Key.k.
WriteBatch BuildBatch(const CommitSpec& spec);

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_COMMIT_SPEC_H_
