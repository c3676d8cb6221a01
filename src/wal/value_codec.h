// Property value coding shared by the WAL and checkpoints:
//   Value := type:u8 (ValueType, persisted: never renumber) then
//            null: nothing; bool: u8 (0 or 1); int64: u64; double: u64 (IEEE
//            754 bits); string, bytes: length:varint byte{length};
//            float vector: count:varint f32{count} (IEEE 754, little-endian)
#ifndef QUIVER_WAL_VALUE_CODEC_H_
#define QUIVER_WAL_VALUE_CODEC_H_

#include "base/coding.h"
#include "quiver/value.h"

namespace quiver::wal {

void EncodeValue(base::ByteWriter& w, const PropertyView& v);
// False on malformed input (unknown type, short input, bool not 0/1).
bool DecodeValue(base::ByteReader& r, PropertyValue* out);

}  // namespace quiver::wal

#endif  // QUIVER_WAL_VALUE_CODEC_H_
