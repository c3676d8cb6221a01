// Helpers for the byte-format tests (golden_format_test.cc, corruption_test.cc):
// build small, deterministic WAL segments and checkpoints through the real
// writers (GroupEncoder + WalWriter, WriteCheckpoint) on a SimFileSystem,
// with every batch first committed to an in-memory graph (the oracle, whose
// Dump after every sequence number is kept); render decoded groups and
// loaded checkpoints as text so tests compare content without trusting the
// encoder; and load a checkpoint into a throwaway version chain, as
// recovery does.
#ifndef QUIVER_TESTS_FORMAT_TEST_UTIL_H_
#define QUIVER_TESTS_FORMAT_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/crc32c.h"
#include "checkpoint/checkpoint_format.h"
#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/checkpoint_writer.h"
#include "env/file_system.h"
#include "env/sim_file_system.h"
#include "index/catalog.h"
#include "quiver/graph.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"
#include "recovery.h"
#include "storage/elements.h"
#include "storage/intern_table.h"
#include "storage/prop_block.h"
#include "storage/version.h"
#include "test_util.h"
#include "wal/batch_codec.h"
#include "wal/wal_format.h"
#include "wal/wal_writer.h"
#include "write/write_batch_internal.h"

namespace quiver::format_test {

// The graph UUID every generated file carries (an RFC 4122 version 4 pattern),
// so the bytes, CRCs included, are the same on every run.
inline constexpr wal::Uuid kFixedUuid = {0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x49, 0x78,
                                         0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0};

inline std::span<const std::byte> AsBytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// One commit group as the log holds it: its sequence range and GroupPayload.
struct LoggedGroup {
  SequenceNumber first = 0;
  SequenceNumber last = 0;
  std::vector<std::byte> payload;
};

// Records commit groups the way the writer thread logs them. Every batch is
// first committed to an in-memory graph, which checks that the workload is
// valid and supplies the ids and sequence numbers the log records.
class LogBuilder {
 public:
  LogBuilder() : model_(Graph::OpenInMemory(Options{}).value()) {
    states_.push_back(test_util::Dump(model_->GetSnapshot()));
  }

  // Commits `batches` in order as one group; an error if one fails.
  Status AddGroup(const std::vector<WriteBatch>& batches) {
    LoggedGroup g;
    wal::GroupEncoder encoder(&g.payload);
    encoder.Begin(batches.size());
    for (const WriteBatch& b : batches) {
      Snapshot before = model_->GetSnapshot();
      Result<CommitInfo> r = model_->Write(b);
      if (!r.ok()) return r.status();
      if (g.first == 0) g.first = r->sequence;
      g.last = r->sequence;
      encoder.Add(r->sequence, before.vertex_id_limit(), before.edge_id_limit(), b);
      states_.push_back(test_util::Dump(model_->GetSnapshot()));
      if (r->sequence + 1 != states_.size()) return InternalError("oracle sequence out of step");
    }
    groups_.push_back(std::move(g));
    return Status::Ok();
  }

  // Closes the oracle graph (stops its writer thread); groups() and
  // states() stay. No AddGroup after this.
  void Finish() { model_.reset(); }

  const std::vector<LoggedGroup>& groups() const { return groups_; }
  // states()[s]: the oracle's Dump after sequence s (states()[0]: empty graph).
  const std::vector<std::string>& states() const { return states_; }

 private:
  std::unique_ptr<Graph> model_;
  std::vector<LoggedGroup> groups_;
  std::vector<std::string> states_;
};

// Writes `groups` as segment `number` of `dir` through the real WalWriter
// (one append and one sync per group) and returns the file's bytes.
inline Result<std::string> WriteSegmentFile(env::SimFileSystem& fs, const std::string& dir,
                                            const wal::Uuid& uuid, std::uint64_t number,
                                            SequenceNumber first_sequence,
                                            std::span<const LoggedGroup> groups) {
  QUIVER_RETURN_IF_ERROR(fs.CreateDir(dir));
  {
    wal::WalWriter writer(&fs, dir, uuid, std::uint64_t{1} << 20);
    QUIVER_RETURN_IF_ERROR(writer.StartSegment(number, first_sequence));
    for (const LoggedGroup& g : groups) {
      QUIVER_RETURN_IF_ERROR(writer.AppendGroup(g.first, g.last, g.payload));
      QUIVER_RETURN_IF_ERROR(writer.Sync());
    }
  }
  return fs.ReadFileForTest(env::JoinPath(dir, wal::SegmentFileName(number)));
}

// Recovers `dir` (as Open would), writes a checkpoint of the recovered state
// with `uuid` through the real WriteCheckpoint and returns its bytes.
inline Result<std::string> WriteCheckpointFile(env::SimFileSystem& fs, const std::string& dir,
                                               const wal::Uuid& uuid) {
  QUIVER_ASSIGN_OR_RETURN(RecoveredState rs, Recover(&fs, dir, Options{}));
  const storage::Version* v = rs.chain->Acquire();
  SequenceNumber sequence = v->roots.sequence;
  checkpoint::WriteStats stats;
  Status s = checkpoint::WriteCheckpoint(&fs, dir, uuid, v->roots, &stats);
  rs.chain->Release(v);
  rs.chain->Shutdown();
  QUIVER_RETURN_IF_ERROR(s);
  return fs.ReadFileForTest(env::JoinPath(dir, checkpoint::CheckpointFileName(sequence)));
}

// --- Rendering decoded content as text

inline std::string RenderProps(std::span<const Property> props) {
  std::string out = "{";
  for (const Property& p : props) out += p.key + "=" + test_util::Render(p.value) + ";";
  return out + "}";
}

template <typename Ref>
std::string RenderRef(char kind, const Ref& r) {
  return (r.is_new() ? std::string("new-") : std::string()) + kind + std::to_string(r.raw());
}

// One decoded batch, one line per operation.
inline std::string RenderBatch(const wal::LoggedBatch& lb) {
  using internal::WriteBatchInternal;
  std::string out = "batch seq=" + std::to_string(lb.sequence) +
                    " first_vertex=" + std::to_string(lb.first_vertex) +
                    " first_edge=" + std::to_string(lb.first_edge) + "\n";
  for (const WriteBatchInternal::Op& op : WriteBatchInternal::Ops(lb.batch)) {
    auto props = WriteBatchInternal::Props(lb.batch, op);
    out += "  ";
    switch (op.kind) {
      case OpKind::kAddVertex: out += "AddVertex " + std::string(op.name) + " " + RenderProps(props); break;
      case OpKind::kAddEdge:
        out += "AddEdge " + std::string(op.name) + " " + RenderRef('v', op.v1) + "->" +
               RenderRef('v', op.v2) + " " + RenderProps(props);
        break;
      case OpKind::kSetVertexProperty:
        out += "SetProperty " + RenderRef('v', op.v1) + " " + RenderProps(props);
        break;
      case OpKind::kSetEdgeProperty:
        out += "SetProperty " + RenderRef('e', op.e) + " " + RenderProps(props);
        break;
      case OpKind::kRemoveVertexProperty:
        out += "RemoveProperty " + RenderRef('v', op.v1) + " " + std::string(op.name);
        break;
      case OpKind::kRemoveEdgeProperty:
        out += "RemoveProperty " + RenderRef('e', op.e) + " " + std::string(op.name);
        break;
      case OpKind::kRemoveEdge: out += "RemoveEdge " + RenderRef('e', op.e); break;
      case OpKind::kRemoveVertex: out += "RemoveVertex " + RenderRef('v', op.v1); break;
      case OpKind::kDefineIndex: {
        const IndexSpec& spec = op.index->spec;
        out += "DefineIndex " + spec.name + " on " + (spec.element == ElementKind::kVertex ? "" : "edges ") +
               spec.label + " kind=" + std::to_string(static_cast<int>(spec.kind)) +
               " type=" + (spec.type ? std::string(ValueTypeName(*spec.type)) : "any") + " keys=";
        for (const std::string& k : spec.keys) out += k + ";";
        break;
      }
      case OpKind::kIndexReady:
        out += "IndexReady " + op.index->spec.name + " declared=" + std::to_string(op.index->declared);
        break;
      case OpKind::kDropIndex:
        out += "DropIndex " + op.index->spec.name + " declared=" + std::to_string(op.index->declared);
        break;
      case OpKind::kUpsertVertex:
      case OpKind::kUpsertEdge:
      case OpKind::kExpectVertexProperty:
      case OpKind::kExpectEdgeProperty:
      case OpKind::kExpectVertex:
      case OpKind::kExpectEdge:
      case OpKind::kExpectKeyFree: out += "(never decoded)"; break;
    }
    out += "\n";
  }
  return out;
}

// A decoded group: its sequence range and batches, or the decoder's error.
inline std::string RenderGroup(SequenceNumber first, SequenceNumber last,
                               std::span<const std::byte> payload) {
  std::string out = "group " + std::to_string(first) + ".." + std::to_string(last) + "\n";
  Result<std::vector<wal::LoggedBatch>> batches = wal::DecodeGroup(payload);
  if (!batches.ok()) return out + "  undecodable: " + batches.status().ToString() + "\n";
  for (const wal::LoggedBatch& lb : *batches) out += RenderBatch(lb);
  return out;
}

inline std::string RenderPropBlock(const storage::GraphRoots& g, const storage::PropBlock* block) {
  std::string out = "{";
  for (std::uint32_t i = 0; i < storage::PropCount(block); ++i) {
    storage::PropInput p = storage::PropAt(block, i);
    out += std::string(g.keys->Name(p.key)) + "=" + test_util::Render(p.value) + ";";
  }
  return out + "}";
}

// Everything a loaded GraphRoots holds, as text: counters, names, every
// vertex and edge slot (dead ones too) with properties and degrees.
inline std::string DumpRoots(const storage::GraphRoots& g) {
  std::string out = "seq=" + std::to_string(g.sequence) + " Vlim=" + std::to_string(g.vertex_limit) +
                    " Elim=" + std::to_string(g.edge_limit) + " V=" + std::to_string(g.live_vertices) +
                    " E=" + std::to_string(g.live_edges) + "\n";
  auto names = [&out](const char* what, const storage::InternTable* t) {
    out += what;
    for (std::uint32_t i = 0; t != nullptr && i < t->size(); ++i) out += " " + std::string(t->Name(i));
    out += "\n";
  };
  names("labels:", g.labels);
  names("types:", g.types);
  names("keys:", g.keys);
  for (std::uint64_t id = 0; id < g.vertex_limit; ++id) {
    const storage::VertexSlot* v = storage::FindVertex(g, id);
    out += "v" + std::to_string(id);
    if (v == nullptr) {
      out += " removed\n";
      continue;
    }
    out += " " + std::string(g.labels->Name(v->label)) + " " + RenderPropBlock(g, v->props) +
           " deg=" + std::to_string(v->out_degree) + "/" + std::to_string(v->in_degree) + "\n";
  }
  for (std::uint64_t id = 0; id < g.edge_limit; ++id) {
    const storage::EdgeSlot* e = storage::FindEdge(g, id);
    out += "e" + std::to_string(id);
    if (e == nullptr) {
      out += " removed\n";
      continue;
    }
    out += " " + std::string(g.types->Name(e->type)) + " " + std::to_string(e->src()) + "->" +
           std::to_string(e->dst()) + " " + RenderPropBlock(g, storage::EdgeProps(g, id)) + "\n";
  }
  // Index definitions, if any, with their state and entry count.
  for (const index::PropertyIndex& p : g.catalog->indexes()) {
    out += "index " + p.def->name + (p.def->element == ElementKind::kVertex ? " vertices " : " edges ") +
           p.def->label + " keys=";
    for (const std::string& k : p.def->keys) out += k + ";";
    out += " kind=" + std::to_string(static_cast<int>(p.def->kind)) +
           " type=" + (p.def->type ? std::string(ValueTypeName(*p.def->type)) : "any") +
           " declared=" + std::to_string(p.def->declared) +
           (p.state == IndexState::kReady ? " ready" : " building") +
           " entries=" + std::to_string(p.root.count) + "\n";
  }
  return out;
}

// Calls fn(pos, length) for each block of checkpoint `bytes` (format 2 on),
// in file order: `pos` is the offset of the block's header, `length` its
// body's. fn may change the bytes of a block, not its length.
template <class Fn>
void ForEachCheckpointBlock(const std::string& bytes, Fn&& fn) {
  const std::size_t end = bytes.size() - checkpoint::kTrailerBytes;
  for (std::size_t pos = checkpoint::kHeaderBytes; pos + checkpoint::kBlockHeaderBytes <= end;) {
    std::uint32_t length;
    std::memcpy(&length, bytes.data() + pos + 4, 4);
    fn(pos, length);
    pos += checkpoint::kBlockHeaderBytes + length;
  }
}

// `bytes`, a checkpoint of format 2 on, with every block CRC (seeded with
// its header's CRC) and the trailer recomputed: as a writer would have
// sealed the blocks, so that only the reader's own checks can catch an
// edit. The header (and its CRC) is left as it is.
inline std::string ResealCheckpoint(std::string bytes) {
  const std::uint32_t seed = base::Crc32c(bytes.data(), checkpoint::kHeaderBytes);
  std::uint32_t file_crc = seed;
  ForEachCheckpointBlock(bytes, [&](std::size_t pos, std::uint32_t length) {
    std::uint32_t crc = base::Crc32cExtend(seed, bytes.data() + pos, 8);
    crc = base::Crc32cExtend(crc, bytes.data() + pos + checkpoint::kBlockHeaderBytes, length);
    std::memcpy(bytes.data() + pos + 8, &crc, 4);
    file_crc = base::Crc32cExtend(file_crc, &crc, 4);
  });
  std::memcpy(bytes.data() + bytes.size() - checkpoint::kTrailerBytes, &file_crc, 4);
  return bytes;
}

#ifdef QUIVER_TESTS_SOURCE_DIR
// The bytes of tests/golden/<name> (empty if it cannot be read). Only in
// the test binaries, which define QUIVER_TESTS_SOURCE_DIR (the fuzz seed
// maker includes this header too).
inline std::string ReadGoldenFile(const std::string& name) {
  std::ifstream in(std::filesystem::path(QUIVER_TESTS_SOURCE_DIR) / "golden" / name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
#endif  // QUIVER_TESTS_SOURCE_DIR

// Loads `file` as recovery does (a fresh chain, a version with private
// intern tables) on `threads` threads, then frees everything. On success
// `*dump` (if not null) receives DumpRoots of the loaded state.
inline Status LoadCheckpointForTest(std::span<const std::byte> file, checkpoint::Header* header,
                                    std::string* dump = nullptr, unsigned threads = 1) {
  auto* chain = new storage::VersionChain();
  storage::MutationContext ctx{1, nullptr, nullptr};
  storage::Version* v = chain->NewVersion(&ctx);
  storage::OwnInternTable(v->roots.labels, ctx);
  storage::OwnInternTable(v->roots.types, ctx);
  storage::OwnInternTable(v->roots.keys, ctx);
  Status s = checkpoint::LoadCheckpoint(file, v->roots, ctx, header, threads);
  if (s.ok() && dump != nullptr) *dump = DumpRoots(v->roots);
  chain->Abandon(v);
  chain->Shutdown();
  return s;
}

// Where each record of an intact segment lies.
struct RecordSpan {
  std::size_t offset = 0;       // of its header
  std::size_t payload_end = 0;  // offset + header + length
  // Where the next record that is not padding starts: payload_end rounded up
  // to 8, past the padding record that follows it, if any (format version
  // 3: a group's padding to the page boundary).
  std::size_t end = 0;
  std::size_t padding = 0;  // bytes of that padding record (0 if none)
};

// The records of a segment, padding records (the header's and each group's)
// left out: each one's padding is counted in the record before it.
inline std::vector<RecordSpan> RecordSpans(std::span<const std::byte> segment) {
  std::vector<RecordSpan> out;
  std::size_t pos = wal::kSegmentHeaderBytes;
  while (pos + wal::kRecordHeaderBytes <= segment.size()) {
    auto h = wal::ParseRecordHeader(segment.subspan(pos, wal::kRecordHeaderBytes));
    if (!h) break;
    const std::size_t end = pos + wal::kRecordHeaderBytes + wal::PaddedLength(h->length);
    if (pos + wal::kRecordHeaderBytes + h->length > segment.size()) break;
    if (h->type == wal::RecordType::kPadding) {
      if (!out.empty()) {
        out.back().end = end;
        out.back().padding = end - pos;
      }
      pos = end;
      continue;
    }
    out.push_back(RecordSpan{pos, pos + wal::kRecordHeaderBytes + h->length, end, 0});
    pos = end;
  }
  return out;
}

}  // namespace quiver::format_test

#endif  // QUIVER_TESTS_FORMAT_TEST_UTIL_H_
