#include "storage/intern_table.h"

namespace quiver::storage {

std::optional<std::uint32_t> InternTable::Find(std::string_view name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::uint32_t InternTable::Intern(std::string_view name) {
  auto [it, inserted] = ids_.try_emplace(std::string(name), size());
  if (inserted) names_.push_back(&it->first);
  return it->second;
}

InternTable* InternTable::Clone(std::uint64_t birth) const {
  auto* copy = new InternTable(birth);
  copy->ids_.reserve(ids_.size() + 1);
  copy->names_.resize(names_.size());
  for (const auto& [name, id] : ids_) {
    auto [it, inserted] = copy->ids_.try_emplace(name, id);
    copy->names_[id] = &it->first;
  }
  return copy;
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
