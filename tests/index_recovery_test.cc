// Indexes across restarts: after every reopen (WAL replay, checkpoint load,
// a CreateIndex that a crash interrupted, a checkpoint written while an
// index was being built) every ready index answers exactly what a scan of
// the same snapshot gives, and a batch refused by a unique index changes
// nothing, before and after the restart. The workloads mix in upserts by a
// unique key and expectations (some stale, which must abort): their logged
// form (the resolved plain batch) replays to the same state.
//
// The scan (DiffWithScan) knows only the public rules of
// include/quiver/index.h: an element is in an index when it has the label
// (type) and every key holds a value that is neither null nor a float
// vector; doubles compare by value (-0.0 == 0.0).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "write/write_batch_internal.h"

// A namespace of its own: the asan build compiles test files several to a
// unit, and index_test.cc's Raw and Spec overload these with other
// parameter types.
namespace quiver::index_recovery_test {
namespace {

using internal::WriteBatchInternal;

// A rendering equal for equal index keys: the type, then the value (a
// double by its bits, with -0.0 as 0.0).
std::string Render(const PropertyView& v) {
  if (auto b = v.as_bool()) return *b ? "b1" : "b0";
  if (auto i = v.as_int64()) return "i" + std::to_string(*i);
  if (auto d = v.as_double()) return "d" + std::to_string(std::bit_cast<std::uint64_t>(*d == 0 ? 0.0 : *d));
  if (auto s = v.as_string()) return "s" + std::string(*s);
  if (auto by = v.as_bytes()) return "y" + std::string(reinterpret_cast<const char*>(by->data()), by->size());
  return "?";
}

struct Group {
  std::vector<PropertyValue> values;
  std::vector<std::uint64_t> ids;  // ascending
};

template <typename R>
std::vector<std::uint64_t> Raw(const R& ids) {
  std::vector<std::uint64_t> out;
  for (auto id : ids) out.push_back(id.value());
  return out;
}
template <typename Id>
Result<std::vector<std::uint64_t>> Raw(Result<std::vector<Id>> r) {
  if (!r.ok()) return r.status();
  return Raw(*r);
}

// The entries `spec` must hold in `s`, grouped by key, from a scan of every
// live element (not the label sets); "" or why the data cannot be indexed.
template <typename Id>
std::string ScanEntries(const Snapshot& s, const IndexSpec& spec, std::map<std::string, Group>* groups,
                        std::uint64_t* total, std::vector<std::uint64_t>* members) {
  const bool vertices = spec.element == ElementKind::kVertex;
  const auto elements = [&] {
    if constexpr (std::is_same_v<Id, VertexId>) {
      return s.Vertices();
    } else {
      return s.Edges();
    }
  }();
  for (Id id : elements) {
    std::string_view name;
    if constexpr (std::is_same_v<Id, VertexId>) {
      name = s.LabelName(*s.LabelOf(id));
    } else {
      name = s.EdgeTypeName(s.GetEdge(id)->type);
    }
    if (name != spec.label) continue;
    members->push_back(id.value());
    std::string key;
    Group g;
    bool indexed = true;
    for (const std::string& k : spec.keys) {
      std::optional<PropertyView> v = s.GetProperty(id, k);
      if (!v || v->is_null()) {
        indexed = false;
        continue;
      }
      if (spec.type && v->type() != *spec.type)
        return spec.name + ": " + (vertices ? "vertex " : "edge ") + std::to_string(id.value()) +
               " holds a value of another type";
      if (v->type() == ValueType::kFloatVector) {
        indexed = false;
        continue;
      }
      key += Render(*v) + '\0';
      g.values.push_back(v->ToValue());
    }
    if (!indexed) continue;
    ++*total;
    Group& slot = (*groups)[key];
    if (slot.values.empty()) slot.values = std::move(g.values);
    slot.ids.push_back(id.value());
  }
  return "";
}

// "" if every ready index of `s`, and the label and type sets, agree with a
// scan of `s`.
std::string DiffWithScan(const Snapshot& s) {
  for (const IndexInfo& info : s.Indexes()) {
    if (info.state != IndexState::kReady) continue;
    const IndexSpec& spec = info.spec;
    const bool vertices = spec.element == ElementKind::kVertex;
    std::map<std::string, Group> groups;
    std::uint64_t total = 0;
    std::vector<std::uint64_t> members;
    std::string err = vertices ? ScanEntries<VertexId>(s, spec, &groups, &total, &members)
                               : ScanEntries<EdgeId>(s, spec, &groups, &total, &members);
    if (!err.empty()) return err;
    const std::string where = spec.name + " at sequence " + std::to_string(s.sequence()) + ": ";
    if (info.entries != total)
      return where + "entries " + std::to_string(info.entries) + ", scan " + std::to_string(total);
    for (const auto& [key, g] : groups) {
      auto found = vertices ? Raw(s.FindVerticesByIndex(spec.name, g.values))
                            : Raw(s.FindEdgesByIndex(spec.name, g.values));
      if (!found.ok()) return where + found.status().ToString();
      if (*found != g.ids) return where + "a lookup disagrees with the scan";
      if (spec.kind == IndexKind::kUnique) {
        if (g.ids.size() != 1) return where + "a unique key is held twice";
        std::optional<std::uint64_t> one;
        if (vertices) {
          auto r = s.FindVertexByIndex(spec.name, g.values);
          if (!r.ok()) return where + r.status().ToString();
          if (*r) one = (*r)->value();
        } else {
          auto r = s.FindEdgeByIndex(spec.name, g.values);
          if (!r.ok()) return where + r.status().ToString();
          if (*r) one = (*r)->value();
        }
        if (one != g.ids[0]) return where + "FindVertexByIndex disagrees with the scan";
      }
    }
    if (spec.kind == IndexKind::kOrdered) {
      std::vector<std::uint64_t> all;
      for (const auto& [key, g] : groups) all.insert(all.end(), g.ids.begin(), g.ids.end());
      std::sort(all.begin(), all.end());
      auto range =
          vertices ? Raw(s.VerticesInRangeByIndex(spec.name, {})) : Raw(s.EdgesInRangeByIndex(spec.name, {}));
      if (!range.ok()) return where + range.status().ToString();
      std::sort(range->begin(), range->end());
      if (*range != all) return where + "the whole range disagrees with the scan";
      auto count =
          vertices ? s.CountVerticesInRangeByIndex(spec.name, {}) : s.CountEdgesInRangeByIndex(spec.name, {});
      if (!count.ok() || *count != total) return where + "the count disagrees with the scan";
    }
  }
  for (const LabelCount& l : s.Labels()) {
    std::vector<std::uint64_t> scan;
    for (VertexId v : s.Vertices())
      if (s.LabelOf(v) == l.label) scan.push_back(v.value());
    if (Raw(s.Vertices(l.label)) != scan || l.vertices != scan.size() ||
        s.CountVertices(l.label) != scan.size())
      return "the set of label " + std::string(l.name) + " disagrees with the scan";
  }
  for (const EdgeTypeCount& t : s.EdgeTypes()) {
    std::vector<std::uint64_t> scan;
    for (EdgeId e : s.Edges())
      if (s.GetEdge(e)->type == t.type) scan.push_back(e.value());
    if (Raw(s.Edges(t.type)) != scan || t.edges != scan.size() || s.CountEdges(t.type) != scan.size())
      return "the set of type " + std::string(t.name) + " disagrees with the scan";
  }
  return "";
}

IndexSpec Spec(std::string name, ElementKind element, std::string label, std::vector<std::string> keys,
               IndexKind kind, std::optional<ValueType> type = std::nullopt) {
  return IndexSpec{.name = std::move(name),
                   .element = element,
                   .label = std::move(label),
                   .keys = std::move(keys),
                   .kind = kind,
                   .type = type};
}

// Declares `spec` and stops there, as a crash right after CreateIndex's
// first commit would.
Status DeclareOnly(Graph& g, const IndexSpec& spec) {
  IndexOp op;
  op.spec = spec;
  return g.Write(WriteBatchInternal::IndexBatch(OpKind::kDefineIndex, std::move(op))).status();
}

// Random writes to Persons (u: unique int64, n: small int64, s: string) and
// KNOWS edges (t: int64, double or string), a few of them refused by the
// unique index on u (checked to change nothing).
class Workload {
 public:
  // `strict`: every refused batch must be refused for a unique key or a
  // removed element, and change nothing.
  explicit Workload(std::uint64_t seed, bool strict = true) : rng_(seed), strict_(strict) {}

  void Run(Graph& g, int batches) {
    for (int i = 0; i < batches; ++i) {
      Snapshot s = g.GetSnapshot();
      std::vector<VertexId> people = Collect<VertexId>(s.Vertices());
      std::vector<EdgeId> edges = Collect<EdgeId>(s.Edges());
      WriteBatch b;
      // Upserts by u once its unique index is ready; expectations on n,
      // some of them stale on purpose (they must abort the batch).
      const auto indexes = s.Indexes();
      const bool upserts = std::any_of(indexes.begin(), indexes.end(), [](const IndexInfo& x) {
        return x.spec.name == "u" && x.state == IndexState::kReady;
      });
      // Another Person takes an existing u (once the index forbids it).
      const bool collide = upserts && Chance(0.05) && !people.empty();
      bool stale = false;
      if (!people.empty() && Chance(0.3)) {
        VertexId v = people[Pick(0, people.size() - 1)];
        stale = Chance(0.2);
        if (auto n = s.GetProperty(v, "n"); n && n->as_int64()) {
          b.ExpectProperty(v, "n", *n->as_int64() + (stale ? 100 : 0));
        } else if (stale) {
          b.ExpectProperty(v, "n", std::int64_t{-1});
        } else {
          b.ExpectNoProperty(v, "n");
        }
      }
      for (int op = 0, ops = Pick(1, 6); op < ops; ++op) Op(b, people, edges, upserts);
      if (collide) {
        // Another Person takes an existing u: must fail whole.
        VertexId holder = people[Pick(0, people.size() - 1)];
        if (auto u = s.GetProperty(holder, "u"); u && u->as_int64())
          b.AddVertex("Person", {{"u", *u->as_int64()}});
      }
      Result<CommitInfo> r = g.Write(std::move(b));
      if (!strict_) continue;
      EXPECT_TRUE(!stale || !r.ok()) << "a batch with a stale expectation committed";
      if (r.ok()) continue;
      // A batch may also name an element it removed itself (NotFound).
      if (r.status().code() == StatusCode::kAlreadyExists) refused_++;
      if (r.status().code() == StatusCode::kAborted) aborted_++;
      EXPECT_TRUE(r.status().code() == StatusCode::kAlreadyExists ||
                  r.status().code() == StatusCode::kNotFound ||
                  (stale && r.status().code() == StatusCode::kAborted))
          << r.status().ToString();
      EXPECT_EQ(g.GetSnapshot().sequence(), s.sequence()) << "a refused batch committed";
    }
  }
  int refused() const { return refused_; }
  int aborted() const { return aborted_; }
  int upserts() const { return upserts_; }

 private:
  template <typename Id, typename R>
  static std::vector<Id> Collect(const R& range) {
    std::vector<Id> out;
    for (Id id : range) out.push_back(id);
    return out;
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::size_t Pick(std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng_);
  }
  std::string Letter(std::size_t n) { return std::string(1, static_cast<char>('a' + Pick(0, n))); }
  PropertyValue EdgeValue() {
    switch (Pick(0, 3)) {
      case 0: return static_cast<std::int64_t>(Pick(0, 20));
      case 1: return static_cast<double>(Pick(0, 20)) / 2;
      case 2: return Letter(5);
      default: return nullptr;
    }
  }

  void Op(WriteBatch& b, const std::vector<VertexId>& people, const std::vector<EdgeId>& edges,
          bool upserts) {
    if (upserts && next_u_ > 0 && Chance(0.2)) {
      // Mostly a held u (found: merged or replaced), else a freed one (added).
      ++upserts_;
      const std::int64_t u = static_cast<std::int64_t>(Pick(0, static_cast<std::size_t>(next_u_) - 1));
      NewVertex h = b.UpsertVertex("Person", {{"u", u}}, {{"n", static_cast<std::int64_t>(Pick(0, 9))}},
                                   Chance(0.3) ? UpsertMode::kReplace : UpsertMode::kMerge);
      if (!people.empty() && Chance(0.5)) b.AddEdge("KNOWS", h, people[Pick(0, people.size() - 1)]);
      return;
    }
    const std::size_t what = Pick(0, 9);
    if (what <= 2 || people.empty()) {
      b.AddVertex(Chance(0.8) ? "Person" : "Robot",
                  {{"u", next_u_++}, {"n", static_cast<std::int64_t>(Pick(0, 9))}, {"s", Letter(3)}});
      return;
    }
    VertexId v = people[Pick(0, people.size() - 1)];
    switch (what) {
      case 3: b.SetProperty(v, "n", static_cast<std::int64_t>(Pick(0, 9))); break;
      case 4: b.RemoveProperty(v, "n"); break;
      case 5: b.SetProperty(v, "u", next_u_++); break;
      case 6: b.AddEdge("KNOWS", v, people[Pick(0, people.size() - 1)], {{"t", EdgeValue()}}); break;
      case 7:
        if (!edges.empty()) b.SetProperty(edges[Pick(0, edges.size() - 1)], "t", EdgeValue());
        break;
      case 8:
        if (!edges.empty() && Chance(0.5)) {
          b.RemoveEdge(edges[Pick(0, edges.size() - 1)]);
        } else {
          b.SetProperty(v, "s", Letter(3));
        }
        break;
      default:
        if (Chance(0.3)) b.RemoveVertex(v);
        break;
    }
  }

  std::mt19937_64 rng_;
  bool strict_;
  std::int64_t next_u_ = 0;
  int refused_ = 0;
  int aborted_ = 0;
  int upserts_ = 0;
};

Options DurableOptions() {
  Options o;
  o.durable.checkpoint_on_close = false;
  return o;
}

std::unique_ptr<Graph> Open(const Options& o, env::SimFileSystem* fs) {
  auto r = GraphImpl::OpenDurable(o, "/db", fs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : nullptr;
}

// Power loss with the graph open: what was acknowledged is on disk.
std::unique_ptr<Graph> CrashAndReopen(std::unique_ptr<Graph> g, const Options& o, env::SimFileSystem* fs,
                                      std::uint64_t seed) {
  g.reset();
  fs->Crash(env::CrashPolicy::kDropUnsynced, seed);
  return Open(o, fs);
}

TEST(IndexRecoveryTest, EveryRestartRebuildsIndexesThatEqualTheScan) {
  env::SimFileSystem fs;
  const Options o = DurableOptions();
  auto g = Open(o, &fs);
  ASSERT_NE(g, nullptr);
  Workload w(42);
  w.Run(*g, 30);
  ASSERT_TRUE(
      g->CreateIndex(Spec("u", ElementKind::kVertex, "Person", {"u"}, IndexKind::kUnique, ValueType::kInt64))
          .ok());
  ASSERT_TRUE(g->CreateIndex(Spec("n", ElementKind::kVertex, "Person", {"n"}, IndexKind::kOrdered)).ok());
  ASSERT_TRUE(g->CreateIndex(Spec("ns", ElementKind::kVertex, "Person", {"n", "s"}, IndexKind::kExact)).ok());
  ASSERT_TRUE(g->CreateIndex(Spec("t", ElementKind::kEdge, "KNOWS", {"t"}, IndexKind::kOrdered)).ok());
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    w.Run(*g, 25);
    if (round % 3 == 1) {
      ASSERT_TRUE(g->Checkpoint().ok());
    }
    w.Run(*g, 10);
    const SequenceNumber before = g->GetSnapshot().sequence();
    ASSERT_EQ(DiffWithScan(g->GetSnapshot()), "");
    g = CrashAndReopen(std::move(g), o, &fs, static_cast<std::uint64_t>(round));
    ASSERT_NE(g, nullptr);
    Snapshot s = g->GetSnapshot();
    EXPECT_EQ(s.sequence(), before);
    EXPECT_EQ(s.Indexes().size(), 4u);
    EXPECT_EQ(DiffWithScan(s), "");
  }
  EXPECT_GT(w.refused(), 0);
  EXPECT_GT(w.aborted(), 0);
  EXPECT_GT(w.upserts(), 0);
}

// A crash between CreateIndex's declaration and its publication: Open
// finishes the index from the recovered data (writes made after the
// declaration included), from the WAL alone or from a checkpoint written
// while the index was being built.
TEST(IndexRecoveryTest, InterruptedCreateIndexIsFinishedAtOpen) {
  for (bool checkpoint : {false, true}) {
    SCOPED_TRACE(checkpoint ? "checkpoint while building" : "WAL only");
    env::SimFileSystem fs;
    const Options o = DurableOptions();
    auto g = Open(o, &fs);
    ASSERT_NE(g, nullptr);
    Workload w(7);
    w.Run(*g, 40);
    ASSERT_TRUE(DeclareOnly(*g, Spec("n", ElementKind::kVertex, "Person", {"n"}, IndexKind::kOrdered)).ok());
    ASSERT_TRUE(DeclareOnly(*g, Spec("t", ElementKind::kEdge, "KNOWS", {"t"}, IndexKind::kExact)).ok());
    ASSERT_EQ(g->GetSnapshot().Indexes()[0].state, IndexState::kBuilding);
    w.Run(*g, 20);
    if (checkpoint) {
      ASSERT_TRUE(g->Checkpoint().ok());
    }
    w.Run(*g, 20);
    g = CrashAndReopen(std::move(g), o, &fs, 1);
    ASSERT_NE(g, nullptr);
    Snapshot s = g->GetSnapshot();
    ASSERT_EQ(s.Indexes().size(), 2u);
    for (const IndexInfo& info : s.Indexes()) EXPECT_EQ(info.state, IndexState::kReady) << info.spec.name;
    EXPECT_EQ(DiffWithScan(s), "");
    EXPECT_GE(g->GetOpenStats().indexes_built, 2u);
    // And the finished indexes are maintained from then on, and survive again.
    w.Run(*g, 20);
    EXPECT_EQ(DiffWithScan(g->GetSnapshot()), "");
    g = CrashAndReopen(std::move(g), o, &fs, 2);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->GetSnapshot().Indexes().size(), 2u);
    EXPECT_EQ(DiffWithScan(g->GetSnapshot()), "");
  }
}

// While a unique index is being built, writes are not checked against it; if
// a crash comes before it is published and the data now repeats a key, Open
// drops it with a logged commit and says why, and the next Open has nothing
// left to drop.
TEST(IndexRecoveryTest, InterruptedUniqueIndexOverViolatingDataIsDroppedOnce) {
  env::SimFileSystem fs;
  const Options o = DurableOptions();
  auto g = Open(o, &fs);
  ASSERT_NE(g, nullptr);
  WriteBatch b;
  b.AddVertex("Person", {{"email", "a"}});
  b.AddVertex("Person", {{"email", "b"}});
  ASSERT_TRUE(g->Write(std::move(b)).ok());
  ASSERT_TRUE(
      DeclareOnly(*g, Spec("email", ElementKind::kVertex, "Person", {"email"}, IndexKind::kUnique)).ok());
  WriteBatch dup;
  dup.SetProperty(VertexId(1), "email", "a");
  ASSERT_TRUE(g->Write(std::move(dup)).ok());
  g = CrashAndReopen(std::move(g), o, &fs, 1);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->GetSnapshot().Indexes().empty());
  ASSERT_EQ(g->GetOpenStats().dropped_indexes.size(), 1u);
  EXPECT_NE(g->GetOpenStats().dropped_indexes[0].find("email"), std::string::npos);
  g = CrashAndReopen(std::move(g), o, &fs, 2);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->GetSnapshot().Indexes().empty());
  EXPECT_TRUE(g->GetOpenStats().dropped_indexes.empty());
  // The name is free again.
  EXPECT_EQ(
      g->CreateIndex(Spec("email", ElementKind::kVertex, "Person", {"email"}, IndexKind::kExact)).code(),
      StatusCode::kOk);
}

// A power loss at every file-system operation of a run that writes,
// creates indexes (one of them unique, over data that keeps changing),
// checkpoints and drops one, under every crash policy: Open succeeds, no
// index is left being built, every index whose CreateIndex returned OK and
// that was not dropped is there, and every index equals the scan.
TEST(IndexRecoveryTest, CrashAtEveryOperationLeavesIndexesEqualToTheScan) {
  auto run = [](Graph& g) -> std::vector<std::string> {
    std::vector<std::string> created;  // acknowledged and never dropped
    // Writes fail once the file system is dead: the workload only counts them.
    Workload w(3, /*strict=*/false);
    auto create = [&](const IndexSpec& spec) {
      if (g.CreateIndex(spec).ok()) created.push_back(spec.name);
    };
    w.Run(g, 6);
    create(Spec("u", ElementKind::kVertex, "Person", {"u"}, IndexKind::kUnique, ValueType::kInt64));
    w.Run(g, 6);
    create(Spec("t", ElementKind::kEdge, "KNOWS", {"t"}, IndexKind::kOrdered));
    create(Spec("gone", ElementKind::kVertex, "Person", {"s"}, IndexKind::kExact));
    g.Checkpoint().IgnoreError();
    w.Run(g, 6);
    // A drop that failed with DurabilityUnknown may or may not be on disk:
    // "gone" is then promised neither way.
    Status drop = g.DropIndex("gone");
    if (drop.ok() || drop.code() == StatusCode::kDurabilityUnknown)
      created.erase(std::remove(created.begin(), created.end(), "gone"), created.end());
    create(Spec("ns", ElementKind::kVertex, "Person", {"n", "s"}, IndexKind::kOrdered));
    w.Run(g, 6);
    return created;
  };
  // The number of operations of an uninterrupted run.
  std::uint64_t opened = 0, total = 0;
  {
    env::SimFileSystem fs;
    auto g = Open(DurableOptions(), &fs);
    ASSERT_NE(g, nullptr);
    opened = fs.operation_count();
    run(*g);
    total = fs.operation_count();
  }
  std::uint64_t states = 0;
  for (std::uint64_t n = opened + 1; n <= total + 1; ++n) {
    env::SimFileSystem fs;
    std::vector<std::string> created;
    {
      auto g = Open(DurableOptions(), &fs);
      ASSERT_NE(g, nullptr);
      fs.SetCrashAtOperation(n);
      created = run(*g);
    }
    for (env::CrashPolicy policy : env::kAllCrashPolicies) {
      SCOPED_TRACE("crash at operation " + std::to_string(n) + ", " +
                   std::string(env::CrashPolicyName(policy)));
      auto disk = fs.Clone();
      disk->Crash(policy, n);
      auto g = Open(DurableOptions(), disk.get());
      ASSERT_NE(g, nullptr);
      Snapshot s = g->GetSnapshot();
      for (const IndexInfo& info : s.Indexes()) EXPECT_EQ(info.state, IndexState::kReady) << info.spec.name;
      for (const std::string& name : created) {
        auto listed = s.Indexes();
        EXPECT_TRUE(std::any_of(listed.begin(), listed.end(),
                                [&](const IndexInfo& i) { return i.spec.name == name; }))
            << "index " << name << " was acknowledged and is gone";
      }
      ASSERT_EQ(DiffWithScan(s), "");
      ++states;
    }
  }
  std::cout << "[          ] " << total - opened << " operations, " << states
            << " crash states opened and checked\n";
}

}  // namespace
}  // namespace quiver::index_recovery_test
