// A deterministic graph for checkpoint-writer tests: several labels and edge
// types, properties of every value type on some vertices and edges, removed
// vertices (with their edges) and removed edges, so a checkpoint of it has
// live and dead entries in every chunk. Also a reader of a checkpoint's block
// headers, to check how the writer cut the file.
#ifndef QUIVER_TESTS_CHECKPOINT_TEST_GRAPH_H_
#define QUIVER_TESTS_CHECKPOINT_TEST_GRAPH_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "quiver/quiver.h"

namespace quiver::test_util {

// Adds `vertices` vertices and about `out_degree` edges per vertex to `g`
// in batches, then removes every 17th vertex and every 13th surviving edge
// id. Returns the status of the first failed write.
inline Status BuildCheckpointTestGraph(Graph& g, std::uint64_t vertices, std::uint64_t out_degree) {
  const char* labels[] = {"Person", "City", "Thing"};
  const char* types[] = {"KNOWS", "LIVES_IN", "LIKES"};
  const std::uint64_t first = g.GetSnapshot().vertex_id_limit();
  constexpr std::uint64_t kBatch = 2000;
  for (std::uint64_t begin = 0; begin < vertices; begin += kBatch) {
    WriteBatch b;
    for (std::uint64_t i = begin; i < std::min(vertices, begin + kBatch); ++i) {
      if (i % 3 == 0) {
        b.AddVertex(labels[(i / 2) % 3], {{"i", static_cast<std::int64_t>(i)},
                                          {"name", "v" + std::to_string(i)},
                                          {"w", 0.25 * static_cast<double>(i)},
                                          {"ok", i % 2 == 0},
                                          {"raw", Bytes{std::byte{0}, std::byte(i & 0xFF)}}});
      } else if (i % 7 == 0) {
        b.AddVertex(labels[(i / 2) % 3],
                    {{"vec", std::vector<float>{1.5f, static_cast<float>(i)}}, {"none", nullptr}});
      } else {
        b.AddVertex(labels[(i / 2) % 3]);
      }
    }
    Result<CommitInfo> r = g.Write(std::move(b));
    if (!r.ok()) return r.status();
  }
  std::uint64_t state = 88172645463325252ULL;  // xorshift64
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (std::uint64_t begin = 0; begin < vertices; begin += kBatch) {
    WriteBatch b;
    for (std::uint64_t i = begin; i < std::min(vertices, begin + kBatch); ++i) {
      for (std::uint64_t d = 0; d < out_degree; ++d) {
        const VertexId src(first + i), dst(first + next() % vertices);
        const char* type = types[(i + d) % 3];
        if ((i + d) % 5 == 0) {
          b.AddEdge(type, src, dst, {{"since", static_cast<std::int64_t>(i * 10 + d)}});
        } else {
          b.AddEdge(type, src, dst);
        }
      }
    }
    Result<CommitInfo> r = g.Write(std::move(b));
    if (!r.ok()) return r.status();
  }
  WriteBatch removals;
  for (std::uint64_t i = 5; i < vertices; i += 17) removals.RemoveVertex(VertexId(first + i));
  Result<CommitInfo> r = g.Write(std::move(removals));
  if (!r.ok()) return r.status();
  // Edge removals one batch each, skipping edges already gone with a vertex.
  const Snapshot s = g.GetSnapshot();
  WriteBatch edges;
  for (std::uint64_t e = 3; e < s.edge_id_limit(); e += 13) {
    if (s.GetEdge(EdgeId(e))) edges.RemoveEdge(EdgeId(e));
  }
  r = g.Write(std::move(edges));
  return r.ok() ? Status::Ok() : r.status();
}

// The number of blocks of each kind in checkpoint bytes `file` (which must
// be well formed: only the block lengths are followed).
inline std::map<checkpoint::BlockKind, std::uint64_t> CountBlocks(const std::string& file) {
  std::map<checkpoint::BlockKind, std::uint64_t> blocks;
  for (std::size_t at = checkpoint::kHeaderBytes; at + checkpoint::kBlockHeaderBytes <= file.size();) {
    std::uint32_t length;
    std::memcpy(&length, file.data() + at + 4, 4);
    ++blocks[static_cast<checkpoint::BlockKind>(file[at])];
    at += checkpoint::kBlockHeaderBytes + length;
  }
  return blocks;
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_CHECKPOINT_TEST_GRAPH_H_
