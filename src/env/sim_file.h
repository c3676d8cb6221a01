// CrashPolicy and SimFile: one simulated file's durable bytes and the
// unsynced writes on top of them, and what a power cut leaves of them.
//
// A SimFile is the "inode" of SimFileSystem (sim_file_system.h). It keeps
//   durable   the bytes a disk holds for sure (as of the last Sync),
//   pending   every Write/Truncate since then, in issue order,
//   current   what reads see (the page cache): normally durable + pending.
// CrashImage computes, for one CrashPolicy, the bytes a disk could hold after
// power loss. Writes are cut into 512-byte sectors (kSectorSize) at absolute
// file offsets: a sector-sized piece is the unit a crash keeps or loses, so a
// multi-sector write can survive in part (sector writes are not atomic as a
// group; TigerBeetle's and SQLite's model).
//
// Thread safety: none. SimFileSystem guards every SimFile with its mutex.
#ifndef QUIVER_ENV_SIM_FILE_H_
#define QUIVER_ENV_SIM_FILE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "env/random.h"

namespace quiver::env {

// The granularity at which the simulated disk persists unsynced data.
inline constexpr std::uint64_t kSectorSize = 512;
// The unit the page cache writes back: a write into a page makes the whole
// page be written again (CrashPolicy::kTearPartialPage).
inline constexpr std::uint64_t kPageSize = 4096;

// What a simulated power loss does to data and directory entries that were
// not yet made durable (Sync for file data, SyncDir for names). Synced data
// and synced names always survive. Values are only used in memory.
enum class CrashPolicy {
  // Every unsynced write and every unsynced directory change is lost
  // (LevelDB's fault-injection "reset").
  kDropUnsynced,
  // Per file, a random prefix (in issue order, cut at sector pieces) of the
  // unsynced writes survives; a random prefix of the unsynced directory
  // changes survives (a rename is never split).
  kKeepRandomPrefix,
  // Per file, a random subset of the unsynced sector pieces survives, applied
  // in a random order; each unsynced directory change survives or not at
  // random (applied in issue order).
  kReorderSectors,
  // Per file, every unsynced write but the last survives; the last keeps a
  // random strict prefix of its sector pieces (possibly none; a trailing
  // truncate is lost). Every unsynced directory change survives, so a torn
  // new file is still reachable.
  kTornLastWrite,
  // A file whose unsynced writes grew it keeps the grown size, but the region
  // past the durable size holds random bytes; every other unsynced write and
  // every unsynced directory change is lost.
  kExtendWithGarbage,
  // As kExtendWithGarbage with zeros in the grown region.
  kExtendWithZeros,
  // All file data survives (as if synced); every unsynced directory change
  // (create, rename, remove, mkdir) is undone.
  kLoseUnsyncedDirEntries,
  // All file data survives; of the unsynced directory changes, those that
  // only remove a name survive and every one that adds a name (a create, a
  // mkdir, a rename: both halves) is lost. The worst ordering a disk may
  // choose for unsynced directory changes: it shows a file removed before
  // the new name that made it redundant was made durable.
  kKeepRemovalsLoseAdditions,
  // The write-back of a partly filled page torn by the power cut. Per file,
  // a random prefix of the unsynced sector pieces survives (as
  // kKeepRandomPrefix); in addition, if the durable content ends inside a
  // kPageSize page and an unsynced write touched that page, the page was
  // being written again, synced bytes and all: each of its sectors (as far
  // as the file then reaches) holds the durable bytes, the bytes with every
  // unsynced change applied, or garbage, chosen per sector at random. So a
  // write into a page that holds acknowledged data can destroy that data.
  // Every unsynced directory change survives (a torn file stays reachable).
  kTearPartialPage,
};

// Every policy, for tests that loop over them.
inline constexpr CrashPolicy kAllCrashPolicies[] = {
    CrashPolicy::kDropUnsynced,           CrashPolicy::kKeepRandomPrefix,
    CrashPolicy::kReorderSectors,         CrashPolicy::kTornLastWrite,
    CrashPolicy::kExtendWithGarbage,      CrashPolicy::kExtendWithZeros,
    CrashPolicy::kLoseUnsyncedDirEntries, CrashPolicy::kKeepRemovalsLoseAdditions,
    CrashPolicy::kTearPartialPage,
};

// The policy's name, e.g. "DropUnsynced", for test output.
std::string_view CrashPolicyName(CrashPolicy policy);

// One unsynced change to a file.
struct PendingWrite {
  bool truncate = false;     // a Truncate(offset) rather than a write
  std::uint64_t offset = 0;  // where the data goes, or the new size of a truncate
  std::vector<std::byte> data;
};

class SimFile {
 public:
  // `id` numbers files in creation order; crash randomness is derived per id
  // so that it does not depend on the order files are visited in.
  explicit SimFile(std::uint64_t id) : id_(id) {}

  std::uint64_t id() const { return id_; }
  // What reads see.
  const std::vector<std::byte>& current() const { return current_; }
  // What survives every crash.
  const std::vector<std::byte>& durable() const { return durable_; }
  // Unsynced changes in issue order.
  const std::vector<PendingWrite>& pending() const { return pending_; }

  // Writes `data` at `offset` (extending with zeros past the end), unsynced.
  void Write(std::uint64_t offset, std::span<const std::byte> data);
  // Shrinks or zero-extends to `size`, unsynced.
  void Truncate(std::uint64_t size);
  // Makes the pending changes durable: durable = durable + pending.
  void Sync();
  // Forgets the pending changes without making them durable, but leaves the
  // current view as it is (Linux after a failed fsync: the dirty pages are
  // marked clean, still readable, gone after a crash).
  void DropUnsynced() { pending_.clear(); }
  // Replaces the durable bytes (damage and test helpers); the current view
  // becomes the new durable bytes plus the pending changes.
  void SetDurable(std::vector<std::byte> bytes);
  // The durable bytes plus every pending change: what a crash that lost
  // nothing would leave.
  std::vector<std::byte> FullyApplied() const;
  // Applies every pending write and truncate, in issue order, to *bytes.
  void ApplyPending(std::vector<std::byte>* bytes) const;
  // What the disk holds after a power loss under `policy`; uses `rng` for
  // every random choice.
  std::vector<std::byte> CrashImage(CrashPolicy policy, Rng& rng) const;
  // After a crash: durable and current become `image`, nothing is pending.
  void ResetTo(std::vector<std::byte> image);

 private:
  // A sector-aligned piece of pending write `op`, or the whole truncate `op`.
  struct Piece {
    std::size_t op;
    std::uint64_t offset;  // relative to the write's data
    std::uint64_t length;
  };
  void AppendPieces(std::size_t op, std::vector<Piece>* out) const;
  std::vector<Piece> AllPieces() const;
  void ApplyPiece(const Piece& piece, std::vector<std::byte>* bytes) const;
  std::vector<std::byte> Extended(bool garbage, Rng& rng) const;
  std::vector<std::byte> TornLast(Rng& rng) const;
  std::vector<std::byte> RandomPrefix(Rng& rng) const;
  // Tears the page holding the durable end, if an unsynced write touched
  // it, in `bytes` (an image of the file after the crash).
  void TearPartialPage(Rng& rng, std::vector<std::byte>* bytes) const;

  std::uint64_t id_;
  std::vector<std::byte> durable_;
  std::vector<std::byte> current_;
  std::vector<PendingWrite> pending_;
};

}  // namespace quiver::env

#endif  // QUIVER_ENV_SIM_FILE_H_
