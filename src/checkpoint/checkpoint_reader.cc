// The checkpoint loader. It runs in phases; the ones that touch every
// element run on `threads` workers:
//
//   1. index      one pass over the block headers: framing, kind order, and
//                 each vertex and edge block's id range (first_id, count),
//                 which must tile [0, limit) exactly. Nothing is allocated
//                 for elements before this holds, so a damaged count cannot
//                 make the loader reserve more than the file can describe.
//   2. names      labels, edge types and keys, in order, on the caller.
//   3. vertices   the vertex table is reserved whole (its leaves made by
//                 the workers, a share each); workers take blocks, check
//                 the CRC, decode and write their slots.
//   4. edges      the same for the edge table; endpoints are range-checked
//                 here and checked to be live in phase 5.
//   5. adjacency  per direction: workers route each live edge, in id order,
//                 to the bucket of 2^14 vertices its endpoint belongs to;
//                 then each bucket (640 KiB of vertex slots, so they
//                 stay in cache) is built by one worker: count each vertex's
//                 entries, allocate its array at its exact size, fill it.
//                 A vertex with edges of several types takes the general
//                 AppendEntry path.
//   6. end        the end block's totals.
//   7. derived    what a checkpoint never stores: the label and type sets
//                 (one pass over each table; two tasks in the pool of the
//                 in direction's buckets, phase 5, so they fill the
//                 threads' idle ends) and the contents of every ready index (collect,
//                 sort and build, index/index_build.h). Property key counts
//                 are counted while phases 3 and 4 decode properties.
//
// Every slot a phase reserved is written (decoded, or zeroed if its block
// failed or was skipped after another failure), so a failed load leaves a
// graph that DestroyGraph frees completely. When several blocks are bad,
// the one with the lowest index is reported, as a sequential load would.
//
// The rule that keeps this true under std::bad_alloc from anywhere (an
// engine block, or a standard allocation: the pool's std::function, a
// worker's vector, a block's read buffer): a phase sets a table's limit
// only once every slot below it is sure to be written on every way out of
// the phase, exceptions included. ForEachTask gives each task index exactly
// one of task(i) and skip(i) even when the pool cannot start or a task
// throws (a guard skips the indices no worker took), ForEachBlock's task
// zeroes whatever its block did not write whatever threw, and skip and
// zero never allocate. Before the limit is set (ReserveTable), a failure
// leaves the limit 0 and DestroyGraph frees the nodes without reading a
// slot.
#include "checkpoint/checkpoint_reader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/memory.h"
#include "base/mutex.h"
#include "base/parallel.h"
#include "base/strings.h"
#include "base/value_text.h"
#include "checkpoint/index_block.h"
#include "checkpoint/index_entries.h"
#include "index/index_build.h"
#include "index/key_codec.h"
#include "storage/adjacency.h"
#include "storage/packed_adjacency.h"
#include "storage/prop_block.h"
#include "wal/value_codec.h"

namespace quiver::checkpoint {
namespace {

using storage::GraphRoots;

Status Bad(std::string_view what) { return CorruptionError(base::StrCat("checkpoint: ", what)); }

struct BlockRef {
  BlockKind kind;
  std::size_t offset;  // of the block header
  std::uint32_t length;
  std::uint32_t crc;
  std::uint64_t first = 0;  // element blocks: the ids they hold
  std::uint64_t count = 0;
  std::size_t prefix = 0;  // bytes of the (first, count) prefix
};

// Where the loader's bytes come from: a file in memory, or a file read block
// by block (so the whole file is never held at once). Reads of distinct
// ranges may run on several threads at once.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  // Bytes [offset, offset + n), within size(): a view into memory, or read
  // into *scratch. I/O errors are returned as they are.
  virtual Result<std::span<const std::byte>> Read(std::uint64_t offset, std::size_t n,
                                                  std::vector<std::byte>* scratch) const = 0;
};

class SpanSource final : public Source {
 public:
  explicit SpanSource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  Result<std::span<const std::byte>> Read(std::uint64_t offset, std::size_t n,
                                          std::vector<std::byte>*) const override {
    return bytes_.subspan(offset, n);
  }

 private:
  std::span<const std::byte> bytes_;
};

class FileSource final : public Source {
 public:
  FileSource(const env::ReadableFile& file, std::uint64_t size) : file_(file), size_(size) {}
  std::uint64_t size() const override { return size_; }
  Result<std::span<const std::byte>> Read(std::uint64_t offset, std::size_t n,
                                          std::vector<std::byte>* scratch) const override {
    if (scratch->size() < n) scratch->resize(n);
    std::size_t done = 0;
    while (done < n) {
      QUIVER_ASSIGN_OR_RETURN(
          std::size_t got,
          file_.ReadAt(offset + done, std::span<std::byte>(scratch->data() + done, n - done)));
      if (got == 0) return IOError("checkpoint: the file became shorter while it was read");
      done += got;
    }
    return std::span<const std::byte>(scratch->data(), n);
  }

 private:
  const env::ReadableFile& file_;
  const std::uint64_t size_;
};

// Reads block `b` whole and checks its CRC, which continues `seed` (from
// format 2 on the CRC-32C of the whole header, which is the same for every
// intact header: a block of another file is caught by the trailer, not
// here); returns the payload.
Result<std::span<const std::byte>> ReadBlock(const Source& src, const BlockRef& b, std::uint32_t seed,
                                             std::vector<std::byte>* scratch) {
  QUIVER_ASSIGN_OR_RETURN(auto block, src.Read(b.offset, kBlockHeaderBytes + b.length, scratch));
  auto payload = block.subspan(kBlockHeaderBytes);
  if (BlockCrc(seed, block.data(), payload) != b.crc)
    return Bad(base::StrCat("block at offset ", b.offset, " fails its checksum"));
  return payload;
}

Status ParseHeader(std::span<const std::byte> file, Header* h) {
  // A format this build does not know (judged from the magic and the
  // version field alone) is not damage: no fallback to an older
  // checkpoint, and the file is never touched.
  QUIVER_RETURN_IF_ERROR(DecodeHeader(file, h));
  if (h->vertex_limit > kMaxElementId || h->edge_limit > kMaxElementId)
    return Bad("impossible element counts");
  return Status::Ok();
}

// A reader of the payload after its (first, count) prefix.
base::ByteReader Body(std::span<const std::byte> payload, const BlockRef& b) {
  return base::ByteReader(payload.subspan(b.prefix));
}

// Phase 1. On success the last block is the end block.
// On failure *at (if set) is the offset of the block that failed a check,
// or of the trailer. `each` (if set) is called with every block whose
// framing passed, before the next one is looked at (ScanCheckpointFile);
// its failure stops the pass.
Status IndexBlocks(const Source& src, const Header& header, std::vector<BlockRef>* blocks,
                   std::uint64_t* at = nullptr, const std::function<Status(const BlockRef&)>& each = {}) {
  // A block header and the longest (first, count) prefix: two 10-byte varints.
  constexpr std::size_t kPeek = kBlockHeaderBytes + 20;
  std::vector<std::byte> scratch;
  std::uint64_t next_id[kMaxBlockKind + 1] = {};
  // The blocks end where the trailer starts (format 2 on).
  if (src.size() < header.header_bytes + header.trailer_bytes) return Bad("missing end block");
  const std::uint64_t size = src.size() - header.trailer_bytes;
  std::uint64_t pos = header.header_bytes;
  std::uint8_t last_kind = 0;
  int last_rank = 0;
  // The trailer's CRC: the header's, continued over every block's crc field.
  std::uint32_t file_crc = header.seed;
  while (pos < size) {
    if (at != nullptr) *at = pos;
    if (size - pos < kBlockHeaderBytes) return Bad("truncated block header");
    QUIVER_ASSIGN_OR_RETURN(auto peek, src.Read(pos, std::min<std::uint64_t>(kPeek, size - pos), &scratch));
    const std::byte* h = peek.data();
    auto kind = static_cast<std::uint8_t>(h[0]);
    std::uint32_t length, crc, reserved;
    std::memcpy(&length, h + 4, 4);
    std::memcpy(&crc, h + 8, 4);
    std::memcpy(&reserved, h + 12, 4);  // outside the CRC, so it must be exactly zero
    const int rank = BlockRank(kind, header.version);
    if (rank == 0 || rank < last_rank || h[1] != std::byte{0} || h[2] != std::byte{0} ||
        h[3] != std::byte{0} || reserved != 0 || length > size - pos - kBlockHeaderBytes)
      return Bad(base::StrCat("bad block header at offset ", pos));
    BlockRef b{static_cast<BlockKind>(kind), pos, length, crc};
    if (last_kind == static_cast<std::uint8_t>(BlockKind::kEnd)) {
      QUIVER_RETURN_IF_ERROR(ReadBlock(src, b, header.seed, &scratch).status());
      return Bad("data after the end block");
    }
    if (b.kind != BlockKind::kEnd) {
      base::ByteReader r(
          peek.subspan(kBlockHeaderBytes, std::min<std::size_t>(length, kPeek - kBlockHeaderBytes)));
      // The prefix is read before the CRC is checked; whatever it says is
      // only believed once the block's CRC passes (phases 2-4), and a bad
      // prefix is reported as the checksum failure it most likely is.
      const std::size_t in_peek = r.remaining();
      if (!r.GetVarint(&b.first) || !r.GetVarint(&b.count) || b.first != next_id[kind] ||
          b.count > length - (in_peek - r.remaining())) {
        QUIVER_RETURN_IF_ERROR(ReadBlock(src, b, header.seed, &scratch).status());
        return Bad(base::StrCat("bad block header or ids out of order at offset ", pos));
      }
      next_id[kind] += b.count;
      b.prefix = in_peek - r.remaining();
    }
    blocks->push_back(b);
    file_crc = base::Crc32cExtend(file_crc, h + 8, 4);
    if (each) QUIVER_RETURN_IF_ERROR(each(b));
    last_kind = kind;
    last_rank = rank;
    pos += kBlockHeaderBytes + length;
  }
  if (at != nullptr) *at = size;
  if (last_kind != static_cast<std::uint8_t>(BlockKind::kEnd)) return Bad("missing end block");
  if (header.trailer_bytes != 0) {
    QUIVER_ASSIGN_OR_RETURN(auto trailer, src.Read(size, kTrailerBytes, &scratch));
    std::uint32_t stored;
    std::memcpy(&stored, trailer.data(), 4);
    // Every block may pass its own CRC and the file still not be the one
    // written: a block an earlier write of this same file left behind.
    if (stored != file_crc)
      return Bad("the file's CRC over its blocks does not match: a block is not this file's");
  }
  if (next_id[static_cast<int>(BlockKind::kVertices)] != header.vertex_limit ||
      next_id[static_cast<int>(BlockKind::kEdges)] != header.edge_limit)
    return Bad("element count mismatch");
  return Status::Ok();
}

// The lowest-indexed failure among concurrent tasks.
class FirstError {
 public:
  void Record(std::size_t index, Status s) {
    base::MutexLock lock(&mu_);
    if (!status_.ok() && index_ < index) return;
    index_ = index;
    status_ = std::move(s);
    failed_.store(true, std::memory_order_relaxed);
  }
  // A task threw: the others stop taking work (the exception is rethrown).
  void Fail() { failed_.store(true, std::memory_order_relaxed); }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  Status Take() {
    base::MutexLock lock(&mu_);
    return status_;
  }

 private:
  std::atomic<bool> failed_{false};
  base::Mutex mu_;
  std::size_t index_ ABSL_GUARDED_BY(mu_) = 0;
  Status status_ ABSL_GUARDED_BY(mu_);
};

// One worker's allocation context: a private account (no shared counter)
// and a private retire list, merged or freed when the phase ends.
struct Worker {
  base::MemoryAccount account;
  storage::RetireList retired;
  storage::MutationContext ctx;
  std::vector<std::byte> block;  // the block being decoded, when read from a file
  std::vector<PropertyValue> values;
  std::vector<storage::PropInput> inputs;
  // Phase 4: the property blocks of edges, applied after the phase.
  std::vector<std::pair<std::uint64_t, storage::PropBlock*>> edge_props;
  std::uint64_t live = 0;
  // Elements holding each property key (vertices, edges), merged after phase 4.
  std::vector<std::uint64_t> key_counts[2];
  // Phase 5 scratch, indexed by vertex within a bucket.
  std::vector<std::uint32_t> count;
  std::vector<std::uint32_t> type;
  std::vector<EdgeEntry*> cursor;
  std::vector<storage::VertexSlot*> leaves;
  // Phases 3 and 4: the leaves (id >> 6) of vertices [0] and edges [1]
  // whose 64 slots one block holds, all removed (Loader::ReclaimRemovedLeaves).
  std::vector<std::uint64_t> removed_leaves[2];
  // Phases 3 and 4, when the file stores index entries: the digest of the
  // entries each ready index gets from the elements this worker decoded
  // (by catalog position), and a scratch key.
  std::vector<EntriesDigest> digests;
  std::string key;

  explicit Worker(std::uint64_t epoch) : ctx{epoch, &account, &retired} {}
};

// The ready indexes of one label or edge type whose entries a load checks
// against the stored ones (Loader::WatchIndexes), by catalog position.
struct FixedWatch {  // one int64 or double key
  std::uint64_t key;
  ValueType type;
  std::uint32_t index;
};
struct Watch {
  std::vector<FixedWatch> fixed;
  std::vector<std::uint32_t> general;  // the others: composite, variable-width, edge endpoints
};

class Loader {
 public:
  Loader(const Source& src, GraphRoots& g, storage::MutationContext& ctx, unsigned threads)
      : src_(src), g_(g), ctx_(ctx), threads_(std::max(threads, 1u)) {
    for (unsigned i = 0; i < threads_; ++i) workers_.emplace_back(ctx.epoch);
  }

  ~Loader() {
    entry_runs_.clear();  // leaves not hung, freed through their workers' accounts, absorbed below
    for (Worker& w : workers_) {
      // Edge property blocks not yet handed to the table (phase 4 threw).
      for (auto [id, props] : w.edge_props) w.account.Free(props);
      w.retired.FreeAll(&w.account);
      ctx_.account->Absorb(w.account);
    }
  }

  // Time spent building the contents of the checkpoint's indexes.
  std::uint64_t index_build_microseconds() const { return index_build_microseconds_; }
  // Indexes whose contents came from stored entries.
  std::uint64_t indexes_loaded() const { return indexes_loaded_; }

  Status Run(const Header& header) {
    seed_ = header.seed;
    version_ = header.version;
    std::vector<BlockRef> blocks;
    QUIVER_RETURN_IF_ERROR(IndexBlocks(src_, header, &blocks));
    std::vector<BlockRef> vertex_blocks, edge_blocks, entry_blocks;
    for (const BlockRef& b : blocks) {
      switch (b.kind) {
        case BlockKind::kLabels: QUIVER_RETURN_IF_ERROR(Names(b, g_.labels)); break;
        case BlockKind::kEdgeTypes: QUIVER_RETURN_IF_ERROR(Names(b, g_.types)); break;
        case BlockKind::kPropertyKeys: QUIVER_RETURN_IF_ERROR(Names(b, g_.keys)); break;
        case BlockKind::kIndexDefinitions: QUIVER_RETURN_IF_ERROR(IndexDefinitions(b)); break;
        case BlockKind::kVertices: vertex_blocks.push_back(b); break;
        case BlockKind::kEdges: edge_blocks.push_back(b); break;
        case BlockKind::kIndexEntries: entry_blocks.push_back(b); break;
        case BlockKind::kEnd: break;
      }
    }
    if (!entry_blocks.empty()) WatchIndexes();
    // Decoded in phase 5's in-direction pool (Adjacency), checked and hung
    // after the end block's check of the elements (IndexEntries).
    entry_blocks_ = std::move(entry_blocks);
    entry_runs_.resize(entry_blocks_.size());
    entry_decoded_.resize(entry_blocks_.size());
    entry_own_.resize(entry_blocks_.size());
    vertex_limit_ = header.vertex_limit;
    edge_limit_ = header.edge_limit;
    QUIVER_RETURN_IF_ERROR(Vertices(vertex_blocks, header.vertex_limit));
    QUIVER_RETURN_IF_ERROR(Edges(edge_blocks, header.edge_limit));
    QUIVER_RETURN_IF_ERROR(Adjacency(/*out=*/true));
    QUIVER_RETURN_IF_ERROR(Adjacency(/*out=*/false));
    // The entries (decoded in phase 5's pool) are checked and hung before
    // the end block is: its damage is reported after theirs, in block order.
    QUIVER_RETURN_IF_ERROR(IndexEntries());
    QUIVER_RETURN_IF_ERROR(End(blocks.back(), blocks.size() - 1));
    QUIVER_RETURN_IF_ERROR(Derived());
    ReclaimRemovedLeaves();
    return Status::Ok();
  }

 private:
  Status Names(const BlockRef& b, storage::InternTable* table) {
    QUIVER_ASSIGN_OR_RETURN(auto payload, ReadBlock(src_, b, seed_, &scratch_));
    base::ByteReader r = Body(payload, b);
    const std::uint64_t first = b.first, count = b.count;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::string_view name;
      if (first + i != table->size() || !r.GetString(&name) || name.empty()) return Bad("bad name");
      if (table->Intern(name) != first + i) return Bad("duplicate name");
    }
    if (r.remaining() != 0) return Bad("trailing bytes in block");
    return Status::Ok();
  }

  Status IndexDefinitions(const BlockRef& b) {
    QUIVER_ASSIGN_OR_RETURN(auto payload, ReadBlock(src_, b, seed_, &scratch_));
    base::ByteReader r = Body(payload, b);
    QUIVER_RETURN_IF_ERROR(DecodeIndexBlock(r, b.count, version_, g_, ctx_));
    if (r.remaining() != 0) return Bad("trailing bytes in block");
    return Status::Ok();
  }

  // Phase 7.
  Status Derived() {
    index::Catalog* cat = index::OwnCatalog(g_.catalog, ctx_);
    for (Worker& w : workers_) {
      for (int kind = 0; kind < 2; ++kind) {
        const auto k = static_cast<index::ElementKind>(kind);
        for (std::size_t key = 0; key < w.key_counts[kind].size(); ++key)
          if (w.key_counts[kind][key] != 0)
            cat->AddKeyCount(k, static_cast<std::uint32_t>(key),
                             static_cast<std::int64_t>(w.key_counts[kind][key]));
        w.key_counts[kind] = {};
      }
    }
    // The label and type sets were built with the in direction's buckets.
    const auto start = std::chrono::steady_clock::now();
    std::vector<index::PropertyIndex*> ready;
    // Recovery builds the building ones after the log; those the file
    // stored (IndexEntries) are built already.
    for (index::PropertyIndex& p : cat->mutable_indexes())
      if (p.state == IndexState::kReady && !p.built) ready.push_back(&p);
    // With more than one index, each is built whole (collect, sort, tree) by
    // one worker, the workers side by side: the parts of a build that run on
    // one thread (the tree, the uniqueness check) overlap another index's
    // work instead of leaving a core idle, and a single sorted run needs no
    // merge. One index takes every thread.
    const unsigned per_index = ready.size() >= 2 ? 1 : threads_;
    Status built = ForEachTask(
        ready.size(),
        [&](Worker& w, std::size_t i) {
          Status s = index::BuildIndex(g_, *ready[i]->def, per_index, w.ctx, &ready[i]->root);
          if (!s.ok()) return Bad(base::StrCat("its data violates ", s.message()));
          ready[i]->built = true;
          return Status::Ok();
        },
        [](std::size_t) {});
    QUIVER_RETURN_IF_ERROR(built);
    index_build_microseconds_ += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count());
    for (Worker& w : workers_) ctx_.account->Absorb(w.account);
    return Status::Ok();
  }

  // Before phase 3, when the file stores index entries: which ready indexes
  // each label and type has, and a zero digest per index on every worker.
  // An index of one fixed-width key is digested as SomeProps decodes the
  // key's value (no lookup in the block); the others from the element's
  // block once it is built (DigestElement).
  void WatchIndexes() {
    const auto& indexes = g_.catalog->indexes();
    for (std::size_t i = 0; i < indexes.size(); ++i) {
      if (indexes[i].state != IndexState::kReady) continue;
      const index::IndexDef& def = *indexes[i].def;
      auto& watch = watch_[def.element == ElementKind::kVertex ? 0 : 1];
      if (def.label_id >= watch.size()) watch.resize(def.label_id + 1);
      const auto at = static_cast<std::uint32_t>(i);
      if (indexes[i].root.key_width == 8 && def.kind != IndexKind::kUniqueEndpoints) {
        watch[def.label_id].fixed.push_back(FixedWatch{def.key_ids[0], *def.type, at});
      } else {
        watch[def.label_id].general.push_back(at);
      }
    }
    for (Worker& w : workers_) w.digests.assign(indexes.size(), EntriesDigest{});
  }

  // Phases 3 and 4: adds the entries element `id` gives the label's indexes
  // of `watch.general` to the worker's digests. Throws std::bad_alloc.
  void Digest(Worker& w, const Watch& watch, std::uint64_t id, const storage::PropBlock* props,
              std::uint64_t source, std::uint64_t target) {
    const auto& indexes = g_.catalog->indexes();
    for (std::uint32_t i : watch.general)
      DigestElement(*indexes[i].def, id, props, source, target, &w.key, &w.digests[i]);
  }

  // Phase 6b: the stored entries of ready indexes (format 5 on). Each block
  // is made into leaves by a worker; then, per index, the leaves are hung
  // in block order (IndexTree::Builder::AddLeaf), once the order across
  // each pair of consecutive blocks is checked. Leaves not yet hung are
  // the runs', which free them on every way out.
  Status IndexEntries() {
    const std::vector<BlockRef>& blocks = entry_blocks_;
    if (blocks.empty()) return Status::Ok();
    const auto start = std::chrono::steady_clock::now();
    index::Catalog* cat = index::OwnCatalog(g_.catalog, ctx_);
    std::vector<std::unique_ptr<index::IndexTree::LeafRun>>& runs = entry_runs_;
    const std::vector<DecodedEntries>& decoded = entry_decoded_;
    const std::vector<Status>& own = entry_own_;
    // The blocks of one index follow each other, indexes in definition
    // order. Per index, in block order: each block's own checks, then the
    // order across it and the block before; then the digest against the
    // elements; then the leaves are hung.
    std::vector<bool> stored(cat->indexes().size(), false);
    for (std::size_t i = 0; i < blocks.size();) {
      QUIVER_RETURN_IF_ERROR(own[i]);
      const std::uint64_t position = decoded[i].index;
      if (stored[position] || (i > 0 && position < decoded[i - 1].index))
        return Bad(
            base::StrCat("index entries: the blocks of index ", position, " do not follow each other"));
      stored[position] = true;
      index::PropertyIndex& p = cat->mutable_indexes()[position];
      std::size_t end = i;                   // the blocks of this index: [i, end)
      const DecodedEntries* last = nullptr;  // the last non-empty block
      EntriesDigest in_file, data;
      for (; end < blocks.size(); ++end) {
        // A damaged block that names another index ends this one's run:
        // this index's digest (its blocks are lower) is compared first.
        if (!own[end].ok() && decoded[end].index_read && decoded[end].index != position) break;
        QUIVER_RETURN_IF_ERROR(own[end]);
        if (decoded[end].index != position) break;
        in_file.Merge(decoded[end].digest);
        if (runs[end]->count() == 0) continue;
        if (last != nullptr && !EntriesContinue(*p.def, *last, decoded[end]))
          return Bad(base::StrCat("index entries: index ", base::Quoted(p.def->name),
                                  " is out of order (or repeats a unique key) across two blocks"));
        last = &decoded[end];
      }
      // The entries must be exactly those the elements give: a file whose
      // entries and elements disagree (however its CRCs came out right) is
      // damaged, not an index to trust (the elements are the truth).
      for (const Worker& w : workers_) data.Merge(w.digests[position]);
      if (!(in_file == data))
        return Bad(base::StrCat("index entries: index ", base::Quoted(p.def->name), " stores ", in_file.count,
                                " entries that are not the ", data.count, " its elements give",
                                data.unindexable ? " (an element holds a value the index cannot take)" : ""));
      index::IndexTree::Builder builder(p.root, ctx_);
      for (; i < end; ++i) {
        for (void*& leaf : runs[i]->leaves()) {
          builder.AddLeaf(leaf);
          leaf = nullptr;
        }
      }
      p.root = builder.Finish();
      p.built = true;
      ++indexes_loaded_;
    }
    entry_runs_.clear();
    index_build_microseconds_ += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count());
    return Status::Ok();
  }

  // Inline for the common case, an element with no properties (its count,
  // one zero byte); the rest out of line.
  //
  // `watch` (null if none): the label's indexes of one fixed-width key,
  // whose entries SomeProps adds to the worker's digests for element `id`
  // as it decodes their keys' values.
  Status Props(Worker& w, base::ByteReader& r, storage::PropBlock** out, int kind,
               const Watch* watch = nullptr, std::uint64_t id = 0) {
    std::uint64_t n;
    if (!r.GetVarint(&n) || n > r.remaining()) return Bad("bad property count");
    *out = nullptr;
    if (n == 0) return Status::Ok();  // most elements
    return SomeProps(w, r, n, out, kind, watch, id);
  }

  Status SomeProps(Worker& w, base::ByteReader& r, std::uint64_t n, storage::PropBlock** out, int kind,
                   const Watch* watch, std::uint64_t id) {
    w.values.resize(n);
    w.inputs.clear();
    std::uint64_t prev_key = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t key;
      if (!r.GetVarint(&key) || key >= g_.keys->size() || (i > 0 && key <= prev_key) ||
          !wal::DecodeValue(r, &w.values[i]))
        return Bad("bad property");
      QUIVER_RETURN_IF_ERROR(
          CheckValueVersion(w.values[i], g_.keys->Name(static_cast<std::uint32_t>(key)), version_));
      prev_key = key;
      std::vector<std::uint64_t>& counts = w.key_counts[kind];
      if (key >= counts.size()) counts.resize(g_.keys->size(), 0);
      ++counts[key];
      w.inputs.push_back(storage::PropInput{static_cast<std::uint32_t>(key), storage::ViewOf(w.values[i])});
      if (watch != nullptr) {
        for (const FixedWatch& f : watch->fixed) {
          if (f.key != key) continue;
          const PropertyValue& v = w.values[i];
          const ValueType type = v.type();
          if (type == ValueType::kNull) continue;
          EntriesDigest& d = w.digests[f.index];
          if (type != f.type) {
            d.unindexable = true;
          } else if (type == ValueType::kInt64) {  // FixedKeyBits inline: the sign bit flipped
            d.Add(static_cast<std::uint64_t>(*v.as_int64()) ^ (std::uint64_t{1} << 63), id);
          } else {
            d.Add(index::FixedKeyBits(storage::ViewOf(v)), id);
          }
        }
      }
    }
    *out = storage::BuildPropBlock(w.inputs, &w.account);
    return Status::Ok();
  }

  // Runs task(worker, i) for i in [0, n) on the workers, lowest index first
  // per worker; `skip(i)` instead once any task has failed or thrown. Every
  // index gets exactly one of the two, even if this throws: the indices no
  // worker took (the pool could not start, or the workers stopped after a
  // throw) are skipped on the way out. `skip` must not throw.
  template <typename Task, typename Skip>
  Status ForEachTask(std::size_t n, Task&& task, Skip&& skip) {
    std::atomic<std::size_t> next{0};
    // Runs after every worker has returned (RunOnThreads joins them before
    // it rethrows), so nothing takes an index behind it.
    struct SkipUntaken {
      std::atomic<std::size_t>& taken;
      std::size_t count;
      Skip& skip_one;
      ~SkipUntaken() {
        for (std::size_t i = taken.exchange(count, std::memory_order_relaxed); i < count; ++i) skip_one(i);
      }
    } skip_untaken{next, n, skip};
    FirstError error;
    base::RunOnThreads(std::min<std::size_t>(threads_, std::max<std::size_t>(n, 1)), [&](unsigned wi) {
      Worker& w = workers_[wi];
      for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
        if (error.failed()) {
          skip(i);
          continue;
        }
        Status s;
        try {
          s = task(w, i);
        } catch (...) {
          error.Fail();
          throw;
        }
        if (!s.ok()) error.Record(i, std::move(s));
      }
    });
    for (Worker& w : workers_) ctx_.account->Absorb(w.account);
    return error.Take();
  }

  // Reads and checks each element block, then runs decode(worker, block,
  // reader, &done) on its elements; whatever a
  // block did not write (it failed or threw after `done` elements, or was
  // skipped after another failure) is zero(from, to)'d, so every reserved
  // slot ends up written. `zero` must not throw.
  template <typename Decode, typename Zero>
  Status ForEachBlock(const std::vector<BlockRef>& blocks, Decode&& decode, Zero&& zero) {
    return ForEachTask(
        blocks.size(),
        [&](Worker& w, std::size_t i) {
          const BlockRef& b = blocks[i];
          std::uint64_t done = 0;
          Status st;
          try {
            // The read too: a file's block goes into the worker's buffer,
            // which may grow.
            Result<std::span<const std::byte>> payload = ReadBlock(src_, b, seed_, &w.block);
            st = payload.status();
            if (st.ok()) {
              base::ByteReader r = Body(*payload, b);
              st = decode(w, b, r, &done);
              if (st.ok() && r.remaining() != 0) st = Bad("trailing bytes in block");
            }
          } catch (...) {
            // bad_alloc: the table's limit is already set, so the slots
            // not yet written must be zeroed before DestroyGraph reads them.
            zero(b.first + done, b.first + b.count);
            throw;
          }
          if (!st.ok()) zero(b.first + done, b.first + b.count);
          return st;
        },
        [&](std::size_t i) { zero(blocks[i].first, blocks[i].first + blocks[i].count); });
  }

  // Reserves a table for ids [0, limit): the inner nodes here, the leaves
  // (nearly all of its memory) on the workers, a contiguous share each, so
  // their allocation and first touch (page faults: most of the serial time
  // of phases 3 and 4 when one thread made them) are spread out. The caller
  // sets the table's limit only afterwards: if an allocation fails, the
  // limit is still 0 and DestroyGraph frees the nodes without reading a
  // slot.
  template <typename Table>
  void ReserveTable(storage::TableRoot& root, std::uint64_t limit) {
    Table::ReserveInner(root, limit, ctx_);
    const std::uint64_t leaves = Table::LeafCount(limit);
    const auto parts =
        static_cast<unsigned>(std::min<std::uint64_t>(threads_, std::max<std::uint64_t>(leaves, 1)));
    base::RunOnThreads(parts, [&](unsigned t) {
      Table::ReserveLeaves(root, limit, leaves * t / parts, leaves * (t + 1) / parts, workers_[t].ctx);
    });
    for (Worker& w : workers_) ctx_.account->Absorb(w.account);
  }

  // Phase 3.
  Status Vertices(const std::vector<BlockRef>& blocks, std::uint64_t limit) {
    auto zero = [this](std::uint64_t from, std::uint64_t to) {
      for (std::uint64_t id = from; id < to; ++id)
        *storage::VertexTable::BornSlot(g_.vertices, id) = storage::VertexSlot{};
    };
    ReserveTable<storage::VertexTable>(g_.vertices, limit);
    g_.vertex_limit = limit;  // every slot below is written (or zeroed) below
    Status s = ForEachBlock(
        blocks,
        [this](Worker& w, const BlockRef& b, base::ByteReader& r, std::uint64_t* done) {
          return VertexBlock(w, b, r, done);
        },
        zero);
    for (Worker& w : workers_) g_.live_vertices += std::exchange(w.live, 0);
    return s;
  }

  Status VertexBlock(Worker& w, const BlockRef& b, base::ByteReader& r, std::uint64_t* done) {
    const std::uint64_t first = b.first, count = b.count;
    storage::VertexSlot* out = nullptr;  // the slot of first + *done: one radix walk per leaf
    std::uint64_t removed_run = 0;       // removed ids in a row, up to this one
    for (; *done < count; ++*done) {
      const std::uint64_t id = first + *done;
      out = out == nullptr || (id & (storage::VertexTable::kLeafSize - 1)) == 0
                ? storage::VertexTable::BornSlot(g_.vertices, id)
                : out + 1;
      std::uint8_t live;
      if (!r.GetU8(&live) || live > 1) return Bad("bad vertex");
      storage::VertexSlot slot{};
      slot.label = storage::kDeadLabel;
      if (live == 1) {
        std::uint64_t label;
        if (!r.GetVarint(&label) || label >= g_.labels->size()) return Bad("bad vertex label");
        slot.label = static_cast<std::uint32_t>(label);
        const Watch* watch = slot.label < watch_[0].size() ? &watch_[0][slot.label] : nullptr;
        QUIVER_RETURN_IF_ERROR(Props(w, r, &slot.props, /*kind=*/0, watch, id));
        if (watch != nullptr && !watch->general.empty()) Digest(w, *watch, id, slot.props, 0, 0);
        ++w.live;
        removed_run = 0;
      } else {
        NoteRemovedRun(w.removed_leaves[0], id, ++removed_run);
      }
      *out = slot;
    }
    return Status::Ok();
  }

  // Phase 4.
  Status Edges(const std::vector<BlockRef>& blocks, std::uint64_t limit) {
    auto zero = [this](std::uint64_t from, std::uint64_t to) {
      for (std::uint64_t id = from; id < to; ++id) {
        storage::EdgeSlot* e = storage::EdgeTable::BornSlot(g_.edges, id);
        *e = storage::EdgeSlot{};
        e->type = storage::kDeadType;
      }
    };
    ReserveTable<storage::EdgeTable>(g_.edges, limit);
    g_.edge_limit = limit;
    Status s = ForEachBlock(
        blocks,
        [this](Worker& w, const BlockRef& b, base::ByteReader& r, std::uint64_t* done) {
          return EdgeBlock(w, b, r, done);
        },
        zero);
    // Edge properties are rare: they go into their sparse table here, in
    // one thread, whether or not the phase failed (so they are freed with
    // the graph).
    for (Worker& w : workers_) {
      g_.live_edges += std::exchange(w.live, 0);
      for (auto& [id, props] : w.edge_props) {
        // Two statements: MutableSparse may throw, and until it returns the
        // block is still this worker's (freed by ~Loader).
        storage::PropBlock** slot = storage::EdgePropTable::MutableSparse(g_.edge_props, id, ctx_);
        *slot = std::exchange(props, nullptr);
      }
      w.edge_props.clear();
      w.edge_props.shrink_to_fit();
    }
    return s;
  }

  Status EdgeBlock(Worker& w, const BlockRef& b, base::ByteReader& r, std::uint64_t* done) {
    const std::uint64_t first = b.first, count = b.count;
    storage::EdgeSlot* slot = nullptr;  // one radix walk per leaf
    std::uint64_t removed_run = 0;      // removed ids in a row, up to this one
    for (; *done < count; ++*done) {
      const std::uint64_t id = first + *done;
      slot = slot == nullptr || (id & (storage::EdgeTable::kLeafSize - 1)) == 0
                 ? storage::EdgeTable::BornSlot(g_.edges, id)
                 : slot + 1;
      std::uint8_t live;
      if (!r.GetU8(&live) || live > 1) return Bad("bad edge");
      if (live == 0) {
        *slot = storage::EdgeSlot{};
        slot->type = storage::kDeadType;
        NoteRemovedRun(w.removed_leaves[1], id, ++removed_run);
        continue;
      }
      removed_run = 0;
      std::uint64_t type, src, dst;
      if (!r.GetVarint(&type) || type >= g_.types->size() || !r.GetVarint(&src) || !r.GetVarint(&dst) ||
          src >= g_.vertex_limit || dst >= g_.vertex_limit)
        return Bad("bad edge endpoints or type");
      storage::PropBlock* props = nullptr;
      const Watch* watch = type < watch_[1].size() ? &watch_[1][type] : nullptr;
      QUIVER_RETURN_IF_ERROR(Props(w, r, &props, /*kind=*/1, watch, id));
      if (props != nullptr) {
        try {
          w.edge_props.emplace_back(id, props);
        } catch (...) {
          w.account.Free(props);
          throw;
        }
      }
      if (watch != nullptr && !watch->general.empty()) Digest(w, *watch, id, props, src, dst);
      *slot = storage::EdgeSlot{};
      slot->type = static_cast<std::uint32_t>(type);
      base::Store48(slot->source, src);
      base::Store48(slot->target, dst);
      ++w.live;
    }
    return Status::Ok();
  }

  // Phase 5.
  static constexpr int kBucketBits = 14;  // 16,384 vertices: 640 KiB of slots
  static constexpr std::uint64_t kBucketSize = std::uint64_t{1} << kBucketBits;
  static constexpr std::uint32_t kNoType = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kSeveralTypes = kNoType - 1;
  static constexpr std::uint64_t kTypeInEdge = 0xFFFF;  // type >= this: read it from the edge slot

  // One adjacency entry on its way to its vertex's bucket.
  struct Routed {
    std::uint64_t edge_and_vertex;    // edge id << 16 | vertex index within the bucket
    std::uint64_t neighbor_and_type;  // neighbour id | min(type, kTypeInEdge) << 48
  };

  // Splits the edge ids into `parts` leaf-aligned ranges; part p routes
  // its live edges into routed_[p], bucket by bucket, in id order, so
  // bucket b's entries in id order are part 0's slice of b, then part 1's...
  struct Part {
    std::uint64_t lo = 0, hi = 0;
    std::vector<std::uint64_t> start;     // per bucket, plus the end
    std::vector<std::uint64_t> in_count;  // counted with the out direction, for the in direction
    base::MappedArray<Routed> routed;     // huge pages: written in full, 16 bytes per entry
  };

  template <typename Fn>
  void ForEachLiveEdge(const Part& p, Fn&& fn) const {
    for (std::uint64_t id = p.lo; id < p.hi; id += storage::EdgeTable::kLeafSize) {
      const storage::EdgeSlot* leaf = storage::EdgeTable::Find(g_.edges, id);
      const std::uint64_t n = std::min(storage::EdgeTable::kLeafSize, p.hi - id);
      for (std::uint64_t i = 0; i < n; ++i)
        if (leaf[i].type != storage::kDeadType) fn(id + i, leaf[i]);
    }
  }

  // Phase 6b's decoding of entries block i (its own checks, its leaves),
  // a task of phase 5's in-direction pool: it reads only the catalog and
  // its block. Every block is decoded, even after another failed (only
  // damage costs that), so that IndexEntries reports the lowest damaged
  // block. Throws std::bad_alloc.
  void DecodeEntryBlock(Worker& w, std::size_t i) {
    const BlockRef& b = entry_blocks_[i];
    Result<std::span<const std::byte>> payload = ReadBlock(src_, b, seed_, &w.block);
    if (!payload.ok()) {
      entry_own_[i] = payload.status();
      return;
    }
    base::ByteReader r = Body(*payload, b);
    entry_own_[i] = DecodeIndexEntries(r, b.count, *g_.catalog, vertex_limit_, edge_limit_, w.ctx,
                                       &entry_runs_[i], &entry_decoded_[i]);
    if (entry_own_[i].ok() && r.remaining() != 0) entry_own_[i] = Bad("trailing bytes in block");
  }

  // Phase 5, one direction: route, then build the buckets.
  //
  // The in direction's task pool also builds the label and type sets (phase
  // 7), which read only labels and types, never a field the buckets write:
  // the edge-type set, the longest task, first. Built on their own, the two
  // sets took two threads of unequal length (one type: 13.3M entries
  // against 6.7M vertices at 20M elements); in the pool, the threads end
  // together. So does the decoding of the index entries blocks (format 5),
  // last: without edges, the vertex set alone would leave a thread idle.
  Status Adjacency(bool out) {
    const std::uint64_t edges = g_.edge_limit;
    const std::uint64_t buckets = edges == 0 ? 0 : (g_.vertex_limit + kBucketSize - 1) >> kBucketBits;
    const std::size_t sets = out ? 0 : 2;
    const std::size_t entries = out ? 0 : entry_blocks_.size();
    if (sets != 0) index::OwnCatalog(g_.catalog, ctx_);
    if (edges != 0) Route(out, buckets);
    return ForEachTask(
        sets + buckets + entries,
        [&](Worker& w, std::size_t i) {
          if (i >= sets + buckets) {
            DecodeEntryBlock(w, i - sets - buckets);
            return Status::Ok();
          }
          if (i >= sets) return BuildBucket(w, i - sets, out);
          index::BuildSets(g_, i == 0 ? index::ElementKind::kEdge : index::ElementKind::kVertex, w.ctx);
          return Status::Ok();
        },
        [](std::size_t) {});
  }

  // Phase 5's routing, one direction: requires edges.
  void Route(bool out, std::uint64_t buckets) {
    const std::uint64_t edges = g_.edge_limit;
    const std::uint64_t leaves = (edges + storage::EdgeTable::kLeafSize - 1) / storage::EdgeTable::kLeafSize;
    const auto parts = static_cast<unsigned>(std::min<std::uint64_t>(threads_, leaves));
    if (parts_.empty()) {
      parts_.resize(parts);
      for (unsigned p = 0; p < parts; ++p) {
        parts_[p].lo = std::min(edges, leaves * p / parts * storage::EdgeTable::kLeafSize);
        parts_[p].hi = std::min(edges, leaves * (p + 1) / parts * storage::EdgeTable::kLeafSize);
      }
    }
    base::RunOnThreads(parts, [&](unsigned pi) {
      Part& p = parts_[pi];
      // Count per bucket, then scatter: a radix partition by vertex. The
      // buffer is the same size for both directions and is reused.
      if (out) {  // one counting pass for both directions
        p.start.assign(buckets + 1, 0);
        p.in_count.assign(buckets + 1, 0);
        ForEachLiveEdge(p, [&](std::uint64_t, const storage::EdgeSlot& e) {
          ++p.start[e.src() >> kBucketBits];
          ++p.in_count[e.dst() >> kBucketBits];
        });
      } else {
        p.start = std::move(p.in_count);
      }
      std::uint64_t total = 0;
      for (std::uint64_t& s : p.start) total += std::exchange(s, total);
      if (total != 0 && p.routed.data() == nullptr)  // the in direction reuses it
        p.routed = base::MappedArray<Routed>(total, base::EngineMemoryOnHugePages());
      std::vector<std::uint64_t> cursor(p.start.begin(), p.start.end() - 1);
      ForEachLiveEdge(p, [&](std::uint64_t id, const storage::EdgeSlot& e) {
        const std::uint64_t v = out ? e.src() : e.dst();
        const std::uint64_t neighbor = out ? e.dst() : e.src();
        const std::uint64_t type = std::min<std::uint64_t>(e.type, kTypeInEdge);
        p.routed[cursor[v >> kBucketBits]++] =
            Routed{id << 16 | (v & (kBucketSize - 1)), neighbor | type << 48};
      });
    });
  }

  // Calls fn(routed) for bucket b's entries in edge id order.
  template <typename Fn>
  void ForEachRouted(std::size_t b, Fn&& fn) const {
    for (const Part& p : parts_)
      for (std::uint64_t i = p.start[b]; i < p.start[b + 1]; ++i) fn(p.routed[i]);
  }

  std::uint32_t TypeOf(const Routed& r) const {
    const std::uint64_t t = r.neighbor_and_type >> 48;
    if (t != kTypeInEdge) return static_cast<std::uint32_t>(t);
    return storage::EdgeTable::Find(g_.edges, r.edge_and_vertex >> 16)->type;
  }

  Status BuildBucket(Worker& w, std::size_t bucket, bool out) {
    const std::uint64_t base = std::uint64_t{bucket} << kBucketBits;
    const std::uint64_t n = std::min(kBucketSize, g_.vertex_limit - base);
    w.count.assign(n, 0);
    w.type.assign(n, kNoType);
    w.cursor.resize(n);
    ForEachRouted(bucket, [&](const Routed& r) {
      const std::uint64_t v = r.edge_and_vertex & (kBucketSize - 1);
      const std::uint32_t type = TypeOf(r);
      ++w.count[v];
      if (w.type[v] == kNoType) {
        w.type[v] = type;
      } else if (w.type[v] != type) {
        w.type[v] = kSeveralTypes;
      }
    });
    // The bucket's slots, leaf by leaf (a bucket is whole leaves).
    w.leaves.resize((n + storage::VertexTable::kLeafSize - 1) / storage::VertexTable::kLeafSize);
    for (std::size_t i = 0; i < w.leaves.size(); ++i)
      w.leaves[i] = storage::VertexTable::BornSlot(g_.vertices, base + i * storage::VertexTable::kLeafSize);
    auto slot = [&w](std::uint64_t v) {
      return w.leaves[v / storage::VertexTable::kLeafSize] + v % storage::VertexTable::kLeafSize;
    };
    for (std::uint64_t v = 0; v < n; ++v)
      if (w.count[v] != 0 && slot(v)->label == storage::kDeadLabel) return Bad("bad edge endpoints or type");
    // Each leaf's single-group vertices share one packed block (storage/
    // packed_adjacency.h); the rest get arrays of their exact size.
    constexpr std::uint64_t kLeaf = storage::VertexTable::kLeafSize;
    for (std::uint64_t first = 0; first < n; first += kLeaf) {
      const std::uint64_t m = std::min(kLeaf, n - first);
      const std::uint64_t packed = storage::PackLeaf(w.leaves[first / kLeaf], m, out, &w.count[first],
                                                     &w.type[first], &w.cursor[first], w.ctx);
      for (std::uint64_t i = 0; i < m; ++i)
        if ((packed >> i & 1) != 0) w.count[first + i] = 0;  // built: skipped below
    }
    for (std::uint64_t v = 0; v < n; ++v) {
      if (w.count[v] == 0) continue;
      storage::VertexSlot* s = slot(v);
      if (w.type[v] == kSeveralTypes) continue;  // AppendEntry builds it below
      storage::EdgeArray* a = storage::NewEdgeArray(w.count[v], w.ctx);
      try {
        (out ? s->out_head : s->in_head) = storage::SingleGroupHead(a, w.count[v], w.type[v], w.ctx);
      } catch (...) {
        w.ctx.FreeUnlinked(a);  // linked nowhere yet, so the load's cleanup would miss it
        throw;
      }
      (out ? s->out_degree : s->in_degree) = w.count[v];
      w.cursor[v] = a->entries();
    }
    ForEachRouted(bucket, [&](const Routed& r) {
      const std::uint64_t v = r.edge_and_vertex & (kBucketSize - 1);
      const std::uint64_t edge = r.edge_and_vertex >> 16;
      const std::uint64_t neighbor = r.neighbor_and_type & ((std::uint64_t{1} << 48) - 1);
      if (w.type[v] != kSeveralTypes) {
        storage::StoreEntry(w.cursor[v]++, edge, neighbor);
        return;
      }
      storage::VertexSlot* s = slot(v);
      storage::AppendEntry(out ? s->out_head : s->in_head, out ? s->out_degree : s->in_degree, TypeOf(r),
                           edge, neighbor, w.ctx);
    });
    // Arrays AppendEntry outgrew were born in this load and are reachable
    // from nothing: free them now rather than keep them until a sweep.
    w.retired.FreeAll(&w.account);
    return Status::Ok();
  }

  // Last: every leaf of removed slots becomes the table's shared leaf, as
  // the writer does with a leaf a batch empties (RadixTable::
  // ReclaimIfRemoved), so a graph reopened after much churn holds what is
  // live. After every phase that reads or writes slots by leaf; the
  // graph is not published yet, so what is replaced is freed at once. A
  // leaf split between two blocks is not found, and stays. Out of memory
  // (the list of what is replaced grows), it stops there: the load has
  // succeeded, every node replaced so far is freed, the rest stay.
  void ReclaimRemovedLeaves() noexcept {
    storage::RetireList gone;
    storage::MutationContext ctx{ctx_.epoch, ctx_.account, &gone};
    try {
      // A node is unlinked only once `gone` holds it (Retire throws before
      // it records, and ReclaimIfRemoved links the shared node after).
      for (Worker& w : workers_) {
        for (std::uint64_t leaf : w.removed_leaves[0])
          storage::VertexTable::ReclaimIfRemoved(g_.vertices, leaf << storage::VertexTable::kLeafBits,
                                                 g_.vertex_limit, ctx);
        for (std::uint64_t leaf : w.removed_leaves[1])
          storage::EdgeTable::ReclaimIfRemoved(g_.edges, leaf << storage::EdgeTable::kLeafBits, g_.edge_limit,
                                               ctx);
      }
    } catch (const std::bad_alloc&) {
    }
    for (Worker& w : workers_)
      for (auto& leaves : w.removed_leaves) std::vector<std::uint64_t>().swap(leaves);
    gone.FreeAll(ctx_.account);
  }

  // Records `id`'s leaf in `leaves` if `id` ends it and the `run` ids up to
  // and including it are all removed.
  static void NoteRemovedRun(std::vector<std::uint64_t>& leaves, std::uint64_t id, std::uint64_t run) {
    constexpr std::uint64_t kLeaf = storage::VertexTable::kLeafSize;
    static_assert(kLeaf == storage::EdgeTable::kLeafSize);
    if ((id & (kLeaf - 1)) == kLeaf - 1 && run >= kLeaf) leaves.push_back(id / kLeaf);
  }

  // Phase 6.
  Status End(const BlockRef& b, std::size_t blocks_before) {
    QUIVER_ASSIGN_OR_RETURN(auto payload, ReadBlock(src_, b, seed_, &scratch_));
    base::ByteReader r(payload);
    std::uint64_t live_vertices, live_edges, before;
    if (!r.GetVarint(&live_vertices) || !r.GetVarint(&live_edges) || !r.GetVarint(&before) ||
        r.remaining() != 0 || live_vertices != g_.live_vertices || live_edges != g_.live_edges ||
        before != blocks_before)
      return Bad("end block disagrees with the content");
    return Status::Ok();
  }

  const Source& src_;
  std::uint32_t seed_ = 0;     // what block CRCs continue (Header::seed)
  std::uint32_t version_ = 0;  // the file's format version (Header::version)
  GraphRoots& g_;
  storage::MutationContext& ctx_;
  const unsigned threads_;
  std::deque<Worker> workers_;      // stable addresses: each ctx points into its worker
  std::vector<Part> parts_;         // phase 5's routing buffers, shared by both directions
  std::vector<std::byte> scratch_;  // block bytes for the sequential phases
  std::uint64_t index_build_microseconds_ = 0;
  std::uint64_t indexes_loaded_ = 0;
  // [0] labels, [1] edge types: each one's ready indexes, when the file
  // stores entries (WatchIndexes); empty otherwise.
  std::vector<Watch> watch_[2];
  // Phase 6b: the entries blocks, and per block what decoding it gave (its
  // own checks, its leaves not yet hung, its first and last entries and
  // digest). Declared after workers_: a run frees its leaves through its
  // worker's account (the destructor clears them first).
  std::vector<BlockRef> entry_blocks_;
  std::vector<std::unique_ptr<index::IndexTree::LeafRun>> entry_runs_;
  std::vector<DecodedEntries> entry_decoded_;
  std::vector<Status> entry_own_;
  std::uint64_t vertex_limit_ = 0, edge_limit_ = 0;
};

Status Load(const Source& src, GraphRoots& roots, storage::MutationContext& ctx, Header* header,
            unsigned threads, LoadStats* stats) {
  std::vector<std::byte> scratch;
  QUIVER_ASSIGN_OR_RETURN(auto head,
                          src.Read(0, std::min<std::uint64_t>(src.size(), kHeaderBytes), &scratch));
  QUIVER_RETURN_IF_ERROR(ParseHeader(head, header));
  roots.sequence = header->sequence;
  Loader loader(src, roots, ctx, threads);
  Status s = loader.Run(*header);
  if (stats != nullptr) {
    stats->index_build_microseconds = loader.index_build_microseconds();
    stats->indexes_loaded = loader.indexes_loaded();
  }
  return s;
}

// The end block's checks that need no loaded graph: its totals are within
// the header's limits and it counts the blocks before it.
Status CheckEndTotals(std::span<const std::byte> end, const Header& header, std::size_t blocks_before) {
  base::ByteReader r(end);
  std::uint64_t live_vertices, live_edges, before;
  if (!r.GetVarint(&live_vertices) || !r.GetVarint(&live_edges) || !r.GetVarint(&before) ||
      r.remaining() != 0 || before != blocks_before || live_vertices > header.vertex_limit ||
      live_edges > header.edge_limit)
    return Bad("end block disagrees with the file");
  return Status::Ok();
}

}  // namespace

Status LoadCheckpoint(std::span<const std::byte> file, GraphRoots& roots, storage::MutationContext& ctx,
                      Header* header, unsigned threads, LoadStats* stats) {
  return Load(SpanSource(file), roots, ctx, header, threads, stats);
}

Status VerifyCheckpointFile(const env::ReadableFile& file, Header* header, std::uint64_t* bad_offset) {
  std::uint64_t unused = 0;
  std::uint64_t& at = bad_offset != nullptr ? *bad_offset : unused;
  at = 0;
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file.Size());
  FileSource src(file, size);
  std::vector<std::byte> scratch;
  QUIVER_ASSIGN_OR_RETURN(auto head, src.Read(0, std::min<std::uint64_t>(size, kHeaderBytes), &scratch));
  QUIVER_RETURN_IF_ERROR(ParseHeader(head, header));
  std::vector<BlockRef> blocks;
  QUIVER_RETURN_IF_ERROR(IndexBlocks(src, *header, &blocks, &at));
  for (const BlockRef& b : blocks) {
    at = b.offset;
    QUIVER_RETURN_IF_ERROR(ReadBlock(src, b, header->seed, &scratch).status());
  }
  at = blocks.back().offset;
  QUIVER_ASSIGN_OR_RETURN(auto end, ReadBlock(src, blocks.back(), header->seed, &scratch));
  QUIVER_RETURN_IF_ERROR(CheckEndTotals(end, *header, blocks.size() - 1));
  at = 0;
  return Status::Ok();
}

Status ScanCheckpointFile(const env::ReadableFile& file, CheckpointVisitor& visitor,
                          std::uint64_t* bad_offset) {
  std::uint64_t unused = 0;
  std::uint64_t& at = bad_offset != nullptr ? *bad_offset : unused;
  at = 0;
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file.Size());
  FileSource src(file, size);
  std::vector<std::byte> scratch;
  QUIVER_ASSIGN_OR_RETURN(auto head, src.Read(0, std::min<std::uint64_t>(size, kHeaderBytes), &scratch));
  Header header;
  QUIVER_RETURN_IF_ERROR(ParseHeader(head, &header));
  QUIVER_RETURN_IF_ERROR(visitor.VisitHeader(header));
  std::vector<BlockRef> blocks;
  // Each block's CRC is checked as soon as its framing is: IndexBlocks'
  // `at` still names the block.
  QUIVER_RETURN_IF_ERROR(IndexBlocks(src, header, &blocks, &at, [&](const BlockRef& b) -> Status {
    QUIVER_ASSIGN_OR_RETURN(auto payload, ReadBlock(src, b, header.seed, &scratch));
    return visitor.VisitBlock(ScannedBlock{.kind = b.kind,
                                           .offset = b.offset,
                                           .length = b.length,
                                           .crc = b.crc,
                                           .first_id = b.first,
                                           .count = b.count,
                                           .body = payload.subspan(b.prefix)});
  }));
  at = blocks.back().offset;
  QUIVER_ASSIGN_OR_RETURN(auto end, ReadBlock(src, blocks.back(), header.seed, &scratch));
  QUIVER_RETURN_IF_ERROR(CheckEndTotals(end, header, blocks.size() - 1));
  at = 0;
  return Status::Ok();
}

Status LoadCheckpointFile(const env::ReadableFile& file, GraphRoots& roots, storage::MutationContext& ctx,
                          Header* header, unsigned threads, LoadStats* stats) {
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file.Size());
  return Load(FileSource(file, size), roots, ctx, header, threads, stats);
}

}  // namespace quiver::checkpoint
