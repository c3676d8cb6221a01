#include "checkpoint/checkpoint_dump.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/coding.h"
#include "base/packed.h"
#include "base/strings.h"
#include "base/value_text.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/index_block.h"
#include "index/index_keys.h"
#include "index/key_codec.h"
#include "wal/value_codec.h"

namespace quiver::checkpoint {
namespace {

// "ids 4..7", "id 4", "no ids".
std::string Ids(std::uint64_t first, std::uint64_t count) {
  if (count == 0) return "no ids";
  if (count == 1) return base::StrCat("id ", first);
  return base::StrCat("ids ", first, "..", first + count - 1);
}

std::string Plural(std::uint64_t n, std::string_view one, std::string_view many) {
  return base::StrCat(n, " ", n == 1 ? one : many);
}

// Prints each block as ScanCheckpointFile hands it over, decoding its
// payload by the grammar of checkpoint_format.h. Names are kept as they
// are read: the names blocks come before every block that refers to them.
class CheckpointDumper final : public CheckpointVisitor {
 public:
  CheckpointDumper(const DumpOptions& options, const DumpLineFn& out) : options_(options), out_(out) {}

  Status VisitHeader(const Header& h) override {
    header_ = h;
    std::string line =
        base::StrCat("header: format ", h.version, ", graph ", wal::UuidText(h.uuid), ", sequence ",
                     h.sequence, ", vertex limit ", h.vertex_limit, ", edge limit ", h.edge_limit);
    if (h.version == 1) {
      line.append(", no log position (format 1)");
    } else if (h.wal_segment == 0) {
      line.append(", log position not known");
    } else {
      line.append(base::StrCat(", the log continues in segment ", h.wal_segment, " at ", h.wal_offset));
    }
    Line(1, line);
    return Status::Ok();
  }

  Status VisitBlock(const ScannedBlock& b) override {
    base::ByteReader r(b.body);
    bool ok = false;
    switch (b.kind) {
      case BlockKind::kLabels: ok = Names(b, r, "labels", "label", &labels_); break;
      case BlockKind::kEdgeTypes: ok = Names(b, r, "edge types", "type", &types_); break;
      case BlockKind::kPropertyKeys: ok = Names(b, r, "property keys", "key", &keys_); break;
      case BlockKind::kIndexDefinitions:
        // ReadIndexDef's Corruption says what failed; the scan says where.
        QUIVER_RETURN_IF_ERROR(IndexDefinitions(b, r));
        ok = true;
        break;
      case BlockKind::kVertices: ok = Elements(b, r, /*edges=*/false); break;
      case BlockKind::kEdges: ok = Elements(b, r, /*edges=*/true); break;
      case BlockKind::kIndexEntries: ok = IndexEntries(b, r); break;
      case BlockKind::kEnd: ok = End(b, r); break;
    }
    // A value this file's version cannot hold: CheckValueVersion's
    // Corruption says what; the scan says where.
    if (!value_error_.ok()) return std::exchange(value_error_, Status::Ok());
    if (!ok) return Bad(b, "its payload does not decode");
    if (r.remaining() != 0) return Bad(b, "trailing bytes in block");
    return Status::Ok();
  }

  // After the scan: the trailer, or where and why reading stopped.
  Status Finish(Status s, std::uint64_t bad_offset, std::uint64_t file_bytes) {
    if (!s.ok()) {
      Line(1, s.code() == StatusCode::kCorruption
                  ? base::StrCat("! stopped at offset ", bad_offset, ": ", base::OneLine(s.message()))
                  : base::StrCat("! ", base::OneLine(s.message())));
      return s;
    }
    if (header_.trailer_bytes != 0)
      Line(1, base::StrCat("trailer at ", file_bytes - header_.trailer_bytes,
                           ": the file's crc over the header and every block's crc matches"));
    return s;
  }

 private:
  static Status Bad(const ScannedBlock& b, std::string_view why) {
    return CorruptionError(base::StrCat("checkpoint: block at offset ", b.offset, ": ", why));
  }

  void BlockLine(const ScannedBlock& b, std::string_view what, std::string_view detail) const {
    Line(1, base::StrCat("block at ", b.offset, ": ", what, ", ", detail, ", ", b.length, " bytes, crc ok"));
  }

  bool Names(const ScannedBlock& b, base::ByteReader& r, std::string_view what, std::string_view one,
             std::vector<std::string>* table) {
    BlockLine(b, what, Ids(b.first_id, b.count));
    for (std::uint64_t i = 0; i < b.count; ++i) {
      std::string_view name;
      if (!r.GetString(&name)) return false;
      table->emplace_back(name);
      std::string line = base::StrCat(one, " ", b.first_id + i, ": ");
      base::AppendName(line, name);
      Line(2, line);
    }
    return true;
  }

  Status IndexDefinitions(const ScannedBlock& b, base::ByteReader& r) {
    BlockLine(b, "index definitions", Plural(b.count, "definition", "definitions"));
    IndexDefRecord def;
    for (std::uint64_t i = 0; i < b.count; ++i) {
      QUIVER_RETURN_IF_ERROR(ReadIndexDef(r, header_.version, &def));
      IndexSpec spec{.name = std::string(def.name),
                     .element = def.element,
                     .label = Name(def.element == ElementKind::kEdge ? types_ : labels_, def.label_id),
                     .kind = def.kind,
                     .type = def.type};
      for (std::uint64_t key : def.key_ids) spec.keys.push_back(Name(keys_, key));
      std::string line = "index ";
      base::AppendIndexSpec(line, spec);
      line.append(
          base::StrCat("; declared at sequence ", def.declared, ", ", def.ready ? "ready" : "building"));
      Line(2, line);
      const std::int32_t width = index::KeyWidthFor(spec);
      indexes_.push_back(IndexShape{spec.name, spec.element, width == 8 ? def.type : std::nullopt});
    }
    return Status::Ok();
  }

  // An index entries block (format 5 on): index:varint, then the entries.
  bool IndexEntries(const ScannedBlock& b, base::ByteReader& r) {
    std::uint64_t position;
    if (!r.GetVarint(&position)) return false;
    const bool known = position < indexes_.size();
    const std::string name = known ? base::Quoted(indexes_[position].name) : base::StrCat("#", position);
    BlockLine(b, base::StrCat("index entries of ", name),
              base::StrCat(Plural(b.count, "entry", "entries"), " from ", b.first_id));
    if (!known) return false;
    const IndexShape& shape = indexes_[position];
    const char* element = shape.element == ElementKind::kEdge ? "e" : "v";
    std::span<const std::byte> keys, ids;
    if (shape.fixed_type) {  // all keys, then all ids
      if (b.count > r.remaining() / 14 || !r.GetSpan(b.count * 8, &keys) || !r.GetSpan(b.count * 6, &ids))
        return false;
    }
    std::uint64_t hidden = 0;
    for (std::uint64_t i = 0; i < b.count; ++i) {
      std::string_view key;
      std::span<const std::byte> id_bytes;
      if (shape.fixed_type) {
        key = std::string_view(reinterpret_cast<const char*>(keys.data()) + i * 8, 8);
        id_bytes = ids.subspan(i * 6, 6);
      } else if (!r.GetString(&key) || !r.GetSpan(6, &id_bytes)) {
        return false;
      }
      const std::uint64_t id = base::Load48(reinterpret_cast<const unsigned char*>(id_bytes.data()));
      if (!options_.values) continue;
      if (options_.max_records != 0 && shown_ >= options_.max_records) {
        ++hidden;
        continue;
      }
      ++shown_;
      std::string line = base::StrCat(element, id, " key ");
      if (shape.fixed_type) {
        base::AppendValueText(line, index::DecodeFixedKey(key, *shape.fixed_type));
      } else {
        AppendKeyText(line, key);
      }
      Line(2, line);
    }
    if (hidden > 0) Line(2, base::StrCat("... ", Plural(hidden, "more entry", "more entries")));
    return true;
  }

  // A variable-width key: its decoded values, or its bytes in hex if it is
  // not a sequence of encoded values (an edge-endpoint key).
  static void AppendKeyText(std::string& line, std::string_view key) {
    std::string_view rest = key;
    std::string values;
    PropertyValue v;
    while (!rest.empty() && index::DecodeKey(&rest, &v)) {
      if (!values.empty()) values.append(", ");
      base::AppendValueText(values, v);
    }
    if (rest.empty() && !values.empty()) {
      line.append(values);
      return;
    }
    line.append("0x");
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned char c : key) {
      line.push_back(kHex[c >> 4]);
      line.push_back(kHex[c & 15]);
    }
  }

  // A vertices or edges block: VertexEntry or EdgeEntry{count}.
  bool Elements(const ScannedBlock& b, base::ByteReader& r, bool edges) {
    BlockLine(b, edges ? "edges" : "vertices", Ids(b.first_id, b.count));
    std::uint64_t hidden = 0;
    for (std::uint64_t i = 0; i < b.count; ++i) {
      std::string line = base::StrCat(edges ? "e" : "v", b.first_id + i);
      std::uint8_t live;
      if (!r.GetU8(&live) || live > 1) return false;
      if (live == 0) {
        line.append(" removed");
      } else if (!(edges ? EdgeFields(r, line) : VertexFields(r, line)) || !Props(r, line)) {
        return false;
      }
      // Past max_records, read and checked like the rest, not printed.
      if (options_.values && (options_.max_records == 0 || shown_ < options_.max_records)) {
        ++shown_;
        Line(2, line);
      } else if (options_.values) {
        ++hidden;
      }
    }
    if (hidden > 0)
      Line(2, base::StrCat("... ", edges ? Plural(hidden, "more edge", "more edges")
                                         : Plural(hidden, "more vertex", "more vertices")));
    return true;
  }

  bool VertexFields(base::ByteReader& r, std::string& line) const {
    std::uint64_t label;
    if (!r.GetVarint(&label)) return false;
    line.append(" :");
    base::AppendName(line, Name(labels_, label));
    return true;
  }

  bool EdgeFields(base::ByteReader& r, std::string& line) const {
    std::uint64_t type, source, target;
    if (!r.GetVarint(&type) || !r.GetVarint(&source) || !r.GetVarint(&target)) return false;
    line.append(" :");
    base::AppendName(line, Name(types_, type));
    line.append(base::StrCat(" v", source, " -> v", target));
    return true;
  }

  // Props := count:varint (key_id:varint Value){count}
  bool Props(base::ByteReader& r, std::string& line) {
    std::uint64_t n;
    if (!r.GetVarint(&n) || n > r.remaining()) return false;
    if (n == 0) return true;
    line.append(" {");
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t key;
      PropertyValue value;
      if (!r.GetVarint(&key) || !wal::DecodeValue(r, &value)) return false;
      value_error_ = CheckValueVersion(value, Name(keys_, key), header_.version);
      if (!value_error_.ok()) return false;
      if (i > 0) line.append(", ");
      base::AppendName(line, Name(keys_, key));
      line.append(": ");
      base::AppendValueText(line, value);
    }
    line.push_back('}');
    return true;
  }

  bool End(const ScannedBlock& b, base::ByteReader& r) const {
    std::uint64_t live_vertices, live_edges, before;
    if (!r.GetVarint(&live_vertices) || !r.GetVarint(&live_edges) || !r.GetVarint(&before)) return false;
    Line(1, base::StrCat("block at ", b.offset, ": end, ", b.length,
                         " bytes, crc ok: ", Plural(live_vertices, "live vertex", "live vertices"), ", ",
                         Plural(live_edges, "live edge", "live edges"), ", ",
                         Plural(before, "block", "blocks"), " before it"));
    return true;
  }

  // The name of `id` in `table`, or "#<id>" if no names block defined it.
  static std::string Name(const std::vector<std::string>& table, std::uint64_t id) {
    return id < table.size() ? table[id] : base::StrCat("#", id);
  }

  void Line(int depth, std::string_view text) const {
    std::string line(static_cast<std::size_t>(depth) * 2, ' ');
    line.append(text);
    out_(line);
  }

  const DumpOptions& options_;
  const DumpLineFn& out_;
  Header header_;
  std::vector<std::string> labels_, types_, keys_;
  // The definitions block's indexes, in order: name, element, and the
  // value type of a fixed-width (8-byte) key, else none.
  struct IndexShape {
    std::string name;
    ElementKind element;
    std::optional<ValueType> fixed_type;
  };
  std::vector<IndexShape> indexes_;
  std::uint64_t shown_ = 0;  // elements and entries printed (max_records)
  Status value_error_;       // set by Props, returned by VisitBlock
};

}  // namespace

Status DumpCheckpoint(const env::ReadableFile& file, const DumpOptions& options, const DumpLineFn& out) {
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file.Size());
  CheckpointDumper dumper(options, out);
  std::uint64_t bad_offset = 0;
  Status s = ScanCheckpointFile(file, dumper, &bad_offset);
  return dumper.Finish(std::move(s), bad_offset, size);
}

}  // namespace quiver::checkpoint
