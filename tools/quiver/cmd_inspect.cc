// quiver info / verify: what a graph directory holds, and whether its files
// are sound. Both change nothing.
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli.h"
#include "dump_json.h"
#include "quiver/dump.h"
#include "quiver/verify.h"

namespace quiver::cli {
namespace {

constexpr const char* kInfoAbout =
    "Opens the graph at DIR read-only and prints its sequence number, vertex and edge counts,\n"
    "counts by label and edge type, property keys, indexes, the memory it holds, what opening\n"
    "it took, and each checkpoint and WAL segment with its format version and state.\n"
    "(`quiver stats` is the same command.)\n";

constexpr const char* kVerifyAbout =
    "Checks every CRC, the framing and the replay chain of the graph directory DIR and prints\n"
    "one line per file. Changes nothing. Exit 1 if anything is damaged.\n";

constexpr const char* kDumpAbout =
    "Prints the records of a graph directory's WAL segments and checkpoints (or of one\n"
    "wal-<n>.log or checkpoint-<n>.qck file), one per line: headers, commit groups and their\n"
    "operations, checkpoint blocks and their elements. Changes nothing. Damage ends a file's text\n"
    "with a line \"! stopped at offset N: <why>\" and exits 1. --json prints the same lines as JSON\n"
    "Lines, one object each (record \"stopped\" for damage; docs/import-export.md).\n";

const char* KindName(IndexKind kind) {
  switch (kind) {
    case IndexKind::kExact: return "exact";
    case IndexKind::kUnique: return "unique";
    case IndexKind::kOrdered: return "ordered";
    case IndexKind::kUniqueEndpoints: return "unique-endpoints";
  }
  return "unknown";
}

const char* FileKindName(VerifiedFileKind kind) {
  switch (kind) {
    case VerifiedFileKind::kCheckpoint: return "checkpoint";
    case VerifiedFileKind::kWalSegment: return "wal";
    case VerifiedFileKind::kDirectoryRecord: return "record";
  }
  return "file";
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

Json FileJson(const VerifiedFile& f) {
  Json j = {{"name", f.name},
            {"kind", FileKindName(f.kind)},
            {"bytes", f.bytes},
            {"format_version", f.format_version},
            {"first_sequence", f.first_sequence},
            {"last_sequence", f.last_sequence},
            {"tail_bytes", f.tail_bytes},
            {"ok", f.status.ok()}};
  if (!f.status.ok()) j["status"] = f.status.ToString();
  if (f.first_bad_offset) j["first_bad_offset"] = *f.first_bad_offset;
  return j;
}

// "checkpoint-….qck sequence 5, 1234 bytes, format 3: ok"
std::string FileLine(const VerifiedFile& f) {
  std::string line = std::string(FileKindName(f.kind)) + " " + f.name;
  if (f.kind == VerifiedFileKind::kCheckpoint) {
    line += " sequence " + std::to_string(f.first_sequence);
  } else if (f.kind == VerifiedFileKind::kWalSegment) {
    line += " sequences " + std::to_string(f.first_sequence) + ".." + std::to_string(f.last_sequence);
  }
  line += ", " + std::to_string(f.bytes) + " bytes, format " + std::to_string(f.format_version);
  if (f.tail_bytes != 0) line += ", tail " + std::to_string(f.tail_bytes) + " bytes";
  line += ": " + (f.status.ok() ? std::string("ok") : f.status.ToString());
  return line;
}

}  // namespace

int Info(int argc, const char* const* argv) {
  CliArgs args("quiver info [options] DIR", kInfoAbout);
  args.AddFlag("--json", "print it as JSON");
  if (int rc = ParseArgs(args, argc, argv, 1); rc >= 0) return rc;
  const std::string& dir = args.positional()[0];
  Result<std::unique_ptr<Graph>> graph = OpenReadOnly(dir);
  if (!graph.ok()) return Fail("open " + dir, graph.status());
  const Snapshot s = (*graph)->GetSnapshot();
  const MemoryStats memory = (*graph)->GetMemoryStats();
  const OpenStats open = (*graph)->GetOpenStats();
  // The files, as they are on disk (the open graph holds them still).
  Result<VerifyReport> files = VerifyDirectory(dir);
  const std::uint64_t elements = s.vertex_count() + s.edge_count();
  const double per_element =
      elements == 0 ? 0 : static_cast<double>(memory.allocated_bytes) / static_cast<double>(elements);

  if (args.Has("--json")) {
    Json j = {{"directory", dir},
              {"sequence", s.sequence()},
              {"vertices", s.vertex_count()},
              {"edges", s.edge_count()},
              {"labels", Json::array()},
              {"edge_types", Json::array()},
              {"property_keys", Json::array()},
              {"indexes", Json::array()},
              {"memory", {{"allocated_bytes", memory.allocated_bytes}, {"bytes_per_element", per_element}}},
              {"open",
               {{"checkpoint_sequence", open.checkpoint_sequence},
                {"wal_segments_read", open.wal_segments_read},
                {"wal_groups_replayed", open.wal_groups_replayed},
                {"wal_batches_replayed", open.wal_batches_replayed},
                {"tail_bytes_truncated", open.tail_bytes_truncated},
                {"used_previous_checkpoint", open.used_previous_checkpoint},
                {"microseconds", open.open_microseconds}}}};
    // Only when it happened: an import cut short, undone in this view.
    if (open.import_undone) j["open"]["import_undone"] = true;
    for (const LabelCount& l : s.Labels())
      j["labels"].push_back({{"name", l.name}, {"vertices", l.vertices}});
    for (const EdgeTypeCount& t : s.EdgeTypes())
      j["edge_types"].push_back({{"name", t.name}, {"edges", t.edges}});
    for (const PropertyKeyCount& k : s.PropertyKeys()) {
      j["property_keys"].push_back({{"name", k.name}, {"vertices", k.vertices}, {"edges", k.edges}});
    }
    for (const IndexInfo& i : s.Indexes()) {
      Json x = {{"name", i.spec.name},
                {"element", i.spec.element == ElementKind::kVertex ? "vertex" : "edge"},
                {"label", i.spec.label},
                {"keys", i.spec.keys},
                {"kind", KindName(i.spec.kind)},
                {"entries", i.entries},
                {"ready", i.state == IndexState::kReady}};
      if (i.spec.type) x["type"] = std::string(ValueTypeName(*i.spec.type));
      j["indexes"].push_back(std::move(x));
    }
    if (files.ok()) {
      j["files"] = Json::array();
      for (const VerifiedFile& f : files->files) j["files"].push_back(FileJson(f));
      j["files_ok"] = files->ok();
      if (!files->ok()) j["files_status"] = files->status.ToString();
    } else {
      j["files_status"] = files.status().ToString();
    }
    PrintJson(j);
    return kOk;
  }

  std::printf("directory %s\nsequence %llu\nvertices %llu\nedges %llu\n", dir.c_str(),
              static_cast<unsigned long long>(s.sequence()),
              static_cast<unsigned long long>(s.vertex_count()),
              static_cast<unsigned long long>(s.edge_count()));
  for (const LabelCount& l : s.Labels()) {
    std::printf("label %s %llu\n", Printable(l.name).c_str(), static_cast<unsigned long long>(l.vertices));
  }
  for (const EdgeTypeCount& t : s.EdgeTypes()) {
    std::printf("type %s %llu\n", Printable(t.name).c_str(), static_cast<unsigned long long>(t.edges));
  }
  for (const PropertyKeyCount& k : s.PropertyKeys()) {
    std::printf("key %s vertices %llu edges %llu\n", Printable(k.name).c_str(),
                static_cast<unsigned long long>(k.vertices), static_cast<unsigned long long>(k.edges));
  }
  for (const IndexInfo& i : s.Indexes()) {
    std::printf("index %s %s %s %s(%s)%s entries %llu%s\n", Printable(i.spec.name).c_str(),
                KindName(i.spec.kind), i.spec.element == ElementKind::kVertex ? "vertex" : "edge",
                Printable(i.spec.label).c_str(), Printable(Join(i.spec.keys, ",")).c_str(),
                i.spec.type ? (" " + std::string(ValueTypeName(*i.spec.type))).c_str() : "",
                static_cast<unsigned long long>(i.entries),
                i.state == IndexState::kReady ? "" : " (building)");
  }
  std::printf("memory %llu bytes allocated, %.1f per element\n",
              static_cast<unsigned long long>(memory.allocated_bytes), per_element);
  std::printf(
      "open loaded checkpoint %llu%s, replayed %llu WAL groups (%llu batches) from %llu segments in %.3f s\n",
      static_cast<unsigned long long>(open.checkpoint_sequence),
      open.used_previous_checkpoint ? " (the previous one: the newest is damaged)" : "",
      static_cast<unsigned long long>(open.wal_groups_replayed),
      static_cast<unsigned long long>(open.wal_batches_replayed),
      static_cast<unsigned long long>(open.wal_segments_read),
      static_cast<double>(open.open_microseconds) / 1e6);
  if (open.import_undone)
    std::printf("an import was cut short (IMPORT): shown undone; the next writable open undoes it on disk\n");
  if (!files.ok()) {
    std::printf("files: %s\n", files.status().ToString().c_str());
    return kOk;
  }
  for (const VerifiedFile& f : files->files) std::printf("%s\n", FileLine(f).c_str());
  std::printf("files %s\n", files->ok() ? "ok" : files->status.ToString().c_str());
  return kOk;
}

int Dump(int argc, const char* const* argv) {
  CliArgs args("quiver dump [options] DIR|FILE", kDumpAbout);
  args.AddFlag("--wal", "only the WAL segments");
  args.AddFlag("--checkpoint", "only the checkpoints");
  args.AddFlag("--no-values", "headers, groups and blocks only (no operations, no elements)");
  args.AddOption("--limit", "0", "N",
                 "at most N groups per segment and N elements per checkpoint (default all)");
  args.AddFlag("--json", "print JSON Lines: one object per line of the text, with its numbers");
  if (int rc = ParseArgs(args, argc, argv, 1); rc >= 0) return rc;
  DumpOptions options;
  // Neither flag: both kinds.
  options.wal = args.Has("--wal") || !args.Has("--checkpoint");
  options.checkpoint = args.Has("--checkpoint") || !args.Has("--wal");
  options.values = !args.Has("--no-values");
  if (!args.GetU64("--limit", &options.max_records)) return Usage(args, "--limit needs a number");
  const std::string& target = args.positional()[0];
  DumpJsonLines json(stdout);
  const bool as_json = args.Has("--json");
  auto print = [&json, as_json](std::string_view line) {
    if (as_json) {
      json.Line(line);
      return;
    }
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
  };
  std::error_code ec;
  const bool is_file = std::filesystem::is_regular_file(target, ec);
  const Status s = is_file ? DumpFile(target, options, print) : DumpDirectory(target, options, print);
  std::fflush(stdout);
  if (!s.ok()) return Fail("dump " + target, s);
  return kOk;
}

int Verify(int argc, const char* const* argv) {
  CliArgs args("quiver verify [options] DIR", kVerifyAbout);
  args.AddFlag("--json", "print the report as JSON");
  if (int rc = ParseArgs(args, argc, argv, 1); rc >= 0) return rc;
  Result<VerifyReport> r = VerifyDirectory(args.positional()[0]);
  if (!r.ok()) return Fail("verify " + args.positional()[0], r.status());
  if (args.Has("--json")) {
    Json j = {{"ok", r->ok()}, {"files", Json::array()}};
    if (!r->ok()) j["status"] = r->status.ToString();
    for (const VerifiedFile& f : r->files) j["files"].push_back(FileJson(f));
    PrintJson(j);
    return r->ok() ? kOk : kFailed;
  }
  for (const VerifiedFile& f : r->files) std::printf("%s\n", FileLine(f).c_str());
  if (!r->status.ok()) return Fail("verify", r->status);
  std::printf("ok\n");
  return kOk;
}

}  // namespace quiver::cli
