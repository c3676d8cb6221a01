#include "checkpoint/checkpoint_format.h"

#include <cstring>

#include "base/crc32c.h"
#include "base/strings.h"
#include "base/value_text.h"

namespace quiver::checkpoint {

namespace {

template <typename T>
T Get(std::span<const std::byte> in, std::size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}
template <typename T>
void Put(std::byte* out, std::size_t at, T v) {
  std::memcpy(out + at, &v, sizeof v);
}

// The header layout of a version this build reads: its length and where
// its CRC lies (over every byte before it).
struct Layout {
  std::uint32_t version;
  std::size_t bytes;
  std::size_t crc_at;
};
constexpr Layout kLayouts[] = {{1, kHeaderBytesV1, 60},
                               {2, kHeaderBytes, 76},
                               {3, kHeaderBytes, 76},
                               {4, kHeaderBytes, 76},
                               {5, kHeaderBytes, 76}};
static_assert(kFormatVersion == 5, "a new format version needs its layout here");

// Whether `in` holds a header of `layout` whose CRC matches once its version
// field reads layout.version.
bool CrcMatchesAs(std::span<const std::byte> in, const Layout& layout) {
  if (in.size() < layout.bytes) return false;
  std::byte copy[kHeaderBytes];
  std::memcpy(copy, in.data(), layout.bytes);
  Put<std::uint32_t>(copy, 8, layout.version);
  return Get<std::uint32_t>(in, layout.crc_at) == base::Crc32c(copy, layout.crc_at);
}

Status Damaged(std::string_view what) { return CorruptionError(base::StrCat("checkpoint: ", what)); }

}  // namespace

std::optional<std::uint32_t> NewerFormatVersion(std::span<const std::byte> in) {
  if (in.size() < 12) return std::nullopt;
  const auto version = Get<std::uint32_t>(in, 8);
  if (Get<std::uint64_t>(in, 0) != kMagic || version <= kFormatVersion || version > wal::kMaxFormatVersion)
    return std::nullopt;
  for (const Layout& layout : kLayouts)
    if (CrcMatchesAs(in, layout)) return std::nullopt;  // a flipped version bit
  return version;
}

std::array<std::byte, kHeaderBytes> EncodeHeader(Header* h) {
  std::array<std::byte, kHeaderBytes> out{};
  std::byte* p = out.data();
  Put<std::uint64_t>(p, 0, kMagic);
  Put<std::uint32_t>(p, 8, kFormatVersion);
  Put<std::uint32_t>(p, 12, static_cast<std::uint32_t>(kHeaderBytes));
  std::memcpy(p + 16, h->uuid.data(), 16);
  Put<std::uint64_t>(p, 32, h->sequence);
  Put<std::uint64_t>(p, 40, h->vertex_limit);
  Put<std::uint64_t>(p, 48, h->edge_limit);
  Put<std::uint64_t>(p, 56, h->wal_segment);
  Put<std::uint64_t>(p, 64, h->wal_offset);
  Put<std::uint32_t>(p, 76, base::Crc32c(p, 76));
  h->version = kFormatVersion;
  h->header_bytes = kHeaderBytes;
  h->trailer_bytes = kTrailerBytes;
  h->seed = base::Crc32c(p, kHeaderBytes);
  return out;
}

Status DecodeHeader(std::span<const std::byte> in, Header* h) {
  // A newer format first, from the magic and the version field alone: its
  // header may look like anything after them.
  if (auto newer = NewerFormatVersion(in))
    return wal::UnknownVersionError("checkpoint", *newer, kOldestFormatVersion, kFormatVersion);
  if (in.size() < 12) return Damaged("shorter than its header");
  if (Get<std::uint64_t>(in, 0) != kMagic) return Damaged("bad magic");
  const auto version = Get<std::uint32_t>(in, 8);
  const Layout* layout = nullptr;
  for (const Layout& l : kLayouts)
    if (l.version == version) layout = &l;
  if (layout == nullptr || in.size() < layout->bytes || Get<std::uint32_t>(in, 12) != layout->bytes ||
      Get<std::uint32_t>(in, layout->crc_at) != base::Crc32c(in.data(), layout->crc_at))
    return Damaged("header damaged");
  std::memcpy(h->uuid.data(), in.data() + 16, 16);
  h->sequence = Get<std::uint64_t>(in, 32);
  h->vertex_limit = Get<std::uint64_t>(in, 40);
  h->edge_limit = Get<std::uint64_t>(in, 48);
  h->version = version;
  h->header_bytes = layout->bytes;
  if (version == 1) {
    h->wal_segment = h->wal_offset = 0;
    h->trailer_bytes = 0;
    h->seed = 0;
  } else {
    h->wal_segment = Get<std::uint64_t>(in, 56);
    h->wal_offset = Get<std::uint64_t>(in, 64);
    h->trailer_bytes = kTrailerBytes;
    h->seed = base::Crc32c(in.data(), layout->bytes);
  }
  return Status::Ok();
}

std::uint32_t BlockCrc(std::uint32_t seed, const std::byte* block_header,
                       std::span<const std::byte> payload) {
  return base::Crc32cExtend(base::Crc32cExtend(seed, block_header, 8), payload.data(), payload.size());
}

bool HeaderIsIntact(std::span<const std::byte> in) {
  Header h;
  return DecodeHeader(in, &h).ok();
}

Status CheckValueVersion(const PropertyValue& value, std::string_view key, std::uint32_t format_version) {
  if (value.type() == ValueType::kStringList && format_version < kFirstStringListVersion)
    return Damaged(base::StrCat("property ", base::Quoted(key),
                                " is a string list (value type 7) in a format version ", format_version,
                                " checkpoint; that type came with format version ", kFirstStringListVersion));
  return Status::Ok();
}

std::string CheckpointFileName(std::uint64_t sequence) {
  return base::NumberedFileName("checkpoint-", sequence, ".qck");
}

std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view name) {
  return base::ParseNumberedFileName(name, "checkpoint-", ".qck");
}

}  // namespace quiver::checkpoint
