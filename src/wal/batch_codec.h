// BatchCodec: the logical payload of one WAL commit group — the batches the
// writer committed, each with its sequence number and the first vertex and
// edge ids it was assigned — and its decoder.
//
//   Group    := batch_count:varint Batch{batch_count}
//   Batch    := sequence:u64 first_vertex:varint first_edge:varint
//               op_count:varint Op{op_count}
//   Op       := kind:u8 (fields by kind, in this order)
//     1 AddVertex            label:Str props:Props
//     2 AddEdge              type:Str source:Ref target:Ref props:Props
//     3 SetVertexProperty    vertex:Ref key:Str value:Value
//     4 SetEdgeProperty      edge:Ref key:Str value:Value
//     5 RemoveVertexProperty vertex:Ref key:Str
//     6 RemoveEdgeProperty   edge:Ref key:Str
//     7 RemoveEdge           edge:Ref
//     8 RemoveVertex         vertex:Ref
//   format version 2 on, each alone in its batch (Graph::CreateIndex, DropIndex):
//     9 DefineIndex          name:Str element:u8 (0 vertex, 1 edge) label:Str
//                            kind:u8 (0 exact, 1 unique, 2 ordered; 3 edge-endpoint
//                            constraint, format version 4 on, with no keys)
//                            type:u8 (ValueType, 0xFF any) key_count:varint key:Str{key_count}
//    10 IndexReady           name:Str declared:varint (the DefineIndex batch's sequence)
//    11 DropIndex            name:Str declared:varint (0: whichever index has the name)
//   Ref      := varint (id << 1 | 1 for a batch-local index, 0 for a committed id)
//   Props    := count:varint (key:Str value:Value){count}
//   Value    := type:u8 (ValueType) then: null —; bool u8; int64 u64; double
//               u64 (IEEE bits); string/bytes Str; float vector count:varint
//               f32{count}
//   Str      := length:varint byte{length}
// Integers little-endian. Kind and type numbers are persisted: never
// renumber. docs/wal_format.md has a worked example.
//
// Index contents are never logged: replay maintains ready indexes, and
// recovery builds those the log declared or made ready once it is replayed.
//
// Replay re-applies each batch through the same validation and apply code
// as the original commit and checks that it is assigned the recorded ids.
#ifndef QUIVER_WAL_BATCH_CODEC_H_
#define QUIVER_WAL_BATCH_CODEC_H_

#include <cstdint>
#include <span>
#include <vector>

#include "quiver/ids.h"
#include "quiver/status.h"
#include "quiver/write_batch.h"

namespace quiver::wal {

struct LoggedBatch {
  SequenceNumber sequence = 0;
  std::uint64_t first_vertex = 0;  // id the batch's first AddVertex received
  std::uint64_t first_edge = 0;
  WriteBatch batch;
};

// Appends the encoding of one group's committed batches to `out`.
class GroupEncoder {
 public:
  explicit GroupEncoder(std::vector<std::byte>* out) : out_(out) {}
  void Begin(std::size_t batch_count);
  void Add(SequenceNumber sequence, std::uint64_t first_vertex, std::uint64_t first_edge,
           const WriteBatch& batch);

 private:
  std::vector<std::byte>* out_;
};

// Decodes a group payload; Corruption on any malformed byte. Never
// allocates more than a small multiple of the input size.
Result<std::vector<LoggedBatch>> DecodeGroup(std::span<const std::byte> payload);

}  // namespace quiver::wal

#endif  // QUIVER_WAL_BATCH_CODEC_H_
