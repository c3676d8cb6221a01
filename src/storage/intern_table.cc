#include "storage/intern_table.h"

#include <algorithm>
#include <utility>

#include "base/reserve.h"

namespace quiver::storage {

std::optional<std::uint32_t> InternTable::Run::Find(std::string_view name) const {
  auto it = ids.find(name);
  if (it == ids.end()) return std::nullopt;
  return it->second;
}

void InternTable::Run::Add(std::string_view name) {
  // Everything that allocates first; then two steps that cannot throw.
  auto owned = std::make_unique<const std::string>(name);
  base::ReserveAmortized(names, std::max<std::size_t>(4, names.size() + 1));
  ids.Reserve(1);
  const auto id = static_cast<std::uint32_t>(first + names.size());
  names.push_back(std::move(owned));
  ids.try_emplace(std::string_view(*names.back()), id);
}

InternTable::InternTable(std::uint64_t birth) : birth_(birth), own_(std::make_shared<Run>()) {}

std::optional<std::uint32_t> InternTable::Find(std::string_view name) const {
  // Oldest first: the oldest run holds more than half the names, and the
  // names an application uses most arrived first (review: newest first, a
  // hit on an old name cost one lookup per run, ~3x at 4 runs).
  for (const auto& run : sealed_)
    if (auto id = run->Find(name)) return id;
  if (own_->names.empty()) return std::nullopt;
  return own_->Find(name);
}

const InternTable::Run& InternTable::RunOf(std::uint32_t id) const {
  if (id >= own_->first) return *own_;
  if (id - sealed_[0]->first < sealed_[0]->names.size()) return *sealed_[0];  // the largest
  // The last sealed run whose first id is at or below `id`.
  auto it =
      std::upper_bound(sealed_.begin(), sealed_.end(), id,
                       [](std::uint32_t x, const std::shared_ptr<const Run>& r) { return x < r->first; });
  return **(it - 1);
}

std::string_view InternTable::Name(std::uint32_t id) const {
  const Run& r = RunOf(id);
  return *r.names[id - r.first];
}

std::uint32_t InternTable::Intern(std::string_view name) {
  if (auto id = Find(name)) return *id;
  const std::uint32_t id = size();
  own_->Add(name);
  return id;
}

InternTable* InternTable::Clone(std::uint64_t birth) const {
  auto copy = std::make_unique<InternTable>(birth);
  copy->sealed_.reserve(sealed_.size() + 1);
  copy->sealed_ = sealed_;
  if (!own_->names.empty()) copy->sealed_.push_back(own_);  // published: never written again
  // Merge the newest two while the older is at most twice the newer.
  auto& runs = copy->sealed_;
  while (runs.size() >= 2 && runs[runs.size() - 2]->names.size() <= 2 * runs.back()->names.size()) {
    const Run& older = *runs[runs.size() - 2];
    const Run& newer = *runs.back();
    auto merged = std::make_shared<Run>();
    merged->first = older.first;
    merged->names.reserve(older.names.size() + newer.names.size());
    merged->ids.Reserve(older.names.size() + newer.names.size());
    for (const Run* r : {&older, &newer})
      for (const auto& name : r->names) merged->Add(*name);
    runs.pop_back();
    runs.back() = std::move(merged);
  }
  copy->own_->first = size();
  return copy.release();
}

InternTable* OwnInternTable(InternTable*& table, MutationContext& ctx) {
  if (table->birth() == ctx.epoch) return table;
  InternTable* copy = table->Clone(ctx.epoch);
  try {
    ctx.retired->Add(table, &InternTable::Delete);
  } catch (...) {
    delete copy;
    throw;
  }
  table = copy;
  return copy;
}

}  // namespace quiver::storage
