// Golden files of the durable formats (RELIABILITY.md 2.15, 3.6): a small WAL
// segment and a checkpoint of a fixed graph with a fixed UUID, committed in
// tests/golden/, in this build's format versions (WAL 5, checkpoint 4) and
// in older versions (*-v1.* to *-v4.*, which this build must still read); a
// WAL segment and a checkpoint that hold index definitions (version 2 on); a
// WAL segment and a checkpoint that hold an edge-endpoint constraint (index
// kind 3: WAL version 4, checkpoint version 3 on); and a WAL segment and a
// checkpoint that hold string lists (value type 7: WAL version 5,
// checkpoint version 4 on). The tests
//  - re-encode the same graph through the real writers and compare the bytes
//    with the golden files byte for byte (a format drift detector);
//  - decode the golden files (ScanSegment + DecodeGroup, LoadCheckpoint) and
//    check what they hold against literal expectations, and open them end to
//    end;
//  - check that the hex dumps in docs/wal_format.md and
//    docs/checkpoint_format.md are the golden bytes.
//
// Regenerate after a deliberate format change (and bump the format version):
//   QUIVER_REGENERATE_GOLDEN=1 build/dev/tests/quiver_tests --gtest_filter='GoldenFormatTest.*'
// writes tests/golden/* and prints the annotated dumps for the docs.
#include <gtest/gtest.h>

#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "dump.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"
#include "wal/wal_reader.h"

namespace quiver {
namespace {

using format_test::AsBytes;
using format_test::kFixedUuid;

const std::filesystem::path kSourceDir = std::filesystem::path(QUIVER_TESTS_SOURCE_DIR).parent_path();
const std::filesystem::path kGoldenDir = kSourceDir / "tests" / "golden";
constexpr const char* kWalGolden = "wal-small.log";
constexpr const char* kCheckpointGolden = "checkpoint-small.qck";
// The same graph in format version 1, as the last build of that version wrote it.
constexpr const char* kWalGoldenV1 = "wal-small-v1.log";
// The same graph and the index lifecycle in WAL format version 2 (records
// 8-byte aligned, no page padding), as the last version 2 build wrote them.
constexpr const char* kWalGoldenV2 = "wal-small-v2.log";
constexpr const char* kWalIndexesV2 = "wal-indexes-v2.log";
constexpr const char* kCheckpointGoldenV1 = "checkpoint-small-v1.qck";
// Index lifecycle operations (format version 2 on).
constexpr const char* kWalIndexes = "wal-indexes.log";
constexpr const char* kCheckpointIndexes = "checkpoint-indexes.qck";
// The same graphs in WAL format 3 and checkpoint format 2, as the last
// builds of those versions wrote them (the same bytes but the version
// field and the CRCs that cover it).
constexpr const char* kWalGoldenV3 = "wal-small-v3.log";
constexpr const char* kWalIndexesV3 = "wal-indexes-v3.log";
constexpr const char* kCheckpointGoldenV2 = "checkpoint-small-v2.qck";
constexpr const char* kCheckpointIndexesV2 = "checkpoint-indexes-v2.qck";
// An edge-endpoint constraint (index kind 3): WAL format 4, checkpoint
// format 3 on.
constexpr const char* kWalEndpoints = "wal-endpoints.log";
constexpr const char* kCheckpointEndpoints = "checkpoint-endpoints.qck";
// The small, index and endpoint files in WAL format 4 and checkpoint format
// 3, as the last builds of those versions wrote them (the same bytes but the
// version field and the CRCs that cover it).
constexpr const char* kWalGoldenV4 = "wal-small-v4.log";
constexpr const char* kWalIndexesV4 = "wal-indexes-v4.log";
constexpr const char* kWalEndpointsV4 = "wal-endpoints-v4.log";
constexpr const char* kCheckpointGoldenV3 = "checkpoint-small-v3.qck";
constexpr const char* kCheckpointIndexesV3 = "checkpoint-indexes-v3.qck";
constexpr const char* kCheckpointEndpointsV3 = "checkpoint-endpoints-v3.qck";
// String lists (value type 7): WAL format 5, checkpoint format 4 on.
constexpr const char* kWalLists = "wal-lists.log";
constexpr const char* kCheckpointLists = "checkpoint-lists.qck";
// The small, index, endpoint and list checkpoints in format 4, as the last
// format 4 build wrote them: the files of format 5 but the version field and
// the CRCs that cover it, and without the index entries blocks (kind 8).
constexpr const char* kCheckpointGoldenV4 = "checkpoint-small-v4.qck";
constexpr const char* kCheckpointIndexesV4 = "checkpoint-indexes-v4.qck";
constexpr const char* kCheckpointEndpointsV4 = "checkpoint-endpoints-v4.qck";
constexpr const char* kCheckpointListsV4 = "checkpoint-lists-v4.qck";
// An ordered int64 index (checkpoint format 5 on: its entries, fixed width).
constexpr const char* kWalOrdered = "wal-ordered.log";
constexpr const char* kCheckpointOrdered = "checkpoint-ordered.qck";

bool Regenerating() {
  const char* v = std::getenv("QUIVER_REGENERATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// The golden graph: two Person vertices with a name, a KNOWS edge, one group
// each; then one group of two batches setting an int64 and a double.
format_test::LogBuilder GoldenLog() {
  format_test::LogBuilder log;
  auto one = [&log](WriteBatch b) { EXPECT_TRUE(log.AddGroup({std::move(b)}).ok()); };
  WriteBatch b1;
  b1.AddVertex("Person", {{"name", "Ada"}});
  one(b1);
  WriteBatch b2;
  b2.AddVertex("Person", {{"name", "Grace"}});
  one(b2);
  WriteBatch b3;
  b3.AddEdge("KNOWS", VertexId(0), VertexId(1));
  one(b3);
  WriteBatch b4, b5;
  b4.SetProperty(VertexId(0), "born", 1815);
  b5.SetProperty(EdgeId(0), "since", 1.5);
  EXPECT_TRUE(log.AddGroup({b4, b5}).ok());
  return log;
}

// The index lifecycle, on a graph of its own: one vertex (group 1), a
// unique index declared and made ready (2, 3), an ordered edge index
// declared and dropped (4, 5), one more vertex (6). The IndexReady batch is
// applied as recovery replays it (no contents: recovery builds them).
format_test::LogBuilder IndexesLog() {
  format_test::LogBuilder log;
  auto one = [&log](WriteBatch b) { EXPECT_TRUE(log.AddGroup({std::move(b)}).ok()); };
  using internal::WriteBatchInternal;
  WriteBatch b1;
  b1.AddVertex("Person", {{"name", "Ada"}});
  one(b1);
  IndexOp define;
  define.spec = {.name = "person_name",
                 .label = "Person",
                 .keys = {"name"},
                 .kind = IndexKind::kUnique,
                 .type = ValueType::kString};
  one(WriteBatchInternal::IndexBatch(OpKind::kDefineIndex, define));
  IndexOp ready;
  ready.spec.name = "person_name";
  ready.declared = 2;
  one(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ready));
  IndexOp since;
  since.spec = {.name = "since",
                .element = ElementKind::kEdge,
                .label = "KNOWS",
                .keys = {"since"},
                .kind = IndexKind::kOrdered};
  one(WriteBatchInternal::IndexBatch(OpKind::kDefineIndex, since));
  IndexOp drop;
  drop.spec.name = "since";
  one(WriteBatchInternal::IndexBatch(OpKind::kDropIndex, drop));
  WriteBatch b6;
  b6.AddVertex("Person", {{"name", "Alan"}});
  one(b6);
  return log;
}

// The edge-endpoint constraint, on a graph of its own: two vertices (groups
// 1, 2), a constraint on KNOWS declared and made ready (3, 4), an edge each
// way between them (5: the reverse pair is another pair), and a property
// set on the first edge (6: what an UpsertEdge that finds it logs).
format_test::LogBuilder EndpointsLog() {
  format_test::LogBuilder log;
  auto one = [&log](WriteBatch b) { EXPECT_TRUE(log.AddGroup({std::move(b)}).ok()); };
  using internal::WriteBatchInternal;
  WriteBatch b1;
  b1.AddVertex("Person", {{"name", "Ada"}});
  one(b1);
  WriteBatch b2;
  b2.AddVertex("Person", {{"name", "Grace"}});
  one(b2);
  IndexOp define;
  define.spec = {.name = "knows_once",
                 .element = ElementKind::kEdge,
                 .label = "KNOWS",
                 .kind = IndexKind::kUniqueEndpoints};
  one(WriteBatchInternal::IndexBatch(OpKind::kDefineIndex, define));
  IndexOp ready;
  ready.spec.name = "knows_once";
  ready.declared = 3;
  one(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ready));
  WriteBatch b5;
  b5.AddEdge("KNOWS", VertexId(0), VertexId(1));
  b5.AddEdge("KNOWS", VertexId(1), VertexId(0));
  one(b5);
  WriteBatch b6;
  b6.SetProperty(EdgeId(0), "since", 1.5);
  one(b6);
  return log;
}

// An ordered int64 index, on a graph of its own (checkpoint format 5 on:
// its index entries block shows the fixed-width layout, all keys then all
// ids): three vertices (group 1), the index declared and made ready (2, 3),
// one more vertex (4) whose key sorts between two others.
format_test::LogBuilder OrderedLog() {
  format_test::LogBuilder log;
  auto one = [&log](WriteBatch b) { EXPECT_TRUE(log.AddGroup({std::move(b)}).ok()); };
  using internal::WriteBatchInternal;
  WriteBatch b1;
  b1.AddVertex("Person", {{"born", 1815}});
  b1.AddVertex("Person", {{"born", 1906}});
  b1.AddVertex("Person", {{"born", -384}});
  one(b1);
  IndexOp define;
  define.spec = {.name = "person_born",
                 .label = "Person",
                 .keys = {"born"},
                 .kind = IndexKind::kOrdered,
                 .type = ValueType::kInt64};
  one(WriteBatchInternal::IndexBatch(OpKind::kDefineIndex, define));
  IndexOp ready;
  ready.spec.name = "person_born";
  ready.declared = 2;
  one(WriteBatchInternal::IndexBatch(OpKind::kIndexReady, ready));
  WriteBatch b4;
  b4.AddVertex("Person", {{"born", 1815}});
  one(b4);
  return log;
}

// String lists, on a graph of their own: a vertex with a list of two tags
// (group 1), then an empty list and a list holding an empty string set on
// it (group 2: one batch of two operations).
format_test::LogBuilder ListsLog() {
  format_test::LogBuilder log;
  WriteBatch b1;
  b1.AddVertex("Person", {{"name", "Ada"}, {"tags", StringList{"math", "poet"}}});
  EXPECT_TRUE(log.AddGroup({b1}).ok());
  WriteBatch b2;
  b2.SetProperty(VertexId(0), "aliases", StringList{});
  b2.SetProperty(VertexId(0), "notes", StringList{""});
  EXPECT_TRUE(log.AddGroup({b2}).ok());
  return log;
}

struct GoldenBytes {
  std::string wal;
  std::string checkpoint;
};

// Encodes the golden graph through WalWriter and WriteCheckpoint.
GoldenBytes EncodeGolden(const format_test::LogBuilder& log) {
  env::SimFileSystem fs;
  GoldenBytes out;
  out.wal = format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, log.groups()).value();
  out.checkpoint = format_test::WriteCheckpointFile(fs, "/db", kFixedUuid).value();
  return out;
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

// --- Annotated hex dumps (docs/*_format.md): a second, independent reading of
// the grammars in wal/wal_format.h, wal/batch_codec.h and
// checkpoint/checkpoint_format.h.

class Annotator {
 public:
  explicit Annotator(std::span<const std::byte> bytes) : b_(bytes) {}

  std::size_t pos() const { return pos_; }
  bool done() const { return pos_ >= b_.size(); }
  const std::string& text() const { return text_; }

  // Appends `s` to the note of the last line.
  void Suffix(const std::string& s) { text_.insert(text_.size() - 1, s); }

  void Heading(const std::string& s) { text_ += "                                   -- " + s + "\n"; }

  // The next n bytes as one field, eight bytes per line.
  void Field(std::size_t n, const std::string& note) {
    n = std::min(n, b_.size() - pos_);
    for (std::size_t line = 0; line == 0 || line < n; line += 8) {
      char offset[24];
      std::snprintf(offset, sizeof offset, "%04zx  ", pos_ + line);
      std::string hex;
      for (std::size_t i = line; i < std::min(n, line + 8); ++i) {
        char h[16];
        std::snprintf(h, sizeof h, "%02x ", static_cast<unsigned>(b_[pos_ + i]));
        hex += h;
      }
      hex.resize(8 * 3 + 3, ' ');
      std::string out = offset + hex + (line == 0 ? note : std::string());
      out.erase(out.find_last_not_of(' ') + 1);
      text_ += out + "\n";
    }
    pos_ += n;
  }

  // The next n bytes, all zero, as one line "0000  00 * n  note" (a padding
  // record's payload; DocDumpBytes reads it back).
  void Zeros(std::size_t n, const std::string& note) {
    char line[64];
    std::snprintf(line, sizeof line, "%04zx  00 * %zu", pos_, n);
    std::string out = line;
    out.resize(6 + 8 * 3 + 3, ' ');
    text_ += out + note + "\n";
    pos_ += n;
  }

  template <typename T>
  T Fixed(const std::string& name, bool show_hex = false) {
    T v{};
    std::memcpy(&v, b_.data() + pos_, sizeof v);
    char buf[32];
    std::snprintf(buf, sizeof buf, show_hex ? "0x%08llx" : "%llu", static_cast<unsigned long long>(v));
    Field(sizeof v, name + " = " + buf);
    return v;
  }
  std::uint64_t Varint(const std::string& name) {
    base::ByteReader r(b_.subspan(pos_));
    std::uint64_t v = 0;
    r.GetVarint(&v);
    Field(r.position(), name + " = " + std::to_string(v));
    return v;
  }
  std::string Str(const std::string& name) {
    std::uint64_t n = Varint(name + " length");
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    Field(n, name + " = \"" + s + "\"");
    return s;
  }
  void Value(const std::string& name) {
    static const char* kTypes[] = {"null",   "bool",  "int64",        "double",
                                   "string", "bytes", "float vector", "string list"};
    auto type = Fixed<std::uint8_t>(name + " type");
    Suffix(std::string(" (") + (type < 8 ? kTypes[type] : "?") + ")");
    switch (static_cast<ValueType>(type)) {
      case ValueType::kNull: break;
      case ValueType::kBool: Fixed<std::uint8_t>(name); break;
      case ValueType::kInt64: {
        std::int64_t v;
        std::memcpy(&v, b_.data() + pos_, 8);
        Field(8, name + " = " + std::to_string(v));
        break;
      }
      case ValueType::kDouble: {
        double v;
        std::memcpy(&v, b_.data() + pos_, 8);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        Field(8, name + " = " + buf + " (IEEE 754 bits)");
        break;
      }
      case ValueType::kString: Str(name); break;
      case ValueType::kBytes: Field(Varint(name + " length"), name); break;
      case ValueType::kFloatVector: Field(4 * Varint(name + " count"), name + " (f32 each)"); break;
      case ValueType::kStringList: {
        const std::uint64_t n = Varint(name + " count");
        for (std::uint64_t i = 0; i < n; ++i) Str("  " + name + "[" + std::to_string(i) + "]");
        break;
      }
    }
  }

 private:
  std::span<const std::byte> b_;
  std::size_t pos_ = 0;
  std::string text_;
};

std::string RefText(std::uint64_t raw, const char* what) {
  return (raw & 1) ? std::string("batch-local ") + what + " #" + std::to_string(raw >> 1)
                   : std::string("committed ") + what + " " + std::to_string(raw >> 1);
}

void AnnotateGroup(Annotator& a) {
  std::uint64_t batches = a.Varint("batch_count");
  for (std::uint64_t i = 0; i < batches; ++i) {
    a.Fixed<std::uint64_t>("  sequence");
    a.Varint("  first_vertex");
    a.Varint("  first_edge");
    std::uint64_t ops = a.Varint("  op_count");
    for (std::uint64_t k = 0; k < ops; ++k) {
      auto kind = a.Fixed<std::uint8_t>("    op kind");
      static const char* kOps[] = {"?",
                                   "AddVertex",
                                   "AddEdge",
                                   "SetVertexProperty",
                                   "SetEdgeProperty",
                                   "RemoveVertexProperty",
                                   "RemoveEdgeProperty",
                                   "RemoveEdge",
                                   "RemoveVertex",
                                   "DefineIndex",
                                   "IndexReady",
                                   "DropIndex"};
      a.Suffix(std::string(" (") + (kind <= 11 ? kOps[kind] : "?") + ")");
      auto props = [&a] {
        std::uint64_t n = a.Varint("    property count");
        for (std::uint64_t p = 0; p < n; ++p) {
          a.Str("      key");
          a.Value("      value");
        }
      };
      auto ref = [&a](const char* what, const char* element) {
        std::uint64_t raw = a.Varint(std::string("    ") + what + " ref");
        a.Suffix(" (" + RefText(raw, element) + ")");
      };
      switch (kind) {
        case 1:
          a.Str("    label");
          props();
          break;
        case 2:
          a.Str("    type");
          ref("source", "vertex");
          ref("target", "vertex");
          props();
          break;
        case 3:
        case 4:
          ref(kind == 3 ? "vertex" : "edge", kind == 3 ? "vertex" : "edge");
          a.Str("    key");
          a.Value("    value");
          break;
        case 5:
        case 6:
          ref(kind == 5 ? "vertex" : "edge", kind == 5 ? "vertex" : "edge");
          a.Str("    key");
          break;
        case 7: ref("edge", "edge"); break;
        case 8: ref("vertex", "vertex"); break;
        case 9: {
          a.Str("    index name");
          a.Fixed<std::uint8_t>("    element");
          a.Suffix(" (0 vertices, 1 edges)");
          a.Str("    label");
          a.Fixed<std::uint8_t>("    kind");
          a.Suffix(" (0 exact, 1 unique, 2 ordered, 3 edge endpoints)");
          auto type = a.Fixed<std::uint8_t>("    type");
          a.Suffix(type == 0xFF ? " (any)" : " (a ValueType)");
          std::uint64_t keys = a.Varint("    key count");
          for (std::uint64_t j = 0; j < keys; ++j) a.Str("      key");
          break;
        }
        case 10:
        case 11:
          a.Str("    index name");
          a.Varint("    declared");
          a.Suffix(kind == 10 ? " (sequence of its DefineIndex)" : " (0: whichever has the name)");
          break;
        default: return;
      }
    }
  }
}

std::string AnnotateWal(std::span<const std::byte> seg) {
  Annotator a(seg);
  a.Heading("segment header (64 bytes)");
  a.Field(8, "magic \"QVRWAL01\"");
  a.Fixed<std::uint32_t>("format_version");
  a.Fixed<std::uint32_t>("header_bytes");
  a.Field(16, "graph_uuid 0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0");
  a.Fixed<std::uint64_t>("segment_number");
  a.Fixed<std::uint64_t>("first_sequence");
  a.Field(8, "reserved (zero)");
  a.Fixed<std::uint32_t>("crc = CRC-32C of bytes 0x00..0x37", true);
  a.Field(4, "reserved (zero)");
  while (!a.done()) {
    std::size_t start = a.pos();
    auto h = wal::ParseRecordHeader(seg.subspan(start));
    const bool padding = h->type == wal::RecordType::kPadding;
    a.Heading(std::string(padding ? "padding record at 0x" : "record at 0x") +
              [&] {
                char b[24];
                std::snprintf(b, sizeof b, "%04zx", start);
                return std::string(b);
              }() +
              (padding && start == wal::kSegmentHeaderBytes ? ": after the header"
                                                            : ": group " + std::to_string(h->first_sequence) +
                                                                  ".." + std::to_string(h->last_sequence)));
    a.Fixed<std::uint32_t>("crc = CRC-32C of header bytes 4..31 + payload", true);
    a.Fixed<std::uint32_t>("length (payload bytes)");
    a.Fixed<std::uint8_t>("type");
    a.Suffix(" (1 full, 2 first, 3 middle, 4 last, 5 padding)");
    a.Field(7, "reserved (zero)");
    a.Fixed<std::uint64_t>("first_sequence");
    a.Fixed<std::uint64_t>("last_sequence");
    if (padding) {
      char to[32];
      std::snprintf(to, sizeof to, "0x%04zx", a.pos() + h->length);
      a.Zeros(h->length, std::string("payload: zeros up to the page boundary ") + to);
      continue;
    }
    AnnotateGroup(a);
    std::size_t pad = wal::PaddedLength(h->length) - h->length;
    if (pad > 0) a.Field(pad, "padding to a multiple of 8 (zero)");
  }
  return a.text();
}

std::string AnnotateCheckpoint(std::span<const std::byte> file) {
  Annotator a(file);
  std::uint32_t version;
  std::memcpy(&version, file.data() + 8, 4);
  a.Heading(version == 1 ? "checkpoint header (64 bytes, format 1)" : "checkpoint header (80 bytes)");
  a.Field(8, "magic \"QVRCKP01\"");
  a.Fixed<std::uint32_t>("format_version");
  a.Fixed<std::uint32_t>("header_bytes");
  a.Field(16, "graph_uuid 0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0");
  a.Fixed<std::uint64_t>("sequence");
  a.Fixed<std::uint64_t>("vertex_limit");
  a.Fixed<std::uint64_t>("edge_limit");
  if (version != 1) {
    a.Fixed<std::uint64_t>("wal_segment");
    a.Fixed<std::uint64_t>("wal_offset");
  }
  a.Field(4, "reserved (zero)");
  a.Fixed<std::uint32_t>(
      version == 1 ? "crc = CRC-32C of bytes 0x00..0x3b" : "crc = CRC-32C of bytes 0x00..0x4b", true);
  const std::size_t blocks_end = file.size() - (version == 1 ? 0 : 4);
  static const char* kKinds[] = {"?",     "labels", "edge types",        "property keys", "vertices",
                                 "edges", "end",    "index definitions", "index entries"};
  // Each definition's key width (8: one int64 or double key; else variable).
  std::vector<int> widths;
  while (a.pos() < blocks_end) {
    auto kind = static_cast<std::uint8_t>(file[a.pos()]);
    a.Heading(std::string("block: ") + (kind <= 8 ? kKinds[kind] : "?"));
    a.Fixed<std::uint8_t>("kind");
    a.Field(3, "reserved (zero)");
    a.Fixed<std::uint32_t>("length (payload bytes)");
    a.Fixed<std::uint32_t>(version == 1 ? "crc = CRC-32C of block bytes 0..7 + payload"
                                        : "crc = CRC-32C of header 0x00..0x4f + block bytes 0..7 + payload",
                           true);
    a.Field(4, "reserved (zero)");
    if (kind == 6) {
      a.Varint("live_vertices");
      a.Varint("live_edges");
      a.Varint("blocks_before");
      continue;
    }
    std::uint64_t first = a.Varint("first_id");
    std::uint64_t count = a.Varint("count");
    if (kind == 8) {
      const std::uint64_t index = a.Varint("index (its definition's position)");
      const bool fixed = index < widths.size() && widths[index] == 8;
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::string id = std::to_string(first + i);
        if (fixed) {
          a.Field(8, "entry " + id + " key (order-preserving bytes)");
        } else {
          std::uint64_t n = a.Varint("entry " + id + " key length");
          a.Field(n, "  key (encoded values)");
          a.Field(6, "  id (u48)");
        }
      }
      if (fixed)
        for (std::uint64_t i = 0; i < count; ++i)
          a.Field(6, "entry " + std::to_string(first + i) + " id (u48)");
      continue;
    }
    auto props = [&a] {
      std::uint64_t n = a.Varint("  property count");
      for (std::uint64_t p = 0; p < n; ++p) {
        a.Varint("    key_id");
        a.Value("    value");
      }
    };
    for (std::uint64_t i = 0; i < count; ++i) {
      std::string id = std::to_string(first + i);
      if (kind == 7) {
        a.Str("index " + id + " name");
        a.Fixed<std::uint8_t>("  element");
        a.Suffix(" (0 vertices, 1 edges)");
        a.Varint("  label_id");
        a.Fixed<std::uint8_t>("  kind");
        a.Suffix(" (0 exact, 1 unique, 2 ordered, 3 edge endpoints)");
        auto type = a.Fixed<std::uint8_t>("  type");
        a.Suffix(type == 0xFF ? " (any)" : " (a ValueType)");
        std::uint64_t keys = a.Varint("  key count");
        widths.push_back(keys == 1 && (type == 2 || type == 3) ? 8 : -1);
        for (std::uint64_t k = 0; k < keys; ++k) a.Varint("    key_id");
        a.Varint("  declared");
        a.Fixed<std::uint8_t>("  state");
        a.Suffix(" (0 building, 1 ready)");
        continue;
      }
      if (kind <= 3) {
        a.Str("name " + id);
        continue;
      }
      if (a.Fixed<std::uint8_t>((kind == 4 ? "vertex " : "edge ") + id + " live") == 0) continue;
      if (kind == 4) {
        a.Varint("  label_id");
      } else {
        a.Varint("  type_id");
        a.Varint("  source");
        a.Varint("  target");
      }
      props();
    }
  }
  if (!a.done()) {
    a.Heading("trailer");
    a.Fixed<std::uint32_t>("file_crc = CRC-32C of header 0x00..0x4f + every block's crc", true);
  }
  return a.text();
}

// The bytes of the hex dump between "<!-- golden: NAME -->" and
// "<!-- /golden -->" in a doc: the two-space-separated hex column of every
// line that starts with a 4-digit offset.
std::string DocDumpBytes(const std::string& doc, const std::string& name) {
  std::string begin = "<!-- golden: " + name + " -->";
  std::size_t from = doc.find(begin);
  std::size_t to = doc.find("<!-- /golden -->", from);
  if (from == std::string::npos || to == std::string::npos) return "<no dump of " + name + ">";
  std::istringstream lines(doc.substr(from, to - from));
  std::string line, out;
  while (std::getline(lines, line)) {
    if (line.size() < 8 || line.substr(4, 2) != "  " || !std::isxdigit(static_cast<unsigned char>(line[0])))
      continue;
    if (line.compare(6, 5, "00 * ") == 0) {  // Annotator::Zeros
      out.append(std::stoul(line.substr(11)), '\0');
      continue;
    }
    for (std::size_t i = 6; i + 2 <= line.size() && i < 6 + 8 * 3; i += 3) {
      if (line[i] == ' ') break;
      out.push_back(static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16)));
    }
  }
  return out;
}

// --- Tests

// The v1, v2 and v3 small files hold the same graph: these decode to it.
const char kSmallDecoded[] =
    "group 1..1\n"
    "batch seq=1 first_vertex=0 first_edge=0\n"
    "  AddVertex Person {name=s:416461;}\n"
    "group 2..2\n"
    "batch seq=2 first_vertex=1 first_edge=0\n"
    "  AddVertex Person {name=s:4772616365;}\n"
    "group 3..3\n"
    "batch seq=3 first_vertex=2 first_edge=0\n"
    "  AddEdge KNOWS v0->v1 {}\n"
    "group 4..5\n"
    "batch seq=4 first_vertex=2 first_edge=1\n"
    "  SetProperty v0 {born=i:1815;}\n"
    "batch seq=5 first_vertex=2 first_edge=1\n"
    "  SetProperty e0 {since=d:000000000000f83f;}\n";

const char kSmallLoaded[] =
    "seq=5 Vlim=2 Elim=1 V=2 E=1\n"
    "labels: Person\n"
    "types: KNOWS\n"
    "keys: name born since\n"
    "v0 Person {name=s:416461;born=i:1815;} deg=1/0\n"
    "v1 Person {name=s:4772616365;} deg=0/1\n"
    "e0 KNOWS 0->1 {since=d:000000000000f83f;}\n";

// Decodes a whole segment with format_test::RenderGroup.
std::string DecodeSegment(const std::string& bytes, wal::SegmentScan* scan) {
  std::string decoded;
  Status s = wal::ScanSegment(
      AsBytes(bytes),
      [&decoded](SequenceNumber f, SequenceNumber l, std::span<const std::byte> p) {
        decoded += format_test::RenderGroup(f, l, p);
        return Status::Ok();
      },
      scan);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return decoded;
}

TEST(GoldenFormatTest, ReencodingMatchesTheGoldenFilesByteForByte) {
  struct Set {
    format_test::LogBuilder log;
    const char* wal;
    const char* checkpoint;
  };
  Set sets[] = {{GoldenLog(), kWalGolden, kCheckpointGolden},
                {IndexesLog(), kWalIndexes, kCheckpointIndexes},
                {EndpointsLog(), kWalEndpoints, kCheckpointEndpoints},
                {ListsLog(), kWalLists, kCheckpointLists},
                {OrderedLog(), kWalOrdered, kCheckpointOrdered}};
  for (Set& set : sets) {
    SCOPED_TRACE(set.wal);
    GoldenBytes now = EncodeGolden(set.log);
    if (Regenerating()) {
      WriteFile(kGoldenDir / set.wal, now.wal);
      WriteFile(kGoldenDir / set.checkpoint, now.checkpoint);
      std::cout << "wrote " << (kGoldenDir / set.wal) << " (" << now.wal.size() << " bytes) and "
                << (kGoldenDir / set.checkpoint) << " (" << now.checkpoint.size() << " bytes)\n\n"
                << AnnotateWal(AsBytes(now.wal)) << "\n"
                << AnnotateCheckpoint(AsBytes(now.checkpoint));
    }
    ASSERT_TRUE(std::filesystem::exists(kGoldenDir / set.wal))
        << "golden files missing in " << kGoldenDir << "; set QUIVER_REGENERATE_GOLDEN=1 to write them";
    std::string wal = ReadFile(kGoldenDir / set.wal);
    std::string ckpt = ReadFile(kGoldenDir / set.checkpoint);
    // A difference here is format drift: if deliberate, bump the format
    // version, keep reading the old one, and regenerate.
    EXPECT_EQ(test_util::Hex(now.wal.data(), now.wal.size()), test_util::Hex(wal.data(), wal.size()));
    EXPECT_EQ(test_util::Hex(now.checkpoint.data(), now.checkpoint.size()),
              test_util::Hex(ckpt.data(), ckpt.size()));
  }
}

TEST(GoldenFormatTest, GoldenSegmentDecodes) {
  for (const char* name : {kWalGolden, kWalGoldenV4, kWalGoldenV3, kWalGoldenV2, kWalGoldenV1}) {
    SCOPED_TRACE(name);
    std::string wal = ReadFile(kGoldenDir / name);
    ASSERT_FALSE(wal.empty()) << kGoldenDir / name;
    wal::SegmentScan scan;
    std::string decoded = DecodeSegment(wal, &scan);
    EXPECT_TRUE(scan.header_valid);
    const std::uint32_t version = name == kWalGolden     ? 5u
                                  : name == kWalGoldenV4 ? 4u
                                  : name == kWalGoldenV3 ? 3u
                                  : name == kWalGoldenV2 ? 2u
                                                         : 1u;
    EXPECT_EQ(scan.header.format_version, version);
    // Version 3 on: the header's page and one page per group (each group
    // ends with its padding record on a page boundary); before, no padding.
    EXPECT_EQ(wal.size(), version >= 3 ? 5 * wal::kWalPageBytes : 344u);
    EXPECT_EQ(scan.padding_bytes, version >= 3 ? wal.size() - 64 - 4 * 32 - (32 + 40 + 24 + 56) : 0u)
        << "every byte is the header, a record header, a payload padded to 8, or padding";
    EXPECT_EQ(scan.header.uuid, kFixedUuid);
    EXPECT_EQ(scan.header.segment_number, 1u);
    EXPECT_EQ(scan.header.first_sequence, 1u);
    EXPECT_EQ(scan.groups, 4u);
    EXPECT_EQ(scan.last_sequence, 5u);
    EXPECT_EQ(scan.valid_end, wal.size());
    EXPECT_EQ(scan.tail_bytes, 0u);
    EXPECT_EQ(decoded, kSmallDecoded);
  }
  EXPECT_EQ(wal::SegmentFileName(1), "wal-00000000000000000001.log");
}

TEST(GoldenFormatTest, GoldenIndexSegmentDecodes) {
  for (const char* name : {kWalIndexes, kWalIndexesV4, kWalIndexesV3, kWalIndexesV2}) {
    SCOPED_TRACE(name);
    std::string wal = ReadFile(kGoldenDir / name);
    ASSERT_FALSE(wal.empty()) << kGoldenDir / name;
    wal::SegmentScan scan;
    std::string decoded = DecodeSegment(wal, &scan);
    EXPECT_EQ(scan.groups, 6u);
    EXPECT_EQ(scan.last_sequence, 6u);
    EXPECT_EQ(decoded,
              "group 1..1\n"
              "batch seq=1 first_vertex=0 first_edge=0\n"
              "  AddVertex Person {name=s:416461;}\n"
              "group 2..2\n"
              "batch seq=2 first_vertex=1 first_edge=0\n"
              "  DefineIndex person_name on Person kind=1 type=string keys=name;\n"
              "group 3..3\n"
              "batch seq=3 first_vertex=1 first_edge=0\n"
              "  IndexReady person_name declared=2\n"
              "group 4..4\n"
              "batch seq=4 first_vertex=1 first_edge=0\n"
              "  DefineIndex since on edges KNOWS kind=2 type=any keys=since;\n"
              "group 5..5\n"
              "batch seq=5 first_vertex=1 first_edge=0\n"
              "  DropIndex since declared=0\n"
              "group 6..6\n"
              "batch seq=6 first_vertex=1 first_edge=0\n"
              "  AddVertex Person {name=s:416c616e;}\n");
  }
}

TEST(GoldenFormatTest, GoldenCheckpointLoads) {
  for (const char* name : {kCheckpointGolden, kCheckpointGoldenV4, kCheckpointGoldenV3, kCheckpointGoldenV2,
                           kCheckpointGoldenV1}) {
    SCOPED_TRACE(name);
    std::string ckpt = ReadFile(kGoldenDir / name);
    ASSERT_FALSE(ckpt.empty()) << kGoldenDir / name;
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(AsBytes(ckpt), &header, &dump);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const bool v1 = std::string(name) == kCheckpointGoldenV1;
    EXPECT_EQ(header.version, v1                            ? 1u
                              : name == kCheckpointGoldenV2 ? 2u
                              : name == kCheckpointGoldenV3 ? 3u
                              : name == kCheckpointGoldenV4 ? 4u
                                                            : 5u);
    EXPECT_EQ(header.uuid, kFixedUuid);
    EXPECT_EQ(header.sequence, 5u);
    EXPECT_EQ(header.vertex_limit, 2u);
    EXPECT_EQ(header.edge_limit, 1u);
    // Format 2 on: group 6 would start at the end of the golden segment.
    EXPECT_EQ(header.wal_segment, v1 ? 0u : 1u);
    EXPECT_EQ(header.wal_offset, v1 ? 0u : ReadFile(kGoldenDir / kWalGolden).size());
    EXPECT_EQ(dump, kSmallLoaded);
  }
  EXPECT_EQ(checkpoint::CheckpointFileName(5), "checkpoint-00000000000000000005.qck");
}

TEST(GoldenFormatTest, GoldenIndexCheckpointLoadsAndBuildsItsIndex) {
  for (const char* name :
       {kCheckpointIndexes, kCheckpointIndexesV4, kCheckpointIndexesV3, kCheckpointIndexesV2}) {
    SCOPED_TRACE(name);
    std::string ckpt = ReadFile(kGoldenDir / name);
    ASSERT_FALSE(ckpt.empty()) << kGoldenDir / name;
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(AsBytes(ckpt), &header, &dump);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(header.version, name == kCheckpointIndexes     ? 5u
                              : name == kCheckpointIndexesV4 ? 4u
                              : name == kCheckpointIndexesV3 ? 3u
                                                             : 2u);
    EXPECT_EQ(header.sequence, 6u);
    EXPECT_EQ(dump,
              "seq=6 Vlim=2 Elim=0 V=2 E=0\n"
              "labels: Person\n"
              "types: KNOWS\n"
              "keys: name since\n"
              "v0 Person {name=s:416461;} deg=0/0\n"
              "v1 Person {name=s:416c616e;} deg=0/0\n"
              "index person_name vertices Person keys=name; kind=1 type=string declared=2 ready entries=2\n");
  }
}

TEST(GoldenFormatTest, GoldenEndpointSegmentDecodes) {
  for (auto [name, version] : {std::pair{kWalEndpoints, 5u}, {kWalEndpointsV4, 4u}}) {
    SCOPED_TRACE(name);
    std::string wal = ReadFile(kGoldenDir / name);
    ASSERT_FALSE(wal.empty()) << kGoldenDir / name;
    wal::SegmentScan scan;
    std::string decoded = DecodeSegment(wal, &scan);
    EXPECT_EQ(scan.header.format_version, version);
    EXPECT_EQ(scan.groups, 6u);
    EXPECT_EQ(scan.last_sequence, 6u);
    EXPECT_EQ(decoded,
              "group 1..1\n"
              "batch seq=1 first_vertex=0 first_edge=0\n"
              "  AddVertex Person {name=s:416461;}\n"
              "group 2..2\n"
              "batch seq=2 first_vertex=1 first_edge=0\n"
              "  AddVertex Person {name=s:4772616365;}\n"
              "group 3..3\n"
              "batch seq=3 first_vertex=2 first_edge=0\n"
              "  DefineIndex knows_once on edges KNOWS kind=3 type=any keys=\n"
              "group 4..4\n"
              "batch seq=4 first_vertex=2 first_edge=0\n"
              "  IndexReady knows_once declared=3\n"
              "group 5..5\n"
              "batch seq=5 first_vertex=2 first_edge=0\n"
              "  AddEdge KNOWS v0->v1 {}\n"
              "  AddEdge KNOWS v1->v0 {}\n"
              "group 6..6\n"
              "batch seq=6 first_vertex=2 first_edge=2\n"
              "  SetProperty e0 {since=d:000000000000f83f;}\n");
  }
}

TEST(GoldenFormatTest, GoldenEndpointCheckpointLoadsAndBuildsItsConstraint) {
  for (auto [name, version] :
       {std::pair{kCheckpointEndpoints, 5u}, {kCheckpointEndpointsV4, 4u}, {kCheckpointEndpointsV3, 3u}}) {
    SCOPED_TRACE(name);
    std::string ckpt = ReadFile(kGoldenDir / name);
    ASSERT_FALSE(ckpt.empty()) << kGoldenDir / name;
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(AsBytes(ckpt), &header, &dump);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(header.version, version);
    EXPECT_EQ(header.sequence, 6u);
    EXPECT_EQ(dump,
              "seq=6 Vlim=2 Elim=2 V=2 E=2\n"
              "labels: Person\n"
              "types: KNOWS\n"
              "keys: name since\n"
              "v0 Person {name=s:416461;} deg=1/1\n"
              "v1 Person {name=s:4772616365;} deg=1/1\n"
              "e0 KNOWS 0->1 {since=d:000000000000f83f;}\n"
              "e1 KNOWS 1->0 {}\n"
              "index knows_once edges KNOWS keys= kind=3 type=any declared=3 ready entries=2\n");
  }
}

TEST(GoldenFormatTest, GoldenListSegmentDecodes) {
  std::string wal = ReadFile(kGoldenDir / kWalLists);
  ASSERT_FALSE(wal.empty()) << kGoldenDir / kWalLists;
  wal::SegmentScan scan;
  std::string decoded = DecodeSegment(wal, &scan);
  EXPECT_EQ(scan.header.format_version, 5u);
  EXPECT_EQ(scan.groups, 2u);
  EXPECT_EQ(scan.last_sequence, 2u);
  // "l<count>:" then each element's hex (test_util::Render).
  EXPECT_EQ(decoded,
            "group 1..1\n"
            "batch seq=1 first_vertex=0 first_edge=0\n"
            "  AddVertex Person {name=s:416461;tags=l2:6d617468,706f6574,;}\n"
            "group 2..2\n"
            "batch seq=2 first_vertex=1 first_edge=0\n"
            "  SetProperty v0 {aliases=l0:;}\n"
            "  SetProperty v0 {notes=l1:,;}\n");
}

TEST(GoldenFormatTest, GoldenListCheckpointLoads) {
  for (auto [name, version] : {std::pair{kCheckpointLists, 5u}, {kCheckpointListsV4, 4u}}) {
    SCOPED_TRACE(name);
    std::string ckpt = ReadFile(kGoldenDir / name);
    ASSERT_FALSE(ckpt.empty()) << kGoldenDir / name;
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(AsBytes(ckpt), &header, &dump);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(header.version, version);
    EXPECT_EQ(header.sequence, 2u);
    EXPECT_EQ(dump,
              "seq=2 Vlim=1 Elim=0 V=1 E=0\n"
              "labels: Person\n"
              "types:\n"
              "keys: name tags aliases notes\n"
              "v0 Person {name=s:416461;tags=l2:6d617468,706f6574,;aliases=l0:;notes=l1:,;} deg=0/0\n");
  }
}

// The list files open to the graph the log built, from the WAL, the
// checkpoint and both, and the lists read back through the public API.
TEST(GoldenFormatTest, GoldenListFilesOpen) {
  const std::string wal = ReadFile(kGoldenDir / kWalLists);
  const std::string ckpt = ReadFile(kGoldenDir / kCheckpointLists);
  const std::string expected = ListsLog().states()[2];
  Options o;
  o.durable.checkpoint_on_close = false;
  for (int which = 1; which <= 3; ++which) {
    SCOPED_TRACE(which);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/db").ok());
    if (which & 1) {
      ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), wal).ok());
    }
    if (which & 2) {
      ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(2), ckpt).ok());
    }
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    Snapshot snap = (*g)->GetSnapshot();
    EXPECT_EQ(test_util::Dump(snap), expected);
    const std::optional<PropertyView> tags = snap.GetProperty(VertexId(0), "tags");
    ASSERT_TRUE(tags.has_value());
    ASSERT_TRUE(tags->as_string_list().has_value());
    EXPECT_EQ(tags->as_string_list()->ToList(), (StringList{"math", "poet"}));
    EXPECT_EQ(snap.GetProperty(VertexId(0), "aliases")->as_string_list()->size(), 0u);
    EXPECT_EQ(snap.GetProperty(VertexId(0), "notes")->as_string_list()->ToList(), StringList{""});
  }
}

// Recovery opens the golden files as a database: WAL alone, checkpoint alone,
// and both (the checkpoint covers the whole log), in both format versions.
TEST(GoldenFormatTest, GoldenFilesOpenEndToEnd) {
  format_test::LogBuilder log = GoldenLog();
  const std::string expected = log.states()[5];
  // Each format with its era's checkpoint, and the mixes an upgrade leaves:
  // an older checkpoint beside a log whose segment is of a later format.
  for (auto [wal_name, ckpt_name] : {std::pair{kWalGolden, kCheckpointGolden},
                                     {kWalGolden, kCheckpointGoldenV4},
                                     {kWalGoldenV4, kCheckpointGoldenV3},
                                     {kWalGoldenV3, kCheckpointGoldenV2},
                                     {kWalGoldenV1, kCheckpointGoldenV1},
                                     {kWalGoldenV2, kCheckpointGoldenV1},
                                     {kWalGoldenV3, kCheckpointGoldenV1},
                                     {kWalGolden, kCheckpointGoldenV3},
                                     {kWalGoldenV4, kCheckpointGolden},
                                     {kWalGolden, kCheckpointGoldenV2},
                                     {kWalGolden, kCheckpointGoldenV1}}) {
    std::string wal = ReadFile(kGoldenDir / wal_name);
    std::string ckpt = ReadFile(kGoldenDir / ckpt_name);
    Options o;
    o.durable.checkpoint_on_close = false;
    for (int which = 1; which <= 3; ++which) {
      SCOPED_TRACE(std::string(wal_name) + ", " + ckpt_name + " " + std::to_string(which));
      env::SimFileSystem fs;
      ASSERT_TRUE(fs.CreateDir("/db").ok());
      if (which & 1) {
        ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), wal).ok());
      }
      if (which & 2) {
        ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(5), ckpt).ok());
      }
      auto g = GraphImpl::OpenDurable(o, "/db", &fs);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), expected);
      EXPECT_EQ((*g)->GetSnapshot().CountVertices(*(*g)->GetSnapshot().FindLabel("Person")), 2u);
      EXPECT_EQ((*g)->GetOpenStats().checkpoint_sequence, (which & 2) ? 5u : 0u);
      EXPECT_EQ((*g)->GetOpenStats().wal_batches_replayed, which == 1 ? 5u : 0u);
    }
  }
}

// The index files open with their index built and answering, from the WAL
// (replayed: the IndexReady batch builds nothing until the log's end) and
// from the checkpoint (definitions only: the loader builds the contents).
TEST(GoldenFormatTest, GoldenIndexFilesOpenWithTheirIndex) {
  for (auto [wal_name, ckpt_name] : {std::pair{kWalIndexes, kCheckpointIndexes},
                                     {kWalIndexes, kCheckpointIndexesV4},
                                     {kWalIndexesV4, kCheckpointIndexesV3},
                                     {kWalIndexesV3, kCheckpointIndexesV2},
                                     {kWalIndexesV2, kCheckpointIndexesV2}}) {
    std::string wal = ReadFile(kGoldenDir / wal_name);
    std::string ckpt = ReadFile(kGoldenDir / ckpt_name);
    Options o;
    o.durable.checkpoint_on_close = false;
    for (int which = 1; which <= 2; ++which) {
      SCOPED_TRACE(std::string(which == 1 ? wal_name : ckpt_name));
      env::SimFileSystem fs;
      ASSERT_TRUE(fs.CreateDir("/db").ok());
      ASSERT_TRUE(which == 1 ? fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), wal).ok()
                             : fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(6), ckpt).ok());
      auto g = GraphImpl::OpenDurable(o, "/db", &fs);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      Snapshot s = (*g)->GetSnapshot();
      ASSERT_EQ(s.Indexes().size(), 1u);
      EXPECT_EQ(s.Indexes()[0].spec.name, "person_name");
      EXPECT_EQ(s.Indexes()[0].state, IndexState::kReady);
      EXPECT_EQ(s.Indexes()[0].declared, 2u);
      EXPECT_EQ(s.FindVertex("Person", "name", "Alan").value(), VertexId(1));
      EXPECT_EQ((*g)->GetOpenStats().indexes_built, 1u);
      WriteBatch dup;
      dup.AddVertex("Person", {{"name", "Ada"}});
      EXPECT_EQ((*g)->Write(std::move(dup)).status().code(), StatusCode::kAlreadyExists);
    }
  }
}

// The endpoint files open with their constraint built and holding, from
// the WAL and from the checkpoint: a second KNOWS edge of a pair is
// refused, UpsertEdge finds the edge of a pair, and the reverse pair is
// another pair.
TEST(GoldenFormatTest, GoldenEndpointFilesOpenWithTheirConstraint) {
  for (auto [wal_name, ckpt_name] : {std::pair{kWalEndpoints, kCheckpointEndpoints},
                                     {kWalEndpoints, kCheckpointEndpointsV4},
                                     {kWalEndpointsV4, kCheckpointEndpointsV3}}) {
    const std::string wal = ReadFile(kGoldenDir / wal_name);
    const std::string ckpt = ReadFile(kGoldenDir / ckpt_name);
    const std::string expected = EndpointsLog().states()[6];
    Options o;
    o.durable.checkpoint_on_close = false;
    for (int which = 1; which <= 3; ++which) {
      SCOPED_TRACE(std::string(wal_name) + ", " + ckpt_name + " " + std::to_string(which));
      env::SimFileSystem fs;
      ASSERT_TRUE(fs.CreateDir("/db").ok());
      if (which & 1) {
        ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), wal).ok());
      }
      if (which & 2) {
        ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(6), ckpt).ok());
      }
      auto g = GraphImpl::OpenDurable(o, "/db", &fs);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), expected);
      Snapshot s = (*g)->GetSnapshot();
      ASSERT_EQ(s.Indexes().size(), 1u);
      EXPECT_EQ(s.Indexes()[0].spec.name, "knows_once");
      EXPECT_EQ(s.Indexes()[0].spec.kind, IndexKind::kUniqueEndpoints);
      EXPECT_EQ(s.Indexes()[0].state, IndexState::kReady);
      EXPECT_EQ(s.Indexes()[0].declared, 3u);
      EXPECT_EQ((*g)->GetOpenStats().indexes_built, 1u);
      WriteBatch dup;
      dup.AddEdge("KNOWS", VertexId(1), VertexId(0));
      Result<CommitInfo> refused = (*g)->Write(std::move(dup));
      EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists) << refused.status().ToString();
      WriteBatch upsert;
      upsert.UpsertEdge("KNOWS", VertexId(0), VertexId(1), {{"since", 2.5}});
      Result<CommitInfo> found = (*g)->Write(std::move(upsert));
      ASSERT_TRUE(found.ok()) << found.status().ToString();
      ASSERT_EQ(found->edges.size(), 1u);
      EXPECT_EQ(found->edges[0], EdgeId(0));
      EXPECT_TRUE(found->edge_found[0]);
      EXPECT_EQ((*g)->GetSnapshot().edge_count(), 2u);
      WriteBatch loop;
      loop.AddEdge("KNOWS", VertexId(0), VertexId(0));
      EXPECT_TRUE((*g)->Write(std::move(loop)).ok());
    }
  }
}

// Damage in WAL groups the checkpoint covers (docs/wal_format.md, reading
// rule 3). A checkpoint of format 2 on says where the log continues, so reading
// resumes exactly there. A format-1 checkpoint does not: reading resumes at
// a record found by searching, which may lie inside a payload, so it may
// only skip: with a group above the checkpoint after the damage, Open
// refuses rather than replay from a guessed boundary.
TEST(GoldenFormatTest, CoveredWalDamageWithEachCheckpointFormat) {
  format_test::LogBuilder log = GoldenLog();
  WriteBatch later;
  later.AddVertex("Later");
  ASSERT_TRUE(log.AddGroup({later}).ok());  // group 6, after the checkpoints' sequence 5
  std::string six;
  {
    env::SimFileSystem fs;
    six = format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, log.groups()).value();
  }
  const std::string five = ReadFile(kGoldenDir / kWalGolden);
  const auto damage = [](std::string segment) {
    // The CRC of record 2 (group 2..2), which both checkpoints cover.
    segment[format_test::RecordSpans(AsBytes(segment)).at(1).offset] ^= 0x01;
    return segment;
  };
  struct Case {
    const char* what;
    const char* checkpoint;
    std::string segment;
    bool opens;
    SequenceNumber sequence;
  };
  const std::vector<Case> cases = {
      {"format 5, nothing after the checkpoint", kCheckpointGolden, damage(five), true, 5},
      {"format 5, group 6 after it", kCheckpointGolden, damage(six), true, 6},
      {"format 4, nothing after the checkpoint", kCheckpointGoldenV4, damage(five), true, 5},
      {"format 4, group 6 after it", kCheckpointGoldenV4, damage(six), true, 6},
      {"format 3, nothing after the checkpoint", kCheckpointGoldenV3, damage(five), true, 5},
      {"format 3, group 6 after it", kCheckpointGoldenV3, damage(six), true, 6},
      {"format 2, nothing after the checkpoint", kCheckpointGoldenV2, damage(five), true, 5},
      {"format 2, group 6 after it", kCheckpointGoldenV2, damage(six), true, 6},
      {"format 1, nothing after the checkpoint", kCheckpointGoldenV1, damage(five), true, 5},
      {"format 1, group 6 after it", kCheckpointGoldenV1, damage(six), false, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/db").ok());
    ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), c.segment).ok());
    ASSERT_TRUE(
        fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(5), ReadFile(kGoldenDir / c.checkpoint))
            .ok());
    Options o;
    o.durable.checkpoint_on_close = false;
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    if (!c.opens) {
      ASSERT_FALSE(g.ok());
      EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
      continue;
    }
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetSnapshot().sequence(), c.sequence);
    EXPECT_EQ(test_util::Dump((*g)->GetSnapshot()), log.states()[c.sequence]);
    EXPECT_GT((*g)->GetOpenStats().wal_covered_damage_bytes, 0u);
  }
}

// A graph whose last segment is of an older format version (1 to 4) is
// never appended to in this build's version: the next commit starts segment
// 2, and segment 1 keeps its bytes (so no version 2 segment gets padding
// records, no version 3 segment an edge-endpoint constraint and no version
// 4 segment a string list).
TEST(GoldenFormatTest, OldVersionSegmentIsClosedNotAppendedTo) {
  for (const char* name : {kWalGoldenV1, kWalGoldenV2, kWalGoldenV3, kWalGoldenV4}) {
    SCOPED_TRACE(name);
    const std::string wal = ReadFile(kGoldenDir / name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/db").ok());
    ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), wal).ok());
    Options o;
    o.durable.checkpoint_on_close = false;
    {
      auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
      WriteBatch b;
      b.AddVertex("Person", {{"name", "Alan"}, {"tags", StringList{"logic"}}});
      ASSERT_TRUE(g->Write(std::move(b)).ok());
      ASSERT_TRUE(g->CreateIndex({.name = "n", .label = "Person", .keys = {"name"}}).ok());
      ASSERT_TRUE(g->CreateIndex({.name = "knows_once",
                                  .element = ElementKind::kEdge,
                                  .label = "KNOWS",
                                  .kind = IndexKind::kUniqueEndpoints})
                      .ok());
    }
    EXPECT_EQ(fs.ReadFileForTest("/db/" + wal::SegmentFileName(1)).value(), wal);
    std::string seg2 = fs.ReadFileForTest("/db/" + wal::SegmentFileName(2)).value();
    wal::SegmentScan scan;
    const std::string decoded = DecodeSegment(seg2, &scan);
    EXPECT_EQ(scan.header.format_version, wal::kFormatVersion);
    EXPECT_EQ(scan.header.first_sequence, 6u);
    EXPECT_NE(decoded.find("DefineIndex knows_once on edges KNOWS kind=3"), std::string::npos) << decoded;
    EXPECT_NE(decoded.find("tags=l1:6c6f676963,;"), std::string::npos) << decoded;
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    EXPECT_EQ(g->GetSnapshot().FindVertices("Person", "name", "Alan").value(),
              std::vector<VertexId>{VertexId(2)});
    EXPECT_EQ(g->GetSnapshot().GetProperty(VertexId(2), "tags")->as_string_list()->ToList(),
              StringList{"logic"});
    ASSERT_EQ(g->GetSnapshot().Indexes().size(), 2u);
    WriteBatch dup;
    dup.AddEdge("KNOWS", VertexId(0), VertexId(1));
    EXPECT_EQ(g->Write(std::move(dup)).status().code(), StatusCode::kAlreadyExists);
  }
}

// A graph opened from the files of the previous formats (a format 2
// checkpoint, a format 3 segment) writes the new ones: the endpoint
// constraint it declares goes to a segment of this build's version, the
// next checkpoint is of this build's format and carries its definition,
// and each state reopens. The old segment is never appended to.
TEST(GoldenFormatTest, GraphOpenedFromPreviousFormatsWritesTheNewOnesAndReopens) {
  const std::string wal3 = ReadFile(kGoldenDir / kWalGoldenV3);
  const std::string ckpt2 = ReadFile(kGoldenDir / kCheckpointGoldenV2);
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/db").ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), wal3).ok());
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(5), ckpt2).ok());
  Options o;
  o.durable.checkpoint_on_close = false;
  const IndexSpec spec{.name = "knows_once",
                       .element = ElementKind::kEdge,
                       .label = "KNOWS",
                       .kind = IndexKind::kUniqueEndpoints};
  const auto holds = [](Graph& g) {
    Snapshot s = g.GetSnapshot();
    ASSERT_EQ(s.Indexes().size(), 1u);
    EXPECT_EQ(s.Indexes()[0].spec.kind, IndexKind::kUniqueEndpoints);
    EXPECT_EQ(s.Indexes()[0].state, IndexState::kReady);
    EXPECT_EQ(s.edge_count(), 2u);
    for (auto [from, to] : {std::pair{0u, 1u}, {1u, 0u}}) {
      WriteBatch dup;
      dup.AddEdge("KNOWS", VertexId(from), VertexId(to));
      EXPECT_EQ(g.Write(std::move(dup)).status().code(), StatusCode::kAlreadyExists) << from << "->" << to;
    }
  };
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetOpenStats().checkpoint_sequence, 5u);
    ASSERT_TRUE((*g)->CreateIndex(spec).ok());
    WriteBatch back;
    back.AddEdge("KNOWS", VertexId(1), VertexId(0));
    ASSERT_TRUE((*g)->Write(std::move(back)).ok());
    holds(**g);
  }
  EXPECT_EQ(fs.ReadFileForTest("/db/" + wal::SegmentFileName(1)).value(), wal3);
  wal::SegmentScan scan;
  DecodeSegment(fs.ReadFileForTest("/db/" + wal::SegmentFileName(2)).value(), &scan);
  EXPECT_EQ(scan.header.format_version, wal::kFormatVersion);
  {
    // The old checkpoint and both segments.
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)->GetOpenStats().checkpoint_sequence, 5u);
    holds(**g);
    ASSERT_TRUE((*g)->Checkpoint().ok());
  }
  const SequenceNumber sequence = [&] {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    return g.ok() ? (*g)->GetOpenStats().checkpoint_sequence : 0;
  }();
  ASSERT_GT(sequence, 5u);
  const std::string ckpt3 = fs.ReadFileForTest("/db/" + checkpoint::CheckpointFileName(sequence)).value();
  checkpoint::Header header;
  std::string dump;
  Status s = format_test::LoadCheckpointForTest(AsBytes(ckpt3), &header, &dump);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(header.version, checkpoint::kFormatVersion);
  EXPECT_NE(dump.find("index knows_once edges KNOWS keys= kind=3"), std::string::npos) << dump;
  auto g = GraphImpl::OpenDurable(o, "/db", &fs);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  holds(**g);
}

// A build that reads only versions 1 and 2 meets a version 3 segment: its
// rule for a newer version (wal::NewerFormatVersion as that build had it:
// the magic, a version above its own up to 65535, and a header CRC that does
// not match with the version put back to 1 or 2) says "newer", so it fails
// with Unimplemented and leaves the file alone. Checked here on the golden
// version 3 header with that build's rule written out.
TEST(GoldenFormatTest, AVersion2BuildTakesAVersion3SegmentForANewerOne) {
  const std::string wal = ReadFile(kGoldenDir / kWalGoldenV3);
  ASSERT_GE(wal.size(), wal::kSegmentHeaderBytes);
  std::uint32_t version;
  std::memcpy(&version, wal.data() + 8, 4);
  EXPECT_EQ(version, 3u);
  std::uint32_t crc;
  std::memcpy(&crc, wal.data() + 56, 4);
  for (std::uint32_t older : {1u, 2u}) {
    std::string as_older = wal.substr(0, wal::kSegmentHeaderBytes);
    std::memcpy(as_older.data() + 8, &older, 4);
    EXPECT_NE(base::Crc32c(as_older.data(), 56), crc) << "a version 2 build would take it for damage";
  }
  // The padding record type is no record type to a version 2 reader: a
  // version 2 segment holding one is Corruption in this build too.
  std::string v2 = ReadFile(kGoldenDir / kWalGoldenV2);
  std::string v3 = ReadFile(kGoldenDir / kWalGoldenV3);
  std::string mixed = v2.substr(0, wal::kSegmentHeaderBytes) + v3.substr(wal::kSegmentHeaderBytes);
  wal::SegmentScan scan;
  Status s = wal::ScanSegment(
      AsBytes(mixed), [](SequenceNumber, SequenceNumber, std::span<const std::byte>) { return Status::Ok(); },
      &scan);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
}

// The point of WAL format 4 and checkpoint format 3: a build of the previous
// formats (WAL 1 to 3, checkpoint 1 and 2) meets a file holding an
// edge-endpoint constraint. By its rule for a newer version (the magic, a
// version above its own, and a header CRC that does not match with the
// version put back to one it reads) it takes the file for a newer one, so
// it fails with Unimplemented and leaves the file alone, where without the
// bump it would have read index kind 3 as Corruption (and a salvage could
// have cut the log there). Likewise WAL format 5 and checkpoint format 4
// for a file holding a string list (value type 7), against a build of WAL
// 1 to 4 and checkpoint 1 to 3. Checked on the golden files with that rule
// written out.
TEST(GoldenFormatTest, APreviousBuildTakesTheNewerFilesForNewerOnes) {
  struct File {
    const char* name;
    std::uint32_t version;
    std::size_t crc_at;
    std::vector<std::uint32_t> previous;  // the versions the previous build reads
  };
  for (const File& f :
       {File{kWalEndpointsV4, 4, 56, {1, 2, 3}}, File{kWalGoldenV4, 4, 56, {1, 2, 3}},
        File{kCheckpointEndpointsV3, 3, 76, {2}}, File{kCheckpointGoldenV3, 3, 76, {2}},
        File{kWalLists, 5, 56, {1, 2, 3, 4}}, File{kWalGolden, 5, 56, {1, 2, 3, 4}},
        File{kCheckpointListsV4, 4, 76, {2, 3}}, File{kCheckpointGoldenV4, 4, 76, {2, 3}},
        File{kCheckpointIndexes, 5, 76, {2, 3, 4}}, File{kCheckpointGolden, 5, 76, {2, 3, 4}}}) {
    SCOPED_TRACE(f.name);
    const std::string bytes = ReadFile(kGoldenDir / f.name);
    ASSERT_GE(bytes.size(), f.crc_at + 4);
    std::uint32_t version, crc;
    std::memcpy(&version, bytes.data() + 8, 4);
    std::memcpy(&crc, bytes.data() + f.crc_at, 4);
    EXPECT_EQ(version, f.version);
    for (std::uint32_t older : f.previous) {
      std::string as_older = bytes.substr(0, f.crc_at);
      std::memcpy(as_older.data() + 8, &older, 4);
      EXPECT_NE(base::Crc32c(as_older.data(), f.crc_at), crc) << "a previous build would take it for damage";
    }
  }
}

// The engine's own write path logs the first three groups (one batch each)
// with exactly the record bytes of the golden segment; only the header (a
// fresh random UUID) differs.
TEST(GoldenFormatTest, EngineWritesTheSameRecords) {
  std::string golden = ReadFile(kGoldenDir / kWalGolden);
  auto spans = format_test::RecordSpans(AsBytes(golden));
  ASSERT_EQ(spans.size(), 4u);
  // Version 3: the first group starts on the second page, each on its own.
  EXPECT_EQ(spans[0].offset, wal::kWalPageBytes);
  for (const format_test::RecordSpan& r : spans) EXPECT_EQ(r.end % wal::kWalPageBytes, 0u);
  env::SimFileSystem fs;
  Options o;
  o.durable.checkpoint_on_close = false;
  {
    auto g = GraphImpl::OpenDurable(o, "/db", &fs).value();
    WriteBatch b1, b2, b3;
    b1.AddVertex("Person", {{"name", "Ada"}});
    b2.AddVertex("Person", {{"name", "Grace"}});
    b3.AddEdge("KNOWS", VertexId(0), VertexId(1));
    ASSERT_TRUE(g->Write(b1).ok());
    ASSERT_TRUE(g->Write(b2).ok());
    ASSERT_TRUE(g->Write(b3).ok());
  }
  std::string engine = fs.ReadFileForTest("/db/" + wal::SegmentFileName(1)).value();
  // The three groups, then the segment's zeroed end (zeros only).
  ASSERT_GE(engine.size(), spans[3].offset);
  EXPECT_EQ(engine.find_first_not_of('\0', spans[3].offset), std::string::npos);
  engine.resize(spans[3].offset);
  EXPECT_EQ(test_util::Hex(engine.data() + 64, engine.size() - 64),
            test_util::Hex(golden.data() + 64, engine.size() - 64));
}

TEST(GoldenFormatTest, DocsShowTheGoldenBytes) {
  std::string wal_doc = ReadFile(kSourceDir / "docs" / "wal_format.md");
  std::string ckpt_doc = ReadFile(kSourceDir / "docs" / "checkpoint_format.md");
  for (auto [doc, name] : {std::pair{&wal_doc, kWalGolden},
                           {&wal_doc, kWalIndexes},
                           {&wal_doc, kWalEndpoints},
                           {&wal_doc, kWalLists},
                           {&ckpt_doc, kCheckpointGolden},
                           {&ckpt_doc, kCheckpointGoldenV1},
                           {&ckpt_doc, kCheckpointIndexes},
                           {&ckpt_doc, kCheckpointEndpoints},
                           {&ckpt_doc, kCheckpointLists},
                           {&ckpt_doc, kCheckpointOrdered}}) {
    SCOPED_TRACE(name);
    std::string bytes = ReadFile(kGoldenDir / name);
    std::string shown = DocDumpBytes(*doc, name);
    EXPECT_EQ(test_util::Hex(shown.data(), shown.size()), test_util::Hex(bytes.data(), bytes.size()));
  }
}

// --- Version policy (docs/wal_format.md, docs/checkpoint_format.md): a file
// of a format version this build does not read is never modified, removed,
// salvaged or skipped; Open fails with Unimplemented naming the file.

// `bytes` (a golden file) with its format version set to `version` and its
// header CRC resealed, as a newer Quiver would have written it.
std::string WithVersion(std::string bytes, std::uint32_t version, std::size_t crc_offset) {
  std::memcpy(bytes.data() + 8, &version, 4);
  std::uint32_t crc = base::Crc32c(bytes.data(), crc_offset);
  std::memcpy(bytes.data() + crc_offset, &crc, 4);
  return bytes;
}

// Every file of `dir` with its bytes (durable and as a read sees them).
std::map<std::string, std::string> DirBytes(env::SimFileSystem& fs, const std::string& dir) {
  std::map<std::string, std::string> out;
  const std::vector<std::string> names = fs.ListDir(dir).value();
  for (const std::string& name : names) {
    if (name == "LOCK") continue;
    std::string path = dir + "/" + name;
    out[name] = fs.ReadFileForTest(path).value() + "|durable:" + fs.ReadDurableForTest(path).value();
  }
  return out;
}

// The format-1 golden checkpoint with an index definitions block (the one of
// the format-2 index checkpoint, its CRC recomputed the format-1 way:
// unseeded) before its vertices: every CRC right, but a kind format 1 does
// not have.
std::string V1CheckpointWithAnIndexBlock() {
  const std::string v1 = ReadFile(kGoldenDir / kCheckpointGoldenV1);
  const std::string v2 = ReadFile(kGoldenDir / kCheckpointIndexesV2);
  // The offset and size of the first block of `kind` after a header of `header_bytes`.
  const auto find = [](const std::string& b, std::size_t header_bytes, std::uint8_t kind) {
    for (std::size_t pos = header_bytes; pos + checkpoint::kBlockHeaderBytes <= b.size();) {
      std::uint32_t length;
      std::memcpy(&length, b.data() + pos + 4, 4);
      if (static_cast<std::uint8_t>(b[pos]) == kind)
        return std::pair{pos, checkpoint::kBlockHeaderBytes + length};
      pos += checkpoint::kBlockHeaderBytes + length;
    }
    ADD_FAILURE() << "no block of kind " << int{kind};
    return std::pair{std::size_t{0}, std::size_t{0}};
  };
  const auto [at7, size7] = find(v2, checkpoint::kHeaderBytes, 7);
  std::string block = v2.substr(at7, size7);
  std::uint32_t crc = base::Crc32c(block.data(), 8);
  crc = base::Crc32cExtend(crc, block.data() + checkpoint::kBlockHeaderBytes,
                           size7 - checkpoint::kBlockHeaderBytes);
  std::memcpy(block.data() + 8, &crc, 4);
  std::string out = v1;
  out.insert(find(v1, checkpoint::kHeaderBytesV1, 4).first, block);
  return out;
}

// Index operations and the index definitions block came with version 2: a
// version 1 file holding one was not written by any Quiver (Corruption),
// even with every CRC right.
TEST(GoldenFormatTest, IndexRecordsInAVersion1FileAreCorruption) {
  const std::string wal1 = WithVersion(ReadFile(kGoldenDir / kWalIndexesV2), 1, 56);
  const std::string ckpt1 = V1CheckpointWithAnIndexBlock();
  for (int which = 1; which <= 2; ++which) {
    SCOPED_TRACE(which == 1 ? "WAL segment" : "checkpoint");
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/db").ok());
    ASSERT_TRUE(which == 1 ? fs.WriteFileForTest("/db/" + wal::SegmentFileName(1), wal1).ok()
                           : fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(6), ckpt1).ok());
    Options o;
    o.durable.checkpoint_on_close = false;
    auto g = GraphImpl::OpenDurable(o, "/db", &fs);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
  }
}

// `bytes` (a golden checkpoint of format 2 on) with its format version set
// to `version` (2 on) and every CRC recomputed: the header's, each block's
// (seeded with the header) and the trailer. As a writer of that version
// would have sealed the same blocks.
std::string CheckpointWithVersion(std::string bytes, std::uint32_t version) {
  return format_test::ResealCheckpoint(WithVersion(std::move(bytes), version, 76));
}

// Index kind 3 (the edge-endpoint constraint) came with WAL format 4 and
// checkpoint format 3: a WAL segment of version 3 or a checkpoint of version
// 2 holding one was not written by any correct Quiver, so it is Corruption
// naming the kind and the version, even with every CRC right, in every
// recovery mode (a salvage does not cut the log there: the group fails in
// replay), and the file keeps its bytes.
TEST(GoldenFormatTest, EndpointConstraintInAPreviousVersionFileIsCorruption) {
  const std::string wal3 = WithVersion(ReadFile(kGoldenDir / kWalEndpoints), 3, 56);
  const std::string ckpt2 = CheckpointWithVersion(ReadFile(kGoldenDir / kCheckpointEndpointsV4), 2);
  // The reseal is right: the same bytes sealed as format 3 and 4 are the
  // golden files of those formats.
  EXPECT_EQ(CheckpointWithVersion(ckpt2, 3), ReadFile(kGoldenDir / kCheckpointEndpointsV3));
  EXPECT_EQ(CheckpointWithVersion(ckpt2, 4), ReadFile(kGoldenDir / kCheckpointEndpointsV4));
  EXPECT_EQ(WithVersion(wal3, 4, 56), ReadFile(kGoldenDir / kWalEndpointsV4));
  {
    // A format 2 checkpoint with the same blocks but no kind 3 loads.
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(
        AsBytes(CheckpointWithVersion(ReadFile(kGoldenDir / kCheckpointIndexesV4), 2)), &header, &dump);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  {
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(AsBytes(ckpt2), &header, &dump);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  }
  for (int which = 1; which <= 2; ++which) {
    for (bool salvage : {false, true}) {
      SCOPED_TRACE(std::string(which == 1 ? "WAL segment" : "checkpoint") + (salvage ? ", salvage" : ""));
      const std::string name = which == 1 ? wal::SegmentFileName(1) : checkpoint::CheckpointFileName(6);
      const std::string& bytes = which == 1 ? wal3 : ckpt2;
      env::SimFileSystem fs;
      ASSERT_TRUE(fs.CreateDir("/db").ok());
      ASSERT_TRUE(fs.WriteFileForTest("/db/" + name, bytes).ok());
      Options o;
      o.durable.checkpoint_on_close = false;
      o.durable.salvage_wal_prefix = salvage;
      auto g = GraphImpl::OpenDurable(o, "/db", &fs);
      ASSERT_FALSE(g.ok());
      EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
      const std::string m(g.status().message());
      EXPECT_NE(m.find("edge-endpoint constraint"), std::string::npos) << m;
      EXPECT_NE(m.find(which == 1 ? "format version 3 segment" : "format version 2 checkpoint"),
                std::string::npos)
          << m;
      EXPECT_NE(m.find(which == 1 ? "came with format version 4" : "came with format version 3"),
                std::string::npos)
          << m;
      EXPECT_EQ(fs.ReadFileForTest("/db/" + name).value(), bytes);
      EXPECT_EQ(fs.ReadDurableForTest("/db/" + name).value(), bytes);
    }
  }
}

// Value type 7 (a string list) came with WAL format 5 and checkpoint format
// 4: a WAL segment of version 4 or a checkpoint of version 3 holding one was
// not written by any correct Quiver, so it is Corruption naming the key, the
// type and both versions, even with every CRC right, in every recovery mode
// (a salvage does not cut the log there: the group fails in replay), and
// the file keeps its bytes. The same files without a list load in those
// versions.
TEST(GoldenFormatTest, StringListInAPreviousVersionFileIsCorruption) {
  const std::string wal4 = WithVersion(ReadFile(kGoldenDir / kWalLists), 4, 56);
  const std::string ckpt3 = CheckpointWithVersion(ReadFile(kGoldenDir / kCheckpointListsV4), 3);
  EXPECT_EQ(CheckpointWithVersion(ckpt3, 4), ReadFile(kGoldenDir / kCheckpointListsV4));
  EXPECT_EQ(CheckpointWithVersion(ReadFile(kGoldenDir / kCheckpointGoldenV4), 3),
            ReadFile(kGoldenDir / kCheckpointGoldenV3));
  EXPECT_EQ(WithVersion(ReadFile(kGoldenDir / kWalGolden), 4, 56), ReadFile(kGoldenDir / kWalGoldenV4));
  {
    checkpoint::Header header;
    std::string dump;
    Status s = format_test::LoadCheckpointForTest(AsBytes(ckpt3), &header, &dump);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find("property \"tags\" is a string list (value type 7) in a format version 3 "
                               "checkpoint; that type came with format version 4"),
              std::string::npos)
        << s.ToString();
  }
  for (int which = 1; which <= 2; ++which) {
    for (bool salvage : {false, true}) {
      SCOPED_TRACE(std::string(which == 1 ? "WAL segment" : "checkpoint") + (salvage ? ", salvage" : ""));
      const std::string name = which == 1 ? wal::SegmentFileName(1) : checkpoint::CheckpointFileName(2);
      const std::string& bytes = which == 1 ? wal4 : ckpt3;
      env::SimFileSystem fs;
      ASSERT_TRUE(fs.CreateDir("/db").ok());
      ASSERT_TRUE(fs.WriteFileForTest("/db/" + name, bytes).ok());
      Options o;
      o.durable.checkpoint_on_close = false;
      o.durable.salvage_wal_prefix = salvage;
      auto g = GraphImpl::OpenDurable(o, "/db", &fs);
      ASSERT_FALSE(g.ok());
      EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
      const std::string m(g.status().message());
      EXPECT_NE(m.find("string list (value type 7)"), std::string::npos) << m;
      EXPECT_NE(m.find("tags"), std::string::npos) << m;
      EXPECT_NE(m.find(which == 1 ? "format version 4 segment" : "format version 3 checkpoint"),
                std::string::npos)
          << m;
      EXPECT_NE(m.find(which == 1 ? "came with format version 5" : "came with format version 4"),
                std::string::npos)
          << m;
      EXPECT_EQ(fs.ReadFileForTest("/db/" + name).value(), bytes);
      EXPECT_EQ(fs.ReadDurableForTest("/db/" + name).value(), bytes);
      if (which == 2 && !salvage) {
        // The dump of the checkpoint makes the same check, and says where.
        std::string text;
        Status d = DumpGraphFile(&fs, "/db/" + name, DumpOptions{},
                                 [&text](std::string_view line) { text.append(line).push_back('\n'); });
        EXPECT_EQ(d.code(), StatusCode::kCorruption) << d.ToString();
        EXPECT_NE(text.find("! stopped at offset"), std::string::npos) << text;
        EXPECT_NE(text.find("string list (value type 7) in a format version 3 checkpoint"), std::string::npos)
            << text;
      }
    }
  }
}

TEST(GoldenFormatTest, NewerFormatVersionFailsOpenAndKeepsEveryByte) {
  const std::string wal = ReadFile(kGoldenDir / kWalGolden);
  const std::string ckpt = ReadFile(kGoldenDir / kCheckpointGolden);
  ASSERT_FALSE(wal.empty());
  ASSERT_FALSE(ckpt.empty());
  const std::uint32_t newer_wal = wal::kFormatVersion + 1;
  const std::uint32_t newer_ckpt = checkpoint::kFormatVersion + 1;
  EXPECT_EQ(newer_wal, 6u);
  EXPECT_EQ(newer_ckpt, 6u);
  const std::string endpoints_wal = WithVersion(ReadFile(kGoldenDir / kWalEndpoints), newer_wal, 56);
  const std::string endpoints_ckpt = WithVersion(ReadFile(kGoldenDir / kCheckpointEndpoints), newer_ckpt, 76);
  const std::string lists_wal = WithVersion(ReadFile(kGoldenDir / kWalLists), newer_wal, 56);
  const std::string wal2 = WithVersion(wal, newer_wal, 56);
  const std::string ckpt2 = WithVersion(ckpt, newer_ckpt, 76);
  // An older checkpoint (sequence 3) of the same graph, for the fallback case.
  std::string ckpt3;
  {
    format_test::LogBuilder log = GoldenLog();
    env::SimFileSystem fs;
    std::span<const format_test::LoggedGroup> groups(log.groups());
    ASSERT_TRUE(format_test::WriteSegmentFile(fs, "/db", kFixedUuid, 1, 1, groups.first(3)).ok());
    ckpt3 = format_test::WriteCheckpointFile(fs, "/db", kFixedUuid).value();
  }
  // A header-only segment 2 of a newer version after an intact segment 1: the
  // shape of a segment that a torn creation leaves, but written whole.
  std::string empty2(wal.data(), wal::kSegmentHeaderBytes);
  {
    std::uint64_t number = 2, first = 6;
    std::memcpy(empty2.data() + 32, &number, 8);
    std::memcpy(empty2.data() + 40, &first, 8);
    empty2 = WithVersion(empty2, newer_wal, 56);
  }
  const std::string seg1 = wal::SegmentFileName(1);
  const std::string seg2 = wal::SegmentFileName(2);
  const std::string ck5 = checkpoint::CheckpointFileName(5);
  const std::string ck3 = checkpoint::CheckpointFileName(3);
  struct Case {
    const char* what;
    std::vector<std::pair<std::string, std::string>> files;
    std::string culprit;  // the file the status must name
    std::uint32_t newer;  // its version
  };
  const std::vector<Case> cases = {
      {"newer WAL segment alone", {{seg1, wal2}}, seg1, newer_wal},
      {"newer WAL segment under a checkpoint", {{seg1, wal2}, {ck5, ckpt}}, seg1, newer_wal},
      {"newer header-only last segment", {{seg1, wal}, {seg2, empty2}}, seg2, newer_wal},
      {"newer checkpoint alone", {{ck5, ckpt2}}, ck5, newer_ckpt},
      {"newer checkpoint with the WAL", {{ck5, ckpt2}, {seg1, wal}}, ck5, newer_ckpt},
      {"newer checkpoint over an older one", {{ck5, ckpt2}, {ck3, ckpt3}, {seg1, wal}}, ck5, newer_ckpt},
      {"newer segment after a previous-version one",
       {{seg1, ReadFile(kGoldenDir / kWalGoldenV4)}, {seg2, empty2}},
       seg2,
       newer_wal},
      {"newer endpoint segment", {{seg1, endpoints_wal}}, seg1, newer_wal},
      {"newer list segment", {{seg1, lists_wal}}, seg1, newer_wal},
      {"newer endpoint checkpoint",
       {{checkpoint::CheckpointFileName(6), endpoints_ckpt}},
       checkpoint::CheckpointFileName(6),
       newer_ckpt},
  };
  for (const Case& c : cases) {
    for (bool salvage : {false, true}) {
      SCOPED_TRACE(std::string(c.what) + (salvage ? ", salvage_wal_prefix" : ""));
      env::SimFileSystem fs;
      ASSERT_TRUE(fs.CreateDir("/db").ok());
      for (const auto& [name, bytes] : c.files) ASSERT_TRUE(fs.WriteFileForTest("/db/" + name, bytes).ok());
      const auto before = DirBytes(fs, "/db");
      Options o;
      o.durable.checkpoint_on_close = false;
      o.durable.salvage_wal_prefix = salvage;
      auto g = GraphImpl::OpenDurable(o, "/db", &fs);
      ASSERT_FALSE(g.ok());
      EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented) << g.status().ToString();
      EXPECT_NE(g.status().message().find(c.culprit), std::string::npos) << g.status().ToString();
      EXPECT_NE(g.status().message().find("format version " + std::to_string(c.newer)), std::string::npos)
          << g.status().ToString();
      EXPECT_EQ(DirBytes(fs, "/db"), before);
    }
  }
}

}  // namespace
}  // namespace quiver
