// What the index entries tests (index_entries_test.cc and its two review
// files) share: the graph options, the offsets of the golden ordered-index
// checkpoint's fields, loading edited bytes, and opening them beside the
// golden log of the same history.
#ifndef QUIVER_TESTS_INDEX_ENTRIES_FIXTURE_H_
#define QUIVER_TESTS_INDEX_ENTRIES_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "env/sim_file_system.h"
#include "format_test_util.h"
#include "graph_impl.h"
#include "quiver/quiver.h"

namespace quiver::entries_test {

// No automatic checkpoints, two loader threads.
inline Options NoAutomaticCheckpoints() {
  Options o;
  o.durable.checkpoint_on_close = false;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.io_threads = 2;
  return o;
}

// The name of the last checkpoint file in /db on `fs` (empty if none).
inline std::string CheckpointName(env::SimFileSystem& fs) {
  std::string found;
  const std::vector<std::string> names = fs.ListDir("/db").value();
  for (const std::string& name : names)
    if (name.rfind("checkpoint-", 0) == 0) found = name;
  return found;
}

// Offsets in tests/golden/checkpoint-ordered.qck (docs/checkpoint_format.md,
// "Worked example: index entries of an int64 key"): four Person vertices,
// born 1815, 1906, -384, 1815, and the ordered int64 index person_born,
// whose one kind 8 block holds (-384, v2), (1815, v0), (1815, v3), (1906, v1).
inline constexpr std::size_t kDefinitionKind = 0xa0;   // 2, ordered
inline constexpr std::size_t kDefinitionState = 0xa5;  // 1, ready
inline constexpr std::size_t kVertex1Type = 0xc9;      // 2, int64 (born 1906)
inline constexpr std::size_t kEntriesBlock = 0xec;     // the kind 8 block
inline constexpr std::size_t kEntriesIndex = 0xfe;     // 0
inline constexpr std::size_t kKeys = 0xff;             // 4 keys of 8 bytes
inline constexpr std::size_t kIds = 0x11f;             // 4 ids of 6 bytes
inline constexpr std::size_t kEndBlock = 0x137;        // the end block

// LoadCheckpoint of `bytes` (format_test::LoadCheckpointForTest).
inline Status Load(const std::string& bytes) {
  checkpoint::Header header;
  std::string dump;
  return format_test::LoadCheckpointForTest(format_test::AsBytes(bytes), &header, &dump);
}

// Opens `checkpoint` as checkpoint 4 beside the golden log of the same
// history (it starts at sequence 1, so a rejected checkpoint falls back to
// the log and loses nothing).
inline std::unique_ptr<Graph> OpenWithLog(env::SimFileSystem& fs, const std::string& checkpoint) {
  EXPECT_TRUE(fs.CreateDir("/db").ok());
  EXPECT_TRUE(fs.WriteFileForTest("/db/" + checkpoint::CheckpointFileName(4), checkpoint).ok());
  EXPECT_TRUE(
      fs.WriteFileForTest("/db/wal-00000000000000000001.log", format_test::ReadGoldenFile("wal-ordered.log"))
          .ok());
  auto g = GraphImpl::OpenDurable(NoAutomaticCheckpoints(), "/db", &fs);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : nullptr;
}

// The 8 key bytes an int64 index stores for `v` (sign bit flipped, big-endian).
inline std::string Int64Key(std::int64_t v) {
  std::uint64_t bits = static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, bits >>= 8) out[static_cast<std::size_t>(i)] = static_cast<char>(bits & 0xFF);
  return out;
}

// The 6 little-endian bytes of an id.
inline std::string Id48(std::uint64_t id) {
  std::string out(6, '\0');
  for (int i = 0; i < 6; ++i, id >>= 8) out[static_cast<std::size_t>(i)] = static_cast<char>(id & 0xFF);
  return out;
}

}  // namespace quiver::entries_test

#endif  // QUIVER_TESTS_INDEX_ENTRIES_FIXTURE_H_
