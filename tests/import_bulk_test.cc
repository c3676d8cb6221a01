// quiver::ImportNewGraph, the bulk path: a new graph built whole in its
// first checkpoint (src/import/bulk_writer.cc). It must give exactly the
// graph that Import through batches gives, open with its id indexes, refuse
// a directory that holds anything, remove what it wrote on any I/O error,
// and leave either no graph or the whole import after a crash at any
// point. Also the id map (src/import/id_map.h) that both paths share.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "env/fault_file_system.h"
#include "env/forwarding_file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "gtest/gtest.h"
#include "import/fast_lines.h"
#include "import/id_map.h"
#include "import_test_util.h"
#include "quiver/graph.h"
#include "quiver/import.h"
#include "verify.h"

namespace quiver {
namespace {

using testing_import::Canonical;
using testing_import::PutFile;
using testing_import::RunImport;

const std::string kDir = "/db";

Result<ImportStats> RunBulk(env::FileSystem& fs, const std::string& dir, const ImportSpec& spec,
                            const ImportOptions& options = {}) {
  import::Importer importer(&fs, dir, spec, options);
  return importer.Run();
}

// What a failed import may leave in its directory: nothing, or the LOCK
// it held (a writable Open leaves LOCK too).
bool HoldsNoGraph(env::FileSystem& fs, const std::string& dir) {
  if (!fs.Exists(dir).value()) return true;
  const std::vector<std::string> left = fs.ListDir(dir).value();
  return left.empty() || left == std::vector<std::string>{"LOCK"};
}

Options OpenOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.create_if_missing = false;
  return o;
}

// The index names and states a snapshot lists, sorted.
std::vector<std::string> IndexNames(const Snapshot& s) {
  std::vector<std::string> out;
  for (const IndexInfo& i : s.Indexes())
    out.push_back(i.spec.name + (i.state == IndexState::kReady ? ":ready" : ":building"));
  std::sort(out.begin(), out.end());
  return out;
}

// One input set: files written into /in, and how to import them. Large
// files come from `generated`, called in SetUp: gtest builds every
// parameter when the binary starts, in each of the binary's processes.
struct Input {
  const char* name;
  std::map<std::string, std::string> files;
  ImportSpec spec;
  ImportOptions options;
  std::function<void(std::map<std::string, std::string>&)> generated;
};

std::string EvlpVertices(int n, std::int64_t stride, std::int64_t offset) {
  std::string out;
  for (int i = 0; i < n; ++i) out += std::to_string(offset + stride * ((i * 7919) % n)) + "\n";
  return out;
}

std::string EvlpEdges(int n, int per_vertex, std::int64_t stride, std::int64_t offset) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < per_vertex; ++j) {
      const std::int64_t a = offset + stride * i;
      const std::int64_t b = offset + stride * ((i * 31 + j * 17 + 1) % n);
      out += std::to_string(a) + " " + std::to_string(b) + " " + std::to_string(0.25 * (i + j)) + "\n";
    }
  }
  return out;
}

std::vector<Input> Inputs() {
  std::vector<Input> v;
  {
    Input in{"TypedCsvWithGroupsQuotingAndIdIndexes", {}, {}, {}, {}};
    in.files["/in/people.csv"] =
        "uid:ID(P)|:LABEL|name|age:long|score:double|active:boolean|e:float[]|raw:bytes|skip:IGNORE\n"
        "p1|Person|\"Ada \"\"the first\"\" Lovelace\"|36|0.5|true|1;2.5|00ff|x\n"
        "p2||\"multi|line\nname\"|-7|1e3|FALSE|\"\"|\"\"|y\n"
        "p3|Robot|||||||\n"
        "7|Person|Seven||||||\n";
    // "1" is kept as a number by the id map, "0002" as text: both resolve.
    in.files["/in/cities.csv"] = "cid:ID(C)|name\n1|London\n0002|Paris\n";
    in.files["/in/edges.csv"] =
        ":START_ID(P)|:END_ID(C)|:TYPE|since:int\np1|1|LIVES_IN|1833\np2|0002||\n7|1|LIVES_IN|7\n";
    in.files["/in/knows.csv"] = ":START_ID(P)|:END_ID(P)|w:double\np1|p2|0.5\np2|7|\n";
    in.spec.vertices = {{"/in/people.csv", "Human"}, {"/in/cities.csv", "City"}};
    in.spec.edges = {{"/in/edges.csv", "VISITS"}, {"/in/knows.csv", "KNOWS"}};
    in.options.delimiter = '|';
    in.options.create_id_indexes = true;
    v.push_back(in);
  }
  {
    // Dense shuffled int ids over more than one checkpoint chunk of edges
    // (kChunkIds = 65,536) and more than one 1 MiB read chunk.
    Input in{"EvlpDenseIdsAcrossChunks", {}, {}, {}, {}};
    in.generated = [](std::map<std::string, std::string>& files) {
      files["/in/g.v"] = EvlpVertices(9000, 1, 100);
      files["/in/g.e"] = EvlpEdges(9000, 8, 1, 100);
    };
    in.spec = {.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
    in.options.format = DataFormat::kEvlp;
    in.options.create_id_indexes = true;
    v.push_back(in);
  }
  {
    // Sparse and negative ids: the id map keeps them hashed, not in an array.
    Input in{"EvlpSparseNegativeIds", {}, {}, {}, {}};
    in.generated = [](std::map<std::string, std::string>& files) {
      files["/in/g.v"] = EvlpVertices(500, 1'000'000'007, -250'000'000'000);
      files["/in/g.e"] = EvlpEdges(500, 3, 1'000'000'007, -250'000'000'000);
    };
    in.spec = {.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
    in.options.format = DataFormat::kEvlp;
    v.push_back(in);
  }
  {
    // Rejected rows are skipped the same way on both paths, a rejected
    // vertex taking its edges with it.
    Input in{"SkippedBadRows", {}, {}, {}, {}};
    in.files["/in/v.csv"] = "id:ID,age:int\na,1\nb,x\nc,3\na,4\nd,\n";
    in.files["/in/e.csv"] = ":START_ID,:END_ID,:TYPE\na,c,R\nb,c,R\nc,zz,R\nd,a,\nc,d,S\n";
    in.spec = {.vertices = {{"/in/v.csv", "N"}}, .edges = {{"/in/e.csv", "R"}}};
    in.options.skip_bad_rows = 10;
    in.options.create_id_indexes = true;
    v.push_back(in);
  }
  {
    // A rejected row's names are not interned: a key only it holds, or one
    // it holds first, gets the id batches would give it (review).
    Input in{"RejectedRowsGiveNoNames", {}, {}, {}, {}};
    in.files["/in/v.csv"] = "id:ID,p,q,r\na,,,\na,1,,9\nb,,2,\nc,3,4,\n";
    in.spec = {.vertices = {{"/in/v.csv", "N"}}};
    in.options.skip_bad_rows = 1;
    v.push_back(in);
  }
  {
    // JSON Lines: every value type, string and number ids, rows naming
    // their own label or taking the file's, edges over several blocks.
    Input in{"JsonLinesEveryValueType", {}, {}, {}, {}};
    in.files["/in/v.jsonl"] =
        "{\"id\": \"p1\", \"label\": \"Person\", \"properties\": {\"name\": \"Ada \\\"A\\\" \\u00e9\", "
        "\"age\": 36, \"score\": 0.5, \"ok\": true, \"e\": [1, 2.5], \"raw\": {\"bytes\": \"00ff\"}, "
        "\"gone\": null}}\n"
        "{\"id\": \"7\", \"properties\": {\"age\": -1}}\n"
        "{\"id\": \"p3\", \"label\": \"Robot\"}\n";
    in.files["/in/c.jsonl"] = "{\"id\": 1, \"label\": \"City\"}\n{\"id\": 2}\n";
    std::string edges;
    for (int i = 0; i < 300; ++i) {
      edges += i % 2 == 0
                   ? "{\"start\": \"p1\", \"end\": 7, \"properties\": {\"w\": " + std::to_string(i) + ".5}}\n"
                   : "{\"type\": \"LIKES\", \"end\": \"p3\", \"start\": 1}\n";
    }
    in.files["/in/e.jsonl"] = edges;
    in.spec.vertices = {{"/in/v.jsonl", "Human"}, {"/in/c.jsonl", "City"}};
    in.spec.edges = {{"/in/e.jsonl", "KNOWS"}};
    in.options.format = DataFormat::kJsonl;
    in.options.create_id_indexes = true;
    v.push_back(in);
  }
  {
    // string[] columns with a chosen array delimiter, and (next) JSON Lines
    // string arrays, on both paths: the bulk path's checkpoint holds lists.
    Input in{"StringListsInCsv", {}, {}, {}, {}};
    in.files["/in/v.csv"] =
        "id:ID,:LABEL,tags:string[],e:float[]\n"
        "p1,Person,math|po\\|et|,1|2\n"
        "p2,Person,\"\",\n"
        "p3,Person,,\n";
    in.files["/in/e.csv"] = ":START_ID,:END_ID,:TYPE,via:string[]\np1,p2,KNOWS,a;b|c\np2,p3,KNOWS,\"\"\n";
    in.spec.vertices = {{"/in/v.csv", ""}};
    in.spec.edges = {{"/in/e.csv", ""}};
    in.options.array_delimiter = '|';
    in.options.create_id_indexes = true;
    v.push_back(in);
  }
  {
    Input in{"StringListsInJsonl", {}, {}, {}, {}};
    in.files["/in/v.jsonl"] =
        "{\"id\": \"a\", \"label\": \"P\", \"properties\": {\"t\": [\"x\", \"\"], \"u\": {\"strings\": "
        "[]}}}\n"
        "{\"id\": \"b\", \"label\": \"P\", \"properties\": {\"t\": [\"\\u00e9\"]}}\n";
    in.files["/in/e.jsonl"] =
        "{\"start\": \"a\", \"end\": \"b\", \"type\": \"R\", \"properties\": {\"w\": [\"1\"]}}\n";
    in.spec.vertices = {{"/in/v.jsonl", ""}};
    in.spec.edges = {{"/in/e.jsonl", ""}};
    in.options.format = DataFormat::kJsonl;
    v.push_back(in);
  }
  {
    Input in{"NoEdgesAndNoIds", {}, {}, {}, {}};
    in.files["/in/v.csv"] = ":LABEL,x:int\nA,1\nB,\nA,3\n";
    in.spec = {.vertices = {{"/in/v.csv", ""}}};
    v.push_back(in);
  }
  return v;
}

class ImportBulkTest : public ::testing::TestWithParam<Input> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs_.CreateDir("/in").ok());
    std::map<std::string, std::string> files = GetParam().files;
    if (GetParam().generated) GetParam().generated(files);
    for (const auto& [path, content] : files) PutFile(fs_, path, content);
  }
  env::SimFileSystem fs_;
};

TEST_P(ImportBulkTest, GivesTheGraphThatBatchesGive) {
  const Input& in = GetParam();
  auto batched = Graph::OpenInMemory().value();
  Result<ImportStats> a = RunImport(fs_, *batched, in.spec, in.options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();

  Result<ImportStats> b = RunBulk(fs_, kDir, in.spec, in.options);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->vertices, a->vertices);
  EXPECT_EQ(b->edges, a->edges);
  EXPECT_EQ(b->batches, 0u);
  EXPECT_GT(b->checkpoint_bytes, 0u);
  ASSERT_EQ(b->rejected.size(), a->rejected.size());
  for (std::size_t i = 0; i < a->rejected.size(); ++i) {
    EXPECT_EQ(b->rejected[i].line, a->rejected[i].line);
    EXPECT_EQ(b->rejected[i].reason, a->rejected[i].reason);
  }
  std::vector<std::string> created_a = a->indexes_created, created_b = b->indexes_created;
  std::sort(created_a.begin(), created_a.end());
  std::sort(created_b.begin(), created_b.end());
  EXPECT_EQ(created_b, created_a);

  // The directory holds exactly a checkpoint and the identity file, and
  // passes Verify.
  std::vector<std::string> names = fs_.ListDir(kDir).value();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"QUIVER", checkpoint::CheckpointFileName(1)}));
  Result<VerifyReport> report = VerifyGraphDirectory(&fs_, kDir);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->status.ToString();

  auto g = GraphImpl::OpenDurable(OpenOptions(), kDir, &fs_);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Snapshot s = (*g)->GetSnapshot();
  EXPECT_EQ(Canonical(s), Canonical(batched->GetSnapshot()));
  EXPECT_EQ(IndexNames(s), IndexNames(batched->GetSnapshot()));
  EXPECT_EQ(s.sequence(), 1u);
  // Every id resolves through its index to the vertex the batches gave it.
  for (const IndexInfo& i : s.Indexes()) {
    const Snapshot t = batched->GetSnapshot();
    for (VertexId v : t.Vertices(*t.FindLabel(i.spec.label))) {
      std::optional<PropertyView> id = t.GetProperty(v, i.spec.keys[0]);
      if (!id) continue;
      const PropertyValue value =
          id->as_int64() ? PropertyValue(*id->as_int64()) : PropertyValue(std::string(*id->as_string()));
      Result<std::optional<VertexId>> found = s.FindVertex(i.spec.label, i.spec.keys[0], value);
      ASSERT_TRUE(found.ok()) << found.status().ToString();
      EXPECT_EQ(*found, v);
    }
  }
  // The new graph takes writes, and they survive a reopen.
  WriteBatch w;
  w.AddVertex("Later", {{"k", 1}});
  ASSERT_TRUE((*g)->Write(std::move(w)).ok());
  const std::string after = Canonical((*g)->GetSnapshot());
  ASSERT_TRUE((*g)->Close().ok());
  g->reset();
  auto again = GraphImpl::OpenDurable(OpenOptions(), kDir, &fs_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Canonical((*again)->GetSnapshot()), after);
}

INSTANTIATE_TEST_SUITE_P(Inputs, ImportBulkTest, ::testing::ValuesIn(Inputs()),
                         [](const ::testing::TestParamInfo<Input>& i) { return std::string(i.param.name); });

Input SmallInput() {
  Input in{"Small", {}, {}, {}, {}};
  in.files["/in/v.csv"] = "id:ID,name,age:int\np1,Ada,36\np2,Bob,\np3,\"C, the third\",3\n";
  in.files["/in/e.csv"] = ":START_ID,:END_ID,:TYPE,w:double\np1,p2,KNOWS,0.5\np2,p3,KNOWS,\np3,p1,LIKES,2\n";
  in.spec = {.vertices = {{"/in/v.csv", "Person"}}, .edges = {{"/in/e.csv", "R"}}};
  in.options.create_id_indexes = true;
  return in;
}

void PutInput(env::FileSystem& fs, const Input& in) {
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  for (const auto& [path, content] : in.files) PutFile(fs, path, content);
}

std::string Expected(env::FileSystem& fs, const Input& in) {
  auto g = Graph::OpenInMemory().value();
  EXPECT_TRUE(RunImport(fs, *g, in.spec, in.options).ok());
  return Canonical(g->GetSnapshot());
}

TEST(ImportBulkRulesTest, RefusesADirectoryThatHoldsAnythingAndTouchesNothing) {
  env::SimFileSystem fs;
  const Input in = SmallInput();
  PutInput(fs, in);
  ASSERT_TRUE(fs.CreateDir(kDir).ok());
  PutFile(fs, kDir + "/notes.txt", "mine");
  Result<ImportStats> r = RunBulk(fs, kDir, in.spec, in.options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find("is not empty (it holds \"notes.txt\")"), std::string::npos);
  EXPECT_EQ(fs.ListDir(kDir).value(), std::vector<std::string>{"notes.txt"});

  // A graph's directory is not empty either.
  ASSERT_TRUE(RunBulk(fs, "/other", in.spec, in.options).ok());
  r = RunBulk(fs, "/other", in.spec, in.options);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(RunBulk(fs, "", in.spec, in.options).status().code(), StatusCode::kInvalidArgument);
}

TEST(ImportBulkRulesTest, BadInputCreatesNothing) {
  env::SimFileSystem fs;
  Input in = SmallInput();
  in.files["/in/e.csv"] = ":START_ID,:END_ID,:TYPE\np1,p2,R\np1,p9,R\n";
  PutInput(fs, in);
  Result<ImportStats> r = RunBulk(fs, kDir, in.spec, in.options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().substr(0, 16), "/in/e.csv:3:4: u") << r.status().ToString();
  EXPECT_FALSE(fs.Exists(kDir).value());
}

TEST(ImportBulkRulesTest, AnIdKeyFromAnOrdinaryColumnIsRefusedBeforeAnyGraph) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  // c.csv's P holds "id" from an ordinary column, while a.csv keeps the P
  // ids under "id": the unique index P.id could not be built.
  PutFile(fs, "/in/a.csv", "id:ID(A)\n1\n");
  PutFile(fs, "/in/c.csv", ":ID,:LABEL,id\nq,P,1\n");
  ImportSpec spec{.vertices = {{"/in/a.csv", "P"}, {"/in/c.csv", "P"}}};
  ImportOptions with_index;
  with_index.create_id_indexes = true;
  Result<ImportStats> r = RunBulk(fs, kDir, spec, with_index);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_EQ(r.status().message().substr(0, 12), "/in/c.csv:2:") << r.status().ToString();
  EXPECT_NE(r.status().message().find("from an ordinary column"), std::string::npos);
  EXPECT_TRUE(HoldsNoGraph(fs, kDir));
  // Without the index the same files import.
  ASSERT_TRUE(RunBulk(fs, "/ok", spec).ok());
}

// The import is held by one checkpoint and no log: if that checkpoint is
// damaged, Open refuses the directory; it never opens it as an empty graph.
TEST(ImportBulkRulesTest, ADamagedCheckpointIsCorruptionNeverAnEmptyGraph) {
  env::SimFileSystem fs;
  const Input in = SmallInput();
  PutInput(fs, in);
  ASSERT_TRUE(RunBulk(fs, kDir, in.spec, in.options).ok());
  const std::string path = kDir + "/" + checkpoint::CheckpointFileName(1);
  std::string bytes = fs.ReadFileForTest(path).value();
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
  PutFile(fs, path, bytes);
  auto g = GraphImpl::OpenDurable(OpenOptions(), kDir, &fs);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
}

// Every I/O operation the bulk path makes, failed in turn (once, and from
// then on): the import fails with that error, and the directory is left as
// it was found (empty, or not there). No Sync of a file is retried after it
// failed.
TEST(ImportBulkFaultTest, EveryFailedOperationLeavesNoFiles) {
  const Input in = SmallInput();
  for (env::FaultMode mode : {env::FaultMode::kOnce, env::FaultMode::kPersistent}) {
    std::uint64_t failures = 0;
    for (std::uint64_t n = 1;; ++n) {
      env::SimFileSystem sim;
      PutInput(sim, in);
      env::FaultFileSystem fs(&sim);
      fs.SetFault({.ops = env::FaultOp::kAll, .mode = mode, .at = n});
      Result<ImportStats> r = RunBulk(fs, kDir, in.spec, in.options);
      if (fs.faults_injected() == 0) {
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        break;
      }
      EXPECT_EQ(fs.TotalSyncsAfterFailedSync(), 0u);
      if (r.ok()) continue;  // a failed removal of a stale name, say: harmless
      ++failures;
      SCOPED_TRACE(::testing::Message() << "operation " << n << ": " << r.status().ToString());
      if (mode == env::FaultMode::kPersistent) continue;  // the clean-up may fail too
      Result<bool> exists = sim.Exists(kDir);
      ASSERT_TRUE(exists.ok());
      if (*exists) {
        EXPECT_TRUE(HoldsNoGraph(sim, kDir));
      }
    }
    EXPECT_GT(failures, 5u);
  }
}

// Power lost at every mutating operation of a bulk import, under every
// crash policy: the directory then opens as no graph, an empty new graph,
// or exactly the whole import, never as part of it.
TEST(ImportBulkCrashTest, PowerLossAnywhereLeavesNoGraphOrTheWholeImport) {
  const Input in = SmallInput();
  env::SimFileSystem once;
  PutInput(once, in);
  const std::string expected = Expected(once, in);
  const std::uint64_t base = once.operation_count();
  ASSERT_TRUE(RunBulk(once, kDir, in.spec, in.options).ok());
  const std::uint64_t total = once.operation_count() - base;
  ASSERT_GT(total, 5u);
  int whole = 0, none = 0;
  for (std::uint64_t n = 1; n <= total + 1; ++n) {
    env::SimFileSystem run;
    PutInput(run, in);
    run.SetCrashAtOperation(run.operation_count() + n);
    const bool ok = RunBulk(run, kDir, in.spec, in.options).ok();
    for (env::CrashPolicy p : env::kAllCrashPolicies) {
      SCOPED_TRACE(::testing::Message()
                   << "crash at operation " << n << " under " << env::CrashPolicyName(p));
      std::unique_ptr<env::SimFileSystem> crashed = run.Clone();
      crashed->Crash(p, n);
      auto g = GraphImpl::OpenDurable(OpenOptions(), kDir, crashed.get());
      if (!g.ok()) {
        EXPECT_EQ(g.status().code(), StatusCode::kNotFound) << g.status().ToString();
        EXPECT_FALSE(ok);
        ++none;
        continue;
      }
      const Snapshot s = (*g)->GetSnapshot();
      if (s.sequence() == 0) {
        EXPECT_EQ(s.vertex_count(), 0u);
        EXPECT_FALSE(ok);  // an acknowledged import survives every crash
        ++none;
      } else {
        EXPECT_EQ(Canonical(s), expected);
        ++whole;
      }
    }
  }
  EXPECT_GT(whole, 0);
  EXPECT_GT(none, 0);
}

// What one import did, as text: its counts, every rejected row, and the
// graph it gave (opened, for the bulk path).
std::string Outcome(env::SimFileSystem& fs, const ImportSpec& spec, const ImportOptions& options,
                    std::uint64_t block_bytes, bool bulk, const std::string& dir) {
  std::unique_ptr<Graph> memory;
  std::unique_ptr<import::Importer> importer;
  if (bulk) {
    importer = std::make_unique<import::Importer>(&fs, dir, spec, options);
  } else {
    memory = Graph::OpenInMemory().value();
    importer = std::make_unique<import::Importer>(&fs, *memory, spec, options);
  }
  importer->SetBlockBytesForTesting(block_bytes);
  Result<ImportStats> r = importer->Run();
  if (!r.ok()) return r.status().ToString();
  std::string out = std::to_string(r->vertices) + " " + std::to_string(r->edges) + "\n";
  for (const ImportRowError& e : r->rejected)
    out += e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + " " + e.reason + "\n";
  if (!options.reject_report.empty())
    out += testing_import::GetFile(fs, options.reject_report);  // the raw rows
  if (!bulk) return out + Canonical(memory->GetSnapshot());
  auto g = GraphImpl::OpenDurable(OpenOptions(), dir, &fs);
  if (!g.ok()) return g.status().ToString();
  return out + Canonical((*g)->GetSnapshot());
}

// An EVLP edge file cut into blocks of a few bytes and parsed on 2 and 3
// threads gives what one thread gives: the same rows rejected in the same
// order, the same error at the same position, the same graph; through
// batches and in bulk.
TEST(ImportParallelTest, AnyThreadCountAndBlockSizeGivesWhatOneThreadGives) {
  std::string vertices, edges;
  for (int i = 0; i < 300; ++i) vertices += std::to_string(1000 + (i * 37) % 300) + "\n";
  for (int i = 0; i < 3000; ++i) {
    const int a = 1000 + (i * 7) % 300, b = 1000 + (i * 13 + 5) % 300;
    if (i % 401 == 17) {
      edges += std::to_string(a) + " 77\n";  // unknown endpoint: rejected
    } else if (i % 577 == 3) {
      edges += "\n\r\n";  // empty lines count as lines
      edges += std::to_string(a) + " " + std::to_string(b) + "\r\n";
    } else {
      edges += std::to_string(a) + " " + std::to_string(b) + "\n";
    }
  }
  struct Case {
    const char* name;
    std::string edges;
    std::size_t skip;
    std::string outcome;  // a part of what one thread gives
  };
  const std::vector<Case> cases = {
      // i = 17 is on line 20: two empty lines came at i = 3.
      {"rows rejected", edges, 100, "300 2992\n/in/g.e:20:6 unknown :END_ID '77'\n"},
      // The sixth rejected row: i = 2022, after four pairs of empty lines.
      {"one too many rejected", edges, 5,
       "InvalidArgument: /in/g.e:2031:6: unknown :END_ID '77' (more than 5 bad rows)"},
      // 3,000 rows and six pairs of empty lines before it.
      {"invalid UTF-8 in a late block",
       edges + "1000 10\xff"
               "01\n1000 1001\n",
       100, "InvalidArgument: /in/g.e:3013:6: invalid UTF-8"},
      {"not an int in the middle",
       edges.substr(0, edges.find('\n', 9000) + 1) + "1000 x1\n" + edges.substr(edges.find('\n', 9000) + 1),
       100, "/in/g.e:905:6 'x1' is not an int"},
      {"no line break at the end", edges + "1000 1001", 100, "300 2993\n"},
  };
  // Weighted lines in every odd form the plain-line parser leaves to the
  // generic reader, and plain ones beside them.
  std::string weighted;
  const char* odd[] = {"1000 1001 0.5",
                       "+1000 1001 1",
                       "1000\t1001 1",
                       "1000 1001 +2",
                       "1000 1001 1e3",
                       "1000 1001 .5",
                       "1000 1001 5.",
                       "1000 1001 inf",
                       "1000 1001 nan",
                       "1000 1001 -0.0",
                       "01000 1001 1",
                       "1000 1001  1",
                       "1000 1001 1 ",
                       "1000 1001",
                       "1000 1001 1\r2",
                       "1000 1001 1\r",
                       "-0 1001 1",
                       "1000 1001 1x",
                       "1000 99999999999999999999 1",
                       "1000 1001 \xc3\xa9",
                       "1000 1001 1e999",
                       "1000 1001 0x1p3",
                       "1000 1001 -1.25e-7"};
  for (int round = 0; round < 40; ++round) {
    for (const char* line : odd) weighted += std::string(line) + (round % 3 == 0 ? "\r\n" : "\n");
  }
  std::vector<Case> all = cases;
  all.push_back({"weighted odd forms", weighted, 100'000, " 'inf' is not a finite double"});
  all.push_back({"weighted, too many bad", weighted, 20, "(more than 20 bad rows)"});
  for (const Case& c : all) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    PutFile(fs, "/in/g.v", vertices);
    PutFile(fs, "/in/g.e", c.edges);
    const ImportSpec spec{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
    ImportOptions one;
    one.format = DataFormat::kEvlp;
    one.skip_bad_rows = c.skip;
    one.create_id_indexes = true;
    one.threads = 1;
    int dirs = 0;
    for (bool bulk : {false, true}) {
      const std::string want = Outcome(fs, spec, one, 1 << 20, bulk, "/db" + std::to_string(dirs++));
      EXPECT_NE(want.find(c.outcome), std::string::npos) << want.substr(0, 300);
      for (std::uint32_t threads : {2u, 3u}) {
        for (std::uint64_t block : {1u, 7u, 64u, 4096u}) {
          ImportOptions o = one;
          o.threads = threads;
          EXPECT_EQ(Outcome(fs, spec, o, block, bulk, "/db" + std::to_string(dirs++)), want)
              << threads << " threads, blocks of " << block << (bulk ? " bytes, bulk" : " bytes, batches");
        }
      }
    }
  }
}

// CSV edge files are cut only where a record ends (PlanQuotedBlocks):
// quoted fields with line breaks, doubled quotes and delimiters, CRLF,
// empty lines, rejected rows and quoting errors late in the file give on
// any thread count and block size what one thread gives.
TEST(ImportParallelTest, CsvCutWhereQuotesAllowGivesWhatOneThreadGives) {
  std::string vertices = "id:ID,name\n";
  for (int i = 0; i < 100; ++i) vertices += "v" + std::to_string(i) + ",n" + std::to_string(i) + "\n";
  std::string edges = ":START_ID,:END_ID,:TYPE,note,w:int\n";
  for (int i = 0; i < 600; ++i) {
    const std::string a = "v" + std::to_string(i % 100), b = "v" + std::to_string((i * 7 + 3) % 100);
    switch (i % 9) {
      case 0: edges += a + "," + b + ",R,\"two\nlines\"," + std::to_string(i) + "\n"; break;
      case 1: edges += a + "," + b + ",R,\"say \"\"hi\"\", ok\",1\r\n"; break;
      case 2: edges += "\n" + a + "," + b + ",,\"\",2\n"; break;
      case 3: edges += a + "," + b + ",R,\"\n\n\",3\n"; break;
      case 4: edges += a + ",zz,R,x,4\n"; break;              // unknown endpoint: rejected
      case 5: edges += a + "," + b + ",R,\"q\",x5\n"; break;  // not an int: rejected
      default: edges += a + "," + b + ",S,plain," + std::to_string(i) + "\n";
    }
  }
  struct Case {
    const char* name;
    std::string edges;
    std::string outcome;  // a part of what one thread gives
  };
  const std::vector<Case> cases = {
      {"quoted line breaks", edges, " 'x5' is not an int"},
      // One thread reads the stray quote's field on to the next quote, then
      // fails there; the blocks cut by quote parity do the same.
      {"a stray quote mid-file", edges + "v1,v2,R,\"open,1\n" + edges.substr(edges.find('\n') + 1),
       "871:10: unexpected character after a closing quote"},
      {"unterminated quote at the end", edges + "v1,v2,R,\"open,1\nv1,v2,R,x,2\n",
       "unterminated quoted field"},
      {"text after a closing quote late", edges + "v1,v2,R,\"a\"b,1\n" + "v1,v2,R,\"c\",2\n",
       "after a closing quote"},
      {"quote in an unquoted field late", edges + "v1,v2,R,a\"b,1\n", "quote inside an unquoted field"},
      {"header only", ":START_ID,:END_ID,:TYPE\n", "100 0\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    PutFile(fs, "/in/v.csv", vertices);
    PutFile(fs, "/in/e.csv", c.edges);
    // The same rows with the header in its own file (ImportFile::header):
    // the blocks start at byte 0 and line 1.
    const std::size_t header_end = c.edges.find('\n') + 1;
    PutFile(fs, "/in/eh.csv", c.edges.substr(0, header_end));
    PutFile(fs, "/in/e-rows.csv", c.edges.substr(header_end));
    const ImportSpec spec{.vertices = {{"/in/v.csv", "V"}}, .edges = {{"/in/e.csv", "E"}}};
    const ImportSpec parts{.vertices = {{"/in/v.csv", "V"}},
                           .edges = {{"/in/e-rows.csv", "E", "/in/eh.csv"}}};
    ImportOptions one;
    one.skip_bad_rows = 1000;
    one.threads = 1;
    int dirs = 0;
    for (bool bulk : {false, true}) {
      const std::string want = Outcome(fs, spec, one, 1 << 20, bulk, "/db" + std::to_string(dirs++));
      EXPECT_NE(want.find(c.outcome), std::string::npos) << want.substr(0, 300);
      const std::string want_parts = Outcome(fs, parts, one, 1 << 20, bulk, "/db" + std::to_string(dirs++));
      for (std::uint32_t threads : {2u, 3u}) {
        for (std::uint64_t block : {1u, 5u, 64u, 4096u}) {
          ImportOptions o = one;
          o.threads = threads;
          EXPECT_EQ(Outcome(fs, spec, o, block, bulk, "/db" + std::to_string(dirs++)), want)
              << threads << " threads, blocks of " << block << (bulk ? " bytes, bulk" : " bytes, batches");
          EXPECT_EQ(Outcome(fs, parts, o, block, bulk, "/db" + std::to_string(dirs++)), want_parts)
              << "header file, " << threads << " threads, blocks of " << block
              << (bulk ? " bytes, bulk" : "");
        }
      }
      // One line less before every row: the same graph, each rejected row
      // a line earlier in its file.
      if (want.find("InvalidArgument") == std::string::npos) {
        std::istringstream a(want), b(want_parts);
        std::string la, lb;
        while (std::getline(a, la) && std::getline(b, lb)) {
          if (!la.starts_with("/in/e.csv:")) {
            EXPECT_EQ(la, lb);
            continue;
          }
          const std::size_t colon = la.find(':', 10);
          EXPECT_EQ(lb, "/in/e-rows.csv:" + std::to_string(std::stoull(la.substr(10, colon - 10)) - 1) +
                            la.substr(colon));
        }
      }
    }
  }
}

// Plain EVLP vertex lines skip the generic reader (fast_lines.h) in pass 1
// and on the bulk path's pass 2. Every odd form of a line, duplicates,
// empty lines and CRLF give, at any block size and on 1 or 2 threads, what
// the generic path gives (the same file gzip-compressed is read by the generic path only):
// the same rows rejected at the same positions, the same error, the same
// graph.
TEST(ImportParallelTest, EvlpVertexLinesReadFastGiveWhatTheGenericPathGives) {
  std::string plain;
  const char* odd[] = {"+17",
                       " 18",
                       "19 ",
                       "007",
                       "-0",
                       "99999999999999999999",
                       "12\r",
                       "\t14",
                       "1e3",
                       "abc",
                       "5",
                       "-3",
                       "--4",
                       "4-",
                       "1234567890123456789",
                       "\xc3\xa9",
                       "8 9",
                       "0x10",
                       "\r",
                       "",
                       "-",
                       "-000",
                       "123456789012345678",
                       "9223372036854775807",
                       "-9223372036854775808",
                       "9223372036854775808"};
  for (int i = 0; i < 200; ++i) {
    plain += std::to_string((i * 37) % 200) + (i % 7 == 0 ? "\r\n" : "\n");
    if (i % 9 == 4) plain += std::string(odd[(i / 9) % (sizeof(odd) / sizeof(odd[0]))]) + "\n";
  }
  struct Case {
    const char* name;
    std::string vertices;
    std::size_t skip;
    std::string id_key;
  };
  const std::vector<Case> cases = {
      {"odd lines rejected", plain, 1000, "id"},      {"ids not kept", plain, 1000, ""},
      {"one bad row too many", plain, 3, "id"},       {"an odd first line", "+5\n" + plain, 1000, "id"},
      {"every line odd", "+1\n+2\n 3\n", 1000, "id"}, {"no line break at the end", "1\n2\n3", 0, "id"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    PutFile(fs, "/in/g.v", c.vertices);
    PutFile(fs, "/in/z.v", testing_import::Gzip(c.vertices));
    PutFile(fs, "/in/g.e", "0 1\n5 7\n1 0\n");
    ImportOptions o;
    o.format = DataFormat::kEvlp;
    o.skip_bad_rows = c.skip;
    o.evlp_id_key = c.id_key;
    o.create_id_indexes = !c.id_key.empty();
    o.threads = 1;
    int dirs = 0;
    for (bool bulk : {false, true}) {
      const ImportSpec generic{.vertices = {{"/in/z.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
      std::string want = Outcome(fs, generic, o, 1 << 20, bulk, "/db" + std::to_string(dirs++));
      for (std::size_t at = want.find("/in/z.v"); at != std::string::npos; at = want.find("/in/z.v", at))
        want.replace(at, 7, "/in/g.v");
      const ImportSpec fast{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
      // One thread (ValidateVerticesFast, BulkWriteVerticesFast) and two
      // (parallel_vertices.cc: the workers parse, the write step adds).
      for (std::uint32_t threads : {1u, 2u}) {
        ImportOptions t = o;
        t.threads = threads;
        for (std::uint64_t block : {1u, 5u, 64u, 1u << 20}) {
          EXPECT_EQ(Outcome(fs, fast, t, block, bulk, "/db" + std::to_string(dirs++)), want)
              << threads << " threads, blocks of " << block << (bulk ? " bytes, bulk" : " bytes, batches");
        }
      }
    }
  }
}

// Vertex files cut into blocks of a few bytes and parsed on 2 and 3
// threads give what one thread gives, in every format: the same ids, the
// same duplicate rejected with the same line (the first one stays), the
// same error at the same position, the same graph; through batches and in
// bulk, with and without id indexes. A second vertex file of the same
// label and key in another id space has ids rejected after both files were
// read, which moves the bulk path's vertex ids of later blocks.
TEST(ImportParallelTest, VertexFilesOnAnyThreadCountGiveWhatOneThreadGives) {
  std::string evlp, csv = "id:ID(P),:LABEL,name,age:int\n", jsonl;
  for (int i = 0; i < 400; ++i) {
    const int id = (i * 37) % 300;  // every id of 0..99 twice, some three times
    evlp += std::to_string(id) + (i % 5 == 0 ? "\r\n" : "\n");
    if (i % 53 == 7) evlp += "\n+" + std::to_string(id) + "\n";  // an empty line, a bad id
    const std::string name = i % 11 == 0 ? "\"two\nlines, \"\"quoted\"\"\"" : "n" + std::to_string(i);
    const std::string age = i % 41 == 9 ? "x" : std::to_string(i);  // not an int: rejected
    csv += "p" + std::to_string(id) + "," + (i % 3 == 0 ? "" : "Person") + "," + name + "," + age + "\n";
    if (i % 61 == 5) csv += "\r\n";
    jsonl += "{\"id\": " + std::to_string(id) + ", \"properties\": {\"n\": " + std::to_string(i) + "}}\n";
    if (i % 67 == 3) jsonl += "{\"id\": " + std::to_string(id) + ", \"bad\": 1}\n";
  }
  const std::string other_csv = "id:ID(Q),:LABEL\np7,Person\nq1,Person\np250,Person\nq1,Person\n";
  struct Case {
    const char* name;
    DataFormat format;
    std::vector<std::pair<std::string, std::string>> vertices;  // path, content
    std::string edges;
    std::size_t skip;
    std::string outcome;  // a part of what one thread gives
  };
  const std::vector<Case> cases = {
      {"EVLP duplicates and bad lines",
       DataFormat::kEvlp,
       {{"/in/g.v", evlp}},
       "0 1\n37 74\n",
       1000,
       " duplicate id '37' (first at /in/g.v:2)"},
      {"EVLP, one bad row too many",
       DataFormat::kEvlp,
       {{"/in/g.v", evlp}},
       "0 1\n",
       30,
       "(more than 30 bad rows)"},
      {"EVLP, a late invalid byte",
       DataFormat::kEvlp,
       {{"/in/g.v", evlp + "5\xff\n"}},
       "0 1\n",
       1000,
       "invalid UTF-8"},
      {"CSV quoted lines, duplicates, two id spaces",
       DataFormat::kCsv,
       {{"/in/p.csv", csv}, {"/in/q.csv", other_csv}},
       ":START_ID(P),:END_ID(Q),:TYPE\np1,q1,R\np7,p7,R\n",
       1000,
       "duplicate id 'p37' (first at /in/p.csv:4)"},
      {"CSV, an unterminated quote late",
       DataFormat::kCsv,
       {{"/in/p.csv", csv + "p1,,\"open,1\n"}},
       ":START_ID(P),:END_ID(P),:TYPE\n",
       1000,
       "unterminated quoted field"},
      {"JSON Lines",
       DataFormat::kJsonl,
       {{"/in/v.jsonl", jsonl}},
       "{\"start\": 0, \"end\": 37}\n",
       1000,
       "unknown member \"bad\""},
  };
  for (const Case& c : cases) {
    for (bool indexes : {false, true}) {
      SCOPED_TRACE(::testing::Message() << c.name << (indexes ? ", id indexes" : ""));
      env::SimFileSystem fs;
      ASSERT_TRUE(fs.CreateDir("/in").ok());
      ImportSpec spec;
      for (const auto& [path, content] : c.vertices) {
        PutFile(fs, path, content);
        spec.vertices.push_back({path, "V"});
      }
      PutFile(fs, "/in/edges", c.edges);
      spec.edges = {{"/in/edges", "E"}};
      ImportOptions one;
      one.format = c.format;
      one.skip_bad_rows = c.skip;
      one.create_id_indexes = indexes;
      one.reject_report = "/in/rejected.csv";  // each rejected row's raw text, as one thread read it
      one.threads = 1;
      int dirs = 0;
      for (bool bulk : {false, true}) {
        const std::string want = Outcome(fs, spec, one, 1 << 20, bulk, "/db" + std::to_string(dirs++));
        EXPECT_NE(want.find(c.outcome), std::string::npos) << want.substr(0, 600);
        for (std::uint32_t threads : {2u, 3u}) {
          for (std::uint64_t block : {1u, 7u, 64u, 4096u}) {
            ImportOptions o = one;
            o.threads = threads;
            EXPECT_EQ(Outcome(fs, spec, o, block, bulk, "/db" + std::to_string(dirs++)), want)
                << threads << " threads, blocks of " << block << (bulk ? " bytes, bulk" : " bytes, batches");
          }
        }
      }
    }
  }
}

// Rewrites a file in the wrapped SimFileSystem when something happens
// (the path's n-th open for reading, or the first checkpoint .tmp opened
// for writing), to test an input that changes between the two passes.
class ChangingFileSystem : public env::ForwardingFileSystem {
 public:
  ChangingFileSystem(env::SimFileSystem* sim, std::string path, std::string content, int on_open)
      : ForwardingFileSystem(sim),
        sim_(sim),
        path_(std::move(path)),
        content_(std::move(content)),
        on_open_(on_open) {}
  Result<std::unique_ptr<env::ReadableFile>> OpenReadable(const std::string& path) override {
    if (path == path_ && ++opens_ == on_open_) Change();
    return ForwardingFileSystem::OpenReadable(path);
  }
  Result<std::unique_ptr<env::WritableFile>> OpenWritable(const std::string& path,
                                                          env::OpenMode mode) override {
    if (on_open_ == 0 && path.ends_with(".qck.tmp")) Change();
    return ForwardingFileSystem::OpenWritable(path, mode);
  }

 private:
  void Change() { EXPECT_TRUE(sim_->WriteFileForTest(path_, content_).ok()); }
  env::SimFileSystem* sim_;
  const std::string path_, content_;
  const int on_open_;  // 0: when the checkpoint's .tmp is opened
  int opens_ = 0;
};

// Review findings: inputs that change between the passes are InternalError
// on both paths, never a wrong graph or a read out of bounds.
TEST(ImportBulkReviewTest, AFileChangedBetweenThePassesIsAnError) {
  {
    // Through batches: x is rejected (the graph holds it), and the edge
    // file then names x.
    env::SimFileSystem sim;
    ASSERT_TRUE(sim.CreateDir("/in").ok());
    PutFile(sim, "/in/v.csv", "id:ID\nx\ny\nz\n");
    PutFile(sim, "/in/e.csv", ":START_ID,:END_ID,:TYPE\ny,z,R\n");
    ChangingFileSystem fs(&sim, "/in/e.csv", ":START_ID,:END_ID,:TYPE\ny,x,R\n", 2);
    auto g = Graph::OpenInMemory().value();
    WriteBatch b;
    b.AddVertex("N", {{"id", "x"}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ImportOptions o;
    o.skip_bad_rows = 1;
    o.threads = 1;  // the opens counted are one thread's (a CSV edge file is cut into blocks on more)
    const ImportSpec spec{.vertices = {{"/in/v.csv", "N"}}, .edges = {{"/in/e.csv", "R"}}};
    Result<ImportStats> r = RunImport(fs, *g, spec, o);
    EXPECT_EQ(r.status().code(), StatusCode::kInternal) << r.status().ToString();
    EXPECT_NE(r.status().message().find("changed"), std::string::npos) << r.status().ToString();
  }
  // Into a new graph: an id twice in pass 2, also where a vertex without an
  // id makes the vertex ids differ from the entries; on one thread (the
  // file changes at its second open, pass 2's) and on two (a vertex file is
  // cut into blocks there, opened more often: it changes when pass 2
  // starts, at the checkpoint's .tmp).
  for (std::uint32_t threads : {1u, 2u}) {
    for (const char* first : {"", ":LABEL\nA\n"}) {
      env::SimFileSystem sim;
      ASSERT_TRUE(sim.CreateDir("/in").ok());
      PutFile(sim, "/in/v.csv", "id:ID\na\nb\n");
      ImportSpec spec{.vertices = {{"/in/v.csv", "N"}}};
      if (*first != 0) {
        PutFile(sim, "/in/u.csv", first);
        spec.vertices.insert(spec.vertices.begin(), {"/in/u.csv", "N"});
      }
      ChangingFileSystem fs(&sim, "/in/v.csv", "id:ID\na\na\n", threads == 1 ? 2 : 0);
      ImportOptions o;
      o.create_id_indexes = true;
      o.threads = threads;
      Result<ImportStats> r = RunBulk(fs, kDir, spec, o);
      EXPECT_EQ(r.status().code(), StatusCode::kInternal) << threads << ": " << r.status().ToString();
      EXPECT_TRUE(HoldsNoGraph(sim, kDir));
    }
  }
  // An EVLP edge file that shrinks, or grows, after pass 1, on 1 and 2
  // threads: Internal either way, and no graph.
  const std::pair<std::string, std::string> changes[] = {{"1 2\n2 1\n1 1\n", "1 2\n"},
                                                         {"1 2\n2 1\n", "1 2\n2 1\n1 1\n"}};
  for (const auto& [before, after] : changes) {
    for (std::uint32_t threads : {1u, 2u}) {
      env::SimFileSystem sim;
      ASSERT_TRUE(sim.CreateDir("/in").ok());
      PutFile(sim, "/in/g.v", "1\n2\n");
      PutFile(sim, "/in/g.e", before);
      ChangingFileSystem fs(&sim, "/in/g.e", after, 0);
      ImportOptions o;
      o.format = DataFormat::kEvlp;
      o.threads = threads;
      const ImportSpec spec{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
      import::Importer importer(&fs, kDir, spec, o);  // holds `o` by reference
      importer.SetBlockBytesForTesting(3);
      Result<ImportStats> r = importer.Run();
      EXPECT_EQ(r.status().code(), StatusCode::kInternal) << threads << ": " << r.status().ToString();
      EXPECT_TRUE(HoldsNoGraph(sim, kDir));
    }
  }
}

TEST(ImportBulkReviewTest, SkippingEveryBadRowChecksEveryRow) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/g.v", "1\n2\n");
  PutFile(fs, "/in/g.e", "1 2\n1 77\n2 1\n1 x\n");
  const ImportSpec spec{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
  ImportOptions o;
  o.format = DataFormat::kEvlp;
  o.skip_bad_rows = SIZE_MAX;
  for (bool bulk : {false, true}) {
    o.threads = 1;
    const std::string one = Outcome(fs, spec, o, 4, bulk, bulk ? "/one" : "");
    EXPECT_EQ(one.substr(0, 4), "2 2\n") << one;
    EXPECT_NE(one.find("/in/g.e:2:3 unknown :END_ID '77'"), std::string::npos) << one;
    o.threads = 2;
    EXPECT_EQ(Outcome(fs, spec, o, 4, bulk, bulk ? "/two" : ""), one);
  }
  // Absurd thread counts are capped, not a failure.
  o.threads = UINT32_MAX;
  EXPECT_TRUE(RunBulk(fs, "/many", spec, o).ok());
}

TEST(ImportBulkReviewTest, IdIndexesThatWouldShareANameAreRefusedBeforeAnyGraph) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/a.csv", "c:ID(G1)\n1\n");
  PutFile(fs, "/in/b.csv", "b.c:ID(G2)\n1\n");
  const ImportSpec spec{.vertices = {{"/in/a.csv", "A.b"}, {"/in/b.csv", "A"}}};
  ImportOptions o;
  o.create_id_indexes = true;
  Result<ImportStats> r = RunBulk(fs, kDir, spec, o);
  EXPECT_EQ(r.status().code(), StatusCode::kAlreadyExists) << r.status().ToString();
  EXPECT_NE(r.status().message().find("'A.b.c'"), std::string::npos);
  EXPECT_FALSE(fs.Exists(kDir).value());
  // Through batches the second CreateIndex is refused the same way.
  auto g = Graph::OpenInMemory().value();
  EXPECT_EQ(RunImport(fs, *g, spec, o).status().code(), StatusCode::kAlreadyExists);
}

TEST(ImportBulkReviewTest, BadOptionsAndNamesAreRefused) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  PutFile(fs, "/in/v.csv", "id:ID\xA7name\na\xC2\xA7x\n");
  ImportOptions o;
  o.delimiter = '\xA7';  // a byte of a UTF-8 character: it would cut "\xC2\xA7" in two
  Result<ImportStats> r = RunBulk(fs, kDir, {.vertices = {{"/in/v.csv", "N"}}}, o);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  PutFile(fs, "/in/w.csv", "id:ID\na\n");
  r = RunBulk(fs, kDir, {.vertices = {{"/in/w.csv", "N\xff"}}}, {.create_id_indexes = true});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  // A file's label naming two labels: refused up front, on both paths and
  // both formats (an EVLP vertex file has no :LABEL column to point at).
  PutFile(fs, "/in/g.v", "1\n");
  for (DataFormat format : {DataFormat::kCsv, DataFormat::kEvlp}) {
    ImportOptions two;
    two.format = format;
    const ImportSpec spec{.vertices = {{format == DataFormat::kCsv ? "/in/w.csv" : "/in/g.v", "A;B"}}};
    r = RunBulk(fs, kDir, spec, two);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    auto g = Graph::OpenInMemory().value();
    EXPECT_EQ(RunImport(fs, *g, spec, two).status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(fs.Exists(kDir).value());
}

// An Open of the directory while the import writes it is refused (the
// import holds LOCK), and the import then completes.
class OpenDuringImport : public env::ForwardingFileSystem {
 public:
  explicit OpenDuringImport(env::FileSystem* base) : ForwardingFileSystem(base) {}
  Result<std::unique_ptr<env::WritableFile>> OpenWritable(const std::string& path,
                                                          env::OpenMode mode) override {
    if (!tried_ && path.ends_with(".qck.tmp")) {
      tried_ = true;
      Options o;
      o.create_if_missing = true;
      open_status_ = GraphImpl::OpenDurable(o, kDir, this).status();
    }
    return ForwardingFileSystem::OpenWritable(path, mode);
  }
  bool tried_ = false;
  Status open_status_;
};

TEST(ImportBulkReviewTest, TheDirectoryIsLockedWhileTheImportWritesIt) {
  env::SimFileSystem sim;
  const Input in = SmallInput();
  PutInput(sim, in);
  OpenDuringImport fs(&sim);
  ASSERT_TRUE(RunBulk(fs, kDir, in.spec, in.options).ok());
  ASSERT_TRUE(fs.tried_);
  EXPECT_EQ(fs.open_status_.code(), StatusCode::kFailedPrecondition) << fs.open_status_.ToString();
  auto g = GraphImpl::OpenDurable(OpenOptions(), kDir, &sim);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Canonical((*g)->GetSnapshot()), Expected(sim, in));
}

// A failure after the checkpoint's rename (the identity file's sync) is
// made durable: no power loss after it brings the import back.
TEST(ImportBulkReviewTest, AFailedImportStaysFailedAfterAPowerLoss) {
  const Input in = SmallInput();
  env::SimFileSystem sim;
  PutInput(sim, in);
  env::FaultFileSystem fs(&sim);
  fs.SetFault({.ops = env::FaultOp::kSync, .at = 1, .path_contains = "QUIVER.tmp"});
  ASSERT_FALSE(RunBulk(fs, kDir, in.spec, in.options).ok());
  ASSERT_EQ(fs.faults_injected(), 1u);
  for (env::CrashPolicy p : env::kAllCrashPolicies) {
    std::unique_ptr<env::SimFileSystem> crashed = sim.Clone();
    crashed->Crash(p, 7);
    auto g = GraphImpl::OpenDurable(OpenOptions(), kDir, crashed.get());
    EXPECT_FALSE(g.ok()) << env::CrashPolicyName(p) << ": the failed import came back";
  }
}

// After a crash that left the checkpoint's .tmp, the import can simply run
// again.
TEST(ImportBulkReviewTest, AnImportCutShortByACrashCanBeRunAgain) {
  const Input in = SmallInput();
  env::SimFileSystem once;
  PutInput(once, in);
  const std::uint64_t base = once.operation_count();
  ASSERT_TRUE(RunBulk(once, kDir, in.spec, in.options).ok());
  const std::uint64_t total = once.operation_count() - base;
  for (std::uint64_t n = 1; n <= total; ++n) {
    env::SimFileSystem run;
    PutInput(run, in);
    run.SetCrashAtOperation(run.operation_count() + n);
    if (RunBulk(run, kDir, in.spec, in.options).ok()) continue;
    std::unique_ptr<env::SimFileSystem> crashed = run.Clone();
    crashed->Crash(env::CrashPolicy::kKeepRandomPrefix, n);
    PutInput(*crashed, in);  // the inputs were never synced
    if (GraphImpl::OpenDurable(OpenOptions(), kDir, crashed.get()).ok()) continue;  // the whole import
    Result<ImportStats> again = RunBulk(*crashed, kDir, in.spec, in.options);
    EXPECT_TRUE(again.ok()) << "crash at operation " << n << ": " << again.status().ToString();
  }
}

// ImportOptions::progress: each phase ("checking", then "loading") starts at
// 0 and climbs to the files' total size, never back, on both paths and
// through the parallel blocks; its rows climb likewise, to every row of the
// files; a failed import reports nothing after it.
TEST(ImportProgressTest, EachPhaseClimbsFromZeroToTheTotal) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  std::string vertices, edges;
  for (int i = 0; i < 1000; ++i) vertices += std::to_string(i) + "\n";
  for (int i = 0; i < 200000; ++i)
    edges += std::to_string(i % 1000) + " " + std::to_string((i * 7) % 1000) + "\n";
  PutFile(fs, "/in/g.v", vertices);
  PutFile(fs, "/in/g.e", edges);
  const std::uint64_t total = vertices.size() + edges.size();
  ImportSpec spec{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
  for (bool bulk : {true, false}) {
    SCOPED_TRACE(bulk ? "bulk" : "batches");
    std::vector<ImportProgress> seen;
    std::vector<std::string> phases;
    ImportOptions options{.format = DataFormat::kEvlp, .threads = 2};
    options.progress = [&](const ImportProgress& p) {
      seen.push_back(p);
      if (phases.empty() || phases.back() != p.phase) phases.emplace_back(p.phase);
    };
    Result<ImportStats> r = InvalidArgumentError("");
    if (bulk) {
      import::Importer importer(&fs, std::string("/bulk"), spec, options);
      importer.SetBlockBytesForTesting(64 << 10);  // about 30 blocks in parallel
      r = importer.Run();
    } else {
      auto g = Graph::OpenInMemory().value();
      r = RunImport(fs, *g, spec, options);
    }
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(phases, (std::vector<std::string>{"checking", "loading"}));
    constexpr std::uint64_t kRows = 1000 + 200000;
    std::uint64_t last = 0, last_rows = 0;
    std::string phase;
    std::size_t reports = 0, rows_climbed = 0;
    for (const ImportProgress& p : seen) {
      EXPECT_EQ(p.bytes_total, total);
      if (p.phase != phase) {
        if (!phase.empty()) {
          EXPECT_EQ(last, total) << phase << " ended short";
          EXPECT_EQ(last_rows, kRows) << phase << " ended short of the rows";
        }
        phase = std::string(p.phase);
        EXPECT_EQ(p.bytes_done, 0u);
        EXPECT_EQ(p.rows_done, 0u);
        last = last_rows = 0;
      }
      EXPECT_GE(p.bytes_done, last) << phase;
      EXPECT_LE(p.bytes_done, total);
      EXPECT_GE(p.rows_done, last_rows) << phase;
      EXPECT_LE(p.rows_done, kRows) << phase;
      if (p.rows_done > last_rows) ++rows_climbed;
      last = p.bytes_done;
      last_rows = p.rows_done;
      ++reports;
    }
    EXPECT_EQ(last, total);
    EXPECT_EQ(last_rows, kRows);
    EXPECT_GE(rows_climbed, bulk ? 40u : 6u);  // rows climb with the bytes, not only at the end
    EXPECT_GE(reports, bulk ? 40u : 8u);       // blocks of 64 KiB; rows by 65,536
  }
  // A failed import stops reporting where it failed.
  PutFile(fs, "/in/bad.e", "0 1\n0 x\n");
  std::vector<ImportProgress> seen;
  ImportOptions options{.format = DataFormat::kEvlp};
  options.progress = [&](const ImportProgress& p) { seen.push_back(p); };
  ImportSpec bad{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/bad.e", "E"}}};
  EXPECT_FALSE(RunBulk(fs, "/bad", bad, options).ok());
  ASSERT_FALSE(seen.empty());
  for (const ImportProgress& p : seen) EXPECT_EQ(p.phase, "checking");
}

TEST(IdMapTest, CanonicalIntsAreNumbersAndTheRestText) {
  std::int64_t n = 0;
  for (const char* yes : {"0", "7", "-7", "9223372036854775807", "-9223372036854775808"}) {
    EXPECT_TRUE(import::ParseCanonicalInt(yes, &n)) << yes;
  }
  for (const char* no : {"", "-", "-0", "007", "+7", "7 ", " 7", "9223372036854775808", "1e3", "0x1"}) {
    EXPECT_FALSE(import::ParseCanonicalInt(no, &n)) << no;
  }
  import::IdMap m;
  import::ExternalId seven, text_seven, zero_seven, name;
  seven.SetNumber(7);
  text_seven.SetText("7");
  zero_seven.SetText("007");
  name.SetText("p1");
  EXPECT_TRUE(m.Insert(seven, 0).second);
  EXPECT_FALSE(m.Insert(text_seven, 1).second);  // "7" in a string column is the int 7
  EXPECT_TRUE(m.Insert(zero_seven, 2).second);   // "007" in a string column is not
  EXPECT_TRUE(m.Insert(name, 3).second);
  m.Freeze();
  EXPECT_TRUE(m.dense());
  EXPECT_EQ(m.Find(text_seven), 0u);
  EXPECT_EQ(m.Find(zero_seven), 2u);
  EXPECT_EQ(m.FindText("p1"), 3u);
  EXPECT_EQ(m.FindText("8"), import::IdMap::kNone);
  EXPECT_EQ(m.FindText("6"), import::IdMap::kNone);
  std::map<std::string, std::uint32_t> all;
  m.ForEach([&](std::string id, std::uint32_t e) { all[id] = e; });
  EXPECT_EQ(all, (std::map<std::string, std::uint32_t>{{"7", 0}, {"007", 2}, {"p1", 3}}));
}

// Numbers from about 0 go straight to a growing array while inserting
// (IdMap::kDirectSlack); the first number outside moves every id to the
// hash table. Either way a repeated id is found at once, Freeze remaps
// every value, and HoldsNumber is false for unknown and rejected ids.
TEST(IdMapTest, TheDirectArrayWhileInsertingAndLeavingIt) {
  struct Case {
    const char* name;
    std::int64_t spoiler;  // inserted after half the ids; 0: none
    bool dense;
  };
  const std::int64_t far = static_cast<std::int64_t>(import::IdMap::kDirectSlack) * 8;
  for (const Case& c : {Case{"direct throughout", 0, true}, Case{"a negative id", -5, true},
                        Case{"an id far out", far, false}}) {
    SCOPED_TRACE(c.name);
    import::IdMap m;
    import::ExternalId id;
    std::uint32_t entry = 0;
    std::vector<std::int64_t> order;
    for (std::int64_t i = 0; i < 5000; ++i) order.push_back((i * 7919) % 5000);  // a permutation
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (k == order.size() / 2 && c.spoiler != 0) {
        id.SetNumber(c.spoiler);
        ASSERT_TRUE(m.Insert(id, entry++).second);
      }
      id.SetNumber(order[k]);
      auto [e, inserted] = m.Insert(id, entry);
      ASSERT_TRUE(inserted);
      EXPECT_EQ(e, entry);
      ++entry;
      if (k % 1000 == 999) {  // a repeat, before and after leaving the array
        id.SetNumber(order[k / 2]);
        auto [first, again] = m.Insert(id, 99999);
        EXPECT_FALSE(again);
        EXPECT_EQ(m.Find(id), first);
      }
    }
    EXPECT_EQ(m.size(), entry);
    EXPECT_NE(m.FindText("4999"), import::IdMap::kNone);
    EXPECT_EQ(m.FindText("5000"), import::IdMap::kNone);
    // Every value + 10, and the id 3's entry rejected.
    const std::uint32_t three = m.FindText("3");
    std::vector<std::uint32_t> remap(entry);
    for (std::uint32_t v = 0; v < entry; ++v) remap[v] = v + 10;
    remap[three] = import::IdMap::kRejected;
    std::vector<std::uint32_t> before(5000);
    for (std::int64_t n = 0; n < 5000; ++n) before[n] = m.FindNumber(n);
    m.Freeze(remap);
    EXPECT_EQ(m.dense(), c.dense);
    for (std::int64_t n = 0; n < 5000; ++n) {
      EXPECT_EQ(m.FindNumber(n), n == 3 ? import::IdMap::kRejected : before[n] + 10) << n;
      EXPECT_EQ(m.HoldsNumber(n), n != 3) << n;
    }
    EXPECT_FALSE(m.HoldsNumber(5000));
    EXPECT_FALSE(m.HoldsNumber(-1));
    if (c.spoiler != 0) {
      EXPECT_TRUE(m.HoldsNumber(c.spoiler));
    }
    std::size_t visited = 0;
    m.ForEach([&](const std::string&, std::uint32_t) { ++visited; });
    EXPECT_EQ(visited, entry);
  }
}

// Review findings (allocation failure): every allocation of Insert,
// SetSizeHint and Freeze may fail; the map is then as it was, and doing
// it again succeeds with the right answers (the Abseil tables here are
// the safe ones: a failed resize corrupted them, base/safe_hash.h).
TEST(IdMapTest, AnAllocationFailureLeavesTheMapAsItWas) {
  for (std::uint64_t n = 1;; ++n) {
    SCOPED_TRACE(n);
    import::IdMap m;
    import::ExternalId id;
    bool failed = false;
    std::vector<std::uint32_t> remap(3000);
    for (std::uint32_t v = 0; v < remap.size(); ++v) remap[v] = v + 7;
    {
      test_util::ScopedOperatorNewFaults hook;
      base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
      for (std::uint32_t i = 0; i < 3000; ++i) {
        // Numbers 0.., then one far out (the array is left), then text.
        if (i < 2000) {
          id.SetNumber(i * 3);
        } else if (i < 2500) {
          id.SetNumber((std::int64_t{1} << 40) + i);
        } else {
          id.SetText("t" + std::to_string(i));
        }
        try {
          m.Insert(id, i);
        } catch (const std::bad_alloc&) {
          failed = true;
          m.Insert(id, i);  // again, unarmed (kOnce)
        }
      }
      try {
        m.Freeze(remap);
      } catch (const std::bad_alloc&) {
        failed = true;
        m.Freeze(remap);
      }
      base::DisarmAllocationFaults();
    }
    ASSERT_EQ(m.size(), 3000u);
    for (std::uint32_t i = 0; i < 3000; i += 7) {
      const std::string text = i < 2000   ? std::to_string(i * 3)
                               : i < 2500 ? std::to_string((std::int64_t{1} << 40) + i)
                                          : "t" + std::to_string(i);
      EXPECT_EQ(m.FindText(text), i + 7) << text;
    }
    EXPECT_EQ(m.FindText("1"), import::IdMap::kNone);
    if (!failed) break;  // every allocation has been failed once
  }
}

// Review finding: numeric ids spread thin under a generous first hint
// must not fill the direct array's pages; a hint refined to the real
// count (the importer's, every few thousand rows) moves them to the hash
// table, and dense ones stay.
TEST(IdMapTest, ASmallerHintMovesSparseIdsOutOfTheArray) {
  import::IdMap sparse, dense;
  sparse.SetSizeHint(std::uint64_t{1} << 24);
  dense.SetSizeHint(std::uint64_t{1} << 24);
  import::ExternalId id;
  for (std::uint32_t i = 0; i < 4096; ++i) {
    id.SetNumber(std::int64_t{i} * 1024);  // one per 4 KiB page of the array
    sparse.Insert(id, i);
    id.SetNumber((std::int64_t{i} * 7919) % 4096);
    dense.Insert(id, i);
  }
  EXPECT_TRUE(sparse.in_array());
  sparse.SetSizeHint(4096 + 4096 / 8);
  dense.SetSizeHint(4096 + 4096 / 8);
  EXPECT_FALSE(sparse.in_array());
  EXPECT_TRUE(dense.in_array());
  EXPECT_EQ(sparse.FindText("1024"), 1u);
  EXPECT_EQ(sparse.FindText("1025"), import::IdMap::kNone);
  sparse.Freeze();
  dense.Freeze();
  EXPECT_FALSE(sparse.dense());
  EXPECT_TRUE(dense.dense());
}

// Review finding: a failure of any allocation during an import (through
// batches and in bulk) is a status, never a crash, and a bulk import then
// leaves no graph.
TEST(ImportBulkReviewTest, AnAllocationFailureAnywhereIsAStatus) {
  env::SimFileSystem sim;
  ASSERT_TRUE(sim.CreateDir("/in").ok());
  std::string v, e;
  for (int i = 0; i < 300; ++i) v += std::to_string((i * 37) % 300) + "\n";
  v += "x\n+5\n";  // two rows for the generic path
  for (int i = 0; i < 900; ++i) e += std::to_string(i % 300) + " " + std::to_string((i * 7) % 300) + "\n";
  PutFile(sim, "/in/g.v", v);
  PutFile(sim, "/in/g.e", e);
  const ImportSpec spec{.vertices = {{"/in/g.v", "V"}}, .edges = {{"/in/g.e", "E"}}};
  ImportOptions o;
  o.format = DataFormat::kEvlp;
  o.skip_bad_rows = 10;
  o.create_id_indexes = true;
  o.threads = 1;  // faults hit the armed thread only
  for (bool bulk : {false, true}) {
    int failures = 0;
    for (std::uint64_t n = 1;; n += 1) {
      SCOPED_TRACE(n);
      std::unique_ptr<Graph> g;
      std::unique_ptr<import::Importer> importer;
      const std::string dir = "/db" + std::to_string(n) + (bulk ? "b" : "");
      if (bulk) {
        importer = std::make_unique<import::Importer>(&sim, dir, spec, o);
      } else {
        g = Graph::OpenInMemory().value();
        importer = std::make_unique<import::Importer>(&sim, *g, spec, o);
      }
      importer->SetBlockBytesForTesting(256);
      Result<ImportStats> r = ImportStats{};
      {
        test_util::ScopedOperatorNewFaults hook;
        base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
        r = importer->Run();
        base::DisarmAllocationFaults();
      }
      if (r.ok()) {
        EXPECT_EQ(r->vertices, 300u);  // "x" and "+5" (a second 5) rejected
        break;
      }
      ++failures;
      EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
      if (bulk) {
        EXPECT_TRUE(HoldsNoGraph(sim, dir));
      }
      ASSERT_LT(n, 20000u);
    }
    EXPECT_GT(failures, 10);
  }
}

// Review findings: 19-digit ids (Snowflake-style) are read fast, as
// from_chars reads them; 20 digits or a value outside int64 go to the
// generic path, which gives the error.
TEST(FastLinesTest, NineteenDigitIdsAreReadFastWithinInt64) {
  auto parse = [](std::string_view line, std::int64_t* id) {
    import::FastVertex v;
    const char* stop = import::ParseFastVertex(line.data(), line.data() + line.size(), &v);
    *id = v.id;
    return stop != nullptr;
  };
  std::int64_t id = 0;
  EXPECT_TRUE(parse("9223372036854775807\n", &id));
  EXPECT_EQ(id, INT64_MAX);
  EXPECT_TRUE(parse("-9223372036854775808", &id));
  EXPECT_EQ(id, INT64_MIN);
  EXPECT_TRUE(parse("1700000000000000001\r\n", &id));
  EXPECT_EQ(id, 1700000000000000001);
  EXPECT_TRUE(parse("0000000000000000007\n", &id));
  EXPECT_EQ(id, 7);
  for (const char* no : {"9223372036854775808\n", "-9223372036854775809\n", "10000000000000000000\n",
                         "00000000000000000007\n", "-\n", "\n", "+1\n", "1 \n"}) {
    EXPECT_FALSE(parse(no, &id)) << no;
  }
  import::FastEdge e;
  const std::string_view edge = "-9223372036854775808 9223372036854775807\n";
  ASSERT_NE(import::ParseFastEdge(edge.data(), edge.data() + edge.size(), 2, &e), nullptr);
  EXPECT_EQ(e.source, INT64_MIN);
  EXPECT_EQ(e.target, INT64_MAX);
}

// Review findings: the id map's size hint is refined from rows read per
// byte every 4,096 rows, also when those rows go through the generic path
// (sparse ids stayed in the array to the end there), and dense ids past
// the array's slack stay in it.
TEST(ImportBulkReviewTest, TheIdHintIsRefinedFromPlainBytesOnly) {
  // 1.2M dense ids, shuffled: past the array's slack (1M), so a hint too
  // small would send them to the hash table.
  std::string dense;
  for (std::int64_t i = 0; i < 1'200'000; ++i) dense += std::to_string((i * 7919) % 1'200'000) + "\n";
  // Ids one per 64 slots, every even line zero-padded to 40 digits (the
  // generic path reads it; rows 4096, 8192, ... are all generic), so the
  // first hint (the file's bytes / 8) allows them and only a refined one
  // finds them sparse.
  std::string sparse;
  for (std::int64_t k = 1; k <= 20000; ++k) {
    const std::string id = std::to_string(k * 64);
    sparse += (k % 2 == 0 ? std::string(40 - id.size(), '0') : "") + id + "\n";
  }
  struct Case {
    const char* name;
    const std::string* file;
    bool gzip;
    bool left_early;
  };
  // (The gzip case, whose hint is not refined, is not here: at this size
  // its read-ahead did not mislead the refinement; the review saw it at 2M
  // ids.)
  for (const Case& c :
       {Case{"dense", &dense, false, false}, Case{"sparse, refined on generic rows", &sparse, false, true}}) {
    SCOPED_TRACE(c.name);
    env::SimFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("/in").ok());
    PutFile(fs, "/in/g.v", c.gzip ? testing_import::Gzip(*c.file) : *c.file);
    ImportOptions o;
    o.format = DataFormat::kEvlp;
    const ImportSpec spec{.vertices = {{"/in/g.v", "V"}}};  // the importer keeps a reference
    import::Importer importer(&fs, std::string("/db"), spec, o);
    Result<ImportStats> r = importer.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const import::IdMap* map = importer.IdMapForTesting("");
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(map->left_array_while_inserting(), c.left_early);
  }
}

TEST(IdMapTest, OnlyDenseNumbersGoToTheArray) {
  import::IdMap sparse, extremes, dense;
  import::ExternalId id;
  for (std::int64_t i = 0; i < 100; ++i) {
    id.SetNumber(i * 5);  // range 496 > 4 * 100
    sparse.Insert(id, static_cast<std::uint32_t>(i));
    id.SetNumber(i * 3 - 150);  // range 298 <= 400
    dense.Insert(id, static_cast<std::uint32_t>(i));
  }
  id.SetNumber(INT64_MIN);
  extremes.Insert(id, 0);
  id.SetNumber(INT64_MAX);
  extremes.Insert(id, 1);  // the range is the whole line: no array
  sparse.Freeze();
  dense.Freeze();
  extremes.Freeze();
  EXPECT_FALSE(sparse.dense());
  EXPECT_TRUE(dense.dense());
  EXPECT_FALSE(extremes.dense());
  EXPECT_EQ(sparse.FindText("495"), 99u);
  EXPECT_EQ(sparse.FindText("496"), import::IdMap::kNone);
  EXPECT_EQ(dense.FindText("-150"), 0u);
  EXPECT_EQ(dense.FindText("147"), 99u);
  EXPECT_EQ(dense.FindText("-151"), import::IdMap::kNone);
  EXPECT_EQ(dense.FindText("148"), import::IdMap::kNone);
  EXPECT_EQ(dense.FindText("-149"), import::IdMap::kNone);
  EXPECT_EQ(extremes.FindText("-9223372036854775808"), 0u);
  EXPECT_EQ(extremes.FindText("9223372036854775807"), 1u);
}

// A string list longer than the default Limits::max_list_elements: the
// batch path's write would refuse it, so pass 1 refuses it on both paths,
// at the same position (the bulk path applies no Options::limits).
TEST(ImportBulkReviewTest, AListOverTheElementLimitIsRefusedOnBothPaths) {
  env::SimFileSystem fs;
  ASSERT_TRUE(fs.CreateDir("/in").ok());
  const std::size_t limit = Limits{}.max_list_elements;
  PutFile(fs, "/in/v.csv", "id:ID,tags:string[]\na," + std::string(limit, ';') + "\nb,x;y\n");
  const ImportSpec spec{.vertices = {{"/in/v.csv", "V"}}};
  auto g = Graph::OpenInMemory().value();
  Result<ImportStats> batches = RunImport(fs, *g, spec);
  Result<ImportStats> bulk = RunBulk(fs, kDir, spec);
  for (const Result<ImportStats>* r : {&batches, &bulk}) {
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->status().code(), StatusCode::kInvalidArgument) << r->status().ToString();
    EXPECT_NE(r->status().message().find("/in/v.csv:2:3: a string list of " + std::to_string(limit + 1) +
                                         " elements; the limit is " + std::to_string(limit)),
              std::string::npos)
        << r->status().ToString();
  }
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 0u);
  EXPECT_TRUE(HoldsNoGraph(fs, kDir));
  // One element fewer passes both.
  PutFile(fs, "/in/v.csv", "id:ID,tags:string[]\na," + std::string(limit - 1, ';') + "\n");
  EXPECT_TRUE(RunImport(fs, *g, spec).ok());
  EXPECT_TRUE(RunBulk(fs, kDir, spec).ok());
}

}  // namespace
}  // namespace quiver
