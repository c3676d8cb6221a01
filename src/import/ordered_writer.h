// OrderedWriter: the text of chunks 0, 1, 2, ... formatted on several
// threads reaches one CsvWriter in chunk order, with the text in flight
// bounded (the parallel export, exporter.cc).
//
// Workers Claim chunks in order and format each into a buffer of their own.
// The turn is the chunk whose text goes next. Done(c): if c has the turn,
// its text is written and then every finished chunk waiting behind it;
// else it waits in a ring slot (the worker's buffer is swapped in, no copy)
// while the ring and the room of the waiting buffers allow, else the worker
// waits for the turn. Spill(c) mid-chunk waits for c's turn and writes what
// the worker has so far (a chunk larger than the spill size goes out in
// pieces). Abort ends everything: every wait returns Cancelled.
//
// Invariants (ordered_writer.N):
//  1. turn <= every unfinished claimed chunk: the turn only moves past a
//     chunk once its text was written.
//  2. Only the worker whose chunk has the turn writes to the CsvWriter, and
//     only under mu_; so the file holds chunks 0 .. turn - 1 in order, then
//     any spilled part of chunk `turn`.
//  3. A chunk in the ring lies in (turn, turn + ring): one slot each.
//  4. pending_bytes = the room (capacity) of the ring's ready buffers <=
//     Limits::pending_bytes.
//  5. A worker waits only for a chunk claimed before its own (the turn);
//     that chunk's worker is running and never waits for a later chunk, so
//     some worker always makes progress. A worker that never started holds
//     no chunk (RunOnThreads runs it last, when all are claimed).
// So memory in flight is the workers' buffers (each about 2 x spill_bytes
// of room after a spill, plus one row), and pending_bytes.
//
// Thread safety: every member may be called from any worker concurrently.
#ifndef QUIVER_IMPORT_ORDERED_WRITER_H_
#define QUIVER_IMPORT_ORDERED_WRITER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "import/csv_writer.h"
#include "quiver/status.h"

namespace quiver::import {

class OrderedWriter {
 public:
  struct Limits {
    std::size_t spill_bytes;    // a buffer keeps at most twice this room once written
    std::size_t pending_bytes;  // room of the finished chunks waiting, at most
    std::uint64_t ring;         // finished chunks waiting, at most; >= 1
  };

  // `w` receives the text of `chunks` chunks; it must outlive this object.
  OrderedWriter(CsvWriter* w, std::uint64_t chunks, Limits limits);

  // The next chunk to format; false once all are claimed or one failed.
  bool Claim(std::uint64_t* c);
  // Mid-chunk: writes chunk c's text so far once c has the turn; `text` is
  // emptied. Cancelled if the export failed meanwhile.
  Status Spill(std::uint64_t c, std::string* text);
  // Chunk c is formatted (`text` holds the rest of it; emptied). Returns at
  // once if c has the turn or fits in the ring, else once it has the turn.
  Status Done(std::uint64_t c, std::string* text);
  // Ends the export with `s` (not OK) unless it already failed; wakes every
  // waiting worker. Allocates nothing when `s` is an immortal status.
  void Abort(const Status& s);
  // The first failure, or OK.
  Status status();
  // The room the ring's waiting buffers hold now (invariant 4; for tests).
  std::size_t pending_bytes();

 private:
  struct Slot {
    std::string text;
    bool ready = false;
  };

  // Records `s` if it is the first failure and wakes every worker; returns it.
  Status Fail(Status s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Empties a written buffer, giving back its room past 2 x spill_bytes.
  void Recycle(std::string* text) const;

  CsvWriter* const w_;  // written only by the worker whose chunk has the turn, under mu_
  const std::uint64_t chunks_;
  const Limits limits_;
  std::atomic<std::uint64_t> next_{0};
  std::atomic<bool> failed_{false};
  base::Mutex mu_;
  base::CondVar cv_{&mu_};
  std::uint64_t turn_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Slot> ring_ ABSL_GUARDED_BY(mu_);  // chunk c waits in ring_[c % size]
  Status first_ ABSL_GUARDED_BY(mu_);
};

}  // namespace quiver::import

#endif  // QUIVER_IMPORT_ORDERED_WRITER_H_
