// DurabilityFaults: test-only switches that break the durable write path on
// purpose, so that the crash-point enumeration can show it notices each
// broken rule (negative controls, tests/durability_negative_control_test.cc).
//
// They are compiled into every build, default to off, and nothing in the
// engine or the public API sets them: only tests include this header to
// turn them on (through ScopedDurabilityFault). The engine only reads them,
// at the few places named below; an unset switch costs one relaxed load.
//
// Thread safety: the switches are atomics; a test sets them while no graph
// is open and clears them before the next.
#ifndef QUIVER_BASE_DURABILITY_FAULTS_H_
#define QUIVER_BASE_DURABILITY_FAULTS_H_

#include <atomic>

namespace quiver::base {

struct DurabilityFaults {
  // WalWriter::StartSegment does not fsync the directory after creating a
  // segment, so the segment's name may vanish in a crash after groups in it
  // were acknowledged.
  std::atomic<bool> skip_segment_dir_sync{false};
  // WriteCheckpoint renames the checkpoint into place without fdatasync'ing
  // it first, so a crash may keep the name with missing or partial bytes.
  std::atomic<bool> skip_checkpoint_sync{false};
  // The checkpoint's cleanup (removing files it makes unnecessary) runs
  // before the directory fsync that makes the checkpoint's name durable:
  // WriteCheckpoint skips its directory fsync, the cleanup's own fsync
  // comes after the removals. No acknowledged commit is lost by this alone
  // (the removed files are those the previous checkpoint covers); a crash
  // that keeps the removals and loses the new name leaves one checkpoint
  // and no log before it, which the enumeration sees by also damaging the
  // newest checkpoint (crash_enumeration.h, check 5).
  std::atomic<bool> remove_before_dir_sync{false};
  // A group held back by WriteOptions::sync = false is appended at once as
  // a record of its own, without fdatasync (the design docs/durability.md
  // explains is unsound): the page cache may write a later group's page
  // before an earlier one's, and the WAL reader then takes the damage
  // before a valid record for lost acknowledged data (Corruption).
  std::atomic<bool> append_unsynced_groups{false};
  // Graph::Open does not fsync the parent after creating the graph
  // directory (and each ancestor it creates), nor every ancestor before
  // the first segment of a new graph, so the directory's own name may
  // vanish in a crash, taking every acknowledged commit with it (seen only
  // when the graph directory is an entry of a simulated parent, not a
  // mount point of SimFileSystem).
  std::atomic<bool> skip_parent_sync{false};
  // WalWriter writes version 2 segments: records only 8-byte aligned, no
  // padding to a page boundary (the page rule of wal_format.h off), so the
  // next group's append rewrites the page holding the end of the previous,
  // acknowledged group, and a torn write-back of that page
  // (CrashPolicy::kTearPartialPage) destroys acknowledged bytes.
  std::atomic<bool> unpadded_wal{false};
};

// The process's switches.
inline DurabilityFaults& TestDurabilityFaults() {
  static DurabilityFaults faults;
  return faults;
}

inline bool DurabilityFaultOn(std::atomic<bool> DurabilityFaults::*fault) {
  return (TestDurabilityFaults().*fault).load(std::memory_order_relaxed);
}

// Turns one switch on for a scope (tests only).
class ScopedDurabilityFault {
 public:
  explicit ScopedDurabilityFault(std::atomic<bool> DurabilityFaults::*fault, bool on = true) : fault_(fault) {
    (TestDurabilityFaults().*fault_).store(on);
  }
  ~ScopedDurabilityFault() { (TestDurabilityFaults().*fault_).store(false); }
  ScopedDurabilityFault(const ScopedDurabilityFault&) = delete;
  ScopedDurabilityFault& operator=(const ScopedDurabilityFault&) = delete;

 private:
  std::atomic<bool> DurabilityFaults::*fault_;
};

}  // namespace quiver::base

#endif  // QUIVER_BASE_DURABILITY_FAULTS_H_
