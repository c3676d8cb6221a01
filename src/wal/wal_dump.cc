#include "wal/wal_dump.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "base/value_text.h"
#include "wal/batch_codec.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"
#include "write/write_batch_internal.h"

namespace quiver::wal {
namespace {

using internal::WriteBatchInternal;
using Op = WriteBatchInternal::Op;

// "1 operation", "2 operations".
std::string Count(std::uint64_t n, std::string_view one, std::string_view many) {
  return base::StrCat(n, " ", n == 1 ? one : many);
}

std::string Sequences(SequenceNumber first, SequenceNumber last) {
  return first == last ? base::StrCat("sequence ", first) : base::StrCat("sequences ", first, "..", last);
}

void AppendProps(std::string& out, std::span<const Property> props) {
  if (props.empty()) return;
  out.append(" {");
  for (std::size_t i = 0; i < props.size(); ++i) {
    if (i > 0) out.append(", ");
    base::AppendName(out, props[i].key);
    out.append(": ");
    base::AppendValueText(out, props[i].value);
  }
  out.push_back('}');
}

// One logged batch's operations as text. The ids its adds received follow
// from the batch's first ids: the writer assigns them in the order of the
// adds (replay checks that it gets the same).
class BatchText {
 public:
  explicit BatchText(const LoggedBatch& lb) : lb_(lb) {}

  std::string Of(const Op& op) {
    std::string out;
    const std::span<const Property> props = WriteBatchInternal::Props(lb_.batch, op);
    switch (op.kind) {
      case OpKind::kAddVertex:
        out = base::StrCat("add vertex v", lb_.first_vertex + vertices_++, " :");
        base::AppendName(out, op.name);
        AppendProps(out, props);
        return out;
      case OpKind::kAddEdge:
        out = base::StrCat("add edge e", lb_.first_edge + edges_++, " :");
        base::AppendName(out, op.name);
        out.append(base::StrCat(" ", Ref(op.v1), " -> ", Ref(op.v2)));
        AppendProps(out, props);
        return out;
      case OpKind::kSetVertexProperty: return Set(Ref(op.v1), props);
      case OpKind::kSetEdgeProperty: return Set(Ref(op.e), props);
      case OpKind::kRemoveVertexProperty: return Remove(Ref(op.v1), op.name);
      case OpKind::kRemoveEdgeProperty: return Remove(Ref(op.e), op.name);
      case OpKind::kRemoveEdge: return base::StrCat("remove edge ", Ref(op.e));
      case OpKind::kRemoveVertex: return base::StrCat("remove vertex ", Ref(op.v1));
      case OpKind::kDefineIndex:
        out = "define index ";
        base::AppendIndexSpec(out, op.index->spec);
        return out;
      case OpKind::kIndexReady:
        out = "index ready ";
        base::AppendName(out, op.index->spec.name);
        out.append(base::StrCat(", declared at sequence ", op.index->declared));
        return out;
      case OpKind::kDropIndex:
        out = "drop index ";
        base::AppendName(out, op.index->spec.name);
        out.append(op.index->declared == 0 ? std::string(" (whichever index has the name)")
                                           : base::StrCat(", declared at sequence ", op.index->declared));
        return out;
      default: break;  // upserts and expectations are never logged: DecodeGroup makes none
    }
    return base::StrCat("operation of kind ", static_cast<int>(op.kind));
  }

 private:
  std::string Ref(VertexRef r) const {
    return r.is_new() ? base::StrCat("v", lb_.first_vertex + r.raw(), "(new)") : base::StrCat("v", r.raw());
  }
  std::string Ref(EdgeRef r) const {
    return r.is_new() ? base::StrCat("e", lb_.first_edge + r.raw(), "(new)") : base::StrCat("e", r.raw());
  }
  static std::string Set(const std::string& element, std::span<const Property> props) {
    std::string out = base::StrCat("set ", element, ".");
    base::AppendName(out, props[0].key);
    out.append(" = ");
    base::AppendValueText(out, props[0].value);
    return out;
  }
  static std::string Remove(const std::string& element, std::string_view key) {
    std::string out = base::StrCat("remove ", element, ".");
    base::AppendName(out, key);
    return out;
  }

  const LoggedBatch& lb_;
  std::uint64_t vertices_ = 0;  // adds printed so far
  std::uint64_t edges_ = 0;
};

class SegmentDumper {
 public:
  SegmentDumper(std::span<const std::byte> bytes, const DumpOptions& options, const DumpLineFn& out)
      : bytes_(bytes), options_(options), out_(out) {}

  Status Run() {
    // The header is decoded again by ScanSegment, which says what a header
    // that does not decode means.
    if (std::optional<SegmentHeader> h = DecodeSegmentHeader(bytes_))
      Line(1, base::StrCat("header: format ", h->format_version, ", graph ", UuidText(h->uuid), ", segment ",
                           h->segment_number, ", first sequence ", h->first_sequence));
    Status s = ScanSegment(
        bytes_,
        [this](SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload) {
          return Visit(first, last, payload);
        },
        &scan_);
    // The last group read ends where the log does (after a visitor's
    // failure nothing is pending).
    Flush(scan_.valid_end);
    if (hidden_ > 0) Line(1, base::StrCat("... ", Count(hidden_, "more group", "more groups")));
    if (!s.ok()) {
      if (s.code() == StatusCode::kCorruption) {
        const std::uint64_t at = undecodable_at_.value_or(scan_.bad_offset);
        Line(1, base::StrCat("! stopped at offset ", at, ": ", base::OneLine(s.message())));
      } else {
        Line(1, base::StrCat("! ", base::OneLine(s.message())));
      }
      return s;
    }
    if (!scan_.header_valid) {
      Line(1, base::StrCat("header: not intact (", scan_.file_bytes,
                           " bytes): a segment creation a crash interrupted, holding no group"));
      return s;
    }
    std::string end =
        base::StrCat("end: ", Count(scan_.groups, "group", "groups"), ", the log ends at ", scan_.valid_end);
    if (scan_.tail_bytes > 0) end.append(base::StrCat("; torn tail of ", scan_.tail_bytes, " bytes"));
    if (scan_.zeroed_bytes > 0) end.append(base::StrCat("; zeroed end of ", scan_.zeroed_bytes, " bytes"));
    if (scan_.tail_bytes == 0 && scan_.zeroed_bytes == 0) end.append(", the end of the file");
    Line(1, end);
    return s;
  }

 private:
  struct Group {
    std::uint64_t start = 0;
    SequenceNumber first = 0, last = 0;
    std::vector<LoggedBatch> batches;
  };

  Status Visit(SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload) {
    // With nothing covered, valid_end is where this group starts (wal_reader.h).
    const std::uint64_t start = scan_.valid_end;
    Flush(start);
    Result<std::vector<LoggedBatch>> batches = DecodeGroup(payload);
    if (!batches.ok()) {
      Line(1, base::StrCat("group at ", start, ", ", Sequences(first, last)));
      undecodable_at_ = start;
      return batches.status();
    }
    pending_ = Group{start, first, last, std::move(*batches)};
    return Status::Ok();
  }

  // Prints the group read last, which ends at `end`, unless max_records
  // groups are printed already.
  void Flush(std::uint64_t end) {
    if (!pending_) return;
    const Group g = std::move(*pending_);
    pending_.reset();
    if (options_.max_records != 0 && shown_ >= options_.max_records) {
      ++hidden_;
      return;
    }
    ++shown_;
    Line(1, base::StrCat("group at ", g.start, ", ", end - g.start, " bytes, ", Sequences(g.first, g.last)));
    for (const LoggedBatch& lb : g.batches) {
      const auto& ops = WriteBatchInternal::Ops(lb.batch);
      Line(2, base::StrCat("batch ", lb.sequence, ": first vertex v", lb.first_vertex, ", first edge e",
                           lb.first_edge, ", ", Count(ops.size(), "operation", "operations")));
      if (!options_.values) continue;
      BatchText text(lb);
      for (const Op& op : ops) Line(3, text.Of(op));
    }
  }

  void Line(int depth, std::string_view text) const {
    std::string line(static_cast<std::size_t>(depth) * 2, ' ');
    line.append(text);
    out_(line);
  }

  const std::span<const std::byte> bytes_;
  const DumpOptions& options_;
  const DumpLineFn& out_;
  SegmentScan scan_;
  std::optional<Group> pending_;
  std::optional<std::uint64_t> undecodable_at_;  // the group DecodeGroup refused
  std::uint64_t shown_ = 0;                      // groups printed
  std::uint64_t hidden_ = 0;                     // groups past max_records
};

}  // namespace

Status DumpSegment(std::span<const std::byte> bytes, const DumpOptions& options, const DumpLineFn& out) {
  return SegmentDumper(bytes, options, out).Run();
}

}  // namespace quiver::wal
