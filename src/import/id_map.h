// IdMap: one id space's external ids -> the import's id-map entries.
//
// An external id is compared by its text, with int ids in their canonical
// decimal form (so "007" in an int column is 7). The map keeps the ids that
// are canonical decimal int64s (every id of an int column, and string ids
// such as "42") as numbers, and the rest as strings: the same equality, and
// no string hashed or formatted for the common all-numeric case. Once every
// vertex is in, Freeze() moves the numbers to a direct array when they are
// dense enough (their range at most kDenseFactor times their count), so an
// edge endpoint costs one array load instead of a hash probe. The array
// sits on huge pages where the kernel gives them (base::MappedArray): at
// 10M ids it is 40 MB, read at random by every edge. Beside it a bitmap
// says which numbers map to an accepted entry (HoldsNumber): pass 1 of an
// import only asks that, and at 1.25 MB for 10M ids it stays in cache.
//
// Example:
//   IdMap m;
//   m.Insert(ExternalId::Number(7), 0);
//   m.Freeze();
//   m.Find(ExternalId::Text("7"));  // 0: "7" is canonical
//   m.Find(ExternalId::Text("07")); // IdMap::kNone
#ifndef QUIVER_IMPORT_ID_MAP_H_
#define QUIVER_IMPORT_ID_MAP_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "base/prefetch.h"
#include "base/safe_hash.h"
#include "base/strings.h"

namespace quiver::import {

struct CsvField;

// Whether `text` is the canonical decimal form of an int64 (what
// base::StrCat writes: no sign but '-', no leading zero, not "-0").
bool ParseCanonicalInt(std::string_view text, std::int64_t* out);

// An external id as the id map keys it: its id space, and its number (a
// canonical int) or else its text.
struct ExternalId {
  std::string_view group;
  bool numeric = false;
  std::int64_t number = 0;
  std::string key;                  // the text, if not numeric
  const CsvField* field = nullptr;  // where it is, for errors

  // Sets the id from `text`, numeric if it is a canonical int.
  void SetText(std::string_view text);
  void SetNumber(std::int64_t n) {
    numeric = true;
    number = n;
    key.clear();
  }
  // The canonical text (for messages).
  std::string Text() const { return numeric ? base::StrCat(number) : key; }
};

class IdMap {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // The value a Freeze caller gives an id whose record was rejected: Find
  // returns it, HoldsNumber says false.
  static constexpr std::uint32_t kRejected = kNone - 1;
  // Numbers go to an array if their range is at most this times their count.
  static constexpr std::uint64_t kDenseFactor = 4;
  // While inserting, a number n >= 0 goes straight to a direct array if
  // n < kDirectSlack + kDenseFactor * the size hint: ids numbered from
  // about 0 (EVLP files, most exports), in any order, never touch a hash
  // table. The first number outside (or a hint that no longer covers the
  // largest) moves them all to the hash table for good. The array is
  // mapped whole at the first hint and takes memory (4 KiB pages) where
  // ids fall, so at most 4 bytes per slot under the bound: with a hint
  // close to the real count, about 16 bytes per id at worst. Freeze moves
  // dense ids to a table on huge pages.
  static constexpr std::uint64_t kDirectSlack = std::uint64_t{1} << 20;

  // The count of numeric ids expected (an estimate, refined as the input
  // is read: a smaller hint later can only move the ids to the hash
  // table). Throws std::bad_alloc (the map is then as it was).
  void SetSizeHint(std::uint64_t numbers);

  // Adds `id` -> `entry` (entry < kRejected), unless the id is there: then
  // returns the entry it has and false. Not after Freeze(). Throws
  // std::bad_alloc (the map is then as it was).
  std::pair<std::uint32_t, bool> Insert(const ExternalId& id, std::uint32_t entry);
  std::uint32_t Find(const ExternalId& id) const {
    if (id.numeric) return FindNumber(id.number);
    auto it = text_.find(id.key);
    return it == text_.end() ? kNone : it->second;
  }
  // Find of a numeric id.
  std::uint32_t FindNumber(std::int64_t n) const {
    if (direct_) {
      const std::uint64_t at = static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_);
      return at < array_.size() ? array_[at] - 1 : kNone;  // 0 (none) wraps to kNone
    }
    auto it = numbers_.find(n);
    return it == numbers_.end() ? kNone : it->second;
  }
  // Whether FindNumber(n) < kRejected: an id whose record was accepted.
  // After Freeze only.
  bool HoldsNumber(std::int64_t n) const {
    if (direct_) {
      const std::uint64_t at = static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_);
      return at < array_.size() && ((accepted_[at >> 6] >> (at & 63)) & 1) != 0;
    }
    return FindNumber(n) < kRejected;
  }
  // Starts loading what FindNumber(n) will read.
  void PrefetchNumber(std::int64_t n) const {
    if (direct_) {
      const std::uint64_t at = static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_);
      if (at < array_.size()) base::Prefetch(&array_[at]);
    } else {
      numbers_.prefetch(n);
    }
  }
  // The same for HoldsNumber(n).
  void PrefetchHolds(std::int64_t n) const {
    if (direct_) {
      const std::uint64_t at = static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_);
      if (at < array_.size()) base::Prefetch(&accepted_[at >> 6]);
    } else {
      numbers_.prefetch(n);
    }
  }
  // The same for an id given as text (CheckExistingIds).
  std::uint32_t FindText(std::string_view text) const;
  // No more Insert: replaces every value v by remap[v] (kRejected for a
  // rejected record's id, say; every value must index `remap`, and every
  // remap[v] be below kNone), and keeps the numbers in a direct array if
  // they are dense, else in the hash table. Throws std::bad_alloc, and the
  // map is then as it was (not frozen).
  void Freeze(std::span<const std::uint32_t> remap);
  // Freeze with every value kept.
  void Freeze();
  bool dense() const { return frozen_ && direct_; }
  // Whether the numbers are in a direct array, and whether they left it
  // before Freeze (tests).
  bool in_array() const { return direct_ && numbers_count_ > 0; }
  bool left_array_while_inserting() const { return left_early_; }
  std::size_t size() const { return count_; }

  // Calls f(text, entry) for every id (text a std::string), in no
  // particular order. Slow for numbers (each is formatted): for rare paths.
  template <typename F>
  void ForEach(F f) const {
    for (const auto& [t, e] : text_) f(t, e);
    for (const auto& [n, e] : numbers_) f(base::StrCat(n), e);
    for (std::size_t i = 0; i < Used(); ++i) {
      if (array_[i] != 0) f(base::StrCat(base_ + static_cast<std::int64_t>(i)), array_[i] - 1);
    }
  }

 private:
  // Moves the direct array's ids to the hash table (all or, on
  // std::bad_alloc, none).
  void LeaveArray();
  // Numbers below this may go to the direct array while inserting.
  std::uint64_t DirectBound() const {
    return std::min<std::uint64_t>(array_.size(), kDirectSlack + kDenseFactor * std::min(hint_, kMaxHint));
  }
  // The direct array's slots that may hold an id.
  std::size_t Used() const {
    return numbers_count_ == 0 || !direct_ ? 0 : static_cast<std::size_t>(max_ - base_) + 1;
  }

  // Safe tables: the installed Abseil's resize is not exception-safe
  // (base/safe_hash.h), and an import may run out of memory here.
  base::SafeFlatHashMap<std::string, std::uint32_t, base::StringHash, base::StringEq> text_;
  base::SafeFlatHashMap<std::int64_t, std::uint32_t> numbers_;
  // While direct_: 1 + the entry of number base_ + i, 0 if none (base_ is
  // 0 while inserting).
  base::MappedArray<std::uint32_t> array_;
  base::MappedArray<std::uint64_t> accepted_;  // after Freeze: bit i says array_[i] - 1 < kRejected
  std::int64_t base_ = 0;
  std::int64_t min_ = 0;  // of the numbers
  std::int64_t max_ = 0;
  std::size_t numbers_count_ = 0;
  std::uint64_t hint_ = 0;
  // At most 4 GiB of address space for the direct array.
  static constexpr std::uint64_t kMaxHint = std::uint64_t{1} << 28;
  std::size_t count_ = 0;
  bool direct_ = true;  // the numbers are in array_
  bool frozen_ = false;
  bool left_early_ = false;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_ID_MAP_H_
