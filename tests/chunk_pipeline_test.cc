// The checkpoint's chunk pipeline: chunks are written in order, and with a
// worker nice value every chunk is encoded on a worker thread running that
// many nice steps below the caller, while the caller keeps its priority.
#include "checkpoint/chunk_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "base/parallel.h"

namespace quiver::checkpoint {
namespace {

struct Encoded {
  std::thread::id thread;
  int nice;
};

struct PipelineRun {
  Status status;
  std::vector<Encoded> encoded;      // one per chunk, by index
  std::vector<std::size_t> written;  // chunk indexes in write order
  std::vector<std::thread::id> writers;
};

PipelineRun RunPipeline(std::size_t count, std::uint32_t threads, std::uint32_t worker_nice) {
  PipelineRun run;
  run.encoded.resize(count);
  std::mutex mu;
  ChunkPipeline pipeline(
      count, threads, /*window=*/4,
      [&](std::size_t index, EncodedChunk* out) {
        out->blocks.clear();
        out->bytes.assign(1, static_cast<std::byte>(index));
        std::lock_guard<std::mutex> lock(mu);
        run.encoded[index] = {std::this_thread::get_id(), base::ThisThreadNice()};
        return Status::Ok();
      },
      [&](const EncodedChunk& chunk) {
        run.written.push_back(static_cast<std::size_t>(chunk.bytes[0]));
        run.writers.push_back(std::this_thread::get_id());
        return Status::Ok();
      },
      worker_nice);
  run.status = pipeline.Run();
  return run;
}

TEST(ChunkPipelineTest, NicedWorkersEncodeEveryChunkAndTheCallerKeepsItsPriority) {
  const int before = base::ThisThreadNice();
  const PipelineRun run = RunPipeline(/*count=*/200, /*threads=*/2, /*worker_nice=*/5);
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(base::ThisThreadNice(), before);
  for (std::size_t i = 0; i < run.written.size(); ++i) {
    EXPECT_EQ(run.written[i], i);
    EXPECT_EQ(run.writers[i], std::this_thread::get_id());
  }
  ASSERT_EQ(run.written.size(), 200u);
  for (const Encoded& e : run.encoded) {
    EXPECT_NE(e.thread, std::this_thread::get_id());
#if defined(__linux__)
    EXPECT_EQ(e.nice, std::min(19, before + 5));
#endif
  }
}

TEST(ChunkPipelineTest, WithoutANiceValueOneThreadDoesEverything) {
  const int before = base::ThisThreadNice();
  const PipelineRun run = RunPipeline(/*count=*/50, /*threads=*/1, /*worker_nice=*/0);
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  ASSERT_EQ(run.written.size(), 50u);
  for (std::size_t i = 0; i < run.written.size(); ++i) EXPECT_EQ(run.written[i], i);
  for (const Encoded& e : run.encoded) {
    EXPECT_EQ(e.thread, std::this_thread::get_id());
    EXPECT_EQ(e.nice, before);
  }
}

}  // namespace
}  // namespace quiver::checkpoint
