// Project(): builds a CSR projection from a snapshot in phases, each spread
// over the threads in blocks of kIdBlock vertex ids. A phase reads the vertex
// table leaf by leaf and each slot's adjacency heads directly (like
// traversal, through SnapshotInternal), never through per-id lookups:
//
//   1. resolve    names to ids (unknown: NotFound) and check the spec;
//   2. vertices   when every live vertex is included and there are no holes,
//                 dense ids are the ids (no map). Otherwise each block counts
//                 its included vertices, a prefix sum over blocks gives each
//                 block its first dense id, and a second sweep writes them
//                 into one flat array over the id range, so dense order is
//                 VertexId order on every thread count. The memory limit is
//                 checked on the id map and offsets between the two sweeps,
//                 before any array exists;
//   3. count      per block, each vertex's entries in every built direction
//                 in one sweep of the slots (a vertex with no filter to apply
//                 reads its degree from the slot; a filtered one reads its
//                 entries), plus the block's total. The memory limit is
//                 checked again here, before the neighbour arrays exist;
//   4. fill       per block: its totals' prefix turns its counts into
//                 offsets, then one sweep of the slots writes every built
//                 direction's entries at a running cursor (weights read from
//                 the edge property blocks directly), prefetching the arrays
//                 of vertices a few slots ahead, and sorts each vertex's
//                 entries by (neighbour, weight) while they are still in
//                 cache (a sorting network up to 32 entries, weighted or not:
//                 base/small_sort.h), applying the parallel-edge rule. A
//                 weighted directed projection with both directions fills
//                 out only and transposes it into in (Transpose). Sorting by value
//                 rather than by storage order is what makes the projection,
//                 and so every kernel, independent of the order in which the
//                 engine happens to keep entries;
//   5. compact    only when parallel edges were removed: close the gaps.
//
// No phase allocates per vertex or hashes: the scratch state is a flat array
// per id block, and each worker's sort buffer is reused.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "base/prefetch.h"
#include "base/small_sort.h"
#include "quiver/analytics.h"
#include "quiver/snapshot.h"
#include "snapshot_internal.h"
#include "storage/adjacency.h"
#include "storage/elements.h"
#include "storage/prop_block.h"

namespace quiver {

namespace {

constexpr std::uint32_t kAbsent = 0xFFFFFFFFu;
constexpr std::uint64_t kIdBlock = 8192;

// The error of the smallest bad edge id among those recorded. Fill records
// every bad edge (it does not stop at the first), so the message does not
// depend on scheduling or on the thread count.
class FirstError {
 public:
  void Record(std::uint64_t edge, Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok() || edge < edge_) {
      edge_ = edge;
      status_ = std::move(s);
    }
    failed_.store(true, std::memory_order_relaxed);
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  Status Take() { return std::move(status_); }

 private:
  std::mutex mu_;
  std::atomic<bool> failed_{false};
  std::uint64_t edge_ = 0;
  Status status_;
};

// Runs fn(begin, end) over [0, limit) in blocks of kIdBlock ids.
template <typename Fn>
void ForIdBlocks(unsigned threads, std::uint64_t limit, Fn&& fn) {
  const std::uint64_t blocks = (limit + kIdBlock - 1) / kIdBlock;
  std::atomic<std::uint64_t> next{0};
  base::RunOnThreads(threads, [&](unsigned) {
    for (std::uint64_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks;)
      fn(b, b * kIdBlock, std::min(limit, (b + 1) * kIdBlock));
  });
}

// Calls fn(id, slot) for every live vertex slot with an id in [begin, end),
// in id order, walking the vertex table one leaf at a time.
template <typename Fn>
void ForSlots(const storage::GraphRoots& g, std::uint64_t begin, std::uint64_t end, Fn&& fn) {
  using storage::VertexTable;
  end = std::min(end, g.vertex_limit);
  for (std::uint64_t pos = begin; pos < end;) {
    const VertexTable::Leaf* leaf = VertexTable::FindLeaf(g.vertices, pos);
    const std::uint64_t leaf_end = std::min(end, (pos | (VertexTable::kLeafSize - 1)) + 1);
    for (; pos < leaf_end; ++pos) {
      const storage::VertexSlot& slot = leaf->slots[pos & (VertexTable::kLeafSize - 1)];
      if (slot.label != storage::kDeadLabel) fn(pos, slot);
    }
  }
}

// Starts loading the adjacency of `slot` in direction `d` (its first array, or
// its group directory).
inline void PrefetchAdjacency(const storage::VertexSlot& slot, Direction d) {
  const std::uintptr_t head = d == Direction::kOut ? slot.out_head : slot.in_head;
  if (head == 0) return;
  const char* p = static_cast<const char*>(storage::HeadBlock(head));
  base::Prefetch(p);
  base::Prefetch(p + 64);
}

}  // namespace

class ProjectionBuilder {
 public:
  ProjectionBuilder(const Snapshot& snap, const ProjectionSpec& spec)
      : snap_(snap), spec_(spec), threads_(base::ResolveThreads(spec.threads)) {}

  Result<Projection> Build() {
    QUIVER_RETURN_IF_ERROR(Resolve());
    std::vector<Pass> passes = Passes();
    QUIVER_RETURN_IF_ERROR(SelectVertices(passes.size()));
    p_.undirected_ = spec_.undirected;
    p_.weighted_ = weight_key_.has_value();
    // Phase 3 for every direction first, so the limit sees the whole size.
    // With both directions of a weighted directed projection the in
    // adjacency is the transpose of the out one (the same edges pass the
    // same filters): only the out pass reads storage and the edges'
    // property blocks, a random miss per weight. Unweighted, the in pass
    // reads storage's in-arrays in the same sweep instead: no scratch
    // memory, and fresh pages are what a large build pays most for.
    const bool transpose = passes.size() == 2 && weight_key_.has_value();
    if (transpose) passes.pop_back();
    std::vector<std::uint64_t> entries = Count(passes);
    if (transpose) entries.push_back(entries[0]);
    QUIVER_RETURN_IF_ERROR(CheckMemory(entries));
    QUIVER_RETURN_IF_ERROR(Fill(passes, entries));
    if (transpose) Transpose(p_.out_, &p_.in_);
    if (min_negative_edge_ != kNoEdge) p_.negative_edge_ = EdgeId(min_negative_edge_);
    p_.min_weight_ = min_weight_;
    return std::move(p_);
  }

 private:
  static constexpr std::uint64_t kNoEdge = ~std::uint64_t{0};
  // How far ahead of the vertex being filled its successors' arrays are prefetched.
  static constexpr std::uint64_t kPrefetchAhead = 8;
  // Targets per transpose bucket: ~10 entries each at degree 10, so a
  // bucket's cursors and entries (~600 KB) stay in a 1 MB L2.
  static constexpr std::uint64_t kBucketVertices = 8192;

  // One CSR to build: the snapshot directions it reads. An undirected CSR
  // reads out then in, skipping self-loops on the in side (met once).
  struct Pass {
    bool in_csr = false;
    Direction dirs[2] = {Direction::kOut, Direction::kIn};
    int dir_count = 1;
    Projection::Csr* csr = nullptr;
    bool DropsLoops(Direction d, SelfLoops rule) const {
      return rule == SelfLoops::kDrop || (dir_count == 2 && d == Direction::kIn);
    }
  };

  std::vector<Pass> Passes() {
    if (spec_.undirected) return {Pass{false, {Direction::kOut, Direction::kIn}, 2, &p_.out_}};
    std::vector<Pass> v;
    if (spec_.out) v.push_back(Pass{false, {Direction::kOut}, 1, &p_.out_});
    if (spec_.in) v.push_back(Pass{true, {Direction::kIn}, 1, &p_.in_});
    return v;
  }

  Status Resolve() {
    if (!snap_.valid()) return InvalidArgumentError("Project: the snapshot holds no version");
    if (!spec_.undirected && !spec_.out && !spec_.in)
      return InvalidArgumentError("Project: the spec asks for neither out nor in adjacency");
    if (spec_.default_weight && std::isnan(*spec_.default_weight))
      return InvalidArgumentError("Project: default_weight is NaN");
    for (const std::string& name : spec_.vertex_labels) {
      auto id = snap_.FindLabel(name);
      if (!id) return NotFoundError("Project: unknown vertex label '" + name + "'");
      if (labels_.size() <= id->value()) labels_.resize(id->value() + 1, false);
      labels_[id->value()] = true;
    }
    for (const std::string& name : spec_.edge_types) {
      auto id = snap_.FindEdgeType(name);
      if (!id) return NotFoundError("Project: unknown edge type '" + name + "'");
      if (types_.size() <= id->value()) types_.resize(id->value() + 1, false);
      types_[id->value()] = true;
    }
    if (!spec_.weight_property.empty()) {
      weight_key_ = snap_.FindPropertyKey(spec_.weight_property);
      if (!weight_key_) return NotFoundError("Project: unknown property key '" + spec_.weight_property + "'");
    }
    g_ = &SnapshotInternal::Roots(snap_);
    return Status::Ok();
  }

  bool LabelOk(std::uint32_t label) const {
    return spec_.vertex_labels.empty() || (label < labels_.size() && labels_[label]);
  }
  bool TypeOk(std::uint32_t t) const { return spec_.edge_types.empty() || (t < types_.size() && types_[t]); }
  std::uint32_t Dense(std::uint64_t v) const { return identity_ ? static_cast<std::uint32_t>(v) : dense_[v]; }
  std::uint64_t Blocks() const { return (limit_ + kIdBlock - 1) / kIdBlock; }
  // The first dense id of block b (dense ids of a block are contiguous).
  std::uint64_t DenseBegin(std::uint64_t b) const {
    return identity_ ? std::min(limit_, b * kIdBlock) : block_dense_[b];
  }

  // Phase 2. The vertices are counted before anything is allocated, so the
  // memory limit refuses a projection whose id map and `passes` offset
  // arrays alone exceed it before they (or the 4-byte-per-id map) exist.
  Status SelectVertices(std::size_t passes) {
    limit_ = snap_.vertex_id_limit();
    const std::uint64_t blocks = Blocks();
    const std::vector<std::uint64_t> no_entries(passes, 0);
    if (spec_.vertex_labels.empty() && snap_.vertex_count() == limit_) {
      // Every id is live and included: dense ids are the ids, no map at all.
      if (limit_ >= kAbsent) return ResourceExhaustedError("Project: 2^32 - 1 vertices or more");
      p_.vertex_count_ = static_cast<std::uint32_t>(limit_);
      identity_ = true;
      return CheckMemory(no_entries);
    }
    block_dense_.assign(blocks + 1, 0);
    ForIdBlocks(threads_, limit_, [&](std::uint64_t b, std::uint64_t begin, std::uint64_t end) {
      std::uint32_t n = 0;
      ForSlots(*g_, begin, end,
               [&](std::uint64_t, const storage::VertexSlot& slot) { n += LabelOk(slot.label); });
      block_dense_[b + 1] = n;
    });
    for (std::uint64_t b = 0; b < blocks; ++b) block_dense_[b + 1] += block_dense_[b];
    const std::uint64_t count = block_dense_[blocks];
    if (count >= kAbsent) return ResourceExhaustedError("Project: 2^32 - 1 vertices or more");
    p_.vertex_count_ = static_cast<std::uint32_t>(count);
    identity_ = count == limit_;
    QUIVER_RETURN_IF_ERROR(CheckMemory(no_entries));
    if (identity_) return Status::Ok();
    // Dense ids in VertexId order: block b's start at the prefix of the
    // counts before it.
    dense_.reset(new std::uint32_t[limit_]);
    p_.ids_.reset(new std::uint64_t[count]);
    ForIdBlocks(threads_, limit_, [&](std::uint64_t b, std::uint64_t begin, std::uint64_t end) {
      std::fill(dense_.get() + begin, dense_.get() + end, kAbsent);
      auto n = static_cast<std::uint32_t>(block_dense_[b]);
      ForSlots(*g_, begin, end, [&](std::uint64_t v, const storage::VertexSlot& slot) {
        if (!LabelOk(slot.label)) return;
        dense_[v] = n;
        p_.ids_[n++] = v;
      });
    });
    return Status::Ok();
  }

  static std::uintptr_t Head(const storage::VertexSlot& s, Direction d) {
    return d == Direction::kOut ? s.out_head : s.in_head;
  }
  static std::uint32_t Degree(const storage::VertexSlot& s, Direction d) {
    return d == Direction::kOut ? s.out_degree : s.in_degree;
  }

  // Calls fn(entries) for every group of the slot's adjacency in direction
  // d whose type passes the filter.
  template <typename Fn>
  void ForGroups(const storage::VertexSlot& s, Direction d, Fn&& fn) const {
    const std::uintptr_t head = Head(s, d);
    const std::uint32_t degree = Degree(s, d);
    const std::size_t groups = storage::GroupCount(head);
    for (std::size_t gi = 0; gi < groups; ++gi) {
      const EdgeGroup g = storage::GroupAt(head, degree, gi);
      if (TypeOk(g.type.value())) fn(g.entries);
    }
  }

  // Calls fn(neighbour's dense id, entry) for every entry of vertex `v` (slot
  // `s`) in direction d that passes the filters.
  template <typename Fn>
  void ForEntries(std::uint64_t v, const storage::VertexSlot& s, Direction d, bool drop_loops,
                  Fn&& fn) const {
    const std::uintptr_t head = Head(s, d);
    const std::uint32_t degree = Degree(s, d);
    const std::size_t groups = storage::GroupCount(head);
    for (std::size_t gi = 0; gi < groups; ++gi) {
      const EdgeGroup g = storage::GroupAt(head, degree, gi);
      if (!TypeOk(g.type.value())) continue;
      for (const EdgeEntry& e : g.entries) {
        const std::uint64_t n = e.neighbor().value();
        const std::uint32_t dn = Dense(n);
        if (dn == kAbsent || (drop_loops && n == v)) continue;
        fn(dn, e);
      }
    }
  }

  // The entries of `v` in direction d: from the slot alone when no filter
  // can refuse one (every neighbour of a live vertex is live, so without a
  // label filter every neighbour has a dense id).
  std::uint64_t CountEntries(std::uint64_t v, const storage::VertexSlot& s, Direction d,
                             bool drop_loops) const {
    if (spec_.vertex_labels.empty() && !drop_loops) {
      if (spec_.edge_types.empty()) return Degree(s, d);
      const std::uintptr_t head = Head(s, d);
      std::uint64_t n = 0;
      const std::size_t groups = storage::GroupCount(head);
      for (std::size_t gi = 0; gi < groups; ++gi) {
        const EdgeGroup g = storage::GroupAt(head, Degree(s, d), gi);
        if (TypeOk(g.type.value())) n += g.entries.size();
      }
      return n;
    }
    std::uint64_t n = 0;
    ForEntries(v, s, d, drop_loops, [&n](std::uint32_t, const EdgeEntry&) { ++n; });
    return n;
  }

  // Phase 3: offsets[dv] = the entries of dense vertex dv (MakeOffsets turns
  // them into offsets per block), per pass, and each block's totals; returns
  // each pass's total.
  std::vector<std::uint64_t> Count(const std::vector<Pass>& passes) {
    const std::uint64_t blocks = Blocks();
    block_entries_.assign(passes.size(), std::vector<std::uint64_t>(blocks + 1, 0));
    for (const Pass& pass : passes) {
      pass.csr->offsets.reset(new std::uint64_t[std::uint64_t{p_.vertex_count_} + 1]);
      pass.csr->offsets[p_.vertex_count_] = 0;
    }
    ForIdBlocks(threads_, limit_, [&](std::uint64_t b, std::uint64_t begin, std::uint64_t end) {
      // A block without live included vertices writes no offsets, so each
      // dense id's slot is written exactly once.
      ForSlots(*g_, begin, end, [&](std::uint64_t v, const storage::VertexSlot& s) {
        const std::uint32_t dv = Dense(v);
        if (dv == kAbsent) return;
        for (std::size_t i = 0; i < passes.size(); ++i) {
          const Pass& pass = passes[i];
          std::uint64_t n = 0;
          for (int k = 0; k < pass.dir_count; ++k)
            n += CountEntries(v, s, pass.dirs[k], pass.DropsLoops(pass.dirs[k], spec_.self_loops));
          pass.csr->offsets[dv] = n;
          block_entries_[i][b + 1] += n;
        }
      });
    });
    std::vector<std::uint64_t> totals;
    for (std::vector<std::uint64_t>& be : block_entries_) {
      for (std::uint64_t b = 0; b < blocks; ++b) be[b + 1] += be[b];
      totals.push_back(be[blocks]);
    }
    return totals;
  }

  Status CheckMemory(const std::vector<std::uint64_t>& entries) const {
    const std::uint64_t per_entry = 4 + (weight_key_ ? 8 : 0);
    std::uint64_t bytes = identity_ ? 0 : 8ull * p_.vertex_count_;
    for (std::uint64_t e : entries) bytes += 8ull * (p_.vertex_count_ + 1) + per_entry * e;
    if (spec_.memory_limit_bytes != 0 && bytes > spec_.memory_limit_bytes)
      return ResourceExhaustedError("Project: the projection needs at least " + std::to_string(bytes) +
                                    " bytes, above the memory limit of " +
                                    std::to_string(spec_.memory_limit_bytes));
    return Status::Ok();
  }

  // A weighted entry while a vertex's list is sorted and its parallel edges
  // merged: ordered by (neighbour, weight, edge id).
  struct MergeEntry {
    std::uint32_t target;
    double weight;
    std::uint64_t edge;
    bool operator<(const MergeEntry& o) const {
      if (target != o.target) return target < o.target;
      if (weight != o.weight) return weight < o.weight;
      return edge < o.edge;
    }
  };

  // What one worker keeps between blocks.
  struct Worker {
    std::vector<std::pair<std::uint32_t, double>> sort;  // a weighted vertex's entries while sorting
    std::vector<MergeEntry> merge;                       // the same when parallel edges are merged
    std::vector<std::uint64_t> edges;                    // the edge of each entry, when merging
    double min_weight = std::numeric_limits<double>::infinity();
    std::uint64_t negative = kNoEdge;
    // The last leaf of the sparse edge-property table this worker walked to:
    // a vertex's edges usually have neighbouring ids, so most weight lookups
    // are one load instead of a walk from the root.
    std::uint64_t leaf_key = ~std::uint64_t{0};
    const storage::EdgePropTable::Leaf* leaf = nullptr;

    // The property block of live edge `e` (null: none).
    const storage::PropBlock* Props(const storage::GraphRoots& g, std::uint64_t e) {
      using Table = storage::EdgePropTable;
      if ((e >> Table::kLeafBits) != leaf_key) {
        leaf_key = e >> Table::kLeafBits;
        leaf = Table::FindLeaf(g.edge_props, e);
      }
      return leaf == nullptr ? nullptr : leaf->slots[e & (Table::kLeafSize - 1)];
    }
  };

  // The weight of the live edge `e` into *w, or a status naming it. Reads
  // the edge's property block directly: an edge met in a live vertex's
  // adjacency is live, so the edge table need not be consulted.
  Status WeightOf(std::uint64_t e, double* w, Worker* worker) const {
    const std::optional<PropertyView> v = storage::GetProperty(worker->Props(*g_, e), weight_key_->value());
    if (!v || v->is_null()) {  // a null is missing, as in traversal and Top-K
      if (spec_.default_weight) {
        *w = *spec_.default_weight;
        return Status::Ok();
      }
      return InvalidArgumentError("Project: edge " + std::to_string(e) + " has no weight property '" +
                                  spec_.weight_property + "'");
    }
    if (v->type() == ValueType::kDouble) {
      *w = *v->as_double();
      return Status::Ok();
    }
    if (v->type() == ValueType::kInt64) {
      *w = static_cast<double>(*v->as_int64());
      return Status::Ok();
    }
    return InvalidArgumentError("Project: edge " + std::to_string(e) + " has a " +
                                std::string(ValueTypeName(v->type())) + " weight property '" +
                                spec_.weight_property + "'; it must be int64 or double");
  }

  Status Fill(const std::vector<Pass>& passes, const std::vector<std::uint64_t>& entries) {
    const std::uint32_t n = p_.vertex_count_;
    const bool merging = spec_.parallel_edges != ParallelEdges::kKeep;
    std::vector<std::unique_ptr<std::uint64_t[]>> kept(passes.size());
    for (std::size_t i = 0; i < passes.size(); ++i) {
      Projection::Csr* csr = passes[i].csr;
      csr->targets.reset(new std::uint32_t[entries[i]]);
      if (weight_key_) csr->weights.reset(new double[entries[i]]);
      // kept[v]: v's entries left after the parallel-edge rule.
      if (merging) kept[i].reset(new std::uint64_t[n]);
    }
    FirstError error;
    std::vector<Worker> workers(threads_);
    const std::uint64_t blocks = Blocks();
    std::atomic<std::uint64_t> next{0};
    base::RunOnThreads(threads_, [&](unsigned w) {
      // Every block is filled even after an error: the smallest bad edge id
      // may lie in any block, and FirstError can only name it if it is met.
      for (std::uint64_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks;) {
        const std::uint64_t begin = b * kIdBlock, end = std::min(limit_, begin + kIdBlock);
        for (std::size_t i = 0; i < passes.size(); ++i) MakeOffsets(passes[i], block_entries_[i][b], b);
        FillBlock(passes, begin, end, kept, &workers[w], &error);
      }
    });
    if (error.failed()) return error.Take();
    // Each worker saw the final weights (after the parallel-edge rule).
    for (const Worker& w : workers) {
      min_weight_ = std::min(min_weight_, w.min_weight);
      min_negative_edge_ = std::min(min_negative_edge_, w.negative);
    }
    for (std::size_t i = 0; i < passes.size(); ++i) {
      Projection::Csr* csr = passes[i].csr;
      csr->offsets[n] = entries[i];
      csr->entries = merging ? Compact(csr, kept[i].get()) : entries[i];
    }
    return Status::Ok();
  }

  // Phase 4 for the in adjacency of a weighted directed projection that also
  // has the out one: the out CSR transposed, in place of a second sweep of
  // storage, which would read each edge's property block again (a random
  // miss per entry), while the out CSR holds the weights in order.
  // Unweighted, the storage sweep is cheaper: it needs none of this
  // function's 8 bytes of fresh scratch per entry, and first touches of
  // fresh memory dominate a large build (at 1M x 10, out + in: 70 ms with
  // the transpose, 62 ms without; see docs/analytics.md).
  //
  // A direct scatter would write every entry to a random place; instead the
  // targets are cut into buckets small enough that one bucket's cursors and
  // entries stay in the L2 cache. Pass 1 cuts the sources into one part per
  // thread (equal entry counts) and each part appends (target, source) pairs
  // to its own run of every bucket, in ascending source order: a few hundred
  // sequential write streams. Pass 2 takes the buckets in parallel: counts
  // its targets' entries, makes their offsets (each bucket's first offset is
  // the prefix of the bucket totals), and places the sources, reading the
  // parts' runs in part order. So in(v) lists its sources ascending, and a
  // source's repeated entries (parallel edges) in its out order, ascending
  // weight: exactly the (neighbour, weight) order the storage pass sorts into,
  // on every thread count. The out CSR is already compacted: a pair's parallel
  // edges were merged there (dropped to the smallest weight, or summed in
  // ascending weight order), which is what merging them in the in direction
  // gives. Scratch: 8 bytes per entry (16 with weights) while it runs.
  void Transpose(const Projection::Csr& out, Projection::Csr* in) {
    const std::uint32_t n = p_.vertex_count_;
    const std::uint64_t e = out.entries;
    const std::uint64_t* off = out.offsets.get();
    const unsigned parts =
        static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads_, n)));
    std::vector<std::uint64_t> cut(parts + 1, n);
    cut[0] = 0;
    for (unsigned t = 1; t < parts; ++t) {
      cut[t] = static_cast<std::uint64_t>(std::upper_bound(off, off + n, e * t / parts) - off) - 1;
      cut[t] = std::max(cut[t], cut[t - 1]);
    }
    const std::uint64_t buckets =
        std::max<std::uint64_t>(1, (std::uint64_t{n} + kBucketVertices - 1) / kBucketVertices);
    // run[t * buckets + b]: where part t's run of bucket b starts, after a count.
    std::vector<std::uint64_t> run(std::uint64_t{parts} * buckets + 1, 0);
    base::RunOnThreads(parts, [&](unsigned t) {
      std::uint64_t* r = run.data() + std::uint64_t{t} * buckets;
      for (std::uint64_t k = off[cut[t]]; k < off[cut[t + 1]]; ++k) ++r[out.targets[k] / kBucketVertices];
    });
    // Bucket-major order: bucket b holds part 0's run, then part 1's, ...
    std::uint64_t running = 0;
    for (std::uint64_t b = 0; b < buckets; ++b)
      for (unsigned t = 0; t < parts; ++t)
        running += std::exchange(run[std::uint64_t{t} * buckets + b], running);
    std::unique_ptr<std::uint32_t[]> pair_target(new std::uint32_t[e]), pair_source(new std::uint32_t[e]);
    std::unique_ptr<double[]> pair_weight(out.weights ? new double[e] : nullptr);
    std::vector<std::uint64_t> bucket_begin(buckets + 1, e);
    for (std::uint64_t b = 0; b < buckets; ++b) bucket_begin[b] = run[b];  // part 0's run starts its bucket
    base::RunOnThreads(parts, [&](unsigned t) {
      std::uint64_t* r = run.data() + std::uint64_t{t} * buckets;
      for (std::uint64_t u = cut[t]; u < cut[t + 1]; ++u) {
        for (std::uint64_t k = off[u]; k < off[u + 1]; ++k) {
          const std::uint32_t v = out.targets[k];
          const std::uint64_t pos = r[v / kBucketVertices]++;
          pair_target[pos] = v;
          pair_source[pos] = static_cast<std::uint32_t>(u);
          if (pair_weight) pair_weight[pos] = out.weights[k];
        }
      }
    });
    in->offsets.reset(new std::uint64_t[std::uint64_t{n} + 1]);
    in->targets.reset(new std::uint32_t[e]);
    if (out.weights) in->weights.reset(new double[e]);
    in->entries = e;
    in->offsets[n] = e;
    std::atomic<std::uint64_t> next{0};
    base::RunOnThreads(threads_, [&](unsigned) {
      std::vector<std::uint64_t> cursor(kBucketVertices);
      for (std::uint64_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < buckets;) {
        const std::uint64_t first = b * kBucketVertices,
                            last = std::min<std::uint64_t>(n, first + kBucketVertices);
        const std::uint64_t begin = bucket_begin[b], end = bucket_begin[b + 1];
        std::fill(cursor.begin(), cursor.end(), 0);
        for (std::uint64_t k = begin; k < end; ++k) ++cursor[pair_target[k] - first];
        std::uint64_t at = begin;  // the bucket's entries start where its pairs do
        for (std::uint64_t v = first; v < last; ++v) {
          in->offsets[v] = at;
          at += std::exchange(cursor[v - first], at);
        }
        for (std::uint64_t k = begin; k < end; ++k) {
          const std::uint64_t pos = cursor[pair_target[k] - first]++;
          in->targets[pos] = pair_source[k];
          if (pair_weight) in->weights[pos] = pair_weight[k];
        }
      }
    });
  }

  // Turns the counts of block b's dense vertices into offsets, starting at
  // `first` (the entries of every block before it). Touches only the block's
  // own dense ids, so blocks convert concurrently.
  void MakeOffsets(const Pass& pass, std::uint64_t first, std::uint64_t b) const {
    std::uint64_t* off = pass.csr->offsets.get();
    const std::uint64_t dense_end = DenseBegin(b + 1);
    std::uint64_t running = first;
    for (std::uint64_t dv = DenseBegin(b); dv < dense_end; ++dv) running += std::exchange(off[dv], running);
  }

  void FillBlock(const std::vector<Pass>& passes, std::uint64_t begin, std::uint64_t end,
                 const std::vector<std::unique_ptr<std::uint64_t[]>>& kept, Worker* worker,
                 FirstError* error) {
    const storage::VertexTable::Leaf* ahead_leaf = nullptr;
    std::uint64_t ahead_base = ~std::uint64_t{0};
    ForSlots(*g_, begin, end, [&](std::uint64_t v, const storage::VertexSlot& s) {
      const std::uint64_t a = v + kPrefetchAhead;
      if (a < end) {
        if ((a & ~(storage::VertexTable::kLeafSize - 1)) != ahead_base) {
          ahead_base = a & ~(storage::VertexTable::kLeafSize - 1);
          ahead_leaf = storage::VertexTable::FindLeaf(g_->vertices, a);
        }
        const storage::VertexSlot& next = ahead_leaf->slots[a & (storage::VertexTable::kLeafSize - 1)];
        for (const Pass& pass : passes)
          for (int k = 0; k < pass.dir_count; ++k) PrefetchAdjacency(next, pass.dirs[k]);
      }
      const std::uint32_t dv = Dense(v);
      if (dv == kAbsent) return;
      for (std::size_t i = 0; i < passes.size(); ++i) {
        const Pass& pass = passes[i];
        Projection::Csr* csr = pass.csr;
        const std::uint64_t first = csr->offsets[dv];
        std::uint64_t pos = first;
        std::uint32_t* targets = csr->targets.get();
        double* weights = csr->weights.get();
        const bool merging = weights != nullptr && spec_.parallel_edges != ParallelEdges::kKeep;
        worker->edges.clear();
        if (weights != nullptr) {
          // Each weight is a cache miss on the edge's property block: start
          // them all before reading the first, so they overlap.
          for (int k = 0; k < pass.dir_count; ++k) {
            const Direction d = pass.dirs[k];
            ForEntries(v, s, d, pass.DropsLoops(d, spec_.self_loops), [&](std::uint32_t, const EdgeEntry& e) {
              base::Prefetch(worker->Props(*g_, e.edge().value()));
            });
          }
        }
        for (int k = 0; k < pass.dir_count; ++k) {
          const Direction d = pass.dirs[k];
          const bool drop_loops = pass.DropsLoops(d, spec_.self_loops);
          if (weights == nullptr) {
            // Unweighted: a copy loop small enough to inline (the weighted
            // body below is not), and with identity ids and no loop rule,
            // not even a check per entry.
            if (identity_ && !drop_loops) {
              ForGroups(s, d, [&](std::span<const EdgeEntry> entries) {
                for (const EdgeEntry& e : entries)
                  targets[pos++] = static_cast<std::uint32_t>(e.neighbor().value());
              });
            } else {
              ForEntries(v, s, d, drop_loops,
                         [&](std::uint32_t dn, const EdgeEntry&) { targets[pos++] = dn; });
            }
            continue;
          }
          ForEntries(v, s, d, drop_loops, [&](std::uint32_t dn, const EdgeEntry& e) {
            targets[pos] = dn;
            const std::uint64_t edge = e.edge().value();
            double w = 0;
            Status st = WeightOf(edge, &w, worker);
            if (!st.ok()) error->Record(edge, std::move(st));
            weights[pos] = w;
            if (merging) {
              worker->edges.push_back(edge);  // SortAndMerge notes the merged weights
            } else {
              NoteWeight(worker, w, edge);
            }
            ++pos;
          });
        }
        const std::uint64_t size = pos - first;
        const std::uint64_t left =
            size == 0 ? 0 : SortAndMerge(targets + first, weights ? weights + first : nullptr, size, worker);
        if (kept[i]) kept[i][dv] = left;
      }
    });
  }

  // Records a weight the projection holds, of edge `edge`, for min_weight()
  // and negative_weight_edge().
  static void NoteWeight(Worker* worker, double w, std::uint64_t edge) {
    worker->min_weight = std::min(worker->min_weight, w);
    if (w < 0) worker->negative = std::min(worker->negative, edge);
  }

  // Sorts one vertex's entries by (neighbour, weight) and applies the
  // parallel-edge rule in place; returns the entries kept.
  std::uint64_t SortAndMerge(std::uint32_t* t, double* w, std::uint64_t n, Worker* worker) const {
    if (w == nullptr) {
      if (!std::is_sorted(t, t + n)) base::SortU32(t, n);
      if (spec_.parallel_edges == ParallelEdges::kKeep) return n;
      return static_cast<std::uint64_t>(std::unique(t, t + n) - t);
    }
    if (spec_.parallel_edges != ParallelEdges::kKeep) return SortAndMergeWeighted(t, w, n, worker);
    if (n <= base::kSortNetworkMaxKeys) {
      SortWeightedShort(t, w, n);
      return n;
    }
    std::vector<std::pair<std::uint32_t, double>>& tmp = worker->sort;
    tmp.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) tmp[i] = {t[i], w[i]};
    if (!std::is_sorted(tmp.begin(), tmp.end())) std::sort(tmp.begin(), tmp.end());
    for (std::uint64_t i = 0; i < n; ++i) {
      t[i] = tmp[i].first;
      w[i] = tmp[i].second;
    }
    return n;
  }

  // Sorts up to base::kSortNetworkMaxKeys (neighbour, weight) entries by neighbour,
  // then weight, as std::sort of the pairs would: the network sorts
  // (neighbour << 32 | position) keys without a mispredicted branch, the
  // weights follow their positions, and only a run of one neighbour's
  // parallel entries (rare) has its weights sorted apart.
  static void SortWeightedShort(std::uint32_t* t, double* w, std::uint64_t n) {
    std::uint64_t keys[base::kSortNetworkMaxKeys];
    double weights[base::kSortNetworkMaxKeys];
    bool sorted = true;
    for (std::uint64_t i = 0; i < n; ++i) {
      keys[i] = std::uint64_t{t[i]} << 32 | i;
      weights[i] = w[i];
      sorted &= i == 0 || t[i - 1] < t[i];
    }
    if (sorted) return;  // strictly ascending neighbours: no weight order to fix either
    base::SortU64(keys, n);
    for (std::uint64_t i = 0; i < n; ++i) {
      t[i] = static_cast<std::uint32_t>(keys[i] >> 32);
      w[i] = weights[keys[i] & 0xFFFFFFFFu];
    }
    for (std::uint64_t i = 0; i < n;) {
      std::uint64_t end = i + 1;
      while (end < n && t[end] == t[i]) ++end;
      if (end - i > 1) std::sort(w + i, w + end);
      i = end;
    }
  }

  // SortAndMerge for weighted entries under kDrop or kMerge (worker->edges
  // holds each entry's edge). Each kept entry stands for the smallest edge id
  // of its run, and its final weight (the run's smallest under kDrop, the sum
  // in ascending weight order under kMerge) is what NoteWeight records.
  std::uint64_t SortAndMergeWeighted(std::uint32_t* t, double* w, std::uint64_t n, Worker* worker) const {
    std::vector<MergeEntry>& tmp = worker->merge;
    tmp.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) tmp[i] = {t[i], w[i], worker->edges[i]};
    if (!std::is_sorted(tmp.begin(), tmp.end())) std::sort(tmp.begin(), tmp.end());
    std::uint64_t k = 0;
    std::uint64_t run_edge = 0;  // the smallest edge id of the run being merged
    for (std::uint64_t i = 0; i < n; ++i) {
      if (k > 0 && t[k - 1] == tmp[i].target) {
        if (spec_.parallel_edges == ParallelEdges::kMerge) {
          w[k - 1] += tmp[i].weight;
          run_edge = std::min(run_edge, tmp[i].edge);
        }
        continue;  // kDrop: the first of a run has the smallest weight
      }
      if (k > 0) NoteWeight(worker, w[k - 1], run_edge);
      t[k] = tmp[i].target;
      w[k] = tmp[i].weight;
      run_edge = tmp[i].edge;
      ++k;
    }
    if (k > 0) NoteWeight(worker, w[k - 1], run_edge);
    return k;
  }

  // Closes the gaps parallel-edge removal left; returns the entry count.
  std::uint64_t Compact(Projection::Csr* csr, const std::uint64_t* kept) const {
    const std::uint32_t n = p_.vertex_count_;
    std::uint64_t* off = csr->offsets.get();
    std::uint64_t write = 0;
    for (std::uint32_t v = 0; v < n; ++v) {
      const std::uint64_t read = off[v];
      const std::uint64_t size = kept[v];
      if (read != write && size != 0) {
        std::memmove(csr->targets.get() + write, csr->targets.get() + read, size * sizeof(std::uint32_t));
        if (csr->weights)
          std::memmove(csr->weights.get() + write, csr->weights.get() + read, size * sizeof(double));
      }
      off[v] = write;
      write += size;
    }
    off[n] = write;
    return write;
  }

  const Snapshot& snap_;
  const ProjectionSpec& spec_;
  const unsigned threads_;
  const storage::GraphRoots* g_ = nullptr;
  std::vector<bool> labels_;
  std::vector<bool> types_;
  std::optional<PropertyKeyId> weight_key_;
  std::uint64_t limit_ = 0;
  bool identity_ = false;
  std::unique_ptr<std::uint32_t[]> dense_;  // VertexId -> dense id; null when the identity
  std::vector<std::uint64_t> block_dense_;  // block b's first dense id (with a map)
  // Per pass, per block: the entries of every block before it (prefix sums).
  std::vector<std::vector<std::uint64_t>> block_entries_;
  double min_weight_ = std::numeric_limits<double>::infinity();
  std::uint64_t min_negative_edge_ = kNoEdge;
  Projection p_;
};

Result<Projection> Project(const Snapshot& snapshot, const ProjectionSpec& spec) {
  // The arrays are allocated with new[]; running out of memory must reach
  // the caller as a status (RunOnThreads rethrows a worker's bad_alloc here).
  try {
    return ProjectionBuilder(snapshot, spec).Build();
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("Project: out of memory while building the projection");
  }
}

std::optional<std::uint32_t> Projection::ToDense(VertexId id) const {
  if (!ids_) {
    if (id.value() < vertex_count_) return static_cast<std::uint32_t>(id.value());
    return std::nullopt;
  }
  const std::uint64_t* begin = ids_.get();
  const std::uint64_t* end = begin + vertex_count_;
  const std::uint64_t* it = std::lower_bound(begin, end, id.value());
  if (it == end || *it != id.value()) return std::nullopt;
  return static_cast<std::uint32_t>(it - begin);
}

std::uint64_t Projection::memory_bytes() const {
  std::uint64_t bytes = ids_ ? 8ull * vertex_count_ : 0;
  for (const Csr* c : {&out_, &in_}) {
    if (!c->offsets) continue;
    bytes += 8ull * (vertex_count_ + 1) + 4 * c->entries + (c->weights ? 8 * c->entries : 0);
  }
  return bytes;
}

}  // namespace quiver
