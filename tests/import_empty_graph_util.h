// Helpers of the tests of ImportNewGraph into an existing empty graph
// (import_empty_graph_test.cc and its review tests): a small CSV input in a
// SimFileSystem, the import run on it, and an empty graph made at kDir.
#ifndef QUIVER_TESTS_IMPORT_EMPTY_GRAPH_UTIL_H_
#define QUIVER_TESTS_IMPORT_EMPTY_GRAPH_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "env/file_system.h"
#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver::testing_empty_graph {

inline const std::string kDir = "/db";

inline Options GraphOptions(bool create, bool read_only = false) {
  Options o;
  o.writer.spin_microseconds = 0;
  o.create_if_missing = create;
  o.read_only = read_only;
  return o;
}

// ImportNewGraph into kDir through `fs`.
inline Result<ImportStats> Bulk(env::FileSystem& fs, const ImportSpec& spec,
                                const ImportOptions& options = {}) {
  import::Importer importer(&fs, kDir, spec, options);
  return importer.Run();
}

struct Input {
  ImportSpec spec;
  ImportOptions options;
};

// Three Persons and three edges with typed properties, ids kept in an id
// index; the files under /in.
inline Input Small(env::FileSystem& fs) {
  EXPECT_TRUE(fs.CreateDir("/in").ok());
  testing_import::PutFile(fs, "/in/v.csv", "id:ID,name,age:int\np1,Ada,36\np2,Bob,\np3,\"C, the third\",3\n");
  testing_import::PutFile(fs, "/in/e.csv",
                          ":START_ID,:END_ID,:TYPE,w:double\np1,p2,KNOWS,0.5\np2,p3,KNOWS,\np3,p1,LIKES,2\n");
  Input in;
  in.spec = {.vertices = {{"/in/v.csv", "Person"}}, .edges = {{"/in/e.csv", "R"}}};
  in.options.create_id_indexes = true;
  return in;
}

// The import's graph, as Import through batches into a new in-memory
// graph gives it.
inline std::string Expected(env::FileSystem& fs, const Input& in) {
  auto g = Graph::OpenInMemory().value();
  EXPECT_TRUE(testing_import::RunImport(fs, *g, in.spec, in.options).ok());
  return testing_import::Canonical(g->GetSnapshot());
}

// Every file of kDir with its bytes.
inline std::map<std::string, std::string> Files(env::FileSystem& fs) {
  std::map<std::string, std::string> out;
  const std::vector<std::string> names = fs.ListDir(kDir).value();
  for (const std::string& name : names) out[name] = testing_import::GetFile(fs, kDir + "/" + name);
  return out;
}

// Makes a graph at kDir, runs `fn` on it, closes it; returns its sequence.
template <typename Fn>
SequenceNumber MakeGraph(env::FileSystem& fs, Fn fn) {
  auto g = GraphImpl::OpenDurable(GraphOptions(true), kDir, &fs);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return 0;
  fn(**g);
  const SequenceNumber s = (*g)->GetSnapshot().sequence();
  EXPECT_TRUE((*g)->Close().ok());
  return s;
}

}  // namespace quiver::testing_empty_graph

#endif  // QUIVER_TESTS_IMPORT_EMPTY_GRAPH_UTIL_H_
