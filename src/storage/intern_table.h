// InternTable: the names of one kind (labels, edge types or property keys)
// and their dense ids.
//
// A published table is immutable. The writer clones the table the first time
// a commit group adds a name and then adds to its private clone for the rest
// of the group; the clone is published with the group's version and the old
// table retired.
//
// The names are held in runs of consecutive ids, each with its own map from
// name to id. A table's newest run is its own; the older runs are sealed and
// shared, by reference count, with the tables cloned from it. A clone seals
// the table's own run (the table is published, so it will not change again)
// and starts an empty one: it copies run pointers, not names. To keep the
// runs few, a clone merges the newest sealed runs while the older of two is
// at most twice the newer (a binary counter: O(log names) runs, each name
// copied O(log names) times in all). An application that adds one new name
// per commit group so pays O(log names) per group, not O(names) (it was a
// full copy until stop 48: 40,000 such groups took 19 s).
//
// Out of memory, Intern and Clone throw std::bad_alloc and leave the table
// as it was (each name is built before anything records it, and the maps
// grow aside: base/safe_hash.h), so a rolled-back group can delete its
// clone whatever it was doing.
//
// Thread safety: Find/Name/size on a published table from any thread;
// Intern only on a private clone, on the writer thread. A sealed run is
// never written; its count is atomic (std::shared_ptr), so a table may be
// freed on any thread.
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
  explicit InternTable(std::uint64_t birth);
  // A copy would share its own run with the original, which both may then
  // write: tables are cloned (Clone), never copied.
  InternTable(const InternTable&) = delete;
  InternTable& operator=(const InternTable&) = delete;

  std::optional<std::uint32_t> Find(std::string_view name) const;
  // Requires id < size().
  std::string_view Name(std::uint32_t id) const;
  std::uint32_t size() const { return own_->first + static_cast<std::uint32_t>(own_->names.size()); }
  std::uint64_t birth() const { return birth_; }

  // The id of `name`, adding it if new. Requires birth() == the current epoch.
  std::uint32_t Intern(std::string_view name);

  // A private copy for epoch `birth`; the caller owns it.
  InternTable* Clone(std::uint64_t birth) const;

  // The runs the names are held in, sealed ones included (tests).
  std::size_t runs() const { return sealed_.size() + 1; }

  // Retire-list deleter.
  static void Delete(void* table, base::MemoryAccount*) { delete static_cast<InternTable*>(table); }

 private:
  // Names [first, first + names.size()).
  struct Run {
    std::uint32_t first = 0;
    std::vector<std::unique_ptr<const std::string>> names;  // by id - first; the strings never move
    base::SafeFlatHashMap<std::string_view, std::uint32_t, base::StringHash, base::StringEq>
        ids;  // keys view `names`'s strings

    std::optional<std::uint32_t> Find(std::string_view name) const;
    // Appends `name` (not in the run), with id first + names.size().
    void Add(std::string_view name);
  };

  const Run& RunOf(std::uint32_t id) const;

  std::uint64_t birth_;
  std::vector<std::shared_ptr<const Run>> sealed_;  // by first id; each over twice the next
  std::shared_ptr<Run> own_;                        // the newest ids; written only while private
};

// Returns a table the writer may add to in epoch ctx.epoch: `*table` itself
// if private, else a clone that replaces it (the original is retired).
InternTable* OwnInternTable(InternTable*& table, MutationContext& ctx);

}  // namespace quiver::storage

#endif  // QUIVER_STORAGE_INTERN_TABLE_H_
