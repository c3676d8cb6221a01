// IdMap: one id space's external ids -> the import's id-map entries.
//
// An external id is compared by its text, with int ids in their canonical
// decimal form (so "007" in an int column is 7). The map keeps the ids that
// are canonical decimal int64s (every id of an int column, and string ids
// such as "42") as numbers, and the rest as strings: the same equality, and
// no string hashed or formatted for the common all-numeric case. Once every
// vertex is in, Freeze() moves the numbers to a direct array when they are
// dense enough (their range at most kDenseFactor times their count), so an
// edge endpoint costs one array load instead of a hash probe.
//
// Example:
//   IdMap m;
//   m.Insert(ExternalId::Number(7), 0);
//   m.Freeze();
//   m.Find(ExternalId::Text("7"));  // 0: "7" is canonical
//   m.Find(ExternalId::Text("07")); // IdMap::kNone
#ifndef QUIVER_IMPORT_ID_MAP_H_
#define QUIVER_IMPORT_ID_MAP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
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
  // Numbers go to an array if their range is at most this times their count.
  static constexpr std::uint64_t kDenseFactor = 4;

  // Adds `id` -> `entry`, unless the id is there: then returns the entry it
  // has and false. Not after Freeze().
  std::pair<std::uint32_t, bool> Insert(const ExternalId& id, std::uint32_t entry);
  std::uint32_t Find(const ExternalId& id) const {
    if (id.numeric) return FindNumber(id.number);
    auto it = text_.find(id.key);
    return it == text_.end() ? kNone : it->second;
  }
  // Find of a numeric id.
  std::uint32_t FindNumber(std::int64_t n) const {
    if (dense_) {
      const std::uint64_t at = static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_);
      return at < array_.size() ? array_[at] : kNone;
    }
    auto it = numbers_.find(n);
    return it == numbers_.end() ? kNone : it->second;
  }
  // Starts loading what FindNumber(n) will read.
  void PrefetchNumber(std::int64_t n) const {
    if (dense_) {
      const std::uint64_t at = static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_);
      if (at < array_.size()) __builtin_prefetch(&array_[at]);
    } else {
      numbers_.prefetch(n);
    }
  }
  // The same for an id given as text (CheckExistingIds).
  std::uint32_t FindText(std::string_view text) const;
  // No more Insert: builds the direct array if the numbers are dense, and
  // replaces every value v by value(v) (a rejected entry's by a mark, say).
  template <typename F>
  void Freeze(F value) {
    for (auto& [t, e] : text_) e = value(e);
    for (auto& [n, e] : numbers_) e = value(e);
    Freeze();
  }
  void Freeze();
  bool dense() const { return dense_; }
  std::size_t size() const { return count_; }

  // Calls f(text, entry) for every id (text a std::string), in no
  // particular order. Slow for numbers (each is formatted): for rare paths.
  template <typename F>
  void ForEach(F f) const {
    for (const auto& [t, e] : text_) f(t, e);
    for (const auto& [n, e] : numbers_) f(base::StrCat(n), e);
    for (std::size_t i = 0; i < array_.size(); ++i) {
      if (array_[i] != kNone) f(base::StrCat(base_ + static_cast<std::int64_t>(i)), array_[i]);
    }
  }

 private:
  absl::flat_hash_map<std::string, std::uint32_t, base::StringHash, base::StringEq> text_;
  absl::flat_hash_map<std::int64_t, std::uint32_t> numbers_;
  std::vector<std::uint32_t> array_;  // entry of number base_ + i, kNone if none
  std::int64_t base_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  std::size_t count_ = 0;
  bool dense_ = false;
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_ID_MAP_H_
