// SafeFlatHashMap and SafeFlatHashSet: Abseil's flat hash tables, made safe
// against an allocation that throws. Every insertion either happens or
// throws std::bad_alloc leaving the table exactly as it was (the strong
// guarantee), which is what lets the writer roll a commit group back after
// running out of memory anywhere (docs/impl.md, "Rollback").
//
// Abseil's own tables give no such guarantee. raw_hash_set::resize stores
// the new capacity before it allocates the new backing array, so an
// allocation that throws while the table grows leaves the new capacity over
// the old array: the destructor, or the next lookup, reads out of bounds.
// (reserve, rehash and the copy constructor grow through the same resize.)
// And an element whose construction throws after its slot was claimed (a
// std::string key built from a string_view, a node of a node_hash_map)
// leaves a slot marked full that holds nothing.
//
// So these tables never let Abseil grow them. Each keeps `room_`, a lower
// bound of the insertions Abseil can take before it would grow (its
// growth_left, which erasures never lower and which only insertions into
// empty slots use up). An insertion of a new element with no room left
// first grows the table aside: a new table is constructed with the bucket count needed (if that
// allocation throws, the constructor throws and the old table is untouched),
// the elements are moved into it (extract and insert of node handles: no
// allocation, nothing that throws), and the two are swapped. That is the
// work Abseil's resize does, at the same points, so the amortised cost is
// the same; the success path pays one compare and one decrement per
// insertion. Reserve(n) makes room for n insertions up front the same way.
//
// Elements are only ever moved into the table, never built in it: the
// insertion functions take a key (and a mapped value's arguments) that
// construct the element without throwing, and refuse to compile otherwise.
// A caller that has a string_view builds the std::string first
// (`set.insert(std::string(view))`), so the allocation happens before the
// table is touched.
//
//   base::SafeFlatHashMap<std::uint64_t, Entry> m;
//   m.Reserve(batch_ops);                  // may throw; m is unchanged then
//   m.try_emplace(id, Entry{...});         // no allocation while room lasts
//   ++m[other_id].count;                   // likewise
//
// Lookups, iteration and erasure are Abseil's (heterogeneous where the hash
// and equality are transparent). Copying is not offered (Abseil's copy
// grows through resize); moving is.
//
// Thread safety: as Abseil's tables (const members from any thread while no
// thread mutates).
#ifndef QUIVER_BASE_SAFE_HASH_H_
#define QUIVER_BASE_SAFE_HASH_H_

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace quiver::base {

namespace safe_hash_internal {
// A map's mapped_type; a set's key_type.
template <typename Table, typename = void>
struct MappedOf {
  using type = typename Table::key_type;
};
template <typename Table>
struct MappedOf<Table, std::void_t<typename Table::mapped_type>> {
  using type = typename Table::mapped_type;
};
}  // namespace safe_hash_internal

template <typename Table>
class SafeHashTable {
 public:
  using key_type = typename Table::key_type;
  using value_type = typename Table::value_type;
  using size_type = typename Table::size_type;
  using iterator = typename Table::iterator;
  using const_iterator = typename Table::const_iterator;
  static_assert(std::is_nothrow_move_constructible_v<key_type> &&
                    std::is_nothrow_move_constructible_v<typename safe_hash_internal::MappedOf<Table>::type>,
                "elements are moved between tables when one grows");

  // (Abseil's default constructors allocate nothing but are not declared
  // noexcept; this one is, so a table can be a mapped value built in place.)
  SafeHashTable() noexcept {}
  SafeHashTable(SafeHashTable&& other) noexcept
      : table_(std::move(other.table_)), room_(std::exchange(other.room_, 0)) {}
  SafeHashTable& operator=(SafeHashTable&& other) noexcept {
    table_ = std::move(other.table_);
    room_ = std::exchange(other.room_, 0);
    return *this;
  }
  SafeHashTable(const SafeHashTable&) = delete;
  SafeHashTable& operator=(const SafeHashTable&) = delete;

  // Room for `n` more insertions that allocate nothing. Throws
  // std::bad_alloc, leaving the table unchanged.
  void Reserve(size_type n) {
    if (n > room_) GrowAside(n);
  }

  // A set: inserts `key` unless present. The element must be
  // constructible from `key` without throwing. Throws std::bad_alloc,
  // leaving the table unchanged.
  template <typename K>
  std::pair<iterator, bool> insert(K&& key) {
    static_assert(std::is_nothrow_constructible_v<value_type, K&&>,
                  "build the key before inserting it (an element built in its slot may throw)");
    if (room_ == 0) {
      if (auto it = table_.find(key); it != table_.end()) return {it, false};
      GrowAside(1);
    }
    auto r = table_.insert(std::forward<K>(key));
    room_ -= r.second;
    return r;
  }

  // A map: inserts (key, mapped_type(args...)) unless `key` is present.
  // Both must be constructible without throwing. Throws std::bad_alloc,
  // leaving the table unchanged.
  template <typename K, typename... Args>
  std::pair<iterator, bool> try_emplace(K&& key, Args&&... args) {
    static_assert(std::is_nothrow_constructible_v<key_type, K&&> &&
                      std::is_nothrow_constructible_v<typename Table::mapped_type, Args&&...>,
                  "build the key and the value before inserting them");
    if (room_ == 0) {
      if (auto it = table_.find(key); it != table_.end()) return {it, false};
      GrowAside(1);
    }
    auto r = table_.try_emplace(std::forward<K>(key), std::forward<Args>(args)...);
    room_ -= r.second;
    return r;
  }

  // A map: the value of `key`, inserted default-constructed if absent.
  // Like every insertion, moves no element when `key` is present (so
  // references into the table stay valid, as with Abseil's).
  template <typename K, typename T = Table>
  typename T::mapped_type& operator[](K&& key) {
    return try_emplace(std::forward<K>(key)).first->second;
  }

  // Empties the table. Abseil keeps a small backing array (its room is
  // whole again) and frees a large one.
  void clear() noexcept {
    table_.clear();
    room_ = Room();
  }

  // Abseil's, unchanged.
  iterator begin() { return table_.begin(); }
  iterator end() { return table_.end(); }
  const_iterator begin() const { return table_.begin(); }
  const_iterator end() const { return table_.end(); }
  size_type size() const { return table_.size(); }
  bool empty() const { return table_.empty(); }
  size_type capacity() const { return table_.capacity(); }
  template <typename K>
  iterator find(const K& key) {
    return table_.find(key);
  }
  template <typename K>
  const_iterator find(const K& key) const {
    return table_.find(key);
  }
  template <typename K>
  bool contains(const K& key) const {
    return table_.contains(key);
  }
  template <typename K>
  void prefetch(const K& key) const {
    table_.prefetch(key);
  }
  template <typename K>
  decltype(auto) at(const K& key) {
    return table_.at(key);
  }
  template <typename K>
  decltype(auto) at(const K& key) const {
    return table_.at(key);
  }
  // Erasing never makes Abseil grow, and leaves room_ a lower bound.
  template <typename K>
  size_type erase(const K& key) {
    return table_.erase(key);
  }
  void erase(iterator it) { table_.erase(it); }
  void erase(const_iterator it) { table_.erase(it); }

 private:
  // Insertions a table of `capacity` slots with no erased slot takes
  // before it grows: Abseil's CapacityToGrowth (capacity - capacity / 8),
  // rounded down a little further so it is a lower bound on any width of
  // its probing groups.
  static size_type Growth(size_type capacity) { return capacity - (capacity + 7) / 8; }
  // room_ right after Abseil reset the backing array (construction, clear).
  size_type Room() const {
    const size_type growth = Growth(table_.capacity());
    return growth - std::min(table_.size(), growth);
  }

  // Replaces the table with one that takes `more` insertions (at least
  // doubling, as Abseil grows), moving the elements over; erased slots are
  // dropped on the way. Throws std::bad_alloc before changing anything.
  void GrowAside(size_type more) {
    const size_type need = std::max(table_.size() + more, 2 * table_.size());
    // Capacity c (2^k - 1) >= need + need / 7 + 2 gives Growth(c) >= need.
    Table bigger(need + need / 7 + 2);  // allocates here, or throws leaving nothing behind
    if constexpr (std::is_nothrow_copy_constructible_v<value_type>) {
      for (const value_type& v : table_) bigger.insert(v);  // ids, pointers: copied
    } else {
      for (auto it = table_.begin(); it != table_.end();) bigger.insert(table_.extract(it++));
    }
    table_.swap(bigger);
    room_ = Growth(table_.capacity()) - table_.size();
  }

  Table table_;
  size_type room_ = 0;  // insertions Abseil takes without growing (a lower bound)
};

template <typename K, typename V, typename Hash = typename absl::flat_hash_map<K, V>::hasher,
          typename Eq = typename absl::flat_hash_map<K, V>::key_equal>
using SafeFlatHashMap = SafeHashTable<absl::flat_hash_map<K, V, Hash, Eq>>;

template <typename K, typename Hash = typename absl::flat_hash_set<K>::hasher,
          typename Eq = typename absl::flat_hash_set<K>::key_equal>
using SafeFlatHashSet = SafeHashTable<absl::flat_hash_set<K, Hash, Eq>>;

}  // namespace quiver::base

#endif  // QUIVER_BASE_SAFE_HASH_H_
