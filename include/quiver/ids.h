// Strong identifier types. Each id kind is its own type: a VertexId never
// converts into an EdgeId, a LabelId or an integer without saying so.
//
// Element ids (VertexId, EdgeId) are assigned by the writer in commit order,
// dense from 0, and never reused or renumbered: an id an application holds
// names the same element for the graph's life, and once that element is
// removed, no element at all (reads find nothing, writes that name it fail
// with NotFound). The memory of removed elements is reclaimed all the same,
// 64 consecutive ids at a time: once every element of such a run is
// removed, its memory comes back (a checkpoint still writes one byte per
// removed id). Name ids (LabelId,
// EdgeTypeId, PropertyKeyId) are interned strings; they are stable for the
// graph's life. `SequenceNumber` numbers committed batches from 1.
#ifndef QUIVER_IDS_H_
#define QUIVER_IDS_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace quiver {

// A typed wrapper around an unsigned integer. `Tag` only distinguishes types.
template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep value) : value_(value) {}
  constexpr Rep value() const { return value_; }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;

 private:
  Rep value_ = 0;
};

struct VertexIdTag {};
struct EdgeIdTag {};
struct LabelIdTag {};
struct EdgeTypeIdTag {};
struct PropertyKeyIdTag {};

using VertexId = StrongId<VertexIdTag, std::uint64_t>;
using EdgeId = StrongId<EdgeIdTag, std::uint64_t>;
using LabelId = StrongId<LabelIdTag, std::uint32_t>;
using EdgeTypeId = StrongId<EdgeTypeIdTag, std::uint32_t>;
using PropertyKeyId = StrongId<PropertyKeyIdTag, std::uint32_t>;

// The commit sequence number of a batch (LSN). The first committed batch has
// sequence 1; an empty graph is at sequence 0.
using SequenceNumber = std::uint64_t;

// Element ids are stored in 48 bits inside the engine; ids at or above this
// bound are never assigned (a write that would need one gets
// ResourceExhausted).
inline constexpr std::uint64_t kMaxElementId = (std::uint64_t{1} << 48) - 1;

}  // namespace quiver

template <typename Tag, typename Rep>
struct std::hash<quiver::StrongId<Tag, Rep>> {
  std::size_t operator()(quiver::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};

#endif  // QUIVER_IDS_H_
