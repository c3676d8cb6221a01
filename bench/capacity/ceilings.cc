#include "ceilings.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "base/memory.h"
#include "graphs.h"
#include "timing.h"

namespace quiver::capacity {
namespace {

constexpr std::uint64_t kAppendBytes = 100;
constexpr std::uint64_t kPreallocateBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kWriteBlockBytes = std::uint64_t{1} << 20;
// The overwrite ceiling: one WAL page (format 3 pads every commit group to 4 KiB) per write, into a
// file written full of zeros first. 64 MiB is 16,384 writes: more than 1.5 s (quick) or 5 s (full)
// of fdatasyncs at up to about 3,000/s; a faster device ends the loop early at the file's end, and
// `seconds` and `fdatasyncs` say how long it ran.
constexpr std::uint64_t kPageBytes = 4096;
constexpr std::uint64_t kZeroFillBytes = std::uint64_t{64} << 20;
// The stream beside the overwrites (MeasureOverwriteBesideWrites) writes as a checkpoint does: the
// write-back of every 512 KiB is started, and the step before it waited for (the checkpoint
// writer's write-back step); the file starts again from 0 past 256 MiB.
constexpr std::uint64_t kStreamStepBytes = std::uint64_t{512} << 10;
constexpr std::uint64_t kStreamFileBytes = std::uint64_t{256} << 20;

std::string Errno(const char* what) { return std::string(what) + " failed: " + std::strerror(errno); }

double MegabytesPerSecond(double bytes, double seconds) { return bytes / seconds / 1e6; }

// Runs fn(thread_index) on `threads` threads at once; returns the wall time in seconds.
template <typename Fn>
double TimeThreads(int threads, Fn&& fn) {
  const std::uint64_t t0 = NowNs();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&fn, t] { fn(t); });
  fn(0);
  for (std::thread& t : pool) t.join();
  return SecondsSince(t0);
}

// One synced-write ceiling: how its file is set up and what each timed write is. Both write at
// increasing offsets, each write followed by fdatasync, until the time is spent or the file is.
struct SyncedWrites {
  const char* file_name;
  std::uint64_t write_bytes;  // per write; the offset advances by as much
  std::uint64_t file_bytes;   // space set up before the timed loop; the loop stops at its end
  // false: fallocate(FALLOC_FL_KEEP_SIZE) the space, so each write extends the file's size (and its
  // fdatasync flushes that metadata). true: write the file full of zeros and fdatasync it, so each
  // write lands inside the file's size in blocks already written (its fdatasync flushes data only).
  bool zero_fill;
  // true: time the writes twice, half the seconds each: once with the rest of the process idle,
  // once with a second thread spinning on another core, and report the faster pass. On some
  // virtual machines an fdatasync returns sooner while a core is busy (an idle vCPU is woken late:
  // 4 ms per sync idle against well under 1 ms with a spinner, seen on the CI machine kind), and
  // an engine whose waiting producer spins gets the faster figure, so only the faster pass bounds
  // it. Needs 2 cores; with one, only the idle pass runs.
  bool spin_pass;
  // Above 0: a second thread streams a file at this rate, as a checkpoint writes, while the timed
  // writes run (StreamWrites).
  double stream_bytes_per_second = 0;
};

// Writes `path` from offset 0 at `bytes_per_second` until `stop`, starting the write-back of every
// kStreamStepBytes and waiting for the step before (sync_file_range), as the checkpoint writer
// does. Returns the bytes written; sets `why` if a call failed.
std::uint64_t StreamWrites(const std::string& path, double bytes_per_second, const std::atomic<bool>& stop,
                           std::string* why, double* seconds) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *why = Errno("open of the stream file");
    return 0;
  }
  std::vector<char> block(kStreamStepBytes);
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 131 + 7);
  const std::uint64_t start = NowNs();
  std::uint64_t total = 0, offset = 0, waited = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(block.size())) {
      *why = Errno("pwrite of the stream");
      break;
    }
    // Start this step's write-back, then wait for the previous step's.
    if (::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(block.size()),
                          SYNC_FILE_RANGE_WRITE) != 0 ||
        (offset > waited &&
         ::sync_file_range(
             fd, static_cast<off_t>(waited), static_cast<off_t>(offset - waited),
             SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0)) {
      *why = Errno("sync_file_range of the stream");
      break;
    }
    waited = offset;
    offset += block.size();
    total += block.size();
    if (offset >= kStreamFileBytes) {
      ::fdatasync(fd);
      offset = waited = 0;
    }
    // Hold the rate: sleep until this many bytes are due.
    const double due_s = static_cast<double>(total) / bytes_per_second;
    while (!stop.load(std::memory_order_relaxed) && SecondsSince(start) < due_s)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  *seconds = SecondsSince(start);
  ::close(fd);
  ::unlink(path.c_str());
  return total;
}

// Writes `bytes` zeros to `fd` from its current offset; "" or why it failed.
std::string WriteZeros(int fd, std::uint64_t bytes) {
  const std::vector<char> zeros(kWriteBlockBytes, 0);
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t n = std::min<std::uint64_t>(zeros.size(), bytes - done);
    const ssize_t w = ::write(fd, zeros.data(), n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Errno("write of the zero fill");
    done += static_cast<std::uint64_t>(w);
  }
  return "";
}

void SetNotMeasured(Json& j, const std::string& reason) {
  // The counts the schema requires, when nothing was timed at all.
  if (!j.contains("seconds")) j["seconds"] = 0.0;
  if (!j.contains("fdatasyncs")) j["fdatasyncs"] = 0;
  for (const char* k : {"fdatasyncsPerSecond", "latencyP50Ns", "latencyP99Ns", "latencyMaxNs"})
    j[k] = NotMeasured(reason);
}

// Fills `j` (which already names the ceiling's sizes) with the rate and latencies of `w`.
void MeasureSyncedWrites(const std::string& data_dir, double seconds, const SyncedWrites& w, Json& j) {
  const std::string path = data_dir + "/" + w.file_name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    SetNotMeasured(j, Errno("open"));
    return;
  }
  std::string why;
  if (w.zero_fill) {
    // Without the zeros the writes would allocate blocks and grow the size: a different ceiling.
    std::string fatal = WriteZeros(fd, w.file_bytes);
    if (fatal.empty() && ::fdatasync(fd) != 0) fatal = Errno("fdatasync of the zero fill");
    if (!fatal.empty()) {
      ::close(fd);
      ::unlink(path.c_str());
      SetNotMeasured(j, fatal);
      return;
    }
  } else {
    // Without the reservation the appends still run (allocating as they go); the reason is kept
    // for the case that nothing completes.
    if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(w.file_bytes)) != 0)
      why = Errno("fallocate");
    ::fdatasync(fd);
  }
  const std::vector<char> record(w.write_bytes, 'q');
  std::uint64_t offset = 0;
  // One timed pass from `offset` on; its latencies and wall time.
  auto pass = [&](double pass_seconds, std::vector<std::uint64_t>* latencies) {
    const std::uint64_t start = NowNs();
    while (why.empty() && SecondsSince(start) < pass_seconds && offset + w.write_bytes <= w.file_bytes) {
      const std::uint64_t t0 = NowNs();
      if (::pwrite(fd, record.data(), record.size(), static_cast<off_t>(offset)) !=
              static_cast<ssize_t>(w.write_bytes) ||
          ::fdatasync(fd) != 0) {
        why = Errno("pwrite/fdatasync");
        break;
      }
      latencies->push_back(NowNs() - t0);
      offset += w.write_bytes;
    }
    return SecondsSince(start);
  };
  const bool spin = w.spin_pass && std::thread::hardware_concurrency() >= 2;
  std::vector<std::uint64_t> latencies, spinning_latencies;
  std::atomic<bool> stop_stream{false};
  std::uint64_t streamed = 0;
  double stream_seconds = 0;
  std::string stream_why;
  std::thread streamer;
  if (w.stream_bytes_per_second > 0)
    streamer = std::thread([&] {
      streamed = StreamWrites(data_dir + "/ceiling-stream.dat", w.stream_bytes_per_second, stop_stream,
                              &stream_why, &stream_seconds);
    });
  double elapsed = pass(spin ? seconds / 2 : seconds, &latencies);
  if (streamer.joinable()) {
    stop_stream.store(true, std::memory_order_relaxed);
    streamer.join();
    j["streamMegabytesPerSecond"] = stream_seconds > 0
                                        ? Positive(static_cast<double>(streamed) / 1e6 / stream_seconds,
                                                   stream_why.empty() ? "nothing streamed" : stream_why)
                                        : NotMeasured(stream_why.empty() ? "no time elapsed" : stream_why);
    // Syncs timed beside a stream that broke off were not beside the load.
    if (!stream_why.empty()) {
      latencies.clear();
      why = "the stream beside the writes failed: " + stream_why;
    }
  }
  if (spin) {
    std::atomic<bool> stop{false};
    std::thread spinner([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
    const double spinning_elapsed = pass(seconds / 2, &spinning_latencies);
    stop.store(true, std::memory_order_relaxed);
    spinner.join();
    const auto rate = [](const std::vector<std::uint64_t>& l, double s) {
      return s > 0 ? static_cast<double>(l.size()) / s : 0.0;
    };
    const double idle_rate = rate(latencies, elapsed);
    const double spinning_rate = rate(spinning_latencies, spinning_elapsed);
    j["fdatasyncsPerSecondIdle"] = idle_rate;
    j["fdatasyncsPerSecondSpinning"] = spinning_rate;
    if (spinning_rate > idle_rate) {
      latencies.swap(spinning_latencies);
      elapsed = spinning_elapsed;
    }
  }
  ::close(fd);
  ::unlink(path.c_str());
  j["seconds"] = elapsed;
  j["fdatasyncs"] = latencies.size();
  if (latencies.empty()) {
    SetNotMeasured(j, why.empty() ? "no write completed" : why);
    return;
  }
  j["fdatasyncsPerSecond"] = Positive(static_cast<double>(latencies.size()) / elapsed, "no time elapsed");
  j["latencyP50Ns"] = Positive(static_cast<double>(Quantile(latencies, 0.5)), "below the clock's resolution");
  j["latencyP99Ns"] =
      Positive(static_cast<double>(Quantile(latencies, 0.99)), "below the clock's resolution");
  j["latencyMaxNs"] = Positive(static_cast<double>(*std::max_element(latencies.begin(), latencies.end())),
                               "below the clock's resolution");
}

}  // namespace

Json MeasureAppendFdatasync(const std::string& data_dir, double seconds) {
  Json j;
  j["appendBytes"] = kAppendBytes;
  j["preallocatedBytes"] = kPreallocateBytes;
  MeasureSyncedWrites(data_dir, seconds,
                      {"ceiling-fdatasync.dat", kAppendBytes, kPreallocateBytes, false, false}, j);
  return j;
}

Json MeasureOverwriteFdatasync(const std::string& data_dir, double seconds) {
  Json j;
  j["writeBytes"] = kPageBytes;
  j["zeroFilledBytes"] = kZeroFillBytes;
  MeasureSyncedWrites(data_dir, seconds, {"ceiling-overwrite.dat", kPageBytes, kZeroFillBytes, true, true},
                      j);
  return j;
}

Json MeasureOverwriteBesideWrites(const std::string& data_dir, double seconds, double bytes_per_second) {
  Json j;
  j["writeBytes"] = kPageBytes;
  j["zeroFilledBytes"] = kZeroFillBytes;
  j["streamStepBytes"] = kStreamStepBytes;
  j["streamTargetMegabytesPerSecond"] = bytes_per_second / 1e6;
  SyncedWrites w{"ceiling-overwrite-beside.dat", kPageBytes, kZeroFillBytes, true, false};
  w.stream_bytes_per_second = bytes_per_second;
  MeasureSyncedWrites(data_dir, seconds, w, j);
  return j;
}

Json MeasureSequentialWrite(const std::string& data_dir, std::uint64_t bytes) {
  Json j;
  j["fileBytes"] = bytes;
  j["blockBytes"] = kWriteBlockBytes;
  const std::string path = data_dir + "/ceiling-sequential.dat";
  std::vector<char> block(kWriteBlockBytes);
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 131 + 7);
  const std::uint64_t start = NowNs();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::string why;
  if (fd < 0) {
    why = Errno("open");
  } else {
    for (std::uint64_t done = 0; done < bytes && why.empty(); done += kWriteBlockBytes) {
      if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) why = Errno("write");
    }
    if (why.empty() && ::fsync(fd) != 0) why = Errno("fsync");
    ::close(fd);
  }
  const double elapsed = SecondsSince(start);
  ::unlink(path.c_str());
  j["seconds"] = elapsed;
  j["megabytesPerSecond"] =
      why.empty() ? Positive(MegabytesPerSecond(static_cast<double>(bytes), elapsed), "no time elapsed")
                  : NotMeasured(why);
  return j;
}

Json MeasureMemoryBandwidth(std::uint64_t array_bytes, int passes, int threads) {
  const std::uint64_t n = array_bytes / 8;
  std::unique_ptr<std::uint64_t[]> a(new std::uint64_t[n]);
  std::unique_ptr<std::uint64_t[]> b(new std::uint64_t[n]);
  // First touch from the threads that will use each part (matters on NUMA machines).
  auto range = [&](int t) {
    const std::uint64_t per = n / static_cast<std::uint64_t>(threads);
    const std::uint64_t begin = per * static_cast<std::uint64_t>(t);
    return std::pair(begin, t == threads - 1 ? n : begin + per);
  };
  TimeThreads(threads, [&](int t) {
    const auto [begin, end] = range(t);
    for (std::uint64_t i = begin; i < end; ++i) {
      a[i] = i;
      b[i] = i ^ 0x5555;
    }
  });
  double best_copy = 1e30, best_read = 1e30;
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
  for (int p = 0; p < passes; ++p) {
    best_copy = std::min(best_copy, TimeThreads(threads, [&](int t) {
                           const auto [begin, end] = range(t);
                           std::memcpy(a.get() + begin, b.get() + begin, (end - begin) * 8);
                           ClobberMemory();
                         }));
    best_read = std::min(best_read, TimeThreads(threads, [&](int t) {
                           const auto [begin, end] = range(t);
                           std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                           std::uint64_t i = begin;
                           for (; i + 4 <= end; i += 4) {
                             s0 += a[i];
                             s1 += a[i + 1];
                             s2 += a[i + 2];
                             s3 += a[i + 3];
                           }
                           for (; i < end; ++i) s0 += a[i];
                           sums[static_cast<std::size_t>(t)] = s0 + s1 + s2 + s3;
                         }));
  }
  Consume(sums[0]);
  Json j;
  j["threads"] = threads;
  j["arrayBytes"] = array_bytes;
  j["passes"] = passes;
  j["copyMegabytesPerSecond"] =
      Positive(MegabytesPerSecond(2.0 * static_cast<double>(n * 8), best_copy), "no time elapsed");
  j["readMegabytesPerSecond"] =
      Positive(MegabytesPerSecond(static_cast<double>(n * 8), best_read), "no time elapsed");
  return j;
}

Json MeasureDependentLoad(std::uint64_t bytes, std::uint64_t loads) {
  const std::uint64_t n = bytes / 8;
  std::vector<std::uint64_t> next(n);
  for (std::uint64_t i = 0; i < n; ++i) next[i] = i;
  // Sattolo's algorithm: a uniformly random permutation that is one single cycle.
  Rng rng(kSeed + 99);
  for (std::uint64_t i = n - 1; i > 0; --i) std::swap(next[i], next[rng.Next() % i]);
  std::uint64_t p = 0;
  for (std::uint64_t i = 0; i < loads / 10; ++i) p = next[p];  // warm the TLB and caches a little
  const std::uint64_t t0 = NowNs();
  for (std::uint64_t i = 0; i < loads; ++i) p = next[p];
  const double ns = static_cast<double>(NowNs() - t0) / static_cast<double>(loads);
  Consume(p);
  Json j;
  j["cycleBytes"] = bytes;
  j["loads"] = loads;
  j["latencyNs"] = Positive(ns, "below the clock's resolution");
  return j;
}

namespace {

// Writes one byte per kPageBytes of [p, p + bytes): each small page's first touch, or each huge
// page's and then hits. Returns the wall time in seconds.
double TouchEveryPage(unsigned char* p, std::uint64_t bytes) {
  const std::uint64_t t0 = NowNs();
  for (std::uint64_t i = 0; i < bytes; i += kPageBytes) p[i] = static_cast<unsigned char>(i >> 12 | 1);
  ClobberMemory();
  return SecondsSince(t0);
}

Json GigabytesPerSecond(std::uint64_t bytes, double seconds) {
  return Positive(static_cast<double>(bytes) / 1e9 / seconds, "no time elapsed");
}

}  // namespace

Json MeasureFreshMemoryTouch(std::uint64_t bytes) {
  Json j;
  const bool huge = base::EngineMemoryOnHugePages();
  j["bytes"] = bytes;
  j["touchStrideBytes"] = kPageBytes;
  j["hugePagesAdvised"] = huge;
  try {
    double first = 0;
    {
      // As the engine maps its large arrays: its own mapping, 2 MiB aligned, advised MADV_HUGEPAGE
      // when engine memory goes on huge pages. Given back (discarded in steps, unmapped) at the end
      // of the scope.
      base::MappedArray<unsigned char> fresh(bytes, huge);
      first = TouchEveryPage(fresh.data(), bytes);
    }
    // Right after: the kernel hands out the pages it was just given back, which the machine backs.
    base::MappedArray<unsigned char> again(bytes, huge);
    const double retouch = TouchEveryPage(again.data(), bytes);
    const std::uint64_t t0 = NowNs();
    std::memset(again.data(), 0x5a, bytes);
    ClobberMemory();
    const double rewrite = SecondsSince(t0);
    j["firstTouchSeconds"] = first;
    j["firstTouchGigabytesPerSecond"] = GigabytesPerSecond(bytes, first);
    j["retouchSeconds"] = retouch;
    j["retouchGigabytesPerSecond"] = GigabytesPerSecond(bytes, retouch);
    j["memsetGigabytesPerSecond"] = GigabytesPerSecond(bytes, rewrite);
  } catch (const std::bad_alloc&) {
    for (const char* k :
         {"firstTouchGigabytesPerSecond", "retouchGigabytesPerSecond", "memsetGigabytesPerSecond"})
      j[k] = NotMeasured("mapping " + std::to_string(bytes) + " bytes failed");
  }
  return j;
}

void PlanCeilings(const Profile& profile, Progress& progress) {
  // Where the host must back the memory again: about 0.4 GB/s (the VM this was written on).
  progress.Plan("ceilings", "freshMemoryTouch", static_cast<double>(profile.fresh_touch_bytes) / 0.4e9 + 0.5);
  progress.Plan("ceilings", "appendFdatasync", profile.fdatasync_seconds);
  // The zero fill and its sync, then the timed loop.
  progress.Plan("ceilings", "overwriteFdatasync",
                static_cast<double>(kZeroFillBytes) / 300e6 + profile.fdatasync_seconds);
  progress.Plan("ceilings", "sequentialWrite", static_cast<double>(profile.sequential_write_bytes) / 300e6);
  progress.Plan(
      "ceilings", "memoryBandwidth",
      static_cast<double>(profile.bandwidth_array_bytes) * 6 * profile.bandwidth_passes / 4e9 + 0.5);
  progress.Plan("ceilings", "dependentLoad",
                static_cast<double>(profile.chase_bytes) / 8 * 20e-9 +
                    static_cast<double>(profile.chase_loads) * 150e-9);
}

Json MeasureCeilings(const Profile& profile, const std::string& data_dir, Progress& progress) {
  Json c;
  // First: the memory as the process found it (the other ceilings touch memory of their own).
  progress.Start("ceilings", "freshMemoryTouch");
  c["freshMemoryTouch"] = MeasureFreshMemoryTouch(profile.fresh_touch_bytes);
  progress.Start("ceilings", "appendFdatasync");
  c["appendFdatasync"] = MeasureAppendFdatasync(data_dir, profile.fdatasync_seconds);
  progress.Start("ceilings", "overwriteFdatasync");
  c["overwriteFdatasync"] = MeasureOverwriteFdatasync(data_dir, profile.fdatasync_seconds);
  progress.Start("ceilings", "sequentialWrite");
  c["sequentialWrite"] = MeasureSequentialWrite(data_dir, profile.sequential_write_bytes);
  progress.Start("ceilings", "memoryBandwidth");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  c["memoryBandwidth"] = Json::array();
  c["memoryBandwidth"].push_back(
      MeasureMemoryBandwidth(profile.bandwidth_array_bytes, profile.bandwidth_passes, 1));
  if (cores > 1) {
    c["memoryBandwidth"].push_back(
        MeasureMemoryBandwidth(profile.bandwidth_array_bytes, profile.bandwidth_passes, cores));
  }
  progress.Start("ceilings", "dependentLoad");
  c["dependentLoad"] = MeasureDependentLoad(profile.chase_bytes, profile.chase_loads);
  progress.Done();
  c["csrSweep"] = Json::array();
  c["csrLatency"] = Json::array();
  return c;
}

}  // namespace quiver::capacity
