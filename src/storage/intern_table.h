// InternTable: the names of one kind (labels, edge types or property keys)
// and their dense ids.
//
// A published table is immutable. The writer clones the table the first time
// a commit group adds a name (O(names), rare: names are few and stable) and
// then adds to its private clone for the rest of the group; the clone is
// published with the group's version and the old table retired.
//
// Out of memory, Intern and Clone throw std::bad_alloc and leave the table
// as it was (each name is built before anything records it, and the map
// grows aside: base/safe_hash.h), so a rolled-back group can delete its
// clone whatever it was doing.
//
// Thread safety: Find/Name/size on a published table from any thread;
// Intern only on a private clone, on the writer thread.
#ifndef QUIVER_STORAGE_INTERN_TABLE_H_
#define QUIVER_STORAGE_INTERN_TABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/safe_hash.h"
#include "base/strings.h"
#include "storage/retire_list.h"

namespace quiver::storage {

class InternTable {
 public:
  explicit InternTable(std::uint64_t birth) : birth_(birth) {}

  std::optional<std::uint32_t> Find(std::string_view name) const;
  // Requires id < size().
  std::string_view Name(std::uint32_t id) const { return *names_[id]; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(names_.size()); }
  std::uint64_t birth() const { return birth_; }

  // The id of `name`, adding it if new. Requires birth() == the current epoch.
  std::uint32_t Intern(std::string_view name);

  // A private copy for epoch `birth`; the caller owns it.
  InternTable* Clone(std::uint64_t birth) const;

  // Retire-list deleter.
  static void Delete(void* table, base::MemoryAccount*) { delete static_cast<InternTable*>(table); }

 private:
  // Makes room for one more name, so that adding it cannot throw.
  void ReserveOne();

  std::uint64_t birth_;
  std::vector<std::unique_ptr<const std::string>> names_;  // by id; the strings never move
  base::SafeFlatHashMap<std::string_view, std::uint32_t, base::StringHash, base::StringEq>
      ids_;  // keys view names_'s strings
};

// Returns a table the writer may add to in epoch ctx.epoch: `*table` itself
// if private, else a clone that replaces it (the original is retired).
InternTable* OwnInternTable(InternTable*& table, MutationContext& ctx);

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_INTERN_TABLE_H_
