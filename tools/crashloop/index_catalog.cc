// The catalog check; the answers are index_oracle.h's (tests/).
#include "index_catalog.h"

#include <utility>

#include "index_oracle.h"

namespace quiver::crashloop {

const std::vector<IndexSpec>& IndexCatalog() {
  using enum IndexKind;
  static const std::vector<IndexSpec> catalog = {
      {.name = std::string(kKeyIndex),
       .label = "Key",
       .keys = {"k"},
       .kind = kUnique,
       .type = ValueType::kInt64},
      {.name = "marker_id", .label = "commit", .keys = {"id"}, .kind = kUnique, .type = ValueType::kInt64},
      {.name = "marker_count",
       .label = "commit",
       .keys = {"count"},
       .kind = kOrdered,
       .type = ValueType::kInt64},
      {.name = "key_last", .label = "Key", .keys = {"last"}, .kind = kOrdered, .type = ValueType::kInt64},
      {.name = "person_name", .label = "Person", .keys = {"name"}, .kind = kOrdered},
      {.name = "thing_commit_idx",
       .label = "Thing",
       .keys = {"commit", "idx"},
       .kind = kUnique,
       .type = ValueType::kInt64},
      {.name = "city_a_b", .label = "City", .keys = {"a", "b"}, .kind = kExact},
      {.name = "likes_idx",
       .element = ElementKind::kEdge,
       .label = "LIKES",
       .keys = {"idx"},
       .kind = kOrdered,
       .type = ValueType::kInt64},
      {.name = "knows_score",
       .element = ElementKind::kEdge,
       .label = "KNOWS",
       .keys = {"score"},
       .kind = kExact},
  };
  return catalog;
}

const IndexSpec* FindCatalogSpec(std::string_view name) {
  for (const IndexSpec& s : IndexCatalog())
    if (s.name == name) return &s;
  return nullptr;
}

bool SameSpec(const IndexSpec& a, const IndexSpec& b) {
  return a.name == b.name && a.element == b.element && a.label == b.label && a.keys == b.keys &&
         a.kind == b.kind && a.type == b.type;
}

IndexCheck CheckIndexes(const Snapshot& snapshot, bool corrupt_expected) {
  IndexCheck out;
  for (const IndexInfo& info : snapshot.Indexes()) {
    const IndexSpec* want = FindCatalogSpec(info.spec.name);
    ++out.checks;
    if (want == nullptr || !SameSpec(*want, info.spec)) {
      ++out.mismatches;
      out.messages.push_back("index " + info.spec.name + ": is not the catalog's spec of that name");
    }
  }
  test::IndexOracleResult r = test::CheckIndexAnswers(snapshot, corrupt_expected);
  out.checks += r.checks;
  out.mismatches += r.mismatches;
  for (std::string& m : r.messages) out.messages.push_back(std::move(m));
  return out;
}

}  // namespace quiver::crashloop
