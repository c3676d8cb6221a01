#include "import/id_map.h"

#include <charconv>

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
  auto [it, inserted] = numbers_.try_emplace(id.number, entry);
  if (inserted) {
    min_ = numbers_.size() == 1 ? id.number : std::min(min_, id.number);
    max_ = numbers_.size() == 1 ? id.number : std::max(max_, id.number);
    ++count_;
  }
  return {it->second, inserted};
}

std::uint32_t IdMap::FindText(std::string_view text) const {
  ExternalId id;
  id.SetText(text);
  return Find(id);
}

void IdMap::Freeze() {
  if (dense_ || numbers_.empty()) return;
  const std::uint64_t range = static_cast<std::uint64_t>(max_) - static_cast<std::uint64_t>(min_) + 1;
  if (range == 0 || range > kDenseFactor * numbers_.size()) return;  // range 0: the whole int64 line
  array_.assign(range, kNone);
  base_ = min_;
  for (const auto& [n, e] : numbers_)
    array_[static_cast<std::uint64_t>(n) - static_cast<std::uint64_t>(base_)] = e;
  numbers_ = {};
  dense_ = true;
}

}  // namespace quiver::import
