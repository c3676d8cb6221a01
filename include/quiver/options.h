// Options: plain aggregates that configure a Graph. Every field has a default
// that suits most applications; each comment says the default and the
// trade-off.
//
// Example:
//   auto graph = quiver::Graph::OpenInMemory(
//       quiver::Options{.limits = {.max_string_bytes = 1 << 20}});
#ifndef QUIVER_OPTIONS_H_
#define QUIVER_OPTIONS_H_

#include <cstddef>
#include <cstdint>

namespace quiver {

// Where committed batches live.
enum class Durability : std::uint8_t {
  // Write-ahead log with one fdatasync per commit group; a commit is
  // acknowledged only once on disk. Requires Graph::Open with a directory.
  kDurable = 0,
  // No files at all: the graph lives only in memory and is gone on exit.
  kVolatile = 1,
};

// Bounds on untrusted input. A batch that exceeds one is rejected whole with
// OutOfRange before anything is allocated for it in the graph.
struct Limits {
  // Longest string or bytes value, label, edge type or property key, in
  // bytes. Default 16 MiB.
  std::size_t max_string_bytes = std::size_t{16} << 20;
  // Longest float32 vector value, in elements. Default 65,536.
  std::size_t max_vector_dims = 65536;
  // Most operations in one batch (each add, set, remove counts one; each
  // property of an add counts one more). Default 10,000,000.
  std::size_t max_batch_ops = 10'000'000;
  // Most properties on one element. Default 65,535.
  std::size_t max_properties_per_element = 65535;
};

// Writer-thread tuning.
struct WriterOptions {
  // Most batches that may wait in the commit queue; producers block beyond
  // it (backpressure instead of unbounded memory). Default 4,096.
  std::size_t max_queued_batches = 4096;
  // Most batches the writer drains into one commit group (one version, one
  // WAL record in durable mode). Larger groups amortise more per batch but
  // delay the first caller. Default 1,024.
  std::size_t max_group_batches = 1024;
  // Most operations in one commit group; a batch larger than this forms a
  // group of its own. Default 1,000,000.
  std::size_t max_group_ops = 1'000'000;
  // How long the writer spins for work before it sleeps, in microseconds;
  // 0 turns all spinning off. A producer waiting for its commit spins this
  // long while recent commit groups took no longer; when they take longer
  // (a WAL fdatasync), only a producer with a spare core to itself spins,
  // through about twice the recent group time and at most 1 ms (not for a
  // while after such a spin lost its core), and the others sleep at once.
  // Spinning cuts hand-off latency on an idle core and costs CPU on a busy
  // one. Default 50.
  std::uint32_t spin_microseconds = 50;
};

// Durable-mode tuning: the write-ahead log and checkpoints.
struct DurableOptions {
  // Target size of one WAL segment file; the next commit group after a
  // segment reaches it starts a new segment. Smaller segments let
  // checkpoints free WAL space sooner; each segment start costs a directory
  // fsync. Default 64 MiB.
  std::uint64_t wal_segment_bytes = std::uint64_t{64} << 20;
  // Start a background checkpoint once this many WAL bytes were written
  // since the last one; 0 disables. Default 256 MiB.
  std::uint64_t checkpoint_wal_bytes = std::uint64_t{256} << 20;
  // Start a background checkpoint this often, in milliseconds, if anything
  // was committed since the last; 0 disables. Default 0.
  std::uint32_t checkpoint_interval_ms = 0;
  // Write a checkpoint in Close(), so the next Open replays no WAL. Costs
  // one full write of the graph at close. Default true.
  bool checkpoint_on_close = true;
  // Open with the valid prefix of a WAL that is damaged before its end,
  // instead of failing with Corruption. The damaged segment and later ones
  // are renamed to *.salvaged (kept, never edited) and a copy of the
  // damaged segment's valid prefix takes its place: committed data after
  // the damage is given up. Damage that the loaded checkpoint covers needs
  // no salvage, and a file of an unknown format version is never salvaged.
  // Default false.
  bool salvage_wal_prefix = false;
  // Threads that encode a checkpoint and that load one at open, the
  // calling thread included; 0 means one per hardware thread, at most 8.
  // More threads shorten checkpoints and reopening on an idle machine; a
  // checkpoint's threads compete with the writer and readers for cores.
  // Default 0.
  std::uint32_t io_threads = 0;
};

struct Options {
  // Default kDurable. OpenInMemory forces kVolatile.
  Durability durability = Durability::kDurable;
  Limits limits;
  WriterOptions writer;
  DurableOptions durable;
};

}  // namespace quiver

#endif  // QUIVER_OPTIONS_H_
