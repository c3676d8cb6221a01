// Property value coding shared by the WAL and checkpoints:
//   Value := type:u8 (ValueType, persisted: never renumber) then
//            null: nothing; bool: u8 (0 or 1); int64: u64; double: u64 (IEEE
//            754 bits); string, bytes: length:varint byte{length};
//            float vector: count:varint f32{count} (IEEE 754, little-endian);
//            string list (type 7: WAL format version 5 and checkpoint format
//            version 4 on): count:varint (length:varint byte{length}){count}
//
// The codec knows every type; which types a file of a given format version
// may hold is its reader's check (recovery.cc, checkpoint_reader.cc), so an
// older file holding a newer type is named as such, not as damage.
#ifndef QUIVER_WAL_VALUE_CODEC_H_
#define QUIVER_WAL_VALUE_CODEC_H_

#include "base/coding.h"
#include "quiver/value.h"

namespace quiver::wal {

void EncodeValue(base::ByteWriter& w, const PropertyView& v);
// False on malformed input (unknown type, short input, bool not 0/1, a
// double or a vector element that is NaN or infinite: the write path refuses
// those, so no file of ours holds one). Never reserves more than a small
// multiple of the input's remaining bytes.
bool DecodeValue(base::ByteReader& r, PropertyValue* out);

}  // namespace quiver::wal

#endif  // QUIVER_WAL_VALUE_CODEC_H_
