// Machine ceilings, measured in the same run as the engine figures: what this machine allows at
// most for each kind of work, so that every engine figure reads as an efficiency ratio that
// travels between machines.
//
//   appendFdatasync   100-byte appends, each followed by fdatasync, to a file preallocated with
//                     fallocate(KEEP_SIZE) in the data directory: each fdatasync also flushes the
//                     file's grown size (what a format-1/2 WAL commit, or any first append, costs)
//   overwriteFdatasync  4 KiB page-aligned writes at increasing offsets, each followed by
//                     fdatasync, into a file in the data directory written full of zeros and
//                     fdatasync'ed first: data only, no metadata to flush. What a format-3 WAL
//                     commit does at least (one padded page over the zeroed end), so the bound
//                     for durable commits; the faster of a pass with the process idle and one
//                     with a second thread spinning (ceilings.cc, SyncedWrites::spin_pass)
//   sequentialWrite   1 MiB writes of a fresh file in the data directory, then one fsync; the rate
//                     includes the fsync
//   memoryBandwidth   STREAM-like copy (a[i] = b[i], counted as bytes read + written) and read
//                     (sum of a[i]) over arrays far larger than the last-level cache, with 1 and
//                     all logical cores; best of the passes
//   dependentLoad     a pointer chase over one random cycle (Sattolo) of 8-byte slots spanning
//                     `chase_bytes`: the latency of a load whose address comes from the previous
//                     load (cache and TLB misses included)
//   freshMemoryTouch  `fresh_touch_bytes` of new anonymous memory, mapped and advised as the engine
//                     maps its large arrays (base::MappedArray: 2 MiB aligned, MADV_HUGEPAGE when
//                     base::EngineMemoryOnHugePages), one byte written per 4 KiB: GB/s of memory the
//                     process gets from the kernel at first touch (page faults and the kernel's
//                     zeroing). Then the same again in a second new mapping right after the first is
//                     given back (memory the machine backs now), and that mapping written whole with
//                     memset (no faults: the write rate of memory already mapped). Runs first, so it
//                     sees the memory as the process found it. On a virtual machine whose free memory
//                     goes back to the host (free page reporting, ballooning), the first figure is the
//                     host's rate of backing the guest's memory again, and it depends on what ran
//                     before: an import's first pass in a fresh process is bounded by it
// The raw CSR sweep and CSR point operations are measured by the traversal and latency families
// on their own graphs and added to the same "ceilings" object.
#ifndef QUIVER_BENCH_CAPACITY_CEILINGS_H_
#define QUIVER_BENCH_CAPACITY_CEILINGS_H_

#include <string>

#include "figure.h"
#include "profile.h"
#include "progress.h"

namespace quiver::capacity {

Json MeasureAppendFdatasync(const std::string& data_dir, double seconds);
Json MeasureOverwriteFdatasync(const std::string& data_dir, double seconds);
// The overwrite ceiling's writes and fdatasyncs (idle pass only) while a second thread writes a
// file at `bytes_per_second` the way a checkpoint does (write-back started every 512 KiB, the step
// before waited for): what the device allows a commit while it also takes a checkpoint's bytes,
// without the checkpoint's CPU work. The checkpoint family runs it right after each checkpoint at
// that checkpoint's own rate. Adds streamMegabytesPerSecond (the rate the stream reached).
Json MeasureOverwriteBesideWrites(const std::string& data_dir, double seconds, double bytes_per_second);
Json MeasureSequentialWrite(const std::string& data_dir, std::uint64_t bytes);
Json MeasureMemoryBandwidth(std::uint64_t array_bytes, int passes, int threads);
Json MeasureDependentLoad(std::uint64_t bytes, std::uint64_t loads);
Json MeasureFreshMemoryTouch(std::uint64_t bytes);

// Plans and runs all six; returns the "ceilings" object (csrSweep and csrLatency start empty).
void PlanCeilings(const Profile& profile, Progress& progress);
Json MeasureCeilings(const Profile& profile, const std::string& data_dir, Progress& progress);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_CEILINGS_H_
