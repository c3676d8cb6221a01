// The independent reader, in the order of the docs: encodings, checkpoint
// (docs/checkpoint_format.md), WAL segments and records, group payload and
// replay (docs/wal_format.md), the directory, then the comparison with a
// snapshot. Nothing here includes the engine's src/ headers.
#include "independent_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

namespace quiver::test {
namespace {

// ---- Encodings

constexpr std::uint64_t kMaxId = (std::uint64_t{1} << 48) - 1;
constexpr std::size_t kWalHeaderBytes = 64;
// The WAL format versions the reader knows (1 to 5): one constant for the
// full scan and for the header check that decides which segments the
// checkpoint covers, so that a new version cannot reach one and not the other.
constexpr std::uint32_t kNewestWalVersion = 5;
// Checkpoint formats 1 to 5.
constexpr std::uint32_t kNewestCheckpointVersion = 5;
// Index entries blocks (kind 8) came with checkpoint format 5.
constexpr std::uint32_t kFirstEntriesCheckpointVersion = 5;
// Value type 7 (a string list) came with WAL version 5 and checkpoint 4.
constexpr std::uint32_t kFirstListWalVersion = 5;
constexpr std::uint32_t kFirstListCheckpointVersion = 4;
constexpr std::size_t kPageBytes = 4096;  // WAL format version 3 on: groups end on these boundaries
constexpr std::size_t kRecordHeaderBytes = 32;
constexpr std::uint32_t kMaxFragment = 1 << 20;
// Checkpoint formats 1 (64-byte header, CRC at 60) and 2 (80-byte header,
// CRC at 76, block CRCs continuing the header's, a 4-byte trailer).
constexpr std::size_t kBlockHeaderBytes = 16;

std::uint32_t Le32(std::string_view b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

std::uint64_t Le64(std::string_view b, std::size_t at) {
  return Le32(b, at) | (std::uint64_t{Le32(b, at + 4)} << 32);
}

bool AllZero(std::string_view b) {
  return std::all_of(b.begin(), b.end(), [](char c) { return c == 0; });
}

Status Bad(const std::string& what) { return CorruptionError("independent reader: " + what); }

// A cursor over one payload; every read fails past the end.
class In {
 public:
  explicit In(std::string_view b) : b_(b) {}
  std::size_t left() const { return b_.size() - pos_; }
  bool U8(std::uint8_t* v) {
    if (left() < 1) return false;
    *v = static_cast<std::uint8_t>(b_[pos_++]);
    return true;
  }
  bool Fixed(std::size_t n, std::string* out) {
    if (left() < n) return false;
    out->assign(b_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool U64(std::uint64_t* v) {
    if (left() < 8) return false;
    *v = Le64(b_, pos_);
    pos_ += 8;
    return true;
  }
  // Unsigned LEB128, at most 10 bytes, nothing past 64 bits.
  bool Varint(std::uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      std::uint8_t byte;
      if (!U8(&byte)) return false;
      const std::uint64_t bits = byte & 0x7f;
      if (shift == 63 && bits > 1) return false;
      *v |= bits << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool Str(std::string* out) {
    std::uint64_t n;
    return Varint(&n) && n <= left() && Fixed(static_cast<std::size_t>(n), out);
  }

 private:
  std::string_view b_;
  std::size_t pos_ = 0;
};

// Value := type:u8 then the type's payload (both docs share it); type 7
// (a string list) only where `lists` (the file's version has it).
bool ReadValue(In& in, ReaderValue* v, bool lists) {
  if (!in.U8(&v->type)) return false;
  v->bytes.clear();
  std::uint64_t n;
  switch (v->type) {
    case 0: return true;
    case 1: {
      std::uint8_t b;
      if (!in.U8(&b) || b > 1) return false;
      v->bytes.assign(1, static_cast<char>(b));
      return true;
    }
    case 2:
    case 3: return in.Fixed(8, &v->bytes);
    case 4: return in.Str(&v->bytes);
    case 5: return in.Varint(&n) && n <= in.left() && in.Fixed(static_cast<std::size_t>(n), &v->bytes);
    case 6:
      return in.Varint(&n) && n <= in.left() / 4 && in.Fixed(static_cast<std::size_t>(n) * 4, &v->bytes);
    case 7: {
      // count:varint Str{count}; kept as each element's length (8 bytes,
      // little-endian) and then its bytes.
      if (!lists || !in.Varint(&n) || n > in.left()) return false;
      for (std::uint64_t i = 0; i < n; ++i) {
        std::string s;
        if (!in.Str(&s)) return false;
        for (int b = 0; b < 8; ++b) v->bytes.push_back(static_cast<char>(std::uint64_t{s.size()} >> (8 * b)));
        v->bytes += s;
      }
      return true;
    }
    default: return false;
  }
}

std::optional<std::uint64_t> ParseNumberedName(std::string_view name, std::string_view prefix,
                                               std::string_view suffix) {
  if (name.size() != prefix.size() + 20 + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(prefix.size() + 20) != suffix)
    return std::nullopt;
  std::uint64_t v = 0;
  for (char c : name.substr(prefix.size(), 20)) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::size_t Intern(std::vector<std::string>& names, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  names.push_back(name);
  return names.size() - 1;
}

// ---- Checkpoint (docs/checkpoint_format.md)

struct Checkpoint {
  std::string uuid;
  ReaderState state;
};

Status ReadNames(In& in, std::vector<std::string>& names, const char* what) {
  std::uint64_t first, count;
  if (!in.Varint(&first) || !in.Varint(&count) || first != names.size() || count > in.left())
    return Bad(std::string(what) + " block does not continue the ids");
  std::set<std::string> seen(names.begin(), names.end());
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name;
    if (!in.Str(&name) || name.empty() || !seen.insert(name).second)
      return Bad(std::string(what) + " name is truncated, empty or repeated");
    names.push_back(std::move(name));
  }
  return Status::Ok();
}

Status ReadProps(In& in, const std::vector<std::string>& keys, ReaderElement* e, bool lists) {
  std::uint64_t count;
  if (!in.Varint(&count) || count > in.left()) return Bad("property count");
  std::uint64_t previous = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t key;
    ReaderValue value;
    if (!in.Varint(&key) || key >= keys.size() || (i > 0 && key <= previous) || !ReadValue(in, &value, lists))
      return Bad("checkpoint property (key ids must exist and increase)");
    previous = key;
    e->properties[keys[key]] = std::move(value);
  }
  return Status::Ok();
}

Status ReadElements(In& in, ReaderState& s, bool edges, std::uint64_t vertex_limit, bool lists) {
  std::vector<ReaderElement>& out = edges ? s.edges : s.vertices;
  std::uint64_t first, count;
  if (!in.Varint(&first) || !in.Varint(&count) || first != out.size() || count > in.left())
    return Bad("element block does not continue the ids");
  for (std::uint64_t i = 0; i < count; ++i) {
    ReaderElement e;
    std::uint8_t live;
    if (!in.U8(&live) || live > 1) return Bad("element marker");
    if (live == 1) {
      e.live = true;
      std::uint64_t name;
      if (!in.Varint(&name) || name >= (edges ? s.types : s.labels).size()) return Bad("label or type id");
      e.name = (edges ? s.types : s.labels)[name];
      if (edges) {
        if (!in.Varint(&e.source) || !in.Varint(&e.target) || e.source >= vertex_limit ||
            e.target >= vertex_limit || e.source >= s.vertices.size() || e.target >= s.vertices.size() ||
            !s.vertices[e.source].live || !s.vertices[e.target].live)
          return Bad("edge endpoint is not a live vertex");
      }
      QUIVER_RETURN_IF_ERROR(ReadProps(in, s.keys, &e, lists));
    }
    out.push_back(std::move(e));
  }
  return Status::Ok();
}

// What the index entries blocks are checked against.
struct ReaderIndexDef {
  std::uint8_t element = 0;  // 0 vertices, 1 edges
  std::uint64_t label = 0;   // a label or an edge type id
  std::uint8_t kind = 0;
  bool fixed = false;  // one int64 or double key: 8-byte keys, all keys then all ids
  bool ready = false;
};

// Index definitions (format version 2 on): they change nothing the reader
// rebuilds, so they are only checked against the names before them. Kind 3
// (an edge-endpoint constraint: edges, no keys, no type) came with format 3.
Status ReadIndexDefinitions(In& in, const ReaderState& s, std::uint32_t version,
                            std::vector<ReaderIndexDef>* defs) {
  std::uint64_t first, count;
  if (!in.Varint(&first) || first != 0 || !in.Varint(&count)) return Bad("index definitions");
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name;
    std::uint8_t element, kind, type, state;
    std::uint64_t label, keys, declared;
    if (!in.Str(&name) || name.empty() || !in.U8(&element) || element > 1 || !in.Varint(&label) ||
        label >= (element == 0 ? s.labels : s.types).size() || !in.U8(&kind) || kind > 3 || !in.U8(&type) ||
        (type > 6 && type != 0xFF) || !in.Varint(&keys))
      return Bad("index definition");
    if (kind == 3 ? version < 3 || element != 1 || type != 0xFF || keys != 0 : keys == 0)
      return Bad("index definition of kind " + std::to_string(kind) + " in a format version " +
                 std::to_string(version) + " checkpoint");
    for (std::uint64_t k = 0; k < keys; ++k) {
      std::uint64_t key;
      if (!in.Varint(&key) || key >= s.keys.size()) return Bad("index definition key");
    }
    if (!in.Varint(&declared) || declared == 0 || declared > s.sequence || !in.U8(&state) || state > 1)
      return Bad("index definition state");
    defs->push_back({element, label, kind, kind != 3 && keys == 1 && (type == 2 || type == 3), state == 1});
  }
  return Status::Ok();
}

// Index entries (format 5 on): first_id (entries across the stored
// indexes), count, the definition's position, then the entries, which
// must ascend strictly by (key bytes, id), repeat no key in a unique index
// (kinds 1 and 3), continue the previous block of the same index, and name
// live elements of the index's label or type (the elements came before).
struct EntriesCursor {
  std::uint64_t next_first = 0;
  std::int64_t index = -1;  // the index of the previous block
  std::string last_key;
  std::uint64_t last_id = 0;
  bool any = false;  // the current index has an entry
  std::set<std::uint64_t> done;
};

Status ReadIndexEntries(In& in, const ReaderState& s, const std::vector<ReaderIndexDef>& defs,
                        EntriesCursor* c) {
  std::uint64_t first, count, index;
  if (!in.Varint(&first) || first != c->next_first || !in.Varint(&count) || count > in.left() ||
      !in.Varint(&index))
    return Bad("index entries prefix");
  if (index >= defs.size() || !defs[index].ready) return Bad("index entries of no ready index");
  if (static_cast<std::int64_t>(index) != c->index) {
    if (c->done.count(index) != 0 || static_cast<std::int64_t>(index) < c->index)
      return Bad("index entries blocks out of order");
    c->done.insert(index);
    c->index = static_cast<std::int64_t>(index);
    c->any = false;
  }
  const ReaderIndexDef& d = defs[index];
  const std::vector<ReaderElement>& elements = d.element == 0 ? s.vertices : s.edges;
  const std::vector<std::string>& names = d.element == 0 ? s.labels : s.types;
  std::vector<std::string> keys(count);
  std::vector<std::uint64_t> ids(count);
  auto id_of = [](const std::string& six) {
    std::uint64_t v = 0;
    for (int i = 5; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(six[static_cast<std::size_t>(i)]);
    return v;
  };
  std::string six;
  if (d.fixed) {
    for (std::uint64_t i = 0; i < count; ++i)
      if (!in.Fixed(8, &keys[i])) return Bad("index entries keys");
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!in.Fixed(6, &six)) return Bad("index entries ids");
      ids[i] = id_of(six);
    }
  } else {
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!in.Str(&keys[i]) || keys[i].size() > 1024 || !in.Fixed(6, &six)) return Bad("index entries");
      ids[i] = id_of(six);
    }
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    if (ids[i] >= elements.size() || !elements[ids[i]].live || elements[ids[i]].name != names[d.label])
      return Bad("index entry names no live element of its label or type");
    if (c->any) {
      const int cmp = c->last_key.compare(keys[i]);
      if (cmp > 0 || (cmp == 0 && ((d.kind == 1 || d.kind == 3) || c->last_id >= ids[i])))
        return Bad("index entries out of order or repeating a unique key");
    }
    c->any = true;
    c->last_key = keys[i];
    c->last_id = ids[i];
  }
  c->next_first += count;
  return Status::Ok();
}

// Block order by kind: 1, 2, 3, 7 (version 2 on), 4, 5, 8 (version 5 on), 6.
int KindRank(std::uint8_t kind, std::uint32_t version) {
  static const int kRank[] = {0, 1, 2, 3, 5, 6, 8, 4, 7};
  if (kind < 1 || kind > 8 || (kind == 7 && version < 2) ||
      (kind == 8 && version < kFirstEntriesCheckpointVersion))
    return 0;
  return kRank[kind];
}

Result<Checkpoint> ReadCheckpoint(std::string_view b, std::uint64_t name_sequence) {
  if (b.size() < 12 || b.substr(0, 8) != "QVRCKP01") return Bad("checkpoint magic");
  const std::uint32_t version = Le32(b, 8);
  if (version < 1 || version > kNewestCheckpointVersion)
    return Bad("unknown checkpoint format version " + std::to_string(version));
  const bool lists = version >= kFirstListCheckpointVersion;
  const std::size_t header_bytes = version == 1 ? 64 : 80;
  const std::size_t trailer_bytes = version == 1 ? 0 : 4;
  if (b.size() < header_bytes + trailer_bytes || Le32(b, 12) != header_bytes ||
      Crc32c(0, b.data(), header_bytes - 4) != Le32(b, header_bytes - 4))
    return Bad("checkpoint header");
  // Format 2 on: every block CRC, and the trailer, continue the CRC of the
  // whole header; format 1: a block CRC covers the block alone.
  const std::uint32_t seed = version == 1 ? 0 : Crc32c(0, b.data(), header_bytes);
  std::uint32_t file_crc = seed;
  const std::size_t end = b.size() - trailer_bytes;
  Checkpoint c;
  c.uuid.assign(b.substr(16, 16));
  ReaderState& s = c.state;
  s.sequence = Le64(b, 32);
  const std::uint64_t vertex_limit = Le64(b, 40), edge_limit = Le64(b, 48);
  if (s.sequence != name_sequence) return Bad("checkpoint sequence differs from its file name");
  if (vertex_limit > kMaxId || edge_limit > kMaxId) return Bad("checkpoint id limits");
  std::size_t pos = header_bytes;
  int previous_rank = 0;
  std::uint64_t blocks = 0;
  std::vector<ReaderIndexDef> defs;
  EntriesCursor entries;
  while (true) {
    if (end - pos < kBlockHeaderBytes) return Bad("checkpoint ends without its end block");
    const std::uint8_t kind = static_cast<std::uint8_t>(b[pos]);
    const std::uint32_t length = Le32(b, pos + 4);
    const int rank = KindRank(kind, version);
    if (rank == 0 || rank < previous_rank || !AllZero(b.substr(pos + 1, 3)) ||
        !AllZero(b.substr(pos + 12, 4)) || length > end - pos - kBlockHeaderBytes)
      return Bad("checkpoint block header at " + std::to_string(pos));
    std::uint32_t crc = Crc32c(seed, b.data() + pos, 8);
    crc = Crc32c(crc, b.data() + pos + kBlockHeaderBytes, length);
    if (crc != Le32(b, pos + 8)) return Bad("checkpoint block CRC at " + std::to_string(pos));
    file_crc = Crc32c(file_crc, b.data() + pos + 8, 4);
    previous_rank = rank;
    In in(b.substr(pos + kBlockHeaderBytes, length));
    pos += kBlockHeaderBytes + length;
    switch (kind) {
      case 1: QUIVER_RETURN_IF_ERROR(ReadNames(in, s.labels, "label")); break;
      case 2: QUIVER_RETURN_IF_ERROR(ReadNames(in, s.types, "edge type")); break;
      case 3: QUIVER_RETURN_IF_ERROR(ReadNames(in, s.keys, "property key")); break;
      case 7: QUIVER_RETURN_IF_ERROR(ReadIndexDefinitions(in, s, version, &defs)); break;
      case 8:
        if (s.vertices.size() != vertex_limit || s.edges.size() != edge_limit)
          return Bad("element blocks do not add up to the header's limits");
        QUIVER_RETURN_IF_ERROR(ReadIndexEntries(in, s, defs, &entries));
        break;
      case 4: QUIVER_RETURN_IF_ERROR(ReadElements(in, s, false, vertex_limit, lists)); break;
      case 5:
        if (s.vertices.size() != vertex_limit) return Bad("vertex blocks do not add up to vertex_limit");
        QUIVER_RETURN_IF_ERROR(ReadElements(in, s, true, vertex_limit, lists));
        break;
      case 6: {
        std::uint64_t live_vertices, live_edges, blocks_before;
        if (!in.Varint(&live_vertices) || !in.Varint(&live_edges) || !in.Varint(&blocks_before))
          return Bad("end block");
        if (in.left() != 0) return Bad("trailing bytes in the end block");
        if (pos != end) return Bad("bytes after the end block");
        if (trailer_bytes != 0 && Le32(b, end) != file_crc)
          return Bad("the checkpoint's CRC over its blocks does not match");
        if (s.vertices.size() != vertex_limit || s.edges.size() != edge_limit)
          return Bad("element blocks do not add up to the header's limits");
        auto live = [](const std::vector<ReaderElement>& v) {
          return static_cast<std::uint64_t>(
              std::count_if(v.begin(), v.end(), [](auto& e) { return e.live; }));
        };
        if (live_vertices != live(s.vertices) || live_edges != live(s.edges) || blocks_before != blocks)
          return Bad("end block counts");
        s.checkpoint_sequence = s.sequence;
        return c;
      }
    }
    if (in.left() != 0) return Bad("trailing bytes in a checkpoint block");
    ++blocks;
  }
}

// ---- WAL segments and records (docs/wal_format.md)

struct Group {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::string payload;
};

struct RecordHeader {
  std::uint8_t type = 0;
  std::uint32_t length = 0;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

std::size_t Padded(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

// A valid record at `pos`: well formed, whole, CRC matches, and (if
// `check_padding`) its padding, as far as the file goes, zero.
std::optional<RecordHeader> ValidRecordAt(std::string_view b, std::size_t pos, bool check_padding = true) {
  if (pos > b.size() || b.size() - pos < kRecordHeaderBytes) return std::nullopt;
  RecordHeader h;
  h.length = Le32(b, pos + 4);
  h.type = static_cast<std::uint8_t>(b[pos + 8]);
  h.first = Le64(b, pos + 16);
  h.last = Le64(b, pos + 24);
  if (h.type < 1 || h.type > 5 || !AllZero(b.substr(pos + 9, 7)) || h.length > kMaxFragment || h.first < 1 ||
      h.last < h.first || h.length > b.size() - pos - kRecordHeaderBytes)
    return std::nullopt;
  std::uint32_t crc = Crc32c(0, b.data() + pos + 4, kRecordHeaderBytes - 4);
  crc = Crc32c(crc, b.data() + pos + kRecordHeaderBytes, h.length);
  if (crc != Le32(b, pos)) return std::nullopt;
  const std::size_t end = pos + kRecordHeaderBytes + h.length;
  if (check_padding && !AllZero(b.substr(end, std::min(Padded(h.length) - h.length, b.size() - end))))
    return std::nullopt;
  return h;
}

// Evidence of committed data: a record at a multiple of 8 from `pos` on,
// well formed, whole and CRC-valid (its padding does not matter), whose
// first sequence exceeds `above`; a padding record at `ignored_padding` (the
// header's padding of a segment whose header is damaged) does not count.
bool ValidRecordAfter(std::string_view b, std::size_t pos, std::uint64_t above,
                      std::size_t ignored_padding = 0) {
  for (std::size_t at = Padded(pos); at + kRecordHeaderBytes <= b.size(); at += 8) {
    auto h = ValidRecordAt(b, at, false);
    if (h && h->first > above && !(at == ignored_padding && h->type == 5)) return true;
  }
  return false;
}

struct Segment {
  std::string name;
  std::string uuid;
  std::uint32_t version = 0;
  std::uint64_t first_sequence = 0;
  std::vector<Group> groups;
  std::uint64_t next_sequence = 0;  // the last complete group's last + 1
  std::uint64_t tail_bytes = 0;     // bytes after the last complete group
  bool torn_creation = false;       // header invalid, nothing valid after it
};

Result<Segment> ScanSegment(const std::string& name, std::string_view b) {
  Segment seg;
  seg.name = name;
  const bool magic = b.size() >= kWalHeaderBytes && b.substr(0, 8) == "QVRWAL01";
  const bool crc = magic && Crc32c(0, b.data(), 56) == Le32(b, 56);
  const std::uint32_t version = crc ? Le32(b, 8) : 0;
  if (crc && (version < 1 || version > kNewestWalVersion))
    return Bad(name + ": unknown format version " + std::to_string(version));
  if (!crc || Le32(b, 12) != kWalHeaderBytes || !AllZero(b.substr(60, 4))) {
    // A torn creation holds at most the header's page, and no valid record
    // but the header's padding.
    if (b.size() > kPageBytes || ValidRecordAfter(b, kWalHeaderBytes, 0, kWalHeaderBytes))
      return Bad(name + ": damaged header before valid records");
    seg.torn_creation = true;
    seg.tail_bytes = b.size();
    return seg;
  }
  seg.uuid.assign(b.substr(16, 16));
  seg.version = version;
  seg.first_sequence = seg.next_sequence = Le64(b, 40);
  std::size_t pos = kWalHeaderBytes, end_of_groups = kWalHeaderBytes;
  // Version 3 on: the header's padding record (the header's first sequence
  // twice) reaches to the first page boundary; every group whose last
  // record ends off a page boundary is followed by a padding record with its
  // range, ending on one, and counts only with it.
  if (version >= 3) {
    auto h = ValidRecordAt(b, pos);
    if (!h || h->type != 5 || h->first != seg.first_sequence || h->last != seg.first_sequence ||
        (pos + kRecordHeaderBytes + h->length) % kPageBytes != 0) {
      if (h) return Bad(name + ": no header padding at 64");
      if (ValidRecordAfter(b, pos, seg.next_sequence))
        return Bad(name + ": damage at 64 followed by committed records");
      seg.tail_bytes = b.size() - pos;
      return seg;
    }
    pos = end_of_groups = pos + kRecordHeaderBytes + h->length;
  }
  std::optional<Group> open;
  std::optional<Group> unpadded;  // a whole group waiting for its padding
  while (auto h = ValidRecordAt(b, pos)) {
    if (h->type == 5) {
      if (version < 3)
        return Bad(name + ": padding record in a format version " + std::to_string(version) + " segment");
      if (!unpadded || h->first != unpadded->first || h->last != unpadded->last ||
          (pos + kRecordHeaderBytes + h->length) % kPageBytes != 0)
        return Bad(name + ": padding record at " + std::to_string(pos) + " out of place");
      pos += kRecordHeaderBytes + h->length;
      seg.next_sequence = unpadded->last + 1;
      seg.groups.push_back(std::move(*unpadded));
      unpadded.reset();
      end_of_groups = pos;
      continue;
    }
    if (unpadded) return Bad(name + ": record at " + std::to_string(pos) + " where padding must be");
    const bool starts = h->type == 1 || h->type == 2;
    if (starts ? (open.has_value() || h->first != seg.next_sequence)
               : (!open.has_value() || h->first != open->first || h->last != open->last))
      return Bad(name + ": record at " + std::to_string(pos) + " does not continue the log");
    if (starts) open = Group{h->first, h->last, {}};
    open->payload.append(b.substr(pos + kRecordHeaderBytes, h->length));
    pos = std::min(b.size(), pos + kRecordHeaderBytes + Padded(h->length));
    if (h->type == 1 || h->type == 4) {
      if (version >= 3 && pos % kPageBytes != 0) {
        unpadded = std::move(*open);
        open.reset();
        continue;
      }
      seg.next_sequence = open->last + 1;
      seg.groups.push_back(std::move(*open));
      open.reset();
      end_of_groups = pos;
    }
  }
  if (ValidRecordAfter(b, pos, seg.next_sequence))
    return Bad(name + ": damage at " + std::to_string(pos) + " followed by committed records");
  seg.tail_bytes = b.size() - end_of_groups;
  // Version 3 on, the zeroed end: past groups (or the header's padding) that
  // end on a page boundary, nothing but zeros to the end of the file is the
  // segment's unused end, not a torn tail.
  if (version >= 3 && end_of_groups >= kPageBytes && end_of_groups % kPageBytes == 0 &&
      AllZero(b.substr(end_of_groups)))
    seg.tail_bytes = 0;
  return seg;
}

// ---- Group payload and replay (docs/wal_format.md, "The group payload"
// and "Replay rules")

class Replayer {
 public:
  explicit Replayer(ReaderState* s) : s_(*s) {
    incident_.resize(s_.vertices.size());
    for (std::uint64_t e = 0; e < s_.edges.size(); ++e) AddIncidence(e);
  }

  // Applies group `g` of a segment of format `version`.
  Status ApplyGroup(const Group& g, std::uint32_t version) {
    version_ = version;
    In in(g.payload);
    std::uint64_t batches;
    if (!in.Varint(&batches) || batches != g.last - g.first + 1)
      return Bad("group " + std::to_string(g.first) + ": batch count does not match its sequence range");
    for (std::uint64_t i = 0; i < batches; ++i) QUIVER_RETURN_IF_ERROR(ApplyBatch(in));
    if (in.left() != 0) return Bad("group " + std::to_string(g.first) + ": trailing bytes");
    ++s_.groups_replayed;
    return Status::Ok();
  }

 private:
  void AddIncidence(std::uint64_t e) {
    const ReaderElement& edge = s_.edges[e];
    if (!edge.live) return;
    incident_[edge.source].push_back(e);
    if (edge.target != edge.source) incident_[edge.target].push_back(e);
  }

  Status ApplyBatch(In& in) {
    std::uint64_t sequence, first_vertex, first_edge, ops;
    if (!in.U64(&sequence) || !in.Varint(&first_vertex) || !in.Varint(&first_edge) || !in.Varint(&ops))
      return Bad("batch header");
    if (sequence != s_.sequence + 1) return Bad("batch sequence " + std::to_string(sequence));
    if (first_vertex != s_.vertices.size() || first_edge != s_.edges.size())
      return Bad("batch " + std::to_string(sequence) + " does not start at the id limits");
    first_vertex_ = first_vertex;
    first_edge_ = first_edge;
    for (std::uint64_t i = 0; i < ops; ++i) {
      Status st = ApplyOp(in);
      if (!st.ok())
        return Bad("batch " + std::to_string(sequence) + " op " + std::to_string(i) + ": " +
                   std::string(st.message()));
    }
    s_.sequence = sequence;
    return Status::Ok();
  }

  // Ref := (id << 1) committed before this batch | (index << 1) | 1 added by it.
  Result<std::uint64_t> Ref(In& in, bool edge) {
    std::uint64_t r;
    if (!in.Varint(&r)) return Bad("ref");
    const std::uint64_t first = edge ? first_edge_ : first_vertex_;
    const std::vector<ReaderElement>& table = edge ? s_.edges : s_.vertices;
    const std::uint64_t id = (r & 1) ? first + (r >> 1) : r >> 1;
    if ((r & 1) ? id >= table.size() : id >= first) return Bad("ref names no element");
    if (!table[id].live) return Bad("ref names a removed element");
    return id;
  }

  Status Props(In& in, ReaderElement* e) {
    std::uint64_t count;
    if (!in.Varint(&count) || count > in.left()) return Bad("property count");
    for (std::uint64_t i = 0; i < count; ++i) {
      std::string key;
      ReaderValue value;
      if (!in.Str(&key) || key.empty() || !ReadValue(in, &value, version_ >= kFirstListWalVersion))
        return Bad("property");
      Intern(s_.keys, key);
      if (!e->properties.emplace(std::move(key), std::move(value)).second) return Bad("duplicate key");
    }
    return Status::Ok();
  }

  void RemoveEdge(std::uint64_t e) {
    ReaderElement& edge = s_.edges[e];
    edge.live = false;
    edge.properties.clear();
    for (std::uint64_t v : {edge.source, edge.target}) std::erase(incident_[v], e);
  }

  Status ApplyOp(In& in) {
    std::uint8_t kind;
    if (!in.U8(&kind)) return Bad("op kind");
    switch (kind) {
      case 1: {  // AddVertex label:Str props:Props
        ReaderElement v;
        v.live = true;
        if (!in.Str(&v.name) || v.name.empty()) return Bad("label");
        Intern(s_.labels, v.name);
        QUIVER_RETURN_IF_ERROR(Props(in, &v));
        s_.vertices.push_back(std::move(v));
        incident_.emplace_back();
        return Status::Ok();
      }
      case 2: {  // AddEdge type:Str source:Ref target:Ref props:Props
        ReaderElement e;
        e.live = true;
        if (!in.Str(&e.name) || e.name.empty()) return Bad("edge type");
        Intern(s_.types, e.name);
        QUIVER_ASSIGN_OR_RETURN(e.source, Ref(in, false));
        QUIVER_ASSIGN_OR_RETURN(e.target, Ref(in, false));
        QUIVER_RETURN_IF_ERROR(Props(in, &e));
        s_.edges.push_back(std::move(e));
        AddIncidence(s_.edges.size() - 1);
        return Status::Ok();
      }
      case 3:    // SetVertexProperty vertex:Ref key:Str value:Value
      case 4: {  // SetEdgeProperty edge:Ref key:Str value:Value
        QUIVER_ASSIGN_OR_RETURN(std::uint64_t id, Ref(in, kind == 4));
        std::string key;
        ReaderValue value;
        if (!in.Str(&key) || key.empty() || !ReadValue(in, &value, version_ >= kFirstListWalVersion))
          return Bad("property");
        Intern(s_.keys, key);
        (kind == 4 ? s_.edges : s_.vertices)[id].properties[key] = std::move(value);
        return Status::Ok();
      }
      case 5:    // RemoveVertexProperty vertex:Ref key:Str
      case 6: {  // RemoveEdgeProperty edge:Ref key:Str
        QUIVER_ASSIGN_OR_RETURN(std::uint64_t id, Ref(in, kind == 6));
        std::string key;
        if (!in.Str(&key) || key.empty()) return Bad("property key");
        (kind == 6 ? s_.edges : s_.vertices)[id].properties.erase(key);
        return Status::Ok();
      }
      case 7: {  // RemoveEdge edge:Ref
        QUIVER_ASSIGN_OR_RETURN(std::uint64_t e, Ref(in, true));
        RemoveEdge(e);
        return Status::Ok();
      }
      case 8: {  // RemoveVertex vertex:Ref, with every incident edge
        QUIVER_ASSIGN_OR_RETURN(std::uint64_t v, Ref(in, false));
        const std::vector<std::uint64_t> edges = incident_[v];
        for (std::uint64_t e : edges) RemoveEdge(e);
        s_.vertices[v].live = false;
        s_.vertices[v].properties.clear();
        return Status::Ok();
      }
      case 9: {  // DefineIndex name:Str element:u8 label:Str kind:u8 type:u8 key_count:varint key:Str{count}
        std::string name, label;
        std::uint8_t element, index_kind, type;
        std::uint64_t keys;
        if (!in.Str(&name) || !in.U8(&element) || element > 1 || !in.Str(&label) || label.empty() ||
            !in.U8(&index_kind) || !in.U8(&type) || !in.Varint(&keys) || keys > in.left())
          return Bad("DefineIndex");
        // Index operations came with format 2, kind 3 (the edge-endpoint
        // constraint) with format 4.
        if (version_ < 2 || (index_kind == 3 && version_ < 4))
          return Bad("DefineIndex of kind " + std::to_string(index_kind) + " in a format version " +
                     std::to_string(version_) + " segment");
        // The engine interns the label (or type), then the keys, in order.
        Intern(element == 0 ? s_.labels : s_.types, label);
        for (std::uint64_t k = 0; k < keys; ++k) {
          std::string key;
          if (!in.Str(&key) || key.empty()) return Bad("DefineIndex key");
          Intern(s_.keys, key);
        }
        return Status::Ok();
      }
      case 10:    // IndexReady name:Str declared:varint
      case 11: {  // DropIndex name:Str declared:varint
        std::string name;
        std::uint64_t declared;
        if (!in.Str(&name) || !in.Varint(&declared) || version_ < 2) return Bad("index operation");
        return Status::Ok();
      }
      default: return Bad("unknown op kind " + std::to_string(kind));
    }
  }

  ReaderState& s_;
  std::vector<std::vector<std::uint64_t>> incident_;  // live edges per vertex
  std::uint32_t version_ = 0;                         // the format version of the segment being replayed
  std::uint64_t first_vertex_ = 0;
  std::uint64_t first_edge_ = 0;
};

// ---- The directory

// The newest checkpoint that passes every check, else the newest valid one
// before it; none if there is none (ReadGraphFiles then requires the log to
// start at sequence 1, or reports the newest one's damage).
Result<std::optional<Checkpoint>> LoadNewestCheckpoint(const DirectoryFiles& files, bool* used_previous,
                                                       Status* newest_error) {
  std::vector<std::pair<std::uint64_t, std::string>> found;
  for (const std::string& name : files.names)
    if (auto seq = ParseNumberedName(name, "checkpoint-", ".qck")) found.emplace_back(*seq, name);
  std::sort(found.rbegin(), found.rend());
  for (const auto& [seq, name] : found) {
    QUIVER_ASSIGN_OR_RETURN(std::string bytes, files.read(name));
    Result<Checkpoint> c = ReadCheckpoint(bytes, seq);
    if (c.ok()) {
      *used_previous = !newest_error->ok();
      return std::optional<Checkpoint>(std::move(*c));
    }
    if (newest_error->ok()) *newest_error = Bad(name + ": " + std::string(c.status().message()));
  }
  *used_previous = !newest_error->ok();
  return std::optional<Checkpoint>();
}

// The first sequence in an intact segment header, if the header is intact.
std::optional<std::uint64_t> HeaderFirstSequence(std::string_view b) {
  if (b.size() < kWalHeaderBytes || b.substr(0, 8) != "QVRWAL01" || Le32(b, 8) < 1 ||
      Le32(b, 8) > kNewestWalVersion || Le32(b, 12) != kWalHeaderBytes ||
      Crc32c(0, b.data(), 56) != Le32(b, 56) || !AllZero(b.substr(60, 4)))
    return std::nullopt;
  return Le64(b, 40);
}

// Segments wholly covered by the checkpoint (`covered`) are not read: one
// is skipped when the next segment present, with an intact header, starts at
// or below covered + 1. That next one need not be its numbered successor: a
// crash in checkpoint cleanup may keep the removal of a later covered segment
// and lose an earlier one's. Then every segment from the first needed one is
// scanned.
Result<std::vector<Segment>> ScanSegments(const DirectoryFiles& files, std::uint64_t covered) {
  std::vector<std::string> names;
  for (const std::string& name : files.names)
    if (ParseNumberedName(name, "wal-", ".log")) names.push_back(name);
  std::sort(names.begin(), names.end());
  std::size_t first_needed = 0;
  while (covered > 0 && first_needed + 1 < names.size()) {
    QUIVER_ASSIGN_OR_RETURN(std::string next, files.read(names[first_needed + 1]));
    const std::optional<std::uint64_t> next_first = HeaderFirstSequence(next);
    if (!next_first || *next_first > covered + 1) break;
    ++first_needed;
  }
  std::vector<Segment> segments;
  for (std::size_t i = first_needed; i < names.size(); ++i) {
    QUIVER_ASSIGN_OR_RETURN(std::string bytes, files.read(names[i]));
    QUIVER_ASSIGN_OR_RETURN(Segment seg, ScanSegment(names[i], bytes));
    const bool last = i + 1 == names.size();
    if (seg.torn_creation && !last)
      return Bad(names[i] + ": damaged header in a segment that is not the last");
    if (seg.tail_bytes > 0 && !last && !seg.torn_creation)
      return Bad(names[i] + ": torn tail in a segment that is not the last");
    if (!seg.torn_creation) segments.push_back(std::move(seg));
  }
  return segments;
}

Status CheckChain(const std::vector<Segment>& segments, const std::optional<Checkpoint>& checkpoint) {
  const std::string uuid = checkpoint ? checkpoint->uuid : segments.empty() ? "" : segments[0].uuid;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].uuid != uuid) return Bad(segments[i].name + ": another graph's uuid");
    if (i > 0 && segments[i].first_sequence != segments[i - 1].next_sequence)
      return Bad(segments[i].name + ": does not continue the previous segment");
  }
  const std::uint64_t covered = checkpoint ? checkpoint->state.sequence : 0;
  if (!segments.empty() && segments[0].first_sequence > covered + 1)
    return Bad("the log starts at " + std::to_string(segments[0].first_sequence) + ", after sequence " +
               std::to_string(covered + 1));
  return Status::Ok();
}

}  // namespace

std::uint32_t Crc32c(std::uint32_t crc, const void* data, std::size_t n) {
  static const std::array<std::uint32_t, 256> kTable = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

Result<ReaderState> ReadGraphFiles(const DirectoryFiles& files) {
  bool used_previous = false;
  Status newest_error;
  QUIVER_ASSIGN_OR_RETURN(std::optional<Checkpoint> checkpoint,
                          LoadNewestCheckpoint(files, &used_previous, &newest_error));
  QUIVER_ASSIGN_OR_RETURN(std::vector<Segment> segments,
                          ScanSegments(files, checkpoint ? checkpoint->state.sequence : 0));
  // Every checkpoint damaged: the log alone, if it starts at sequence 1.
  if (!checkpoint && !newest_error.ok() && (segments.empty() || segments[0].first_sequence != 1))
    return newest_error;
  QUIVER_RETURN_IF_ERROR(CheckChain(segments, checkpoint));
  ReaderState state = checkpoint ? std::move(checkpoint->state) : ReaderState{};
  state.used_previous_checkpoint = used_previous;
  if (!segments.empty()) state.tail_bytes = segments.back().tail_bytes;
  Replayer replayer(&state);
  for (const Segment& seg : segments) {
    for (const Group& g : seg.groups) {
      if (g.last <= state.sequence) continue;  // covered by the checkpoint
      if (g.first != state.sequence + 1)
        return Bad(seg.name + ": group " + std::to_string(g.first) + ".." + std::to_string(g.last) +
                   " straddles or skips past sequence " + std::to_string(state.sequence));
      QUIVER_RETURN_IF_ERROR(replayer.ApplyGroup(g, seg.version));
    }
  }
  return state;
}

Result<ReaderState> ReadGraphDirectory(const std::string& dir) {
  DirectoryFiles files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file()) files.names.push_back(entry.path().filename().string());
  if (ec) return IOError("independent reader: listing " + dir + ": " + ec.message());
  std::sort(files.names.begin(), files.names.end());
  files.read = [dir](const std::string& name) -> Result<std::string> {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    if (!in && !in.eof()) return IOError("independent reader: reading " + name);
    return out.str();
  };
  return ReadGraphFiles(files);
}

// ---- Comparison with a snapshot

namespace {

ReaderValue FromView(const PropertyView& v) {
  ReaderValue r;
  r.type = static_cast<std::uint8_t>(v.type());
  auto put64 = [&r](std::uint64_t x) {
    for (int i = 0; i < 8; ++i) r.bytes.push_back(static_cast<char>(x >> (8 * i)));
  };
  switch (v.type()) {
    case ValueType::kNull: break;
    case ValueType::kBool: r.bytes.assign(1, static_cast<char>(*v.as_bool() ? 1 : 0)); break;
    case ValueType::kInt64: put64(static_cast<std::uint64_t>(*v.as_int64())); break;
    case ValueType::kDouble: {
      std::uint64_t bits;
      const double d = *v.as_double();
      std::memcpy(&bits, &d, 8);
      put64(bits);
      break;
    }
    case ValueType::kString: r.bytes.assign(*v.as_string()); break;
    case ValueType::kBytes:
      r.bytes.assign(reinterpret_cast<const char*>(v.as_bytes()->data()), v.as_bytes()->size());
      break;
    case ValueType::kFloatVector:
      r.bytes.assign(reinterpret_cast<const char*>(v.as_float_vector()->data()),
                     v.as_float_vector()->size() * 4);
      break;
    case ValueType::kStringList: {
      const StringListView list =
          *v.as_string_list();  // named: a temporary optional would die before the loop
      for (std::string_view s : list) {
        put64(s.size());
        r.bytes.append(s);
      }
      break;
    }
  }
  return r;
}

std::map<std::string, ReaderValue> SnapshotProps(const Snapshot& s, PropertyRange range) {
  std::map<std::string, ReaderValue> out;
  for (const PropertyRange::Entry& e : range) out[std::string(s.PropertyKeyName(e.key))] = FromView(e.value);
  return out;
}

using AdjacencyMap = std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>>;

AdjacencyMap SnapshotAdjacency(const Snapshot& s, VertexId v, Direction d) {
  AdjacencyMap out;
  for (EdgeGroup g : s.Edges(v, d)) {
    auto& list = out[std::string(s.EdgeTypeName(g.type))];
    for (const EdgeEntry& e : g.entries) list.emplace_back(e.edge().value(), e.neighbor().value());
  }
  return out;
}

std::string Id(const char* what, std::uint64_t id) { return std::string(what) + " " + std::to_string(id); }

}  // namespace

std::optional<std::string> CompareWithSnapshot(const ReaderState& r, const Snapshot& s) {
  if (s.sequence() != r.sequence)
    return "sequence: files " + std::to_string(r.sequence) + ", graph " + std::to_string(s.sequence());
  if (s.vertex_id_limit() != r.vertices.size() || s.edge_id_limit() != r.edges.size())
    return "id limits: files " + std::to_string(r.vertices.size()) + "/" + std::to_string(r.edges.size()) +
           ", graph " + std::to_string(s.vertex_id_limit()) + "/" + std::to_string(s.edge_id_limit());
  auto numbered = [](const std::vector<std::string>& names, auto find) -> std::optional<std::string> {
    for (std::size_t i = 0; i < names.size(); ++i) {
      auto id = find(names[i]);
      if (!id || id->value() != i) return "name '" + names[i] + "' is not number " + std::to_string(i);
    }
    return std::nullopt;
  };
  if (auto d = numbered(r.labels, [&s](const std::string& n) { return s.FindLabel(n); }))
    return "label " + *d;
  if (auto d = numbered(r.types, [&s](const std::string& n) { return s.FindEdgeType(n); }))
    return "type " + *d;
  if (auto d = numbered(r.keys, [&s](const std::string& n) { return s.FindPropertyKey(n); }))
    return "key " + *d;

  std::vector<AdjacencyMap> out(r.vertices.size()), in(r.vertices.size());
  for (std::uint64_t e = 0; e < r.edges.size(); ++e) {
    const ReaderElement& edge = r.edges[e];
    if (s.HasEdge(EdgeId(e)) != edge.live) return Id("edge", e) + ": liveness differs";
    if (!edge.live) continue;
    const EdgeInfo info = *s.GetEdge(EdgeId(e));
    if (s.EdgeTypeName(info.type) != edge.name || info.source.value() != edge.source ||
        info.target.value() != edge.target)
      return Id("edge", e) + ": type or endpoints differ";
    if (SnapshotProps(s, s.Properties(EdgeId(e))) != edge.properties)
      return Id("edge", e) + ": properties differ";
    out[edge.source][edge.name].emplace_back(e, edge.target);
    in[edge.target][edge.name].emplace_back(e, edge.source);
  }
  for (std::uint64_t v = 0; v < r.vertices.size(); ++v) {
    const ReaderElement& vertex = r.vertices[v];
    if (s.HasVertex(VertexId(v)) != vertex.live) return Id("vertex", v) + ": liveness differs";
    if (!vertex.live) continue;
    if (s.LabelName(*s.LabelOf(VertexId(v))) != vertex.name) return Id("vertex", v) + ": label differs";
    if (SnapshotProps(s, s.Properties(VertexId(v))) != vertex.properties)
      return Id("vertex", v) + ": properties differ";
    if (SnapshotAdjacency(s, VertexId(v), Direction::kOut) != out[v])
      return Id("vertex", v) + ": out-edges differ";
    if (SnapshotAdjacency(s, VertexId(v), Direction::kIn) != in[v])
      return Id("vertex", v) + ": in-edges differ";
  }
  return std::nullopt;
}

}  // namespace quiver::test
