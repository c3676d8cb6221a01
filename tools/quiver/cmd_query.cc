// quiver neighbors / path / run: graph questions from a shell, through the
// traversal and analytics APIs, on a snapshot of a graph opened read-only
// (`run --write-property` opens it for writing).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "quiver/analytics.h"
#include "quiver/traversal.h"

namespace quiver::cli {
namespace {

constexpr const char* kNeighborsAbout =
    "Prints the vertices within --depth hops of VERTEX (a vertex id), each once, at its\n"
    "smallest depth, breadth first: tab-separated columns vertex, label, depth, edge (the edge\n"
    "it was reached by), type, direction (of that edge from the parent: out or in), parent.\n";

constexpr const char* kPathAbout =
    "Prints a shortest path from FROM to TO (vertex ids), or the --k shortest, one line each:\n"
    "its cost and its vertices joined by their edges, as 1 -[e7:ROAD]-> 4 <-[e2:ROAD]- 9\n"
    "(an edge's arrow points from its source to its target). Exit 3 if there is no path.\n";

constexpr const char* kRunAbout =
    "Runs an analytics algorithm on a projection of the graph at DIR and writes one line per\n"
    "vertex: CSV (header vertex,value) or JSON Lines ({\"vertex\":…,\"value\":…}), to stdout\n"
    "or --out, and/or back into the graph as a vertex property (--write-property).\n"
    "algorithms (LDBC Graphalytics definitions; docs/analytics.md):\n"
    "  bfs        hops from --source along out-edges (unreachable: 9223372036854775807)\n"
    "  pagerank   PageRank (--iterations, default 20; --damping, default 0.85)\n"
    "  wcc        weakly connected components: the smallest vertex id in each one's component\n"
    "  cdlp       community detection by label propagation (--iterations, default 10)\n"
    "  lcc        local clustering coefficient\n"
    "  sssp       weighted distances from --source along out-edges (unreachable: infinity)\n"
    "  triangles  the number of triangles (one number, no per-vertex output)\n"
    "  kcore      each vertex's core number\n";

constexpr const char* kRunFooter =
    "--write-property refuses a key an index covers (a unique or typed index could refuse a\n"
    "batch after others committed); results go to a new --out file, created before the run.\n";

bool ParseDirection(const std::string& text, TraversalDirection* d) {
  if (text == "out") {
    *d = TraversalDirection::kOut;
  } else if (text == "in") {
    *d = TraversalDirection::kIn;
  } else if (text == "both") {
    *d = TraversalDirection::kBoth;
  } else {
    return false;
  }
  return true;
}

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  *out = v;
  return true;
}

// The value of `key` on vertex v as text, "" if it has none.
std::string KeyText(const Snapshot& snap, VertexId v, const std::string& key) {
  std::optional<PropertyView> value = snap.GetProperty(v, key);
  return value ? ToText(*value) : std::string();
}

Json KeyJson(const Snapshot& snap, VertexId v, const std::string& key) {
  std::optional<PropertyView> value = snap.GetProperty(v, key);
  return value ? ToJson(*value) : Json(nullptr);
}

std::string LabelText(const Snapshot& snap, VertexId v) {
  std::optional<LabelId> label = snap.LabelOf(v);
  return label ? std::string(snap.LabelName(*label)) : std::string();
}

}  // namespace

int Neighbors(int argc, const char* const* argv) {
  CliArgs args("quiver neighbors [options] DIR VERTEX", kNeighborsAbout);
  args.AddOption("--by", "", "LABEL.KEY", "VERTEX is the value of KEY of a LABEL vertex (through an index)");
  args.AddOption("--direction", "both", "out|in|both", "edges to follow (default both)");
  args.AddOption("--type", "", "T", "follow only edges of type T (repeatable; default all)");
  args.AddOption("--depth", "1", "N", "hops (default 1)");
  args.AddOption("--limit", "1000", "N", "print at most N vertices (default 1000; 0: all)");
  args.AddOption("--show", "", "KEY", "add a column with each vertex's KEY property (repeatable)");
  args.AddFlag("--json", "print them as JSON");
  if (int rc = ParseArgs(args, argc, argv, 2); rc >= 0) return rc;
  ExpandSpec spec;
  if (!ParseDirection(args.Get("--direction"), &spec.direction)) {
    return Usage(args, "--direction must be out, in or both");
  }
  std::uint64_t depth = 0, limit = 0;
  if (!args.GetU64("--depth", &depth) || depth == 0 || depth > 1'000'000) {
    return Usage(args, "--depth needs a number from 1 to 1000000");
  }
  if (!args.GetU64("--limit", &limit)) return Usage(args, "--limit needs a number");
  spec.edge_types = args.GetAll("--type");
  spec.min_depth = 1;
  spec.max_depth = static_cast<std::uint32_t>(depth);
  const std::vector<std::string>& show = args.GetAll("--show");

  Result<std::unique_ptr<Graph>> graph = OpenReadOnly(args.positional()[0]);
  if (!graph.ok()) return Fail("open " + args.positional()[0], graph.status());
  const Snapshot snap = (*graph)->GetSnapshot();
  Result<VertexId> start = ResolveVertex(snap, args.positional()[1], args.Get("--by"));
  if (!start.ok()) return Fail("neighbors", start.status());
  spec.seeds = {*start};
  std::vector<Visit> visits;
  bool more = false;
  TraversalContext ctx;
  Status s = Expand(snap, spec, ctx, [&](const Visit& v) {
    if (limit != 0 && visits.size() == limit) {
      more = true;
      return false;
    }
    visits.push_back(v);
    return true;
  });
  if (!s.ok()) return Fail("neighbors", s);
  // The edge a visit came by: its type, and whether it leaves the parent.
  auto edge_of = [&](const Visit& v) -> std::pair<std::string, const char*> {
    std::optional<EdgeInfo> e = snap.GetEdge(v.parent_edge);
    if (!e) return {"", ""};
    return {std::string(snap.EdgeTypeName(e->type)), e->source == v.parent ? "out" : "in"};
  };
  if (args.Has("--json")) {
    Json j = {{"vertex", start->value()}, {"neighbors", Json::array()}, {"truncated", more}};
    for (const Visit& v : visits) {
      auto [type, direction] = edge_of(v);
      Json n = {{"vertex", v.vertex.value()},
                {"label", LabelText(snap, v.vertex)},
                {"depth", v.depth},
                {"edge", v.parent_edge.value()},
                {"type", type},
                {"direction", direction},
                {"parent", v.parent.value()}};
      for (const std::string& key : show) n["properties"][key] = KeyJson(snap, v.vertex, key);
      j["neighbors"].push_back(std::move(n));
    }
    PrintJson(j);
    return kOk;
  }
  std::printf("vertex\tlabel\tdepth\tedge\ttype\tdirection\tparent");
  for (const std::string& key : show) std::printf("\t%s", Printable(key).c_str());
  std::printf("\n");
  for (const Visit& v : visits) {
    auto [type, direction] = edge_of(v);
    std::printf("%llu\t%s\t%u\t%llu\t%s\t%s\t%llu", static_cast<unsigned long long>(v.vertex.value()),
                Printable(LabelText(snap, v.vertex)).c_str(), v.depth,
                static_cast<unsigned long long>(v.parent_edge.value()), Printable(type).c_str(), direction,
                static_cast<unsigned long long>(v.parent.value()));
    for (const std::string& key : show) std::printf("\t%s", Printable(KeyText(snap, v.vertex, key)).c_str());
    std::printf("\n");
  }
  if (more)
    std::fprintf(stderr, "quiver: more than %llu vertices; --limit shows more\n",
                 static_cast<unsigned long long>(limit));
  return kOk;
}

int Path(int argc, const char* const* argv) {
  CliArgs args("quiver path [options] DIR FROM TO", kPathAbout);
  args.AddOption("--by", "", "LABEL.KEY",
                 "FROM and TO are values of KEY of LABEL vertices (through an index)");
  args.AddOption("--direction", "out", "out|in|both", "edges to follow (default out)");
  args.AddOption("--type", "", "T", "follow only edges of type T (repeatable; default all)");
  args.AddOption("--weight", "", "KEY", "the numeric edge property to add up (default: each edge costs 1)");
  args.AddOption("--default-weight", "1", "W", "the weight of an edge without KEY (default 1)");
  args.AddOption("--k", "1", "N", "the N shortest loopless paths (default 1)");
  args.AddOption("--show", "", "KEY", "print each vertex with its KEY property");
  args.AddFlag("--json", "print the paths as JSON");
  if (int rc = ParseArgs(args, argc, argv, 3); rc >= 0) return rc;
  PathSpec spec;
  if (!ParseDirection(args.Get("--direction"), &spec.direction)) {
    return Usage(args, "--direction must be out, in or both");
  }
  spec.edge_types = args.GetAll("--type");
  spec.weight_key = args.Get("--weight");
  if (!ParseDouble(args.Get("--default-weight"), &spec.default_weight)) {
    return Usage(args, "--default-weight needs a number");
  }
  std::uint64_t k = 0;
  if (!args.GetU64("--k", &k) || k == 0 || k > 1'000'000)
    return Usage(args, "--k needs a number from 1 to 1000000");
  const std::string& show = args.Get("--show");

  Result<std::unique_ptr<Graph>> graph = OpenReadOnly(args.positional()[0]);
  if (!graph.ok()) return Fail("open " + args.positional()[0], graph.status());
  const Snapshot snap = (*graph)->GetSnapshot();
  Result<VertexId> from = ResolveVertex(snap, args.positional()[1], args.Get("--by"));
  if (!from.ok()) return Fail("path: FROM", from.status());
  Result<VertexId> to = ResolveVertex(snap, args.positional()[2], args.Get("--by"));
  if (!to.ok()) return Fail("path: TO", to.status());
  TraversalContext ctx;
  std::vector<quiver::Path> paths;
  if (k == 1) {
    quiver::Path p;
    bool found = false;
    Status s = ShortestPath(snap, *from, *to, spec, ctx, &p, &found);
    if (!s.ok()) return Fail("path", s);
    if (found) paths.push_back(std::move(p));
  } else {
    Status s = KShortestPaths(snap, *from, *to, static_cast<std::size_t>(k), spec, ctx, &paths);
    if (!s.ok()) return Fail("path", s);
  }
  auto vertex_text = [&](VertexId v) {
    std::string t = std::to_string(v.value());
    if (!show.empty()) t += "(" + Printable(show) + "=" + Printable(KeyText(snap, v, show)) + ")";
    return t;
  };
  if (args.Has("--json")) {
    Json j = {{"from", from->value()}, {"to", to->value()}, {"paths", Json::array()}};
    for (const quiver::Path& p : paths) {
      Json x = {{"cost", p.cost}, {"vertices", Json::array()}, {"edges", Json::array()}};
      for (VertexId v : p.vertices) x["vertices"].push_back(v.value());
      for (EdgeId e : p.edges) x["edges"].push_back(e.value());
      if (!show.empty()) {
        Json values = Json::array();
        for (VertexId v : p.vertices) values.push_back(KeyJson(snap, v, show));
        x["properties"][show] = std::move(values);
      }
      j["paths"].push_back(std::move(x));
    }
    PrintJson(j);
    return paths.empty() ? kNoResult : kOk;
  }
  if (paths.empty()) {
    std::printf("no path from %s to %s\n", vertex_text(*from).c_str(), vertex_text(*to).c_str());
    return kNoResult;
  }
  for (const quiver::Path& p : paths) {
    std::string line = "cost " + FormatDouble(p.cost) + ": " + vertex_text(p.vertices[0]);
    for (std::size_t i = 0; i < p.edges.size(); ++i) {
      std::optional<EdgeInfo> e = snap.GetEdge(p.edges[i]);
      const std::string label =
          "e" + std::to_string(p.edges[i].value()) + ":" + (e ? Printable(snap.EdgeTypeName(e->type)) : "");
      const bool forward = !e || e->source == p.vertices[i];
      line += forward ? " -[" + label + "]-> " : " <-[" + label + "]- ";
      line += vertex_text(p.vertices[i + 1]);
    }
    std::printf("%s\n", line.c_str());
  }
  return kOk;
}

namespace {

// One algorithm's per-vertex results, in whichever type it gives.
struct Results {
  std::vector<double> real;
  std::vector<std::int64_t> integer;
  bool is_real = false;
};

std::string ValueText(const Results& r, std::size_t i) {
  return r.is_real ? FormatDouble(r.real[i]) : std::to_string(r.integer[i]);
}

Json ValueJson(const Results& r, std::size_t i) {
  if (!r.is_real) return r.integer[i];
  const double d = r.real[i];
  if (!std::isfinite(d)) return nullptr;  // JSON has no infinity
  return d;
}

// Writes the results, one line per vertex, to `out`.
Status WriteResults(std::FILE* out, const Snapshot& snap, const Projection& p, const Results& r, bool jsonl,
                    const std::string& id_key) {
  if (!jsonl)
    std::fprintf(out, id_key.empty() ? "vertex,value\n" : "vertex,%s,value\n", CsvField(id_key).c_str());
  for (std::uint32_t i = 0; i < p.vertex_count(); ++i) {
    const VertexId v = p.ToVertexId(i);
    if (jsonl) {
      Json j = {{"vertex", v.value()}, {"value", ValueJson(r, i)}};
      if (!id_key.empty()) j["properties"][id_key] = KeyJson(snap, v, id_key);
      const std::string line = j.dump(-1, ' ', false, Json::error_handler_t::replace);
      std::fprintf(out, "%s\n", line.c_str());
    } else if (id_key.empty()) {
      std::fprintf(out, "%llu,%s\n", static_cast<unsigned long long>(v.value()), ValueText(r, i).c_str());
    } else {
      std::fprintf(out, "%llu,%s,%s\n", static_cast<unsigned long long>(v.value()),
                   CsvField(KeyText(snap, v, id_key)).c_str(), ValueText(r, i).c_str());
    }
  }
  if (std::ferror(out)) return IOError("writing the results failed");
  return Status::Ok();
}

}  // namespace

int Run(int argc, const char* const* argv) {
  CliArgs args("quiver run [options] ALGORITHM DIR", kRunAbout, kRunFooter);
  args.AddOption("--source", "", "V", "the source vertex (bfs, sssp)");
  args.AddOption("--by", "", "LABEL.KEY",
                 "--source is the value of KEY of a LABEL vertex (through an index)");
  args.AddOption("--label", "", "L", "only vertices of label L (repeatable; default all)");
  args.AddOption("--type", "", "T", "only edges of type T (repeatable; default all)");
  args.AddFlag("--undirected", "treat every edge as undirected");
  args.AddOption("--weight", "weight", "KEY",
                 "sssp: the numeric edge property that is the weight (default weight)");
  args.AddOption("--default-weight", "", "W", "sssp: the weight of an edge without KEY (default: an error)");
  args.AddOption("--iterations", "", "N", "pagerank, cdlp");
  args.AddOption("--damping", "0.85", "D", "pagerank");
  args.AddOption("--threads", "0", "N", "threads (default 0: one per core, at most 8)");
  args.AddOption("--out", "", "FILE", "write the results to FILE (a new file) instead of stdout");
  args.AddOption("--format", "csv", "csv|jsonl", "the results' format (default csv)");
  args.AddOption("--id-key", "", "KEY", "add a column with each vertex's KEY property (its external id)");
  args.AddOption("--write-property", "", "KEY",
                 "write the results into the graph as vertex property KEY\n"
                 "(opens it for writing; no results on stdout unless --out -)");
  args.AddFlag("--json",
               "print the summary as JSON (on stderr when the results go to stdout); shows no progress");
  args.AddFlag("--quiet", "print no summary, show no progress");
  if (int rc = ParseArgs(args, argc, argv, 2); rc >= 0) return rc;
  const std::string& algorithm = args.positional()[0];
  const std::string& dir = args.positional()[1];
  static const char* const kAlgorithms[] = {"bfs", "pagerank", "wcc",       "cdlp",
                                            "lcc", "sssp",     "triangles", "kcore"};
  if (std::find(std::begin(kAlgorithms), std::end(kAlgorithms), algorithm) == std::end(kAlgorithms)) {
    return Usage(args, "unknown algorithm '" + algorithm + "'");
  }
  const bool needs_source = algorithm == "bfs" || algorithm == "sssp";
  if (needs_source != args.Has("--source")) {
    return Usage(args, needs_source ? algorithm + " needs --source" : algorithm + " takes no --source");
  }
  const std::string& format = args.Get("--format");
  if (format != "csv" && format != "jsonl") return Usage(args, "--format must be csv or jsonl");
  if (algorithm == "triangles") {
    for (const char* o : {"--out", "--format", "--id-key", "--write-property"}) {
      if (args.Has(o)) return Usage(args, std::string("triangles gives one number: it takes no ") + o);
    }
  }
  std::uint64_t threads = 0, iterations = algorithm == "cdlp" ? 10 : 20;
  if (!args.GetU64("--threads", &threads) || threads > 1024) return Usage(args, "--threads needs a number");
  if (args.Has("--iterations") && (!args.GetU64("--iterations", &iterations) || iterations > 1'000'000)) {
    return Usage(args, "--iterations needs a number (at most 1000000)");
  }
  double damping = 0;
  if (!ParseDouble(args.Get("--damping"), &damping)) return Usage(args, "--damping needs a number");
  ProjectionSpec ps;
  ps.vertex_labels = args.GetAll("--label");
  ps.edge_types = args.GetAll("--type");
  ps.undirected = args.Has("--undirected");
  ps.threads = static_cast<std::uint32_t>(threads);
  if (algorithm == "sssp") {
    ps.weight_property = args.Get("--weight");
    if (args.Has("--default-weight")) {
      double w = 0;
      if (!ParseDouble(args.Get("--default-weight"), &w))
        return Usage(args, "--default-weight needs a number");
      ps.default_weight = w;
    }
  }
  const std::string& write_key = args.Get("--write-property");
  const std::string& out_path = args.Get("--out");
  const bool quiet = args.Has("--quiet");

  // --out first: a file that exists (never overwritten) fails the run
  // before anything is computed or written back.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out_file(nullptr, &std::fclose);
  if (!out_path.empty() && out_path != "-") {
    out_file.reset(std::fopen(out_path.c_str(), "wx"));
    if (out_file == nullptr) return Fail("run: --out " + out_path, IOError(std::strerror(errno)));
  }
  // A failed run leaves no results file behind (an empty one would look like one).
  auto fail = [&](std::string_view what, const Status& s) {
    if (out_file != nullptr) {
      out_file.reset();
      std::remove(out_path.c_str());
    }
    return Fail(what, s);
  };
  Result<std::unique_ptr<Graph>> graph = write_key.empty() ? OpenReadOnly(dir) : OpenExisting(dir);
  if (!graph.ok()) return fail("open " + dir, graph.status());
  const Snapshot snap = (*graph)->GetSnapshot();
  // Results written into an indexed key could break the index's rule (a
  // unique key, a declared type) after some batches committed: refused.
  for (const IndexInfo& i : snap.Indexes()) {
    if (write_key.empty() || i.spec.element != ElementKind::kVertex) continue;
    if (std::find(i.spec.keys.begin(), i.spec.keys.end(), write_key) != i.spec.keys.end())
      return fail("run: --write-property " + write_key,
                  FailedPreconditionError("index '" + i.spec.name +
                                          "' covers that key; write the results to "
                                          "another key"));
  }
  VertexId source;
  if (needs_source) {
    Result<VertexId> v = ResolveVertex(snap, args.Get("--source"), args.Get("--by"));
    if (!v.ok()) return fail("run: --source", v.status());
    source = *v;
  }
  ProgressLine progress(!quiet && !args.Has("--json") && StderrIsTerminal());
  const auto start = std::chrono::steady_clock::now();
  Result<Projection> proj = Project(snap, ps);
  if (!proj.ok()) return fail("run: projection", proj.status());
  RunOptions run;
  run.threads = static_cast<std::uint32_t>(threads);
  run.progress = [&progress](const quiver::Progress& p) { progress.Update(p.phase, p.done, p.total, ""); };
  Results results;
  std::uint64_t triangles = 0;
  Status s;
  auto take_real = [&](Result<std::vector<double>> r) {
    if (!r.ok()) return r.status();
    results.real = std::move(*r);
    results.is_real = true;
    return Status::Ok();
  };
  auto take_ids = [&](Result<std::vector<VertexId>> r) {
    if (!r.ok()) return r.status();
    results.integer.reserve(r->size());
    for (VertexId v : *r) results.integer.push_back(static_cast<std::int64_t>(v.value()));
    return Status::Ok();
  };
  if (algorithm == "bfs") {
    Result<std::vector<std::int64_t>> r = Bfs(*proj, source, run);
    s = r.status();
    if (r.ok()) results.integer = std::move(*r);
  } else if (algorithm == "pagerank") {
    PageRankOptions o;
    o.iterations = static_cast<std::uint32_t>(iterations);
    o.damping = damping;
    s = take_real(PageRank(*proj, o, run));
  } else if (algorithm == "wcc") {
    s = take_ids(Wcc(*proj, run));
  } else if (algorithm == "cdlp") {
    s = take_ids(Cdlp(*proj, static_cast<std::uint32_t>(iterations), run));
  } else if (algorithm == "lcc") {
    s = take_real(Lcc(*proj, run));
  } else if (algorithm == "sssp") {
    s = take_real(Sssp(*proj, source, run));
  } else if (algorithm == "kcore") {
    Result<std::vector<std::uint32_t>> r = CoreNumbers(*proj, run);
    s = r.status();
    if (r.ok()) results.integer.assign(r->begin(), r->end());
  } else {  // triangles
    Result<std::uint64_t> r = TriangleCount(*proj, run);
    s = r.status();
    if (r.ok()) triangles = *r;
  }
  progress.Finish();
  if (!s.ok()) return fail("run " + algorithm, s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::uint64_t written = 0;
  const bool per_vertex = algorithm != "triangles";
  if (per_vertex && !write_key.empty()) {
    Result<std::uint64_t> w = results.is_real
                                  ? WriteVertexProperty(**graph, *proj, write_key, results.real)
                                  : WriteVertexProperty(**graph, *proj, write_key, results.integer);
    if (!w.ok())
      return fail(
          "run: --write-property " + write_key,
          Status(w.status().code(), std::string(w.status().message()) +
                                        " (the batches written before the failing one stay committed)"));
    written = *w;
    Status closed = (*graph)->Close();
    if (!closed.ok()) return fail("close", closed);
  }
  // Results go to --out, or to stdout unless they were written back.
  const bool to_stdout = per_vertex && (out_path == "-" || (out_path.empty() && write_key.empty()));
  if (out_file != nullptr) {
    Status ws = WriteResults(out_file.get(), snap, *proj, results, format == "jsonl", args.Get("--id-key"));
    if (std::fflush(out_file.get()) != 0 && ws.ok()) ws = IOError(std::strerror(errno));
    if (std::fclose(out_file.release()) != 0 && ws.ok()) ws = IOError(std::strerror(errno));
    if (!ws.ok()) return Fail("run: --out " + out_path, ws);
  } else if (to_stdout) {
    Status ws = WriteResults(stdout, snap, *proj, results, format == "jsonl", args.Get("--id-key"));
    if (!ws.ok()) return fail("run", ws);
  }
  // The summary: on stderr when the results took stdout.
  std::FILE* summary = to_stdout ? stderr : stdout;
  if (args.Has("--json")) {
    Json j = {{"algorithm", algorithm},
              {"vertices", proj->vertex_count()},
              {"edges", proj->edge_count()},
              {"seconds", seconds},
              {"written_back", written}};
    if (!per_vertex) j["triangles"] = triangles;
    if (!out_path.empty()) j["out"] = out_path;
    PrintJson(j, summary);  // on stderr when the results took stdout
  } else if (!per_vertex) {
    std::printf("triangles %llu\n", static_cast<unsigned long long>(triangles));
  } else if (!quiet) {
    std::fprintf(summary, "%s over %u vertices and %llu edges in %.3f s", algorithm.c_str(),
                 proj->vertex_count(), static_cast<unsigned long long>(proj->edge_count()), seconds);
    if (!write_key.empty()) {
      std::fprintf(summary, "; wrote property %s of %llu vertices", write_key.c_str(),
                   static_cast<unsigned long long>(written));
    }
    std::fprintf(summary, "\n");
  }
  return kOk;
}

}  // namespace quiver::cli
