// Byte coding for the persistent formats: little-endian fixed-width integers,
// LEB128 varints, and a bounds-checked reader that never reads past its input
// (every decoder of untrusted bytes goes through ByteReader).
#ifndef QUIVER_BASE_CODING_H_
#define QUIVER_BASE_CODING_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace quiver::base {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>* out) : out_(out) {}
  void PutU8(std::uint8_t v) { out_->push_back(static_cast<std::byte>(v)); }
  void PutU32(std::uint32_t v) { PutRaw(&v, 4); }
  void PutU64(std::uint64_t v) { PutRaw(&v, 8); }
  void PutVarint(std::uint64_t v) {
    while (v >= 0x80) {
      PutU8(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    PutU8(static_cast<std::uint8_t>(v));
  }
  void PutBytes(const void* p, std::size_t n) { PutRaw(p, n); }
  void PutString(std::string_view s) {
    PutVarint(s.size());
    PutRaw(s.data(), s.size());
  }
  std::size_t size() const { return out_->size(); }

 private:
  void PutRaw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_->insert(out_->end(), b, b + n);
  }
  std::vector<std::byte>* out_;
};

// Reads from a span; every getter returns false (and reads nothing) if the
// input is too short or malformed.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}
  bool GetU8(std::uint8_t* v) { return GetRaw(v, 1); }
  bool GetU32(std::uint32_t* v) { return GetRaw(v, 4); }
  bool GetU64(std::uint64_t* v) { return GetRaw(v, 8); }
  bool GetVarint(std::uint64_t* v) {
    std::uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (pos_ >= in_.size()) return false;
      auto byte = static_cast<std::uint8_t>(in_[pos_++]);
      if (shift == 63 && byte > 1) return false;  // overflows 64 bits
      result |= std::uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;
  }
  // A view of the next n bytes.
  bool GetSpan(std::size_t n, std::span<const std::byte>* out) {
    if (n > remaining()) return false;
    *out = in_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  bool GetString(std::string_view* out) {
    std::uint64_t n;
    std::span<const std::byte> s;
    if (!GetVarint(&n) || n > remaining() || !GetSpan(n, &s)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(s.data()), s.size());
    return true;
  }
  std::size_t remaining() const { return in_.size() - pos_; }
  std::size_t position() const { return pos_; }

 private:
  bool GetRaw(void* p, std::size_t n) {
    if (n > remaining()) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

}  // namespace quiver::base

#endif  // QUIVER_BASE_CODING_H_
