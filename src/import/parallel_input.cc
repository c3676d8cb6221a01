// Importer: one file parsed on several threads (see importer.h and
// input_blocks.h). Only EVLP edge files take this path: their records
// never span a line break, and their rows touch nothing but the id maps,
// which are read-only once every vertex is in.
//
// Both passes cut the file the same way (pass 1 plans the blocks and
// keeps the plan) and run the blocks through a ChunkPipeline, whose write
// step runs on the calling thread in block order. Pass 1's workers only
// read: each keeps its block's row count, rejected rows (at most
// skip_bad_rows + 1: more cannot matter) and the first error that stopped
// its reading; the write step folds them in, in input order, so that the
// rows rejected, the error returned and the names' order are exactly those
// of one thread reading the whole file. Pass 2's workers encode their
// block's edges as checkpoint blocks, the first id of each block known
// from pass 1's counts; the write step appends them to the checkpoint.
#include <algorithm>
#include <thread>
#include <utility>

#include "base/strings.h"
#include "checkpoint/chunk_pipeline.h"
#include "import/importer.h"
#include "storage/prop_block.h"

namespace quiver::import {
namespace {

// Publishes a block's line count, or its failure, exactly once.
class PublishOnce {
 public:
  PublishOnce(LineBases& bases, std::size_t i) : bases_(bases), i_(i) {}
  ~PublishOnce() {
    if (!done_) bases_.Fail(i_);
  }
  PublishOnce(const PublishOnce&) = delete;
  PublishOnce& operator=(const PublishOnce&) = delete;
  void Publish(std::uint64_t lines) {
    bases_.Publish(i_, lines);
    done_ = true;
  }

 private:
  LineBases& bases_;
  const std::size_t i_;
  bool done_ = false;
};

}  // namespace

unsigned Importer::Threads() const {
  if (options_.threads != 0) return options_.threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

bool Importer::Splittable(std::size_t index) const {
  return options_.format == DataFormat::kEvlp && KindAt(index) == FileKind::kEdges && Threads() > 1;
}

CsvDialect Importer::DialectOf() const {
  const bool evlp = options_.format == DataFormat::kEvlp;
  return CsvDialect{evlp ? ' ' : options_.delimiter, !evlp};
}

Status Importer::FileChanged(const CsvReader& r, std::string_view what) const {
  return InternalError(base::StrCat(r.path(), ":", r.line(), ": the file changed during the import: ", what));
}

Status Importer::ResolveKeys(std::size_t index, const CsvReader& r, const Row& row,
                             std::vector<checkpoint::KeyedValue>* props) const {
  (void)index;
  props->clear();
  for (const Property& p : row.properties) {
    auto key = keys_.ids.find(p.key);
    if (key == keys_.ids.end()) return FileChanged(r, base::StrCat("a new property key '", p.key, "'"));
    props->push_back({key->second, storage::ViewOf(p.value)});
  }
  std::sort(props->begin(), props->end(),
            [](const checkpoint::KeyedValue& a, const checkpoint::KeyedValue& b) { return a.key < b.key; });
  return Status::Ok();
}

Result<Importer::EdgeRow> Importer::ResolveEdge(std::size_t index, const CsvReader& r, const Row& row,
                                                SpaceCache* cache,
                                                std::vector<checkpoint::KeyedValue>* props) const {
  QUIVER_RETURN_IF_ERROR(ResolveKeys(index, r, row, props));
  auto type = types_.ids.find(row.label);
  if (type == types_.ids.end()) return FileChanged(r, base::StrCat("a new edge type '", row.label, "'"));
  // On this path the id maps hold vertex ids (BulkWriteFile).
  const std::uint32_t s = Find(row.start, cache);
  const std::uint32_t e = Find(row.end, cache);
  if (s >= kRejectedEntry || e >= kRejectedEntry) return FileChanged(r, "an endpoint pass 1 did not see");
  return EdgeRow{type->second, s, e};
}

Status Importer::ValidateFileParallel(std::size_t index) {
  const std::string& path = FileAt(index).path;
  Schema schema;
  {
    QUIVER_ASSIGN_OR_RETURN(Input head, OpenInput(index));  // the schema, and the empty-file check
    schema = std::move(head.schema);
  }
  QUIVER_ASSIGN_OR_RETURN(std::vector<InputBlock> blocks, PlanBlocks(fs_, path, block_bytes_));
  struct Bad {
    std::uint64_t record_line, line, column;
    std::string reason, raw;
  };
  struct BlockResult {
    std::uint64_t first_line = 0;
    std::uint64_t rows = 0;
    std::vector<Bad> bad;
    Status error;
    NameTable types, keys;  // bulk: the names in the order first seen
  };
  std::vector<BlockResult> results(blocks.size());
  LineBases bases(blocks.size());
  const std::size_t enough = options_.skip_bad_rows + 1;
  const CsvDialect dialect = DialectOf();
  auto work = [&](std::size_t i, checkpoint::EncodedChunk*) -> Status {
    BlockResult& out = results[i];
    PublishOnce publish(bases, i);
    Result<std::string> bytes = ReadBlock(fs_, path, blocks[i]);
    if (!bytes.ok()) {
      out.error = bytes.status();
      return Status::Ok();
    }
    publish.Publish(CountLines(*bytes));
    std::optional<std::uint64_t> first_line = bases.Wait(i);
    if (!first_line) return Status::Ok();  // an earlier block failed; its error is the one
    out.first_line = *first_line;
    std::unique_ptr<CsvReader> reader = CsvReader::OverBytes(path, std::move(*bytes), dialect, *first_line);
    RowBuilder builder(schema, FileAt(index).label);
    SpaceCache cache;
    Row row;
    RowIssue issue;
    while (out.bad.size() < enough) {
      Result<bool> more = reader->Next();
      if (!more.ok()) {
        out.error = more.status();
        break;
      }
      if (!*more) break;
      ++out.rows;
      const CsvReader& r = *reader;
      if (!builder.Build(r, &row, &issue) || !EndpointsKnown(row, &cache, &issue)) {
        out.bad.push_back(
            {r.line(), issue.line, issue.column, std::move(issue.reason), std::string(r.raw())});
        continue;
      }
      if (bulk()) {
        out.types.Intern(row.label);
        for (const Property& p : row.properties) out.keys.Intern(p.key);
      }
    }
    return Status::Ok();
  };
  std::size_t next = 0;
  auto fold = [&](const checkpoint::EncodedChunk&) -> Status {
    BlockResult b = std::move(results[next]);
    results[next] = BlockResult{};
    const InputBlock block = blocks[next++];
    rows_[index] += b.rows;
    for (Bad& bad : b.bad)
      QUIVER_RETURN_IF_ERROR(
          Reject(index, bad.record_line, bad.line, bad.column, std::move(bad.reason), bad.raw));
    for (const std::string& name : b.types.names) types_.Intern(name);
    for (const std::string& name : b.keys.names) keys_.Intern(name);
    if (!b.error.ok()) return b.error;
    planned_[index].push_back({block, b.first_line, b.rows - b.bad.size()});
    return Status::Ok();
  };
  const unsigned threads = Threads();
  checkpoint::ChunkPipeline pipeline(blocks.size(), threads, 2 * std::size_t{threads}, work, fold);
  Status s = pipeline.Run();
  if (!s.ok()) planned_[index].clear();
  return s;
}

Status Importer::BulkWriteEdgesParallel(std::size_t index, checkpoint::CheckpointSink& sink,
                                        std::uint64_t first_id) {
  const std::string& path = FileAt(index).path;
  Schema schema;
  {
    QUIVER_ASSIGN_OR_RETURN(Input head, OpenInput(index));
    schema = std::move(head.schema);
  }
  const std::vector<PlannedBlock>& blocks = planned_[index];
  std::vector<std::uint64_t> first_ids(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    first_ids[i] = first_id;
    first_id += blocks[i].edges;
  }
  const std::vector<std::uint64_t>& rejected = rejected_lines_[index];
  const CsvDialect dialect = DialectOf();
  auto encode = [&](std::size_t i, checkpoint::EncodedChunk* out) -> Status {
    const PlannedBlock& b = blocks[i];
    QUIVER_ASSIGN_OR_RETURN(std::string bytes, ReadBlock(fs_, path, b.block));
    std::unique_ptr<CsvReader> reader = CsvReader::OverBytes(path, std::move(bytes), dialect, b.first_line);
    checkpoint::ElementStream stream(checkpoint::BlockKind::kEdges, sink.seed(), out, first_ids[i]);
    RowBuilder builder(schema, FileAt(index).label);
    SpaceCache cache;
    Row row;
    RowIssue issue;
    std::vector<checkpoint::KeyedValue> props;
    auto next_rejected = std::lower_bound(rejected.begin(), rejected.end(), b.first_line);
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(bool more, reader->Next());
      if (!more) break;
      const CsvReader& r = *reader;
      if (next_rejected != rejected.end() && *next_rejected == r.line()) {
        ++next_rejected;
        continue;
      }
      if (!builder.Build(r, &row, &issue)) return FileChanged(r, issue.reason);
      QUIVER_ASSIGN_OR_RETURN(EdgeRow edge, ResolveEdge(index, r, row, &cache, &props));
      QUIVER_RETURN_IF_ERROR(stream.Edge(edge.type, edge.source, edge.target, props));
    }
    QUIVER_RETURN_IF_ERROR(stream.Close());
    if (stream.next_id() != first_ids[i] + b.edges)
      return InternalError(base::StrCat(path, ": the file changed during the import (a block holds ",
                                        stream.next_id() - first_ids[i], " edges, ", b.edges, " at first)"));
    return Status::Ok();
  };
  auto write = [&](const checkpoint::EncodedChunk& chunk) { return sink.AppendChunk(chunk); };
  const unsigned threads = Threads();
  checkpoint::ChunkPipeline pipeline(blocks.size(), threads, 2 * std::size_t{threads}, encode, write);
  return pipeline.Run();
}

}  // namespace quiver::import
