#include "storage/prop_block.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/string_list.h"
#include "quiver/options.h"

namespace quiver::storage {
namespace {

using Entry = PropEntry;

const Entry* Entries(const PropBlock* b) { return reinterpret_cast<const Entry*>(b + 1); }
Entry* Entries(PropBlock* b) { return reinterpret_cast<Entry*>(b + 1); }

std::size_t Align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

// Payload bytes of a variable-length value that has them contiguous (a
// string, bytes or a vector); empty for inline types and string lists.
std::span<const std::byte> ContiguousPayload(const PropertyView& v) {
  switch (v.type()) {
    case ValueType::kString: return std::as_bytes(std::span<const char>(*v.as_string()));
    case ValueType::kBytes: return *v.as_bytes();
    case ValueType::kFloatVector: return std::as_bytes(*v.as_float_vector());
    default: return {};
  }
}

// The payload's size: a string list's is its packed form
// (base/string_list.h), built from either of a view's forms.
std::size_t PayloadBytes(const PropertyView& v) {
  if (v.type() == ValueType::kStringList) return base::PackedStringListBytes(*v.as_string_list());
  return ContiguousPayload(v).size();
}

// Writes the payload (PayloadBytes of it) to `dst`.
void WritePayload(const PropertyView& v, char* dst) {
  if (v.type() == ValueType::kStringList) {
    base::PackStringList(*v.as_string_list(), reinterpret_cast<std::byte*>(dst));
    return;
  }
  const std::span<const std::byte> payload = ContiguousPayload(v);
  if (!payload.empty()) std::memmove(dst, payload.data(), payload.size());
}

std::uint64_t InlineWord(const PropertyView& v) {
  switch (v.type()) {
    case ValueType::kBool: return *v.as_bool() ? 1 : 0;
    case ValueType::kInt64: return static_cast<std::uint64_t>(*v.as_int64());
    case ValueType::kDouble: return std::bit_cast<std::uint64_t>(*v.as_double());
    default: return 0;
  }
}

}  // namespace

PropertyView ViewOf(const PropertyValue& v) {
  switch (v.type()) {
    case ValueType::kNull: return PropertyView();
    case ValueType::kBool: return PropertyView(*v.as_bool());
    case ValueType::kInt64: return PropertyView(*v.as_int64());
    case ValueType::kDouble: return PropertyView(*v.as_double());
    case ValueType::kString: return PropertyView(std::string_view(*v.as_string()));
    case ValueType::kBytes: return PropertyView(std::span<const std::byte>(*v.as_bytes()));
    case ValueType::kFloatVector: return PropertyView(std::span<const float>(*v.as_float_vector()));
    case ValueType::kStringList: return PropertyView(*v.as_string_list());
  }
  return PropertyView();
}

namespace {

bool IsPayload(ValueType t) {
  return t == ValueType::kString || t == ValueType::kBytes || t == ValueType::kFloatVector ||
         t == ValueType::kStringList;
}

template <typename AllocFn>
PropBlock* Build(std::vector<PropInput>& entries, AllocFn&& alloc) {
  if (entries.empty()) return nullptr;
  std::sort(entries.begin(), entries.end(),
            [](const PropInput& a, const PropInput& b) { return a.key < b.key; });
  std::size_t header = sizeof(PropBlock) + entries.size() * sizeof(Entry);
  std::size_t data = 0;
  for (const PropInput& e : entries) data += Align8(PayloadBytes(e.value));
  auto* b = static_cast<PropBlock*>(alloc(header + data));
  b->count = static_cast<std::uint32_t>(entries.size());
  b->data_bytes = static_cast<std::uint32_t>(data);
  Entry* out = Entries(b);
  std::size_t offset = header;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const PropInput& in = entries[i];
    Entry& e = out[i];
    e.key = in.key;
    e.type = static_cast<std::uint8_t>(in.value.type());
    std::memset(e.pad, 0, sizeof(e.pad));
    if (IsPayload(in.value.type())) {
      const std::size_t length = PayloadBytes(in.value);
      WritePayload(in.value, reinterpret_cast<char*>(b) + offset);
      e.word = static_cast<std::uint64_t>(offset) | (static_cast<std::uint64_t>(length) << 32);
      offset += Align8(length);
    } else {
      e.word = InlineWord(in.value);
    }
  }
  return b;
}

}  // namespace

PropBlock* BuildPropBlock(std::vector<PropInput>& entries, base::MemoryAccount* account) {
  return Build(entries, [account](std::size_t n) { return account->Allocate(n); });
}

PropBlock* BuildPropBlock(std::vector<PropInput>& entries, MutationContext& ctx) {
  return Build(entries, [&ctx](std::size_t n) { return ctx.Allocate(n); });
}

static_assert(sizeof(PropBlock) == kPropBlockHeaderBytes);
// Validation keeps a block within Limits::max_property_bytes_per_element, at
// most kMaxPropertyBytesCeiling, so its count, data_bytes and every 32-bit
// offset and length in its entries fit.
static_assert(kMaxPropertyBytesCeiling <= 0xFFFFFFFFu);

std::size_t PropEntryBytes(const PropertyView& v) { return sizeof(Entry) + Align8(PayloadBytes(v)); }

std::size_t PropBlockBytes(const PropBlock* b) {
  return b == nullptr ? 0 : sizeof(PropBlock) + b->count * sizeof(Entry) + b->data_bytes;
}

std::uint32_t PropCount(const PropBlock* b) { return b == nullptr ? 0 : b->count; }

PropInput PropAt(const PropBlock* b, std::uint32_t i) {
  const Entry& e = Entries(b)[i];
  const char* base = reinterpret_cast<const char*>(b);
  auto offset = static_cast<std::uint32_t>(e.word);
  auto length = static_cast<std::uint32_t>(e.word >> 32);
  PropertyView v;
  switch (static_cast<ValueType>(e.type)) {
    case ValueType::kNull: break;
    case ValueType::kBool: v = PropertyView(e.word != 0); break;
    case ValueType::kInt64: v = PropertyView(static_cast<std::int64_t>(e.word)); break;
    case ValueType::kDouble: v = PropertyView(std::bit_cast<double>(e.word)); break;
    case ValueType::kString: v = PropertyView(std::string_view(base + offset, length)); break;
    case ValueType::kBytes:
      v = PropertyView(std::span<const std::byte>(reinterpret_cast<const std::byte*>(base + offset), length));
      break;
    case ValueType::kFloatVector:
      v = PropertyView(
          std::span<const float>(reinterpret_cast<const float*>(base + offset), length / sizeof(float)));
      break;
    case ValueType::kStringList:
      v = PropertyView(StringListView::Packed(
          std::span<const std::byte>(reinterpret_cast<const std::byte*>(base + offset), length)));
      break;
  }
  return PropInput{e.key, v};
}

std::optional<PropertyView> GetProperty(const PropBlock* b, std::uint32_t key) {
  if (b == nullptr) return std::nullopt;
  const Entry* first = Entries(b);
  const Entry* last = first + b->count;
  const Entry* it =
      std::lower_bound(first, last, key, [](const Entry& e, std::uint32_t k) { return e.key < k; });
  if (it == last || it->key != key) return std::nullopt;
  return PropAt(b, static_cast<std::uint32_t>(it - first)).value;
}

const PropEntry* FindEntrySorted(const PropBlock* b, std::uint32_t key) {
  const Entry* first = Entries(b);
  const Entry* last = first + b->count;
  const Entry* it =
      std::lower_bound(first, last, key, [](const Entry& e, std::uint32_t k) { return e.key < k; });
  return it != last && it->key == key ? it : nullptr;
}

PropBlock* WithChanges(const PropBlock* old, std::span<PropChange> changes, std::vector<PropInput>& scratch,
                       MutationContext& ctx, bool* changed) {
  for (std::size_t i = 0; i < changes.size(); ++i) changes[i].order = static_cast<std::uint32_t>(i);
  std::sort(changes.begin(), changes.end(), [](const PropChange& a, const PropChange& b) {
    return a.key != b.key ? a.key < b.key : a.order < b.order;
  });
  *changed = false;
  scratch.clear();
  const std::uint32_t n = PropCount(old);
  std::uint32_t i = 0;  // the next entry of `old`
  for (std::size_t c = 0; c < changes.size();) {
    const std::uint32_t key = changes[c].key;
    std::size_t last = c;
    while (last + 1 < changes.size() && changes[last + 1].key == key) ++last;
    for (; i < n && Entries(old)[i].key < key; ++i) scratch.push_back(PropAt(old, i));
    const bool present = i < n && Entries(old)[i].key == key;
    i += present;
    if (!changes[last].remove) {
      scratch.push_back(PropInput{key, changes[last].value});
      *changed = true;
    } else if (present) {
      *changed = true;
    }
    c = last + 1;
  }
  if (!*changed) return nullptr;
  for (; i < n; ++i) scratch.push_back(PropAt(old, i));
  return BuildPropBlock(scratch, ctx);
}

PropBlock* WithProperty(const PropBlock* old, std::uint32_t key, PropertyView value, MutationContext& ctx) {
  PropChange set{key, false, value};
  std::vector<PropInput> entries;
  bool changed;
  return WithChanges(old, {&set, 1}, entries, ctx, &changed);
}

PropBlock* WithoutProperty(const PropBlock* old, std::uint32_t key, MutationContext& ctx) {
  PropChange remove{key, true, PropertyView()};
  std::vector<PropInput> entries;
  bool changed;  // true: `key` is present
  return WithChanges(old, {&remove, 1}, entries, ctx, &changed);
}

bool SetPropertyInPlace(PropBlock* b, std::uint32_t key, PropertyView value) {
  if (b == nullptr) return false;
  Entry* first = Entries(b);
  Entry* last = first + b->count;
  Entry* it = std::lower_bound(first, last, key, [](const Entry& e, std::uint32_t k) { return e.key < k; });
  if (it == last || it->key != key) return false;
  if (IsPayload(value.type())) {
    // Reuse the old payload's room if the old value had one and the new
    // payload fits in it (room is the old length rounded up to 8).
    if (!IsPayload(static_cast<ValueType>(it->type))) return false;
    auto offset = static_cast<std::uint32_t>(it->word);
    auto room = Align8(static_cast<std::uint32_t>(it->word >> 32));
    const std::size_t length = PayloadBytes(value);
    if (length > room) return false;
    char* dst = reinterpret_cast<char*>(b) + offset;
    WritePayload(value, dst);
    std::memset(dst + length, 0, room - length);
    it->word = static_cast<std::uint64_t>(offset) | (static_cast<std::uint64_t>(length) << 32);
  } else {
    // An inline value; a payload the old value had is left unused (its
    // bytes stay counted in data_bytes until the block is rebuilt).
    it->word = InlineWord(value);
  }
  it->type = static_cast<std::uint8_t>(value.type());
  return true;
}

}  // namespace quiver::storage
