// The index tree (src/index/index_tree.h) on int64 keys: point lookup against absl::flat_hash_map,
// range scan, random insert, bulk build, and memory per entry. Unlike the other micro-benchmarks
// this one drives an internal structure directly (no graph), so the figures are the tree's own.
//
// Targets (DESIGN.md, docs/impl.md "Index tree"): point lookup p50 within 2x of a flat_hash_map
// lookup of the same keys at 10M keys (vs_hash_p50 <= 2); range scan >= 100M entries/s; bulk
// build >= 10M entries/s; <= 20 B per int64 entry (random insert order and bulk-built); label sets
// near 6 B per entry when ids arrive in increasing order.
// How: keys are Mix(i) for i < N, Mix a bijection of 64-bit integers (SplitMix64's finaliser), so
// a random existing key costs no memory access to draw; entry i is (FixedKey(Mix(i)), id i).
//   BM_IndexLookup/N       Contains(key, &id) on a bulk-built tree of N entries, uniformly random
//                          existing keys; p50_ns per lookup, and hash_p50_ns of
//                          flat_hash_map<int64_t, uint64_t>::find on the same keys in the same
//                          run, vs_hash_p50 = p50_ns / hash_p50_ns (method: bench_util.h).
//   BM_HashMapLookup/N     the map alone, timed like the tree.
//   BM_IndexScan           a cursor over all 10M entries; items_per_second = entries/s.
//   BM_IndexInsert/G       random inserts into a tree of 1M entries (a fresh tree each
//                          iteration, Iterations(1)), G inserts per commit group: each group is
//                          an epoch whose retired nodes are freed at once (no reader holds them).
//   BM_IndexBuild          Builder over 10M sorted entries; items_per_second.
//   BM_IndexMemory/order   bytes_per_entry = MemoryAccount bytes / entries after 10M inserts in
//                          random order (groups of 1000), in increasing key order, or bulk-built.
//   BM_IndexEraseHalf      1M random inserts, then erases of pseudo-random even ids (about 40% of
//                          the entries): bytes_per_entry of what is left, after merges.
//   BM_LabelSetAppend      10M ids appended to a label set (key width 0) in groups of 1000;
//                          bytes_per_entry.
#include <absl/container/flat_hash_map.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "bench_util.h"
#include "index/index_tree.h"
#include "index/key_codec.h"
#include "storage/retire_list.h"

namespace quiver::bench {
namespace {

using index::IndexRoot;
using index::IndexTree;

const std::uint64_t kLarge = Scaled(10'000'000);

// SplitMix64's finaliser: a bijection, so Mix(i) for distinct i are distinct keys.
std::int64_t Mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::int64_t>(z ^ (z >> 31));
}

// The 8-byte fixed key of v (key_codec.h), written into `buf`.
std::string_view FixedKey(std::int64_t v, char* buf) {
  const std::uint64_t t = static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
  for (int i = 7; i >= 0; --i) buf[7 - i] = static_cast<char>(t >> (8 * i));
  return {buf, 8};
}

// A writer without readers: each commit group is an epoch; publishing frees the group's retired
// nodes at once.
class Writer {
 public:
  storage::MutationContext ctx() { return {epoch_, &account_, &retired_, &blocks_}; }
  void Publish() {
    blocks_.Clear();
    retired_.FreeAll(&account_);
    ++epoch_;
  }
  base::MemoryAccount& account() { return account_; }

 private:
  std::uint64_t epoch_ = 1;
  base::MemoryAccount account_;
  storage::GroupBlocks blocks_;
  storage::RetireList retired_;
};

IndexRoot BulkBuild(std::uint64_t n, Writer& w) {
  std::vector<std::pair<std::int64_t, std::uint64_t>> entries(n);
  for (std::uint64_t i = 0; i < n; ++i) entries[i] = {Mix(i), i};
  std::sort(entries.begin(), entries.end());
  storage::MutationContext ctx = w.ctx();
  IndexTree::Builder b(static_cast<std::int32_t>(index::kFixedKeyBytes), ctx);
  char buf[8];
  for (const auto& [k, id] : entries) b.Add(FixedKey(k, buf), id);
  IndexRoot root = b.Finish();
  w.Publish();
  return root;
}

struct LookupFixture {
  Writer writer;
  IndexRoot root;
  absl::flat_hash_map<std::int64_t, std::uint64_t> map;
};

const LookupFixture& Lookup(std::uint64_t n) {
  static LookupFixture* fixtures[2] = {nullptr, nullptr};
  LookupFixture*& f = fixtures[n == kLarge ? 1 : 0];
  if (f == nullptr) {
    f = new LookupFixture;
    f->root = BulkBuild(n, f->writer);
    f->map.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) f->map.emplace(Mix(i), i);
  }
  return *f;
}

std::uint64_t TreeLookup(const IndexRoot& root, std::int64_t key) {
  char buf[8];
  std::uint64_t id = ~std::uint64_t{0};
  IndexTree::Contains(root, FixedKey(key, buf), &id);
  return id;
}

std::uint64_t MapLookup(const absl::flat_hash_map<std::int64_t, std::uint64_t>& map, std::int64_t key) {
  auto it = map.find(key);
  return it == map.end() ? ~std::uint64_t{0} : it->second;
}

// Median latency of `op` over `samples` random existing keys, the empty bracket's median subtracted.
template <typename Op>
double MedianNs(std::uint64_t n, std::uint64_t samples, Op op) {
  const double ns_per_tick = NanosecondsPerTick();
  Rng rng(kSeed + 7);
  std::vector<std::uint64_t> empty(10'000), ticks(samples);
  for (std::uint64_t& t : empty) {
    const std::uint64_t t0 = ReadTicks();
    ClobberMemory();
    t = ReadTicks() - t0;
  }
  for (std::uint64_t& t : ticks) {
    const std::int64_t key = Mix(rng.Uniform(n));
    const std::uint64_t t0 = ReadTicks();
    ClobberMemory();
    Consume(op(key));
    ClobberMemory();
    t = ReadTicks() - t0;
  }
  auto median = [](std::vector<std::uint64_t>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const std::uint64_t overhead = median(empty), m = median(ticks);
  return m > overhead ? static_cast<double>(m - overhead) * ns_per_tick : 0.0;
}

bool LookupsAreCorrect(const LookupFixture& f, std::uint64_t n) {
  Rng rng(kSeed + 3);
  for (int i = 0; i < 10'000; ++i) {
    const std::uint64_t j = rng.Uniform(n);
    if (TreeLookup(f.root, Mix(j)) != j || MapLookup(f.map, Mix(j)) != j) return false;
  }
  return f.root.count == n;
}

void BM_IndexLookup(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const LookupFixture& f = Lookup(n);
  if (!LookupsAreCorrect(f, n)) return state.SkipWithError("a lookup returned a wrong id");
  Rng rng(kSeed);
  for (auto _ : state) Consume(TreeLookup(f.root, Mix(rng.Uniform(n))));
  state.SetItemsProcessed(state.iterations());
  const double tree = MedianNs(n, 200'000, [&](std::int64_t k) { return TreeLookup(f.root, k); });
  const double hash = MedianNs(n, 200'000, [&](std::int64_t k) { return MapLookup(f.map, k); });
  state.counters["p50_ns"] = tree;
  state.counters["hash_p50_ns"] = hash;
  state.counters["vs_hash_p50"] = hash > 0 ? tree / hash : 0;
  state.counters["bytes_per_entry"] =
      static_cast<double>(IndexTree::MemoryBytes(f.root)) / static_cast<double>(n);
}
BENCHMARK(BM_IndexLookup)
    ->Arg(static_cast<std::int64_t>(Scaled(1'000'000)))
    ->Arg(static_cast<std::int64_t>(kLarge));

void BM_HashMapLookup(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const LookupFixture& f = Lookup(n);
  Rng rng(kSeed);
  for (auto _ : state) Consume(MapLookup(f.map, Mix(rng.Uniform(n))));
  state.SetItemsProcessed(state.iterations());
  state.counters["p50_ns"] = MedianNs(n, 200'000, [&](std::int64_t k) { return MapLookup(f.map, k); });
}
BENCHMARK(BM_HashMapLookup)
    ->Arg(static_cast<std::int64_t>(Scaled(1'000'000)))
    ->Arg(static_cast<std::int64_t>(kLarge));

void BM_IndexScan(benchmark::State& state) {
  const LookupFixture& f = Lookup(kLarge);
  std::uint64_t entries = 0;
  for (auto _ : state) {
    IndexTree::Cursor c(f.root);
    std::uint64_t sum = 0;
    for (c.Seek(index::Bound{}); c.Valid(); c.Next()) sum += c.id() + c.key().size();
    Consume(sum);
    entries += f.root.count;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(entries));
}
BENCHMARK(BM_IndexScan)->Unit(benchmark::kMillisecond);

void BM_IndexInsert(benchmark::State& state) {
  const auto group = static_cast<std::uint64_t>(state.range(0));
  const std::uint64_t kInserts = Scaled(1'000'000);
  for (auto _ : state) {
    Writer w;
    IndexRoot root{.key_width = 8};
    char buf[8];
    for (std::uint64_t i = 0; i < kInserts; i += group) {
      storage::MutationContext ctx = w.ctx();
      for (std::uint64_t j = i; j < i + group; ++j) IndexTree::Insert(root, FixedKey(Mix(j), buf), j, ctx);
      w.Publish();
    }
    state.counters["bytes_per_entry"] =
        static_cast<double>(w.account().allocated_bytes()) / static_cast<double>(kInserts);
    IndexTree::Destroy(root, &w.account());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kInserts));
}
BENCHMARK(BM_IndexInsert)->Arg(1)->Arg(1000)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_IndexBuild(benchmark::State& state) {
  std::vector<std::pair<std::int64_t, std::uint64_t>> entries(kLarge);
  for (std::uint64_t i = 0; i < kLarge; ++i) entries[i] = {Mix(i), i};
  std::sort(entries.begin(), entries.end());
  for (auto _ : state) {
    Writer w;
    storage::MutationContext ctx = w.ctx();
    IndexTree::Builder b(8, ctx);
    char buf[8];
    for (const auto& [k, id] : entries) b.Add(FixedKey(k, buf), id);
    IndexRoot root = b.Finish();
    state.PauseTiming();
    state.counters["bytes_per_entry"] =
        static_cast<double>(w.account().allocated_bytes()) / static_cast<double>(kLarge);
    IndexTree::Destroy(root, &w.account());
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kLarge));
}
BENCHMARK(BM_IndexBuild)->Unit(benchmark::kMillisecond);

// 0: random key order, 1: increasing key order; both through Insert in groups of 1000.
void BM_IndexMemory(benchmark::State& state) {
  const bool sorted = state.range(0) == 1;
  for (auto _ : state) {
    Writer w;
    IndexRoot root{.key_width = 8};
    char buf[8];
    for (std::uint64_t i = 0; i < kLarge; i += 1000) {
      storage::MutationContext ctx = w.ctx();
      for (std::uint64_t j = i; j < i + 1000; ++j) {
        IndexTree::Insert(root, FixedKey(sorted ? static_cast<std::int64_t>(j) : Mix(j), buf), j, ctx);
      }
      w.Publish();
    }
    state.counters["bytes_per_entry"] =
        static_cast<double>(w.account().allocated_bytes()) / static_cast<double>(kLarge);
    IndexTree::Destroy(root, &w.account());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kLarge));
}
BENCHMARK(BM_IndexMemory)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

// What merges keep after deletes: 1M random inserts, then a random half erased.
void BM_IndexEraseHalf(benchmark::State& state) {
  const std::uint64_t kInserts = Scaled(1'000'000);
  for (auto _ : state) {
    Writer w;
    IndexRoot root{.key_width = 8};
    char buf[8];
    for (std::uint64_t i = 0; i < kInserts; i += 1000) {
      storage::MutationContext ctx = w.ctx();
      for (std::uint64_t j = i; j < i + 1000; ++j) IndexTree::Insert(root, FixedKey(Mix(j), buf), j, ctx);
      w.Publish();
    }
    const double full = static_cast<double>(w.account().allocated_bytes()) / static_cast<double>(kInserts);
    for (std::uint64_t i = 0; i < kInserts; i += 1000) {
      storage::MutationContext ctx = w.ctx();
      for (std::uint64_t j = i; j < i + 1000; ++j) {
        const std::uint64_t k = Mix(j + (std::uint64_t{1} << 40)) % kInserts;  // a pseudo-random entry
        if (k % 2 == 0) IndexTree::Erase(root, FixedKey(Mix(k), buf), k, ctx);
      }
      w.Publish();
    }
    state.counters["bytes_per_entry_before"] = full;
    state.counters["bytes_per_entry"] =
        static_cast<double>(w.account().allocated_bytes()) / static_cast<double>(root.count);
    state.counters["entries_left"] = static_cast<double>(root.count);
    IndexTree::Destroy(root, &w.account());
  }
}
BENCHMARK(BM_IndexEraseHalf)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_LabelSetAppend(benchmark::State& state) {
  for (auto _ : state) {
    Writer w;
    IndexRoot root{.key_width = 0};
    for (std::uint64_t i = 0; i < kLarge; i += 1000) {
      storage::MutationContext ctx = w.ctx();
      for (std::uint64_t id = i; id < i + 1000; ++id) IndexTree::Insert(root, {}, id, ctx);
      w.Publish();
    }
    state.counters["bytes_per_entry"] =
        static_cast<double>(w.account().allocated_bytes()) / static_cast<double>(kLarge);
    IndexTree::Destroy(root, &w.account());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kLarge));
}
BENCHMARK(BM_LabelSetAppend)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace quiver::bench
