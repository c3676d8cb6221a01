// Importer: one edge file parsed on several threads (see importer.h and
// input_blocks.h; vertex files: parallel_vertices.cc). Edge rows touch
// nothing but the id maps, which are read-only once every vertex is in.
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
#include <charconv>
#include <cmath>
#include <cstring>
#include <thread>
#include <utility>

#include "base/cpus.h"
#include "base/strings.h"
#include "checkpoint/chunk_pipeline.h"
#include "import/fast_lines.h"
#include "import/gzip_file.h"
#include "import/importer.h"
#include "storage/prop_block.h"

namespace quiver::import {

unsigned Importer::Threads() const {
  // More threads than this gain nothing on one file, and each holds two
  // blocks in flight.
  constexpr unsigned kMaxThreads = 64;
  if (options_.threads != 0) return std::min(options_.threads, kMaxThreads);
  return std::clamp(base::AvailableCpus(), 1u, kMaxThreads);
}

bool Importer::Splittable(std::size_t index) const {
  // Files of every format: a record of EVLP and JSON Lines is one line
  // (JSON escapes its line breaks), CSV is cut where quotes allow
  // (PlanQuotedBlocks). A gzip file is read in order only: one thread.
  if (Threads() <= 1) return false;
  Result<bool> gzip = IsGzip(fs_, FileAt(index).path);
  return gzip.ok() && !*gzip;  // an unreadable file fails in OpenInput, with its position
}

CsvDialect Importer::DialectOf() const {
  // JSON Lines: one field per line ('\n' as the delimiter), no quoting.
  if (options_.format == DataFormat::kJsonl) return CsvDialect{'\n', false};
  const bool evlp = options_.format == DataFormat::kEvlp;
  return CsvDialect{evlp ? ' ' : options_.delimiter, !evlp};
}

bool Importer::FastEdgesOk(const Schema& schema) const {
  const std::size_t n = schema.columns.size();
  return options_.format == DataFormat::kEvlp && schema.kind == FileKind::kEdges &&
         (n == 2 || (n == 3 && !schema.columns[2].name.empty()));
}

const IdMap* Importer::FindSpace(std::string_view group) const {
  auto space = ids_.find(group);
  return space == ids_.end() ? nullptr : &space->second;
}

Status Importer::FileChanged(const CsvReader& r, std::string_view what) const {
  return InternalError(base::StrCat(r.path(), ":", r.line(), ": the file changed during the import: ", what));
}

Status Importer::ResolveKeys(const CsvReader& r, const Row& row,
                             std::vector<checkpoint::KeyedValue>* props) const {
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

Result<Importer::EdgeRow> Importer::ResolveEdge(const CsvReader& r, const Row& row, SpaceCache* cache,
                                                std::vector<checkpoint::KeyedValue>* props) const {
  QUIVER_RETURN_IF_ERROR(ResolveKeys(r, row, props));
  auto type = types_.ids.find(row.label);
  if (type == types_.ids.end()) return FileChanged(r, base::StrCat("a new edge type '", row.label, "'"));
  // On this path the id maps hold vertex ids (BulkWriteFile).
  const std::uint32_t s = Find(row.start, cache);
  const std::uint32_t e = Find(row.end, cache);
  if (s >= kRejectedEntry || e >= kRejectedEntry) return FileChanged(r, "an endpoint pass 1 did not see");
  return EdgeRow{type->second, s, e};
}

bool Importer::FastVerticesOk(std::size_t index) const {
  if (KindAt(index) != FileKind::kVertices || options_.format != DataFormat::kEvlp) return false;
  Result<bool> gzip = IsGzip(fs_, FileAt(index).path);
  return gzip.ok() && !*gzip;  // an unreadable file fails in OpenInput, with its position
}

Status Importer::ValidateVerticesFast(std::size_t index) {
  const std::string& path = FileAt(index).path;
  Schema schema;
  {
    QUIVER_ASSIGN_OR_RETURN(Input head, OpenInput(index));  // the schema, and the empty-file check
    schema = std::move(head.schema);
  }
  QUIVER_ASSIGN_OR_RETURN(std::vector<InputBlock> blocks, PlanBlocks(fs_, path, block_bytes_));
  RowBuilder builder(schema, FileAt(index).label);
  Row row;
  const CsvDialect dialect = DialectOf();
  // Plain lines skip the generic path once it has accepted a row of this
  // file with an id: that row chose the id space and map (last_space_,
  // insert_map_) and interned the names, all the same for every plain line
  // of a one-column file.
  bool ready = false;
  std::uint32_t space = 0;
  std::uint64_t block_offset = 0;  // of the block being read, and its bytes
  const char* block_data = nullptr;
  auto refine = [&](const char* at) {
    RefineIdHint(index, block_offset + static_cast<std::uint64_t>(at - block_data));
  };
  auto generic = [&](std::string_view text, std::uint64_t first_line) -> Status {
    std::unique_ptr<CsvReader> reader = CsvReader::OverBytes(path, text, dialect, first_line);
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(bool more, reader->Next());
      if (!more) return Status::Ok();
      QUIVER_ASSIGN_OR_RETURN(bool accepted, ValidateRow(index, *reader, schema, builder, &row));
      if ((rows_[index] & (kHintRows - 1)) == 0) refine(text.data());
      if (accepted && !ready && row.has_id && schema.columns.size() == 1) {
        ready = true;
        space = last_space_;
      }
    }
  };
  std::uint64_t line = 1;
  for (const InputBlock& block : blocks) {
    QUIVER_ASSIGN_OR_RETURN(std::string bytes, ReadBlock(fs_, path, block));
    block_offset = block.offset;
    block_data = bytes.data();
    QUIVER_RETURN_IF_ERROR(ForEachLine<FastVertex>(
        bytes, line,
        [&](const char* p, const char* end, FastVertex* v) {
          return ready ? ParseFastVertex(p, end, v) : nullptr;
        },
        [&](const FastVertex& v) { insert_map_->PrefetchNumber(v.id); },
        [&](const FastVertex& v) -> Status {
          if ((++rows_[index] & (kHintRows - 1)) == 0) refine(v.text.data());
          ExternalId id;
          id.SetNumber(v.id);
          return AddId(index, v.line, v.line, 1, id, space, WithoutLineBreak(v.text));
        },
        generic));
    line += CountLines(bytes);
    ReportProgress(index, block.offset + block.length, rows_[index]);
  }
  return Status::Ok();
}

Result<Importer::PlannedFile> Importer::PlanFileBlocks(std::size_t index) {
  PlannedFile plan;
  {
    QUIVER_ASSIGN_OR_RETURN(Input head, OpenInput(index));  // the schema, and the empty-file check
    plan.schema = std::move(head.schema);
    plan.start = head.rows_offset;  // past a CSV header line
    plan.rows_line = head.rows_line;
  }
  const std::string& path = FileAt(index).path;
  if (options_.format == DataFormat::kCsv) {
    QUIVER_ASSIGN_OR_RETURN(plan.blocks, PlanQuotedBlocks(fs_, path, plan.start, block_bytes_));
  } else {
    QUIVER_ASSIGN_OR_RETURN(plan.blocks, PlanBlocks(fs_, path, block_bytes_));
  }
  planned_end_[index] =
      plan.blocks.empty() ? plan.start : plan.blocks.back().offset + plan.blocks.back().length;
  return plan;
}

Status Importer::ValidateFileParallel(std::size_t index) {
  const std::string& path = FileAt(index).path;
  QUIVER_ASSIGN_OR_RETURN(PlannedFile plan, PlanFileBlocks(index));
  const Schema& schema = plan.schema;
  const std::uint64_t rows_line = plan.rows_line;
  const std::vector<InputBlock>& blocks = plan.blocks;
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
  LineBases bases(blocks.size(), rows_line);
  checkpoint::ChunkPipeline* pipeline = nullptr;  // set before Run, so before any worker
  // More rejected rows than this cannot change the outcome (saturating:
  // skip_bad_rows may be SIZE_MAX, "skip them all").
  const std::size_t enough = options_.skip_bad_rows == SIZE_MAX ? SIZE_MAX : options_.skip_bad_rows + 1;
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
    std::optional<std::uint64_t> first_line = bases.Wait(i, [&] { return pipeline->Stopped(); });
    if (!first_line) return Status::Ok();  // an earlier block failed; its error is the one
    out.first_line = *first_line;
    RowBuilder builder(schema, FileAt(index).label);
    SpaceCache cache;
    Row row;
    RowIssue issue;
    // The generic path over `text` (lines from `line` on): false once the
    // block's reading stops (an error, or enough rejected rows).
    auto generic = [&](std::string_view text, std::uint64_t line) -> bool {
      std::unique_ptr<CsvReader> reader = CsvReader::OverBytes(path, text, dialect, line);
      while (out.bad.size() < enough) {
        Result<bool> more = reader->Next();
        if (!more.ok()) {
          out.error = more.status();
          return false;
        }
        if (!*more) return true;
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
      return false;
    };
    if (!FastEdgesOk(schema)) {
      generic(*bytes, *first_line);
      return Status::Ok();
    }
    // Plain lines skip CsvReader and RowBuilder; a line whose endpoints are
    // not both known is read again by the generic path for its exact reason.
    const Status kStop = CancelledError("stop");
    const IdMap* map = FindSpace("");
    bool interned_type = false, interned_weight = false;
    const std::size_t columns = schema.columns.size();
    ForEachLine<FastEdge>(
        *bytes, *first_line,
        [columns](const char* p, const char* end, FastEdge* e) { return ParseFastEdge(p, end, columns, e); },
        [&](const FastEdge& e) {
          if (map == nullptr) return;
          map->PrefetchHolds(e.source);
          map->PrefetchHolds(e.target);
        },
        [&](const FastEdge& e) -> Status {
          // Pass 1 needs only whether both endpoints are accepted vertices:
          // the id map's bitmap, which stays in cache (id_map.h).
          if (map == nullptr || !map->HoldsNumber(e.source) || !map->HoldsNumber(e.target))
            return generic(e.text, e.line) ? Status::Ok() : kStop;
          ++out.rows;
          if (bulk() && !interned_type) {
            out.types.Intern(FileAt(index).label);
            interned_type = true;
          }
          if (bulk() && e.has_weight && !interned_weight) {
            out.keys.Intern(schema.columns[2].name);
            interned_weight = true;
          }
          return Status::Ok();
        },
        [&](std::string_view text, std::uint64_t line) { return generic(text, line) ? Status::Ok() : kStop; })
        .IgnoreError();  // kStop: out says why
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
    ReportProgress(index, block.offset + block.length, rows_[index]);
    return Status::Ok();
  };
  const unsigned threads = Threads();
  checkpoint::ChunkPipeline run(blocks.size(), threads, 2 * std::size_t{threads}, work, fold);
  pipeline = &run;
  Status s = run.Run();
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
  auto encode = [&](std::size_t i, checkpoint::EncodedChunk* out) -> Status {
    const PlannedBlock& b = blocks[i];
    QUIVER_ASSIGN_OR_RETURN(std::string bytes, ReadBlock(fs_, path, b.block));
    checkpoint::ElementStream stream(checkpoint::BlockKind::kEdges, sink.seed(), out, first_ids[i]);
    RowBuilder builder(schema, FileAt(index).label);
    SpaceCache cache;
    Row row;
    std::vector<checkpoint::KeyedValue> props;
    RejectedLines rejected_here(rejected, b.first_line);
    auto skip = [&](std::uint64_t line) { return rejected_here.Skip(line); };
    // The generic path over `text` (lines from `line` on).
    auto generic = [&](std::string_view text, std::uint64_t line) -> Status {
      return ForEachRecordIn(path, text, line, builder, &row, skip,
                             [&](const CsvReader& r, const Row& built) {
                               QUIVER_ASSIGN_OR_RETURN(EdgeRow edge, ResolveEdge(r, built, &cache, &props));
                               return stream.Edge(edge.type, edge.source, edge.target, props);
                             });
    };
    if (!FastEdgesOk(schema)) {
      QUIVER_RETURN_IF_ERROR(generic(bytes, b.first_line));
    } else {
      const IdMap* map = FindSpace("");
      auto type = types_.ids.find(FileAt(index).label);
      auto weight = schema.columns.size() == 3 ? keys_.ids.find(schema.columns[2].name) : keys_.ids.end();
      const std::size_t columns = schema.columns.size();
      QUIVER_RETURN_IF_ERROR(ForEachLine<FastEdge>(
          bytes, b.first_line,
          [columns](const char* p, const char* end, FastEdge* e) {
            return ParseFastEdge(p, end, columns, e);
          },
          [&](const FastEdge& e) {
            if (map == nullptr) return;
            map->PrefetchNumber(e.source);
            map->PrefetchNumber(e.target);
          },
          [&](const FastEdge& e) -> Status {
            if (skip(e.line)) return Status::Ok();
            const std::uint32_t s = map == nullptr ? kNoEntry : map->FindNumber(e.source);  // vertex ids here
            const std::uint32_t t = map == nullptr ? kNoEntry : map->FindNumber(e.target);
            if (s >= kRejectedEntry || t >= kRejectedEntry || type == types_.ids.end() ||
                (e.has_weight && weight == keys_.ids.end()))
              return generic(e.text, e.line);  // gives the exact error
            checkpoint::KeyedValue w;
            if (e.has_weight) w = {weight->second, PropertyView(e.weight)};
            return stream.Edge(type->second, s, t, {&w, e.has_weight ? 1u : 0u});
          },
          generic));
    }
    QUIVER_RETURN_IF_ERROR(stream.Close());
    if (stream.next_id() != first_ids[i] + b.edges)
      return InternalError(base::StrCat(path, ": the file changed during the import (a block holds ",
                                        stream.next_id() - first_ids[i], " edges, ", b.edges, " at first)"));
    return Status::Ok();
  };
  std::size_t written = 0;
  std::uint64_t rows = 0;  // accepted rows of the blocks written (for progress)
  auto write = [&](const checkpoint::EncodedChunk& chunk) {
    rows += blocks[written].edges;
    const InputBlock& block = blocks[written++].block;
    ReportProgress(index, block.offset + block.length, rows);
    return sink.AppendChunk(chunk);
  };
  const unsigned threads = Threads();
  checkpoint::ChunkPipeline pipeline(blocks.size(), threads, 2 * std::size_t{threads}, encode, write);
  QUIVER_RETURN_IF_ERROR(pipeline.Run());
  // Lines added after pass 1 lie past the plan: the file changed, as the
  // one-thread path finds by its count.
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::ReadableFile> file, fs_->OpenReadable(path));
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file->Size());
  const std::uint64_t planned = planned_end_[index];
  if (size != planned)
    return InternalError(base::StrCat(path, ": the file changed during the import (", size, " bytes, ",
                                      planned, " at first)"));
  return Status::Ok();
}

}  // namespace quiver::import
