// A hostile review of the public API's contract (status.h: "Quiver never
// throws across its API"; bad input gets a precise status; no undefined
// behaviour on objects a user can make). Each test failed before its fix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_hook.h"
#include "no_new_threads.h"
#include "quiver/quiver.h"

// Specs are aggregates with defaults, written with designated initializers;
// GCC 12 flags every member such an initializer leaves to its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace quiver {
namespace {

std::string ContractDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/api_contract_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Finding: the graph's threads are started in GraphImpl's constructor; when
// none can be had, std::system_error crossed OpenInMemory (no try at all)
// and Open (which caught std::bad_alloc only).
TEST(ApiContractReviewTest, OpenWithNoThreadToBeHadIsAStatus) {
  for (const bool durable : {false, true}) {
    const std::string dir = ContractDir("no_threads");
    Status s;
    bool threw = false;
    {
      test_util::NoNewThreads guard;
      ASSERT_TRUE(guard.ok());
      ASSERT_TRUE(test_util::NoNewThreads::Blocking()) << "the test cannot stop threads from starting here";
      try {
        s = durable ? Graph::Open(Options{}, dir).status() : Graph::OpenInMemory().status();
      } catch (...) {
        threw = true;
      }
    }
    EXPECT_FALSE(threw) << (durable ? "Open" : "OpenInMemory") << " threw";
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
    if (durable) {
      // The lock was let go: the directory opens once threads are back.
      auto g = Graph::Open(Options{}, dir);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      EXPECT_TRUE((*g)->Close().ok());
    }
  }
}

// Finding: expectations are compared, never applied, so their keys and
// values skipped the checks every other operation gets; a NaN or an empty
// key gave Aborted, which callers retry (forever, here), and a key that is
// not UTF-8 in ExpectNoProperty even held.
TEST(ApiContractReviewTest, MalformedExpectationsAreInvalidArgumentNotAborted) {
  auto g = Graph::OpenInMemory().value();
  WriteBatch b;
  b.AddVertex("P", {{"x", 1}});
  const CommitInfo info = g->Write(std::move(b)).value();
  const VertexId v = info.vertices[0];
  const SequenceNumber before = g->GetSnapshot().sequence();
  auto code = [&](auto fill) {
    WriteBatch e;
    fill(e);
    e.SetProperty(v, "y", 2);  // must not be applied
    return g->Write(std::move(e)).status().code();
  };
  EXPECT_EQ(code([&](WriteBatch& e) { e.ExpectProperty(v, "x", std::nan("")); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](WriteBatch& e) { e.ExpectProperty(v, "", 1); }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](WriteBatch& e) { e.ExpectProperty(v, "x", std::string("\xff")); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](WriteBatch& e) { e.ExpectNoProperty(v, "\xff\xfe"); }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](WriteBatch& e) { e.ExpectNoProperty(v, ""); }), StatusCode::kInvalidArgument);
  // A well-formed expectation that does not hold is still Aborted.
  EXPECT_EQ(code([&](WriteBatch& e) { e.ExpectProperty(v, "x", 2); }), StatusCode::kAborted);
  const Snapshot snap = g->GetSnapshot();
  EXPECT_EQ(snap.sequence(), before);
  EXPECT_FALSE(snap.GetProperty(v, "y").has_value());
}

// Second review: ExpectKeyFree's label, key names and values skipped the
// checks too (an empty label was FailedPrecondition; a value that is not
// UTF-8 held, and the batch committed).
TEST(ApiContractReviewTest, MalformedKeyFreeExpectationsAreInvalidArgument) {
  auto g = Graph::OpenInMemory().value();
  ASSERT_TRUE(g->CreateIndex({.name = "pk", .label = "P", .keys = {"k"}, .kind = IndexKind::kUnique}).ok());
  auto code = [&](auto fill) {
    WriteBatch e;
    fill(e);
    e.AddVertex("Q");  // must not be applied
    return g->Write(std::move(e)).status().code();
  };
  EXPECT_EQ(code([](WriteBatch& e) { e.ExpectKeyFree("", {{"k", 1}}); }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](WriteBatch& e) {
              e.ExpectKeyFree("P", {{"k", std::string("\xff")}});
            }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](WriteBatch& e) { e.ExpectKeyFree("P", {{"", 1}}); }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](WriteBatch& e) {
              e.ExpectKeyFree("P", {{"k", std::nan("")}});
            }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 0u);
  // Well formed and free: the batch commits.
  EXPECT_EQ(code([](WriteBatch& e) { e.ExpectKeyFree("P", {{"k", 1}}); }), StatusCode::kOk);
}

// Second review: the writer reserves a group's list of batches at Open, so
// huge bounds threw std::length_error out of Open; they are bounded now.
TEST(ApiContractReviewTest, HugeQueueBoundsAreInvalidArgument) {
  for (const bool group : {false, true}) {
    Options o;
    (group ? o.writer.max_group_batches : o.writer.max_queued_batches) = SIZE_MAX;
    if (group) o.writer.max_queued_batches = SIZE_MAX;
    bool threw = false;
    Status s;
    try {
      s = Graph::OpenInMemory(o).status();
    } catch (...) {
      threw = true;
    }
    EXPECT_FALSE(threw);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  }
  Options o;
  o.writer.max_queued_batches = kMaxQueuedBatchesCeiling + 1;
  EXPECT_EQ(Graph::OpenInMemory(o).status().code(), StatusCode::kInvalidArgument);
}

// Finding: DurableOptions::file_mode was never checked: 0 made a graph
// its owner could not open again, and 04777 made setuid files.
TEST(ApiContractReviewTest, FileModeOutOfBoundsIsInvalidArgument) {
  for (const std::uint32_t mode : {0u, 0400u, 0200u, 04644u, 01777u, 0xFFFFFFFFu}) {
    Options o;
    o.durable.file_mode = mode;
    const std::string dir = ContractDir("mode");
    auto r = Graph::Open(o, dir);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << std::oct << mode;
    EXPECT_FALSE(std::filesystem::exists(dir)) << std::oct << mode << ": nothing is created";
  }
  for (const std::uint32_t mode : {0600u, 0640u, 0777u}) {
    Options o;
    o.durable.file_mode = mode;
    auto r = Graph::Open(o, ContractDir("mode_ok"));
    ASSERT_TRUE(r.ok()) << std::oct << mode << ": " << r.status().ToString();
    EXPECT_TRUE((*r)->Close().ok());
  }
}

// Finding: PropertyValue(const char*) built a std::string from a null
// pointer (undefined behaviour; libstdc++ throws std::logic_error).
TEST(ApiContractReviewTest, NullCStringIsTheNullValue) {
  const char* unset = nullptr;
  PropertyValue v(unset);
  EXPECT_TRUE(v.is_null());
  EXPECT_EQ(PropertyValue("a").type(), ValueType::kString);
}

// Finding: range iterators pointed at the range object, so an iterator
// outliving it (the snapshot still alive, as the header allows) read a
// dead object.
VertexRange::iterator FirstOfLabel(const Snapshot& s, LabelId l) {
  VertexRange r = s.Vertices(l);
  return r.begin();  // `r` dies here; the iterator must not need it
}
VertexRange::iterator FirstVertex(const Snapshot& s) {
  VertexRange r = s.Vertices();
  return r.begin();
}
Adjacency::iterator FirstGroup(const Snapshot& s, VertexId v) {
  Adjacency a = s.OutEdges(v);
  return a.begin();
}
PropertyRange::iterator FirstProperty(const Snapshot& s, VertexId v) {
  PropertyRange p = s.Properties(v);
  return p.begin();
}

TEST(ApiContractReviewTest, IteratorsOutliveTheirRangeObjects) {
  auto g = Graph::OpenInMemory().value();
  WriteBatch b;
  std::vector<NewVertex> vs;
  for (int i = 0; i < 40; ++i) vs.push_back(b.AddVertex(i % 2 != 0 ? "P" : "Q", {{"a", i}, {"b", -i}}));
  b.AddEdge("R", vs[0], vs[1]);
  b.AddEdge("S", vs[0], vs[2]);
  const CommitInfo info = g->Write(std::move(b)).value();
  const Snapshot s = g->GetSnapshot();
  const LabelId p = *s.FindLabel("P");
  int n = 0;
  for (auto it = FirstOfLabel(s, p), end = s.Vertices(p).end(); it != end; ++it) {
    EXPECT_EQ(s.LabelOf(*it), p);
    ++n;
  }
  EXPECT_EQ(n, 20);
  n = 0;
  for (auto it = FirstVertex(s), end = s.Vertices().end(); it != end; ++it) ++n;
  EXPECT_EQ(n, 40);
  n = 0;
  for (auto it = FirstGroup(s, info.vertices[0]), end = s.OutEdges(info.vertices[0]).end(); it != end; ++it)
    n += static_cast<int>((*it).entries.size());
  EXPECT_EQ(n, 2);
  n = 0;
  for (auto it = FirstProperty(s, info.vertices[3]), end = s.Properties(info.vertices[3]).end(); it != end;
       ++it)
    ++n;
  EXPECT_EQ(n, 2);
}

// Finding: an UpsertMode outside the enum was taken as kMerge.
TEST(ApiContractReviewTest, UpsertModeOutsideTheEnumIsInvalidArgument) {
  auto g = Graph::OpenInMemory().value();
  ASSERT_TRUE(g->CreateIndex({.name = "u", .label = "U", .keys = {"k"}, .kind = IndexKind::kUnique}).ok());
  WriteBatch b;
  b.UpsertVertex("U", {{"k", 1}}, {{"x", 2}}, static_cast<UpsertMode>(7));
  EXPECT_EQ(g->Write(std::move(b)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(g->GetSnapshot().vertex_count(), 0u);
}

// Finding: reserve() of a size no vector can hold threw std::length_error.
TEST(ApiContractReviewTest, ReserveOfAnAbsurdSizeDoesNotThrow) {
  WriteBatch b;
  EXPECT_NO_THROW(
      b.reserve(std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max()));
  EXPECT_NO_THROW(b.reserve(std::size_t{1} << 60, std::size_t{1} << 60));
  b.AddVertex("P");
  EXPECT_EQ(b.size(), 1u);
}

// Finding: value() on an error built its message with std::string before
// abort(): out of memory (the likely error then) it threw std::bad_alloc
// instead of aborting with the message.
TEST(ApiContractReviewDeathTest, ValueOnAnErrorAbortsWithoutAllocating) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> r = ResourceExhaustedError("oom");
  EXPECT_DEATH(
      {
        test_util::g_operator_new_consults_faults = true;
        base::ArmAllocationFaults(std::this_thread::get_id(), 1, base::AllocationFaultMode::kFromThenOn);
        (void)r.value();
      },
      "Result::value\\(\\) called on an error: ResourceExhausted: oom");
}

}  // namespace
}  // namespace quiver
