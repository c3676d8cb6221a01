// Verify in four steps: regroup the graph by commit and check each commit's
// contents; classify every commit against the child's log and the previous
// verification; check sequence numbers; check graph invariants.
#include "crash_verifier.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "commit_index.h"

namespace quiver::crashloop {
namespace {

constexpr std::size_t kMaxMessages = 20;

class Checker {
 public:
  Checker(const Snapshot& s, std::uint64_t seed, const DirModel& before, const ChildLog& log)
      : s_(s), seed_(seed), before_(before), log_(log) {}

  Verification Run() {
    index_ = IndexCommits(s_);
    CheckContents();
    ClassifyPresent();
    CheckNothingLost();
    CheckSequences();
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
      CommitState state = CheckCommit(s_, MakeCommitSpec(seed_, id), found, &why);
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
    for (const auto& [id, seq] : before_.present)
      if (!index_.commits.contains(id))
        Report(&out_.violations.acked_lost, "commit " + std::to_string(id) + " (sequence " +
                                                std::to_string(seq) +
                                                ") was present at the last verification and is gone");
    for (const auto& [id, seq] : log_.acked)
      if (!index_.commits.contains(id))
        Report(&out_.violations.acked_lost, "acknowledged commit " + std::to_string(id) + " (sequence " +
                                                std::to_string(seq) + ") is absent");
  }

  // The commit with sequence `seq` per the marker order, 0 if none.
  std::uint64_t CommitAt(SequenceNumber seq) const {
    return seq >= 1 && seq <= index_.markers_in_order.size() ? index_.markers_in_order[seq - 1] : 0;
  }

  void CheckSequences() {
    const SequenceNumber m = s_.sequence();
    Violations& v = out_.violations;
    if (index_.markers_in_order.size() != m)
      Report(&v.sequence_gaps, "recovered sequence " + std::to_string(m) + " but " +
                                   std::to_string(index_.markers_in_order.size()) + " commits are visible");
    if (m < before_.sequence)
      Report(&v.sequence_gaps, "recovered sequence " + std::to_string(m) + " is below the " +
                                   std::to_string(before_.sequence) + " verified before");
    if (log_.open_done && log_.child_recovered_sequence != before_.sequence)
      Report(&v.sequence_gaps, "the child recovered sequence " +
                                   std::to_string(log_.child_recovered_sequence) +
                                   ", the last verification found " + std::to_string(before_.sequence));
    for (const auto& [id, seq] : log_.acked) {
      if (seq > m) {
        Report(&v.sequence_gaps, "acknowledged sequence " + std::to_string(seq) + " (commit " +
                                     std::to_string(id) + ") is above the recovered " + std::to_string(m));
      } else if (CommitAt(seq) != id) {
        Report(&v.sequence_gaps, "sequence " + std::to_string(seq) + " was acknowledged for commit " +
                                     std::to_string(id) + " but holds commit " +
                                     std::to_string(CommitAt(seq)));
      }
    }
    for (const auto& [id, seq] : before_.present)
      if (CommitAt(seq) != id)
        Report(&v.sequence_gaps, "sequence " + std::to_string(seq) + " held commit " + std::to_string(id) +
                                     " and now holds " + std::to_string(CommitAt(seq)));
    for (std::size_t i = 0; i < index_.markers_in_order.size(); ++i)
      if (whole_.contains(index_.markers_in_order[i])) out_.model.present[index_.markers_in_order[i]] = i + 1;
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
  CommitIndex index_;
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
}

Verification Verify(const Snapshot& snapshot, std::uint64_t seed, const DirModel& before,
                    const ChildLog& log) {
  return Checker(snapshot, seed, before, log).Run();
}

}  // namespace quiver::crashloop
