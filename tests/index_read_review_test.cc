// Review tests of the index read path and of index builds at open
// (index/index_cursor.cc, index/index_query.cc, index/index_build.cc):
// every answer is compared with a brute-force scan of the same snapshot,
// which reads each live vertex's label and properties through the table
// (never the label sets or the indexes), with the value order of
// docs/indexes.md written out again here. The graphs are big enough for
// many leaves (an int64 leaf holds ~145 entries, a label set's ~680), and
// the workloads remove runs of ids so that leaves empty and merge.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "alloc_hook.h"
#include "base/memory.h"
#include "env/file_system.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"
#include "test_util.h"

namespace quiver {
namespace {

constexpr double kMax = std::numeric_limits<double>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

// docs/indexes.md: bool < int64 < double < string < bytes (the ValueType
// numbering), then by value; -0.0 equals 0.0; strings and bytes by
// unsigned byte.
int CompareValues(const PropertyValue& a, const PropertyValue& b) {
  if (a.type() != b.type()) return a.type() < b.type() ? -1 : 1;
  auto three = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (a.type()) {
    case ValueType::kBool: return three(*a.as_bool(), *b.as_bool());
    case ValueType::kInt64: return three(*a.as_int64(), *b.as_int64());
    case ValueType::kDouble: return three(*a.as_double(), *b.as_double());
    case ValueType::kString: {
      const std::string_view x = *a.as_string(), y = *b.as_string();
      const std::size_t n = std::min(x.size(), y.size());
      const int c = n == 0 ? 0 : std::memcmp(x.data(), y.data(), n);
      return c != 0 ? (c < 0 ? -1 : 1) : three(x.size(), y.size());
    }
    case ValueType::kBytes: {
      std::span<const std::byte> x = *a.as_bytes(), y = *b.as_bytes();
      const std::size_t n = std::min(x.size(), y.size());
      const int c = n == 0 ? 0 : std::memcmp(x.data(), y.data(), n);
      return c != 0 ? (c < 0 ? -1 : 1) : three(x.size(), y.size());
    }
    default: return 0;
  }
}

Bytes B(std::initializer_list<int> bytes) {
  Bytes out;
  for (int b : bytes) out.push_back(static_cast<std::byte>(b));
  return out;
}

// The values the workloads store: the extremes and the neighbours of the
// encodings' edges (sign bits, -0.0, an embedded NUL, the highest code
// point, 0xFF bytes).
std::vector<PropertyValue> Int64Values() {
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                     hi = std::numeric_limits<std::int64_t>::max();
  return {lo, lo + 1, -1000, -2, -1, 0, 1, 2, 7, 1000, std::int64_t{1} << 40, hi - 1, hi};
}
std::vector<PropertyValue> DoubleValues() {
  return {-kMax,
          -1e300,
          -2.5,
          -1.0,
          -std::numeric_limits<double>::denorm_min(),
          -0.0,
          0.0,
          std::numeric_limits<double>::denorm_min(),
          1.0,
          2.5,
          1e300,
          kMax};
}
std::vector<PropertyValue> StringValues() {
  return {std::string(),
          std::string("a"),
          std::string("a\0", 2),
          std::string("a\0b", 3),
          std::string("ab"),
          std::string("abc"),
          std::string("b"),
          std::string("\x7F"),
          std::string("\xC3\xA9"),
          std::string("\xF4\x8F\xBF\xBF"),
          std::string("\xF4\x8F\xBF\xBF\xF4\x8F\xBF\xBF")};
}
std::vector<PropertyValue> AnyValues() {
  std::vector<PropertyValue> v = {false, true, B({}), B({0}), B({0xFF}), B({0xFF, 0xFF}), B({0x00, 0xFF})};
  for (auto* f : {&Int64Values, &DoubleValues, &StringValues})
    for (PropertyValue& x : f()) v.push_back(std::move(x));
  return v;
}

struct IndexUnderTest {
  IndexSpec spec;
  std::vector<PropertyValue> values;  // what the workload stores in its keys
};

std::vector<IndexUnderTest> Indexes() {
  auto spec = [](std::string name, std::vector<std::string> keys, IndexKind kind,
                 std::optional<ValueType> type) {
    return IndexSpec{
        .name = std::move(name), .label = "P", .keys = std::move(keys), .kind = kind, .type = type};
  };
  return {
      {spec("by_i", {"i"}, IndexKind::kOrdered, ValueType::kInt64), Int64Values()},
      {spec("by_d", {"d"}, IndexKind::kOrdered, ValueType::kDouble), DoubleValues()},
      {spec("by_s", {"s"}, IndexKind::kOrdered, ValueType::kString), StringValues()},
      {spec("by_any", {"any"}, IndexKind::kOrdered, std::nullopt), AnyValues()},
      {spec("by_pair", {"s", "i"}, IndexKind::kOrdered, std::nullopt), {}},
  };
}

struct Entry {
  std::vector<PropertyValue> key;
  std::uint64_t id;
};

// The entries of `spec` in `s`, by a sweep of the whole vertex table.
std::vector<Entry> Scan(const Snapshot& s, const IndexSpec& spec) {
  std::vector<Entry> out;
  const std::optional<LabelId> label = s.FindLabel(spec.label);
  if (!label) return out;
  for (VertexId v : s.Vertices()) {
    if (s.LabelOf(v) != label) continue;
    Entry e{{}, v.value()};
    bool indexed = true;
    for (const std::string& k : spec.keys) {
      std::optional<PropertyView> p = s.GetProperty(v, k);
      if (!p || p->is_null() || p->type() == ValueType::kFloatVector ||
          (spec.type && p->type() != *spec.type)) {
        indexed = false;
        break;
      }
      e.key.push_back(p->ToValue());
    }
    if (indexed) out.push_back(std::move(e));
  }
  std::stable_sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    for (std::size_t i = 0; i < a.key.size(); ++i)
      if (int c = CompareValues(a.key[i], b.key[i]); c != 0) return c < 0;
    return a.id < b.id;
  });
  return out;
}

bool InRange(const PropertyValue& v, const IndexRange& r) {
  if (r.prefix) return v.type() == ValueType::kString && v.as_string()->starts_with(*r.prefix);
  if (r.lo) {
    const int c = CompareValues(v, r.lo->value);
    if (c < 0 || (c == 0 && !r.lo->inclusive)) return false;
  }
  if (r.hi) {
    const int c = CompareValues(v, r.hi->value);
    if (c > 0 || (c == 0 && !r.hi->inclusive)) return false;
  }
  return true;
}

std::vector<std::uint64_t> Expected(const std::vector<Entry>& entries, const IndexRange& r,
                                    std::uint64_t* count) {
  std::vector<std::uint64_t> out;
  for (const Entry& e : entries)
    if (InRange(e.key[0], r)) out.push_back(e.id);
  *count = out.size();
  if (r.descending) std::reverse(out.begin(), out.end());
  if (out.size() > r.limit) out.resize(r.limit);
  return out;
}

std::string Describe(const IndexRange& r) {
  auto value = [](const PropertyValue& v) {
    switch (v.type()) {
      case ValueType::kBool: return std::string(*v.as_bool() ? "true" : "false");
      case ValueType::kInt64: return std::to_string(*v.as_int64());
      case ValueType::kDouble:
        return std::to_string(*v.as_double()) + (std::signbit(*v.as_double()) ? "(-)" : "");
      case ValueType::kString:
        return "\"" + std::string(*v.as_string()) + "\"/" + std::to_string(v.as_string()->size());
      case ValueType::kBytes: return "bytes[" + std::to_string(v.as_bytes()->size()) + "]";
      default: return std::string("?");
    }
  };
  std::string out;
  if (r.prefix) out += "prefix \"" + *r.prefix + "\"/" + std::to_string(r.prefix->size()) + " ";
  if (r.lo) out += (r.lo->inclusive ? "[" : "(") + value(r.lo->value);
  out += " .. ";
  if (r.hi) out += value(r.hi->value) + (r.hi->inclusive ? "]" : ")");
  out += r.descending ? " desc" : " asc";
  if (r.limit != std::numeric_limits<std::size_t>::max()) out += " limit " + std::to_string(r.limit);
  return out;
}

// A random valid range for `index`: bounds of the declared type (any type
// for the untyped index, the first key's for the composite), infinite
// double bounds, lo > hi, string prefixes, limits around a leaf's size and
// the scan's chunk.
IndexRange RandomRange(const IndexUnderTest& index, std::mt19937_64& rng) {
  const std::vector<PropertyValue>& values = index.values.empty() ? StringValues() : index.values;
  const bool strings = !index.spec.type || *index.spec.type == ValueType::kString;
  IndexRange r;
  auto bound = [&]() {
    PropertyValue v = values[rng() % values.size()];
    if (v.type() == ValueType::kDouble && rng() % 6 == 0) v = rng() % 2 == 0 ? kInf : -kInf;
    return RangeBound{std::move(v), rng() % 2 == 0};
  };
  if (strings && rng() % 4 == 0) {
    static const char* const kPrefixes[] = {"", "a", "ab", "b", "\xF4", "\xF4\x8F\xBF\xBF", "\xC3"};
    r.prefix = kPrefixes[rng() % 7];
    if (rng() % 5 == 0) r.prefix = std::string("a\0", 2);
    if (rng() % 7 == 0) r.prefix = std::string("\xFF");
    if (rng() % 7 == 0) r.prefix = std::string("a\xFF");
  } else {
    if (rng() % 4 != 0) r.lo = bound();
    if (rng() % 4 != 0) r.hi = bound();
  }
  r.descending = rng() % 2 == 0;
  static const std::size_t kLimits[] = {0, 1, 2, 3, 144, 145, 146, 511, 512, 513};
  if (rng() % 2 == 0) r.limit = kLimits[rng() % 10];
  return r;
}

// Every index of Indexes() asked `ranges` random ranges, and every label
// set iterated, against the scan of `s`. Returns the mismatches.
int CheckSnapshot(const Snapshot& s, std::mt19937_64& rng, int ranges, const std::string& where) {
  int bad = 0;
  for (const IndexUnderTest& index : Indexes()) {
    const std::vector<Entry> entries = Scan(s, index.spec);
    bool listed = false;
    for (const IndexInfo& info : s.Indexes()) listed |= info.spec.name == index.spec.name;
    if (!listed) continue;
    for (int q = 0; q < ranges; ++q) {
      const IndexRange r = RandomRange(index, rng);
      std::uint64_t count = 0;
      const std::vector<std::uint64_t> want = Expected(entries, r, &count);
      Result<std::vector<VertexId>> got = s.VerticesInRangeByIndex(index.spec.name, r);
      Result<std::uint64_t> n = s.CountVerticesInRangeByIndex(index.spec.name, r);
      if (!got.ok() || !n.ok()) {
        ADD_FAILURE() << where << " " << index.spec.name << " " << Describe(r) << ": "
                      << (got.ok() ? n.status() : got.status()).ToString();
        ++bad;
        continue;
      }
      std::vector<std::uint64_t> ids;
      for (VertexId v : *got) ids.push_back(v.value());
      if (ids != want || *n != count) {
        if (++bad <= 5)
          ADD_FAILURE() << where << " " << index.spec.name << " " << Describe(r) << ": got " << ids.size()
                        << " ids (count " << *n << "), want " << want.size() << " (count " << count << ")";
      }
    }
    // Exact lookups of every stored value: the ids holding it, ascending.
    if (index.spec.keys.size() == 1) {
      for (const PropertyValue& v : index.values) {
        std::vector<std::uint64_t> want;
        for (const Entry& e : entries)
          if (CompareValues(e.key[0], v) == 0) want.push_back(e.id);
        std::sort(want.begin(), want.end());
        Result<std::vector<VertexId>> got = s.FindVerticesByIndex(index.spec.name, std::span(&v, 1));
        std::vector<std::uint64_t> ids;
        if (got.ok())
          for (VertexId x : *got) ids.push_back(x.value());
        if (!got.ok() || ids != want) {
          ++bad;
          ADD_FAILURE() << where << " " << index.spec.name << " lookup: " << want.size() << " wanted";
        }
      }
    }
  }
  // Label sets against the table.
  for (const LabelCount& l : s.Labels()) {
    std::vector<std::uint64_t> want, got;
    for (VertexId v : s.Vertices())
      if (s.LabelOf(v) == l.label) want.push_back(v.value());
    for (VertexId v : s.Vertices(l.label)) got.push_back(v.value());
    if (got != want || l.vertices != want.size()) {
      ++bad;
      ADD_FAILURE() << where << " label " << l.name << ": " << got.size() << " ids, want " << want.size();
    }
  }
  return bad;
}

PropertyValue Pick(const std::vector<PropertyValue>& values, std::mt19937_64& rng) {
  return values[rng() % values.size()];
}

// A batch of the workload: adds (with every key, some missing, some null),
// property moves on existing vertices, removals of runs of ids.
WriteBatch RandomBatch(const Snapshot& s, std::mt19937_64& rng, int adds) {
  const std::vector<PropertyValue> ints = Int64Values(), doubles = DoubleValues(), strings = StringValues(),
                                   any = AnyValues();
  WriteBatch b;
  for (int i = 0; i < adds; ++i) {
    std::vector<Property> props;
    if (rng() % 8 != 0) props.push_back({"i", Pick(ints, rng)});
    if (rng() % 8 != 0) props.push_back({"d", rng() % 9 == 0 ? PropertyValue() : Pick(doubles, rng)});
    if (rng() % 8 != 0) props.push_back({"s", Pick(strings, rng)});
    if (rng() % 8 != 0) props.push_back({"any", Pick(any, rng)});
    b.AddVertex(rng() % 5 == 0 ? "Q" : "P", std::move(props));
  }
  const std::uint64_t limit = s.vertex_id_limit();
  if (limit == 0) return b;
  for (int i = 0; i < adds / 4; ++i) {
    const VertexId v(rng() % limit);
    if (!s.HasVertex(v)) continue;
    switch (rng() % 5) {
      case 0: b.SetProperty(v, "i", Pick(ints, rng)); break;
      case 1: b.SetProperty(v, "d", Pick(doubles, rng)); break;
      case 2: b.SetProperty(v, "s", Pick(strings, rng)); break;
      case 3: b.SetProperty(v, "any", Pick(any, rng)); break;
      case 4: b.RemoveProperty(v, rng() % 2 == 0 ? "i" : "any"); break;
    }
  }
  // A run of consecutive ids removed: whole leaves of the label sets and
  // the indexes empty and merge.
  const std::uint64_t from = rng() % limit, run = rng() % 400;
  for (std::uint64_t v = from; v < std::min(limit, from + run); ++v)
    if (s.HasVertex(VertexId(v))) b.RemoveVertex(VertexId(v));
  return b;
}

Options DurableOptions(unsigned io_threads) {
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = io_threads;
  return o;
}

// Random ranges, lookups and label sets against a full scan, on a graph
// whose indexes were declared before the data (maintained by the writer),
// then after a checkpoint is loaded (built at open: one index per worker,
// the fixed-width fast path for by_i and by_d), with one and three loader
// threads.
TEST(IndexReadReviewTest, RandomRangesMatchAFullScanLiveAndAfterOpen) {
  env::SimFileSystem fs;
  std::mt19937_64 rng(20261203);
  {
    auto g = GraphImpl::OpenDurable(DurableOptions(1), "/db", &fs).value();
    for (const IndexUnderTest& i : Indexes()) ASSERT_TRUE(g->CreateIndex(i.spec).ok()) << i.spec.name;
    for (int round = 0; round < 12; ++round) {
      ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng, round < 4 ? 2000 : 300)).ok());
      ASSERT_EQ(CheckSnapshot(g->GetSnapshot(), rng, 60, "round " + std::to_string(round)), 0);
    }
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_TRUE(g->Close().ok());
  }
  for (unsigned threads : {1u, 3u}) {
    auto g = GraphImpl::OpenDurable(DurableOptions(threads), "/db", &fs).value();
    EXPECT_EQ(CheckSnapshot(g->GetSnapshot(), rng, 150, "opened with " + std::to_string(threads)), 0);
    EXPECT_TRUE(g->Close().ok());
  }
}

// Indexes built by CreateIndex over existing data (collect, sort, bulk
// build), then maintained through more batches.
TEST(IndexReadReviewTest, RandomRangesMatchAFullScanAfterAnOnlineBuild) {
  std::mt19937_64 rng(7);
  auto g = Graph::OpenInMemory().value();
  for (int round = 0; round < 4; ++round)
    ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng, 3000)).ok());
  for (const IndexUnderTest& i : Indexes()) ASSERT_TRUE(g->CreateIndex(i.spec).ok()) << i.spec.name;
  ASSERT_EQ(CheckSnapshot(g->GetSnapshot(), rng, 100, "built"), 0);
  for (int round = 0; round < 6; ++round) {
    ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng, 500)).ok());
    ASSERT_EQ(CheckSnapshot(g->GetSnapshot(), rng, 40, "after build, round " + std::to_string(round)), 0);
  }
}

// A snapshot taken before DropIndex keeps answering through the index,
// unchanged, while later commits rewrite (and retire) the paths it reads.
TEST(IndexReadReviewTest, ASnapshotHeldAcrossADropAnswersAsBefore) {
  std::mt19937_64 rng(11);
  auto g = Graph::OpenInMemory().value();
  for (const IndexUnderTest& i : Indexes()) ASSERT_TRUE(g->CreateIndex(i.spec).ok());
  for (int round = 0; round < 3; ++round)
    ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng, 2000)).ok());
  Snapshot held = g->GetSnapshot();
  const std::vector<std::uint64_t> before = [&] {
    std::vector<std::uint64_t> ids;
    const std::vector<VertexId> all = held.VerticesInRangeByIndex("by_i", {}).value();
    for (VertexId v : all) ids.push_back(v.value());
    return ids;
  }();
  for (const IndexUnderTest& i : Indexes()) ASSERT_TRUE(g->DropIndex(i.spec.name).ok());
  for (int round = 0; round < 3; ++round)
    ASSERT_TRUE(g->Write(RandomBatch(g->GetSnapshot(), rng, 2000)).ok());
  EXPECT_TRUE(g->GetSnapshot().Indexes().empty());
  std::vector<std::uint64_t> after;
  const std::vector<VertexId> all = held.VerticesInRangeByIndex("by_i", {}).value();
  for (VertexId v : all) after.push_back(v.value());
  EXPECT_EQ(after, before);
  EXPECT_EQ(CheckSnapshot(held, rng, 60, "held"), 0);
}

// Unique keys moving inside one batch, against a model of the final
// state: rotations of keys among vertices (each through an intermediate
// value, some removed and set again), new vertices taking keys that
// committed ones give up, removals that free keys. A batch commits exactly
// when its final state holds each key once, and the index then answers as
// a scan does.
TEST(IndexReadReviewTest, UniqueKeysMovingWithinABatchMatchAModel) {
  std::mt19937_64 rng(3);
  auto g = Graph::OpenInMemory().value();
  ASSERT_TRUE(
      g->CreateIndex(
           {.name = "u", .label = "P", .keys = {"u"}, .kind = IndexKind::kUnique, .type = ValueType::kInt64})
          .ok());
  std::map<std::uint64_t, std::optional<std::int64_t>> model;  // live vertex -> its key
  {
    WriteBatch b;
    for (int i = 0; i < 600; ++i) {
      b.AddVertex("P", {{"u", i}});
      model[i] = i;
    }
    ASSERT_TRUE(g->Write(std::move(b)).ok());
  }
  int committed = 0, refused = 0;
  for (int round = 0; round < 300; ++round) {
    WriteBatch b;
    std::map<std::uint64_t, std::optional<std::int64_t>> next = model;
    std::vector<std::uint64_t> live;
    for (auto& [id, key] : model) live.push_back(id);
    std::shuffle(live.begin(), live.end(), rng);
    const std::size_t k = 2 + rng() % 6;
    // A rotation: vertex j takes vertex j+1's key, each first set to a
    // value no one holds, some removed and set again.
    for (std::size_t j = 0; j < k && j + 1 < live.size(); ++j) {
      const VertexId v(live[j]);
      const std::optional<std::int64_t> to = model[live[(j + 1) % k]];
      b.SetProperty(v, "u", std::int64_t{1'000'000} + round * 10 + static_cast<std::int64_t>(j));
      if (rng() % 3 == 0) b.RemoveProperty(v, "u");
      if (to) {
        b.SetProperty(v, "u", *to);
      } else {
        b.RemoveProperty(v, "u");
      }
      next[live[j]] = to;
    }
    // A removal whose key a new vertex takes, or a new vertex that collides.
    if (rng() % 2 == 0) {
      const std::uint64_t gone = live[k + rng() % 10];
      const std::optional<std::int64_t> freed = next[gone];
      b.RemoveVertex(VertexId(gone));
      next.erase(gone);
      const std::int64_t taken = rng() % 4 == 0 ? next.begin()->second.value_or(-1) : freed.value_or(-7);
      b.AddVertex("P", {{"u", taken}});
      next[g->GetSnapshot().vertex_id_limit()] = taken;
    }
    // Now and then two vertices end on one key.
    if (rng() % 5 == 0) {
      const std::uint64_t a = live[k + 10], c = live[k + 11];
      if (next[c]) {
        b.SetProperty(VertexId(a), "u", *next[c]);
        next[a] = next[c];
      }
    }
    std::map<std::int64_t, int> holders;
    bool unique = true;
    for (auto& [id, key] : next)
      if (key && ++holders[*key] > 1) unique = false;
    Result<CommitInfo> r = g->Write(std::move(b));
    ASSERT_EQ(r.ok(), unique) << "round " << round << ": " << r.status().ToString();
    if (!r.ok()) {
      ASSERT_EQ(r.status().code(), StatusCode::kAlreadyExists) << r.status().ToString();
      ++refused;
      continue;
    }
    ++committed;
    model = std::move(next);
    Snapshot s = g->GetSnapshot();
    std::size_t keyed = 0;
    for (auto& [id, key] : model) {
      if (!key) continue;
      ++keyed;
      ASSERT_EQ(s.FindVertex("P", "u", *key).value(), std::optional<VertexId>(VertexId(id)))
          << "round " << round;
    }
    ASSERT_EQ(s.Indexes()[0].entries, keyed) << "round " << round;
  }
  EXPECT_GT(committed, 100);
  EXPECT_GT(refused, 10);
}

// A durable graph in /db with two ready indexes (a unique int64 and an
// ordered string one: the fixed-width and the generic build) or one,
// checkpointed, with a WAL tail after the checkpoint.
// Declares by_i (unique int64 "i" of P) and, with two, by_s (ordered "s").
void CreateIndexesOnP(Graph& g, int indexes) {
  EXPECT_TRUE(g.CreateIndex({.name = "by_i",
                             .label = "P",
                             .keys = {"i"},
                             .kind = IndexKind::kUnique,
                             .type = ValueType::kInt64})
                  .ok());
  if (indexes > 1) {
    EXPECT_TRUE(
        g.CreateIndex({.name = "by_s", .label = "P", .keys = {"s"}, .kind = IndexKind::kOrdered}).ok());
  }
}

std::string IndexedCheckpoint(env::SimFileSystem& fs, int indexes, bool log_tail = true) {
  auto g = GraphImpl::OpenDurable(DurableOptions(1), "/db", &fs).value();
  CreateIndexesOnP(*g, indexes);
  WriteBatch b;
  for (int i = 0; i < 300; ++i)
    b.AddVertex(i % 7 == 0 ? "Q" : "P", {{"i", i * 3 - 400}, {"s", "v" + std::to_string(i % 50)}});
  EXPECT_TRUE(g->Write(std::move(b)).ok());
  EXPECT_TRUE(g->Checkpoint().ok());
  if (log_tail) {
    WriteBatch tail;
    tail.SetProperty(VertexId(1), "i", 100000);
    tail.RemoveVertex(VertexId(2));
    EXPECT_TRUE(g->Write(std::move(tail)).ok());
  }
  std::string dump = test_util::Dump(g->GetSnapshot());
  EXPECT_TRUE(g->Close().ok());
  return dump;
}

// One Open of /db with the opening thread's allocation n failing (once or
// from then on, the standard library's included). `error` is empty if Open
// answered ResourceExhausted (`exhausted`) or opened the graph as `dump`
// (then closed); else it says what went wrong: a std::bad_alloc out of
// Open, another status, another graph.
struct FaultedOpen {
  bool exhausted = false;
  std::uint64_t counted = 0;  // the allocations the open made, up to the failure
  std::string error;
};
FaultedOpen OpenWithAllocationFault(env::SimFileSystem& fs, const Options& o, const std::string& dump,
                                    std::uint64_t n, base::AllocationFaultMode mode) {
  FaultedOpen r;
  std::optional<Result<std::unique_ptr<Graph>>> g;
  bool threw = false;
  r.counted = test_util::WithAllocationFault(n, mode, &threw,
                                             [&] { g.emplace(GraphImpl::OpenDurable(o, "/db", &fs)); });
  const std::string at = "allocation " + std::to_string(n) + ": ";
  if (threw) {
    r.error = at + "Open threw std::bad_alloc";
  } else if (!g->ok()) {
    r.exhausted = g->status().code() == StatusCode::kResourceExhausted;
    if (!r.exhausted) r.error = at + g->status().ToString();
  } else if (std::string opened = test_util::Dump((**g)->GetSnapshot()); opened != dump) {
    r.error = at + "the opened graph differs:\n" + opened + "\nexpected:\n" + dump;
  } else if (Status c = (**g)->Close(); !c.ok()) {
    r.error = at + "Close: " + c.ToString();
  }
  return r;
}

// The opening thread's allocations (engine blocks and the standard
// library's) fail in turn (each of the first 64, then at a widening
// stride), once and from then on, while a checkpoint with
// indexes loads (its indexes built side by side, one per worker, or one on
// every thread) and, with a log tail, its log replays: Open answers
// ResourceExhausted or opens the graph whole, and never throws. A failed
// Open frees everything it built (LeakSanitizer checks it under ASan), also
// when it ran out of memory inside a replayed batch of the log tail; before,
// it left the half-built version unfreed (with a log tail, and earlier also
// without one, when freeing it could read table slots the loader had not
// written).
TEST(IndexReadReviewTest, OutOfMemoryWhileOpeningWithIndexesIsAStatus) {
  for (bool log_tail : {false, true}) {
    for (int indexes : {2, 1}) {
      env::SimFileSystem fs;
      const std::string dump = IndexedCheckpoint(fs, indexes, log_tail);
      for (unsigned threads : {1u, 3u}) {
        for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
          SCOPED_TRACE("indexes=" + std::to_string(indexes) + " threads=" + std::to_string(threads) +
                       (mode == base::AllocationFaultMode::kOnce ? " once" : " from then on") +
                       (log_tail ? " log tail" : ""));
          int exhausted = 0;
          for (std::uint64_t n = 1;; n += 1 + n / 64) {
            const FaultedOpen r = OpenWithAllocationFault(fs, DurableOptions(threads), dump, n, mode);
            ASSERT_TRUE(r.error.empty()) << r.error;
            if (r.exhausted) {
              ++exhausted;
              continue;
            }
            if (r.counted < n) break;  // the open made fewer allocations: every one has failed
          }
          EXPECT_GT(exhausted, 10);
        }
      }
    }
  }
}

// A log tail that works every index and set structure replay changes in
// place (review of the free-now replay): keys of loaded unique and ordered
// index trees erased and inserted (their nodes privatised, split and
// merged), a whole leaf of vertices removed (the radix table reclaims it),
// a label set shrunk from chunked to small and another grown from small to
// chunked, loader-packed adjacency unpacked, an index dropped and one
// declared (built at open, after the replay). Returns the final state.
std::string IndexHeavyLog(env::SimFileSystem& fs, bool checkpoint) {
  auto g = GraphImpl::OpenDurable(DurableOptions(1), "/db", &fs).value();
  CreateIndexesOnP(*g, 2);
  EXPECT_TRUE(
      g->CreateIndex(
           {.name = "ends", .element = ElementKind::kEdge, .label = "E", .kind = IndexKind::kUniqueEndpoints})
          .ok());
  {
    WriteBatch b;
    std::vector<NewVertex> v;
    for (int i = 0; i < 1200; ++i)
      v.push_back(b.AddVertex(i < 600 ? "P" : "R", {{"i", i}, {"s", "str-" + std::to_string(i % 97)}}));
    for (int i = 0; i < 400; ++i) v.push_back(b.AddVertex("S", {{"k", i}}));  // a small set
    for (int i = 0; i + 1 < 1200; ++i) b.AddEdge("E", v[i], v[i + 1], {{"w", i}});
    for (int i = 0; i < 1200; i += 3) b.AddEdge("F", v[i], v[(i * 7 + 5) % 1200]);
    EXPECT_TRUE(g->Write(std::move(b)).ok());
  }
  if (checkpoint) {
    EXPECT_TRUE(g->Checkpoint().ok());
  }
  {
    WriteBatch b;
    for (int i = 0; i < 200; ++i) b.SetProperty(VertexId(i * 3), "i", 100000 + i);
    for (int i = 0; i < 200; ++i) b.SetProperty(VertexId(i * 2 + 1), "s", "zz" + std::to_string(i));
    for (int i = 0; i < 100; ++i) b.RemoveProperty(VertexId(i * 5 + 2), "s");   // erases only: merges
    for (int i = 128; i < 192; ++i) b.RemoveVertex(VertexId(i));                // a whole leaf of P
    for (int i = 600; i < 1080; ++i) b.RemoveVertex(VertexId(i));               // R: chunked to small
    for (int i = 0; i < 200; ++i) b.AddVertex("S", {{"k", 1000 + i}});          // S: small to chunked
    for (int i = 0; i < 20; ++i) b.AddEdge("F", VertexId(i), VertexId(i + 1));  // unpacks
    EXPECT_TRUE(g->Write(std::move(b)).ok());
  }
  EXPECT_TRUE(g->DropIndex("by_s").ok());
  EXPECT_TRUE(
      g->CreateIndex({.name = "by_k", .label = "S", .keys = {"k"}, .kind = IndexKind::kOrdered}).ok());
  {
    WriteBatch b;
    for (int i = 0; i < 100; ++i) b.SetProperty(VertexId(1200 + i), "k", -i);
    EXPECT_TRUE(g->Write(std::move(b)).ok());
  }
  std::string dump = test_util::Dump(g->GetSnapshot());
  EXPECT_TRUE(g->Close().ok());
  return dump;
}

// Open replays IndexHeavyLog's tail, with and without a checkpoint under
// it, with the opening thread's allocations failing in turn (each of the
// first 48, then at a widening stride; QUIVER_EVERY_POINT=1 tries every
// one), once and from then on: ResourceExhausted or the whole graph, never
// a throw, nothing freed twice (ASan), nothing leaked (LeakSanitizer).
TEST(IndexReadReviewTest, OutOfMemoryWhileOpeningReplaysAnIndexHeavyLogTail) {
  const std::uint64_t widen = test_util::EnvOr("QUIVER_EVERY_POINT", 0) != 0 ? 0 : 48;
  for (bool checkpoint : {true, false}) {
    env::SimFileSystem fs;
    const std::string dump = IndexHeavyLog(fs, checkpoint);
    for (auto mode : {base::AllocationFaultMode::kOnce, base::AllocationFaultMode::kFromThenOn}) {
      SCOPED_TRACE(std::string(checkpoint ? "checkpoint + log" : "log only") +
                   (mode == base::AllocationFaultMode::kOnce ? ", once" : ", from then on"));
      std::uint64_t tried = 0, exhausted = 0, n = 1;
      for (;; n += 1 + (widen == 0 ? 0 : n / widen)) {
        const FaultedOpen r = OpenWithAllocationFault(fs, DurableOptions(1), dump, n, mode);
        ++tried;
        ASSERT_TRUE(r.error.empty()) << r.error;
        if (r.exhausted) {
          ++exhausted;
          continue;
        }
        if (r.counted < n) break;  // the open made fewer allocations: every one has failed
      }
      std::cout << "[          ] " << tried << " allocations tried (of " << n << "), " << exhausted
                << " answered ResourceExhausted\n";
      EXPECT_GT(exhausted, 100u);
    }
  }
}

// Out of memory making the lock handle (an Open that runs out of memory
// as it takes LOCK) leaves the lock free: the next LockFile of the path
// takes it. Before, the table kept the entry and every later Open of the
// directory in the process was refused ("held by this process").
TEST(IndexReadReviewTest, OutOfMemoryTakingALockLeavesItFree) {
  char tmpl[] = "/tmp/quiver-lock-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  env::SimFileSystem sim;
  ASSERT_TRUE(sim.CreateDir("/d").ok());
  env::FileSystem* posix = env::PosixFileSystem();
  for (env::FileSystem* fs : {static_cast<env::FileSystem*>(&sim), posix}) {
    const std::string path = (fs == posix ? dir : std::string("/d")) + "/LOCK";
    for (env::LockMode mode : {env::LockMode::kExclusive, env::LockMode::kShared}) {
      if (mode == env::LockMode::kShared) {  // a shared lock never creates the file
        ASSERT_TRUE(fs->LockFile(path, env::LockMode::kExclusive).ok());
      }
      for (std::uint64_t n = 1;; ++n) {
        bool threw = false;
        std::uint64_t counted = 0;
        {
          test_util::ScopedOperatorNewFaults hook;
          base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
          try {
            Result<std::unique_ptr<env::FileLock>> l = fs->LockFile(path, mode);
            l.status().IgnoreError();
          } catch (const std::bad_alloc&) {
            threw = true;
          }
          counted = base::DisarmAllocationFaults();
        }
        Result<std::unique_ptr<env::FileLock>> again = fs->LockFile(path, env::LockMode::kExclusive);
        ASSERT_TRUE(again.ok()) << "after allocation " << n << " failed: " << again.status().ToString();
        if (!threw && counted < n) break;
      }
    }
  }
  std::remove((dir + "/LOCK").c_str());
  ::rmdir(dir.c_str());
}

// Out of memory in a range scan, a lookup or a count (the result's vector,
// the bound's encoding) answers ResourceExhausted, never an exception.
TEST(IndexReadReviewTest, OutOfMemoryInAnIndexQueryIsAStatus) {
  auto g = Graph::OpenInMemory().value();
  ASSERT_TRUE(
      g->CreateIndex({.name = "by_s", .label = "P", .keys = {"s"}, .kind = IndexKind::kOrdered}).ok());
  WriteBatch b;
  for (int i = 0; i < 2000; ++i) b.AddVertex("P", {{"s", "v" + std::to_string(i % 300)}});
  ASSERT_TRUE(g->Write(std::move(b)).ok());
  Snapshot s = g->GetSnapshot();
  const IndexRange range{.lo = RangeBound{"v1"}, .hi = RangeBound{"v5", false}};
  const std::size_t want = s.VerticesInRange("P", "s", range).value().size();
  const PropertyValue key("v17");
  for (int query = 0; query < 3; ++query) {
    int exhausted = 0;
    for (std::uint64_t n = 1;; ++n) {
      bool threw = false, ok = false;
      std::uint64_t counted = 0;
      StatusCode code = StatusCode::kOk;
      {
        test_util::ScopedOperatorNewFaults hook;
        base::ArmAllocationFaults(std::this_thread::get_id(), n, base::AllocationFaultMode::kOnce);
        try {
          if (query == 0) {
            Result<std::vector<VertexId>> r = s.VerticesInRange("P", "s", range);
            ok = r.ok() && r->size() == want;
            code = r.status().code();
          } else if (query == 1) {
            Result<std::vector<VertexId>> r = s.FindVerticesByIndex("by_s", std::span(&key, 1));
            ok = r.ok() && r->size() == 7;
            code = r.status().code();
          } else {
            Result<std::uint64_t> r = s.CountVerticesInRangeByIndex("by_s", range);
            ok = r.ok() && *r == want;
            code = r.status().code();
          }
        } catch (const std::bad_alloc&) {
          threw = true;
        }
        counted = base::DisarmAllocationFaults();
      }
      ASSERT_FALSE(threw) << "query " << query << " threw std::bad_alloc at allocation " << n;
      if (code == StatusCode::kResourceExhausted) {
        ++exhausted;
        continue;
      }
      ASSERT_TRUE(ok) << "query " << query << ", allocation " << n;
      if (counted < n) break;
    }
    if (query < 2) {
      EXPECT_GT(exhausted, 0) << "query " << query;
    }
  }
}

}  // namespace
}  // namespace quiver
