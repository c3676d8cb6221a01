// A block of an older checkpoint landing in a newer one: the disk lost the
// write of the newer block (or sent it elsewhere) and the space still holds
// what an older checkpoint wrote there, from a file alive or removed
// (SimFileSystem::LandStaleBytes). Every block's CRC is seeded with its own
// file's header and the file ends with a CRC over the header and every
// block's CRC (docs/checkpoint_format.md), so such a block is detected: the
// checkpoint is rejected and recovery falls back, never serving the stale
// data.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_format.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

struct BlockSpan {
  std::uint8_t kind = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;  // header and payload
};

std::uint32_t U32(const std::string& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

// The blocks of a checkpoint file, from its framing alone
// (docs/checkpoint_format.md): after `header_bytes`, up to the end block;
// format 2 files end with a 4-byte CRC after it.
std::vector<BlockSpan> Blocks(const std::string& file) {
  std::vector<BlockSpan> out;
  const std::uint32_t version = U32(file, 8);
  const std::size_t end = file.size() - (version >= 2 ? 4 : 0);
  for (std::size_t pos = U32(file, 12); pos + 16 <= end;) {
    const std::uint64_t length = 16 + std::uint64_t{U32(file, pos + 4)};
    out.push_back(BlockSpan{static_cast<std::uint8_t>(file[pos]), pos, length});
    pos += length;
  }
  return out;
}

constexpr std::uint8_t kVertices = 4;
const std::string kDir = "/db";

std::string CheckpointPath(SequenceNumber s) { return kDir + "/" + checkpoint::CheckpointFileName(s); }

// One vertex whose int property takes the values 1, 2, 3 (the same encoded
// size each time), with a checkpoint after each: checkpoints 1, 2, 3, whose
// blocks differ only in that value. The third checkpoint's cleanup removes
// the first (it is older than the previous one).
void Build(env::SimFileSystem& fs, const Options& o) {
  auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
  WriteBatch first;
  first.AddVertex("Item", {{"v", 1}, {"name", "steady"}});
  ASSERT_TRUE(g->Write(std::move(first)).ok());
  ASSERT_TRUE(g->Checkpoint().ok());
  for (int v = 2; v <= 3; ++v) {
    WriteBatch b;
    b.SetProperty(VertexId(0), "v", v);
    ASSERT_TRUE(g->Write(std::move(b)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
  }
}

// Opens and checks that the stale value is not served: either the graph
// holds the committed value 3 (having fallen back past the newest
// checkpoint), or Open refuses with Corruption.
void ExpectNoStaleData(env::SimFileSystem& fs, const Options& o) {
  auto g = GraphImpl::OpenDurable(o, kDir, &fs);
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), StatusCode::kCorruption) << g.status().ToString();
    return;
  }
  Snapshot s = (*g)->GetSnapshot();
  EXPECT_EQ(s.sequence(), 3u);
  std::optional<PropertyView> v = s.GetProperty(VertexId(0), "v");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v->as_int64(), 3) << "a block of an older checkpoint was served as the newest's";
  EXPECT_TRUE((*g)->GetOpenStats().used_previous_checkpoint);
}

Options TestOptions() {
  Options o;
  o.writer.spin_microseconds = 0;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  return o;
}

// The vertex block of `from` lands where the vertex block of `to` was
// written: same offset, same length (the files differ only in a value).
void LandVertexBlock(env::SimFileSystem& fs, const std::string& from, const std::string& from_bytes,
                     const std::string& to) {
  const std::string to_bytes = fs.ReadDurableForTest(to).value();
  BlockSpan a, b;
  for (const BlockSpan& s : Blocks(from_bytes))
    if (s.kind == kVertices) a = s;
  for (const BlockSpan& s : Blocks(to_bytes))
    if (s.kind == kVertices) b = s;
  ASSERT_EQ(a.kind, kVertices);
  ASSERT_EQ(b.kind, kVertices);
  ASSERT_EQ(a.length, b.length);
  ASSERT_NE(from_bytes.substr(a.offset, a.length), to_bytes.substr(b.offset, b.length));
  ASSERT_TRUE(fs.LandStaleBytes(from, a.offset, to, b.offset, a.length).ok());
}

// Regression: block CRCs covered only the block, so a block of an older
// checkpoint of the same graph, left in the space a lost write should have
// overwritten, passed every check and its stale elements were loaded as the
// newest checkpoint's.
TEST(CheckpointStaleBlockTest, BlockOfAnOlderLiveCheckpointIsDetected) {
  env::SimFileSystem fs;
  const Options o = TestOptions();
  Build(fs, o);
  const std::string older = CheckpointPath(2);
  LandVertexBlock(fs, older, fs.ReadDurableForTest(older).value(), CheckpointPath(3));
  ExpectNoStaleData(fs, o);
}

// The same with the block coming from a checkpoint that was removed: the
// disk reused its space for the newer file.
TEST(CheckpointStaleBlockTest, BlockOfARemovedCheckpointIsDetected) {
  env::SimFileSystem fs;
  const Options o = TestOptions();
  std::string removed_bytes;
  {
    // Checkpoint 1's bytes, read before the third checkpoint removes it.
    auto g = GraphImpl::OpenDurable(o, kDir, &fs).value();
    WriteBatch first;
    first.AddVertex("Item", {{"v", 1}, {"name", "steady"}});
    ASSERT_TRUE(g->Write(std::move(first)).ok());
    ASSERT_TRUE(g->Checkpoint().ok());
    removed_bytes = fs.ReadDurableForTest(CheckpointPath(1)).value();
    for (int v = 2; v <= 3; ++v) {
      WriteBatch b;
      b.SetProperty(VertexId(0), "v", v);
      ASSERT_TRUE(g->Write(std::move(b)).ok());
      ASSERT_TRUE(g->Checkpoint().ok());
    }
  }
  ASSERT_FALSE(fs.Exists(CheckpointPath(1)).value());
  LandVertexBlock(fs, CheckpointPath(1), removed_bytes, CheckpointPath(3));
  ExpectNoStaleData(fs, o);
}

}  // namespace
}  // namespace quiver
