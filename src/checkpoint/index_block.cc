#include "checkpoint/index_block.h"

#include <limits>
#include <memory>
#include <string>

#include "base/strings.h"
#include "base/value_text.h"
#include "checkpoint/checkpoint_format.h"
#include "index/index_keys.h"

namespace quiver::checkpoint {
namespace {

constexpr std::uint8_t kAnyType = 0xFF;

// Not `Bad`: checkpoint_reader.cc has one, and a unity build
// (QUIVER_UNITY_LIBRARY) may compile both files as one.
Status BadDefinitions(std::string_view what) {
  return CorruptionError(base::StrCat("checkpoint: index definitions: ", what));
}

}  // namespace

std::vector<std::byte> EncodeIndexBlock(std::span<const index::PropertyIndex> indexes) {
  std::vector<std::byte> payload;
  base::ByteWriter w(&payload);
  w.PutVarint(0);
  w.PutVarint(indexes.size());
  for (const index::PropertyIndex& p : indexes) {
    const index::IndexDef& def = *p.def;
    w.PutString(def.name);
    w.PutU8(static_cast<std::uint8_t>(def.element));
    w.PutVarint(def.label_id);
    w.PutU8(static_cast<std::uint8_t>(def.kind));
    w.PutU8(def.type ? static_cast<std::uint8_t>(*def.type) : kAnyType);
    w.PutVarint(def.key_ids.size());
    for (std::uint32_t k : def.key_ids) w.PutVarint(k);
    w.PutVarint(def.declared);
    w.PutU8(p.state == IndexState::kReady ? 1 : 0);
  }
  return payload;
}

Status ReadIndexDef(base::ByteReader& r, std::uint32_t format_version, IndexDefRecord* def) {
  std::uint8_t element, kind, type, state;
  std::uint64_t keys;
  if (!r.GetString(&def->name) || !r.GetU8(&element) || !r.GetVarint(&def->label_id) || !r.GetU8(&kind) ||
      !r.GetU8(&type) || !r.GetVarint(&keys) || keys > r.remaining())
    return BadDefinitions("truncated");
  if (element > 1 || kind > 3 || (type != kAnyType && type > 6))
    return BadDefinitions("unknown element, kind or type");
  if (kind == static_cast<std::uint8_t>(IndexKind::kUniqueEndpoints) &&
      format_version < kFirstEndpointConstraintVersion)
    return BadDefinitions(base::StrCat(
        "index ", base::Quoted(def->name), " is an edge-endpoint constraint (kind 3) in a format version ",
        format_version, " checkpoint; that kind came with format version ", kFirstEndpointConstraintVersion));
  def->element = static_cast<ElementKind>(element);
  def->kind = static_cast<IndexKind>(kind);
  def->type = type == kAnyType ? std::nullopt : std::optional<ValueType>(static_cast<ValueType>(type));
  def->key_ids.clear();
  for (std::uint64_t k = 0; k < keys; ++k) {
    std::uint64_t key;
    if (!r.GetVarint(&key)) return BadDefinitions("truncated");
    def->key_ids.push_back(key);
  }
  if (!r.GetVarint(&def->declared) || !r.GetU8(&state) || state > 1)
    return BadDefinitions("truncated or unknown state");
  def->ready = state == 1;
  return Status::Ok();
}

Status DecodeIndexBlock(base::ByteReader& r, std::uint64_t count, std::uint32_t format_version,
                        storage::GraphRoots& g, storage::MutationContext& ctx) {
  index::Catalog* cat = index::OwnCatalog(g.catalog, ctx);
  IndexDefRecord record;
  for (std::uint64_t i = 0; i < count; ++i) {
    QUIVER_RETURN_IF_ERROR(ReadIndexDef(r, format_version, &record));
    auto def = std::make_shared<index::IndexDef>();
    def->name = std::string(record.name);
    def->element = record.element;
    const storage::InternTable* names = def->element == ElementKind::kVertex ? g.labels : g.types;
    if (record.label_id >= names->size()) return BadDefinitions("unknown label");
    def->label_id = static_cast<std::uint32_t>(record.label_id);
    def->label = std::string(names->Name(def->label_id));
    def->kind = record.kind;
    def->type = record.type;
    for (std::uint64_t key : record.key_ids) {
      if (key >= g.keys->size()) return BadDefinitions("unknown property key");
      def->key_ids.push_back(static_cast<std::uint32_t>(key));
      def->keys.emplace_back(g.keys->Name(def->key_ids.back()));
    }
    if (record.declared == 0 || record.declared > g.sequence)
      return BadDefinitions("declared after the checkpoint");
    def->declared = record.declared;
    const IndexSpec spec = def->Spec();
    if (!index::CheckSpec(spec, std::numeric_limits<std::size_t>::max()).ok())
      return BadDefinitions("invalid definition");
    if (cat->Find(def->name) != nullptr) return BadDefinitions("a name listed twice");
    def->key_width = index::KeyWidthFor(spec);
    index::PropertyIndex p;
    p.state = record.ready ? IndexState::kReady : IndexState::kBuilding;
    p.root.key_width = def->key_width;
    p.def = std::move(def);
    cat->AddIndex(std::move(p));
  }
  return Status::Ok();
}

}  // namespace quiver::checkpoint
