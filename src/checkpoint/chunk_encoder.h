// EncodeChunk: one id range of the vertex or edge table, encoded as complete
// checkpoint blocks (header, CRC and payload; checkpoint_format.h), ready to
// be appended to the file.
//
// The checkpoint writer cuts each table into chunks of consecutive ids and
// encodes them on several threads; since the format lets a kind span any
// number of blocks with contiguous first_id, the chunks' blocks, written in
// chunk order, form a valid file. Within a chunk a block closes once its
// elements reach kTargetBlockBytes (never splitting an element), and the
// chunk's last block closes at the chunk's end.
//
// Thread safety: EncodeChunk only reads the version, which is immutable while
// pinned, so any number of threads may encode chunks of it at once, each into
// its own EncodedChunk.
#ifndef QUIVER_CHECKPOINT_CHUNK_ENCODER_H_
#define QUIVER_CHECKPOINT_CHUNK_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "quiver/status.h"
#include "quiver/value.h"
#include "storage/elements.h"

namespace quiver::checkpoint {

// Ids [begin, end) of one element kind (kVertices or kEdges).
struct Chunk {
  BlockKind kind = BlockKind::kVertices;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// The framed blocks of one chunk. `bytes` is scratch space reused from chunk
// to chunk; the blocks lie in it with gaps between them (each block's prefix
// is laid out only once its element count is known).
struct EncodedChunk {
  struct Span {
    std::size_t offset;
    std::size_t length;
  };
  std::vector<std::byte> bytes;   // size() is the capacity in use, not the data
  std::vector<Span> blocks;       // in file order
  std::uint64_t block_bytes = 0;  // the sum of blocks' lengths

  std::span<const std::byte> Block(std::size_t i) const {
    return {bytes.data() + blocks[i].offset, blocks[i].length};
  }
};

// One property handed to ElementStream: its key id and its value.
struct KeyedValue {
  std::uint32_t key = 0;
  PropertyView value;
};

class BlockBuilder;

// Encodes elements handed over one at a time, with consecutive ids, as the
// blocks of one kind (kVertices or kEdges), cut as EncodeChunk cuts them:
// a block closes once its elements reach kTargetBlockBytes, and at Close.
// A bulk import writes a new graph's checkpoint through it, element by
// element as it reads its input, with no version to walk. Every element
// is live (the format's marker 1). Close() after the last element of a
// chunk; then `out` holds that chunk's blocks, to be appended to the file,
// and Restart() empties it for the next chunk (the ids go on).
//
// Example:
//   EncodedChunk chunk;
//   ElementStream s(BlockKind::kVertices, header.seed, &chunk);
//   KeyedValue id{.key = 0, .value = PropertyView(std::int64_t{7})};
//   QUIVER_RETURN_IF_ERROR(s.Vertex(/*label=*/0, {&id, 1}));
//   QUIVER_RETURN_IF_ERROR(s.Close());  // chunk.blocks: one block
class ElementStream {
 public:
  // The first element gets id `first_id` (a bulk import encodes one
  // range of ids per thread).
  ElementStream(BlockKind kind, std::uint32_t seed, EncodedChunk* out, std::uint64_t first_id = 0);
  ~ElementStream();
  ElementStream(const ElementStream&) = delete;
  ElementStream& operator=(const ElementStream&) = delete;

  // The next vertex or edge. `props` must be in increasing key order with
  // no key twice (the format requires it; not checked here). Fails only
  // with ResourceExhausted, for a block over 4 GiB.
  Status Vertex(std::uint32_t label, std::span<const KeyedValue> props);
  Status Edge(std::uint32_t type, std::uint64_t source, std::uint64_t target,
              std::span<const KeyedValue> props);
  // Closes the open block, if any.
  Status Close();
  // Forgets the closed blocks in `out`, keeping its buffer.
  void Restart();
  // The id the next element gets.
  std::uint64_t next_id() const { return next_id_; }

 private:
  std::unique_ptr<BlockBuilder> builder_;
  std::uint64_t next_id_ = 0;
};

// Every function below frames blocks whose CRC continues `seed`: the file
// header's CRC (Header::seed), which ties each block to its file
// (checkpoint_format.h).

// Encodes the elements of `chunk` from `g` into `out` (its buffers are
// reused; earlier content is discarded). Requires chunk.end to be at most
// the kind's limit in `g`. Fails with ResourceExhausted if one element
// encodes to over 4 GiB; throws std::bad_alloc when memory runs out.
Status EncodeChunk(const storage::GraphRoots& g, const Chunk& chunk, std::uint32_t seed, EncodedChunk* out);

// Encodes the names of `table` as blocks of `kind` (kLabels, kEdgeTypes or
// kPropertyKeys) into `out`, cut as element blocks are.
Status EncodeNames(BlockKind kind, const storage::InternTable& table, std::uint32_t seed, EncodedChunk* out);
// The same for names given in id order.
Status EncodeNames(BlockKind kind, std::span<const std::string> names, std::uint32_t seed, EncodedChunk* out);

// Frames one block of `kind` around `payload` into `out` (appended): the
// 16-byte header with its CRC, then the payload. ResourceExhausted if the
// payload is over 4 GiB.
Status AppendBlock(BlockKind kind, std::span<const std::byte> payload, std::uint32_t seed,
                   std::vector<std::byte>* out);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHUNK_ENCODER_H_
