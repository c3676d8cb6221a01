#include "checkpoint/checkpoint_writer.h"

#include <cstring>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "storage/prop_block.h"
#include "wal/value_codec.h"

namespace quiver::checkpoint {
namespace {

// Accumulates one kind's elements into blocks of about kTargetBlockBytes
// and appends each finished block to the file.
class BlockStream {
 public:
  BlockStream(env::WritableFile* file, WriteStats* stats) : file_(file), stats_(stats), w_(&payload_) {}

  base::ByteWriter& writer() { return w_; }

  // Starts a block of `kind` whose first element is `first_id`. Elements are
  // then written with writer(); EndElement closes each.
  void Begin(BlockKind kind, std::uint64_t first_id) {
    kind_ = kind;
    first_id_ = first_id;
    count_ = 0;
    elements_.clear();
  }
  // Marks the end of one element; flushes when the block is full.
  Status EndElement() {
    ++count_;
    if (elements_.size() >= kTargetBlockBytes) return Flush();
    return Status::Ok();
  }
  // Writes the pending block (if it holds elements) and starts the next.
  Status Flush() {
    if (count_ == 0) return Status::Ok();
    payload_.clear();
    w_.PutVarint(first_id_);
    w_.PutVarint(count_);
    payload_.insert(payload_.end(), elements_.begin(), elements_.end());
    QUIVER_RETURN_IF_ERROR(WriteBlock(kind_, payload_));
    first_id_ += count_;
    count_ = 0;
    elements_.clear();
    return Status::Ok();
  }
  Status WriteBlock(BlockKind kind, const std::vector<std::byte>& payload) {
    if (payload.size() > UINT32_MAX)
      return ResourceExhaustedError("checkpoint: one element encodes to over 4 GiB");
    std::byte header[kBlockHeaderBytes] = {};
    header[0] = static_cast<std::byte>(kind);
    auto length = static_cast<std::uint32_t>(payload.size());
    std::memcpy(header + 4, &length, 4);
    std::uint32_t crc = base::Crc32cExtend(base::Crc32c(header, 8), payload.data(), payload.size());
    std::memcpy(header + 8, &crc, 4);
    QUIVER_RETURN_IF_ERROR(file_->Append(header));
    QUIVER_RETURN_IF_ERROR(file_->Append(payload));
    stats_->bytes += kBlockHeaderBytes + payload.size();
    ++stats_->blocks;
    return Status::Ok();
  }
  // Elements are encoded here first, then framed by Flush.
  base::ByteWriter element_writer() { return base::ByteWriter(&elements_); }

 private:
  env::WritableFile* file_;
  WriteStats* stats_;
  std::vector<std::byte> payload_;
  std::vector<std::byte> elements_;
  base::ByteWriter w_;
  BlockKind kind_ = BlockKind::kLabels;
  std::uint64_t first_id_ = 0;
  std::uint64_t count_ = 0;
};

void PutProps(base::ByteWriter& w, const storage::PropBlock* props) {
  std::uint32_t n = storage::PropCount(props);
  w.PutVarint(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    storage::PropInput p = storage::PropAt(props, i);
    w.PutVarint(p.key);
    wal::EncodeValue(w, p.value);
  }
}

Status WriteNames(BlockStream& s, BlockKind kind, const storage::InternTable* table) {
  s.Begin(kind, 0);
  for (std::uint32_t id = 0; id < table->size(); ++id) {
    s.element_writer().PutString(table->Name(id));
    QUIVER_RETURN_IF_ERROR(s.EndElement());
  }
  return s.Flush();
}

Status WriteVertices(BlockStream& s, const storage::GraphRoots& g) {
  s.Begin(BlockKind::kVertices, 0);
  for (std::uint64_t id = 0; id < g.vertex_limit; ++id) {
    base::ByteWriter w = s.element_writer();
    const storage::VertexSlot* v = storage::FindVertex(g, id);
    if (v == nullptr) {
      w.PutU8(0);
    } else {
      w.PutU8(1);
      w.PutVarint(v->label);
      PutProps(w, v->props);
    }
    QUIVER_RETURN_IF_ERROR(s.EndElement());
  }
  return s.Flush();
}

Status WriteEdges(BlockStream& s, const storage::GraphRoots& g) {
  s.Begin(BlockKind::kEdges, 0);
  for (std::uint64_t id = 0; id < g.edge_limit; ++id) {
    base::ByteWriter w = s.element_writer();
    const storage::EdgeSlot* e = storage::FindEdge(g, id);
    if (e == nullptr) {
      w.PutU8(0);
    } else {
      w.PutU8(1);
      w.PutVarint(e->type);
      w.PutVarint(e->src());
      w.PutVarint(e->dst());
      PutProps(w, storage::EdgeProps(g, id));
    }
    QUIVER_RETURN_IF_ERROR(s.EndElement());
  }
  return s.Flush();
}

Status WriteBody(env::WritableFile* file, const wal::Uuid& uuid, const storage::GraphRoots& g,
                 WriteStats* stats) {
  std::byte header[kHeaderBytes] = {};
  auto put = [&header](std::size_t at, auto v) { std::memcpy(header + at, &v, sizeof(v)); };
  put(0, kMagic);
  put(8, kFormatVersion);
  put(12, static_cast<std::uint32_t>(kHeaderBytes));
  std::memcpy(header + 16, uuid.data(), 16);
  put(32, g.sequence);
  put(40, g.vertex_limit);
  put(48, g.edge_limit);
  put(60, base::Crc32c(header, 60));
  QUIVER_RETURN_IF_ERROR(file->Append(header));
  stats->bytes += kHeaderBytes;

  BlockStream s(file, stats);
  QUIVER_RETURN_IF_ERROR(WriteNames(s, BlockKind::kLabels, g.labels));
  QUIVER_RETURN_IF_ERROR(WriteNames(s, BlockKind::kEdgeTypes, g.types));
  QUIVER_RETURN_IF_ERROR(WriteNames(s, BlockKind::kPropertyKeys, g.keys));
  QUIVER_RETURN_IF_ERROR(WriteVertices(s, g));
  QUIVER_RETURN_IF_ERROR(WriteEdges(s, g));
  std::vector<std::byte> end;
  base::ByteWriter w(&end);
  w.PutVarint(g.live_vertices);
  w.PutVarint(g.live_edges);
  w.PutVarint(stats->blocks);
  return s.WriteBlock(BlockKind::kEnd, end);
}

}  // namespace

Status WriteCheckpoint(env::FileSystem* fs, const std::string& dir, const wal::Uuid& uuid,
                       const storage::GraphRoots& roots, WriteStats* stats) {
  *stats = WriteStats{};
  std::string name = CheckpointFileName(roots.sequence);
  std::string tmp = env::JoinPath(dir, name + ".tmp");
  auto file = fs->OpenWritable(tmp, env::OpenMode::kTruncate);
  if (!file.ok()) return file.status();
  Status s = WriteBody(file->get(), uuid, roots, stats);
  if (s.ok()) s = (*file)->Sync();
  Status closed = (*file)->Close();
  if (s.ok()) s = closed;
  if (s.ok()) s = fs->Rename(tmp, env::JoinPath(dir, name));
  if (s.ok()) return fs->SyncDir(dir);
  fs->Remove(tmp).IgnoreError();  // best effort: recovery also removes stale .tmp files
  return s;
}

}  // namespace quiver::checkpoint
