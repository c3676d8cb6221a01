#include "checkpoint/index_entries.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/packed.h"
#include "base/strings.h"
#include "base/value_text.h"
#include "checkpoint/checkpoint_format.h"
#include "index/index_keys.h"
#include "index/key_codec.h"

namespace quiver::checkpoint {
namespace {

// Not `Bad`: checkpoint_reader.cc has one, and a unity build may compile
// both files as one.
Status BadEntries(std::string_view what) {
  return CorruptionError(base::StrCat("checkpoint: index entries: ", what));
}

bool IsUnique(const index::IndexDef& def) {
  return def.kind == IndexKind::kUnique || def.kind == IndexKind::kUniqueEndpoints;
}

// -1, 0, 1 as (ka, ia) is below, equal to or above (kb, ib).
int Compare(std::string_view ka, std::uint64_t ia, std::string_view kb, std::uint64_t ib) {
  const int c = ka.compare(kb);
  if (c != 0) return c < 0 ? -1 : 1;
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

// Whether (kb, ib) may follow (ka, ia) in an index of `def`.
bool Follows(const index::IndexDef& def, std::string_view ka, std::uint64_t ia, std::string_view kb,
             std::uint64_t ib) {
  if (IsUnique(def) && ka == kb) return false;
  return Compare(ka, ia, kb, ib) < 0;
}

void PutU48(base::ByteWriter& w, std::uint64_t id) {
  unsigned char b[6];
  base::Store48(b, id);
  w.PutBytes(b, 6);
}

}  // namespace

namespace {
const int kSeedFallbackAnchor = 0;
}  // namespace

std::uint64_t EntriesDigest::DrawSeed() {
  try {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  } catch (...) {  // no entropy source: the clock and an address still differ per process
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
           reinterpret_cast<std::uintptr_t>(&kSeedFallbackAnchor);
  }
}

Status EncodeIndexEntries(const index::Catalog& catalog,
                          const std::function<Status(std::span<const std::byte>)>& emit) {
  const auto& indexes = catalog.indexes();
  std::uint64_t first = 0;
  std::vector<std::byte> payload;
  std::vector<unsigned char> keys, ids;  // fixed width: the block's two arrays
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    const index::PropertyIndex& p = indexes[i];
    if (!StoresEntries(p)) continue;
    const bool fixed = p.root.key_width == 8;
    index::IndexTree::Cursor c(p.root);
    c.Seek(index::Bound{});
    do {  // at least one block per stored index, maybe empty
      std::uint64_t count = 0;
      std::vector<std::byte> body;
      base::ByteWriter bw(&body);
      keys.clear();
      ids.clear();
      for (; c.Valid() && count < kIndexEntriesPerBlock && body.size() + keys.size() < kTargetBlockBytes;
           c.Next(), ++count) {
        const std::string_view key = c.key();
        if (fixed) {
          keys.insert(keys.end(), key.begin(), key.end());
          const std::size_t at = ids.size();
          ids.resize(at + 6);
          base::Store48(ids.data() + at, c.id());
        } else {
          bw.PutString(key);
          PutU48(bw, c.id());
        }
      }
      payload.clear();
      base::ByteWriter w(&payload);
      w.PutVarint(first);
      w.PutVarint(count);
      w.PutVarint(i);
      if (fixed) {
        w.PutBytes(keys.data(), keys.size());
        w.PutBytes(ids.data(), ids.size());
      } else {
        w.PutBytes(body.data(), body.size());
      }
      first += count;
      QUIVER_RETURN_IF_ERROR(emit(payload));
    } while (c.Valid());
  }
  return Status::Ok();
}

Status DecodeIndexEntries(base::ByteReader& r, std::uint64_t count, const index::Catalog& catalog,
                          std::uint64_t vertex_limit, std::uint64_t edge_limit, storage::MutationContext& ctx,
                          std::unique_ptr<index::IndexTree::LeafRun>* run, DecodedEntries* out) {
  std::uint64_t position;
  if (!r.GetVarint(&position)) return BadEntries("truncated");
  out->index = position;
  out->index_read = true;
  const auto& indexes = catalog.indexes();
  if (position >= indexes.size() || indexes[position].state != IndexState::kReady)
    return BadEntries(base::StrCat("index ", position, " is not a ready index of the definitions block"));
  const index::PropertyIndex& p = indexes[position];
  const index::IndexDef& def = *p.def;
  const std::uint64_t limit = def.element == ElementKind::kVertex ? vertex_limit : edge_limit;
  *run = std::make_unique<index::IndexTree::LeafRun>(p.root, ctx);
  if (count == 0) return Status::Ok();
  auto bad_order = [&](std::uint64_t at) {
    return BadEntries(base::StrCat("entry ", at, " of a block of index ", base::Quoted(def.name),
                                   IsUnique(def) ? " repeats a key or " : " ",
                                   "is not above the one before it"));
  };
  auto bad_id = [&](std::uint64_t id) {
    return BadEntries(base::StrCat("index ", base::Quoted(def.name), " lists ",
                                   def.element == ElementKind::kVertex ? "vertex " : "edge ", id,
                                   ", past the checkpoint's id limit ", limit));
  };
  if (p.root.key_width == 8) {
    std::span<const std::byte> keys, ids;
    if (count > r.remaining() / 14 || !r.GetSpan(count * 8, &keys) || !r.GetSpan(count * 6, &ids))
      return BadEntries("truncated");
    const auto* k = reinterpret_cast<const unsigned char*>(keys.data());
    const auto* d = reinterpret_cast<const unsigned char*>(ids.data());
    const bool unique = IsUnique(def);
    std::uint64_t prev_key = 0, prev_id = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint64_t key;
      std::memcpy(&key, k + i * 8, 8);
      key = __builtin_bswap64(key);  // memcmp order
      const std::uint64_t id = base::Load48(d + i * 6);
      if (id >= limit) return bad_id(id);
      if (i > 0 && (key < prev_key || (key == prev_key && (unique || id <= prev_id)))) return bad_order(i);
      prev_key = key;
      prev_id = id;
      out->digest.Add(key, id);
    }
    (*run)->AddFixed(k, d, count);
    out->first_key.assign(reinterpret_cast<const char*>(k), 8);
    out->last_key.assign(reinterpret_cast<const char*>(k + (count - 1) * 8), 8);
    out->first_id = base::Load48(d);
    out->last_id = prev_id;
    return Status::Ok();
  }
  if (p.root.key_width >= 0)
    return BadEntries(base::StrCat("index ", base::Quoted(def.name), " has no stored form"));
  std::string_view prev_key;
  std::uint64_t prev_id = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string_view key;
    std::span<const std::byte> id_bytes;
    if (!r.GetString(&key) || !r.GetSpan(6, &id_bytes)) return BadEntries("truncated");
    if (key.size() > index::kMaxKeyBytes)
      return BadEntries(base::StrCat("a key of index ", base::Quoted(def.name), " is ", key.size(),
                                     " bytes; the limit is ", index::kMaxKeyBytes));
    const std::uint64_t id = base::Load48(reinterpret_cast<const unsigned char*>(id_bytes.data()));
    if (id >= limit) return bad_id(id);
    if (i > 0 && !Follows(def, prev_key, prev_id, key, id)) return bad_order(i);
    if (i == 0) {
      out->first_key.assign(key);
      out->first_id = id;
    }
    (*run)->Add(key, id);
    out->digest.Add(key, id);
    prev_key = key;
    prev_id = id;
  }
  out->last_key.assign(prev_key);
  out->last_id = prev_id;
  return Status::Ok();
}

void DigestElement(const index::IndexDef& def, std::uint64_t id, const storage::PropBlock* props,
                   std::uint64_t source, std::uint64_t target, std::string* scratch, EntriesDigest* digest) {
  if (def.kind == IndexKind::kUniqueEndpoints) {
    index::EndpointKey(source, target, scratch);
    digest->Add(std::string_view(*scratch), id);
    return;
  }
  switch (index::ElementKey(def, props, scratch)) {
    case index::KeyStatus::kIndexed: digest->Add(std::string_view(*scratch), id); break;
    case index::KeyStatus::kNotIndexed: break;
    default: digest->unindexable = true; break;
  }
}

bool EntriesContinue(const index::IndexDef& def, const DecodedEntries& before, const DecodedEntries& after) {
  return Follows(def, before.last_key, before.last_id, after.first_key, after.first_id);
}

}  // namespace quiver::checkpoint
