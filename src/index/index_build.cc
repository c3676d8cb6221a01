#include "index/index_build.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <iterator>
#include <memory>

#include "base/parallel.h"
#include "base/strings.h"
#include "index/index_keys.h"
#include "index/key_codec.h"
#include "storage/prop_block.h"

namespace quiver::index {
namespace {

using storage::GraphRoots;

std::atomic<void (*)()> build_observer{nullptr};

// fn(id, props) for each live element of (kind, label) with id in [begin, end).
template <typename Fn>
void ScanTable(const GraphRoots& g, ElementKind kind, std::uint32_t label, std::uint64_t begin,
               std::uint64_t end, Fn&& fn) {
  if (kind == ElementKind::kVertex) {
    end = std::min(end, g.vertex_limit);
    for (std::uint64_t pos = begin; pos < end;) {
      const auto* leaf = storage::VertexTable::FindLeaf(g.vertices, pos);
      const std::uint64_t leaf_end = std::min(end, (pos | (storage::VertexTable::kLeafSize - 1)) + 1);
      for (; pos < leaf_end; ++pos) {
        const storage::VertexSlot& s = leaf->slots[pos & (storage::VertexTable::kLeafSize - 1)];
        if (s.label == label) fn(pos, s.props);
      }
    }
  } else {
    end = std::min(end, g.edge_limit);
    for (std::uint64_t pos = begin; pos < end;) {
      const auto* leaf = storage::EdgeTable::FindLeaf(g.edges, pos);
      const std::uint64_t leaf_end = std::min(end, (pos | (storage::EdgeTable::kLeafSize - 1)) + 1);
      for (; pos < leaf_end; ++pos) {
        const storage::EdgeSlot& s = leaf->slots[pos & (storage::EdgeTable::kLeafSize - 1)];
        if (s.type == label) fn(pos, storage::EdgeProps(g, pos));
      }
    }
  }
}

// fn(id, props) for each element of the set, in id order (cost: the set's size).
template <typename Fn>
void ScanSet(const GraphRoots& g, ElementKind kind, const IdSetRoot& set, Fn&& fn) {
  std::uint64_t ids[256];
  std::uint64_t from = 0;
  while (const std::size_t n = IdSet::Fill(set, from, ids, std::size(ids))) {
    for (std::size_t i = 0; i < n; ++i) fn(ids[i], PropsOf(g, kind, ids[i]));
    from = ids[n - 1] + 1;
  }
}

Status WrongType(const IndexDef& def, std::uint64_t id, const storage::PropBlock* props, std::size_t bad) {
  PropertyView v = *storage::GetProperty(props, def.key_ids[bad]);
  return InvalidArgumentError(base::StrCat(
      DescribeElement(def.element, id), " holds ", ValueTypeName(v.type()), " ", DescribeValue(v), " in '",
      def.keys[bad], "'; ", DescribeIndex(def), " takes only ", ValueTypeName(*def.type), " values"));
}

// Collects from elements given by `scan`; the first failure (lowest id) wins.
template <typename Scan>
Status CollectWith(const GraphRoots& g, const IndexDef& def, Scan&& scan, EntryList* out) {
  Status error;
  if (out->key_width() == 8 && def.kind != IndexKind::kUniqueEndpoints && def.type.has_value()) {
    // One int64 or double key of a declared type (KeyWidthFor): what
    // ElementKey decides, with the key kept as the integer EntryList
    // sorts, no string between.
    const std::uint32_t key_id = def.key_ids[0];
    const ValueType type = *def.type;
    scan([&](std::uint64_t id, const storage::PropBlock* props) {
      if (!error.ok()) return;
      const std::optional<PropertyView> v = storage::GetProperty(props, key_id);
      if (!v || v->is_null()) return;
      if (v->type() != type) {
        error = WrongType(def, id, props, 0);
        return;
      }
      out->AddFixed(FixedKeyBits(*v), id);
    });
    return error;
  }
  std::string key;
  scan([&](std::uint64_t id, const storage::PropBlock* props) {
    if (!error.ok()) return;
    if (def.kind == IndexKind::kUniqueEndpoints) {
      const storage::EdgeSlot* e = storage::FindEdge(g, id);
      EndpointKey(e->src(), e->dst(), &key);
      out->Add(key, id);
      return;
    }
    std::size_t bad = 0;
    switch (ElementKey(def, props, &key, &bad)) {
      case KeyStatus::kIndexed: out->Add(key, id); break;
      case KeyStatus::kNotIndexed: break;
      case KeyStatus::kWrongType: error = WrongType(def, id, props, bad); break;
      case KeyStatus::kTooLong:
        error = InvalidArgumentError(base::StrCat(DescribeElement(def.element, id), ": its key for ",
                                                  DescribeIndex(def), " is ", key.size(),
                                                  " bytes encoded; the limit is ", kMaxKeyBytes));
        break;
    }
  });
  return error;
}

}  // namespace

void EntryList::Add(std::string_view key, std::uint64_t id) {
  if (width_ == 8) {
    std::uint64_t k = 0;
    for (char c : key) k = (k << 8) | static_cast<unsigned char>(c);
    fixed_.push_back(Fixed{k, id});
  } else {
    var_.push_back(Var{arena_.size(), static_cast<std::uint32_t>(key.size()), id});
    arena_.append(key);
  }
}

void EntryList::Reserve(std::size_t n) {
  if (width_ == 8) {
    fixed_.reserve(n);
  } else {
    var_.reserve(n);
  }
}

void EntryList::Append(EntryList&& other) {
  if (width_ == 8) {
    if (fixed_.empty()) {
      fixed_ = std::move(other.fixed_);
    } else {
      fixed_.insert(fixed_.end(), other.fixed_.begin(), other.fixed_.end());
    }
  } else {
    const std::uint64_t base = arena_.size();
    arena_.append(other.arena_);
    for (Var v : other.var_) {
      v.offset += base;
      var_.push_back(v);
    }
  }
  other = EntryList(width_);
}

namespace {

// Sorts `v` with `less`: two halves on two threads, then one merge into a
// second array of v's own type (std::inplace_merge's buffer would be freed
// whole, stalling a writer that maps memory meanwhile: base::DiscardPagesInSteps).
template <typename Vector, typename Less>
void ParallelSort(Vector& v, unsigned threads, Less less) {
  if (threads < 2 || v.size() < 65536) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  base::RunOnThreads(2, [&](unsigned half) {
    if (half == 0) {
      std::sort(v.begin(), mid, less);
    } else {
      std::sort(mid, v.end(), less);
    }
  });
  Vector merged;
  merged.reserve(v.size());
  std::merge(v.begin(), mid, mid, v.end(), std::back_inserter(merged), less);
  v.swap(merged);
}

}  // namespace

namespace {

constexpr int kRadixBits = 11, kRadixPasses = 6;
constexpr std::size_t kRadixBuckets = std::size_t{1} << kRadixBits;
constexpr std::uint64_t kRadixMask = kRadixBuckets - 1;
// Runs of at most this many entries (1 MiB) are sorted by LSD passes over
// the whole run; larger ones are split first into parts of about
// kPartEntries (256 KiB, which with its scratch stays in L2), SortRun.
constexpr std::size_t kCacheRunEntries = std::size_t{1} << 16;
constexpr std::size_t kPartEntries = std::size_t{1} << 14;
// Parts smaller than this are sorted by comparison.
constexpr std::size_t kSmallPartEntries = 256;

// counts[p * kRadixBuckets + d]: how many of a[0, n) have digit d in pass p
// (passes [0, passes)).
template <typename Fixed>
void CountDigits(const Fixed* a, std::size_t n, int passes, std::size_t* counts) {
  std::fill(counts, counts + passes * kRadixBuckets, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = a[i].key;
    for (int p = 0; p < passes; ++p) ++counts[p * kRadixBuckets + ((k >> (p * kRadixBits)) & kRadixMask)];
  }
}

// Stable LSD radix sort of a[0, n) by the digits of passes [0, passes),
// given their counts (consumed); a pass whose digit every key shares is
// skipped. tmp has room for n; the result is in a.
template <typename Fixed>
void SortLsdFrom(Fixed* a, Fixed* tmp, std::size_t n, int passes, int first_bit, std::size_t* counts) {
  Fixed* src = a;
  Fixed* dst = tmp;
  for (int p = 0; p < passes; ++p) {
    std::size_t* c = &counts[p * kRadixBuckets];
    const int shift = first_bit + p * kRadixBits;
    if (c[(src[0].key >> shift) & kRadixMask] == n) continue;  // one digit for all: nothing moves
    std::size_t sum = 0;
    for (std::size_t b = 0; b < kRadixBuckets; ++b) {
      const std::size_t count = c[b];
      c[b] = sum;
      sum += count;
    }
    for (std::size_t i = 0; i < n; ++i) dst[c[(src[i].key >> shift) & kRadixMask]++] = src[i];
    std::swap(src, dst);
  }
  if (src != a) std::memcpy(static_cast<void*>(a), src, n * sizeof(Fixed));
}

template <typename Fixed>
void SortLsd(Fixed* a, Fixed* tmp, std::size_t n, int passes, std::size_t* counts) {
  SortLsdFrom(a, tmp, n, passes, 0, counts);
}

// Insertion sort of a[0, n) by `less`, giving up (false, a[0, n) then a
// permutation of what it was) once it has moved entries `budget` places.
template <typename Fixed, typename Less>
bool InsertionSortBounded(Fixed* a, std::size_t n, std::size_t budget, Less less) {
  std::size_t moves = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (!less(a[i], a[i - 1])) continue;
    const Fixed x = a[i];
    std::size_t j = i;
    for (; j > 0 && less(x, a[j - 1]); --j) a[j] = a[j - 1];
    a[j] = x;
    moves += i - j;
    if (moves > budget) return false;
  }
  return true;
}

}  // namespace

// Sorts a[0, n) by (key, id); tmp has room for n. When the ids ascend (the
// order collecting leaves them in), a stable radix sort by key alone does
// it; otherwise std::sort. Only the bits below the highest one that varies
// are sorted on. A run of at most kCacheRunEntries takes LSD passes of 11
// bits (counted in one pass first). A larger one is first split by its top
// varying bits into parts of about kPartEntries (one stable scatter into
// tmp), and each part takes its LSD passes while it sits in cache: one
// pass over memory for the run instead of one per digit. The LSD passes
// before were most of an index's build at open, each a scatter over the
// whole run.
void EntryList::SortRun(Fixed* a, Fixed* tmp, std::size_t n) {
  if (n < 2) return;
  auto by_key_then_id = [](const Fixed& x, const Fixed& y) {
    return x.key != y.key ? x.key < y.key : x.id < y.id;
  };
  std::uint64_t varying = 0;  // the bits some key holds differently from the first
  for (std::size_t i = 1; i < n; ++i) {
    if (a[i].id <= a[i - 1].id) {
      std::sort(a, a + n, by_key_then_id);
      return;
    }
    varying |= a[i].key ^ a[0].key;
  }
  if (varying == 0) return;  // one key: already in id order
  const int high = 63 - std::countl_zero(varying);
  std::vector<std::size_t> counts(kRadixPasses * kRadixBuckets);
  auto passes_below = [](int bits) { return (bits + kRadixBits - 1) / kRadixBits; };
  if (n <= kCacheRunEntries) {
    const int passes = passes_below(high + 1);
    CountDigits(a, n, passes, counts.data());
    SortLsd(a, tmp, n, passes, counts.data());
    return;
  }
  const int bits = std::min(high + 1, std::max(1, static_cast<int>(std::bit_width(n / kPartEntries))));
  const int shift = high + 1 - bits;
  const std::size_t parts = std::size_t{1} << bits;
  const std::uint64_t mask = parts - 1;
  std::vector<std::size_t> starts(parts + 1, 0), next(parts);
  for (std::size_t i = 0; i < n; ++i) ++starts[((a[i].key >> shift) & mask) + 1];
  for (std::size_t p = 0; p < parts; ++p) starts[p + 1] += starts[p];
  std::copy(starts.begin(), starts.end() - 1, next.begin());
  for (std::size_t i = 0; i < n; ++i) tmp[next[(a[i].key >> shift) & mask]++] = a[i];
  const int passes = passes_below(shift);
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t from = starts[p], m = starts[p + 1] - from;
    if (m == 0) continue;
    Fixed* part = tmp + from;
    if (m < kSmallPartEntries || passes == 0) {  // below the LSD passes' bookkeeping (2^11 counters each)
      std::sort(part, part + m, by_key_then_id);
    } else if (passes <= 2) {
      CountDigits(part, m, passes, counts.data());
      SortLsd(part, a + from, m, passes, counts.data());
    } else {
      // Two passes on the part's top 22 bits below the split leave keys
      // in order but for runs that share those bits (for spread keys
      // about one in 250 entries at a part of 2^14); an insertion sort
      // finishes. Keys that crowd into a few runs fall back to std::sort.
      const int low = shift - 2 * kRadixBits;
      std::fill(counts.begin(), counts.begin() + 2 * kRadixBuckets, 0);
      for (std::size_t i = 0; i < m; ++i) {
        ++counts[(part[i].key >> low) & kRadixMask];
        ++counts[kRadixBuckets + ((part[i].key >> (low + kRadixBits)) & kRadixMask)];
      }
      SortLsdFrom(part, a + from, m, 2, low, counts.data());
      if (!InsertionSortBounded(part, m, 4 * m, by_key_then_id)) std::sort(part, part + m, by_key_then_id);
    }
    std::memcpy(static_cast<void*>(a + from), tmp + from, m * sizeof(Fixed));
  }
}

void EntryList::Sort(unsigned threads) {
  if (width_ == 8) {
    const std::size_t n = fixed_.size();
    const unsigned runs = threads < 2 || n < 65536 ? 1 : threads;
    // Not initialised: SortRun writes before it reads. Given back in steps,
    // as the list's own array.
    struct ScratchArray {
      std::size_t n;
      Fixed* p = base::SteppedReleaseAllocator<Fixed>().allocate(n);
      ~ScratchArray() { base::SteppedReleaseAllocator<Fixed>().deallocate(p, n); }
      Fixed* get() const { return p; }
    } scratch{n};
    run_ends_.assign(runs, 0);
    base::RunOnThreads(runs, [&](unsigned r) {
      const std::size_t begin = n * r / runs, end = n * (r + 1) / runs;
      SortRun(fixed_.data() + begin, scratch.get() + begin, end - begin);
      run_ends_[r] = end;
    });
    if (runs == 1) run_ends_.clear();
  } else {
    ParallelSort(var_, threads, [this](const Var& a, const Var& b) {
      int c = KeyOf(a).compare(KeyOf(b));
      return c != 0 ? c < 0 : a.id < b.id;
    });
  }
}

const storage::PropBlock* PropsOf(const GraphRoots& g, ElementKind kind, std::uint64_t id) {
  if (kind == ElementKind::kVertex) {
    const storage::VertexSlot* s = storage::FindVertex(g, id);
    return s == nullptr ? nullptr : s->props;
  }
  return storage::FindEdge(g, id) == nullptr ? nullptr : storage::EdgeProps(g, id);
}

std::string DescribeElement(ElementKind kind, std::uint64_t id) {
  return base::StrCat(kind == ElementKind::kVertex ? "vertex " : "edge ", id);
}

KeyStatus KeyIn(const GraphRoots& g, const IndexDef& def, std::uint64_t id, std::string* key) {
  if (def.kind == IndexKind::kUniqueEndpoints) {
    const storage::EdgeSlot* e = def.element == ElementKind::kEdge ? storage::FindEdge(g, id) : nullptr;
    if (e == nullptr) return KeyStatus::kNotIndexed;
    EndpointKey(e->src(), e->dst(), key);
    return KeyStatus::kIndexed;
  }
  const storage::PropBlock* props = PropsOf(g, def.element, id);
  if (props == nullptr) return KeyStatus::kNotIndexed;
  return ElementKey(def, props, key);
}

std::string DescribeKeyOf(const GraphRoots& g, const IndexDef& def, std::uint64_t id) {
  if (def.kind == IndexKind::kUniqueEndpoints) {
    const storage::EdgeSlot* e = storage::FindEdge(g, id);
    return e == nullptr ? std::string("(removed edge)") : DescribePair(e->src(), e->dst());
  }
  const storage::PropBlock* props = PropsOf(g, def.element, id);
  std::string out = def.keys.size() == 1 ? "" : "(";
  for (std::size_t i = 0; i < def.key_ids.size(); ++i) {
    std::optional<PropertyView> v = storage::GetProperty(props, def.key_ids[i]);
    out += (i == 0 ? "" : ", ") + (v ? DescribeValue(*v) : std::string("missing"));
  }
  return def.keys.size() == 1 ? out : out + ")";
}

Status CollectEntries(const GraphRoots& g, const IndexDef& def, unsigned threads, EntryList* out) {
  const IdSetRoot* set = g.catalog->Set(def.element, def.label_id);
  if (set == nullptr || set->count == 0) return Status::Ok();
  const std::uint64_t limit = def.element == ElementKind::kVertex ? g.vertex_limit : g.edge_limit;
  // A label that is a small share of the table is walked through its set;
  // a large one is cheaper to sweep from the table (in parallel if given
  // threads).
  threads = std::max(threads, 1u);
  if (set->count * 4 < limit) {
    return CollectWith(
        g, def, [&](auto&& fn) { ScanSet(g, def.element, *set, fn); }, out);
  }
  const std::uint64_t leaf = storage::VertexTable::kLeafSize;
  const std::uint64_t leaves = (limit + leaf - 1) / leaf;
  std::vector<EntryList> parts(threads, EntryList(def.key_width));
  std::vector<Status> errors(threads);
  base::RunOnThreads(threads, [&](unsigned t) {
    const std::uint64_t begin = leaves * t / threads * leaf, end = leaves * (t + 1) / threads * leaf;
    // At most every element of the range or of the label, so no list
    // regrows; the first, which the others are appended to, room for the
    // whole label. Address space only: pages never written are never backed.
    parts[t].Reserve(static_cast<std::size_t>(t == 0 ? set->count : std::min(set->count, end - begin)));
    errors[t] = CollectWith(
        g, def, [&](auto&& fn) { ScanTable(g, def.element, def.label_id, begin, end, fn); }, &parts[t]);
  });
  for (unsigned t = 0; t < threads; ++t) {
    QUIVER_RETURN_IF_ERROR(errors[t]);  // ranges are in id order: the lowest id's failure
    out->Append(std::move(parts[t]));
  }
  return Status::Ok();
}

Status CheckUnique(const GraphRoots& g, const IndexDef& def, const EntryList& entries) {
  if (!IsUniqueKind(def.kind)) return Status::Ok();
  if (entries.key_width() == 8) {  // the keys as integers: one compare per entry
    bool first = true;
    std::uint64_t prev = 0, prev_id = 0, dup = 0, dup_id = 0;
    bool found = false;
    entries.ForEachFixed([&](std::uint64_t key, std::uint64_t id) {
      if (!first && key == prev && !found) {
        found = true;
        dup = prev_id;
        dup_id = id;
      }
      prev = key;
      prev_id = id;
      first = false;
    });
    if (!found) return Status::Ok();
    return AlreadyExistsError(base::StrCat(DescribeIndex(def), ": key ", DescribeKeyOf(g, def, dup_id),
                                           " is held by both ", DescribeElement(def.element, dup), " and ",
                                           DescribeElement(def.element, dup_id)));
  }
  std::string prev;
  std::uint64_t prev_id = 0;
  bool first = true;
  Status error;
  entries.ForEach([&](std::string_view key, std::uint64_t id) {
    if (!error.ok()) return;
    if (!first && key == prev) {
      error = AlreadyExistsError(base::StrCat(
          DescribeIndex(def), ": ", KeyWord(def), " ", DescribeKeyOf(g, def, id), " is held by both ",
          DescribeElement(def.element, prev_id), " and ", DescribeElement(def.element, id)));
    }
    prev.assign(key);
    prev_id = id;
    first = false;
  });
  return error;
}

IndexRoot BuildTree(const IndexDef& def, const EntryList& entries, storage::MutationContext& ctx) {
  IndexTree::Builder builder(def.key_width, ctx);
  entries.ForEach([&builder](std::string_view key, std::uint64_t id) { builder.Add(key, id); });
  return builder.Finish();
}

Status AddLaterElements(const GraphRoots& later, const IndexDef& def, std::uint64_t split,
                        storage::MutationContext& ctx, IndexRoot* root) {
  const std::uint64_t limit = def.element == ElementKind::kVertex ? later.vertex_limit : later.edge_limit;
  if (split >= limit) return Status::Ok();
  EntryList entries(def.key_width);
  QUIVER_RETURN_IF_ERROR(CollectWith(
      later, def, [&](auto&& fn) { ScanTable(later, def.element, def.label_id, split, limit, fn); },
      &entries));
  entries.Sort(1);
  entries.ForEach([&](std::string_view key, std::uint64_t id) { IndexTree::Insert(*root, key, id, ctx); });
  return Status::Ok();
}

void SetBuildObserverForTesting(void (*fn)()) { build_observer.store(fn, std::memory_order_release); }

void BuildSets(GraphRoots& g, ElementKind kind, storage::MutationContext& ctx) {
  const std::uint32_t names = kind == ElementKind::kVertex ? g.labels->size() : g.types->size();
  std::vector<std::unique_ptr<IdSet::Builder>> builders(names);
  const std::uint64_t limit = kind == ElementKind::kVertex ? g.vertex_limit : g.edge_limit;
  auto add = [&](std::uint32_t label, std::uint64_t id) {
    if (builders[label] == nullptr) builders[label] = std::make_unique<IdSet::Builder>(ctx);
    builders[label]->Add(id);
  };
  if (kind == ElementKind::kVertex) {
    for (std::uint64_t pos = 0; pos < limit; pos += storage::VertexTable::kLeafSize) {
      const auto* leaf = storage::VertexTable::FindLeaf(g.vertices, pos);
      const std::uint64_t n = std::min(storage::VertexTable::kLeafSize, limit - pos);
      for (std::uint64_t i = 0; i < n; ++i)
        if (leaf->slots[i].label != storage::kDeadLabel) add(leaf->slots[i].label, pos + i);
    }
  } else {
    for (std::uint64_t pos = 0; pos < limit; pos += storage::EdgeTable::kLeafSize) {
      const auto* leaf = storage::EdgeTable::FindLeaf(g.edges, pos);
      const std::uint64_t n = std::min(storage::EdgeTable::kLeafSize, limit - pos);
      for (std::uint64_t i = 0; i < n; ++i)
        if (leaf->slots[i].type != storage::kDeadType) add(leaf->slots[i].type, pos + i);
    }
  }
  for (std::uint32_t label = 0; label < names; ++label) {
    if (builders[label] == nullptr) continue;
    // Two statements: MutableSet may grow the catalog's vector (and throw),
    // and until Finish returns the builder still owns (and frees) its nodes.
    IdSetRoot& set = g.catalog->MutableSet(kind, label);
    set = builders[label]->Finish();
  }
}

Status BuildIndex(const GraphRoots& g, const IndexDef& def, unsigned threads, storage::MutationContext& ctx,
                  IndexRoot* out) {
  if (void (*observe)() = build_observer.load(std::memory_order_acquire)) observe();
  EntryList entries(def.key_width);
  QUIVER_RETURN_IF_ERROR(CollectEntries(g, def, threads, &entries));
  entries.Sort(threads);
  QUIVER_RETURN_IF_ERROR(CheckUnique(g, def, entries));
  *out = BuildTree(def, entries, ctx);
  return Status::Ok();
}

}  // namespace quiver::index
