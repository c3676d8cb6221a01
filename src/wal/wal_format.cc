#include "wal/wal_format.h"

#include <cstring>

#include "base/crc32c.h"
#include "base/strings.h"

namespace quiver::wal {
namespace {

template <typename T>
void Put(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
template <typename T>
T Get(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

void EncodeSegmentHeader(const SegmentHeader& h, std::span<std::byte, kSegmentHeaderBytes> out) {
  std::byte* p = out.data();
  std::memset(p, 0, kSegmentHeaderBytes);
  Put<std::uint64_t>(p, kSegmentMagic);
  Put<std::uint32_t>(p + 8, h.format_version);
  Put<std::uint32_t>(p + 12, kSegmentHeaderBytes);
  std::memcpy(p + 16, h.uuid.data(), 16);
  Put<std::uint64_t>(p + 32, h.segment_number);
  Put<std::uint64_t>(p + 40, h.first_sequence);
  Put<std::uint32_t>(p + 56, base::Crc32c(p, 56));
}

std::optional<SegmentHeader> DecodeSegmentHeader(std::span<const std::byte> in) {
  if (in.size() < kSegmentHeaderBytes) return std::nullopt;
  const std::byte* p = in.data();
  if (Get<std::uint64_t>(p) != kSegmentMagic || !IsReadableVersion(Get<std::uint32_t>(p + 8)) ||
      Get<std::uint32_t>(p + 12) != kSegmentHeaderBytes ||
      Get<std::uint32_t>(p + 56) != base::Crc32c(p, 56) ||
      Get<std::uint32_t>(p + 60) != 0)  // outside the CRC, so it must be exactly zero
    return std::nullopt;
  SegmentHeader h;
  h.format_version = Get<std::uint32_t>(p + 8);
  std::memcpy(h.uuid.data(), p + 16, 16);
  h.segment_number = Get<std::uint64_t>(p + 32);
  h.first_sequence = Get<std::uint64_t>(p + 40);
  return h;
}

std::optional<std::uint32_t> NewerFormatVersion(std::span<const std::byte> in) {
  if (in.size() < 12) return std::nullopt;
  const std::byte* p = in.data();
  const auto version = Get<std::uint32_t>(p + 8);
  if (Get<std::uint64_t>(p) != kSegmentMagic || version <= kFormatVersion || version > kMaxFormatVersion)
    return std::nullopt;
  if (in.size() >= kSegmentHeaderBytes) {
    std::byte known[kSegmentHeaderBytes];
    std::memcpy(known, p, kSegmentHeaderBytes);
    for (std::uint32_t v = kOldestFormatVersion; v <= kFormatVersion; ++v) {
      Put<std::uint32_t>(known + 8, v);
      if (Get<std::uint32_t>(known + 56) == base::Crc32c(known, 56)) return std::nullopt;
    }
  }
  return version;
}

Status UnknownVersionError(std::string_view what, std::uint32_t version, std::uint32_t oldest,
                           std::uint32_t newest) {
  const std::string reads =
      oldest == newest ? base::StrCat("format ", newest) : base::StrCat("formats ", oldest, " to ", newest);
  return UnimplementedError(base::StrCat(what, ": format version ", version,
                                         version > newest ? " (written by a newer Quiver)" : "",
                                         "; this build reads ", reads, "; the file is left as it is"));
}

void EncodeRecordHeader(RecordHeader h, std::span<const std::byte> payload,
                        std::span<std::byte, kRecordHeaderBytes> out) {
  std::byte* p = out.data();
  std::memset(p, 0, kRecordHeaderBytes);
  Put<std::uint32_t>(p + 4, static_cast<std::uint32_t>(payload.size()));
  Put<std::uint8_t>(p + 8, static_cast<std::uint8_t>(h.type));
  Put<std::uint64_t>(p + 16, h.first_sequence);
  Put<std::uint64_t>(p + 24, h.last_sequence);
  std::uint32_t crc = base::Crc32cExtend(0, p + 4, kRecordHeaderBytes - 4);
  crc = base::Crc32cExtend(crc, payload.data(), payload.size());
  Put<std::uint32_t>(p, crc);
}

std::optional<RecordHeader> ParseRecordHeader(std::span<const std::byte> in) {
  if (in.size() < kRecordHeaderBytes) return std::nullopt;
  const std::byte* p = in.data();
  RecordHeader h;
  h.crc = Get<std::uint32_t>(p);
  h.length = Get<std::uint32_t>(p + 4);
  auto type = Get<std::uint8_t>(p + 8);
  if (type < 1 || type > 5) return std::nullopt;
  for (int i = 9; i < 16; ++i)
    if (p[i] != std::byte{0}) return std::nullopt;
  h.type = static_cast<RecordType>(type);
  h.first_sequence = Get<std::uint64_t>(p + 16);
  h.last_sequence = Get<std::uint64_t>(p + 24);
  if (h.length > kMaxFragment || h.first_sequence == 0 || h.last_sequence < h.first_sequence)
    return std::nullopt;
  return h;
}

bool RecordCrcMatches(std::span<const std::byte> header, std::span<const std::byte> payload) {
  std::uint32_t crc = base::Crc32cExtend(0, header.data() + 4, kRecordHeaderBytes - 4);
  crc = base::Crc32cExtend(crc, payload.data(), payload.size());
  return crc == Get<std::uint32_t>(header.data());
}

std::optional<std::uint32_t> PaddingPayloadFor(std::uint64_t end) {
  const std::uint64_t left = (kWalPageBytes - end % kWalPageBytes) % kWalPageBytes;
  if (left == 0) return std::nullopt;
  const std::uint64_t total = left >= kRecordHeaderBytes ? left : left + kWalPageBytes;
  return static_cast<std::uint32_t>(total - kRecordHeaderBytes);
}

std::string UuidText(const Uuid& uuid) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[uuid[i] >> 4]);
    out.push_back(kHex[uuid[i] & 0xF]);
  }
  return out;
}

std::string SegmentFileName(std::uint64_t segment_number) {
  return base::NumberedFileName("wal-", segment_number, ".log");
}

std::optional<std::uint64_t> ParseSegmentFileName(std::string_view name) {
  return base::ParseNumberedFileName(name, "wal-", ".log");
}

}  // namespace quiver::wal
