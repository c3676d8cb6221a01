// Hostile checkpoints against the stored index entries (review, stop 45).
// Both tests failed before their fixes: variable keys are now hashed from
// the seed on (index_entries.h), and a non-finite double or float is
// malformed input to the value codec.
//
// Review of the checkpoint's stored index entries (format 5, kind 8
// blocks) after 4c603a9 / 78c985f: the entries of an index of
// variable-width keys are checked against the elements through
// EntriesDigest::Add(std::string_view key, id), which first reduces the key
// to std::hash<std::string_view>{}(key) and only then mixes in the
// process's random seed. std::hash is not seeded (libstdc++: _Hash_bytes,
// MurmurHash64A with the fixed seed 0xc70f6907), and its block step is a
// bijection, so a second key with the same std::hash is computed directly
// (no search): any seed then gives both entries the same digest term.
//
// index_entries.h promises "no edit of a file can be computed to keep its
// digest"; RELIABILITY.md 0.4/0.6 and the brief: a hostile checkpoint gives
// Corruption, never a wrong answer. Here the file loads and the index
// answers against the data (the element holding the value is not found).
// The same holds for the edge-endpoint constraint (16-byte keys, same path).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "index_entries_fixture.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

using namespace entries_test;  // NOLINT: the fixture's names

constexpr std::uint64_t TreeRevMul = 0xc6a4a7935bd1e995ULL;  // libstdc++ hash_bytes.cc
constexpr std::uint64_t TreeRevSeed = 0xc70f6907ULL;         // std::_Hash_impl's seed

std::uint64_t TreeRevShiftMix(std::uint64_t v) { return v ^ (v >> 47); }  // its own inverse

std::uint64_t TreeRevInverse(std::uint64_t a) {  // a odd: a^-1 mod 2^64 (Newton)
  std::uint64_t x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}

std::uint64_t TreeRevLoad(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// _Hash_bytes' state after the first `blocks` 8-byte blocks of `s`.
std::uint64_t TreeRevStateAfter(std::string_view s, std::size_t blocks) {
  std::uint64_t h = TreeRevSeed ^ (s.size() * TreeRevMul);
  for (std::size_t b = 0; b < blocks; ++b) {
    h ^= TreeRevShiftMix(TreeRevLoad(s.data() + 8 * b) * TreeRevMul) * TreeRevMul;
    h *= TreeRevMul;
  }
  return h;
}

// libstdc++'s std::_Hash_bytes(s, len, 0xc70f6907), i.e. std::hash<std::string_view>.
std::uint64_t TreeRevHashBytes(std::string_view s) {
  const std::size_t blocks = s.size() / 8;
  std::uint64_t h = TreeRevStateAfter(s, blocks);
  if ((s.size() & 7) != 0) {
    std::uint64_t data = 0;
    for (int n = static_cast<int>(s.size() & 7) - 1; n >= 0; --n)
      data = (data << 8) + static_cast<unsigned char>(s[blocks * 8 + static_cast<std::size_t>(n)]);
    h ^= data;
    h *= TreeRevMul;
  }
  h = TreeRevShiftMix(h) * TreeRevMul;
  return TreeRevShiftMix(h);
}

// A key of the same length as `k` (>= 24 bytes) with other bytes 8..23 and
// the same std::hash: block 1 is replaced at will, block 2 computed so that
// the state after it is unchanged.
std::string TreeRevCollidingKey(const std::string& k) {
  const std::uint64_t mul_inv = TreeRevInverse(TreeRevMul);
  std::string forged = k;
  std::memcpy(forged.data() + 8, "XXXXXXXX", 8);
  const std::uint64_t want = TreeRevStateAfter(k, 3) * mul_inv;  // state after block 1, xor block 2's data
  const std::uint64_t have = TreeRevStateAfter(forged, 2);
  const std::uint64_t data = want ^ have;
  const std::uint64_t block = TreeRevShiftMix(data * mul_inv) * mul_inv;
  std::memcpy(forged.data() + 16, &block, 8);
  return forged;
}

TEST(TreeReviewEntriesTest, AVariableKeyWithTheSameStdHashPassesTheDigestAndIsServed) {
  const std::string name = "abcdefghijklmnopqrstuvw";  // key: 0x05, 23 bytes, 00 00 = 26 bytes
  const std::string key = std::string("\x05", 1) + name + std::string(2, '\0');
  if (TreeRevHashBytes(key) != std::hash<std::string_view>{}(key))
    GTEST_SKIP() << "std::hash<std::string_view> is not libstdc++'s _Hash_bytes here";
  const std::string forged = TreeRevCollidingKey(key);
  ASSERT_NE(forged, key);
  ASSERT_EQ(std::hash<std::string_view>{}(forged), std::hash<std::string_view>{}(key));

  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs).value();
    ASSERT_TRUE(g->CreateIndex({.name = "person_name",
                                .label = "Person",
                                .keys = {"name"},
                                .kind = IndexKind::kExact,
                                .type = ValueType::kString})
                    .ok());
    WriteBatch b;
    b.AddVertex("Person", {{"name", name}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
    ASSERT_EQ(g->GetSnapshot().FindVertices("Person", "name", name).value(),
              std::vector<VertexId>{VertexId(0)});
  }
  const std::string file_name = CheckpointName(fs);
  ASSERT_FALSE(file_name.empty());
  std::string file = fs.ReadFileForTest("/db/" + file_name).value();
  int replaced = 0;
  format_test::ForEachCheckpointBlock(file, [&](std::size_t pos, std::uint32_t length) {
    if (static_cast<std::uint8_t>(file[pos]) != 8) return;
    const std::size_t body = pos + checkpoint::kBlockHeaderBytes;
    const std::size_t at = file.find(key, body);
    ASSERT_NE(at, std::string::npos);
    ASSERT_LE(at + key.size(), body + length);
    file.replace(at, key.size(), forged);  // same length: the block keeps its size
    ++replaced;
  });
  ASSERT_EQ(replaced, 1);
  file = format_test::ResealCheckpoint(file);

  const Status s = Load(file);
  EXPECT_EQ(s.code(), StatusCode::kCorruption)
      << "a stored entry whose key is not the element's (same std::hash) loads: " << s.ToString();

  // End to end: reopened from the forged checkpoint, the index must not
  // answer against the data.
  ASSERT_TRUE(fs.WriteFileForTest("/db/" + file_name, file).ok());
  auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs);
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
    return;
  }
  EXPECT_EQ((*g)->GetSnapshot().FindVertices("Person", "name", name).value(),
            std::vector<VertexId>{VertexId(0)})
      << "the vertex holding the name is not found: the forged entry was served";
}

// The NaN rule for 8-byte keys, against a hostile checkpoint.
// DESIGN.md ("NaN is rejected"), include/quiver/value.h and key_codec.h
// ("doubles in the graph are finite: NaN and ±Inf never reach an index"):
// the write path refuses them (batch_processor.cc CheckValue), but the
// checkpoint reader takes any 8 bytes as a double (wal/value_codec.cc
// DecodeValue: no finiteness check) and, with format 5, stores whatever
// key the kind 8 block gives for it. A file whose vertex holds NaN and
// whose stored entry holds NaN's ordered bits (0xFFF8...: above +Inf)
// passes every check (the digest agrees: both sides say NaN) and loads;
// the ordered index then lists the vertex in x >= 2.0. RELIABILITY.md 0.4
// and 0.6: a hostile file is Corruption, never a wrong answer.

std::string TreeRevLittleEndian(std::uint64_t v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);
  return out;
}

std::string TreeRevBigEndian(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xFF);
  return out;
}

TEST(TreeReviewNanTest, ANanDoubleAndItsStoredKeyInACheckpointAreCorruption) {
  env::SimFileSystem fs;
  {
    auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs).value();
    ASSERT_TRUE(g->CreateIndex({.name = "p_x",
                                .label = "P",
                                .keys = {"x"},
                                .kind = IndexKind::kOrdered,
                                .type = ValueType::kDouble})
                    .ok());
    WriteBatch b;
    b.AddVertex("P", {{"x", 1.5}});
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
  }
  const std::string file_name = CheckpointName(fs);
  ASSERT_FALSE(file_name.empty());
  std::string file = fs.ReadFileForTest("/db/" + file_name).value();

  constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
  constexpr std::uint64_t kOneAndAHalf = 0x3FF8000000000000ULL;  // 1.5
  constexpr std::uint64_t kQuietNan = 0x7FF8000000000000ULL;     // +NaN
  // The element's value: type byte 3 (double), then the IEEE bits, little-endian.
  const std::string value = "\x03" + TreeRevLittleEndian(kOneAndAHalf);
  const std::size_t at_value = file.find(value);
  ASSERT_NE(at_value, std::string::npos);
  ASSERT_EQ(file.find(value, at_value + 1), std::string::npos);
  file.replace(at_value + 1, 8, TreeRevLittleEndian(kQuietNan));
  // The stored entry's key: the ordered bits (sign flipped for >= +0), big-endian.
  int replaced = 0;
  format_test::ForEachCheckpointBlock(file, [&](std::size_t pos, std::uint32_t length) {
    if (static_cast<std::uint8_t>(file[pos]) != 8) return;
    const std::size_t body = pos + checkpoint::kBlockHeaderBytes;
    const std::size_t at = file.find(TreeRevBigEndian(kOneAndAHalf ^ kSign), body);
    ASSERT_NE(at, std::string::npos);
    ASSERT_LE(at + 8, body + length);
    file.replace(at, 8, TreeRevBigEndian(kQuietNan ^ kSign));
    ++replaced;
  });
  ASSERT_EQ(replaced, 1);
  file = format_test::ResealCheckpoint(file);

  const Status s = Load(file);
  EXPECT_EQ(s.code(), StatusCode::kCorruption)
      << "a NaN property value (and its index key) loads: " << s.ToString();

  ASSERT_TRUE(fs.WriteFileForTest("/db/" + file_name, file).ok());
  auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs);
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
    return;
  }
  IndexRange r;
  r.lo = RangeBound{2.0};
  EXPECT_EQ((*g)->GetSnapshot().VerticesInRange("P", "x", r).value(), std::vector<VertexId>{})
      << "a vertex whose x is NaN is listed in x >= 2.0";
}

}  // namespace
}  // namespace quiver
