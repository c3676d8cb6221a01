// Project(): builds a CSR projection from a snapshot in phases, each spread
// over the threads in blocks of vertex ids (Snapshot::ScanEdges walks storage
// leaf by leaf, so a block is a sequential sweep):
//
//   1. resolve    names to ids (unknown: NotFound) and check the spec;
//   2. vertices   per block, the live vertices of the chosen labels get local
//                 numbers; a prefix sum over blocks makes them dense ids, so
//                 dense order is VertexId order on every thread count;
//   3. count      per direction, each vertex's entries that pass the filters
//                 (types, endpoint in the projection, self-loops); without a
//                 label filter or an entry-level rule this reads group sizes
//                 only. The memory limit is checked here, before the
//                 neighbour arrays exist;
//   4. fill       the same sweep writes each vertex's entries at its offset,
//                 reads weights, sorts the vertex's entries by (neighbour,
//                 weight) and applies the parallel-edge rule. Sorting by
//                 value rather than by storage order is what makes the
//                 projection, and so every kernel, independent of the order
//                 in which the engine happens to keep entries;
//   5. compact    only when parallel edges were removed: close the gaps.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "quiver/analytics.h"
#include "quiver/snapshot.h"

namespace quiver {

namespace {

constexpr std::uint32_t kAbsent = 0xFFFFFFFFu;
constexpr std::uint64_t kIdBlock = 8192;

// The first error met by any worker; the one with the smallest edge id wins
// so the message does not depend on scheduling.
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

}  // namespace

class ProjectionBuilder {
 public:
  ProjectionBuilder(const Snapshot& snap, const ProjectionSpec& spec)
      : snap_(snap), spec_(spec), threads_(base::ResolveThreads(spec.threads)) {}

  Result<Projection> Build() {
    QUIVER_RETURN_IF_ERROR(Resolve());
    QUIVER_RETURN_IF_ERROR(SelectVertices());
    p_.undirected_ = spec_.undirected;
    p_.weighted_ = weight_key_.has_value();
    // Phase 3 for every direction first, so the limit sees the whole size.
    std::vector<std::uint64_t> entries;
    for (const Pass& pass : Passes()) entries.push_back(Count(pass));
    QUIVER_RETURN_IF_ERROR(CheckMemory(entries));
    auto passes = Passes();
    for (std::size_t i = 0; i < passes.size(); ++i) {
      Projection::Csr& csr = passes[i].in_csr ? p_.in_ : p_.out_;
      QUIVER_RETURN_IF_ERROR(Fill(passes[i], counts_[i].get(), entries[i], &csr));
    }
    if (min_negative_edge_ != kNoEdge) p_.negative_edge_ = EdgeId(min_negative_edge_);
    p_.min_weight_ = min_weight_;
    return std::move(p_);
  }

 private:
  static constexpr std::uint64_t kNoEdge = ~std::uint64_t{0};

  // One CSR to build: the snapshot directions it reads. An undirected CSR
  // reads out then in, skipping self-loops on the in side (met once).
  struct Pass {
    bool in_csr = false;
    std::vector<Direction> dirs;
  };

  std::vector<Pass> Passes() const {
    if (spec_.undirected) return {Pass{false, {Direction::kOut, Direction::kIn}}};
    std::vector<Pass> v;
    if (spec_.out) v.push_back(Pass{false, {Direction::kOut}});
    if (spec_.in) v.push_back(Pass{true, {Direction::kIn}});
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
    return Status::Ok();
  }

  bool LabelOk(VertexId v) const {
    if (spec_.vertex_labels.empty()) return true;
    auto l = snap_.LabelOf(v);
    return l && l->value() < labels_.size() && labels_[l->value()];
  }
  bool TypeOk(EdgeTypeId t) const {
    return spec_.edge_types.empty() || (t.value() < types_.size() && types_[t.value()]);
  }
  std::uint32_t Dense(VertexId v) const {
    return identity_ ? static_cast<std::uint32_t>(v.value()) : dense_[v.value()];
  }

  Status SelectVertices() {
    limit_ = snap_.vertex_id_limit();
    if (spec_.vertex_labels.empty() && snap_.vertex_count() == limit_) {
      // Every id is live and included: dense ids are the ids, no map at all.
      if (limit_ >= kAbsent) return ResourceExhaustedError("Project: 2^32 - 1 vertices or more");
      p_.vertex_count_ = static_cast<std::uint32_t>(limit_);
      identity_ = true;
      return Status::Ok();
    }
    dense_.reset(new std::uint32_t[limit_]);
    const std::uint64_t blocks = (limit_ + kIdBlock - 1) / kIdBlock;
    std::vector<std::uint64_t> block_count(blocks + 1, 0);
    ForIdBlocks(threads_, limit_, [&](std::uint64_t b, std::uint64_t begin, std::uint64_t end) {
      std::fill(dense_.get() + begin, dense_.get() + end, kAbsent);
      std::uint32_t n = 0;
      for (VertexId v : snap_.Vertices(begin, end))
        if (LabelOk(v)) dense_[v.value()] = n++;
      block_count[b + 1] = n;
    });
    for (std::uint64_t b = 0; b < blocks; ++b) block_count[b + 1] += block_count[b];
    const std::uint64_t count = block_count[blocks];
    if (count >= kAbsent) return ResourceExhaustedError("Project: 2^32 - 1 vertices or more");
    p_.vertex_count_ = static_cast<std::uint32_t>(count);
    identity_ = count == limit_;
    if (identity_) {
      dense_.reset();
      return Status::Ok();
    }
    p_.ids_.reset(new std::uint64_t[count]);
    ForIdBlocks(threads_, limit_, [&](std::uint64_t b, std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t v = begin; v < end; ++v) {
        if (dense_[v] == kAbsent) continue;
        dense_[v] += static_cast<std::uint32_t>(block_count[b]);
        p_.ids_[dense_[v]] = v;
      }
    });
    return Status::Ok();
  }

  // True when counting may use group sizes instead of reading entries.
  bool CountsGroupsOnly(Direction d, const Pass& pass) const {
    const bool skips_loops =
        spec_.self_loops == SelfLoops::kDrop || (pass.dirs.size() == 2 && d == Direction::kIn);
    return identity_ && !skips_loops;
  }

  // Calls fn(vertex, its dense id, the neighbour's dense id, entry) for every entry of vertex
  // ids [begin, end) in direction d that passes the filters.
  template <typename Fn>
  void ForEntries(std::uint64_t begin, std::uint64_t end, Direction d, const Pass& pass, Fn&& fn) const {
    const bool drop_loops =
        spec_.self_loops == SelfLoops::kDrop || (pass.dirs.size() == 2 && d == Direction::kIn);
    snap_.ScanEdges(begin, end, d, [&](VertexId v, const EdgeGroup& g) {
      if (!TypeOk(g.type)) return;
      const std::uint32_t dv = Dense(v);
      if (dv == kAbsent) return;
      for (const EdgeEntry& e : g.entries) {
        const VertexId n = e.neighbor();
        const std::uint32_t dn = Dense(n);
        if (dn == kAbsent || (drop_loops && n == v)) continue;
        fn(v, dv, dn, e);
      }
    });
  }

  std::uint64_t Count(const Pass& pass) {
    counts_.emplace_back(new std::uint64_t[std::uint64_t{p_.vertex_count_} + 1]);
    std::uint64_t* offsets = counts_.back().get();
    std::fill(offsets, offsets + p_.vertex_count_ + 1, 0);
    ForIdBlocks(threads_, limit_, [&](std::uint64_t, std::uint64_t begin, std::uint64_t end) {
      for (Direction d : pass.dirs) {
        if (CountsGroupsOnly(d, pass)) {
          snap_.ScanEdges(begin, end, d, [&](VertexId v, const EdgeGroup& g) {
            if (TypeOk(g.type)) offsets[v.value() + 1] += g.entries.size();
          });
        } else {
          ForEntries(begin, end, d, pass,
                     [&](VertexId, std::uint32_t dv, std::uint32_t, const EdgeEntry&) { ++offsets[dv + 1]; });
        }
      }
    });
    for (std::uint32_t v = 0; v < p_.vertex_count_; ++v) offsets[v + 1] += offsets[v];
    return offsets[p_.vertex_count_];
  }

  Status CheckMemory(const std::vector<std::uint64_t>& entries) const {
    const std::uint64_t per_entry = 4 + (weight_key_ ? 8 : 0);
    std::uint64_t bytes = identity_ ? 0 : 8ull * p_.vertex_count_;
    for (std::uint64_t e : entries) bytes += 8ull * (p_.vertex_count_ + 1) + per_entry * e;
    if (spec_.memory_limit_bytes != 0 && bytes > spec_.memory_limit_bytes)
      return ResourceExhaustedError("Project: the projection needs " + std::to_string(bytes) +
                                    " bytes, above the memory limit of " +
                                    std::to_string(spec_.memory_limit_bytes));
    return Status::Ok();
  }

  // The weight of edge `e`, or a status naming it.
  Result<double> WeightOf(EdgeId e) const {
    auto v = snap_.GetProperty(e, *weight_key_);
    if (!v) {
      if (spec_.default_weight) return *spec_.default_weight;
      return InvalidArgumentError("Project: edge " + std::to_string(e.value()) + " has no weight property '" +
                                  spec_.weight_property + "'");
    }
    if (v->type() == ValueType::kInt64) return static_cast<double>(*v->as_int64());
    if (v->type() == ValueType::kDouble) return *v->as_double();
    return InvalidArgumentError("Project: edge " + std::to_string(e.value()) + " has a " +
                                std::string(ValueTypeName(v->type())) + " weight property '" +
                                spec_.weight_property + "'; it must be int64 or double");
  }

  Status Fill(const Pass& pass, const std::uint64_t* counted, std::uint64_t entries, Projection::Csr* csr) {
    const std::uint32_t n = p_.vertex_count_;
    csr->offsets.reset(new std::uint64_t[std::uint64_t{n} + 1]);
    csr->targets.reset(new std::uint32_t[entries]);
    if (weight_key_) csr->weights.reset(new double[entries]);
    std::uint64_t* off = csr->offsets.get();
    std::memcpy(off, counted, sizeof(std::uint64_t) * (std::uint64_t{n} + 1));
    // kept[v]: v's entries left after the parallel-edge rule.
    std::unique_ptr<std::uint64_t[]> kept(new std::uint64_t[n]);
    FirstError error;
    std::mutex weight_mu;
    ForIdBlocks(threads_, limit_, [&](std::uint64_t, std::uint64_t begin, std::uint64_t end) {
      if (error.failed()) return;
      FillBlock(pass, begin, end, csr, kept.get(), &error, &weight_mu);
    });
    if (error.failed()) return error.Take();
    csr->entries = Compact(csr, kept.get());
    return Status::Ok();
  }

  void FillBlock(const Pass& pass, std::uint64_t begin, std::uint64_t end, Projection::Csr* csr,
                 std::uint64_t* kept, FirstError* error, std::mutex* weight_mu) {
    const std::uint64_t* off = csr->offsets.get();
    std::uint32_t* targets = csr->targets.get();
    double* weights = csr->weights.get();
    std::vector<std::uint32_t> fill(end - begin, 0);  // per vertex id of the block: entries written
    double local_min = std::numeric_limits<double>::infinity();
    std::uint64_t local_negative = kNoEdge;
    for (Direction d : pass.dirs) {
      ForEntries(begin, end, d, pass,
                 [&](VertexId v, std::uint32_t dv, std::uint32_t dn, const EdgeEntry& e) {
                   const std::uint64_t pos = off[dv] + fill[v.value() - begin]++;
                   targets[pos] = dn;
                   if (weights == nullptr) return;
                   Result<double> w = WeightOf(e.edge());
                   if (!w.ok()) {
                     error->Record(e.edge().value(), w.status());
                     weights[pos] = 0;
                     return;
                   }
                   weights[pos] = *w;
                   local_min = std::min(local_min, *w);
                   if (*w < 0) local_negative = std::min(local_negative, e.edge().value());
                 });
    }
    if (weights != nullptr) {
      std::lock_guard<std::mutex> lock(*weight_mu);
      min_weight_ = std::min(min_weight_, local_min);
      min_negative_edge_ = std::min(min_negative_edge_, local_negative);
    }
    for (std::uint64_t id = begin; id < end; ++id) {
      const std::uint32_t dv = Dense(VertexId(id));
      if (dv == kAbsent) continue;
      const std::uint64_t size = off[dv + 1] - off[dv];
      kept[dv] = size == 0 ? 0 : SortAndMerge(targets + off[dv], weights ? weights + off[dv] : nullptr, size);
    }
  }

  // Sorts one vertex's entries by (neighbour, weight) and applies the
  // parallel-edge rule in place; returns the entries kept.
  std::uint64_t SortAndMerge(std::uint32_t* t, double* w, std::uint64_t n) const {
    if (w == nullptr) {
      if (!std::is_sorted(t, t + n)) std::sort(t, t + n);
      if (spec_.parallel_edges == ParallelEdges::kKeep) return n;
      return static_cast<std::uint64_t>(std::unique(t, t + n) - t);
    }
    std::vector<std::pair<std::uint32_t, double>> tmp(n);
    for (std::uint64_t i = 0; i < n; ++i) tmp[i] = {t[i], w[i]};
    std::sort(tmp.begin(), tmp.end());
    std::uint64_t k = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (k > 0 && spec_.parallel_edges != ParallelEdges::kKeep && t[k - 1] == tmp[i].first) {
        if (spec_.parallel_edges == ParallelEdges::kMerge) w[k - 1] += tmp[i].second;
        continue;  // kDrop: the first of a run has the smallest weight
      }
      t[k] = tmp[i].first;
      w[k] = tmp[i].second;
      ++k;
    }
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
  std::vector<bool> labels_;
  std::vector<bool> types_;
  std::optional<PropertyKeyId> weight_key_;
  std::uint64_t limit_ = 0;
  bool identity_ = false;
  std::unique_ptr<std::uint32_t[]> dense_;  // VertexId -> dense id; null when the identity
  std::vector<std::unique_ptr<std::uint64_t[]>> counts_;
  double min_weight_ = std::numeric_limits<double>::infinity();
  std::uint64_t min_negative_edge_ = kNoEdge;
  Projection p_;
};

Result<Projection> Project(const Snapshot& snapshot, const ProjectionSpec& spec) {
  return ProjectionBuilder(snapshot, spec).Build();
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
