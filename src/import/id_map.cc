#include "import/id_map.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <new>
#include <vector>

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
    auto [it, inserted] = text_.try_emplace(id.key, entry);
    count_ += inserted;
    return {it->second, inserted};
  }
  const std::int64_t n = id.number;
  if (direct_ && array_.size() == 0) {
    // Virtual room for every id the hint allows; pages are touched (and
    // take memory) only where ids fall. Without the room (no address
    // space, or an allocation failure): the hash table.
    try {
      array_ = base::LookupTable<std::uint32_t>(kDirectSlack + kDenseFactor * std::min(hint_, kMaxHint));
    } catch (const std::bad_alloc&) {
      direct_ = false;
    }
  }
  if (direct_ && (n < 0 || static_cast<std::uint64_t>(n) >= array_.size())) LeaveArray();
  if (direct_) {
    const std::uint64_t at = static_cast<std::uint64_t>(n);
    if (array_[at] != 0) return {array_[at] - 1, false};
    array_[at] = entry + 1;
  } else {
    auto [it, inserted] = numbers_.try_emplace(n, entry);
    if (!inserted) return {it->second, false};
  }
  min_ = numbers_count_ == 0 ? n : std::min(min_, n);
  max_ = numbers_count_ == 0 ? n : std::max(max_, n);
  ++numbers_count_;
  ++count_;
  return {entry, true};
}

void IdMap::LeaveArray() {
  numbers_.reserve(numbers_count_);
  for (std::size_t i = 0; i < Used(); ++i) {
    if (array_[i] != 0) numbers_.try_emplace(base_ + static_cast<std::int64_t>(i), array_[i] - 1);
  }
  array_ = {};
  base_ = 0;
  direct_ = false;
}

std::uint32_t IdMap::FindText(std::string_view text) const {
  ExternalId id;
  id.SetText(text);
  return Find(id);
}

void IdMap::Freeze() {
  if (frozen_) return;
  // Every value mapped to itself: the array's values are below count_ + 1.
  std::vector<std::uint32_t> identity;
  std::uint32_t top = 0;
  for (const auto& [t, e] : text_) top = std::max(top, e);
  for (const auto& [n, e] : numbers_) top = std::max(top, e);
  for (std::size_t i = 0; i < Used(); ++i) top = std::max(top, array_[i]);  // 1 + entry
  identity.resize(std::size_t{top} + 1);
  for (std::uint32_t v = 0; v <= top; ++v) identity[v] = v;
  Freeze(identity);
}

void IdMap::Freeze(std::span<const std::uint32_t> remap) {
  if (frozen_) return;
  frozen_ = true;
  const std::uint64_t range = static_cast<std::uint64_t>(max_) - static_cast<std::uint64_t>(min_) + 1;
  // (range 0: the whole int64 line)
  const bool dense = numbers_count_ > 0 && range != 0 && range <= kDenseFactor * numbers_count_;
  if (direct_ && !dense) LeaveArray();
  for (auto& [t, e] : text_) e = remap[e];
  for (auto& [n, e] : numbers_) e = remap[e];
  if (direct_) {
    // In place; the remap is read at random, so a few slots ahead are
    // loaded early.
    constexpr std::size_t kAhead = 16;
    const std::size_t size = Used();
    for (std::size_t i = 0; i < size; ++i) {
      if (i + kAhead < size && array_[i + kAhead] != 0) base::Prefetch(&remap[array_[i + kAhead] - 1]);
      if (array_[i] != 0) array_[i] = remap[array_[i] - 1] + 1;
    }
  } else if (dense) {
    base::LookupTable<std::uint32_t> array(range);
    base_ = min_;
    for (const auto& [n, e] : numbers_)
      array[static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_)] = e + 1;
    array_ = std::move(array);
    numbers_ = {};
    direct_ = true;
  }
  if (direct_) {
    accepted_ = base::LookupTable<std::uint64_t>((array_.size() + 63) / 64);
    for (std::size_t i = 0; i < Used(); ++i) {
      if (array_[i] != 0 && array_[i] - 1 < kRejected) accepted_[i >> 6] |= std::uint64_t{1} << (i & 63);
    }
  }
}

}  // namespace quiver::import
