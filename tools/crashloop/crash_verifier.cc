// Verify in steps: regroup the graph by commit and check each commit's
// contents; classify every commit against the child's log and the previous
// verification; check expectations, sequence numbers, the upserted Key
// vertices, the indexes and graph invariants.
#include "crash_verifier.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "commit_index.h"
#include "index_catalog.h"

namespace quiver::crashloop {
namespace {

constexpr std::size_t kMaxMessages = 20;

class Checker {
 public:
  Checker(const Snapshot& s, std::uint64_t seed, const DirModel& before, const ChildLog& log, bool corrupt)
      : s_(s), seed_(seed), before_(before), log_(log), corrupt_(corrupt) {}

  Verification Run() {
    index_ = IndexCommits(s_);
    for (std::size_t i = 0; i < index_.markers_in_order.size(); ++i)
      rank_[index_.markers_in_order[i]] = i + 1;
    CheckContents();
    ClassifyPresent();
    CheckNothingLost();
    CheckExpectations();
    CheckSequences();
    CheckUpserts();
    CheckIndexes();
    CheckInvariants();
    out_.model.sequence = s_.sequence();
    out_.elements = s_.vertex_id_limit() + s_.edge_id_limit();
    return std::move(out_);
  }

 private:
  void Report(std::uint64_t* counter, const std::string& message) {
    ++*counter;
    if (out_.messages.size() < kMaxMessages) out_.messages.push_back(message);
  }

  // Durable before this iteration, or acknowledged in it: must be whole.
  bool MustBePresent(std::uint64_t id) const {
    return before_.present.contains(id) || log_.acked.contains(id);
  }

  void CheckContents() {
    for (const auto& [id, found] : index_.commits) {
      std::string why;
      CommitSpec spec = MakeCommitSpec(seed_, id);
      if (spec.expectation == Expectation::kFails)
        Report(&out_.violations.expectation_errors,
               "commit " + std::to_string(id) + " is present although its expectation must fail");
      upserts_[id] = std::move(spec.upserts);
      CommitState state = CheckCommit(s_, spec, found, &why);
      if (state == CommitState::kWhole) {
        whole_.insert(id);
      } else if (state != CommitState::kAbsent) {
        Report(MustBePresent(id) ? &out_.violations.acked_lost : &out_.violations.partial_groups,
               "commit " + std::to_string(id) + ": " + why);
      }
    }
  }

  void ClassifyPresent() {
    for (std::uint64_t id : whole_) {
      if (before_.present.contains(id)) continue;
      if (!log_.begun.contains(id)) {
        Report(&out_.violations.phantoms, "commit " + std::to_string(id) + " is present but was never begun");
      } else if (auto f = log_.failed.find(id);
                 f != log_.failed.end() && f->second != StatusCode::kDurabilityUnknown) {
        Report(&out_.violations.phantoms, "commit " + std::to_string(id) +
                                              " is present but its Write failed with " +
                                              std::string(StatusCodeName(f->second)));
      } else if (log_.acked.contains(id)) {
        ++out_.acked_verified;
      } else {
        ++out_.unacked_present;
      }
    }
    for (std::uint64_t id : log_.begun)
      if (!log_.acked.contains(id) && !whole_.contains(id)) ++out_.unacked_absent;
  }

  void CheckNothingLost() {
    for (const auto& [id, rank] : before_.present)
      if (!index_.commits.contains(id))
        Report(&out_.violations.acked_lost, "commit " + std::to_string(id) + " (data commit " +
                                                std::to_string(rank) +
                                                ") was present at the last verification and is gone");
    for (const auto& [id, seq] : log_.acked)
      if (!index_.commits.contains(id))
        Report(&out_.violations.acked_lost, "acknowledged commit " + std::to_string(id) + " (sequence " +
                                                std::to_string(seq) + ") is absent");
  }

  // The commit at marker rank `rank`, 0 if none.
  std::uint64_t CommitAt(std::uint64_t rank) const {
    return rank >= 1 && rank <= index_.markers_in_order.size() ? index_.markers_in_order[rank - 1] : 0;
  }

  void CheckExpectations() {
    for (const auto& [id, seq] : log_.acked)
      if (MakeCommitSpec(seed_, id).expectation == Expectation::kFails)
        Report(&out_.violations.expectation_errors,
               "commit " + std::to_string(id) + " was acknowledged although its expectation must fail");
    for (const auto& [id, code] : log_.failed)
      if (code == StatusCode::kAborted && MakeCommitSpec(seed_, id).expectation != Expectation::kFails)
        Report(&out_.violations.expectation_errors,
               "commit " + std::to_string(id) + " failed with Aborted although its expectations hold");
  }

  // The commits the index operations of this child may have added: at
  // least those acknowledged, at most all those begun could.
  std::pair<std::uint64_t, std::uint64_t> IndexCommitBounds() const {
    std::uint64_t lo = 0, hi = 0;
    for (const IndexEvent& e : log_.index_ops) {
      const std::uint64_t commits = e.drop ? 1 : 2;  // DropIndex; CreateIndex: declare, then ready or drop
      hi += commits;
      if (e.done && e.code == StatusCode::kOk) lo += commits;
    }
    return {before_.non_data + lo, before_.non_data + hi};
  }

  void CheckSequences() {
    const SequenceNumber m = s_.sequence();
    const std::uint64_t markers = index_.markers_in_order.size();
    Violations& v = out_.violations;
    if (markers > m)
      Report(&v.sequence_gaps, "recovered sequence " + std::to_string(m) + " but " + std::to_string(markers) +
                                   " commits are visible");
    const std::uint64_t x = m >= markers ? m - markers : 0;  // commits that are not data
    const auto [lo, hi] = IndexCommitBounds();
    if (x < lo || x > hi)
      Report(&v.sequence_gaps, "recovered sequence " + std::to_string(m) + " holds " +
                                   std::to_string(markers) + " data commits and " + std::to_string(x) +
                                   " others, but the index operations account for " + std::to_string(lo) +
                                   ".." + std::to_string(hi));
    if (m < before_.sequence)
      Report(&v.sequence_gaps, "recovered sequence " + std::to_string(m) + " is below the " +
                                   std::to_string(before_.sequence) + " verified before");
    if (log_.open_done && log_.child_recovered_sequence != before_.sequence)
      Report(&v.sequence_gaps, "the child recovered sequence " +
                                   std::to_string(log_.child_recovered_sequence) +
                                   ", the last verification found " + std::to_string(before_.sequence));
    // Known sequences by rank: this child's acknowledged ones, and those
    // acknowledged earlier.
    std::map<std::uint64_t, std::pair<std::uint64_t, SequenceNumber>> by_rank;  // rank -> (id, seq)
    for (const auto& [id, seq] : before_.sequences)
      if (auto r = rank_.find(id); r != rank_.end()) by_rank[r->second] = {id, seq};
    for (const auto& [id, seq] : log_.acked) {
      auto r = rank_.find(id);
      if (seq > m) {
        Report(&v.sequence_gaps, "acknowledged sequence " + std::to_string(seq) + " (commit " +
                                     std::to_string(id) + ") is above the recovered " + std::to_string(m));
      } else if (r != rank_.end() &&
                 (seq < r->second || seq - r->second < before_.non_data || seq - r->second > x)) {
        Report(&v.sequence_gaps, "sequence " + std::to_string(seq) + " was acknowledged for commit " +
                                     std::to_string(id) + ", which is data commit " +
                                     std::to_string(r->second) + " of which " +
                                     std::to_string(before_.non_data) + ".." + std::to_string(x) +
                                     " commits are not data (at " + std::to_string(seq) + ": commit " +
                                     std::to_string(CommitAt(seq - before_.non_data)) + ")");
      }
      if (r != rank_.end()) by_rank[r->second] = {id, seq};
    }
    const std::pair<std::uint64_t, SequenceNumber>* prev = nullptr;
    std::uint64_t prev_rank = 0;
    for (const auto& [rank, known] : by_rank) {
      if (prev != nullptr && (known.second <= prev->second || known.second - rank < prev->second - prev_rank))
        Report(&v.sequence_gaps,
               "commit " + std::to_string(known.first) + " (sequence " + std::to_string(known.second) +
                   ") follows commit " + std::to_string(prev->first) + " (sequence " +
                   std::to_string(prev->second) +
                   ") in the marker order, with fewer commits between them than data commits");
      prev = &known;
      prev_rank = rank;
    }
    for (const auto& [id, rank] : before_.present)
      if (CommitAt(rank) != id)
        Report(&v.sequence_gaps, "data commit " + std::to_string(rank) + " was commit " + std::to_string(id) +
                                     " and is now " + std::to_string(CommitAt(rank)));
    for (std::size_t i = 0; i < markers; ++i) {
      const std::uint64_t id = index_.markers_in_order[i];
      if (!whole_.contains(id)) continue;
      out_.model.present[id] = i + 1;
      if (auto a = log_.acked.find(id); a != log_.acked.end()) out_.model.sequences[id] = a->second;
      if (auto b = before_.sequences.find(id); b != before_.sequences.end())
        out_.model.sequences[id] = b->second;
    }
    out_.model.non_data = x;
  }

  // Replays the upserts of the present commits in commit order and compares
  // every Key vertex with the result.
  void CheckUpserts() {
    struct KeyModel {
      std::map<std::string, PropertyValue> properties;  // without k
      std::uint64_t creator_rank = 0;
    };
    std::map<std::int64_t, KeyModel> model;
    for (std::size_t i = 0; i < index_.markers_in_order.size(); ++i) {
      auto u = upserts_.find(index_.markers_in_order[i]);
      if (u == upserts_.end() || !whole_.contains(u->first)) continue;
      for (const UpsertSpec& up : u->second) {
        auto [it, added] = model.try_emplace(up.k);
        if (added) it->second.creator_rank = i + 1;
        if (up.mode == UpsertMode::kReplace) it->second.properties.clear();
        for (const Property& p : up.properties) it->second.properties[p.key] = p.value;
      }
    }
    Violations& v = out_.violations;
    for (const auto& [k, vertices] : index_.keys)
      if (!model.contains(k))
        Report(&v.upsert_mismatches,
               "Key " + std::to_string(k) + " exists but no present commit upserted it");
    for (const auto& [k, want] : model) {
      ++out_.upsert_keys;
      auto found = index_.keys.find(k);
      const std::string what = "Key " + std::to_string(k);
      if (found == index_.keys.end() || found->second.size() != 1) {
        Report(&v.upsert_mismatches,
               what + " is held by " + std::to_string(found == index_.keys.end() ? 0 : found->second.size()) +
                   " vertices, the replay of the present commits' upserts makes one");
        continue;
      }
      const VertexId vertex = found->second[0];
      bool same = s_.Properties(vertex).size() == want.properties.size() + 1;
      for (const auto& [key, value] : want.properties) {
        std::optional<PropertyView> got = s_.GetProperty(vertex, key);
        same = same && got && IdenticalValues(*got, value);
      }
      if (!same)
        Report(&v.upsert_mismatches, what + ": its properties differ from the replay of the upserts");
      // Created by the batch of its first upsert: between that commit's
      // marker and the next commit's.
      const VertexId after = index_.commits[CommitAt(want.creator_rank)].markers.front();
      const std::uint64_t next = CommitAt(want.creator_rank + 1);
      if (vertex <= after || (next != 0 && vertex >= index_.commits[next].markers.front()))
        Report(&v.upsert_mismatches, what + " (vertex " + std::to_string(vertex.value()) +
                                         ") was not created by commit " +
                                         std::to_string(CommitAt(want.creator_rank)) + ", its first upsert");
    }
  }

  // What the log says of an index's existence after this child: 1 exists,
  // 0 absent, -1 either (an operation in flight, or one that failed).
  int ExpectedExistence(const std::string& name) const {
    int state = before_.indexes.contains(name) ? 1 : 0;
    for (const IndexEvent& e : log_.index_ops) {
      if (e.name != name) continue;
      if (!e.done) {
        state = -1;
      } else if (e.code == StatusCode::kOk) {
        state = e.drop ? 0 : 1;
      } else if (!e.drop && e.code == StatusCode::kAlreadyExists) {
        state = 1;  // the name was taken (no catalog index can be violated by the data)
      } else if (e.drop && e.code == StatusCode::kNotFound) {
        state = 0;
      } else {
        state = -1;
      }
    }
    return state;
  }

  void CheckIndexes() {
    IndexCheck c = crashloop::CheckIndexes(s_, corrupt_);
    out_.index_checks += c.checks;
    out_.violations.index_mismatches += c.mismatches;
    for (std::string& m : c.messages)
      if (out_.messages.size() < kMaxMessages) out_.messages.push_back(std::move(m));
    std::map<std::string, IndexState> listed;
    for (const IndexInfo& info : s_.Indexes()) listed[info.spec.name] = info.state;
    for (const IndexSpec& spec : IndexCatalog()) {
      const int want = ExpectedExistence(spec.name);
      auto it = listed.find(spec.name);
      ++out_.index_checks;
      if (it != listed.end() && it->second != IndexState::kReady) {
        Report(&out_.violations.index_mismatches, "index " + spec.name + " is still building after Open");
      } else if (want == 1 && it == listed.end()) {
        Report(&out_.violations.index_mismatches,
               "index " + spec.name + " was acknowledged (or verified) and is missing after recovery");
      } else if (want == 0 && it != listed.end()) {
        Report(&out_.violations.index_mismatches,
               "index " + spec.name + " exists after recovery although it was dropped or never created");
      }
      if (it != listed.end() && it->second == IndexState::kReady) out_.model.indexes.insert(spec.name);
    }
  }

  // Edge `e` from `from` appears in `from`'s adjacency as (e, to).
  bool Listed(VertexId from, Direction d, EdgeTypeId type, EdgeId e, VertexId to) const {
    for (const EdgeEntry& entry : s_.Edges(from, d, type))
      if (entry.edge() == e && entry.neighbor() == to) return true;
    return false;
  }

  void CheckInvariants() {
    Violations& v = out_.violations;
    if (index_.strays > 0)
      Report(&v.invariant_errors, std::to_string(index_.strays) + " elements belong to no commit");
    if (s_.vertex_count() != s_.vertex_id_limit() || s_.edge_count() != s_.edge_id_limit())
      Report(&v.invariant_errors, "live counts differ from id limits although nothing is ever removed");
    std::uint64_t out_degrees = 0, in_degrees = 0;
    for (VertexId u : s_.Vertices()) {
      out_degrees += s_.OutDegree(u);
      in_degrees += s_.InDegree(u);
    }
    if (out_degrees != s_.edge_count() || in_degrees != s_.edge_count())
      Report(&v.invariant_errors, "degree sums " + std::to_string(out_degrees) + "/" +
                                      std::to_string(in_degrees) + " differ from the edge count " +
                                      std::to_string(s_.edge_count()));
    for (EdgeId e : s_.Edges()) {
      std::optional<EdgeInfo> info = s_.GetEdge(e);
      if (!info || !s_.HasVertex(info->source) || !s_.HasVertex(info->target) ||
          !Listed(info->source, Direction::kOut, info->type, e, info->target) ||
          !Listed(info->target, Direction::kIn, info->type, e, info->source))
        Report(&v.invariant_errors,
               "edge " + std::to_string(e.value()) + " is not in its endpoints' adjacency");
    }
  }

  const Snapshot& s_;
  const std::uint64_t seed_;
  const DirModel& before_;
  const ChildLog& log_;
  const bool corrupt_;
  CommitIndex index_;
  std::map<std::uint64_t, std::uint64_t> rank_;  // commit id -> its marker's rank
  std::map<std::uint64_t, std::vector<UpsertSpec>> upserts_;
  std::set<std::uint64_t> whole_;
  Verification out_;
};

}  // namespace

void Violations::Add(const Violations& o) {
  acked_lost += o.acked_lost;
  partial_groups += o.partial_groups;
  sequence_gaps += o.sequence_gaps;
  phantoms += o.phantoms;
  invariant_errors += o.invariant_errors;
  index_mismatches += o.index_mismatches;
  upsert_mismatches += o.upsert_mismatches;
  expectation_errors += o.expectation_errors;
}

Verification Verify(const Snapshot& snapshot, std::uint64_t seed, const DirModel& before, const ChildLog& log,
                    bool corrupt_index_expectations) {
  return Checker(snapshot, seed, before, log, corrupt_index_expectations).Run();
}

}  // namespace quiver::crashloop
