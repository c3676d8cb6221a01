#include "import/id_map.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <new>
#include <vector>

#include "base/prefetch.h"

namespace quiver::import {

bool ParseCanonicalInt(std::string_view text, std::int64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  const bool negative = text[0] == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || (digits[0] == '0' && (digits.size() > 1 || negative))) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

void ExternalId::SetText(std::string_view text) {
  std::int64_t n = 0;
  if (ParseCanonicalInt(text, &n)) {
    SetNumber(n);
  } else {
    numeric = false;
    key.assign(text);
  }
}

std::pair<std::uint32_t, bool> IdMap::Insert(const ExternalId& id, std::uint32_t entry) {
  if (!id.numeric) {
    if (auto it = text_.find(id.key); it != text_.end()) return {it->second, false};
    text_.try_emplace(std::string(id.key), entry);
    ++count_;
    return {entry, true};
  }
  const std::int64_t n = id.number;
  if (direct_ && array_.size() == 0) {
    // Virtual room for every id the hint allows; pages are touched (and
    // take memory) only where ids fall. Without the room (no address
    // space): the hash table.
    try {
      array_ = base::MappedArray<std::uint32_t>(kDirectSlack + kDenseFactor * std::min(hint_, kMaxHint));
    } catch (const std::bad_alloc&) {
      direct_ = false;
    }
  }
  if (direct_ && (n < 0 || static_cast<std::uint64_t>(n) >= DirectBound())) LeaveArray();
  if (direct_) {
    const std::uint64_t at = static_cast<std::uint64_t>(n);
    if (array_[at] != 0) return {array_[at] - 1, false};
    array_[at] = entry + 1;
  } else {
    if (auto it = numbers_.find(n); it != numbers_.end()) return {it->second, false};
    numbers_.try_emplace(n, entry);
  }
  min_ = numbers_count_ == 0 ? n : std::min(min_, n);
  max_ = numbers_count_ == 0 ? n : std::max(max_, n);
  ++numbers_count_;
  ++count_;
  return {entry, true};
}

void IdMap::SetSizeHint(std::uint64_t numbers) {
  hint_ = numbers;
  if (direct_ && numbers_count_ > 0 && static_cast<std::uint64_t>(max_) >= DirectBound()) LeaveArray();
}

void IdMap::LeaveArray() {
  numbers_.Reserve(numbers_count_);  // may throw: nothing moved yet
  for (std::size_t i = 0; i < Used(); ++i) {
    if (array_[i] != 0) numbers_.try_emplace(base_ + static_cast<std::int64_t>(i), array_[i] - 1);
  }
  array_ = {};
  base_ = 0;
  direct_ = false;
  left_early_ = !frozen_;
}

std::uint32_t IdMap::FindText(std::string_view text) const {
  ExternalId id;
  id.SetText(text);
  return Find(id);
}

void IdMap::Freeze() {
  if (frozen_) return;
  // Every value mapped to itself.
  std::uint32_t top = 0;
  for (const auto& [t, e] : text_) top = std::max(top, e);
  for (const auto& [n, e] : numbers_) top = std::max(top, e);
  for (std::size_t i = 0; i < Used(); ++i) top = std::max(top, array_[i]);  // 1 + entry
  std::vector<std::uint32_t> identity(std::size_t{top} + 1);
  for (std::uint32_t v = 0; v <= top; ++v) identity[v] = v;
  Freeze(identity);
}

void IdMap::Freeze(std::span<const std::uint32_t> remap) {
  if (frozen_) return;
  const std::uint64_t range = static_cast<std::uint64_t>(max_) - static_cast<std::uint64_t>(min_) + 1;
  // (range 0: the whole int64 line)
  const bool dense = numbers_count_ > 0 && range != 0 && range <= kDenseFactor * numbers_count_;
  if (direct_ && !dense) {
    const bool early = left_early_;
    LeaveArray();  // all or nothing
    left_early_ = early;
  }
  // Dense numbers go to a table of exactly their range, on huge pages
  // (written whole, read at random by every edge), with the accepted
  // bitmap beside it. Both are allocated before anything changes.
  base::MappedArray<std::uint32_t> table;
  base::MappedArray<std::uint64_t> accepted;
  if (dense) {
    table = base::MappedArray<std::uint32_t>(range, base::EngineMemoryOnHugePages());
    accepted = base::MappedArray<std::uint64_t>((range + 63) / 64, base::EngineMemoryOnHugePages());
  }
  // From here on nothing allocates.
  for (auto& [t, e] : text_) e = remap[e];
  if (dense) {
    auto put = [&](std::uint64_t at, std::uint32_t value) {
      table[at] = value + 1;
      if (value < kRejected) accepted[at >> 6] |= std::uint64_t{1} << (at & 63);
    };
    if (direct_) {
      // The remap is read at random: a few slots ahead are loaded early.
      constexpr std::size_t kAhead = 16;
      const std::uint64_t from = static_cast<std::uint64_t>(min_) - static_cast<std::uint64_t>(base_);
      for (std::uint64_t i = 0; i < range; ++i) {
        const std::uint64_t ahead = from + i + kAhead;
        if (ahead < Used() && array_[ahead] != 0) base::Prefetch(&remap[array_[ahead] - 1]);
        const std::uint32_t slot = array_[from + i];
        if (slot != 0) put(i, remap[slot - 1]);
      }
    } else {
      for (const auto& [n, e] : numbers_)
        put(static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(min_), remap[e]);
      numbers_ = decltype(numbers_)();
    }
    array_ = std::move(table);
    accepted_ = std::move(accepted);
    base_ = min_;
    direct_ = true;
  } else {
    for (auto& [n, e] : numbers_) e = remap[e];
  }
  frozen_ = true;
}

}  // namespace quiver::import
