// TreeVersions: the writer's side of versions for tests of copy-on-write
// structures (index trees): an epoch per commit group, the group's private
// blocks, and the retire list of every published version kept until the
// end, so every old root stays readable.
#ifndef QUIVER_TESTS_TREE_VERSIONS_H_
#define QUIVER_TESTS_TREE_VERSIONS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "storage/retire_list.h"

namespace quiver::test_util {

class TreeVersions {
 public:
  explicit TreeVersions(bool track_blocks = true) : track_blocks_(track_blocks) {}
  ~TreeVersions() { FreeRetired(); }
  TreeVersions(const TreeVersions&) = delete;
  TreeVersions& operator=(const TreeVersions&) = delete;

  storage::MutationContext ctx() {
    return {epoch_, &account_, &retired_, track_blocks_ ? &blocks_ : nullptr};
  }
  // Publication: the group's blocks now belong to the version.
  void Publish() {
    blocks_.Clear();
    lists_.push_back(std::move(retired_));
    retired_ = storage::RetireList();
    ++epoch_;
  }
  // A failed group: frees its private blocks and forgets its retirements;
  // with `new_epoch`, moves on to a new epoch as GraphImpl does per group.
  void Rollback(bool new_epoch = false) {
    blocks_.FreeAll(&account_);
    retired_.Forget();
    if (new_epoch) ++epoch_;
  }
  // Frees every retire list, the open group's too (the end of all versions).
  void FreeRetired() {
    for (storage::RetireList& l : lists_) l.FreeAll(&account_);
    lists_.clear();
    retired_.FreeAll(&account_);
  }
  base::MemoryAccount& account() { return account_; }
  std::uint64_t epoch() const { return epoch_; }
  void set_epoch(std::uint64_t e) { epoch_ = e; }

 private:
  bool track_blocks_;
  std::uint64_t epoch_ = 1;
  base::MemoryAccount account_;
  storage::GroupBlocks blocks_;
  storage::RetireList retired_;
  std::vector<storage::RetireList> lists_;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_TREE_VERSIONS_H_
