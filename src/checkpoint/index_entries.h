// The checkpoint's index entries blocks (kind 8, format version 5 on): the
// contents of the version's ready indexes, sorted, so that a load copies
// them into leaves (on every worker, a block each) instead of collecting
// and sorting every entry again (docs/checkpoint_format.md).
//
//   payload := first_id:varint count:varint index:varint Entries
//   first_id: the position of the block's first entry in the concatenation
//             of every stored index's entries, in definition order (so the
//             blocks of kind 8 continue each other from 0 like any kind's)
//   index:    the definition's position in the index definitions block
//   Entries (key width w from the definition, index/key_codec.h):
//     w = 8:  key:u8[8]{count} id:u48{count}   all keys, then all ids
//     else:   (key:Str id:u48){count}
//
// Keys are the encoded key bytes the index tree orders by memcmp
// (index/key_codec.h); ids are little-endian 48-bit. Entries ascend
// strictly by (key, id), within a block and across the blocks of one
// index, whose blocks follow each other. An index that is stored has at
// least one block (an empty one: count 0); a ready index without blocks is
// rebuilt from the elements, as a format 4 file's are.
#ifndef QUIVER_CHECKPOINT_INDEX_ENTRIES_H_
#define QUIVER_CHECKPOINT_INDEX_ENTRIES_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/coding.h"
#include "index/catalog.h"
#include "index/index_tree.h"
#include "quiver/status.h"
#include "storage/elements.h"

namespace quiver::checkpoint {

// Whether the writer stores index `p`'s entries (ready, built).
inline bool StoresEntries(const index::PropertyIndex& p) { return p.state == IndexState::kReady && p.built; }

// Calls emit(payload) for each index entries block of the stored indexes of
// `catalog`, in file order, each block at most kIndexEntriesPerBlock
// entries and closed once past kTargetBlockBytes. Stops at emit's first
// failure. Throws std::bad_alloc.
Status EncodeIndexEntries(const index::Catalog& catalog,
                          const std::function<Status(std::span<const std::byte>)>& emit);

// An order-free digest of a multiset of (key, id) entries: their count and
// the sum of a 64-bit hash of each, so that the entries a checkpoint stores
// and those its elements give, met in different orders on different
// threads, can be compared without sorting either. A fixed-width key is
// hashed as the integer its 8 bytes read big-endian (FixedKeyBits), any
// other as its bytes; one index uses one of the two.
struct EntriesDigest {
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  // An element holds a value the index cannot take (another type than it
  // declares, or a key too long): no stored entries can match.
  bool unindexable = false;

  // The entry's hash: the key mixed with the process's seed (SplitMix64's
  // finalizer, a bijection), the id added, mixed again. Nothing linear
  // survives the first mix, and the seed is drawn at random once per
  // process, so no edit of a file can be computed to keep its digest.
  // A variable key comes in through KeyBits, which is seeded from its
  // first byte: an unseeded hash (std::hash is one) would let a second key
  // with the same hash be computed, and the seed added after it changes
  // nothing for the two.
  void Add(std::uint64_t key_bits, std::uint64_t id) {
    ++count;
    std::uint64_t z = Mix(key_bits ^ Seed()) + id;
    z = (z ^ (z >> 32)) * 0xd6e8feb86659fd93ULL;
    sum += z ^ (z >> 32);
  }
  void Add(std::string_view key, std::uint64_t id) { Add(KeyBits(key), id); }
  void Merge(const EntriesDigest& o) {
    count += o.count;
    sum += o.sum;
    unindexable = unindexable || o.unindexable;
  }
  bool operator==(const EntriesDigest& o) const {
    return count == o.count && sum == o.sum && unindexable == o.unindexable;
  }

 private:
  static std::uint64_t Mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // A variable key's 64 bits: its length, then its 8-byte words (the last
  // padded with zeros), each folded into a state that starts at the seed
  // and is mixed, with the seed added, after every word.
  static std::uint64_t KeyBits(std::string_view key) {
    const std::uint64_t seed = Seed();
    std::uint64_t z = Mix(seed ^ key.size());
    std::size_t i = 0;
    for (; i + 8 <= key.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, key.data() + i, 8);
      z = Mix((z ^ w) + seed);
    }
    if (i < key.size()) {
      std::uint64_t w = 0;
      std::memcpy(&w, key.data() + i, key.size() - i);
      z = Mix((z ^ w) + seed);
    }
    return z;
  }
  static std::uint64_t Seed() {
    static const std::uint64_t seed = DrawSeed();
    return seed;
  }
  static std::uint64_t DrawSeed();
};

// One decoded block: its index, the leaves of its entries, its first and
// last entry (for the checks across blocks) and the digest of its entries.
struct DecodedEntries {
  std::uint64_t index = 0;
  bool index_read = false;  // `index` was read (a block that failed may not have got that far)
  std::string first_key, last_key;
  std::uint64_t first_id = 0, last_id = 0;
  EntriesDigest digest;
};

// Adds the entry that element `id` (of an index's label or type) gives
// index `def`, an index of variable-width keys, to `*digest`: its key from
// `props` (or, for an edge-endpoint constraint, from `source` and
// `target`), none if it holds no key, and `unindexable` if it holds one the
// index cannot take. (An index of one int64 or double key is digested as
// the loader decodes the value.) `scratch` holds the key. Throws
// std::bad_alloc.
void DigestElement(const index::IndexDef& def, std::uint64_t id, const storage::PropBlock* props,
                   std::uint64_t source, std::uint64_t target, std::string* scratch, EntriesDigest* digest);

// Decodes one block (`r` after first_id and count; `count` entries): reads
// `index`, which must name a ready index of `catalog`, and makes its entries
// into the leaves of a new *run of that index's shape (nodes from ctx).
// Corruption for an unknown or building index, entries out of order, a
// repeated key in a unique index, an id at or past its kind's limit, or a
// key of the wrong width or too long. Throws std::bad_alloc.
Status DecodeIndexEntries(base::ByteReader& r, std::uint64_t count, const index::Catalog& catalog,
                          std::uint64_t vertex_limit, std::uint64_t edge_limit, storage::MutationContext& ctx,
                          std::unique_ptr<index::IndexTree::LeafRun>* run, DecodedEntries* out);

// Whether two consecutive blocks of one index keep its order (and, for a
// unique index, its keys distinct) across their boundary.
bool EntriesContinue(const index::IndexDef& def, const DecodedEntries& before, const DecodedEntries& after);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_INDEX_ENTRIES_H_
