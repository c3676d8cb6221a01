// Review of commit 88a5691 (Project: sorting networks, a copy loop, and the
// in adjacency of an unweighted directed projection read from storage's
// in-arrays instead of transposed from the out CSR).
//
// Every check is differential: the unweighted projection against
//   - the same spec weighted with a default weight (whose out side is the
//     old per-entry fill and whose in side, with out + in, is still the
//     transpose): neighbour arrays must be identical;
//   - itself on 1..4 threads: identical arrays;
//   - its own out CSR transposed (the in side must be exactly that);
//   - the in side of the out + in projection (an in-only projection).
// On graphs with directory heads (several edge types), packed heads (a
// durable graph reopened from its checkpoint), packed heads that a later
// write moved out, removed vertices and edges, vertices whose edges were all
// removed, lists of 16, 17, 32 and 33 entries, self-loops and parallel edges,
// and snapshots held across later writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "loop_sample.h"
#include "quiver/analytics.h"
#include "quiver/quiver.h"
#include "snapshot_internal.h"
#include "storage/adjacency.h"
#include "storage/elements.h"

namespace quiver {
namespace projection_review_test {
namespace {

// A projection's arrays as plain vectors (offsets per direction, targets).
struct ProjReviewArrays {
  std::uint32_t vertex_count = 0;
  std::vector<std::uint64_t> ids;
  bool has_out = false, has_in = false;
  std::vector<std::uint64_t> out_off, in_off;
  std::vector<std::uint32_t> out_t, in_t;
  std::uint64_t edge_count = 0;
  bool operator==(const ProjReviewArrays&) const = default;
};

ProjReviewArrays ProjReviewFlatten(const Projection& p) {
  ProjReviewArrays a;
  a.vertex_count = p.vertex_count();
  a.has_out = p.has_out();
  a.has_in = p.has_in();
  a.edge_count = p.edge_count();
  for (std::uint32_t v = 0; v < p.vertex_count(); ++v) a.ids.push_back(p.ToVertexId(v).value());
  if (a.has_out) {
    a.out_off.push_back(0);
    for (std::uint32_t v = 0; v < p.vertex_count(); ++v) {
      for (std::uint32_t t : p.OutNeighbors(v)) a.out_t.push_back(t);
      a.out_off.push_back(a.out_t.size());
    }
  }
  if (a.has_in) {
    a.in_off.push_back(0);
    for (std::uint32_t v = 0; v < p.vertex_count(); ++v) {
      for (std::uint32_t t : p.InNeighbors(v)) a.in_t.push_back(t);
      a.in_off.push_back(a.in_t.size());
    }
  }
  return a;
}

std::string ProjReviewName(const ProjectionSpec& s) {
  std::string r = s.undirected ? "undirected" : (s.out && s.in ? "out+in" : s.out ? "out" : "in");
  r += " loops=" + std::to_string(static_cast<int>(s.self_loops));
  r += " parallel=" + std::to_string(static_cast<int>(s.parallel_edges));
  r += " types=";
  for (const auto& t : s.edge_types) r += t + ",";
  r += " labels=";
  for (const auto& l : s.vertex_labels) r += l + ",";
  r += " threads=" + std::to_string(s.threads);
  return r;
}

// The in CSR the out CSR implies: for every out entry u -> t, u in in(t);
// each list sorted.
std::vector<std::vector<std::uint32_t>> ProjReviewTranspose(const ProjReviewArrays& a) {
  std::vector<std::vector<std::uint32_t>> in(a.vertex_count);
  for (std::uint32_t u = 0; u < a.vertex_count; ++u)
    for (std::uint64_t k = a.out_off[u]; k < a.out_off[u + 1]; ++k) in[a.out_t[k]].push_back(u);
  for (auto& l : in) std::sort(l.begin(), l.end());
  return in;
}

std::vector<ProjectionSpec> ProjReviewSpecs() {
  std::vector<ProjectionSpec> specs;
  const std::vector<std::vector<std::string>> types = {{}, {"T"}, {"T", "U"}};
  const std::vector<std::vector<std::string>> labels = {{}, {"A"}};
  for (int shape = 0; shape < 4; ++shape)
    for (SelfLoops loops : {SelfLoops::kKeep, SelfLoops::kDrop})
      for (ParallelEdges par : {ParallelEdges::kKeep, ParallelEdges::kDrop, ParallelEdges::kMerge})
        for (const auto& ty : types)
          for (const auto& la : labels) {
            ProjectionSpec s;
            s.undirected = shape == 3;
            s.out = shape == 0 || shape == 1;
            s.in = shape == 0 || shape == 2;
            s.self_loops = loops;
            s.parallel_edges = par;
            s.edge_types = ty;
            s.vertex_labels = la;
            specs.push_back(s);
          }
  return specs;
}

// Checks every spec shape on `snap` (see the file comment).
void ProjReviewCheckSnapshot(const Snapshot& snap) {
  // Thread counts 2..4 beside 1: one of the three per run (loop_sample.h;
  // all three with QUIVER_EVERY_POINT=1).
  static const test_util::LoopSample threads_sample("projection review thread counts 2..4", 3, 2);
  SCOPED_TRACE(threads_sample.Describe());
  for (ProjectionSpec spec : ProjReviewSpecs()) {
    spec.threads = 1;
    SCOPED_TRACE(ProjReviewName(spec));
    auto base = Project(snap, spec);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    const ProjReviewArrays a = ProjReviewFlatten(*base);
    // Threads 2..4: the same arrays.
    for (std::uint32_t threads = 2; threads <= 4; ++threads) {
      if (!threads_sample.Tries(threads)) continue;
      ProjectionSpec st = spec;
      st.threads = threads;
      auto p = Project(snap, st);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      EXPECT_TRUE(ProjReviewFlatten(*p) == a) << "threads " << threads;
    }
    // Weighted with a default weight: the same neighbour arrays.
    {
      ProjectionSpec sw = spec;
      sw.weight_property = "w";
      sw.default_weight = 1.0;
      auto p = Project(snap, sw);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      const ProjReviewArrays w = ProjReviewFlatten(*p);
      EXPECT_EQ(w.out_off, a.out_off);
      EXPECT_EQ(w.out_t, a.out_t);
      EXPECT_EQ(w.in_off, a.in_off) << "in offsets differ from the weighted (transpose) path";
      EXPECT_EQ(w.in_t, a.in_t) << "in neighbours differ from the weighted (transpose) path";
      EXPECT_EQ(w.edge_count, a.edge_count);
    }
    // Every list sorted; offsets consistent.
    for (std::uint32_t v = 0; v < a.vertex_count; ++v) {
      if (a.has_out) {
        ASSERT_LE(a.out_off[v], a.out_off[v + 1]);
        EXPECT_TRUE(std::is_sorted(a.out_t.begin() + a.out_off[v], a.out_t.begin() + a.out_off[v + 1]));
      }
      if (a.has_in) {
        ASSERT_LE(a.in_off[v], a.in_off[v + 1]);
        EXPECT_TRUE(std::is_sorted(a.in_t.begin() + a.in_off[v], a.in_t.begin() + a.in_off[v + 1]));
      }
    }
    for (std::uint32_t t : a.out_t) ASSERT_LT(t, a.vertex_count);
    for (std::uint32_t t : a.in_t) ASSERT_LT(t, a.vertex_count);
    if (a.has_out) {
      EXPECT_EQ(a.edge_count, a.out_t.size());
    }
    // Directed out + in: in is exactly out transposed.
    if (!spec.undirected && spec.out && spec.in) {
      const auto want = ProjReviewTranspose(a);
      for (std::uint32_t v = 0; v < a.vertex_count; ++v) {
        const std::vector<std::uint32_t> got(a.in_t.begin() + a.in_off[v], a.in_t.begin() + a.in_off[v + 1]);
        ASSERT_EQ(got, want[v]) << "in(" << a.ids[v] << ") is not the transpose of out";
      }
    }
    // In only: the in side of out + in.
    if (!spec.undirected && !spec.out && spec.in) {
      ProjectionSpec both = spec;
      both.out = true;
      auto p = Project(snap, both);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      const ProjReviewArrays b = ProjReviewFlatten(*p);
      EXPECT_EQ(b.in_off, a.in_off);
      EXPECT_EQ(b.in_t, a.in_t);
    }
    // The memory limit at exactly memory_bytes() passes and one byte under
    // it fails (without parallel-edge removal the check sees the final size).
    if (spec.parallel_edges == ParallelEdges::kKeep) {
      ProjectionSpec sm = spec;
      sm.memory_limit_bytes = base->memory_bytes();
      auto ok = Project(snap, sm);
      EXPECT_TRUE(ok.ok()) << ok.status().ToString();
      sm.memory_limit_bytes = base->memory_bytes() - 1;
      auto refused = Project(snap, sm);
      EXPECT_FALSE(refused.ok()) << "one byte under memory_bytes() " << base->memory_bytes();
      if (!refused.ok()) {
        EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
      }
    }
  }
}

constexpr int kProjReviewVertices = 150;  // three vertex leaves of 64

// Vertices 0..149 (labels A and B), edges of types T, U and V; "w" on some.
// Vertex 0..3: out lists of 16, 17, 32, 33 distinct targets added in
// descending order; vertex 4..7: in lists of 16, 17, 32, 33; vertex 8: three
// edge types (a directory) with self-loops and parallel edges; the rest random.
std::vector<VertexId> ProjReviewPopulate(Graph* g, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  WriteBatch vb;
  for (int i = 0; i < kProjReviewVertices; ++i) vb.AddVertex(i % 3 == 2 ? "B" : "A");
  const std::vector<VertexId> ids = g->Write(std::move(vb)).value().vertices;
  WriteBatch eb;
  const int sizes[] = {16, 17, 32, 33};
  for (int k = 0; k < 4; ++k) {
    for (int j = sizes[k]; j >= 1; --j) eb.AddEdge("T", ids[k], ids[(k + 3 * j) % kProjReviewVertices]);
    for (int j = sizes[k]; j >= 1; --j)
      eb.AddEdge("T", ids[(4 + k + 5 * j) % kProjReviewVertices], ids[4 + k]);
  }
  const char* types[] = {"T", "U", "V"};
  for (int j = 0; j < 30; ++j) {
    const int t = static_cast<int>(rng() % kProjReviewVertices);
    eb.AddEdge(types[j % 3], ids[8], ids[t]);
    if (j % 4 == 0) eb.AddEdge(types[j % 3], ids[8], ids[8]);
    if (j % 5 == 0) eb.AddEdge(types[(j + 1) % 3], ids[t], ids[8]);
  }
  for (int j = 0; j < 900; ++j) {
    const int s = static_cast<int>(rng() % kProjReviewVertices);
    int t = static_cast<int>(rng() % kProjReviewVertices);
    if (rng() % 10 == 0) t = s;
    // Most vertices one type (packable), every seventh several.
    const char* type = s % 7 == 0 ? types[rng() % 3] : "T";
    if (rng() % 6 == 0) {
      eb.AddEdge(type, ids[s], ids[t], {{"w", 2.0}});
    } else {
      eb.AddEdge(type, ids[s], ids[t]);
    }
    if (rng() % 8 == 0) eb.AddEdge(type, ids[s], ids[t]);  // parallel
  }
  // Vertex 9's and vertex 10's edges, to remove below.
  for (int j = 0; j < 12; ++j) {
    eb.AddEdge("T", ids[9], ids[20 + j]);
    eb.AddEdge("U", ids[30 + j], ids[9]);
    eb.AddEdge(j % 2 ? "T" : "U", ids[10], ids[40 + j]);
  }
  EXPECT_TRUE(g->Write(std::move(eb)).ok());
  return ids;
}

// Removes: every edge of vertex 9 (it stays), every U edge of vertex 10, a
// few vertices (holes), and every twentieth edge.
void ProjReviewRemove(Graph* g, const std::vector<VertexId>& ids, bool remove_vertices = true) {
  const Snapshot s = g->GetSnapshot();
  WriteBatch rb;
  std::vector<std::uint64_t> removed;
  auto remove = [&](EdgeId e) {
    if (std::find(removed.begin(), removed.end(), e.value()) != removed.end()) return;
    removed.push_back(e.value());
    rb.RemoveEdge(e);
  };
  for (Direction d : {Direction::kOut, Direction::kIn})
    for (const EdgeGroup& grp : s.Edges(ids[9], d))
      for (const EdgeEntry& e : grp.entries) remove(e.edge());
  {
    const auto u = s.FindEdgeType("U");
    ASSERT_TRUE(u.has_value());
    for (const EdgeEntry& e : s.OutEdges(ids[10], *u)) remove(e.edge());
  }
  const std::uint64_t limit = s.edge_id_limit();
  for (std::uint64_t e = 5; e < limit; e += 20)
    if (s.HasEdge(EdgeId(e))) remove(EdgeId(e));
  if (remove_vertices)
    for (int v = 50; v < kProjReviewVertices; v += 37) rb.RemoveVertex(ids[v]);
  ASSERT_TRUE(g->Write(std::move(rb)).ok());
}

// How many live vertex slots of `snap` have a packed head in either direction.
std::uint64_t ProjReviewPackedHeads(const Snapshot& snap) {
  const storage::GraphRoots& g = SnapshotInternal::Roots(snap);
  std::uint64_t n = 0;
  for (std::uint64_t v = 0; v < g.vertex_limit; ++v) {
    const storage::VertexTable::Leaf* leaf = storage::VertexTable::FindLeaf(g.vertices, v);
    if (leaf == nullptr) continue;
    const storage::VertexSlot& s = leaf->slots[v & (storage::VertexTable::kLeafSize - 1)];
    if (s.label == storage::kDeadLabel) continue;
    n += storage::IsPacked(s.out_head) + storage::IsPacked(s.in_head);
  }
  return n;
}

Options ProjReviewDurableOptions() {
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  return o;
}

// In memory: directory heads, holes, removed edges, an old snapshot.
TEST(ProjectionReviewTest, InMemoryEveryShapeMatchesTheReferencePaths) {
  auto g = Graph::OpenInMemory().value();
  const std::vector<VertexId> ids = ProjReviewPopulate(g.get(), 11);
  const Snapshot before = g->GetSnapshot();
  {
    SCOPED_TRACE("before removals");
    ProjReviewCheckSnapshot(before);
  }
  ProjReviewRemove(g.get(), ids);
  // Appends after the snapshot: in place past the counts `before` sees.
  WriteBatch more;
  for (int j = 0; j < 40; ++j) more.AddEdge("T", ids[(j * 13) % 40], ids[(j * 7) % 45]);
  ASSERT_TRUE(g->Write(std::move(more)).ok());
  {
    SCOPED_TRACE("old snapshot after later writes");
    ProjReviewCheckSnapshot(before);
  }
  {
    SCOPED_TRACE("after removals");
    ProjReviewCheckSnapshot(g->GetSnapshot());
  }
}

// Every id live and every label included: identity dense ids with a label
// filter (the copy loop runs, Count reads entries one by one).
TEST(ProjectionReviewTest, LabelFilterThatKeepsEveryVertex) {
  auto g = Graph::OpenInMemory().value();
  WriteBatch vb;
  for (int i = 0; i < 70; ++i) vb.AddVertex("A");
  const std::vector<VertexId> ids = g->Write(std::move(vb)).value().vertices;
  WriteBatch eb;
  for (int i = 0; i < 70; ++i)
    for (int j = 0; j < (i % 35); ++j) eb.AddEdge(j % 3 ? "T" : "U", ids[i], ids[(i * 5 + j * 11) % 70]);
  eb.AddEdge("T", ids[3], ids[3], {{"w", 3.0}});
  eb.AddEdge("T", ids[3], ids[3]);
  ASSERT_TRUE(g->Write(std::move(eb)).ok());
  ProjReviewCheckSnapshot(g->GetSnapshot());
}

// A durable graph reopened from its checkpoint: packed heads (one type) and
// arrays (several types) side by side; then writes that move some packed
// vertices out, with the reopened snapshot held across them.
// A graph of `vertices` vertices (every b_every-th labelled B, the rest A)
// and `edges` uniformly random edges of type T (U from every u_every-th
// source, on odd steps), a self-loop every loop_every-th, and beside every
// weighted_every-th a parallel T edge carrying weight `weight`. Returns the
// vertex ids.
struct ProjReviewShape {
  int vertices, b_every, edges;
  std::uint64_t seed;
  int loop_every, u_every, weighted_every;
  double weight;
};
std::vector<VertexId> ProjReviewRandomEdges(Graph* g, const ProjReviewShape& shape) {
  WriteBatch vb;
  for (int i = 0; i < shape.vertices; ++i) vb.AddVertex(i % shape.b_every == shape.b_every - 1 ? "B" : "A");
  std::vector<VertexId> ids = g->Write(std::move(vb)).value().vertices;
  std::mt19937_64 rng(shape.seed);
  WriteBatch eb;
  for (int j = 0; j < shape.edges; ++j) {
    const int s = static_cast<int>(rng() % shape.vertices);
    int t = static_cast<int>(rng() % shape.vertices);
    if (j % shape.loop_every == 0) t = s;
    eb.AddEdge(s % shape.u_every == 0 && j % 2 ? "U" : "T", ids[s], ids[t]);
    if (j % shape.weighted_every == 0) eb.AddEdge("T", ids[s], ids[t], {{"w", shape.weight}});
  }
  EXPECT_TRUE(g->Write(std::move(eb)).ok());
  return ids;
}

void ProjReviewPackedCase(bool remove_vertices) {
  env::SimFileSystem fs;
  std::vector<VertexId> ids;
  {
    auto g = GraphImpl::OpenDurable(ProjReviewDurableOptions(), "/db", &fs).value();
    ids = ProjReviewPopulate(g.get(), 23);
    ProjReviewRemove(g.get(), ids, remove_vertices);
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(ProjReviewDurableOptions(), "/db", &fs).value();
  const Snapshot loaded = g->GetSnapshot();
  ASSERT_GT(ProjReviewPackedHeads(loaded), 100u) << "the reload packed nothing: the test tests nothing";
  {
    SCOPED_TRACE("reopened");
    ProjReviewCheckSnapshot(loaded);
  }
  WriteBatch more;
  for (int j = 0; j < 60; ++j) more.AddEdge(j % 2 ? "T" : "U", ids[(j * 13) % 49], ids[(j * 7) % 47]);
  ASSERT_TRUE(g->Write(std::move(more)).ok());
  {
    const Snapshot s = g->GetSnapshot();
    WriteBatch rb;
    for (std::uint64_t e = 2; e < s.edge_id_limit(); e += 9)
      if (s.HasEdge(EdgeId(e))) rb.RemoveEdge(EdgeId(e));
    ASSERT_TRUE(g->Write(std::move(rb)).ok());
  }
  {
    SCOPED_TRACE("reopened snapshot after later writes");
    ProjReviewCheckSnapshot(loaded);
  }
  {
    SCOPED_TRACE("after writes on packed vertices");
    ProjReviewCheckSnapshot(g->GetSnapshot());
  }
  ASSERT_TRUE(g->Close().ok());
}

// With holes (a dense map, per-entry path) and without (identity ids: the
// copy loop over packed heads).
TEST(ProjectionReviewTest, PackedHeadsAfterReopenMatchTheReferencePaths) { ProjReviewPackedCase(true); }
TEST(ProjectionReviewTest, PackedHeadsAfterReopenIdentityIds) { ProjReviewPackedCase(false); }

// A durable graph of several id blocks reopened (packed heads), no holes:
// the copy loop and the storage in pass over packed leaves, on 1..4 threads.
TEST(ProjectionReviewTest, PackedSeveralIdBlocksIdentityIds) {
  env::SimFileSystem fs;
  constexpr int kN = 17'000;
  {
    auto g = GraphImpl::OpenDurable(ProjReviewDurableOptions(), "/db", &fs).value();
    ProjReviewRandomEdges(g.get(), {.vertices = kN,
                                    .b_every = 4,
                                    .edges = 50'000,
                                    .seed = 9,
                                    .loop_every = 30,
                                    .u_every = 11,
                                    .weighted_every = 25,
                                    .weight = 0.5});
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  auto g = GraphImpl::OpenDurable(ProjReviewDurableOptions(), "/db", &fs).value();
  const Snapshot snap = g->GetSnapshot();
  ASSERT_GT(ProjReviewPackedHeads(snap), 1000u);
  ASSERT_EQ(snap.vertex_count(), snap.vertex_id_limit());
  ProjReviewCheckSnapshot(snap);
  ASSERT_TRUE(g->Close().ok());
}

// Several id blocks of 8,192 (per-block offsets, dense ids with holes and a
// label filter across blocks) on 1..4 threads.
TEST(ProjectionReviewTest, SeveralIdBlocksWithHolesAndLabels) {
  auto g = Graph::OpenInMemory().value();
  constexpr int kN = 20'000;
  const std::vector<VertexId> ids = ProjReviewRandomEdges(g.get(), {.vertices = kN,
                                                                    .b_every = 5,
                                                                    .edges = 60'000,
                                                                    .seed = 5,
                                                                    .loop_every = 50,
                                                                    .u_every = 9,
                                                                    .weighted_every = 40,
                                                                    .weight = 1.5});
  WriteBatch rb;
  for (int v = 3; v < kN; v += 101) rb.RemoveVertex(ids[v]);
  ASSERT_TRUE(g->Write(std::move(rb)).ok());
  ProjReviewCheckSnapshot(g->GetSnapshot());
}

// Pins: an in-only projection's edge_count() is 0 (it counts out entries,
// as documented), while its in entries are all there.
TEST(ProjectionReviewTest, InOnlyEdgeCountIsTheOutEntries) {
  auto g = Graph::OpenInMemory().value();
  WriteBatch vb;
  for (int i = 0; i < 4; ++i) vb.AddVertex("A");
  const std::vector<VertexId> ids = g->Write(std::move(vb)).value().vertices;
  WriteBatch eb;
  eb.AddEdge("T", ids[0], ids[1]);
  eb.AddEdge("T", ids[2], ids[1]);
  eb.AddEdge("T", ids[1], ids[1]);
  ASSERT_TRUE(g->Write(std::move(eb)).ok());
  ProjectionSpec spec;
  spec.out = false;
  auto p = Project(g->GetSnapshot(), spec);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->has_out());
  EXPECT_EQ(p->edge_count(), 0u);
  ASSERT_EQ(p->InDegree(1), 3u);
  EXPECT_EQ(std::vector<std::uint32_t>(p->InNeighbors(1).begin(), p->InNeighbors(1).end()),
            (std::vector<std::uint32_t>{0, 1, 2}));
  spec.self_loops = SelfLoops::kDrop;
  auto q = Project(g->GetSnapshot(), spec);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(std::vector<std::uint32_t>(q->InNeighbors(1).begin(), q->InNeighbors(1).end()),
            (std::vector<std::uint32_t>{0, 2}));
}

}  // namespace
}  // namespace projection_review_test
}  // namespace quiver
