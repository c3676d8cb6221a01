// Importer, pass 2 into a new graph (the bulk path): see importer.h.
//
// Into an existing empty graph (ReadEmptyGraph says which are), the same
// checkpoint comes after the graph's last commit, under its graph id: a
// crash before its rename leaves the empty graph, after it the whole
// import, which Open finds past the log's end (the next segment starts
// after it). Then the older checkpoints and the log are removed
// (RemoveEmptyGraphFiles), and the identity file stays.
//
// The new graph's whole state goes into its first checkpoint, written as
// the rows are read: names, index definitions, then every vertex and edge
// in id order, cut into blocks as the checkpoint writer cuts a version
// (a chunk of kChunkIds ids at a time). Graph::Open then loads it with the
// checkpoint loader's parallel build: the tables, the adjacency arrays,
// the label and type sets and the id indexes. No WAL record is written;
// the graph's log starts at the first commit after the import.
//
// Order of the files, as Graph::Backup writes them: the checkpoint (its
// .tmp, fdatasync, rename, directory fsync), then the identity file, then
// a sync of every ancestor. Until the identity file is there the directory
// holds no graph that Open would take over half-made: a crash before the
// checkpoint's rename leaves a .tmp (removed by the next writable Open,
// and the directory opens as a new empty graph); a crash after it leaves
// a whole checkpoint, which Open adopts. On an error every file written is
// removed (graphdir::RemoveUnlessDone), so the directory is as empty as it
// was found.
#include <algorithm>
#include <utility>

#include "base/strings.h"
#include "checkpoint/checkpoint_writer.h"
#include "checkpoint/chunk_encoder.h"
#include "checkpoint/index_block.h"
#include "graph_dir.h"
#include "graph_impl.h"
#include "import/fast_lines.h"
#include "import/importer.h"
#include "import/input_blocks.h"
#include "index/index_keys.h"
#include "recovery.h"
#include "storage/prop_block.h"

namespace quiver::import {
namespace {

// The sequence number of a bulk-built graph's checkpoint: the state after
// one batch, so that the id indexes (declared at 1) are declared at or
// before it, as the format requires.
constexpr std::uint64_t kBulkSequence = 1;

}  // namespace

// Streams one kind of element into the checkpoint, a chunk at a time.
class BulkSink {
 public:
  BulkSink(checkpoint::CheckpointSink& sink, checkpoint::BlockKind kind, std::uint64_t first_id)
      : sink_(sink), stream_(kind, sink.seed(), &chunk_, first_id) {}

  Status Vertex(std::uint32_t label, std::span<const checkpoint::KeyedValue> props) {
    QUIVER_RETURN_IF_ERROR(stream_.Vertex(label, props));
    return MaybeFlush();
  }
  Status Edge(std::uint32_t type, std::uint64_t source, std::uint64_t target,
              std::span<const checkpoint::KeyedValue> props) {
    QUIVER_RETURN_IF_ERROR(stream_.Edge(type, source, target, props));
    return MaybeFlush();
  }
  // Appends what is left; returns how many elements went through.
  Result<std::uint64_t> Finish() {
    QUIVER_RETURN_IF_ERROR(Flush());
    return stream_.next_id();
  }
  std::uint64_t next_id() const { return stream_.next_id(); }

 private:
  // At every kChunkIds-th id, as the checkpoint writer cuts, and whenever
  // the closed blocks reach kFlushBytes: large properties must not pile up
  // a chunk's worth of blocks in memory.
  Status MaybeFlush() {
    return stream_.next_id() % checkpoint::kChunkIds == 0 || chunk_.block_bytes >= kFlushBytes ? Flush()
                                                                                               : Status::Ok();
  }
  static constexpr std::uint64_t kFlushBytes = std::uint64_t{8} << 20;
  Status Flush() {
    QUIVER_RETURN_IF_ERROR(stream_.Close());
    QUIVER_RETURN_IF_ERROR(sink_.AppendChunk(chunk_));
    stream_.Restart();
    return Status::Ok();
  }

  checkpoint::CheckpointSink& sink_;
  checkpoint::EncodedChunk chunk_;
  checkpoint::ElementStream stream_;
};

Status Importer::BulkWriteFile(std::size_t index, BulkSink& out) {
  if (FastVerticesOk(index)) return BulkWriteVerticesFast(index, out);
  const bool vertices = KindAt(index) == FileKind::kVertices;
  std::vector<checkpoint::KeyedValue> props;
  return ForEachAcceptedRow(index, [&](const CsvReader& r, const Row& row, const Schema& schema) -> Status {
    if (!vertices) {
      QUIVER_ASSIGN_OR_RETURN(EdgeRow edge, ResolveEdge(r, row, &cache_, &props));  // the keys too
      return out.Edge(edge.type, edge.source, edge.target, props);
    }
    return BulkVertex(index, r, row, schema, out, &props);
  });
}

Status Importer::BulkVertex(std::size_t index, const CsvReader& r, const Row& row, const Schema& schema,
                            BulkSink& out, std::vector<checkpoint::KeyedValue>* props) {
  QUIVER_ASSIGN_OR_RETURN(std::uint32_t label,
                          ResolveVertex(index, r, row, schema, out.next_id(), &cache_, props));
  return out.Vertex(label, *props);
}

Result<std::uint32_t> Importer::ResolveVertex(std::size_t index, const CsvReader& r, const Row& row,
                                              const Schema& schema, std::uint64_t id, SpaceCache* cache,
                                              std::vector<checkpoint::KeyedValue>* props) const {
  QUIVER_RETURN_IF_ERROR(ResolveKeys(r, row, props));
  auto label = labels_.ids.find(row.label);
  if (label == labels_.ids.end()) return FileChanged(r, base::StrCat("a new label '", row.label, "'"));
  // The vertex id pass 1 gave this row's id, or the file changed (an id
  // twice, or moved).
  if (row.has_id && Find(row.id, cache) != id) return FileChanged(r, "an id pass 1 did not see here");
  QUIVER_RETURN_IF_ERROR(CheckIdKeyOwner(index, r, label->second, schema, row, *props));
  return label->second;
}

Status Importer::BulkWriteVerticesFast(std::size_t index, BulkSink& out) {
  const std::string& path = FileAt(index).path;
  Schema schema;
  {
    QUIVER_ASSIGN_OR_RETURN(Input head, OpenInput(index));
    schema = std::move(head.schema);
  }
  QUIVER_ASSIGN_OR_RETURN(std::vector<InputBlock> blocks, PlanBlocks(fs_, path, block_bytes_));
  RowBuilder builder(schema, FileAt(index).label);
  Row row;
  std::vector<checkpoint::KeyedValue> props;
  RejectedLines rejected(rejected_lines_[index], 0);
  auto skip = [&](std::uint64_t line) { return rejected.Skip(line); };
  // What a plain line holds: the file's label and, unless evlp_id_key is
  // empty, its id under that key (both interned in pass 1 if any row was
  // accepted; else every line takes the generic path, which says why).
  const IdMap* map = FindSpace("");
  auto label = labels_.ids.find(FileAt(index).label);
  const bool kept = !options_.evlp_id_key.empty();
  auto key = kept ? keys_.ids.find(options_.evlp_id_key) : keys_.ids.end();
  const bool plain = map != nullptr && schema.columns.size() == 1 && label != labels_.ids.end() &&
                     (!kept || key != keys_.ids.end());
  auto generic = [&](std::string_view text, std::uint64_t first_line) -> Status {
    return ForEachRecordIn(path, text, first_line, builder, &row, skip,
                           [&](const CsvReader& r, const Row& built) {
                             return BulkVertex(index, r, built, schema, out, &props);
                           });
  };
  std::uint64_t line = 1;
  for (const InputBlock& block : blocks) {
    QUIVER_ASSIGN_OR_RETURN(std::string bytes, ReadBlock(fs_, path, block));
    QUIVER_RETURN_IF_ERROR(ForEachLine<FastVertex>(
        bytes, line,
        [&](const char* p, const char* end, FastVertex* v) {
          return plain ? ParseFastVertex(p, end, v) : nullptr;
        },
        [&](const FastVertex& v) { map->PrefetchNumber(v.id); },
        [&](const FastVertex& v) -> Status {
          if (skip(v.line)) return Status::Ok();
          if (map->FindNumber(v.id) != out.next_id()) return generic(v.text, v.line);  // gives the error
          const checkpoint::KeyedValue id{kept ? key->second : 0, PropertyView(v.id)};
          return out.Vertex(label->second, {&id, kept ? 1u : 0u});
        },
        generic));
    line += CountLines(bytes);
    ReportProgress(index, block.offset + block.length, line - 1);  // one record a line (plain EVLP)
  }
  return Status::Ok();
}

// The id indexes the bulk path declares (ImportOptions::create_id_indexes):
// one per (label, key) of the id spaces that keep their id, ready, declared
// at `sequence` (the checkpoint's); the loader builds their contents at Open.
Status Importer::PlanIdIndexes(std::uint64_t sequence) {
  if (!options_.create_id_indexes) return Status::Ok();
  // Names in the order an import through batches interns them, so both
  // paths give the same ids: the indexes' labels and keys first (it
  // creates them before its first write), then pass 1's order.
  NameTable labels, keys;
  for (const IdSpace& space : spaces_) {
    if (space.key.empty()) continue;
    labels.Intern(space.label);
    keys.Intern(space.key);
  }
  for (const std::string& name : labels_.names) labels.Intern(name);
  for (const std::string& name : keys_.names) keys.Intern(name);
  labels_ = std::move(labels);
  keys_ = std::move(keys);
  for (const IdSpace& space : spaces_) {
    if (space.key.empty()) continue;
    const ValueType type = space.type == FieldType::kInt ? ValueType::kInt64 : ValueType::kString;
    const std::uint32_t label = labels_.Intern(space.label);
    const std::uint32_t key = keys_.Intern(space.key);
    auto same = std::find_if(id_indexes_.begin(), id_indexes_.end(), [&](const index::PropertyIndex& p) {
      return p.def->label_id == label && p.def->key_ids[0] == key;
    });
    if (same != id_indexes_.end()) {
      if (*same->def->type != type)
        return InvalidArgumentError(base::StrCat("import: the ", space.label, " ids kept as '", space.key,
                                                 "' are ", ValueTypeName(*same->def->type),
                                                 " in one id space and ", ValueTypeName(type),
                                                 " in another; one unique index cannot hold both"));
      continue;
    }
    auto def = std::make_shared<index::IndexDef>();
    def->name = base::StrCat(space.label, ".", space.key);
    // "A.b" + "c" and "A" + "b.c" name one index: through batches the
    // second CreateIndex is refused, before anything is written; so here.
    for (const index::PropertyIndex& p : id_indexes_) {
      if (p.def->name == def->name)
        return AlreadyExistsError(base::StrCat("import: the id indexes of ", p.def->label, " (",
                                               p.def->keys[0], ") and of ", space.label, " (", space.key,
                                               ") would both be named '", def->name, "'"));
    }
    def->element = ElementKind::kVertex;
    def->label = space.label;
    def->label_id = label;
    def->keys = {space.key};
    def->key_ids = {key};
    def->kind = IndexKind::kUnique;
    def->type = type;
    def->declared = sequence;
    def->key_width = index::KeyWidthFor(def->Spec());
    index::PropertyIndex p;
    p.state = IndexState::kReady;
    p.root.key_width = def->key_width;
    p.def = std::move(def);
    id_indexes_.push_back(std::move(p));
  }
  return Status::Ok();
}

// With id indexes, a vertex may hold an indexed key only as the id its own
// row gave it: a value from an ordinary column could repeat another
// vertex's id, and the new graph's unique index would refuse to load.
Status Importer::CheckIdKeyOwner(std::size_t index, const CsvReader& r, std::uint32_t label,
                                 const Schema& schema, const Row& row,
                                 std::span<const checkpoint::KeyedValue> props) const {
  for (const index::PropertyIndex& p : id_indexes_) {
    if (p.def->label_id != label) continue;
    const std::uint32_t key = p.def->key_ids[0];
    const bool holds = std::any_of(props.begin(), props.end(),
                                   [&](const checkpoint::KeyedValue& v) { return v.key == key; });
    if (!holds) continue;
    if (row.has_id && schema.columns[schema.id].name == p.def->keys[0]) continue;
    return PositionError(StatusCode::kInvalidArgument, FileAt(index).path, r.line(), 1,
                         base::StrCat("a ", p.def->label, " holds '", p.def->keys[0],
                                      "' from an ordinary column, but that key keeps the ", p.def->label,
                                      " ids of another file (create_id_indexes needs it to hold ids only)"));
  }
  return Status::Ok();
}

std::vector<std::string> Importer::NewGraphLeftovers() {
  const std::string checkpoint = checkpoint::CheckpointFileName(kBulkSequence);
  return {graphdir::kLockFileName, checkpoint + std::string(graphdir::kTmpSuffix),
          std::string(graphdir::kIdentityFileName) + std::string(graphdir::kTmpSuffix), "lost+found"};
}

namespace {

// Whether Inspect found a graph that the bulk path may take if it is
// empty: one with an identity file (or only that), or one from before the
// identity file (which Open adopts).
bool HoldsGraph(const graphdir::DirState& state) {
  return state.identity || state.kind == graphdir::DirKind::kLegacy;
}

}  // namespace

Status Importer::CheckBulkTarget() {
  if (new_dir_.empty()) return InvalidArgumentError("import: the new graph's directory path is empty");
  QUIVER_ASSIGN_OR_RETURN(graphdir::DirState state, graphdir::Inspect(fs_, new_dir_));
  // A graph: read now, so one that holds elements is refused before the
  // input is read; read again under its LOCK before anything is written.
  if (HoldsGraph(state)) return ReadEmptyGraph(state).status();
  return graphdir::CheckEmptyOrMissing(fs_, new_dir_, "import", kNewGraphRule, NewGraphLeftovers()).status();
}

// An existing graph may take the bulk path only if it holds nothing an
// import could collide with: no element and no id ever used (a removed
// element's id stays retired), no index, no import cut short, no damaged
// newest checkpoint. Read as a read-only Open reads it (nothing changes);
// the caller holds LOCK, so no writer runs meanwhile.
Result<Importer::EmptyGraph> Importer::ReadEmptyGraph(const graphdir::DirState& state) {
  Options read;
  read.read_only = true;
  // What a read-only Open refuses before it reads a file: a newer or
  // damaged identity file, a newest segment SEGMENTS names that is gone, a
  // file of a newer format.
  read.create_if_missing = state.kind == graphdir::DirKind::kEmpty;
  QUIVER_RETURN_IF_ERROR(GraphImpl::CheckDirectory(read, new_dir_, state, fs_));
  QUIVER_ASSIGN_OR_RETURN(RecoveredState rs, Recover(fs_, new_dir_, read));
  struct ChainGuard {
    storage::VersionChain* chain;
    ~ChainGuard() { chain->Shutdown(); }
  } guard{rs.chain};
  const storage::GraphRoots& g = rs.chain->head()->roots;
  auto refuse = [&](std::string_view why) {
    return FailedPreconditionError(
        base::StrCat("import: ", new_dir_, " holds a graph that ", why, "; ", kNewGraphRule,
                     " "
                     "(into this one, import through batches: quiver::Import on the open graph)"));
  };
  if (rs.import_journal)
    return FailedPreconditionError(base::StrCat("import: ", new_dir_,
                                                " holds an import cut short: open the graph once (which "
                                                "undoes it), then import again"));
  if (!rs.indexes_to_drop.empty() || rs.stats.used_previous_checkpoint)
    return FailedPreconditionError(base::StrCat("import: ", new_dir_,
                                                rs.stats.used_previous_checkpoint
                                                    ? " holds a damaged newest checkpoint"
                                                    : " holds indexes its data violates",
                                                ": open the graph once, then import again"));
  if (g.vertex_limit != 0 || g.edge_limit != 0) return refuse("has held elements");
  if (!g.catalog->indexes().empty()) return refuse("declares indexes");
  return EmptyGraph{.uuid = rs.uuid, .sequence = g.sequence};
}

// Once the import's checkpoint is durable, the empty graph's older
// checkpoints and its log go, so that the directory is what a new graph's
// import leaves: no checkpoint to fall back to if the import's is damaged
// (Open reports Corruption rather than the empty graph), and no log that
// ends before the import and would show a hole at its sequence to Verify
// and the change feed. In an order where every crash leaves a graph that
// opens with the import: the older checkpoints, then SEGMENTS (so that it
// never names a removed segment), then the segments, each step synced.
// Best effort: the import is durable already, and what stays is a graph
// that opens with it (its next checkpoints remove the rest).
void Importer::RemoveEmptyGraphFiles(std::uint64_t sequence) {
  Result<std::vector<std::string>> names = fs_->ListDir(new_dir_);
  if (!names.ok()) return;
  auto remove = [&](auto matches) {
    bool any = false;
    for (const std::string& name : *names) {
      if (!matches(name)) continue;
      if (!fs_->Remove(env::JoinPath(new_dir_, name)).ok()) return false;
      any = true;
    }
    return !any || fs_->SyncDir(new_dir_).ok();
  };
  if (!remove([&](const std::string& n) {
        const std::optional<std::uint64_t> c = checkpoint::ParseCheckpointFileName(n);
        return c && *c < sequence;
      }))
    return;
  if (!remove([](const std::string& n) { return n == graphdir::kSegmentsFileName; })) return;
  remove([](const std::string& n) { return wal::ParseSegmentFileName(n).has_value(); });
}

Status Importer::BulkWrite() {
  StartProgress("loading");
  // Checked before anything is written (declared again below if the
  // checkpoint comes after an existing graph's commits).
  QUIVER_RETURN_IF_ERROR(PlanIdIndexes(kBulkSequence));
  // The id limits, from pass 1's counts: every row read but the rejected.
  std::uint64_t limits[2] = {0, 0};
  for (std::size_t i = 0; i < FileCount(); ++i)
    limits[KindAt(i) == FileKind::kVertices ? 0 : 1] += rows_[i] - rejected_lines_[i].size();
  QUIVER_RETURN_IF_ERROR(CheckBulkTarget());
  QUIVER_ASSIGN_OR_RETURN(bool exists, fs_->Exists(new_dir_));
  if (!exists) QUIVER_RETURN_IF_ERROR(graphdir::CreateDirDurably(fs_, new_dir_));
  // LOCK, held until the graph is whole, as a writable Open holds it: an
  // Open of the directory meanwhile is refused, and cannot make a graph
  // there that this import would then write into (or remove the files of).
  const std::string lock_path = env::JoinPath(new_dir_, graphdir::kLockFileName);
  Result<std::unique_ptr<env::FileLock>> lock = fs_->LockFile(lock_path, env::LockMode::kExclusive);
  if (!lock.ok())
    return Status(lock.status().code(), base::StrCat("import: ", new_dir_, ": ", lock.status().message()));
  // Looked at again under the lock: an Open may have made a graph there
  // since, or written into the one found.
  QUIVER_ASSIGN_OR_RETURN(graphdir::DirState state, graphdir::Inspect(fs_, new_dir_));
  std::optional<EmptyGraph> existing;
  if (HoldsGraph(state)) {
    QUIVER_ASSIGN_OR_RETURN(existing, ReadEmptyGraph(state));
  } else {
    QUIVER_RETURN_IF_ERROR(
        graphdir::CheckEmptyOrMissing(fs_, new_dir_, "import", kNewGraphRule, NewGraphLeftovers()).status());
  }
  // Into an empty graph: the checkpoint after its last commit, under its
  // id, so that its log stays its own (Open sees a checkpoint past the log's
  // end and starts the next segment after it).
  const std::uint64_t sequence = existing ? existing->sequence + 1 : kBulkSequence;
  if (sequence != kBulkSequence) {
    id_indexes_.clear();
    QUIVER_RETURN_IF_ERROR(PlanIdIndexes(sequence));
  }
  // LOCK stays, as a writable Open leaves it: removing it under a waiting
  // locker would let two writers in (the file it holds is no longer LOCK).
  graphdir::RemoveUnlessDone remove_written(fs_, new_dir_, sequence, /*with_identity=*/!existing);
  const checkpoint::Header header{.uuid = existing ? existing->uuid : NewGraphUuid(),
                                  .sequence = sequence,
                                  .vertex_limit = limits[0],
                                  .edge_limit = limits[1]};
  auto body = [&](checkpoint::CheckpointSink& sink) -> Status {
    checkpoint::EncodedChunk names;
    for (auto [kind, table] : {std::pair{checkpoint::BlockKind::kLabels, &labels_},
                               {checkpoint::BlockKind::kEdgeTypes, &types_},
                               {checkpoint::BlockKind::kPropertyKeys, &keys_}}) {
      QUIVER_RETURN_IF_ERROR(checkpoint::EncodeNames(kind, table->names, sink.seed(), &names));
      QUIVER_RETURN_IF_ERROR(sink.AppendChunk(names));
    }
    if (!id_indexes_.empty()) {
      std::vector<std::byte> block;
      QUIVER_RETURN_IF_ERROR(checkpoint::AppendBlock(checkpoint::BlockKind::kIndexDefinitions,
                                                     checkpoint::EncodeIndexBlock(id_indexes_), sink.seed(),
                                                     &block));
      QUIVER_RETURN_IF_ERROR(sink.AppendBlock(block));
    }
    std::uint64_t written[2] = {0, 0};
    for (std::size_t i = 0; i < spec_.vertices.size(); ++i) {
      if (!planned_[i].empty()) {
        QUIVER_ASSIGN_OR_RETURN(written[0], BulkWriteVerticesParallel(i, sink, written[0]));
        continue;
      }
      BulkSink out(sink, checkpoint::BlockKind::kVertices, written[0]);
      QUIVER_RETURN_IF_ERROR(BulkWriteFile(i, out));
      QUIVER_ASSIGN_OR_RETURN(written[0], out.Finish());
    }
    for (std::size_t i = spec_.vertices.size(); i < FileCount(); ++i) {
      if (!planned_[i].empty()) {
        QUIVER_RETURN_IF_ERROR(BulkWriteEdgesParallel(i, sink, written[1]));
        for (const PlannedBlock& b : planned_[i]) written[1] += b.edges;
        continue;
      }
      BulkSink out(sink, checkpoint::BlockKind::kEdges, written[1]);
      QUIVER_RETURN_IF_ERROR(BulkWriteFile(i, out));
      QUIVER_ASSIGN_OR_RETURN(written[1], out.Finish());
    }
    if (written[0] != limits[0] || written[1] != limits[1])
      return InternalError(base::StrCat("import: the files changed during the import (", written[0],
                                        " vertices and ", written[1], " edges read again, ", limits[0],
                                        " and ", limits[1], " at first)"));
    return sink.AppendEnd(written[0], written[1]);
  };
  checkpoint::WriteStats ws;
  Status s = checkpoint::WriteCheckpointFile(fs_, new_dir_, header, body, &ws);
  // The identity file last: until it is there, an import cut short is no
  // graph. (An existing graph's stays as it is.)
  if (s.ok() && !existing) s = graphdir::WriteIdentity(fs_, new_dir_);
  if (s.ok()) s = graphdir::SyncAncestors(fs_, new_dir_);
  if (!s.ok()) return s;
  remove_written.Done();
  if (existing) RemoveEmptyGraphFiles(sequence);
  stats_.vertices = limits[0];
  stats_.edges = limits[1];
  stats_.checkpoint_bytes = ws.bytes;
  for (const index::PropertyIndex& p : id_indexes_) stats_.indexes_created.push_back(p.def->name);
  return Status::Ok();
}

}  // namespace quiver::import
