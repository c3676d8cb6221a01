// CowArray: an array of values by id (a label's set root, a key's count)
// that a copy shares page by page, so copying it costs O(size / 256) and a
// write copies only the page it lands in.
//
// A catalog is copied at the first change of every commit group
// (catalog.h). With whole vectors, one vertex added to a graph of 200,000
// labels copied 200,000 set roots (~11 MB); with pages, it copies 782 page
// pointers and then one page (review finding).
//
// Which pages may be written is decided as for every other copy-on-write
// block: by birth epoch. A page records the epoch of the array that made it
// (`birth`, the owning catalog's); a page born in the writer's epoch was made
// by the private copy being built and is reachable from nothing published,
// so it is written in place; any other page is copied first. Pages are freed
// by reference count when the last array holding them goes, on whichever
// thread deletes it; the count decides only when to free, never whether a
// page may be written, so no read of it needs to be ordered against another
// thread's release.
//
// Thread safety: const methods from any thread on an array no thread
// writes; Mutable only on the array's owner (the writer, on a private
// catalog).
#ifndef QUIVER_INDEX_COW_ARRAY_H_
#define QUIVER_INDEX_COW_ARRAY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/reserve.h"

namespace quiver::index {

template <typename T>
class CowArray {
 public:
  static constexpr std::size_t kPageItems = 256;

  // Ids [0, size()) have a value (value-initialised until written).
  std::size_t size() const { return size_; }

  // The value of id `i`, or null past the end.
  const T* Find(std::size_t i) const {
    return i < size_ ? &pages_[i / kPageItems]->items[i % kPageItems] : nullptr;
  }

  // The writable value of id `i` for an array born in epoch `birth`: grows
  // the array to cover `i`, and copies the page holding `i` unless it was
  // born in `birth`. Throws std::bad_alloc; the values are then unchanged
  // (pages made before the failure hold only initial values).
  T& Mutable(std::size_t i, std::uint64_t birth) {
    const std::size_t page = i / kPageItems;
    if (page >= pages_.size()) {
      base::ReserveAmortized(pages_, page + 1);
      while (pages_.size() <= page) pages_.push_back(std::make_shared<Page>(birth));
    }
    std::shared_ptr<Page>& p = pages_[page];
    if (p->birth != birth) {
      auto copy = std::make_shared<Page>(*p);
      copy->birth = birth;
      p = std::move(copy);
    }
    if (i >= size_) size_ = i + 1;
    return p->items[i % kPageItems];
  }

  // Calls fn(T&) on every value (Catalog::Destroy, for the graph's last
  // catalog: what the values name is freed once, through it).
  template <typename Fn>
  void ForEachOwned(Fn fn) {
    for (std::size_t i = 0; i < size_; ++i) fn(pages_[i / kPageItems]->items[i % kPageItems]);
  }

 private:
  struct Page {
    explicit Page(std::uint64_t b) : birth(b) {}
    std::uint64_t birth;
    T items[kPageItems]{};
  };

  std::vector<std::shared_ptr<Page>> pages_;
  std::size_t size_ = 0;
};

}  // namespace quiver::index

#endif  // QUIVER_INDEX_COW_ARRAY_H_
