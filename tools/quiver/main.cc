// quiver: the command-line tool for Quiver graph directories.
//
//   quiver import [options] DIR        load CSV, EVLP or JSON Lines files (a new graph: built whole in
//                                      one checkpoint)
//   quiver export [options] DIR OUT    write the graph to CSV, EVLP or JSON Lines files in OUT
//   quiver backup [options] DIR DEST   copy the graph into DEST as one checkpoint
//   quiver info [options] DIR          counts, keys, indexes, memory, checkpoint and WAL state
//   quiver verify [options] DIR        check every checkpoint and WAL segment (read-only)
//   quiver dump [options] DIR          the files' records, human-readable (or JSON Lines)
//   quiver neighbors [options] DIR V   a vertex's neighbours (to a depth)
//   quiver path [options] DIR FROM TO  a shortest path (or k of them)
//   quiver run [options] ALGORITHM DIR an analytics kernel; results to CSV / JSON Lines or a property
//
// Exit codes: 0 success; 1 the operation failed (bad input, I/O error, a
// damaged directory); 2 a usage error; 3 no answer (`path`: no path).
// Each command parses its arguments with CliArgs (cli_args.h, over CLI11);
// the command name is dispatched here.
// Errors go to stderr as one line each. README.md ("The quiver tool")
// documents every command. Uses only the public API.
#include <cstdio>
#include <string>

#include "cli.h"

namespace {

constexpr const char* kMainHelp =
    "usage: quiver <command> [options] ...\n"
    "commands:\n"
    "  import     load CSV (Neo4j-style headers), LDBC Graphalytics EVLP or JSON Lines files into a graph\n"
    "  export     write a graph's current state to CSV, EVLP or JSON Lines files\n"
    "  backup     copy a graph into a new directory as one checkpoint\n"
    "  info       counts by label and type, property keys, indexes, memory, checkpoint and WAL state\n"
    "  verify     check every checkpoint and WAL segment of a graph directory (changes nothing)\n"
    "  dump       print a graph directory's checkpoint and WAL records, as text or JSON Lines\n"
    "  neighbors  a vertex's neighbours, to a depth\n"
    "  path       a shortest path between two vertices (or the k shortest)\n"
    "  run        an analytics algorithm (bfs, pagerank, wcc, cdlp, lcc, sssp, triangles, kcore)\n"
    "`quiver <command> --help` describes a command. Exit codes: 0 ok, 1 failed, 2 usage error,\n"
    "3 no answer (path: no path).\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace quiver::cli;  // NOLINT(google-build-using-namespace)
  if (argc < 2) return Usage(kMainHelp, "no command");
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kMainHelp, stdout);
    return kOk;
  }
  const int n = argc - 2;
  const char* const* rest = argv + 2;
  int rc = kUsage;
  if (command == "import") {
    rc = Import(n, rest);
  } else if (command == "export") {
    rc = Export(n, rest);
  } else if (command == "backup") {
    rc = Backup(n, rest);
  } else if (command == "info" || command == "stats") {
    rc = Info(n, rest);
  } else if (command == "verify") {
    rc = Verify(n, rest);
  } else if (command == "dump") {
    rc = Dump(n, rest);
  } else if (command == "neighbors") {
    rc = Neighbors(n, rest);
  } else if (command == "path") {
    rc = Path(n, rest);
  } else if (command == "run") {
    rc = Run(n, rest);
  } else {
    return Usage(kMainHelp, "unknown command '" + command + "'");
  }
  // Output lost (a full disk, a closed pipe) is a failure, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "quiver: writing the output failed\n");
    return kFailed;
  }
  return rc;
}
