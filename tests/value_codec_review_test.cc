// Review of the string-list value (fe11c3b), finding F2 (low, hardening;
// failed before its fix, stop 45):
// DecodeValue reserves a string list's claimed count before reading one
// element.
//
// wal/value_codec.cc, case kStringList: `n > r.remaining()` is the only
// bound, then `list.reserve(n)`: sizeof(std::string) (32 bytes on this
// ABI) per remaining input byte. Every other case allocates at most the
// input it consumed (bytes, floats, strings: 1x). value_codec.h promises
// "Never reserves more than a small multiple of the input's remaining
// bytes", and RELIABILITY.md 3.6/3.7 ask of the decoders "max allocation
// during decode <= max record size". A damaged-but-CRC-valid group or
// checkpoint block (the *_nocrc fuzz targets, or a checkpoint block of up to
// 4 GiB read whole) claiming a list of N elements and holding none makes the
// decoder allocate 32 N bytes, then fail. (A list that does decode holds N
// std::string objects whatever the reserve; this test only asks that a
// claim the input does not back is not paid for up front, e.g. reserve
// min(n, some cap) and let push_back grow.)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "alloc_hook.h"
#include "base/coding.h"
#include "gtest/gtest.h"
#include "quiver/value.h"
#include "wal/value_codec.h"

namespace quiver {
namespace {

// type 7, count = `count` (LEB128), then `count` bytes that never end a
// varint, so element 0 fails to decode.
std::vector<std::byte> ListRevTruncatedList(std::uint64_t count) {
  std::vector<std::byte> in;
  in.push_back(std::byte{7});
  for (std::uint64_t v = count;; v >>= 7) {
    if (v < 0x80) {
      in.push_back(static_cast<std::byte>(v));
      break;
    }
    in.push_back(static_cast<std::byte>((v & 0x7F) | 0x80));
  }
  in.insert(in.end(), count, std::byte{0x80});
  return in;
}

TEST(ListRevDecodeTest, AListCountTheInputDoesNotBackIsNotReservedUpFront) {
  constexpr std::uint64_t kCount = std::uint64_t{1} << 20;  // 1 MiB of input
  const std::vector<std::byte> in = ListRevTruncatedList(kCount);
  PropertyValue out;
  std::int64_t peak = 0;
  bool decoded = true;
  {
    test_util::ScopedLiveHeapTracking tracking;
    base::ByteReader r(in);
    decoded = wal::DecodeValue(r, &out);
    peak = tracking.PeakGrowth();
  }
  EXPECT_FALSE(decoded);
  EXPECT_TRUE(out.is_null());
  // At most a small multiple of the input (4x here); today 32 MiB for 1 MiB.
  EXPECT_LT(peak, static_cast<std::int64_t>(4 * in.size())) << "bytes held at the peak";
}

}  // namespace
}  // namespace quiver
