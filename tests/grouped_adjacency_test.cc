// Adjacency built per batch (BatchProcessor::FlushAdds): a batch's new
// entries are sorted by vertex and each touched array is built once. Driven
// group by group on the writer's own pieces (VersionChain, BatchProcessor),
// so one group holds several batches for certain. Checked against a model
// that appends one entry per edge in operation order: every array must hold
// exactly the model's entries, in the model's order, and a version published
// before the group must still read what it read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "storage/adjacency.h"
#include "storage/version.h"
#include "write/batch_processor.h"

namespace quiver {
namespace {

// (vertex, in-edges?, type id) -> (edge, neighbour) in array order.
using Key = std::tuple<std::uint64_t, bool, std::uint32_t>;
using Adjacency = std::map<Key, std::vector<std::pair<std::uint64_t, std::uint64_t>>>;

class Writer {
 public:
  Writer() : chain_(new storage::VersionChain), processor_(Limits{}) {}
  ~Writer() {
    for (const storage::Version* v : held_) chain_->Release(v);
    chain_->Shutdown();
  }

  // One group of `batches`, each validated against the group so far and
  // applied; published. Returns each batch's CommitInfo (all must be valid).
  std::vector<CommitInfo> Group(const std::vector<WriteBatch>& batches) {
    storage::GroupBlocks blocks;
    storage::MutationContext ctx{++epoch_, nullptr, nullptr, &blocks};
    storage::Version* v = chain_->NewVersion(&ctx);
    std::vector<CommitInfo> infos;
    for (const WriteBatch& b : batches) {
      Status s = processor_.Validate(b, v->roots);
      EXPECT_TRUE(s.ok()) << s.ToString();
      CommitInfo info;
      processor_.Apply(b, v->roots, ctx, &info);
      ++v->roots.sequence;
      infos.push_back(std::move(info));
    }
    chain_->Publish(v);
    processor_.EndGroup(true);
    return infos;
  }

  // Group() with allocation `n` of this thread (the account's blocks)
  // failing, once or from then on: a std::bad_alloc rolls the group back as
  // the writer does (GraphImpl::CommitGroup) and returns false. `*counted`
  // is the number of allocations seen.
  bool TryGroup(const std::vector<WriteBatch>& batches, std::uint64_t n, base::AllocationFaultMode mode,
                std::uint64_t* counted) {
    storage::GroupBlocks blocks;
    storage::MutationContext ctx{++epoch_, nullptr, nullptr, &blocks};
    storage::Version* v = nullptr;
    base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
    try {
      v = chain_->NewVersion(&ctx);
      for (const WriteBatch& b : batches) {
        Status s = processor_.Validate(b, v->roots);
        EXPECT_TRUE(s.ok()) << s.ToString();
        CommitInfo info;
        processor_.Apply(b, v->roots, ctx, &info);
        ++v->roots.sequence;
      }
    } catch (const std::bad_alloc&) {
      *counted = base::DisarmAllocationFaults();
      if (v != nullptr) chain_->RollBack(v, ctx);
      processor_.EndGroup(false);
      return false;
    }
    *counted = base::DisarmAllocationFaults();
    chain_->Publish(v);
    processor_.EndGroup(true);
    return true;
  }

  std::int64_t allocated_bytes() { return chain_->account()->allocated_bytes(); }

  // Pins the head version until the writer goes.
  const storage::GraphRoots& Hold() {
    held_.push_back(chain_->Acquire());
    return held_.back()->roots;
  }
  const storage::GraphRoots& head() { return chain_->head()->roots; }

 private:
  storage::VersionChain* chain_;
  BatchProcessor processor_;
  std::uint64_t epoch_ = 0;
  std::vector<const storage::Version*> held_;
};

// Every live vertex's arrays, read through the head words (types by id).
Adjacency Read(const storage::GraphRoots& g) {
  Adjacency a;
  for (std::uint64_t v = 0; v < g.vertex_limit; ++v) {
    const storage::VertexSlot* s = storage::FindVertex(g, v);
    if (s == nullptr) continue;
    const std::pair<std::uintptr_t, std::uint32_t> dirs[] = {{s->out_head, s->out_degree},
                                                             {s->in_head, s->in_degree}};
    for (int in = 0; in < 2; ++in) {
      std::uint32_t total = 0;
      for (std::size_t i = 0; i < storage::GroupCount(dirs[in].first); ++i) {
        EdgeGroup grp = storage::GroupAt(dirs[in].first, dirs[in].second, i);
        auto& list = a[Key{v, in == 1, grp.type.value()}];
        EXPECT_TRUE(list.empty()) << "vertex " << v << ": two groups of type " << grp.type.value();
        for (const EdgeEntry& e : grp.entries) list.emplace_back(e.edge().value(), e.neighbor().value());
        total += static_cast<std::uint32_t>(grp.entries.size());
      }
      EXPECT_EQ(total, dirs[in].second) << "vertex " << v << (in ? " in" : " out") << ": degree";
    }
  }
  for (auto it = a.begin(); it != a.end();) it = it->second.empty() ? a.erase(it) : std::next(it);
  return a;
}

// Per (vertex, in-edges?): the types of its groups in directory order.
std::map<std::pair<std::uint64_t, bool>, std::vector<std::uint32_t>> GroupOrder(
    const storage::GraphRoots& g) {
  std::map<std::pair<std::uint64_t, bool>, std::vector<std::uint32_t>> order;
  for (std::uint64_t v = 0; v < g.vertex_limit; ++v) {
    const storage::VertexSlot* s = storage::FindVertex(g, v);
    if (s == nullptr) continue;
    for (bool in : {false, true}) {
      const std::uintptr_t head = in ? s->in_head : s->out_head;
      const std::uint32_t degree = in ? s->in_degree : s->out_degree;
      for (std::size_t i = 0; i < storage::GroupCount(head); ++i)
        order[{v, in}].push_back(storage::GroupAt(head, degree, i).type.value());
    }
  }
  return order;
}

// The model: one append per edge, in operation (edge id) order.
class Model {
 public:
  void Add(std::uint64_t edge, std::uint64_t src, std::uint64_t dst, std::uint32_t type) {
    adj_[Key{src, false, type}].emplace_back(edge, dst);
    adj_[Key{dst, true, type}].emplace_back(edge, src);
    for (auto end : {std::pair{src, false}, std::pair{dst, true}}) {
      std::vector<std::uint32_t>& types = order_[end];
      if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
    }
    ends_[edge] = {src, dst, type};
  }
  void RemoveEdge(std::uint64_t edge) {
    auto [src, dst, type] = ends_.at(edge);
    Erase(Key{src, false, type}, edge);
    Erase(Key{dst, true, type}, edge);
    ends_.erase(edge);
  }
  void RemoveVertex(std::uint64_t v) {
    std::vector<std::uint64_t> gone;
    for (const auto& [e, ends] : ends_)
      if (std::get<0>(ends) == v || std::get<1>(ends) == v) gone.push_back(e);
    for (std::uint64_t e : gone) RemoveEdge(e);
  }
  const Adjacency& adjacency() const { return adj_; }
  // Groups in order of first appearance: a directory's order while no
  // group was ever emptied.
  const std::map<std::pair<std::uint64_t, bool>, std::vector<std::uint32_t>>& group_order() const {
    return order_;
  }

 private:
  void Erase(const Key& k, std::uint64_t edge) {
    auto& list = adj_.at(k);
    std::erase_if(list, [edge](const auto& p) { return p.first == edge; });
    if (list.empty()) adj_.erase(k);
  }
  Adjacency adj_;
  std::map<std::pair<std::uint64_t, bool>, std::vector<std::uint32_t>> order_;
  std::map<std::uint64_t, std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>> ends_;
};

// Type ids are interned in order of first use: A = 0, B = 1, C = 2.
const char* const kTypes[] = {"A", "B", "C"};

std::uint64_t Next(std::uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 33;
}

// Edges of several types, self-loops among them, onto arrays that are
// published with room, published and full, new in the group and grown by
// several of its batches; vertices gaining a second and third type (a
// directory) in the middle of a group.
TEST(GroupedAdjacencyTest, ArraysHoldEachEdgeInOperationOrder) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    Writer w;
    Model m;
    std::uint64_t rng = seed;
    constexpr int kVertices = 40;
    WriteBatch first;
    std::vector<NewVertex> vs;
    for (int i = 0; i < kVertices; ++i) vs.push_back(first.AddVertex("V"));
    std::vector<std::tuple<int, int, std::uint32_t>> first_edges;
    for (int i = 0; i < 120; ++i) {
      const int s = static_cast<int>(Next(rng) % kVertices), t = static_cast<int>(Next(rng) % kVertices);
      const std::uint32_t type = i < 60 ? 0 : static_cast<std::uint32_t>(Next(rng) % 2);
      first.AddEdge(kTypes[type], vs[s], vs[t]);
      first_edges.emplace_back(s, t, type);
    }
    const CommitInfo base = w.Group({first})[0];
    for (std::size_t i = 0; i < first_edges.size(); ++i) {
      auto [s, t, type] = first_edges[i];
      m.Add(base.edges[i].value(), base.vertices[s].value(), base.vertices[t].value(), type);
    }
    ASSERT_EQ(Read(w.head()), m.adjacency());
    const Adjacency before = m.adjacency();
    const storage::GraphRoots& held = w.Hold();

    // One group of three batches, each adding to the same vertices.
    std::vector<WriteBatch> group(3);
    std::vector<std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t, bool>>> planned(3);
    for (int b = 0; b < 3; ++b) {
      NewVertex fresh = group[b].AddVertex("W");
      for (int i = 0; i < 150; ++i) {
        const std::uint64_t s = Next(rng) % kVertices;
        const std::uint64_t t = i % 7 == 0 ? s : Next(rng) % kVertices;
        const auto type = static_cast<std::uint32_t>(Next(rng) % 3);
        const bool to_fresh = i % 11 == 0;
        if (to_fresh) {
          group[b].AddEdge(kTypes[type], VertexId(s), fresh);
        } else {
          group[b].AddEdge(kTypes[type], VertexId(s), VertexId(t));
        }
        planned[b].emplace_back(s, t, type, to_fresh);
      }
      for (int i = 0; i < 40; ++i)
        group[b].AddEdge("A", VertexId(b), VertexId(b + 1));  // one array, 40 at once
      for (int i = 0; i < 40; ++i) planned[b].emplace_back(b, b + 1, 0, false);
    }
    const std::vector<CommitInfo> infos = w.Group(group);
    for (int b = 0; b < 3; ++b) {
      ASSERT_EQ(infos[b].edges.size(), planned[b].size());
      for (std::size_t i = 0; i < planned[b].size(); ++i) {
        auto [s, t, type, to_fresh] = planned[b][i];
        m.Add(infos[b].edges[i].value(), s, to_fresh ? infos[b].vertices[0].value() : t, type);
      }
    }
    EXPECT_EQ(Read(w.head()), m.adjacency()) << "seed " << seed;
    EXPECT_EQ(GroupOrder(w.head()), m.group_order()) << "seed " << seed << ": groups out of order";
    EXPECT_EQ(Read(held), before) << "seed " << seed << ": the version before the group changed";
  }
}

// An edge added and removed in one batch, one added in one batch and
// removed in the next of the same group, and a vertex removed after edges to
// and from it were added earlier in its batch.
TEST(GroupedAdjacencyTest, AddsAndRemovesInOneBatchAndOneGroup) {
  Writer w;
  Model m;
  WriteBatch first;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 6; ++i) vs.push_back(first.AddVertex("V"));
  for (int i = 0; i < 5; ++i) first.AddEdge("A", vs[i], vs[i + 1]);
  const CommitInfo base = w.Group({first})[0];
  for (int i = 0; i < 5; ++i) m.Add(base.edges[i].value(), i, i + 1, 0);
  const Adjacency before = m.adjacency();
  const storage::GraphRoots& held = w.Hold();

  std::vector<WriteBatch> group(2);
  NewEdge gone = group[0].AddEdge("A", VertexId(0), VertexId(1));  // 0: removed below, same batch
  group[0].AddEdge("A", VertexId(0), VertexId(1));                 // 1: removed in the next batch
  group[0].RemoveEdge(gone);
  group[0].AddEdge("B", VertexId(3), VertexId(2));  // 2
  group[0].AddEdge("A", VertexId(2), VertexId(3));  // 3
  group[0].AddEdge("A", VertexId(3), VertexId(3));  // 4: a self-loop on the vertex removed next
  group[0].AddEdge("B", VertexId(4), VertexId(0));  // 5
  group[0].RemoveVertex(VertexId(3));
  group[0].AddEdge("A", VertexId(0), VertexId(2));  // 6
  std::vector<CommitInfo> infos = w.Group({group[0]});
  const std::vector<EdgeId> e0 = infos[0].edges;  // a copy: infos is assigned again below
  ASSERT_EQ(e0.size(), 7u);
  for (auto [i, s, t, type] : std::vector<std::tuple<int, int, int, std::uint32_t>>{
           {0, 0, 1, 0}, {1, 0, 1, 0}, {2, 3, 2, 1}, {3, 2, 3, 0}, {4, 3, 3, 0}, {5, 4, 0, 1}, {6, 0, 2, 0}})
    m.Add(e0[i].value(), s, t, type);
  m.RemoveEdge(e0[0].value());
  m.RemoveVertex(3);
  EXPECT_EQ(Read(w.head()), m.adjacency());

  // One group of two batches: the second removes an edge the first added
  // (ids are dense, so its id is known ahead) and one published before, and
  // adds again to the arrays the first batch appended to.
  const std::uint64_t next_id = w.head().edge_limit;
  std::vector<WriteBatch> next(2);
  next[0].AddEdge("A", VertexId(0), VertexId(1));  // next_id: kept
  next[0].AddEdge("B", VertexId(0), VertexId(1));  // next_id + 1: removed by the next batch
  next[0].AddEdge("A", VertexId(1), VertexId(0));  // next_id + 2: kept
  next[1].RemoveEdge(EdgeId(next_id + 1));
  next[1].RemoveEdge(e0[1]);
  next[1].AddEdge("B", VertexId(0), VertexId(1));  // next_id + 3
  next[1].AddEdge("A", VertexId(0), VertexId(1));  // next_id + 4
  infos = w.Group(next);
  ASSERT_EQ(infos[0].edges.size(), 3u);
  ASSERT_EQ(infos[0].edges[1].value(), next_id + 1);
  m.Add(next_id, 0, 1, 0);
  m.Add(next_id + 1, 0, 1, 1);
  m.Add(next_id + 2, 1, 0, 0);
  m.RemoveEdge(next_id + 1);
  m.RemoveEdge(e0[1].value());
  m.Add(infos[1].edges[0].value(), 0, 1, 1);
  m.Add(infos[1].edges[1].value(), 0, 1, 0);
  EXPECT_EQ(Read(w.head()), m.adjacency());
  EXPECT_EQ(Read(held), before);
}

// Every account allocation of a group of three batches fails, once and from
// then on: each batch flushes twice (a vertex removal in its middle), and
// the later flushes and batches append in place to arrays the earlier ones
// allocated, or replace them (freeing them). The group rolls back to exactly
// the arrays and the bytes before it, the version published before it reads
// as it did, and the same group then builds what it builds without faults.
TEST(GroupedAdjacencyTest, GroupRollsBackAtEveryAllocation) {
  constexpr int kVertices = 30;
  WriteBatch first;
  std::vector<NewVertex> vs;
  for (int i = 0; i < kVertices; ++i) vs.push_back(first.AddVertex("V"));
  for (int i = 0; i < 60; ++i) first.AddEdge("A", vs[i % kVertices], vs[(i * 7 + 3) % kVertices]);
  std::vector<WriteBatch> group(3);
  std::uint64_t rng = 11;
  for (int b = 0; b < 3; ++b) {
    for (int half = 0; half < 2; ++half) {
      for (int i = 0; i < 45; ++i) {
        // Vertices kVertices - 3 .. kVertices - 1 are removed in the group.
        const std::uint64_t s = Next(rng) % 6, t = i % 9 == 0 ? s : Next(rng) % (kVertices - 3);
        group[b].AddEdge(kTypes[Next(rng) % 3], VertexId(s), VertexId(t));
      }
      if (half == 0) group[b].RemoveVertex(VertexId(kVertices - 1 - b));
    }
  }
  Adjacency expected;
  {
    Writer w;
    w.Group({first});
    w.Group(group);
    expected = Read(w.head());
  }
  for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
    std::uint64_t n = 1;
    for (;; ++n) {
      Writer w;
      w.Group({first});
      const Adjacency before = Read(w.head());
      const storage::GraphRoots& held = w.Hold();
      const std::int64_t bytes = w.allocated_bytes();
      std::uint64_t counted = 0;
      if (w.TryGroup(group, n, mode, &counted)) {
        ASSERT_LT(counted, n);
        ASSERT_EQ(Read(w.head()), expected);
        break;
      }
      ASSERT_EQ(Read(w.head()), before) << "allocation " << n;
      ASSERT_EQ(Read(held), before) << "allocation " << n;
      ASSERT_EQ(w.allocated_bytes(), bytes) << "allocation " << n << ": the rolled-back group leaked";
      w.Group(group);
      ASSERT_EQ(Read(w.head()), expected) << "allocation " << n << ": the retry";
    }
    std::cout << "[          ] fail " << (mode == base::AllocationFaultMode::kOnce ? "once" : "from N on")
              << ": " << n - 1 << " failing allocations enumerated, each rolled back\n";
    EXPECT_GT(n, 50u);
  }
}

}  // namespace
}  // namespace quiver
