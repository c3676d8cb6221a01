#include "storage/intern_table.h"

#include <algorithm>
#include <utility>

#include "base/reserve.h"

namespace quiver::storage {

std::optional<std::uint32_t> InternTable::Find(std::string_view name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void InternTable::ReserveOne() {
  base::ReserveAmortized(names_, std::max<std::size_t>(4, names_.size() + 1));
  ids_.Reserve(1);
}

std::uint32_t InternTable::Intern(std::string_view name) {
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  // Everything that allocates first; then two steps that cannot throw.
  auto owned = std::make_unique<const std::string>(name);
  ReserveOne();
  const std::uint32_t id = size();
  names_.push_back(std::move(owned));
  ids_.try_emplace(std::string_view(*names_.back()), id);
  return id;
}

InternTable* InternTable::Clone(std::uint64_t birth) const {
  auto copy = std::make_unique<InternTable>(birth);
  // Room for every name and the one the group is about to add.
  copy->names_.reserve(names_.size() + 1);
  copy->ids_.Reserve(names_.size() + 1);
  for (const auto& name : names_) {
    auto owned = std::make_unique<const std::string>(*name);
    const std::uint32_t id = copy->size();
    copy->names_.push_back(std::move(owned));
    copy->ids_.try_emplace(std::string_view(*copy->names_.back()), id);
  }
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
