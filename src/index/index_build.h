// Building an index's contents in one go from a version: at CreateIndex (on
// the caller's thread, from a pinned snapshot, while the writer commits), at
// open for indexes the log declared and never finished, and when a
// checkpoint is loaded (indexes, label and type sets are derived, never
// stored).
//
// The steps: collect (key, id) of every element of the label (in parallel
// over id ranges when the label is a large share of the table), check types
// and lengths, sort (two halves on two threads, then merged), check
// uniqueness on neighbours, and feed IndexTree::Builder in order.
//
// Thread safety: everything reads only the version it is given, which must
// be immutable (pinned) or private to the caller.
#ifndef QUIVER_INDEX_INDEX_BUILD_H_
#define QUIVER_INDEX_INDEX_BUILD_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/memory.h"
#include "index/catalog.h"
#include "index/index_keys.h"
#include "quiver/status.h"
#include "storage/elements.h"
#include "storage/retire_list.h"

namespace quiver::index {

// (key, id) pairs of one index, sortable: keys of a fixed-width index as
// 64-bit integers (byte order = integer order of the big-endian reading),
// others in one arena.
class EntryList {
 public:
  explicit EntryList(std::int32_t key_width) : width_(key_width) {}
  std::int32_t key_width() const { return width_; }

  void Add(std::string_view key, std::uint64_t id);
  // key_width() == 8 only: the key as FixedKeyBits gives it (its bytes
  // read big-endian).
  void AddFixed(std::uint64_t key, std::uint64_t id) { fixed_.push_back(Fixed{key, id}); }
  // Room for `n` entries in all (a hint).
  void Reserve(std::size_t n);
  // Moves `other`'s entries (same width) to the end of this list.
  void Append(EntryList&& other);
  std::size_t size() const { return width_ == 8 ? fixed_.size() : var_.size(); }
  // Sorts by (key bytes, id), on up to `threads` threads. Fixed-width keys:
  // each thread radix-sorts one slice into a sorted run (stable, by key,
  // when the slice's ids ascend, as collecting leaves them), and ForEach
  // merges the runs as it goes, so no merge pass is made; others: halves on
  // two threads, then merged.
  void Sort(unsigned threads);
  // fn(key, id) for each entry in order.
  template <typename Fn>
  void ForEach(Fn&& fn) const;
  // key_width() == 8 only: fn(key bits, id) for each entry in order.
  template <typename Fn>
  void ForEachFixed(Fn&& fn) const;

 private:
  struct Fixed {
    std::uint64_t key;  // the 8 key bytes read big-endian
    std::uint64_t id;
  };
  struct Var {
    std::uint64_t offset;
    std::uint32_t length;
    std::uint64_t id;
  };
  static void SortRun(Fixed* a, Fixed* tmp, std::size_t n);
  std::string_view KeyOf(const Var& v) const { return std::string_view(arena_).substr(v.offset, v.length); }

  // Up to hundreds of MB each: given back in steps (base::SteppedReleaseAllocator),
  // so that freeing them does not stall a writer that maps memory meanwhile.
  template <typename T>
  using Scratch = std::vector<T, base::SteppedReleaseAllocator<T>>;

  std::int32_t width_;
  Scratch<Fixed> fixed_;
  // After Sort: where each sorted run of fixed_ ends (empty: one run).
  std::vector<std::size_t> run_ends_;
  std::basic_string<char, std::char_traits<char>, base::SteppedReleaseAllocator<char>> arena_;
  Scratch<Var> var_;
};

// Collects the entries of `def` from `g`. InvalidArgument naming the
// element and key if one holds a value of another type than `def`
// declares, or a key longer than kMaxKeyBytes.
Status CollectEntries(const storage::GraphRoots& g, const IndexDef& def, unsigned threads, EntryList* out);

// For a unique index: AlreadyExists naming the index, the key and two ids
// if sorted `entries` repeat a key.
Status CheckUnique(const storage::GraphRoots& g, const IndexDef& def, const EntryList& entries);

// The tree of sorted `entries`; nodes from ctx. Throws std::bad_alloc.
IndexRoot BuildTree(const IndexDef& def, const EntryList& entries, storage::MutationContext& ctx);

// Collect, sort, check, build. Throws std::bad_alloc (nodes already built
// are in ctx.blocks if it has one).
Status BuildIndex(const storage::GraphRoots& g, const IndexDef& def, unsigned threads,
                  storage::MutationContext& ctx, IndexRoot* out);

// Online builds (online_build.h, step 2b): inserts into `root`, built from
// a snapshot whose table ended at `split`, the entries of the elements of
// `later` with ids from `split` on, in key order. Writes root's nodes in
// place: they must be private to the caller and born in ctx.epoch. Errors
// as CollectEntries. Throws std::bad_alloc.
Status AddLaterElements(const storage::GraphRoots& later, const IndexDef& def, std::uint64_t split,
                        storage::MutationContext& ctx, IndexRoot* root);

// Tests: `fn` (null for none) is called by BuildIndex as it starts, on the
// thread that runs it, so a test can tell which thread built an index and
// at what priority.
void SetBuildObserverForTesting(void (*fn)());

// Builds the label (kind kVertex) or type (kEdge) sets of `g` from its
// table, one pass in id order; g.catalog must be private to ctx's epoch
// and have no sets of that kind yet. The two kinds may be built on two
// threads at once (each with its own ctx). Throws std::bad_alloc.
void BuildSets(storage::GraphRoots& g, ElementKind kind, storage::MutationContext& ctx);

// The values of the index's keys held by element `id` of `g`, for
// messages: "\"Ada\"" or "(\"Ada\", 1815)".
std::string DescribeKeyOf(const storage::GraphRoots& g, const IndexDef& def, std::uint64_t id);
// The key element `id` has in `g` (its properties' or, for
// kUniqueEndpoints, its endpoints'); kNotIndexed if it is not live there.
// Validated data only: a key of another type or too long is kNotIndexed.
KeyStatus KeyIn(const storage::GraphRoots& g, const IndexDef& def, std::uint64_t id, std::string* key);
// "vertex 7" / "edge 7".
std::string DescribeElement(ElementKind kind, std::uint64_t id);

// The properties of live element `id` (null if none or not live).
const storage::PropBlock* PropsOf(const storage::GraphRoots& g, ElementKind kind, std::uint64_t id);

template <typename Fn>
void EntryList::ForEachFixed(Fn&& fn) const {
  if (run_ends_.size() < 2) {
    for (const Fixed& f : fixed_) fn(f.key, f.id);
    return;
  }
  // A merge of the sorted runs: few (one per sorting thread), so the
  // smallest head is found by a scan.
  std::vector<std::size_t> at(run_ends_.size()), end = run_ends_;
  for (std::size_t r = 1; r < at.size(); ++r) at[r] = run_ends_[r - 1];
  while (true) {
    std::size_t best = at.size();
    for (std::size_t r = 0; r < at.size(); ++r) {
      if (at[r] == end[r]) continue;
      if (best == at.size()) {
        best = r;
        continue;
      }
      const Fixed& a = fixed_[at[r]];
      const Fixed& b = fixed_[at[best]];
      if (a.key < b.key || (a.key == b.key && a.id < b.id)) best = r;
    }
    if (best == at.size()) return;
    const Fixed& f = fixed_[at[best]++];
    fn(f.key, f.id);
  }
}

template <typename Fn>
void EntryList::ForEach(Fn&& fn) const {
  if (width_ == 8) {
    ForEachFixed([&fn](std::uint64_t key, std::uint64_t id) {
      char buf[8];
      const std::uint64_t be = __builtin_bswap64(key);  // the key's bytes, most significant first
      std::memcpy(buf, &be, 8);
      fn(std::string_view(buf, 8), id);
    });
  } else {
    for (const Var& v : var_) fn(KeyOf(v), v.id);
  }
}

}  // namespace quiver::index

#endif  // QUIVER_INDEX_INDEX_BUILD_H_
