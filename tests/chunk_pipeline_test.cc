// The checkpoint's chunk pipeline: chunks are written in order, and with a
// worker nice value every chunk is encoded on a worker thread running that
// many nice steps below the caller, while the caller keeps its priority.
#include "checkpoint/chunk_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <new>
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

// Review: with niced workers the caller never encodes, so an error or an
// exception on a worker is the only thing that can end the run. Every chunk
// index, as an encoder failure, a std::bad_alloc in the encoder and a write
// failure, with one worker and several, and a window of one: Run returns the
// error (no hang) and writes nothing past it.
TEST(ChunkPipelineTest, NicedWorkersReportEveryFailureAndNeverHang) {
  constexpr std::size_t kCount = 12;
  enum class How { kEncodeError, kEncodeBadAlloc, kWriteError };
  for (How how : {How::kEncodeError, How::kEncodeBadAlloc, How::kWriteError})
    for (std::uint32_t threads : {1u, 3u})
      for (std::size_t window : {std::size_t{1}, std::size_t{4}})
        for (std::size_t at = 0; at < kCount; ++at) {
          SCOPED_TRACE("how " + std::to_string(static_cast<int>(how)) + " threads " +
                       std::to_string(threads) + " window " + std::to_string(window) + " at " +
                       std::to_string(at));
          std::size_t written = 0;
          ChunkPipeline pipeline(
              kCount, threads, window,
              [&](std::size_t index, EncodedChunk* out) -> Status {
                if (index == at && how == How::kEncodeError) return IOError("injected encode");
                if (index == at && how == How::kEncodeBadAlloc) throw std::bad_alloc();
                out->blocks.clear();
                out->bytes.assign(1, static_cast<std::byte>(index));
                return Status::Ok();
              },
              [&](const EncodedChunk& chunk) -> Status {
                if (static_cast<std::size_t>(chunk.bytes[0]) == at && how == How::kWriteError)
                  return IOError("injected write");
                EXPECT_EQ(static_cast<std::size_t>(chunk.bytes[0]), written);
                ++written;
                return Status::Ok();
              },
              /*worker_nice=*/3);
          const Status s = pipeline.Run();
          ASSERT_FALSE(s.ok());
          EXPECT_EQ(s.code(),
                    how == How::kEncodeBadAlloc ? StatusCode::kResourceExhausted : StatusCode::kIOError)
              << s.ToString();
          EXPECT_LE(written, at);
        }
}

// Review: no chunks, one worker, a window of one, and more workers than
// chunks, all with niced workers.
TEST(ChunkPipelineTest, NicedEdgeCases) {
  EXPECT_TRUE(RunPipeline(/*count=*/0, /*threads=*/1, /*worker_nice=*/19).status.ok());
  EXPECT_TRUE(RunPipeline(/*count=*/0, /*threads=*/8, /*worker_nice=*/1).status.ok());
  const PipelineRun one = RunPipeline(/*count=*/30, /*threads=*/1, /*worker_nice=*/19);
  ASSERT_TRUE(one.status.ok()) << one.status.ToString();
  ASSERT_EQ(one.written.size(), 30u);
  const PipelineRun many = RunPipeline(/*count=*/3, /*threads=*/16, /*worker_nice=*/1);
  ASSERT_TRUE(many.status.ok()) << many.status.ToString();
  ASSERT_EQ(many.written.size(), 3u);
  for (std::size_t i = 0; i < many.written.size(); ++i) EXPECT_EQ(many.written[i], i);
}

// Review: the test above checks the workers' nice value against
// min(19, caller + 5), which holds with no lowering at all when the caller
// already runs at 19 (the project runs its tests under `nice -n 19`): there
// it proves nothing, and says so instead of passing.
TEST(ChunkPipelineTest, NicedWorkersRunBelowTheCaller) {
  const int before = base::ThisThreadNice();
#if !defined(__linux__)
  GTEST_SKIP() << "nice values are Linux only";
#endif
  if (before >= 19) GTEST_SKIP() << "the caller already runs at nice 19: no thread can run below it";
  const PipelineRun run = RunPipeline(/*count=*/20, /*threads=*/2, /*worker_nice=*/5);
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  for (const Encoded& e : run.encoded) EXPECT_GT(e.nice, before);
}

}  // namespace
}  // namespace quiver::checkpoint
