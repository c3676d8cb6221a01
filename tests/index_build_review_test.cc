// Review of the online index build (CreateIndex on threads of its own,
// Options::background_nice; index/online_build.h step 2b; radix-sorted
// runs). Each test states what the build must guarantee and tries to break
// it: allocation failures on the calling thread (alloc_hook.h), a thread
// that cannot be started, and the sort's key orders.
//
// Several of these fail on the branch they were written on: they are
// findings of the review, kept so the fix has a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "index/index_build.h"
#include "index/key_codec.h"
#include "loop_sample.h"
#include "no_new_threads.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

IndexSpec PersonSpec(std::string key, IndexKind kind = IndexKind::kOrdered,
                     std::optional<ValueType> type = ValueType::kInt64) {
  return IndexSpec{.name = "ix",
                   .element = ElementKind::kVertex,
                   .label = "Person",
                   .keys = {std::move(key)},
                   .kind = kind,
                   .type = type};
}

std::unique_ptr<Graph> FilledGraph(std::uint32_t nice, int n) {
  Options o;
  o.background_nice = nice;
  auto g = Graph::OpenInMemory(o).value();
  for (int k = 0; k < n; ++k) {
    WriteBatch b;
    b.AddVertex("Person", {{"k", std::int64_t{k % 17 - 8}}});
    EXPECT_TRUE(g->Write(std::move(b)).ok());
  }
  return g;
}

bool HasIndex(const Graph& g, const std::string& name) {
  for (const IndexInfo& i : g.GetSnapshot().Indexes())
    if (i.spec.name == name) return true;
  return false;
}

// One CreateIndex with the calling thread's n-th allocation failing (and,
// in kFromThenOn mode, every later one). Returns false once the call made
// fewer than n allocations (the sweep is complete).
struct Attempt {
  Status status;
  bool threw = false;
  bool more = true;
};

Attempt CreateWithFault(Graph& g, const IndexSpec& spec, std::uint64_t n, base::AllocationFaultMode mode) {
  Attempt a;
  test_util::ScopedOperatorNewFaults hook;
  base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
  try {
    a.status = g.CreateIndex(spec);
  } catch (const std::bad_alloc&) {
    a.threw = true;
  }
  a.more = base::DisarmAllocationFaults() >= n;
  return a;
}

std::uint64_t g_attempt = 0;  // the allocation being failed (death test child)

// Finding: ~ReleaseInBackground (graph_impl.cc, BuildAndPublish) calls
// base::RunInBackground from a destructor. RunInBackground catches only
// std::system_error from std::thread's constructor; the constructor's own
// allocation (its state object, on the calling thread) throws
// std::bad_alloc, which leaves the (implicitly noexcept) destructor:
// std::terminate. One failed allocation on a user's thread during
// CreateIndex ends the process.
TEST(IndexBuildReviewDeathTest, CallerAllocationFaultsNeverEndTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::set_terminate([] {
          std::fprintf(stderr, "std::terminate at caller allocation %llu\n",
                       static_cast<unsigned long long>(g_attempt));
          std::abort();
        });
        for (g_attempt = 1;; ++g_attempt) {
          auto g = FilledGraph(/*nice=*/10, 200);
          Attempt a = CreateWithFault(*g, PersonSpec("k"), g_attempt, base::AllocationFaultMode::kOnce);
          if (!a.more) break;
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// Every allocation of the calling thread fails in turn, once and from then
// on, with background_nice = 0 (the whole build runs on the calling thread,
// so the sweep reaches it). CreateIndex must answer ok or ResourceExhausted,
// never throw (no exception crosses the API); a failed one leaves no
// declaration behind (graph.h: "a failed CreateIndex leaves nothing"), and a
// declared index nobody builds would make the writer record every change to
// its label forever (IndexMaintainer::Track); the graph then builds the
// index; and no version stays pinned.
//
// Findings: (1) the spec with a key no element holds runs
// CheckDataForNewNames, whose CollectEntries is outside any try: its
// std::bad_alloc crosses CreateIndex and skips chain_->Release(head) (a
// version pinned for good). (2) From-then-on faults: the kDropIndex write
// that takes the declaration back fails too, so the index stays declared
// and building, and CreateIndex of the same name then fails AlreadyExists.
void SweepNiceZero(const IndexSpec& spec, base::AllocationFaultMode mode, const char* what) {
  std::string threw, left_declared, not_recreated, bad_status, pinned;
  for (std::uint64_t n = 1;; ++n) {
    auto g = FilledGraph(/*nice=*/0, 200);
    Attempt a = CreateWithFault(*g, spec, n, mode);
    if (a.threw) threw += " " + std::to_string(n);
    if (!a.threw && !a.status.ok() && a.status.code() != StatusCode::kResourceExhausted)
      bad_status += " " + std::to_string(n) + " (" + a.status.ToString() + ")";
    if (a.threw || !a.status.ok()) {
      if (HasIndex(*g, spec.name)) left_declared += " " + std::to_string(n);
      Status again = g->CreateIndex(spec);
      if (!again.ok()) not_recreated += " " + std::to_string(n) + " (" + again.ToString() + ")";
    }
    // Nothing holds a snapshot now: one more commit leaves one version.
    WriteBatch b;
    b.AddVertex("Other");
    EXPECT_TRUE(g->Write(std::move(b)).ok());
    if (g->GetMemoryStats().live_versions > 1)
      pinned += " " + std::to_string(n) + "(" + std::to_string(g->GetMemoryStats().live_versions) + ")";
    if (!a.more) break;
  }
  EXPECT_EQ(threw, "") << what << ": std::bad_alloc crossed CreateIndex at caller allocations";
  EXPECT_EQ(bad_status, "") << what << ": statuses other than ResourceExhausted";
  EXPECT_EQ(left_declared, "") << what << ": a failed CreateIndex left its declaration at allocations";
  EXPECT_EQ(not_recreated, "") << what << ": CreateIndex again (no faults) failed after allocations";
  EXPECT_EQ(pinned, "") << what << ": versions still pinned after allocations (live_versions)";
}

TEST(IndexBuildReviewTest, CreateIndexUnderOnceAllocationFaultsAnswersAndCleansUp) {
  SweepNiceZero(PersonSpec("k"), base::AllocationFaultMode::kOnce, "existing key, once");
}

TEST(IndexBuildReviewTest, CreateIndexOnANewKeyUnderAllocationFaultsNeverThrowsNorPins) {
  SweepNiceZero(PersonSpec("nobody_has_this"), base::AllocationFaultMode::kOnce, "new key, once");
}

TEST(IndexBuildReviewTest, CreateIndexUnderPersistentAllocationFaultsLeavesNoDeclaration) {
  SweepNiceZero(PersonSpec("k"), base::AllocationFaultMode::kFromThenOn, "existing key, from then on");
}

// Finding: RunInBackground falls back to the calling thread when no thread
// can be started, but the build it runs starts threads of its own
// (CollectEntries and EntryList::Sort through base::RunOnThreads), whose
// std::system_error is not caught: BuildAndPublish catches only
// std::bad_alloc, so the exception crosses CreateIndex, and the declaration
// is never taken back.
TEST(IndexBuildReviewTest, NoThreadToBeHadIsAStatusNotAnException) {
  for (std::uint32_t nice : {0u, 10u}) {
    auto g = FilledGraph(nice, 2000);
    Status s;
    bool threw = false;
    std::string what;
    {
      test_util::NoNewThreads guard;
      ASSERT_TRUE(guard.ok());
      ASSERT_TRUE(test_util::NoNewThreads::Blocking()) << "the test cannot stop threads from starting here";
      try {
        s = g->CreateIndex(PersonSpec("k"));
      } catch (const std::exception& e) {
        threw = true;
        what = e.what();
      }
    }
    EXPECT_FALSE(threw) << "background_nice " << nice << ": CreateIndex threw: " << what;
    if (!threw && s.ok()) {
      for (const IndexInfo& i : g->GetSnapshot().Indexes()) EXPECT_EQ(i.entries, 2000u);
    }
    if (!s.ok() || threw) {
      EXPECT_FALSE(HasIndex(*g, "ix"))
          << "background_nice " << nice << ": a failed build left its declaration";
    }
  }
}

// Held: an online build under changes in both of its windows matches a scan
// of the snapshot that publishes it. Changes between the build's snapshot S
// and its later version L come from the build observer (on the build's
// thread, as BuildIndex starts); changes from then to publication from a
// writer thread that runs until CreateIndex returns. Enough elements
// (70,000) for the parallel table sweep and two radix-sorted runs; int64
// fixed-width keys, untyped (variable-width) keys, exact and ordered
// indexes, negative values, missing keys, additions, removals, key
// changes and removals of the key.
Graph* g_build_graph = nullptr;
std::atomic<bool> g_observed{false};

void ChangeMeanwhile(Graph& g, std::mt19937_64& rng, int round) {
  WriteBatch b;
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t id = rng() % 70500;
    switch (rng() % 5) {
      case 0: b.AddVertex("Person", {{"k", static_cast<std::int64_t>(rng() % 41) - 20}}); break;
      case 1: b.AddVertex(rng() % 2 ? "Person" : "Other", {{"j", round}}); break;
      case 2: b.SetProperty(VertexId(id), "k", static_cast<std::int64_t>(rng() % 41) - 20); break;
      case 3: b.RemoveProperty(VertexId(id), "k"); break;
      default: b.RemoveVertex(VertexId(id)); break;
    }
  }
  // A batch naming a removed vertex fails alone; the next one goes on.
  g.Write(std::move(b)).status().IgnoreError();
}

void ObserveBuild() {
  if (g_build_graph == nullptr || g_observed.exchange(true)) return;
  std::mt19937_64 rng(99);
  for (int round = 0; round < 40; ++round) ChangeMeanwhile(*g_build_graph, rng, round);
}

void CheckAgainstScan(const Snapshot& s, const IndexSpec& spec, const std::string& what) {
  std::vector<std::pair<std::int64_t, std::uint64_t>> want;
  std::optional<LabelId> person = s.FindLabel("Person");
  std::optional<PropertyKeyId> k = s.FindPropertyKey("k");
  ASSERT_TRUE(person && k);
  for (VertexId v : s.Vertices(*person))
    if (auto x = s.GetProperty(v, *k); x && x->as_int64()) want.emplace_back(*x->as_int64(), v.value());
  std::sort(want.begin(), want.end());
  std::vector<IndexInfo> infos = s.Indexes();
  ASSERT_EQ(infos.size(), 1u) << what;
  EXPECT_EQ(infos[0].state, IndexState::kReady) << what;
  EXPECT_EQ(infos[0].entries, want.size()) << what;
  if (spec.kind == IndexKind::kOrdered) {
    auto got = s.VerticesInRange("Person", "k", IndexRange{});
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), want.size()) << what;
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ((*got)[i].value(), want[i].second) << what << ": position " << i;
  }
  for (std::int64_t value = -21; value <= 21; ++value) {
    std::vector<std::uint64_t> expected;
    for (const auto& [x, id] : want)
      if (x == value) expected.push_back(id);
    auto got = s.FindVertices("Person", "k", PropertyValue(value));
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
    std::vector<std::uint64_t> ids;
    for (VertexId v : *got) ids.push_back(v.value());
    EXPECT_EQ(ids, expected) << what << ": value " << value;
  }
}

// Of the 16 configurations, a third run each time (loop_sample.h: a stride
// prime to 2, so that the sample mixes every dimension; all of them with
// QUIVER_EVERY_POINT=1).
TEST(IndexBuildReviewTest, OnlineBuildUnderChangesInBothWindowsMatchesAScan) {
  const test_util::LoopSample sample("online build review configurations", 3, 0);
  SCOPED_TRACE(sample.Describe());
  index::SetBuildObserverForTesting(&ObserveBuild);
  std::uint64_t configuration = 0;
  for (const bool durable : {false, true}) {
    for (const std::uint32_t nice : {0u, 5u}) {
      for (const IndexKind kind : {IndexKind::kOrdered, IndexKind::kExact}) {
        for (const bool typed : {true, false}) {
          if (!sample.Tries(configuration++)) continue;
          const std::string what =
              std::string(durable ? "durable" : "volatile") + " nice " + std::to_string(nice) +
              (kind == IndexKind::kOrdered ? " ordered" : " exact") + (typed ? " int64" : " untyped");
          Options o;
          o.background_nice = nice;
          env::SimFileSystem fs;
          std::unique_ptr<Graph> g =
              durable ? GraphImpl::OpenDurable(o, "/db", &fs).value() : Graph::OpenInMemory(o).value();
          for (int chunk = 0; chunk < 14; ++chunk) {
            WriteBatch b;
            for (int i = 0; i < 5000; ++i) {
              const int n = chunk * 5000 + i;
              if (n % 10 == 3) {
                b.AddVertex("Person", {{"j", n}});  // no key
              } else {
                b.AddVertex("Person", {{"k", std::int64_t{(n * 7919) % 41 - 20}}});
              }
            }
            ASSERT_TRUE(g->Write(std::move(b)).ok());
          }
          g_build_graph = g.get();
          g_observed = false;
          std::atomic<bool> done{false};
          std::thread writer([&] {
            std::mt19937_64 rng(5);
            for (int round = 0; !done.load(); ++round) ChangeMeanwhile(*g, rng, round);
          });
          IndexSpec spec =
              PersonSpec("k", kind, typed ? std::optional<ValueType>(ValueType::kInt64) : std::nullopt);
          Status s = g->CreateIndex(spec);
          done = true;
          writer.join();
          g_build_graph = nullptr;
          ASSERT_TRUE(s.ok()) << what << ": " << s.ToString();
          EXPECT_TRUE(g_observed.load()) << what;
          CheckAgainstScan(g->GetSnapshot(), spec, what);
          // And once more after more changes (the index is maintained).
          std::mt19937_64 rng(11);
          for (int round = 0; round < 20; ++round) ChangeMeanwhile(*g, rng, round);
          CheckAgainstScan(g->GetSnapshot(), spec, what + " then maintained");
        }
      }
    }
  }
  index::SetBuildObserverForTesting(nullptr);
}

// Held: the same for an edge index, where removing a vertex removes its
// edges (changes the build must see in either window).
void ChangeEdgesMeanwhile(Graph& g, std::mt19937_64& rng) {
  WriteBatch b;
  for (int i = 0; i < 20; ++i) {
    const VertexId a(rng() % 2000), c(rng() % 2000);
    switch (rng() % 5) {
      case 0: b.AddEdge("E", a, c, {{"k", static_cast<std::int64_t>(rng() % 41) - 20}}); break;
      case 1: b.SetProperty(EdgeId(rng() % 70500), "k", static_cast<std::int64_t>(rng() % 41) - 20); break;
      case 2: b.RemoveEdge(EdgeId(rng() % 70500)); break;
      case 3: b.RemoveProperty(EdgeId(rng() % 70500), "k"); break;
      default:
        if (rng() % 4 == 0) b.RemoveVertex(a);
        break;
    }
  }
  g.Write(std::move(b)).status().IgnoreError();
}

void ObserveEdgeBuild() {
  if (g_build_graph == nullptr || g_observed.exchange(true)) return;
  std::mt19937_64 rng(98);
  for (int round = 0; round < 40; ++round) ChangeEdgesMeanwhile(*g_build_graph, rng);
}

TEST(IndexBuildReviewTest, OnlineEdgeIndexBuildUnderChangesAndCascadesMatchesAScan) {
  index::SetBuildObserverForTesting(&ObserveEdgeBuild);
  for (const std::uint32_t nice : {0u, 5u}) {
    Options o;
    o.background_nice = nice;
    auto g = Graph::OpenInMemory(o).value();
    {
      WriteBatch b;
      for (int i = 0; i < 2000; ++i) b.AddVertex("N");
      ASSERT_TRUE(g->Write(std::move(b)).ok());
    }
    for (int chunk = 0; chunk < 14; ++chunk) {
      WriteBatch b;
      for (int i = 0; i < 5000; ++i) {
        const int n = chunk * 5000 + i;
        b.AddEdge("E", VertexId(n % 2000), VertexId((n * 31) % 2000),
                  {{"k", std::int64_t{(n * 7919) % 41 - 20}}});
      }
      ASSERT_TRUE(g->Write(std::move(b)).ok());
    }
    g_build_graph = g.get();
    g_observed = false;
    std::atomic<bool> done{false};
    std::thread writer([&] {
      std::mt19937_64 rng(6);
      while (!done.load()) ChangeEdgesMeanwhile(*g, rng);
    });
    IndexSpec spec{.name = "ek",
                   .element = ElementKind::kEdge,
                   .label = "E",
                   .keys = {"k"},
                   .kind = IndexKind::kOrdered,
                   .type = ValueType::kInt64};
    Status s = g->CreateIndex(spec);
    done = true;
    writer.join();
    g_build_graph = nullptr;
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(g_observed.load());
    Snapshot snap = g->GetSnapshot();
    std::vector<std::pair<std::int64_t, std::uint64_t>> want;
    for (std::uint64_t id = 0; id < 200000; ++id) {
      if (!snap.HasEdge(EdgeId(id))) continue;
      if (auto x = snap.GetProperty(EdgeId(id), "k"); x && x->as_int64())
        want.emplace_back(*x->as_int64(), id);
    }
    std::sort(want.begin(), want.end());
    auto got = snap.EdgesInRange("E", "k", IndexRange{});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), want.size()) << "nice " << nice;
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ((*got)[i].value(), want[i].second) << "position " << i;
  }
  index::SetBuildObserverForTesting(nullptr);
}

// Held: EntryList::Sort on two threads (two radix-sorted runs merged in
// ForEach) gives the order of (key bytes, id) for int64 keys around zero
// and the extremes, for doubles with -0.0, +-Inf, subnormals and extremes,
// with many ties broken by id; a slice whose ids do not ascend takes the
// std::sort path.
std::vector<std::pair<std::string, std::uint64_t>> Sorted(index::EntryList& list, unsigned threads) {
  list.Sort(threads);
  std::vector<std::pair<std::string, std::uint64_t>> out;
  list.ForEach([&](std::string_view k, std::uint64_t id) { out.emplace_back(std::string(k), id); });
  return out;
}

void CheckSortMatchesReference(const std::vector<PropertyView>& values, bool shuffle_ids) {
  std::mt19937_64 rng(42);
  std::vector<std::uint64_t> ids(values.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i * 3 + 1;
  if (shuffle_ids) std::shuffle(ids.begin() + static_cast<std::ptrdiff_t>(ids.size() / 2), ids.end(), rng);
  index::EntryList list(8);
  std::vector<std::pair<std::string, std::uint64_t>> want;
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::string key;
    index::AppendFixedKey(values[i], &key);
    list.Add(key, ids[i]);
    want.emplace_back(key, ids[i]);
  }
  std::sort(want.begin(), want.end());
  auto got = Sorted(list, 2);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "position " << i;
  // And the decoded keys ascend numerically.
  for (std::size_t i = 1; i < got.size(); ++i) {
    PropertyValue a = index::DecodeFixedKey(got[i - 1].first, values[0].type());
    PropertyValue b = index::DecodeFixedKey(got[i].first, values[0].type());
    if (a.type() == ValueType::kInt64) {
      ASSERT_LE(*a.as_int64(), *b.as_int64());
    } else {
      ASSERT_LE(*a.as_double(), *b.as_double());
    }
  }
}

TEST(IndexBuildReviewTest, RadixRunsSortInt64KeysLikeTheReference) {
  std::mt19937_64 rng(7);
  std::vector<PropertyView> v;
  const std::int64_t edges[] = {
      std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::min() + 1, -1, 0, 1,
      std::numeric_limits<std::int64_t>::max()};
  for (int i = 0; i < 150000; ++i) {
    switch (i % 4) {
      case 0: v.emplace_back(PropertyView(edges[rng() % 6])); break;
      case 1: v.emplace_back(PropertyView(static_cast<std::int64_t>(rng() % 64) - 32)); break;  // ties
      case 2: v.emplace_back(PropertyView(static_cast<std::int64_t>(rng()))); break;
      default: v.emplace_back(PropertyView(static_cast<std::int64_t>(rng() % (1u << 22)) << 11)); break;
    }
  }
  CheckSortMatchesReference(v, /*shuffle_ids=*/false);
  CheckSortMatchesReference(v, /*shuffle_ids=*/true);
}

TEST(IndexBuildReviewTest, RadixRunsSortDoubleKeysLikeTheReference) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> any(-1e300, 1e300);
  const double edges[] = {-0.0,
                          0.0,
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::denorm_min(),
                          -std::numeric_limits<double>::denorm_min(),
                          std::numeric_limits<double>::max(),
                          std::numeric_limits<double>::lowest(),
                          1.0,
                          -1.0};
  std::vector<PropertyView> v;
  for (int i = 0; i < 150000; ++i) {
    if (i % 3 == 0) {
      v.emplace_back(PropertyView(edges[rng() % 10]));
    } else if (i % 3 == 1) {
      v.emplace_back(PropertyView(static_cast<double>(static_cast<int>(rng() % 21) - 10) / 4));
    } else {
      v.emplace_back(PropertyView(any(rng)));
    }
  }
  CheckSortMatchesReference(v, /*shuffle_ids=*/false);
  CheckSortMatchesReference(v, /*shuffle_ids=*/true);
}

}  // namespace
}  // namespace quiver
