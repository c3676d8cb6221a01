// MakeCommitSpec draws everything from one generator seeded by
// (seed, commit id): the same pair always yields the same commit, on any
// machine (env::Rng, unlike std distributions, is specified bit for bit).
#include "commit_spec.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "env/random.h"

namespace quiver::crashloop {
namespace {

constexpr std::array<std::string_view, 3> kVertexLabels = {"Person", "City", "Thing"};
constexpr std::array<std::string_view, 3> kEdgeTypes = {"KNOWS", "LIKES", "NEAR"};
constexpr std::array<std::string_view, 6> kRandomKeys = {"a", "b", "name", "score", "vec", "blob"};
// Multi-byte UTF-8 mixed into strings: 2, 3 and 4-byte forms.
constexpr std::array<std::string_view, 6> kStringPieces = {
    "x", "Qz", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", " "};
// One marker in this many carries a value larger than one WAL fragment
// (wal::kMaxFragment), so groups are also split into fragments.
constexpr std::uint64_t kBigValueOneIn = 4000;
constexpr std::size_t kBigValueBytes = (std::size_t{1} << 20) + 4096;

std::string RandomString(env::Rng& rng, std::size_t pieces) {
  std::string s;
  for (std::size_t i = 0; i < pieces; ++i) s += kStringPieces[rng.Uniform(kStringPieces.size())];
  return s;
}

Bytes RandomBytes(env::Rng& rng, std::size_t n) {
  Bytes b(n);
  for (std::byte& x : b) x = static_cast<std::byte>(rng.Next());
  return b;
}

// Any finite double, subnormals and -0.0 included (NaN and Inf are rejected
// by the engine, so they are folded to a plain value).
double RandomDouble(env::Rng& rng) {
  double d = std::bit_cast<double>(rng.Next());
  return std::isfinite(d) ? d : 0.5;
}

float RandomFloat(env::Rng& rng) {
  float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng.Next()));
  return std::isfinite(f) ? f : -1.25f;
}

PropertyValue RandomValue(env::Rng& rng) {
  switch (rng.Uniform(8)) {
    case 0: return PropertyValue();
    case 1: return PropertyValue(rng.OneIn(2));
    case 2: return PropertyValue(static_cast<std::int64_t>(rng.Next()));
    case 3: return PropertyValue(RandomDouble(rng));
    case 4: return PropertyValue(RandomString(rng, rng.Uniform(24)));
    case 5: return PropertyValue(RandomBytes(rng, rng.Uniform(48)));
    case 6: {
      FloatVector v(rng.Uniform(12));
      for (float& f : v) f = RandomFloat(rng);
      return PropertyValue(std::move(v));
    }
    default: {
      StringList list(rng.Uniform(5));
      for (std::string& e : list) e = RandomString(rng, rng.Uniform(12));
      return PropertyValue(std::move(list));
    }
  }
}

// commit and idx, then up to three distinct random keys.
std::vector<Property> ElementProperties(env::Rng& rng, std::uint64_t id, std::uint32_t position) {
  std::vector<Property> props = {{std::string(kCommitKey), static_cast<std::int64_t>(id)},
                                 {std::string(kIdxKey), static_cast<std::int64_t>(position)}};
  std::uint64_t chosen = 0;  // bit i: kRandomKeys[i] used
  for (std::uint64_t n = rng.Uniform(4); n > 0; --n) {
    std::uint64_t k = rng.Uniform(kRandomKeys.size());
    if ((chosen >> k) & 1) continue;
    chosen |= std::uint64_t{1} << k;
    props.push_back({std::string(kRandomKeys[k]), RandomValue(rng)});
  }
  return props;
}

// Mostly small commits, sometimes large ones (multi-KiB WAL records).
std::uint32_t CommitCount(env::Rng& rng) {
  if (rng.OneIn(50)) return 50 + static_cast<std::uint32_t>(rng.Uniform(250));
  return 1 + static_cast<std::uint32_t>(rng.Uniform(16));
}

std::vector<Property> MarkerProperties(env::Rng& rng, std::uint64_t id, std::uint32_t count) {
  std::vector<Property> props = {{std::string(kIdKey), static_cast<std::int64_t>(id)},
                                 {std::string(kCountKey), static_cast<std::int64_t>(count)}};
  if (rng.OneIn(10)) props.push_back({"pad", RandomString(rng, 100 + rng.Uniform(2000))});
  if (rng.OneIn(kBigValueOneIn)) props.push_back({"big", RandomBytes(rng, kBigValueBytes)});
  return props;
}

// Upserts and expectations come from a generator of their own, so the
// elements of a commit are what they were before commits had them.
constexpr std::uint64_t kUpsertStream = 0x5570736572747321ull;

void AddUpsertsAndExpectation(std::uint64_t seed, CommitSpec* spec) {
  env::Rng rng = env::Rng::Derive(seed ^ kUpsertStream, spec->id);
  // Half the commits upsert, a few of them the same key twice.
  const std::uint64_t n = rng.OneIn(2) ? 0 : 1 + rng.Uniform(3);
  for (std::uint64_t i = 0; i < n; ++i) {
    UpsertSpec u;
    u.k = static_cast<std::int64_t>(rng.Uniform(kKeySpace));
    if (i > 0 && rng.OneIn(4)) u.k = spec->upserts[i - 1].k;
    u.properties.push_back({std::string(kLastKey), static_cast<std::int64_t>(spec->id)});
    if (rng.OneIn(2)) u.properties.push_back({"val", RandomValue(rng)});
    if (rng.OneIn(3)) u.properties.push_back({"tag", RandomString(rng, 1 + rng.Uniform(6))});
    u.mode = rng.OneIn(4) ? UpsertMode::kReplace : UpsertMode::kMerge;
    spec->upserts.push_back(std::move(u));
  }
  const std::uint64_t e = rng.Uniform(16);
  spec->expectation = e < 2 ? Expectation::kHolds : e < 3 ? Expectation::kFails : Expectation::kNone;
}

}  // namespace

CommitSpec MakeCommitSpec(std::uint64_t seed, std::uint64_t commit_id) {
  env::Rng rng = env::Rng::Derive(seed, commit_id);
  CommitSpec spec;
  spec.id = commit_id;
  const std::uint32_t count = CommitCount(rng);
  spec.marker_properties = MarkerProperties(rng, commit_id, count);
  std::vector<std::uint32_t> vertex_positions = {0};  // the marker
  for (std::uint32_t pos = 1; pos < count; ++pos) {
    ElementSpec e;
    e.is_edge = rng.Uniform(5) < 2;
    if (e.is_edge) {
      e.name = kEdgeTypes[rng.Uniform(kEdgeTypes.size())];
      e.source = vertex_positions[rng.Uniform(vertex_positions.size())];
      e.target = vertex_positions[rng.Uniform(vertex_positions.size())];
    } else {
      e.name = kVertexLabels[rng.Uniform(kVertexLabels.size())];
      vertex_positions.push_back(pos);
    }
    e.properties = ElementProperties(rng, commit_id, pos);
    spec.elements.push_back(std::move(e));
  }
  AddUpsertsAndExpectation(seed, &spec);
  return spec;
}

WriteBatch BuildBatch(const CommitSpec& spec) {
  WriteBatch batch;
  // handles[pos]: the NewVertex of the vertex at position pos.
  std::vector<NewVertex> handles(spec.count());
  handles[0] = batch.AddVertex(kMarkerLabel, spec.marker_properties);
  for (const UpsertSpec& u : spec.upserts) {
    const Property key[] = {{std::string(kKeyKey), u.k}};
    batch.UpsertVertex(kKeyLabel, key, u.properties, u.mode);
  }
  for (std::size_t i = 0; i < spec.elements.size(); ++i) {
    const ElementSpec& e = spec.elements[i];
    if (e.is_edge) {
      batch.AddEdge(e.name, handles[e.source], handles[e.target], e.properties);
    } else {
      handles[i + 1] = batch.AddVertex(e.name, e.properties);
    }
  }
  if (spec.expectation != Expectation::kNone) {
    batch.ExpectMissing(VertexId(kFarVertex));
    batch.ExpectKeyFree(kKeyLabel, {{std::string(kKeyKey), kFreeKey}});
    if (spec.expectation == Expectation::kFails) batch.ExpectExists(VertexId(kFarVertex));
  }
  return batch;
}

}  // namespace quiver::crashloop
