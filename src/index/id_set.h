// IdSet: a persistent (copy-on-write, structurally shared) set of element
// ids, the structure behind the label sets (vertices by label) and the type
// sets (edges by type).
//
// Two forms, by size:
//   small    up to kSmallMax ids: one block of sorted 64-bit ids (8 bytes
//            per id; a rare label or type costs one small block, not a
//            directory);
//   chunked  past kSmallMax: the id space cut into chunks of kChunkIds
//            consecutive ids, each chunk that holds ids one block, either
//              array   its ids' low kChunkBits bits as sorted u16, at most
//                      kArrayMax of them (2 bytes per id), or
//              bitmap  one bit per id of the chunk, kChunkIds / 8 = 2 KiB
//                      (1/8 byte per id when the chunk is full).
//            An array that would pass kArrayMax becomes a bitmap; a bitmap
//            whose count falls below kArrayBackAt becomes an array again
//            (the gap keeps one id added and removed in turn from
//            converting each time). The chunks hang in a sparse
//            RadixTable of IdChunk slots indexed by chunk number
//            (storage/radix_table.h), which keeps each chunk's count and
//            birth epoch beside its pointer.
// A small set that would pass kSmallMax becomes chunked; a chunked set that
// falls to kSmallBackAt ids becomes small again (the gap keeps one id added
// and removed in turn from converting each time). Ids are dense table positions, so the label of nearly
// every vertex (the type of nearly every edge) fills bitmaps: about 0.13
// bytes per id where the B+tree of ids it replaced took 6.
//
// Writes follow the tables' rules (retire_list.h, DESIGN.md invariant 1):
// the writer edits in place only a block (small, or chunk) born in the
// current epoch; any other block it changes is copied (a sorted array to the
// size it needs, with room to grow when the copy is the group's own) and the
// original retired through ctx.Retire; the directory path is copied by
// RadixTable. A published root is never written.
//
// Thread safety: the const functions may run on any number of threads
// against a published root; Insert, Erase, Builder and Destroy belong to
// the writer (or to a thread building a version nobody reads yet).
#ifndef QUIVER_INDEX_ID_SET_H_
#define QUIVER_INDEX_ID_SET_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/memory.h"
#include "storage/radix_table.h"
#include "storage/retire_list.h"

namespace quiver::index {

// One chunk's slot in the directory. All zero: the chunk holds no id.
struct IdChunk {
  void* data = nullptr;        // the array or the bitmap; null: empty
  std::uint64_t birth = 0;     // the epoch `data` was born in
  std::uint32_t count = 0;     // ids in the chunk
  std::uint32_t capacity = 0;  // array: u16 entries `data` has room for; 0: a bitmap
};
static_assert(sizeof(IdChunk) == 24);

// The root of one set, held by value in the version (the catalog's
// vectors). At most one of `small` and `dir.node` is set; neither for an
// empty set.
struct IdSetRoot {
  storage::TableRoot dir;            // chunked: RadixTable<IdChunk>, sparse, by id >> kChunkBits
  std::uint64_t count = 0;           // ids in the set
  void* small = nullptr;             // small: `count` sorted std::uint64_t ids
  std::uint64_t small_birth = 0;     // the epoch `small` was born in
  std::uint32_t small_capacity = 0;  // ids `small` has room for
};

class IdSet {
 public:
  static constexpr unsigned kChunkBits = 14;
  static constexpr std::uint64_t kChunkIds = std::uint64_t{1} << kChunkBits;
  static constexpr std::size_t kBitmapBytes = kChunkIds / 8;
  static constexpr std::uint32_t kArrayMax = kBitmapBytes / 2;  // an array never outgrows a bitmap
  static constexpr std::uint32_t kArrayBackAt = kArrayMax / 2;
  // A small set's most ids: a 4 KiB block, what one chunk's copy costs.
  static constexpr std::uint32_t kSmallMax = 512;
  static constexpr std::uint32_t kSmallBackAt = kSmallMax / 4;

  // Adds `id`; false if it was there already (then nothing is copied).
  // Throws std::bad_alloc, leaving `root` unchanged or changed only in
  // private blocks (the group rolls back).
  static bool Insert(IdSetRoot& root, std::uint64_t id, storage::MutationContext& ctx);
  // Removes `id`; false if it was not there (then nothing is copied).
  // Throws like Insert.
  static bool Erase(IdSetRoot& root, std::uint64_t id, storage::MutationContext& ctx);

  static bool Contains(const IdSetRoot& root, std::uint64_t id);
  // Writes the set's ids >= `from`, ascending, to `out`, at most `max` of
  // them; returns how many (fewer than `max` only at the set's end). Empty
  // stretches of the id space cost one skipped directory link each, not a
  // step per chunk.
  static std::size_t Fill(const IdSetRoot& root, std::uint64_t from, std::uint64_t* out, std::size_t max);

  // Frees every block now: only when no version can reach them (the last
  // version, or a set that was never published).
  static void Destroy(IdSetRoot& root, base::MemoryAccount* account);
  // Allocator bytes of the set's chunks and directory.
  static std::uint64_t MemoryBytes(const IdSetRoot& root);

  // Builds a set from ids added in strictly increasing order, each chunk
  // written once, in its final form (a set of at most kSmallMax ids: one
  // small block): the checkpoint loader uses it. Blocks come from
  // ctx.Allocate and are born in ctx.epoch. A Builder destroyed before
  // Finish frees what it built.
  class Builder {
   public:
    explicit Builder(storage::MutationContext& ctx) : ctx_(&ctx) {}
    ~Builder();
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;

    // Requires id above the previous one. Throws std::bad_alloc (then ids
    // added before may be lost; the Builder stays destructible).
    void Add(std::uint64_t id) {
      if (words_ == nullptr) {
        if (pending_.size() < kSmallMax) {
          pending_.push_back(id);
          return;
        }
        StartChunks();
      }
      AddToChunk(id);
    }
    IdSetRoot Finish();

   private:
    void AddToChunk(std::uint64_t id) {
      const std::uint64_t chunk = id >> kChunkBits;
      if (chunk != chunk_) {
        if (open_count_ > 0) Close();
        chunk_ = chunk;
      }
      const std::uint64_t bit = id & (kChunkIds - 1);
      const auto w = static_cast<std::uint32_t>(bit >> 6);
      words_[w] |= std::uint64_t{1} << (bit & 63);
      if (open_count_++ == 0) low_word_ = w;
      high_word_ = w;
    }
    // More than kSmallMax ids: the set is chunked; the pending ids go first.
    void StartChunks();
    // Writes the open chunk into the directory and clears it.
    void Close();

    storage::MutationContext* ctx_;
    IdSetRoot root_;
    std::vector<std::uint64_t> pending_;  // the first kSmallMax ids
    // The open chunk: a bitmap (scratch of the build, kBitmapBytes; null
    // until the set is chunked), its number, ids and the words they touch.
    std::unique_ptr<std::uint64_t[]> words_;
    std::uint64_t chunk_ = ~std::uint64_t{0};
    std::uint32_t open_count_ = 0;
    std::uint32_t low_word_ = 0, high_word_ = 0;
  };
};

}  // namespace quiver::index

#endif  // QUIVER_INDEX_ID_SET_H_
