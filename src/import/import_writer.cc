// Importer, pass 2 (indexes and writes): see importer.h. Runs only after
// pass 1 accepted the input, so a row that fails to build here means the
// file changed between the passes.
#include <algorithm>
#include <utility>

#include "base/strings.h"
#include "graph_impl.h"
#include "import/importer.h"

namespace quiver::import {
namespace {

bool IsIdIndex(const IndexInfo& info, std::string_view label, std::string_view key) {
  const IndexSpec& s = info.spec;
  return info.state == IndexState::kReady && s.element == ElementKind::kVertex && s.label == label &&
         s.kind == IndexKind::kUnique && s.keys.size() == 1 && s.keys[0] == key;
}

}  // namespace

std::vector<std::string> Importer::IdIndexNames() const {
  std::vector<std::string> names;
  if (!options_.create_id_indexes) return names;
  for (const IdSpace& space : spaces_)
    if (!space.key.empty()) names.push_back(base::StrCat(space.label, ".", space.key));
  return names;
}

Status Importer::WriteIntoGraph() {
  if (!options_.atomic) {
    QUIVER_RETURN_IF_ERROR(CreateIndexes());
    return WriteAll();
  }
  auto* graph = static_cast<GraphImpl*>(graph_);  // the only Graph there is
  QUIVER_RETURN_IF_ERROR(graph->BeginImport(IdIndexNames()));
  // However this returns (an exception included), the span ends: undone
  // unless everything committed.
  struct Span {
    GraphImpl* graph;
    bool ended = false;
    ~Span() {
      if (ended) return;
      try {
        graph->EndImport(/*commit=*/false).IgnoreError();
      } catch (const std::bad_alloc&) {
        // Undoing needs memory too: the record stays, the next Open undoes it.
      }
    }
  } span{graph};
  Status s = CreateIndexes();
  if (s.ok()) s = WriteAll();
  Status end = graph->EndImport(s.ok());  // never throws
  span.ended = true;
  if (s.ok()) return end;
  if (end.ok())
    return Status(s.code(), base::StrCat(s.message(), "; everything the import wrote was undone"));
  return Status(s.code(), base::StrCat(s.message(), "; ", end.message()));
}

Status Importer::CreateIndexes() {
  if (!options_.create_id_indexes) return Status::Ok();
  for (const IdSpace& space : spaces_) {
    if (space.key.empty()) continue;
    const std::vector<IndexInfo> existing = graph_->GetSnapshot().Indexes();
    if (std::any_of(existing.begin(), existing.end(),
                    [&](const IndexInfo& i) { return IsIdIndex(i, space.label, space.key); })) {
      continue;
    }
    IndexSpec spec;
    spec.name = base::StrCat(space.label, ".", space.key);
    spec.label = space.label;
    spec.keys = {space.key};
    spec.kind = IndexKind::kUnique;
    spec.type = space.type == FieldType::kInt ? ValueType::kInt64 : ValueType::kString;
    Status s = graph_->CreateIndex(spec);
    if (!s.ok()) {
      DropCreatedIndexes().IgnoreError();  // best effort; `s` says what failed
      return s;
    }
    stats_.indexes_created.push_back(spec.name);
  }
  return Status::Ok();
}

Status Importer::DropCreatedIndexes() {
  Status first;
  for (const std::string& name : stats_.indexes_created) {
    Status s = graph_->DropIndex(name);
    if (first.ok()) first = std::move(s);
  }
  stats_.indexes_created.clear();
  return first;
}

Status Importer::WaitOldest() {
  Pending p = std::move(in_flight_.front());
  in_flight_.pop_front();
  Result<CommitInfo> r = p.result.get();
  if (!r.ok()) {
    if (write_error_.ok()) write_error_ = r.status();
    return r.status();
  }
  for (std::size_t i = 0; i < p.entries.size(); ++i) {
    if (p.entries[i] != kNoEntry) entries_[p.entries[i]].vertex = r->vertices[i];
  }
  stats_.vertices += r->vertices.size();
  stats_.edges += r->edges.size();
  ++stats_.batches;
  return Status::Ok();
}

Status Importer::Submit() {
  if (batch_.empty()) return Status::Ok();
  in_flight_.push_back({graph_->WriteAsync(std::move(batch_)), std::move(batch_entries_)});
  batch_ = WriteBatch();
  batch_entries_.clear();
  batch_ops_ = 0;
  if (in_flight_.size() >= options_.batches_in_flight) return WaitOldest();
  return Status::Ok();
}

// Waits for every batch in flight, even after a failure, so that the
// counts say exactly what committed.
Status Importer::DrainAll() {
  Status first;
  while (!in_flight_.empty()) {
    Status s = WaitOldest();
    if (first.ok()) first = std::move(s);
  }
  return first;
}

Status Importer::WriteFile(std::size_t index) {
  const bool vertices = KindAt(index) == FileKind::kVertices;
  return ForEachAcceptedRow(index, [&](const CsvReader& r, const Row& row, const Schema&) -> Status {
    if (vertices) {
      std::uint32_t entry = kNoEntry;
      if (row.has_id) {
        // The entry pass 1 made for this very row, or the file changed.
        entry = Find(row.id);
        if (entry >= kRejectedEntry || entries_[entry].file != index ||
            entries_[entry].record_line != r.line())
          return FileChanged(r, "an id pass 1 did not see here");
      }
      batch_.AddVertex(row.label, row.properties);
      batch_entries_.push_back(entry);
    } else {
      const std::uint32_t s = Find(row.start);
      const std::uint32_t e = Find(row.end);
      if (s >= kRejectedEntry || e >= kRejectedEntry) return FileChanged(r, "an endpoint pass 1 did not see");
      batch_.AddEdge(row.label, entries_[s].vertex, entries_[e].vertex, row.properties);
    }
    batch_ops_ += 1 + row.properties.size();
    if (batch_ops_ >= options_.batch_ops) return Submit();
    return Status::Ok();
  });
}

Status Importer::WriteAll() {
  StartProgress("loading");
  Status s;
  for (std::size_t i = 0; i < FileCount() && s.ok(); ++i) {
    // Edges need the committed ids of every vertex.
    if (i == spec_.vertices.size()) {
      s = Submit();
      if (s.ok()) s = DrainAll();
    }
    if (s.ok()) s = WriteFile(i);
  }
  if (s.ok()) s = Submit();
  Status drained = DrainAll();
  if (s.ok()) s = std::move(drained);
  if (s.ok()) return s;
  return Status(s.code(), base::StrCat("import stopped after ", stats_.batches, " batches committed (",
                                       stats_.vertices, " vertices, ", stats_.edges, " edges",
                                       options_.atomic ? "" : "; they stay", "): ", s.message()));
}

}  // namespace quiver::import
