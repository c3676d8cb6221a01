// fuzz_wal_decode: one WAL segment file (docs/wal_format.md) through
// wal::ScanSegment, each group it hands out through wal::DecodeGroup.
//
// Input: the raw bytes of a segment. Checksums would keep a fuzzer out of
// everything behind them, so an input whose segment header has bit 0 of
// byte 48 set (a reserved byte under the header CRC; the writer leaves it
// zero) is first "fixed up": the bit is cleared, and the header CRC and the
// CRC of every record that parses and fits are recomputed, so the
// fuzzer reaches the sequence rules and the payload decoder. Inputs with the
// bit clear are scanned as they are (the checksum paths).
//
// Checks beyond "no crash, no UB, no leak":
//  - ScanSegment returns OK or Corruption, and its SegmentScan agrees with
//    what it reported (group count, last sequence, valid end and tail bytes);
//  - the groups it hands out carry strictly increasing, contiguous sequence
//    ranges starting at the header's first_sequence;
//  - cutting the file at the scan's valid end gives the same groups and no
//    tail (the torn-tail rule is stable);
//  - DecodeGroup accepts exactly the payloads an independent parser of the
//    documented grammar accepts (RefParser below), and re-encoding what it
//    decoded with GroupEncoder reproduces the payload byte for byte when the
//    payload is canonical (shortest varints, batch-local indexes < 2^32, as
//    every writer produces); a non-canonical payload re-encodes to a
//    canonical one that is a fixed point of decode + encode;
//  - with a sanitizer's allocator hooks (AllocMeter), DecodeGroup allocates
//    at most kDecodeBytesPerPayloadByte per payload byte (plus a constant),
//    and ScanSegment's own allocations stay within the file's size.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "base/crc32c.h"
#include "fuzz_util.h"
#include "quiver/status.h"
#include "wal/batch_codec.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

namespace quiver::fuzz {
namespace {

// The bound on DecodeGroup's allocations, as a multiple of the payload: the
// decoded form of a 2-byte operation (an Op record in a growing vector) is
// some 50 times its encoding. A hostile count that the decoder trusted would
// blow far past it.
constexpr std::size_t kDecodeBytesPerPayloadByte = 128;
constexpr std::size_t kDecodeBytesConstant = 4096;

constexpr std::size_t kFixupFlagOffset = 48;

std::string U64(std::uint64_t v) { return std::to_string(v); }

// What one input exercised (printed with QUIVER_FUZZ_VERBOSE).
struct Stats {
  std::size_t payloads = 0, decoded = 0, canonical = 0;
  double worst_ratio = 0;  // DecodeGroup's peak bytes held per payload byte
};
Stats stats;

// ---- An independent reader of the group grammar (docs/wal_format.md) ----

class RefParser {
 public:
  explicit RefParser(std::span<const std::byte> in) : in_(in) {}

  // Whether the payload is a well-formed group; sets canonical().
  bool Group() {
    std::uint64_t batches;
    if (!Varint(&batches)) return false;
    for (std::uint64_t i = 0; i < batches; ++i) {
      std::uint64_t ops, ignored;
      if (!Skip(8) || !Varint(&ignored) || !Varint(&ignored) || !Varint(&ops)) return false;
      for (std::uint64_t k = 0; k < ops; ++k)
        if (!Op()) return false;
      ++batches_;
      ops_ += ops;
    }
    return pos_ == in_.size();
  }
  bool canonical() const { return canonical_; }
  std::uint64_t batches() const { return batches_; }
  std::uint64_t ops() const { return ops_; }

 private:
  bool Op() {
    std::uint8_t kind;
    if (!U8(&kind)) return false;
    switch (kind) {
      case 1: return Str() && Props();                    // AddVertex
      case 2: return Str() && Ref() && Ref() && Props();  // AddEdge
      case 3:
      case 4: return Ref() && Str() && Value();  // Set*Property
      case 5:
      case 6: return Ref() && Str();  // Remove*Property
      case 7:
      case 8: return Ref();  // RemoveEdge, RemoveVertex
      case 9: return DefineIndex();
      case 10:
      case 11: {  // IndexReady, DropIndex
        std::uint64_t declared;
        return Str() && Varint(&declared);
      }
      default: return false;
    }
  }
  // name element:u8 label kind:u8 type:u8 key_count:varint key{key_count}
  bool DefineIndex() {
    std::uint8_t element, kind, type;
    std::uint64_t keys;
    if (!Str() || !U8(&element) || !Str() || !U8(&kind) || !U8(&type) || !Varint(&keys)) return false;
    for (std::uint64_t i = 0; i < keys; ++i)
      if (!Str()) return false;
    return true;
  }
  bool Props() {
    std::uint64_t n;
    if (!Varint(&n)) return false;
    for (std::uint64_t i = 0; i < n; ++i)
      if (!Str() || !Value()) return false;
    return true;
  }
  bool Value() {
    std::uint8_t type;
    if (!U8(&type)) return false;
    std::uint64_t n;
    switch (type) {
      case 0: return true;
      case 1: {
        std::uint8_t b;
        return U8(&b) && b <= 1;
      }
      case 2: return Skip(8);
      case 3: {  // a double: NaN and the infinities are malformed
        std::uint64_t bits;
        return Fixed(&bits, 8) && std::isfinite(std::bit_cast<double>(bits));
      }
      case 4:
      case 5: return Varint(&n) && Skip(n);
      case 6: {  // a float vector: every element finite
        if (!Varint(&n) || n > in_.size() / 4) return false;
        for (std::uint64_t i = 0; i < n; ++i) {
          std::uint64_t bits;
          if (!Fixed(&bits, 4) || !std::isfinite(std::bit_cast<float>(static_cast<std::uint32_t>(bits))))
            return false;
        }
        return true;
      }
      case 7: {  // a string list: a count, then each element as a string
        if (!Varint(&n) || n > in_.size()) return false;
        for (std::uint64_t i = 0; i < n; ++i)
          if (!Str()) return false;
        return true;
      }
      default: return false;
    }
  }
  bool Ref() {
    std::uint64_t raw;
    if (!Varint(&raw)) return false;
    // The decoder clamps a batch-local index past 2^32 (no batch has that
    // many elements); it cannot re-encode as it was.
    if ((raw & 1) != 0 && (raw >> 1) > UINT32_MAX) canonical_ = false;
    return true;
  }
  bool Str() {
    std::uint64_t n;
    return Varint(&n) && Skip(n);
  }
  bool U8(std::uint8_t* v) {
    if (pos_ >= in_.size()) return false;
    *v = static_cast<std::uint8_t>(in_[pos_++]);
    return true;
  }
  // A little-endian unsigned integer of `width` bytes.
  bool Fixed(std::uint64_t* v, int width) {
    if (static_cast<std::size_t>(width) > in_.size() - pos_) return false;
    *v = 0;
    for (int i = 0; i < width; ++i) *v |= std::uint64_t{static_cast<std::uint8_t>(in_[pos_++])} << (8 * i);
    return true;
  }
  bool Skip(std::uint64_t n) {
    if (n > in_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  // LEB128, at most 10 bytes, no bits past 64; canonical if shortest.
  bool Varint(std::uint64_t* v) {
    *v = 0;
    for (int i = 0; i < 10; ++i) {
      std::uint8_t b;
      if (!U8(&b)) return false;
      if (i == 9 && b > 1) return false;
      *v |= std::uint64_t{b & 0x7Fu} << (7 * i);
      if ((b & 0x80) == 0) {
        if (i > 0 && b == 0) canonical_ = false;
        return true;
      }
    }
    return false;
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  bool canonical_ = true;
  std::uint64_t batches_ = 0;
  std::uint64_t ops_ = 0;
};

std::vector<std::byte> Encode(const std::vector<wal::LoggedBatch>& batches) {
  std::vector<std::byte> out;
  wal::GroupEncoder enc(&out);
  enc.Begin(batches.size());
  for (const wal::LoggedBatch& b : batches) enc.Add(b.sequence, b.first_vertex, b.first_edge, b.batch);
  return out;
}

std::size_t TotalOps(const std::vector<wal::LoggedBatch>& batches) {
  std::size_t n = 0;
  for (const wal::LoggedBatch& b : batches) n += b.batch.size();
  return n;
}

// Decodes one group payload and checks the decoder against RefParser and
// the encoder.
void CheckPayload(std::span<const std::byte> payload) {
  AllocMeter::Scope meter;
  Result<std::vector<wal::LoggedBatch>> decoded = wal::DecodeGroup(payload);
  AllocMeter::Totals used = meter.Take();
  ++stats.payloads;
  if (!payload.empty())
    stats.worst_ratio =
        std::max(stats.worst_ratio, static_cast<double>(used.peak) / static_cast<double>(payload.size()));
  QUIVER_FUZZ_CHECK(used.peak <= kDecodeBytesPerPayloadByte * payload.size() + kDecodeBytesConstant,
                    "DecodeGroup held up to " + U64(used.peak) + " bytes (" + U64(used.bytes) +
                        " allocated in all, largest block " + U64(used.largest) + ") for a payload of " +
                        U64(payload.size()));

  RefParser ref(payload);
  const bool ref_ok = ref.Group();
  QUIVER_FUZZ_CHECK(decoded.ok() == ref_ok, "DecodeGroup says " + decoded.status().ToString() +
                                                ", the grammar says " + (ref_ok ? "valid" : "invalid"));
  if (!decoded.ok()) {
    QUIVER_FUZZ_CHECK(decoded.status().code() == StatusCode::kCorruption, decoded.status().ToString());
    return;
  }
  QUIVER_FUZZ_CHECK(decoded->size() == ref.batches() && TotalOps(*decoded) == ref.ops(),
                    "decoded " + U64(decoded->size()) + " batches / " + U64(TotalOps(*decoded)) +
                        " ops, the grammar counts " + U64(ref.batches()) + " / " + U64(ref.ops()));

  ++stats.decoded;
  std::vector<std::byte> again = Encode(*decoded);
  if (ref.canonical()) {
    ++stats.canonical;
    QUIVER_FUZZ_CHECK(
        again.size() == payload.size() && std::memcmp(again.data(), payload.data(), payload.size()) == 0,
        "re-encoding a canonical payload of " + U64(payload.size()) + " bytes gave " + U64(again.size()) +
            " different bytes");
    return;
  }
  // Non-canonical: the re-encoding is canonical, no longer, and stable.
  RefParser ref_again(again);
  QUIVER_FUZZ_CHECK(ref_again.Group() && ref_again.canonical() && again.size() <= payload.size(),
                    "re-encoding of a non-canonical payload is not a canonical group");
  Result<std::vector<wal::LoggedBatch>> redecoded = wal::DecodeGroup(again);
  QUIVER_FUZZ_CHECK(redecoded.ok(), "re-encoded group does not decode: " + redecoded.status().ToString());
  QUIVER_FUZZ_CHECK(Encode(*redecoded) == again, "decode + encode is not a fixed point");
}

// Clears the fixup flag, then recomputes the header CRC and the CRC of every
// record that parses and fits
// (docs/wal_format.md: header CRC over bytes 0..55 at 56; record CRC over
// header bytes 4..31 and the payload, at 0).
void FixChecksums(std::vector<std::byte>& b) {
  if (b.size() < wal::kSegmentHeaderBytes) return;
  // The flag is the harness's, not the reader's: clear it, so the header
  // the reader sees is one a writer could have written.
  b[kFixupFlagOffset] &= std::byte{0xFE};
  std::uint32_t crc = base::Crc32c(b.data(), 56);
  std::memcpy(b.data() + 56, &crc, 4);
  std::size_t pos = wal::kSegmentHeaderBytes;
  while (pos + wal::kRecordHeaderBytes <= b.size()) {
    std::span<std::byte> header(b.data() + pos, wal::kRecordHeaderBytes);
    auto h = wal::ParseRecordHeader(header);
    if (!h || h->length > b.size() - pos - wal::kRecordHeaderBytes) {
      pos += 8;
      continue;
    }
    crc = base::Crc32cExtend(base::Crc32c(header.data() + 4, wal::kRecordHeaderBytes - 4),
                             b.data() + pos + wal::kRecordHeaderBytes, h->length);
    std::memcpy(header.data(), &crc, 4);
    pos += wal::kRecordHeaderBytes + wal::PaddedLength(h->length);
  }
}

struct ScanResult {
  Status status;
  wal::SegmentScan scan;
  std::vector<std::pair<SequenceNumber, SequenceNumber>> groups;
};

ScanResult Scan(std::span<const std::byte> bytes, bool decode) {
  ScanResult r;
  AllocMeter::Scope meter;
  r.status = wal::ScanSegment(
      bytes,
      [&](SequenceNumber first, SequenceNumber last, std::span<const std::byte> payload) {
        AllocMeter::Pause pause;
        r.groups.emplace_back(first, last);
        if (decode) CheckPayload(payload);
        return Status::Ok();
      },
      &r.scan);
  // Fragments of one group are joined in a buffer that grows by doubling.
  AllocMeter::Totals used = meter.Take();
  QUIVER_FUZZ_CHECK(
      used.largest <= 2 * bytes.size() + 4096,
      "ScanSegment allocated a block of " + U64(used.largest) + " bytes for a file of " + U64(bytes.size()));
  return r;
}

void CheckScan(const ScanResult& r, std::span<const std::byte> bytes) {
  const std::size_t size = bytes.size();
  const wal::SegmentScan& s = r.scan;
  if (!r.status.ok()) {
    // Damage is Corruption; an intact header of another version is
    // Unimplemented (the file is left for a newer build).
    QUIVER_FUZZ_CHECK(
        r.status.code() == StatusCode::kCorruption || r.status.code() == StatusCode::kUnimplemented,
        r.status.ToString());
    return;
  }
  QUIVER_FUZZ_CHECK(s.file_bytes == size, "file_bytes " + U64(s.file_bytes));
  QUIVER_FUZZ_CHECK(s.groups == r.groups.size(),
                    "groups " + U64(s.groups) + ", visited " + U64(r.groups.size()));
  if (!s.header_valid) {
    QUIVER_FUZZ_CHECK(r.groups.empty() && s.tail_bytes == size, "header invalid but groups or no tail");
    return;
  }
  SequenceNumber next = s.header.first_sequence;
  for (auto [first, last] : r.groups) {
    QUIVER_FUZZ_CHECK(first == next && last >= first,
                      "group " + U64(first) + ".." + U64(last) + " where " + U64(next) + " was expected");
    next = last + 1;
  }
  QUIVER_FUZZ_CHECK(s.last_sequence == (r.groups.empty() ? 0 : r.groups.back().second),
                    "last_sequence " + U64(s.last_sequence));
  const std::uint64_t aligned_end = (std::uint64_t{size} + 7) & ~std::uint64_t{7};
  QUIVER_FUZZ_CHECK(
      s.valid_end % 8 == 0 && s.valid_end >= wal::kSegmentHeaderBytes && s.valid_end <= aligned_end,
      "valid_end " + U64(s.valid_end) + " in a file of " + U64(size));
  // Past the valid end: a torn tail, or (version 3 on) the zeroed end the
  // writer filled ahead of its appends, kept: all zeros after a valid end on
  // a page boundary past the header's page. Never both.
  const std::uint64_t past = size > s.valid_end ? size - s.valid_end : 0;
  QUIVER_FUZZ_CHECK(s.tail_bytes + s.zeroed_bytes == past && (s.tail_bytes == 0 || s.zeroed_bytes == 0),
                    "tail_bytes " + U64(s.tail_bytes) + ", zeroed_bytes " + U64(s.zeroed_bytes) +
                        ", valid_end " + U64(s.valid_end));
  if (s.zeroed_bytes > 0) {
    QUIVER_FUZZ_CHECK(wal::IsPaddedVersion(s.header.format_version) &&
                          s.valid_end % wal::kWalPageBytes == 0 && s.valid_end >= wal::kWalPageBytes &&
                          std::all_of(bytes.end() - static_cast<std::ptrdiff_t>(past), bytes.end(),
                                      [](std::byte b) { return b == std::byte{0}; }),
                      "zeroed_bytes " + U64(s.zeroed_bytes) + " after valid_end " + U64(s.valid_end) +
                          " in a version " + U64(s.header.format_version) + " segment");
  }
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (size > 0) std::memcpy(bytes.data(), data, size);
  const bool fixup = size >= wal::kSegmentHeaderBytes && (data[kFixupFlagOffset] & 1) != 0;
  if (fixup) FixChecksums(bytes);
  stats = Stats{};

  ScanResult full = Scan(bytes, /*decode=*/true);
  CheckScan(full, bytes);

  // The torn-tail rule is stable: the file cut at its valid end holds the
  // same groups and no tail.
  if (full.status.ok() && full.scan.header_valid && full.scan.valid_end < size) {
    std::span<const std::byte> prefix(bytes.data(), full.scan.valid_end);
    ScanResult cut = Scan(prefix, /*decode=*/false);
    CheckScan(cut, prefix);
    QUIVER_FUZZ_CHECK(cut.status.ok() && cut.groups == full.groups && cut.scan.tail_bytes == 0,
                      "the file cut at its valid end " + std::to_string(full.scan.valid_end) + " scans as " +
                          cut.status.ToString() + " with " + std::to_string(cut.groups.size()) + " groups (" +
                          std::to_string(full.groups.size()) + " before the cut)");
  }
  if (Verbose()) {
    std::fprintf(stderr,
                 "  fixup %d: %s, header %s, groups %zu, tail %llu; payloads %zu decoded %zu canonical %zu, "
                 "decode peak memory up to %.1f x payload (metered: %s)\n",
                 fixup ? 1 : 0, full.status.ToString().c_str(), full.scan.header_valid ? "valid" : "invalid",
                 full.groups.size(), static_cast<unsigned long long>(full.scan.tail_bytes), stats.payloads,
                 stats.decoded, stats.canonical, stats.worst_ratio, AllocMeter::Available() ? "yes" : "no");
  }
}

}  // namespace
}  // namespace quiver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  quiver::fuzz::TestOneInput(data, size);
  return 0;
}
