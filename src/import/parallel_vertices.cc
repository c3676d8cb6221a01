// Importer: one vertex file parsed on several threads (see importer.h and
// input_blocks.h; parallel_input.cc does the same for edge files).
//
// Vertices fill the id map in input order, and that order decides the
// entries, the id spaces, and which of two equal ids is rejected with
// which line. So pass 1 splits the work: the workers parse their blocks
// (CsvReader and RowBuilder, or fast_lines.h's parser for a plain EVLP
// line) into records that say where each is, its id, label and property
// keys, or why it is bad; the write step, on the calling thread in block
// order, adds the records as one thread reading the file would (AddVertex:
// the id spaces, the id map, duplicates, rejections, then the names). What
// depends on order runs in order; the parsing runs in parallel. A worker
// holds its block's bytes and records (about 32 bytes a record, more for a
// generic one) until the write step has taken them.
//
// Pass 2 of the bulk path cuts the file as pass 1 did and encodes each
// block as checkpoint blocks, its first vertex id known from pass 1 (the
// records of the blocks before it less the rejected ones), as the edge
// files are. Through batches, pass 2 reads the file on one thread.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "checkpoint/chunk_pipeline.h"
#include "import/fast_lines.h"
#include "import/importer.h"

namespace quiver::import {
namespace {

// A record of a block, in order: a plain EVLP line (its id in `number`), or
// one the generic path read (`generic` indexes the block's).
struct VertexRecord {
  static constexpr std::uint32_t kPlain = ~std::uint32_t{0};
  std::uint64_t line = 0;        // where the record starts
  std::uint64_t raw_offset = 0;  // of its text in the block's bytes
  std::uint32_t raw_size = 0;
  std::uint32_t generic = kPlain;
  std::int64_t number = 0;
};

// What RowBuilder built of a record, or why it could not.
struct GenericVertex {
  bool built = false;
  RowIssue issue;  // if not built
  std::string label;
  std::vector<std::string> keys;  // its properties', in order (bulk or create_id_indexes only)
  bool has_id = false;
  ExternalId id;  // its `field` null: id_line and id_column say where it was
  std::uint64_t id_line = 0;
  std::uint64_t id_column = 0;
};

// A block as a worker leaves it for the write step.
struct VertexBlock {
  std::string bytes;
  std::uint64_t first_line = 0;
  std::vector<VertexRecord> records;
  std::vector<GenericVertex> generic;
  Status error;  // what stopped the reading, after the records
};

}  // namespace

Status Importer::ValidateVerticesParallel(std::size_t index) {
  const std::string& path = FileAt(index).path;
  const std::string_view file_label = FileAt(index).label;
  QUIVER_ASSIGN_OR_RETURN(PlannedFile plan, PlanFileBlocks(index));
  const Schema& schema = plan.schema;
  const std::uint64_t rows_line = plan.rows_line;
  const std::vector<InputBlock>& blocks = plan.blocks;
  std::vector<VertexBlock> results(blocks.size());
  LineBases bases(blocks.size(), rows_line);
  checkpoint::ChunkPipeline* pipeline = nullptr;  // set before Run, so before any worker
  // Rows a block's own reading rejects beyond this cannot change the
  // outcome (saturating: skip_bad_rows may be SIZE_MAX).
  const std::size_t enough = options_.skip_bad_rows == SIZE_MAX ? SIZE_MAX : options_.skip_bad_rows + 1;
  const CsvDialect dialect = DialectOf();
  const bool evlp = options_.format == DataFormat::kEvlp;
  const bool keep_keys = bulk() || options_.create_id_indexes;
  auto work = [&](std::size_t i, checkpoint::EncodedChunk*) -> Status {
    VertexBlock& out = results[i];
    PublishOnce publish(bases, i);
    Result<std::string> bytes = ReadBlock(fs_, path, blocks[i]);
    if (!bytes.ok()) {
      out.error = bytes.status();
      return Status::Ok();
    }
    out.bytes = std::move(*bytes);
    publish.Publish(CountLines(out.bytes));
    std::optional<std::uint64_t> first_line = bases.Wait(i, [&] { return pipeline->Stopped(); });
    if (!first_line) return Status::Ok();  // an earlier block failed; its error is the one
    out.first_line = *first_line;
    const char* const base = out.bytes.data();
    RowBuilder builder(schema, file_label);
    Row row;
    std::size_t bad = 0;
    // The generic path over `text` (lines from `line` on): false once the
    // block's reading stops (an error, or enough bad rows).
    auto generic = [&](std::string_view text, std::uint64_t line) -> bool {
      const auto at = static_cast<std::uint64_t>(text.data() - base);
      std::unique_ptr<CsvReader> reader = CsvReader::OverBytes(path, text, dialect, line);
      while (bad < enough) {
        Result<bool> more = reader->Next();
        if (!more.ok()) {
          out.error = more.status();
          return false;
        }
        if (!*more) return true;
        const CsvReader& r = *reader;
        GenericVertex g;
        if (builder.Build(r, &row, &g.issue)) {
          g.built = true;
          g.label.assign(row.label);
          if (keep_keys) {
            for (const Property& p : row.properties) g.keys.push_back(p.key);
          }
          g.has_id = row.has_id;
          if (row.has_id) {
            g.id = row.id;
            g.id.field = nullptr;
            g.id_line = row.id.field->line;
            g.id_column = row.id.field->column;
          }
        } else {
          ++bad;
        }
        out.records.push_back({.line = r.line(),
                               .raw_offset = at + r.raw_offset(),
                               .raw_size = static_cast<std::uint32_t>(r.raw().size()),
                               .generic = static_cast<std::uint32_t>(out.generic.size())});
        out.generic.push_back(std::move(g));
      }
      return false;
    };
    if (!evlp) {
      generic(out.bytes, *first_line);
      return Status::Ok();
    }
    // Plain lines skip CsvReader and RowBuilder; any other goes to the
    // generic path, which gives its exact row or reason.
    const Status kStop = CancelledError("stop");
    ForEachLine<FastVertex>(
        out.bytes, *first_line, ParseFastVertex, [](const FastVertex&) {},
        [&](const FastVertex& v) -> Status {
          out.records.push_back({.line = v.line,
                                 .raw_offset = static_cast<std::uint64_t>(v.text.data() - base),
                                 .raw_size = static_cast<std::uint32_t>(WithoutLineBreak(v.text).size()),
                                 .number = v.id});
          return Status::Ok();
        },
        [&](std::string_view text, std::uint64_t line) { return generic(text, line) ? Status::Ok() : kStop; })
        .IgnoreError();  // kStop: out says why
    return Status::Ok();
  };
  // What a plain EVLP line is to AddVertex: the file's label, its id, and
  // the id's key as its one property (none if evlp_id_key is empty).
  ExternalId plain_id;
  const std::string_view id_key = options_.evlp_id_key;
  const std::span<const std::string_view> plain_keys(&id_key, id_key.empty() ? 0 : 1);
  // Once a plain line is accepted it has chosen the id space and map
  // (last_space_, insert_map_) and interned the names: the same for every
  // plain line of the file, which then goes straight to AddId, as in
  // ValidateVerticesFast.
  bool plain_ready = false;
  std::uint32_t plain_space = 0;
  std::vector<std::string_view> keys;
  std::size_t next = 0;
  auto fold = [&](const checkpoint::EncodedChunk&) -> Status {
    VertexBlock b = std::move(results[next]);
    results[next] = VertexBlock{};
    const InputBlock block = blocks[next++];
    for (const VertexRecord& rec : b.records) {
      ++rows_[index];
      const std::string_view raw(b.bytes.data() + rec.raw_offset, rec.raw_size);
      const std::size_t rejected = stats_.rejected.size();
      if (rec.generic == VertexRecord::kPlain && plain_ready) {
        plain_id.SetNumber(rec.number);
        QUIVER_RETURN_IF_ERROR(AddId(index, rec.line, rec.line, 1, plain_id, plain_space, raw));
      } else if (rec.generic == VertexRecord::kPlain) {
        plain_id.SetNumber(rec.number);
        QUIVER_RETURN_IF_ERROR(AddVertex(index,
                                         {.record_line = rec.line,
                                          .raw = raw,
                                          .label = file_label,
                                          .keys = plain_keys,
                                          .id = &plain_id,
                                          .id_line = rec.line,
                                          .id_column = 1},
                                         schema));
        if (stats_.rejected.size() == rejected) {
          if (bulk()) {
            labels_.Intern(file_label);
            for (std::string_view k : plain_keys) keys_.Intern(k);
          }
          plain_ready = true;
          plain_space = last_space_;
        }
      } else if (GenericVertex& g = b.generic[rec.generic]; !g.built) {
        QUIVER_RETURN_IF_ERROR(
            Reject(index, rec.line, g.issue.line, g.issue.column, std::move(g.issue.reason), raw));
      } else {
        keys.assign(g.keys.begin(), g.keys.end());
        QUIVER_RETURN_IF_ERROR(AddVertex(index,
                                         {.record_line = rec.line,
                                          .raw = raw,
                                          .label = g.label,
                                          .keys = keys,
                                          .id = g.has_id ? &g.id : nullptr,
                                          .id_line = g.id_line,
                                          .id_column = g.id_column},
                                         schema));
        if (bulk() && stats_.rejected.size() == rejected) {
          labels_.Intern(g.label);
          for (const std::string& k : g.keys) keys_.Intern(k);
        }
      }
      if ((rows_[index] & (kHintRows - 1)) == 0) RefineIdHint(index, block.offset + rec.raw_offset);
    }
    if (!b.error.ok()) return b.error;
    planned_[index].push_back({.block = block, .first_line = b.first_line, .rows = b.records.size()});
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

Result<std::uint64_t> Importer::BulkWriteVerticesParallel(std::size_t index, checkpoint::CheckpointSink& sink,
                                                          std::uint64_t first_id) {
  const std::string& path = FileAt(index).path;
  Schema schema;
  {
    QUIVER_ASSIGN_OR_RETURN(Input head, OpenInput(index));
    schema = std::move(head.schema);
  }
  const std::vector<PlannedBlock>& blocks = planned_[index];
  const std::vector<std::uint64_t>& rejected = rejected_lines_[index];  // sorted (Validate)
  // Each block's first vertex id: its records less those rejected, some
  // after the file was read (CheckIdsAcrossSpaces), in its lines.
  std::vector<std::uint64_t> first_ids(blocks.size() + 1);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    first_ids[i] = first_id;
    auto from = std::lower_bound(rejected.begin(), rejected.end(), blocks[i].first_line);
    auto to = i + 1 < blocks.size() ? std::lower_bound(from, rejected.end(), blocks[i + 1].first_line)
                                    : rejected.end();
    first_id += blocks[i].rows - static_cast<std::uint64_t>(to - from);
  }
  first_ids[blocks.size()] = first_id;
  // What a plain EVLP line holds, as BulkWriteVerticesFast reads it.
  const IdMap* map = FindSpace("");
  auto label = labels_.ids.find(FileAt(index).label);
  const bool kept = !options_.evlp_id_key.empty();
  auto key = kept ? keys_.ids.find(options_.evlp_id_key) : keys_.ids.end();
  const bool plain = options_.format == DataFormat::kEvlp && map != nullptr && label != labels_.ids.end() &&
                     (!kept || key != keys_.ids.end());
  auto encode = [&](std::size_t i, checkpoint::EncodedChunk* out) -> Status {
    const PlannedBlock& b = blocks[i];
    QUIVER_ASSIGN_OR_RETURN(std::string bytes, ReadBlock(fs_, path, b.block));
    checkpoint::ElementStream stream(checkpoint::BlockKind::kVertices, sink.seed(), out, first_ids[i]);
    RowBuilder builder(schema, FileAt(index).label);
    SpaceCache cache;
    Row row;
    std::vector<checkpoint::KeyedValue> props;
    RejectedLines rejected_here(rejected, b.first_line);
    auto skip = [&](std::uint64_t line) { return rejected_here.Skip(line); };
    // The generic path over `text` (lines from `line` on).
    auto generic = [&](std::string_view text, std::uint64_t line) -> Status {
      return ForEachRecordIn(
          path, text, line, builder, &row, skip, [&](const CsvReader& r, const Row& built) {
            QUIVER_ASSIGN_OR_RETURN(std::uint32_t l,
                                    ResolveVertex(index, r, built, schema, stream.next_id(), &cache, &props));
            return stream.Vertex(l, props);
          });
    };
    if (!plain) {
      QUIVER_RETURN_IF_ERROR(generic(bytes, b.first_line));
    } else {
      QUIVER_RETURN_IF_ERROR(ForEachLine<FastVertex>(
          bytes, b.first_line, ParseFastVertex, [&](const FastVertex& v) { map->PrefetchNumber(v.id); },
          [&](const FastVertex& v) -> Status {
            if (skip(v.line)) return Status::Ok();
            if (map->FindNumber(v.id) != stream.next_id()) return generic(v.text, v.line);  // gives the error
            const checkpoint::KeyedValue id{kept ? key->second : 0, PropertyView(v.id)};
            return stream.Vertex(label->second, {&id, kept ? 1u : 0u});
          },
          generic));
    }
    QUIVER_RETURN_IF_ERROR(stream.Close());
    if (stream.next_id() != first_ids[i + 1])
      return InternalError(base::StrCat(path, ": the file changed during the import (a block holds ",
                                        stream.next_id() - first_ids[i], " vertices, ",
                                        first_ids[i + 1] - first_ids[i], " at first)"));
    return Status::Ok();
  };
  std::size_t written = 0;
  auto write = [&](const checkpoint::EncodedChunk& chunk) {
    const InputBlock& block = blocks[written++].block;
    ReportProgress(index, block.offset + block.length,
                   first_ids[written] - first_ids[0]);  // vertices written
    return sink.AppendChunk(chunk);
  };
  const unsigned threads = Threads();
  checkpoint::ChunkPipeline pipeline(blocks.size(), threads, 2 * std::size_t{threads}, encode, write);
  QUIVER_RETURN_IF_ERROR(pipeline.Run());
  // Lines added after pass 1 lie past the plan: the file changed.
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<env::ReadableFile> file, fs_->OpenReadable(path));
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file->Size());
  if (size != planned_end_[index])
    return InternalError(base::StrCat(path, ": the file changed during the import (", size, " bytes, ",
                                      planned_end_[index], " at first)"));
  return first_ids.back();
}

}  // namespace quiver::import
