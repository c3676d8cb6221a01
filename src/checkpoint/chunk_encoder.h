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
#include <span>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "quiver/status.h"
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

// Frames one block of `kind` around `payload` into `out` (appended): the
// 16-byte header with its CRC, then the payload. ResourceExhausted if the
// payload is over 4 GiB.
Status AppendBlock(BlockKind kind, std::span<const std::byte> payload, std::uint32_t seed,
                   std::vector<std::byte>* out);

}  // namespace quiver::checkpoint

#endif  // QUIVER_CHECKPOINT_CHUNK_ENCODER_H_
